"""float8 casts and uint64 arithmetic, beyond the few values of the ONNX node tests.

- Cast to the four float8 types (saturate=1 and 0) against ``onnx.reference`` on every float16
  value, float32/float64 values at and next to every rounding tie, random float32 bit patterns and
  the special values: torch's cast rounds to nearest even as the spec does, but does not saturate
  (and saturates float8_e4m3fn where the spec wants NaN), so the lowering adds a clamp or a NaN
  mask; the values must match the reference exactly, signed zeros included.
- Cast to FLOAT8E8M0 (every round_mode, saturate=1 and 0) against ``onnx.reference``, and ±inf by
  the spec's table (the reference gives NaN there).
- float8 through the data-movement ops, end to end with a large float8 weight in the external
  weights file.
- uint64 Add/Sub/Max/Min/Sum/Div and comparisons (computed on the int64 reinterpretation) at the
  wrap-around and sign-bit boundaries, and Pow with a uint64 exponent.
"""

from __future__ import annotations

import json
import struct

import ml_dtypes
import numpy as np
import onnx
import pytest
import torch
from _lowering_cases import single_node_model
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from ramiel.errors import UnsupportedOpError
from ramiel.lowering.api import NodeView, TensorInfo, check_supported
from ramiel.lowering.node_view import run_graph_eagerly
from ramiel.runtime.ops import cast_e8m0

F8 = {
    "float8_e4m3fn": TensorProto.FLOAT8E4M3FN,
    "float8_e4m3fnuz": TensorProto.FLOAT8E4M3FNUZ,
    "float8_e5m2": TensorProto.FLOAT8E5M2,
    "float8_e5m2fnuz": TensorProto.FLOAT8E5M2FNUZ,
}
rng = np.random.default_rng(11)


def _all_values(name: str) -> np.ndarray:
    """Every value of a float8 type, as float64 (NaN included)."""
    return np.arange(256, dtype=np.uint8).view(getattr(ml_dtypes, name)).astype(np.float64)


def _probe(dtype: type) -> np.ndarray:
    """Inputs that exercise every rounding decision of every float8 type, in ``dtype``."""
    if dtype == np.float16:
        return np.arange(2**16, dtype=np.uint16).view(np.float16)
    finite = np.unique(np.concatenate([_all_values(n) for n in F8]))
    finite = finite[np.isfinite(finite)]
    ties = (finite[:-1] + finite[1:]) / 2
    beyond = np.array([464, 480, 248, 256, 61440, 65536, 1e6, 1e30], np.float64)
    vals = [finite, ties, beyond, -beyond, np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1e-9])]
    if dtype == np.float64:
        vals += [ties * (1 + 2**-40), ties * (1 - 2**-40)]
    out = np.concatenate(vals).astype(dtype)
    if dtype == np.float32:
        out = np.concatenate([out, np.nextafter(out, np.inf), np.nextafter(out, -np.inf)])
        bits = rng.integers(0, 2**32, 20000, dtype=np.uint64).astype(np.uint32)
        out = np.concatenate([out, bits.view(np.float32)])
    return out


def _reference(model: onnx.ModelProto, feeds: dict) -> np.ndarray:
    return ReferenceEvaluator(model).run(None, feeds)[0]


def _assert_same_values(got: np.ndarray, want: np.ndarray) -> None:
    """Equal as numbers (NaN = NaN, whatever its bits), with the sign of zeros."""
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    g, w = got.astype(np.float64), want.astype(np.float64)
    same = (g == w) | (np.isnan(g) & np.isnan(w))
    same &= (np.signbit(g) == np.signbit(w)) | np.isnan(w)
    assert same.all(), f"{(~same).sum()} differ, e.g. got {g[~same][:5]} want {w[~same][:5]}"


