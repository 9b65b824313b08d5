//! Diagnostics without Silicon (syntax, resolution, types, annotation placement, constructs the
//! encoding refuses) and the translation of ours into the protocol's.

use crate::text::Doc;
use diag::{Diagnostic, Severity, SourceFile};
use lsp_types as lsp;

/// Everything `parse`, `apply` and `verify` report on the document before Silicon runs: the
/// parse with the optimization annotations checked (what `apply` reads), then the verifier's
/// front (resolution, types, V-UNSUPPORTED). Each diagnostic once, in source order.
pub fn front(doc: &Doc) -> Vec<Diagnostic> {
    let parsed = transforms::registry::parse(&doc.text, &front::ParseOptions::default());
    let mut out = parsed.diagnostics;
    if !out.iter().any(Diagnostic::is_error) {
        let src = SourceFile::new(doc.name.clone(), doc.text.clone());
        // The encoder asks Z3 (quantifier inversion); without the library it panics
        // (`check::panic_on_missing_solver`), and the parse's diagnostics are still published.
        let encoded = std::panic::catch_unwind(|| {
            viper::check_source(&src, &viper::VerifyOptions::default())
        });
        for d in encoded.unwrap_or_default() {
            if !out.iter().any(|o| same(o, &d)) {
                out.push(d);
            }
        }
    }
    out.sort_by_key(|d| (d.primary_span().map_or(0, |s| s.lo), !d.is_error()));
    out
}

/// The same diagnostic: code, message and place.
pub fn same(a: &Diagnostic, b: &Diagnostic) -> bool {
    a.code == b.code && a.message == b.message && a.primary_span() == b.primary_span()
}

/// Where the docs of a code are: `{code}` in the template is replaced by the code.
#[derive(Clone, Debug)]
pub struct CodeDocs(pub String);

impl CodeDocs {
    pub fn href(&self, code: &str) -> Option<lsp::Url> {
        lsp::Url::parse(&self.0.replace("{code}", &code.to_lowercase())).ok()
    }
}

/// One of our diagnostics in the protocol's terms, on `doc`. A diagnostic without a span sits
/// at the start of the document; labels in other files are left out (the editor could not show
/// them here).
pub fn to_lsp(doc: &Doc, d: &Diagnostic, docs: &CodeDocs) -> lsp::Diagnostic {
    let range = d
        .primary_span()
        .map_or_else(lsp::Range::default, |s| doc.range(s.lo as usize, s.hi as usize));
    let mut message = d.message.clone();
    if let Some(l) = d.labels.iter().find(|l| l.primary && !l.message.is_empty()) {
        message.push_str(&format!(" ({})", l.message));
    }
    for n in &d.notes {
        message.push_str(&format!("\nnote: {n}"));
    }
    if let Some(h) = &d.help {
        message.push_str(&format!("\nhelp: {h}"));
    }
    let related: Vec<lsp::DiagnosticRelatedInformation> = d
        .labels
        .iter()
        .filter(|l| !l.primary && l.file == 0)
        .map(|l| lsp::DiagnosticRelatedInformation {
            location: lsp::Location::new(
                doc.uri.clone(),
                doc.range(l.span.lo as usize, l.span.hi as usize),
            ),
            message: if l.message.is_empty() { d.message.clone() } else { l.message.clone() },
        })
        .collect();
    lsp::Diagnostic {
        range,
        severity: Some(match d.severity {
            Severity::Error => lsp::DiagnosticSeverity::ERROR,
            Severity::Warning => lsp::DiagnosticSeverity::WARNING,
            Severity::Note => lsp::DiagnosticSeverity::INFORMATION,
        }),
        code: Some(lsp::NumberOrString::String(d.code.clone())),
        code_description: docs.href(&d.code).map(|href| lsp::CodeDescription { href }),
        source: Some("alpine-rs".into()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        tags: None,
        data: None,
    }
}
