#!/usr/bin/env bash
# Create (or update) the project's virtual environment in .venv and install Ramiel into it.
#
#   bash scripts/setup.sh        # then: . .venv/bin/activate
#
# torch==2.13.0 is installed first and explicitly: that pin takes the CPU build (pip finds it on
# this machine's disk), while an unpinned torch pulled in as a dependency could be a multi-GB
# CUDA build. transformers is installed with --no-deps from scripts/requirements-nodeps.txt. The
# installs are redone only when pyproject.toml or that file changed since the last one.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    echo "setup: creating .venv with $("$PYTHON" --version)"
    "$PYTHON" -m venv .venv
fi
# shellcheck disable=SC1091
. .venv/bin/activate

stamp=.venv/.ramiel-installed
nodeps=scripts/requirements-nodeps.txt
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ "$nodeps" -nt "$stamp" ]; then
    python -m pip install --quiet torch==2.13.0
    python -m pip install --quiet -e '.[dev]'
    # transformers without its dependency resolution (its small deps are in the dev extra)
    python -m pip install --quiet --no-deps -r "$nodeps"
    touch "$stamp"
    echo "setup: installed ramiel and its dependencies into .venv"
fi
