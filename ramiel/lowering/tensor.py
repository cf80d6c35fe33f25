"""Tensor-manipulation ONNX operators: reshaping, slicing, gathering, padding, constants.

Shape-like inputs (Reshape's shape, Slice's starts/ends, Squeeze's axes from opset 13, Split's
sizes, Pad's pads, ...) must be compile-time constants so that the generated code is static; the
operator's version decides whether they are attributes or inputs (e.g. Squeeze/Unsqueeze axes
are inputs from opset 13, Slice's from opset 10, Pad's from opset 11, Split's from opset 13).
"""

from __future__ import annotations

import math

import numpy as np

from ramiel.lowering.api import NodeView, Value, is_float, rule
from ramiel.lowering.common import (
    const,
    const_ints,
    dtype,
    elem_type_name,
    has_input,
    in_dtype,
    int_tuple,
    known,
    known_shape,
    norm_axis,
    out_dtype,
    out_shape,
    rank,
    scalar_literal,
    shape,
    short_float,
)

# -- helpers -------------------------------------------------------------------------------------


def _need_const(node: NodeView, i: int, what: str) -> str | None:
    if has_input(node, i) and const(node, i) is None:
        return f"{what} (input {i}) must be a compile-time constant"
    return None


def _axes(node: NodeView, since: int, index: int = 1) -> list[int] | None:
    """Axes from the attribute (opset < since) or the constant input ``index`` (None if absent)."""
    if node.opset < since:
        a = node.attrs.get("axes")
        return None if a is None else list(a)
    return const_ints(node, index)


def _literal_tensor(value: np.ndarray) -> tuple[list | int | float | bool, str]:
    """A nested-list literal of ``value`` (floats shortened when float32-exact) and its dtype."""
    arr = np.asarray(value)
    name = arr.dtype.name
    if name == "bfloat16":
        arr = arr.astype(np.float32)
    data = arr.tolist()
    if name in ("float32", "float16", "bfloat16"):
        data = _map_nested(data, short_float)
    return data, name


def _map_nested(data, fn):
    if isinstance(data, list):
        return [_map_nested(d, fn) for d in data]
    return fn(data)


def emit_constant(em, value: np.ndarray, dt: str | None = None) -> Value:
    """Emit ``torch.tensor(<literal>, dtype=...)`` for a (small) constant array."""
    data, name = _literal_tensor(value)
    dt = dt or name
    if np.size(value) == 0:
        return em.call("torch.zeros", int_tuple(np.shape(value)), dtype=dtype(dt))
    return em.call("torch.tensor", data, dtype=dtype(dt))


# -- constants and shapes -------------------------------------------------------------------------


def _check_constant(node: NodeView) -> str | None:
    for key in ("sparse_value", "value_string", "value_strings"):
        if node.attrs.get(key) is not None:
            return f"attribute {key}"
    return None


@rule("Constant", check=_check_constant)
def _constant(node: NodeView, args, em):
    """Constant: a ``torch.tensor`` literal (the importer should turn large ones into weights)."""
    a = node.attrs
    if a.get("value") is not None:
        value = np.asarray(a["value"])
    elif a.get("value_float") is not None:
        value = np.asarray(a["value_float"], dtype=np.float32)
    elif a.get("value_floats") is not None:
        value = np.asarray(a["value_floats"], dtype=np.float32)
    elif a.get("value_int") is not None:
        value = np.asarray(a["value_int"], dtype=np.int64)
    else:
        value = np.asarray(a["value_ints"], dtype=np.int64)
    return [emit_constant(em, value)]


@rule("Shape")
def _shape(node: NodeView, args, em):
    """Shape (start/end from opset 15): a constant int64 tensor when the input shape is static."""
    xs = shape(node, 0)
    start, end = node.attrs.get("start", 0) or 0, node.attrs.get("end")
    if xs is not None:
        dims = list(xs)[slice(start, end)]
        return [em.call("torch.tensor", dims, dtype=dtype("int64"))]
    return [em.call("ops.shape", args[0], start, end)]


@rule("Size")
def _size(node: NodeView, args, em):
    """Size: number of elements, as an int64 scalar tensor."""
    xs = shape(node, 0)
    if xs is not None:
        return [em.call("torch.tensor", math.prod(xs), dtype=dtype("int64"))]
    return [em.call("ops.size", args[0])]


