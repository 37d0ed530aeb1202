import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 600_000,
    // End-to-end suites start servers on fixed-per-suite ports and build projects; two cores here.
    maxWorkers: 2,
  },
});
