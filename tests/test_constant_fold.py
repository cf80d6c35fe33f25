"""``--constant-fold`` numerics against onnxruntime, and its size policy.

Each case is a one-node ONNX model whose inputs are all initializers: Ramiel imports it, folds it
and must end up returning constants equal to what onnxruntime computes for the same model.
"""

from __future__ import annotations

import time

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper, numpy_helper
from xdsl.dialects import func

from ramiel.dialects.onnx import OPS, OnnxOp
from ramiel.importer import import_onnx
from ramiel.passes.constant_fold import ConstantFold
from ramiel.passes.dce import DeadCodeElimination
from ramiel.weights import constant_value, splat_value

rng = np.random.default_rng(0)


def f32(*shape, low=-2.0, high=2.0):
    return rng.uniform(low, high, shape).astype(np.float32)


def i64(*values):
    return np.array(values, np.int64)


# (op_type, opset, attributes, inputs)
CASES = [
    ("Add", 17, {}, [f32(2, 3), f32(3)]),
    ("Sub", 17, {}, [f32(2, 3), f32(2, 1)]),
    ("Mul", 17, {}, [f32(4), f32(4)]),
    ("Div", 17, {}, [f32(4), f32(4, low=0.5)]),
    ("Pow", 17, {}, [f32(4, low=0.1), f32(4)]),
    ("Sqrt", 17, {}, [f32(5, low=0.0)]),
    ("Exp", 17, {}, [f32(5)]),
    ("Log", 17, {}, [f32(5, low=0.1)]),
    ("Erf", 17, {}, [f32(5)]),
    ("Tanh", 17, {}, [f32(5)]),
    ("Sigmoid", 17, {}, [f32(5)]),
    ("Relu", 17, {}, [f32(6)]),
    ("LeakyRelu", 17, {"alpha": 0.1}, [f32(6)]),
    ("Neg", 17, {}, [f32(3)]),
    ("Floor", 17, {}, [f32(3)]),
    ("Max", 17, {}, [f32(3), f32(3), f32(1)]),
    ("Min", 17, {}, [f32(3), f32(3)]),
    ("Sum", 9, {}, [f32(2, 2), f32(2, 2), f32(2, 2)]),
    ("Clip", 17, {}, [f32(6), np.array(-0.5, np.float32), np.array(0.5, np.float32)]),
    ("Where", 17, {}, [np.array([True, False, True]), f32(3), f32(3)]),
    ("Equal", 17, {}, [i64(1, 2, 3), i64(1, 0, 3)]),
    ("Cast", 17, {"to": onnx.TensorProto.INT32}, [f32(4)]),
    ("Softmax", 13, {"axis": -1}, [f32(2, 3)]),
    ("MatMul", 17, {}, [f32(2, 3), f32(3, 2)]),
    ("Gemm", 17, {"transB": 1, "alpha": 0.5}, [f32(2, 3), f32(4, 3), f32(4)]),
    ("ReduceMean", 13, {"axes": [1], "keepdims": 0}, [f32(3, 4)]),
    ("Transpose", 17, {"perm": [1, 0]}, [f32(2, 3)]),
    ("Reshape", 17, {}, [f32(2, 6), i64(3, -1)]),
    ("Flatten", 17, {"axis": 1}, [f32(2, 2, 2)]),
    ("Unsqueeze", 11, {"axes": [0, 2]}, [f32(2, 3)]),
    ("Unsqueeze", 13, {}, [f32(2, 3), i64(1)]),
    ("Squeeze", 13, {}, [f32(2, 1, 3), i64(1)]),
    ("Concat", 17, {"axis": 0}, [f32(2, 2), f32(1, 2)]),
    ("Gather", 17, {"axis": 0}, [i64(7, 8, 9), np.array(1, np.int64)]),
    ("Slice", 17, {}, [i64(1, 2, 3, 4, 5), i64(1), i64(4)]),
    ("Split", 13, {"axis": 0}, [i64(1, 2, 3, 4)]),
    ("Expand", 17, {}, [f32(1, 3), i64(2, 3)]),
    ("Tile", 17, {}, [f32(2), i64(3)]),
    ("Range", 17, {}, [np.array(0, np.int64), np.array(7, np.int64), np.array(2, np.int64)]),
    ("Pad", 17, {}, [f32(3), i64(1, 2)]),
    (
        "ConstantOfShape",
        17,
        {"value": numpy_helper.from_array(np.array([7], np.int64))},
        [i64(2, 3)],
    ),
    ("Shape", 17, {}, [f32(2, 3, 4)]),
    ("Size", 17, {}, [f32(2, 3)]),
]


