#!/usr/bin/env bash
# The whole test suite, from a fresh machine: installs what it needs, then runs every test of
# both tiers (test/support/tiers.ts; `npm test` runs the unit tier alone).
# Prints a closing line "N passed, N failed" for CI.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export NEXT_TELEMETRY_DISABLED=1
mkdir -p test-output
npx biome check . >/dev/null || { npx biome check . | tail -40; echo "lint failed"; exit 1; }
npm run --silent typecheck
set +e
npx vitest run --reporter=default --reporter=json --outputFile.json=test-output/vitest.json "$@"
status=$?
set -e
node -e '
const r = JSON.parse(require("fs").readFileSync("test-output/vitest.json", "utf8"));
// A file split between the tiers runs in both; each tier skips the tests of the other, which are
// not skipped tests of the suite.
const ran = new Set();
for (const f of r.testResults) for (const t of f.assertionResults) if (t.status !== "skipped" && t.status !== "pending") ran.add(f.name + "\0" + t.fullName);
let split = 0;
for (const f of r.testResults) for (const t of f.assertionResults) if ((t.status === "skipped" || t.status === "pending") && ran.has(f.name + "\0" + t.fullName)) split++;
const skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0) - split;
console.log(`${r.numPassedTests} passed, ${r.numFailedTests} failed` + (skipped ? `, ${skipped} skipped` : ""));
if (r.numTotalTests === 0) process.exit(1);
' || status=1
exit $status
