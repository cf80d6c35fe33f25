"""Compiled segments with the ``onednn-graph`` backend (``compile="onednn-graph"``,
``--compile-backend onednn-graph``): traced on the first call, run by TorchScript with oneDNN Graph
fusion, checked against the eager result, and run eagerly (with a warning) where a trace would
not follow another input.

Numerics are checked against onnxruntime on a fork-join model (two clusters, both backends) and
on light_squeezenet and light_shufflenet with random weights.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import onnx
import pytest
import torch
import torch.nn.functional as F

import ramiel
from ramiel.compiler import CompiledModel, CompileOptions, compile_model
from ramiel.errors import RamielError, RuntimeFailure
from ramiel.models import randomize_weights
from ramiel.passes.compile_segments import SEGMENT_BACKENDS
from ramiel.runtime import Weights, trial
from ramiel.runtime import compiled as compiled_mod
from ramiel.runtime.compiled import BACKENDS, segment
from tests.test_compiled import fork_join, ort_outputs, run_fork_join

_REAL_TIMING = compiled_mod._time_against_eager

pytestmark = pytest.mark.usefixtures("trace_wins")  # (conftest.py); one test times for real:
# test_a_trace_slower_than_eager_runs_eagerly


@pytest.fixture(scope="module")
def fj_onednn(tmp_path_factory):
    """The fork-join model compiled for 2 clusters with onednn-graph segments."""
    out = tmp_path_factory.mktemp("fj_onednn")
    return compile_model(fork_join(), str(out), CompileOptions(clusters=2, compile="onednn-graph"))


def test_backend_names_agree():
    """The pass names the backends without importing torch; the runtime runs them."""
    assert SEGMENT_BACKENDS == BACKENDS


def test_generated_source_names_the_backend(fj_onednn):
    for path, first in (
        (fj_onednn.parallel_path, "c0_seg0"),
        (fj_onednn.sequential_path, "forward_seg0"),
    ):
        text = Path(path).read_text()
        assert f"@segment(backend='onednn-graph')\ndef {first}(w" in text
        assert "\n@segment\n" not in text


@pytest.mark.parametrize("backend", ["threads", "processes"])
def test_parallel_and_sequential_modules_match_onnxruntime(fj_onednn, backend, pipeline_helpers):
    feeds = {"x": torch.randn(1, 3, 16, 16, generator=torch.Generator().manual_seed(3))}
    (ref,) = ort_outputs(fork_join(), feeds)
    with CompiledModel(fj_onednn, CompileOptions(clusters=2, backend=backend)) as model:
        for _ in range(2):
            pipeline_helpers.assert_close(model.run(feeds)["y"], ref, what=f"{backend} parallel")
            pipeline_helpers.assert_close(model.sequential(feeds["x"]), ref, what="sequential")
        events = model.compile_report()
    assert events and all(e.backend == "onednn-graph" and e.error is None for e in events)
    assert {e.segment for e in events} >= {"forward_seg0"}


@pytest.mark.parametrize("name", ["light_squeezenet", "light_shufflenet", "light_inception_v1"])
def test_zoo_models_match_onnxruntime(name, zoo_models, pipeline_helpers):
    """Random weights (the zoo's are splats). All fuse: shufflenet's fusion failed on its
    concatenations (an mkldnn tensor reached aten::cat) until the trace's in-place statements
    were made functional; inception_v1's LRN is one opaque op in the trace."""
    model = randomize_weights(onnx.load(zoo_models[name]), seed=1)
    x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(4))
    weights = {t.name for t in model.graph.initializer}
    (data,) = [i.name for i in model.graph.input if i.name not in weights]
    (ref,) = ort_outputs(model, {data: x})
    with ramiel.compile(model, clusters=1, compile="onednn-graph") as m:
        with torch.no_grad():
            for _ in range(2):
                pipeline_helpers.assert_close(m.sequential(x), ref, what=name)
        events = m.compile_report()
    assert events and all(e.error is None and e.note is None for e in events)


def test_value_dependent_segment_runs_eagerly_with_a_warning():
    """A trace keeps a Python value made from a tensor as a constant: such a segment is not
    traced; it runs eagerly (both branches stay right) and says why."""

    @segment(backend="onednn-graph")
    def branch(w, x):
        if x.sum() > 0:
            return x * w.k
        return x - w.k

    w = Weights({"k": torch.full((4,), 2.0)})
    pos, neg = torch.ones(4), -torch.ones(4)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.testing.assert_close(branch(w, pos), pos * 2)
    torch.testing.assert_close(branch(w, neg), neg - 2)
    (event,) = branch.events
    assert event.error and "depends on a tensor's value" in event.error
    assert any("branch could not be compiled" in str(c.message) for c in caught)


def test_trace_holds_its_shapes_other_shapes_run_eagerly():
    """The trace is made for the first call's shapes (the generated modules are compiled for
    fixed shapes); a call with other shapes runs the statements eagerly, not the trace."""

    @segment(backend="onednn-graph")
    def rows(w, x):
        return torch.relu(x @ w.a).sum(dim=0)

    g = torch.Generator().manual_seed(0)
    w = Weights({"a": torch.randn(8, 8, generator=g)})
    x4, x2 = torch.randn(4, 8, generator=g), torch.randn(2, 8, generator=g)
    with torch.no_grad():
        torch.testing.assert_close(rows(w, x4), rows.fn(w, x4))
        torch.testing.assert_close(rows(w, x2), rows.fn(w, x2))
        torch.testing.assert_close(rows(w, x4), rows.fn(w, x4))
    assert len(rows.events) == 1 and rows.events[0].error is None


