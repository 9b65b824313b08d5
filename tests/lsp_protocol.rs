//! `alpine-rs lsp` under a client that gets everything wrong: a malformed request or file never
//! kills the server (issue 57). In process, a seeded generator sends random messages (requests
//! and notifications of every method the server knows and some it does not, with random,
//! ill-typed or out-of-range parameters, documents cut and mutated from the corpus, changes with
//! ranges past the end or reversed, requests before `initialize`); every request must get
//! exactly one answer and the server must still serve a well-formed session afterwards. Over
//! stdio, frames that are not JSON or not messages are skipped.
//!
//! `LSP_FUZZ_MESSAGES=N` (default 400) and `LSP_FUZZ_SEED=S` run a longer or another sequence.

mod common;

use alpine_rs::lsp::{serve, Incoming, Options};
use crossbeam_channel::{unbounded, Receiver, Sender};
use lsp_server::{Message, Notification, Request, RequestId, Response};
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

fn seeds() -> Vec<String> {
    let mut out = Vec::new();
    for dir in ["unroll", "merge", "prefetch", "fuse", "tile"] {
        for f in common::files(&common::root().join("../shared/corpus").join(dir), "pvl") {
            out.push(std::fs::read_to_string(f).unwrap());
        }
    }
    for f in common::files(&common::root().join("fixtures/cuda/merge"), "cu") {
        out.push(std::fs::read_to_string(f).unwrap());
    }
    assert!(out.len() > 10, "{} seed files", out.len());
    out
}

/// A document: a seed file cut, spliced and sprinkled with odd characters.
fn document(r: &mut Rng, seeds: &[String]) -> String {
    let s = r.pick(seeds).clone();
    let mut b: Vec<char> = s.chars().collect();
    for _ in 0..r.below(6).saturating_sub(2) {
        if b.is_empty() {
            break;
        }
        let at = r.below(b.len());
        match r.below(4) {
            0 => {
                let end = (at + r.below(40)).min(b.len());
                b.drain(at..end);
            }
            1 => b.insert(at, *r.pick(&['{', '}', '(', ';', 'é', '𝕏', '\u{0}', '\r', '"', '@'])),
            2 => {
                let other: Vec<char> = r.pick(seeds).chars().collect();
                let from = r.below(other.len().max(1));
                let end = (from + r.below(80)).min(other.len());
                b.splice(at..at, other[from..end].iter().copied());
            }
            _ => b.truncate(at),
        }
    }
    b.into_iter().collect()
}

/// A position: mostly on the lines of a kernel (where the sites are), sometimes far outside.
fn position(r: &mut Rng) -> Value {
    let big = [0u64, 1, 3, 10, 40, 1000, u32::MAX as u64];
    let line = if r.below(3) == 0 { *r.pick(&big) } else { r.below(45) as u64 };
    json!({ "line": line, "character": r.pick(&big) })
}

fn junk(r: &mut Rng) -> Value {
    match r.below(7) {
        0 => Value::Null,
        1 => json!(r.next() as i64),
        2 => json!("file:///nowhere.pvl"),
        3 => json!([1, "two", null]),
        4 => json!({ "textDocument": 5 }),
        5 => json!({ "textDocument": { "uri": "not a uri" }, "position": "here" }),
        _ => json!({}),
    }
}

const URIS: [&str; 3] = ["file:///f/a.pvl", "file:///f/b.cu", "untitled:Untitled-1"];

