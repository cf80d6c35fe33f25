#!/usr/bin/env bash
# The import contracts of pyproject.toml ([tool.importlinter]) with import-linter's lint-imports,
# on the installed layout (see scripts/installed_layout.sh). Extra arguments go to lint-imports.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=scripts/installed_layout.sh
. "$root/scripts/installed_layout.sh"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
installed_layout "$stage"
cd "$stage"
PYTHONPATH="$stage" lint-imports --no-cache "$@" "${RAMIEL_IMPORT_CONFIG:-$root/pyproject.toml}"
