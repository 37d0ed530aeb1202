import { readFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Location, TextDocuments } from "vscode-languageserver/node.js";
import type { TextDocument } from "vscode-languageserver-textdocument";
import type { Finding } from "../contracts/index.js";
import { occurrenceRange } from "./ranges.js";
import type { Occurrence } from "./symbols.js";
import type { Entry, Workspace } from "./workspace.js";

/**
 * What every request handler of the language server reads: the open documents, the workspace once the
 * client has named it, and the findings last shown per file (the quick fixes start from those).
 */
export class Session {
  /** Set by `initialize`; requests before it find no workspace and answer nothing. */
  ws: Workspace | null = null;
  /** Findings shown per file, by what was last published. */
  readonly shown = new Map<string, Finding[]>();

  constructor(readonly documents: TextDocuments<TextDocument>) {}

  /** A file's text as the editor has it: the open buffer, else the loaded contract, else the disk. */
  textOf(absPath: string): string {
    const open = this.ws?.overlays.get(absPath);
    if (open !== undefined) return open;
    const c = this.ws?.entries.get(absPath)?.contract;
    if (c) return c.source;
    try {
      return readFileSync(absPath, "utf8");
    } catch {
      return "";
    }
  }

  /** The open document at `uri` with its workspace entry, when both exist. */
  entryAt(uri: string): { ws: Workspace; entry: Entry; doc: TextDocument } | null {
    const doc = this.documents.get(uri);
    const entry = this.ws?.entries.get(fileURLToPath(uri));
    return this.ws && doc && entry ? { ws: this.ws, entry, doc } : null;
  }

  location(o: Occurrence): Location {
    return { uri: pathToFileURL(o.entry.absPath).href, range: occurrenceRange(o, this.textOf(o.entry.absPath)) };
  }
}
