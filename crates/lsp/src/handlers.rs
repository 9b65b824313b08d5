//! The requests the server answers and what it does on save and when a job reports: code
//! actions, code lenses, hovers, commands.

use crate::actions;
use crate::hover;
use crate::jobs::{self, Cancel};
use crate::server::{Event, Running, Server};
use crate::suggest;
use crate::verification::{self, MethodStatus, Outcome};
use lsp_types as lsp;
use serde_json::{json, Value};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

impl Server {
    pub(crate) fn code_actions(
        &mut self,
        p: lsp::CodeActionParams,
    ) -> Vec<lsp::CodeActionOrCommand> {
        let uri = p.text_document.uri;
        let Some(doc) = self.docs.get(&uri) else { return Vec::new() };
        if check::solver_ready().is_err() {
            return Vec::new();
        }
        let lines = (p.range.start.line as usize + 1, p.range.end.line as usize + 1);
        let key = (uri.clone(), doc.version, lines.0, lines.1);
        let z3 = self.settings.z3_timeout_ms;
        let found = self.actions.entry(key).or_insert_with(|| actions::at_lines(doc, lines, z3));
        let ranking = self.ranking.get(&uri).filter(|(v, _)| *v == doc.version).map(|(_, r)| r);
        let mut ranked: Vec<(usize, lsp::CodeActionOrCommand)> = Vec::new();
        for a in found.iter() {
            let rank = ranking.and_then(|r| r.iter().find(|s| s.is(a)));
            let title = a.title() + &rank.map(|r| r.suffix()).unwrap_or_default();
            let action = match &a.result {
                Ok(out) => lsp::CodeAction {
                    title,
                    kind: Some(lsp::CodeActionKind::REFACTOR_REWRITE),
                    edit: Some(actions::workspace_edit(doc, out)),
                    is_preferred: rank.map(|r| r.rank == 1),
                    data: Some(json!({ "command": a.command(&doc.name) })),
                    ..lsp::CodeAction::default()
                },
                Err(reason) if self.caps.disabled_actions => lsp::CodeAction {
                    title,
                    kind: Some(lsp::CodeActionKind::REFACTOR_REWRITE),
                    disabled: Some(lsp::CodeActionDisabled { reason: reason.clone() }),
                    ..lsp::CodeAction::default()
                },
                Err(_) => continue,
            };
            let order = rank.map_or(usize::MAX - usize::from(a.result.is_ok()), |r| r.rank);
            ranked.push((order, lsp::CodeActionOrCommand::CodeAction(action)));
        }
        ranked.sort_by_key(|(o, _)| *o);
        let mut out: Vec<lsp::CodeActionOrCommand> = ranked.into_iter().map(|(_, a)| a).collect();
        if let Some(a) = self.annotations_action(&uri, lines) {
            out.insert(0, a);
        }
        out.push(lsp::CodeActionOrCommand::CodeAction(lsp::CodeAction {
            title: "Suggest optimizations (rank by the cost model)".into(),
            kind: Some(lsp::CodeActionKind::SOURCE),
            command: Some(lsp::Command {
                title: "Suggest optimizations".into(),
                command: crate::CMD_SUGGEST.into(),
                arguments: Some(vec![json!(uri)]),
            }),
            ..lsp::CodeAction::default()
        }));
        out
    }

    /// "Apply the file's gpuopt annotations" on a line that holds one.
    fn annotations_action(
        &self,
        uri: &lsp::Url,
        lines: (usize, usize),
    ) -> Option<lsp::CodeActionOrCommand> {
        let doc = self.docs.get(uri)?;
        let on_line = doc
            .text
            .lines()
            .enumerate()
            .any(|(i, l)| (lines.0..=lines.1).contains(&(i + 1)) && l.contains("gpuopt"));
        if !on_line {
            return None;
        }
        let title = "Apply the file's gpuopt annotations".to_string();
        let action = match actions::annotations(doc, self.settings.z3_timeout_ms) {
            Ok(out) => lsp::CodeAction {
                title,
                kind: Some(lsp::CodeActionKind::REFACTOR_REWRITE),
                edit: Some(actions::workspace_edit(doc, &out)),
                ..lsp::CodeAction::default()
            },
            Err(reason) if self.caps.disabled_actions => lsp::CodeAction {
                title,
                kind: Some(lsp::CodeActionKind::REFACTOR_REWRITE),
                disabled: Some(lsp::CodeActionDisabled { reason }),
                ..lsp::CodeAction::default()
            },
            Err(_) => return None,
        };
        Some(lsp::CodeActionOrCommand::CodeAction(action))
    }

