"""ONNX node conformance cases (rebuilt offline from ``onnx.backend.test.case.node``) and
numerical comparison helpers for the lowering tests."""

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass

import numpy as np
import onnx

from ramiel.lowering import RULES


@dataclass(frozen=True)
class NodeCase:
    """One ONNX node test: its model, input arrays and expected output arrays."""

    name: str
    op_type: str
    model: onnx.ModelProto
    inputs: tuple
    outputs: tuple
    #: graph inputs that real models would give as constants (frozen by the tests)
    static_names: frozenset = frozenset()

    @property
    def opset(self) -> int:
        for imp in self.model.opset_import:
            if imp.domain in ("", "ai.onnx"):
                return imp.version
        return 0


def _array(a):
    if isinstance(a, onnx.TensorProto):
        from onnx import numpy_helper

        return numpy_helper.to_array(a)
    return a


@functools.cache
def _raw_cases() -> tuple:
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tuple(collect_testcases())


def _static_names(node: onnx.NodeProto) -> frozenset:
    idx = STATIC_INPUTS.get(node.op_type, ())
    return frozenset(node.input[i] for i in idx if i < len(node.input) and node.input[i])


@functools.cache
def all_node_cases() -> tuple[NodeCase, ...]:
    """Every single-node ONNX node test case of the default domain (generated once, ~5 s)."""
    out = []
    seen = set()
    for tc in _raw_cases():
        g = tc.model.graph
        if len(g.node) != 1 or g.node[0].domain not in ("", "ai.onnx") or tc.name in seen:
            continue
        seen.add(tc.name)
        ins, outs = tc.data_sets[0]
        ins, outs = [_array(a) for a in ins], [_array(a) for a in outs]
        node = g.node[0]
        out.append(
            NodeCase(tc.name, node.op_type, tc.model, tuple(ins), tuple(outs), _static_names(node))
        )
    return tuple(out)


@functools.cache
def expanded_cases() -> tuple[NodeCase, ...]:
    """The function-expanded node tests (``*_expanded``, several nodes, often an older opset)
    whose every node has a rule; ``op_type`` is the expanded op's."""
    singles = {c.name: c for c in all_node_cases()}
    out = []
    for tc in _raw_cases():
        g = tc.model.graph
        if len(g.node) < 2 or "_expanded" not in tc.name:
            continue
        if any(n.op_type not in RULES or n.domain not in ("", "ai.onnx") for n in g.node):
            continue
        orig = singles.get(tc.name.split("_expanded")[0])
        if orig is None:
            continue
        ins, outs = tc.data_sets[0]
        out.append(
            NodeCase(
                tc.name,
                orig.op_type,
                tc.model,
                tuple(_array(a) for a in ins),
                tuple(_array(a) for a in outs),
                orig.static_names,
            )
        )
    return tuple(out)


def supported_node_cases() -> list[NodeCase]:
    """Node cases whose op type has a lowering rule."""
    return [c for c in all_node_cases() if c.op_type in RULES]


#: Inputs that real models give as constants (initializers or Constant nodes) and the rules need
#: at compile time; node tests feed them as graph inputs, so the tests freeze them.
STATIC_INPUTS: dict[str, tuple[int, ...]] = {
    "Reshape": (1,),
    "Slice": (1, 2, 3, 4),
    "Squeeze": (1,),
    "Unsqueeze": (1,),
    "Split": (1,),
    "ReduceSum": (1,),
    "ReduceMean": (1,),
    "ReduceMax": (1,),
    "ReduceMin": (1,),
    "ReduceProd": (1,),
    "ReduceL1": (1,),
    "ReduceL2": (1,),
    "ReduceLogSum": (1,),
    "ReduceLogSumExp": (1,),
    "ReduceSumSquare": (1,),
    "Resize": (1, 2, 3),
    "Upsample": (1,),
    "TopK": (1,),
    "Pad": (1, 2, 3),
    "Tile": (1,),
    "Expand": (1,),
    "ConstantOfShape": (0,),
    "OneHot": (1,),
    "CumSum": (1,),
    "CumProd": (1,),
    "Trilu": (1,),
    "Dropout": (1, 2),
    "CenterCropPad": (1,),
    "HannWindow": (0,),
    "HammingWindow": (0,),
    "AffineGrid": (1,),
    "BlackmanWindow": (0,),
}


