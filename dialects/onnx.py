"""The ``onnx`` dialect: one op per ONNX operator, named and printed like onnx-mlir.

Every operator of the default ONNX domain (``ai.onnx``) that Ramiel can represent gets an op class
``onnx.<OpType>`` generated from the operator schemas that ship with the ``onnx`` package
(``onnx.defs``), the way onnx-mlir generates its ops from the same schemas. The textual form is
onnx-mlir's generic form::

    %y = "onnx.Conv"(%X, %W, %B) <{group = 1 : si64, strides = [2 : si64, 2 : si64]}>
         {onnx_node_name = "conv1"} : (tensor<1x3x224x224xf32>, ...) -> tensor<1x64x112x112xf32>

* Operands follow the schema's formal inputs in order; a missing optional input is an SSA value of
  type ``none`` produced by ``onnx.NoValue``. Trailing missing optional inputs may also be omitted.
* ONNX attributes are op *properties* with the spec's names: INT -> ``si64`` integer, FLOAT -> ``f32``
  float, STRING -> string, INTS/FLOATS/STRINGS -> arrays, TENSOR -> ``dense<...>`` (small) or
  ``dense_resource<key>`` (a tensor stored in the module's external safetensors weights file, see
  :mod:`ramiel.weights`).
* The ONNX opset the ops follow is the module attribute ``onnx.opset`` (default: the newest opset
  the installed ``onnx`` knows). The verifier checks each op against the schema *of that opset*:
  arity, attribute names, kinds and required attributes, element-type constraints, and the shapes
  of the ops whose shape rules are simple (broadcasting element-wise ops, Conv, MatMul, Gemm,
  Concat).
* The ONNX node name is kept in the discardable attribute ``onnx_node_name``.

Source: ONNX operator specification (https://onnx.ai/onnx/operators/) via ``onnx.defs``; textual
conventions from onnx-mlir's ``ONNXOps.td.inc``.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
import onnx.defs
from onnx.defs import OpSchema
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    Float8E4M3FNType,
    Float8E4M3FNUZType,
    Float8E5M2FNUZType,
    Float8E5M2Type,
    Float8E8M0FNUType,
    Float16Type,
    Float64Type,
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
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    opt_prop_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import ConstantLike, Pure
from xdsl.utils.exceptions import VerifyException

LATEST_OPSET: int = onnx.defs.onnx_opset_version()
"""The newest default-domain opset the installed ``onnx`` package knows."""

MIN_OPSET = 7
"""The oldest default-domain opset Ramiel accepts (ONNX 1.2; older models predate broadcasting)."""

OPSET_ATTR = "onnx.opset"
NODE_NAME_ATTR = "onnx_node_name"

# ---------------------------------------------------------------------------------------------
# Element types: ONNX TensorProto.DataType <-> MLIR element types <-> numpy dtypes
# ---------------------------------------------------------------------------------------------

i1 = IntegerType(1)
_SIGNLESS = {8: IntegerType(8), 16: IntegerType(16), 32: IntegerType(32), 64: IntegerType(64)}
_UNSIGNED = {w: IntegerType(w, Signedness.UNSIGNED) for w in (8, 16, 32, 64)}

#: ONNX ``TensorProto`` data type -> MLIR element type (signless integers for signed ONNX integers,
#: as in onnx-mlir; ``i1`` for bool; the float8 types are MLIR's builtin ``f8E4M3FN``,
#: ``f8E4M3FNUZ``, ``f8E5M2``, ``f8E5M2FNUZ`` and ``f8E8M0FNU``, with the same encodings).
ELEMENT_TYPES: dict[int, Attribute] = {
    onnx.TensorProto.FLOAT: f32,
    onnx.TensorProto.DOUBLE: Float64Type(),
    onnx.TensorProto.FLOAT16: Float16Type(),
    onnx.TensorProto.BFLOAT16: BFloat16Type(),
    onnx.TensorProto.BOOL: i1,
    onnx.TensorProto.INT8: _SIGNLESS[8],
    onnx.TensorProto.INT16: _SIGNLESS[16],
    onnx.TensorProto.INT32: _SIGNLESS[32],
    onnx.TensorProto.INT64: _SIGNLESS[64],
    onnx.TensorProto.UINT8: _UNSIGNED[8],
    onnx.TensorProto.UINT16: _UNSIGNED[16],
    onnx.TensorProto.UINT32: _UNSIGNED[32],
    onnx.TensorProto.UINT64: _UNSIGNED[64],
    onnx.TensorProto.FLOAT8E4M3FN: Float8E4M3FNType(),
    onnx.TensorProto.FLOAT8E4M3FNUZ: Float8E4M3FNUZType(),
    onnx.TensorProto.FLOAT8E5M2: Float8E5M2Type(),
    onnx.TensorProto.FLOAT8E5M2FNUZ: Float8E5M2FNUZType(),
    onnx.TensorProto.FLOAT8E8M0: Float8E8M0FNUType(),
}
_ONNX_OF_ELEMENT = {v: k for k, v in ELEMENT_TYPES.items()}

#: ONNX type string used in schema type constraints (``tensor(float)``) per data type.
_TYPE_STR = {
    onnx.TensorProto.FLOAT: "float",
    onnx.TensorProto.DOUBLE: "double",
    onnx.TensorProto.FLOAT16: "float16",
    onnx.TensorProto.BFLOAT16: "bfloat16",
    onnx.TensorProto.BOOL: "bool",
    onnx.TensorProto.INT8: "int8",
    onnx.TensorProto.INT16: "int16",
    onnx.TensorProto.INT32: "int32",
    onnx.TensorProto.INT64: "int64",
    onnx.TensorProto.UINT8: "uint8",
    onnx.TensorProto.UINT16: "uint16",
    onnx.TensorProto.UINT32: "uint32",
    onnx.TensorProto.UINT64: "uint64",
    onnx.TensorProto.FLOAT8E4M3FN: "float8e4m3fn",
    onnx.TensorProto.FLOAT8E4M3FNUZ: "float8e4m3fnuz",
    onnx.TensorProto.FLOAT8E5M2: "float8e5m2",
    onnx.TensorProto.FLOAT8E5M2FNUZ: "float8e5m2fnuz",
    onnx.TensorProto.FLOAT8E8M0: "float8e8m0",
}


def element_type_of(onnx_dtype: int) -> Attribute:
    """MLIR element type for an ONNX ``TensorProto.DataType``; raises ``KeyError`` if unsupported."""
    return ELEMENT_TYPES[onnx_dtype]


def onnx_dtype_of(element_type: Attribute) -> int:
    """ONNX ``TensorProto.DataType`` of an MLIR element type; raises ``KeyError`` if unknown."""
    return _ONNX_OF_ELEMENT[element_type]


def numpy_dtype_of(element_type: Attribute) -> np.dtype:
    """numpy dtype of an MLIR element type (``f32`` -> ``float32``, ``i1`` -> ``bool``...)."""
    return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(onnx_dtype_of(element_type)))


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
    raise ValueError(f"attribute kind {kind.name} is not representable")


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

_REPRESENTABLE_KINDS = {
    _KIND.INT,
    _KIND.FLOAT,
    _KIND.STRING,
    _KIND.INTS,
    _KIND.FLOATS,
    _KIND.STRINGS,
    _KIND.TENSOR,
}
_REPRESENTABLE_NAMES = {k.name for k in _REPRESENTABLE_KINDS}


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
    )


def unrepresentable_reason(op_type: str, opset: int) -> str | None:
    """Why ``op_type`` at ``opset`` cannot be an ``onnx`` dialect op, or ``None`` if it can."""
    info = schema_info(op_type, opset)
    if info is None:
        return f"no ONNX operator '{op_type}' in the default domain at opset {opset}"
    if op_type not in OPS:
        s = info.schema
        if any(a.type not in _REPRESENTABLE_KINDS for a in s.attributes.values()):
            kinds = sorted({a.type.name for a in s.attributes.values()} - _REPRESENTABLE_NAMES)
            if "GRAPH" in kinds or "GRAPHS" in kinds:
                return "control flow with subgraph attributes is not supported"
            return f"attributes of kind {', '.join(kinds)} are not supported"
        return "sequence, map, optional or string values are not supported"
    return None


def opset_of(op: Operation) -> int:
    """The ``onnx.opset`` of the module enclosing ``op`` (default :data:`LATEST_OPSET`)."""
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, ModuleOp):
            attr = parent.attributes.get(OPSET_ATTR)
            if isinstance(attr, IntegerAttr):
                return attr.value.data
        parent = parent.parent_op()
    return LATEST_OPSET


# ---------------------------------------------------------------------------------------------
# Verification
# ---------------------------------------------------------------------------------------------


def _type_str(t: Attribute) -> str | None:
    if isinstance(t, TensorType | UnrankedTensorType):
        dt = _ONNX_OF_ELEMENT.get(t.element_type)
        return None if dt is None else f"tensor({_TYPE_STR[dt]})"
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


#: Ops with ONNX multidirectional (numpy) broadcasting over all inputs.
BROADCAST_OPS = frozenset(
    [
        "Add",
        "Sub",
        "Mul",
        "Div",
        "Pow",
        "Mod",
        "Equal",
        "Less",
        "Greater",
        "LessOrEqual",
        "GreaterOrEqual",
        "And",
        "Or",
        "Xor",
        "BitShift",
        "Where",
        "Max",
        "Min",
        "Sum",
        "Mean",
        "PRelu",
        "BitwiseAnd",
        "BitwiseOr",
        "BitwiseXor",
    ]
)


class OnnxOp(IRDLOperation):
    """Base class of the generated ``onnx.<OpType>`` ops (see module docstring)."""

    @property
    def op_type(self) -> str:
        """The ONNX operator type (``Conv`` for ``onnx.Conv``)."""
        return self.name[5:]

    def input(self, name: str) -> SSAValue | None:
        """The operand bound to the schema input ``name`` (``None`` if absent or ``none``)."""
        info = schema_info(self.op_type, opset_of(self))
        assert info is not None
        for i, (n, option, _) in enumerate(info.inputs):
            if n == name:
                if option == OpSchema.FormalParameterOption.Variadic:
                    raise ValueError(f"input {name} is variadic: use op.operands[{i}:]")
                if i < len(self.operands) and not isinstance(self.operands[i].type, NoneType):
                    return self.operands[i]
                return None
        raise KeyError(f"onnx.{self.op_type} has no input '{name}'")

    def attr(self, name: str, default: Any = None) -> Any:
        """The Python value of ONNX attribute ``name`` (see :func:`python_from_attr`)."""
        a = self.properties.get(name)
        return default if a is None else python_from_attr(a)

    @property
    def node_name(self) -> str:
        a = self.attributes.get(NODE_NAME_ATTR)
        return a.data if isinstance(a, StringAttr) else ""

    def verify_(self) -> None:
        opset = opset_of(self)
        info = schema_info(self.op_type, opset)
        where = f"onnx.{self.op_type}" + (f" (node '{self.node_name}')" if self.node_name else "")
        if info is None:
            raise VerifyException(f"{where} is not defined at opset {opset}")
        self._verify_arity(info, where, opset)
        self._verify_attributes(info, where)
        self._verify_types(info, where)
        self._verify_shapes(where)

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
                    f"{where}: attribute '{name}' must be {spec[0].name}, got {value}"
                )
        for name, (_, required) in info.attributes.items():
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
            if param in info.constraints:
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
        if self.op_type in BROADCAST_OPS and all(s is not None for s in shapes):
            b = broadcast_shapes(shapes)  # type: ignore[arg-type]
            if b is None:
                raise VerifyException(f"{where}: operand shapes {shapes} do not broadcast")
            if out is not None and out != b:
                raise VerifyException(f"{where}: result shape {out} != broadcast shape {b}")
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


# ---------------------------------------------------------------------------------------------
# Op generation
# ---------------------------------------------------------------------------------------------


def _representable(s: OpSchema) -> bool:
    if s.domain != "" or s.deprecated:
        return False
    if any(a.type not in _REPRESENTABLE_KINDS for a in s.attributes.values()):
        # Graph-valued (If, Loop, Scan), type-valued or sparse attributes: not supported.
        return False
    params = {c.type_param_str: c.allowed_type_strs for c in s.type_constraints}
    for p in list(s.inputs) + list(s.outputs):
        allowed = params.get(p.type_str, [p.type_str])
        if not any(t.startswith("tensor(") and "string" not in t for t in allowed):
            return False  # sequence, map, optional or string-only operators
    return True


def _make_op(op_type: str, attr_names: set[str]) -> type[OnnxOp]:
    ns: dict[str, Any] = {
        "name": f"onnx.{op_type}",
        "__doc__": f"``onnx.{op_type}``: the ONNX {op_type} operator (see onnx.defs schema).",
        "inputs_": var_operand_def(),
        "outputs_": var_result_def(),
        "traits": traits_def(Pure(), *([ConstantLike()] if op_type == "Constant" else [])),
        "__module__": __name__,
    }
    # One optional property per attribute name of any version of the operator; which names are
    # allowed, required and of which kind at the module's opset is checked in verify_.
    for a in sorted(attr_names):
        ns[f"attr_{a}"] = opt_prop_def(Attribute, prop_name=a)
    cls = type(f"{op_type}Op", (OnnxOp,), ns)
    return irdl_op_definition(cls)


def _build_ops() -> dict[str, type[OnnxOp]]:
    attrs: dict[str, set[str]] = {}
    for s in onnx.defs.get_all_schemas_with_history():
        if _representable(s):
            attrs.setdefault(s.name, set()).update(s.attributes)
    return {n: _make_op(n, attrs[n]) for n in sorted(attrs)}


OPS: dict[str, type[OnnxOp]] = _build_ops()
"""``op_type`` -> generated op class, for every representable default-domain ONNX operator."""

globals().update({cls.__name__: cls for cls in OPS.values()})

ONNX = Dialect("onnx", [NoValueOp, *OPS.values()], [])
"""The ``onnx`` dialect."""


def create(
    op_type: str,
    operands: Sequence[SSAValue],
    result_types: Sequence[Attribute],
    attrs: dict[str, Attribute] | None = None,
    node_name: str | None = None,
) -> OnnxOp:
    """Create ``onnx.<op_type>`` with the given operands, result types and ONNX attributes."""
    cls = OPS[op_type]
    op = cls.create(
        operands=list(operands),
        result_types=list(result_types),
        properties=dict(attrs or {}),
        attributes={NODE_NAME_ATTR: StringAttr(node_name)} if node_name else {},
    )
    return op
