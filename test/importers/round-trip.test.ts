import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type RunningBackend, startGeneratedBackend } from "../support/backend.js";
import { runCharter } from "../support/cli.js";

const FIX = resolve("test/fixtures/importers/openapi");
const work = mkdtempSync(join(tmpdir(), "charter-roundtrip-"));
const running: RunningBackend[] = [];
afterAll(async () => {
  for (const b of running) await b.stop();
});

async function importAndServe(spec: string, name: string): Promise<RunningBackend> {
  const dir = join(work, name, "domain");
  const r = runCharter(["factory", "migrate", spec, "--domain", "imported", "--output", dir]);
  expect(r.status, r.stderr).toBe(0);
  const backend = await startGeneratedBackend({ domainDir: dir, outDir: join(work, name, "runtime"), backend: "memory" });
  running.push(backend);
  return backend;
}

describe("OpenAPI import -> generated backend -> its OpenAPI compared with the original", () => {
  it("serves the spec's collection and item paths, and the comparison says what was kept", async () => {
    const backend = await importAndServe(join(FIX, "library.yaml"), "library");
    const generated = (await (await fetch(`${backend.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    const paths = Object.keys(generated.paths).map((p) => p.replace(/\{[^}]+\}/g, "{}"));
    for (const p of ["/books", "/books/{}", "/members", "/members/{}"]) expect(paths).toContain(p);
    // The routes really answer: create a member, then read it back at the spec's item path.
    const created = await fetch(`${backend.url}/members`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "ada@example.com", full_name: "Ada" }),
    });
    expect(created.status).toBe(201);
    const member = (await created.json()) as { id: string; state: string };
    expect(member.state).toBe("active");
    expect((await fetch(`${backend.url}/members/${member.id}`)).status).toBe(200);

    const r = runCharter(["factory", "compare", join(FIX, "library.yaml"), `${backend.url}/openapi.json`]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain("  = GET /books/{bookId}  (as GET /books/{record_id})");
    expect(r.stdout).toContain("  = PATCH /books/{bookId}  (as PATCH /books/{record_id})");
    expect(r.stdout).toContain("  - PUT /books/{bookId}/cover");
    expect(r.stdout).toContain("  = Book.title");
    expect(r.stdout).toContain("  = Book.author");
    expect(r.stdout).toContain("  - Member.status");
    expect(r.stdout).toMatch(/Kept 8 of 9 operations and \d+ of \d+ schema properties/);
    const json = runCharter(["factory", "compare", join(FIX, "library.yaml"), `${backend.url}/openapi.json`, "--format", "json"]);
    const diff = JSON.parse(json.stdout) as { paths: { method: string; path: string; status: string }[] };
    expect(diff.paths.find((p) => p.method === "DELETE" && p.path === "/books/{bookId}")?.status).toBe("kept");
  });

  it("imports the real Petstore spec into a backend that serves its /pet paths", async () => {
    const backend = await importAndServe(join(FIX, "public/petstore-openapi3.yaml"), "petstore");
    const r = runCharter(["factory", "compare", join(FIX, "public/petstore-openapi3.yaml"), `${backend.url}/openapi.json`]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain("  = POST /pet");
    expect(r.stdout).toContain("  = GET /pet/{petId}  (as GET /pet/{record_id})");
    expect(r.stdout).toContain("  - GET /pet/findByStatus");
    expect(r.stdout).toContain("  = Pet.category");
  });
});
