//! Method matching for `validate ORIG OPT` without `--entry` (semantics.md §11.1): the methods
//! of the two files are paired by class and name, each pair's declaration (contract, signature
//! and body) is compared in canonical print (comments and layout do not count), and the pairs
//! that differ are validated one by one. When no pair differs, every runnable method is
//! validated. A changed method that cannot run on its own (a pure function, a predicate, a
//! constructor) has the runnable methods that call it (transitively) compared instead. Methods
//! found in one file only are reported, not compared.

use super::validate::{compare_methods, Mismatch, ValidateOptions, ValidateOutcome, Verdict};
use super::{runnable, Loaded};
use front::ast::{Item, Memo, Program};
use front::printer::print_program;
use front::{parse, ParseOptions};
use std::collections::BTreeSet;

/// What happened to one method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowKind {
    /// Validated on generated inputs: the row's outcome holds the verdict.
    Compared,
    /// The same in both files, and not compared because other methods differ.
    Unchanged,
    /// Different, but not runnable on its own: the methods that call it are compared.
    NotRunnable,
    /// Declared in ORIG only.
    OnlyInOrig,
    /// Declared in OPT only.
    OnlyInOpt,
}

/// One row of the per-method table.
#[derive(Clone, Debug)]
pub struct MethodRow {
    /// `Class.method`.
    pub method: String,
    pub kind: RowKind,
    /// The comparison's outcome (`Compared` rows only).
    pub outcome: Option<ValidateOutcome>,
    /// Why an unchanged method was compared (it calls a changed one).
    pub note: Option<String>,
}

impl MethodRow {
    /// The verdict column: equivalent, differs, inconclusive, bad-input, unchanged,
    /// not-runnable, only-in-orig, only-in-opt.
    pub fn verdict_name(&self) -> &'static str {
        match (self.kind, &self.outcome) {
            (RowKind::Compared, Some(o)) => match o.verdict {
                Verdict::Same => "equivalent",
                Verdict::Different => "differs",
                Verdict::Inconclusive => "inconclusive",
                Verdict::BadInput => "bad-input",
            },
            (RowKind::Compared, None) => "inconclusive",
            (RowKind::Unchanged, _) => "unchanged",
            (RowKind::NotRunnable, _) => "not-runnable",
            (RowKind::OnlyInOrig, _) => "only-in-orig",
            (RowKind::OnlyInOpt, _) => "only-in-opt",
        }
    }

    pub fn inputs_executed(&self) -> usize {
        self.outcome.as_ref().map_or(0, ValidateOutcome::inputs_executed)
    }

    /// The detail column: the first difference and its input, the reason for an inconclusive
    /// verdict, or why the method was not compared.
    pub fn detail(&self) -> String {
        let note = self.note.as_ref().map(|n| format!(" ({n})")).unwrap_or_default();
        match (self.kind, &self.outcome) {
            (RowKind::Compared, Some(o)) => match o.verdict {
                Verdict::Same => {
                    let also = o.reason.as_ref().map(|r| format!("; {r}")).unwrap_or_default();
                    format!("{} inputs equivalent{note}{also}", o.equivalent)
                }
                Verdict::Different => difference(o),
                Verdict::Inconclusive => o.reason.clone().unwrap_or_else(|| o.summary.clone()),
                Verdict::BadInput => o.summary.clone(),
            },
            (RowKind::Compared, None) => "not compared".into(),
            (RowKind::Unchanged, _) => "same in both files; not compared".into(),
            (RowKind::NotRunnable, _) => {
                "differs; cannot run on its own (pure, predicate or constructor): the methods \
                 calling it are compared"
                    .into()
            }
            (RowKind::OnlyInOrig, _) => "declared in ORIG only; not compared".into(),
            (RowKind::OnlyInOpt, _) => "declared in OPT only; not compared".into(),
        }
    }

    fn json(&self) -> serde_json::Value {
        let o = self.outcome.as_ref();
        serde_json::json!({
            "method": self.method,
            "verdict": self.verdict_name(),
            "inputs_executed": self.inputs_executed(),
            "equivalent": o.map_or(0, |o| o.equivalent),
            "skipped": o.map_or(0, |o| o.skipped),
            "detail": self.detail(),
            "reason": o.and_then(|o| o.reason.clone()),
            "mismatch": o.and_then(|o| o.mismatch.as_ref()).map(mismatch_json),
        })
    }
}

/// A mismatch as JSON (stable field names).
pub fn mismatch_json(m: &Mismatch) -> serde_json::Value {
    serde_json::json!({
        "input_id": m.input_id,
        "seed": m.input.seed,
        "input": m.input.to_json(),
        "path": m.path,
        "index": m.index,
        "orig": m.orig,
        "opt": m.opt,
        "count": m.count,
    })
}

