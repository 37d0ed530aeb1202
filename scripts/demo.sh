#!/usr/bin/env bash
# The demo: `charter dev` on the bundled helpdesk example. It generates the example, then runs its
# backend (memory store kept across restarts, or PostgreSQL when DATABASE_URL is set), the Healer
# service and the admin frontend, prints their addresses and the login hint, seeds a few records
# once every service answers (into an empty store only), and regenerates and restarts whenever a
# contract under examples/helpdesk changes; the Healer fixes what it can and keeps its state in
# examples/.forge/ (git-ignored). Ctrl-C stops everything. From a fresh clone it first installs what it needs
# (scripts/setup.sh; the first frontend build takes a few minutes and is cached afterwards).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
bash scripts/setup.sh
port="${PORT:-8000}"
healer_port="${SVC_HEALER_PORT:-8083}"
frontend_port="${FRONTEND_PORT:-3000}"
# The venv and caches of this checkout, shared with the tests.
export CHARTER_VENV="$root/.cache/venv" CHARTER_CACHE_DIR="$root/.cache/dev" npm_config_cache="$root/.cache/npm"
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
node dist/cli/charter.js dev examples/helpdesk --port "$port" --healer-port "$healer_port" --frontend-port "$frontend_port" &
dev=$!
"$root/.cache/venv/bin/python" scripts/demo-seed.py "$dev" "http://127.0.0.1:$port" \
  "http://127.0.0.1:$healer_port/healer/health" "http://127.0.0.1:$frontend_port/login" || echo "seeding the demo data failed" >&2
# `wait` returns early when a trapped signal arrives, so the traps above run at once.
wait "$dev"
