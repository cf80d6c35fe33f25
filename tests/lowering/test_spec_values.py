"""Values derived from the ONNX spec where the oracles are wrong or silent (design.md §8).

- LRN with an even ``size``: onnxruntime rejects it; the window is
  ``[c - floor((size - 1) / 2), c + ceil((size - 1) / 2)]`` (torch's F.local_response_norm uses
  the mirrored window, so the rule must not use it for even sizes).
- Softmax before opset 13: the ONNX ReferenceEvaluator applies the opset-13 rule; the spec
  flattens to 2-D at ``axis``.
- Dropout's mask in inference is all ones (kept); onnxruntime returns zeros for opsets 7 and 10.
- Add/Mul before opset 7 with ``broadcast=1, axis``: B is aligned with A starting at ``axis``.
- Resize nearest: coordinates in exact arithmetic (onnxruntime computes them in float32, which can
  flip a tie).
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from _lowering_cases import assert_close, single_node_model
from onnx import helper

from ramiel.lowering.node_view import run_graph_eagerly

rng = np.random.default_rng(7)


def lrn_spec(x: np.ndarray, size: int, alpha: float, beta: float, bias: float) -> np.ndarray:
    c = x.shape[1]
    sq = np.zeros_like(x, dtype=np.float64)
    for ch in range(c):
        lo = max(0, ch - (size - 1) // 2)
        hi = min(c - 1, ch + (size - 1) - (size - 1) // 2)
        sq[:, ch] = (x[:, lo : hi + 1].astype(np.float64) ** 2).sum(axis=1)
    return (x / (bias + alpha / size * sq) ** beta).astype(x.dtype)


@pytest.mark.parametrize("size", [1, 2, 3, 4, 5, 6])
def test_lrn_window_from_spec(size):
    x = rng.standard_normal((2, 7, 3, 4)).astype(np.float32)
    model, feeds = single_node_model(
        "LRN", [("x", x, False)], opset=13, size=size, alpha=0.02, beta=0.7, bias=1.3
    )
    got = run_graph_eagerly(model, feeds)["y0"]
    assert_close(got, lrn_spec(x, size, 0.02, 0.7, 1.3), rtol=1e-5)


def softmax_spec(x: np.ndarray, axis: int) -> np.ndarray:
    lead = int(np.prod(x.shape[:axis]))
    flat = x.reshape(lead, -1).astype(np.float64)
    e = np.exp(flat - flat.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).reshape(x.shape).astype(x.dtype)


@pytest.mark.parametrize("axis", [0, 1, 2, 3])
def test_softmax_before_13_flattens(axis):
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    model, feeds = single_node_model("Softmax", [("x", x, False)], opset=11, axis=axis)
    assert_close(run_graph_eagerly(model, feeds)["y0"], softmax_spec(x, axis))


@pytest.mark.parametrize("opset,mask_dtype", [(7, np.float32), (10, np.bool_), (13, np.bool_)])
def test_dropout_inference_mask_is_all_ones(opset, mask_dtype):
    x = rng.standard_normal((3, 4)).astype(np.float32)
    model, feeds = single_node_model("Dropout", [("x", x, False)], 2, opset=opset)
    got = run_graph_eagerly(model, feeds)
    assert_close(got["y0"], x)
    assert_close(got["y1"], np.ones((3, 4), dtype=mask_dtype))


@pytest.mark.parametrize("op,fn", [("Add", np.add), ("Mul", np.multiply), ("Sub", np.subtract)])
def test_legacy_broadcast_with_axis(op, fn):
    a = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    b = rng.standard_normal((3, 4)).astype(np.float32)
    node = helper.make_node(op, ["a", "b"], ["y"], broadcast=1, axis=1)
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info("a", onnx.TensorProto.FLOAT, a.shape),
            helper.make_tensor_value_info("b", onnx.TensorProto.FLOAT, b.shape),
        ],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, a.shape)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 6)], ir_version=3)
    got = run_graph_eagerly(model, {"a": a, "b": b})["y"]
    assert_close(got, fn(a, b[None, :, :, None]))


def test_resize_nearest_ties_in_exact_arithmetic():
    """Downscale 10 → 4 with half_pixel: x_orig = (i + 0.5) * 2.5 - 0.5 = 0.75, 3.25, 5.75, 8.25;
    round_prefer_floor picks 1, 3, 6, 8. Scale 0.4 is not exact in float32 (0.4000000059604645),
    so the spec's coordinate uses that float32 value exactly."""
    x = np.arange(10, dtype=np.float32).reshape(1, 1, 1, 10)
    scales = np.array([1, 1, 1, 0.4], np.float32)
    model, feeds = single_node_model(
        "Resize", [("x", x, False), ("", None, False), ("s", scales, True)], opset=13
    )
    got = run_graph_eagerly(model, feeds)["y0"]
    s = float(np.float32(0.4))
    idx = [int(np.ceil((i + 0.5) / s - 0.5 - 0.5)) for i in range(4)]
    assert idx == [1, 3, 6, 8]
    assert_close(got, x[..., idx])
