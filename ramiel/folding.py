"""Constant folding of ``onnx`` IR: the folder, the evaluator (``onnx.reference``) and the size
policy behind ``--constant-fold`` (:mod:`ramiel.passes.constant_fold`, whose docstring says what
is folded and why). :func:`fold_constants` runs it on a module.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import onnx
import onnx.defs
import onnx.numpy_helper
import onnx.shape_inference
from onnx import helper
from onnx.reference import ReferenceEvaluator
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    ModuleOp,
    NoneType,
    TensorType,
    UnrankedTensorType,
)
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from ramiel.attrs import OPSET_ATTR, has
from ramiel.dialects import onnx as onnx_d
from ramiel.dialects.onnx import (
    OnnxOp,
    opset_of,
    static_shape,
)
from ramiel.dialects.onnx_traits import Elementwise, has_trait
from ramiel.dtypes import ELEMENT_TYPES, numpy_dtype_of, onnx_dtype_of
from ramiel.weights import (
    INLINE_LIMIT,
    WeightStore,
    constant_value,
    dense_from_numpy,
    dense_splat,
    numpy_from_dense,
    resource_key,
    splat_value,
    value_attr,
)

__all__ = [
    "MAX_EVAL_ELEMENTS",
    "Const",
    "FoldConstantsPattern",
    "SyncFunctionTypePattern",
    "fits_budget",
    "fold_constants",
    "fold_reason",
]

MAX_EVAL_ELEMENTS = 1 << 22
"""Largest operand or result (elements) the pass materialises to evaluate an op (16 MiB f32)."""

#: Ops whose value is not a function of their inputs.
NONDETERMINISTIC = frozenset(
    [
        "RandomNormal",
        "RandomUniform",
        "RandomNormalLike",
        "RandomUniformLike",
        "Multinomial",
        "Bernoulli",
    ]
)


#: Ops that move or copy the elements of their first operand: a splat stays the same splat.
DATA_MOVEMENT = frozenset(
    [
        "DepthToSpace",
        "Dropout",
        "Expand",
        "Flatten",
        "Gather",
        "GatherElements",
        "GatherND",
        "Identity",
        "Reshape",
        "Slice",
        "SpaceToDepth",
        "Squeeze",
        "Tile",
        "Transpose",
        "Unsqueeze",
    ]
)

_CONSTANT = onnx_d.OPS["Constant"]


@dataclass
class Const:
    """A constant tensor of ``shape`` and ``dtype``: a ``splat`` (0-d array; every element
    equal, stored once) or a full ``array``."""

    shape: tuple[int, ...]
    dtype: np.dtype
    splat: np.ndarray | None = None
    full: np.ndarray | None = field(default=None, repr=False)

    @staticmethod
    def of(arr: np.ndarray) -> Const:
        arr = np.asarray(arr)
        return Const(tuple(arr.shape), arr.dtype, full=arr)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def stored_bytes(self) -> int:
        """Bytes this value takes as a constant: one element for a splat."""
        return self.dtype.itemsize * (1 if self.splat is not None else self.size)

    def array(self) -> np.ndarray:
        """The full value (materialises a splat)."""
        if self.full is None:
            assert self.splat is not None
            self.full = np.full(self.shape, self.splat, dtype=self.dtype)
        return self.full

    def scalar(self) -> np.ndarray | None:
        """The one value of a splat or of a one-element tensor (0-d array), else ``None``."""
        if self.splat is not None:
            return self.splat
        if self.full is not None and self.full.size == 1:
            return self.full.reshape(())
        return None

    def attr(self) -> DenseIntOrFPElementsAttr | None:
        """The compact ``dense`` attribute, or ``None`` if too large to inline (see policy)."""
        if self.splat is not None:
            return dense_splat(self.splat, self.shape)
        arr = self.array()
        flat = arr.reshape(-1)
        nan = flat.dtype.kind == "f" and flat.size > 0 and bool(np.isnan(flat[0]))
        if flat.size > 1 and not nan and bool(np.all(flat == flat[0])):
            return dense_splat(flat[0], self.shape)
        if arr.size <= INLINE_LIMIT:
            return dense_from_numpy(arr)
        return None


def fits_budget(results: Sequence[Const], operands: Sequence[Const]) -> bool:
    """May large non-splat ``results`` become new weights? Yes when their bytes are at most the
    bytes of the ``operands`` (the op's constant operands, a splat counting one element)."""
    return sum(c.stored_bytes for c in results) <= sum(c.stored_bytes for c in operands)


def fold_reason(op_type: str, opset: int) -> str | None:
    """Why ops of ``op_type`` at ``opset`` are never folded (see module doc), or ``None``."""
    if op_type in NONDETERMINISTIC:
        return "nondeterministic"
    if op_type in ("Softmax", "LogSoftmax", "Hardmax") and opset < 13:
        return "onnx.reference applies the opset-13 rule before opset 13"
    if op_type == "LRN":
        return "onnx.reference LRN sums over the wrong axis (onnx 1.23)"
    return None


# ---------------------------------------------------------------------------------------------
# Evaluation with onnx.reference
# ---------------------------------------------------------------------------------------------


def _onnx_attr_value(
    name: str, kind: onnx.defs.OpSchema.AttrType, attr: Attribute, store: WeightStore | None
):
    if isinstance(attr, DenseIntOrFPElementsAttr | DenseResourceAttr):
        return onnx.numpy_helper.from_array(constant_value(attr, store), name)
    value = onnx_d.python_from_attr(attr)
    if isinstance(attr, ArrayAttr) and kind == onnx.defs.OpSchema.AttrType.FLOATS:
        value = [float(v) for v in value]
    return value


def _node(op: OnnxOp, opset: int, store: WeightStore | None) -> onnx.NodeProto:
    """The ONNX node of ``op`` with inputs ``i0, i1, ...`` and outputs ``o0, o1, ...``."""
    info = onnx_d.schema_info(op.op_type, opset)
    assert info is not None
    inputs = ["" if isinstance(v.type, NoneType) else f"i{k}" for k, v in enumerate(op.operands)]
    outputs = ["" if isinstance(r.type, NoneType) else f"o{k}" for k, r in enumerate(op.results)]
    node = helper.make_node(op.op_type, inputs, outputs)
    for name, attr in sorted(op.properties.items()):
        kind = info.attributes[name][0]
        value = _onnx_attr_value(name, kind, attr, store)
        node.attribute.append(helper.make_attribute(name, value, attr_type=kind))
    return node


def _elem_type(t: Attribute) -> int:
    assert isinstance(t, TensorType | UnrankedTensorType)
    return onnx_dtype_of(t.element_type)


class _Evaluator:
    """``ReferenceEvaluator`` runs of single ONNX nodes, one evaluator per node signature."""

    def __init__(self) -> None:
        self._cache: dict[tuple[bytes, tuple[int, ...], int], ReferenceEvaluator] = {}

    def run(
        self, node: onnx.NodeProto, in_types: Sequence[int], opset: int, inputs: Sequence
    ) -> list[np.ndarray]:
        key = (node.SerializeToString(), tuple(in_types), opset)
        ev = self._cache.get(key)
        if ev is None:
            graph = helper.make_graph(
                [node],
                "fold",
                [
                    helper.make_tensor_value_info(n, t, None)
                    for n, t in zip(node.input, in_types, strict=True)
                    if n
                ],
                [helper.make_tensor_value_info(n, 0, None) for n in node.output if n],
            )
            model = helper.make_model(
                graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8
            )
            ev = self._cache[key] = ReferenceEvaluator(model)
        feeds = {n: a for n, a in zip(node.input, inputs, strict=True) if n}
        return [np.asarray(a) for a in ev.run(None, feeds)]


# ---------------------------------------------------------------------------------------------
# The pass
# ---------------------------------------------------------------------------------------------


def _large_resource(v: SSAValue) -> bool:
    """Is ``v`` an external weight (``dense_resource``) of more than MAX_EVAL_ELEMENTS?"""
    if not isinstance(v.owner, _CONSTANT):
        return False
    attr = v.owner.properties.get("value")
    return (
        isinstance(attr, DenseResourceAttr) and math.prod(attr.type.get_shape()) > MAX_EVAL_ELEMENTS
    )


def _compatible(arr: np.ndarray, t: Attribute) -> bool:
    """Does ``arr`` fit the IR type ``t`` (element type, and every static dimension)?"""
    if not isinstance(t, TensorType | UnrankedTensorType):
        return False
    if numpy_dtype_of(t.element_type) != arr.dtype:
        return False
    if isinstance(t, TensorType):
        shape = t.get_shape()
        if len(shape) != arr.ndim:
            return False
        return all(d < 0 or d == a for d, a in zip(shape, arr.shape, strict=True))
    return True


def _is_refinement(new: Attribute, old: Attribute) -> bool:
    """Is ``new`` the same tensor type as ``old`` with more static dimensions?"""
    if not isinstance(new, TensorType) or not isinstance(old, TensorType | UnrankedTensorType):
        return False
    if new.element_type != old.element_type:
        return False
    if isinstance(old, UnrankedTensorType):
        return True
    a, b = new.get_shape(), old.get_shape()
    if len(a) != len(b) or a == b:
        return False
    return all(o < 0 or o == n for n, o in zip(a, b, strict=True)) and sum(n >= 0 for n in a) > sum(
        o >= 0 for o in b
    )


def _type_proto(t: Attribute) -> onnx.TypeProto:
    if isinstance(t, TensorType):
        dims = [d if d >= 0 else None for d in t.get_shape()]
        return helper.make_tensor_type_proto(onnx_dtype_of(t.element_type), dims)
    assert isinstance(t, UnrankedTensorType)
    return helper.make_tensor_type_proto(onnx_dtype_of(t.element_type), None)


def _ir_type(tp: onnx.TypeProto) -> Attribute | None:
    if not tp.HasField("tensor_type") or tp.tensor_type.elem_type not in ELEMENT_TYPES:
        return None
    tt = tp.tensor_type
    if not tt.HasField("shape"):
        return onnx_d.tensor_type(tt.elem_type, None)
    dims = [d.dim_value if d.HasField("dim_value") else -1 for d in tt.shape.dim]
    return onnx_d.tensor_type(tt.elem_type, dims)


class _Folder:
    """What one run of the pass knows: the constants read so far, the evaluator's cache and the
    weight store large results go to."""

    def __init__(self, store: WeightStore | None):
        self.values: dict[SSAValue, Const] = {}
        self.evaluator = _Evaluator()
        # where large results go: the module's weights file, or inline (a module without one)
        self.store = store
        self._taken: set[str] | None = None  # the store's keys, read when first needed

    # -- constants --------------------------------------------------------------------------

    def value(self, v: SSAValue) -> Const | None:
        """The value of ``v`` if an ``onnx.Constant`` defines it (read once, then cached)."""
        c = self.values.get(v)
        if c is None and isinstance(v.owner, _CONSTANT):
            c = self._read(v.owner)
            if c is not None:
                self.values[v] = c
        return c

    def _read(self, op: OnnxOp) -> Const | None:
        props = op.properties
        if "value" in props:
            attr = props["value"]
            if isinstance(attr, DenseIntOrFPElementsAttr):
                s = splat_value(attr)
                if s is not None:
                    return Const(tuple(attr.get_shape()), s.dtype, splat=s)
                return Const.of(numpy_from_dense(attr))
            arr = constant_value(attr, self.store)
            return None if arr is None else Const.of(arr)
        for name, dtype in (
            ("value_float", np.float32),
            ("value_floats", np.float32),
            ("value_int", np.int64),
            ("value_ints", np.int64),
        ):
            if name in props:
                return Const.of(np.array(onnx_d.python_from_attr(props[name]), dtype))
        return None  # strings, sparse tensors

    # -- folding ----------------------------------------------------------------------------

    def fold(self, op: OnnxOp, opset: int) -> list[Const | None] | None:
        """The values of ``op``'s results (``None`` for ``none`` results), or ``None``."""
        t = op.op_type
        if t == "Constant" or not op.results or fold_reason(t, opset) is not None:
            return None
        if t in onnx_d.REGION_ATTRS:
            return None  # If with a constant condition: see inline_if
        if t in ("Shape", "Size"):
            return self._fold_shape(op)
        inputs: list[Const | None] = []
        for v in op.operands:
            if isinstance(v.type, NoneType):
                inputs.append(None)
                continue
            if _large_resource(v):
                return None  # not even read: too large to evaluate
            c = self.value(v)
            if c is None:
                return None
            inputs.append(c)
        if t == "Pad" and self._negative_pads(op, inputs):
            return None  # onnx.reference rejects negative pads
        fast = self._fold_splats(op, inputs, opset)
        if fast is not None:
            return fast
        return self._evaluate(op, inputs, opset)

    def _fold_shape(self, op: OnnxOp) -> list[Const | None] | None:
        shape = static_shape(op.operands[0].type)
        if shape is None:
            return None
        if op.op_type == "Size":
            arr = np.array(math.prod(shape), np.int64)
        else:
            start, end = op.attr("start", 0), op.attr("end", None)
            arr = np.array(shape[start:end], np.int64)
        return [Const.of(arr)] if _compatible(arr, op.results[0].type) else None

    @staticmethod
    def _negative_pads(op: OnnxOp, inputs: Sequence[Const | None]) -> bool:
        pads = op.attr("pads")
        if pads is None and len(inputs) > 1 and inputs[1] is not None:
            pads = inputs[1].array().tolist()
        return any(p < 0 for p in pads or [])

    def _fold_splats(
        self, op: OnnxOp, inputs: Sequence[Const | None], opset: int
    ) -> list[Const | None] | None:
        """Splat results computed from one element, without materialising anything."""
        t = op.op_type
        if t == "ConstantOfShape":
            assert inputs[0] is not None
            dims = tuple(int(d) for d in inputs[0].array().reshape(-1))
            attr = op.properties.get("value")
            if isinstance(attr, DenseIntOrFPElementsAttr):
                value = numpy_from_dense(attr).reshape(-1)[0]
            else:
                value = np.float32(0)
            return [Const(dims, np.asarray(value).dtype, splat=np.asarray(value).reshape(()))]
        if len(op.results) != 1 or not inputs or inputs[0] is None:
            return None
        result = op.results[0]
        shape = static_shape(result.type)
        if shape is None:
            return None
        data = inputs[0]
        if t in DATA_MOVEMENT and data.splat is not None:
            if numpy_dtype_of(result.type.element_type) != data.dtype:  # type: ignore[attr-defined]
                return None
            return [Const(shape, data.dtype, splat=data.splat)]
        if has_trait(t, Elementwise) and any(c is not None and c.splat is not None for c in inputs):
            scalars = [None if c is None else c.scalar() for c in inputs]
            if any(c is not None and s is None for c, s in zip(inputs, scalars, strict=True)):
                return None
            tiny = [
                None if s is None else s.reshape((1,) * len(c.shape))  # type: ignore[union-attr]
                for c, s in zip(inputs, scalars, strict=True)
            ]
            out = self._run(op, tiny, opset)
            if out is None or out[0].size != 1:
                return None
            one = out[0].reshape(())
            if numpy_dtype_of(result.type.element_type) != one.dtype:  # type: ignore[attr-defined]
                return None
            return [Const(shape, one.dtype, splat=one)]
        return None

    def _run(
        self, op: OnnxOp, arrays: Sequence[np.ndarray | None], opset: int
    ) -> list[np.ndarray] | None:
        node = _node(op, opset, self.store)
        in_types = [0 if isinstance(v.type, NoneType) else _elem_type(v.type) for v in op.operands]
        try:
            return self.evaluator.run(node, in_types, opset, arrays)
        except Exception:  # the evaluator raises assorted errors on inputs it cannot handle
            return None

    def _evaluate(
        self, op: OnnxOp, inputs: Sequence[Const | None], opset: int
    ) -> list[Const | None] | None:
        if any(c is not None and c.size > MAX_EVAL_ELEMENTS for c in inputs):
            return None
        for r in op.results:
            shape = static_shape(r.type)
            if shape is not None and math.prod(shape) > MAX_EVAL_ELEMENTS:
                return None
        outs = self._run(op, [None if c is None else c.array() for c in inputs], opset)
        if outs is None:
            return None
        values: list[Const | None] = []
        it = iter(outs)
        for r in op.results:
            if isinstance(r.type, NoneType):
                values.append(None)
                continue
            arr = next(it, None)
            if arr is None or not _compatible(arr, r.type):
                return None
            values.append(Const.of(arr))
        return values

    def replace(
        self, op: OnnxOp, values: Sequence[Const | None], rewriter: PatternRewriter
    ) -> bool:
        """Replace ``op`` by constants; ``False`` (and no change) if large values are over the
        size budget (:func:`fits_budget`)."""
        attrs: list[DenseIntOrFPElementsAttr | DenseResourceAttr | None] = [
            None if c is None else c.attr() for c in values
        ]
        large = [
            i
            for i, (c, a) in enumerate(zip(values, attrs, strict=True))
            if c is not None and a is None
        ]
        if large:
            operands = [self.value(v) for v in op.operands if not isinstance(v.type, NoneType)]
            known = [c for c in operands if c is not None]
            big = [c for i in large if (c := values[i]) is not None]
            if len(known) != len(operands) or not fits_budget(big, known):
                return False
            for i, c in zip(large, big, strict=True):
                attrs[i] = self._weight(op.results[i], c)
        new_ops: list[Operation] = []
        new_results: list[SSAValue | None] = []
        for r, c, a in zip(op.results, values, attrs, strict=True):
            if c is None or a is None:
                new_results.append(None)  # a ``none`` result: it has no uses
                continue
            new = onnx_d.create("Constant", [], [a.get_type()], {"value": a}, op.node_name or None)
            new.location = op.location
            new.results[0].name_hint = r.name_hint
            self.values[new.results[0]] = c
            new_ops.append(new)
            new_results.append(new.results[0])
        rewriter.replace(op, new_ops, new_results)
        return True

    def _weight(self, result: SSAValue, c: Const) -> DenseIntOrFPElementsAttr | DenseResourceAttr:
        """A large folded value: a new tensor of the module's weight store, keyed after the
        result's name (inline ``dense`` when the module has no weights file)."""
        if self.store is None:
            return dense_from_numpy(c.array())
        if self._taken is None:
            self._taken = set(self.store.keys())
        owner = result.owner
        name = result.name_hint or (owner.node_name if isinstance(owner, OnnxOp) else "") or "c"
        key = resource_key(f"{name}_folded", self._taken)
        attr = value_attr(c.array(), key, self.store)
        assert isinstance(attr, DenseIntOrFPElementsAttr | DenseResourceAttr)
        return attr

    # -- types ------------------------------------------------------------------------------

    def refine(self, op: OnnxOp, opset: int, rewriter: PatternRewriter) -> None:
        """Re-infer the non-static result types of ``op`` with ONNX shape inference."""
        if all(
            isinstance(r.type, NoneType) or static_shape(r.type) is not None for r in op.results
        ):
            return
        if op.op_type == "Loop":
            self._refine_loop(op, rewriter)
            return
        if op.op_type in onnx_d.REGION_ATTRS:
            return
        schema = onnx.defs.get_schema(op.op_type, opset, "")
        try:
            node = _node(op, opset, self.store)
        except Exception:
            return
        types: dict[str, onnx.TypeProto] = {}
        data: dict[str, onnx.TensorProto] = {}
        for k, v in enumerate(op.operands):
            if isinstance(v.type, NoneType):
                continue
            types[f"i{k}"] = _type_proto(v.type)
            c = self.value(v)
            if c is not None and c.size <= 1024:
                data[f"i{k}"] = onnx.numpy_helper.from_array(c.array(), f"i{k}")
        try:
            inferred = onnx.shape_inference.infer_node_outputs(
                schema, node, types, data, opset_imports=[helper.make_opsetid("", opset)]
            )
        except Exception:  # InferenceError, or a type ONNX cannot express
            return
        for k, r in enumerate(op.results):
            tp = inferred.get(f"o{k}")
            new = None if tp is None else _ir_type(tp)
            if new is not None and _is_refinement(new, r.type):
                rewriter.replace_value_with_new_type(r, new)

    # -- control flow -----------------------------------------------------------------------

    def condition(self, op: OnnxOp) -> bool | None:
        """The value of an If's condition when it is a compile-time constant, else ``None``."""
        c = self.value(op.operands[0])
        if c is None:
            return None
        return bool(c.array().reshape(-1)[0])

    def trip_count(self, op: OnnxOp) -> int | None:
        """The number of iterations of a Loop when the compiler knows it
        (:func:`ramiel.dialects.onnx.loop_trip_count`)."""

        def const_of(v: SSAValue) -> np.ndarray | None:
            c = self.value(v)
            return None if c is None else c.array()

        return onnx_d.loop_trip_count(op, const_of)

    def _refine_loop(self, op: OnnxOp, rewriter: PatternRewriter) -> None:
        """Scan outputs of a Loop whose trip count is known get their static leading axis."""
        n = len(op.operands) - 2
        values = onnx_d.region_yield(op.regions[0]).values
        trips = self.trip_count(op)
        if trips is None:
            return
        for j, r in enumerate(list(op.results)[n:]):
            part = static_shape(values[1 + n + j].type)
            if part is None or static_shape(r.type) is not None:
                continue
            new = TensorType(r.type.element_type, [trips, *part])  # type: ignore[attr-defined]
            if _is_refinement(new, r.type):
                rewriter.replace_value_with_new_type(r, new)


def inline_if(op: OnnxOp, branch: bool, rewriter: PatternRewriter) -> None:
    """Replace the If ``op`` by the ops of its ``then_branch`` (``branch`` true) or
    ``else_branch``, its results by the values that branch yields; the other branch is erased
    with the If."""
    region = op.regions[0 if branch else 1]
    term = onnx_d.region_yield(region)
    rewriter.inline_block(region.block, InsertPoint.before(op))
    values: list[SSAValue | None] = []
    for r, v in zip(op.results, term.values, strict=True):
        if (
            _is_refinement(r.type, v.type)
            and not isinstance(v, BlockArgument)
            and not isinstance(v.owner, _CONSTANT)
        ):
            # the If's type is what both branches give: the taken one gives it too
            v = rewriter.replace_value_with_new_type(v, r.type)
        values.append(v)
    rewriter.erase(term)
    rewriter.replace(op, [], values, safe_erase=False)  # the other branch goes with it


class FoldConstantsPattern(RewritePattern):
    """``--constant-fold`` as one rewrite pattern on every ``onnx`` op (see
    :mod:`ramiel.passes.constant_fold` for the policy): an ``onnx.If`` with a constant condition
    is replaced by its taken branch; any other op first gets its non-static result types
    re-inferred, then is replaced by ``onnx.Constant`` ops if its results are known.

    Applied in one forward sweep in program order (:func:`fold_constants`), so a whole chain
    folds: each op is visited after the ops that define its operands. ``store``: the module's
    weights, which large folded results are added to (``None``: a module without a weights
    file, every constant inline)."""

    def __init__(self, store: WeightStore | None):
        self.folder = _Folder(store)
        self._opsets: dict[int, int] = {}  # id of a block -> the opset of its ops
        self.failure: Exception | None = None
        """The exception that stopped the rewrite (the walker would otherwise add the printed
        module to it as a note): :func:`fold_constants` raises it after the walk."""

    def _opset(self, op: OnnxOp) -> int:
        if has(op, OPSET_ATTR):
            return opset_of(op)  # an op of a later opset than the module's (a fused op)
        key = id(op.parent)
        opset = self._opsets.get(key)
        if opset is None:
            opset = self._opsets[key] = opset_of(op)
        return opset

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if self.failure is not None or not isinstance(op, OnnxOp) or op.parent is None:
            return
        try:
            self._rewrite(op, rewriter)
        except Exception as e:  # raised as it is by fold_constants, after the walk
            self.failure = e

    def _rewrite(self, op: OnnxOp, rewriter: PatternRewriter) -> None:
        opset = self._opset(op)
        if op.op_type == "If" and (branch := self.folder.condition(op)) is not None:
            inline_if(op, branch, rewriter)
            return
        self.folder.refine(op, opset, rewriter)
        values = self.folder.fold(op, opset)
        if values is not None:
            self.folder.replace(op, values, rewriter)


class SyncFunctionTypePattern(RewritePattern):
    """Give a ``func.func`` the result types its ``func.return`` now returns, where they refine
    the declared ones (after type refinement; ``FuncOp.update_function_type``)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, fn: func.FuncOp, rewriter: PatternRewriter) -> None:
        last = fn.body.blocks.last
        ret = last.last_op if last is not None else None
        if not isinstance(ret, func.ReturnOp):
            return
        outs = [v.type for v in ret.operands]
        old = list(fn.function_type.outputs.data)
        if outs != old and all(
            n == o or _is_refinement(n, o) for n, o in zip(outs, old, strict=True)
        ):
            fn.update_function_type()
            rewriter.notify_op_modified(fn)


def fold_constants(module: ModuleOp, store: WeightStore | None) -> None:
    """Run ``--constant-fold`` on ``module`` (see :mod:`ramiel.passes.constant_fold`):
    :class:`FoldConstantsPattern` in one forward sweep in program order (regions after their
    op, nothing revisited), then :class:`SyncFunctionTypePattern` on every function. ``store``:
    the module's weights (:meth:`ramiel.weights.WeightStores.of`; ``None`` for a module that
    names no weights file), which large folded results are added to."""
    fold = FoldConstantsPattern(store)
    PatternRewriteWalker(fold, apply_recursively=False).rewrite_module(module)
    if fold.failure is not None:
        raise fold.failure
    PatternRewriteWalker(SyncFunctionTypePattern(), apply_recursively=False).rewrite_module(module)
