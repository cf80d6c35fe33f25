"""The hand-written part of the ``onnx`` dialect (:mod:`ramiel.dialects.onnx`): element types,
attribute conversion, the operator schemas of ``onnx.defs``, the ops' base class :class:`OnnxOp`
with its schema-driven verifier, the in-place rules, ``onnx.NoValue``, ``onnx.Yield`` and the
region helpers of ``onnx.If``/``onnx.Loop``/``onnx.Scan``.

The op classes themselves (``onnx.Conv``, ...) are generated ahead of time from ``onnx.defs`` into
:mod:`ramiel.dialects.onnx_ops` by ``scripts/gen_onnx_dialect.py``; :mod:`ramiel.dialects.onnx`
gathers both and is the module to import.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
import onnx.defs
from onnx.defs import OpSchema
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    NoneType,
    Signedness,
    StringAttr,
    TensorType,
    UnrankedTensorType,
    f32,
)
from xdsl.ir import Attribute, BlockArgument, Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import (
    IsTerminator,
    Pure,
)
from xdsl.utils.exceptions import VerifyException

from ramiel.attrs import (
    INPLACE_ATTR,
    NODE_NAME_ATTR,
    OPSET_ATTR,
    get_attr,
    get_int,
    get_str,
    has,
    remove,
)
from ramiel.dialects.onnx_traits import Broadcasting, Elementwise
from ramiel.dtypes import (
    ONNX_OF_ELEMENT,
    SCHEMA_TYPE_STRINGS,
    SIGNLESS,
    element_type_of,
    i1,
    numpy_dtype_of,
)

LATEST_OPSET: int = onnx.defs.onnx_opset_version()
"""The newest default-domain opset the installed ``onnx`` package knows."""

MIN_OPSET = 7
"""The oldest default-domain opset Ramiel accepts (ONNX 1.2; older models predate broadcasting)."""

#: The control-flow operators and their GRAPH attributes, which are regions of the op (as in
#: onnx-mlir's ONNXIfOp/ONNXLoopOp/ONNXScanOp), in region order. See :func:`verify_regions`.
REGION_ATTRS: dict[str, tuple[str, ...]] = {
    "If": ("then_branch", "else_branch"),
    "Loop": ("body",),
    "Scan": ("body",),
}


def tensor_type(onnx_dtype: int, shape: Sequence[int] | None) -> TensorType | UnrankedTensorType:
    """A ranked ``tensor<...>`` type or unranked if ``shape`` is ``None``.

    A negative dimension (``-1``) is unknown: it becomes xDSL's ``DYNAMIC_INDEX``, printed ``?``.
    """
    return _tensor_type(onnx_dtype, None if shape is None else tuple(shape))


@functools.lru_cache(maxsize=4096)
def _tensor_type(onnx_dtype: int, shape: tuple[int, ...] | None) -> TensorType | UnrankedTensorType:
    el = element_type_of(onnx_dtype)
    if shape is None:
        return UnrankedTensorType(el)
    return TensorType(el, [d if d >= 0 else DYNAMIC_INDEX for d in shape])


def static_shape(t: Attribute) -> tuple[int, ...] | None:
    """The shape of a tensor type if it is ranked and fully static, else ``None``."""
    if isinstance(t, TensorType):
        shape = tuple(t.get_shape())
        if all(d >= 0 for d in shape):
            return shape
    return None


# ---------------------------------------------------------------------------------------------
# Attribute conversion: Python/ONNX values <-> properties
# ---------------------------------------------------------------------------------------------

_KIND = OpSchema.AttrType


def _int_attr(v: int) -> IntegerAttr:
    return _cached_int_attr(int(v))


@functools.lru_cache(maxsize=4096)
def _cached_int_attr(v: int) -> IntegerAttr:
    return IntegerAttr(v, IntegerType(64, Signedness.SIGNED))


def attr_kind_name(kind: OpSchema.AttrType) -> str:
    """The name of an ONNX attribute kind (``"INT"``, ``"GRAPH"``, ...)."""
    return kind.name  # type: ignore[attr-defined]  # onnx's stubs omit pybind11 enums' .name


def attr_from_python(kind: OpSchema.AttrType, value: Any) -> Attribute:
    """Build the property for an ONNX attribute of ``kind`` from a Python value.

    TENSOR attributes must already be ``DenseIntOrFPElementsAttr``/``DenseResourceAttr`` (the
    importer decides inline vs external storage). Raises ``ValueError`` for other kinds.
    """
    if kind == _KIND.INT:
        return _int_attr(value)
    if kind == _KIND.FLOAT:
        return FloatAttr(float(value), f32)
    if kind == _KIND.STRING:
        return StringAttr(value.decode() if isinstance(value, bytes) else str(value))
    if kind == _KIND.INTS:
        return ArrayAttr([_int_attr(v) for v in value])
    if kind == _KIND.FLOATS:
        return ArrayAttr([FloatAttr(float(v), f32) for v in value])
    if kind == _KIND.STRINGS:
        return ArrayAttr([StringAttr(v.decode() if isinstance(v, bytes) else v) for v in value])
    if kind == _KIND.TENSOR and isinstance(value, DenseIntOrFPElementsAttr | DenseResourceAttr):
        return value
    raise ValueError(f"attribute kind {attr_kind_name(kind)} is not representable")


def python_from_attr(attr: Attribute) -> Any:
    """The Python value of a property (int, float, str, list); tensors are returned unchanged."""
    if isinstance(attr, IntegerAttr):
        return attr.value.data
    if isinstance(attr, FloatAttr):
        return attr.value.data
    if isinstance(attr, StringAttr):
        return attr.data
    if isinstance(attr, ArrayAttr):
        return [python_from_attr(a) for a in attr.data]
    return attr


def _kind_matches(kind: OpSchema.AttrType, attr: Attribute) -> bool:
    if kind == _KIND.INT:
        return isinstance(attr, IntegerAttr)
    if kind == _KIND.FLOAT:
        return isinstance(attr, FloatAttr)
    if kind == _KIND.STRING:
        return isinstance(attr, StringAttr)
    if kind == _KIND.TENSOR:
        return isinstance(attr, DenseIntOrFPElementsAttr | DenseResourceAttr)
    if not isinstance(attr, ArrayAttr):
        return False
    item = {_KIND.INTS: IntegerAttr, _KIND.FLOATS: FloatAttr, _KIND.STRINGS: StringAttr}.get(kind)
    return item is not None and all(isinstance(a, item) for a in attr.data)


# ---------------------------------------------------------------------------------------------
# Schemas
# ---------------------------------------------------------------------------------------------

REPRESENTABLE_KINDS: frozenset[OpSchema.AttrType] = frozenset(
    {
        _KIND.INT,
        _KIND.FLOAT,
        _KIND.STRING,
        _KIND.INTS,
        _KIND.FLOATS,
        _KIND.STRINGS,
        _KIND.TENSOR,
    }
)
"""The ONNX attribute kinds an op property can hold (GRAPH only as the regions of
:data:`REGION_ATTRS`' ops; TYPE_PROTO, SPARSE_TENSOR and their lists not at all)."""
_REPRESENTABLE_NAMES = {attr_kind_name(k) for k in REPRESENTABLE_KINDS}


def representable(s: OpSchema) -> bool:
    """Can the operator schema ``s`` be an ``onnx`` dialect op? A default-domain, non-deprecated
    schema whose attributes are of :data:`REPRESENTABLE_KINDS` (GRAPH too for If, Loop and Scan)
    and whose every input and output may be a numeric tensor (no sequence, map, optional or
    string-only operators). ``scripts/gen_onnx_dialect.py`` makes one op class per operator with
    a representable schema in some opset."""
    if s.domain != "" or s.deprecated:
        return False
    kinds = REPRESENTABLE_KINDS | ({_KIND.GRAPH} if s.name in REGION_ATTRS else set())
    if any(a.type not in kinds for a in s.attributes.values()):
        # Graph-valued attributes of other ops, type-valued or sparse attributes: not supported.
        return False
    params = {c.type_param_str: c.allowed_type_strs for c in s.type_constraints}
    for p in list(s.inputs) + list(s.outputs):
        allowed = params.get(p.type_str, [p.type_str])
        if not any(t.startswith("tensor(") and "string" not in t for t in allowed):
            return False  # sequence, map, optional or string-only operators
    return True


@dataclass(frozen=True)
class SchemaInfo:
    """What the verifier needs of one ``OpSchema`` (cached per op type and opset)."""

    op_type: str
    since_version: int
    inputs: tuple[tuple[str, OpSchema.FormalParameterOption, str], ...]
    outputs: tuple[tuple[str, OpSchema.FormalParameterOption, str], ...]
    min_input: int
    max_input: int
    min_output: int
    max_output: int
    attributes: dict[str, tuple[OpSchema.AttrType, bool]]  # name -> (kind, required)
    constraints: dict[str, frozenset[str]]  # type param -> allowed type strings
    schema: OpSchema
    #: formal inputs/outputs whose variadic values may differ in type (If's outputs, the carried
    #: values of Loop and Scan): their type parameter is not bound across them
    heterogeneous: frozenset[str] = frozenset()


@functools.cache
def schema_info(op_type: str, opset: int) -> SchemaInfo | None:
    """The schema of ``op_type`` in force at default-domain ``opset``, or ``None`` if undefined."""
    try:
        s = onnx.defs.get_schema(op_type, opset, "")
    except onnx.defs.SchemaError:
        return None
    if s.deprecated:
        return None
    return SchemaInfo(
        op_type=op_type,
        since_version=s.since_version,
        inputs=tuple((i.name, i.option, i.type_str) for i in s.inputs),
        outputs=tuple((o.name, o.option, o.type_str) for o in s.outputs),
        min_input=s.min_input,
        max_input=s.max_input,
        min_output=s.min_output,
        max_output=s.max_output,
        attributes={k: (a.type, a.required) for k, a in s.attributes.items()},
        constraints={c.type_param_str: frozenset(c.allowed_type_strs) for c in s.type_constraints},
        schema=s,
        heterogeneous=frozenset(
            p.name
            for p in [*s.inputs, *s.outputs]
            if p.option == OpSchema.FormalParameterOption.Variadic and not p.is_homogeneous
        ),
    )


def opset_of(op: Operation) -> int:
    """The opset whose schema ``op`` follows: its own ``onnx.opset`` attribute if it has one (an op
    that a fusion pass made from a later opset than the model's, such as ``onnx.Gelu`` of opset
    20 in an opset-14 model), else the ``onnx.opset`` of the enclosing module (default
    :data:`LATEST_OPSET`)."""
    own = get_int(op, OPSET_ATTR)
    if own is not None:
        return own
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, ModuleOp):
            opset = get_int(parent, OPSET_ATTR)
            if opset is not None:
                return opset
        parent = parent.parent_op()
    return LATEST_OPSET