/// One random message; `Some(id)` for a request.
fn message(r: &mut Rng, seeds: &[String], id: &mut i32) -> (Message, Option<RequestId>) {
    let uri = *r.pick(&URIS);
    let td = json!({ "uri": uri });
    let range = if r.below(2) == 0 {
        // A block of lines, as an editor's selection.
        let first = r.below(40);
        json!({ "start": { "line": first, "character": 0 }, "end": { "line": first + r.below(25), "character": 0 } })
    } else {
        json!({ "start": position(r), "end": position(r) })
    };
    let (method, params, request) = match r.below(12) {
        0 => (
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": uri, "languageId": r.pick(&["pvl", "cuda-cpp", "weird"]), "version": r.below(5), "text": document(r, seeds) } }),
            false,
        ),
        1 | 2 => (
            "textDocument/didChange",
            json!({ "textDocument": { "uri": uri, "version": r.below(100) }, "contentChanges": [ if r.below(3) == 0 { json!({ "text": document(r, seeds) }) } else { json!({ "range": range, "text": r.pick(&["", "x", "}\n", "é𝕏", "par"]).to_string() }) } ] }),
            false,
        ),
        3 => (
            "textDocument/codeAction",
            json!({ "textDocument": td, "range": range, "context": { "diagnostics": [] } }),
            true,
        ),
        4 => ("textDocument/hover", json!({ "textDocument": td, "position": position(r) }), true),
        5 => ("textDocument/codeLens", json!({ "textDocument": td }), true),
        6 => (
            "workspace/executeCommand",
            json!({ "command": r.pick(&["alpine-rs.nothing", "x"]).to_string(), "arguments": [uri] }),
            true,
        ),
        7 => ("textDocument/didClose", json!({ "textDocument": td }), false),
        8 => (
            *r.pick(&["textDocument/hover", "textDocument/codeAction", "workspace/executeCommand"]),
            junk(r),
            true,
        ),
        9 => (*r.pick(&["textDocument/formatting", "$/unknown", "initialize"]), junk(r), true),
        10 => (
            *r.pick(&[
                "textDocument/didOpen",
                "textDocument/didChange",
                "workspace/didChangeConfiguration",
                "$/cancelRequest",
                "made/up",
            ]),
            junk(r),
            false,
        ),
        _ => (
            "workspace/didChangeConfiguration",
            json!({ "settings": { "alpine-rs": { "z3Timeout": r.pick(&[json!(50), json!("x"), json!(-1)]) , "verifyOnSave": false, "costOnSave": false } } }),
            false,
        ),
    };
    if request {
        *id += 1;
        let rid = RequestId::from(*id);
        (Message::Request(Request::new(rid.clone(), method.into(), params)), Some(rid))
    } else {
        (Message::Notification(Notification::new(method.into(), params)), None)
    }
}

fn start() -> (Sender<Incoming>, Receiver<Message>, std::thread::JoinHandle<i32>) {
    let (in_tx, in_rx) = unbounded();
    let (out_tx, out_rx) = unbounded();
    let exe = env!("CARGO_BIN_EXE_alpine-rs").into();
    let opts = Options { exe, code_docs: "file:///docs/codes.md".into() };
    let h = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || serve(in_rx, out_tx, opts))
        .unwrap();
    (in_tx, out_rx, h)
}

/// The answer to request `id`. A caught panic (an internal error answered or logged) fails the
/// test: the session survived it, but it is a bug.
fn answer(rx: &Receiver<Message>, id: &RequestId) -> Response {
    loop {
        match rx.recv_timeout(Duration::from_secs(300)).expect("the server answers") {
            Message::Response(r) if &r.id == id => {
                let internal = lsp_server::ErrorCode::InternalError as i32;
                assert!(r.error.as_ref().is_none_or(|e| e.code != internal), "{r:?}");
                return r;
            }
            Message::Notification(n) if n.method == "window/logMessage" => {
                assert!(!n.params.to_string().contains("internal error"), "{n:?}");
            }
            _ => {}
        }
    }
}

