#!/usr/bin/env bash
# The import contracts of pyproject.toml ([tool.importlinter]) with import-linter's lint-imports.
#
# import-linter finds a package by walking its directory; ramiel.dialects, ramiel.passes and
# ramiel.tools live in dialects/, passes/ and tools/ (setuptools' package-dir mapping), so this
# script builds the installed layout from symbolic links in a temporary directory and checks it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mkdir "$stage/ramiel"
for f in "$root"/ramiel/*; do
    case "$(basename "$f")" in __pycache__) continue ;; esac
    ln -s "$f" "$stage/ramiel/"
done
for sub in dialects passes tools; do
    ln -s "$root/$sub" "$stage/ramiel/$sub"
done
cd "$stage"
PYTHONPATH="$stage" lint-imports --no-cache "$@" "${RAMIEL_IMPORT_CONFIG:-$root/pyproject.toml}"