@pytest.mark.filterwarnings("ignore:invalid value encountered in cast")
@pytest.mark.parametrize("saturate", [1, 0])
@pytest.mark.parametrize("target", sorted(F8))
@pytest.mark.parametrize("source", [np.float32, np.float16, np.float64])
def test_cast_to_float8_matches_reference(source, target, saturate):
    x = _probe(source)
    model, feeds = single_node_model(
        "Cast", [("x", x, False)], opset=21, to=F8[target], saturate=saturate
    )
    got = run_graph_eagerly(model, feeds)["y0"]
    if source == np.float64:
        # The reference casts float64 through float32 (ml_dtypes), rounding twice, and only in
        # some processes (it gave 384, in others 416, for 400 * (1 + 2**-40) -> e4m3fn): its
        # input is rounded to odd in float32 first, after which one rounding is exact.
        model32, feeds32 = single_node_model(
            "Cast",
            [("x", _round_to_odd_f32(x), False)],
            opset=21,
            to=F8[target],
            saturate=saturate,
        )
        want = _reference(model32, feeds32)
    else:
        want = _reference(model, feeds)
    _assert_same_values(got, want)


def _round_to_odd_f32(x: np.ndarray) -> np.ndarray:
    """float64 -> float32 truncated toward zero with the last bit set when inexact (numpy, an
    implementation independent of ``ops.to_float32_round_to_odd``)."""
    out = np.empty(x.shape, np.float32)
    for i, v in enumerate(x.tolist()):
        if not np.isfinite(v):
            out[i] = v
            continue
        f = np.float32(v)
        if abs(float(f)) > abs(v):
            f = np.nextafter(f, np.float32(0))
        if float(f) != v:
            f = (np.array([f]).view(np.uint32) | 1).view(np.float32)[0]
        out[i] = f
    return out


def test_float64_cast_to_float8_rounds_once():
    """The values next to a tie of float8 round to the nearer neighbour, not the tie's even one
    (torch's and numpy's float64 casts go through float32 and round twice)."""
    x = np.array([400 * (1 + 2**-40), 400 * (1 - 2**-40), -400 * (1 + 2**-40)])
    model, feeds = single_node_model(
        "Cast", [("x", x, False)], opset=21, to=F8["float8_e4m3fn"], saturate=1
    )
    got = run_graph_eagerly(model, feeds)["y0"].astype(np.float64)
    np.testing.assert_array_equal(got, [416.0, 384.0, -416.0])


@pytest.mark.parametrize("saturate", [1, 0])
@pytest.mark.parametrize("target", sorted(F8))
@pytest.mark.parametrize("source", sorted(F8))
def test_cast_between_float8_types(source, target, saturate):
    """float8 -> float8 (widened to float32, exact, then the target's rule) on every value."""
    if source == target:
        return
    x = _all_values(source).astype(getattr(ml_dtypes, source))
    model, feeds = single_node_model(
        "Cast", [("x", x, False)], opset=21, to=F8[target], saturate=saturate
    )
    _assert_same_values(run_graph_eagerly(model, feeds)["y0"], _reference(model, feeds))


@pytest.mark.filterwarnings("ignore:invalid value encountered in cast")  # torch's NaN bits
@pytest.mark.parametrize("target", [np.float32, np.float16, np.float64, np.int32, np.bool_])
@pytest.mark.parametrize("source", sorted(F8) + ["float8_e8m0fnu"])
def test_cast_from_float8(source, target):
    x = _all_values(source)
    if target in (np.int32, np.bool_):
        x = x[np.isfinite(x) & (np.abs(x) < 2**31)]  # float -> int is undefined out of range
    x = x.astype(getattr(ml_dtypes, source))
    to = helper.np_dtype_to_tensor_dtype(np.dtype(target))
    model, feeds = single_node_model("Cast", [("x", x, False)], opset=25, to=to)
    got, want = run_graph_eagerly(model, feeds)["y0"], _reference(model, feeds)
    assert got.dtype == want.dtype
    if target in (np.int32, np.bool_):
        np.testing.assert_array_equal(got, want)
    else:
        _assert_same_values(got, want)


