"""Property tests: random attribute combinations of the ops with the most padding/shape logic,
against onnxruntime (or the ONNX reference where onnxruntime computes in float32), and the
F.interpolate fast paths of Resize against the general ``ops.resize``.

Each generated node also checks that its runtime output shape equals the static one the
NodeView carries (after :func:`refine_output_shapes`), since generated code sizes buffers from it.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _lowering_cases import assert_close, run_onnxruntime, single_node_model
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from onnx.reference import ReferenceEvaluator

from ramiel.lowering.node_view import Mismatch, run_graph_eagerly
from ramiel.runtime import ops

SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)


def _check(model, feeds, rtol=1e-4, reference=None):
    ref = reference if reference is not None else run_onnxruntime(model, feeds)
    mismatches: list[Mismatch] = []
    got = run_graph_eagerly(model, feeds, mismatches)
    for i, r in enumerate(ref):
        assert_close(got[f"y{i}"], r, rtol=rtol, what=f"y{i}")
    assert all(m.expected[0] == "undefined" for m in mismatches), mismatches


@st.composite
def pool_config(draw, with_dilation: bool):
    n = draw(st.integers(1, 2))
    kernel = [draw(st.integers(1, 4)) for _ in range(n)]
    strides = [draw(st.integers(1, 3)) for _ in range(n)]
    dil = [draw(st.integers(1, 2)) if with_dilation else 1 for _ in range(n)]
    pads = [draw(st.integers(0, k - 1)) for k in kernel] + [
        draw(st.integers(0, k - 1)) for k in kernel
    ]
    eff = [(k - 1) * d + 1 for k, d in zip(kernel, dil, strict=True)]
    size = [draw(st.integers(max(1, e - pads[i] - pads[n + i]), 9)) for i, e in enumerate(eff)]
    ceil = draw(st.booleans())
    return n, kernel, strides, dil, pads, size, ceil


@SETTINGS
@given(pool_config(with_dilation=True), st.booleans())
def test_maxpool_random(cfg, with_indices):
    n, kernel, strides, dil, pads, size, ceil = cfg
    x = np.random.default_rng(0).standard_normal((2, 3, *size)).astype(np.float32)
    if with_indices and (
        pads[:n] != pads[n:] or any(p > k // 2 for p, k in zip(pads, kernel * 2, strict=True))
    ):
        with_indices = False  # only the symmetric, half-kernel case supports Indices
    model, feeds = single_node_model(
        "MaxPool",
        [("x", x, False)],
        2 if with_indices else 1,
        opset=12,
        kernel_shape=kernel,
        strides=strides,
        dilations=dil,
        pads=pads,
        ceil_mode=int(ceil),
    )
    ref = run_onnxruntime(model, feeds)
    # a window lying wholly in the padding has no value by the spec (onnxruntime: -FLT_MAX)
    assume(not (np.abs(ref[0]) >= 3.4e38).any())
    _check(model, feeds, reference=ref)


@SETTINGS
@given(pool_config(with_dilation=True), st.booleans())
def test_averagepool_random(cfg, include_pad):
    n, kernel, strides, dil, pads, size, ceil = cfg
    x = np.random.default_rng(1).standard_normal((1, 2, *size)).astype(np.float32)
    model, feeds = single_node_model(
        "AveragePool",
        [("x", x, False)],
        opset=19,
        kernel_shape=kernel,
        strides=strides,
        dilations=dil,
        pads=pads,
        ceil_mode=int(ceil),
        count_include_pad=int(include_pad),
    )
    _check(model, feeds)


@SETTINGS
@given(
    st.integers(1, 2),
    st.integers(1, 3),
    st.integers(1, 2),
    st.sampled_from(["NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"]),
    st.data(),
)
def test_conv_random(n, stride, groups, auto_pad, data):
    kernel = [data.draw(st.integers(1, 4)) for _ in range(n)]
    dil = (
        [1] * n if auto_pad.startswith("SAME") else [data.draw(st.integers(1, 2)) for _ in range(n)]
    )
    pads = [data.draw(st.integers(0, 2)) for _ in range(2 * n)]
    size = [data.draw(st.integers((k - 1) * d + 1, 9)) for k, d in zip(kernel, dil, strict=True)]
    rng = np.random.default_rng(2)
    x = rng.standard_normal((1, 2 * groups, *size)).astype(np.float32)
    w = rng.standard_normal((3 * groups, 2, *kernel)).astype(np.float32)
    b = rng.standard_normal(3 * groups).astype(np.float32)
    attrs = {"kernel_shape": kernel, "strides": [stride] * n, "dilations": dil, "group": groups}
    if auto_pad == "NOTSET":
        attrs["pads"] = pads
    else:
        attrs["auto_pad"] = auto_pad
    model, feeds = single_node_model(
        "Conv", [("x", x, False), ("w", w, True), ("b", b, True)], opset=11, **attrs
    )
    _check(model, feeds)


@SETTINGS
@given(st.integers(1, 2), st.integers(1, 3), st.integers(1, 2), st.booleans(), st.data())
def test_conv_transpose_random(n, stride, groups, use_output_shape, data):
    kernel = [data.draw(st.integers(1, 4)) for _ in range(n)]
    dil = [data.draw(st.integers(1, 2)) for _ in range(n)]
    pads = [data.draw(st.integers(0, k - 1)) for k in kernel * 2]
    out_pad = [data.draw(st.integers(0, stride - 1)) for _ in dil]  # onnxruntime: < stride
    size = [data.draw(st.integers(1, 6)) for _ in range(n)]
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 2 * groups, *size)).astype(np.float32)
    w = rng.standard_normal((2 * groups, 3, *kernel)).astype(np.float32)
    b = rng.standard_normal(3 * groups).astype(np.float32)
    attrs = {"kernel_shape": kernel, "strides": [stride] * n, "dilations": dil, "group": groups}
    if use_output_shape:
        full = [
            stride * (s - 1) + (k - 1) * d + 1 for s, k, d in zip(size, kernel, dil, strict=True)
        ]
        attrs["output_shape"] = [max(1, f + data.draw(st.integers(-2, 0))) for f in full]
    else:
        attrs["pads"] = pads
        attrs["output_padding"] = out_pad
    full_out = [
        stride * (s - 1) + (k - 1) * d + 1 for s, k, d in zip(size, kernel, dil, strict=True)
    ]
    if not use_output_shape:
        assume(
            all(
                f + o - pads[i] - pads[n + i] > 0
                for i, (f, o) in enumerate(zip(full_out, out_pad, strict=True))
            )
        )
    model, feeds = single_node_model(
        "ConvTranspose", [("x", x, False), ("w", w, True), ("b", b, True)], opset=11, **attrs
    )
    _check(model, feeds)


def slice_spec(x: np.ndarray, starts, ends, axes, steps) -> np.ndarray:
    """Slice-13 by the spec's words: negative start/end add the dim, then starts clamp to
    [0, dim] ([0, dim - 1] for negative steps) and ends to [0, dim] ([-1, dim - 1])."""
    for s, e, a, st_ in zip(starts, ends, axes, steps, strict=True):
        a = a % x.ndim
        dim = x.shape[a]
        s = s + dim if s < 0 else s
        e = e + dim if e < 0 else e
        if st_ > 0:
            s, e = min(max(s, 0), dim), min(max(e, 0), dim)
        else:
            s, e = min(max(s, 0), dim - 1), min(max(e, -1), dim - 1)
        x = np.take(x, list(range(s, e, st_)), axis=a)
    return x


@SETTINGS
@given(st.data())
def test_slice_random(data):
    """Against the spec's clamping rules: both oracles deviate at the edges — onnxruntime treats
    an INT64_MAX end with a negative step as "to the beginning" (the spec clamps it to dim - 1),
    the ONNX reference uses numpy slicing, which does not clamp a negative start to 0."""
    shape = [data.draw(st.integers(1, 6)) for _ in range(3)]
    axes = data.draw(
        st.lists(st.integers(-3, 2), min_size=1, max_size=3, unique_by=lambda a: a % 3)
    )
    big = st.sampled_from([2**63 - 1, -(2**63), 100, -100])
    starts = [data.draw(st.one_of(st.integers(-8, 8), big)) for _ in axes]
    ends = [data.draw(st.one_of(st.integers(-8, 8), big)) for _ in axes]
    steps = [data.draw(st.sampled_from([-3, -2, -1, 1, 2, 3])) for _ in axes]
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    i64 = lambda v: np.array(v, np.int64)  # noqa: E731
    model, feeds = single_node_model(
        "Slice",
        [
            ("x", x, False),
            ("s", i64(starts), True),
            ("e", i64(ends), True),
            ("a", i64(axes), True),
            ("t", i64(steps), True),
        ],
        opset=13,
    )
    _check(model, feeds, rtol=0, reference=[slice_spec(x, starts, ends, axes, steps)])


@SETTINGS
@given(st.sampled_from(["constant", "reflect", "edge"]), st.data())
def test_pad_random(mode, data):
    shape = [data.draw(st.integers(2, 5)) for _ in range(3)]
    lo = -1 if mode == "constant" else 0
    pads = [data.draw(st.integers(lo, (s - 1) if mode == "reflect" else 3)) for s in shape * 2]
    x = np.random.default_rng(4).standard_normal(shape).astype(np.float32)
    model, feeds = single_node_model(
        "Pad", [("x", x, False), ("p", np.array(pads, np.int64), True)], opset=13, mode=mode
    )
    _check(model, feeds, rtol=0)


@SETTINGS
@given(
    st.sampled_from(["linear", "cubic"]),
    st.sampled_from(["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"]),
    st.booleans(),
    st.data(),
)
def test_resize_linear_cubic_random(mode, coord, by_sizes, data):
    h, w = data.draw(st.integers(2, 6)), data.draw(st.integers(2, 6))
    x = np.random.default_rng(5).standard_normal((1, 2, h, w)).astype(np.float32)
    if by_sizes:
        sizes = np.array(
            [1, 2, data.draw(st.integers(1, 12)), data.draw(st.integers(1, 12))], np.int64
        )
        inputs = [("x", x, False), ("", None, False), ("", None, False), ("z", sizes, True)]
    else:
        sc = [data.draw(st.sampled_from([0.5, 0.75, 1.0, 1.5, 2.0, 2.5, 3.0])) for _ in range(2)]
        scales = np.array([1, 1, *sc], np.float32)
        assume(all(int(s * d) >= 1 for s, d in zip(sc, (h, w), strict=True)))
        inputs = [("x", x, False), ("", None, False), ("s", scales, True)]
    model, feeds = single_node_model(
        "Resize", inputs, opset=13, mode=mode, coordinate_transformation_mode=coord
    )
    _check(model, feeds, rtol=1e-4)


@SETTINGS
@given(
    st.sampled_from(["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]),
    st.sampled_from(["half_pixel", "pytorch_half_pixel", "asymmetric", "align_corners"]),
    st.data(),
)
def test_resize_nearest_random(nearest_mode, coord, data):
    """Against the ONNX reference (exact float64 coordinates, like the spec; onnxruntime's
    float32 coordinates can flip ties). Sizes are given, so length_resized is unambiguous."""
    h, w = data.draw(st.integers(1, 7)), data.draw(st.integers(1, 7))
    x = np.arange(2 * h * w, dtype=np.float32).reshape(1, 2, h, w)
    sizes = np.array([1, 2, data.draw(st.integers(1, 15)), data.draw(st.integers(1, 15))], np.int64)
    model, feeds = single_node_model(
        "Resize",
        [("x", x, False), ("", None, False), ("", None, False), ("z", sizes, True)],
        opset=13,
        mode="nearest",
        coordinate_transformation_mode=coord,
        nearest_mode=nearest_mode,
    )
    ref = ReferenceEvaluator(model).run(None, feeds)
    _check(model, feeds, rtol=0, reference=ref)


@SETTINGS
@given(
    st.sampled_from([(3, "linear"), (4, "bilinear"), (5, "trilinear"), (4, "bicubic")]),
    st.booleans(),
    st.data(),
)
def test_interpolate_fast_path_equals_general_resize(rank_mode, align, data):
    """F.interpolate (the readable form) computes what ops.resize (the spec) does."""
    r, tmode = rank_mode
    spatial = [data.draw(st.integers(2, 6)) for _ in range(r - 2)]
    out = [data.draw(st.integers(2, 11)) for _ in range(r - 2)]
    x = torch.from_numpy(
        np.random.default_rng(6).standard_normal((1, 2, *spatial)).astype(np.float32)
    )
    fast = torch.nn.functional.interpolate(x, size=tuple(out), mode=tmode, align_corners=align)
    scales = [1.0, 1.0] + [o / s for o, s in zip(out, spatial, strict=True)]
    slow = ops.resize(
        x,
        (1, 2, *out),
        scales,
        mode="cubic" if tmode == "bicubic" else "linear",
        coordinate_transformation_mode="align_corners" if align else "half_pixel",
    )
    assert_close(fast.numpy(), slow.numpy(), rtol=1e-5)


@pytest.mark.parametrize("k", [2, 3, 4])
def test_nearest_integer_upscale_forms(k):
    """repeat_interleave / F.interpolate(nearest) for integer factors equal the general helper."""
    x = torch.arange(12.0).reshape(1, 1, 3, 4)
    general = ops.resize(
        x,
        (1, 1, 3 * k, 4 * k),
        (1.0, 1.0, float(k), float(k)),
        coordinate_transformation_mode="asymmetric",
        nearest_mode="floor",
    )
    assert torch.equal(general, x.repeat_interleave(k, 2).repeat_interleave(k, 3))
    assert torch.equal(
        general, torch.nn.functional.interpolate(x, scale_factor=float(k), mode="nearest")
    )