# ---------------------------------------------------------------------------------------------
# Verification
# ---------------------------------------------------------------------------------------------


def _type_str(t: Attribute) -> str | None:
    if isinstance(t, TensorType | UnrankedTensorType):
        dt = ONNX_OF_ELEMENT.get(t.element_type)
        return None if dt is None else f"tensor({SCHEMA_TYPE_STRINGS[dt]})"
    return None


def broadcast_shapes(shapes: Sequence[Sequence[int]]) -> tuple[int, ...] | None:
    """Numpy-style multidirectional broadcast of static shapes (ONNX "Broadcasting" doc).

    Returns ``None`` if the shapes are incompatible.
    """
    rank = max((len(s) for s in shapes), default=0)
    out: list[int] = []
    for i in range(rank):
        dims = {s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0}
        dims.discard(1)
        if len(dims) > 1:
            return None
        out.append(dims.pop() if dims else 1)
    return tuple(out)


class OnnxOp(IRDLOperation):
    """Base class of the ``onnx.<OpType>`` ops of :mod:`ramiel.dialects.onnx_ops`: the ONNX
    operator type, its inputs, outputs and attributes by schema name, and the verifier that
    checks the op against the schema of its opset."""

    @property
    def op_type(self) -> str:
        """The ONNX operator type (``Conv`` for ``onnx.Conv``)."""
        return self.name[5:]

    def _formal(self, kind: str, name: str) -> tuple[int, bool]:
        """Index of the schema's formal ``kind`` (``input``/``output``) ``name`` at the op's opset
        and whether it is variadic; ``KeyError`` if that opset's schema has no such parameter."""
        opset = opset_of(self)
        info = schema_info(self.op_type, opset)
        formals = () if info is None else info.inputs if kind == "input" else info.outputs
        for i, (n, option, _) in enumerate(formals):
            if n == name:
                return i, option == OpSchema.FormalParameterOption.Variadic
        raise KeyError(f"onnx.{self.op_type} has no {kind} '{name}' at opset {opset}")

    def input(self, name: str) -> SSAValue | None:
        """The operand bound to the schema input ``name`` (``None`` if absent or ``none``)."""
        i, variadic = self._formal("input", name)
        if variadic:
            raise ValueError(f"input {name} is variadic: use op.operands[{i}:]")
        if i < len(self.operands) and not isinstance(self.operands[i].type, NoneType):
            return self.operands[i]
        return None

    def required_input(self, name: str) -> SSAValue:
        """The operand bound to the schema input ``name``; ``ValueError`` if it is absent."""
        v = self.input(name)
        if v is None:
            raise ValueError(f"onnx.{self.op_type} has no operand for its input '{name}'")
        return v

    def variadic_input(self, name: str) -> tuple[SSAValue, ...]:
        """The operands bound to the variadic schema input ``name`` (the last formal input)."""
        i, _ = self._formal("input", name)
        return tuple(self.operands[i:])

    def output(self, name: str) -> SSAValue | None:
        """The result bound to the schema output ``name`` (``None`` if the node omits it)."""
        i, variadic = self._formal("output", name)
        if variadic:
            raise ValueError(f"output {name} is variadic: use op.results[{i}:]")
        return self.results[i] if i < len(self.results) else None

    def variadic_output(self, name: str) -> tuple[SSAValue, ...]:
        """The results bound to the variadic schema output ``name`` (the last formal output)."""
        i, _ = self._formal("output", name)
        return tuple(self.results[i:])

    def attr(self, name: str, default: Any = None) -> Any:
        """The Python value of ONNX attribute ``name`` (see :func:`python_from_attr`)."""
        a = self.properties.get(name)
        return default if a is None else python_from_attr(a)

    @property
    def node_name(self) -> str:
        return get_str(self, NODE_NAME_ATTR) or ""

    def verify_(self) -> None:
        where = f"onnx.{self.op_type}" + (f" (node '{self.node_name}')" if self.node_name else "")
        own = get_attr(self, OPSET_ATTR)
        if own is not None and not (
            isinstance(own, IntegerAttr) and MIN_OPSET <= own.value.data <= LATEST_OPSET
        ):
            raise VerifyException(
                f"{where}: attribute {OPSET_ATTR} must be an integer opset from {MIN_OPSET} to "
                f"{LATEST_OPSET}, got {own}"
            )
        opset = opset_of(self)
        info = schema_info(self.op_type, opset)
        why = inplace_violation(self)
        if why is not None:
            raise VerifyException(f"{where}: {INPLACE_ATTR}: {why}")
        if info is None:
            raise VerifyException(f"{where} is not defined at opset {opset}")
        self._verify_arity(info, where, opset)
        self._verify_attributes(info, where)
        self._verify_types(info, where)
        self._verify_shapes(where)
        _verify_ranges(self, where)
        if self.op_type in REGION_ATTRS:
            verify_regions(self, where, opset)

    def _verify_arity(self, info: SchemaInfo, where: str, opset: int) -> None:
        n_in, n_out = len(self.operands), len(self.results)
        if not info.min_input <= n_in <= info.max_input:
            raise VerifyException(
                f"{where} expects {_range(info.min_input, info.max_input)} operands at opset "
                f"{opset} (since version {info.since_version}), got {n_in}"
            )
        if not info.min_output <= n_out <= info.max_output:
            raise VerifyException(
                f"{where} expects {_range(info.min_output, info.max_output)} results at opset "
                f"{opset}, got {n_out}"
            )
        for i, operand in enumerate(self.operands):
            name, option, _ = info.inputs[min(i, len(info.inputs) - 1)]
            if (
                isinstance(operand.type, NoneType)
                and option != OpSchema.FormalParameterOption.Optional
            ):
                raise VerifyException(f"{where}: required input '{name}' (operand #{i}) is none")

    def _verify_attributes(self, info: SchemaInfo, where: str) -> None:
        for name, value in self.properties.items():
            spec = info.attributes.get(name)
            if spec is None:
                raise VerifyException(f"{where}: unknown attribute '{name}'")
            if not _kind_matches(spec[0], value):
                raise VerifyException(
                    f"{where}: attribute '{name}' must be {attr_kind_name(spec[0])}, got {value}"
                )
        for name, (kind, required) in info.attributes.items():
            if kind == _KIND.GRAPH:
                continue  # a region of the op (see REGION_ATTRS), checked by _verify_regions
            if required and name not in self.properties:
                raise VerifyException(f"{where}: missing required attribute '{name}'")

    def _verify_types(self, info: SchemaInfo, where: str) -> None:
        bound: dict[str, str] = {}

        def check(kind: str, idx: int, formal: tuple[str, Any, str], t: Attribute) -> None:
            if isinstance(t, NoneType):
                return
            ts = _type_str(t)
            if ts is None:
                raise VerifyException(f"{where}: {kind} #{idx} has unsupported type {t}")
            param = formal[2]
            allowed = info.constraints.get(param)
            if allowed is None:  # a fixed type such as tensor(int64)
                allowed = frozenset([param])
            if ts not in allowed:
                raise VerifyException(
                    f"{where}: {kind} '{formal[0]}' has type {ts}, allowed: {sorted(allowed)}"
                )
            if param in info.constraints and formal[0] not in info.heterogeneous:
                prev = bound.setdefault(param, ts)
                if prev != ts:
                    raise VerifyException(
                        f"{where}: {kind} '{formal[0]}' is {ts} but type parameter {param} is "
                        f"already bound to {prev}"
                    )

        for i, v in enumerate(self.operands):
            check("operand", i, info.inputs[min(i, len(info.inputs) - 1)], v.type)
            _verify_dims(where, f"operand #{i}", v.type)
        for i, r in enumerate(self.results):
            check("result", i, info.outputs[min(i, len(info.outputs) - 1)], r.type)
            _verify_dims(where, f"result #{i}", r.type)

    def _verify_shapes(self, where: str) -> None:
        shapes = [static_shape(v.type) for v in self.operands if not isinstance(v.type, NoneType)]
        out = static_shape(self.results[0].type) if self.results else None
        if self.has_trait(Broadcasting) and all(s is not None for s in shapes):
            b = broadcast_shapes(shapes)  # type: ignore[arg-type]
            if b is None:
                raise VerifyException(f"{where}: operand shapes {shapes} do not broadcast")
            if out is not None and out != b:
                raise VerifyException(f"{where}: result shape {out} != broadcast shape {b}")
        elif (
            self.has_trait(Elementwise)
            and not self.has_trait(Broadcasting)
            and shapes
            and shapes[0] is not None
        ):
            # unary element-wise (Relu, Cast, Clip's data, ...): the result has X's shape (not
            # a broadcasting op with an operand of unknown shape, which the first branch skips:
            # Add(x[2,6], m[1,1,1,?]) is [1,1,2,6], and had been refused as invalid; helper-27)
            if out is not None and out != shapes[0]:
                raise VerifyException(
                    f"{where}: result shape {out} != operand shape {shapes[0]} (element-wise)"
                )
        elif self.op_type in ("Conv", "ConvTranspose") and len(shapes) >= 2:
            x, w = shapes[0], shapes[1]
            if x is not None and w is not None:
                if len(x) != len(w) or len(x) < 3:
                    raise VerifyException(f"{where}: X rank {len(x)} and W rank {len(w)} differ")
                group = self.attr("group", 1)
                cin = w[1] * group if self.op_type == "Conv" else w[0]
                if x[1] != cin:
                    raise VerifyException(
                        f"{where}: X has {x[1]} channels but W expects {cin} (group={group})"
                    )
        elif self.op_type == "MatMul" and len(shapes) == 2:
            a, b = shapes
            if a is not None and b is not None and len(a) >= 1 and len(b) >= 1:
                ka = a[-1]
                kb = b[0] if len(b) == 1 else b[-2]
                if ka != kb:
                    raise VerifyException(f"{where}: inner dimensions {ka} and {kb} differ")
        elif self.op_type == "Reshape" and shapes and shapes[0] is not None and out is not None:
            n_in, n_out = math.prod(shapes[0]), math.prod(out)
            if n_in != n_out:
                raise VerifyException(
                    f"{where}: cannot reshape {n_in} elements {list(shapes[0])} into the shape "
                    f"{list(out)} ({n_out} elements)"
                )
        elif self.op_type in ("LSTM", "GRU", "RNN"):
            _verify_recurrent(self, where)
        elif self.op_type == "Concat" and shapes and all(s is not None for s in shapes):
            axis = self.attr("axis", 0)
            rank = len(shapes[0])  # type: ignore[arg-type]
            ax = axis + rank if axis < 0 else axis
            for s in shapes:
                assert s is not None
                if len(s) != rank or any(s[d] != shapes[0][d] for d in range(rank) if d != ax):  # type: ignore[index]
                    raise VerifyException(
                        f"{where}: operand shapes {shapes} differ off axis {axis}"
                    )


