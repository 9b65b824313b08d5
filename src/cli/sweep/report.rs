//! The sweep's report: a text table (one row per attempt, then counts per optimization and the
//! findings) or one JSON document with stable field names. Both are deterministic: attempts in
//! file order, then site order, then registry order; no timings.

use super::{Attempt, FileRun, Outcome};
use crate::diag::Diagnostic;
use crate::transforms::registry;
use std::collections::BTreeMap;

/// How many refusal codes the summary names per optimization.
const TOP_CODES: usize = 3;

fn params_text(a: &Attempt) -> String {
    a.cand.params.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")
}

fn outcome_text(a: &Attempt) -> String {
    match a.outcome {
        Outcome::Applied => "applied".into(),
        _ => format!("{} {}", a.outcome.name(), a.codes.join(",")),
    }
}

/// Per optimization (registry order, those with attempts): attempts, applied, refused,
/// internal, findings, and refusal codes by count (most common first, then by code).
struct Counts {
    opt: &'static str,
    applied: usize,
    refused: usize,
    internal: usize,
    unsound: usize,
    codes: Vec<(String, usize)>,
}

fn counts(attempts: &[Attempt]) -> Vec<Counts> {
    let mut out = Vec::new();
    for o in registry::ALL {
        let name = o.meta().name;
        let mine: Vec<&Attempt> =
            attempts.iter().filter(|a| a.cand.opt.meta().name == name).collect();
        if mine.is_empty() {
            continue;
        }
        let n = |o: Outcome| mine.iter().filter(|a| a.outcome == o).count();
        let mut by_code: BTreeMap<String, usize> = BTreeMap::new();
        for a in mine.iter().filter(|a| a.outcome == Outcome::Refused) {
            for c in &a.codes {
                *by_code.entry(c.clone()).or_default() += 1;
            }
        }
        let mut codes: Vec<(String, usize)> = by_code.into_iter().collect();
        codes.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        out.push(Counts {
            opt: name,
            applied: n(Outcome::Applied),
            refused: n(Outcome::Refused),
            internal: n(Outcome::Internal),
            unsound: mine
                .iter()
                .filter(|a| a.finding.as_ref().is_some_and(|f| f.kind == "unsound"))
                .count(),
            codes,
        });
    }
    out
}

/// Rows as aligned columns (the last column is not padded).
pub(crate) fn print_rows(rows: &[Vec<String>]) {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let width: Vec<usize> = (0..cols)
        .map(|c| rows.iter().filter_map(|r| r.get(c)).map(|s| s.chars().count()).max().unwrap_or(0))
        .collect();
    for r in rows {
        let mut line = String::new();
        for (c, cell) in r.iter().enumerate() {
            if c + 1 == r.len() {
                line.push_str(cell);
            } else {
                line.push_str(&format!("{cell:<w$}  ", w = width[c]));
            }
        }
        println!("{}", line.trim_end());
    }
}

