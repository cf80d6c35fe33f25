#!/usr/bin/env bash
# The import contracts of pyproject.toml ([tool.importlinter]) with import-linter's lint-imports,
# on the installed layout (see scripts/installed_layout.sh). Extra arguments go to lint-imports.
set -euo pipefail
# shellcheck source=scripts/installed_layout.sh
. "$(dirname "$0")/installed_layout.sh"  # sets root and stage (the installed layout), cd's there
PYTHONPATH="$stage" lint-imports --no-cache "$@" "${RAMIEL_IMPORT_CONFIG:-$root/pyproject.toml}"
