//! Code actions: each optimization that `sweep` would try at a site on the requested lines,
//! carried out by the same driver as `alpine-rs apply --opt … --at line:L:C` (so the edit is
//! exactly what the command writes), or shown disabled with the refusal's code and reason.

use crate::text::Doc;
use diag::Diagnostic;
use front::{Dialect, DialectChoice, ParseOptions};
use lsp_types as lsp;
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use transforms::driver::{
    apply as drive, apply_cli_or_annotations, build_step, DriverOptions, DriverResult, StepSpec,
};
use transforms::params::{Raw, Spelling};
use transforms::sweep::{file_candidates, SiteChoice};

/// One action at a site: what it does, and its edit or why it is refused.
#[derive(Clone, Debug)]
pub struct SiteAction {
    pub opt: &'static str,
    pub line: usize,
    pub col: usize,
    /// The parameters as plan keys and values (`factor`, `2`).
    pub params: Vec<(String, String)>,
    pub result: Result<String, String>,
}

impl SiteAction {
    /// "Apply unroll (factor 2)".
    pub fn title(&self) -> String {
        let mut t = format!("Apply {}", self.opt);
        if !self.params.is_empty() {
            let ps: Vec<String> = self.params.iter().map(|(k, v)| format!("{k} {v}")).collect();
            t.push_str(&format!(" ({})", ps.join(", ")));
        }
        t
    }

    /// The `alpine-rs apply` command that writes the same output.
    pub fn command(&self, file: &str) -> String {
        let mut v = vec![format!(
            "alpine-rs apply --opt {} --at line:{}:{}",
            self.opt, self.line, self.col
        )];
        if let Some(opt) = transforms::registry::lookup(self.opt) {
            let params = self.params.iter().map(|(k, x)| (k.as_str(), x.as_str()));
            v.extend(transforms::sweep::apply_flags(opt, params));
        }
        v.push(file.to_string());
        v.join(" ")
    }
}

/// The attempts at the sites whose keyword is on lines `lines` (1-based, inclusive): every
/// candidate, applied or refused, and the optimizations skipped there with the reason.
pub fn at_lines(doc: &Doc, lines: (usize, usize), z3_ms: u32) -> Vec<SiteAction> {
    let parsed = transforms::registry::parse(&doc.text, &ParseOptions::default());
    if parsed.has_errors() {
        return Vec::new();
    }
    let (cands, skipped) = file_candidates(&doc.text, &parsed);
    let within = |l: usize| lines.0 <= l && l <= lines.1;
    let mut out: Vec<SiteAction> = cands
        .iter()
        .filter(|c| within(c.line))
        .map(|c| attempt(doc, parsed.dialect, c, z3_ms))
        .collect();
    out.extend(skipped.into_iter().filter(|s| within(s.line)).map(|s| SiteAction {
        opt: s.opt,
        line: s.line,
        col: s.col,
        params: Vec::new(),
        result: Err(s.reason),
    }));
    out
}

fn choice(d: Dialect) -> DialectChoice {
    match d {
        Dialect::V1 => DialectChoice::V1,
        Dialect::V2 => DialectChoice::V2,
    }
}

/// `apply --opt … --at line:L:C` with the candidate's parameters; a panic is an internal error.
fn attempt(doc: &Doc, dialect: Dialect, c: &SiteChoice, z3_ms: u32) -> SiteAction {
    let meta = c.opt.meta();
    let params: Vec<(String, String)> =
        c.params.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    let spec = StepSpec {
        opt: meta.name.to_string(),
        at: format!("line:{}:{}", c.line, c.col),
        params: params.iter().map(|(k, v)| (k.clone(), Raw::Text(v.clone()))).collect(),
    };
    let result = match build_step(&spec, Spelling::Key, dialect) {
        Err(e) => Err(e.message(meta.name, |f| format!("`{f}`"))),
        Ok(step) => {
            let opts = DriverOptions {
                parse: ParseOptions { dialect: choice(dialect) },
                timeout_ms: z3_ms,
                steps: vec![step],
                ..DriverOptions::default()
            };
            run_driver(|| drive(&doc.name, &doc.text, &opts))
        }
    };
    SiteAction { opt: meta.name, line: c.line, col: c.col, params, result }
}

