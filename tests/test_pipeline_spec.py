"""One default pipeline: ramiel.pipeline.DEFAULT_PIPELINE is what ramiel compile runs (with its
options applied as compile_pipeline says), what the profiler's stage is cut from, what
ramiel-opt --help and the README show, and ramiel-opt runs it as it is."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import tool_status
from onnx import TensorProto, helper

import ramiel.compiler as compiler
from ramiel.compiler import CompileOptions, compile_model
from ramiel.passes import PASSES, REWRITE_PASSES
from ramiel.pipeline import (
    DEFAULT_PIPELINE,
    clean_up_passes,
    compile_pipeline,
    late_passes,
    profile_passes,
)
from ramiel.tools import opt

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _spec(passes) -> str:  # type: ignore[no-untyped-def]
    return ",".join(str(p) for p in passes)


def _model_file(tmp_path) -> str:  # type: ignore[no-untyped-def]
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Neg", ["y"], ["z"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 4])],
    )
    path = str(tmp_path / "m.onnx")
    with open(path, "wb") as f:
        f.write(
            helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
        )
    return path


def test_default_pipeline_is_canonical_and_registered():
    """The string names registered passes only and reads back as itself."""
    assert _spec(compile_pipeline()) == DEFAULT_PIPELINE
    assert all(p.name in PASSES for p in compile_pipeline())
    assert {p.name for p in compile_pipeline()} >= set(REWRITE_PASSES)


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (CompileOptions(clusters=2), DEFAULT_PIPELINE),
        (
            CompileOptions(
                clusters=3,
                clone=False,
                cores=2,
                batch=2,
                layout="nchw",
                disable=("inplace", "fuse-gelu"),
            ),
            "constant-fold,dce,fuse-layer-norm,fuse-attention,fuse-channel-shuffle,"
            'fuse-pad-into-conv,fold-into-weights,combine-parallel-convs,dce,hypercluster{batch=2},assign-layout{format="nchw"},'
            "estimate-cost,linear-cluster,"
            "merge{clusters=3},intra-op-threads{cores=2},prepack-conv,prepack-matmul",
        ),
        (
            CompileOptions(clusters=1, disable=("all",), backend="processes"),
            "constant-fold,dce,hypercluster,assign-layout{prepacked=false},"
            'estimate-cost{backend="processes"},linear-cluster,merge{clusters=1},clone,dce',
        ),
    ],
    ids=["defaults", "options", "no-rewrites"],
)
def test_compile_runs_the_default_pipeline(options, expected, tmp_path, monkeypatch):
    """ramiel compile's passes up to the clustered IR are DEFAULT_PIPELINE as its options change
    it (the lowering runs after them)."""
    runs: list[str] = []
    real = compiler.run_passes

    def record(module, passes, ctx, verifier=None):  # type: ignore[no-untyped-def]
        runs.append(_spec(passes))
        return real(module, passes, ctx, verifier)

    monkeypatch.setattr(compiler, "run_passes", record)
    compile_model(_model_file(tmp_path), str(tmp_path / "out"), options)
    # run in stages: the clean-up, the clustering up to the merge (the compiler decides the
    # default's segments there, which the merge estimates), the merge and the rest
    lowering = next(i for i, r in enumerate(runs) if r.startswith("lower-to-torchpy"))
    assert ",".join(runs[:lowering]) == expected
    assert runs[lowering - 1].startswith("merge")


def test_stages_are_cut_from_the_default_pipeline():
    assert _spec(clean_up_passes(REWRITE_PASSES)) == DEFAULT_PIPELINE.split(",hypercluster")[0]
    assert _spec(clean_up_passes(())) == "constant-fold,dce"
    assert _spec(late_passes(REWRITE_PASSES)) == "prepack-conv,prepack-matmul,inplace"
    assert _spec(profile_passes("nchw", ())) == 'constant-fold,dce,assign-layout{format="nchw"}'
    clean_up = DEFAULT_PIPELINE.split(",hypercluster")[0]
    assert _spec(profile_passes("nchw")) == f'{clean_up},assign-layout{{format="nchw"}}'


def test_opt_help_and_readme_show_it(capsys):
    assert tool_status(opt.main, ["--help"]) == 0
    assert f"ramiel-opt -p '{DEFAULT_PIPELINE}' model.mlir" in capsys.readouterr().out
    with open(os.path.join(ROOT, "README.md")) as f:
        assert f"ramiel-opt -p '{DEFAULT_PIPELINE}' model.mlir" in f.read()


def test_opt_runs_the_default_pipeline(tmp_path):
    """The string as ramiel-opt --help prints it runs on imported IR and clusters it."""
    ir = tmp_path / "m.mlir"
    env = {**os.environ, "ORT_DISABLE_TELEMETRY": "1"}
    bindir = os.path.dirname(sys.executable)
    subprocess.run(
        [os.path.join(bindir, "ramiel-translate"), "--import-onnx", _model_file(tmp_path), "-o", str(ir)],
        check=True, env=env, timeout=120,
    )  # fmt: skip
    r = subprocess.run(
        [os.path.join(bindir, "ramiel-opt"), "-p", DEFAULT_PIPELINE, str(ir)],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "cluster.cluster @c0" in r.stdout and "ramiel.cost_us" in r.stdout
