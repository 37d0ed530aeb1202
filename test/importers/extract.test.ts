import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { REPO_ROOT, runCharter, TSX_LOADER } from "../support/cli.js";
import { validates } from "./support.js";

const CODE = resolve("test/fixtures/importers/codebases");
const work = mkdtempSync(join(tmpdir(), "charter-extract-"));
let n = 0;
const outDir = (): string => join(work, `out-${n++}`);

function spec(dir: string, rel: string): Record<string, unknown> {
  return (parse(readFileSync(join(dir, rel), "utf8")) as { spec: Record<string, unknown> }).spec;
}
const fields = (dir: string, entity: string): Record<string, Record<string, unknown>> =>
  spec(dir, `entities/${entity}.contract.yaml`).fields as Record<string, Record<string, unknown>>;

describe("charter extract --yes", () => {
  it("reads a FastAPI + SQLAlchemy app: columns, Mapped[] annotations, enums, foreign keys, routes", () => {
    const dir = outDir();
    const r = runCharter(["extract", join(CODE, "fastapi_app"), "--domain", "helpdesk", "--output", dir, "--yes"]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain("[1/4] discover");
    expect(r.stderr).toContain("frameworks: FastAPI, Pydantic, SQLAlchemy, SQLModel");
    validates(dir);
    expect(fields(dir, "customer")).toEqual({
      name: { type: "string", required: true, constraints: { maxLength: 120 } },
      email: { type: "string", required: true, constraints: { maxLength: 254 } },
      vip: { type: "boolean", default: false },
    });
    expect(spec(dir, "entities/customer.contract.yaml").mixins).toEqual(["mixin/stdlib/timestamped"]);
    const ticket = fields(dir, "ticket");
    expect(ticket.title).toEqual({ type: "string", required: true, constraints: { maxLength: 200 } });
    expect(ticket.body).toEqual({ type: "text" });
    expect(ticket.customer_id).toEqual({
      type: "uuid",
      required: true,
      references: { entity: "entity/helpdesk/customer", display: "name" },
    });
    expect(ticket.opened_at).toEqual({ type: "datetime", computed: "now" });
    expect(spec(dir, "workflows/ticket_lifecycle.contract.yaml")).toMatchObject({
      initial: "open",
      states: { closed: { terminal: true } },
    });
    const routes = spec(dir, "routes/ticket_api.contract.yaml") as { endpoints: { method: string; path: string }[] };
    expect(routes.endpoints.map((e) => `${e.method} ${e.path}`)).toEqual(["GET /", "PATCH /{id}"]);
    expect(r.stdout).toMatch(/POST \/tickets\/\{ticket_id\}\/escalate: not one of the standard operations/);
    // SQLModel: a `table=True` class is an entity, a plain SQLModel schema (TagRead) is not.
    expect(fields(dir, "tag")).toEqual({
      name: { type: "string", required: true, constraints: { maxLength: 40 } },
      colour: { type: "string" },
      weight: { type: "integer", default: 1, constraints: { min: 0, max: 10 } },
    });
    expect(existsSync(join(dir, "entities/tag_read.contract.yaml"))).toBe(false);
    // Pydantic schemas beside ORM models: the ORM model is the entity, each schema is named as skipped.
    expect(readdirSync(join(dir, "entities")).sort()).toEqual(["customer.contract.yaml", "tag.contract.yaml", "ticket.contract.yaml"]);
    expect(r.stdout).toContain("skipped: CustomerCreate: a Pydantic schema of Customer; the ORM model is the entity");
    expect(r.stdout).toContain("skipped: CustomerPublic: a Pydantic schema of Customer; the ORM model is the entity");
    expect(r.stdout).toContain("skipped: TicketRead: a Pydantic schema of Ticket; the ORM model is the entity");
    expect(r.stdout).toContain("skipped: Token: a Pydantic schema beside ORM models (a request or response shape); not an entity");
  });

  it("reads a Pydantic-only app: annotations, Field constraints, Literal and Enum, Optional, one entity per schema family", () => {
    const dir = outDir();
    const r = runCharter(["extract", join(CODE, "pydantic_app"), "--domain", "events", "--output", dir, "--yes"]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain("frameworks: FastAPI, Pydantic");
    validates(dir);
    expect(readdirSync(join(dir, "entities")).sort()).toEqual(["event.contract.yaml", "organizer.contract.yaml"]);
    // OrganizerBase (fields of the family without the password or the id) is the entity.
    expect(fields(dir, "organizer")).toEqual({
      name: { type: "string", required: true, constraints: { minLength: 2, maxLength: 80 } },
      email: { type: "email", required: true },
      phone: { type: "string", constraints: { pattern: "^\\+?[0-9 ]{6,20}$" } },
    });
    const organizer = spec(dir, "entities/organizer.contract.yaml");
    expect(organizer.mixins).toBeUndefined();
    expect(parse(readFileSync(join(dir, "entities/organizer.contract.yaml"), "utf8")).metadata.description).toBe(
      "Someone who runs events.",
    );
    expect(fields(dir, "event")).toEqual({
      title: { type: "string", required: true, constraints: { maxLength: 120 } },
      starts_on: { type: "date", required: true },
      capacity: { type: "integer", default: 100, constraints: { min: 1, max: 5000 } },
      price: { type: "number", constraints: { min: 0 } },
      visibility: { type: "string", default: "public", enum: ["public", "members", "private"] },
      kind: { type: "string", default: "talk", enum: ["talk", "workshop", "meetup"] },
      organizer_id: { type: "uuid", required: true, references: { entity: "entity/events/organizer", display: "name" } },
      seats_left: { type: "integer", required: true, constraints: { min: 0 } },
    });
    // tags: list[str] is the taggable mixin; created_at (default_factory=datetime.now) the implicit one.
    expect(spec(dir, "entities/event.contract.yaml").mixins).toEqual(["mixin/stdlib/taggable"]);
    const routes = spec(dir, "routes/event_api.contract.yaml") as { endpoints: { method: string; path: string }[] };
    expect(routes.endpoints.map((e) => `${e.method} ${e.path}`)).toEqual(["GET /", "PATCH /{id}"]);
    expect(r.stdout).toContain("skipped: OrganizerCreate: another Pydantic schema of Organizer; OrganizerBase is the entity");
    expect(r.stdout).toContain("skipped: OrganizerPublic: another Pydantic schema of Organizer; OrganizerBase is the entity");
    expect(r.stdout).toContain("skipped: EventUpdate: another Pydantic schema of Event; Event is the entity");
    expect(r.stdout).toContain("skipped: Schema: a Pydantic model with no fields");
    expect(r.stdout).toMatch(/skipped: Event\.organizer: a nested Optional\[OrganizerPublic\] model is not a column; left out/);
  });

  it("reads a Django app: fields, choices, ForeignKey, Meta.db_table, auto_now", () => {
    const dir = outDir();
    const r = runCharter(["extract", join(CODE, "django_app"), "--domain", "library", "--output", dir, "--yes"]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain("frameworks: Django");
    validates(dir);
    expect(spec(dir, "entities/author.contract.yaml").table).toBe("library_authors");
    expect(fields(dir, "author")).toEqual({
      name: { type: "string", required: true, constraints: { maxLength: 120 } },
      email: { type: "email" },
      born: { type: "date" },
    });
    const book = fields(dir, "book");
    expect(book.format).toEqual({ type: "string", default: "paper", enum: ["paper", "hard", "ebook"], constraints: { maxLength: 5 } });
    expect(book.pages).toEqual({ type: "integer", default: 0, constraints: { min: 0 } });
    expect(book.author_id).toEqual({
      type: "uuid",
      required: true,
      references: { entity: "entity/library/author", display: "name", on_delete: "cascade" },
    });
    expect(book.editor_id).toEqual({ type: "uuid", references: { entity: "entity/library/author", display: "name" } });
    expect(spec(dir, "entities/book.contract.yaml").mixins).toEqual(["mixin/stdlib/timestamped"]);
    expect(spec(dir, "workflows/loan_lifecycle.contract.yaml")).toMatchObject({ initial: "active" });
  });

  it("reads an Express + TypeORM app: decorators, enums, relations, mounted routers", () => {
    const dir = outDir();
    const r = runCharter(["extract", join(CODE, "express_app"), "--domain", "work", "--output", dir, "--yes"]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain("frameworks: Express, TypeORM");
    validates(dir);
    expect(fields(dir, "project")).toEqual({
      name: { type: "string", required: true, constraints: { maxLength: 120 } },
      description: { type: "text" },
      budget: { type: "integer", default: 0 },
    });
    expect(spec(dir, "workflows/project_lifecycle.contract.yaml")).toMatchObject({
      initial: "active",
      states: { archived: { terminal: true } },
    });
    const task = fields(dir, "task");
    expect(task.project_id).toEqual({ type: "uuid", required: true, references: { entity: "entity/work/project", display: "name" } });
    // TypeORM's relation without onDelete is NO ACTION: the delete is refused, not the reference cleared.
    expect(task.parent_id).toEqual({ type: "uuid", references: { entity: "entity/work/task", display: "title", on_delete: "restrict" } });
    const projects = spec(dir, "routes/project_api.contract.yaml") as { endpoints: { method: string; path: string }[] };
    expect(projects.endpoints.map((e) => `${e.method} ${e.path}`)).toEqual(["GET /", "POST /", "GET /{id}", "DELETE /{id}"]);
  });

  it("prints only the JSON summary on stdout with --format json, the review on stderr", () => {
    const dir = outDir();
    const r = runCharter([
      "extract",
      join(CODE, "django_app"),
      "--domain",
      "shop",
      "--output",
      dir,
      "--yes",
      "--format",
      "json",
      "--no-llm",
    ]);
    expect(r.status, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout) as { accepted: string[]; written: string[]; llm: unknown[]; frameworks: string[] };
    expect(summary.accepted.length).toBeGreaterThan(0);
    // Each accepted entity is written with the contracts that belong to it (its routes, its workflow).
    expect(summary.written.length).toBeGreaterThanOrEqual(summary.accepted.length);
    expect(summary.llm).toEqual([]);
    expect(summary.frameworks).toContain("Django");
    validates(dir);
  });

  it("refuses to overwrite contracts without --force", () => {
    const dir = outDir();
    expect(runCharter(["extract", join(CODE, "django_app"), "--domain", "library", "--output", dir, "--yes"]).status).toBe(0);
    const again = runCharter(["extract", join(CODE, "django_app"), "--domain", "library", "--output", dir, "--yes"]);
    expect(again.status).toBe(1);
    expect(again.stderr).toMatch(/already exist .*Use --force/);
  });
});

/**
 * The review in a real terminal: tmux runs `charter extract` in a pseudo-terminal; the test types
 * keys with send-keys and reads the screen with capture-pane.
 */
class Terminal {
  private readonly socket = `charter-extract-${process.pid}-${n++}`;
  constructor(command: string) {
    this.tmux("new-session", "-d", "-s", "t", "-x", "160", "-y", "50", command);
  }
  tmux(...args: string[]): string {
    return execFileSync("tmux", ["-L", this.socket, ...args], { encoding: "utf8" });
  }
  screen(): string {
    return this.tmux("capture-pane", "-p", "-t", "t", "-S", "-2000");
  }
  keys(...keys: string[]): void {
    this.tmux("send-keys", "-t", "t", ...keys);
  }
  async waitFor(pattern: RegExp, count = 1, timeoutMs = 60_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const s = this.screen();
      if ((s.match(new RegExp(pattern.source, "g")) ?? []).length >= count) return s;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern}:\n${s}`);
      await new Promise((r) => setTimeout(r, 150));
    }
  }
  close(): void {
    try {
      this.tmux("kill-server");
    } catch {
      // Already gone.
    }
  }
}

const terminals: Terminal[] = [];
afterAll(() => {
  for (const t of terminals) t.close();
});

function extractIn(codebase: string, dir: string, env: Record<string, string> = {}): Terminal {
  const vars = Object.entries({ NO_COLOR: "1", ...env })
    .map(([k, v]) => `${k}='${v}'`)
    .join(" ");
  const cmd = `cd '${REPO_ROOT}' && env ${vars} '${process.execPath}' --import '${TSX_LOADER}' src/cli/charter.ts extract '${join(CODE, codebase)}' --domain app --output '${dir}'; echo "EXIT=$?"; sleep 60`;
  const t = new Terminal(cmd);
  terminals.push(t);
  return t;
}

describe("charter extract, interactive review in a terminal", () => {
  it("edits one entity in $EDITOR, accepts it, skips the next; each decision is written at once", async () => {
    const editor = join(work, "editor.sh");
    writeFileSync(editor, `#!/bin/sh\nsed -i 's/^  description: .*$/  description: Edited in the editor/' "$1"\n`);
    chmodSync(editor, 0o755);
    const dir = outDir();
    const t = extractIn("fastapi_app", dir, { EDITOR: editor, VISUAL: "" });
    await t.waitFor(/Accept \[a\], skip \[s\], edit \[e\], quit \[q\]\?/);
    expect(t.screen()).toContain("--- 1/3: entity/app/customer ---");
    t.keys("e", "Enter");
    await t.waitFor(/description: Edited in the editor/);
    t.keys("a", "Enter");
    await t.waitFor(/--- 2\/3: entity\/app\/tag ---/);
    // Written right after the decision, before the next question is answered.
    expect(readFileSync(join(dir, "entities/customer.contract.yaml"), "utf8")).toContain("description: Edited in the editor");
    t.keys("s", "Enter");
    await t.waitFor(/--- 3\/3: entity\/app\/ticket ---/);
    expect(t.screen()).toContain("skipped entity/app/tag");
    t.keys("a", "Enter");
    const end = await t.waitFor(/EXIT=\d+/);
    expect(end).toContain("Done: 2 accepted, 1 skipped, 0 not reviewed");
    expect(end).toContain("EXIT=0");
    expect(existsSync(join(dir, "entities/tag.contract.yaml"))).toBe(false);
    expect(existsSync(join(dir, "entities/ticket.contract.yaml"))).toBe(true);
    expect(existsSync(join(dir, "routes/customer_api.contract.yaml"))).toBe(true);
    validates(dir);
  });

  it("keeps what was accepted when the run is interrupted with Ctrl-C", async () => {
    const dir = outDir();
    const t = extractIn("django_app", dir);
    await t.waitFor(/--- 1\/3: entity\/app\/author ---[\s\S]*Accept \[a\]/);
    t.keys("a", "Enter");
    await t.waitFor(/--- 2\/3: entity\/app\/book ---[\s\S]*Accept \[a\]/);
    t.keys("C-c");
    const end = await t.waitFor(/EXIT=\d+/);
    expect(end).toMatch(/EXIT=130/);
    expect(existsSync(join(dir, "entities/author.contract.yaml"))).toBe(true);
    expect(existsSync(join(dir, "entities/book.contract.yaml"))).toBe(false);
    validates(dir);
  });

  it("refuses an edit that does not validate and asks again", async () => {
    const editor = join(work, "bad-editor.sh");
    writeFileSync(editor, `#!/bin/sh\nsed -i 's/type: string/type: strng/' "$1"\n`);
    chmodSync(editor, 0o755);
    const dir = outDir();
    const t = extractIn("django_app", dir, { EDITOR: editor });
    await t.waitFor(/Accept \[a\]/);
    t.keys("e", "Enter");
    await t.waitFor(/type: strng/);
    t.keys("a", "Enter");
    await t.waitFor(/not written: fix it with \[e\]dit, or \[s\]kip it/);
    expect(t.screen()).toMatch(/'strng' is not one of/);
    expect(existsSync(join(dir, "entities/author.contract.yaml"))).toBe(false);
    t.keys("q", "Enter");
    const end = await t.waitFor(/EXIT=\d+/);
    expect(end).toContain("EXIT=130");
  });
});
