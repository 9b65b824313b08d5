//! Helpers shared by the subcommands: reading files, printing diagnostics.

use crate::diag::{self, Diagnostic, SourceFile};
use crate::review::{Hunk, LineTag};
use codespan_reporting::term::termcolor::{
    Color, ColorChoice, ColorSpec, StandardStream, WriteColor,
};
use std::io::IsTerminal;
use std::path::Path;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Default)]
pub enum Format {
    #[default]
    Text,
    Json,
}

/// A file that could not be read as UTF-8 text: the diagnostic, and the file it refers to (the
/// lossily decoded text for invalid UTF-8, so the label can show the offending line; empty text
/// when nothing could be read).
#[derive(Debug)]
pub struct ReadError {
    pub file: SourceFile,
    pub diag: Diagnostic,
}

impl ReadError {
    /// Print the error in the command's format: rendered on stderr for text, or as the given
    /// JSON object with the diagnostic under `diagnostics` on `out`.
    pub fn report(&self, format: Format, json: serde_json::Value, to_stderr: bool) {
        report_one(&self.file, &self.diag, format, json, to_stderr);
    }

    pub fn json_diags(&self) -> Vec<serde_json::Value> {
        json_diags(&self.file, std::slice::from_ref(&self.diag))
    }
}

/// Print one diagnostic that ends a command (bad input or usage): rendered on stderr for text,
/// or as the command's JSON report `json` with the diagnostic under `diagnostics`.
pub fn report_one(
    file: &SourceFile,
    diag: &Diagnostic,
    format: Format,
    json: serde_json::Value,
    to_stderr: bool,
) {
    match format {
        Format::Text => emit(file, std::slice::from_ref(diag)),
        Format::Json => {
            let mut v = json;
            if let Some(o) = v.as_object_mut() {
                o.insert(
                    "diagnostics".into(),
                    serde_json::Value::Array(json_diags(file, std::slice::from_ref(diag))),
                );
            }
            if to_stderr {
                eprintln!("{v}");
            } else {
                println!("{v}");
            }
        }
    }
}

/// Read a source file. Failures are diagnostics like any other bad input (exit code 2), so that
/// `--format json` reports them as JSON too.
pub fn read_source(path: &Path) -> Result<SourceFile, Box<ReadError>> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| {
        let help = if path.is_dir() {
            "pass a PVL file, not a directory"
        } else {
            "check the path and the file's permissions"
        };
        Box::new(ReadError {
            file: SourceFile::new(name.clone(), String::new()),
            diag: Diagnostic::error("A0000", format!("cannot read `{name}`: {e}")).with_help(help),
        })
    })?;
    // Invalid UTF-8 is reported like any other bad input, at the first bad byte.
    match String::from_utf8(bytes) {
        Ok(text) => Ok(SourceFile::new(name, text)),
        Err(e) => {
            let valid = e.utf8_error().valid_up_to();
            let text = String::from_utf8_lossy(e.as_bytes()).into_owned();
            // The bytes before `valid` are unchanged by the lossy decoding, so `valid` is a
            // character boundary there; the label covers the replacement character.
            let end = valid + text[valid..].chars().next().map_or(0, char::len_utf8);
            let diag = Diagnostic::error("A0001", "the file is not valid UTF-8")
                .with_primary(crate::front::span::Span::new(valid, end), "invalid byte here")
                .with_help("PVL sources are UTF-8; re-encode the file (e.g. `iconv -t UTF-8`)");
            Err(Box::new(ReadError { file: SourceFile::new(name, text), diag }))
        }
    }
}

/// Print diagnostics to stderr (coloured on a terminal).
pub fn emit(file: &SourceFile, diags: &[Diagnostic]) {
    if diags.is_empty() {
        return;
    }
    let choice =
        if std::io::stderr().is_terminal() { ColorChoice::Auto } else { ColorChoice::Never };
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

/// `--color auto|always|never`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Default)]
pub enum ColorArg {
    /// Colour when the stream is a terminal.
    #[default]
    Auto,
    Always,
    Never,
}

impl ColorArg {
    /// The colour choice for a stream that is (or is not) a terminal.
    pub fn choice(self, is_terminal: bool) -> ColorChoice {
        match self {
            ColorArg::Always => ColorChoice::Always,
            ColorArg::Never => ColorChoice::Never,
            ColorArg::Auto if is_terminal => ColorChoice::Auto,
            ColorArg::Auto => ColorChoice::Never,
        }
    }

    /// A stdout stream coloured as asked.
    pub fn stdout(self) -> StandardStream {
        StandardStream::stdout(self.choice(std::io::stdout().is_terminal()))
    }
}

/// Write classified hunks as a unified diff: `-` lines red, `+` lines green, hunk headers cyan with
/// the changed annotation kinds in yellow, and changed annotation lines in bold so they stand out
/// from rewritten code. Without colour this is exactly [`crate::review::unified`].
pub fn write_diff(
    out: &mut dyn WriteColor,
    old_name: &str,
    new_name: &str,
    hunks: &[Hunk],
) -> std::io::Result<()> {
    if hunks.is_empty() {
        return Ok(());
    }
    let mut bold = ColorSpec::new();
    bold.set_bold(true);
    out.set_color(&bold)?;
    write!(out, "--- {old_name}\n+++ {new_name}")?;
    out.reset()?;
    writeln!(out)?;
    for h in hunks {
        let header = h.header();
        let (ranges, heading) = match header.find(" @@") {
            Some(i) => header.split_at(i + 3),
            None => (header.as_str(), ""),
        };
        out.set_color(ColorSpec::new().set_fg(Some(Color::Cyan)))?;
        write!(out, "{ranges}")?;
        out.set_color(ColorSpec::new().set_fg(Some(Color::Yellow)))?;
        write!(out, "{heading}")?;
        out.reset()?;
        writeln!(out)?;
        for l in &h.lines {
            let (sign, color) = match l.tag {
                LineTag::Context => (' ', None),
                LineTag::Delete => ('-', Some(Color::Red)),
                LineTag::Insert => ('+', Some(Color::Green)),
            };
            if let Some(c) = color {
                out.set_color(ColorSpec::new().set_fg(Some(c)).set_bold(!l.kinds.is_empty()))?;
            }
            let mut line = String::new();
            line.push(sign);
            crate::review::push_line(&mut line, &l.text);
            // Colour the line itself, not its line break (terminals would carry the colour over).
            let body = line.trim_end_matches('\n');
            write!(out, "{body}")?;
            if color.is_some() {
                out.reset()?;
            }
            writeln!(out)?;
        }
    }
    Ok(())
}

/// Hunks as JSON values (line ranges 1-based, as in the diff headers).
pub fn json_hunks(hunks: &[Hunk]) -> Vec<serde_json::Value> {
    hunks
        .iter()
        .map(|h| {
            serde_json::json!({
                "old_start": h.old.start + 1,
                "old_lines": h.old.len(),
                "new_start": h.new.start + 1,
                "new_lines": h.new.len(),
                "annotation": h.is_annotation(),
                "kinds": h.kinds.iter().map(|k| k.name()).collect::<Vec<_>>(),
                "lines": h.lines.iter().map(|l| serde_json::json!({
                    "tag": l.tag,
                    "text": l.text,
                    "annotation": !l.kinds.is_empty(),
                })).collect::<Vec<_>>(),
            })
        })
        .collect()
}
