"""The categories of ONNX operators that Ramiel's analyses key on, as xDSL op traits, in one table.

Each category is an :class:`~xdsl.traits.OpTrait` subclass (no parameters; instances compare
equal). :data:`ONNX_OP_TRAITS` maps an ONNX op type to its categories, and
``scripts/gen_onnx_dialect.py`` attaches them to the generated op classes
(:mod:`ramiel.dialects.onnx_ops`: ``ReluOp.traits`` holds ``Elementwise()``, ...), so that a
caller with an operation asks xDSL (``op.has_trait(Elementwise)``) and a caller with an op type
string only (the cost model, constant folding, the ONNX graph) asks :func:`has_trait`; both read
this table, the only place a category's members are written.

The categories and their readers:

* :class:`Elementwise`: computed element by element, splat operands give a splat result
  (constant folding, :mod:`ramiel.folding`);
* :class:`Broadcasting`: ONNX multidirectional broadcasting (the verifier's shape rule,
  :mod:`ramiel.dialects.onnx_base`);
* :class:`DenseCompute`, :class:`Pooling`, :class:`GlobalPooling`, :class:`DataMovement`: how the
  analytic cost model counts work (:mod:`ramiel.cost_model`);
* :class:`LayoutAnchor`, :class:`LayoutTransparent`: faster in channels-last, and the same speed
  in either memory format (:mod:`ramiel.layout`, ``--assign-layout``);
* :class:`Cheap`: worth duplicating into a consuming cluster (``--clone``).

The members are exactly those of the sets each reader wrote before (``tests/test_onnx_traits.py``
keeps a copy of each and checks it); where they look inconsistent they were left so, as
behaviour: ``Swish`` is :class:`LayoutTransparent` but not :class:`Elementwise` (constant folding
never had a splat rule for it), ``Constant`` is :class:`DataMovement` but not :class:`Cheap`. Every
op type of the table is an op of the dialect (the test checks it; ``Upsample``, deprecated since
opset 10, and ``Swish``, opset 24, are ``onnx.defs`` operators like the rest).

Not in the table: the in-place rules of :mod:`ramiel.dialects.onnx_base` (``INPLACE_OPS``, the
operands an op's in-place form may overwrite, and ``FRESH_RESULT_OPS``, the ops whose result never
aliases another value). They are per-op *data*, not categories (``INPLACE_OPS`` maps an op to
operand indices, which a parameterless trait does not carry), and they state what Ramiel's
lowering rules (:mod:`ramiel.lowering`) do, not what the operator is or costs: they change with a
lowering rule, and stay beside their readers, the in-place verifier
(:func:`~ramiel.dialects.onnx_base.inplace_violation`) and ``--inplace``.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.traits import OpTrait


@dataclass(frozen=True)
class OnnxCategory(OpTrait):
    """Base class of the categories of :data:`ONNX_OP_TRAITS` (no verifier: a category is
    information for the analyses, not an invariant)."""


class Elementwise(OnnxCategory):
    """Computed element by element (after broadcasting): splat operands give a splat result."""


class Broadcasting(OnnxCategory):
    """ONNX multidirectional (numpy) broadcasting over all inputs: the result's shape is the
    broadcast of the operands' shapes (the verifier checks it)."""


class DenseCompute(OnnxCategory):
    """Convolutions and matrix products: the cost model counts their multiply-adds."""


class Pooling(OnnxCategory):
    """A window slid over the input (max, average, Lp pooling; LRN's window over channels): the
    cost model counts window elements."""


class GlobalPooling(OnnxCategory):
    """One reduction over all spatial dims per channel."""


class DataMovement(OnnxCategory):
    """Moves, reshapes, casts or makes data without arithmetic: the cost model counts bytes."""


class LayoutAnchor(OnnxCategory):
    """Faster on channels-last 4-D activations: starts a channels-last region (see
    :mod:`ramiel.layout`)."""


class LayoutTransparent(OnnxCategory):
    """Same speed in either memory format; the result has the format of the (4-D, full-size)
    inputs (see :mod:`ramiel.layout`)."""


class Cheap(OnnxCategory):
    """Cheap enough to duplicate into a consuming cluster (``--clone``, up to 50 µs estimated)."""


