import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 600_000,
    // End-to-end suites start servers on fixed-per-suite ports and build projects; two cores here.
    maxWorkers: 2,
    // expect.poll waits on pages and background work (server-rendered pages, the dispatcher); its
    // default of 1 s is shorter than a page load on this two-core machine under the suite's load.
    expect: { poll: { timeout: 10_000 } },
  },
});
