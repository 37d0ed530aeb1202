import { type ChildProcess, spawn } from "node:child_process";
import { resolve } from "node:path";
import {
  createProtocolConnection,
  type Diagnostic,
  type ProtocolConnection,
  PublishDiagnosticsNotification,
  StreamMessageReader,
  StreamMessageWriter,
} from "vscode-languageserver-protocol/node";

export const CHARTER = resolve("dist/cli/charter.js");

/** A real LSP client: `charter lsp --stdio` in a child process, spoken to over its standard streams. */
export class LspClient {
  readonly connection: ProtocolConnection;
  readonly diagnostics = new Map<string, Diagnostic[]>();
  private readonly waiters: { uri: string; test: (d: Diagnostic[]) => boolean; done: (d: Diagnostic[]) => void }[] = [];
  private readonly child: ChildProcess;

  constructor(cwd: string) {
    this.child = spawn(process.execPath, [CHARTER, "lsp", "--stdio"], { cwd, stdio: ["pipe", "pipe", "inherit"] });
    this.connection = createProtocolConnection(
      new StreamMessageReader(this.child.stdout as NodeJS.ReadableStream),
      new StreamMessageWriter(this.child.stdin as NodeJS.WritableStream),
    );
    this.connection.onNotification(PublishDiagnosticsNotification.type, (p) => {
      this.diagnostics.set(p.uri, p.diagnostics);
      for (const w of [...this.waiters]) {
        if (w.uri === p.uri && w.test(p.diagnostics)) {
          this.waiters.splice(this.waiters.indexOf(w), 1);
          w.done(p.diagnostics);
        }
      }
    });
    this.connection.listen();
  }

  /** Resolves with the first diagnostics of `uri` that pass `test` (those already received count). */
  waitFor(uri: string, test: (d: Diagnostic[]) => boolean = () => true, timeoutMs = 20_000): Promise<Diagnostic[]> {
    const now = this.diagnostics.get(uri);
    if (now && test(now)) return Promise.resolve(now);
    return new Promise((done, fail) => {
      const timer = setTimeout(
        () => fail(new Error(`no matching diagnostics for ${uri}; last: ${JSON.stringify(this.diagnostics.get(uri))}`)),
        timeoutMs,
      );
      this.waiters.push({
        uri,
        test,
        done: (d) => {
          clearTimeout(timer);
          done(d);
        },
      });
    });
  }

  async close(): Promise<void> {
    try {
      await this.connection.sendRequest("shutdown");
      await this.connection.sendNotification("exit");
    } catch {
      // already gone
    }
    this.connection.dispose();
    this.child.kill();
  }
}
