"""The ``onnx`` dialect (:mod:`ramiel.dialects.onnx`): op coverage, schema-driven verification,
attribute conversion, shapes, and located errors from :mod:`ramiel.parsing`."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto
from onnx.defs import OpSchema
from xdsl.dialects.builtin import FileLineColLoc, TensorType, f32
from xdsl.utils.exceptions import VerifyException

from ramiel.dialects import onnx as onnx_d
from ramiel.dialects.onnx import (
    LATEST_OPSET,
    OPS,
    attr_from_python,
    broadcast_shapes,
    python_from_attr,
    schema_info,
    tensor_type,
    unrepresentable_reason,
)
from ramiel.parsing import LocatedVerifyError, location_of, parse_module, verify_located

ZOO_OPS = [
    "AveragePool",
    "BatchNormalization",
    "Concat",
    "ConstantOfShape",
    "Conv",
    "Dropout",
    "Gemm",
    "GlobalAveragePool",
    "LRN",
    "MaxPool",
    "Add",
    "Mul",
    "Relu",
    "Reshape",
    "Softmax",
    "Sum",
    "Transpose",
    "Unsqueeze",
]
TORCH_EXPORT_OPS = [
    "MatMul",
    "Sub",
    "Div",
    "Pow",
    "Sqrt",
    "Erf",
    "Tanh",
    "Sigmoid",
    "ReduceMean",
    "LayerNormalization",
    "Gather",
    "Shape",
    "Slice",
    "Squeeze",
    "Cast",
    "Where",
    "Expand",
    "Equal",
    "Flatten",
    "Clip",
    "Identity",
    "Constant",
    "Split",
    "Pad",
    "Resize",
    "ConvTranspose",
    "Gelu",
    "HardSwish",
    "HardSigmoid",
    "LeakyRelu",
    "Max",
    "Min",
    "Neg",
    "Exp",
    "Log",
]


@pytest.mark.parametrize("op_type", ZOO_OPS + TORCH_EXPORT_OPS)
def test_dialect_covers_the_needed_operators(op_type):
    assert op_type in OPS
    assert OPS[op_type].name == f"onnx.{op_type}"


def test_every_op_has_a_schema_at_some_opset():
    for op_type in OPS:
        assert schema_info(op_type, LATEST_OPSET) is not None or any(
            schema_info(op_type, v) is not None for v in range(onnx_d.MIN_OPSET, LATEST_OPSET)
        ), op_type


@pytest.mark.parametrize(
    "op_type, why",
    [
        ("SequenceMap", "subgraph attributes are only supported on If, Loop and Scan"),
        ("SequenceAt", "sequence"),
        ("NoSuchOp", "no ONNX operator"),
    ],
)
def test_unrepresentable_operators_say_why(op_type, why):
    assert why in unrepresentable_reason(op_type, 17)


@pytest.mark.parametrize("op_type", ["If", "Loop", "Scan"])
def test_control_flow_operators_are_region_ops(op_type):
    assert unrepresentable_reason(op_type, 17) is None
    regions = [name for name, _ in OPS[op_type].get_irdl_definition().regions]
    assert tuple(regions) == onnx_d.REGION_ATTRS[op_type]


_MODULE = """builtin.module attributes {{onnx.opset = {opset} : i64}} {{
  func.func @f(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32> {{
    {op}
    func.return %x : tensor<1x3x8x8xf32>
  }}
}}
"""


def _verify(op_text: str, opset: int = 17, ctx=None) -> None:
    from ramiel.dialects.registry import make_context

    verify_located(
        parse_module(ctx or make_context(), _MODULE.format(op=op_text, opset=opset), "t.mlir")
    )


def test_valid_op_verifies():
    _verify('%y = "onnx.Relu"(%x) : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>')


@pytest.mark.parametrize(
    "op_text, opset, message",
    [
        (
            '%y = "onnx.Relu"(%x, %x) : (tensor<1x3x8x8xf32>, tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>',
            17,
            "expects 1 operands",
        ),
        (
            '%y = "onnx.LeakyRelu"(%x) <{alpha = 1 : si64}> : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>',
            17,
            "attribute 'alpha' must be FLOAT",
        ),
        (
            '%y = "onnx.Cast"(%x) : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>',
            17,
            "missing required attribute 'to'",
        ),
        (
            '%y = "onnx.Gelu"(%x) : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>',
            17,
            "not defined at opset 17",
        ),
        (
            '%y = "onnx.Add"(%x, %x) : (tensor<1x3x8x8xf32>, tensor<1x3x8x8xf32>) -> tensor<1x3x8x9xf32>',
            17,
            "result shape",
        ),
    ],
)
def test_invalid_op_reports_reason_and_location(op_text, opset, message):
    with pytest.raises(LocatedVerifyError) as info:
        _verify(op_text, opset)
    assert message in info.value.reason
    assert str(info.value).startswith("t.mlir:3:5: error: ")


def test_gelu_is_valid_from_opset_20():
    _verify('%y = "onnx.Gelu"(%x) : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>', 20)


def test_parsed_ops_carry_file_locations():
    from ramiel.dialects.registry import make_context

    module = parse_module(
        make_context(),
        _MODULE.format(
            op='%y = "onnx.Relu"(%x) : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>', opset=17
        ),
        "m.mlir",
    )
    relu = next(o for o in module.walk() if o.name == "onnx.Relu")
    assert isinstance(relu.location, FileLineColLoc)
    assert location_of(relu) == "m.mlir:3:5"


def test_programmatic_ops_verify_against_the_opset():
    x = TensorType(f32, [2, 3])
    from xdsl.dialects import func
    from xdsl.dialects.builtin import IntegerAttr, IntegerType, ModuleOp
    from xdsl.ir import Block, Region

    block = Block(arg_types=[x])
    relu = onnx_d.create("Gelu", [block.args[0]], [x], node_name="r")
    block.add_ops([relu, func.ReturnOp(relu.results[0])])
    fn = func.FuncOp("f", ([x], [x]), Region(block))
    module = ModuleOp([fn], attributes={onnx_d.OPSET_ATTR: IntegerAttr(17, IntegerType(64))})
    with pytest.raises(VerifyException, match="not defined at opset 17"):
        module.verify()
    module.attributes[onnx_d.OPSET_ATTR] = IntegerAttr(20, IntegerType(64))
    module.verify()
    assert relu.node_name == "r" and relu.op_type == "Gelu"
    assert relu.input("X") is block.args[0]


def test_dynamic_dimensions_print_as_question_marks():
    t = tensor_type(TensorProto.FLOAT, [-1, 3])
    assert str(t) == "tensor<?x3xf32>"
    assert onnx_d.static_shape(t) is None
    assert onnx_d.static_shape(tensor_type(TensorProto.FLOAT, [2, 3])) == (2, 3)
    assert str(tensor_type(TensorProto.INT64, None)) == "tensor<*xi64>"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.sampled_from([1, 2, 3]), max_size=4), min_size=1, max_size=4))
def test_broadcast_shapes_matches_numpy(shapes):
    try:
        expected = np.broadcast_shapes(*[tuple(s) for s in shapes])
    except ValueError:
        expected = None
    assert broadcast_shapes(shapes) == expected


_KIND = OpSchema.AttrType


@settings(max_examples=100, deadline=None)
@given(
    st.one_of(
        st.tuples(st.just(_KIND.INT), st.integers(-(2**63), 2**63 - 1)),
        st.tuples(st.just(_KIND.FLOAT), st.floats(width=32, allow_nan=False)),
        st.tuples(st.just(_KIND.STRING), st.text(max_size=8)),
        st.tuples(st.just(_KIND.INTS), st.lists(st.integers(-(2**31), 2**31), max_size=5)),
        st.tuples(
            st.just(_KIND.FLOATS), st.lists(st.floats(width=32, allow_nan=False), max_size=5)
        ),
        st.tuples(st.just(_KIND.STRINGS), st.lists(st.text(max_size=4), max_size=3)),
    )
)
def test_attribute_conversion_roundtrip(kind_value):
    kind, value = kind_value
    assert python_from_attr(attr_from_python(kind, value)) == value
