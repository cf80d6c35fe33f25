"""Compiled segments (``compile=True``, ``ramiel compile --compile``): ``torch.compile`` of the
generated code's compute between channel operations (:mod:`ramiel.runtime.compiled`).

The compiled programs must equal onnxruntime (within 1e-3 of the largest output magnitude) on
both runtime backends and in the sequential module, compile each segment once (one
:class:`CompileEvent` per segment and thread count, no graph break, no recompilation when called
again: dynamo's own counters say so), compile per intra-op thread count and per weights object
(frozen weights are constants: another weights object must not reuse them), fall back to eager
code with a warning where a segment cannot be compiled, and hit inductor's on-disk cache on a
second start. Small models here (each inductor compilation costs seconds); the zoo and project
models are ``extended`` tests (``python -m pytest -m extended tests/test_compiled.py``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import warnings
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
from onnx import TensorProto
from onnx import helper as oh
from onnx import numpy_helper as nh

import ramiel
from ramiel.compiler import CompiledModel, CompileOptions, compile_model
from ramiel.runtime import Weights
from ramiel.runtime.compiled import Segment, program_segments, segment, segments_in
from ramiel.runtime.entry import random_inputs


def fork_join(c: int = 8, hw: int = 16, seed: int = 0) -> onnx.ModelProto:
    """A stem convolution, two branches of two convolutions each (ReLU, sigmoid), a concat and a
    classifier: the compiler makes two clusters of it, with channels between them (channels-last:
    the stem sits with one branch, and the concat, pooling and classifier after the channel from
    the other, four segments)."""
    rng = np.random.default_rng(seed)
    inits: list[onnx.TensorProto] = []
    nodes: list[onnx.NodeProto] = []

    def conv(name: str, x: str, cin: int, cout: int) -> str:
        w = rng.standard_normal((cout, cin, 3, 3)) / np.sqrt(cin * 9)
        inits.append(nh.from_array(w.astype(np.float32), f"{name}_W"))
        inits.append(
            nh.from_array((0.1 * rng.standard_normal(cout)).astype(np.float32), f"{name}_B")
        )
        nodes.append(oh.make_node("Conv", [x, f"{name}_W", f"{name}_B"], [name], pads=[1] * 4))
        return name

    def act(op: str, x: str) -> str:
        nodes.append(oh.make_node(op, [x], [f"{x}_{op.lower()}"]))
        return f"{x}_{op.lower()}"

    s = act("Relu", conv("stem", "x", 3, c))
    a = act("Relu", conv("a2", act("Relu", conv("a1", s, c, c)), c, c))
    b = act("Sigmoid", conv("b2", act("Relu", conv("b1", s, c, c)), c, c))
    nodes.append(oh.make_node("Concat", [a, b], ["cat"], axis=1))
    nodes.append(oh.make_node("GlobalAveragePool", ["cat"], ["gap"]))
    nodes.append(oh.make_node("Flatten", ["gap"], ["flat"]))
    inits.append(nh.from_array(rng.standard_normal((10, 2 * c)).astype(np.float32), "fc_W"))
    nodes.append(oh.make_node("Gemm", ["flat", "fc_W"], ["y"], transB=1))
    graph = oh.make_graph(
        nodes,
        "fork_join",
        [oh.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, hw, hw])],
        [oh.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        inits,
    )
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)], ir_version=8)


def ort_outputs(model: onnx.ModelProto | str, feeds: dict[str, torch.Tensor]) -> list[np.ndarray]:
    so = ort.SessionOptions()
    so.log_severity_level = 3
    data = model if isinstance(model, str) else model.SerializeToString()
    sess = ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])
    return sess.run(None, {k: v.numpy() for k, v in feeds.items()})


@pytest.fixture(scope="module", autouse=True)
def inductor_cache(tmp_path_factory):
    """A fresh inductor cache for this module (and the processes it starts)."""
    d = str(tmp_path_factory.mktemp("inductor"))
    old = {k: os.environ.get(k) for k in ("TORCHINDUCTOR_CACHE_DIR", "RAMIEL_COMPILE_CACHE")}
    os.environ.pop("TORCHINDUCTOR_CACHE_DIR", None)
    os.environ["RAMIEL_COMPILE_CACHE"] = d
    yield d
    for k, v in old.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.fixture(scope="module")
def fj_result(tmp_path_factory):
    """The fork-join model compiled for 2 clusters with compiled segments."""
    out = tmp_path_factory.mktemp("fj")
    return compile_model(fork_join(), str(out), CompileOptions(clusters=2, compile=True))


def _dynamo_counts() -> tuple[int, int, int]:
    """(graphs compiled, graph breaks, frames dynamo re-compiled) so far in this process."""
    from torch._dynamo.utils import counters

    breaks = sum(counters["graph_break"].values())
    return counters["stats"]["unique_graphs"], breaks, counters["recompiles"].total()


def test_segments_sit_between_channel_operations(fj_result):
    """Every compute statement of a cluster function is inside a segment: the cluster functions
    hold only channel operations and segment calls; the sequential module is one segment."""
    import ast

    par = ast.parse(Path(fj_result.parallel_path).read_text())
    funcs = {f.name: f for f in par.body if isinstance(f, ast.FunctionDef)}
    segs = {
        n for n, f in funcs.items() if any(ast.unparse(d) == "segment" for d in f.decorator_list)
    }
    assert segs == {"c0_seg0", "c0_seg1", "c0_seg2", "c1_seg0"}
    for name in ("cluster_c0", "cluster_c1"):
        for stmt in funcs[name].body[1:]:  # after the docstring
            if isinstance(stmt, ast.Return):
                continue
            call = stmt.value if isinstance(stmt, ast.Assign | ast.Expr) else None
            assert isinstance(call, ast.Call), ast.unparse(stmt)
            callee = ast.unparse(call.func)
            assert callee in ("ch.get", "ch.put") or callee in segs, ast.unparse(stmt)
    seq = ast.parse(Path(fj_result.sequential_path).read_text())
    seq_funcs = [f.name for f in seq.body if isinstance(f, ast.FunctionDef)]
    assert seq_funcs == ["forward_seg0"]  # the module class's forward calls it
    (cls,) = [c for c in seq.body if isinstance(c, ast.ClassDef)]
    forward = next(f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "forward")
    assert "forward_seg0(self, " in ast.unparse(forward)


@pytest.mark.parametrize("backend", ["threads", "processes"])
def test_compiled_parallel_module_matches_onnxruntime(fj_result, backend, pipeline_helpers):
    """Both backends: compiled at start (one event per segment, none failed), outputs equal
    onnxruntime, and calling again compiles nothing more."""
    feeds = {"x": torch.randn(1, 3, 16, 16, generator=torch.Generator().manual_seed(1))}
    (ref,) = ort_outputs(fork_join(), feeds)
    with CompiledModel(fj_result, CompileOptions(clusters=2, backend=backend)) as model:
        before = _dynamo_counts()
        model.start()
        events = model.compile_report()
        assert sorted(e.segment for e in events) == ["c0_seg0", "c0_seg1", "c0_seg2", "c1_seg0"]
        assert all(e.error is None and e.seconds > 0 for e in events), events
        for _ in range(3):
            pipeline_helpers.assert_close(model(feeds["x"]), ref, what=backend)
        assert len(model.compile_report()) == 4  # no compilation per call
        if backend == "threads":  # the compilations ran in this process: dynamo's counters
            graphs, breaks, recompiles = _dynamo_counts()
            assert graphs - before[0] == 4
            assert breaks == before[1] and recompiles == before[2]


def test_compiled_sequential_module_matches_onnxruntime(fj_result, pipeline_helpers, monkeypatch):
    """The sequential module is one segment, compiled at its first call, once (at its thread
    count: next to another busy process it would run a call with 1 thread, compiled anew)."""
    monkeypatch.setenv("RAMIEL_ADAPT_THREADS", "0")
    feeds = {"x": torch.randn(1, 3, 16, 16, generator=torch.Generator().manual_seed(2))}
    (ref,) = ort_outputs(fork_join(), feeds)
    with CompiledModel(fj_result, CompileOptions(clusters=2)) as model:
        before = _dynamo_counts()
        for _ in range(3):
            pipeline_helpers.assert_close(model.sequential(feeds["x"]), ref, what="sequential")
        (event,) = model.compile_report()
        assert event.segment == "forward_seg0" and event.error is None
        graphs, breaks, recompiles = _dynamo_counts()
        assert (graphs - before[0], breaks - before[1], recompiles - before[2]) == (1, 0, 0)


@pytest.mark.parametrize("backend", ["inductor", "onednn-graph"])
def test_frozen_weights_belong_to_their_weights_object(backend):
    """Freezing (inductor) and tracing (onednn-graph) make the weights graph constants: a second
    weights object of the same shapes gets a compilation of its own (its values, not the first
    object's)."""

    @segment(backend=backend)
    def affine(w, x):
        return torch.relu(x @ w.a + w.b)

    g = torch.Generator().manual_seed(0)
    w1 = Weights({"a": torch.randn(8, 8, generator=g), "b": torch.randn(8, generator=g)})
    w2 = Weights({"a": torch.randn(8, 8, generator=g), "b": torch.randn(8, generator=g)})
    x = torch.randn(4, 8, generator=g)
    with torch.no_grad():
        y1, y2, y1_again = affine(w1, x), affine(w2, x), affine(w1, x)
        torch.testing.assert_close(y1, affine.fn(w1, x))
        torch.testing.assert_close(y2, affine.fn(w2, x))
        torch.testing.assert_close(y1_again, y1)
    assert len(affine.events) == 2 and not any(e.error for e in affine.events)


def test_a_segment_called_while_another_compiles_is_compiled():
    """torch's 'compiling' flag is process-wide, and a segment compiling in one thread sets it
    for as long as it compiles: a segment another cluster's thread called meanwhile had taken it
    for a trace of its own, run eagerly and been compiled at a later inference instead of at
    start (the threads backend, in CI). It now waits for that compilation and compiles."""
    from ramiel.runtime import compiled

    @segment(backend="onednn-graph")
    def affine(w, x):
        return torch.relu(x @ w.a + w.b)

    g = torch.Generator().manual_seed(0)
    w = Weights({"a": torch.randn(8, 8, generator=g), "b": torch.randn(8, generator=g)})
    x = torch.randn(4, 8, generator=g)
    compiling, release = threading.Event(), threading.Event()

    def another_segment_compiles() -> None:
        # what a segment's compilation holds: the compile lock, and dynamo's session flag
        with compiled._compiling(), torch.compiler._compile_session_context():
            compiling.set()
            release.wait(30)

    other = threading.Thread(target=another_segment_compiles)
    other.start()
    assert compiling.wait(30)
    got: list[torch.Tensor] = []

    def call() -> None:
        with torch.no_grad():
            got.append(affine(w, x))

    caller = threading.Thread(target=call)
    caller.start()
    caller.join(0.5)
    assert caller.is_alive(), "ran (eagerly) while the other segment was still compiling"
    release.set()
    caller.join(60)
    other.join(30)
    assert [e.segment for e in affine.events] == ["affine"] and affine.events[0].error is None
    torch.testing.assert_close(got[0], affine.fn(w, x))
    assert not torch.compiler.is_compiling()


def test_one_compilation_per_thread_count():
    """Inductor's kernels are generated for the thread count of their compilation, so a segment
    called with 1 and with 2 intra-op threads is compiled twice, once for each, and each count
    then runs its own version."""

    @segment
    def sum_sq(w, x):
        return (x * x + w.c).sum(dim=1)

    w = Weights({"c": torch.ones(1)})
    x = torch.randn(64, 1024, generator=torch.Generator().manual_seed(0))
    prev = torch.get_num_threads()
    try:
        with torch.no_grad():
            for threads in (1, 2, 1, 2):
                torch.set_num_threads(threads)
                torch.testing.assert_close(sum_sq(w, x), sum_sq.fn(w, x))
    finally:
        torch.set_num_threads(prev)
    assert [e.threads for e in sum_sq.events] == [1, 2]


def test_other_strides_are_copied_not_recompiled():
    """A later call with a non-contiguous view or a tensor that requires grad runs the compiled
    version (its input copied into the compiled strides): no second compilation, no dynamo
    recompile."""

    @segment
    def scale(w, x):
        return x * w.k + 1

    w = Weights({"k": torch.full((4,), 3.0)})
    x = torch.randn(4, 4, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        torch.testing.assert_close(scale(w, x), x * 3 + 1)
        before = _dynamo_counts()
        xt = x.t()  # a view with other strides
        torch.testing.assert_close(scale(w, xt), xt * 3 + 1)
        xg = x.clone().requires_grad_(True)
        torch.testing.assert_close(scale(w, xg), x * 3 + 1)
    assert _dynamo_counts() == before
    assert len(scale.events) == 1


def test_graph_break_runs_eagerly_with_a_warning():
    """fullgraph=True: a segment that dynamo cannot trace as one graph is not split silently; it
    runs eagerly, with a warning and the reason in its compile event."""

    @segment
    def breaks(w, x):
        y = torch.relu(x)
        torch._dynamo.graph_break()
        return y + 1

    x = torch.randn(3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with torch.no_grad():
            y = breaks(Weights(), x)
    torch.testing.assert_close(y, torch.relu(x) + 1)
    (event,) = breaks.events
    assert event.error is not None
    assert any("breaks could not be compiled" in str(c.message) for c in caught)


def test_ramiel_compile_0_runs_segments_eagerly(monkeypatch):
    monkeypatch.setenv("RAMIEL_COMPILE", "0")

    @segment
    def double(w, x):
        return 2 * x

    x = torch.randn(3)
    torch.testing.assert_close(double(Weights(), x), 2 * x)
    assert double.events == []


def test_segments_are_found_in_generated_modules(fj_result):
    model = CompiledModel(fj_result, CompileOptions(clusters=2))
    try:
        found = program_segments(model.program)
        assert set(found) == {"c0_seg0", "c0_seg1", "c0_seg2", "c1_seg0"}
        assert all(isinstance(s, Segment) for s in found.values())
        seq_module = sys.modules[type(model.sequential).__module__]
        assert set(segments_in(vars(seq_module))) == {"forward_seg0"}
    finally:
        model.close()


_SECOND_START = textwrap.dedent(
    """
    import json, sys, torch
    from torch._dynamo.utils import counters
    from ramiel.compiler import CompiledModel, CompileOptions, compile_model
    result = compile_model(sys.argv[1], sys.argv[2], CompileOptions(clusters=1, compile=True))
    model = CompiledModel(result, CompileOptions(clusters=1))
    model.sequential(torch.zeros(1, 3, 16, 16))
    (event,) = model.compile_report()
    print(json.dumps({"inductor": dict(counters["inductor"]), "error": event.error}))
    """
)


def test_second_start_hits_the_inductor_cache(tmp_path):
    """Two processes compile the same program: the first fills inductor's FX graph cache under
    RAMIEL_COMPILE_CACHE, the second finds the compiled graph there (no code generation)."""
    path = tmp_path / "fj.onnx"
    onnx.save(fork_join(seed=3), str(path))
    env = dict(os.environ, RAMIEL_COMPILE_CACHE=str(tmp_path / "cache"))
    env.pop("TORCHINDUCTOR_CACHE_DIR", None)
    runs = []
    for k in range(2):
        p = subprocess.run(
            [sys.executable, "-c", _SECOND_START, str(path), str(tmp_path / f"out{k}")],
            capture_output=True,
            text=True,
            env=env,
            timeout=900,
        )
        assert p.returncode == 0, p.stderr[-3000:]
        runs.append(json.loads(p.stdout.strip().splitlines()[-1]))
    first, second = (r["inductor"] for r in runs)
    assert runs[0]["error"] is None and runs[1]["error"] is None
    assert first.get("fxgraph_cache_miss", 0) >= 1 and not first.get("fxgraph_cache_hit")
    assert second.get("fxgraph_cache_hit", 0) >= 1 and not second.get("fxgraph_cache_miss")
    assert os.listdir(tmp_path / "cache")


def run_fork_join(tmp_path, *options: str) -> subprocess.CompletedProcess[str]:
    """``ramiel run`` of the fork-join model with 2 clusters, 3 timed runs and ``options``;
    asserts that it succeeded and checked against onnxruntime."""
    path = tmp_path / "fj.onnx"
    onnx.save(fork_join(), str(path))
    p = subprocess.run(
        [sys.executable, "-m", "ramiel.tools.driver", "run", str(path), *options,
         "--clusters", "2", "--repeat", "3"],
        capture_output=True,
        text=True,
        timeout=900,
        env=dict(os.environ),
    )  # fmt: skip
    assert p.returncode == 0, p.stdout + p.stderr[-3000:]
    assert "check against onnxruntime: OK" in p.stdout
    return p


def test_ramiel_run_compile_reports_segments(tmp_path):
    """``ramiel run --compile``: checks against onnxruntime and prints the compile times."""
    p = run_fork_join(tmp_path, "--compile")
    assert "torch.compile, parallel module: 4 segment(s)" in p.stdout
    assert "torch.compile, sequential module: 1 segment(s)" in p.stdout
    if len(os.sched_getaffinity(0)) >= 2:  # onnxruntime also with the program's cores
        assert "ramiel parallel (2 clusters, threads, 2 core(s)):" in p.stdout
        assert "onnxruntime (2 threads):" in p.stdout


# ----------------------------------------------------------------------------------- extended

SLOW_MODELS = [
    "light_bvlc_alexnet",
    "light_densenet121",
    "light_inception_v1",
    "light_inception_v2",
    "light_resnet50",
    "light_shufflenet",
    "light_squeezenet",
    "light_vgg19",
    "light_zfnet512",
    "inception",
    "transformer",
    "transformer_torch",
]


@pytest.mark.extended
@pytest.mark.parametrize("backend", ["threads", "processes"])
@pytest.mark.parametrize("name", SLOW_MODELS)
def test_compiled_models_match_onnxruntime(name, backend, tmp_path, zoo_models, pipeline_helpers):
    """Zoo models (random weights) and the project's models with compiled segments, 2 clusters,
    both backends, and the compiled sequential module: equal to onnxruntime."""
    from ramiel import models
    from ramiel.importer import load_model
    from ramiel.models import randomize_weights

    if name in zoo_models:
        source = randomize_weights(load_model(zoo_models[name]), seed=0)
    else:
        source = load_model(models.export_model(name, tmp_path / f"{name}.onnx"))
    with ramiel.compile(
        source, clusters=2, backend=backend, compile=True, out_dir=str(tmp_path / "out")
    ) as model:
        feeds = random_inputs(model.input_specs, seed=0)
        refs = ort_outputs(source, feeds)
        model.start()
        outs = model.run(feeds)
        for ref, (oname, out) in zip(refs, outs.items(), strict=True):
            pipeline_helpers.assert_close(out, ref, what=f"{name} {backend} {oname}")
        if backend == "threads":
            seq = model.sequential(*feeds.values())
            seq = seq if isinstance(seq, tuple) else (seq,)
            for ref, out in zip(refs, seq, strict=True):
                pipeline_helpers.assert_close(out, ref, what=f"{name} sequential")
        events = model.compile_report()
        assert events and not [e for e in events if e.error], events