def _one_node_model(op_type, opset, attrs, inputs) -> onnx.ModelProto:
    names = [f"in{i}" for i in range(len(inputs))]
    schema = onnx.defs.get_schema(op_type, opset, "")
    n_out = 2 if op_type == "Split" else 1
    outs = [f"out{i}" for i in range(n_out)]
    assert schema.min_output <= n_out
    node = helper.make_node(op_type, names, outs, **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        [],
        [helper.make_tensor_value_info(o, 0, None) for o in outs],
        [numpy_helper.from_array(a, n) for a, n in zip(inputs, names, strict=True)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)
    return onnx.shape_inference.infer_shapes(model)


def _fold(model: onnx.ModelProto):
    """Import, fold and clean up; the returned values (``None`` where not a constant)."""
    module = import_onnx(model)
    ConstantFold().apply(None, module)
    DeadCodeElimination().apply(None, module)
    module.verify()
    ret = next(o for o in module.walk() if isinstance(o, func.ReturnOp))
    values = []
    for v in ret.operands:
        owner = v.owner
        if isinstance(owner, OPS["Constant"]):
            values.append(constant_value(owner.properties["value"], None))  # all inline
        else:
            values.append(None)
    return module, values


@pytest.mark.parametrize(
    "op_type, opset, attrs, inputs", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES]
)
def test_fold_matches_onnxruntime(op_type, opset, attrs, inputs):
    model = _one_node_model(op_type, opset, attrs, inputs)
    so = ort.SessionOptions()
    so.log_severity_level = 3
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    expected = ort.InferenceSession(model.SerializeToString(), so).run(None, {})
    module, got = _fold(model)
    assert not [o for o in module.walk() if isinstance(o, OnnxOp) and o.op_type == op_type]
    for g, e in zip(got, expected, strict=True):
        assert g is not None
        assert g.dtype == e.dtype and g.shape == e.shape
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-7)


