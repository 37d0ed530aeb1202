import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkDomain } from "../../src/compiler/index.js";
import { MAX_NESTING_DEPTH } from "../../src/contracts/loader.js";
import { Healer, HealerError, type SqliteTicketStore } from "../../src/healer/index.js";
import { REPO_ROOT, runCharter, TSX_LOADER } from "../support/cli.js";
import { brokenExamples, makeProject, NO_PROVIDER_ENV } from "./helpers.js";

const noRegen = () => ({ files: 0, written: 0 });
const examples = new Map(brokenExamples().map((e) => [e.type, e.dir]));
const outside: string[] = [];
afterAll(() => {
  for (const d of outside) rmSync(d, { recursive: true, force: true });
});

describe("a contract path outside the domains directory is never written", () => {
  it("a symlinked domain folder: healer fix refuses to rewrite the file it leads to", () => {
    const elsewhere = mkdtempSync(join(tmpdir(), "charter-outside-"));
    outside.push(elsewhere);
    cpSync(examples.get("graph_edge") as string, join(elsewhere, "shop"), { recursive: true });
    const root = makeProject();
    symlinkSync(join(elsewhere, "shop"), join(root, "domains", "shop"));
    const target = join(elsewhere, "shop", "entities", "product.contract.yaml");
    const before = readFileSync(target, "utf8");

    const r = runCharter(["healer", "fix", "domains/shop"], { cwd: root, env: NO_PROVIDER_ENV });
    // A fix that failed is a failed run: the refusal is reported and the exit status says so.
    expect(r.status).toBe(1);
    expect(r.stdout).toContain("[healer:failed]");
    expect(r.stdout).toMatch(
      /refused to write domains\/shop\/entities\/product\.contract\.yaml: it resolves to .*outside the project's domains directory/,
    );
    expect(readFileSync(target, "utf8")).toBe(before);
  });

  it("a symlinked contract file is refused the same way", async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), "charter-outside-"));
    outside.push(elsewhere);
    const root = makeProject(examples.get("graph_edge"));
    const inside = join(root, "domains", "shop", "entities", "product.contract.yaml");
    const real = join(elsewhere, "product.contract.yaml");
    cpSync(inside, real);
    rmSync(inside);
    symlinkSync(real, inside);
    const before = readFileSync(real, "utf8");
    const healer = new Healer({ projectRoot: root, console: null, env: {}, proposer: null, regenerate: noRegen });
    // The loader follows a file given directly; scan the file's own folder through the link.
    const { tickets } = await healer.scan(join(root, "domains", "shop", "entities", "product.contract.yaml"));
    expect(tickets).toHaveLength(1);
    const t = await healer.processTicket(tickets[0]?.ticket.id as string);
    expect(t.status).toBe("failed");
    expect(t.resolution_note).toMatch(/outside the project's domains directory/);
    expect(readFileSync(real, "utf8")).toBe(before);
    await healer.close();
  });
});

describe("a contract_fqn that could address a path is refused, never normalised", () => {
  it.each([
    "../../etc/passwd",
    "entity/../../secrets",
    "entity/shop/../x",
    "/entity/shop/customer",
    "entity/shop/customer/extra",
    "entity/shop/cust\u0000omer",
    "entity/shop/cust\nomer",
    "entity\\shop\\customer",
    "entity//customer",
  ])("%j", async (fqn) => {
    const healer = new Healer({ projectRoot: makeProject(), console: null, env: {}, proposer: null, regenerate: noRegen });
    await expect(healer.report({ source: "runtime", contract_fqn: fqn, error: "boom" })).rejects.toThrow(HealerError);
    await expect(healer.report({ source: "runtime", contract_fqn: fqn, error: "boom" })).rejects.toThrow(/is refused/);
    expect(await healer.store.list()).toHaveLength(0);
    await healer.close();
  });

  it("an FQN whose name breaks the naming rule is looked up as the envelope states it, and fixed", async () => {
    const root = makeProject(examples.get("naming"));
    const f = checkDomain(join(root, "domains")).findings.find((x) => x.severity === "error");
    expect(f?.fqn).toBe("entity/shop/ProductItem");
    const healer = new Healer({ projectRoot: root, console: null, env: {}, proposer: null, regenerate: noRegen });
    const { ticket } = await healer.report({ source: "validation", contract_fqn: "entity/shop/ProductItem", error: f?.message as string });
    expect(ticket.contract_fqn).toBe("entity/shop/ProductItem");
    const done = await healer.processTicket(ticket.id);
    expect(done.status).toBe("applied");
    expect(checkDomain(join(root, "domains")).errors).toBe(0);
    await healer.close();
  });
});

