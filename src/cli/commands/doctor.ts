import { spawnSync } from "node:child_process";
import { Socket } from "node:net";
import { resolve } from "node:path";
import { Command, Option } from "commander";
import { projectEnv } from "../../healer/project.js";
// providers.js, not the llm index: the index loads the AI SDK (about 90 ms), which every charter
// command would pay for at start-up while doctor only reads the provider table.
import { PROVIDERS, selectProvider } from "../../llm/providers.js";
import { formatOption, paint, useColor } from "../output.js";

type Level = "ok" | "warn" | "fail";

interface Check {
  name: string;
  level: Level;
  detail: string;
}

const DEFAULT_DATABASE_URL = "postgresql://app:app@localhost:5432/app";

/** `charter doctor`: what this machine and environment give Charter, and what to set when something is missing. */
export function doctorCommand(): Command {
  return new Command("doctor")
    .description("check Node, Python, PostgreSQL, the LLM provider the Healer would use, and the Healer service")
    .addOption(new Option("--project <dir>", "project root whose .env is read (default: the current directory)"))
    .addOption(formatOption())
    .action(async (opts: { project?: string; format: string }) => {
      const env = projectEnv(resolve(opts.project ?? "."));
      const checks = await runChecks(env);
      if (opts.format === "json") {
        process.stdout.write(`${JSON.stringify({ checks }, null, 2)}\n`);
      } else {
        const color = useColor();
        const tint: Record<Level, "green" | "yellow" | "red"> = { ok: "green", warn: "yellow", fail: "red" };
        for (const c of checks)
          process.stdout.write(`${paint(c.level.padEnd(4), tint[c.level], color)}  ${c.name.padEnd(10)}  ${c.detail}\n`);
      }
      if (checks.some((c) => c.level === "fail")) process.exitCode = 1;
    });
}

async function runChecks(env: NodeJS.ProcessEnv): Promise<Check[]> {
  const checks: Check[] = [nodeCheck(), pythonCheck(), providerCheck(env)];
  checks.splice(2, 0, await postgresCheck(env.DATABASE_URL || DEFAULT_DATABASE_URL));
  if (env.SVC_HEALER_URL) checks.push(await healerCheck(env.SVC_HEALER_URL));
  return checks;
}

function nodeCheck(): Check {
  const major = Number(process.versions.node.split(".")[0]);
  return major >= 20
    ? { name: "node", level: "ok", detail: `v${process.versions.node}` }
    : { name: "node", level: "fail", detail: `v${process.versions.node}; Charter needs Node.js 20 or newer` };
}

function pythonCheck(): Check {
  const r = spawnSync("python3", ["--version"], { encoding: "utf8", timeout: 5000 });
  if (r.error || r.status !== 0) {
    return { name: "python", level: "warn", detail: "python3 not found; the generated FastAPI backend needs Python 3.11 or newer" };
  }
  const version = (r.stdout || r.stderr).trim().replace(/^Python\s+/, "");
  const [maj, min] = version.split(".").map(Number);
  const ok = (maj ?? 0) > 3 || ((maj ?? 0) === 3 && (min ?? 0) >= 11);
  return ok
    ? { name: "python", level: "ok", detail: `Python ${version}` }
    : { name: "python", level: "warn", detail: `Python ${version}; the generated backend needs 3.11 or newer` };
}

/** Reachable means a TCP connection opens; credentials are the app's business. */
async function postgresCheck(url: string): Promise<Check> {
  let host = "localhost";
  let port = 5432;
  try {
    const u = new URL(url);
    host = u.hostname || host;
    port = Number(u.port || 5432);
  } catch {
    return { name: "postgres", level: "warn", detail: `DATABASE_URL is not a URL: ${url}` };
  }
  const where = `${host}:${port}`;
  const open = await new Promise<string | null>((resolveOpen) => {
    const s = new Socket();
    const done = (err: string | null): void => {
      s.destroy();
      resolveOpen(err);
    };
    s.setTimeout(2000, () => done("timed out"));
    s.once("error", (e) => done(e.message));
    s.connect(port, host, () => done(null));
  });
  return open === null
    ? { name: "postgres", level: "ok", detail: `reachable at ${where}` }
    : { name: "postgres", level: "warn", detail: `not reachable at ${where} (${open}); set DATABASE_URL or use DATABASE_BACKEND=memory` };
}

function providerCheck(env: NodeJS.ProcessEnv): Check {
  const choice = selectProvider(env);
  if (!choice.ok) {
    return {
      name: "llm",
      level: "warn",
      detail: `${choice.reason}; tier 2/3 Healer tickets fail until one is: ${choice.hint.replace(/; run `charter doctor` to check$/, "")}`,
    };
  }
  const where = choice.baseURL ? ` at ${choice.baseURL}` : "";
  const others = PROVIDERS.filter((p) => p.id !== choice.provider && env[p.envVar]?.trim()).map((p) => p.envVar);
  const also = others.length ? `; also set, not used: ${others.join(", ")}` : "";
  return {
    name: "llm",
    level: "ok",
    detail: `${choice.provider}/${choice.model}${where}, because ${choice.reason}; timeout ${choice.timeoutMs / 1000} s${also}`,
  };
}

async function healerCheck(url: string): Promise<Check> {
  const health = `${url.replace(/\/+$/, "")}/healer/health`;
  try {
    const r = await fetch(health, { signal: AbortSignal.timeout(2000) });
    return r.ok
      ? { name: "healer", level: "ok", detail: `${health} answers` }
      : { name: "healer", level: "warn", detail: `${health} answered HTTP ${r.status}` };
  } catch (e) {
    return {
      name: "healer",
      level: "warn",
      detail: `SVC_HEALER_URL=${url} not reachable (${(e as Error).message}); start \`charter healer serve\``,
    };
  }
}
