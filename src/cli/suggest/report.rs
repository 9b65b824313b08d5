//! The report of `suggest`: the ranked table with each row's `apply` command, the notes, the
//! refused attempts (one line per site and optimization), or one JSON document with the same
//! content. Both are deterministic: rows in rank order, then candidate order; no timings.

use super::{Measure, SuggestArgs};
use crate::cli::run::print_json;
use crate::cli::sweep::report::print_rows;
use crate::cli::sweep::{Attempt, Candidate, Outcome, Skipped};
use crate::sem::cost::{CostVerdict, Counts, METRICS};
use serde_json::json;

/// A word as the shell reads it: as is when it is plain, else in single quotes.
fn shell_word(w: &str) -> String {
    let plain = |ch: char| ch.is_ascii_alphanumeric() || "-_./:=,+@%".contains(ch);
    if !w.is_empty() && w.chars().all(plain) {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', r"'\''"))
    }
}

fn params_text(c: &Candidate) -> String {
    c.params.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")
}

fn num(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}

/// One row of the ranking.
pub(super) struct Row<'a> {
    pub(super) attempt: &'a Attempt,
    pub(super) measure: Measure,
    pub(super) argv: Vec<String>,
    /// The objective's change at doubled `--set` sizes: `Some(None)` measured again but not
    /// measurable there; `None` not measured again.
    pub(super) doubled: Option<Option<f64>>,
}

/// The refused (or broken) attempts of one site and optimization (others there may apply).
pub(super) struct Refusal {
    opt: &'static str,
    line: usize,
    col: usize,
    outcome: &'static str,
    codes: Vec<String>,
    message: Option<String>,
    attempts: usize,
}

/// The refused and internal attempts, one entry per site, optimization and outcome.
pub(super) fn refusals(attempts: &[Attempt]) -> Vec<Refusal> {
    let mut out: Vec<Refusal> = Vec::new();
    for a in attempts.iter().filter(|a| a.outcome != Outcome::Applied) {
        let (opt, line, col) = (a.cand.opt.meta().name, a.cand.line, a.cand.col);
        let name = a.outcome.name();
        let r = match out
            .iter()
            .position(|r| (r.opt, r.line, r.col, r.outcome) == (opt, line, col, name))
        {
            Some(i) => &mut out[i],
            None => {
                out.push(Refusal {
                    opt,
                    line,
                    col,
                    outcome: name,
                    codes: Vec::new(),
                    message: a.message.clone(),
                    attempts: 0,
                });
                out.last_mut().expect("just pushed")
            }
        };
        r.attempts += 1;
        for c in &a.codes {
            if !r.codes.contains(c) {
                r.codes.push(c.clone());
            }
        }
    }
    out
}

pub(super) struct Report<'a> {
    pub(super) name: &'a str,
    pub(super) profile: &'a str,
    pub(super) args: &'a SuggestArgs,
    pub(super) rows: &'a [Row<'a>],
    pub(super) refused: &'a [Refusal],
    pub(super) skipped: &'a [Skipped],
    /// The `--set` sizes and their doubles the best rows were measured again at.
    pub(super) grown: &'a [crate::cli::cost::Doubled],
}

