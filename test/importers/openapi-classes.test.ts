import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { readModel } from "../../src/importers/factory/index.js";
import type { ImportNote } from "../../src/importers/model.js";
import { planImport, refusal } from "../../src/importers/pipeline.js";

/**
 * The OpenAPI classes of issue 38, each on a small hand-written input
 * (test/fixtures/importers/openapi/classes): what is served, and a note with its fact for every
 * change or omission. test/importers/openapi-judge.test.ts runs the same inputs as apps.
 */
const DIR = resolve("test/fixtures/importers/openapi/classes");

async function plan(file: string) {
  const model = await readModel(resolve(DIR, file), "openapi");
  const p = await planImport(model, {
    domain: "shop",
    directory: "/nowhere",
    routes: "operations",
    pages: false,
    workflows: false,
    llm: false,
  });
  const byName = (kind: string, name: string): Record<string, unknown> => {
    const c = p.checked.accepted.find((x) => x.kind === kind && x.name === name);
    if (!c) throw new Error(`no ${kind} ${name}: ${p.checked.accepted.map((x) => x.name).join(", ")}`);
    return c.data.spec as Record<string, unknown>;
  };
  const note = (subject: string): ImportNote | undefined => p.notes.find((n) => n.subject === subject);
  return { model, p, byName, note, refused: refusal(p.checked) };
}