describe("bookkeeping after a kill -9", () => {
  it("a fix journaled and already on disk is finished on restart, never closed as obsolete", async () => {
    const root = makeProject(examples.get("graph_edge"));
    const first = new Healer({ projectRoot: root, console: null, env: {}, proposer: null, regenerate: noRegen });
    const { tickets } = await first.scan();
    const id = tickets[0]?.ticket.id as string;
    // What a run killed mid-apply leaves: the proposal journaled, the file written, the ticket
    // requeued by a later run that was killed in turn before finishing it.
    await first.processTicket(id);
    const applied = await first.store.get(id);
    expect(applied?.status).toBe("applied");
    const proposal = applied?.proposal;
    if (!proposal) throw new Error("no proposal");
    (first.store as SqliteTicketStore).db
      .prepare(
        "UPDATE tickets SET status = 'queued', resolved_at = NULL, diff_id = NULL, resolution_note = 'requeued after an interrupted run' WHERE id = ?",
      )
      .run(id);
    expect(readFileSync(join(root, proposal.file), "utf8")).toBe(proposal.after);
    await first.close();

    const restarted = new Healer({ projectRoot: root, console: null, env: {}, proposer: null, regenerate: noRegen });
    const summary = await restarted.fix();
    const t = await restarted.store.get(id);
    expect(t?.status).toBe("applied");
    expect(t?.resolution_note).not.toMatch(/obsolete/);
    expect(summary.remainingErrors).toBe(0);
    expect(await restarted.store.list({ status: "rejected" })).toHaveLength(0);
    await restarted.close();
  });

  it("a ticket left analyzing by a dead process is requeued before the scan looks at it", async () => {
    const root = makeProject(examples.get("graph_edge"));
    const healer = new Healer({ projectRoot: root, console: null, env: {}, proposer: null, regenerate: noRegen });
    const { tickets } = await healer.scan();
    const id = tickets[0]?.ticket.id as string;
    // A claim of this host whose process is gone (pid 999999 does not run here).
    (healer.store as SqliteTicketStore).db
      .prepare("UPDATE tickets SET status = 'analyzing', claimed_by = ? WHERE id = ?")
      .run(`${hostname()}:999999`, id);
    await healer.fix();
    expect((await healer.store.get(id))?.status).toBe("applied");
    await healer.close();
  });
});

describe("deeply nested YAML", () => {
  it("gets a yaml.too_deep finding with its place, never a stack overflow", () => {
    const dir = mkdtempSync(join(tmpdir(), "charter-deep-"));
    outside.push(dir);
    mkdirSync(join(dir, "entities"));
    const head =
      "apiVersion: charter/v1\nkind: Entity\nmetadata:\n  name: deep\n  domain: shop\nspec:\n  fields:\n    x:\n      type: object\n";
    writeFileSync(join(dir, "entities", "flow.contract.yaml"), `${head}      default: ${"[".repeat(20_000)}${"]".repeat(20_000)}\n`);
    let block = `${head}      default:\n`;
    for (let i = 0; i < 300; i++) block += `${" ".repeat(i + 8)}a:\n`;
    writeFileSync(join(dir, "entities", "block.contract.yaml"), `${block}${" ".repeat(308)}b: 1\n`);
    const check = checkDomain(dir);
    const codes = check.findings.map((f) => [f.file.split("/").pop(), f.code, f.line]);
    expect(codes).toEqual([
      ["block.contract.yaml", "yaml.too_deep", 0],
      ["flow.contract.yaml", "yaml.too_deep", 10],
    ]);
    expect(check.findings.every((f) => f.message.includes(`deeper than ${MAX_NESTING_DEPTH} levels`))).toBe(true);
    expect(JSON.stringify(check.findings)).not.toContain("call stack");
  });
});

describe("charter healer tickets | head -1", () => {
  it("exits quietly when the reader goes away (EPIPE)", async () => {
    const root = makeProject();
    const healer = new Healer({ projectRoot: root, console: null, env: {}, proposer: null, regenerate: noRegen });
    await healer.reportMany(Array.from({ length: 3000 }, (_, i) => ({ source: "manual" as const, error: `problem number ${i} of many` })));
    await healer.close();
    const cmd = `"${process.execPath}" --import "${TSX_LOADER}" "${join(REPO_ROOT, "src/cli/charter.ts")}" healer tickets | head -1; echo "status=\${PIPESTATUS[0]}" >&2`;
    const r = spawnSync("bash", ["-c", cmd], { cwd: root, encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } });
    expect(r.stdout.trim().split("\n")).toHaveLength(1);
    expect(r.stdout).toMatch(/^ID\s+STATUS/);
    expect(r.stderr.trim()).toBe("status=0");
  });
});
