#!/usr/bin/env bash
# The demo: `charter dev` on the bundled helpdesk example. It generates the example, then runs its
# backend (memory store, or PostgreSQL when DATABASE_URL is set), the Healer service (when this
# build has `charter healer serve`) and the admin frontend, prints their addresses and the login
# hint, seeds a few records, and restarts the backend whenever a contract under examples/helpdesk
# changes. Ctrl-C stops everything. From a fresh clone it first installs what it needs
# (scripts/setup.sh; the first frontend build takes a few minutes and is cached afterwards).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
bash scripts/setup.sh
port="${PORT:-8000}"
# The venv and caches of this checkout, shared with the tests; Healer state stays out of the sources.
export CHARTER_VENV="$root/.cache/venv" CHARTER_CACHE_DIR="$root/.cache/dev" npm_config_cache="$root/.cache/npm"
mkdir -p .cache/demo
dev=""
stop() {
  if [ -n "$dev" ] && kill -0 "$dev" 2>/dev/null; then
    kill -INT "$dev" 2>/dev/null || true
    wait "$dev" 2>/dev/null || true
  fi
}
trap stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
node dist/cli/charter.js dev examples/helpdesk --port "$port" --project .cache/demo &
dev=$!
"$root/.cache/venv/bin/python" scripts/demo-seed.py "http://127.0.0.1:$port" || echo "seeding the demo data failed" >&2
# `wait` returns early when a trapped signal arrives, so the traps above run at once.
wait "$dev"
