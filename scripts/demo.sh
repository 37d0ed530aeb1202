#!/usr/bin/env bash
# The demo: scaffold a project, validate and compile the bundled helpdesk example, generate its
# FastAPI backend (plus database schema and migrations) and serve it on the memory backend at
# http://127.0.0.1:8000 (Ctrl-C stops it). Run from a fresh clone; it installs what it needs first.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
bash scripts/setup.sh >/dev/null
demo=$(mktemp -d)
server=""
# uvicorn runs as a child (not exec'd), so this cleanup runs on a normal end, on an error and on
# Ctrl-C or SIGTERM: stop the server, then remove the temporary project.
cleanup() {
  if [ -n "$server" ] && kill -0 "$server" 2>/dev/null; then
    kill -TERM "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
  fi
  rm -rf "$demo"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
node dist/cli/charter-init.js demo_desk --path "$demo"
node dist/cli/charter.js forge validate "$demo/demo_desk/domains/demo_desk"
node dist/cli/charter.js forge validate examples/helpdesk
node dist/cli/charter.js forge compile examples/helpdesk

out="$demo/runtime"
for target in fastapi-prod postgres migrations; do
  if node dist/cli/charter.js forge generate examples/helpdesk --target "$target" --output "$out" >/dev/null; then
    echo "generated target $target into $out"
  elif [ "$target" = fastapi-prod ]; then
    echo "generation of $target failed" >&2
    exit 1
  fi
done
.cache/venv/bin/python -m pip install --quiet --disable-pip-version-check -r "$out/backend/requirements.txt"

port="${PORT:-8000}"
cat <<INFO

The helpdesk API runs at http://127.0.0.1:$port (memory backend; data resets on restart).
  Docs:   http://127.0.0.1:$port/docs
  Log in: curl -s -X POST http://127.0.0.1:$port/auth/login -H 'content-type: application/json' \\
            -d '{"email": "admin@example.com", "password": "admin-password"}'
          (also alice@example.com / agent-password, victor@example.com / viewer-password)
  Then:   curl -s http://127.0.0.1:$port/tickets -H "Authorization: Bearer <access_token>"
Press Ctrl-C to stop.
INFO
cd "$out/backend"
DATABASE_BACKEND=memory AUTH_ENABLED=true AUTH_SECRET="${AUTH_SECRET:-demo-secret-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')}" \
  "$root/.cache/venv/bin/python" -m uvicorn app.main:app --host 127.0.0.1 --port "$port" &
server=$!
"$root/.cache/venv/bin/python" "$root/scripts/demo-seed.py" "http://127.0.0.1:$port" || echo "seeding the demo data failed" >&2
# `wait` returns early when a trapped signal arrives, so the traps above run at once.
wait "$server"
