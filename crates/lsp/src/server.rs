//! The server's state and its loop: messages from the client and answers of the background jobs
//! (verification, cost, suggest) are handled one at a time on one thread, so the state needs no
//! locks; every handler runs under `catch_unwind`, so a bug answers one request with an error
//! instead of ending the session.

use crate::actions::SiteAction;
use crate::diagnostics::{self, CodeDocs};
use crate::hover::AccessRow;
use crate::jobs::{self, Cancel};
use crate::suggest::Ranked;
use crate::text::Doc;
use crate::transport::Incoming;
use crate::verification::{Outcome, Verifier};
use crate::{Options, Settings};
use crossbeam_channel::{select, Receiver, Sender};
use diag::Diagnostic;
use lsp_server::{ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types as lsp;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// What a background job reports.
pub enum Event {
    Verified { uri: lsp::Url, generation: u64, version: i32, outcome: Box<Outcome> },
    Cost { uri: lsp::Url, version: i32, rows: Result<Vec<AccessRow>, String> },
    Suggested { uri: lsp::Url, version: i32, result: Result<Vec<Ranked>, String> },
}

/// A verification in flight.
pub struct Running {
    pub generation: u64,
    pub version: i32,
    /// Set to withdraw the request from Silicon.
    pub cancel: Cancel,
}

/// What the client can do, from `initialize`.
#[derive(Default)]
pub struct ClientCaps {
    pub disabled_actions: bool,
    pub lens_refresh: bool,
}

pub struct Server {
    pub out: Sender<Message>,
    pub events: Sender<Event>,
    pub opts: Options,
    pub docs_url: CodeDocs,
    pub settings: Settings,
    pub caps: ClientCaps,
    pub docs: HashMap<lsp::Url, Doc>,
    /// The diagnostics last published per document (front, then verification).
    pub published: HashMap<lsp::Url, Vec<Diagnostic>>,
    pub front: HashMap<lsp::Url, Vec<Diagnostic>>,
    pub verified: HashMap<lsp::Url, (i32, Outcome)>,
    pub verifying: HashMap<lsp::Url, Running>,
    pub cost: HashMap<lsp::Url, Vec<AccessRow>>,
    pub cost_jobs: HashMap<lsp::Url, Cancel>,
    pub ranking: HashMap<lsp::Url, (i32, Vec<Ranked>)>,
    pub suggest_jobs: HashMap<lsp::Url, Cancel>,
    /// Code actions per document version and line range (the Z3 checks are not repeated).
    pub actions: HashMap<(lsp::Url, i32, usize, usize), Vec<SiteAction>>,
    pub verifier: Verifier,
    pub generation: u64,
    next_request: u64,
    initialized: bool,
    shutdown: bool,
}

enum Flow {
    Continue,
    Exit(i32),
}

/// Serve one client: `incoming` from its reader, `out` to its writer. Returns the exit code
/// (0 after `shutdown` then `exit`, 1 otherwise, as the protocol asks).
pub fn serve(incoming: Receiver<Incoming>, out: Sender<Message>, opts: Options) -> i32 {
    let (events_tx, events_rx) = crossbeam_channel::unbounded();
    let docs_url = CodeDocs(opts.code_docs.clone());
    let mut s = Server {
        out,
        events: events_tx,
        opts,
        docs_url,
        settings: Settings::default(),
        caps: ClientCaps::default(),
        docs: HashMap::new(),
        published: HashMap::new(),
        front: HashMap::new(),
        verified: HashMap::new(),
        verifying: HashMap::new(),
        cost: HashMap::new(),
        cost_jobs: HashMap::new(),
        ranking: HashMap::new(),
        suggest_jobs: HashMap::new(),
        actions: HashMap::new(),
        verifier: Verifier::default(),
        generation: 0,
        next_request: 0,
        initialized: false,
        shutdown: false,
    };
    loop {
        select! {
            recv(incoming) -> m => match m {
                Ok(Incoming::Message(m)) => {
                    if let Flow::Exit(code) = s.message(m) {
                        s.cancel_all();
                        return code;
                    }
                }
                Ok(Incoming::Malformed(why)) => {
                    s.log(lsp::MessageType::ERROR, &format!("ignored a malformed message: {why}"));
                }
                Err(_) => {
                    s.cancel_all();
                    return if s.shutdown { 0 } else { 1 };
                }
            },
            recv(events_rx) -> e => {
                if let Ok(e) = e {
                    let r = catch_unwind(AssertUnwindSafe(|| s.event(e)));
                    if r.is_err() {
                        s.log(lsp::MessageType::ERROR, "internal error while handling a job's result");
                    }
                }
            }
        }
    }
}

impl Server {
    fn message(&mut self, m: Message) -> Flow {
        match m {
            Message::Request(r) => {
                let id = r.id.clone();
                let resp = match catch_unwind(AssertUnwindSafe(|| self.request(r))) {
                    Ok(resp) => resp,
                    Err(_) => Response::new_err(
                        id,
                        ErrorCode::InternalError as i32,
                        "internal error in alpine-rs (a bug; the server goes on)".into(),
                    ),
                };
                self.send(Message::Response(resp));
                Flow::Continue
            }
            Message::Notification(n) => {
                if n.method == "exit" {
                    return Flow::Exit(if self.shutdown { 0 } else { 1 });
                }
                if !self.initialized || self.shutdown {
                    return Flow::Continue;
                }
                let method = n.method.clone();
                if catch_unwind(AssertUnwindSafe(|| self.notification(n))).is_err() {
                    self.log(lsp::MessageType::ERROR, &format!("internal error handling {method}"));
                }
                Flow::Continue
            }
            // Answers to our own requests (code lens refresh): nothing to do.
            Message::Response(_) => Flow::Continue,
        }
    }

    fn request(&mut self, r: Request) -> Response {
        if r.method == "initialize" {
            if self.initialized {
                return err(r.id, ErrorCode::InvalidRequest, "initialize was already sent");
            }
            return match serde_json::from_value::<lsp::InitializeParams>(r.params) {
                Ok(p) => {
                    self.initialized = true;
                    Response::new_ok(r.id, self.initialize(p))
                }
                Err(e) => err(r.id, ErrorCode::InvalidParams, &e.to_string()),
            };
        }
        if !self.initialized {
            return err(r.id, ErrorCode::ServerNotInitialized, "initialize first");
        }
        if self.shutdown {
            return err(r.id, ErrorCode::InvalidRequest, "the server is shutting down");
        }
        let id = r.id.clone();
        match r.method.as_str() {
            "shutdown" => {
                self.shutdown = true;
                self.cancel_all();
                Response::new_ok(id, Value::Null)
            }
            "textDocument/codeAction" => answer(id, r.params, |p| self.code_actions(p)),
            "textDocument/codeLens" => answer(id, r.params, |p| self.code_lenses(p)),
            "textDocument/hover" => answer(id, r.params, |p| self.hover(p)),
            "workspace/executeCommand" => answer(id, r.params, |p| self.execute(p)),
            m => err(id, ErrorCode::MethodNotFound, &format!("alpine-rs does not serve {m}")),
        }
    }

    fn notification(&mut self, n: Notification) {
        match n.method.as_str() {
            // The first Z3 query of a process costs ~100 ms of set-up: paid here, once, so that
            // the first code action answers as fast as the others.
            // Without a Z3 library the rewrites cannot be checked: said once, and code actions
            // offer none (a query would end the process, see `check::report_missing_solver`).
            "initialized" => match check::solver_ready() {
                Ok(()) => crate::actions::warm_up(self.settings.z3_timeout_ms),
                Err(why) => self.notify(
                    "window/showMessage",
                    lsp::ShowMessageParams {
                        typ: lsp::MessageType::WARNING,
                        message: format!("alpine-rs offers no rewrites (E-Z3): {why}"),
                    },
                ),
            },
            "textDocument/didOpen" => {
                if let Ok(p) = serde_json::from_value::<lsp::DidOpenTextDocumentParams>(n.params) {
                    let d = p.text_document;
                    let doc = Doc::new(d.uri.clone(), &d.language_id, d.text, d.version);
                    self.docs.insert(d.uri.clone(), doc);
                    self.refresh(&d.uri);
                }
            }
            "textDocument/didChange" => {
                if let Ok(p) = serde_json::from_value::<lsp::DidChangeTextDocumentParams>(n.params)
                {
                    let uri = p.text_document.uri;
                    let Some(doc) = self.docs.get_mut(&uri) else { return };
                    for c in &p.content_changes {
                        doc.apply(c);
                    }
                    doc.version = p.text_document.version;
                    self.changed(&uri);
                    self.refresh(&uri);
                }
            }
            "textDocument/didSave" => {
                if let Ok(p) = serde_json::from_value::<lsp::DidSaveTextDocumentParams>(n.params) {
                    self.saved(&p.text_document.uri);
                }
            }
            "textDocument/didClose" => {
                if let Ok(p) = serde_json::from_value::<lsp::DidCloseTextDocumentParams>(n.params) {
                    let uri = p.text_document.uri;
                    self.changed(&uri);
                    self.docs.remove(&uri);
                    self.front.remove(&uri);
                    self.cost.remove(&uri);
                    self.published.remove(&uri);
                    self.publish_raw(&uri, Vec::new(), None);
                }
            }
            "workspace/didChangeConfiguration" => {
                if let Some(v) = n.params.get("settings") {
                    self.settings.update(v);
                }
            }
            _ => {}
        }
    }

    fn initialize(&mut self, p: lsp::InitializeParams) -> Value {
        let ca = p.capabilities.text_document.as_ref().and_then(|t| t.code_action.as_ref());
        self.caps.disabled_actions = ca.and_then(|c| c.disabled_support).unwrap_or(false);
        self.caps.lens_refresh = p
            .capabilities
            .workspace
            .as_ref()
            .and_then(|w| w.code_lens.as_ref())
            .and_then(|c| c.refresh_support)
            .unwrap_or(false);
        if let Some(o) = &p.initialization_options {
            self.settings.update(o);
        }
        let caps = lsp::ServerCapabilities {
            text_document_sync: Some(lsp::TextDocumentSyncCapability::Options(
                lsp::TextDocumentSyncOptions {
                    open_close: Some(true),
                    change: Some(lsp::TextDocumentSyncKind::INCREMENTAL),
                    save: Some(lsp::TextDocumentSyncSaveOptions::Supported(true)),
                    ..lsp::TextDocumentSyncOptions::default()
                },
            )),
            code_action_provider: Some(lsp::CodeActionProviderCapability::Options(
                lsp::CodeActionOptions {
                    code_action_kinds: Some(vec![
                        lsp::CodeActionKind::REFACTOR_REWRITE,
                        lsp::CodeActionKind::SOURCE,
                    ]),
                    ..lsp::CodeActionOptions::default()
                },
            )),
            code_lens_provider: Some(lsp::CodeLensOptions { resolve_provider: Some(false) }),
            hover_provider: Some(lsp::HoverProviderCapability::Simple(true)),
            execute_command_provider: Some(lsp::ExecuteCommandOptions {
                commands: vec![crate::CMD_SUGGEST.into(), crate::CMD_VERIFY.into()],
                ..lsp::ExecuteCommandOptions::default()
            }),
            ..lsp::ServerCapabilities::default()
        };
        json!({
            "capabilities": caps,
            "serverInfo": { "name": "alpine-rs", "version": env!("CARGO_PKG_VERSION") },
        })
    }

    /// Recompute and publish the front diagnostics of a document.
    pub fn refresh(&mut self, uri: &lsp::Url) {
        let Some(doc) = self.docs.get(uri) else { return };
        let ds = diagnostics::front(doc);
        self.front.insert(uri.clone(), ds);
        self.publish(uri);
    }

    /// Publish the front diagnostics, with the verification's when they are of this version.
    pub fn publish(&mut self, uri: &lsp::Url) {
        let Some(doc) = self.docs.get(uri) else { return };
        let mut all = self.front.get(uri).cloned().unwrap_or_default();
        if let Some((v, o)) = self.verified.get(uri) {
            if *v == doc.version {
                // The verifier repeats the front's warnings (V-FLOAT-REAL): each once.
                for d in &o.diagnostics {
                    if !all.iter().any(|a| diagnostics::same(a, d)) {
                        all.push(d.clone());
                    }
                }
            }
        }
        let lsp_ds: Vec<lsp::Diagnostic> =
            all.iter().map(|d| diagnostics::to_lsp(doc, d, &self.docs_url)).collect();
        let version = Some(doc.version);
        self.published.insert(uri.clone(), all);
        self.publish_raw(uri, lsp_ds, version);
    }

    fn publish_raw(&self, uri: &lsp::Url, diagnostics: Vec<lsp::Diagnostic>, version: Option<i32>) {
        let p = lsp::PublishDiagnosticsParams { uri: uri.clone(), diagnostics, version };
        self.notify("textDocument/publishDiagnostics", p);
    }

    /// A document's text changed (or it closed): what was computed for the old text is stale.
    fn changed(&mut self, uri: &lsp::Url) {
        self.actions.retain(|k, _| &k.0 != uri);
        self.cancel_verification(uri);
        if self.verified.remove(uri).is_some() {
            self.refresh_lenses();
        }
        if let Some(c) = self.suggest_jobs.remove(uri) {
            jobs::cancel(&c);
        }
    }

    pub fn cancel_verification(&mut self, uri: &lsp::Url) {
        if let Some(r) = self.verifying.remove(uri) {
            jobs::cancel(&r.cancel);
            self.notify(
                crate::NOTE_VERIFICATION,
                json!({ "uri": uri, "version": r.version, "status": "cancelled" }),
            );
            self.refresh_lenses();
        }
    }

    fn cancel_all(&mut self) {
        let verifying = self.verifying.values().map(|r| &r.cancel);
        for c in self.cost_jobs.values().chain(self.suggest_jobs.values()).chain(verifying) {
            jobs::cancel(c);
        }
        self.verifying.clear();
    }

    pub fn send(&self, m: Message) {
        // The writer is gone only when the client is: the loop ends at the next read.
        let _ = self.out.send(m);
    }

    pub fn notify(&self, method: &str, params: impl serde::Serialize) {
        let params = serde_json::to_value(params).unwrap_or(Value::Null);
        self.send(Message::Notification(Notification::new(method.into(), params)));
    }

    pub fn log(&self, typ: lsp::MessageType, message: &str) {
        let p = lsp::LogMessageParams { typ, message: format!("alpine-rs: {message}") };
        self.notify("window/logMessage", p);
    }

    /// Ask the client to ask again for code lenses (when it can).
    pub fn refresh_lenses(&mut self) {
        if self.caps.lens_refresh {
            self.next_request += 1;
            let id = RequestId::from(format!("alpine-rs-{}", self.next_request));
            let req = Request::new(id, "workspace/codeLens/refresh".into(), Value::Null);
            self.send(Message::Request(req));
        }
    }
}

/// Run a handler on typed parameters: bad parameters are InvalidParams, never a crash.
fn answer<P: serde::de::DeserializeOwned, R: serde::Serialize>(
    id: RequestId,
    params: Value,
    f: impl FnOnce(P) -> R,
) -> Response {
    match serde_json::from_value::<P>(params) {
        Ok(p) => Response::new_ok(id, f(p)),
        Err(e) => err(id, ErrorCode::InvalidParams, &e.to_string()),
    }
}

fn err(id: RequestId, code: ErrorCode, message: &str) -> Response {
    Response::new_err(id, code as i32, message.to_string())
}