def _expect(node: NodeView) -> dict[str, tuple[int, ...]]:
    """The keyword of a runtime helper that takes a shape operand's value at run time
    (``ops.reshape``, ``ops.expand``, ``ops.constant_of_shape``): ``expect=`` the static result
    shape the model declares, which the helper checks the value's result against; none where
    the model declares none."""
    ys = out_shape(node)
    return {} if ys is None else {"expect": tuple(ys)}


def _const_shape(node: NodeView, i: int) -> tuple[int, ...] | None:
    c = const_ints(node, i)
    if c is not None:
        return tuple(c)
    return out_shape(node)


def _check_constant_of_shape(node: NodeView) -> str | None:
    if _const_shape(node, 0) is None:
        return "the shape input must be constant (or the output shape static)"
    return None


@rule("ConstantOfShape", check=_check_constant_of_shape)
def _constant_of_shape(node: NodeView, args, em):
    """ConstantOfShape: ``torch.full(shape, value)`` (``torch.zeros`` for 0); ``value`` defaults to
    float32 0. ``ops.constant_of_shape`` where the shape is a run-time value: it follows the
    value and checks it against the static shape the model declares (``expect``)."""
    v = node.attrs.get("value")
    value = np.zeros(1, np.float32) if v is None else np.asarray(v)
    dt = value.dtype.name if v is not None else "float32"
    if dt == "bfloat16":
        value = value.astype(np.float32)
    lit = scalar_literal(value, dt)
    if const_ints(node, 0) is None:
        return [em.call("ops.constant_of_shape", args[0], lit, dtype=dtype(dt), **_expect(node))]
    shp = _const_shape(node, 0)
    if lit == 0 and not isinstance(lit, bool):
        return [em.call("torch.zeros", shp, dtype=dtype(dt))]
    return [em.call("torch.full", shp, lit, dtype=dtype(dt))]


@rule("EyeLike")
def _eye_like(node: NodeView, args, em):
    """EyeLike: a 2-D tensor with ones on diagonal ``k`` (dtype attribute or the input's)."""
    xs = shape(node, 0)
    dt = out_dtype(node)
    k = node.attrs["k"]
    if xs is not None and k == 0:
        return [em.call("torch.eye", xs[0], xs[1], dtype=dtype(dt))]
    return [em.call("ops.eye_like", args[0], k, dtype=dtype(dt))]


@rule("Range")
def _range(node: NodeView, args, em):
    """Range(start, limit, delta): ``max(ceil((limit - start) / delta), 0)`` elements
    ``start + i * delta`` = ``torch.arange``."""
    vals = [const(node, i) for i in range(3)]
    dt = out_dtype(node)
    if all(v is not None for v in vals):
        lits = [scalar_literal(v, dt) for v in vals]
        return [em.call("torch.arange", *lits, dtype=dtype(dt))]
    return [em.call("ops.range_", args[0], args[1], args[2])]


# -- reshaping ------------------------------------------------------------------------------------


def _reshape_target(node: NodeView) -> tuple[int, ...] | None:
    """The Reshape target as torch understands it (0 resolved, -1 kept), or None if not static."""
    target = node.attrs.get("shape") if node.opset < 5 else const_ints(node, 1)
    if target is None:
        return out_shape(node)
    allowzero = node.attrs.get("allowzero", 0) or 0
    if 0 in target and not allowzero:
        xs = shape(node, 0)
        if xs is None:
            return out_shape(node)
        target = [xs[i] if t == 0 else t for i, t in enumerate(target)]
    return tuple(target)


@rule("Reshape")
def _reshape(node: NodeView, args, em):
    """Reshape: ``x.reshape(*shape)``; a 0 copies the input dim (unless ``allowzero=1``), -1 is
    inferred. ``ops.reshape`` where the shape is a run-time value (not a constant): with the
    static result shape the model declares as ``expect``, which it checks."""
    allowzero = node.attrs.get("allowzero", 0) or 0
    if node.opset >= 5 and const_ints(node, 1) is None:
        return [em.call("ops.reshape", args[0], args[1], allowzero, **_expect(node))]
    target = _reshape_target(node)
    if target is None:
        return [em.call("ops.reshape", args[0], args[1], allowzero)]
    if target == shape(node, 0):
        return [args[0]]
    if len(target) == 0:
        return [em.method(args[0], "reshape", ())]
    return [em.method(args[0], "reshape", *target)]


def _check_flatten(node: NodeView) -> str | None:
    if rank(node, 0) is None:
        return "the rank of the input is unknown"
    return None


