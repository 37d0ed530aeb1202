import { fileURLToPath } from "node:url";
import {
  CodeActionKind,
  type Connection,
  DidChangeWatchedFilesNotification,
  TextDocumentSyncKind,
  TextDocuments,
} from "vscode-languageserver/node.js";
import { TextDocument } from "vscode-languageserver-textdocument";
import { CONTRACT_SUFFIX } from "../contracts/index.js";
import { Diagnostics } from "./diagnostics.js";
import { codeActions } from "./handlers/code-action.js";
import { completion } from "./handlers/completion.js";
import { hover } from "./handlers/hover.js";
import { definition, references } from "./handlers/navigation.js";
import { rename } from "./handlers/rename.js";
import { Session } from "./session.js";
import { Workspace } from "./workspace.js";

/**
 * `charter lsp`: the contracts in an editor. Diagnostics are checkDomain's findings, word for word
 * (./diagnostics.ts); each request is one handler under ./handlers/. This function only keeps the
 * workspace in step with the editor's documents and the files on disk, and wires the handlers.
 */
export function startServer(connection: Connection): void {
  const documents = new TextDocuments(TextDocument);
  const session = new Session(documents);
  const diagnostics = new Diagnostics(connection, session);
  let loaded = false;
  let watchFiles = false;

  connection.onInitialize((params) => {
    const folder = params.workspaceFolders?.[0]?.uri ?? params.rootUri;
    session.ws = new Workspace(folder ? fileURLToPath(folder) : process.cwd());
    watchFiles = params.capabilities.workspace?.didChangeWatchedFiles?.dynamicRegistration === true;
    return {
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
    };
  });

  connection.onInitialized(() => {
    const ws = session.ws;
    if (!ws) return;
    for (const d of documents.all()) ws.overlays.set(fileURLToPath(d.uri), d.getText());
    ws.load();
    loaded = true;
    // Files changed outside the editor (git checkout, charter's Healer) are re-read as they change.
    if (watchFiles) {
      void connection.client.register(DidChangeWatchedFilesNotification.type, { watchers: [{ globPattern: `**/*${CONTRACT_SUFFIX}` }] });
    }
    const open = documents.all().map((d) => fileURLToPath(d.uri));
    if (open.length > 0) diagnostics.recheck(open, []);
    diagnostics.runFullCheck();
  });

  const onText = (doc: TextDocument): void => {
    const ws = session.ws;
    if (!ws || !doc.uri.startsWith("file:")) return;
    const p = fileURLToPath(doc.uri);
    if (!p.endsWith(CONTRACT_SUFFIX)) return;
    ws.overlays.set(p, doc.getText());
    // Before the domain is loaded (initialized not yet handled), the load will read the overlay.
    if (!loaded) return;
    const former = ws.update(p);
    diagnostics.recheck([p], [former]);
  };
  documents.onDidOpen((e) => onText(e.document));
  documents.onDidChangeContent((e) => onText(e.document));
  documents.onDidClose((e) => {
    const ws = session.ws;
    if (!ws) return;
    const p = fileURLToPath(e.document.uri);
    ws.overlays.delete(p);
    const former = ws.update(p);
    diagnostics.recheck([p], [former]);
  });

  connection.onDidChangeWatchedFiles((params) => {
    const ws = session.ws;
    if (!ws) return;
    const changed: string[] = [];
    const former: (string | null)[] = [];
    for (const c of params.changes) {
      const p = fileURLToPath(c.uri);
      if (!p.endsWith(CONTRACT_SUFFIX) || ws.overlays.has(p)) continue;
      if (c.type === 3) former.push(ws.remove(p));
      else {
        former.push(ws.update(p));
        changed.push(p);
      }
    }
    diagnostics.recheck(changed, former);
  });

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
