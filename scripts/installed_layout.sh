# Sourced by scripts/lint_imports.sh and scripts/mypy.sh: installed_layout DIR makes DIR/ramiel
# the package as it is installed (setuptools' package-dir mapping: dialects/, passes/ and tools/
# are ramiel.dialects, ramiel.passes and ramiel.tools) from symbolic links to this checkout, for
# tools that find a package by walking its directory (import-linter, mypy).
installed_layout() {
    local root dest f sub
    root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
    dest="$1"
    mkdir -p "$dest/ramiel"
    for f in "$root"/ramiel/*; do
        case "$(basename "$f")" in __pycache__) continue ;; esac
        ln -s "$f" "$dest/ramiel/"
    done
    for sub in dialects passes tools; do
        ln -s "$root/$sub" "$dest/ramiel/$sub"
    done
}