/// "input #3 (seed S: a = [..]): first difference at a[0]: orig 1 vs opt -1".
fn difference(o: &ValidateOutcome) -> String {
    let first_diag =
        || o.diagnostics.first().map_or_else(String::new, |d| format!("{} {}", d.code, d.message));
    let Some(m) = &o.mismatch else {
        return format!("OPT races where ORIG does not: {}", first_diag());
    };
    let mut desc = m.input.describe();
    if desc.chars().count() > 120 {
        desc = format!("{}…", desc.chars().take(119).collect::<String>());
    }
    let input = format!("input #{} (seed {}: {desc})", m.input_id, m.input.seed);
    if m.path == "(run)" {
        return format!("{input}: ORIG runs, OPT fails: {}", first_diag());
    }
    match m.index {
        Some(i) => format!(
            "{input}: first difference at {}[{i}]: orig {} vs opt {} ({} elements differ)",
            m.path, m.orig, m.opt, m.count
        ),
        None => format!("{input}: {}: orig {} vs opt {}", m.path, m.orig, m.opt),
    }
}

/// The rows as an aligned text table.
pub fn table(rows: &[MethodRow]) -> String {
    let w = rows.iter().map(|r| r.method.len()).max().unwrap_or(0).max("method".len());
    let mut s = format!("{:<w$}  {:<12}  {:>6}  detail\n", "method", "verdict", "inputs");
    for r in rows {
        let inputs = match r.kind {
            RowKind::Compared => r.inputs_executed().to_string(),
            _ => "-".into(),
        };
        s.push_str(&format!(
            "{:<w$}  {:<12}  {:>6}  {}\n",
            r.method,
            r.verdict_name(),
            inputs,
            r.detail()
        ));
    }
    s
}

/// The rows as a JSON array.
pub fn table_json(rows: &[MethodRow]) -> serde_json::Value {
    serde_json::Value::Array(rows.iter().map(MethodRow::json).collect())
}

/// One method of a file: its compiled index, qualified name and canonical print.
struct Decl {
    idx: u32,
    name: String,
    text: String,
}

/// The methods of `l` (compiled from `src`) in declaration order, with their canonical print.
fn decls(src: &str, l: &Loaded) -> Vec<Decl> {
    let parsed = parse(src, &ParseOptions::default());
    let printed: Vec<((u32, u32), String)> = parsed
        .program
        .methods()
        .map(|(_, m)| {
            let p = Program {
                items: vec![Item::Method(m.clone())],
                main: None,
                span: m.span,
                memo: Memo::default(),
            };
            ((m.span.lo, m.span.hi), print_program(&p, parsed.dialect))
        })
        .collect();
    (0..l.prog.methods.len() as u32)
        .filter_map(|i| {
            let sp = l.prog.methods[i as usize].span;
            let text = printed.iter().find(|(r, _)| *r == (sp.lo, sp.hi))?.1.clone();
            Some(Decl { idx: i, name: l.prog.qualified(i), text })
        })
        .collect()
}

/// A pair of methods with the same name, or a method of one file only.
struct Pair {
    name: String,
    orig: Option<u32>,
    opt: Option<u32>,
    changed: bool,
}

fn pairs(a: &[Decl], b: &[Decl]) -> Vec<Pair> {
    let mut used = vec![false; b.len()];
    let mut out = Vec::new();
    for x in a {
        match (0..b.len()).find(|&j| !used[j] && b[j].name == x.name) {
            Some(j) => {
                used[j] = true;
                out.push(Pair {
                    name: x.name.clone(),
                    orig: Some(x.idx),
                    opt: Some(b[j].idx),
                    changed: x.text != b[j].text,
                });
            }
            None => {
                out.push(Pair { name: x.name.clone(), orig: Some(x.idx), opt: None, changed: true })
            }
        }
    }
    for (_, y) in b.iter().enumerate().filter(|(j, _)| !used[*j]) {
        out.push(Pair { name: y.name.clone(), orig: None, opt: Some(y.idx), changed: true });
    }
    out
}

/// The methods of `l` that call one of `targets`, directly or not, with the first target each
/// reaches.
fn callers(l: &Loaded, targets: &[u32]) -> Vec<(u32, u32)> {
    let mut reach: Vec<(u32, u32)> = targets.iter().map(|&t| (t, t)).collect();
    let mut seen: BTreeSet<u32> = targets.iter().copied().collect();
    loop {
        let mut grew = false;
        for (i, m) in l.prog.methods.iter().enumerate() {
            let i = i as u32;
            if seen.contains(&i) {
                continue;
            }
            if let Some(&(_, t)) = reach.iter().find(|(c, _)| m.calls.contains(c)) {
                reach.push((i, t));
                seen.insert(i);
                grew = true;
            }
        }
        if !grew {
            return reach;
        }
    }
}