def frozen_model_and_feeds(case: NodeCase) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """The case's model with its static inputs turned into initializers, and the other feeds."""
    from ramiel.lowering.node_view import freeze_inputs

    feeds = {vi.name: a for vi, a in zip(case.model.graph.input, case.inputs, strict=False)}
    frozen = {k: v for k, v in feeds.items() if k in case.static_names}
    if not frozen:
        return case.model, feeds
    model = freeze_inputs(case.model, frozen)
    return model, {k: v for k, v in feeds.items() if k not in frozen}


RTOL = {"float16": 2e-3, "bfloat16": 1e-2, "float32": 1e-5, "float64": 1e-10}


def assert_close(
    actual: np.ndarray, expected: np.ndarray, rtol: float | None = None, what: str = ""
):
    """Exact for integers/bools; for floats |a - e| <= rtol * max|e| (NaN and inf must match);
    exact for float8 (the values are the spec's roundings), with NaN matching NaN."""
    expected = np.asarray(expected)
    actual = np.asarray(actual)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    if expected.dtype.name.startswith("float8"):
        assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
        np.testing.assert_array_equal(
            actual.astype(np.float32), expected.astype(np.float32), err_msg=what
        )
        return
    kind = expected.dtype.kind
    if kind not in "fc" and expected.dtype.name != "bfloat16":
        assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
        np.testing.assert_array_equal(actual, expected, err_msg=what)
        return
    name = expected.dtype.name
    if name != "bfloat16":
        assert actual.dtype == expected.dtype or name == "bfloat16", (
            f"{what}: dtype {actual.dtype} != {expected.dtype}"
        )
    with np.errstate(invalid="ignore"):  # torch widens some float8 NaNs to signalling NaNs
        e = expected.astype(np.float64)
        a = actual.astype(np.float64)
    np.testing.assert_array_equal(np.isnan(a), np.isnan(e), err_msg=f"{what}: NaN positions")
    finite = np.isfinite(e)
    np.testing.assert_array_equal(
        a[~finite & ~np.isnan(e)], e[~finite & ~np.isnan(e)], err_msg=what
    )
    if not finite.any():
        return
    tol = (rtol if rtol is not None else RTOL.get(name, 1e-5)) * max(np.abs(e[finite]).max(), 1e-30)
    err = np.abs(a[finite] - e[finite]).max()
    assert err <= tol, (
        f"{what}: max abs error {err:.3g} > {tol:.3g} (max |expected| {np.abs(e[finite]).max():.3g})"
    )


def single_node_model(
    op: str,
    inputs: list[tuple[str, np.ndarray | None, bool]],
    outputs: list[str] | int = 1,
    opset: int = 13,
    **attrs,
) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """A one-node model: ``inputs`` are ``(name, value, is_constant)`` (name "" = absent optional
    input); constants become initializers, the rest graph inputs. Returns (model, feeds)."""
    from onnx import helper, numpy_helper

    if isinstance(outputs, int):
        outputs = [f"y{i}" for i in range(outputs)]
    node = helper.make_node(op, [n for n, _, _ in inputs], outputs, **attrs)
    graph_inputs, inits, feeds = [], [], {}
    for name, value, is_const in inputs:
        if not name:
            continue
        value = np.asarray(value)
        if is_const:
            inits.append(numpy_helper.from_array(value, name))
        else:
            elem = helper.np_dtype_to_tensor_dtype(value.dtype)
            graph_inputs.append(helper.make_tensor_value_info(name, elem, value.shape))
            feeds[name] = value
    outs = [onnx.ValueInfoProto(name=o) for o in outputs if o]
    graph = helper.make_graph([node], f"{op}_test", graph_inputs, outs, inits)
    opsets = [helper.make_opsetid("", opset)]
    try:
        model = helper.make_model_gen_version(graph, opset_imports=opsets)
    except ValueError:  # opsets onnx's version table lacks (2, 3, 4): IR 4 loads them
        model = helper.make_model(graph, opset_imports=opsets, ir_version=4)
    return model, feeds


def run_onnxruntime(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """Run ``model`` with onnxruntime on one thread (no graph optimisation)."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.log_severity_level = 3
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    sess = ort.InferenceSession(model.SerializeToString(), so)
    return sess.run(None, feeds)