_AXIS_OPS = frozenset(
    [
        "Concat", "Gather", "GatherElements", "Split", "ArgMax", "ArgMin", "CumSum", "Compress",
        "LayerNormalization", "TopK", "ScatterElements", "LpNormalization",
    ]
)  # fmt: skip
"""Ops whose ``axis`` names a dimension of their first input: in [-r, r - 1] (Softmax,
LogSoftmax and Hardmax too from opset 13, Flatten in [-r, r]). (A LayerNormalization with
``axis = 7`` on a rank-3 input had compiled into a normalisation over every dimension, where
onnxruntime refuses the model: a fresh-user check.)"""

_WINDOW_OPS = frozenset(["Conv", "ConvTranspose", "MaxPool", "AveragePool", "LpPool"])


_REDUCE_OPS = frozenset(
    [
        "ReduceMax", "ReduceMin", "ReduceSum", "ReduceMean", "ReduceProd", "ReduceL1",
        "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare",
    ]
)  # fmt: skip


def _inline_ints(v: SSAValue) -> list[int] | None:
    """The values of an integer tensor an inline ``onnx.Constant`` defines, else None."""
    owner = v.owner
    if not (isinstance(owner, OnnxOp) and owner.op_type == "Constant"):
        return None
    value = owner.properties.get("value")
    if not isinstance(value, DenseIntOrFPElementsAttr):
        return None
    return [int(x) for x in value.get_values()]


