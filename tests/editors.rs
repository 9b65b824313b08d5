//! The editor integrations agree with the server: the VS Code extension (`editors/vscode`)
//! contributes every setting the server reads, starts the server with arguments the command
//! line accepts, and listens to the notification the server sends; the Neovim configuration of
//! docs/editors.md starts it the same way.

mod common;

use alpine_rs::lsp::{NOTE_VERIFICATION, SETTINGS};

fn read(path: &str) -> String {
    std::fs::read_to_string(common::root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn the_vscode_extension_contributes_the_servers_settings() {
    let pkg: serde_json::Value =
        serde_json::from_str(&read("editors/vscode/package.json")).unwrap();
    let props = &pkg["contributes"]["configuration"]["properties"];
    for s in SETTINGS {
        assert!(props.get(format!("alpine-rs.{s}")).is_some(), "package.json lacks alpine-rs.{s}");
    }
    let js = read("editors/vscode/extension.js");
    for s in SETTINGS {
        assert!(js.contains(&format!("{s}: c.get(\"{s}\")")), "extension.js does not send {s}");
    }
    assert!(js.contains(&format!("\"{NOTE_VERIFICATION}\"")), "extension.js does not listen");
    assert!(js.contains(r#"args: ["lsp", "--stdio"]"#));
    assert!(pkg["dependencies"]["vscode-languageclient"].is_string());
}

#[test]
fn the_server_starts_as_the_editors_start_it() {
    // `alpine-rs lsp --stdio` with stdin closed at once: the session ends without `shutdown`
    // (exit 1, as the protocol asks), not with a usage error (exit 2).
    let (code, _, err) = common::run_cli(&["lsp", "--stdio"]);
    assert_eq!(code, 1, "{err}");
    let nvim = read("docs/editors.md");
    assert!(nvim.contains(r#"cmd = { "alpine-rs", "lsp", "--stdio" }"#), "docs/editors.md");
}
