"""alpine-rs lsp driven by a real LSP client (pytest-lsp), as an editor drives it.

Run by tests/lsp_client.rs (`cargo test`), which passes the binary in ALPINE_RS_BIN and the
repository root in ALPINE_RS_ROOT.
"""

import asyncio
import os
import pathlib
import subprocess
import sys
import time

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

BIN = os.environ["ALPINE_RS_BIN"]
ROOT = pathlib.Path(os.environ["ALPINE_RS_ROOT"])
SHARED = ROOT.parent / "shared"
KERNEL = SHARED / "corpus" / "unroll" / "ok_loop_in_par.pvl"
REFUSED = SHARED / "corpus" / "unroll" / "reject_missing_bound_fact.pvl"
CUDA = ROOT / "fixtures" / "cuda" / "merge" / "ok_grid_conv.cu"


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[BIN, "lsp", "--stdio"]),
)
async def client(lsp_client: LanguageClient):
    lsp_client.alpine = {"verification": [], "cost": [], "suggestions": []}

    @lsp_client.feature("alpine-rs/verification")
    def _verification(params):
        lsp_client.alpine["verification"].append(params)

    @lsp_client.feature("alpine-rs/cost")
    def _cost(params):
        lsp_client.alpine["cost"].append(params)

    @lsp_client.feature("alpine-rs/suggestions")
    def _suggestions(params):
        lsp_client.alpine["suggestions"].append(params)

    # Keep the version of each publishDiagnostics (pytest-lsp's own handler keeps the list).
    lsp_client.diagnostics_versions = {}
    lsp_client.protocol.fm.features.pop(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, None)

    @lsp_client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def _publish(params: types.PublishDiagnosticsParams):
        lsp_client.diagnostics[params.uri] = params.diagnostics
        lsp_client.diagnostics_versions[params.uri] = params.version

    @lsp_client.feature("workspace/codeLens/refresh")
    def _refresh(params):
        return None

    params = types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        initialization_options={"verifyTimeout": 300},
    )
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


def field(obj, name):
    """A field of a custom notification's params (an object or a dict)."""
    return obj[name] if isinstance(obj, dict) else getattr(obj, name)


def open_doc(client, path, text=None, language="pvl", version=1):
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id=language, version=version,
                text=path.read_text() if text is None else text,
            )
        )
    )
    return uri


def change(client, uri, version, text):
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


async def diagnostics_of(client, uri, version):
    for _ in range(600):
        got = client.diagnostics.get(uri)
        if got is not None and client.diagnostics_versions.get(uri) == version:
            return got
        await asyncio.sleep(0.05)
    raise AssertionError(f"no diagnostics for {uri} version {version}")


async def until(pred, what, seconds=300):
    for _ in range(int(seconds / 0.1)):
        v = pred()
        if v:
            return v
        await asyncio.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def unique_class():
    """A class no other run has verified, so that Silicon runs (the result cache is keyed by
    the Viper program, which comments do not change)."""
    tag = f"{os.getpid()}_{int(time.time() * 1000)}"
    return f"\nclass Probe{tag} {{\n  ensures \\result == {len(tag)};\n  int m() {{ return {len(tag)}; }}\n}}\n"


def line_of(text, needle):
    for i, l in enumerate(text.splitlines()):
        if needle in l:
            return i
    raise AssertionError(needle)


async def hover_on(client, uri, text, line_needle, needle, offset):
    """The hover at `offset` characters into `needle` on the line holding `line_needle`."""
    line = line_of(text, line_needle)
    col = text.splitlines()[line].index(needle) + offset
    return await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line, col),
        )
    )


async def actions_at(client, uri, line):
    return await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(types.Position(line, 0), types.Position(line, 0)),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )


