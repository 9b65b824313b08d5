//! Helpers shared by the subcommands: reading files, printing diagnostics.

use crate::diag::{self, Diagnostic, SourceFile};
use codespan_reporting::term::termcolor::{ColorChoice, StandardStream};
use std::io::IsTerminal;
use std::path::Path;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Default)]
pub enum Format {
    #[default]
    Text,
    Json,
}

/// Read a source file; a diagnostic-style error message when it cannot be read.
pub fn read_source(path: &Path) -> Result<SourceFile, String> {
    let bytes = std::fs::read(path)
        .map_err(|e| format!("error[A0000]: cannot read `{}`: {e}", path.display()))?;
    // Invalid UTF-8 is reported like any other bad input, at the first bad byte.
    match String::from_utf8(bytes) {
        Ok(text) => Ok(SourceFile::new(path.display().to_string(), text)),
        Err(e) => {
            let valid = e.utf8_error().valid_up_to();
            let text = String::from_utf8_lossy(e.as_bytes()).into_owned();
            let f = SourceFile::new(path.display().to_string(), text);
            let (l, c) = f.line_col(valid);
            Err(format!(
                "error[A0001]: {}:{l}:{c}: the file is not valid UTF-8",
                path.display()
            ))
        }
    }
}

/// Print diagnostics to stderr (coloured on a terminal).
pub fn emit(file: &SourceFile, diags: &[Diagnostic]) {
    if diags.is_empty() {
        return;
    }
    let choice = if std::io::stderr().is_terminal() {
        ColorChoice::Auto
    } else {
        ColorChoice::Never
    };
    let mut out = StandardStream::stderr(choice);
    diag::render(&mut out, &[file], diags);
}

/// Diagnostics as JSON values.
pub fn json_diags(file: &SourceFile, diags: &[Diagnostic]) -> Vec<serde_json::Value> {
    diags
        .iter()
        .map(|d| serde_json::to_value(diag::to_json(&[file], d)).unwrap_or(serde_json::Value::Null))
        .collect()
}