/// Check one optimization of a small built-in kernel, so that the solver and the analyses are
/// set up before the first request.
pub fn warm_up(z3_ms: u32) {
    const KERNEL: &str = "class W {\n  requires n >= 2;\n  void m(int n) {\n    int i = 0;\n    loop_invariant 0 <= i && i <= n;\n    while (i < n) { i = i + 1; }\n  }\n}\n";
    let Ok(uri) = lsp::Url::parse("untitled:warm-up.pvl") else { return };
    let doc = Doc::new(uri, "pvl", KERNEL.to_string(), 0);
    let _ = at_lines(&doc, (6, 6), z3_ms);
}

/// The file's own `gpuopt` annotations, applied as `alpine-rs apply FILE` applies them.
pub fn annotations(doc: &Doc, z3_ms: u32) -> Result<String, String> {
    let opts = DriverOptions { timeout_ms: z3_ms, ..DriverOptions::default() };
    run_driver(|| apply_cli_or_annotations(&doc.name, &doc.text, &opts))
}

/// The output of an applied driver run, or the first error's code and message.
fn run_driver(f: impl FnOnce() -> DriverResult) -> Result<String, String> {
    let res = catch_unwind(AssertUnwindSafe(f))
        .map_err(|_| "internal error: a panic in the optimizer (a bug of alpine-rs)".to_string())?;
    let first: Option<&Diagnostic> = res.diagnostics().map(|(_, d)| d).find(|d| d.is_error());
    match first {
        None if res.applied > 0 && res.refused == 0 && !res.bad_input => Ok(res.output),
        None => Err("nothing to apply".into()),
        Some(d) => Err(format!("{}: {}", d.code, d.message)),
    }
}

/// The edits that turn `doc`'s text into `new`: one per changed run of lines, so that the
/// editor's undo and the diff a reviewer sees touch only what changed.
pub fn edits(doc: &Doc, new: &str) -> Vec<lsp::TextEdit> {
    let diff = similar::TextDiff::from_lines(doc.text.as_str(), new);
    let old_lines: Vec<&str> = doc.text.split_inclusive('\n').collect();
    let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
    let offset = |i: usize| old_lines[..i].iter().map(|l| l.len()).sum::<usize>();
    let mut out = Vec::new();
    for group in diff.grouped_ops(0) {
        for op in group {
            if matches!(op, similar::DiffOp::Equal { .. }) {
                continue;
            }
            let (o, n) = (op.old_range(), op.new_range());
            out.push(lsp::TextEdit {
                range: doc.range(offset(o.start), offset(o.end)),
                new_text: new_lines[n].concat(),
            });
        }
    }
    out
}

/// A workspace edit of one document.
pub fn workspace_edit(doc: &Doc, new: &str) -> lsp::WorkspaceEdit {
    let mut changes = HashMap::new();
    changes.insert(doc.uri.clone(), edits(doc, new));
    lsp::WorkspaceEdit { changes: Some(changes), ..lsp::WorkspaceEdit::default() }
}

/// Apply protocol edits to a text (tests, and the benchmark's check of the edit).
pub fn apply_edits(doc: &Doc, edits: &[lsp::TextEdit]) -> String {
    let mut es: Vec<(usize, usize, &str)> = edits
        .iter()
        .map(|e| (doc.offset(e.range.start), doc.offset(e.range.end), e.new_text.as_str()))
        .collect();
    es.sort_by_key(|e| std::cmp::Reverse(e.0));
    let mut text = doc.text.clone();
    for (a, b, t) in es {
        text.replace_range(a..b, t);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_edits_rebuild_the_new_text_exactly() {
        let url = lsp::Url::parse("file:///t/a.pvl").unwrap();
        for (old, new) in [
            ("a\nb\nc\n", "a\nB\nc\nd\n"),
            ("a\nb\nc", "x\na\nc"),
            ("a\nb\nc\n", ""),
            ("", "new\n"),
            ("one\n  two\nthree", "one\n  two\n  two\nthree"),
        ] {
            let doc = Doc::new(url.clone(), "pvl", old.into(), 1);
            let es = edits(&doc, new);
            assert_eq!(apply_edits(&doc, &es), new, "{old:?} -> {new:?}: {es:?}");
        }
    }
}
