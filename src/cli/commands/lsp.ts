import { Command } from "commander";
import { createConnection, ProposedFeatures } from "vscode-languageserver/node.js";
import { startServer } from "../../lsp/server.js";

/** `charter lsp --stdio`: the language server for contract files (LSP 3.17). */
export function lspCommand(): Command {
  return new Command("lsp")
    .description("run the language server for *.contract.yaml files (diagnostics, completion, rename, quick fixes)")
    .option("--stdio", "talk LSP over standard input and output (the only transport)", true)
    .action(() => {
      // createConnection reads the transport from the command line (`--stdio`).
      startServer(createConnection(ProposedFeatures.all));
    });
}
