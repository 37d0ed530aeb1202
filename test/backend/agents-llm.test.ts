import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { selectProvider } from "../../src/llm/index.js";
import { generateBackend } from "../support/backend.js";
import { NO_PROVIDER_ENV } from "../support/fake-llm.js";
import { ensureVenvFromFile, VENV_PYTHON } from "../support/python.js";

/** What the generated app/llm.py chooses for each environment, printed as JSON lines. */
const SCRIPT = `
import json, sys
from app.llm import NoProvider, AiSettings, select_provider
for case in json.load(sys.stdin):
    p = select_provider(AiSettings(_env_file=None, **case))
    print(json.dumps({"ok": False} if isinstance(p, NoProvider) else
                     {"ok": True, "provider": p.id, "model": p.model, "base_url": p.base_url, "api_key": p.api_key}))
`;

const CASES: Record<string, string>[] = [
  {},
  { ANTHROPIC_API_KEY: "a", OPENAI_API_KEY: "o" },
  { OPENAI_API_KEY: "o", GEMINI_API_KEY: "g" },
  { GEMINI_API_KEY: "g", GROQ_API_KEY: "q" },
  { GROQ_API_KEY: "q", OPENROUTER_API_KEY: "r" },
  { OPENROUTER_API_KEY: "r", OLLAMA_BASE_URL: "http://localhost:11434" },
  { OLLAMA_BASE_URL: "http://localhost:11434/", LMSTUDIO_BASE_URL: "http://localhost:1234/v1" },
  { LMSTUDIO_BASE_URL: "http://localhost:1234" },
  { OPENAI_BASE_URL: "http://127.0.0.1:9/v1/", GROQ_API_KEY: "q" },
  { OPENAI_BASE_URL: "http://127.0.0.1:9/v1", OPENAI_API_KEY: "k", ANTHROPIC_API_KEY: "a" },
  { SVC_AI_MODEL: "groq:llama-x", GROQ_API_KEY: "q", ANTHROPIC_API_KEY: "a" },
  { SVC_AI_MODEL: "gemini:gemini-pro", GEMINI_API_KEY: "g" },
  { SVC_AI_MODEL: "ollama", OLLAMA_BASE_URL: "http://h:11434" },
  { SVC_AI_MODEL: "anthropic:claude-x", OPENAI_API_KEY: "o" },
  { SVC_AI_MODEL: "nope:x", OPENAI_API_KEY: "o" },
  { SVC_AI_TIMEOUT: "zero", OPENAI_API_KEY: "o" },
  { ANTHROPIC_API_KEY: "  ", OPENAI_API_KEY: "o" },
];

/**
 * The agents of the generated app pick their model exactly as Charter's own tools do (src/llm/providers.ts): the Python app/llm.py against src/llm's selectProvider, case by case.
 */
describe("the generated app's provider selection", () => {
  let outDir: string;
  let backendDir: string;
  beforeAll(() => {
    outDir = mkdtempSync(join(tmpdir(), "charter-agents-llm-"));
    backendDir = generateBackend("examples/helpdesk", outDir);
    ensureVenvFromFile(join(backendDir, "requirements.txt"));
  });
  afterAll(() => rmSync(outDir, { recursive: true, force: true }));

  it("matches src/llm for every order, alias, base URL and error case", () => {
    const out = execFileSync(VENV_PYTHON, ["-c", SCRIPT], {
      cwd: backendDir,
      input: JSON.stringify(CASES),
      encoding: "utf8",
      env: { PATH: process.env.PATH ?? "", ...NO_PROVIDER_ENV },
    });
    const python = out
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(python).toHaveLength(CASES.length);
    CASES.forEach((env, i) => {
      const ts = selectProvider({ ...NO_PROVIDER_ENV, ...env });
      const py = python[i];
      expect(py.ok, JSON.stringify(env)).toBe(ts.ok);
      if (!ts.ok) return;
      expect({ provider: py.provider, model: py.model }, JSON.stringify(env)).toEqual({ provider: ts.provider, model: ts.model });
      // Hosted providers the TS side reaches through their own SDK have no base URL there.
      if (ts.baseURL) expect(py.base_url, JSON.stringify(env)).toBe(ts.baseURL);
      expect(py.api_key ?? undefined, JSON.stringify(env)).toBe(ts.apiKey);
    });
  });
});
