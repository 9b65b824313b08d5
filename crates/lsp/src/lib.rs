//! `alpine-rs lsp`: alpine-rs as a language server over stdio, for PVL and CUDA files.
//!
//! - Diagnostics on open and on every change: everything `verify` reports before Silicon runs
//!   (`diagnostics.rs`), each code linked to its documentation.
//! - Code actions at each optimization site: the optimizations `sweep` would try there, carried
//!   out by `apply`'s driver (`actions.rs`): an edit that yields exactly `alpine-rs apply`'s
//!   output, or a disabled action with the refusal's code and reason; "Suggest optimizations"
//!   ranks them by the cost model, and the titles then carry the deltas (`suggest.rs`).
//! - Verification on save (`verification.rs`): one Silicon JVM for the session, per-method
//!   results as code lenses and diagnostics, a newer save or edit cancels the running check.
//! - Hovers (`hover.rs`): an array access shows its row of the last cost run; a diagnostic its
//!   code's explanation.
//!
//! The protocol types come from `lsp-types` and the message types from `lsp-server` (both
//! rust-analyzer's: synchronous, no async runtime, which suits a pipeline that is synchronous
//! throughout); the stdio framing is our own (`transport.rs`) so that a malformed frame is
//! skipped instead of ending the session. The loop is `server.rs`, the requests `handlers.rs`.

mod actions;
mod diagnostics;
mod handlers;
mod hover;
mod jobs;
mod server;
mod suggest;
mod text;
mod transport;
mod verification;

pub use actions::apply_edits;
pub use server::serve;
pub use text::Doc;
pub use transport::{read_loop, write_loop, Incoming};

use std::path::PathBuf;

/// The command that ranks a document's optimizations (`arguments: [uri]`).
pub const CMD_SUGGEST: &str = "alpine-rs.suggest";
/// The command that verifies a document now (`arguments: [uri]`; the code lenses run it).
pub const CMD_VERIFY: &str = "alpine-rs.verify";
/// Notification: a verification started, finished (with per-method results) or was cancelled.
pub const NOTE_VERIFICATION: &str = "alpine-rs/verification";
/// Notification: the ranking of `suggest` for a document version.
pub const NOTE_SUGGESTIONS: &str = "alpine-rs/suggestions";
/// Notification: a cost run finished (its rows are what hovers show).
pub const NOTE_COST: &str = "alpine-rs/cost";

/// How the server is set up by the command line.
#[derive(Clone, Debug)]
pub struct Options {
    /// The `alpine-rs` executable the background jobs run (`suggest`, `run --cost`).
    pub exe: PathBuf,
    /// Where a code's documentation is: `{code}` is replaced by the code (lower case).
    pub code_docs: String,
}

/// What the client may set (`initializationOptions`, or `workspace/didChangeConfiguration`
/// with the settings under `alpine-rs` or at the top level).
#[derive(Clone, Debug)]
pub struct Settings {
    pub verify_on_save: bool,
    pub verify_timeout_s: u64,
    pub cost_on_save: bool,
    pub z3_timeout_ms: u32,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            verify_on_save: true,
            verify_timeout_s: 120,
            cost_on_save: true,
            z3_timeout_ms: 2_000,
        }
    }
}

/// The settings a client may send (camel case, as editors name them).
pub const SETTINGS: [&str; 4] = ["verifyOnSave", "verifyTimeout", "costOnSave", "z3Timeout"];

impl Settings {
    /// Take what `v` sets; anything else (unknown keys, wrong types) is left as it was.
    pub fn update(&mut self, v: &serde_json::Value) {
        let v = v.get("alpine-rs").unwrap_or(v);
        let [verify, timeout, cost, z3] = SETTINGS;
        let flag = |k: &str| v.get(k).and_then(|x| x.as_bool());
        let num = |k: &str| v.get(k).and_then(|x| x.as_u64());
        if let Some(b) = flag(verify) {
            self.verify_on_save = b;
        }
        if let Some(b) = flag(cost) {
            self.cost_on_save = b;
        }
        if let Some(n) = num(timeout) {
            self.verify_timeout_s = n;
        }
        if let Some(n) = num(z3) {
            self.z3_timeout_ms = u32::try_from(n).unwrap_or(u32::MAX);
        }
    }
}

/// Serve one client over stdin and stdout; returns the process exit code.
pub fn stdio(opts: Options) -> u8 {
    // Without a Z3 library, a query fails its one request instead of ending the session.
    check::panic_on_missing_solver();
    let (in_tx, in_rx) = crossbeam_channel::unbounded();
    let (out_tx, out_rx) = crossbeam_channel::unbounded();
    // The reader blocks on stdin; it is not joined (the process ends with the session).
    std::thread::spawn(move || read_loop(std::io::stdin().lock(), in_tx));
    let writer = std::thread::spawn(move || write_loop(std::io::stdout().lock(), out_rx));
    let code = serve(in_rx, out_tx, opts);
    let _ = writer.join();
    u8::try_from(code).unwrap_or(1)
}