def test_failed_fusion_runs_traced_without_it(monkeypatch):
    """Where TorchScript's oneDNN Graph fusion fails (as on light_shufflenet's concatenations),
    the segment is traced again and run without the fusion, with a note in its event."""
    real = compiled_mod._traced_run

    def fusion_fails(bound, inputs, expected, fuse, **kw):
        if fuse:
            raise RuntimeError("vector::_M_range_check")
        return real(bound, inputs, expected, fuse, **kw)

    monkeypatch.setattr(compiled_mod, "_traced_run", fusion_fails)

    @segment(backend="onednn-graph")
    def scale(w, x):
        return x * w.k + 1

    w = Weights({"k": torch.full((4,), 3.0)})
    x = torch.randn(4)
    torch.testing.assert_close(scale(w, x), x * 3 + 1)
    torch.testing.assert_close(scale(w, x), x * 3 + 1)
    (event,) = scale.events
    assert event.error is None and "fusion failed (RuntimeError: vector" in event.note
    assert f"scale ({event.threads} thread" in compiled_mod.summary(scale.events)
    assert "traced without it" in compiled_mod.summary(scale.events)


def test_traced_result_that_differs_is_refused():
    """The check that makes a wrong trace run eagerly instead."""
    e = torch.tensor([1.0, 2.0])
    compiled_mod._check_same(e, e + 1e-4)
    with pytest.raises(RuntimeError, match="differs from eager"):
        compiled_mod._check_same(e, e + 0.1)
    with pytest.raises(RuntimeError, match="differs from eager"):
        compiled_mod._check_same(e, torch.tensor([1.0, float("nan")]))
    special = torch.tensor([float("-inf"), float("nan"), 3.0])  # log(0), 0/0: the same is fine
    compiled_mod._check_same(special, special.clone())
    with pytest.raises(RuntimeError, match="differs from eager"):
        compiled_mod._check_same(special, torch.tensor([float("inf"), float("nan"), 3.0]))
    with pytest.raises(RuntimeError, match="returned 1 values, not 2"):
        compiled_mod._check_same((e, e), e)


def test_unknown_backends_are_refused():
    with pytest.raises(ValueError, match="backend must be one of inductor, onednn-graph"):
        segment(backend="tvm")(lambda w, x: x)
    with pytest.raises(
        RamielError, match="CompileOptions.compile must be True, False, 'auto' or one of"
    ):
        CompileOptions(compile="tvm").check()


def test_ramiel_run_compile_backend_reports_segments(tmp_path):
    """``ramiel run --compile-backend onednn-graph``: implies ``--compile``, checks against
    onnxruntime and names the backend in the compile report (no inductor cache line)."""
    p = run_fork_join(tmp_path, "--compile-backend", "onednn-graph")
    assert "oneDNN Graph (TorchScript), parallel module: 4 segment(s)" in p.stdout
    assert "oneDNN Graph (TorchScript), sequential module: 1 segment(s)" in p.stdout
    assert "inductor cache" not in p.stdout


def test_transformer_is_fused_and_matches_onnxruntime(
    exported_model, pipeline_helpers, monkeypatch
):
    """The project's transformer: its projections (matmul then bias add, which oneDNN Graph's
    fusion cannot take) are rewritten to ``aten::linear``, so the whole forward is fused (no
    note) and still matches onnxruntime. (The sequential module keeps its thread count: next to
    another busy process it would also compile for 1 thread, a second event.)"""
    monkeypatch.setenv("RAMIEL_ADAPT_THREADS", "0")
    path = exported_model("transformer")
    ids = torch.randint(0, 1000, (1, 64), generator=torch.Generator().manual_seed(5))
    (ref,) = ort_outputs(path, {"input_ids": ids})
    with ramiel.compile(path, clusters=1, compile="onednn-graph") as m:
        with torch.no_grad():
            for _ in range(2):
                pipeline_helpers.assert_close(m.sequential(ids), ref, what="transformer")
        (event,) = m.compile_report()
    assert event.error is None and event.note is None


