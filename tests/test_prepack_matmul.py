"""Prepacked matrix products (``--prepack-matmul``, ``ops.matmul_prepacked``): the helper computes
``torch.matmul`` for (..., K) @ (K, N), reorders a weight once per row count and again after an
in-place write, and is the plain ``torch.matmul`` where tracing, autograd or another dtype needs
it; compiled programs print it for the large products with a constant weight and keep
onnxruntime's numerics on both backends.
"""

from __future__ import annotations

import os

import numpy as np
import onnx
import pytest
import torch

from ramiel.compiler import CompiledModel, CompileOptions, compile_model
from ramiel.runtime import ops

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

_CACHE = ops._PACKED_ATTR  # noqa: SLF001 - the per-weight cache is the point of these tests


def _pair(xs, k, n, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*xs, k, generator=g), torch.randn(k, n, generator=g)


@pytest.mark.parametrize("xs", [(32,), (1, 32), (2, 3, 5)], ids=str)
def test_prepacked_matmul_is_torch_matmul(xs):
    x, w = _pair(xs, 96, 80)
    ref = torch.matmul(x, w)
    got = ops.matmul_prepacked(x, w)
    torch.testing.assert_close(got, ref, rtol=1e-5, atol=1e-5 * ref.abs().max().item())
    assert got.shape == ref.shape and got.dtype == ref.dtype and got.is_contiguous()
    assert len(getattr(w, _CACHE)) == 1


def test_non_contiguous_input():
    x, w = _pair((40,), 64, 48)
    xt = x.t().contiguous().t()  # same values, column-major
    torch.testing.assert_close(
        ops.matmul_prepacked(xt, w), torch.matmul(x, w), rtol=1e-5, atol=1e-4
    )


def test_weight_is_packed_once_and_again_after_a_write():
    x, w = _pair((1, 16), 64, 32)
    ops.matmul_prepacked(x, w)
    (packed,) = getattr(w, _CACHE).values()
    ops.matmul_prepacked(x, w)
    assert next(iter(getattr(w, _CACHE).values())) is packed
    with torch.no_grad():
        w.mul_(-2.0)  # load_state_dict without assign copies in place like this
    torch.testing.assert_close(ops.matmul_prepacked(x, w), torch.matmul(x, w), rtol=1e-5, atol=1e-4)
    cache = getattr(w, _CACHE)
    assert len(cache) == 1 and next(iter(cache.values())) is not packed
    # another row count gets a packing of its own, the first one is kept
    ops.matmul_prepacked(torch.randn(3, 16, 64), w)
    assert len(getattr(w, _CACHE)) == 2


def test_plain_where_packing_does_not_apply():
    """float64, a batched (3-D) weight, Parameters with autograd: ``torch.matmul`` (nothing
    packed); gradients flow."""
    x, w = _pair((1, 8), 16, 12)
    wb = torch.randn(2, 16, 12)
    for xx, ww in [(x.double(), w.double()), (torch.randn(2, 8, 16), wb)]:
        torch.testing.assert_close(ops.matmul_prepacked(xx, ww), torch.matmul(xx, ww))
        assert not hasattr(ww, _CACHE)
    p = torch.nn.Parameter(w.clone())
    y = ops.matmul_prepacked(x, p)
    y.sum().backward()
    assert p.grad is not None and p.grad.shape == p.shape
    assert not hasattr(p, _CACHE)


def test_tracing_and_compiling_see_torch_matmul():
    x, w = _pair((1, 8), 32, 24)

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("w", w.clone())

        def forward(self, x):
            return ops.matmul_prepacked(x, self.w)

    m = M()
    with torch.no_grad():
        eager = m(x)
        traced = torch.jit.trace(m, (x,))
        exported = torch.export.export(m, (x,))
        torch._dynamo.reset()
        compiled = torch.compile(m, backend="aot_eager", fullgraph=True)
        results = {
            "jit.trace": traced(x),
            "export": exported.module()(x),
            "compile": compiled(x),
            "fx": torch.fx.symbolic_trace(m)(x),
        }
    assert "mkldnn" not in str(exported.graph)
    assert "mkldnn" not in str(traced.graph)
    for how, got in results.items():
        torch.testing.assert_close(got, eager, rtol=1e-5, atol=1e-5, msg=how)


@pytest.mark.parametrize("backend", ["threads", "processes"])
def test_compiled_transformer_prints_prepacked_products(
    backend, tmp_path, exported_model, pipeline_helpers
):
    """The project's transformer (4 layers, hidden 256, FFN 1024, 64 tokens): each layer's two
    FFN products (256x1024 and 1024x256: 262K weight elements, 16.8 M multiply-accumulates) are
    ``ops.matmul_prepacked``, the 256x256 projections stay ``torch.matmul``; with
    ``disable=["prepack-matmul"]`` and with ``trainable=True`` none is; the prepacked program
    matches onnxruntime, parallel (each worker packs its own weights) and sequential."""
    path = exported_model("transformer")
    model = onnx.load(path)
    (inp,) = [i.name for i in model.graph.input]
    ids = np.random.default_rng(0).integers(0, 1000, (1, 64)).astype(np.int64)
    ref = pipeline_helpers.ort_run(model, {inp: ids})
    for label, opts in [
        ("default", CompileOptions(clusters=2, backend=backend)),
        ("disabled", CompileOptions(clusters=2, backend=backend, disable=["prepack-matmul"])),
        ("trainable", CompileOptions(clusters=2, backend=backend, trainable=True)),
    ]:
        res = compile_model(path, str(tmp_path / label), opts)
        for p in (res.parallel_path, res.sequential_path):
            with open(p) as f:
                src = f.read()
            packed = src.count("ops.matmul_prepacked(")
            assert packed == (8 if label == "default" else 0), (label, p)
        if label != "default":
            continue  # the plain torch.matmul programs: their numerics are every other test's
        with CompiledModel(res, opts) as m:
            par = m.run({inp: torch.from_numpy(ids)})
            seq = m.sequential(torch.from_numpy(ids))
        (name,) = list(par)
        pipeline_helpers.assert_close(par[name], ref[0], 1e-3, "parallel")
        pipeline_helpers.assert_close(seq, ref[0], 1e-3, "sequential")
