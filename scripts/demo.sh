#!/usr/bin/env bash
# The demo: scaffold a project, validate and compile the bundled helpdesk example, and print its
# summary. Run from a fresh clone; it installs what it needs first.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >/dev/null
demo=$(mktemp -d)
trap 'rm -rf "$demo"' EXIT
node dist/cli/charter-init.js demo_desk --path "$demo"
node dist/cli/charter.js forge validate "$demo/demo_desk/domains/demo_desk"
node dist/cli/charter.js forge validate examples/helpdesk
node dist/cli/charter.js forge compile examples/helpdesk
