import { readFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import {
  type CodeAction,
  CodeActionKind,
  type CompletionItem,
  CompletionItemKind,
  type Connection,
  type Diagnostic,
  DiagnosticSeverity,
  DidChangeWatchedFilesNotification,
  type Location,
  type Range,
  ResponseError,
  TextDocumentSyncKind,
  TextDocuments,
  type TextEdit,
  type WorkspaceEdit,
} from "vscode-languageserver/node.js";
import { TextDocument } from "vscode-languageserver-textdocument";
import { asRecord, asString } from "../compiler/context.js";
import { CONTRACT_SUFFIX, type Finding, FQN_PATTERN, formatFqn, KINDS, type Kind, NAME_PATTERN, parseFqn } from "../contracts/index.js";
import { classifyError } from "../healer/classify.js";
import { normaliseContract } from "../healer/normalise.js";
import { completionContext } from "./completion-context.js";
import type { FullCheckReply, FullCheckRequest } from "./full-check.js";
import { schemaKeys, schemaValues } from "./schema-complete.js";
import {
  entityFields,
  expressionSiteEntity,
  fieldDefinition,
  fieldOccurrences,
  fieldSiteEntity,
  fqnDefinition,
  fqnOccurrences,
  type Occurrence,
  referenceSite,
  symbolAt,
} from "./symbols.js";
import { DOMAIN_WIDE_CODES, type Entry, Workspace } from "./workspace.js";

/** Completion lists are cut here (the client asks again as the user types): a domain has 20,000 FQNs. */
const MAX_ITEMS = 200;
/** Quiet time after an edit before the whole domain is checked again in the worker. */
const FULL_CHECK_DELAY_MS = 400;

/**
 * `charter lsp`: the contracts in an editor. Diagnostics are checkDomain's findings, word for word;
 * an edit is checked at once on the contracts it can affect (Workspace.checkScope), and the whole
 * domain again in a worker thread once typing pauses, which settles the domain-wide findings.
 */
export function startServer(connection: Connection): void {
  const documents = new TextDocuments(TextDocument);
  let ws: Workspace | null = null;
  let loaded = false;
  let watchFiles = false;
  /** The last full check's findings by file; the domain-wide ones are kept beside each scoped check. */
  let fullFindings = new Map<string, Finding[]>();
  /** Findings shown per file, by what was last published. */
  const shown = new Map<string, Finding[]>();
  const published = new Map<string, string>();
  let worker: Worker | null = null;
  let generation = 0;
  let running: number | null = null;
  let timer: NodeJS.Timeout | null = null;

  const textOf = (absPath: string): string => {
    const open = ws?.overlays.get(absPath);
    if (open !== undefined) return open;
    const c = ws?.entries.get(absPath)?.contract;
    if (c) return c.source;
    try {
      return readFileSync(absPath, "utf8");
    } catch {
      return "";
    }
  };

  const publish = (absPath: string, findings: Finding[]): void => {
    shown.set(absPath, findings);
    const text = textOf(absPath);
    const diagnostics = findings.map((f) => toDiagnostic(f, text));
    const key = JSON.stringify(diagnostics);
    if (published.get(absPath) === key) return;
    published.set(absPath, key);
    void connection.sendDiagnostics({ uri: pathToFileURL(absPath).href, diagnostics });
  };

  const runFullCheck = (): void => {
    if (!ws) return;
    if (running !== null) {
      scheduleFullCheck();
      return;
    }
    if (!worker) {
      worker = new Worker(fileURLToPath(new URL("./full-check.js", import.meta.url)));
      worker.unref();
      worker.on("message", (reply: FullCheckReply) => onFullCheck(reply));
    }
    running = generation;
    const req: FullCheckRequest = { id: generation, root: ws.root, sources: [...ws.overlays] };
    worker.postMessage(req);
  };

  const scheduleFullCheck = (): void => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(runFullCheck, FULL_CHECK_DELAY_MS);
    timer.unref();
  };

  const onFullCheck = (reply: FullCheckReply): void => {
    running = null;
    if (reply.error) connection.console.error(`charter: full check failed: ${reply.error}`);
    // An edit came in meanwhile: these findings describe texts that are gone.
    if (reply.id !== generation) {
      scheduleFullCheck();
      return;
    }
    const next = new Map<string, Finding[]>();
    for (const f of reply.findings) {
      const p = resolve(f.file);
      const list = next.get(p);
      if (list) list.push(f);
      else next.set(p, [f]);
    }
    for (const p of new Set([...shown.keys(), ...next.keys()])) publish(p, next.get(p) ?? []);
    fullFindings = next;
  };

  /** Checks what an edit of `changed` affects and shows it at once. */
  const recheck = (changed: string[], formerFqns: (string | null)[]): void => {
    if (!ws) return;
    generation++;
    const scoped = ws.checkScope(ws.affectedBy(changed, formerFqns));
    for (const [p, findings] of scoped) {
      const wide = (fullFindings.get(p) ?? []).filter((f) => DOMAIN_WIDE_CODES.has(f.code));
      publish(p, [...findings, ...wide]);
    }
    scheduleFullCheck();
  };

  connection.onInitialize((params) => {
    const folder = params.workspaceFolders?.[0]?.uri ?? params.rootUri;
    const root = folder ? fileURLToPath(folder) : process.cwd();
    ws = new Workspace(root);
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
    if (!ws) return;
    for (const d of documents.all()) ws.overlays.set(fileURLToPath(d.uri), d.getText());
    ws.load();
    loaded = true;
    // Files changed outside the editor (git checkout, charter's Healer) are re-read as they change.
    if (watchFiles) {
      void connection.client.register(DidChangeWatchedFilesNotification.type, { watchers: [{ globPattern: `**/*${CONTRACT_SUFFIX}` }] });
    }
    const open = documents.all().map((d) => fileURLToPath(d.uri));
    if (open.length > 0) recheck(open, []);
    runFullCheck();
  });

  const onText = (doc: TextDocument): void => {
    if (!ws || !doc.uri.startsWith("file:")) return;
    const p = fileURLToPath(doc.uri);
    if (!p.endsWith(CONTRACT_SUFFIX)) return;
    ws.overlays.set(p, doc.getText());
    // Before the domain is loaded (initialized not yet handled), the load will read the overlay.
    if (!loaded) return;
    const former = ws.update(p);
    recheck([p], [former]);
  };
  documents.onDidOpen((e) => onText(e.document));
  documents.onDidChangeContent((e) => onText(e.document));
  documents.onDidClose((e) => {
    if (!ws) return;
    const p = fileURLToPath(e.document.uri);
    ws.overlays.delete(p);
    const former = ws.update(p);
    recheck([p], [former]);
  });

  connection.onDidChangeWatchedFiles((params) => {
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
    recheck(changed, former);
  });

  const entryAt = (uri: string): { entry: Entry; doc: TextDocument } | null => {
    const doc = documents.get(uri);
    const entry = ws?.entries.get(fileURLToPath(uri));
    return doc && entry ? { entry, doc } : null;
  };

  const location = (o: Occurrence): Location => ({
    uri: pathToFileURL(o.entry.absPath).href,
    range: occurrenceRange(o, textOf(o.entry.absPath)),
  });

  connection.onCompletion((params) => {
    const doc = documents.get(params.textDocument.uri);
    if (!ws || !doc) return [];
    const text = doc.getText();
    const ctx = completionContext(text, doc.offsetAt(params.position));
    const entry = ws.entries.get(fileURLToPath(params.textDocument.uri));
    const kind = (entry?.kind ?? (/^kind:\s*(\w+)/m.exec(text)?.[1] as Kind | undefined) ?? null) as Kind | null;
    const items: CompletionItem[] = [];
    const prefix = ctx.prefix;
    if (!ctx.onKey) {
      const expect = referenceSite(kind, ctx.path);
      if (expect) {
        for (const e of ws.allEntries()) {
          if (!e.fqn?.startsWith(prefix) || (expect.length > 0 && !expect.includes(e.kind as Kind))) continue;
          items.push({ label: e.fqn, kind: CompletionItemKind.Reference, detail: e.kind ?? "" });
          if (items.length >= MAX_ITEMS) return { isIncomplete: true, items };
        }
        if (expect.includes("Mixin")) {
          for (const m of ["identifiable", "timestamped", "auditable", "taggable", "commentable", "soft_deletable"]) {
            const fqn = `mixin/stdlib/${m}`;
            if (fqn.startsWith(prefix)) items.push({ label: fqn, kind: CompletionItemKind.Reference, detail: "standard mixin" });
          }
        }
        return items;
      }
      const inExpression = entry ? expressionSiteEntity(ws, entry, ctx.path) : null;
      if (inExpression) {
        const word = /[A-Za-z_]\w*$/.exec(prefix)?.[0] ?? "";
        for (const [name, f] of entityFields(ws, inExpression)) {
          if (name.startsWith(word))
            items.push({ label: name, kind: CompletionItemKind.Field, detail: `${asString(f.def.type)} (${f.from})` });
        }
        return items;
      }
      const entity = entry ? fieldSiteEntity(ws, entry, ctx.path) : null;
      if (entity) {
        for (const [name, f] of entityFields(ws, entity)) {
          if (name.startsWith(prefix))
            items.push({ label: name, kind: CompletionItemKind.Field, detail: `${asString(f.def.type)} (${f.from})` });
        }
        return items;
      }
      for (const v of schemaValues(kind, ctx.path)) items.push({ label: v, kind: CompletionItemKind.EnumMember });
      return items;
    }
    const existing = new Set(ctx.siblings);
    for (const k of schemaKeys(kind, ctx.path)) {
      if (existing.has(k.name)) continue;
      items.push({
        label: k.name,
        kind: CompletionItemKind.Property,
        insertText: `${k.name}: `,
        ...(k.description ? { documentation: k.description } : {}),
        ...(k.required ? { detail: "required" } : {}),
      });
    }
    if (ctx.path.length === 0 && !existing.has("kind")) {
      // The envelope's kind decides the spec's schema; offer it even before the schema can.
      for (const k of KINDS) items.push({ label: k, kind: CompletionItemKind.EnumMember, insertText: `kind: ${k}` });
    }
    return items;
  });

  connection.onHover((params) => {
    const at = entryAt(params.textDocument.uri);
    if (!ws || !at) return null;
    const sym = symbolAt(ws, at.entry, at.doc.offsetAt(params.position));
    if (!sym) return null;
    const range = occurrenceRange(sym.occurrence, at.doc.getText());
    if (sym.type === "fqn") {
      const target = ws.entryOfFqn(sym.fqn);
      if (!target?.contract) return { contents: { kind: "markdown", value: `\`${sym.fqn}\`: no such contract` }, range };
      const meta = asRecord(target.contract.data.metadata);
      const lines = [`**${target.kind}** \`${sym.fqn}\``];
      if (asString(meta.description)) lines.push("", asString(meta.description));
      lines.push("", `defined in ${target.contract.file}`);
      return { contents: { kind: "markdown", value: lines.join("\n") }, range };
    }
    const f = entityFields(ws, sym.entity).get(sym.field);
    if (!f) return { contents: { kind: "markdown", value: `\`${sym.field}\`: no such field of \`${sym.entity}\`` }, range };
    const def = f.def;
    const lines = [
      `**field** \`${sym.field}\` of \`${sym.entity}\`: \`${asString(def.type, "?")}\`${def.required === true ? ", required" : ""}`,
    ];
    for (const key of ["enum", "default", "constraints", "references", "computed", "unique"]) {
      if (def[key] !== undefined) lines.push(`- ${key}: \`${JSON.stringify(def[key])}\``);
    }
    if (asString(def.description)) lines.push("", asString(def.description));
    if (f.from !== sym.entity) lines.push("", `from ${f.from}`);
    return { contents: { kind: "markdown", value: lines.join("\n") }, range };
  });

  connection.onDefinition((params) => {
    const at = entryAt(params.textDocument.uri);
    if (!ws || !at) return null;
    const sym = symbolAt(ws, at.entry, at.doc.offsetAt(params.position));
    if (!sym) return null;
    const def = sym.type === "fqn" ? fqnDefinition(ws, sym.fqn) : fieldDefinition(ws, sym.entity, sym.field);
    return def ? location(def) : null;
  });

  connection.onReferences((params) => {
    const at = entryAt(params.textDocument.uri);
    if (!ws || !at) return [];
    const sym = symbolAt(ws, at.entry, at.doc.offsetAt(params.position));
    if (!sym) return [];
    const uses = sym.type === "fqn" ? fqnOccurrences(ws, sym.fqn) : fieldOccurrences(ws, sym.entity, sym.field);
    const def = sym.type === "fqn" ? fqnDefinition(ws, sym.fqn) : fieldDefinition(ws, sym.entity, sym.field);
    return [...(params.context.includeDeclaration && def ? [def] : []), ...uses].map(location);
  });

  connection.onRenameRequest((params) => {
    const at = entryAt(params.textDocument.uri);
    if (!ws || !at) return null;
    const sym = symbolAt(ws, at.entry, at.doc.offsetAt(params.position));
    if (!sym) throw new ResponseError(0, "nothing to rename here: put the cursor on a contract's FQN or name, or on a field");
    return sym.type === "fqn"
      ? renameContract(ws, sym.fqn, params.newName, textOf)
      : renameField(ws, sym.entity, sym.field, params.newName, textOf);
  });

  connection.onCodeAction((params) => {
    if (!ws) return [];
    const p = fileURLToPath(params.textDocument.uri);
    const findings = shown.get(p) ?? [];
    const fixable = params.context.diagnostics.filter((d) => classifyError({ source: "validation", message: d.message }).tier === 1);
    if (fixable.length === 0) return [];
    const domain = ws
      .allEntries()
      .map((e) => e.contract)
      .filter((c) => c !== null);
    const result = normaliseContract(p, domain, findings, ws.root);
    if (result.edits.length === 0) return [];
    const changes: Record<string, TextEdit[]> = {};
    for (const edit of result.edits) {
      const abs = resolve(ws.root, edit.file);
      changes[pathToFileURL(abs).href] = [{ range: wholeRange(textOf(abs)), newText: edit.after }];
    }
    const action: CodeAction = {
      title: `Normalise (Healer tier 1): ${result.summary.join("; ")}`,
      kind: CodeActionKind.QuickFix,
      diagnostics: fixable,
      isPreferred: true,
      edit: { changes },
    };
    return [action];
  });

  connection.onShutdown(async () => {
    if (timer) clearTimeout(timer);
    await worker?.terminate();
  });

  documents.listen(connection);
  connection.listen();
}

