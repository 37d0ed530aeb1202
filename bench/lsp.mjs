#!/usr/bin/env node
// `charter lsp` on a domain of 20,000 contracts (13,334 entities with their workflows, routes and
// pages): time from `initialize` to the first diagnostics of an open file, and the latency of the
// diagnostics after an edit (p50, p95) while the full re-check runs in its worker between edits.
// Goals: first diagnostics < 3 s, an edit < 100 ms p95. Run after `npm run build`.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import protocol from "vscode-languageserver-protocol/node";
import { writeSyntheticDomain } from "./synthetic-domain.mjs";

const { createProtocolConnection, StreamMessageReader, StreamMessageWriter } = protocol;
const root = resolve(import.meta.dirname, "..");
const cli = join(root, "dist/cli/charter.js");
if (!existsSync(cli)) throw new Error("run `npm run build` first");

const ENTITIES = 13_334;
const EDITS = 60;
const work = mkdtempSync(join(tmpdir(), "charter-bench-lsp-"));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)];

try {
  writeSyntheticDomain(work, ENTITIES);
  const file = join(work, "entities/thing_6001.contract.yaml");
  const uri = pathToFileURL(file).href;
  const text = readFileSync(file, "utf8");
  const child = spawn(process.execPath, [cli, "lsp", "--stdio"], { cwd: work, stdio: ["pipe", "pipe", "inherit"] });
  const conn = createProtocolConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
  let waiting = null;
  conn.onNotification("textDocument/publishDiagnostics", (p) => {
    if (p.uri === uri && waiting && waiting.test(p.diagnostics)) {
      const w = waiting;
      waiting = null;
      w.done();
    }
  });
  conn.listen();
  const until = (test) => new Promise((done) => (waiting = { test, done }));

  const t0 = performance.now();
  const first = until(() => true);
  await conn.sendRequest("initialize", { processId: process.pid, rootUri: pathToFileURL(work).href, capabilities: {} });
  await conn.sendNotification("initialized", {});
  await conn.sendNotification("textDocument/didOpen", { textDocument: { uri, languageId: "yaml", version: 1, text } });
  await first;
  const firstMs = performance.now() - t0;

  const broken = text.replace("entity: entity/synth/thing_6000", "entity: entity/synth/thing_none");
  const latencies = [];
  for (let i = 0; i < EDITS; i++) {
    const breakIt = i % 2 === 0;
    const done = until((d) => (breakIt ? d.length > 0 : d.length === 0));
    const t = performance.now();
    await conn.sendNotification("textDocument/didChange", {
      textDocument: { uri, version: i + 2 },
      contentChanges: [{ text: breakIt ? broken : text }],
    });
    await done;
    latencies.push(performance.now() - t);
    // Typing pauses now and then: the full check of the domain starts in its worker meanwhile.
    await sleep(i % 10 === 9 ? 1500 : 150);
  }
  await conn.sendRequest("shutdown");
  await conn.sendNotification("exit");
  child.kill();
  const files = 20_002;
  console.log(`domain: ${files} contracts (${ENTITIES} entities)`);
  console.log(`first diagnostics after initialize: ${(firstMs / 1000).toFixed(2)} s (goal < 3 s)`);
  console.log(
    `diagnostics after an edit (${EDITS} edits): p50 ${pct(latencies, 50).toFixed(1)} ms, p95 ${pct(latencies, 95).toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms (goal p95 < 100 ms)`,
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
