# Sourced by scripts/lint_imports.sh and scripts/mypy.sh, for tools that find a package by
# walking its directory (import-linter, mypy): sets root (this checkout) and stage (a temporary
# directory, removed when the script exits, where stage/ramiel is the package as it is installed:
# setuptools' package-dir mapping makes dialects/, passes/ and tools/ ramiel.dialects,
# ramiel.passes and ramiel.tools; symbolic links to this checkout), then changes into stage.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/ramiel"
for _f in "$root"/ramiel/*; do
    case "$(basename "$_f")" in __pycache__) continue ;; esac
    ln -s "$_f" "$stage/ramiel/"
done
for _sub in dialects passes tools; do
    ln -s "$root/$_sub" "$stage/ramiel/$_sub"
done
unset _f _sub
cd "$stage"
