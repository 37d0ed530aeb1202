import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateBackend } from "../support/backend.js";
import { ensureVenvFromFile, VENV_PYTHON } from "../support/python.js";

/**
 * The generated app as a FastAPI developer tests it: in process, through TestClient, with a
 * repository swapped by `app.dependency_overrides` (app/deps.py), and with the answers checked
 * against their response models while RESPONSE_VALIDATION is on (app/responses.py); and
 * app/records.fill, which refuses a computed kind it does not know. The script prints one JSON
 * object of what it saw; the assertions are made here.
 */
const SCRIPT = `
import json

import fastapi.dependencies.utils
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from app import deps, healer
from app.main import app
from app.records import fill

# FastAPI's own reading of a body: app/bodies.py parses a valid JSON body in one pass instead.
fastapi_body_reads = []
_read_body = fastapi.dependencies.utils.request_body_to_args


async def counted_read_body(*args, **kwargs):
    fastapi_body_reads.append(1)
    return await _read_body(*args, **kwargs)


fastapi.dependencies.utils.request_body_to_args = counted_read_body

# What a 500 reports to the Healer, by exception class.
reported = []
healer.report = lambda request, exc, status: reported.append(type(exc).__name__)


class WrongShape:
    """A repository whose records lack required fields and carry a name of the wrong type."""

    calls = 0

    async def get(self, record_id):
        WrongShape.calls += 1
        return {"id": str(record_id), "name": 42}


seen = {}
with TestClient(app, raise_server_exceptions=False) as client:
    created = client.post("/items", json={"name": "first", "priority": "low"})
    seen["create"] = created.status_code
    seen["fastapi_body_reads"] = len(fastapi_body_reads)
    seen["invalid_create"] = client.post("/items", json={"name": 42}).status_code
    seen["fastapi_body_reads_invalid"] = len(fastapi_body_reads)
    # The resource's router is included the FastAPI way, not spliced into the app's own routes.
    seen["spliced"] = [route.path_format for route in app.routes if isinstance(route, APIRoute) and route.path_format.startswith("/items")]
    seen["url"] = app.url_path_for("get_item", record_id="abc")
    record_id = created.json()["id"]
    seen["get"] = client.get(f"/items/{record_id}").status_code
    seen["list"] = client.get("/items").status_code

    app.dependency_overrides[deps.item_repository] = WrongShape
    wrong = client.get(f"/items/{record_id}")
    seen["wrong_status"] = wrong.status_code
    seen["wrong_body"] = wrong.json()
    seen["wrong_calls"] = WrongShape.calls
    seen["reported"] = reported

    app.dependency_overrides.clear()
    seen["restored"] = client.get(f"/items/{record_id}").json()["name"]

try:
    fill({}, {"created_at": "yesterday"}, "someone")
    seen["unknown_fill"] = "ignored"
except ValueError as exc:
    seen["unknown_fill"] = str(exc)
print(json.dumps(seen))
`;

describe("the generated FastAPI app under TestClient", () => {
  let outDir: string;
  let backendDir: string;

  beforeAll(() => {
    outDir = mkdtempSync(join(tmpdir(), "charter-idioms-"));
    backendDir = generateBackend("bench/backend-domain", outDir);
    ensureVenvFromFile(join(backendDir, "requirements.txt"));
    writeFileSync(join(outDir, "idioms_script.py"), SCRIPT);
  }, 600_000);

  afterAll(() => {
    if (outDir) rmSync(outDir, { recursive: true, force: true });
  });

  const run = (env: Record<string, string>): Record<string, unknown> => {
    const base = { ...process.env };
    for (const name of ["APP_ENV", "RESPONSE_VALIDATION", "SVC_HEALER_URL"]) delete base[name];
    const out = execFileSync(VENV_PYTHON, [join(outDir, "idioms_script.py")], {
      cwd: backendDir,
      encoding: "utf8",
      env: { ...base, PYTHONPATH: backendDir, PYTHONDONTWRITEBYTECODE: "1", DATABASE_BACKEND: "memory", ...env },
      timeout: 120_000,
    });
    return JSON.parse(out.trim().split("\n").at(-1) ?? "{}") as Record<string, unknown>;
  };

  it.each([
    ["APP_ENV=test", { APP_ENV: "test" }],
    ["APP_ENV=development", { APP_ENV: "development" }],
    ["RESPONSE_VALIDATION=on in production", { APP_ENV: "production", RESPONSE_VALIDATION: "on" }],
  ])("with %s, a repository swapped by dependency_overrides that answers a wrong shape is a 500", (_name, env) => {
    const seen = run(env);
    // Real records pass the check: it refuses what is wrong, not everything.
    expect(seen).toMatchObject({ create: 201, get: 200, list: 200 });
    // The override was called instead of the real repository, and its answer was refused.
    expect(seen.wrong_calls).toBe(1);
    expect(seen.wrong_status).toBe(500);
    expect(seen.wrong_body).toEqual({ error: "internal_error", message: "an internal error occurred", request_id: expect.any(String) });
    expect(seen.reported).toEqual(["ResponseValidationError"]);
    expect(seen.restored).toBe("first");
  });

  it("includes the resource's router and reads a valid JSON body in one pass, an invalid one FastAPI's way", () => {
    const seen = run({});
    expect(seen.spliced).toEqual([]);
    expect(seen.url).toBe("/items/abc");
    // The valid body never reached FastAPI's body reading (app/bodies.py on an included route);
    // the invalid one went to FastAPI's handler, which answers 422 as it always does.
    expect(seen.fastapi_body_reads).toBe(0);
    expect(seen.invalid_create).toBe(422);
    expect(seen.fastapi_body_reads_invalid).toBe(1);
  });

  it("refuses a computed kind it does not know rather than leave the field unset", () => {
    expect(run({}).unknown_fill).toBe("unknown fill kind 'yesterday' for 'created_at'");
  });

  it("in production (the default), answers go out unchecked: the fast path", () => {
    const seen = run({});
    expect(seen).toMatchObject({ create: 201, get: 200, list: 200, wrong_calls: 1, wrong_status: 200, restored: "first", reported: [] });
    expect(seen.wrong_body).toMatchObject({ name: 42 });
  });
});
