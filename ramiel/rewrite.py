"""Helpers of the graph-level rewrites on the ``onnx`` dialect (folding and fusion passes).

* :func:`constant_array` reads the value of an ``onnx.Constant`` (inline or external weight);
  :class:`ConstantMaker` creates new ones, storing a large result in the module's weight store
  (the pass's ``ctx`` holds it: :func:`ramiel.context.module_store`) as ``--constant-fold`` does, so ``ramiel compile`` and
  ``ramiel-opt`` save it with the other weights.
* A small pattern language (:class:`Var`, :class:`Const`, :class:`Op`, :class:`OneOf`) matches
  an expression DAG rooted at a value, with commutative operands and consistent variable
  bindings; :func:`match` returns the matched ops, and :func:`is_closed` checks the rewrite's
  standard precondition: every matched op but the root is read only inside the match, and all
  matched ops are in the root's block (a pattern never crosses a region boundary).

Patterns see through nothing: each ``Op`` node is exactly one ONNX op whose result 0 is the
matched value. Attribute checks are callables on the op (``check=``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects.builtin import ModuleOp, NoneType
from xdsl.ir import Attribute, Operation, SSAValue

from ramiel.attrs import OPSET_ATTR, set_int
from ramiel.dialects import onnx as onnx_d
from ramiel.dialects.onnx import OnnxOp, opset_of, python_from_attr, static_shape
from ramiel.weights import (
    WeightStore,
    constant_value,
    dense_splat,
    resource_key,
    value_attr,
)

__all__ = [
    "Const",
    "all_finite",
    "is_splat_view",
    "ConstantMaker",
    "Match",
    "OneOf",
    "Op",
    "Pattern",
    "Var",
    "constant_array",
    "create_op",
    "erase_dead",
    "is_closed",
    "match",
    "scalar",
    "sole_user",
]

_CONSTANT_FORMS = (
    ("value_float", np.float32),
    ("value_floats", np.float32),
    ("value_int", np.int64),
    ("value_ints", np.int64),
)


def constant_array(v: SSAValue, store: WeightStore | None) -> np.ndarray | None:
    """The value of ``v`` if an ``onnx.Constant`` defines it (a splat is a read-only broadcast
    view), else ``None`` (also for string and sparse constants); ``store``: the module's weights
    (:meth:`ramiel.weights.WeightStores.of`, ``None`` if it names no weights file)."""
    op = v.owner
    if not isinstance(op, OnnxOp) or op.op_type != "Constant":
        return None
    props = op.properties
    if "value" in props:
        return constant_value(props["value"], store)
    for name, dtype in _CONSTANT_FORMS:
        if name in props:
            return np.array(python_from_attr(props[name]), dtype)
    return None


def is_splat_view(arr: np.ndarray) -> bool:
    """Whether ``arr`` is a broadcast view of one element (how :func:`constant_array` returns a
    splat ``dense<v>`` of any size: all strides 0)."""
    return arr.ndim > 0 and all(st == 0 for st in arr.strides)


def all_finite(arr: np.ndarray) -> bool:
    """Whether every element of ``arr`` is finite (one element read for a splat view)."""
    if is_splat_view(arr):
        arr = arr[(0,) * arr.ndim]
    return bool(np.all(np.isfinite(np.asarray(arr, np.float64))))


def scalar(arr: np.ndarray | None) -> float | None:
    """The one element of a one-element array as a Python float, else ``None``."""
    if arr is None or arr.size != 1 or arr.dtype.kind not in "fiu":
        return None
    return float(arr.reshape(-1)[0])


def sole_user(v: SSAValue) -> Operation | None:
    """The only op that uses ``v`` (once or several times), or ``None``."""
    users = {id(u.operation): u.operation for u in v.uses}
    return next(iter(users.values())) if len(users) == 1 else None


def create_op(
    op_type: str,
    operands: Sequence[SSAValue],
    result_types: Sequence[Attribute],
    attrs: dict[str, Attribute] | None,
    like: OnnxOp,
    since: int | None = None,
) -> OnnxOp:
    """``onnx.<op_type>`` with ``like``'s node name and location; with ``since`` (the opset that
    defines the op) it carries its own ``onnx.opset`` when the module's opset is older."""
    new = onnx_d.create(op_type, operands, result_types, attrs, like.node_name or None)
    new.location = like.location
    if since is not None and opset_of(like) < since:
        set_int(new, OPSET_ATTR, since)
    return new