@pytest.mark.parametrize("source", [np.int64, np.int32, np.uint8, np.bool_])
@pytest.mark.parametrize("saturate", [1, 0])
def test_cast_integers_to_float8(source, saturate):
    x = np.arange(-70000, 70000, 7).astype(source) if source != np.bool_ else np.array([0, 1])
    x = x.astype(source)
    for target in F8:
        model, feeds = single_node_model(
            "Cast", [("x", x, False)], opset=21, to=F8[target], saturate=saturate
        )
        _assert_same_values(run_graph_eagerly(model, feeds)["y0"], _reference(model, feeds))


@pytest.mark.filterwarnings("ignore:overflow encountered in cast")
@pytest.mark.filterwarnings("ignore:invalid value encountered in cast")
@pytest.mark.parametrize("round_mode", ["up", "down", "nearest"])
@pytest.mark.parametrize("saturate", [1, 0])
@pytest.mark.parametrize("source", [np.float32, np.float16])
def test_cast_to_e8m0_matches_reference(source, saturate, round_mode):
    x = np.concatenate([_probe(np.float32), 2.0 ** np.arange(-149, 128), [3e38, 1.7e38]])
    x = x.astype(source)
    x = x[~np.isinf(x)]  # ±inf: see test_e8m0_infinity_follows_the_spec_table
    model, feeds = single_node_model(
        "Cast",
        [("x", x, False)],
        opset=25,
        to=TensorProto.FLOAT8E8M0,
        saturate=saturate,
        round_mode=round_mode,
    )
    got, want = run_graph_eagerly(model, feeds)["y0"], _reference(model, feeds)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


def test_e8m0_infinity_follows_the_spec_table():
    """The Cast spec's FLOAT8E8M0 table: Inf -> E8M0_MAX (0xFE) with saturate, NaN without
    (onnx.numpy_helper.to_float8e8m0 gives NaN in both cases); NaN stays NaN (0xFF)."""
    x = torch.tensor([np.inf, -np.inf, np.nan])
    assert cast_e8m0(x, True, "up").view(torch.uint8).tolist() == [0xFE, 0xFE, 0xFF]
    assert cast_e8m0(x, False, "nearest").view(torch.uint8).tolist() == [0xFF, 0xFF, 0xFF]


