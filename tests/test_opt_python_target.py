"""``ramiel-opt ... -t python -o FILE.py`` writes a module that runs: its weights go to
FILE.safetensors (or ``--weights``), the name its classes load, as ``ramiel-translate
--to-python`` does. Before, the module named the IR's weights file relative to its own folder and
the tensors the lowering adds (a GRU's reordered weights) went to a file it never read."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper

from ramiel.compiler import CompileOptions, compile_model

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")


def _gru_model():
    """A GRU (whose lowering adds weights in torch's gate order) then a MatMul."""
    rng = np.random.default_rng(0)
    h, i = 6, 4
    inits = [
        numpy_helper.from_array(rng.standard_normal((1, 3 * h, i)).astype(np.float32), "W"),
        numpy_helper.from_array(rng.standard_normal((1, 3 * h, h)).astype(np.float32), "R"),
        numpy_helper.from_array(rng.standard_normal((1, 6 * h)).astype(np.float32), "B"),
        numpy_helper.from_array(rng.standard_normal((h, 3)).astype(np.float32), "P"),
    ]
    nodes = [
        helper.make_node("GRU", ["x", "W", "R", "B"], ["y", ""], hidden_size=h),
        helper.make_node("Squeeze", ["y", "one"], ["s"]),
        helper.make_node("MatMul", ["s", "P"], ["out"]),
    ]
    inits.append(numpy_helper.from_array(np.array([1], np.int64), "one"))
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5, 2, i])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [5, 2, 3])],
        inits,
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def _tool(name: str) -> str:
    return os.path.join(os.path.dirname(sys.executable), name)


@pytest.mark.parametrize("where", ["beside", "subdir", "weights-flag"])
def test_python_target_writes_the_weights_its_module_loads(where, tmp_path):
    res = compile_model(_gru_model(), str(tmp_path / "c"), CompileOptions(clusters=1))
    ir = os.path.join(res.out_dir, "model.mlir")
    out = {"beside": tmp_path / "c" / "rt.py", "subdir": tmp_path / "gen" / "seq.py"}.get(
        where, tmp_path / "w" / "mod.py"
    )
    os.makedirs(out.parent, exist_ok=True)
    argv = [_tool("ramiel-opt"), ir, "-p", "lower-to-torchpy{mode=sequential}", "-t", "python"]
    argv += ["-o", str(out)]
    weights = out.with_suffix(".safetensors")
    if where == "weights-flag":
        weights = out.parent / "other.safetensors"
        argv += ["--weights", str(weights)]
    subprocess.run(argv, check=True, timeout=300, capture_output=True)
    assert weights.exists()
    src = out.read_text()
    assert f"WEIGHTS_FILE = {weights.name!r}" in src
    run = subprocess.run(
        [sys.executable, str(out), "--seed", "3"], capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr
    # the same numbers as the compiler's own sequential module
    ns: dict = {}
    exec(compile(src, str(out), "exec"), ns)  # noqa: S102 - the generated module under test
    cls = next(v for k, v in ns.items() if isinstance(v, type) and hasattr(v, "WEIGHTS_FILE"))
    mine = cls.from_safetensors(str(weights))
    ns2: dict = {}
    with open(res.sequential_path) as f:
        exec(compile(f.read(), res.sequential_path, "exec"), ns2)  # noqa: S102
    cls2 = next(v for k, v in ns2.items() if isinstance(v, type) and hasattr(v, "WEIGHTS_FILE"))
    theirs = cls2.from_safetensors(res.weights_path)
    x = torch.randn(5, 2, 4)
    torch.testing.assert_close(mine(x), theirs(x))


def test_python_target_refuses_the_irs_own_weights_file(tmp_path):
    res = compile_model(_gru_model(), str(tmp_path / "c"), CompileOptions(clusters=1))
    ir = os.path.join(res.out_dir, "model.mlir")
    with open(res.weights_path, "rb") as f:
        before = f.read()
    run = subprocess.run(
        [_tool("ramiel-opt"), ir, "--lower-to-torchpy", "-t", "python", "-o",
         str(tmp_path / "c" / "weights.py")],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == 1
    assert "is the one the IR reads its weights from" in run.stderr
    with open(res.weights_path, "rb") as f:
        assert f.read() == before