class ConstantMaker:
    """Creates ``onnx.Constant`` ops for the new values of a rewrite of ``module``.

    Small tensors (at most :data:`ramiel.weights.INLINE_LIMIT` elements) and splats are inline
    ``dense``; larger ones become ``dense_resource`` tensors of the module's weight store, keyed
    after ``name`` (made unique), or inline when the module has no weights file (``store``:
    the module's, :meth:`ramiel.weights.WeightStores.of`; ``None`` then).
    """

    def __init__(self, module: ModuleOp, store: WeightStore | None):
        self.module = module
        self.store = store
        self._taken: set[str] | None = None

    def attr(self, arr: np.ndarray, name: str) -> Attribute:
        """The ``value`` attribute for ``arr`` (see the class docstring); a broadcast view of one
        element (:func:`is_splat_view`) is stored as that element, never materialised."""
        if is_splat_view(arr) and arr.size > 1:
            return dense_splat(arr[(0,) * arr.ndim], arr.shape)
        if self.store is None:
            return value_attr(arr, name, None)
        if self._taken is None:
            self._taken = set(self.store.keys())
        flat = arr.reshape(-1)
        if arr.size <= 16 or (flat.size > 0 and bool(np.all(flat == flat[0]))):
            return value_attr(arr, name, None)
        return value_attr(arr, resource_key(name, self._taken), self.store)

    def make(self, arr: np.ndarray, name: str, before: Operation) -> SSAValue:
        """A new ``onnx.Constant`` holding ``arr``, inserted before ``before``; its result's name
        hint is ``name``."""
        attr = self.attr(np.asarray(arr), name)
        new = onnx_d.create("Constant", [], [attr.get_type()], {"value": attr})  # type: ignore[attr-defined]
        new.location = before.location
        block = before.parent
        assert block is not None
        block.insert_op_before(new, before)
        new.results[0].name_hint = name
        return new.results[0]


# ---------------------------------------------------------------------------------------------
# Patterns
# ---------------------------------------------------------------------------------------------


class Pattern:
    """A node of a pattern (see the module docstring)."""


@dataclass(frozen=True)
class Var(Pattern):
    """Any value; the same name must bind the same value everywhere in one match."""

    name: str


@dataclass(frozen=True)
class Const(Pattern):
    """A value defined by an ``onnx.Constant`` whose array satisfies ``pred`` (any constant if
    ``None``); bound under ``name`` (value and array) when given."""

    name: str | None = None
    pred: Callable[[np.ndarray], bool] | None = None


@dataclass(frozen=True)
class Op(Pattern):
    """Result 0 of one ``onnx.<op_type>`` op with exactly these operands (a trailing ``none``
    operand counts as absent); ``commutative`` also tries the two operands swapped; ``check``
    must accept the op; bound under ``name`` (the op) when given."""

    op_type: str
    operands: tuple[Pattern, ...]
    commutative: bool = False
    check: Callable[[OnnxOp], bool] | None = None
    name: str | None = None


@dataclass(frozen=True)
class OneOf(Pattern):
    """The first alternative that matches (in order)."""

    options: tuple[Pattern, ...]


@dataclass
class Match:
    """One match: ``values`` and ``arrays`` by variable/constant name, ``ops`` by op name, and
    every matched op (root first)."""

    values: dict[str, SSAValue] = field(default_factory=dict)
    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    ops: dict[str, OnnxOp] = field(default_factory=dict)
    matched: list[OnnxOp] = field(default_factory=list)

    def copy(self) -> Match:
        return Match(dict(self.values), dict(self.arrays), dict(self.ops), list(self.matched))


