import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { REPO_ROOT, TSX_LOADER } from "../support/cli.js";
import { FakeLlm } from "../support/fake-llm.js";
import { validates } from "./support.js";

const SPEC = resolve("test/fixtures/importers/openapi/public/petstore-openapi3.yaml");
const CODEBASE = resolve("test/fixtures/importers/codebases/pydantic_app");
const work = mkdtempSync(join(tmpdir(), "charter-enrich-"));
let n = 0;
let llm: FakeLlm;

beforeAll(async () => {
  llm = await FakeLlm.start();
});
afterAll(async () => {
  await llm.close();
});
beforeEach(() => llm.reset());

/** The CLI in a child process, asynchronously, so the fake server in this process can answer it. */
function charter(args: string[], extraEnv: Record<string, string> = {}): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ["--import", TSX_LOADER, resolve(REPO_ROOT, "src/cli/charter.ts"), ...args], {
      env: { ...process.env, NO_COLOR: "1", ...llm.env(), ...extraEnv },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    child.on("close", (status) => done({ status: status ?? -1, stdout, stderr }));
  });
}

async function migrate(
  extraEnv: Record<string, string> = {},
  args: string[] = [],
): Promise<{ dir: string; status: number; stdout: string; stderr: string }> {
  const dir = join(work, `out-${n++}`);
  return { dir, ...(await charter(["factory", "migrate", SPEC, "--domain", "store", "--output", dir, ...args], extraEnv)) };
}

async function extract(args: string[] = []): Promise<{ dir: string; status: number; stdout: string; stderr: string }> {
  const dir = join(work, `out-${n++}`);
  return { dir, ...(await charter(["extract", CODEBASE, "--domain", "events", "--output", dir, "--yes", ...args])) };
}

const read = (dir: string, rel: string): Record<string, unknown> => parse(readFileSync(join(dir, rel), "utf8")) as Record<string, unknown>;
const petFields = (dir: string): Record<string, Record<string, unknown>> =>
  (read(dir, "entities/pet.contract.yaml").spec as { fields: Record<string, Record<string, unknown>> }).fields;

const lifecycle = {
  entity: "pet",
  field: "status",
  initial: "available",
  states: {
    available: { label: "Available", category: "open" },
    pending: { label: "Pending", category: "hold" },
    sold: { label: "Sold", category: "closed", terminal: true },
  },
  transitions: { available: ["pending", "sold"], pending: ["available", "sold"], sold: [] },
};

describe("LLM enrichment (fake OpenAI-compatible server)", () => {
  it("applies descriptions, a workflow from a status enum and a page, and says what came from the LLM", async () => {
    llm.reply({
      json: {
        entities: { pet: { description: "An animal offered for sale", fields: { name: { description: "What the pet answers to" } } } },
        workflows: [lifecycle],
        pages: [{ entity: "pet", columns: ["name", "category_id", "no_such_field"] }],
      },
    });
    const r = await migrate();
    expect(r.status, r.stderr).toBe(0);
    expect(llm.requests).toHaveLength(1);
    expect(llm.requests[0]?.body.response_format?.type).toBe("json_object");
    expect(llm.userPrompt(0)).toContain("name: pet");
    const pet = read(r.dir, "entities/pet.contract.yaml");
    expect((pet.metadata as Record<string, unknown>).description).toBe("An animal offered for sale");
    expect(petFields(r.dir).name?.description).toBe("What the pet answers to");
    expect((pet.spec as Record<string, unknown>).state_machine).toBe("workflow/store/pet_lifecycle");
    expect(petFields(r.dir).status).toBeUndefined();
    expect(readFileSync(join(r.dir, "workflows/pet_lifecycle.contract.yaml"), "utf8")).toMatch(/^# Suggested by an LLM, review: spec$/m);
    expect((read(r.dir, "pages/pet_page.contract.yaml").spec as { views: { columns: string[] }[] }).views[0]?.columns).toEqual([
      "name",
      "category_id",
    ]);
    expect(r.stdout).toMatch(/LLM openai:\S+: 3 contract\(s\) enriched/);
    expect(r.stdout).toMatch(
      /From the LLM \(3 contracts, review them\):\n {2}entity\/store\/pet: metadata\.description, fields\.name\.description, state_machine \(was field status\)/,
    );
    validates(r.dir);
  });

  it("strips properties outside the whitelists before validating", async () => {
    llm.reply({
      json: {
        entities: {
          pet: {
            fields: {
              name: {
                description: "Name",
                required_when: "status == 'sold'",
                conditional_required: true,
                constraints: { maxLength: 50, unique: true },
              },
              photo_urls: { type: "text", references: { entity: "entity/store/tag" } },
            },
          },
        },
      },
    });
    const r = await migrate();
    expect(r.status, r.stderr).toBe(0);
    const name = petFields(r.dir).name as Record<string, unknown>;
    expect(name).toEqual({ type: "string", required: true, description: "Name", constraints: { maxLength: 50 } });
    expect(petFields(r.dir).photo_urls).toEqual({ type: "array", required: true, items_type: "string" });
    expect(r.stdout).toMatch(/LLM pet\.name\.required_when: not an allowed field property here; stripped/);
    expect(r.stdout).toMatch(/LLM pet\.photo_urls\.type: not an allowed field property here; stripped/);
    validates(r.dir);
  });

  it("keeps the deterministic contract when a suggestion does not validate", async () => {
    llm.reply({ json: { workflows: [{ ...lifecycle, transitions: { available: ["gone"], pending: [], sold: [] } }] } });
    const r = await migrate();
    expect(r.status, r.stderr).toBe(0);
    expect(existsSync(join(r.dir, "workflows/pet_lifecycle.contract.yaml"))).toBe(false);
    expect(petFields(r.dir).status).toMatchObject({ enum: ["available", "pending", "sold"] });
    expect(r.stdout).toMatch(/LLM suggestion for \S+: fails validation .*the deterministic contract is kept/);
    validates(r.dir);
  });

  it.each([
    ["prose instead of JSON", { content: "Sure! Here are some improvements you could make." }],
    ["a JSON object of the wrong shape", { json: { entities: ["pet"] } }],
    ["an HTTP error", { status: 500 }],
  ])("falls back to the deterministic result on %s", async (_what, reply) => {
    llm.reply(reply);
    const r = await migrate();
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/reply not usable \((unparsable|invalid|provider)\); deterministic result kept/);
    const plain = await migrate({}, ["--no-llm"]);
    expect(plain.stdout).toContain("LLM: off (--no-llm); deterministic conversion");
    for (const f of ["entities/pet.contract.yaml", "routes/pet_api.contract.yaml"]) {
      expect(readFileSync(join(r.dir, f), "utf8")).toBe(readFileSync(join(plain.dir, f), "utf8"));
    }
  });

  it("works with no provider configured", async () => {
    const r = await migrate({ OPENAI_BASE_URL: "" });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain("LLM: none configured; deterministic conversion");
    expect(llm.requests).toHaveLength(0);
  });
});

