"""The default compile option (``compile="auto"``): ``onednn-graph`` segments where the cost
model says their saving pays (:func:`ramiel.passes.compile_segments.onednn_graph_pays`), else the
eager program; ``--no-compile`` (``compile=False``) is eager. Numerics of the default program
against onnxruntime (random weights, both backends), NaN included.

The rest of the suite compiles with ``RAMIEL_AUTO_SEGMENTS=0`` (``conftest.py``); these tests
take the fixture ``default_segments``, which turns the default's segments back on.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import onnx
import pytest
import torch

import ramiel
from ramiel.compiler import CompileOptions, compile_model
from ramiel.models import randomize_weights
from ramiel.passes.compile_segments import onednn_graph_pays
from ramiel.runtime import trial
from tests.test_compiled import ort_outputs

pytestmark = pytest.mark.skipif(not trial.available(), reason="the default traces on Linux only")

_MARK = "@segment(backend='onednn-graph')"


def _compile(path: str, out: Path, **options: object):  # type: ignore[no-untyped-def]
    return compile_model(path, str(out), CompileOptions(clusters=1, **options))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("name", "traced"),
    [("light_shufflenet", True), ("light_squeezenet", True), ("light_vgg19", False),
     ("light_bvlc_alexnet", False)],
)  # fmt: skip
def test_default_traces_where_the_saving_pays(name, traced, zoo_models, tmp_path, default_segments):
    """ShuffleNet (49 convolutions, 40 % of its estimated time in their call overhead) and
    SqueezeNet (12 %) get segments and a note that says why; VGG-19 (0.15 %) and AlexNet (0.8 %)
    stay eager, with no note."""
    res = _compile(zoo_models[name], tmp_path)
    for path in (res.parallel_path, res.sequential_path):
        assert (_MARK in Path(path).read_text()) == traced
    notes = [n for n in res.notes if "onednn-graph segments by default" in n]
    assert len(notes) == int(traced)
    if traced:
        assert "% of the estimated" in notes[0] and "--no-compile: eager" in notes[0]


def test_no_compile_trainable_and_the_switch_are_eager(zoo_models, tmp_path, monkeypatch):
    path = zoo_models["light_squeezenet"]
    monkeypatch.setenv("RAMIEL_AUTO_SEGMENTS", "1")
    for k, options in enumerate([{"compile": False}, {"trainable": True}]):
        res = _compile(path, tmp_path / str(k), **options)
        assert _MARK not in Path(res.sequential_path).read_text()
    monkeypatch.setenv("RAMIEL_AUTO_SEGMENTS", "0")
    res = _compile(path, tmp_path / "off")
    assert _MARK not in Path(res.sequential_path).read_text()
    assert not any("onednn-graph" in n for n in res.notes)


@pytest.mark.parametrize("compile_option", ["auto", False])
def test_the_merge_takes_one_fused_cluster_where_the_default_traces(
    compile_option, exported_model, tmp_path, monkeypatch, default_segments
):
    """On 2 cores the project's inception CNN kept two clusters of 1 thread each eagerly; the
    default traces its segments, and traced as one segment the one-cluster program saves its
    convolutions' call overhead (``--merge{onednn-graph=true}``; measured 13.4 ms against
    19.2 ms for the two traced clusters, docs/benchmarks.md), so the default makes one cluster
    there, with 2 intra-op threads; ``--no-compile`` keeps the two."""
    import ramiel.compiler as compiler

    monkeypatch.setattr(compiler, "usable_cores", lambda: 2)
    monkeypatch.setattr(compiler, "thread_limit", lambda: None)
    path = exported_model("inception")
    res = compile_model(path, str(tmp_path), CompileOptions(compile=compile_option))
    traced = compile_option == "auto"
    assert (_MARK in Path(res.parallel_path).read_text()) == traced
    assert res.clusters == (1 if traced else 2)
    # the program plans for both cores: one cluster runs with 2 intra-op threads
    assert "cores=2" in Path(res.parallel_path).read_text()


def test_several_clusters_are_eager_and_the_sequential_module_traced(
    zoo_models, tmp_path, default_segments
):
    """Asked for 2 clusters, the default traces the sequential module only: the clusters'
    segments would be a few ops each, and traced clusters measured slower than eager ones on
    3 of 4 branchy models (light_inception_v1: 36.2 against 31.1 ms; docs/benchmarks.md). The
    note says so; ``compile="onednn-graph"`` traces the clusters too."""
    path = zoo_models["light_inception_v1"]
    res = compile_model(path, str(tmp_path / "auto"), CompileOptions(clusters=2))
    assert res.clusters == 2
    assert _MARK not in Path(res.parallel_path).read_text()
    assert _MARK in Path(res.sequential_path).read_text()
    (note,) = [n for n in res.notes if "onednn-graph segments by default" in n]
    assert "in the sequential module, not in the 2 clusters" in note
    res = compile_model(
        path, str(tmp_path / "explicit"), CompileOptions(clusters=2, compile="onednn-graph")
    )
    assert _MARK in Path(res.parallel_path).read_text()


def test_the_rule_counts_the_calls_against_the_estimated_time(tmp_path, zoo_models):
    """The estimate itself: 50 µs a convolution, 30 µs a Gemm, against the schedule's W."""
    res = _compile(zoo_models["light_squeezenet"], tmp_path)
    from ramiel.context import make_context
    from ramiel.parsing import parse_module

    module = parse_module(make_context(), Path(res.ir_path).read_text())
    pays, why = onednn_graph_pays(module, res.report.work_us)
    assert pays and "1.30 ms per inference (26 Conv)" in why
    assert not onednn_graph_pays(module, 1e6)[0]  # 0.13 % of a second
    assert not onednn_graph_pays(module, 0.0)[0]


