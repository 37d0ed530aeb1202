// The VS Code side of `charter lsp`: starts the server over stdio for every *.contract.yaml file.
// All the language knowledge lives in the server; this file only wires the client to it.
const vscode = require("vscode");
const { LanguageClient, TransportKind } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const config = vscode.workspace.getConfiguration("charter.server");
  const command = config.get("command", "charter");
  const args = config.get("args", ["lsp", "--stdio"]);
  const server = { command, args, transport: TransportKind.stdio };
  client = new LanguageClient(
    "charter",
    "Charter contracts",
    { run: server, debug: server },
    {
      documentSelector: [{ scheme: "file", language: "yaml", pattern: "**/*.contract.yaml" }],
      synchronize: { fileEvents: vscode.workspace.createFileSystemWatcher("**/*.contract.yaml") },
    },
  );
  context.subscriptions.push({ dispose: () => client?.stop() });
  return client.start();
}

function deactivate() {
  return client?.stop();
}

module.exports = { activate, deactivate };
