"""Control flow (If, Loop, Scan) through the importer, the verifier and the clean-up passes.

Models are built with ``onnx.helper``; the ONNX node conformance cases of If, Loop and Scan run in
``tests/conformance``.
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from ramiel.dialects.onnx import OnnxOp, captured_values, dependences, region_yield
from ramiel.errors import ImportError_
from ramiel.importer import import_onnx


def _vi(name, shape, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def _model(nodes, inputs, outputs, initializers=(), opset=17):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def _ops(module, op_type):
    return [o for o in module.walk() if isinstance(o, OnnxOp) and o.op_type == op_type]


def if_model(disagree: bool = False):
    """``y = If(sum(x) > 0) then relu(x) + w else x * w``: both branches read the outer ``x``
    and the outer weight ``w``. With ``disagree`` the else branch is ``concat(x, x)``: 4
    elements, not 2."""
    w = numpy_helper.from_array(np.arange(2, dtype=np.float32), "w")
    then = helper.make_graph(
        [
            helper.make_node("Relu", ["x"], ["r"], name="relu"),
            helper.make_node("Add", ["r", "w"], ["t"], name="add"),
        ],
        "then",
        [],
        [_vi("t", [2])],
    )
    els = helper.make_graph(
        [
            helper.make_node("Concat", ["x", "x"], ["e"], axis=0, name="cat")
            if disagree
            else helper.make_node("Mul", ["x", "w"], ["e"], name="mul")
        ],
        "else",
        [],
        [_vi("e", [4 if disagree else 2])],
    )
    nodes = [
        helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0, name="sum"),
        helper.make_node("Greater", ["s", "zero"], ["c"], name="gt"),
        helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=els, name="branch"),
    ]
    zero = numpy_helper.from_array(np.array(0, np.float32), "zero")
    return _model(nodes, [_vi("x", [2])], [_vi("y", ["n"])], [w, zero])


def test_if_imports_as_region_op_reading_outer_values():
    module = import_onnx(if_model())
    module.verify()
    (op,) = _ops(module, "If")
    assert op.node_name == "branch"
    assert str(op.results[0].type) == "tensor<2xf32>"
    then_ops = [o.op_type for o in op.regions[0].block.ops if isinstance(o, OnnxOp)]
    assert then_ops == ["Relu", "Add"]
    captured = {v.name_hint for v in captured_values(op)}
    assert captured == {"x", "w"}
    assert dependences(op)[0] is op.operands[0]
    assert [v.name_hint for v in region_yield(op.regions[1]).values] == ["e"]


def test_if_branches_with_different_shapes_are_a_clear_error():
    with pytest.raises(ImportError_) as e:
        import_onnx(if_model(disagree=True))
    msg = str(e.value)
    assert "If node 'branch'" in msg and "then_branch" in msg and "else_branch" in msg
    assert "depend on the condition" in msg or "shape inference" in msg


def loop_model(grow: bool = False):
    """``for i in range(3): acc = acc + x`` (or ``concat(acc, x)`` with ``grow``: the carried
    value changes shape), with one scan output."""
    body_nodes = [
        helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        (
            helper.make_node("Concat", ["acc_in", "x"], ["acc_out"], axis=0)
            if grow
            else helper.make_node("Add", ["acc_in", "x"], ["acc_out"])
        ),
        helper.make_node("Identity", ["acc_out"], ["scan"]),
    ]
    shape = [None] if grow else [2]
    body = helper.make_graph(
        body_nodes,
        "body",
        [
            _vi("i", [], TensorProto.INT64),
            _vi("cond_in", [], TensorProto.BOOL),
            _vi("acc_in", shape),
        ],
        [_vi("cond_out", [], TensorProto.BOOL), _vi("acc_out", shape), _vi("scan", shape)],
    )
    m = numpy_helper.from_array(np.array(3, np.int64), "m")
    nodes = [helper.make_node("Loop", ["m", "", "x"], ["acc", "scans"], body=body, name="loop")]
    return _model(nodes, [_vi("x", [2])], [_vi("acc", ["a"]), _vi("scans", ["s", "t"])], [m])


def test_loop_imports_with_carried_values_and_scan_outputs():
    module = import_onnx(loop_model())
    module.verify()
    (op,) = _ops(module, "Loop")
    body = op.regions[0].block
    assert [str(a.type) for a in body.args] == ["tensor<i64>", "tensor<i1>", "tensor<2xf32>"]
    assert str(op.results[0].type) == "tensor<2xf32>"
    assert {v.name_hint for v in captured_values(op)} == {"x"}


def test_loop_carried_value_that_changes_shape_is_a_clear_error():
    with pytest.raises(ImportError_) as e:
        import_onnx(loop_model(grow=True))
    msg = str(e.value)
    assert "Loop node 'loop'" in msg or "shape inference" in msg