    pub(crate) fn code_lenses(&mut self, p: lsp::CodeLensParams) -> Vec<lsp::CodeLens> {
        let uri = p.text_document.uri;
        let Some(doc) = self.docs.get(&uri) else { return Vec::new() };
        let lens = |line: u32, title: String| lsp::CodeLens {
            range: lsp::Range::new(lsp::Position::new(line, 0), lsp::Position::new(line, 0)),
            command: Some(lsp::Command {
                title,
                command: crate::CMD_VERIFY.into(),
                arguments: Some(vec![json!(uri)]),
            }),
            data: None,
        };
        if self.verifying.get(&uri).is_some_and(|r| r.version == doc.version) {
            let parsed = transforms::registry::parse(&doc.text, &front::ParseOptions::default());
            return parsed
                .program
                .methods()
                .map(|(_, m)| {
                    lens(doc.position(m.name.span.lo as usize).line, "⋯ verifying".into())
                })
                .collect();
        }
        match self.verified.get(&uri) {
            Some((v, o)) if *v == doc.version => {
                o.methods.iter().map(|m| lens(m.line, verification::lens_title(m, o))).collect()
            }
            _ => Vec::new(),
        }
    }

    pub(crate) fn hover(&mut self, p: lsp::HoverParams) -> Option<lsp::Hover> {
        let pp = p.text_document_position_params;
        let doc = self.docs.get(&pp.text_document.uri)?;
        let off = doc.offset(pp.position);
        let mut parts: Vec<String> = Vec::new();
        let mut codes: Vec<&str> = Vec::new();
        for d in self.published.get(&doc.uri).into_iter().flatten() {
            let Some(s) = d.primary_span() else { continue };
            let (lo, hi) = (s.lo as usize, (s.hi as usize).max(s.lo as usize + 1));
            if lo <= off && off < hi && !codes.contains(&d.code.as_str()) {
                codes.push(&d.code);
            }
        }
        parts.extend(codes.iter().filter_map(|c| hover::explain(c)));
        if let Some(rows) = self.cost.get(&doc.uri) {
            let at = hover::rows_at(doc, rows, off);
            if !at.is_empty() {
                parts.push(hover::render_rows(&at));
            }
        }
        (!parts.is_empty()).then(|| lsp::Hover {
            contents: lsp::HoverContents::Markup(lsp::MarkupContent {
                kind: lsp::MarkupKind::Markdown,
                value: parts.join("\n\n---\n\n"),
            }),
            range: None,
        })
    }

    pub(crate) fn execute(&mut self, p: lsp::ExecuteCommandParams) -> Value {
        let uri = p
            .arguments
            .first()
            .and_then(|a| serde_json::from_value::<lsp::Url>(a.clone()).ok())
            .filter(|u| self.docs.contains_key(u));
        let Some(uri) = uri else {
            return json!({ "started": false, "reason": "the argument is not an open document" });
        };
        match p.command.as_str() {
            crate::CMD_SUGGEST => {
                self.start_suggest(&uri);
                json!({ "started": true })
            }
            crate::CMD_VERIFY => {
                self.start_verification(&uri);
                json!({ "started": true })
            }
            c => json!({ "started": false, "reason": format!("unknown command {c}") }),
        }
    }

    pub(crate) fn saved(&mut self, uri: &lsp::Url) {
        if !self.docs.contains_key(uri) {
            return;
        }
        if self.settings.verify_on_save {
            self.start_verification(uri);
        }
        if self.settings.cost_on_save {
            let Some(doc) = self.docs.get(uri) else { return };
            let cancel = jobs::replace(&mut self.cost_jobs, uri.clone());
            suggest::start_cost(self.opts.exe.clone(), doc, cancel, self.events.clone());
        }
    }

    fn start_suggest(&mut self, uri: &lsp::Url) {
        let Some(doc) = self.docs.get(uri) else { return };
        let cancel = jobs::replace(&mut self.suggest_jobs, uri.clone());
        suggest::start_suggest(self.opts.exe.clone(), doc, cancel, self.events.clone());
    }

