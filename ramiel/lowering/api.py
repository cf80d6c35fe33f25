"""The lowering interface: ONNX nodes → PyTorch/Python calls.

A *lowering rule* turns one ONNX node into a few calls on an :class:`Emitter`, each call becoming one
statement of the generated Python (``tmp = callee(*args, **kwargs)`` or ``tmp = obj.name(...)``).
Rules see only static facts — the :class:`NodeView` (shapes, dtypes, attributes, constant inputs) —
and opaque :data:`Value` handles for the runtime tensors, so the code they emit is straight-line and
decided at compile time: symmetric pads become ``padding=`` of ``F.conv2d``, asymmetric ones an
``F.pad`` first, and so on.

Callees are dotted names resolvable in the generated module's namespace:

- ``torch.*`` and ``F.*`` (``torch.nn.functional``),
- ``ops.*`` — :mod:`ramiel.runtime.ops`, helpers for ONNX semantics with no one-line torch form,
- ``operator.*`` — printed infix (``operator.add`` as ``a + b``, ``operator.getitem`` as ``x[...]``),
- ``math.*``.

Arguments are Values, Python literals (None, bool, int, float, str, tuples/lists of literals or
Values, ``slice`` objects with int/None fields), :class:`Dtype` or :class:`MemoryFormat` (printed
``torch.<name>``).

A rule may return one of its input Values unchanged (Identity, Dropout in inference, a one-input
Sum): the output is then an alias of the input, which is safe because generated code writes a
tensor in place only where ``NodeView.inplace`` says so, and the verifier allows that only on a
fresh tensor (never an alias) that no one else reads. Some outputs are views (``Expand`` → ``x.expand``, ``Transpose`` →
``x.permute``, slices), as in hand-written PyTorch.

Output shapes: onnx shape inference is wrong for a few ops (pooling with ``ceil_mode`` before
opset 22, ConvTranspose with an ``output_shape`` entry of 1); :func:`refine_output_shapes` gives
the shapes the emitted code produces, and buffers must be sized from those.

Element types: those of :data:`SUPPORTED_DTYPES`, plus uint16/uint32 (computed in int64 where torch
lacks kernels), uint64 for the data-movement ops of :data:`UNSIGNED_NATIVE_OPS`, the ops of
:data:`UINT64_VIA_INT64` (computed exactly on the int64 reinterpretation) and of
:data:`UINT64_IN_RULE`, and the float8
types (:data:`FLOAT8_DTYPES`, storage-only in torch) for the casts and data-movement ops of
:data:`FLOAT8_OPS`.

Semantics follow the ONNX operator specification, https://onnx.ai/onnx/operators/ (opsets 7–23;
per-op notes in the rule modules).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import onnx
import onnx.defs
from onnx import numpy_helper

from ramiel.errors import UnsupportedOpError

#: An opaque handle for a runtime value, as returned by :meth:`Emitter.call`. Rules pass Values on
#: as arguments and never look inside them.
Value = Any


@dataclass(frozen=True)
class TensorInfo:
    """Static facts about one ONNX tensor.

    ``shape`` is the static shape (None if unknown, a negative entry never appears — unknown
    dimensions make the whole shape None); ``dtype`` the numpy-style element type name
    (``"float32"``, ``"int64"``, ``"bool"``, ...); ``const`` the compile-time value when the tensor is
    an initializer or the output of a Constant node.
    """

    name: str
    shape: tuple[int, ...] | None
    dtype: str
    const: np.ndarray | None = field(default=None, compare=False, repr=False)

    @property
    def rank(self) -> int | None:
        """Number of dimensions, or None if the shape is unknown."""
        return None if self.shape is None else len(self.shape)


@dataclass
class NodeView:
    """One ONNX node as a lowering rule sees it.

    ``opset`` is the model's opset for the node's domain. ``inputs``/``outputs`` hold a
    :class:`TensorInfo` per position, None for an absent optional one. ``attrs`` maps attribute names
    to Python values (int, float, str, list[int], list[float], np.ndarray for TENSOR) with the
    schema's defaults filled in; :func:`lower_node` adds the missing schema attributes (None where the
    schema has no default), so rules may index ``attrs[name]`` for any attribute of the op's schema.
    ``inplace``: the input the node may overwrite (the ``ramiel.inplace`` attribute that
    ``--inplace`` sets and the verifier checks: a fresh tensor no one else reads), or None;
    rules with an in-place form (``torch.relu_``, ``x.add_(y)``) emit it then.
    """

    op_type: str
    name: str
    domain: str
    opset: int
    inputs: list[TensorInfo | None]
    outputs: list[TensorInfo | None]
    attrs: dict[str, Any] = field(default_factory=dict)
    #: the node is inside the body of a Loop or Scan, where a value's shape may change from one
    #: iteration to the next (a Slice at the iteration number): rules may then compute
    #: shape-like inputs at run time instead of asking for compile-time constants
    in_loop: bool = False
    inplace: int | None = None
    #: the memory format the op computes its 4-D activations in (``ramiel.layout``, from
    #: ``--assign-layout``): ``"contiguous_format"`` or ``"channels_last"``; the lowering has
    #: converted the operands already, a rule may only pick a form that is faster in it
    layout: str = "contiguous_format"
    #: a Conv that ``--prepack-conv`` marked (``ramiel.prepack``): the activation fused into it
    #: (``"none"``, ``"relu"``), printed as ``ops.conv2d_prepacked``; a MatMul that
    #: ``--prepack-matmul`` marked: ``"none"``, printed as ``ops.matmul_prepacked``; None: plain
    prepack: str | None = None

    def input(self, i: int) -> TensorInfo | None:
        """Input ``i``, or None if it is absent (also beyond the end of ``inputs``)."""
        return self.inputs[i] if i < len(self.inputs) else None

    def output(self, i: int) -> TensorInfo | None:
        """Output ``i``, or None if it is absent (also beyond the end of ``outputs``)."""
        return self.outputs[i] if i < len(self.outputs) else None


@dataclass(frozen=True)
class Dtype:
    """A torch dtype literal, printed as ``torch.<name>``; ``name`` is a numpy-style dtype name."""

    name: str


@dataclass(frozen=True)
class MemoryFormat:
    """A torch memory format literal, printed as ``torch.<name>`` (``channels_last``,
    ``contiguous_format``)."""

    name: str


class Emitter(Protocol):
    """Where rules emit code. The code generator implements it; :class:`~.eval_emitter.EvalEmitter`
    implements it by running each call eagerly."""

    def call(self, callee: str, *args: Any, **kwargs: Any) -> Value:
        """Emit ``tmp = callee(*args, **kwargs)`` and return ``tmp``."""
        ...

    def method(self, obj: Value, name: str, *args: Any, **kwargs: Any) -> Value:
        """Emit ``tmp = obj.name(*args, **kwargs)`` and return ``tmp``."""
        ...

    def constant(self, value: np.ndarray, source: Value, tag: str) -> Value:
        """A compile-time constant computed from the constant input ``source`` (a weight in
        another layout: LSTM weights in PyTorch's gate order): a weight of its own, computed
        once at compile time instead of at every inference, keyed ``<source's key>__<tag>``
        (so one source and tag always give the same key)."""
        ...


Rule = Callable[[NodeView, list[Value | None], Emitter], list[Value | None]]
Check = Callable[[NodeView], str | None]

#: Lowering rules, keyed by ONNX op_type of the default domain ("" / "ai.onnx").
RULES: dict[str, Rule] = {}
#: Optional per-op support checks: return a reason string if the node cannot be lowered.
CHECKS: dict[str, Check] = {}
#: Per-op output shape computations that override onnx shape inference where it is known to be
#: wrong (see :func:`refine_output_shapes`).
SHAPE_RULES: dict[str, Callable[[NodeView], list[tuple[int, ...] | None]]] = {}

ONNX_DOMAINS = ("", "ai.onnx")

#: ONNX element types the rules can handle (numpy-style names, all with a torch counterpart that
#: supports arithmetic).
SUPPORTED_DTYPES = frozenset(
    {
        "float16",
        "bfloat16",
        "float32",
        "float64",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "bool",
    }
)


#: Unsigned types torch stores but has few CPU kernels for (torch 2.13: no add, sub, div, max,
#: comparisons, shifts, ...). Ops in :data:`UNSIGNED_NATIVE_OPS` handle them natively; other ops
#: compute uint16/uint32 in int64 (exact: both fit) and cast back, which wraps modulo 2^16/2^32
#: as ONNX's unsigned arithmetic does; uint64 is supported by the native ops only.
WIDE_UNSIGNED = frozenset({"uint16", "uint32", "uint64"})
UNSIGNED_NATIVE_OPS = frozenset(
    {
        "Identity",
        "Reshape",
        "Transpose",
        "Squeeze",
        "Unsqueeze",
        "Flatten",
        "Concat",
        "Split",
        "Slice",
        "Gather",
        "Expand",
        "Tile",
        "Shape",
        "Size",
        "Cast",
        "CastLike",
        "Constant",
        "ConstantOfShape",
        "Mul",
        "Equal",
        "BitwiseAnd",
        "BitwiseOr",
        "BitwiseXor",
    }
)


#: uint64 ops torch has no kernel for (torch 2.13: add, sub, maximum, minimum, comparisons),
#: computed exactly on the int64 reinterpretation of the same bits (``x.view(torch.int64)``, and a
#: uint64 result viewed back): add and subtract modulo 2**64 are the same bit operations on both
#: (two's complement; torch's int64 arithmetic wraps), and max, min and the comparisons order the
#: bits with the sign bit flipped (``x ^ -2**63`` maps the uint64 order onto the int64 order).
#: op -> whether the sign bit is flipped. The rules of :data:`UINT64_IN_RULE` handle uint64
#: themselves.
UINT64_VIA_INT64 = {
    "Add": False,
    "Sub": False,
    "Sum": False,
    "Max": True,
    "Min": True,
    "Less": True,
    "LessOrEqual": True,
    "Greater": True,
    "GreaterOrEqual": True,
}
#: Ops whose rule handles uint64 itself: Div (``ops.div_uint64``, exact on int64 arithmetic), and
#: Pow with a uint64 exponent (torch.pow takes it as it is; float bases only).
UINT64_IN_RULE = frozenset({"Div", "Pow"})

#: The ONNX float8 element types (numpy-style names, those of ml_dtypes and torch). PyTorch stores
#: them and converts to and from them (round to nearest even, as ONNX's Cast), but has no
#: arithmetic on them; Ramiel supports them in the ops of :data:`FLOAT8_OPS`.
FLOAT8_DTYPES = frozenset(
    {"float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu"}
)
#: Ops that accept float8 tensors: the casts, and ops that only move or view data, whose torch
#: calls (view, reshape, permute, cat, split, slicing, expand, repeat) have float8 kernels.
FLOAT8_OPS = frozenset(
    {
        "Cast",
        "CastLike",
        "Constant",
        "Identity",
        "Reshape",
        "Transpose",
        "Squeeze",
        "Unsqueeze",
        "Flatten",
        "Concat",
        "Split",
        "Slice",
        "Expand",
        "Tile",
        "Shape",
        "Size",
    }
)


def rule(*op_types: str, check: Check | None = None) -> Callable[[Rule], Rule]:
    """Register the decorated function as the lowering rule of ``op_types``.

    ``check``, if given, is called by :func:`check_supported` before any code is generated and
    returns a reason string for a node it cannot lower (an unsupported attribute value, a
    non-constant input that must be constant, ...).
    """

    def deco(fn: Rule) -> Rule:
        for op in op_types:
            if op in RULES:
                raise ValueError(f"duplicate lowering rule for {op}")
            RULES[op] = fn
            if check is not None:
                CHECKS[op] = check
        return fn

    return deco


# -- attributes ---------------------------------------------------------------------------------


@functools.cache
def schema_defaults(op_type: str, opset: int, domain: str = "") -> tuple[tuple[str, Any], ...]:
    """``(name, default)`` for every attribute of the op's schema at ``opset`` (default None if the
    schema has none). Empty if onnx knows no such schema."""
    try:
        schema = onnx.defs.get_schema(op_type, opset, domain)
    except Exception:  # noqa: BLE001 - onnx raises SchemaError (not exported uniformly)
        return ()
    out = []
    for name, attr in schema.attributes.items():
        default = None
        if attr.default_value is not None and attr.default_value.type != 0:
            default = attribute_value(attr.default_value)
        out.append((name, default))
    return tuple(out)


def attribute_value(attr: Any) -> Any:
    """Convert an ``onnx.AttributeProto`` to a Python value (strings decoded, TENSOR as ndarray)."""

    t = attr.type
    A = onnx.AttributeProto
    if t == A.FLOAT:
        return short_float(attr.f)
    if t == A.INT:
        return int(attr.i)
    if t == A.STRING:
        return attr.s.decode("utf-8", errors="replace")
    if t == A.TENSOR:
        return numpy_helper.to_array(attr.t)
    if t == A.FLOATS:
        return [short_float(v) for v in attr.floats]
    if t == A.INTS:
        return [int(v) for v in attr.ints]
    if t == A.STRINGS:
        return [s.decode("utf-8", errors="replace") for s in attr.strings]
    if t == A.TENSORS:
        return [numpy_helper.to_array(v) for v in attr.tensors]
    return onnx.helper.get_attribute_value(attr)


def _short(v: Any) -> Any:
    if isinstance(v, float):
        return short_float(v)
    if isinstance(v, list) and v and all(isinstance(x, float) for x in v):
        return [short_float(x) for x in v]
    return v


def with_defaults(node: NodeView) -> NodeView:
    """A copy of ``node`` whose ``attrs`` include every schema attribute (None if no default),
    float attributes written with the fewest digits that give the same float32 (0.01, not
    0.009999999776482582), whoever built the NodeView."""
    defaults = schema_defaults(node.op_type, node.opset, node.domain or "")
    missing = any(k not in node.attrs for k, _ in defaults)
    long_floats = any(_short(v) is not v for v in node.attrs.values())
    if not missing and not long_floats:
        return node
    attrs = {k: v for k, v in defaults}
    attrs.update({k: _short(v) for k, v in node.attrs.items()})
    return dataclasses.replace(node, attrs=attrs)


# -- entry points -------------------------------------------------------------------------------


def _unsupported(node: NodeView, what: str) -> UnsupportedOpError:
    return UnsupportedOpError([(node.op_type, node.name, node.opset, what)])


def check_supported(node: NodeView) -> str | None:
    """Why ``node`` cannot be lowered (op, attribute value, dtype or non-constant input), or None.

    The importer calls this for every node before generating code, so that all unsupported ops of
    a model are reported at once.
    """
    if (node.domain or "") not in ONNX_DOMAINS:
        return f"domain '{node.domain}' is not supported (only the default ONNX domain)"
    if node.op_type not in RULES:
        return "no lowering rule for this operator"
    op = node.op_type
    native = op in UNSIGNED_NATIVE_OPS or op in UINT64_VIA_INT64
    native = native or (op in UINT64_IN_RULE and (op != "Pow" or _only_exponent_uint64(node)))
    allowed = (
        SUPPORTED_DTYPES
        | {"undefined", "uint16", "uint32"}
        | ({"uint64"} if native else set())
        | (FLOAT8_DTYPES if node.op_type in FLOAT8_OPS else set())
    )
    for kind, infos in (("input", node.inputs), ("output", node.outputs)):
        for i, info in enumerate(infos):
            if info is not None and info.dtype not in allowed:
                extra = ""
                if info.dtype == "uint64" and node.op_type == "Pow":
                    extra = " (a uint64 exponent is supported with a float base only)"
                elif info.dtype == "uint64":
                    extra = " (torch has no CPU kernels for this op on uint64)"
                elif info.dtype in FLOAT8_DTYPES:
                    extra = " (torch has no arithmetic on float8: only casts and data movement)"
                return (
                    f"{kind} {i} ('{info.name}') has element type {info.dtype}, "
                    f"not supported{extra}"
                )
    check = CHECKS.get(node.op_type)
    if check is not None:
        return check(with_defaults(node))
    return None


def _only_exponent_uint64(node: NodeView) -> bool:
    """Pow whose exponent (only) is uint64: torch.pow takes it when the base is a float."""
    x, y = node.input(0), node.input(1)
    return x is not None and y is not None and y.dtype == "uint64" and x.dtype in FLOAT_DTYPES


def refine_output_shapes(node: NodeView) -> NodeView:
    """``node`` with output shapes recomputed by the op's shape rule where onnx shape inference
    is known to be wrong: MaxPool/AveragePool/LpPool with ``ceil_mode`` before opset 22 count a
    window starting in the end padding; ConvTranspose drops ``output_shape`` entries equal to 1
    (onnx 1.23). Generated code must size buffers from these shapes.
    """
    fn = SHAPE_RULES.get(node.op_type)
    if fn is None or (node.domain or "") not in ONNX_DOMAINS:
        return node
    try:
        shapes = fn(with_defaults(node))
    except Exception:  # noqa: BLE001 - a node the rule cannot handle keeps inferred shapes
        return node
    outs = list(node.outputs)
    for i, s in enumerate(shapes):
        o = outs[i] if i < len(outs) else None
        if o is not None and s is not None:
            outs[i] = dataclasses.replace(o, shape=tuple(s))
    return dataclasses.replace(node, outputs=outs)


def lower_node(node: NodeView, args: list[Value | None], emitter: Emitter) -> list[Value | None]:
    """Emit the calls computing ``node``; returns one Value (or None) per ONNX output.

    ``args[i]`` is the Value of input ``i`` (None if absent). Raises
    :class:`~ramiel.errors.UnsupportedOpError` for an op, attribute value or dtype that has no rule.
    """
    reason = check_supported(node)
    if reason is not None:
        raise _unsupported(node, reason)
    node = with_defaults(node)
    # optional inputs beyond the node's list are absent: pad so rules may index args[i] freely
    args = list(args) + [None] * (max(len(node.inputs), 8) - len(args))
    if node.op_type not in UNSIGNED_NATIVE_OPS and _has_narrow_unsigned(node):
        outs = _lower_widened(node, args, emitter)
    elif node.op_type in UINT64_VIA_INT64 and _has_uint64(node):
        outs = _lower_uint64_as_int64(node, args, emitter)
    else:
        outs = RULES[node.op_type](node, args, emitter)
    if len(outs) < len(node.outputs):
        outs = list(outs) + [None] * (len(node.outputs) - len(outs))
    return [
        o if node.output(i) is not None else None for i, o in enumerate(outs[: len(node.outputs)])
    ]


def _has_narrow_unsigned(node: NodeView) -> bool:
    return any(
        i is not None and i.dtype in ("uint16", "uint32") for i in [*node.inputs, *node.outputs]
    )


def _lower_widened(node: NodeView, args: list[Value | None], emitter: Emitter) -> list:
    """Lower ``node`` with its uint16/uint32 tensors computed as int64, casting outputs back."""
    narrow = ("uint16", "uint32")
    wide = Dtype("int64")
    ins: list[TensorInfo | None] = []
    new_args = list(args)
    for i, info in enumerate(node.inputs):
        if info is not None and info.dtype in narrow:
            c = None if info.const is None else np.asarray(info.const).astype(np.int64)
            ins.append(dataclasses.replace(info, dtype="int64", const=c))
            if args[i] is not None:
                new_args[i] = emitter.method(args[i], "to", wide)
        else:
            ins.append(info)
    outs_info = [
        dataclasses.replace(o, dtype="int64") if o is not None and o.dtype in narrow else o
        for o in node.outputs
    ]
    wnode = dataclasses.replace(node, inputs=ins, outputs=outs_info)
    outs = list(RULES[node.op_type](wnode, new_args, emitter))
    for i, o in enumerate(node.outputs):
        if i < len(outs) and outs[i] is not None and o is not None and o.dtype in narrow:
            outs[i] = emitter.method(outs[i], "to", Dtype(o.dtype))
    return outs


def _has_uint64(node: NodeView) -> bool:
    return any(i is not None and i.dtype == "uint64" for i in [*node.inputs, *node.outputs])


_SIGN_BIT = -(2**63)


def _lower_uint64_as_int64(node: NodeView, args: list[Value | None], emitter: Emitter) -> list:
    """Lower ``node`` (see :data:`UINT64_VIA_INT64`) on int64 views of its uint64 tensors."""
    flip = UINT64_VIA_INT64[node.op_type]
    wide = Dtype("int64")
    ins: list[TensorInfo | None] = []
    new_args = list(args)
    for i, info in enumerate(node.inputs):
        if info is None or info.dtype != "uint64":
            ins.append(info)
            continue
        c = None
        if info.const is not None:
            c = np.asarray(info.const).astype(np.uint64).view(np.int64)
            c = c ^ np.int64(_SIGN_BIT) if flip else c
        ins.append(dataclasses.replace(info, dtype="int64", const=c))
        if args[i] is not None:
            new_args[i] = emitter.method(args[i], "view", wide)
            if flip:
                new_args[i] = emitter.call("torch.bitwise_xor", new_args[i], _SIGN_BIT)
    outs_info = [
        dataclasses.replace(o, dtype="int64") if o is not None and o.dtype == "uint64" else o
        for o in node.outputs
    ]
    wnode = dataclasses.replace(node, inputs=ins, outputs=outs_info)
    outs = list(RULES[node.op_type](wnode, new_args, emitter))
    for i, o in enumerate(node.outputs):
        if i < len(outs) and outs[i] is not None and o is not None and o.dtype == "uint64":
            y = outs[i]
            if flip:
                y = emitter.call("torch.bitwise_xor", y, _SIGN_BIT)
            outs[i] = emitter.method(y, "view", Dtype("uint64"))
    return outs


# -- small helpers for rules ---------------------------------------------------------------------

FLOAT_DTYPES = frozenset({"float16", "bfloat16", "float32", "float64"})
INT_DTYPES = frozenset({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"})


def is_float(dtype: str) -> bool:
    """Whether ``dtype`` (numpy-style name) is a floating-point type."""
    return dtype in FLOAT_DTYPES


def is_int(dtype: str) -> bool:
    """Whether ``dtype`` (numpy-style name) is an integer type (bool excluded)."""
    return dtype in INT_DTYPES


def short_float(v: float) -> float:
    """``v`` with as few digits as float32 needs (0.009999999776482582 → 0.01).

    ONNX float attributes are float32; the shortest decimal that rounds to the same float32 is
    what a person would write and gives bit-identical results on float32 tensors. Values that are
    not float32 numbers are returned unchanged.
    """
    f32 = np.float32(v)
    if float(f32) != v and not np.isnan(v):
        return float(v)
    return float(str(f32))


def numel(shape: tuple[int, ...]) -> int:
    """Number of elements of a static shape."""
    return math.prod(shape)
