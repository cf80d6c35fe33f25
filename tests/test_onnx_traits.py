"""The op categories of :mod:`ramiel.dialects.onnx_traits` (issue #16): each is exactly the set its
reader wrote before the table (copied below from main 7488ba6, where each module had its own), every
op type of the table is an op of the dialect, and the generated op classes carry the table's
traits, so that ``op.has_trait(T)`` and ``has_trait(op.op_type, T)`` agree."""

from __future__ import annotations

from xdsl.traits import OpTrait, Pure

from ramiel.dialects.onnx import OPS
from ramiel.dialects.onnx_traits import (
    CATEGORIES,
    ONNX_OP_TRAITS,
    Broadcasting,
    Cheap,
    DataMovement,
    DenseCompute,
    Elementwise,
    GlobalPooling,
    LayoutAnchor,
    LayoutTransparent,
    OnnxCategory,
    Pooling,
    has_trait,
    ops_with,
    traits_of,
)

#: Each category's members as the module that owned the set wrote them on main 7488ba6.
BEFORE: dict[type[OnnxCategory], frozenset[str]] = {
    # ramiel.layout ANCHOR_OPS
    LayoutAnchor: frozenset(
        {
            "AveragePool", "Conv", "MaxPool", "Resize", "Upsample",
        }
    ),
    # ramiel.layout TRANSPARENT_OPS
    LayoutTransparent: frozenset(
        {
            "Abs", "Add", "And", "BatchNormalization", "Cast", "Ceil", "Celu", "Clip", "Concat",
            "Div", "Dropout", "Elu", "Equal", "Erf", "Exp", "Floor", "Gelu", "Greater",
            "GreaterOrEqual", "HardSigmoid", "HardSwish", "Identity", "IsInf", "IsNaN", "LRN",
            "LeakyRelu", "Less", "LessOrEqual", "Log", "Max", "Mean", "Min", "Mish", "Mul",
            "Neg", "Not", "Or", "PRelu", "Pad", "Pow", "Reciprocal", "Relu", "Round", "Selu",
            "Sigmoid", "Sign", "Softplus", "Softsign", "Sqrt", "Sub", "Sum", "Swish", "Tanh",
            "ThresholdedRelu", "Where", "Xor",
        }
    ),
    # ramiel.passes.clone CHEAP_OPS
    Cheap: frozenset(
        {
            "Cast", "Concat", "ConstantOfShape", "Expand", "Flatten", "Gather", "Identity",
            "Range", "Reshape", "Shape", "Size", "Slice", "Squeeze", "Transpose", "Unsqueeze",
        }
    ),
    # ramiel.folding ELEMENTWISE
    Elementwise: frozenset(
        {
            "Abs", "Acos", "Acosh", "Add", "And", "Asin", "Asinh", "Atan", "Atanh", "BitShift",
            "BitwiseAnd", "BitwiseNot", "BitwiseOr", "BitwiseXor", "Cast", "CastLike", "Ceil",
            "Celu", "Clip", "Cos", "Cosh", "Div", "Elu", "Equal", "Erf", "Exp", "Floor", "Gelu",
            "Greater", "GreaterOrEqual", "HardSigmoid", "HardSwish", "IsInf", "IsNaN",
            "LeakyRelu", "Less", "LessOrEqual", "Log", "Max", "Mean", "Min", "Mish", "Mod",
            "Mul", "Neg", "Not", "Or", "PRelu", "Pow", "Reciprocal", "Relu", "Round", "Selu",
            "Shrink", "Sigmoid", "Sign", "Sin", "Sinh", "Softplus", "Softsign", "Sqrt", "Sub",
            "Sum", "Tan", "Tanh", "ThresholdedRelu", "Where", "Xor",
        }
    ),
    # ramiel.cost_model _DENSE
    DenseCompute: frozenset(
        {
            "Attention", "Conv", "ConvInteger", "ConvTranspose", "Einsum", "Gemm", "MatMul",
            "MatMulInteger",
        }
    ),
    # ramiel.cost_model _POOL
    Pooling: frozenset(
        {
            "AveragePool", "LRN", "LpPool", "MaxPool",
        }
    ),
    # ramiel.cost_model _GLOBAL_POOL
    GlobalPooling: frozenset(
        {
            "GlobalAveragePool", "GlobalLpPool", "GlobalMaxPool",
        }
    ),
    # ramiel.cost_model _MOVE
    DataMovement: frozenset(
        {
            "Cast", "Concat", "Constant", "ConstantOfShape", "DepthToSpace", "Dropout",
            "Expand", "Flatten", "Gather", "Identity", "Pad", "Reshape", "Shape", "Size",
            "Slice", "SpaceToDepth", "Split", "Squeeze", "Tile", "Transpose", "Unsqueeze",
        }
    ),
    # ramiel.dialects.onnx_base BROADCAST_OPS
    Broadcasting: frozenset(
        {
            "Add", "And", "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "Div", "Equal",
            "Greater", "GreaterOrEqual", "Less", "LessOrEqual", "Max", "Mean", "Min", "Mod",
            "Mul", "Or", "PRelu", "Pow", "Sub", "Sum", "Where", "Xor",
        }
    ),}  # fmt: skip


def test_every_category_has_its_old_members() -> None:
    assert set(BEFORE) == set(CATEGORIES)
    for trait, members in BEFORE.items():
        assert ops_with(trait) == members, trait.__name__
        assert {op for op in ONNX_OP_TRAITS if has_trait(op, trait)} == members, trait.__name__


def test_every_op_type_of_the_table_is_an_op_of_the_dialect() -> None:
    assert set(ONNX_OP_TRAITS) <= set(OPS), sorted(set(ONNX_OP_TRAITS) - set(OPS))
    assert all(ONNX_OP_TRAITS.values())  # an op of no category is not a key


def test_the_generated_op_classes_carry_the_tables_traits() -> None:
    for op_type, cls in OPS.items():
        carried = tuple(type(t) for t in cls.traits if isinstance(t, OnnxCategory))
        assert set(carried) == set(ONNX_OP_TRAITS.get(op_type, ())), op_type
        assert len(carried) == len(traits_of(op_type)), op_type
        for trait in CATEGORIES:
            assert cls.has_trait(trait) == has_trait(op_type, trait), (op_type, trait.__name__)
        assert cls.has_trait(Pure) or op_type in ("If", "Loop", "Scan"), op_type  # kept


def test_has_trait_on_strings() -> None:
    assert has_trait("Relu", Elementwise) and has_trait("Relu", LayoutTransparent)
    assert not has_trait("Relu", Broadcasting) and has_trait("Add", Broadcasting)
    assert has_trait("Conv", DenseCompute) and has_trait("Conv", LayoutAnchor)
    assert has_trait("LRN", Pooling) and has_trait("GlobalMaxPool", GlobalPooling)
    assert has_trait("Reshape", DataMovement) and has_trait("Reshape", Cheap)
    assert not has_trait("NoSuchOp", Elementwise) and not has_trait("", DataMovement)
    assert not has_trait("Relu", Pure)  # the table holds categories only
    assert Elementwise() == Elementwise() and Elementwise() != Broadcasting()
    assert all(issubclass(t, OpTrait) for t in CATEGORIES)
