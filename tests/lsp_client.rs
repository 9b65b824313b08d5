//! `alpine-rs lsp` driven by a real LSP client: the pytest-lsp suite of `tests/lsp/` (diagnostics
//! of a PVL and a CUDA kernel, code actions that give exactly `apply`'s output, a disabled action
//! with its refusal, per-method verification on save, an edit that cancels it, hovers). It needs
//! Python with pytest-lsp (`python3 -m pip install pytest-lsp`; `.ci/run` installs it) and the
//! Silicon backend (`alpine-rs backend install`).

mod common;

use std::process::Command;

fn python() -> &'static str {
    if Command::new("python3").arg("--version").output().is_ok() {
        "python3"
    } else {
        "python"
    }
}

#[test]
fn an_editor_drives_the_server() {
    let py = python();
    let ready = Command::new(py)
        .args(["-c", "import pytest_lsp"])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ready,
        "\n\nthe editor tests need Python with pytest-lsp: `{py} -m pip install pytest-lsp` \
         (.ci/run installs it)\n\n"
    );
    let dir = common::root().join("tests").join("lsp");
    let out = Command::new(py)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "test_editor.py"])
        .current_dir(&dir)
        .env("ALPINE_RS_BIN", env!("CARGO_BIN_EXE_alpine-rs"))
        .env("ALPINE_RS_ROOT", common::root())
        .output()
        .expect("run pytest");
    let text =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "the editor suite failed:\n{text}");
    assert!(text.contains(" passed"), "{text}");
}
