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
  const prompt = options.yes ? undefined : new Prompt(options.input, say);
  // Ctrl-C ends the review like `q`: what was accepted is on disk already, and the summary says so.
  const onInterrupt = (): void => {
    outcome.interrupted = true;
    say("\n");
    prompt?.close();
  };
  if (prompt) process.once("SIGINT", onInterrupt);
  const review: Review = { directory, yes: options.yes, prompt, say, outcome, skippedFqns: new Set() };
  try {
    for (let i = 0; i < units.length; i++) {
      const unit = (units[i] as PlannedContract[]).map((c) => stripSkipped(c, review.skippedFqns, say));
      if ((await reviewUnit(unit, `${i + 1}/${units.length}`, review)) === "quit") {
        outcome.interrupted = true;
        return outcome;
      }
    }
  } finally {
    process.removeListener("SIGINT", onInterrupt);
    prompt?.end();
    // What came from the LLM, of what was written (also when the review was stopped early).
    for (const l of llmLines(outcome.llm)) say(`${l}\n`);
  }
  return outcome;
}

/** What deciding one entity needs: where to write, how to ask, and the outcome so far. */
interface Review {
  directory: string;
  yes: boolean;
  prompt: Prompt | undefined;
  say: (s: string) => void;
  outcome: ReviewOutcome;
  skippedFqns: Set<string>;
}

/**
 * One entity's unit, shown and asked about until it is accepted (validated and written), skipped,
 * or the review is quit. With --yes it is accepted, or skipped when it fails validation.
 */
async function reviewUnit(first: PlannedContract[], position: string, review: Review): Promise<"done" | "quit"> {
  const { say, outcome } = review;
  let unit = first;
  let entity = unit.find((c) => c.kind === "Entity") as PlannedContract;
  const skip = (why: string): "done" => {
    review.skippedFqns.add(entity.fqn);
    outcome.skipped.push(entity.name);
    say(`${why}\n`);
    return "done";
  };
  for (;;) {
    say(`\n--- ${position}: ${entity.fqn} ---\n`);
    for (const c of unit) say(`# ${c.file}\n${printContract(c)}`);
    const answer = review.prompt ? await review.prompt.ask("Accept [a], skip [s], edit [e], quit [q]? ") : "a";
    if (answer === null || answer.trim().toLowerCase() === "q") return "quit";
    const choice = answer.trim().toLowerCase();
    if (choice === "s") return skip(`skipped ${entity.fqn}`);
    if (choice === "e") {
      unit = editUnit(unit, entity, say);
      entity = unit.find((c) => c.kind === "Entity") as PlannedContract;
      continue;
    }
    if (choice !== "a") continue;
    const checked = checkPlanned(unit, review.directory);
    if (checked.rejected.length > 0) {
      for (const r of checked.rejected) for (const f of r.findings) say(`  ${formatFinding(f)}\n`);
      if (review.yes) return skip(`not written: ${entity.fqn} fails validation`);
      say("not written: fix it with [e]dit, or [s]kip it\n");
      continue;
    }
    const written = writeContracts(checked.accepted, review.directory);
    outcome.written.push(...written);
    outcome.accepted.push(entity.name);
    for (const c of checked.accepted) if (c.fromLlm && c.fromLlm.length > 0) outcome.llm.push({ fqn: c.fqn, paths: c.fromLlm });
    say(`wrote ${written.join(", ")}\n`);
    return "done";
  }
}

/** Answers read line by line from the input; null once the input ends or the review is interrupted. */
class Prompt {
  private readonly rl: Interface;
  private readonly lines: string[] = [];
  private readonly waiters: ((l: string | null) => void)[] = [];
  private closed = false;

  constructor(
    input: NodeJS.ReadableStream,
    private readonly say: (s: string) => void,
  ) {
    this.rl = createInterface({ input, terminal: false });
    this.rl.on("line", (l) => {
      const w = this.waiters.shift();
      if (w) w(l);
      else this.lines.push(l);
    });
    this.rl.on("close", () => this.close());
  }

  ask(q: string): Promise<string | null> {
    this.say(q);
    const l = this.lines.shift();
    if (l !== undefined) return Promise.resolve(l);
    if (this.closed) return Promise.resolve(null);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** No more answers: every question waiting, and every later one, gets null. */
  close(): void {
    this.closed = true;
    for (const w of this.waiters.splice(0)) w(null);
  }

  end(): void {
    this.rl.close();
  }
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
