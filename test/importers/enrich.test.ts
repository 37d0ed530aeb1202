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
function migrate(
  extraEnv: Record<string, string> = {},
  args: string[] = [],
): Promise<{ dir: string; status: number; stdout: string; stderr: string }> {
  const dir = join(work, `out-${n++}`);
  return new Promise((done) => {
    const child = spawn(
      process.execPath,
      [
        "--import",
        TSX_LOADER,
        resolve(REPO_ROOT, "src/cli/charter.ts"),
        "factory",
        "migrate",
        SPEC,
        "--domain",
        "store",
        "--dir",
        dir,
        ...args,
      ],
      {
        env: { ...process.env, NO_COLOR: "1", ...llm.env(), ...extraEnv },
      },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    child.on("close", (status) => done({ dir, status: status ?? -1, stdout, stderr }));
  });
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