def test_splats_are_never_materialised():
    """A 2^32-element ConstantOfShape, scaled and unsqueezed, folds in well under a second."""
    shape = i64(1 << 16, 1 << 16)
    nodes = [
        helper.make_node(
            "ConstantOfShape",
            ["s"],
            ["w"],
            value=numpy_helper.from_array(np.array([0.5], np.float32)),
        ),
        helper.make_node("Mul", ["w", "two"], ["w2"]),
        helper.make_node("Unsqueeze", ["w2", "axes"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 1 << 16, 1 << 16])],
        [
            numpy_helper.from_array(shape, "s"),
            numpy_helper.from_array(np.array(2.0, np.float32), "two"),
            numpy_helper.from_array(i64(0), "axes"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    start = time.perf_counter()
    module = import_onnx(model)
    ConstantFold().apply(None, module)
    assert time.perf_counter() - start < 5
    ret = next(o for o in module.walk() if isinstance(o, func.ReturnOp))
    attr = ret.operands[0].owner.properties["value"]
    assert tuple(attr.type.get_shape()) == (1, 1 << 16, 1 << 16)
    assert splat_value(attr) == np.float32(1.0)


def _weights_model(w: np.ndarray) -> onnx.ModelProto:
    """``y = x @ Transpose(w)`` and ``z = Expand(w, (4, *w.shape))``: a weight transposed as in
    PyTorch's linear layers, and a constant result four times the weight's size."""
    k, n = w.shape
    nodes = [
        helper.make_node("Transpose", ["w"], ["wt"], perm=[1, 0]),
        helper.make_node("MatMul", ["x", "wt"], ["y"]),
        helper.make_node("Expand", ["w", "shape"], ["z"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, n])],
        [
            helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2, k]),
            helper.make_tensor_value_info("z", onnx.TensorProto.FLOAT, [4, k, n]),
        ],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(i64(4, k, n), "shape")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def test_large_results_fold_into_new_weights(tmp_path):
    """A large Transpose of a weight becomes a new weight of the module's store (the input file
    unchanged); the Expand to four times the weight's size stays an op."""
    from safetensors.numpy import load_file
    from xdsl.dialects.builtin import DenseResourceAttr

    from ramiel.context import make_context
    from ramiel.importer import ImportOptions

    w = f32(8, 6)
    path = str(tmp_path / "m.safetensors")
    ctx = make_context(str(tmp_path))  # m.safetensors is relative to tmp_path
    module = import_onnx(
        _weights_model(w), ImportOptions(weights_path=path, weights_ref="m.safetensors")
    )
    ConstantFold().apply(ctx, module)
    DeadCodeElimination().apply(ctx, module)
    module.verify()
    ops = {o.op_type: o for o in module.walk() if isinstance(o, OnnxOp)}
    assert "Transpose" not in ops and "Expand" in ops
    attr = ops["MatMul"].operands[1].owner.properties["value"]
    assert isinstance(attr, DenseResourceAttr)
    store = ctx.weights.of(module)
    np.testing.assert_array_equal(constant_value(attr, store), w.T)
    assert store is not None and store.new_keys() == [attr.resource_handle.data]
    assert sorted(load_file(path)) == ["w"]  # saved only when the IR is written


def test_large_results_stay_inline_without_a_weights_file():
    model = _one_node_model("Transpose", 17, {"perm": [1, 0]}, [f32(8, 8)])
    module, (got,) = _fold(model)
    assert got is not None and got.shape == (8, 8)
    assert not [o for o in module.walk() if isinstance(o, OnnxOp) and o.op_type == "Transpose"]


@pytest.mark.parametrize(
    "results, operands, fits",
    [
        ([(8, 8)], [(8, 8)], True),  # Transpose, Reshape
        ([(1, 64, 256)], [(64, 256), (1, 64)], True),  # Gather of embeddings
        ([(4, 8, 8)], [(8, 8), (3,)], False),  # Expand
    ],
)
def test_fits_budget(results, operands, fits):
    from ramiel.folding import Const, fits_budget

    def full(shape):
        return Const.of(np.zeros(shape, np.float32))

    assert fits_budget([full(s) for s in results], [full(s) for s in operands]) is fits
    splat = Const((1024, 1024), np.dtype(np.float32), splat=np.float32(1).reshape(()))
    assert not fits_budget([full((8, 8))], [splat])  # a splat operand counts one element


def test_an_error_while_folding_is_raised_as_it_is(monkeypatch):
    """An exception inside the rewrite pattern reaches the caller unchanged, once: the same
    class and message, without xDSL's walker adding the printed module to it as a note, and the
    walk stops at the first one."""
    from ramiel import folding
    from ramiel.errors import RamielError

    calls = []

    def failing_fold(self, op, opset):
        calls.append(op.op_type)
        raise RamielError(f"cannot read the weights of {op.op_type}")

    monkeypatch.setattr(folding._Folder, "fold", failing_fold)
    model = _one_node_model("Add", 17, {}, [np.ones(3, np.float32), np.ones(3, np.float32)])
    module = import_onnx(model)
    with pytest.raises(RamielError, match="cannot read the weights of") as info:
        ConstantFold().apply(None, module)
    assert not getattr(info.value, "__notes__", None)
    assert len(calls) == 1
