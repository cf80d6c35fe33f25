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


def test_a_deprecated_operator_is_named_deprecated_with_the_way_out():
    """GroupNormalization-18, which onnxruntime still runs, had been 'no ONNX operator
    GroupNormalization in the default domain at opset 18' (helper-22)."""
    for opset in (18, 20):
        assert unrepresentable_reason("GroupNormalization", opset) == (
            "'GroupNormalization' of opset 18 is deprecated in ONNX (its scale and bias hold one "
            "value per group, not per channel); opset 21 redefines it: export the model at "
            "opset 21 or later"
        )
    assert unrepresentable_reason("Upsample", 11) == "'Upsample' of opset 10 is deprecated in ONNX"


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
    from ramiel.context import make_context

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
    from ramiel.context import make_context

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


# ---------------------------------------------------------------------------------------------
# The op classes generated ahead of time (dialects/onnx_ops.py, scripts/gen_onnx_dialect.py)
# ---------------------------------------------------------------------------------------------


def test_generated_op_module_is_current():
    """``dialects/onnx_ops.py`` is what ``scripts/gen_onnx_dialect.py`` writes from the installed
    onnx's schemas now (regenerate it after an onnx upgrade or a change to the script)."""
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    script = os.path.join(root, "scripts", "gen_onnx_dialect.py")
    done = subprocess.run(
        [sys.executable, script, "--check"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr


def test_generated_ops_are_the_representable_operators():
    """One class per operator with a representable schema in some opset, named like the op."""
    import onnx.defs

    from ramiel.dialects import onnx_ops

    expected = {s.name for s in onnx.defs.get_all_schemas_with_history() if onnx_d.representable(s)}
    assert set(onnx_d.OPS) == expected
    for op_type, cls in onnx_d.OPS.items():
        assert cls is getattr(onnx_ops, f"{op_type}Op") and cls.name == f"onnx.{op_type}"
        props = {p for p in cls.get_irdl_definition().properties}
        versions = [
            s
            for s in onnx.defs.get_all_schemas_with_history()
            if s.name == op_type and onnx_d.representable(s)
        ]
        regions = set(onnx_d.REGION_ATTRS.get(op_type, ()))
        assert props == {a for s in versions for a in s.attributes} - regions, op_type


_ACCESSORS = """
builtin.module attributes {{onnx.opset = {opset} : i64}} {{
  func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>,
               %lo: tensor<f32>, %s: tensor<4xf32>) {{
    %none = "onnx.NoValue"() : () -> none
    %c = "onnx.Conv"(%x, %w, %b) <{{group = 1 : si64}}> : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
    %c2 = "onnx.Conv"(%x, %w) : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
    %k = "onnx.Concat"(%x, %x, %x) <{{axis = 1 : si64}}> : (tensor<1x3x8x8xf32>, tensor<1x3x8x8xf32>, tensor<1x3x8x8xf32>) -> tensor<1x9x8x8xf32>
    {clip}
    {resize}
    func.return
  }}
}}
"""


def _accessor_ops(opset: int, clip: str, resize: str) -> dict[str, list]:
    from ramiel.context import make_context

    text = _ACCESSORS.format(opset=opset, clip=clip, resize=resize)
    module = parse_module(make_context(), text, "a.mlir")
    verify_located(module)
    ops: dict[str, list] = {}
    for op in module.walk():
        if isinstance(op, onnx_d.OnnxOp):
            ops.setdefault(op.op_type, []).append(op)
    return ops


def test_named_accessors_follow_the_schema_of_the_ops_opset():
    """Operands, results and attributes by their ONNX names: an absent optional input is
    ``None``, a variadic one a tuple; Clip's ``min`` is an input at opset 11 and an attribute
    (``min_``) at opset 6; Resize's ``scales`` is operand 1 at opset 10 and operand 2 after."""
    from xdsl.dialects.builtin import FloatAttr

    new = _accessor_ops(
        13,
        '%y = "onnx.Clip"(%x, %lo) : (tensor<1x3x8x8xf32>, tensor<f32>) -> tensor<1x3x8x8xf32>',
        '%r = "onnx.Resize"(%x, %none, %s) : (tensor<1x3x8x8xf32>, none, tensor<4xf32>) -> tensor<?x?x?x?xf32>',
    )
    conv, conv2 = new["Conv"]
    args = conv.parent_block().args
    assert (args[0], args[1], args[2]) == (conv.X, conv.W, conv.B)
    assert conv2.B is None and conv.Y is conv.results[0]
    assert onnx_d.python_from_attr(conv.group) == 1 and conv.strides is None
    (concat,) = new["Concat"]
    assert concat.inputs == tuple(concat.operands) and len(concat.inputs) == 3
    (clip,) = new["Clip"]
    assert clip.input_ is args[0] and clip.min is args[3] and clip.max is None
    (resize,) = new["Resize"]
    assert resize.roi is None and resize.scales is args[4] and resize.sizes is None

    old = _accessor_ops(
        10,
        '%y = "onnx.Clip"(%x) <{min = 0.0 : f32}> : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>',
        '%r = "onnx.Resize"(%x, %s) : (tensor<1x3x8x8xf32>, tensor<4xf32>) -> tensor<?x?x?x?xf32>',
    )
    (clip,) = old["Clip"]
    assert isinstance(clip.min_, FloatAttr) and clip.max_ is None
    with pytest.raises(KeyError, match="no input 'min' at opset 10"):
        _ = clip.min
    (resize,) = old["Resize"]
    assert resize.scales is resize.operands[1]
