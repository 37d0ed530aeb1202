import { Command } from "commander";

/** `charter lsp --stdio`: the language server for contract files (LSP 3.17). */
export function lspCommand(): Command {
  return new Command("lsp")
    .description("run the language server for *.contract.yaml files (diagnostics, completion, rename, quick fixes)")
    .option("--stdio", "talk LSP over standard input and output (the only transport)", true)
    .action(async () => {
      // Loaded when the server starts: the protocol library and the handlers are about a tenth of a
      // second of start-up that every other command would otherwise pay.
      const [{ createConnection, ProposedFeatures }, { startServer }] = await Promise.all([
        import("vscode-languageserver/node.js"),
        import("../../lsp/server.js"),
      ]);
      // createConnection reads the transport from the command line (`--stdio`).
      startServer(createConnection(ProposedFeatures.all));
    });
}