def expected_result_shape(op: OnnxOp) -> tuple[int, ...] | None:
    """The result shape the spec gives ``op`` from its static operand shapes and attributes,
    for the ops whose declared result a hand edit most easily contradicts (a Reduce's
    ``keepdims``, a Gemm's ``transA``/``transB``, a Transpose's ``perm``); None where it is not
    one of them or cannot tell."""
    shapes = [static_shape(v.type) for v in op.operands]
    if not shapes or shapes[0] is None:
        return None
    x = shapes[0]
    kind = op.op_type
    if kind in _REDUCE_OPS:
        axes = op.attr("axes")
        if axes is None and len(op.operands) > 1 and not isinstance(op.operands[1].type, NoneType):
            axes = _inline_ints(op.operands[1])
            if axes is None:
                return None
        if not axes:
            if op.attr("noop_with_empty_axes", 0):
                return x
            axes = list(range(len(x)))
        rank = len(x)
        if any(not -rank <= a < rank for a in axes):
            return None  # the axis check says so
        picked = {a % rank for a in axes}
        keep = op.attr("keepdims", 1)
        return tuple((1 if d in picked else n) for d, n in enumerate(x) if keep or d not in picked)
    if kind == "Gemm" and len(shapes) >= 2 and shapes[1] is not None:
        a, b = x, shapes[1]
        if len(a) != 2 or len(b) != 2:
            return None
        m = a[1] if op.attr("transA", 0) else a[0]
        n = b[0] if op.attr("transB", 0) else b[1]
        return (m, n)
    if kind == "Transpose":
        perm = op.attr("perm")
        perm = list(range(len(x)))[::-1] if perm is None else [int(p) for p in perm]
        if sorted(perm) != list(range(len(x))):
            return None
        return tuple(x[p] for p in perm)
    return None


