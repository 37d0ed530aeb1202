import { mkdtempSync, rmSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXAMPLE_DEV_START_MS, type ExampleDev, killDevTree, startExampleDev } from "../support/dev-example.js";
import type { DevRun } from "./support.js";

/**
 * Issue 39 item 5 under `charter dev`: the client address the backend's login throttle counts is
 * the browser's connection, whatever X-Forwarded-For the browser sends. The front door writes the
 * header, the frontend's server keeps only the door's (client-address.cjs), the backend believes
 * only the frontend's hop (TRUSTED_PROXIES, uvicorn without proxy headers).
 */

const root = mkdtempSync(join(tmpdir(), "charter-dev-client-"));

/** A POST from a chosen loopback address (Linux routes all of 127/8 to lo): one client each. */
function post(url: string, from: string, body: unknown, forwardedFor?: string): Promise<number> {
  return new Promise((done, fail) => {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (forwardedFor !== undefined) headers["x-forwarded-for"] = forwardedFor;
    const req = httpRequest(url, { method: "POST", localAddress: from, headers }, (res) => {
      res.resume();
      res.on("end", () => done(res.statusCode ?? 0));
    });
    req.on("error", fail);
    req.end(JSON.stringify(body));
  });
}

describe("charter dev: the client address is the connection's, never the client's header", () => {
  let dev: DevRun;
  let ports: ExampleDev["ports"];

  beforeAll(async () => {
    ({ dev, ports } = await startExampleDev(root));
  }, EXAMPLE_DEV_START_MS);

  afterAll(async () => {
    killDevTree(dev);
    rmSync(root, { recursive: true, force: true });
  });

  it("through the frontend: a rotating X-Forwarded-For is still one client; its lockout is not another's", async () => {
    const session = `http://127.0.0.1:${ports.frontend}/session`;
    const statuses: number[] = [];
    for (let i = 0; i < 21; i++) {
      statuses.push(await post(session, "127.0.0.4", { email: `guess${i}@example.com`, password: "wrong" }, `198.51.100.${i}`));
    }
    expect(statuses.slice(0, 20)).toEqual(Array(20).fill(401));
    expect(statuses[20]).toBe(429);
    // Naming the other client's address does not get the locked-out one through either.
    expect(await post(session, "127.0.0.4", { email: "admin@example.com", password: "admin-password" }, "127.0.0.5")).toBe(429);
    // Another browser signs in.
    expect(await post(session, "127.0.0.5", { email: "admin@example.com", password: "admin-password" })).toBe(204);
    // The pages still come through the door as before.
    expect((await fetch(`http://127.0.0.1:${ports.frontend}/login`)).status).toBe(200);
  }, 120_000);

  // A guard on how far the trust reaches: the frontend's hop (127.0.0.1 here), not all of loopback.
  it("straight to the backend: a loopback caller that is not the frontend's hop cannot pick its address", async () => {
    const login = `http://127.0.0.1:${ports.api}/auth/login`;
    const statuses: number[] = [];
    for (let i = 0; i < 21; i++) {
      statuses.push(await post(login, "127.0.0.6", { email: `direct${i}@example.com`, password: "wrong" }, `203.0.113.${i}`));
    }
    expect(statuses.slice(0, 20)).toEqual(Array(20).fill(401));
    expect(statuses[20]).toBe(429);
    expect(await post(login, "127.0.0.7", { email: "admin@example.com", password: "admin-password" })).toBe(200);
  }, 120_000);
});