def test_float8_through_data_movement_ops():
    """Transpose, Reshape, Concat, Slice and Cast on a float8 tensor: bits move unchanged."""
    x = rng.standard_normal((2, 3, 4)).astype(ml_dtypes.float8_e5m2)
    nodes = [
        helper.make_node("Transpose", ["x"], ["t"], perm=[2, 0, 1]),
        helper.make_node("Reshape", ["t", "shape"], ["r"]),
        helper.make_node("Concat", ["r", "r"], ["c"], axis=0),
        helper.make_node("Slice", ["c", "starts", "ends"], ["s"]),
        helper.make_node("Cast", ["s"], ["y"], to=TensorProto.FLOAT),
    ]
    inits = [
        numpy_helper.from_array(np.array([4, 6], np.int64), "shape"),
        numpy_helper.from_array(np.array([3], np.int64), "starts"),
        numpy_helper.from_array(np.array([7], np.int64), "ends"),
    ]
    graph = helper.make_graph(
        nodes,
        "f8",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT8E5M2, x.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    got = run_graph_eagerly(model, {"x": x})["y"]
    np.testing.assert_array_equal(got, _reference(model, {"x": x}))


def test_float8_arithmetic_is_rejected_clearly():
    f8 = TensorInfo("a", (2,), "float8_e4m3fn")
    node = NodeView("Relu", "relu0", "", 21, [f8], [TensorInfo("y", (2,), "float8_e4m3fn")])
    why = check_supported(node)
    assert why is not None and "float8_e4m3fn" in why and "no arithmetic on float8" in why


def test_large_float8_weight_goes_through_the_weights_file(tmp_path):
    """A float8 initializer above the inline limit: written to the safetensors file with its
    float8 dtype tag, read back by the importer's store, compiled and run end to end."""
    import ramiel.backend
    from ramiel.importer import ImportOptions, import_onnx

    w = rng.standard_normal((8, 8)).astype(ml_dtypes.float8_e4m3fn)
    graph = helper.make_graph(
        [
            helper.make_node("Cast", ["w"], ["wf"], to=TensorProto.FLOAT),
            helper.make_node("Add", ["x", "wf"], ["y"]),
        ],
        "f8w",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, (8, 8))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, (8, 8))],
        [numpy_helper.from_array(w, "w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    path = tmp_path / "w.safetensors"
    import_onnx(model, ImportOptions(weights_path=str(path)))
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    assert json.loads(raw[8 : 8 + n])["w"]["dtype"] == "F8_E4M3"

    x = rng.standard_normal((8, 8)).astype(np.float32)
    (got,) = ramiel.backend.run_model(model, [x])
    np.testing.assert_array_equal(got, x + w.astype(np.float32))


# -- uint64 ----------------------------------------------------------------------------------------

_EDGES = np.array([0, 1, 3, 2**32, 2**63 - 1, 2**63, 2**63 + 1, 2**64 - 2, 2**64 - 1], np.uint64)


@pytest.mark.parametrize(
    "op,fn",
    [
        ("Add", np.add),
        ("Sub", np.subtract),
        ("Max", np.maximum),
        ("Min", np.minimum),
        ("Div", np.floor_divide),
        ("Less", np.less),
        ("LessOrEqual", np.less_equal),
        ("Greater", np.greater),
        ("GreaterOrEqual", np.greater_equal),
    ],
)
@pytest.mark.parametrize("b_constant", [False, True])
def test_uint64_arithmetic_is_exact(op, fn, b_constant):
    a = np.repeat(_EDGES, len(_EDGES))
    b = np.tile(_EDGES, len(_EDGES))
    r = rng.integers(0, 2**64 - 1, 500, dtype=np.uint64)
    small = rng.integers(1, 2**20, 500, dtype=np.uint64)
    a, b = np.concatenate([a, r, r]), np.concatenate([b, r[::-1], small])
    if op == "Div":
        a, b = a[b != 0], b[b != 0]  # integer division by zero is undefined
    model, feeds = single_node_model(op, [("a", a, False), ("b", b, b_constant)], opset=14)
    got = run_graph_eagerly(model, feeds)["y0"]
    with np.errstate(over="ignore"):
        want = fn(a, b)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_uint64_sum_of_three():
    a, b, c = (rng.integers(0, 2**64 - 1, 50, dtype=np.uint64) for _ in range(3))
    model, feeds = single_node_model(
        "Sum", [("a", a, False), ("b", b, False), ("c", c, False)], opset=13
    )
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(run_graph_eagerly(model, feeds)["y0"], a + b + c)


def test_pow_with_uint64_exponent():
    x = np.array([1.5, -2.0, 3.0, 0.5], np.float32)
    y = np.array([0, 3, 7, 2**40], np.uint64)
    model, feeds = single_node_model("Pow", [("x", x, False), ("y", y, False)], opset=15)
    got = run_graph_eagerly(model, feeds)["y0"]
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.array([1.0, -8.0, 2187.0, 0.0], np.float32))


@pytest.mark.parametrize(
    "op,inputs,fragment",
    [
        ("Mod", [((2,), "uint64"), ((2,), "uint64")], "no CPU kernels"),
        ("Pow", [((2,), "int64"), ((2,), "uint64")], "float base"),
    ],
)
def test_uint64_left_unsupported_says_why(op, inputs, fragment):
    ins = [TensorInfo(f"in{i}", s, d) for i, (s, d) in enumerate(inputs)]
    node = NodeView(op, "n0", "", 15, ins, [TensorInfo("y", (2,), inputs[0][1])])
    why = check_supported(node)
    assert why is not None and "uint64" in why and fragment in why
    with pytest.raises(UnsupportedOpError, match=f"{op}.*n0.*opset 15.*uint64"):
        from ramiel.lowering.api import lower_node

        lower_node(node, [None, None], None)  # type: ignore[arg-type]
