"""OpenMP settings of Ramiel's programs (:mod:`ramiel.omp`): set before the OpenMP runtime starts.

GNU OpenMP prints the settings it started with when ``OMP_DISPLAY_ENV=verbose`` is set (on
stderr, when libgomp loads), so each test runs a fresh process and reads what libgomp itself
says: in the ``ramiel`` driver, in a generated module run as a script, in a worker process of the
processes backend started by a program that imported torch first, and that a user's own choice
wins.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from ramiel import omp

EXPECTED_SPIN = {"PASSIVE": "0", "ACTIVE": "30000000000"}


def _spin_counts(stderr: str) -> list[str]:
    """Every ``GOMP_SPINCOUNT`` libgomp reported (one per process that loaded it)."""
    return re.findall(r"GOMP_SPINCOUNT = '(\d+)'", stderr)


def _expected() -> str:
    """The spin count Ramiel's processes start with: its setting, else libgomp's default."""
    if "GOMP_SPINCOUNT" in omp.DEFAULTS:
        return omp.DEFAULTS["GOMP_SPINCOUNT"]
    if "OMP_WAIT_POLICY" in omp.DEFAULTS:
        return EXPECTED_SPIN[omp.DEFAULTS["OMP_WAIT_POLICY"]]
    return "300000"


def _env(**extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "RAMIEL_OMP")
    }
    env.update(OMP_DISPLAY_ENV="verbose", ORT_DISABLE_TELEMETRY="1", **extra)
    return env


def _run(args: list[str], **extra: str) -> subprocess.CompletedProcess:
    p = subprocess.run(args, capture_output=True, text=True, env=_env(**extra), timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    return p


def test_configure_sets_the_defaults_where_unset():
    env: dict[str, str] = {}
    assert omp.configure(env) == omp.DEFAULTS
    assert env == omp.DEFAULTS
    assert omp.configure(env) == {}  # once set, nothing more


@pytest.mark.parametrize("chosen", [{"OMP_WAIT_POLICY": "ACTIVE"}, {"GOMP_SPINCOUNT": "1234"}])
def test_a_users_wait_policy_wins(chosen):
    env = dict(chosen)
    assert omp.configure(env) == {}
    assert env == chosen


def test_ramiel_omp_0_changes_nothing():
    env = {"RAMIEL_OMP": "0"}
    assert omp.configure(env) == {}
    assert env == {"RAMIEL_OMP": "0"}


def test_importing_ramiel_before_torch_sets_the_policy():
    p = _run([sys.executable, "-c", "import ramiel, torch; torch.ones(2).sum()"])
    assert _spin_counts(p.stderr) == [_expected()]
    p = _run([sys.executable, "-c", "import torch, ramiel"])  # too late: libgomp's default
    assert _spin_counts(p.stderr) == ["300000"]
    p = _run([sys.executable, "-c", "import ramiel, torch"], GOMP_SPINCOUNT="1234")
    assert _spin_counts(p.stderr) == ["1234"]


def _chain(path: str) -> str:
    """x[1,8,8,8] -> conv -> relu, twice: a model small enough to compile in a second."""
    rng = np.random.default_rng(0)
    inits = [
        numpy_helper.from_array(rng.standard_normal((8, 8, 3, 3)).astype(np.float32), f"w{i}")
        for i in range(2)
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w0"], ["c0"], pads=[1] * 4),
        helper.make_node("Relu", ["c0"], ["r0"]),
        helper.make_node("Conv", ["r0", "w1"], ["c1"], pads=[1] * 4),
        helper.make_node("Relu", ["c1"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 8, 8])],
        inits,
    )
    onnx.save(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), path
    )
    return path


def test_generated_module_and_driver_set_the_policy(tmp_path):
    model = _chain(str(tmp_path / "chain.onnx"))
    out = tmp_path / "out"
    p = _run([sys.executable, "-m", "ramiel.tools.driver", "compile", model, "-o", str(out)])
    assert _spin_counts(p.stderr) == [_expected()]  # the driver, before its command imports torch
    p = _run([sys.executable, str(out / "model_seq.py"), "--threads", "2"])
    assert _spin_counts(p.stderr) == [_expected()]
    assert "sequential, 2 thread(s)" in p.stdout


_WORKERS = """
import sys
import torch  # the user's process loads libgomp with its defaults first
import ramiel
from ramiel.compiler import CompiledModel, CompileOptions, compile_model
opts = CompileOptions(clusters=1, backend="processes", threads_per_worker=2)
result = compile_model(sys.argv[1], sys.argv[2], opts)
with CompiledModel(result, opts) as model:  # one worker process with 2 threads: a forkserver's
    model(torch.zeros(1, 8, 8, 8))
    print("ran", model.runtime_config())
"""


def test_worker_processes_start_with_the_policy(tmp_path):
    """A program that imported torch before ramiel keeps libgomp's default itself, but the
    worker processes it starts (from a forkserver, a fresh interpreter) get Ramiel's setting."""
    model = _chain(str(tmp_path / "chain.onnx"))
    p = _run([sys.executable, "-c", _WORKERS, model, str(tmp_path / "out")])
    assert "ran ('processes', 2)" in p.stdout
    counts = _spin_counts(p.stderr)
    assert counts[0] == "300000"  # the caller
    assert _expected() in counts[1:]  # the forkserver its worker was forked from