impl Report<'_> {
    pub(super) fn text(&self) {
        let (a, obj) = (self.args, &self.args.objective);
        println!(
            "suggest {}: {} candidate{} appl{} (profile {}, objective {obj}, {} generated input{} per candidate, seed {})",
            self.name,
            self.rows.len(),
            if self.rows.len() == 1 { "" } else { "s" },
            if self.rows.len() == 1 { "ies" } else { "y" },
            self.profile,
            a.random,
            if a.random == 1 { "" } else { "s" },
            a.exec.seed
        );
        if self.rows.is_empty() {
            println!("no optimization applies to {} at any site", self.name);
        } else {
            let mut head: Vec<String> =
                ["RANK", "OPTIMIZATION", "SITE", "PARAMETERS"].map(String::from).to_vec();
            head.extend(METRICS.iter().chain(&["time"]).map(|m| m.to_uppercase()));
            head.extend(["VERDICT".to_string(), format!("{} CHANGE", obj.to_uppercase())]);
            if !self.grown.is_empty() {
                head.push("AT 2x SIZES".into());
            }
            head.push("COMMAND".into());
            let mut table = vec![head];
            let mut notes: Vec<(String, Vec<String>)> = Vec::new();
            for (i, r) in self.rows.iter().enumerate() {
                let (c, m) = (&r.attempt.cand, &r.measure);
                let mut cells = vec![
                    (i + 1).to_string(),
                    c.opt.meta().name.into(),
                    format!("{}:{}", c.line, c.col),
                    params_text(c),
                ];
                let (x, y) = (m.orig.as_array(), m.opt.as_array());
                for k in 0..5 {
                    cells.push(match (m.measured(), k) {
                        (false, _) => "-".into(),
                        (true, 4) => format!("{} -> {}", num(m.orig_time), num(m.opt_time)),
                        (true, k) => format!("{} -> {}", x[k], y[k]),
                    });
                }
                cells.push(m.verdict.map_or("unmeasured", CostVerdict::name).into());
                cells.push(match m.change(obj) {
                    Some(ch) => format!("{:+.1}%", ch * 100.0),
                    None if m.measured() => "+inf".into(),
                    None => "-".into(),
                });
                if !self.grown.is_empty() {
                    cells.push(match r.doubled {
                        Some(Some(ch)) => format!("{:+.1}%", ch * 100.0),
                        Some(None) => "unmeasured".into(),
                        None => "".into(),
                    });
                }
                cells.push(r.argv.iter().map(|w| shell_word(w)).collect::<Vec<_>>().join(" "));
                table.push(cells);
                if let Some(n) = &m.note {
                    // One line per note, with the ranks it applies to.
                    match notes.iter_mut().find(|(x, _)| x == n) {
                        Some((_, ranks)) => ranks.push(format!("#{}", i + 1)),
                        None => notes.push((n.clone(), vec![format!("#{}", i + 1)])),
                    }
                }
            }
            print_rows(&table);
            for (n, ranks) in notes {
                println!("  {}: {n}", ranks.join(", "));
            }
            if !self.grown.is_empty() {
                let sizes: Vec<String> =
                    self.grown.iter().map(|(n, a, b)| format!("{n} = {a} -> {b}")).collect();
                println!(
                    "  AT 2x SIZES: the {obj} change of the best {} rows measured again at {}",
                    self.rows.iter().filter(|r| r.doubled.is_some()).count(),
                    sizes.join(", ")
                );
            }
            self.accesses_text();
        }
        if !self.refused.is_empty() {
            println!();
            println!("refused:");
            for r in self.refused {
                let times = if r.attempts == 1 {
                    String::new()
                } else {
                    format!(" ({} attempts)", r.attempts)
                };
                let msg = r.message.as_deref().map(|m| format!(": {m}")).unwrap_or_default();
                println!(
                    "  {}:{} {} {} {}{times}{msg}",
                    r.line,
                    r.col,
                    r.opt,
                    r.outcome,
                    r.codes.join(",")
                );
            }
        }
    }

    /// Each measured row's changed accesses, the largest few (the JSON document has them all).
    fn accesses_text(&self) {
        const SHOWN: usize = 3;
        let rows: Vec<(usize, &Row)> = self
            .rows
            .iter()
            .enumerate()
            .filter(|(_, r)| r.measure.measured() && !r.measure.accesses.is_empty())
            .collect();
        if rows.is_empty() {
            return;
        }
        println!();
        println!("accesses that changed (first input of each method; ORIG -> OPT):");
        for (i, r) in rows {
            let all = &r.measure.accesses;
            for (k, a) in all.iter().take(SHOWN).enumerate() {
                let rank = if k == 0 { format!("#{}", i + 1) } else { String::new() };
                println!("  {rank:<4} {}", a.line());
            }
            if all.len() > SHOWN {
                println!("       (and {} more)", all.len() - SHOWN);
            }
        }
    }

    pub(super) fn json(&self, code: u8, why: Option<&str>) {
        let obj = &self.args.objective;
        let metrics = |c: &Counts, t: f64| json!({"sectors": c.sectors, "conflicts": c.conflicts, "divwarps": c.divwarps, "steps": c.steps, "time": t});
        let rows: Vec<serde_json::Value> = self
            .rows
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let (c, m) = (&r.attempt.cand, &r.measure);
                let params: serde_json::Map<String, serde_json::Value> =
                    c.params.iter().map(|(k, v)| (k.to_string(), v.clone().into())).collect();
                json!({
                    "rank": i + 1,
                    "optimization": c.opt.meta().name,
                    "line": c.line,
                    "column": c.col,
                    "site": format!("{}:{}", c.line, c.col),
                    "params": params,
                    "candidate_note": c.note,
                    "measured": m.measured(),
                    "inputs": m.inputs,
                    "before": m.measured().then(|| metrics(&m.orig, m.orig_time)),
                    "after": m.measured().then(|| metrics(&m.opt, m.opt_time)),
                    "verdict": m.verdict.map_or("unmeasured", CostVerdict::name),
                    "objective_verdict": m.verdict.map(|_| m.objective.name()),
                    "change": m.change(obj),
                    "note": m.note,
                    "accesses": m.accesses,
                    "change_at_doubled_sizes": r.doubled.flatten(),
                    "command": r.argv.iter().map(|w| shell_word(w)).collect::<Vec<_>>().join(" "),
                    "argv": r.argv,
                })
            })
            .collect();
        let refused: Vec<serde_json::Value> = self
            .refused
            .iter()
            .map(|r| {
                json!({
                    "optimization": r.opt, "line": r.line, "column": r.col,
                    "site": format!("{}:{}", r.line, r.col), "outcome": r.outcome,
                    "codes": r.codes, "message": r.message, "attempts": r.attempts,
                })
            })
            .collect();
        let skipped: Vec<serde_json::Value> = self
            .skipped
            .iter()
            .map(|s| json!({"optimization": s.opt, "line": s.line, "column": s.col, "reason": s.reason}))
            .collect();
        let message = match (why, self.rows.is_empty()) {
            (Some(w), _) => Some(format!("no candidate's cost could be measured: {w}")),
            (None, true) => Some(format!("no optimization applies to {} at any site", self.name)),
            _ => None,
        };
        print_json(&json!({
            "file": self.name,
            "profile": self.profile,
            "objective": obj,
            "random": self.args.random,
            "seed": self.args.exec.seed,
            "exit_code": code,
            "suggestions": rows,
            "refused": refused,
            "skipped": skipped,
            "doubled_sizes": self.grown.iter().map(|(n, a, b)| json!({"name": n, "value": a, "doubled": b})).collect::<Vec<_>>(),
            "message": message,
        }));
    }
}
