import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CodeActionRequest,
  type CompletionItem,
  type CompletionList,
  CompletionRequest,
  DefinitionRequest,
  DidChangeTextDocumentNotification,
  DidOpenTextDocumentNotification,
  HoverRequest,
  InitializedNotification,
  InitializeRequest,
  type Location,
  ReferencesRequest,
  RenameRequest,
  type TextDocumentEdit,
  type WorkspaceEdit,
} from "vscode-languageserver-protocol/node";
import { CHARTER, LspClient } from "./client.js";

const uri = (p: string): string => pathToFileURL(p).href;

async function start(root: string): Promise<LspClient> {
  const client = new LspClient(root);
  await client.connection.sendRequest(InitializeRequest.type, {
    processId: process.pid,
    rootUri: uri(root),
    capabilities: { workspace: { workspaceEdit: { documentChanges: true, resourceOperations: ["rename"] } } },
    workspaceFolders: [{ uri: uri(root), name: "domain" }],
  });
  await client.connection.sendNotification(InitializedNotification.type, {});
  return client;
}

async function open(client: LspClient, path: string, text = readFileSync(path, "utf8")): Promise<void> {
  await client.connection.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri: uri(path), languageId: "yaml", version: 1, text },
  });
}

function items(r: CompletionItem[] | CompletionList | null): string[] {
  return (Array.isArray(r) ? r : (r?.items ?? [])).map((i) => i.label);
}

/** The position of the `nth` occurrence of `needle` in `text` (offset `into` characters into it). */
function at(text: string, needle: string, into = 0, nth = 0): { line: number; character: number } {
  let i = -1;
  for (let k = 0; k <= nth; k++) i = text.indexOf(needle, i + 1);
  if (i < 0) throw new Error(`${needle} not in text`);
  const before = text.slice(0, i + into);
  return { line: before.split("\n").length - 1, character: i + into - before.lastIndexOf("\n") - 1 };
}

