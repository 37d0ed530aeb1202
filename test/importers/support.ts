import { expect } from "vitest";
import { runCharter } from "../support/cli.js";

/** What an import wrote passes `charter forge validate` with no error. */
export function validates(dir: string): void {
  const r = runCharter(["forge", "validate", dir]);
  expect(r.stdout).toMatch(/0 errors/);
  expect(r.status).toBe(0);
}