@rule("Flatten", check=_check_flatten)
def _flatten(node: NodeView, args, em):
    """Flatten: to 2-D (prod(dims[:axis]), prod(dims[axis:]))."""
    xs = known_shape(node, 0)
    r = len(xs)
    axis = norm_axis(node.attrs["axis"], r)
    if axis == 1 and r >= 2:
        return [em.call("torch.flatten", args[0], 1)]
    if axis == 0:
        return [em.method(args[0], "reshape", 1, -1)]
    return [em.method(args[0], "reshape", math.prod(xs[:axis]), math.prod(xs[axis:]))]


def _check_squeeze(node: NodeView) -> str | None:
    if node.opset >= 13:
        return _need_const(node, 1, "axes")
    return None


@rule("Squeeze", check=_check_squeeze)
def _squeeze(node: NodeView, args, em):
    """Squeeze: drop the listed size-1 axes (all size-1 axes if none are given)."""
    axes = _axes(node, 13)
    xs = shape(node, 0)
    if not axes:
        if xs is None:
            return [em.method(args[0], "squeeze")]
        axes = [i for i, d in enumerate(xs) if d == 1]
    r = rank(node, 0)
    if r is not None:
        axes = sorted(norm_axis(a, r) for a in axes)
    if not axes:
        return [args[0]]
    return [em.method(args[0], "squeeze", axes[0] if len(axes) == 1 else tuple(axes))]


def _check_unsqueeze(node: NodeView) -> str | None:
    if node.opset >= 13:
        if not has_input(node, 1):
            return "axes input is missing"
        reason = _need_const(node, 1, "axes")
        if reason:
            return reason
    axes = _axes(node, 13) or []
    if rank(node, 0) is None and any(a < 0 for a in axes):
        return "negative axes need a known input rank"
    return None


@rule("Unsqueeze", check=_check_unsqueeze)
def _unsqueeze(node: NodeView, args, em):
    """Unsqueeze: insert size-1 axes at the listed positions of the output."""
    axes = known(_axes(node, 13), node, "the axes")
    r = rank(node, 0)
    if r is not None:
        axes = [norm_axis(a, r + len(axes)) for a in axes]
    axes = sorted(axes)
    ys = out_shape(node)
    if len(axes) > 1 and ys is not None:
        return [em.method(args[0], "reshape", *ys)]
    y = args[0]
    for a in axes:
        y = em.method(y, "unsqueeze", a)
    return [y]


def _check_transpose(node: NodeView) -> str | None:
    if node.attrs.get("perm") is None and rank(node, 0) is None:
        return "the default perm needs a known input rank"
    return None


@rule("Transpose", check=_check_transpose)
def _transpose(node: NodeView, args, em):
    """Transpose: ``x.permute(*perm)`` (default: reverse the dims)."""
    perm = node.attrs.get("perm")
    if perm is None:
        perm = list(reversed(range(len(known_shape(node, 0)))))
    if list(perm) == list(range(len(perm))):
        return [args[0]]
    return [em.method(args[0], "permute", *perm)]


@rule("Concat")
def _concat(node: NodeView, args, em):
    """Concat along ``axis`` = ``torch.cat``."""
    xs = [a for a in args if a is not None]
    if len(xs) == 1:
        return [xs[0]]
    return [em.call("torch.cat", xs, dim=node.attrs["axis"])]