_MEMBERS: dict[type[OnnxCategory], frozenset[str]] = {
    Elementwise: frozenset(
        {
            "Abs", "Acos", "Acosh", "Add", "And", "Asin", "Asinh", "Atan", "Atanh", "BitShift",
            "BitwiseAnd", "BitwiseNot", "BitwiseOr", "BitwiseXor", "Cast", "CastLike", "Ceil",
            "Celu", "Clip", "Cos", "Cosh", "Div", "Elu", "Equal", "Erf", "Exp", "Floor", "Gelu",
            "Greater", "GreaterOrEqual", "HardSigmoid", "HardSwish", "IsInf", "IsNaN",
            "LeakyRelu", "Less", "LessOrEqual", "Log", "Max", "Mean", "Min", "Mish", "Mod", "Mul",
            "Neg", "Not", "Or", "PRelu", "Pow", "Reciprocal", "Relu", "Round", "Selu", "Shrink",
            "Sigmoid", "Sign", "Sin", "Sinh", "Softplus", "Softsign", "Sqrt", "Sub", "Sum", "Tan",
            "Tanh", "ThresholdedRelu", "Where", "Xor",
        }
    ),
    Broadcasting: frozenset(
        {
            "Add", "Sub", "Mul", "Div", "Pow", "Mod", "Equal", "Less", "Greater", "LessOrEqual",
            "GreaterOrEqual", "And", "Or", "Xor", "BitShift", "Where", "Max", "Min", "Sum",
            "Mean", "PRelu", "BitwiseAnd", "BitwiseOr", "BitwiseXor",
        }
    ),
    DenseCompute: frozenset(
        {
            "Conv", "ConvTranspose", "Gemm", "MatMul", "Einsum", "MatMulInteger", "ConvInteger",
            "Attention",
        }
    ),
    Pooling: frozenset({"MaxPool", "AveragePool", "LpPool", "LRN"}),
    GlobalPooling: frozenset({"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"}),
    DataMovement: frozenset(
        {
            "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Transpose", "Concat",
            "Split", "Slice", "Gather", "Expand", "Tile", "Pad", "Shape", "Size", "Cast",
            "Dropout", "ConstantOfShape", "Constant", "DepthToSpace", "SpaceToDepth",
        }
    ),
    LayoutAnchor: frozenset({"Conv", "MaxPool", "AveragePool", "Resize", "Upsample"}),
    LayoutTransparent: frozenset(
        {
            # unary element-wise
            "Abs", "Neg", "Exp", "Log", "Sqrt", "Reciprocal", "Floor", "Ceil", "Round", "Relu",
            "Sigmoid", "Tanh", "Erf", "Sign", "Softsign", "Softplus", "LeakyRelu", "Elu", "Celu",
            "Selu", "HardSigmoid", "HardSwish", "Mish", "Gelu", "Swish", "ThresholdedRelu",
            "Clip", "PRelu", "Identity", "Dropout", "Cast", "Not", "IsNaN", "IsInf",
            # binary and variadic element-wise
            "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "Where", "Equal",
            "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor",
            # channel-wise, and data movement that keeps the strides' order (Pad: constant mode)
            "BatchNormalization", "LRN", "Concat", "Pad",
        }
    ),
    Cheap: frozenset(
        {
            "Reshape", "Unsqueeze", "Squeeze", "Flatten", "Shape", "Size", "Cast", "Identity",
            "Gather", "Slice", "Concat", "Expand", "ConstantOfShape", "Range", "Transpose",
        }
    ),
}  # fmt: skip

CATEGORIES: tuple[type[OnnxCategory], ...] = tuple(_MEMBERS)
"""Every category, in the order the generated op classes list them."""

ONNX_OP_TRAITS: dict[str, frozenset[type[OnnxCategory]]] = {
    op_type: frozenset(t for t, ops in _MEMBERS.items() if op_type in ops)
    for op_type in sorted(set().union(*_MEMBERS.values()))
}
"""ONNX op type -> its categories (an op type of no category is not a key)."""


def has_trait(op_type: str, trait: type[OpTrait]) -> bool:
    """Does the ONNX op type ``op_type`` (``"Relu"``) have the category ``trait``? The same answer
    as ``op.has_trait(trait)`` on an ``onnx.<op_type>`` op, for callers with the string only."""
    return trait in ONNX_OP_TRAITS.get(op_type, ())


def ops_with(trait: type[OnnxCategory]) -> frozenset[str]:
    """The op types of the category ``trait``."""
    return _MEMBERS[trait]


def traits_of(op_type: str) -> tuple[type[OnnxCategory], ...]:
    """The categories of ``op_type`` in the order of :data:`CATEGORIES` (for the generator)."""
    found = ONNX_OP_TRAITS.get(op_type, frozenset())
    return tuple(t for t in CATEGORIES if t in found)
