import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateBackend } from "../support/backend.js";
import { REPO_ROOT } from "../support/cli.js";
import { ensureVenvFromFile, VENV_PYTHON } from "../support/python.js";

/*
 * app/bodies.py reads a write's JSON body with pydantic's own parser instead of FastAPI's three
 * steps, and hands FastAPI's handler every body it does not accept. What a client sees must not
 * change: the same requests, sent to the app as generated and to the same app with the route class
 * reduced to FastAPI's (JsonBodyRoute.get_route_handler = APIRoute's), get the same answers, byte
 * for byte once ids and times are masked. The requests are the ones a parser gets wrong: broken
 * and odd JSON, other encodings, wrong types, no or another content type, a body streamed past the
 * limit.
 */

const SCRIPT = String.raw`
import json, os, re, sys
from fastapi.routing import APIRoute

if os.environ.get("BODIES") == "fastapi":
    from app import bodies
    bodies.JsonBodyRoute.get_route_handler = APIRoute.get_route_handler

from fastapi.testclient import TestClient
from app.main import app

ID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
TIME = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(\+00:00|Z)")
JSON = {"content-type": "application/json"}
MB = 1_048_576


def chunks(total):
    yield b'{"name": "'
    sent = 10
    while sent < total:
        yield b"x" * 65536
        sent += 65536
    yield b'"}'


with TestClient(app, raise_server_exceptions=False) as client:
    made = client.post("/items", json={"name": "seed"}).json()["id"]
    cases = []
    for content, headers in [
        (b'{"name": "a", "priority": "high"}', JSON),
        (b'{"name": "a"}', {"content-type": "application/json; charset=utf-8"}),
        (b'{"name": "a"}', {"content-type": "application/merge-patch+json"}),
        (b'{"name": "a"}', {"content-type": "Application/JSON"}),
        (b'{"name": "a"}', {}),
        (b'{"name": "a"}', {"content-type": "text/plain"}),
        (b"", JSON),
        (b"{", JSON),
        (b'{"name": "a"} x', JSON),
        (b'{"name": "a",}', JSON),
        (b'{"name": NaN}', JSON),
        (b'{"name": "a", "priority": Infinity}', JSON),
        (b"[]", JSON),
        (b'"a"', JSON),
        (b"null", JSON),
        (b"{}", JSON),
        (b'{"name": "a", "bogus": 1}', JSON),
        (b'{"name": 5}', JSON),
        (b'{"name": "a", "priority": "urgent"}', JSON),
        (b'{"name": "a\\u0000b"}', JSON),
        (b'{"name": "\\ud800"}', JSON),
        (b'{"name": "a", "name": "b"}', JSON),
        (b'\xef\xbb\xbf{"name": "a"}', JSON),
        ('{"name": "a"}'.encode("utf-16"), JSON),
        (b'{"name": "\xff"}', JSON),
        (b'{"name": "' + b"y" * 5000 + b'"}', JSON),
        (b'{"name": "a", "state": "done"}', JSON),
        (b'{"name": "a", "id": "' + made.encode() + b'"}', JSON),
    ]:
        cases.append(("POST", "/items", content, headers))
    for content in [b'{"priority": "low"}', b"{}", b'{"name": null}', b"{", b"", b'{"number": "X"}', b"[1]"]:
        cases.append(("PATCH", f"/items/{made}", content, JSON))
    for content in [b'{"state": "in_progress"}', b'{"state": "bogus"}', b"{}", b"nope", b'{"state": "open", "x": 1}']:
        cases.append(("PUT", f"/items/{made}/state", content, JSON))
    cases.append(("PATCH", "/items/00000000-0000-4000-8000-000000000000", b'{"priority": "low"}', JSON))
    cases.append(("PATCH", "/items/not-an-id", b'{"priority": "low"}', JSON))

    out = []
    for method, path, content, headers in cases:
        r = client.request(method, path, content=content, headers={**headers, "x-request-id": "fixed-id"})
        out.append([method, path.replace(made, "{id}"), r.status_code, TIME.sub(b"T", ID.sub(b"ID", r.content)).decode()])
    # Streamed (no Content-Length) past MAX_BODY_BYTES: refused while it is read.
    r = client.post("/items", content=chunks(MB + 10), headers={**JSON, "x-request-id": "fixed-id"})
    out.append(["POST", "/items streamed", r.status_code, r.content.decode()])
    # An Idempotency-Key replay answers the stored first response.
    key = {**JSON, "idempotency-key": "same"}
    first = client.post("/items", content=b'{"name": "once"}', headers=key)
    again = client.post("/items", content=b'{"name": "once"}', headers=key)
    out.append(["POST", "/items replay", again.status_code, str(again.content == first.content)])
    print(json.dumps(out))
`;

describe("JSON bodies read in one pass", () => {
  let root: string;
  let backendDir: string;

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), "charter-json-bodies-"));
    backendDir = generateBackend(join(REPO_ROOT, "bench/backend-domain"), root);
    ensureVenvFromFile(join(backendDir, "requirements.txt"));
  }, 300_000);

  afterAll(() => rmSync(root, { recursive: true, force: true }));

  const answers = (bodies: string): unknown[][] => {
    const r = spawnSync(VENV_PYTHON, ["-c", SCRIPT], {
      cwd: backendDir,
      env: { ...process.env, APP_ENV: "development", DATABASE_BACKEND: "memory", LOG_REQUESTS: "false", BODIES: bodies },
      encoding: "utf8",
      timeout: 120_000,
    });
    expect(r.status, r.stderr).toBe(0);
    return JSON.parse(r.stdout);
  };

  it("answers every request as FastAPI's own body handling does", () => {
    const ours = answers("ours");
    const fastapi = answers("fastapi");
    expect(ours.length).toBe(fastapi.length);
    for (let i = 0; i < ours.length; i++) expect(ours[i], JSON.stringify(fastapi[i]).slice(0, 300)).toEqual(fastapi[i]);
    // The corpus reaches both sides of the switch: bodies accepted in one pass, and refusals.
    const statuses = new Set(ours.map((o) => o[2]));
    for (const s of [200, 201, 400, 404, 413, 415, 422]) expect(statuses, `no ${s} answer`).toContain(s);
    expect(ours.at(-1)).toEqual(["POST", "/items replay", 201, "True"]);
  }, 300_000);
});