describe("OpenAPI import (issue 38 classes)", () => {
  it("bundles a spec whose paths $ref operations and path items in other files, hoisting their schemas", async () => {
    const { model, byName, refused, note } = await plan("multi/api.yaml");
    expect(refused).toBeNull();
    expect(model.tables.map((t) => t.name).sort()).toEqual(["Project", "owner"]);
    const project = byName("Entity", "project").fields as Record<string, Record<string, unknown>>;
    // `properties: {$ref: attributes.yml#/project_fields}` is the map of properties itself.
    expect(project.name).toEqual({ type: "string", required: true, constraints: { maxLength: 80 } });
    expect(project.budget).toEqual({ type: "integer", constraints: { min: 0 } });
    expect(project.owner_id?.references).toEqual({ entity: "entity/shop/owner", display: "email" });
    const route = byName("Route", "project_api");
    expect((route.endpoints as { method: string; path: string }[]).map((e) => `${e.method} ${e.path}`)).toEqual([
      "GET /",
      "POST /",
      "GET /{id}",
      "DELETE /{id}",
    ]);
    // The 422 answer's schema sits in another file: an error payload, noted as such.
    expect(note("Problem")).toMatchObject({ kind: "skipped", fact: "table" });
  });

  it("refuses a $ref to a file that is not there, naming the referring file and place", async () => {
    const { mkdtempSync, writeFileSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const dir = mkdtempSync(resolve(tmpdir(), "charter-openapi-"));
    const file = resolve(dir, "api.yaml");
    writeFileSync(file, "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /a:\n    get:\n      $ref: ops/gone.yml\n");
    await expect(readModel(file, "openapi")).rejects.toThrow(/api\.yaml:6:7 \(at #\/paths\/~1a\/get\): unresolvable \$ref: .*gone\.yml/);
  });

  it("decides resource, envelope, variant and error by how operations use a schema", async () => {
    const { byName, note, refused } = await plan("shapes.yaml");
    expect(refused).toBeNull();
    // {id, name, status, records: [DomainRecord]} answered by GET /domains/{id}: a resource.
    const domain = byName("Entity", "domain").fields as Record<string, Record<string, unknown>>;
    expect(Object.keys(domain)).toEqual(["name", "status", "records", "region"]);
    expect(note("DomainList")).toMatchObject({ kind: "changed", fact: "table" });
    // CreateDomainOptions and GetDomainResponseSuccess fold into Domain.
    expect(note("Domain")?.reason).toMatch(/Domain, CreateDomainOptions, GetDomainResponseSuccess/);
    const route = byName("Route", "domain_api");
    expect((route.endpoints as { method: string; path: string }[]).map((e) => `${e.method} ${e.path}`)).toEqual([
      "GET /",
      "POST /",
      "GET /{id}",
    ]);
    // Only a 400 carries Failure; ExportProgress is a progress payload: neither is an entity.
    expect(note("Failure")).toMatchObject({ kind: "skipped", fact: "table" });
    expect(note("ExportProgress")).toMatchObject({ kind: "skipped", fact: "table" });
    // An operation without a schema is a noted operation, not a refused import.
    expect(note("POST /reports/{report_id}/export")).toMatchObject({ kind: "skipped", fact: "operation" });
  });

  it("serves a resource keyed by several path parameters, noting the parameters it drops", async () => {
    const { byName, note } = await plan("shapes.yaml");
    const route = byName("Route", "dataset_record_api");
    expect(route.base_path).toBe("/records");
    expect((route.endpoints as { method: string; path: string }[]).map((e) => `${e.method} ${e.path}`)).toEqual(["GET /", "GET /{id}"]);
    expect(note("GET /{dataset}/{version}/records")).toMatchObject({
      kind: "changed",
      fact: "operation",
      reason: "served as GET /records (the path parameters {dataset}, {version} are left out: a Route's base path holds no parameters)",
    });
  });

  it("gives two resources on one base path two Routes, never a refused import", async () => {
    const { byName, note } = await plan("shapes.yaml");
    expect(byName("Route", "daily_figure_api").base_path).toBe("/stats");
    expect(byName("Route", "usage_total_api").base_path).toBe("/stats-usage-total");
    expect(note("GET /stats")).toMatchObject({ kind: "changed", fact: "operation", reason: "served as GET /stats-usage-total" });
  });

  it("moves a base path until none lies under another's item path, with one note saying each step", async () => {
    const { byName, note, p } = await plan("nested-me.yaml");
    expect(byName("Route", "user_api").base_path).toBeUndefined(); // the default, /users
    // `@me` cannot be in a base path; /users/me would be GET /users/{id} with id "me".
    expect(byName("Route", "profile_api").base_path).toBe("/users-me");
    // /users/me/guilds moved beside /users/me, which then moved beside /users: it moves again.
    expect(byName("Route", "my_guild_api").base_path).toBe("/users-me-guilds");
    expect(note("my_guild base path /users/@me/guilds")?.reason).toBe(
      "/users/@me/guilds has characters a Route's base path cannot have; /users/me/guilds lies under the Route at " +
        "/users/me, whose item path /{id} would take it; /users/me-guilds lies under the Route at /users, whose item " +
        "path /{id} would take it: the Route uses /users-me-guilds",
    );
    expect(p.notes.filter((n) => n.subject.startsWith("my_guild base path"))).toHaveLength(1);
    // A link object is named as left out, where it is written.
    expect(note("GET /users/{user_id} link profile")).toMatchObject({
      kind: "skipped",
      fact: "operation",
      reason: "a link object to operation getProfile (how a client follows the 200 answer); the generated API document describes no links",
      location: { line: 16 },
    });
    const bases = p.checked.accepted
      .filter((c) => c.kind === "Route")
      .map((c) => (c.data.spec as { base_path?: string }).base_path ?? "/users");
    for (const b of bases) expect(bases, b).not.toContain(b.replace(/\/[^/]+$/, ""));
  });

  it("reads 3.1 nullable type arrays, arrays of oneOf objects and an integer enum through allOf", async () => {
    const { byName, note } = await plan("shapes.yaml");
    const record = byName("Entity", "domain_record").fields as Record<string, Record<string, unknown>>;
    expect(record.note).toEqual({ type: "string", constraints: { maxLength: 200 } });
    expect(note("DomainRecord.note")).toMatchObject({ kind: "changed", fact: "nullability" });
    expect(record.answers).toEqual({ type: "array", items_type: "object" });
    expect(note("DomainRecord.answers")).toMatchObject({ kind: "changed", fact: "type" });
    expect(record.kind).toEqual({ type: "integer", description: "The record kind, as a number", required: true, enum: [1, 5, 28] });
  });

  it("merges Swagger 2.0 allOf-composed definitions; an embedded record beside its id; names the app keeps", async () => {
    const { byName, note, p, refused } = await plan("extras-swagger2.yaml");
    expect(refused).toBeNull();
    const vehicle = byName("Entity", "vehicle").fields as Record<string, Record<string, unknown>>;
    expect(Object.keys(vehicle)).toEqual(["plate", "links_value", "permissions", "flush_ms"]);
    // A 64-bit "no limit" default keeps the largest exact JSON integer, noted.
    expect(vehicle.flush_ms?.default).toBe(Number.MAX_SAFE_INTEGER);
    expect(note("vehicle.flush_ms")).toMatchObject({ kind: "changed", fact: "default" });
    expect(note("NewVehicle")).toMatchObject({ kind: "changed", fact: "table" });
    expect(note("vehicle.links")).toMatchObject({ kind: "changed", fact: "column" });
    expect(vehicle.permissions).toEqual({ type: "integer", constraints: { max: Number.MAX_SAFE_INTEGER } });
    expect(p.notes.filter((n) => n.subject === "Vehicle.permissions")).toHaveLength(1);
    expect(note("Vehicle.permissions")).toMatchObject({ kind: "changed", fact: "bounds" });
    const trip = byName("Entity", "trip").fields as Record<string, Record<string, unknown>>;
    expect(trip).toEqual({ vehicle_id: { type: "string", required: true }, note: { type: "string" } });
    expect(note("Trip.vehicle")).toMatchObject({ kind: "skipped", fact: "reference" });
    expect(note("Trip.note")).toMatchObject({ kind: "changed", fact: "nullability" });
  });

  it("reads 3.1 const, always-null and mixed-type properties, maps and nullable references", async () => {
    const { byName, note } = await plan("extras-31.yaml");
    const event = byName("Entity", "event").fields as Record<string, Record<string, unknown>>;
    expect(event.type).toEqual({ type: "string", required: true, enum: ["contact.created"] });
    expect(event.counters).toEqual({ type: "object" });
    expect(event.author_id?.references).toEqual({ entity: "entity/shop/author", display: "handle" });
    expect(note("Event.author")).toMatchObject({ kind: "changed", fact: "reference" });
    expect(note("Event.retired")).toMatchObject({ kind: "changed", fact: "type" });
    expect(note("Event.fallback")).toMatchObject({ kind: "changed", fact: "type" });
  });

  it("imports a spec with no named schema: examples and query parameters describe records, callbacks are named", async () => {
    const { p, byName, note, refused } = await plan("examples-only.yaml");
    expect(refused).toBeNull();
    // `{"versions": [...]}` names its records; the example's values give the types.
    const version = byName("Entity", "version").fields as Record<string, Record<string, unknown>>;
    expect(version.updated?.type).toBe("datetime");
    expect(version.builds?.type).toBe("integer");
    expect(version.status?.type).toBe("string");
    expect(note("GET /")?.reason).toMatch(/inferred from the first example/);
    // The POST's query parameter and its answer's property make one record.
    const stream = byName("Entity", "stream").fields as Record<string, Record<string, unknown>>;
    expect(Object.keys(stream).sort()).toEqual(["callback_url", "subscription_id"]);
    expect(note("POST /streams")?.reason).toMatch(/query parameters callbackUrl become fields/);
    expect(note("POST /streams callback onData")).toMatchObject({ kind: "skipped", fact: "operation" });
    const routes = p.checked.accepted.filter((c) => c.kind === "Route").map((c) => c.name);
    expect(routes.sort()).toEqual(["stream_api", "version_api"]);
  });

  it("unwraps a wrapper of one record and serves a resource at its top-level path", async () => {
    const { byName, note } = await plan("extras-31.yaml");
    expect(note("CreateKeyOutput")).toMatchObject({ kind: "changed", fact: "table", reason: "a wrapper of Key; unwrapped, not an entity" });
    const route = byName("Route", "key_api");
    expect(route.base_path).toBeUndefined();
    expect((route.endpoints as { method: string; path: string }[]).map((e) => `${e.method} ${e.path}`)).toEqual(["GET /", "GET /{id}"]);
    expect(note("GET /teams/{team_id}/keys")).toMatchObject({ kind: "skipped", fact: "operation" });
    expect(note("POST /teams/{team_id}/keys")).toMatchObject({ kind: "skipped", fact: "operation" });
  });
});
