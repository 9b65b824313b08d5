//! What an editor waits for from `alpine-rs lsp` (issue 57): diagnostics after a change to a
//! 500-line file, and the code actions at an optimization site, each measured from the message
//! sent to the answer received, on the server in process (the same loop `alpine-rs lsp` runs,
//! over channels instead of pipes).
//!
//! The file is a class of 25 kernels (each a `par` block with a loop, the corpus kernel
//! `unroll/ok_loop_in_par.pvl` under 25 names, 503 lines). Each change edits one loop's body, so that
//! nothing cached for the previous version answers. `LSP_BENCH_REPS` changes (default 30).
//!
//! `cargo bench --bench lsp`.

use alpine_rs::lsp::{serve, Incoming, Options};
use crossbeam_channel::{unbounded, Receiver, Sender};
use lsp_server::{Message, Notification, Request, RequestId};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const KERNELS: usize = 25;

const KERNEL: &str = r#"
  context_everywhere y != null && y.length == n;
  context_everywhere reps >= 3;
  context (\forall* int k; 0 <= k && k < n; Perm(y[k], write));
  ensures (\forall int k; 0 <= k && k < n; y[k] == \old(y[k]) + 2 * reps);
  void bumpNAME(int n, int reps, int[] y) {
    par bump (int tid = 0 .. n)
      context Perm(y[tid], write);
      ensures y[tid] == \old(y[tid]) + 2 * reps;
    {
      int start = y[tid];
      loop_invariant 0 <= r;
      loop_invariant r <= reps;
      loop_invariant Perm(y[tid], write);
      loop_invariant y[tid] == start + 2 * r;
      for (int r = 0; r < reps; r++) {
        y[tid] = y[tid] + 2;
      }
    }
  }
"#;

fn file() -> String {
    let mut s = String::from("// 25 kernels, one class\nclass Kernels {\n");
    for i in 0..KERNELS {
        s.push_str(&KERNEL.replace("NAME", &i.to_string()));
    }
    s.push_str("}\n");
    s
}

struct Client {
    tx: Sender<Incoming>,
    rx: Receiver<Message>,
    next: i32,
}

impl Client {
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = RequestId::from(self.next);
        let r = Request::new(id.clone(), method.into(), params);
        self.tx.send(Incoming::Message(Message::Request(r))).unwrap();
        loop {
            match self.rx.recv_timeout(Duration::from_secs(120)).expect("an answer") {
                Message::Response(r) if r.id == id => return r.result.unwrap_or(Value::Null),
                _ => {}
            }
        }
    }

    fn notify(&self, method: &str, params: Value) {
        let n = Notification::new(method.into(), params);
        self.tx.send(Incoming::Message(Message::Notification(n))).unwrap();
    }

    /// Wait for the diagnostics of `version`.
    fn diagnostics(&self, version: i32) -> Value {
        loop {
            if let Message::Notification(n) =
                self.rx.recv_timeout(Duration::from_secs(120)).unwrap()
            {
                if n.method == "textDocument/publishDiagnostics" && n.params["version"] == version {
                    return n.params;
                }
            }
        }
    }
}

fn stats(name: &str, xs: &mut [f64]) {
    xs.sort_by(f64::total_cmp);
    println!(
        "{name:<40} median {:>7.2} ms   p90 {:>7.2} ms   max {:>7.2} ms   ({} runs)",
        xs[xs.len() / 2],
        xs[xs.len() * 9 / 10],
        xs[xs.len() - 1],
        xs.len()
    );
}

fn main() {
    let reps: usize =
        std::env::var("LSP_BENCH_REPS").ok().and_then(|v| v.parse().ok()).unwrap_or(30);
    let (in_tx, in_rx) = unbounded();
    let (out_tx, out_rx) = unbounded();
    let opts = Options { exe: "alpine-rs".into(), code_docs: "file:///codes.md".into() };
    let server = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || serve(in_rx, out_tx, opts))
        .unwrap();
    let mut c = Client { tx: in_tx, rx: out_rx, next: 0 };
    let caps = json!({ "textDocument": { "codeAction": { "disabledSupport": true } } });
    c.request("initialize", json!({ "capabilities": caps, "initializationOptions": { "verifyOnSave": false, "costOnSave": false } }));
    c.notify("initialized", json!({}));
    let text = file();
    let lines = text.lines().count();
    let uri = "file:///bench/kernels.pvl";
    let t = Instant::now();
    c.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": uri, "languageId": "pvl", "version": 0, "text": text } }),
    );
    let first = c.diagnostics(0);
    println!(
        "file: {lines} lines, {} bytes; diagnostics on open: {:.2} ms ({} diagnostics)",
        text.len(),
        t.elapsed().as_secs_f64() * 1e3,
        first["diagnostics"].as_array().map_or(0, Vec::len)
    );
    let loops: Vec<u32> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains("for (int r"))
        .map(|(i, _)| i as u32)
        .collect();
    let (mut diag_ms, mut action_ms, mut counts) = (Vec::new(), Vec::new(), Vec::new());
    for v in 1..=reps as i32 {
        let body = loops[v as usize % loops.len()] + 1;
        // Replace `2;` at the end of the loop body's line by another constant.
        let line = text.lines().nth(body as usize).unwrap();
        let col = line.rfind("2;").unwrap() as u32;
        let change = json!({ "range": { "start": { "line": body, "character": col }, "end": { "line": body, "character": col + 1 } }, "text": if v % 2 == 0 { "2" } else { "3" } });
        let t = Instant::now();
        c.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": uri, "version": v }, "contentChanges": [change] }),
        );
        c.diagnostics(v);
        diag_ms.push(t.elapsed().as_secs_f64() * 1e3);
        let at = loops[(v as usize + 7) % loops.len()];
        let t = Instant::now();
        let acts = c.request("textDocument/codeAction", json!({ "textDocument": { "uri": uri }, "range": { "start": { "line": at, "character": 0 }, "end": { "line": at, "character": 0 } }, "context": { "diagnostics": [] } }));
        action_ms.push(t.elapsed().as_secs_f64() * 1e3);
        counts.push(acts.as_array().map_or(0, Vec::len));
    }
    stats("diagnostics after a change", &mut diag_ms);
    stats("code actions at a loop (uncached)", &mut action_ms);
    println!("code actions per request: {:?}", counts.iter().min().zip(counts.iter().max()));
    c.request("shutdown", Value::Null);
    c.notify("exit", Value::Null);
    assert_eq!(server.join().unwrap(), 0);
}
