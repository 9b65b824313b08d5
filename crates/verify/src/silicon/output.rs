//! Parsing of the per-file output of `java -jar silicon.jar` (design §3.1), and the error ids
//! recovered from message texts (`silicon_errors.tsv`, `silicon_reasons.tsv`).

use std::path::Path;

use super::driver::crash_message;
use super::process::Captured;
use super::verdict::{SiliconError, Verdict, ViperPos};
use crate::backend;

// ------------------------------------------------------------------------------------------------
// Per-file output parsing (§3.1)

pub(super) fn verdict_from_cli(out: &Captured, z3: &Path) -> Verdict {
    let both = format!("{}\n{}", out.stdout, out.stderr);
    if both.contains("Cannot run prover") {
        return Verdict::Crash(crash_message("Cannot run prover", z3));
    }
    let parsed = parse_cli_output(&out.stdout);
    match parsed {
        CliResult::Verified => Verdict::Verified,
        CliResult::Errors(errs) => {
            if errs.iter().any(|e| e.full_id == "timeout.error") {
                Verdict::Timeout
            } else if let Some(e) = errs.iter().find(|e| e.full_id == "exceptional.error") {
                Verdict::Crash(e.message.clone())
            } else {
                Verdict::Failed(errs)
            }
        }
        CliResult::Nothing => {
            let detail = both
                .lines()
                .find(|l| l.contains("Verification aborted exceptionally"))
                .map(|l| l.trim().to_string())
                .unwrap_or_else(|| backend::last_lines(&both, 4));
            Verdict::Crash(format!("Silicon exited with {}: {detail}", out.status))
        }
    }
}

/// What the per-file output says.
#[derive(Debug, PartialEq, Eq)]
pub enum CliResult {
    Verified,
    Errors(Vec<SiliconError>),
    /// Neither a success nor an error list (crash, bad options).
    Nothing,
}

/// Parses the stdout of `java -jar silicon.jar FILE` (design §3.1). Error ids are recovered from the
/// message texts ([`infer_full_id`]); reason positions are not printed.
pub fn parse_cli_output(stdout: &str) -> CliResult {
    let mut entries: Vec<String> = Vec::new();
    let mut in_list = false;
    let mut open = false;
    for line in stdout.lines() {
        let t = line.trim();
        if t.starts_with("Silicon finished verification successfully") {
            return CliResult::Verified;
        }
        if t.starts_with("Silicon found ") && t.ends_with(':') {
            in_list = true;
            continue;
        }
        if !in_list {
            continue;
        }
        if let Some(rest) = strip_entry_number(t) {
            entries.push(rest.to_string());
            open = true;
        } else if t.is_empty() {
            open = false;
        } else if open {
            // A message that spans lines; the position is at the end of the last one.
            if let Some(last) = entries.last_mut() {
                last.push('\n');
                last.push_str(t);
            }
        }
    }
    if !in_list {
        return CliResult::Nothing;
    }
    CliResult::Errors(entries.iter().map(|e| parse_cli_entry(e)).collect())
}

/// `[3] rest` → `rest`.
fn strip_entry_number(t: &str) -> Option<&str> {
    let rest = t.strip_prefix('[')?;
    let close = rest.find("] ")?;
    rest[..close].bytes().all(|b| b.is_ascii_digit()).then(|| &rest[close + 2..])
}

/// `message (file@l.c--l.c)` → error; the position is optional (timeouts have none).
fn parse_cli_entry(entry: &str) -> SiliconError {
    let (message, pos) = match entry.strip_suffix(')').and_then(|m| m.rsplit_once(" (")) {
        Some((msg, p)) if p.contains('@') => match ViperPos::parse(p) {
            Some(pos) => (msg, Some(pos)),
            None => (entry, None),
        },
        _ => (entry, None),
    };
    SiliconError {
        full_id: infer_full_id(message, pos.is_some()),
        message: message.to_string(),
        pos,
        reason_pos: None,
    }
}

/// Error texts of the pinned Silicon (viper.silver.verifier.errors): (prefix, suffix, id), from
/// `silicon_errors.tsv`. The suffix ends the error part when the text embeds a name or an
/// expression.
fn error_texts() -> &'static [(&'static str, &'static str, &'static str)] {
    static TEXTS: std::sync::OnceLock<Vec<(&str, &str, &str)>> = std::sync::OnceLock::new();
    TEXTS.get_or_init(|| text_table(include_str!("../silicon_errors.tsv")))
}

/// The rows of a table of message texts: `prefix <TAB> suffix <TAB> id`, `#` lines aside.
fn text_table(tsv: &'static str) -> Vec<(&'static str, &'static str, &'static str)> {
    tsv.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| {
            let mut f = l.split('\t');
            Some((f.next()?, f.next()?, f.next()?))
        })
        .collect()
}

/// Reason texts (viper.silver.verifier.reasons): (prefix, suffix, id), from
/// `silicon_reasons.tsv`.
fn reason_texts() -> &'static [(&'static str, &'static str, &'static str)] {
    static TEXTS: std::sync::OnceLock<Vec<(&str, &str, &str)>> = std::sync::OnceLock::new();
    TEXTS.get_or_init(|| text_table(include_str!("../silicon_reasons.tsv")))
}

/// Other errors (viper.silver.verifier): message prefix → id.
const OTHER_TEXTS: &[(&str, &str)] = &[
    ("Parse error", "parser.error"),
    ("Parse warning", "parser.warning"),
    ("Consistency error", "consistency.error"),
    ("Timeout occurred after", "timeout.error"),
    ("Verification aborted exceptionally", "exceptional.error"),
    ("Dependency not found", "dependencynotfound.error"),
    ("Command-line interface", "clioption.error"),
];

/// Recovers the id Silicon would report from a readable message (per-file mode has no ids).
/// Unknown reasons give `error:unknown`; a message with a position that matches nothing is a
/// type-checker error (their messages have no fixed prefix); otherwise `unknown`.
pub fn infer_full_id(message: &str, has_pos: bool) -> String {
    for &(prefix, suffix, id) in error_texts() {
        let Some(rest) = message.strip_prefix(prefix) else {
            continue;
        };
        let reason = if suffix.is_empty() {
            Some(rest)
        } else {
            rest.find(suffix).map(|i| &rest[i + suffix.len()..])
        };
        let Some(reason) = reason else { continue };
        let reason = reason.trim();
        let rid = reason_texts()
            .iter()
            .find(|(p, s, _)| reason.starts_with(p) && (s.is_empty() || reason.ends_with(s)))
            .map_or("unknown", |r| r.2);
        return format!("{id}:{rid}");
    }
    if let Some((_, id)) = OTHER_TEXTS.iter().find(|(p, _)| message.starts_with(p)) {
        return (*id).to_string();
    }
    if has_pos {
        "typechecker.error".into()
    } else {
        "unknown".into()
    }
}
