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
# Byte-compile the project's sources once: where PYTHONDONTWRITEBYTECODE is set (this machine and
# its CI set it), every interpreter start (each of lit's ~250 RUN lines, each tool a test starts)
# would otherwise compile the modules it imports again.
python -m compileall -q -j 0 ramiel dialects passes tools tests > /dev/null

status=0
echo "== lit lit_tests"
lit -sv --time-tests lit_tests || status=1

echo "== pytest"
# The 20 slowest tests (pytest) and the slowest lit tests are listed at the end of each run: what
# to look at first when the run nears its time limit (CI: under 30 minutes on 2 cores).
# Two test processes (pytest-xdist), each file on one of them (module-scoped fixtures such as a
# compiled zoo model are made once): most tests wait on a spawned tool, worker or compiler part of
# the time, so two keep both cores busy; RAMIEL_TEST_WORKERS=0 runs them in this process.
python -m pytest -m "not extended" -n "${RAMIEL_TEST_WORKERS:-2}" --dist loadfile --durations=20 "$@" || status=1
exit "$status"
