//! Verification on save: one Silicon JVM for the whole editing session (`viper::Session`), a
//! verification per saved version on a thread of its own, and per-method results as code lenses
//! and diagnostics on the failing clauses.
//!
//! A newer save or an edit cancels the running verification of a document: it is reported
//! cancelled at once, the JVM is told to stop the request (its Z3 processes are stopped; the JVM
//! stays), and whatever answer still comes is dropped.

use crate::text::Doc;
use diag::{Diagnostic, SourceFile};
use serde::Serialize;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use viper::{Session, Verdict, VerifyOptions, VerifyReport};

/// How one method came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MethodStatus {
    Verified,
    Failed,
    TimedOut,
    /// No verdict: unsupported construct, missing backend, crash.
    Unknown,
}

/// A method of the verified version: its name, where its lens goes, how it came out.
#[derive(Clone, Debug, Serialize)]
pub struct MethodResult {
    pub name: String,
    /// 0-based line of the method's name.
    pub line: u32,
    pub status: MethodStatus,
    /// Errors inside the method.
    pub errors: usize,
}

/// The outcome of one verification.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub verdict: Verdict,
    pub diagnostics: Vec<Diagnostic>,
    pub methods: Vec<MethodResult>,
    pub seconds: f64,
}

/// Verify `doc` through `session` (on the caller's thread) until `cancel` is set.
pub fn verify(session: &Session, doc: &Doc, cancel: Arc<AtomicBool>) -> Outcome {
    let src = SourceFile::new(doc.name.clone(), doc.text.clone());
    let report = session.verify_cancellable(&src, cancel);
    outcome(doc, report)
}

fn outcome(doc: &Doc, r: VerifyReport) -> Outcome {
    let parsed = transforms::registry::parse(&doc.text, &front::ParseOptions::default());
    let errors: Vec<_> = r.diagnostics.iter().filter(|d| d.is_error()).collect();
    let methods = parsed
        .program
        .methods()
        .filter(|(_, m)| m.span.hi > m.span.lo)
        .map(|(_, m)| {
            let inside = errors
                .iter()
                .filter(|d| {
                    d.primary_span().is_some_and(|s| m.span.lo <= s.lo && s.hi <= m.span.hi)
                })
                .count();
            let status = match r.verdict {
                Verdict::Verified => MethodStatus::Verified,
                Verdict::Failed if inside > 0 => MethodStatus::Failed,
                Verdict::Failed => MethodStatus::Verified,
                Verdict::Timeout => MethodStatus::TimedOut,
                _ => MethodStatus::Unknown,
            };
            MethodResult {
                name: m.name.name.to_string(),
                line: doc.position(m.name.span.lo as usize).line,
                status,
                errors: inside,
            }
        })
        .collect();
    Outcome {
        verdict: r.verdict,
        diagnostics: r.diagnostics,
        methods,
        seconds: r.time.as_secs_f64(),
    }
}

/// The session's verifier, started at the first save that asks for it.
#[derive(Default)]
pub struct Verifier {
    session: Option<Arc<Session>>,
    timeout_s: u64,
}

impl Verifier {
    /// The session for a time limit of `timeout_s` (a new limit starts a new session).
    pub fn session(&mut self, timeout_s: u64) -> Arc<Session> {
        match &self.session {
            Some(s) if self.timeout_s == timeout_s => Arc::clone(s),
            _ => {
                let opts = VerifyOptions { timeout_s, jobs: 1, ..VerifyOptions::default() };
                let s = Arc::new(Session::new(&opts));
                self.session = Some(Arc::clone(&s));
                self.timeout_s = timeout_s;
                s
            }
        }
    }
}

/// The lens title of a method.
pub fn lens_title(m: &MethodResult, o: &Outcome) -> String {
    match m.status {
        MethodStatus::Verified => format!("✓ verified ({:.1} s)", o.seconds),
        MethodStatus::Failed => {
            format!("✗ failed: {} error{}", m.errors, if m.errors == 1 { "" } else { "s" })
        }
        MethodStatus::TimedOut => "⏱ timed out (inconclusive)".into(),
        MethodStatus::Unknown => {
            let why = o
                .diagnostics
                .iter()
                .find(|d| d.is_error())
                .map_or_else(|| format!("{:?}", o.verdict), |d| d.code.clone());
            format!("? not verified ({why})")
        }
    }
}
