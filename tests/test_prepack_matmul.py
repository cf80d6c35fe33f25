"""Prepacked matrix products (``--prepack-matmul``, ``ops.matmul_prepacked``): the helper computes
``torch.matmul`` for (..., K) @ (K, N), with a fused bias and Relu, reorders a weight once
per row count and again after an in-place write, and is the plain ``torch.matmul`` where tracing,
autograd or another dtype needs it; compiled programs print it for the large products with a
constant weight, with the bias Add and Relu that alone read them, and keep onnxruntime's
numerics on both backends.
"""

from __future__ import annotations

import os

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper

from ramiel.compiler import CompiledModel, CompileOptions, compile_model
from ramiel.context import make_context
from ramiel.errors import RamielError
from ramiel.parsing import parse_module
from ramiel.passes.lower_to_torchpy import LowerToTorchpy
from ramiel.pipeline import run_passes
from ramiel.runtime import ops

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")


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
    assert len(ops.packed_copies(w)) == 1


@pytest.mark.parametrize("act", ["none", "relu"])
@pytest.mark.parametrize("bias_shape", [(80,), (1, 80), (1, 1, 80)], ids=str)
@pytest.mark.parametrize("grad", [False, True], ids=["onednn", "plain"])
def test_fused_bias_and_relu(act, bias_shape, grad):
    """``matmul_prepacked(x, w, b, activation)`` is ``x @ w + b`` (then its Relu) on oneDNN's
    path and on the plain one (a weight that records autograd), and a new tensor each call."""
    x, w = _pair((1, 32), 96, 80)
    b = torch.randn(bias_shape, generator=torch.Generator().manual_seed(1))
    w.requires_grad_(grad)
    with torch.no_grad():
        ref = torch.matmul(x, w) + b
        ref = torch.relu(ref) if act == "relu" else ref
    got = ops.matmul_prepacked(x, w, b, activation=act)
    torch.testing.assert_close(got.detach(), ref, rtol=1e-5, atol=1e-5 * ref.abs().max().item())
    assert got.shape == ref.shape and got.is_contiguous()
    assert bool(ops.packed_copies(w)) != grad  # packed on oneDNN's path only
    if grad:
        got.sum().backward()
        assert w.grad is not None and w.grad.shape == w.shape
    again = ops.matmul_prepacked(x, w, b, activation=act)
    assert again.data_ptr() != got.data_ptr()


def test_a_nan_stays_nan_through_the_relu():
    """As ``ops.conv2d_prepacked``: the Relu after the product keeps NaN (oneDNN's post-op
    turned it into 0)."""
    g = torch.Generator().manual_seed(1)
    x, w, b = torch.randn(8, 64, generator=g), torch.randn(64, 32, generator=g), torch.randn(32)
    x[3, 7] = float("nan")
    ref = torch.relu(x @ w + b)
    got = ops.matmul_prepacked(x, w, b, activation="relu")
    assert ref.isnan().sum() == 32
    torch.testing.assert_close(got, ref, equal_nan=True, rtol=1e-5, atol=1e-4)


def test_bad_activation_is_one_clear_error():
    x, w = _pair((4,), 8, 8)
    with pytest.raises(ValueError, match="activation must be 'none' or 'relu', not 'gelu'"):
        ops.matmul_prepacked(x, w, None, activation="gelu")