describe("charter lsp over stdio", () => {
  let root: string;
  let client: LspClient;
  const entity = (name: string): string => join(root, "entities", `${name}.contract.yaml`);

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "charter-lsp-"));
    cpSync(resolve("examples/helpdesk"), root, { recursive: true });
    client = await start(root);
  });
  afterAll(async () => {
    await client.close();
    rmSync(root, { recursive: true, force: true });
  });

  it("publishes no diagnostics for a valid file, then the compiler's finding as a reference breaks", async () => {
    const ticket = entity("ticket");
    const text = readFileSync(ticket, "utf8");
    await open(client, ticket, text);
    await client.waitFor(uri(ticket), (d) => d.length === 0).catch(() => undefined);
    const broken = text.replace("entity: entity/helpdesk/customer", "entity: entity/helpdesk/customr");
    await client.connection.sendNotification(DidChangeTextDocumentNotification.type, {
      textDocument: { uri: uri(ticket), version: 2 },
      contentChanges: [{ text: broken }],
    });
    const diags = await client.waitFor(uri(ticket), (d) => d.some((x) => x.code === "ref.unresolved"));
    const d = diags.find((x) => x.code === "ref.unresolved");
    expect(d?.message).toContain("entity/helpdesk/customr");
    expect(d?.range.start).toEqual(at(broken, "entity/helpdesk/customr"));
    // Put back: the finding goes.
    await client.connection.sendNotification(DidChangeTextDocumentNotification.type, {
      textDocument: { uri: uri(ticket), version: 3 },
      contentChanges: [{ text }],
    });
    await client.waitFor(uri(ticket), (d) => !d.some((x) => x.code === "ref.unresolved"));
  });

  it("completes FQNs where a reference goes, fields where a field goes, keys and enum values from the schemas", async () => {
    const ticket = entity("ticket");
    const text = readFileSync(ticket, "utf8");
    const fqns = await client.connection.sendRequest(CompletionRequest.type, {
      textDocument: { uri: uri(ticket) },
      position: at(text, "entity: entity/helpdesk/customer", "entity: entity/helpdesk/".length),
    });
    expect(items(fqns)).toContain("entity/helpdesk/customer");
    expect(items(fqns)).toContain("entity/helpdesk/agent");
    expect(items(fqns)).not.toContain("route/helpdesk/customer_api");
    const fields = await client.connection.sendRequest(CompletionRequest.type, {
      textDocument: { uri: uri(ticket) },
      position: at(text, "display: name", "display: ".length),
    });
    expect(items(fields)).toEqual(expect.arrayContaining(["name", "email", "company", "plan", "number"]));
    const values = await client.connection.sendRequest(CompletionRequest.type, {
      textDocument: { uri: uri(ticket) },
      position: at(text, "type: uuid", "type: ".length),
    });
    expect(items(values)).toEqual(expect.arrayContaining(["string", "uuid", "integer", "datetime"]));
    const keys = await client.connection.sendRequest(CompletionRequest.type, {
      textDocument: { uri: uri(ticket) },
      position: at(text, "  fields:", 2),
    });
    expect(items(keys)).toEqual(expect.arrayContaining(["table"]));
    // Keys already present are not offered again.
    expect(items(keys)).not.toContain("mixins");
    // Inside a guard's condition: the fields of the workflow's entity.
    const workflow = join(root, "workflows/ticket_lifecycle.contract.yaml");
    const wText = readFileSync(workflow, "utf8");
    await open(client, workflow, wText);
    const inCondition = await client.connection.sendRequest(CompletionRequest.type, {
      textDocument: { uri: uri(workflow) },
      position: at(wText, "len(resolution)", "len(reso".length),
    });
    expect(items(inCondition)).toEqual(["resolution"]);
  });

  it("hovers, goes to definitions and finds references of FQNs and fields", async () => {
    const ticket = entity("ticket");
    const text = readFileSync(ticket, "utf8");
    const hover = await client.connection.sendRequest(HoverRequest.type, {
      textDocument: { uri: uri(ticket) },
      position: at(text, "entity/helpdesk/customer", 3),
    });
    expect(JSON.stringify(hover?.contents)).toContain("A person or company that raises tickets");
    const fieldHover = await client.connection.sendRequest(HoverRequest.type, {
      textDocument: { uri: uri(ticket) },
      position: at(text, "display: name", "display: ".length + 1),
    });
    expect(JSON.stringify(fieldHover?.contents)).toContain("string");
    expect(JSON.stringify(fieldHover?.contents)).toContain("maxLength");
    const def = (await client.connection.sendRequest(DefinitionRequest.type, {
      textDocument: { uri: uri(ticket) },
      position: at(text, "entity/helpdesk/customer", 3),
    })) as Location;
    expect(def.uri).toBe(uri(entity("customer")));
    expect(def.range.start).toEqual(at(readFileSync(entity("customer"), "utf8"), "name: customer", "name: ".length));
    const fieldDef = (await client.connection.sendRequest(DefinitionRequest.type, {
      textDocument: { uri: uri(ticket) },
      position: at(text, "display: name", "display: ".length + 1),
    })) as Location;
    expect(fieldDef.uri).toBe(uri(entity("customer")));
    expect(fieldDef.range.start).toEqual(at(readFileSync(entity("customer"), "utf8"), "    name:", 4));
    const refs = (await client.connection.sendRequest(ReferencesRequest.type, {
      textDocument: { uri: uri(ticket) },
      position: at(text, "entity/helpdesk/customer", 3),
      context: { includeDeclaration: false },
    })) as Location[];
    const files = refs.map((r) => r.uri.slice(uri(root).length)).sort();
    expect(files).toEqual(["/entities/ticket.contract.yaml", "/pages/customers.contract.yaml", "/routes/customer_api.contract.yaml"]);
    await open(client, entity("customer"));
    const fieldRefs = (await client.connection.sendRequest(ReferencesRequest.type, {
      textDocument: { uri: uri(entity("customer")) },
      position: at(readFileSync(entity("customer"), "utf8"), "    email:", 5),
      context: { includeDeclaration: true },
    })) as Location[];
    expect(fieldRefs.map((r) => r.uri.slice(uri(root).length)).sort()).toEqual(
      expect.arrayContaining(["/entities/customer.contract.yaml", "/pages/customers.contract.yaml"]),
    );
  });

  it("renames a contract across every contract that names it, file included, and refuses a collision", async () => {
    const customer = entity("customer");
    const text = readFileSync(customer, "utf8");
    await open(client, customer, text);
    const edit = (await client.connection.sendRequest(RenameRequest.type, {
      textDocument: { uri: uri(customer) },
      position: at(text, "name: customer", "name: ".length),
      newName: "client",
    })) as WorkspaceEdit;
    const changes = edit.documentChanges ?? [];
    const texts = changes.filter((c): c is TextDocumentEdit => "textDocument" in c);
    const byFile = Object.fromEntries(
      texts.map((c) => [c.textDocument.uri.slice(uri(root).length), c.edits.map((e) => ("newText" in e ? e.newText : e.snippet.value))]),
    );
    expect(byFile["/entities/customer.contract.yaml"]).toEqual(["client"]);
    expect(byFile["/entities/ticket.contract.yaml"]).toEqual(["entity/helpdesk/client"]);
    expect(byFile["/routes/customer_api.contract.yaml"]).toEqual(["entity/helpdesk/client"]);
    expect(changes).toContainEqual({ kind: "rename", oldUri: uri(customer), newUri: uri(entity("client")) });
    await expect(
      client.connection.sendRequest(RenameRequest.type, {
        textDocument: { uri: uri(customer) },
        position: at(text, "name: customer", "name: ".length),
        newName: "agent",
      }),
    ).rejects.toThrow(/entity\/helpdesk\/agent already exists/);
    await expect(
      client.connection.sendRequest(RenameRequest.type, {
        textDocument: { uri: uri(customer) },
        position: at(text, "    email:", 5),
        newName: "company",
      }),
    ).rejects.toThrow(/already has a field company/);
    const fieldEdit = (await client.connection.sendRequest(RenameRequest.type, {
      textDocument: { uri: uri(customer) },
      position: at(text, "    email:", 5),
      newName: "mail",
    })) as WorkspaceEdit;
    const fieldFiles = Object.keys(fieldEdit.changes ?? {})
      .map((u) => u.slice(uri(root).length))
      .sort();
    expect(fieldFiles).toEqual(["/entities/customer.contract.yaml", "/pages/customers.contract.yaml"]);
    // A field named inside a route's validation rule is renamed there too, and nowhere else in it.
    const ruleEdit = (await client.connection.sendRequest(RenameRequest.type, {
      textDocument: { uri: uri(customer) },
      position: at(text, "    company:", 5),
      newName: "organisation",
    })) as WorkspaceEdit;
    const route = join(root, "routes/customer_api.contract.yaml");
    const routeText = readFileSync(route, "utf8");
    const routeEdits = ruleEdit.changes?.[uri(route)] ?? [];
    expect(routeEdits).toHaveLength(1);
    expect(routeEdits[0]?.range.start).toEqual(at(routeText, "company)", 0));
    expect(Object.keys(ruleEdit.changes ?? {})).toHaveLength(3);
  });

  it("offers the Healer's tier-1 normaliser as a quick fix", async () => {
    const customer = entity("customer");
    const text = readFileSync(customer, "utf8").replace("name: customer\n", "name: BigCustomer\n");
    await client.connection.sendNotification(DidChangeTextDocumentNotification.type, {
      textDocument: { uri: uri(customer), version: 5 },
      contentChanges: [{ text }],
    });
    const diags = await client.waitFor(uri(customer), (d) => d.some((x) => x.code === "schema.pattern"));
    const actions = await client.connection.sendRequest(CodeActionRequest.type, {
      textDocument: { uri: uri(customer) },
      range: diags[0]?.range as never,
      context: { diagnostics: diags },
    });
    const action = actions?.[0] as { title: string; edit: WorkspaceEdit };
    expect(action.title).toContain("big_customer");
    const edits = action.edit.changes?.[uri(customer)] ?? [];
    expect(edits[0]?.newText).toContain("name: big_customer");
  });
});

