"""Everything Ramiel prints it reads back or quotes (issue #13, classes 4 and 5).

* IR: a model whose tensor names start with ``$``, ``.``, a digit, or look like paths compiles,
  and the ``model.mlir`` it writes parses and verifies again, and lowers to the same program;
  no file appears outside the output directory.
* Models without nodes (outputs that are inputs or constants) or without outputs are valid
  ONNX: they compile to a program that runs on both backends and sequentially.
* Markdown: model names and errors with ``|``, newlines and backticks stay inside their cell.
* Shell: the run command ``ramiel tune`` prints quotes its paths: a directory named
  ``x;touch PWNED;y`` runs the program, not ``touch``.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper

import ramiel
from ramiel.context import make_context
from ramiel.parsing import parse_module, verify_located

HOSTILE = ["$x", "$", ".lead", "..", "../../etc/passwd", "a/b/c", "9nine", "-dash", "x.y", "é"]


def _hostile_model() -> onnx.ModelProto:
    """One MatMul + Relu chain per hostile name: the initializer, the intermediate tensor and
    the output are named from it (large weights: stored as dense_resource keys)."""
    rng = np.random.default_rng(0)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])
    nodes, inits, outs = [], [], []
    for i, n in enumerate(HOSTILE):
        inits.append(numpy_helper.from_array(rng.standard_normal((8, 8)).astype(np.float32), n))
        nodes.append(helper.make_node("MatMul", ["x", n], [f"{n}/mm"], name=n))
        nodes.append(helper.make_node("Relu", [f"{n}/mm"], [f"{n}:{i}"], name=f"{n} relu"))
        outs.append(helper.make_tensor_value_info(f"{n}:{i}", TensorProto.FLOAT, [2, 8]))
    model = helper.make_model(
        helper.make_graph(nodes, "hostile", [x], outs, inits),
        opset_imports=[helper.make_opsetid("", 17)],
    )
    model.ir_version = 8
    return model


def _ort(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.log_severity_level = 3
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def test_hostile_names_round_trip(tmp_path):
    out = tmp_path / "deep" / "out"
    model = _hostile_model()
    compiled = ramiel.compile(model, clusters=2, out_dir=str(out))
    x = np.random.default_rng(1).standard_normal((2, 8)).astype(np.float32)
    try:
        got = compiled(torch.from_numpy(x))
    finally:
        compiled.close()
    for g, r in zip(got, _ort(model, {"x": x}), strict=True):
        np.testing.assert_allclose(g.numpy(), r, rtol=1e-5, atol=1e-5)
    # model.mlir parses, verifies and lowers again, from another working directory
    text = (out / "model.mlir").read_text()
    assert "dense_resource<" in text
    ctx = make_context(str(out))  # model.mlir names weights.safetensors beside it
    module = parse_module(ctx, text, str(out / "model.mlir"))
    verify_located(module)
    from ramiel.passes.lower_to_torchpy import LowerToTorchpy

    LowerToTorchpy().apply(ctx, module)
    verify_located(module)
    # nothing outside the output directory
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deep"]
    assert sorted(p.name for p in (tmp_path / "deep").iterdir()) == ["out"]
    assert all(p.is_file() for p in out.iterdir())


def _edge_models() -> dict[str, onnx.ModelProto]:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    c = numpy_helper.from_array(np.array([4.0, 2.0], np.float32), "c")
    models = {
        "no nodes: output is the input": helper.make_graph([], "g", [x], [x]),
        "no nodes: output is a constant": helper.make_graph(
            [], "g", [x], [helper.make_tensor_value_info("c", TensorProto.FLOAT, [2])], [c]
        ),
        "no outputs": helper.make_graph([helper.make_node("Relu", ["x"], ["r"])], "g", [x], []),
    }
    out = {}
    for name, g in models.items():
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
        m.ir_version = 8
        onnx.checker.check_model(m)
        out[name] = m
    return out


@pytest.mark.parametrize("name", list(_edge_models()))
@pytest.mark.parametrize("backend,clusters", [("threads", 1), ("threads", 2), ("processes", 2)])
def test_models_without_nodes_or_outputs_run(name, backend, clusters, tmp_path):
    model = _edge_models()[name]
    x = torch.ones(2, 3)
    expected: tuple = (
        tuple(torch.from_numpy(v) for v in _ort(model, {"x": x.numpy()}))
        if model.graph.output
        else ()
    )
    compiled = ramiel.compile(model, clusters=clusters, backend=backend, out_dir=str(tmp_path))
    try:
        for got in (compiled(x), compiled.sequential(x)):
            got = got if isinstance(got, tuple) else (got,)
            assert len(got) == len(expected)
            for g, e in zip(got, expected, strict=True):
                assert torch.equal(g, e)
    finally:
        compiled.close()


# ---------------------------------------------------------------------------------- markdown


def _cells(row: str) -> list[str]:
    """The cells of a Markdown table row: split at ``|`` not escaped by a backslash."""
    inner = row.strip()[1:-1]
    return re.split(r"(?<!\\)\|", inner)


def test_bench_markdown_escapes_model_names():
    from ramiel.bench import Environment, ModelResult, render_markdown

    name = "evil|name\n`code` #1 <b>"
    env = Environment(
        date="d", cpu="c", nproc=2, python="3", torch="t", onnxruntime="o", onnx="x",
        load_before=(0.0, 0.0, 0.0), command="ramiel bench 'a`b'", workers=2,
    )  # fmt: skip
    md = render_markdown([ModelResult(name, "p", 2, error="boom | and\nmore")], env)
    table = [ln for ln in md.splitlines() if ln.startswith("| ")]
    header, row = table[0], table[1]
    assert len(_cells(row)) == len(_cells(header))
    assert "\n`code`" not in md and "evil\\|name" in row
    assert "### evil\\|name \\`code\\` \\#1 \\<b\\>" in md
    assert "- command: ``ramiel bench 'a`b'``" in md


# --------------------------------------------------------------------------------- injection


def test_tune_run_command_quotes_its_paths(tmp_path):
    from ramiel.compiler import CompileOptions, CompileResult
    from ramiel.tune import TuneResult

    out = tmp_path / "x;touch PWNED;y $(touch PWNED2) `touch PWNED3`"
    out.mkdir()
    (out / "model.py").write_text("import sys\nprint('ran', sys.argv[1:])\n")
    result = CompileResult(
        out_dir=str(out), parallel_path=str(out / "model.py"), sequential_path="",
        weights_path="", ir_path="", report=None,  # type: ignore[arg-type]
    )  # fmt: skip
    tuned = TuneResult("1x2", CompileOptions(threads_per_worker=2), result, cores=2)
    cmd = tuned.run_command()
    assert shlex.split(cmd)[1] == str(out / "model.py")
    p = subprocess.run(
        ["bash", "-c", cmd.replace("python", shlex.quote(sys.executable), 1)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "ran ['--threads', '2']"
    assert not list(tmp_path.glob("PWNED*"))