def _mlp_model(path, act: str | None):
    """x (1, 32, 768) @ W (768, 768) + b, then ``act`` (Relu, Gelu), opset 20."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array((rng.standard_normal((768, 768)) * 0.05).astype(np.float32), "W")
    b = numpy_helper.from_array(rng.standard_normal(768).astype(np.float32), "b")
    nodes = [
        helper.make_node("MatMul", ["x", "W"], ["m"]),
        helper.make_node("Add", ["b", "m"], ["s"]),
    ]
    out = "s"
    if act:
        nodes.append(helper.make_node(act, ["s"], ["y"]))
        out = "y"
    g = helper.make_graph(
        nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32, 768])],
        [helper.make_tensor_value_info(out, TensorProto.FLOAT, [1, 32, 768])], [w, b],
    )  # fmt: skip
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 9
    onnx.save(model, path)
    return model


@pytest.mark.parametrize("act", [None, "Relu", "Gelu"])
def test_fused_epilogue_matches_onnxruntime(act, tmp_path, pipeline_helpers):
    """MatMul + Add (bias first) [+ Relu] compiles to one ``ops.matmul_prepacked`` call named
    after the last op, on both modules (a Gelu stays ``F.gelu`` after it), and matches
    onnxruntime."""
    path = str(tmp_path / "mlp.onnx")
    model = _mlp_model(path, act)
    x = np.random.default_rng(1).standard_normal((1, 32, 768)).astype(np.float32)
    ref = pipeline_helpers.ort_run(model, {"x": x})
    opts = CompileOptions(clusters=1)
    res = compile_model(path, str(tmp_path / "out"), opts)
    call = {
        None: "s = ops.matmul_prepacked(x, {w}.W, {w}.b)",
        "Relu": "y = ops.matmul_prepacked(x, {w}.W, {w}.b, activation='relu')",
        "Gelu": "s = ops.matmul_prepacked(x, {w}.W, {w}.b)",
    }[act]
    for p, w in ((res.parallel_path, "w"), (res.sequential_path, "self")):
        with open(p) as f:
            src = f.read()
        assert src.count("ops.matmul_prepacked(") == 1 and call.format(w=w) in src, p
        assert not any(f in src for f in (".add_(", "torch.add(", "torch.relu"))
        assert ("y = F.gelu(s)" in src) == (act == "Gelu")
    with CompiledModel(res, opts) as m:
        par = m.run({"x": torch.from_numpy(x)})
        seq = m.sequential(torch.from_numpy(x))
    pipeline_helpers.assert_close(next(iter(par.values())), ref[0], 1e-3, "parallel")
    pipeline_helpers.assert_close(seq, ref[0], 1e-3, "sequential")


def test_an_epilogue_the_ir_no_longer_has_is_a_located_error(tmp_path):
    """A hand-edited module whose MatMul says ``ramiel.prepack = "bias+relu"`` but whose product
    no Add reads: the lowering names the op and the attribute."""
    ir = """builtin.module attributes {onnx.opset = 17 : i64} {
func.func @f(%x: tensor<1x32x768xf32>) -> tensor<1x32x768xf32> {
  %w = "onnx.Constant"() <{value = dense<0.5> : tensor<768x768xf32>}> : () -> tensor<768x768xf32>
  %p = "onnx.MatMul"(%x, %w) {ramiel.prepack = "bias+relu"} : (tensor<1x32x768xf32>, tensor<768x768xf32>) -> tensor<1x32x768xf32>
  func.return %p : tensor<1x32x768xf32>
}
}"""
    ctx = make_context(str(tmp_path))
    module = parse_module(ctx, ir, "edited.mlir")
    with pytest.raises(RamielError, match=r"ramiel.prepack = 'bias\+relu'.*found 'none'"):
        run_passes(module, [LowerToTorchpy(mode="sequential")], ctx)


def test_non_contiguous_input():
    x, w = _pair((40,), 64, 48)
    xt = x.t().contiguous().t()  # same values, column-major
    torch.testing.assert_close(
        ops.matmul_prepacked(xt, w), torch.matmul(x, w), rtol=1e-5, atol=1e-4
    )


def test_weight_is_packed_once_and_again_after_a_write():
    x, w = _pair((1, 16), 64, 32)
    ops.matmul_prepacked(x, w)
    (packed,) = ops.packed_copies(w).values()
    ops.matmul_prepacked(x, w)
    assert next(iter(ops.packed_copies(w).values())) is packed
    with torch.no_grad():
        w.mul_(-2.0)  # load_state_dict without assign copies in place like this
    torch.testing.assert_close(ops.matmul_prepacked(x, w), torch.matmul(x, w), rtol=1e-5, atol=1e-4)
    cache = ops.packed_copies(w)
    assert len(cache) == 1 and next(iter(cache.values())) is not packed
    # another row count gets a packing of its own, the first one is kept
    ops.matmul_prepacked(torch.randn(3, 16, 64), w)
    assert len(ops.packed_copies(w)) == 2


def test_plain_where_packing_does_not_apply():
    """float64, a batched (3-D) weight, Parameters with autograd: ``torch.matmul`` (nothing
    packed); gradients flow."""
    x, w = _pair((1, 8), 16, 12)
    wb = torch.randn(2, 16, 12)
    for xx, ww in [(x.double(), w.double()), (torch.randn(2, 8, 16), wb)]:
        torch.testing.assert_close(ops.matmul_prepacked(xx, ww), torch.matmul(xx, ww))
        assert not ops.packed_copies(ww)
    p = torch.nn.Parameter(w.clone())
    y = ops.matmul_prepacked(x, p)
    y.sum().backward()
    assert p.grad is not None and p.grad.shape == p.shape
    assert not ops.packed_copies(p)


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