describe("diagnostics equal `charter forge validate --format json`", () => {
  const brokenRoot = resolve("examples/broken");
  const domains = readdirSync(brokenRoot, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name);
  it.each(domains)("%s", async (name) => {
    const root = join(brokenRoot, name);
    const report = JSON.parse(
      (() => {
        try {
          return execFileSync(process.execPath, [CHARTER, "forge", "validate", ".", "--format", "json"], { cwd: root, encoding: "utf8" });
        } catch (e) {
          return (e as { stdout: string }).stdout;
        }
      })(),
    ) as { results: { file: string; findings: { line: number; column: number; message: string; code: string; severity: string }[] }[] };
    const client = await start(root);
    try {
      for (const r of report.results) {
        const path = join(root, r.file);
        await open(client, path);
        const want = r.findings.map((f) => ({
          start: { line: Math.max(f.line - 1, 0), character: Math.max(f.column - 1, 0) },
          message: f.message,
          code: f.code,
          severity: f.severity === "error" ? 1 : 2,
        }));
        const got = await client.waitFor(uri(path), (d) => d.length === want.length);
        expect(got.map((d) => ({ start: d.range.start, message: d.message, code: d.code, severity: d.severity }))).toEqual(want);
      }
    } finally {
      await client.close();
    }
  });
});
