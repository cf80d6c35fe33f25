"""Lowering of ``onnx.If``, ``onnx.Loop`` and ``onnx.Scan`` to ``torchpy`` compound statements.

Unlike the per-op rules of the other modules (one ONNX node -> a few calls), a control-flow op
holds other ops: ``--lower-to-torchpy`` calls :func:`lower_region_op`, which lowers the ops of
each region into the block of a ``torchpy.if``/``torchpy.for``/``torchpy.while`` with the same
machinery as the enclosing function (so a body reads outer values directly, as ONNX's subgraphs
read outer-scope names). What the generated Python looks like::

    if bool(c):  # branch (If)
        ...then_branch...
        y = t
    else:
        ...else_branch...
        y = e

    acc = acc0                       # Loop: carried values, then a for loop over the trip count
    scan = []
    for i in range(5):  # loop (Loop)
        iter_count = torch.tensor(i)  # only if the body reads iteration_num
        ...body...
        scan.append(scan_out)
        acc = acc_out
    res_scan = torch.stack(scan)

A Loop that may stop early (its condition is computed in the body) becomes ``keep_going =
bool(cond); i = 0; while keep_going and i < M: ...; keep_going = bool(cond_out); i += 1``. A Scan
is a ``for t in range(T)`` over its scanned axis (``xs.select(axis, t)``, ``T - 1 - t`` for a
reverse direction), its scan outputs stacked on their output axis; Scan-8's batch axis is an
outer loop.

Semantics: ONNX If/Loop/Scan (https://onnx.ai/onnx/operators/onnx__Loop.html ...).
:func:`check_region_op` says why an op cannot be lowered (scan outputs whose length the data
decide, a Loop that never ends, Scan-8's ``sequence_lens``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.dialects.builtin import IntegerAttr, NoneType, UnitAttr
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from ramiel.attrs import NODE_NAME_ATTR, set_str
from ramiel.dialects import torchpy as tp
from ramiel.dialects.onnx import (
    OnnxOp,
    loop_trip_count,
    opset_of,
    region_yield,
    static_shape,
)
from ramiel.dtypes import numpy_dtype_of
from ramiel.lowering.api import Dtype

INT64_MAX = 2**63 - 1


def _const(lowering: Any, v: SSAValue) -> np.ndarray | None:
    if isinstance(v.type, NoneType):
        return None
    info = lowering.tensor_info(v)
    return None if info is None else info.const


def _true(lowering: Any, v: SSAValue) -> bool:
    c = _const(lowering, v)
    return c is not None and bool(np.asarray(c).reshape(-1)[0])


def trip_count(lowering: Any, op: OnnxOp) -> int | None:
    """The trip count of a Loop the compiler knows (:func:`~ramiel.dialects.onnx.loop_trip_count`):
    then it prints as ``for i in range(n):``."""
    return loop_trip_count(op, lambda v: _const(lowering, v))


def loop_runs_to_the_end(lowering: Any, op: OnnxOp) -> bool:
    """Does a Loop run all ``M`` iterations? Its ``cond`` is absent or a constant true, and its
    body yields a constant true or passes its ``cond`` argument on (through Identity ops)."""
    cond = op.operands[1]
    if not isinstance(cond.type, NoneType) and not _true(lowering, cond):
        return False
    out = region_yield(op.regions[0]).values[0]
    while isinstance(out.owner, OnnxOp) and out.owner.op_type == "Identity":
        out = out.owner.operands[0]
    return out is op.regions[0].block.args[1] or _true(lowering, out)


def _cond_chain(op: OnnxOp) -> set[Operation]:
    """The ops that only compute the condition a Loop body yields (the Identity ops passing its
    ``cond`` on, a counter's ``Less``): a for loop does not need them."""
    out = region_yield(op.regions[0]).values[0]
    chain: set[Operation] = set()
    while isinstance(out.owner, OnnxOp) and out.has_one_use():
        owner = out.owner
        if owner.op_type == "Identity":
            chain.add(owner)
            out = owner.operands[0]
        elif owner.op_type == "Less":
            chain.add(owner)
            break
        else:
            break
    return chain


def check_region_op(lowering: Any, op: OnnxOp) -> str | None:
    """Why the control-flow ``op`` cannot be lowered, or ``None``."""
    if op.op_type == "If":
        then_v, else_v = (region_yield(r).values for r in op.regions)
        for i, (r, a, b) in enumerate(zip(op.results, then_v, else_v, strict=True)):
            sa, sb = static_shape(a.type), static_shape(b.type)
            if static_shape(r.type) is None and sa is not None and sb is not None and sa != sb:
                return (
                    f"output {i} has shape {list(sa)} in then_branch and {list(sb)} in "
                    "else_branch: its shape would depend on the condition, and Ramiel compiles "
                    "static shapes"
                )
    if op.op_type == "Loop":
        m = op.operands[0]
        if isinstance(m.type, NoneType) and isinstance(op.operands[1].type, NoneType):
            return "a Loop with neither M nor cond never ends"
        n = len(op.operands) - 2
        for r in list(op.results)[n:]:
            if static_shape(r.type) is not None:
                continue
            if _const(lowering, m) is None:
                return (
                    "the trip count M (input 0) must be a compile-time constant: it decides the "
                    "length of the scan outputs"
                )
            return (
                "the loop may stop early (its condition is computed), so the length of its scan "
                "outputs depends on the data"
            )
    if op.op_type == "Scan":
        if opset_of(op) < 9 and not isinstance(op.operands[0].type, NoneType):
            return "sequence_lens of Scan-8 (a length per batch entry) is not supported"
        m = op.attr("num_scan_inputs", 0)
        for v in list(op.operands)[len(op.operands) - m :]:
            if static_shape(v.type) is None:
                return "the scanned inputs need static shapes (the scan length)"
    return None


class _Ctx:
    """What :func:`lower_region_op` needs of the lowering pass."""

    def __init__(
        self,
        lowering: Any,
        value: Callable[[SSAValue], Any],
        env: dict[SSAValue, Any],
        lower_block: Callable[[list[Operation], Any], None],
    ):
        self.lowering = lowering
        self.value = value
        self.env = env
        self.lower_block = lower_block

    def get(self, fb: Any, v: SSAValue) -> SSAValue:
        return fb.materialize(self.value(v))


def lower_region_op(
    lowering: Any,
    op: OnnxOp,
    fb: Any,
    value: Callable[[SSAValue], Any],
    env: dict[SSAValue, Any],
    lower_block: Callable[[list[Operation], Any], None],
) -> list[SSAValue]:
    """Emit the torchpy for the control-flow ``op`` into the builder ``fb``; returns one value
    per result. ``value`` maps onnx values to torchpy ones, ``env`` is where block arguments of
    the regions are bound, ``lower_block(ops, builder)`` lowers a region's ops."""
    ctx = _Ctx(lowering, value, env, lower_block)
    if op.op_type == "If":
        outs = _lower_if(ctx, op, fb)
    elif op.op_type == "Loop":
        outs = _lower_loop(ctx, op, fb)
    elif opset_of(op) >= 9:
        outs = _lower_scan(ctx, op, fb)
    else:
        outs = _lower_scan8(ctx, op, fb)
    return outs


def _name(op: Operation, onnx_op: OnnxOp) -> None:
    set_str(
        op,
        NODE_NAME_ATTR,
        f"{onnx_op.node_name} ({onnx_op.op_type})" if onnx_op.node_name else onnx_op.op_type,
    )


def _hint(values: Any, onnx_values: Any, body_args: Any = None) -> None:
    """Name ``values`` after ``onnx_values``; a loop's carried value after its body argument
    when the result's own name is only the exporter's (``/Loop_output_0``: ``Loop``)."""
    for k, (v, o) in enumerate(zip(values, onnx_values, strict=True)):
        hint = o.name_hint
        owner = o.owner
        generic = isinstance(owner, OnnxOp) and re.fullmatch(rf"{owner.op_type}(_\d+)?", hint or "")
        if body_args is not None and (hint is None or generic) and body_args[k].name_hint:
            hint = body_args[k].name_hint
        v.name_hint = hint


def _lower_if(ctx: _Ctx, op: OnnxOp, fb: Any) -> list[SSAValue]:
    cond = ctx.get(fb, op.operands[0])
    blocks = []
    for region in op.regions:
        block = Block()
        child = fb.child(block)
        ctx.lower_block(list(region.block.ops), child)
        block.add_op(tp.YieldOp([ctx.get(child, v) for v in region_yield(region).values]))
        blocks.append(block)
    new = tp.IfOp(cond, [r.type for r in op.results], blocks[0], blocks[1])
    _name(new, op)
    _hint(new.outs, op.results)
    fb.block.add_op(new)
    return list(new.outs)


def _accumulators(fb: Any, k: int, hints: list[str | None]) -> list[SSAValue]:
    accs = []
    for j in range(k):
        acc = fb.call("list")
        acc.name_hint = f"{hints[j] or 'scan'}_steps"
        accs.append(acc)
    return accs


def _append(block: Block, acc: SSAValue, v: SSAValue) -> None:
    block.add_op(tp.MethodOp("append", [acc, v], [1], None, []))


def _stack(
    fb: Any,
    acc: SSAValue,
    axis: int,
    reverse: bool,
    hint: str | None,
    empty: Attribute | None = None,
) -> SSAValue:
    """The scan output stacked from the steps in ``acc``; ``empty``: the result's type where the
    loop may run no iteration (``ops.stack_steps`` then gives the empty tensor)."""
    items: Any = acc
    if reverse:
        items = fb.call("operator.getitem", acc, slice(None, None, -1))
    shape = static_shape(empty) if empty is not None else None
    if shape is not None:
        assert empty is not None
        zero = tuple(0 if i == axis else int(d) for i, d in enumerate(shape))
        kind = Dtype(numpy_dtype_of(empty.element_type).name)  # type: ignore[attr-defined]
        out = fb.call("ops.stack_steps", items, zero, kind, *([axis] if axis else []))
    else:
        out = fb.call("torch.stack", items, axis) if axis else fb.call("torch.stack", items)
    out.name_hint = hint
    return out


def _lower_loop(ctx: _Ctx, op: OnnxOp, fb: Any) -> list[SSAValue]:
    lowering = ctx.lowering
    m_v, cond_v = op.operands[0], op.operands[1]
    inits_onnx = list(op.operands[2:])
    n = len(inits_onnx)
    body = op.regions[0].block
    yields = region_yield(op.regions[0]).values
    k = len(op.results) - n
    scan_results = list(op.results)[n:]
    accs = _accumulators(fb, k, [r.name_hint for r in scan_results])
    inits = [ctx.get(fb, v) for v in inits_onnx]
    trips = trip_count(lowering, op)
    m = _const(lowering, m_v)
    for_form = trips is not None or (
        loop_runs_to_the_end(lowering, op) and not isinstance(m_v.type, NoneType)
    )
    carried_types = [r.type for r in op.results[:n]]
    block = Block(arg_types=[tp.ObjectType(), *carried_types])
    index = block.args[0]
    index.name_hint = "i"
    child = fb.child(block)
    # a for loop ignores the condition the body yields: drop the Identity ops passing it on
    skip = _cond_chain(op) if for_form else set()
    # the body's arguments: iteration_num as a tensor (if read), cond (true inside), carried
    if body.args[0].uses:
        it = child.call("torch.tensor", index)
        it.name_hint = body.args[0].name_hint or "iteration"
        ctx.env[body.args[0]] = it
    term = region_yield(op.regions[0])
    ignored = {(o, 0) for o in skip} | ({(term, 0)} if for_form else set())
    if any((u.operation, u.index) not in ignored for u in body.args[1].uses):
        cond_arg = child.call("torch.tensor", True)  # the loop only runs while it is true
        cond_arg.name_hint = body.args[1].name_hint or "cond"
        ctx.env[body.args[1]] = cond_arg
    for arg, carried in zip(body.args[2:], block.args[1:], strict=True):
        carried.name_hint = arg.name_hint
        ctx.env[arg] = carried
    ctx.lower_block([o for o in body.ops if o not in skip], child)
    for acc, v in zip(accs, yields[1 + n :], strict=True):
        _append(block, acc, ctx.get(child, v))
    nexts = [ctx.get(child, v) for v in yields[1 : 1 + n]]
    if for_form:
        block.add_op(tp.YieldOp(nexts))
        props: dict[str, Attribute] = {}
        operands: list[SSAValue] = []
        if trips is not None:
            props["count"] = IntegerAttr(trips, 64)
        else:  # runs M times, M known at run time only
            operands.append(ctx.get(fb, m_v))
        new: Operation = tp.ForOp.create(
            operands=[*operands, *inits],
            result_types=carried_types,
            properties=props,
            regions=[_region(block)],
        )
    else:
        block.add_op(tp.YieldOp([ctx.get(child, yields[0]), *nexts]))
        if isinstance(cond_v.type, NoneType):
            start = fb.call("torch.tensor", True)
        else:
            start = ctx.get(fb, cond_v)
        bounded = not isinstance(m_v.type, NoneType) and (
            m is None or int(np.asarray(m).reshape(-1)[0]) < INT64_MAX
        )
        operands = [start] + ([ctx.get(fb, m_v)] if bounded else [])
        new = tp.WhileOp.create(
            operands=[*operands, *inits],
            result_types=carried_types,
            properties={"bounded": UnitAttr()} if bounded else {},
            regions=[_region(block)],
        )
    _name(new, op)
    _hint(new.results, op.results[:n], body.args[2:])
    fb.block.add_op(new)
    may_be_empty = trips is None or trips == 0  # M or the condition known at run time only
    stacked = [
        _stack(fb, acc, 0, False, r.name_hint, r.type if may_be_empty else None)
        for acc, r in zip(accs, scan_results, strict=True)
    ]
    return [*new.results, *stacked]


def _region(block: Block):  # type: ignore[no-untyped-def]

    return Region(block)


def _scan_loop(
    ctx: _Ctx,
    op: OnnxOp,
    fb: Any,
    states: list[SSAValue],
    scans: list[SSAValue],
    lengths: int,
    in_axes: list[int],
    in_reverse: list[bool],
    state_types: list[Attribute],
) -> tuple[list[SSAValue], list[SSAValue]]:
    """``for t in range(lengths)`` over the scanned inputs ``scans``; returns the final states
    and the per-step lists of the scan outputs."""
    body = op.regions[0].block
    yields = region_yield(op.regions[0]).values
    n = len(states)
    k = len(yields) - n
    accs = _accumulators(fb, k, [r.name_hint for r in list(op.results)[n:]])
    block = Block(arg_types=[tp.ObjectType(), *state_types])
    t = block.args[0]
    t.name_hint = "t"
    child = fb.child(block)
    for arg, carried in zip(body.args[:n], block.args[1:], strict=True):
        carried.name_hint = arg.name_hint
        ctx.env[arg] = carried
    for j, (arg, xs) in enumerate(zip(body.args[n:], scans, strict=True)):
        idx: Any = t
        if in_reverse[j]:
            idx = child.call("operator.sub", lengths - 1, t)
            idx.name_hint = "t_reversed"
        if in_axes[j] == 0:
            part = child.call("operator.getitem", xs, idx)
        else:
            part = child.method(xs, "select", in_axes[j], idx)
        part.name_hint = arg.name_hint
        ctx.env[arg] = part
    ctx.lower_block(list(body.ops), child)
    for acc, v in zip(accs, yields[n:], strict=True):
        _append(block, acc, ctx.get(child, v))
    block.add_op(tp.YieldOp([ctx.get(child, v) for v in yields[:n]]))
    new = tp.ForOp.create(
        operands=states,
        result_types=state_types,
        properties={"count": IntegerAttr(lengths, 64)},
        regions=[_region(block)],
    )
    _name(new, op)
    fb.block.add_op(new)
    return list(new.results), accs


def _axes(op: OnnxOp, name: str, count: int, ranks: list[int]) -> list[int]:
    axes = op.attr(name) or [0] * count
    return [a % r if r else 0 for a, r in zip(axes, ranks, strict=True)]


def _lower_scan(ctx: _Ctx, op: OnnxOp, fb: Any) -> list[SSAValue]:
    m = op.attr("num_scan_inputs")
    n = len(op.operands) - m
    states = [ctx.get(fb, v) for v in op.operands[:n]]
    scans_onnx = list(op.operands[n:])
    scans = [ctx.get(fb, v) for v in scans_onnx]
    ranks = [len(static_shape(v.type) or ()) for v in scans_onnx]
    in_axes = _axes(op, "scan_input_axes", m, ranks)
    length = static_shape(scans_onnx[0].type)[in_axes[0]]  # type: ignore[index]
    in_rev = [bool(d) for d in (op.attr("scan_input_directions") or [0] * m)]
    finals, accs = _scan_loop(
        ctx, op, fb, states, scans, length, in_axes, in_rev, [r.type for r in op.results[:n]]
    )
    _hint(finals, op.results[:n], op.regions[0].block.args[:n])
    outs = list(op.results)[n:]
    k = len(outs)
    out_ranks = [len(static_shape(r.type) or ()) for r in outs]
    out_axes = _axes(op, "scan_output_axes", k, out_ranks)
    out_rev = [bool(d) for d in (op.attr("scan_output_directions") or [0] * k)]
    stacked = [
        _stack(fb, acc, axis, rev, r.name_hint)
        for acc, axis, rev, r in zip(accs, out_axes, out_rev, outs, strict=True)
    ]
    return [*finals, *stacked]


def _lower_scan8(ctx: _Ctx, op: OnnxOp, fb: Any) -> list[SSAValue]:
    """Scan-8: every value has a leading batch axis; one scan per batch entry (an outer loop),
    scanned axis 1, ``directions`` for the scanned inputs."""
    m = op.attr("num_scan_inputs")
    n = len(op.operands) - 1 - m
    states_onnx = list(op.operands[1 : 1 + n])
    scans_onnx = list(op.operands[1 + n :])
    batch = static_shape(scans_onnx[0].type)[0]  # type: ignore[index]
    length = static_shape(scans_onnx[0].type)[1]  # type: ignore[index]
    states = [ctx.get(fb, v) for v in states_onnx]
    scans = [ctx.get(fb, v) for v in scans_onnx]
    rev = [bool(d) for d in (op.attr("directions") or [0] * m)]
    body = op.regions[0].block
    n_out = len(op.results)
    per_batch = _accumulators(fb, n_out, [r.name_hint for r in op.results])
    block = Block(arg_types=[tp.ObjectType()])
    b = block.args[0]
    b.name_hint = "b"
    child = fb.child(block)
    state_b = [child.call("operator.getitem", s, b) for s in states]
    scan_b = [child.call("operator.getitem", x, b) for x in scans]
    for v, o in zip([*state_b, *scan_b], [*states_onnx, *scans_onnx], strict=True):
        v.name_hint = f"{o.name_hint or 'x'}_b"
    finals, accs = _scan_loop(
        ctx,
        op,
        child,
        state_b,
        scan_b,
        length,
        [0] * m,
        rev,
        [a.type for a in body.args[:n]],
    )
    for acc, v in zip(per_batch[:n], finals, strict=True):
        _append(block, acc, v)
    for acc, steps in zip(per_batch[n:], accs, strict=True):
        _append(block, acc, child.call("torch.stack", steps))
    block.add_op(tp.YieldOp([]))
    loop = tp.ForOp.create(
        operands=[], result_types=[], properties={"count": IntegerAttr(batch, 64)},
        regions=[_region(block)],
    )  # fmt: skip
    set_str(loop, NODE_NAME_ATTR, f"{op.node_name or 'Scan'}: batch")
    fb.block.add_op(loop)
    return [
        _stack(fb, acc, 0, False, r.name_hint) for acc, r in zip(per_batch, op.results, strict=True)
    ]


__all__ = ["check_region_op", "loop_runs_to_the_end", "lower_region_op"]