def _verify_recurrent(op: OnnxOp, where: str) -> None:
    """The shapes an LSTM, GRU or RNN node's inputs must agree on (ONNX's schema, which shape
    inference does not check): ``X`` is ``[seq, batch, input]`` (``layout=1``: ``[batch, seq,
    input]``), ``W`` ``[directions, gates * hidden, input]``, ``R`` ``[directions, gates * hidden,
    hidden]``, ``sequence_lens`` ``[batch]``, ``initial_h`` and ``initial_c`` ``[directions,
    batch, hidden]`` (``layout=1``: ``[batch, directions, hidden]``). PyTorch's fused layers do
    not check the states' batch: an initial state of batch 1 beside an ``X`` of batch 2 had
    corrupted the heap of the generated program (``free(): invalid next size``; a fresh-user
    check)."""
    operands = list(op.operands)

    def shape_of(i: int) -> tuple[int, ...] | None:
        if i >= len(operands) or isinstance(operands[i].type, NoneType):
            return None
        return static_shape(operands[i].type)

    x, w, r = shape_of(0), shape_of(1), shape_of(2)
    if x is None or w is None or len(x) != 3 or len(w) != 3:
        return
    layout = op.attr("layout", 0)
    batch = x[0] if layout else x[1]
    if w[2] != x[2]:
        raise VerifyException(f"{where}: X has input size {x[2]} but W expects {w[2]}")
    hidden = r[2] if r is not None and len(r) == 3 else op.attr("hidden_size", None)
    if hidden is None:
        return
    lens = shape_of(4)
    if lens is not None and list(lens) != [batch]:
        raise VerifyException(
            f"{where}: sequence_lens (input 4) has shape {list(lens)}, not [{batch}] (batch_size)"
        )
    want = [batch, w[0], hidden] if layout else [w[0], batch, hidden]
    order = "batch_size, num_directions" if layout else "num_directions, batch_size"
    for i, name in ((5, "initial_h"), (6, "initial_c")):
        got = shape_of(i)
        if got is not None and list(got) != want:
            raise VerifyException(
                f"{where}: {name} (input {i}) has shape {list(got)}, not {want} "
                f"({order}, hidden_size; X is {list(x)})"
            )


def _verify_ranges(op: OnnxOp, where: str) -> None:
    """Attribute values the spec bounds by the operand ranks (an ``axis``) or by themselves (a
    window's strides, dilations and pads), and a Conv's ``kernel_shape`` against its kernel:
    values no exporter writes, but a hand-edited IR file can, and whose Python then failed deep
    inside torch (``Dimension out of range``, ``non-positive stride``) or silently ignored the
    attribute (found by a fresh-user check)."""
    t = op.operands[0].type if op.operands else None
    rank = len(t.get_shape()) if isinstance(t, TensorType) else None
    kind = op.op_type
    if rank is not None and "axis" in op.properties:
        axis = op.attr("axis")
        lo, hi = -rank, rank - 1
        if kind == "Flatten":
            hi = rank
        checked = (
            kind in _AXIS_OPS
            or kind == "Flatten"
            or (kind in ("Softmax", "LogSoftmax", "Hardmax") and opset_of(op) >= 13)
        )
        if checked and isinstance(axis, int) and not lo <= axis <= hi:
            raise VerifyException(
                f"{where}: axis {axis} is out of range for an operand of rank {rank} ([{lo}, {hi}])"
            )
    if kind == "Gemm" and len(op.operands) >= 2:
        a, b = static_shape(op.operands[0].type), static_shape(op.operands[1].type)
        if a is not None and b is not None and len(a) == 2 and len(b) == 2:
            ka = a[0] if op.attr("transA", 0) else a[1]
            kb = b[1] if op.attr("transB", 0) else b[0]
            if ka != kb:
                raise VerifyException(
                    f"{where}: inner dimensions {ka} and {kb} differ (A {list(a)}, transA "
                    f"{op.attr('transA', 0)}; B {list(b)}, transB {op.attr('transB', 0)})"
                )
    if kind == "Transpose" and rank is not None and op.attr("perm") is not None:
        perm = [int(p) for p in op.attr("perm")]
        if sorted(perm) != list(range(rank)):
            raise VerifyException(f"{where}: perm {perm} is no permutation of {rank} axes")
    want = expected_result_shape(op)
    got = static_shape(op.results[0].type) if op.results else None
    if want is not None and got is not None and tuple(got) != want:
        raise VerifyException(
            f"{where}: result shape {list(got)} differs from the {list(want)} its operands and "
            "attributes give"
        )
    if kind not in _WINDOW_OPS:
        return
    for name, least in (("strides", 1), ("dilations", 1), ("pads", 0)):
        values = op.attr(name)
        if values is not None and any(int(v) < least for v in values):
            raise VerifyException(f"{where}: {name} {list(values)} must each be >= {least}")
    kernel = op.attr("kernel_shape")
    if kind in ("Conv", "ConvTranspose") and kernel is not None and len(op.operands) > 1:
        w = static_shape(op.operands[1].type)
        if w is not None and list(w[2:]) != [int(k) for k in kernel]:
            raise VerifyException(
                f"{where}: kernel_shape {list(kernel)} differs from the kernel's spatial "
                f"shape {list(w[2:])}"
            )


def _verify_dims(where: str, what: str, t: Attribute) -> None:
    """A dimension is a size (>= 0) or dynamic (``?``, xDSL's ``DYNAMIC_INDEX``); any other
    negative number (an unknown ONNX ``dim_value`` taken as a size) is invalid IR."""
    if isinstance(t, TensorType):
        bad = [d for d in t.get_shape() if d < 0 and d != DYNAMIC_INDEX]
        if bad:
            raise VerifyException(
                f"{where}: {what} has the negative dimension {bad[0]} (a dimension is a size "
                "or dynamic, '?')"
            )


# ---------------------------------------------------------------------------------------------
# In-place ops (the ``ramiel.inplace`` attribute set by ``--inplace``)
# ---------------------------------------------------------------------------------------------


#: Ops whose lowering rules have an in-place form, and the operands it may overwrite.
INPLACE_OPS: dict[str, tuple[int, ...]] = {
    "Relu": (0,),
    "LeakyRelu": (0,),
    "Sigmoid": (0,),
    "Tanh": (0,),
    "Elu": (0,),
    "HardSigmoid": (0,),
    "HardSwish": (0,),
    "Clip": (0,),
    "Add": (0, 1),
    "Mul": (0, 1),
    "Sub": (0,),
    "Div": (0,),
    "Sum": (0, 1),
}

