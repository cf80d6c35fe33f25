"""The package's import contracts (pyproject.toml [tool.importlinter]) hold: the layers of the
pipeline, a runtime without xDSL/onnx, plain-PyTorch test models and no import cycle
(scripts/lint_imports.sh, which CI also runs)."""

from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_import_contracts_are_kept() -> None:
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    r = subprocess.run(
        ["bash", os.path.join(ROOT, "scripts", "lint_imports.sh")],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "0 broken" in r.stdout