describe("LLM enrichment of charter extract (fake OpenAI-compatible server)", () => {
  const entity = (
    dir: string,
    name: string,
  ): { metadata: Record<string, unknown>; spec: { fields: Record<string, Record<string, unknown>> } } =>
    read(dir, `entities/${name}.contract.yaml`) as {
      metadata: Record<string, unknown>;
      spec: { fields: Record<string, Record<string, unknown>> };
    };

  it("applies the suggestions to the extracted entities and says what came from the LLM", async () => {
    llm.reply({
      json: {
        entities: {
          event: {
            description: "Something people attend",
            fields: { title: { description: "Shown on the poster" }, no_such_field: { description: "x" } },
          },
          nobody: { description: "An entity the code base does not have" },
        },
        pages: [{ entity: "event", columns: ["title", "starts_on", "no_such_field"] }],
      },
    });
    const r = await extract();
    expect(r.status, r.stderr).toBe(0);
    expect(llm.requests).toHaveLength(1);
    // The prompt shows the extracted entities, Pydantic fields among them.
    expect(llm.userPrompt(0)).toContain("name: event");
    expect(llm.userPrompt(0)).toContain("seats_left");
    expect(r.stderr).toMatch(/LLM openai:\S+: 2 contract\(s\) enriched/);
    const event = entity(r.dir, "event");
    // The code base's own docstring wins over the LLM's description.
    expect(event.metadata.description).toBe("A dated gathering people sign up for.");
    expect(event.spec.fields.title).toEqual({
      type: "string",
      required: true,
      description: "Shown on the poster",
      constraints: { maxLength: 120 },
    });
    expect(event.spec.fields.no_such_field).toBeUndefined();
    expect(entity(r.dir, "organizer").metadata.description).toBe("Someone who runs events.");
    expect(existsSync(join(r.dir, "entities/nobody.contract.yaml"))).toBe(false);
    expect(readFileSync(join(r.dir, "entities/event.contract.yaml"), "utf8")).toMatch(
      /^# Suggested by an LLM, review: fields\.title\.description$/m,
    );
    expect((read(r.dir, "pages/event_page.contract.yaml").spec as { views: { columns: string[] }[] }).views[0]?.columns).toEqual([
      "title",
      "starts_on",
    ]);
    expect(r.stdout).toMatch(
      /From the LLM \(2 contracts, review them\):\n {2}entity\/events\/event: fields\.title\.description\n {2}page\/events\/event_page: /,
    );
    validates(r.dir);
  });

  it.each([
    ["prose instead of JSON", { content: "Here is what I would change: add descriptions." }],
    ["an HTTP error", { status: 500 }],
  ])("falls back to the deterministic extraction on %s", async (_what, reply) => {
    llm.reply(reply);
    const r = await extract();
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/reply not usable \((unparsable|provider)\); deterministic result kept/);
    expect(r.stdout).not.toContain("From the LLM");
    const plain = await extract(["--no-llm"]);
    expect(plain.stderr).toContain("LLM: off (--no-llm); deterministic conversion");
    for (const f of ["entities/event.contract.yaml", "entities/organizer.contract.yaml", "routes/event_api.contract.yaml"])
      expect(readFileSync(join(r.dir, f), "utf8")).toBe(readFileSync(join(plain.dir, f), "utf8"));
    validates(r.dir);
  });
});