#: Ops whose float result is always a new tensor that shares memory with no other value (their
#: lowering rules never return an operand, a view of one or a weight): the buffers an in-place op
#: may overwrite when no one else reads them.
FRESH_RESULT_OPS = frozenset(
    [
        "Conv",
        "ConvTranspose",
        "Gemm",
        "MatMul",
        "Add",
        "Sub",
        "Mul",
        "Div",
        "BatchNormalization",
        "LayerNormalization",
        "Relu",
        "LeakyRelu",
        "Sigmoid",
        "Tanh",
        "Elu",
        "HardSigmoid",
        "HardSwish",
        "Gelu",
        "Softmax",
        "Attention",
        "GlobalAveragePool",
    ]
)

#: Variadic ops whose result is a new tensor only with two or more inputs (with one, the lowering
#: returns that input itself): fresh, like :data:`FRESH_RESULT_OPS`, from the second input on.
FRESH_RESULT_VARIADIC_OPS = frozenset(["Sum"])

_INPLACE_FLOATS = ("float16", "bfloat16", "float32", "float64")


def inplace_violation(op: Operation) -> str | None:
    """Why ``op``'s ``ramiel.inplace`` claim does not hold, or ``None`` (it holds, or there is no
    claim). Operand ``i`` may be overwritten only when

    * ``op`` is one of :data:`INPLACE_OPS` and ``i`` one of its operands there;
    * the operand has the result's type (same shape: no broadcast grows it; a float type, and
      the other operand of a binary op has it too);
    * the operand has exactly one use, this one: it is not a graph output (``func.return``), does
      not cross a channel (``cluster.send``) or leave a cluster (``cluster.yield``), and no other
      op reads it;
    * it is the result of an op of :data:`FRESH_RESULT_OPS` (or of
      :data:`FRESH_RESULT_VARIADIC_OPS` with two or more inputs, or of another in-place op, whose
      result is its own operand's buffer) in the same block: never a graph input, a weight
      (``onnx.Constant``), a received tensor, a view or an alias of any of those.
    """
    attr = get_attr(op, INPLACE_ATTR)
    if attr is None:
        return None
    if not isinstance(op, OnnxOp):
        return "only onnx ops may be in place"
    if not isinstance(attr, IntegerAttr):
        return f"{INPLACE_ATTR} must be an integer operand index, got {attr}"
    i = attr.value.data
    allowed = INPLACE_OPS.get(op.op_type)
    if allowed is None:
        return f"onnx.{op.op_type} has no in-place form"
    if i not in allowed or i >= len(op.operands):
        return f"operand {i} of onnx.{op.op_type} cannot be overwritten"
    v = op.operands[i]
    if len(op.results) != 1 or v.type != op.results[0].type:
        return f"operand {i} does not have the result's type"
    el = getattr(v.type, "element_type", None)
    if el is None or numpy_dtype_of(el).name not in _INPLACE_FLOATS:
        return f"operand {i} is not a floating-point tensor"
    if any(getattr(w.type, "element_type", None) != el for w in op.operands if w is not v):
        return "the operands have different element types"
    uses = list(v.uses)
    if len(uses) != 1 or uses[0].operation is not op or uses[0].index != i:
        return f"operand {i} has other uses (a graph output, a channel or another reader)"
    owner = v.owner
    if not isinstance(owner, OnnxOp) or owner.parent is not op.parent:
        return f"operand {i} is not computed by an onnx op in the same block"
    fresh = owner.op_type in FRESH_RESULT_OPS or (
        owner.op_type in FRESH_RESULT_VARIADIC_OPS and len(owner.operands) >= 2
    )
    if not fresh and not has(owner, INPLACE_ATTR):
        return f"operand {i} comes from onnx.{owner.op_type}, whose result may alias other memory"
    return None


def drop_invalid_inplace(root: Operation) -> int:
    """Remove every ``ramiel.inplace`` claim under ``root`` that no longer holds (a rewrite gave
    the operand another use); returns how many. Claims are dropped in program order, so a chain
    whose first link breaks loses the links that relied on it."""
    n = 0
    for op in root.walk():
        if has(op, INPLACE_ATTR) and inplace_violation(op) is not None:
            remove(op, INPLACE_ATTR)
            n += 1
    return n


def _range(lo: int, hi: int) -> str:
    if lo == hi:
        return str(lo)
    if hi >= 2**31 - 1:
        return f"at least {lo}"
    return f"{lo} to {hi}"


@irdl_op_definition
class NoValueOp(IRDLOperation):
    """``onnx.NoValue``: the ``none`` value standing for a missing optional input (onnx-mlir)."""

    name = "onnx.NoValue"
    result = result_def(NoneType)
    traits = traits_def(Pure())

    def __init__(self) -> None:
        super().__init__(result_types=[NoneType()])


@irdl_op_definition
class YieldOp(IRDLOperation):
    """``onnx.Yield``: ends a region of ``onnx.If``/``onnx.Loop``/``onnx.Scan`` with the values of
    the subgraph's outputs (onnx-mlir's ``ONNXYieldOp``)."""

    name = "onnx.Yield"
    values = var_operand_def()
    traits = traits_def(IsTerminator(), Pure())

    def __init__(self, values: Sequence[SSAValue]):
        super().__init__(operands=[list(values)])

    def verify_(self) -> None:
        parent = self.parent_op()
        if not (isinstance(parent, OnnxOp) and parent.op_type in REGION_ATTRS):
            raise VerifyException("onnx.Yield must end a region of onnx.If, onnx.Loop or onnx.Scan")


# ---------------------------------------------------------------------------------------------
# Region ops: If, Loop, Scan
# ---------------------------------------------------------------------------------------------
#
# Regions see the values of the enclosing blocks (ONNX's outer-scope names): a region op is not
# IsolatedFromAbove. Its dependences are its operands and the values its regions use from
# outside it (captured_values). Ops never move across a region boundary.


def captured_values(op: Operation) -> list[SSAValue]:
    """The values ``op``'s regions use that are defined outside ``op`` (ONNX outer-scope
    values), each once, in order of first use. Empty for an op without regions."""
    if not op.regions:
        return []
    seen: dict[SSAValue, None] = {}
    for inner in op.walk():
        if inner is op:
            continue
        for v in inner.operands:
            if v not in seen and not op.is_ancestor(v.owner):
                seen[v] = None
    return list(seen)


def dependences(op: Operation) -> list[SSAValue]:
    """The values ``op`` reads: its operands, then the values its regions capture."""
    deps = dict.fromkeys(op.operands)
    for v in captured_values(op):
        deps.setdefault(v, None)
    return list(deps)