def _split_sizes(node: NodeView) -> list[int] | None:
    n_out = len(node.outputs)
    axis = node.attrs["axis"]
    sizes = node.attrs.get("split") if node.opset < 13 else const_ints(node, 1)
    if sizes:
        return list(sizes)
    xs = shape(node, 0)
    if xs is None:
        return None
    dim = xs[norm_axis(axis, len(xs))]
    n = node.attrs.get("num_outputs") or n_out
    chunk = -(-dim // n)
    if node.attrs.get("num_outputs"):
        return [chunk] * (n - 1) + [dim - chunk * (n - 1)]
    return [dim // n] * n


def _check_split(node: NodeView) -> str | None:
    if node.opset >= 13 and _need_const(node, 1, "split"):
        return _need_const(node, 1, "split")
    if _split_sizes(node) is None:
        return "equal split needs a static input shape"
    return None


@rule("Split", check=_check_split)
def _split(node: NodeView, args, em):
    """Split along ``axis`` into the given sizes (attribute before opset 13, input from 13), into
    equal parts, or (``num_outputs``, opset 18) parts of ceil(dim / n) with a smaller last one."""
    sizes = known(_split_sizes(node), node, "the split sizes")
    axis = node.attrs["axis"]
    arg = sizes[0] if len(set(sizes)) == 1 and sizes[0] > 0 else sizes
    parts = em.call("torch.split", args[0], arg, dim=axis)
    return [em.call("operator.getitem", parts, i) for i in range(len(sizes))]


# -- slicing and indexing -------------------------------------------------------------------------


def _slice_params(node: NodeView):
    if node.opset < 10:
        starts = node.attrs.get("starts")
        ends = node.attrs.get("ends")
        axes = node.attrs.get("axes")
        steps = None
    else:
        starts, ends = const_ints(node, 1), const_ints(node, 2)
        axes, steps = const_ints(node, 3), const_ints(node, 4)
    if axes is None and starts is not None:
        axes = list(range(len(starts)))
    if steps is None and starts is not None:
        steps = [1] * len(starts)
    return starts, ends, axes, steps


def _runtime_slice(node: NodeView) -> bool:
    """A Slice in a loop body whose starts/ends are computed per iteration (``ops.slice``):
    axes and steps must still be constants."""
    return (
        node.in_loop
        and node.opset >= 10
        and (const(node, 1) is None or const(node, 2) is None)
        and not _need_const(node, 3, "axes")
        and not _need_const(node, 4, "steps")
        and rank(node, 0) is not None
    )


def _check_slice(node: NodeView) -> str | None:
    if _runtime_slice(node):
        return None
    if node.opset >= 10:
        for i, what in ((1, "starts"), (2, "ends"), (3, "axes"), (4, "steps")):
            reason = _need_const(node, i, what)
            if reason:
                return reason
    starts, ends, axes, steps = _slice_params(node)
    if starts is None or ends is None:
        return "starts/ends are missing"
    r = rank(node, 0)
    if r is None and any(a < 0 for a in axes):
        return "negative axes need a known input rank"
    if shape(node, 0) is None and any(s < 0 for s in steps):
        return "negative steps need a static input shape"
    if any(s == 0 for s in steps):
        return "a step of 0"
    return None


def _clamp(v: int, lo: int, hi: int) -> int:
    return max(lo, min(hi, v))


@rule("Slice", check=_check_slice)
def _slice(node: NodeView, args, em):
    """Slice (starts/ends/axes attributes before opset 10, inputs with steps from 10).

    Starts/ends are clamped as the spec says (to [0, dim] for positive steps, to [0, dim - 1] /
    [-1, dim - 1] for negative ones); negative steps flip the axis first (torch slices have
    positive steps only) and then slice the flipped range.
    """
    if _runtime_slice(node):
        axes = const_ints(node, 3)
        steps = const_ints(node, 4)
        r = rank(node, 0)
        assert r is not None
        return [
            em.call(
                "ops.slice_",
                args[0],
                args[1],
                args[2],
                None if axes is None else tuple(norm_axis(a, r) for a in axes),
                None if steps is None else tuple(steps),
            )
        ]
    starts, ends, axes, steps = _slice_params(node)
    xs = shape(node, 0)
    r = rank(node, 0)
    if r is not None:
        axes = [norm_axis(a, r) for a in axes]
    index: dict[int, slice] = {}
    flips: list[int] = []
    for s, e, a, st in zip(starts, ends, axes, steps, strict=True):
        if xs is None:
            index[a] = slice(s, e, None if st == 1 else st)
            continue
        dim = xs[a]
        s = s + dim if s < 0 else s
        e = e + dim if e < 0 else e
        if st > 0:
            s, e = _clamp(s, 0, dim), _clamp(e, 0, dim)
            e = max(e, s)
            index[a] = slice(s or None, None if e == dim else e, None if st == 1 else st)
        else:
            s, e = _clamp(s, 0, dim - 1), _clamp(e, -1, dim - 1)
            n = len(range(s, e, st)) if dim > 0 else 0
            flips.append(a)
            j = dim - 1 - s
            stop = j + (n - 1) * -st + 1 if n > 0 else j
            if n == 0:
                j = stop = 0
            index[a] = slice(j or None, None if stop >= dim else stop, None if st == -1 else -st)
    x = args[0]
    if flips:
        x = em.method(x, "flip", *sorted(flips))
    index = {a: sl for a, sl in index.items() if sl != slice(None)}
    if not index:
        return [x]
    key = tuple(index.get(d, slice(None)) for d in range(max(index) + 1))
    return [em.call("operator.getitem", x, key[0] if len(key) == 1 else key)]


def _check_gather(node: NodeView) -> str | None:
    if rank(node, 0) is None and node.attrs["axis"] < 0:
        return "negative axis needs a known input rank"
    return None


def shuffle_groups(node: NodeView) -> int | None:
    """``g`` when ``node`` (a Gather) is a channel shuffle of ``g`` groups: axis 1 of a 4-D
    input with ``C`` channels, constant indices ``p[j * g + i] = i * (C / g) + j`` (what
    ``--fuse-channel-shuffle`` makes of ShuffleNet's Reshape/Transpose/Reshape), else None."""
    xs, c = shape(node, 0), const(node, 1)
    if xs is None or len(xs) != 4 or c is None or np.ndim(c) != 1 or len(c) != xs[1]:
        return None
    if norm_axis(node.attrs["axis"], 4) != 1 or len(c) < 3:
        return None
    per_group = int(c[1])  # p[1] = C / g
    if per_group < 1 or xs[1] % per_group or not 1 < xs[1] // per_group < xs[1]:
        return None
    groups = xs[1] // per_group
    order = np.arange(xs[1]).reshape(groups, per_group).T.reshape(-1)
    return groups if np.array_equal(np.asarray(c), order) else None


@rule("Gather", check=_check_gather)
def _gather(node: NodeView, args, em):
    """Gather along ``axis``: ``x[:, ..., indices]`` (torch indexing takes negative indices as
    ONNX does; a constant scalar index becomes an int literal).

    A channel shuffle (:func:`shuffle_groups`) → ``F.channel_shuffle(x, g)``: one copy that
    keeps the input's memory format; on light_shufflenet's shapes 0.24-0.31x the time of
    ``x[:, p]`` and 0.64-0.90x that of the exported 5-D Reshape/Transpose/Reshape contiguous,
    0.20-0.31x channels-last (measurements: :mod:`ramiel.passes.fuse_channel_shuffle`).
    """
    groups = shuffle_groups(node)
    if groups is not None:
        return [em.call("F.channel_shuffle", args[0], groups)]
    r = rank(node, 0)
    axis = node.attrs["axis"]
    if r is not None:
        axis = norm_axis(axis, r)
    c = const(node, 1)
    idx = int(c) if c is not None and np.ndim(c) == 0 else args[1]
    key = tuple([slice(None)] * axis) + (idx,)
    return [em.call("operator.getitem", args[0], key[0] if len(key) == 1 else key)]


@rule("GatherElements")
def _gather_elements(node: NodeView, args, em):
    """GatherElements: ``torch.gather`` (negative indices wrap, so non-constant or negative
    indices go through ``ops.gather_elements``)."""
    axis = node.attrs["axis"]
    c = const(node, 1)
    if c is not None and (np.asarray(c) >= 0).all() and in_dtype(node, 1) == "int64":
        return [em.call("torch.gather", args[0], axis, args[1])]
    return [em.call("ops.gather_elements", args[0], args[1], axis)]


@rule("GatherND")
def _gather_nd(node: NodeView, args, em):
    """GatherND with ``batch_dims``."""
    return [em.call("ops.gather_nd", args[0], args[1], node.attrs.get("batch_dims", 0) or 0)]


def _check_scatter(node: NodeView) -> str | None:
    red = node.attrs.get("reduction") or "none"
    if red not in ("none", "add", "mul", "max", "min"):
        return f"reduction='{red}'"
    return None


@rule("ScatterElements", "Scatter", check=_check_scatter)
def _scatter_elements(node: NodeView, args, em):
    """ScatterElements / Scatter: copy of data with ``updates`` written (or reduced) at
    ``indices`` along ``axis``."""
    red = node.attrs.get("reduction") or "none"
    return [em.call("ops.scatter_elements", args[0], args[1], args[2], node.attrs["axis"], red)]


@rule("ScatterND", check=_check_scatter)
def _scatter_nd(node: NodeView, args, em):
    """ScatterND: copy of data with ``updates`` written (or reduced) at the index tuples."""
    red = node.attrs.get("reduction") or "none"
    return [em.call("ops.scatter_nd", args[0], args[1], args[2], red)]


def _check_one_hot(node: NodeView) -> str | None:
    return _need_const(node, 1, "depth")


@rule("OneHot", check=_check_one_hot)
def _one_hot(node: NodeView, args, em):
    """OneHot(indices, depth, values=[off, on]): ``on`` where the index (negative ones wrap) equals
    the position along the new ``axis``, else ``off``."""
    depth = int(np.asarray(const(node, 1)).reshape(-1)[0])
    return [em.call("ops.one_hot", args[0], depth, args[2], node.attrs["axis"])]


@rule("Compress")
def _compress(node: NodeView, args, em):
    """Compress: keep the slices where ``condition`` is true along ``axis`` (flattened if none)."""
    return [em.call("ops.compress", args[0], args[1], node.attrs.get("axis"))]


@rule("NonZero")
def _nonzero(node: NodeView, args, em):
    """NonZero: the (rank, count) int64 indices of the non-zero elements (row-major order);
    the output shape depends on the data."""
    nz = em.call("torch.nonzero", args[0])
    return [em.method(nz, "t")]


# -- broadcasting and repetition ----------------------------------------------------------------


def _check_expand(node: NodeView) -> str | None:
    if const(node, 1) is None and out_shape(node) is None:
        return "the shape input must be constant (or the output shape static)"
    return None


@rule("Expand", check=_check_expand)
def _expand(node: NodeView, args, em):
    """Expand: bidirectional broadcast of x with ``shape`` = ``x.expand(*broadcast_shape)``;
    ``ops.expand`` where the shape is a run-time value: it follows the value and checks it
    against the static shape the model declares (``expect``)."""
    xs = shape(node, 0)
    target = const_ints(node, 1)
    if target is None:
        return [em.call("ops.expand", args[0], args[1], **_expect(node))]
    if xs is not None:
        out = tuple(np.broadcast_shapes(tuple(xs), tuple(target)))
    else:
        out = known(out_shape(node), node, "the output shape")
    if xs is not None and out == tuple(xs):
        return [args[0]]
    return [em.method(args[0], "expand", *out)]


@rule("Tile")
def _tile(node: NodeView, args, em):
    """Tile: ``x.repeat(*repeats)`` (numpy tile with one repeat per dim)."""
    reps = const_ints(node, 1)
    if reps is None:
        return [em.call("ops.tile", args[0], args[1])]
    if all(r == 1 for r in reps):
        return [args[0]]
    return [em.method(args[0], "repeat", *reps)]


# -- padding ---------------------------------------------------------------------------------------


def _pad_params(node: NodeView):
    """(pads begin+end over all dims, mode, constant value) or a reason string."""
    mode = node.attrs.get("mode") or "constant"
    r = rank(node, 0)
    if node.opset < 11:
        pads = node.attrs.get("pads") or node.attrs.get("paddings")
        if pads is None:
            return "the pads attribute is missing"
        value = node.attrs.get("value", 0.0)
        return list(pads), mode, value
    pads = const_ints(node, 1)
    if pads is None:
        return "pads must be a compile-time constant"
    if has_input(node, 2) and const(node, 2) is None:
        return "constant_value must be a compile-time constant"
    value = const(node, 2)
    value = 0 if value is None else np.asarray(value).reshape(-1)[0]
    if has_input(node, 3):
        axes = const_ints(node, 3)
        if axes is None:
            return "axes must be a compile-time constant"
        if r is None:
            return "axes need a known input rank"
        k = len(axes)
        full = [0] * (2 * r)
        for j, a in enumerate(axes):
            a = norm_axis(a, r)
            full[a], full[r + a] = pads[j], pads[k + j]
        pads = full
    return list(pads), mode, value


def _check_pad(node: NodeView) -> str | None:
    p = _pad_params(node)
    if isinstance(p, str):
        return p
    pads, mode, _ = p
    if mode not in ("constant", "reflect", "edge", "wrap"):
        return f"mode='{mode}'"
    return None


@rule("Pad", check=_check_pad)
def _pad(node: NodeView, args, em):
    """Pad (modes constant, reflect, edge, wrap; negative pads crop). ``F.pad`` when torch can
    express it (any constant pad; reflect/edge/wrap on the last 1-3 dims of a 2-D to 5-D
    tensor), ``ops.pad`` otherwise."""
    pads, mode, value = _pad_params(node)
    r = len(pads) // 2
    begin, end = pads[:r], pads[r:]
    xs = shape(node, 0)
    if all(p == 0 for p in pads):
        return [args[0]]
    dt = in_dtype(node)
    lit = scalar_literal(value, dt)
    if mode == "constant":
        flat = _torch_pads(begin, end)
        kwargs = {} if lit == 0 else {"value": lit}
        return [em.call("F.pad", args[0], flat, **kwargs)]
    torch_mode = {"reflect": "reflect", "edge": "replicate", "wrap": "circular"}[mode]
    nz = [i for i in range(r) if begin[i] or end[i]]
    lead = min(nz)
    k = r - lead
    ok = xs is not None and 1 <= k <= 3 and r in (k + 1, k + 2) and all(p >= 0 for p in pads)
    ok = ok and is_float(dt)
    if ok and xs is not None and mode == "reflect":
        ok = all(begin[i] < xs[i] and end[i] < xs[i] for i in range(lead, r))
    if ok and xs is not None and mode == "wrap":
        ok = all(begin[i] <= xs[i] and end[i] <= xs[i] for i in range(lead, r))
    if ok:
        flat = _torch_pads(begin[lead:], end[lead:])
        return [em.call("F.pad", args[0], flat, mode=torch_mode)]
    return [em.call("ops.pad", args[0], tuple(pads), mode, lit)]


def _torch_pads(begin: list[int], end: list[int]) -> list[int]:
    """ONNX (begin, end) pads → F.pad's list, last dim first, trailing all-zero dims dropped."""
    r = len(begin)
    first = 0
    while first < r and begin[first] == 0 and end[first] == 0:
        first += 1
    out: list[int] = []
    for i in reversed(range(first, r)):
        out += [int(begin[i]), int(end[i])]
    return out


# -- sorting, scanning, triangles -----------------------------------------------------------------


def _check_topk(node: NodeView) -> str | None:
    if node.opset >= 10:
        return _need_const(node, 1, "K")
    return None


@rule("TopK", check=_check_topk)
def _topk(node: NodeView, args, em):
    """TopK: the k largest (or smallest) along ``axis``, sorted; equal values keep the lower index
    first, as the spec requires (a stable sort, ``ops.topk``)."""
    k = node.attrs.get("k") if node.opset < 10 else int(np.asarray(const(node, 1)).reshape(-1)[0])
    largest = bool(node.attrs.get("largest", 1))
    res = em.call("ops.topk", args[0], k, node.attrs["axis"], largest)
    return [em.call("operator.getitem", res, 0), em.call("operator.getitem", res, 1)]


@rule("ArgMax", "ArgMin")
def _argmax(node: NodeView, args, em):
    """ArgMax / ArgMin along ``axis`` (first occurrence, or last with ``select_last_index``)."""
    axis, keep = node.attrs["axis"], bool(node.attrs["keepdims"])
    last = bool(node.attrs.get("select_last_index", 0) or 0)
    fn = "torch.argmax" if node.op_type == "ArgMax" else "torch.argmin"
    x = args[0]
    if in_dtype(node) == "bool":
        x = em.method(x, "to", dtype("uint8"))
    if last:
        return [em.call("ops.arg_last", x, axis, keep, node.op_type == "ArgMax")]
    return [em.call(fn, x, dim=axis, keepdim=keep)]


def _check_cum(node: NodeView) -> str | None:
    return _need_const(node, 1, "axis")


@rule("CumSum", "CumProd", check=_check_cum)
def _cumsum(node: NodeView, args, em):
    """CumSum / CumProd along the constant ``axis`` input, optionally ``exclusive`` (shifted by
    one, starting at 0 / 1) and ``reverse`` (from the end)."""
    axis = int(np.asarray(const(node, 1)).reshape(-1)[0])
    excl, rev = bool(node.attrs["exclusive"]), bool(node.attrs["reverse"])
    fn = "torch.cumsum" if node.op_type == "CumSum" else "torch.cumprod"
    if not excl and not rev:
        dt = in_dtype(node)
        kw = {"dtype": dtype(dt)} if dt in ("int8", "int16", "int32", "uint8") else {}
        return [em.call(fn, args[0], axis, **kw)]
    return [em.call("ops.cumulative", args[0], axis, excl, rev, node.op_type == "CumProd")]


@rule("Trilu")
def _trilu(node: NodeView, args, em):
    """Trilu: keep the upper (``torch.triu``) or lower (``torch.tril``) triangle from diagonal k."""
    fn = "torch.triu" if node.attrs["upper"] else "torch.tril"
    if not has_input(node, 1):
        return [em.call(fn, args[0])]
    k = const(node, 1)
    if k is not None:
        kk = int(np.asarray(k).reshape(-1)[0])
        return [em.call(fn, args[0], kk) if kk else em.call(fn, args[0])]
    return [em.call("ops.trilu", args[0], args[1], bool(node.attrs["upper"]))]


# -- space/depth --------------------------------------------------------------------------------------


def _check_space_depth(node: NodeView) -> str | None:
    xs = shape(node, 0)
    if xs is None or len(xs) != 4:
        return "needs a static 4-D input shape"
    mode = node.attrs.get("mode", "DCR")
    if mode not in ("DCR", "CRD"):
        return f"mode='{mode}'"
    return None


@rule("DepthToSpace", check=_check_space_depth)
def _depth_to_space(node: NodeView, args, em):
    """DepthToSpace: DCR (depth-column-row, default) rearranges (N, b, b, C', H, W); CRD is
    ``F.pixel_shuffle``."""
    n, c, h, w = known_shape(node, 0)
    b = node.attrs["blocksize"]
    if node.attrs.get("mode", "DCR") == "CRD":
        return [em.call("F.pixel_shuffle", args[0], b)]
    y = em.method(args[0], "reshape", n, b, b, c // (b * b), h, w)
    y = em.method(y, "permute", 0, 3, 4, 1, 5, 2)
    return [em.method(y, "reshape", n, c // (b * b), h * b, w * b)]


@rule("SpaceToDepth", check=_check_space_depth)
def _space_to_depth(node: NodeView, args, em):
    """SpaceToDepth: (N, C, H, W) → (N, C * b * b, H / b, W / b); DCR (the only mode before
    opset 28) puts the block offsets outermost, CRD innermost (``F.pixel_unshuffle``)."""
    n, c, h, w = known_shape(node, 0)
    b = node.attrs["blocksize"]
    if node.attrs.get("mode", "DCR") == "CRD":
        return [em.call("F.pixel_unshuffle", args[0], b)]
    y = em.method(args[0], "reshape", n, c, h // b, b, w // b, b)
    y = em.method(y, "permute", 0, 3, 5, 1, 2, 4)
    return [em.method(y, "reshape", n, c * b * b, h // b, w // b)]


@rule("ReverseSequence")
def _reverse_sequence(node: NodeView, args, em):
    """ReverseSequence: reverse the first ``sequence_lens[i]`` elements along ``time_axis`` of
    each batch entry i (along ``batch_axis``)."""
    return [
        em.call(
            "ops.reverse_sequence",
            args[0],
            args[1],
            node.attrs["batch_axis"],
            node.attrs["time_axis"],
        )
    ]


def _check_center_crop_pad(node: NodeView) -> str | None:
    if const(node, 1) is None:
        return "shape (input 1) must be a compile-time constant"
    if shape(node, 0) is None:
        return "needs a static input shape"
    return None


@rule("CenterCropPad", check=_check_center_crop_pad)
def _center_crop_pad(node: NodeView, args, em):
    """CenterCropPad (opset 18): per listed axis, a centred window of the target length (the
    start rounded down) or zero padding split evenly (the odd pixel at the end)."""
    xs = known_shape(node, 0)
    r = len(xs)
    target = known(const_ints(node, 1), node, "the target shape")
    axes = node.attrs.get("axes") or list(range(r))
    axes = [norm_axis(a, r) for a in axes]
    index: dict[int, slice] = {}
    begin, end = [0] * r, [0] * r
    for a, t in zip(axes, target, strict=True):
        d = xs[a]
        if t < d:
            s = (d - t) // 2
            index[a] = slice(s or None, s + t if s + t < d else None)
        elif t > d:
            begin[a] = (t - d) // 2
            end[a] = t - d - begin[a]
    y = args[0]
    if index:
        key = tuple(index.get(d, slice(None)) for d in range(max(index) + 1))
        y = em.call("operator.getitem", y, key[0] if len(key) == 1 else key)
    if any(begin) or any(end):
        y = em.call("F.pad", y, _torch_pads(begin, end))
    return [y]


def _check_window(node: NodeView) -> str | None:
    if const(node, 0) is None:
        return "size (input 0) must be a compile-time constant"
    return None


_WINDOWS = {
    "HannWindow": ("torch.hann_window", {}),
    "HammingWindow": ("torch.hamming_window", {"alpha": 25 / 46, "beta": 21 / 46}),
    "BlackmanWindow": ("torch.blackman_window", {}),
}


@rule(*_WINDOWS, check=_check_window)
def _window(node: NodeView, args, em):
    """Hann/Hamming/Blackman windows (opset 17) of the constant ``size``: ``periodic=1`` divides by
    ``size`` instead of ``size - 1``; Hamming uses ONNX's alpha = 25/46, beta = 21/46."""
    n = int(np.asarray(const(node, 0)).reshape(-1)[0])
    fn, extra = _WINDOWS[node.op_type]
    dt = elem_type_name(node.attrs.get("output_datatype", 1))
    periodic = bool(node.attrs.get("periodic", 1))
    return [em.call(fn, n, periodic=periodic, **extra, dtype=dtype(dt))]
