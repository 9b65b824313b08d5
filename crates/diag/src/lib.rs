//! Diagnostics: stable codes, labelled spans, notes and a help line, rendered with
//! codespan-reporting (or as JSON objects).

// Refusals carry whole diagnostics in `Err` (the cold path); AST enums keep large variants
// inline. Boxing them would only add noise (the same allowance as every crate of the workspace).
#![allow(clippy::result_large_err, clippy::large_enum_variant)]

pub mod codes;
pub mod span;

use crate::span::{LineIndex, Span};
use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label as CsLabel, LabelStyle};
use codespan_reporting::files::SimpleFiles;
use codespan_reporting::term::{self, termcolor::WriteColor};
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Note,
    Warning,
    Error,
}

#[derive(Clone, Debug)]
pub struct Label {
    /// Index of the file the span refers to (0 = the main file of the diagnostic's report).
    pub file: usize,
    pub span: Span,
    pub message: String,
    pub primary: bool,
}

#[derive(Clone, Debug)]
pub struct Diagnostic {
    pub severity: Severity,
    /// Stable code, e.g. `A0001`, `A107`, `V-POST`.
    pub code: String,
    pub message: String,
    pub labels: Vec<Label>,
    pub notes: Vec<String>,
    pub help: Option<String>,
}

/// Give every diagnostic in `ds` without a help line the default one of its code, from
/// `help_for` (a per-area table: the verifier's `V-` codes, the interpreter's `R-` codes).
pub fn add_default_help(ds: &mut [Diagnostic], help_for: impl Fn(&str) -> Option<&'static str>) {
    for d in ds {
        if d.help.is_none() {
            d.help = help_for(&d.code).map(str::to_string);
        }
    }
}

/// The help line of every internal error.
pub const BUG_HELP: &str = "this is a bug in alpine-rs; please report it with this input";

impl Diagnostic {
    /// An internal error (A0099): a bug of ours, never the user's fault; the command exits 3.
    pub fn internal(message: impl std::fmt::Display) -> Diagnostic {
        Diagnostic::error("A0099", format!("internal error: {message}")).with_help(BUG_HELP)
    }

    pub fn new(severity: Severity, code: &str, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity,
            code: code.to_string(),
            message: message.into(),
            labels: Vec::new(),
            notes: Vec::new(),
            help: None,
        }
    }

    pub fn error(code: &str, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(Severity::Error, code, message)
    }

    pub fn warning(code: &str, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(Severity::Warning, code, message)
    }

    pub fn note(code: &str, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(Severity::Note, code, message)
    }

    /// Move every label by `off` bytes (a diagnostic found in a part of a larger text).
    pub fn shift(&mut self, off: usize) {
        for l in &mut self.labels {
            l.span = Span::new(l.span.start() + off, l.span.end() + off);
        }
    }

    pub fn with_primary(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push(Label { file: 0, span, message: message.into(), primary: true });
        self
    }

    pub fn with_secondary(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push(Label { file: 0, span, message: message.into(), primary: false });
        self
    }

    pub fn with_label_in(
        mut self,
        file: usize,
        span: Span,
        message: impl Into<String>,
        primary: bool,
    ) -> Diagnostic {
        self.labels.push(Label { file, span, message: message.into(), primary });
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    pub fn primary_span(&self) -> Option<Span> {
        self.labels.iter().find(|l| l.primary).map(|l| l.span)
    }
}

/// A source file as diagnostics see it.
#[derive(Clone, Debug)]
pub struct SourceFile {
    pub name: String,
    pub text: String,
    pub lines: LineIndex,
}

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> SourceFile {
        let text = text.into();
        let lines = LineIndex::new(&text);
        SourceFile { name: name.into(), text, lines }
    }

    pub fn line_col(&self, off: usize) -> (usize, usize) {
        self.lines.line_col(&self.text, off)
    }
}