@pytest.mark.parametrize(
    ("backend", "clusters", "compile_option"),
    [("threads", 1, "auto"), ("processes", 1, "auto"), ("threads", 2, "auto"),
     ("processes", 2, "onednn-graph")],
)  # fmt: skip
def test_default_program_matches_onnxruntime_and_keeps_nan(
    backend, clusters, compile_option, zoo_models, pipeline_helpers, default_segments, trace_wins
):
    """The default program of SqueezeNet (random weights; on 2 cores one cluster of 2 threads),
    the default with 2 clusters (eager clusters, traced sequential module) and 2 traced
    clusters on the processes backend: the modules match onnxruntime, and an input holding a
    NaN gives NaN where onnxruntime does (a fused Relu would have made it 0). The trace wins
    its timing against eager here (``trace_wins``): with 2 eager clusters the sequential
    module's one segment is the only trace, and under load eager had won it (once, in a run
    with two workers)."""
    model = randomize_weights(onnx.load(zoo_models["light_squeezenet"]), seed=1)
    weights = {t.name for t in model.graph.initializer}
    (data,) = [i.name for i in model.graph.input if i.name not in weights]
    x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(4))
    bad = x.clone()
    bad[0, 1, 100, 100] = float("nan")
    (ref,) = ort_outputs(model, {data: x})
    ref_bad = torch.from_numpy(ort_outputs(model, {data: bad})[0])
    assert ref_bad.isnan().any()
    with ramiel.compile(model, clusters=clusters, backend=backend, compile=compile_option) as m:
        assert m.compiled
        (out,) = m.output_names
        with torch.no_grad():
            pipeline_helpers.assert_close(m.run({data: x})[out], ref, what="parallel")
            pipeline_helpers.assert_close(m.sequential(x), ref, what="sequential")
            torch.testing.assert_close(m.run({data: bad})[out], ref_bad, equal_nan=True)
            torch.testing.assert_close(m.sequential(bad), ref_bad, equal_nan=True)
        events = m.compile_report()
    assert events and all(e.backend == "onednn-graph" and e.error is None for e in events)
    assert any(e.note is None for e in events)  # at least one segment runs fused


def test_cli_no_compile_and_its_conflict(zoo_models, tmp_path, default_segments):
    ramiel_cli = [sys.executable, "-m", "ramiel.tools.driver"]
    path = zoo_models["light_squeezenet"]
    done = subprocess.run(
        [*ramiel_cli, "compile", path, "-o", str(tmp_path / "a")], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "note: onednn-graph segments by default" in done.stdout + done.stderr
    assert _MARK in (tmp_path / "a" / "model_seq.py").read_text()
    done = subprocess.run(
        [*ramiel_cli, "compile", path, "-o", str(tmp_path / "b"), "--no-compile"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert _MARK not in (tmp_path / "b" / "model_seq.py").read_text()
    done = subprocess.run(
        [*ramiel_cli, "compile", path, "-o", str(tmp_path / "c"), "--no-compile",
         "--compile-backend", "onednn-graph"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 2
    assert "--compile-backend: not allowed with --no-compile" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_unknown_keyword_of_ramiel_compile_is_one_clear_error(zoo_models):
    from ramiel.errors import RamielError

    with pytest.raises(RamielError, match="no option 'compile_backend'; the options are"):
        ramiel.compile(zoo_models["light_squeezenet"], compile_backend="onednn-graph")


def test_ramiel_compile_takes_a_compile_options_in_place_of_clusters(tmp_path):
    """``ramiel.compile(model, CompileOptions(...))``, as ``compile_model`` takes its options (it
    had said "clusters must be an int ..., not CompileOptions(...)"), runs as the options say;
    options given both ways are one clear error."""
    from onnx import TensorProto, helper

    from ramiel.errors import RamielError

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
    path = str(tmp_path / "relu.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    with ramiel.compile(path, CompileOptions(threads_per_worker=1, compile=False)) as m:
        assert m.options.compile is False
        assert m.runtime_config()[1] == 1
        v = torch.tensor([[-1.0, 2.0, -3.0, 4.0, 0.0, 1.5, -0.5, 3.0]])
        assert torch.equal(m(v), torch.relu(v))
    with pytest.raises(RamielError, match="either as a CompileOptions or as keywords"):
        ramiel.compile(path, CompileOptions(), trainable=True)
    with pytest.raises(RamielError, match="either as a CompileOptions or as keywords"):
        # a keyword equal to its default is no less a keyword (it had been ignored silently)
        ramiel.compile(path, CompileOptions(backend="processes"), backend="threads")


def test_backend_inline_is_refused_with_where_it_comes_from(zoo_models):
    """``ramiel.BACKENDS`` lists 'inline', a runtime backend: asked of the compiler it is one
    clear error that says what it is and where to use it (found by a fresh-user check)."""
    from ramiel.errors import RamielError

    with pytest.raises(RamielError, match="the runtime's choice for a one-cluster program"):
        ramiel.compile(zoo_models["light_squeezenet"], backend="inline")