pub(super) fn print_text(files: &[FileRun], attempts: &[Attempt]) {
    let oracles = files.iter().any(|f| f.verify.is_some());
    let mut head: Vec<String> = ["FILE", "SITE", "OPTIMIZATION", "PARAMETERS", "OUTCOME"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    if oracles {
        head.extend(["VERIFY".to_string(), "VALIDATE".to_string()]);
    }
    head.push("NOTE".into());
    let mut rows = vec![head];
    for a in attempts {
        let mut r = vec![
            files[a.file].name.clone(),
            format!("{}:{}", a.cand.line, a.cand.col),
            a.cand.opt.meta().name.to_string(),
            params_text(a),
            outcome_text(a),
        ];
        if oracles {
            r.push(a.verify.unwrap_or("-").to_string());
            r.push(a.validate.unwrap_or("-").to_string());
        }
        r.push(a.cand.note.clone().unwrap_or_default());
        rows.push(r);
    }
    print_rows(&rows);
    println!();
    let mut sum = vec![[
        "OPTIMIZATION",
        "ATTEMPTS",
        "APPLIED",
        "REFUSED",
        "INTERNAL",
        "UNSOUND",
        "COMMON REFUSALS",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect::<Vec<_>>()];
    for c in counts(attempts) {
        sum.push(vec![
            c.opt.to_string(),
            (c.applied + c.refused + c.internal).to_string(),
            c.applied.to_string(),
            c.refused.to_string(),
            c.internal.to_string(),
            c.unsound.to_string(),
            c.codes
                .iter()
                .take(TOP_CODES)
                .map(|(k, n)| format!("{k} x{n}"))
                .collect::<Vec<_>>()
                .join(", "),
        ]);
    }
    print_rows(&sum);
    if oracles {
        println!();
        for f in files.iter().filter(|f| f.verify.is_some()) {
            println!("original {}: {}", f.name, f.verify.unwrap_or("-"));
        }
    }
    let findings: Vec<&Attempt> = attempts.iter().filter(|a| a.finding.is_some()).collect();
    println!();
    let bad = files.iter().filter(|f| f.bad_input).count();
    let skipped: usize = files.iter().map(|f| f.skipped.len()).sum();
    println!(
        "{} file{} ({} bad input), {} attempt{}, {} skipped (--json lists why), {} finding{}",
        files.len(),
        plural(files.len()),
        bad,
        attempts.len(),
        plural(attempts.len()),
        skipped,
        findings.len(),
        plural(findings.len()),
    );
    for a in findings {
        if let Some(f) = &a.finding {
            println!(
                "{} ({}): {} {} at {}:{} [{}]: {}",
                f.kind.to_uppercase(),
                f.oracle,
                files[a.file].name,
                a.cand.opt.meta().name,
                a.cand.line,
                a.cand.col,
                params_text(a),
                f.detail
            );
        }
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

pub(super) fn print_json(files: &[FileRun], attempts: &[Attempt], code: u8) {
    let files_json: Vec<serde_json::Value> = files
        .iter()
        .map(|f| {
            serde_json::json!({
                "file": f.name,
                "bad_input": f.bad_input,
                "sites": f.sites,
                "verify": f.verify,
                "diagnostics": f.diagnostics,
                "skipped": f.skipped.iter().map(|s| serde_json::json!({
                    "optimization": s.opt,
                    "line": s.line,
                    "column": s.col,
                    "reason": s.reason,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let attempts_json: Vec<serde_json::Value> = attempts
        .iter()
        .map(|a| {
            let params: serde_json::Map<String, serde_json::Value> =
                a.cand.params.iter().map(|(k, v)| (k.to_string(), v.clone().into())).collect();
            serde_json::json!({
                "file": files[a.file].name,
                "optimization": a.cand.opt.meta().name,
                "line": a.cand.line,
                "column": a.cand.col,
                "site": format!("{}:{}", a.cand.line, a.cand.col),
                "params": params,
                "note": a.cand.note,
                "outcome": a.outcome.name(),
                "codes": a.codes,
                "message": a.message,
                "verify": a.verify,
                "validate": a.validate,
                "finding": a.finding.as_ref().map(|f| serde_json::json!({
                    "kind": f.kind,
                    "oracle": f.oracle,
                    "detail": f.detail,
                })),
            })
        })
        .collect();
    let summary: Vec<serde_json::Value> = counts(attempts)
        .into_iter()
        .map(|c| {
            serde_json::json!({
                "optimization": c.opt,
                "attempts": c.applied + c.refused + c.internal,
                "applied": c.applied,
                "refused": c.refused,
                "internal": c.internal,
                "unsound": c.unsound,
                "refusal_codes": c.codes.iter().map(|(k, n)| serde_json::json!({"code": k, "count": n})).collect::<Vec<_>>(),
            })
        })
        .collect();
    let findings = attempts.iter().filter(|a| a.finding.is_some()).count();
    println!(
        "{}",
        serde_json::json!({
            "files": files_json,
            "attempts": attempts_json,
            "summary": summary,
            "findings": findings,
            "exit": code,
        })
    );
}

/// `--oracles` without a backend: the diagnostic, as text on stderr or as the JSON document.
pub(super) fn backend_missing(d: &Diagnostic, json: bool) {
    if json {
        println!(
            "{}",
            serde_json::json!({
                "files": [],
                "attempts": [],
                "summary": [],
                "findings": 0,
                "exit": 3,
                "diagnostics": [{"code": d.code, "severity": "error", "message": d.message}],
            })
        );
    } else {
        eprintln!("error[{}]: {}", d.code, d.message);
        if let Some(h) = &d.help {
            eprintln!("help: {h}");
        }
    }
}
