import { fileURLToPath } from "node:url";
import {
  type Connection,
  DidChangeWatchedFilesNotification,
  type DidChangeWatchedFilesParams,
  type TextDocuments,
} from "vscode-languageserver/node.js";
import type { TextDocument } from "vscode-languageserver-textdocument";
import { CONTRACT_SUFFIX } from "../../contracts/index.js";
import type { Diagnostics } from "../diagnostics.js";
import type { Session } from "../session.js";

/**
 * Keeps the workspace in step with the editor's open documents (their text overrides the file on
 * disk) and with contract files changed outside the editor, and re-checks what changed.
 */
export class DocumentSync {
  /** The domain was loaded (`initialized` handled); before that, edits only update the overlays. */
  private loaded = false;

  constructor(
    private readonly session: Session,
    private readonly documents: TextDocuments<TextDocument>,
    private readonly diagnostics: Diagnostics,
  ) {}

  /** `initialized`: loads the domain with the open documents' text, then checks it whole. */
  initialized(connection: Connection, watchFiles: boolean): void {
    const ws = this.session.ws;
    if (!ws) return;
    for (const d of this.documents.all()) ws.overlays.set(fileURLToPath(d.uri), d.getText());
    ws.load();
    this.loaded = true;
    // Files changed outside the editor (git checkout, charter's Healer) are re-read as they change.
    if (watchFiles) {
      void connection.client.register(DidChangeWatchedFilesNotification.type, { watchers: [{ globPattern: `**/*${CONTRACT_SUFFIX}` }] });
    }
    const open = this.documents.all().map((d) => fileURLToPath(d.uri));
    if (open.length > 0) this.diagnostics.recheck(open, []);
    this.diagnostics.runFullCheck();
  }

  /** A contract opened or edited in the editor. */
  edited(doc: TextDocument): void {
    const ws = this.session.ws;
    if (!ws || !doc.uri.startsWith("file:")) return;
    const p = fileURLToPath(doc.uri);
    if (!p.endsWith(CONTRACT_SUFFIX)) return;
    ws.overlays.set(p, doc.getText());
    // Before the domain is loaded (initialized not yet handled), the load will read the overlay.
    if (!this.loaded) return;
    const former = ws.update(p);
    this.diagnostics.recheck([p], [former]);
  }

  /** A document closed: the file on disk speaks for it again. */
  closed(doc: TextDocument): void {
    const ws = this.session.ws;
    if (!ws) return;
    const p = fileURLToPath(doc.uri);
    ws.overlays.delete(p);
    const former = ws.update(p);
    this.diagnostics.recheck([p], [former]);
  }

  /** Contract files changed on disk; those open in the editor keep the editor's text. */
  watchedFilesChanged(params: DidChangeWatchedFilesParams): void {
    const ws = this.session.ws;
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
    this.diagnostics.recheck(changed, former);
  }
}
