"""No tool writes a file where the user did not ask (issue #17): each command runs in an empty
working directory, and the files that appear there are exactly the ones its arguments name (or,
for ``-o FILE``, the weights file beside it named after it)."""

from __future__ import annotations

import os

import numpy as np
import onnx
from conftest import tool_status
from onnx import TensorProto, helper, numpy_helper

from ramiel.tools import driver, opt, translate


def _model(path: str) -> None:
    """A MatMul with a 64x64 weight: large enough to live in a weights file, not inline."""
    w = numpy_helper.from_array(np.random.default_rng(0).standard_normal((64, 64), np.float32), "w")
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"]), helper.make_node("Relu", ["y"], ["z"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 64])],
        [w],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)


def _appeared(before: set[str]) -> list[str]:
    return sorted(set(os.listdir(".")) - before)


def test_each_tool_writes_only_what_it_is_asked(tmp_path, monkeypatch, capsys):
    inputs = tmp_path / "in"
    inputs.mkdir()
    model = str(inputs / "m.onnx")
    _model(model)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    runs = [
        # (tool main, argv, the files it may write in the working directory)
        (translate.main, ["--import-onnx", model, "-o", "a.mlir"], ["a.mlir", "a.safetensors"]),
        (translate.main, ["--import-onnx", model, "--weights", "b.safetensors"], ["b.safetensors"]),
        (opt.main, ["a.mlir", "--dce"], []),
        (opt.main, ["a.mlir", "--dce", "-o", "c.mlir"], ["c.mlir"]),
        (
            opt.main,
            ["a.mlir", "-p", "estimate-cost,linear-cluster,lower-to-torchpy", "-o", "tp.mlir"],
            ["tp.mlir"],
        ),
        (translate.main, ["--to-python", "tp.mlir"], []),
        (translate.main, ["--to-python", "tp.mlir", "-o", "net.py"], ["net.py", "net.safetensors"]),
        (
            translate.main,
            ["--to-python", "tp.mlir", "--weights", "w.safetensors"],
            ["w.safetensors"],
        ),
        (driver.main, ["compile", model, "-o", "out"], ["out"]),
    ]
    for main, argv, expected in runs:
        before = set(os.listdir("."))
        assert tool_status(main, argv) == 0, (argv, capsys.readouterr().err)
        assert _appeared(before) == sorted(expected), argv
    err = capsys.readouterr().err
    assert "note: no weights file written" in err  # --to-python to stdout says so
    # the module written with -o loads the weights file beside it, named after it
    with open("net.py") as f:
        assert "WEIGHTS_FILE = 'net.safetensors'" in f.read()
    assert not (tmp_path / "in").joinpath("m.safetensors").exists()
    assert sorted(os.listdir(inputs)) == ["m.onnx"]