    /// Verify the document's current version on a thread of its own (cancelling the one in
    /// flight); the answer comes back as [`Event::Verified`].
    fn start_verification(&mut self, uri: &lsp::Url) {
        self.cancel_verification(uri);
        let Some(doc) = self.docs.get(uri).cloned() else { return };
        self.generation += 1;
        let generation = self.generation;
        let session = self.verifier.session(self.settings.verify_timeout_s);
        let tx = self.events.clone();
        let (u, version) = (uri.clone(), doc.version);
        let cancel: Cancel = Arc::new(AtomicBool::new(false));
        let theirs = Arc::clone(&cancel);
        let spawned = std::thread::Builder::new()
            .name("alpine-lsp-verify".into())
            .stack_size(64 << 20)
            .spawn(move || {
                let outcome =
                    catch_unwind(AssertUnwindSafe(|| verification::verify(&session, &doc, theirs)))
                        .unwrap_or_else(|_| Outcome {
                            verdict: viper::Verdict::Crash,
                            diagnostics: vec![diag::Diagnostic::internal(
                                "a panic while verifying",
                            )],
                            methods: Vec::new(),
                            seconds: 0.0,
                        });
                let _ = tx.send(Event::Verified {
                    uri: u,
                    generation,
                    version,
                    outcome: Box::new(outcome),
                });
            });
        if spawned.is_err() {
            self.log(lsp::MessageType::ERROR, "cannot start a verification thread");
            return;
        }
        self.verifying.insert(uri.clone(), Running { generation, version, cancel });
        self.notify(
            crate::NOTE_VERIFICATION,
            json!({ "uri": uri, "version": version, "status": "running" }),
        );
        self.refresh_lenses();
    }

    pub(crate) fn event(&mut self, e: Event) {
        match e {
            Event::Verified { uri, generation, version, outcome } => {
                let current = self.verifying.get(&uri).is_some_and(|r| r.generation == generation);
                if !current {
                    return; // cancelled: reported when it was
                }
                self.verifying.remove(&uri);
                let methods: Vec<Value> = outcome
                    .methods
                    .iter()
                    .map(|m| json!({ "name": m.name, "line": m.line, "status": m.status, "errors": m.errors }))
                    .collect();
                let failed =
                    outcome.methods.iter().filter(|m| m.status == MethodStatus::Failed).count();
                self.notify(
                    crate::NOTE_VERIFICATION,
                    json!({
                        "uri": uri, "version": version, "status": "done",
                        "verdict": outcome.verdict, "seconds": outcome.seconds,
                        "failedMethods": failed, "methods": methods,
                    }),
                );
                self.verified.insert(uri.clone(), (version, *outcome));
                self.publish(&uri);
                self.refresh_lenses();
            }
            Event::Cost { uri, version, rows } => {
                let current = self.docs.get(&uri).is_some_and(|d| d.version == version);
                self.cost_jobs.remove(&uri);
                match rows {
                    Ok(rows) if current => {
                        self.notify(
                            crate::NOTE_COST,
                            json!({ "uri": uri, "version": version, "accesses": rows.len() }),
                        );
                        self.cost.insert(uri, rows);
                    }
                    Ok(_) => {}
                    Err(why) => self.log(lsp::MessageType::INFO, &format!("no cost run: {why}")),
                }
            }
            Event::Suggested { uri, version, result } => {
                self.suggest_jobs.remove(&uri);
                match result {
                    Ok(rows) => {
                        self.notify(
                            crate::NOTE_SUGGESTIONS,
                            json!({ "uri": uri, "version": version, "suggestions": rows }),
                        );
                        let best: Vec<String> = rows
                            .iter()
                            .take(3)
                            .map(|r| format!("{} at line {}{}", r.optimization, r.line, r.suffix()))
                            .collect();
                        let msg = if best.is_empty() {
                            "alpine-rs suggest: no optimization applies".to_string()
                        } else {
                            format!("alpine-rs suggest: {}", best.join("; "))
                        };
                        self.notify(
                            "window/showMessage",
                            lsp::ShowMessageParams { typ: lsp::MessageType::INFO, message: msg },
                        );
                        self.ranking.insert(uri, (version, rows));
                    }
                    Err(why) => self.log(lsp::MessageType::WARNING, &format!("suggest: {why}")),
                }
            }
        }
    }
}