#[test]
fn random_messages_never_end_the_session() {
    let seeds = seeds();
    let n: usize =
        std::env::var("LSP_FUZZ_MESSAGES").ok().and_then(|v| v.parse().ok()).unwrap_or(400);
    let (tx, rx, server) = start();
    let seed = std::env::var("LSP_FUZZ_SEED").ok().and_then(|v| v.parse().ok());
    let mut r = Rng(seed.unwrap_or(0x5eed_1234_abcd_0001) | 1);
    let mut id = 0;
    // Before initialize: requests are refused, not ignored.
    let (m, rid) = message(&mut r, &seeds, &mut id);
    tx.send(Incoming::Message(m)).unwrap();
    if let Some(rid) = rid {
        assert!(answer(&rx, &rid).error.is_some());
    }
    id += 1;
    let init = RequestId::from(id);
    let caps = json!({ "textDocument": { "codeAction": { "disabledSupport": true } } });
    let opts = json!({ "verifyOnSave": false, "costOnSave": false, "z3Timeout": 200 });
    tx.send(Incoming::Message(Message::Request(Request::new(
        init.clone(),
        "initialize".into(),
        json!({ "capabilities": caps, "initializationOptions": opts }),
    ))))
    .unwrap();
    assert!(answer(&rx, &init).result.is_some());
    let mut pending = Vec::new();
    for _ in 0..n {
        let (m, rid) = message(&mut r, &seeds, &mut id);
        tx.send(Incoming::Message(m)).unwrap();
        if r.below(10) == 0 {
            tx.send(Incoming::Malformed("garbage".into())).unwrap();
        }
        pending.extend(rid);
        // Answers come in order: collect them now and then, so the channel stays short.
        if pending.len() > 20 {
            for p in pending.drain(..) {
                answer(&rx, &p);
            }
        }
    }
    for p in pending.drain(..) {
        answer(&rx, &p);
    }
    // Still a working server: a fresh document gets its diagnostics and actions.
    let text =
        std::fs::read_to_string(common::root().join("../shared/corpus/unroll/ok_loop_in_par.pvl"))
            .unwrap();
    tx.send(Incoming::Message(Message::Notification(Notification::new("textDocument/didOpen".into(), json!({ "textDocument": { "uri": "file:///f/final.pvl", "languageId": "pvl", "version": 1, "text": text } }))))).unwrap();
    id += 1;
    let rid = RequestId::from(id);
    let line = text.lines().position(|l| l.contains("for (int r")).unwrap();
    let z3 = json!({ "settings": { "z3Timeout": 2000 } });
    tx.send(Incoming::Message(Message::Notification(Notification::new(
        "workspace/didChangeConfiguration".into(),
        z3,
    ))))
    .unwrap();
    tx.send(Incoming::Message(Message::Request(Request::new(rid.clone(), "textDocument/codeAction".into(), json!({ "textDocument": { "uri": "file:///f/final.pvl" }, "range": { "start": { "line": line, "character": 0 }, "end": { "line": line, "character": 0 } }, "context": { "diagnostics": [] } }))))).unwrap();
    let acts = answer(&rx, &rid).result.expect("actions");
    let titles: Vec<&str> =
        acts.as_array().unwrap().iter().filter_map(|a| a["title"].as_str()).collect();
    assert!(titles.iter().any(|t| t.starts_with("Apply unroll")), "{titles:?}");
    id += 1;
    let rid = RequestId::from(id);
    tx.send(Incoming::Message(Message::Request(Request::new(
        rid.clone(),
        "shutdown".into(),
        Value::Null,
    ))))
    .unwrap();
    answer(&rx, &rid);
    tx.send(Incoming::Message(Message::Notification(Notification::new(
        "exit".into(),
        Value::Null,
    ))))
    .unwrap();
    assert_eq!(server.join().expect("the server thread ends normally"), 0);
}

#[test]
fn garbage_on_stdin_is_skipped() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_alpine-rs"))
        .args(["lsp", "--stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let frame = |body: &str| format!("Content-Length: {}\r\n\r\n{body}", body.len());
    let mut input = String::new();
    input.push_str(&frame("{not json"));
    input.push_str("Nonsense header\r\n\r\n");
    input.push_str(&frame(r#"{"jsonrpc":"2.0","id":1}"#));
    input.push_str(&frame(
        r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"capabilities":{}}}"#,
    ));
    input.push_str(&frame(r#"{"jsonrpc":"2.0","id":3,"method":"shutdown"}"#));
    input.push_str(&frame(r#"{"jsonrpc":"2.0","method":"exit"}"#));
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
    drop(stdin);
    let mut out = String::new();
    child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    let status = child.wait().unwrap();
    assert!(out.contains(r#""id":2"#) && out.contains("capabilities"), "{out}");
    assert!(out.contains(r#""id":3"#), "{out}");
    assert!(out.contains("ignored a malformed message"), "{out}");
    assert_eq!(status.code(), Some(0), "{out}");
}
