//! `alpine-rs lsp`: the language server over stdio (`crates/lsp`; docs/editors.md says how to
//! start it from VS Code and Neovim).

use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct LspArgs {
    /// Talk over stdin and stdout (the only transport; accepted because editors pass it).
    #[arg(long)]
    pub stdio: bool,
    /// Where a diagnostic code's documentation is, `{code}` standing for the code in lower
    /// case (default: docs/codes.md of this build's source tree).
    #[arg(long, value_name = "URL")]
    pub code_docs: Option<String>,
}

pub fn main(args: LspArgs) -> u8 {
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("alpine-rs"));
    let code_docs = args.code_docs.unwrap_or_else(default_code_docs);
    crate::lsp::stdio(crate::lsp::Options { exe, code_docs })
}

/// The codes page of the source tree this binary was built from.
fn default_code_docs() -> String {
    let page = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs").join("codes.md");
    format!("file://{}", page.display())
}
