//! Reporting: the summary table (text) and the JSON object of each file.

use super::plan::Job;
use super::run::FileRun;

use crate::cli::apply::{validate_json, verify_json};
use crate::cli::common::json_diags;
use crate::diag::SourceFile;
use crate::viper::Verdict;

// ---------------------------------------------------------------------------------------------
// Reporting

fn verdict_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Verified => "verified",
        Verdict::Failed => "FAILED",
        Verdict::Unsupported => "unsupported",
        Verdict::BackendMissing => "no-backend",
        Verdict::Timeout => "timeout",
        Verdict::Crash => "crash",
    }
}

fn validate_word(v: crate::sem::Verdict) -> &'static str {
    match v {
        crate::sem::Verdict::Same => "same",
        crate::sem::Verdict::Different => "DIFFERENT",
        crate::sem::Verdict::BadInput => "not-run",
        crate::sem::Verdict::Inconclusive => "inconclusive",
    }
}

pub(super) fn file_json(r: &FileRun) -> serde_json::Value {
    let out_file = SourceFile::new(
        format!("{} (optimized)", r.input.name),
        r.output.clone().unwrap_or_default(),
    );
    let mut diags = Vec::new();
    for rep in &r.reports {
        diags.extend(json_diags(&rep.file, &rep.diagnostics));
    }
    serde_json::json!({
        "file": r.input.name,
        "result": r.outcome,
        "applied": r.applied,
        "refused": r.refused,
        "changed": r.output.as_ref().is_some_and(|o| *o != r.input.text),
        "written": r.written.as_ref().map(|p| p.display().to_string()),
        "time_ms": r.time.as_millis() as u64,
        "verify": r.verify.as_ref().map(|v| serde_json::json!({
            "input": verify_json(&r.input, &v.input),
            "output": verify_json(&out_file, &v.output),
        })),
        "validate": r.validate.as_ref().map(|v| validate_json([&r.input, &out_file], v)),
        "exit": r.code(),
        "diagnostics": diags,
    })
}

pub(super) fn print_table(jobs: &[Job], runs: &[Vec<FileRun>]) {
    let mut rows = vec![[
        "job".to_string(),
        "file".to_string(),
        "result".to_string(),
        "verify (in/out)".to_string(),
        "validate".to_string(),
        "time".to_string(),
    ]];
    for (j, rs) in jobs.iter().zip(runs) {
        for r in rs {
            let verify = r.verify.as_ref().map_or("-".to_string(), |v| {
                format!("{}/{}", verdict_word(v.input.verdict), verdict_word(v.output.verdict))
            });
            let validate =
                r.validate.as_ref().map_or("-", |v| validate_word(v.verdict)).to_string();
            let mut result = r.outcome.name().to_string();
            if r.written.is_some() {
                result.push('*');
            }
            rows.push([
                j.name.clone(),
                r.input.name.clone(),
                result,
                verify,
                validate,
                format!("{:.2}s", r.time.as_secs_f64()),
            ]);
        }
    }
    let widths: Vec<usize> =
        (0..6).map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0)).collect();
    for row in &rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            if c == 5 {
                line.push_str(&format!("{cell:>w$}", w = widths[c]));
            } else {
                line.push_str(&format!("{cell:<w$}  ", w = widths[c]));
            }
        }
        println!("{}", line.trim_end());
    }
}
