import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCharter } from "../support/cli.js";
import { NO_PROVIDER_ENV } from "../support/fake-llm.js";
import { freePort } from "../support/net.js";

const CLEAR = { ...NO_PROVIDER_ENV, SVC_HEALER_URL: "" };

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function doctor(env: Record<string, string>, cwd?: string): Record<string, { level: string; detail: string }> {
  const r = runCharter(["doctor", "--format", "json"], { env: { ...CLEAR, ...env }, ...(cwd ? { cwd } : {}) });
  expect(r.status, r.stderr).toBe(0);
  const { checks } = JSON.parse(r.stdout) as { checks: { name: string; level: string; detail: string }[] };
  return Object.fromEntries(checks.map((c) => [c.name, c]));
}

describe("charter doctor", () => {
  it("names the provider that would be used and why", () => {
    const c = doctor({ GROQ_API_KEY: "k", OLLAMA_BASE_URL: "http://127.0.0.1:11434" });
    expect(c.llm).toEqual({
      name: "llm",
      level: "ok",
      detail: expect.stringMatching(
        /^groq\/llama-3\.3-70b-versatile, because GROQ_API_KEY is set; timeout 60 s; also set, not used: OLLAMA_BASE_URL$/,
      ),
    });
    expect(doctor({ SVC_AI_MODEL: "ollama:qwen2.5", OLLAMA_BASE_URL: "http://127.0.0.1:11434" }).llm?.detail).toMatch(
      /^ollama\/qwen2\.5 at http:\/\/127\.0\.0\.1:11434\/v1, because SVC_AI_MODEL=ollama:qwen2\.5/,
    );
  });

  it("without a provider it warns and says what to set", () => {
    const c = doctor({});
    expect(c.llm?.level).toBe("warn");
    expect(c.llm?.detail).toMatch(
      /no LLM provider is configured; tier 2\/3 Healer tickets fail until one is: set one of ANTHROPIC_API_KEY/,
    );
    expect(doctor({ SVC_AI_MODEL: "mistral:large" }).llm?.detail).toMatch(/unknown provider "mistral"/);
  });

  it("reads provider keys from the project's .env", () => {
    const dir = mkdtempSync(join(tmpdir(), "charter-doctor-"));
    dirs.push(dir);
    writeFileSync(join(dir, ".env"), "# keys\nOPENAI_API_KEY=sk-test\n");
    expect(doctor({}, dir).llm?.detail).toMatch(/^openai\/gpt-4\.1-mini, because OPENAI_API_KEY is set/);
  });

  it("checks node, python and that PostgreSQL and the Healer are reachable", async () => {
    const closed = await freePort();
    const c = doctor({ DATABASE_URL: `postgresql://app:app@127.0.0.1:${closed}/app`, SVC_HEALER_URL: `http://127.0.0.1:${closed}` });
    expect(c.node?.level).toBe("ok");
    expect(c.python?.detail).toMatch(/Python 3\.\d+/);
    expect(c.postgres).toMatchObject({ level: "warn", detail: expect.stringContaining(`not reachable at 127.0.0.1:${closed}`) });
    expect(c.healer).toMatchObject({ level: "warn", detail: expect.stringContaining("charter healer serve") });
    expect(doctor({ DATABASE_URL: "postgresql://postgres@127.0.0.1:5432/postgres" }).postgres?.level).toBe("ok");
  });
});