/** A finding's place as a range: from its line and column to the end of the token there. */
export function toDiagnostic(f: Finding, text: string): Diagnostic {
  const line = Math.max(f.line - 1, 0);
  const character = Math.max(f.column - 1, 0);
  const lineText = text.split("\n", line + 1)[line] ?? "";
  let end = character;
  if (f.line > 0) {
    const rest = lineText
      .slice(character)
      .replace(/\s+#.*$/, "")
      .trimEnd();
    end = character + rest.length;
  }
  const range: Range = { start: { line, character }, end: { line, character: end } };
  return {
    range,
    severity: f.severity === "error" ? DiagnosticSeverity.Error : DiagnosticSeverity.Warning,
    code: f.code,
    source: "charter",
    message: f.message,
  };
}

function positionOf(text: string, offset: number): { line: number; character: number } {
  let line = 0;
  let last = -1;
  for (let i = text.indexOf("\n"); i !== -1 && i < offset; i = text.indexOf("\n", i + 1)) {
    line++;
    last = i;
  }
  return { line, character: offset - last - 1 };
}

/** The range of a name, quotes excluded. */
function occurrenceRange(o: Occurrence, text: string): Range {
  const raw = text.slice(o.start, o.end);
  const at = raw.indexOf(o.value);
  const start = at >= 0 ? o.start + at : o.start;
  return { start: positionOf(text, start), end: positionOf(text, at >= 0 ? start + o.value.length : o.end) };
}

function wholeRange(text: string): Range {
  return { start: { line: 0, character: 0 }, end: positionOf(text, text.length) };
}

/** A workspace edit renaming a contract (its name, every reference to it, and its file). */
function renameContract(ws: Workspace, fqn: string, newName: string, textOf: (p: string) => string): WorkspaceEdit {
  const parts = parseFqn(fqn);
  if (!parts) throw new ResponseError(0, `${fqn} is not an FQN`);
  const wanted = newName.includes("/") ? newName : formatFqn(parts.kind, parts.domain, newName);
  const next = parseFqn(wanted);
  if (!next || !new RegExp(FQN_PATTERN).test(wanted))
    throw new ResponseError(0, `${JSON.stringify(newName)} is not a valid name: names match ${NAME_PATTERN}`);
  if (next.kind !== parts.kind) throw new ResponseError(0, `a rename keeps the kind: ${wanted} is not a ${parts.kind}`);
  if (wanted === fqn) return { changes: {} };
  const clash = ws.entryOfFqn(wanted);
  if (clash)
    throw new ResponseError(0, `cannot rename ${fqn} to ${wanted}: ${wanted} already exists in ${clash.contract?.file ?? clash.absPath}`);
  const def = ws.entryOfFqn(fqn);
  if (!def?.contract) throw new ResponseError(0, `no contract ${fqn} in the workspace`);
  const edits = new Map<string, TextEdit[]>();
  const add = (o: Occurrence, newText: string): void => {
    const list = edits.get(o.entry.absPath) ?? [];
    list.push({ range: occurrenceRange(o, textOf(o.entry.absPath)), newText });
    edits.set(o.entry.absPath, list);
  };
  const nameOcc = fqnDefinition(ws, fqn);
  if (nameOcc) add(nameOcc, next.name);
  if (next.domain !== parts.domain) {
    const node = ws.nodeAt(def, ["metadata", "domain"]);
    const r = node?.range;
    if (r) add({ entry: def, path: ["metadata", "domain"], start: r[0], end: r[1], value: parts.domain }, next.domain);
  }
  for (const o of fqnOccurrences(ws, fqn)) add(o, wanted);
  const documentChanges: WorkspaceEdit["documentChanges"] = [...edits].map(([p, list]) => ({
    textDocument: { uri: pathToFileURL(p).href, version: null },
    edits: list,
  }));
  // The file follows the contract's name when it was named after it.
  if (basename(def.absPath) === `${parts.name}${CONTRACT_SUFFIX}` && next.name !== parts.name) {
    const target = join(dirname(def.absPath), `${next.name}${CONTRACT_SUFFIX}`);
    if (ws.entries.has(target)) throw new ResponseError(0, `cannot rename ${fqn}: file ${target} already exists`);
    documentChanges.push({ kind: "rename", oldUri: pathToFileURL(def.absPath).href, newUri: pathToFileURL(target).href });
  }
  return { documentChanges };
}

/** A workspace edit renaming a field of an entity (or of the mixin that brings it) and its uses. */
function renameField(ws: Workspace, entity: string, field: string, newName: string, textOf: (p: string) => string): WorkspaceEdit {
  if (!new RegExp(NAME_PATTERN).test(newName))
    throw new ResponseError(0, `${JSON.stringify(newName)} is not a valid field name: names match ${NAME_PATTERN}`);
  if (newName === field) return { changes: {} };
  const fields = entityFields(ws, entity);
  if (fields.has(newName)) throw new ResponseError(0, `cannot rename ${field} to ${newName}: ${entity} already has a field ${newName}`);
  const def = fieldDefinition(ws, entity, field);
  if (!def) throw new ResponseError(0, `${entity} defines no field ${field} that can be renamed`);
  const changes: Record<string, TextEdit[]> = {};
  for (const o of [def, ...fieldOccurrences(ws, entity, field)]) {
    const uri = pathToFileURL(o.entry.absPath).href;
    const list = changes[uri] ?? [];
    if (!list.some((e) => JSON.stringify(e.range) === JSON.stringify(occurrenceRange(o, textOf(o.entry.absPath))))) {
      list.push({ range: occurrenceRange(o, textOf(o.entry.absPath)), newText: newName });
    }
    changes[uri] = list;
  }
  return { changes };
}
