#!/usr/bin/env bash
# The whole test suite, from a fresh machine: installs what it needs, then runs every test.
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
const skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
console.log(`${r.numPassedTests} passed, ${r.numFailedTests} failed` + (skipped ? `, ${skipped} skipped` : ""));
if (r.numTotalTests === 0) process.exit(1);
' || status=1
exit $status