/// Validate every method pair that differs (every runnable one when none does) and gather the
/// per-method rows into one outcome.
pub(super) fn validate_matched(
    lo: &Loaded,
    lp: &Loaded,
    orig_src: &str,
    opt_src: &str,
    opts: &ValidateOptions,
) -> ValidateOutcome {
    let plan = pairs(&decls(orig_src, lo), &decls(opt_src, lp));
    let paired_change = plan.iter().any(|p| p.orig.is_some() && p.opt.is_some() && p.changed);
    let unrunnable: Vec<u32> = plan
        .iter()
        .filter(|p| p.changed && p.opt.is_some())
        .filter_map(|p| p.orig)
        .filter(|&o| !runnable(&lo.prog, o))
        .collect();
    let reach = callers(lo, &unrunnable);
    let ctor = |l: &Loaded, m: u32| {
        let md = &l.prog.methods[m as usize];
        md.is_ctor && matches!(md.body, super::compile::Body::Code(_))
    };
    let only_ctors = !paired_change
        && !plan.iter().any(|p| match (p.orig, p.opt) {
            (Some(o), Some(q)) => runnable(&lo.prog, o) && runnable(&lp.prog, q),
            _ => false,
        });
    let mut rows = Vec::new();
    for p in &plan {
        let (o, q) = match (p.orig, p.opt) {
            (Some(o), Some(q)) => (o, q),
            (Some(_), None) | (None, Some(_)) => {
                let kind = if p.orig.is_some() { RowKind::OnlyInOrig } else { RowKind::OnlyInOpt };
                rows.push(MethodRow { method: p.name.clone(), kind, outcome: None, note: None });
                continue;
            }
            (None, None) => continue,
        };
        // A changed constructor is also compared on its own: the new object's fields are its
        // observable result (its callers are compared too, through `reach`). So is every
        // constructor when nothing changed and no method can run (a program all of whose code
        // is in constructors).
        let run = (runnable(&lo.prog, o) && runnable(&lp.prog, q))
            || ((p.changed || only_ctors) && ctor(lo, o) && ctor(lp, q));
        let via = reach.iter().find(|(c, t)| *c == o && *t != o).map(|&(_, t)| t);
        let row = |kind, outcome, note| MethodRow { method: p.name.clone(), kind, outcome, note };
        if run && (!paired_change || p.changed || via.is_some()) {
            let note = via
                .filter(|_| !p.changed)
                .map(|t| format!("calls the changed `{}`", lo.prog.qualified(t)));
            let outcome = compare_methods(lo, lp, o, q, orig_src, opts);
            rows.push(row(RowKind::Compared, Some(outcome), note));
        } else if p.changed {
            rows.push(row(RowKind::NotRunnable, None, None));
        } else if run {
            rows.push(row(RowKind::Unchanged, None, None));
        }
    }
    gather(rows, opts.schedules)
}

/// One outcome for all rows: counts summed; the verdict, diagnostics and mismatch of the most
/// severe row (exit codes combined by the project's rule); inconclusive when nothing could be
/// compared.
fn gather(rows: Vec<MethodRow>, schedules: usize) -> ValidateOutcome {
    let mut out = ValidateOutcome::start(Verdict::Same, Vec::new(), 1);
    let mut code = 0u8;
    let mut compared = 0;
    let [mut eq, mut diff, mut inc] = [0usize; 3];
    for r in &rows {
        let Some(o) = &r.outcome else { continue };
        compared += 1;
        match o.verdict {
            Verdict::Same => eq += 1,
            Verdict::Different => diff += 1,
            _ => inc += 1,
        }
        out.equivalent += o.equivalent;
        out.skipped += o.skipped;
        out.void_ += o.void_;
        out.orig_faulty += o.orig_faulty;
        out.inconclusive += o.inconclusive;
        out.schedule_dependent += o.schedule_dependent;
        let c = diag::codes::combine(code, o.verdict.exit_code());
        if c != code {
            code = c;
            out.verdict = o.verdict;
            out.diagnostics.clone_from(&o.diagnostics);
            out.diag_file = o.diag_file;
            out.mismatch.clone_from(&o.mismatch);
            out.reason = o.reason.as_ref().map(|w| format!("{}: {w}", r.method));
        }
    }
    if compared == 0 {
        out.verdict = Verdict::Inconclusive;
        out.reason = Some("no runnable method to compare".into());
    }
    let count = |k: RowKind| rows.iter().filter(|r| r.kind == k).count();
    let executed: usize = rows.iter().map(MethodRow::inputs_executed).sum();
    let sched = if schedules > 0 {
        format!(", {} schedule-dependent ({schedules} extra schedules)", out.schedule_dependent)
    } else {
        String::new()
    };
    out.summary = format!(
        "validate: methods compared: {compared} ({eq} equivalent, {diff} differ, {inc} inconclusive), \
         {} unchanged, {} only in ORIG, {} only in OPT; {executed} inputs executed{sched} — {}",
        count(RowKind::Unchanged),
        count(RowKind::OnlyInOrig),
        count(RowKind::OnlyInOpt),
        match out.verdict {
            Verdict::Same => "EQUIVALENT on all tested inputs",
            Verdict::Different => "DIFFERENT",
            Verdict::BadInput => "bad input",
            Verdict::Inconclusive => "INCONCLUSIVE",
        }
    );
    out.methods = rows;
    out
}