def _traced_graph(fn, *inputs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return torch.jit.trace(fn, inputs, check_trace=False).graph


def test_matmul_bias_rewrite_only_for_constant_weights_and_biases():
    """The rewrite to ``aten::linear`` needs a constant 2-D weight (K, N), a constant (N,) bias
    and alpha 1 for every matmul-add pair; otherwise the graph is left as it is."""
    g = torch.Generator().manual_seed(6)
    w, b, x = torch.randn(8, 4, generator=g), torch.randn(4, generator=g), torch.randn(3, 8)
    rewrite = compiled_mod._matmul_bias_as_linear

    graph = _traced_graph(lambda x: torch.matmul(x, w).add_(b), x)
    assert rewrite(graph) and "aten::linear" in str(graph) and "aten::matmul" not in str(graph)

    kept = {
        "weight an input": _traced_graph(lambda x, v: torch.matmul(x, v) + b, x, w),
        "bias (1, N)": _traced_graph(lambda x: torch.matmul(x, w) + b.reshape(1, 4), x),
        "alpha 2": _traced_graph(lambda x: torch.add(torch.matmul(x, w), b, alpha=2), x),
        "no bias add": _traced_graph(lambda x: torch.matmul(x, w) * 2, x),
    }
    for what, graph in kept.items():
        assert not rewrite(graph), what
        assert "aten::linear" not in str(graph), what


def test_concatenation_inputs_become_contiguous_boundaries():
    """The work-around for the fusion's failure on light_shufflenet: every input of every
    ``aten::cat`` goes through ``aten::contiguous`` in its own memory format (a no-op on the
    dense tensors concatenated), and the trace still computes the same."""
    a = torch.randn(1, 4, 5, 5).contiguous(memory_format=torch.channels_last)
    b = torch.randn(1, 3, 5, 5).contiguous(memory_format=torch.channels_last)
    v = torch.randn(2, 3)

    def f(a, b, v):
        return torch.cat([a, b], dim=1).relu(), torch.cat([v, v], dim=0)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        traced = torch.jit.trace(f, (a, b, v), check_trace=False)
    assert compiled_mod._contiguous_cat_inputs(traced.graph) == 4
    formats = [
        compiled_mod._constant(n.inputsAt(1)) for n in traced.graph.findAllNodes("aten::contiguous")
    ]
    assert formats == [2, 2, 0, 0]  # channels-last for the 4-D ones, contiguous for the others
    for got, want in zip(traced(a, b, v), f(a, b, v), strict=True):
        torch.testing.assert_close(got, want)
        assert got.stride() == want.stride()


@pytest.mark.parametrize("backend", ["inductor", "onednn-graph"])
def test_a_segment_that_writes_its_input_in_place_computes_once(backend):
    """Compiling runs the statements more than once (eagerly, traced, warm-up runs), each time on
    copies of the inputs: the first call's result and its in-place write are those of one run
    (a fresh-user check got 5x the bias on the compiling call)."""

    @segment(backend=backend)
    def accumulate(w, m, b):
        return m.add_(b) * 2

    w, m, b = Weights(), torch.zeros(3), torch.ones(3)
    with torch.no_grad():
        torch.testing.assert_close(accumulate(w, m, b), torch.full((3,), 2.0))
        torch.testing.assert_close(m, torch.ones(3))
        torch.testing.assert_close(accumulate(w, m, b), torch.full((3,), 4.0))
    assert [e.error for e in accumulate.events] == [None]


def test_replaced_or_rewritten_weights_compile_again():
    """The weights are constants of the compiled version: replacing one
    (``load_state_dict(assign=True)``, ``.double()``) or writing it in place
    (``load_state_dict``) compiles the segment again for the new values."""

    class M(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("k", torch.full((4,), 2.0))

    @segment(backend="onednn-graph")
    def scale(w, x):
        return x * w.k + 1

    m, x = M(), torch.ones(4)
    with torch.no_grad():
        torch.testing.assert_close(scale(m, x), torch.full((4,), 3.0))
        m.load_state_dict({"k": torch.full((4,), 5.0)})  # copied in place
        torch.testing.assert_close(scale(m, x), torch.full((4,), 6.0))
        m.load_state_dict({"k": torch.full((4,), 7.0)}, assign=True)  # a new tensor
        torch.testing.assert_close(scale(m, x), torch.full((4,), 8.0))
        m.double()
        torch.testing.assert_close(scale(m, x.double()), torch.full((4,), 8.0).double())
    assert len(scale.events) == 4 and not any(e.error for e in scale.events)


def test_inputs_that_require_grad_run_eagerly_for_autograd():
    @segment(backend="onednn-graph")
    def affine(w, x):
        return torch.relu(x @ w.a)

    w = Weights({"a": torch.randn(4, 4, generator=torch.Generator().manual_seed(8))})
    x = torch.randn(2, 4, generator=torch.Generator().manual_seed(9))
    with torch.no_grad():
        affine(w, x)  # compiled
    xg = x.clone().requires_grad_(True)
    y = affine(w, xg)
    assert y.requires_grad
    y.sum().backward()
    torch.testing.assert_close(xg.grad, ((x @ w.a) > 0).float() @ w.a.t())


def test_compiled_versions_go_with_their_weights_object():
    """A dropped weights object (a module deleted) drops its entries (TorchScript itself keeps
    the trace: see ``_Entry``)."""
    import gc

    @segment(backend="onednn-graph")
    def scale(w, x):
        return x * w.k

    x = torch.ones(4)
    with torch.no_grad():
        for value in (2.0, 3.0):
            w = Weights({"k": torch.full((4,), value)})
            torch.testing.assert_close(scale(w, x), torch.full((4,), value))
            del w
            gc.collect()
            assert scale._entries == {}


def test_a_segment_of_asserts_only_is_not_compiled_nor_warned_about():
    @segment(backend="onednn-graph")
    def checks(w, x):
        torch._assert(x.shape == (4,), "shape")

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert checks(Weights(), torch.ones(4)) is None
    assert checks.events == []


def test_trainable_weights_are_refused():
    with pytest.raises(RamielError, match="could not be trained"):
        CompileOptions(compile="onednn-graph", trainable=True).check()


def test_start_compiles_for_the_fewer_threads_a_loaded_machine_gets(tmp_path):
    """An inference under load runs with fewer intra-op threads than planned: the warm-up
    compiles the onednn-graph segments for 1 thread too, so no inference compiles."""
    res = compile_model(
        fork_join(), str(tmp_path), CompileOptions(clusters=1, compile="onednn-graph")
    )
    with CompiledModel(res, CompileOptions(clusters=1, threads_per_worker=2)) as model:
        model.start()
        events = model.compile_report()
        assert sorted(e.threads for e in events if e.segment == "c0_seg0") == [1, 2]
        feeds = {"x": torch.randn(1, 3, 16, 16, generator=torch.Generator().manual_seed(10))}
        (ref,) = ort_outputs(fork_join(), feeds)
        torch.testing.assert_close(
            model.run(feeds)["y"], torch.from_numpy(ref), rtol=1e-3, atol=1e-4
        )


def test_a_wrong_input_raises_its_assert_before_and_after_compiling():
    """The input's own error (a generated assert) on the first call is the caller's: raised as
    eagerly, no warning, and the next right call compiles (a fresh-user check found the segment
    left eager for good). After that, an input of another dtype runs the statements eagerly (the
    trace dropped the asserts), so the assert still speaks."""

    @segment(backend="onednn-graph")
    def embed(w, ids):
        torch._assert(ids.dtype == torch.int64, "input 'ids': int64 only")
        return w.table[ids] * 2

    w = Weights({"table": torch.randn(10, 4, generator=torch.Generator().manual_seed(11))})
    ids = torch.tensor([[1, 2, 3]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with torch.no_grad():
            with pytest.raises(AssertionError, match="int64 only"):
                embed(w, ids.int())
            torch.testing.assert_close(embed(w, ids), w.table[ids] * 2)
            with pytest.raises(AssertionError, match="int64 only"):
                embed(w, ids.int())
    assert [e.error for e in embed.events] == [None]


def test_weights_that_require_grad_run_eagerly_and_tracing_sees_the_statements():
    @segment(backend="onednn-graph")
    def affine(w, x):
        return x @ w.a

    w = Weights({"a": torch.randn(4, 4, generator=torch.Generator().manual_seed(12))})
    x = torch.randn(2, 4)
    with torch.no_grad():
        affine(w, x)  # compiled
    w.a.requires_grad_(True)
    assert affine(w, x).requires_grad
    w.a.requires_grad_(False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        traced = torch.jit.trace(lambda x: affine(w, x), (x,), check_trace=False)  # no nesting
    torch.testing.assert_close(traced(x), x @ w.a)
    assert len(affine.events) == 1


_MBCONV_SEGMENT = """
import torch
import torch.nn.functional as F
from ramiel.runtime import Weights
from ramiel.runtime.compiled import segment

def silu_(x):
    return torch.sigmoid(x).mul_(x)

def squeeze_excite(w, x, i):
    r, e = (getattr(w, f"{k}{i}") for k in "re")
    s = silu_(F.conv2d(x.contiguous().mean((2, 3), keepdim=True), r, getattr(w, f"r{i}_b")))
    return x * torch.sigmoid_(F.conv2d(s, e, getattr(w, f"e{i}_b")))

@segment(backend="onednn-graph")
def blocks(w, x):
    x = silu_(F.conv2d(F.pad(x.contiguous(memory_format=torch.channels_last), [0, 1, 0, 1]),
                       w.stem, w.stem_b, stride=2))
    x = squeeze_excite(w, silu_(F.conv2d(x, w.dw0, w.dw0_b, padding=1, groups=32)), 0)
    x = silu_(F.conv2d(F.conv2d(x, w.p0, w.p0_b), w.x1, w.x1_b))
    x = silu_(F.conv2d(F.pad(x, [0, 1, 0, 1]), w.dw1, w.dw1_b, stride=2, groups=96))
    return squeeze_excite(w, x, 1)

torch.manual_seed(0)
shapes = dict(stem=(32, 3, 3, 3), dw0=(32, 1, 3, 3), r0=(8, 32, 1, 1), e0=(32, 8, 1, 1),
              p0=(16, 32, 1, 1), x1=(96, 16, 1, 1), dw1=(96, 1, 3, 3), r1=(4, 96, 1, 1),
              e1=(96, 4, 1, 1))
w = Weights({k: torch.randn(s) * 0.3 for k, s in shapes.items()}
            | {f"{k}_b": torch.randn(s[0]) * 0.1 for k, s in shapes.items()})
x = torch.randn(1, 3, 224, 224)
with torch.no_grad():
    want = blocks.fn(w, x.clone())
    for _ in range(2):
        torch.testing.assert_close(blocks(w, x), want, rtol=1e-4, atol=1e-4)
(event,) = blocks.events
assert event.error is None and "fusion failed" not in (event.note or ""), event
print("fused and matching")
"""


def test_in_place_statements_are_made_functional_before_the_fusion():
    """EfficientNet-B0's first two blocks, as the generated code prints them (SiLU as
    ``sigmoid(x).mul_(x)``, the stride-2 convolutions after an ``F.pad``), with random weights:
    TorchScript's oneDNN Graph fusion crashed the process (a segmentation fault, torch 2.13) on
    the in-place ``mul_`` until the trace's mutations were removed before fusing. In a child
    process, so that a crash fails this test instead of the run."""
    done = subprocess.run(
        [sys.executable, "-c", _MBCONV_SEGMENT], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "fused and matching" in done.stdout


def _affine():
    """A fresh ``onednn-graph`` segment ``x * w.k + 1`` (no compilation yet), its weights, an
    input."""

    @segment(backend="onednn-graph")
    def affine(w, x):
        return x * w.k + 1

    return affine, Weights({"k": torch.full((8,), 3.0)}), torch.randn(8)


def test_a_trace_slower_than_eager_runs_eagerly(monkeypatch):
    """The first call times the trace against the eager statements; the faster runs the segment
    (fused LRN made light_inception_v1 4.6x slower than eager), and the event says so."""
    monkeypatch.setattr(compiled_mod, "_time_against_eager", _REAL_TIMING)
    real = compiled_mod._traced_run
    calls = []

    def slow_trace(*args, **kw):
        traced = real(*args, **kw)

        def slow(*xs):
            calls.append(1)
            time.sleep(0.02)
            return traced(*xs)

        return slow

    monkeypatch.setattr(compiled_mod, "_traced_run", slow_trace)
    affine, w, x = _affine()
    with torch.no_grad():
        for _ in range(3):
            torch.testing.assert_close(affine(w, x), x * 3 + 1)
    (event,) = affine.events
    assert event.error is None and event.note.startswith("runs eagerly: "), event
    assert " eagerly against " in event.note and event.note.endswith(" ms fused")
    timed = len(calls)
    with torch.no_grad():
        affine(w, x)
    assert len(calls) == timed  # later calls run the statements, not the trace


@pytest.mark.parametrize(
    ("traced_ms", "eager_ms", "eager"), [(10.0, 9.5, False), (10.0, 8.5, True)]
)
def test_eager_runs_only_where_it_timed_clearly_faster(monkeypatch, traced_ms, eager_ms, eager):
    """The start-up timing is a few calls, often while other processes start too (a near tie of
    32.36 against 32.39 ms, where an inference takes 5, had sent a segment eager for good, 30 %
    slower): the statements replace the trace only below EAGER_MARGIN of its time."""
    monkeypatch.setattr(compiled_mod, "_time_against_eager", lambda *_: (traced_ms, eager_ms))
    affine, w, x = _affine()
    with torch.no_grad():
        torch.testing.assert_close(affine(w, x), x * 3 + 1)
    (event,) = affine.events
    assert event.error is None
    assert (event.note or "").startswith("runs eagerly: ") == eager, event
    assert compiled_mod.EAGER_MARGIN * traced_ms < 9.5


def test_pools_whose_stride_is_their_kernel_fuse():
    """``F.avg_pool2d(x, (2, 2))`` (the stride defaults to the kernel: how the generated code
    prints an ONNX pool whose strides equal its kernel) traces with an empty stride list, on
    which the fusion failed (``could not set attribute to the op``: light_densenet121's whole
    segment ran unfused); the list is made the kernel size first."""

    @segment(backend="onednn-graph")
    def transition(w, x):
        y = F.conv2d(torch.relu(x), w.k)
        return F.avg_pool2d(y, (2, 2)) + F.max_pool2d(y, (2, 2))

    w = Weights({"k": torch.randn(8, 4, 1, 1)})
    x = torch.randn(1, 4, 16, 16).contiguous(memory_format=torch.channels_last)
    with torch.no_grad():
        want = transition.fn(w, x)
        for _ in range(2):
            torch.testing.assert_close(transition(w, x), want)
    (event,) = transition.events
    assert event.error is None and event.note is None, event


def test_lrn_is_one_opaque_op_in_a_trace_for_the_fusion():
    """Traced for oneDNN Graph (``ops.opaque_to_fusion``), ``ops.lrn`` is one ``ramiel::lrn``
    node that runs its statements (the fusion made them 4-5x slower); any other trace records
    the statements."""
    from ramiel.runtime import ops

    def f(x):
        return ops.lrn(torch.relu(x), 5, 1e-4, 0.75, 2.0)

    x = torch.randn(1, 8, 6, 6).contiguous(memory_format=torch.channels_last)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with ops.opaque_to_fusion():
            opaque = torch.jit.trace(f, (x,), check_trace=False)
        plain = torch.jit.trace(f, (x,), check_trace=False)
    kinds = {n.kind() for n in opaque.graph.nodes()}
    assert "ramiel::lrn" in kinds and {k for k in kinds if k.startswith("aten::")} == {"aten::relu"}
    assert "ramiel::lrn" not in {n.kind() for n in plain.graph.nodes()}
    y = torch.randn(1, 8, 6, 6).contiguous(memory_format=torch.channels_last)
    for traced in (opaque, plain):
        got = traced(y)
        torch.testing.assert_close(got, f(y))
        assert got.is_contiguous(memory_format=torch.channels_last)


def _conv_relu_silu(path: Path) -> str:
    """An ONNX model Conv -> Relu -> Conv -> SiLU (Sigmoid, Mul), 8 channels, 1x8x16x16: the
    generated code writes in place (``relu_``, ``mul_``) inside its segments."""
    from onnx import TensorProto, helper, numpy_helper

    g = torch.Generator().manual_seed(5)
    inits = [
        numpy_helper.from_array((torch.randn(8, 8, 3, 3, generator=g) * 0.3).numpy(), n)
        for n in ("w1", "w2")
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("Sigmoid", ["c2"], ["s2"]),
        helper.make_node("Mul", ["c2", "s2"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "conv_relu_silu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 16, 16])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, path)
    return str(path)


def test_backward_through_segments_that_write_in_place(tmp_path):
    """An input that requires grad: the sequential ``forward`` runs its in-place statements as
    copies (``ops.records_autograd``, then ``torch.func.functionalize``) also where they are in
    its segments, and the segments run their statements on functionalized inputs (the compiled
    version had segfaulted on them; found by a fresh-user check). The gradient is the one of
    the module compiled without segments."""
    path = _conv_relu_silu(tmp_path / "m.onnx")
    with (
        ramiel.compile(path, clusters=1, compile="onednn-graph") as seg,
        ramiel.compile(path, clusters=1) as plain,
    ):
        assert "if ops.records_autograd(x):" in Path(seg.result.sequential_path).read_text()
        x = torch.randn(1, 8, 16, 16, generator=torch.Generator().manual_seed(6))
        with torch.no_grad():
            seg.sequential(x)  # compiled
        grads = []
        for m in (seg, plain):
            xg = x.clone().requires_grad_(True)
            m.sequential(xg).sum().backward()
            grads.append(xg.grad)
        torch.testing.assert_close(grads[0], grads[1])
        assert [e.error for e in seg.compile_report()] == [None]


def test_torch_func_transforms_run_the_statements():
    """``torch.vmap`` and ``torch.func.grad`` pass wrapped tensors: the statements run on them,
    not the compiled version."""

    @segment(backend="onednn-graph")
    def scale(w, x):
        return torch.sigmoid(x * w.k) * x

    w = Weights({"k": torch.full((4,), 2.0)})
    x = torch.randn(3, 4)
    with torch.no_grad():
        scale(w, x[0])  # compiled for shape (4,)
    want = torch.stack([torch.sigmoid(r * 2) * r for r in x])
    torch.testing.assert_close(torch.vmap(lambda r: scale(w, r))(x), want)
    g = torch.func.grad(lambda r: scale(w, r).sum())(x[0])
    r = x[0].clone().requires_grad_(True)
    (torch.sigmoid(r * 2) * r).sum().backward()
    torch.testing.assert_close(g, r.grad)


def test_a_batch_assert_inside_torch_assert_does_not_stop_the_trace():
    """``torch._assert(x.shape[0] == 1, ...)`` (a ``--dynamic-batch`` module compiled for batch 1
    only): the trace makes the condition a tensor, and its ``TracerWarning`` comes from inside
    ``torch._assert``; it checks the shape the trace holds, as the generated shape asserts do,
    so the segment is traced (it ran eagerly, with a warning; found by a fresh-user check)."""

    @segment(backend="onednn-graph")
    def batch_one(w, x):
        torch._assert(x.shape[0] == 1, "batch size 1 only")
        return torch.relu(x * w.k)

    w = Weights({"k": torch.full((4,), 2.0)})
    x = torch.randn(1, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        torch.testing.assert_close(batch_one(w, x), torch.relu(x * 2))
    (event,) = batch_one.events
    assert event.error is None and event.note is None, event
    with pytest.raises(AssertionError, match="batch size 1 only"):
        batch_one(w, torch.randn(2, 4))  # another shape: the statements, the assert


def test_weights_that_require_grad_at_the_first_call_compile_later():
    """A weight that requires grad at the first call: that call runs the statements, and the
    first call without one compiles (the trace had failed on it, and the segment stayed eager
    for good; found by a fresh-user check)."""

    @segment(backend="onednn-graph")
    def affine(w, x):
        return x @ w.a

    w = Weights({"a": torch.randn(4, 3).requires_grad_(True)})
    x = torch.randn(2, 4)
    affine(w, x).sum().backward()
    assert w.a.grad is not None and not affine.events
    w.a.requires_grad_(False)
    with torch.no_grad():
        torch.testing.assert_close(affine(w, x), x @ w.a)
    assert [(e.error, e.note) for e in affine.events] == [(None, None)]


def test_reloading_ops_keeps_the_opaque_lrn_of_earlier_traces():
    """``importlib.reload(ramiel.runtime.ops)`` takes over the ``torch.library`` that defines
    ``ramiel::lrn``: had it been collected, the traces that call the op would segfault (found by
    a fresh-user check). In a child process, so that a crash fails this test, not the run."""
    code = """
import importlib, torch, warnings
from ramiel.runtime import ops
def f(x):
    return ops.lrn(torch.relu(x), 3)
x = torch.randn(1, 4, 5, 5)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    with ops.opaque_to_fusion():
        traced = torch.jit.trace(f, (x,), check_trace=False)
importlib.reload(ops)
import gc; gc.collect()
torch.testing.assert_close(traced(x), f(x))
print("traced after reload")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "traced after reload" in done.stdout


def test_the_shape_asserts_are_known_when_the_file_is_gone(tmp_path):
    """The generated shape asserts are read when the segment is made: a module whose file was
    removed before its first call (``ramiel.compile(...).sequential`` alone: the CompiledModel
    and its temporary directory dropped) is still traced (it ran eagerly, with a warning)."""
    path = tmp_path / "gone.py"
    path.write_text(
        "import torch\n"
        "from ramiel.runtime.compiled import segment\n\n\n"
        "@segment(backend='onednn-graph')\n"
        "def shaped(w, x):\n"
        "    torch._assert(x.shape == (2, 4), 'shape (2, 4) only')\n"
        "    return torch.relu(x * w.k)\n"
    )
    import importlib.util

    spec = importlib.util.spec_from_file_location("gone", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    path.unlink()
    w = Weights({"k": torch.full((4,), 2.0)})
    x = torch.randn(2, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        torch.testing.assert_close(mod.shaped(w, x), torch.relu(x * 2))
    assert [(e.error, e.note) for e in mod.shaped.events] == [(None, None)]


def test_warm_up_runs_on_random_floats(tmp_path, monkeypatch):
    """start()'s warm-up inference, on which each onednn-graph segment checks its fused trace
    against its statements and times both, feeds normal-distributed floats (seed 0), not
    zeros: a wrong kernel can still map zeros to the right result."""
    from ramiel.runtime.runner import Runner

    seen: list[dict[str, torch.Tensor]] = []
    run = Runner.run

    def recording(self, feeds, *args, **kwargs):
        seen.append({k: v.clone() for k, v in feeds.items()})
        return run(self, feeds, *args, **kwargs)

    monkeypatch.setattr(Runner, "run", recording)
    res = compile_model(
        fork_join(), str(tmp_path), CompileOptions(clusters=1, compile="onednn-graph")
    )
    with CompiledModel(res, CompileOptions(clusters=1)) as model:
        model.start()
    (x,) = seen[0].values()
    assert x.dtype == torch.float32 and x.shape == (1, 3, 16, 16)
    assert 0.5 < float(x.std()) < 1.5 and float(x.abs().min()) < float(x.abs().max())
    expected = torch.randn(x.shape, generator=torch.Generator().manual_seed(0))
    torch.testing.assert_close(x, expected)


@pytest.mark.parametrize("first", ["call", "trace"])
def test_fx_symbolic_trace_sees_the_statements(fj_onednn, first):
    """``torch.fx.symbolic_trace`` of a sequential module with onednn-graph segments records
    the statements, whether the module ran before (a shape comparison on an fx Proxy had
    failed: found by a fresh-user check) or not (the trace's Proxies had left the segment eager
    for good): the graph module matches eager, and the next call compiles."""
    with CompiledModel(fj_onednn, CompileOptions(clusters=2)) as m:
        seq = m.sequential
        mod = sys.modules[type(seq).__module__]
        segs = [v for v in vars(mod).values() if isinstance(v, compiled_mod.Segment)]
        assert segs
        x = torch.randn(1, 3, 16, 16, generator=torch.Generator().manual_seed(20))
        with torch.no_grad():
            eager = seq(x) if first == "call" else None
            graph = torch.fx.symbolic_trace(seq)
            got = graph(x)
            again = seq(x)
        assert all(s.events and s.events[-1].error is None for s in segs)
        torch.testing.assert_close(got, again)
        if eager is not None:
            torch.testing.assert_close(got, eager)


def test_an_error_in_the_trace_is_the_statements_error():
    """An index out of range raises the statements' IndexError from the traced version too,
    not TorchScript's multi-line RuntimeError (which one runs follows the timing: found by a
    fresh-user check)."""

    @segment(backend="onednn-graph")
    def lookup(w, ids):
        return w.table[ids] * 2

    w = Weights({"table": torch.randn(10, 4, generator=torch.Generator().manual_seed(21))})
    with torch.no_grad():
        ids = torch.tensor([[1, 2, 3]])
        torch.testing.assert_close(lookup(w, ids), w.table[ids] * 2)
        assert lookup._entries and all(e.fn is not lookup.fn for e in lookup._entries.values())
        with pytest.raises(IndexError, match="out of bounds"):
            lookup(w, torch.tensor([[1, 2, 17]]))


def test_instance_norm_traces():
    """``F.instance_norm`` checks its input's spatial size with Python values (under tracing:
    a TracerWarning inside torch); the trace holds the shape anyway, so the segment traces
    (found by a fresh-user check: it ran eagerly with a warning on every model)."""

    @segment(backend="onednn-graph")
    def norm(w, x):
        return torch.relu(F.instance_norm(x, weight=w.scale, bias=w.shift, eps=1e-5))

    g = torch.Generator().manual_seed(22)
    w = Weights({"scale": torch.randn(4, generator=g), "shift": torch.randn(4, generator=g)})
    x = torch.randn(1, 4, 8, 8, generator=g)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with torch.no_grad():
            got = norm(w, x)
    torch.testing.assert_close(got, torch.relu(F.instance_norm(x, None, None, w.scale, w.shift)))
    assert [e.error for e in norm.events] == [None]
    assert all(e.fn is not norm.fn for e in norm._entries.values())


def _conv_relu() -> tuple[Any, Weights, torch.Tensor]:
    """An onednn-graph segment whose trace fuses a Relu into a convolution, its weights and an
    input (random, finite)."""

    @segment(backend="onednn-graph")
    def conv_relu(w, x):
        return torch.relu(F.conv2d(x, w.k, w.b, padding=1))

    g = torch.Generator().manual_seed(0)
    w = Weights({"k": torch.randn(8, 4, 3, 3, generator=g), "b": torch.randn(8, generator=g)})
    return conv_relu, w, torch.randn(1, 4, 8, 8, generator=g)


def test_nan_in_an_input_runs_the_statements_so_it_stays_nan(monkeypatch):
    """oneDNN Graph's fused Relu turns NaN into 0 (eager PyTorch and onnxruntime keep it): a
    traced segment whose input holds NaN or an infinity runs its statements. Without that check
    the trace loses the NaN, which is what the last assertion shows."""
    seg, w, x = _conv_relu()
    bad = x.clone()
    bad[0, 0, 3, 3] = float("nan")
    with torch.no_grad():
        seg(w, x)  # traced and fused
        assert seg.events[-1].error is None and seg.events[-1].note is None
        got = seg(w, bad)
        assert got.isnan().any()
        torch.testing.assert_close(got, seg.fn(w, bad), equal_nan=True)
        monkeypatch.setattr(compiled_mod, "_finite", lambda _values: True)
        assert not seg(w, bad).isnan().any()  # the fused trace, unchecked


def test_a_model_fed_nan_gives_nan_where_onnxruntime_does(fj_onednn, pipeline_helpers):
    """The whole program (both modules) fed an input with a NaN: its outputs hold NaN where
    onnxruntime's do, after the segments were traced on finite inputs."""
    x = torch.randn(1, 3, 16, 16, generator=torch.Generator().manual_seed(3))
    x[0, 1, 5, 5] = float("nan")
    ref = torch.from_numpy(ort_outputs(fork_join(), {"x": x})[0])
    assert ref.isnan().any()
    with CompiledModel(fj_onednn, CompileOptions(clusters=2)) as model:
        torch.testing.assert_close(model.run({"x": x})["y"], ref, equal_nan=True)
        model.sequential(torch.randn(1, 3, 16, 16))  # traced
        torch.testing.assert_close(model.sequential(x), ref, equal_nan=True)


def test_weights_that_hold_nan_run_the_statements():
    seg, w, x = _conv_relu()
    w.b[2] = float("inf")
    with torch.no_grad():
        torch.testing.assert_close(seg(w, x), seg.fn(w, x), equal_nan=True)
    (event,) = seg.events
    assert event.error is None and "a weight holds NaN or infinity" in event.note


@pytest.mark.skipif(not trial.available(), reason="trial runs need fork (Linux)")
def test_a_fusion_that_crashes_costs_a_child_process_not_the_caller(monkeypatch):
    """The fusion runs first in a forked child: where it crashes there (a segmentation fault, as
    TorchScript's fusion did on EfficientNet-B0), the segment runs its statements, with a
    warning that says so, and this process goes on."""
    caller = os.getpid()
    real = compiled_mod._traced_run

    def crashes(bound, inputs, expected, fuse, **kw):
        if fuse:
            if os.getpid() == caller:
                raise AssertionError("the caller ran the fusion its trial saw crash")
            os.kill(os.getpid(), signal.SIGSEGV)
        return real(bound, inputs, expected, fuse, **kw)

    monkeypatch.setattr(compiled_mod, "_traced_run", crashes)
    seg, w, x = _conv_relu()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with torch.no_grad():
            torch.testing.assert_close(seg(w, x), seg.fn(w, x))
            torch.testing.assert_close(seg(w, x), seg.fn(w, x))
    (event,) = seg.events
    assert "killed by signal SIGSEGV" in event.error
    assert any("conv_relu could not be compiled" in str(c.message) for c in caught)


@pytest.mark.skipif(not trial.available(), reason="trial runs need fork (Linux)")
def test_a_fusion_trial_that_hangs_is_killed(monkeypatch):
    caller = os.getpid()
    real = compiled_mod._traced_run

    def hangs(bound, inputs, expected, fuse, **kw):
        if os.getpid() != caller:
            time.sleep(60)
        return real(bound, inputs, expected, fuse, **kw)

    monkeypatch.setattr(compiled_mod, "_traced_run", hangs)
    monkeypatch.setattr(compiled_mod, "TRIAL_TIMEOUT_S", 0.5)
    monkeypatch.setattr(compiled_mod, "TRIAL_TIMEOUT_RUNS", 0)
    seg, w, x = _conv_relu()
    t0 = time.monotonic()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.no_grad():
            torch.testing.assert_close(seg(w, x), seg.fn(w, x))
    assert time.monotonic() - t0 < 20
    (event,) = seg.events
    assert "still running after 0 s (killed)" in event.error or "still running after 1 s" in (
        event.error
    )


@pytest.mark.skipif(not trial.available(), reason="trial runs need fork (Linux)")
def test_the_caller_runs_only_the_attempt_that_worked_in_the_trial(monkeypatch):
    """The fusion failed in the child (an exception, as on shufflenet's concatenations) and its
    work-around worked: the caller traces once, with the work-around, and no fused attempt."""
    caller = os.getpid()
    real = compiled_mod._traced_run
    calls: list[dict[str, Any]] = []

    def plain_fusion_fails(bound, inputs, expected, fuse, **kw):
        if os.getpid() == caller:
            calls.append({"fuse": fuse, **kw})
        if fuse and not kw.get("bound_cats"):
            raise RuntimeError("vector::_M_range_check")
        return real(bound, inputs, expected, fuse, **kw)

    monkeypatch.setattr(compiled_mod, "_traced_run", plain_fusion_fails)

    @segment(backend="onednn-graph")
    def joined(w, x):
        return torch.cat([torch.relu(x * w.k), x], dim=1) + 1

    w = Weights({"k": torch.full((1, 4, 1, 1), 2.0)})
    x = torch.randn(1, 4, 3, 3)
    with torch.no_grad():
        torch.testing.assert_close(joined(w, x), joined.fn(w, x))
    assert [c.get("bound_cats") for c in calls] == [True]
    (event,) = joined.events
    assert event.error is None and event.note is None


def test_trial_gives_the_childs_text_and_says_how_a_child_ended():
    if not trial.available():
        with pytest.raises(RuntimeError, match="no fork"):
            trial.run_in_child(lambda: "x", 5)
        return
    assert trial.run_in_child(lambda: f"{torch.get_num_threads()} thread", 30) == "1 thread"

    def fails() -> str:
        raise ValueError("no")

    with pytest.raises(trial.TrialCrash, match="exited with status 1 without a result"):
        trial.run_in_child(fails, 30)
    with pytest.raises(trial.TrialCrash, match="killed by signal SIGABRT"):
        trial.run_in_child(lambda: str(os.abort()), 30)


def test_a_trial_child_stopped_by_its_process_group_s_signal_is_a_stop_not_a_crash():
    """torchrun stops a rank with SIGTERM to its process group, the trial's child included. The
    child had run the rank's inherited Python handler (an exception), exited 1, and the rank
    reported a failed trial ("could not be compiled (TrialCrash ...)"), in the thread that
    compiled, while it was being stopped (CI, test_torchrun_timeout_...). The child now dies by
    the signal, which is :class:`~ramiel.runtime.trial.TrialStopped`, a runtime failure; a
    signal the parent ignores stays ignored in the child."""
    if not trial.available():
        pytest.skip("no fork here")

    class Stop(Exception):
        pass

    def handler(signum, frame):
        raise Stop(signum)

    def signalled(number: signal.Signals) -> Callable[[], str]:
        def fn() -> str:
            try:
                os.kill(os.getpid(), number)  # delivered before kill returns
                time.sleep(0.5)
            except BaseException as e:  # noqa: BLE001 - the inherited handler's: say so
                return f"raised {type(e).__name__}"
            return "ran on"

        return fn

    got: list[BaseException | str] = []

    def in_a_thread(fn: Callable[[], str]) -> None:  # as a cluster thread compiles
        try:
            got.append(trial.run_in_child(fn, 30))
        except BaseException as e:  # noqa: BLE001 - looked at below
            got.append(e)

    before = signal.signal(signal.SIGTERM, handler), signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        for number in (signal.SIGTERM, signal.SIGINT):
            t = threading.Thread(target=in_a_thread, args=(signalled(number),))
            t.start()
            t.join(60)
    finally:
        signal.signal(signal.SIGTERM, before[0])
        signal.signal(signal.SIGINT, before[1])
    stopped, ignored = got
    assert isinstance(stopped, trial.TrialStopped), stopped
    assert isinstance(stopped, RuntimeFailure) and "stopped by signal SIGTERM" in str(stopped)
    assert ignored == "ran on"


def test_inference_tensor_weights_run_the_statements_and_a_write_is_seen():
    """Weights made under ``torch.inference_mode`` have no version counter, so a compiled version
    could not see a write to them: the segment runs its statements (a note says why), and the
    write shows in the next result. (Reading their version had raised ``RuntimeError:
    Inference tensors do not track version counter`` on the first call.)"""
    seg, w, x = _conv_relu()
    with torch.inference_mode():
        w = Weights({"k": w.k.clone(), "b": w.b.clone()})
        first = seg(w, x)
        torch.testing.assert_close(first, seg.fn(w, x))
        w.b.add_(1.0)
        torch.testing.assert_close(seg(w, x), seg.fn(w, x))
        assert not torch.equal(seg(w, x), first)
    (event,) = seg.events
    assert event.error is None and "inference tensors" in event.note


def test_tensors_off_the_cpu_run_the_statements_without_a_warning():
    """oneDNN Graph fuses CPU tensors: a module moved to ``meta`` (``.to("meta")``, as
    ``torch.nn.Module`` tools do to size a model) runs the statements, silently."""
    seg, w, x = _conv_relu()
    meta = Weights({"k": w.k.to("meta"), "b": w.b.to("meta")})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = seg(meta, x.to("meta"))
    assert got.device.type == "meta" and got.shape == (1, 8, 8, 8)
    (event,) = seg.events
    assert event.error is None and "tensors on meta" in event.note


@pytest.mark.parametrize("where", ["compile", "attempt", "wrapped"])
def test_a_runtime_failure_while_compiling_is_the_callers(monkeypatch, where):
    """A rank that torchrun stops raises ``Terminated`` from its SIGTERM handler wherever it is,
    also inside a segment's compilation: it reaches the caller, not a warning and an eager
    segment (as it had, seen with ``torchrun ... --timeout 0.001``). Raised by the compile
    (``_onednn_graph``), in the caller's run of the attempt the trial chose (it had been
    recorded as the attempt's failure: 'segment c0_seg2 could not be compiled (Terminated:
    ...)'), or wrapped by a compiler in an error of its own (inductor's
    ``BackendCompilerFailed`` chains the error it caught)."""
    from ramiel.errors import RuntimeFailure

    def stopped(*_args, **_kw):
        raise RuntimeFailure("rank 0 was stopped (signal 15) by its launcher")

    if where == "compile":
        monkeypatch.setattr(compiled_mod, "_onednn_graph", stopped)
    elif where == "attempt":
        monkeypatch.setattr(compiled_mod, "_fusion_trial", lambda *a, **k: (0, None))
        monkeypatch.setattr(compiled_mod, "_traced_run", stopped)
    else:

        def wrapped(*_args, **_kw):
            try:
                stopped()
            except RuntimeFailure as e:
                raise RuntimeError("backend compiler failed") from e

        monkeypatch.setattr(compiled_mod, "_onednn_graph", wrapped)
    seg, w, x = _conv_relu()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeFailure, match="stopped"):
            seg(w, x)
    assert not seg.events