def apply_edit(text, edits):
    """Apply TextEdits (LSP positions, UTF-16 = ASCII here) to a text."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for l in lines:
        starts.append(starts[-1] + len(l))

    def off(p):
        if p.line >= len(lines):
            return len(text)
        return min(starts[p.line] + p.character, starts[p.line + 1])

    for e in sorted(edits, key=lambda e: off(e.range.start), reverse=True):
        text = text[: off(e.range.start)] + e.new_text + text[off(e.range.end):]
    return text


async def test_diagnostics_follow_the_text(client: LanguageClient):
    text = KERNEL.read_text()
    uri = open_doc(client, KERNEL)
    ds = await diagnostics_of(client, uri, 1)
    assert [d for d in ds if d.severity == types.DiagnosticSeverity.Error] == [], ds
    broken = text.replace("y[tid] = y[tid] + 2;", "y[tid] = y[tid] + missing;")
    change(client, uri, 2, broken)
    ds = await diagnostics_of(client, uri, 2)
    errors = [d for d in ds if d.severity == types.DiagnosticSeverity.Error]
    assert len(errors) == 1, ds
    assert errors[0].code == "V-UNDECLARED", errors[0]
    assert errors[0].range.start.line == line_of(broken, "missing")
    assert errors[0].code_description is not None
    change(client, uri, 3, text)
    ds = await diagnostics_of(client, uri, 3)
    assert [d for d in ds if d.severity == types.DiagnosticSeverity.Error] == [], ds


async def test_cuda_kernel_gets_diagnostics_and_actions(client: LanguageClient):
    text = CUDA.read_text()
    uri = open_doc(client, CUDA, language="cuda-cpp")
    ds = await diagnostics_of(client, uri, 1)
    assert [d for d in ds if d.severity == types.DiagnosticSeverity.Error] == [], ds
    loop = line_of(text, "for (int k = 0; k < K; k++)")
    acts = await actions_at(client, uri, loop)
    titles = [a.title for a in acts]
    merge = [a for a in acts if a.title.startswith("Apply merge") and a.disabled is None]
    assert merge, titles
    out = apply_edit(text, merge[0].edit.changes[uri])
    assert out != text
    want = subprocess.run(
        [BIN, "apply", *field(merge[0].data, "command").split()[2:]],
        capture_output=True, text=True, check=True,
    ).stdout
    assert out == want
    # Saved: the kernel verifies, its lens sits on the kernel, and its accesses have costs.
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    done = await until(
        lambda: [v for v in client.alpine["verification"]
                 if field(v, "status") == "done" and field(v, "uri") == uri],
        "the kernel's verification",
    )
    methods = field(done[-1], "methods")
    assert field(done[-1], "verdict") == "Verified", done[-1]
    assert [(field(m, "name"), field(m, "status")) for m in methods] == [("conv", "verified")]
    assert field(methods[0], "line") == line_of(text, "__global__ void conv")
    await until(lambda: client.alpine["cost"], "a cost run", 120)
    hover = await hover_on(client, uri, text, "acc = acc + in[g + k] * w[k];", "in[g + k]", 4)
    assert hover is not None and "in[g + k]" in hover.contents.value, hover


async def test_an_action_gives_exactly_what_apply_writes(client: LanguageClient):
    text = KERNEL.read_text()
    uri = open_doc(client, KERNEL)
    await diagnostics_of(client, uri, 1)
    loop = line_of(text, "for (int r = 0; r < reps; r++)")
    acts = await actions_at(client, uri, loop)
    unroll = [a for a in acts if a.title.startswith("Apply unroll") and a.disabled is None]
    assert unroll, [a.title for a in acts]
    for a in unroll:
        command = field(a.data, "command")
        argv = command.split()
        assert argv[:2] == ["alpine-rs", "apply"], command
        want = subprocess.run([BIN, *argv[1:]], capture_output=True, text=True, check=True).stdout
        assert apply_edit(text, a.edit.changes[uri]) == want, command
    # The suggest action is always offered.
    assert any(a.title.startswith("Suggest optimizations") for a in acts)


async def test_a_refused_site_shows_a_disabled_action_with_its_reason(client: LanguageClient):
    text = REFUSED.read_text()
    uri = open_doc(client, REFUSED)
    await diagnostics_of(client, uri, 1)
    loop = next(i for i, l in enumerate(text.splitlines()) if l.lstrip().startswith(("for", "while")))
    acts = await actions_at(client, uri, loop)
    disabled = [a for a in acts if a.title.startswith("Apply unroll") and a.disabled is not None]
    assert disabled, [(a.title, a.disabled) for a in acts]
    assert disabled[0].disabled.reason.startswith("A"), disabled[0].disabled.reason


async def test_save_verifies_per_method_and_an_edit_cancels(client: LanguageClient):
    text = KERNEL.read_text() + unique_class()
    uri = open_doc(client, KERNEL, text=text)
    await diagnostics_of(client, uri, 1)
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    # An edit while it runs cancels it.
    change(client, uri, 2, text + "\n")
    cancelled = await until(
        lambda: [v for v in client.alpine["verification"] if field(v, "status") == "cancelled"],
        "a cancelled verification", 30,
    )
    assert field(cancelled[0], "version") == 1
    # Saved again: per-method results.
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    done = await until(
        lambda: [v for v in client.alpine["verification"] if field(v, "status") == "done"],
        "a finished verification",
    )
    d = done[-1]
    assert field(d, "version") == 2
    assert field(d, "verdict") == "Verified", d
    methods = field(d, "methods")
    assert [field(m, "name") for m in methods] == ["bumpAll", "m"]
    assert all(field(m, "status") == "verified" for m in methods), methods
    assert field(d, "seconds") > 0.1, "Silicon ran (no cached answer)"
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert [l.command.title.split(" (")[0] for l in lenses] == ["✓ verified"] * 2, lenses
    assert lenses[0].range.start.line == line_of(text, "void bumpAll")
    # The cost run of the save: hovering an access shows its row.
    await until(lambda: client.alpine["cost"], "a cost run", 120)
    hover = await hover_on(client, uri, text, "y[tid] = y[tid] + 2;", "y[tid] + 2", 1)
    assert hover is not None and "sectors" in hover.contents.value, hover


async def test_a_failing_method_is_reported_on_its_clause(client: LanguageClient):
    text = KERNEL.read_text().replace(
        "ensures y[tid] == \\old(y[tid]) + 2 * reps;", "ensures y[tid] == \\old(y[tid]) + 3 * reps;"
    ) + unique_class()
    uri = open_doc(client, KERNEL.with_name("wrong_twin.pvl"), text=text)
    await diagnostics_of(client, uri, 1)
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    done = await until(
        lambda: [v for v in client.alpine["verification"] if field(v, "status") == "done"],
        "a finished verification",
    )
    assert field(done[-1], "verdict") == "Failed"
    statuses = [field(m, "status") for m in field(done[-1], "methods")]
    assert statuses == ["failed", "verified"], statuses
    ds = await diagnostics_of(client, uri, 1)
    errors = [d for d in ds if d.severity == types.DiagnosticSeverity.Error]
    assert errors and all(str(d.code).startswith("V-") for d in errors), errors
    # Hovering the diagnostic explains its code.
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=errors[0].range.start,
        )
    )
    assert hover is not None and str(errors[0].code) in hover.contents.value


async def test_suggest_ranks_the_actions_by_the_cost_model(client: LanguageClient):
    text = KERNEL.read_text()
    uri = open_doc(client, KERNEL)
    await diagnostics_of(client, uri, 1)
    await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="alpine-rs.suggest", arguments=[uri])
    )
    got = await until(lambda: client.alpine["suggestions"], "the ranking", 300)
    rows = field(got[-1], "suggestions")
    assert rows, got
    best = rows[0]
    # The best suggestion's action is preferred and its title carries the measured change.
    acts = await actions_at(client, uri, field(best, "line") - 1)
    ranked = [a for a in acts if "(rank 1)" in a.title]
    assert len(ranked) == 1, [a.title for a in acts]
    assert ranked[0].title.startswith(f"Apply {field(best, 'optimization')}")
    assert ranked[0].is_preferred
    assert "time −" in ranked[0].title or "time +" in ranked[0].title, ranked[0].title
    # And the ranking was announced.
    assert any("alpine-rs suggest:" in m.message for m in client.messages), client.messages
