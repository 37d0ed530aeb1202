import { resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import type { Connection } from "vscode-languageserver/node.js";
import type { Finding } from "../contracts/index.js";
import type { FullCheckReply, FullCheckRequest } from "./full-check.js";
import { toDiagnostic } from "./ranges.js";
import type { Session } from "./session.js";
import { DOMAIN_WIDE_CODES } from "./workspace.js";

/** Quiet time after an edit before the whole domain is checked again in the worker. */
const FULL_CHECK_DELAY_MS = 400;

/**
 * The diagnostics of the open domain: an edit is checked at once on the contracts it can affect
 * (Workspace.checkScope), and the whole domain again in a worker thread once typing pauses, which
 * settles the domain-wide findings. A full check that comes back after a newer edit is dropped.
 */
export class Diagnostics {
  /** The last full check's findings by file; the domain-wide ones are kept beside each scoped check. */
  private fullFindings = new Map<string, Finding[]>();
  private readonly published = new Map<string, string>();
  private worker: Worker | null = null;
  private generation = 0;
  private running: number | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly connection: Connection,
    private readonly session: Session,
  ) {}

  /** Checks what an edit of `changed` affects and shows it at once. */
  recheck(changed: string[], formerFqns: (string | null)[]): void {
    const ws = this.session.ws;
    if (!ws) return;
    this.generation++;
    const scoped = ws.checkScope(ws.affectedBy(changed, formerFqns));
    for (const [p, findings] of scoped) {
      const wide = (this.fullFindings.get(p) ?? []).filter((f) => DOMAIN_WIDE_CODES.has(f.code));
      this.publish(p, [...findings, ...wide]);
    }
    this.scheduleFullCheck();
  }

  runFullCheck(): void {
    const ws = this.session.ws;
    if (!ws) return;
    if (this.running !== null) {
      this.scheduleFullCheck();
      return;
    }
    if (!this.worker) {
      this.worker = new Worker(fileURLToPath(new URL("./full-check.js", import.meta.url)));
      this.worker.unref();
      this.worker.on("message", (reply: FullCheckReply) => this.onFullCheck(reply));
    }
    this.running = this.generation;
    const req: FullCheckRequest = { id: this.generation, root: ws.root, sources: [...ws.overlays] };
    this.worker.postMessage(req);
  }

  async dispose(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    await this.worker?.terminate();
  }

  private publish(absPath: string, findings: Finding[]): void {
    this.session.shown.set(absPath, findings);
    const text = this.session.textOf(absPath);
    const diagnostics = findings.map((f) => toDiagnostic(f, text));
    const key = JSON.stringify(diagnostics);
    if (this.published.get(absPath) === key) return;
    this.published.set(absPath, key);
    void this.connection.sendDiagnostics({ uri: pathToFileURL(absPath).href, diagnostics });
  }

  private scheduleFullCheck(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.runFullCheck(), FULL_CHECK_DELAY_MS);
    this.timer.unref();
  }

  private onFullCheck(reply: FullCheckReply): void {
    this.running = null;
    if (reply.error) this.connection.console.error(`charter: full check failed: ${reply.error}`);
    // An edit came in meanwhile: these findings describe texts that are gone.
    if (reply.id !== this.generation) {
      this.scheduleFullCheck();
      return;
    }
    const next = new Map<string, Finding[]>();
    for (const f of reply.findings) {
      const p = resolve(f.file);
      const list = next.get(p);
      if (list) list.push(f);
      else next.set(p, [f]);
    }
    for (const p of new Set([...this.session.shown.keys(), ...next.keys()])) this.publish(p, next.get(p) ?? []);
    this.fullFindings = next;
  }
}