def _real_operands(op: Operation) -> list[SSAValue]:
    ops = list(op.operands)
    while ops and isinstance(ops[-1].type, NoneType):
        ops.pop()
    return ops


def _match(p: Pattern, v: SSAValue, m: Match, store: WeightStore | None) -> Iterator[Match]:
    if isinstance(p, Var):
        bound = m.values.get(p.name)
        if bound is None:
            m2 = m.copy()
            m2.values[p.name] = v
            yield m2
        elif bound is v:
            yield m
        return
    if isinstance(p, Const):
        arr = constant_array(v, store)
        if arr is None or (p.pred is not None and not p.pred(arr)):
            return
        if p.name is None:
            yield m
            return
        bound = m.values.get(p.name)
        if bound is not None and bound is not v:
            return
        m2 = m.copy()
        m2.values[p.name] = v
        m2.arrays[p.name] = arr
        yield m2
        return
    if isinstance(p, OneOf):
        for q in p.options:
            yield from _match(q, v, m, store)
        return
    assert isinstance(p, Op)
    op = v.owner
    if not isinstance(op, OnnxOp) or op.op_type != p.op_type or op.results[0] is not v:
        return
    if p.check is not None and not p.check(op):
        return
    operands = _real_operands(op)
    if len(operands) != len(p.operands):
        return
    orders = [list(p.operands)]
    if p.commutative and len(p.operands) == 2:
        orders.append(list(reversed(p.operands)))
    for order in orders:
        base = m.copy()
        if op not in base.matched:
            base.matched.append(op)
        if p.name is not None:
            if p.name in base.ops and base.ops[p.name] is not op:
                continue
            base.ops[p.name] = op
        yield from _match_all(order, operands, base, store)


def _match_all(
    ps: list[Pattern], vs: list[SSAValue], m: Match, store: WeightStore | None
) -> Iterator[Match]:
    if not ps:
        yield m
        return
    for m2 in _match(ps[0], vs[0], m, store):
        yield from _match_all(ps[1:], vs[1:], m2, store)


def match(
    p: Pattern,
    v: SSAValue,
    store: WeightStore | None,
    accept: Callable[[Match], bool] | None = None,
) -> Match | None:
    """The first match of ``p`` at ``v`` that ``accept`` takes (default: :func:`is_closed`);
    ``store``: the module's weights, which :class:`Const` nodes read (``None``: it names none)."""
    accept = accept or is_closed
    for m in _match(p, v, Match(), store):
        if accept(m):
            return m
    return None


def is_closed(m: Match) -> bool:
    """Whether every matched op but the root is used only by matched ops, and every matched op
    is in the root's block."""
    if not m.matched:
        return False
    root = m.matched[0]
    inside = {id(o) for o in m.matched}
    for op in m.matched:
        if op.parent is not root.parent:
            return False
        if op is root:
            continue
        for r in op.results:
            if any(id(u.operation) not in inside for u in r.uses):
                return False
    return True


def shape_of(v: SSAValue) -> tuple[int, ...] | None:
    """The static shape of ``v``'s type, or ``None``."""
    return static_shape(v.type)


def replace_root(root: OnnxOp, new_value: SSAValue, matched: Sequence[Operation]) -> None:
    """Replace the uses of ``root``'s result by ``new_value`` and erase the matched ops (root
    first, so every op's users are gone before it is erased)."""
    new_value.name_hint = root.results[0].name_hint
    root.results[0].replace_all_uses_with(new_value)
    erase_dead(matched)


def erase_dead(ops: Sequence[Operation]) -> None:
    """Erase those of ``ops`` that are (or become, as others are erased) unused."""
    left = [op for op in ops if op.parent is not None]
    progress = True
    while progress:
        progress = False
        for op in list(left):
            if all(not r.uses for r in op.results):
                assert op.parent is not None
                op.parent.erase_op(op)
                left.remove(op)
                progress = True
