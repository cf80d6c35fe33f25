#!/usr/bin/env bash
# mypy on the package as installed (see scripts/installed_layout.sh; configuration in
# pyproject.toml [tool.mypy]), against the per-file baseline scripts/mypy_baseline.json: fails
# when a file has more errors than its baseline allows, and says where the baseline can shrink.
#
#   bash scripts/mypy.sh              # check
#   bash scripts/mypy.sh --update     # write the current counts as the new baseline (only after
#                                     # fixing errors: the baseline never grows)
set -euo pipefail
# shellcheck source=scripts/installed_layout.sh
. "$(dirname "$0")/installed_layout.sh"  # sets root and stage (the installed layout), cd's there
status=0
mypy --config-file "$root/pyproject.toml" --cache-dir "$root/.mypy_cache" -p ramiel \
    > "$stage/mypy.out" 2>&1 || status=$?
if [ "$status" -gt 1 ]; then  # 2: mypy itself failed (bad configuration, crash)
    cat "$stage/mypy.out"
    exit "$status"
fi
# report paths as they are in the checkout (ramiel/dialects/x.py -> dialects/x.py)
sed -E 's#^ramiel/(dialects|passes|tools)/#\1/#' "$stage/mypy.out" > "$stage/mypy.txt"
python "$root/scripts/mypy_baseline.py" "$root/scripts/mypy_baseline.json" "$stage/mypy.txt" "$@"
