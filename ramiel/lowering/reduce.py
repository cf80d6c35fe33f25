"""ONNX reductions: ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare.

``axes`` is an attribute before opset 13 (ReduceSum) / 18 (the others) and a constant input
afterwards; with no axes every axis is reduced, unless ``noop_with_empty_axes=1``, which makes the
op an identity. ``keepdims`` (default 1) keeps reduced axes as size 1. Reducing over an empty axis
gives the reduction's identity element (0 for sums, 1 for products, -inf for max and log-sums,
+inf for min), per the spec's empty-set rules.
"""

from __future__ import annotations

from ramiel.lowering.api import NodeView, is_float, is_int, rule
from ramiel.lowering.common import (
    const,
    const_ints,
    dtype,
    has_input,
    in_dtype,
    known,
    norm_axis,
    rank,
    shape,
)

_AXES_INPUT_SINCE = {"ReduceSum": 13}

_REDUCE_OPS = (
    "ReduceSum",
    "ReduceMean",
    "ReduceMax",
    "ReduceMin",
    "ReduceProd",
    "ReduceL1",
    "ReduceL2",
    "ReduceLogSum",
    "ReduceLogSumExp",
    "ReduceSumSquare",
)


def _raw_axes(node: NodeView) -> list[int] | None:
    since = _AXES_INPUT_SINCE.get(node.op_type, 18)
    if node.opset < since:
        a = node.attrs.get("axes")
        return None if a is None else list(a)
    return const_ints(node, 1)


def _check_reduce(node: NodeView) -> str | None:
    since = _AXES_INPUT_SINCE.get(node.op_type, 18)
    if node.opset >= since and has_input(node, 1) and const(node, 1) is None:
        return "axes (input 1) must be a compile-time constant"
    if rank(node, 0) is None:
        return "the rank of the input is unknown"
    return None


def _empty_value(op: str, dt: str) -> float | int | bool:
    if dt == "bool":
        return op in ("ReduceProd", "ReduceMin")
    if op in ("ReduceProd",):
        return 1
    if op in ("ReduceMax", "ReduceLogSum", "ReduceLogSumExp"):
        if is_int(dt):
            return {"uint8": 0, "int8": -128, "int32": -(2**31), "int64": -(2**63)}.get(dt, 0)
        return float("-inf")
    if op == "ReduceMin":
        if is_int(dt):
            big = {"uint8": 255, "int8": 127, "int32": 2**31 - 1, "int64": 2**63 - 1}
            return big.get(dt, 0)
        return float("inf")
    if op == "ReduceMean":
        return float("nan")
    return 0


@rule(*_REDUCE_OPS, check=_check_reduce)
def _reduce(node: NodeView, args, em):
    """Reduce* over the static ``axes`` (see the module docstring)."""
    op = node.op_type
    x = args[0]
    r = known(rank(node, 0), node, "the input rank")
    axes = _raw_axes(node)
    noop = bool(node.attrs.get("noop_with_empty_axes", 0) or 0)
    if not axes:
        if noop:
            return [x]
        axes = list(range(r))
    axes = sorted({norm_axis(a, r) for a in axes})
    keep = bool(node.attrs.get("keepdims", 1))
    dt = in_dtype(node)
    xs = shape(node, 0)
    if xs is not None and any(xs[a] == 0 for a in axes):
        out = tuple((1 if keep else None) if i in axes else d for i, d in enumerate(xs))
        out = tuple(d for d in out if d is not None)
        return [em.call("torch.full", out, _empty_value(op, dt), dtype=dtype(dt))]
    dim = axes[0] if len(axes) == 1 else tuple(axes)
    # torch sums/products of small integer types promote to int64; ONNX keeps the type
    kw = {"dtype": dtype(dt)} if is_int(dt) and dt != "int64" else {}
    if op == "ReduceSum":
        return [em.call("torch.sum", x, dim=dim, keepdim=keep, **kw)]
    if op == "ReduceMean":
        if is_float(dt):
            return [em.call("torch.mean", x, dim=dim, keepdim=keep)]
        y = em.call("torch.mean", em.method(x, "to", dtype("float64")), dim=dim, keepdim=keep)
        return [em.method(y, "to", dtype(dt))]
    if op == "ReduceMax":
        return [em.call("torch.amax", x, dim=dim, keepdim=keep)]
    if op == "ReduceMin":
        return [em.call("torch.amin", x, dim=dim, keepdim=keep)]
    if op == "ReduceProd":
        y = x
        for a in sorted(axes, reverse=True):
            y = em.call("torch.prod", y, dim=a, keepdim=keep, **kw)
        return [y]
    if op == "ReduceL1":
        return [em.call("torch.sum", em.call("torch.abs", x), dim=dim, keepdim=keep, **kw)]
    if op == "ReduceSumSquare":
        return [em.call("torch.sum", em.call("torch.square", x), dim=dim, keepdim=keep, **kw)]
    if op == "ReduceL2":
        if is_float(dt):
            return [em.call("torch.linalg.vector_norm", x, dim=dim, keepdim=keep)]
        xf = em.method(x, "to", dtype("float64"))
        y = em.call("torch.linalg.vector_norm", xf, dim=dim, keepdim=keep)
        return [em.method(y, "to", dtype(dt))]
    if op == "ReduceLogSum":
        return [em.call("torch.log", em.call("torch.sum", x, dim=dim, keepdim=keep))]
    if op == "ReduceLogSumExp":
        return [em.call("torch.logsumexp", x, dim=dim, keepdim=keep)]
    raise AssertionError(op)