/// Render diagnostics in the rustc/codespan style. `files[label.file]` resolves each label.
pub fn render(out: &mut dyn WriteColor, files: &[&SourceFile], diags: &[Diagnostic]) {
    let mut db = SimpleFiles::new();
    let ids: Vec<usize> = files.iter().map(|f| db.add(f.name.clone(), f.text.clone())).collect();
    let config = term::Config::default();
    for d in diags {
        let mut cs = match d.severity {
            Severity::Error => CsDiagnostic::error(),
            Severity::Warning => CsDiagnostic::warning(),
            Severity::Note => CsDiagnostic::note(),
        }
        .with_code(d.code.clone())
        .with_message(d.message.clone());
        let labels = d
            .labels
            .iter()
            .filter_map(|l| {
                let id = *ids.get(l.file)?;
                let len = files[l.file].text.len();
                let lo = l.span.start().min(len);
                let hi = l.span.end().clamp(lo, len);
                let style = if l.primary { LabelStyle::Primary } else { LabelStyle::Secondary };
                Some(CsLabel::new(style, id, lo..hi).with_message(l.message.clone()))
            })
            .collect();
        cs = cs.with_labels(labels);
        let mut notes: Vec<String> = d.notes.iter().map(|n| format!("note: {n}")).collect();
        if let Some(h) = &d.help {
            notes.push(format!("help: {h}"));
        }
        cs = cs.with_notes(notes);
        // Writing to a terminal or buffer only fails on I/O errors we cannot do anything about.
        let _ = term::emit(out, &config, &db, &cs);
    }
}

/// Render to a plain string (no colour): what snapshot tests compare.
pub fn render_plain(files: &[&SourceFile], diags: &[Diagnostic]) -> String {
    let mut buf = term::termcolor::NoColor::new(Vec::new());
    render(&mut buf, files, diags);
    String::from_utf8_lossy(&buf.into_inner()).into_owned()
}

#[derive(Serialize)]
pub struct JsonSpan {
    pub file: String,
    pub start: usize,
    pub end: usize,
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    pub end_column: usize,
    pub label: String,
    pub primary: bool,
}

#[derive(Serialize)]
pub struct JsonDiagnostic {
    pub code: String,
    pub severity: Severity,
    pub message: String,
    pub spans: Vec<JsonSpan>,
    pub notes: Vec<String>,
    pub help: Option<String>,
}

/// A diagnostic as a JSON object. Every span carries its file name and 1-based line and column
/// (start and end). A label whose file is not among `files` cannot be located; its message is
/// kept as a note rather than dropped.
pub fn to_json(files: &[&SourceFile], d: &Diagnostic) -> JsonDiagnostic {
    let mut notes = d.notes.clone();
    let mut spans = Vec::new();
    for l in &d.labels {
        let Some(f) = files.get(l.file) else {
            notes.push(l.message.clone());
            continue;
        };
        let (line, column) = f.line_col(l.span.start());
        let (end_line, end_column) = f.line_col(l.span.end());
        spans.push(JsonSpan {
            file: f.name.clone(),
            start: l.span.start(),
            end: l.span.end(),
            line,
            column,
            end_line,
            end_column,
            label: l.message.clone(),
            primary: l.primary,
        });
    }
    JsonDiagnostic {
        code: d.code.clone(),
        severity: d.severity,
        message: d.message.clone(),
        spans,
        notes,
        help: d.help.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_spans_have_file_line_and_column_and_no_label_is_lost() {
        let a = SourceFile::new("a.pvl", "class A {\n  int x;\n}\n");
        let d = Diagnostic::error("A0001", "bad")
            .with_primary(Span::new(12, 17), "here")
            .with_secondary(Span::new(0, 5), "and here")
            .with_label_in(3, Span::new(0, 1), "in a file we do not have", false);
        let j = serde_json::to_value(to_json(&[&a], &d)).unwrap();
        let spans = j["spans"].as_array().unwrap();
        assert_eq!(spans.len(), 2);
        assert_eq!(
            (&spans[0]["file"], &spans[0]["line"], &spans[0]["column"]),
            (&"a.pvl".into(), &2.into(), &3.into())
        );
        assert_eq!((&spans[0]["end_line"], &spans[0]["end_column"]), (&2.into(), &8.into()));
        assert_eq!((&spans[1]["line"], &spans[1]["column"]), (&1.into(), &1.into()));
        assert_eq!(j["notes"], serde_json::json!(["in a file we do not have"]));
        assert_eq!(j["code"], "A0001");
        assert_eq!(j["severity"], "error");
    }
}
