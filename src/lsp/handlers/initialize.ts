import { fileURLToPath } from "node:url";
import { CodeActionKind, type InitializeParams, type InitializeResult, TextDocumentSyncKind } from "vscode-languageserver/node.js";
import type { Session } from "../session.js";
import { Workspace } from "../workspace.js";

/**
 * `initialize`: opens the workspace at the editor's first folder (or the current directory) and
 * announces what the server answers. `watchFiles`: the client can watch contract files for us.
 */
export function initialize(session: Session, params: InitializeParams): { result: InitializeResult; watchFiles: boolean } {
  const folder = params.workspaceFolders?.[0]?.uri ?? params.rootUri;
  session.ws = new Workspace(folder ? fileURLToPath(folder) : process.cwd());
  const watchFiles = params.capabilities.workspace?.didChangeWatchedFiles?.dynamicRegistration === true;
  return {
    result: {
      capabilities: {
        textDocumentSync: TextDocumentSyncKind.Incremental,
        completionProvider: { triggerCharacters: [" ", "/", "[", ",", "("] },
        hoverProvider: true,
        definitionProvider: true,
        referencesProvider: true,
        renameProvider: { prepareProvider: false },
        codeActionProvider: { codeActionKinds: [CodeActionKind.QuickFix] },
      },
      serverInfo: { name: "charter" },
    },
    watchFiles,
  };
}