def region_yield(region: Region) -> YieldOp:
    """The ``onnx.Yield`` ending the single block of ``region``."""
    term = region.block.last_op
    assert isinstance(term, YieldOp)
    return term


def _through_identity(v: SSAValue) -> SSAValue:
    while isinstance(v.owner, OnnxOp) and v.owner.op_type == "Identity":
        v = v.owner.operands[0]
    return v


def loop_trip_count(op: OnnxOp, const_of: Callable[[SSAValue], Any]) -> int | None:
    """How many times the body of the Loop ``op`` runs, when the IR says (``None`` if the data
    decide); ``const_of(v)`` gives a value's compile-time value (an array) or ``None``.

    The loop must start (its ``cond`` absent or a constant true); then either it cannot stop
    early (the body yields a constant true or passes its ``cond`` argument on: ``M`` trips), or
    it counts: the body yields ``cond = next < N`` for a carried counter ``next = k + step``
    (``k`` starting at a constant ``k0``, constants ``step > 0`` and ``N``: the
    ``while i < N: ...; i += 1`` of a TorchScript export), which runs ``ceil((N - k0) / step)``
    times (at least once), or ``M`` times if that is fewer."""

    def scalar(v: SSAValue) -> float | None:
        if isinstance(v.type, NoneType):
            return None
        c = const_of(v)
        return None if c is None or np.size(c) != 1 else np.asarray(c).reshape(-1)[0].item()

    m_val = scalar(op.operands[0])
    cond = op.operands[1]
    if not isinstance(cond.type, NoneType) and not scalar(cond):
        return None
    body = op.regions[0].block
    values = region_yield(op.regions[0]).values
    out = _through_identity(values[0])
    m = None if m_val is None else max(0, int(m_val))
    if out is body.args[1] or scalar(out):
        return m
    less = out.owner
    if not (isinstance(less, OnnxOp) and less.op_type == "Less"):
        return None
    nxt, limit = less.operands[0], scalar(less.operands[1])
    add = nxt.owner
    if limit is None or not (isinstance(add, OnnxOp) and add.op_type == "Add"):
        return None
    for arg, step_v in ((add.operands[0], add.operands[1]), (add.operands[1], add.operands[0])):
        if not (isinstance(arg, BlockArgument) and arg.block is body and arg.index >= 2):
            continue
        k = arg.index - 2
        start, step = scalar(op.operands[2 + k]), scalar(step_v)
        if start is None or step is None or step <= 0 or values[1 + k] is not nxt:
            continue
        trips = max(1, math.ceil((limit - start) / step))
        return trips if m is None else min(trips, m)
    return None


def _scalar_of(t: Attribute, element: Attribute) -> bool:
    """Is ``t`` a one-element tensor of ``element`` (rank 0, or rank 1 of size 1)?"""
    shape = static_shape(t)
    return (
        isinstance(t, TensorType)
        and t.element_type == element
        and shape is not None
        and math.prod(shape) == 1
    )


def _may_be_scalar_of(t: Attribute, element: Attribute) -> bool:
    """Can ``t`` be a one-element tensor of ``element``: :func:`_scalar_of`, or a shape the
    import could not infer (unranked, or dynamic dimensions with every static one 1: onnx's
    shape inference leaves them so after a Loop), which the ONNX run checks, as onnxruntime
    does."""
    if not isinstance(t, (TensorType, UnrankedTensorType)) or t.element_type != element:
        return False
    if isinstance(t, UnrankedTensorType):
        return True
    return all(d == 1 or d == DYNAMIC_INDEX for d in t.get_shape())


def fits(value: Attribute, declared: Attribute) -> bool:
    """May a value of type ``value`` flow where ``declared`` is expected? The same element
    type and rank, and every static dimension of ``declared`` equal (``?`` accepts any)."""
    if value == declared:
        return True
    if not isinstance(value, TensorType | UnrankedTensorType):
        return False
    if not isinstance(declared, TensorType | UnrankedTensorType):
        return False
    if value.element_type != declared.element_type:
        return False
    if isinstance(declared, UnrankedTensorType) or isinstance(value, UnrankedTensorType):
        return True
    a, b = value.get_shape(), declared.get_shape()
    return len(a) == len(b) and all(d < 0 or d == v for v, d in zip(a, b, strict=True))


def compatible(a: Attribute, b: Attribute) -> bool:
    """Could values of types ``a`` and ``b`` be the same (dimensions equal where both are
    static)? A loop body may yield a carried value whose shape only the lowering knows."""
    if fits(a, b) or fits(b, a):
        return True
    if not isinstance(a, TensorType) or not isinstance(b, TensorType):
        return False
    sa, sb = a.get_shape(), b.get_shape()
    return (
        a.element_type == b.element_type
        and len(sa) == len(sb)
        and all(x < 0 or y < 0 or x == y for x, y in zip(sa, sb, strict=True))
    )


def verify_regions(op: OnnxOp, where: str, opset: int) -> None:
    """Check the regions of a control-flow op against its operands and results.

    * ``If``: ``cond`` is one bool; both branches take no arguments and yield one value per
      result, of the result's type (a result whose shape depends on the condition has dynamic
      dimensions; constant folding may still pick its branch, else the lowering rejects it).
    * ``Loop``: operands ``M`` (int64, or ``none``), ``cond`` (bool, or ``none``) and N carried
      values; the body takes ``(iteration_num, cond, carried...)`` and yields
      ``(cond, carried..., scan outputs...)``; a carried value keeps its type and shape through
      the body (a loop-carried value that changes shape is invalid); the results are the N final
      carried values, then each scan output stacked on a new leading axis.
    * ``Scan`` (opset 9+): N states then ``num_scan_inputs`` scanned inputs; the body takes
      ``(states..., one slice of each scanned input)`` and yields ``(states..., scan output
      slices...)``; states keep their types. Opset 8's batched form is checked for counts.

    Raises ``VerifyException`` naming the op, the region and the value.
    """
    names = REGION_ATTRS[op.op_type]
    if len(op.regions) != len(names):
        raise VerifyException(f"{where} needs {len(names)} region(s): {', '.join(names)}")
    for name, region in zip(names, op.regions, strict=True):
        if not region.blocks or not isinstance(region.block.last_op, YieldOp):
            raise VerifyException(f"{where}: region {name} must end with onnx.Yield")
    if op.op_type == "If":
        _verify_if(op, where)
    elif op.op_type == "Loop":
        _verify_loop(op, where)
    elif opset >= 9:
        _verify_scan(op, where)
    else:
        _verify_scan8(op, where)


