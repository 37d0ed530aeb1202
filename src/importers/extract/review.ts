import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface, type Interface } from "node:readline";
import { parse } from "yaml";
import { formatFinding } from "../../contracts/findings.js";
import { checkPlanned } from "../check.js";
import type { PlannedContract } from "../convert.js";
import { printContract } from "../print.js";
import { llmLines } from "../report.js";
import { writeContracts } from "../write.js";

export interface ReviewOutcome {
  accepted: string[];
  skipped: string[];
  written: string[];
  interrupted: boolean;
  /** Written contracts with parts an LLM suggested, and which parts. */
  llm: { fqn: string; paths: string[] }[];
}

/**
 * Shows each entity (with its workflow, route and page) for review: accept, skip, or edit in
 * $VISUAL/$EDITOR. Each decision is acted on at once: an accepted entity's contracts are validated
 * with what is already on disk and written before the next question, so an interrupted run keeps
 * every accepted entity. Entities come in dependency order, so a reference always points at an
 * entity already decided; a reference to a skipped one is removed (and said so).
 */
export async function reviewEntities(
  units: PlannedContract[][],
  directory: string,
  options: { yes: boolean; input: NodeJS.ReadableStream; output: NodeJS.WritableStream },
): Promise<ReviewOutcome> {
  const outcome: ReviewOutcome = { accepted: [], skipped: [], written: [], interrupted: false, llm: [] };
  const say = (s: string): void => {
    options.output.write(s);
  };
  let rl: Interface | undefined;
  const lines: string[] = [];
  const waiters: ((l: string | null) => void)[] = [];
  let closed = false;
  if (!options.yes) {
    rl = createInterface({ input: options.input, terminal: false });
    rl.on("line", (l) => {
      const w = waiters.shift();
      if (w) w(l);
      else lines.push(l);
    });
    rl.on("close", () => {
      closed = true;
      for (const w of waiters.splice(0)) w(null);
    });
  }
  const ask = (q: string): Promise<string | null> => {
    say(q);
    const l = lines.shift();
    if (l !== undefined) return Promise.resolve(l);
    if (closed) return Promise.resolve(null);
    return new Promise((resolve) => waiters.push(resolve));
  };
  // Ctrl-C ends the review like `q`: what was accepted is on disk already, and the summary says so.
  const onInterrupt = (): void => {
    closed = true;
    outcome.interrupted = true;
    say("\n");
    for (const w of waiters.splice(0)) w(null);
  };
  if (!options.yes) process.once("SIGINT", onInterrupt);
  const skippedFqns = new Set<string>();
  try {
    for (let i = 0; i < units.length; i++) {
      let unit = (units[i] as PlannedContract[]).map((c) => stripSkipped(c, skippedFqns, say));
      let entity = unit.find((c) => c.kind === "Entity") as PlannedContract;
      for (;;) {
        say(`\n--- ${i + 1}/${units.length}: ${entity.fqn} ---\n`);
        for (const c of unit) say(`# ${c.file}\n${printContract(c)}`);
        let answer = options.yes ? "a" : await ask("Accept [a], skip [s], edit [e], quit [q]? ");
        if (answer === null) {
          outcome.interrupted = true;
          return outcome;
        }
        answer = answer.trim().toLowerCase();
        if (answer === "q") {
          outcome.interrupted = true;
          return outcome;
        }
        if (answer === "s") {
          skippedFqns.add(entity.fqn);
          outcome.skipped.push(entity.name);
          say(`skipped ${entity.fqn}\n`);
          break;
        }
        if (answer === "e") {
          unit = editUnit(unit, entity, say);
          entity = unit.find((c) => c.kind === "Entity") as PlannedContract;
          continue;
        }
        if (answer !== "a") continue;
        const checked = checkPlanned(unit, directory);
        if (checked.rejected.length > 0) {
          for (const r of checked.rejected) for (const f of r.findings) say(`  ${formatFinding(f)}\n`);
          if (options.yes) {
            skippedFqns.add(entity.fqn);
            outcome.skipped.push(entity.name);
            say(`not written: ${entity.fqn} fails validation\n`);
            break;
          }
          say("not written: fix it with [e]dit, or [s]kip it\n");
          continue;
        }
        const written = writeContracts(checked.accepted, directory);
        outcome.written.push(...written);
        outcome.accepted.push(entity.name);
        for (const c of checked.accepted) if (c.fromLlm && c.fromLlm.length > 0) outcome.llm.push({ fqn: c.fqn, paths: c.fromLlm });
        say(`wrote ${written.join(", ")}\n`);
        break;
      }
    }
  } finally {
    process.removeListener("SIGINT", onInterrupt);
    rl?.close();
    // What came from the LLM, of what was written (also when the review was stopped early).
    for (const l of llmLines(outcome.llm)) say(`${l}\n`);
  }
  return outcome;
}

function stripSkipped(c: PlannedContract, skipped: ReadonlySet<string>, say: (s: string) => void): PlannedContract {
  if (c.kind !== "Entity" || skipped.size === 0) return c;
  const copy = { ...c, data: structuredClone(c.data) };
  const fields = (copy.data.spec as { fields: Record<string, Record<string, unknown>> }).fields;
  for (const [name, def] of Object.entries(fields)) {
    const ref = def.references as { entity?: string } | undefined;
    if (ref?.entity && skipped.has(ref.entity)) {
      delete def.references;
      say(`${c.name}.${name}: reference to ${ref.entity} removed (skipped)\n`);
    }
  }
  return copy;
}

/** Opens the entity contract in $VISUAL or $EDITOR and takes back what the user saved. */
function editUnit(unit: PlannedContract[], entity: PlannedContract, say: (s: string) => void): PlannedContract[] {
  const editor = process.env.VISUAL || process.env.EDITOR || "vi";
  const dir = mkdtempSync(join(tmpdir(), "charter-edit-"));
  const file = join(dir, `${entity.name}.contract.yaml`);
  try {
    writeFileSync(file, printContract(entity));
    const r = spawnSync(editor, [file], { stdio: "inherit", shell: /\s/.test(editor) });
    if (r.status !== 0) {
      say(`the editor exited with ${r.status}; nothing changed\n`);
      return unit;
    }
    const data: unknown = parse(readFileSync(file, "utf8"));
    if (data === null || typeof data !== "object" || Array.isArray(data)) {
      say("the edited contract is not a mapping; nothing changed\n");
      return unit;
    }
    return unit.map((c) => (c === entity ? { ...c, data: data as Record<string, unknown> } : c));
  } catch (e) {
    say(`the edited contract does not parse (${e instanceof Error ? e.message.split("\n")[0] : String(e)}); nothing changed\n`);
    return unit;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
