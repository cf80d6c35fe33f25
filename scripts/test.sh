#!/usr/bin/env bash
# Set up .venv if needed, then run every test CI runs: the lit/FileCheck tests, then pytest's fast
# and slow tiers (-m "not extended"; a plain "python -m pytest" is the fast tier alone).
# Both always run; the exit status is non-zero if either failed.
#
#   bash scripts/test.sh             # extra arguments go to pytest, e.g. -k zoo (a later -m wins)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# shellcheck disable=SC1091
. .venv/bin/activate
export ORT_DISABLE_TELEMETRY=1

status=0
echo "== lit lit_tests"
lit -sv lit_tests || status=1

echo "== pytest"
python -m pytest -m "not extended" "$@" || status=1
exit "$status"