def _verify_if(op: OnnxOp, where: str) -> None:
    if not _may_be_scalar_of(op.operands[0].type, i1):
        raise VerifyException(f"{where}: cond must be one bool, got {op.operands[0].type}")
    for name, region in zip(REGION_ATTRS["If"], op.regions, strict=True):
        if region.block.args:
            raise VerifyException(f"{where}: {name} takes no arguments")
        values = region_yield(region).values
        if len(values) != len(op.results):
            raise VerifyException(
                f"{where}: {name} yields {len(values)} value(s), the op has "
                f"{len(op.results)} result(s)"
            )
        for i, (v, r) in enumerate(zip(values, op.results, strict=True)):
            if not fits(v.type, r.type):
                raise VerifyException(
                    f"{where}: result #{i} is {r.type} but {name} yields {v.type}"
                )


def _verify_loop(op: OnnxOp, where: str) -> None:
    if len(op.operands) < 2:
        raise VerifyException(f"{where}: operands are M, cond and the carried values")
    m, cond = op.operands[0].type, op.operands[1].type
    if not isinstance(m, NoneType) and not _scalar_of(m, SIGNLESS[64]):
        raise VerifyException(f"{where}: M must be one int64, got {m}")
    if not isinstance(cond, NoneType) and not _scalar_of(cond, i1):
        raise VerifyException(f"{where}: cond must be one bool, got {cond}")
    carried = [v.type for v in op.operands[2:]]
    n = len(carried)
    body = op.regions[0].block
    if len(body.args) != 2 + n:
        raise VerifyException(
            f"{where}: the body takes {len(body.args)} argument(s), expected 2 + {n} "
            "(iteration_num, cond, the carried values)"
        )
    if not _scalar_of(body.args[0].type, SIGNLESS[64]):
        raise VerifyException(f"{where}: body argument 0 (iteration_num) must be one int64")
    if not _scalar_of(body.args[1].type, i1):
        raise VerifyException(f"{where}: body argument 1 (cond) must be one bool")
    values = region_yield(op.regions[0]).values
    k = len(values) - 1 - n
    if k < 0 or len(op.results) != n + k:
        raise VerifyException(
            f"{where}: the body yields {len(values)} value(s) and the op has "
            f"{len(op.results)} result(s); expected 1 + {n} + K and {n} + K "
            "(cond, the carried values, K scan outputs)"
        )
    if not _scalar_of(values[0].type, i1):
        raise VerifyException(f"{where}: the body must yield one bool (cond) first")
    for j in range(n):
        arg, out, res = body.args[2 + j].type, values[1 + j].type, op.results[j].type
        if arg != carried[j] or not fits(carried[j], res):
            raise VerifyException(
                f"{where}: loop-carried value #{j} enters as {carried[j]}, the body takes "
                f"{arg} and the op returns {res}"
            )
        if not compatible(out, arg):
            raise VerifyException(
                f"{where}: loop-carried value #{j} changes type or shape: it enters as {arg} "
                f"and the body yields {out}"
            )
    for j in range(k):
        _check_stacked(where, f"scan output #{j}", values[1 + n + j].type, op.results[n + j].type)


def _check_stacked(where: str, what: str, part: Attribute, whole: Attribute, axis: int = 0) -> None:
    """``whole`` must be ``part`` stacked along a new ``axis`` (any length)."""
    if not isinstance(part, TensorType) or not isinstance(whole, TensorType):
        return
    p, w = list(part.get_shape()), list(whole.get_shape())
    ok = part.element_type == whole.element_type and len(w) == len(p) + 1
    if ok:
        rest = w[:axis] + w[axis + 1 :]
        ok = all(a < 0 or b < 0 or a == b for a, b in zip(p, rest, strict=True))
    if not ok:
        raise VerifyException(
            f"{where}: {what} is {whole}, which is not the body's {part} stacked on axis {axis}"
        )


def _verify_scan(op: OnnxOp, where: str) -> None:
    m = op.attr("num_scan_inputs")
    n = len(op.operands) - m
    if n < 0:
        raise VerifyException(f"{where}: num_scan_inputs {m} > {len(op.operands)} operands")
    body = op.regions[0].block
    if len(body.args) != n + m:
        raise VerifyException(
            f"{where}: the body takes {len(body.args)} argument(s), expected {n} states + {m} "
            "scan input slices"
        )
    values = region_yield(op.regions[0]).values
    k = len(values) - n
    if k < 0 or len(op.results) != n + k:
        raise VerifyException(
            f"{where}: the body yields {len(values)} value(s) and the op has "
            f"{len(op.results)} result(s); expected {n} states + K scan outputs for both"
        )
    for j in range(n):
        state, arg, out, res = (
            op.operands[j].type,
            body.args[j].type,
            values[j].type,
            op.results[j].type,
        )
        if not (fits(state, arg) and compatible(out, arg) and fits(state, res)):
            raise VerifyException(
                f"{where}: state #{j} changes type or shape: it enters as {state}, the body "
                f"takes {arg} and yields {out}, the op returns {res}"
            )
    in_axes = op.attr("scan_input_axes") or [0] * m
    out_axes = op.attr("scan_output_axes") or [0] * k
    for j in range(m):
        whole = op.operands[n + j].type
        rank = len(whole.get_shape()) if isinstance(whole, TensorType) else 1
        _check_stacked(
            where, f"scan input #{j}", body.args[n + j].type, whole, in_axes[j] % max(rank, 1)
        )
    for j in range(k):
        whole = op.results[n + j].type
        rank = len(whole.get_shape()) if isinstance(whole, TensorType) else 1
        _check_stacked(
            where, f"scan output #{j}", values[n + j].type, whole, out_axes[j] % max(rank, 1)
        )


def _verify_scan8(op: OnnxOp, where: str) -> None:
    m = op.attr("num_scan_inputs")
    n = len(op.operands) - 1 - m
    body = op.regions[0].block
    values = region_yield(op.regions[0]).values
    if n < 0 or len(body.args) != n + m or len(values) - n != len(op.results) - n:
        raise VerifyException(
            f"{where}: operands (sequence_lens, {n} states, {m} scan inputs), body arguments "
            f"({len(body.args)}) and yielded values ({len(values)}) do not match"
        )
