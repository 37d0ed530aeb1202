import { type Connection, TextDocuments } from "vscode-languageserver/node.js";
import { TextDocument } from "vscode-languageserver-textdocument";
import { Diagnostics } from "./diagnostics.js";
import { codeActions } from "./handlers/code-action.js";
import { completion } from "./handlers/completion.js";
import { DocumentSync } from "./handlers/document-sync.js";
import { hover } from "./handlers/hover.js";
import { initialize } from "./handlers/initialize.js";
import { definition, references } from "./handlers/navigation.js";
import { rename } from "./handlers/rename.js";
import { Session } from "./session.js";

/**
 * `charter lsp`: the contracts in an editor. Diagnostics are checkDomain's findings, word for word
 * (./diagnostics.ts); each request is one handler under ./handlers/, and DocumentSync keeps the
 * workspace in step with the editor's documents and the files on disk. This function wires them.
 */
export function startServer(connection: Connection): void {
  const documents = new TextDocuments(TextDocument);
  const session = new Session(documents);
  const diagnostics = new Diagnostics(connection, session);
  const sync = new DocumentSync(session, documents, diagnostics);
  let watchFiles = false;

  connection.onInitialize((params) => {
    const init = initialize(session, params);
    watchFiles = init.watchFiles;
    return init.result;
  });
  connection.onInitialized(() => sync.initialized(connection, watchFiles));
  documents.onDidOpen((e) => sync.edited(e.document));
  documents.onDidChangeContent((e) => sync.edited(e.document));
  documents.onDidClose((e) => sync.closed(e.document));
  connection.onDidChangeWatchedFiles((params) => sync.watchedFilesChanged(params));

  connection.onCompletion((params) => completion(session, params));
  connection.onHover((params) => hover(session, params));
  connection.onDefinition((params) => definition(session, params));
  connection.onReferences((params) => references(session, params));
  connection.onRenameRequest((params) => rename(session, params));
  connection.onCodeAction((params) => codeActions(session, params));
  connection.onShutdown(() => diagnostics.dispose());

  documents.listen(connection);
  connection.listen();
}
