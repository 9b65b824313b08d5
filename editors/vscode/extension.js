// The alpine-rs client: starts `alpine-rs lsp --stdio` for PVL, CUDA, C and OpenCL files and
// shows the state of the last verification in the status bar. Everything else (diagnostics,
// code actions, code lenses, hovers) is the protocol's and needs no code here.
const vscode = require("vscode");
const { LanguageClient, TransportKind } = require("vscode-languageclient/node");

let client;

function settings() {
  const c = vscode.workspace.getConfiguration("alpine-rs");
  return {
    verifyOnSave: c.get("verifyOnSave"),
    verifyTimeout: c.get("verifyTimeout"),
    costOnSave: c.get("costOnSave"),
    z3Timeout: c.get("z3Timeout"),
  };
}

async function activate(context) {
  const command = vscode.workspace.getConfiguration("alpine-rs").get("path") || "alpine-rs";
  const server = { command, args: ["lsp", "--stdio"], transport: TransportKind.stdio };
  client = new LanguageClient(
    "alpine-rs",
    "alpine-rs",
    { run: server, debug: server },
    {
      documentSelector: ["pvl", "cuda-cpp", "c", "opencl"].map((language) => ({ language })),
      initializationOptions: settings(),
      synchronize: { configurationSection: "alpine-rs" },
    }
  );
  const status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left);
  context.subscriptions.push(status);
  await client.start();
  client.onNotification("alpine-rs/verification", (p) => {
    const name = vscode.Uri.parse(p.uri).path.split("/").pop();
    if (p.status === "running") status.text = `$(sync~spin) verifying ${name}`;
    else if (p.status === "cancelled") status.text = `$(circle-slash) ${name}: cancelled`;
    else if (p.verdict === "Verified") status.text = `$(check) ${name} verified`;
    else status.text = `$(error) ${name}: ${p.verdict} (${p.failedMethods} failed)`;
    status.show();
  });
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
