"""Neural-network ONNX operators: convolutions, pooling, normalisation, softmax, Gemm/MatMul.

Padding follows https://onnx.ai/onnx/operators/onnx__Conv.html: ``pads`` is
``[x1_begin, x2_begin, ..., x1_end, x2_end, ...]``; ``auto_pad`` SAME_UPPER/SAME_LOWER pad so that
``out = ceil(in / stride)``, the odd extra element going to the end (UPPER) or the beginning
(LOWER); VALID means no padding. Symmetric pads become ``padding=`` of the torch call, asymmetric
ones an ``F.pad`` first. Pooling output sizes use the ONNX/PyTorch rule
``floor_or_ceil((in + pb + pe - ((k - 1) * d + 1)) / s) + 1``, where in ``ceil_mode`` a last window
that would start in the end padding is dropped (what runtimes do; onnx shape inference before
opset 22 reports the larger size).
"""

from __future__ import annotations

import math

import numpy as np

from ramiel.errors import DynamicShapeError
from ramiel.layout import THROUGH_CL_MIN_ELEMENTS
from ramiel.lowering.api import SHAPE_RULES, MemoryFormat, NodeView, is_float, rule
from ramiel.lowering.common import (
    const,
    dtype,
    in_dtype,
    known_shape,
    norm_axis,
    rank,
    shape,
)
from ramiel.shapes import pool_output_size

# -- padding helpers ---------------------------------------------------------------------------


def _spatial_attrs(node: NodeView, n: int) -> tuple[list[int] | None, list[int], list[int]]:
    """(kernel, strides, dilations) of a conv/pool node with ``n`` spatial dims; kernel ``None``
    when neither ``kernel_shape`` nor a static weight shape gives it."""
    kernel = node.attrs.get("kernel_shape")
    if kernel is None:
        ws = shape(node, 1)
        kernel = list(ws[2:]) if ws is not None else None
    strides = node.attrs.get("strides") or [1] * n
    dil = node.attrs.get("dilations") or [1] * n
    return list(kernel) if kernel is not None else None, list(strides), list(dil)


def _spatial_rank(node: NodeView) -> int:
    """:func:`_n_spatial` for a rule that needs it; raises
    :class:`~ramiel.errors.DynamicShapeError` when neither the kernel nor a shape gives it."""
    n = _n_spatial(node)
    if n is None:
        raise DynamicShapeError(
            f"{node.op_type} node '{node.name}': the number of spatial dimensions is unknown "
            "(no kernel_shape and no static input or weight shape)"
        )
    return n


def _n_spatial(node: NodeView) -> int | None:
    k = node.attrs.get("kernel_shape")
    if k is not None:
        return len(k)
    r = rank(node, 0)
    if r is not None:
        return r - 2
    ws = shape(node, 1)
    return None if ws is None else len(ws) - 2


def _pads(node: NodeView, kernel, strides, dil) -> tuple[list[int], list[int]] | str:
    """(begin, end) pads per spatial dim from ``pads``/``auto_pad``; a reason string if unknown."""
    n = len(kernel)
    auto = node.attrs.get("auto_pad") or "NOTSET"
    if auto == "NOTSET":
        pads = node.attrs.get("pads") or [0] * (2 * n)
        if len(pads) != 2 * n:
            return f"pads has {len(pads)} entries, expected {2 * n}"
        return list(pads[:n]), list(pads[n:])
    if auto == "VALID":
        return [0] * n, [0] * n
    if auto not in ("SAME_UPPER", "SAME_LOWER"):
        return f"auto_pad='{auto}'"
    xs = shape(node, 0)
    if xs is None:
        return f"auto_pad={auto} needs a static input shape"
    begin, end = [], []
    for i in range(n):
        size = xs[2 + i]
        out = -(-size // strides[i])
        total = max(0, (out - 1) * strides[i] + (kernel[i] - 1) * dil[i] + 1 - size)
        small, big = total // 2, total - total // 2
        begin.append(small if auto == "SAME_UPPER" else big)
        end.append(big if auto == "SAME_UPPER" else small)
    return begin, end


def _rule_geometry(
    node: NodeView,
) -> tuple[int, list[int], list[int], list[int], list[int], list[int]]:
    """(spatial rank, kernel, strides, dilations, begin pads, end pads) of a conv/pool node for
    its lowering rule, which runs only after the rule's check accepted the node (so the kernel
    and the pads are known); raises :class:`~ramiel.errors.DynamicShapeError` otherwise."""
    n = _spatial_rank(node)
    kernel, strides, dil = _known_kernel(node, n)
    p = _pads(node, kernel, strides, dil)
    if isinstance(p, str):
        raise DynamicShapeError(f"{node.op_type} node '{node.name}': {p}")
    return n, kernel, strides, dil, p[0], p[1]


def _known_kernel(node: NodeView, n: int) -> tuple[list[int], list[int], list[int]]:
    """:func:`_spatial_attrs` for a rule that needs the kernel shape; raises
    :class:`~ramiel.errors.DynamicShapeError` when it is unknown (the check reports it first)."""
    kernel, strides, dil = _spatial_attrs(node, n)
    if kernel is None:
        raise DynamicShapeError(f"{node.op_type} node '{node.name}': the kernel shape is unknown")
    return kernel, strides, dil


def torch_pad(begin: list[int], end: list[int]) -> list[int]:
    """ONNX per-dim (begin, end) pads → F.pad's list (last dim first)."""
    out: list[int] = []
    for b, e in zip(reversed(begin), reversed(end), strict=True):
        out += [int(b), int(e)]
    return out


def _tuple_kw(kwargs: dict, name: str, values: list[int], default: int) -> None:
    if any(v != default for v in values):
        kwargs[name] = tuple(int(v) for v in values)


def through_channels_last(node: NodeView, em, x, compute):
    """``compute(x)`` for a kernel that is much faster on channels-last tensors (max and average
    pooling, ``F.interpolate``; see :mod:`ramiel.layout`): run on a contiguous 4-D float input
    (an op outside a channels-last region, or ``--layout nchw``), ``x`` is converted to
    channels-last first and each result back to contiguous; in a channels-last region (the
    input is channels-last already) and for other inputs it is ``compute(x)``. Tensors of fewer
    than :data:`THROUGH_CL_MIN_ELEMENTS` elements are not converted (the conversions cost more
    than they save). ``compute`` returns a Value or a list of Values."""
    xs = shape(node, 0)
    convert = (
        node.layout != "channels_last"
        and xs is not None
        and len(xs) == 4
        and xs[1] > 1
        and xs[2] * xs[3] > 1
        and math.prod(xs) >= THROUGH_CL_MIN_ELEMENTS
        and is_float(in_dtype(node))
    )
    if not convert:
        return compute(x)
    xc = em.method(x, "contiguous", memory_format=MemoryFormat("channels_last"))
    out = compute(xc)
    if isinstance(out, list):
        return [em.method(y, "contiguous") if y is not None else None for y in out]
    return em.method(out, "contiguous")


# -- convolution -------------------------------------------------------------------------------


def _check_conv(node: NodeView) -> str | None:
    n = _n_spatial(node)
    if n is None:
        return "the rank of the input is unknown"
    if n not in (1, 2, 3):
        return f"{n}-D convolution (torch has 1-D to 3-D)"
    kernel, strides, dil = _spatial_attrs(node, n)
    if kernel is None:
        return "the kernel shape is unknown"
    p = _pads(node, kernel, strides, dil)
    if isinstance(p, str):
        return p
    if node.op_type == "ConvTranspose":
        xs = shape(node, 0)
        if xs is None and (node.attrs.get("output_shape") or node.attrs["auto_pad"] != "NOTSET"):
            return "output_shape/auto_pad need a static input shape"
    return None


def _grouped_1x1(node: NodeView, n: int, kwargs: dict) -> bool:
    """Whether a Conv is a grouped 1x1 convolution (stride 1, no padding) on a contiguous
    float input, which ``ops.conv1x1_grouped`` computes as batched matrix products: 0.57x the
    time of ``F.conv2d`` on light_shufflenet's (see its docstring). Channels-last inputs keep
    ``F.conv2d`` (the batched form would need two copies)."""
    ws = shape(node, 1)
    return (
        n == 2
        and node.attrs["group"] > 1
        and node.layout != "channels_last"
        and ws is not None
        and tuple(ws[2:]) == (1, 1)
        and not ({"stride", "padding"} & set(kwargs))
        and is_float(in_dtype(node))
    )


@rule("Conv", check=_check_conv)
def _conv(node: NodeView, args, em):
    """Conv (1-D to 3-D) → ``F.convNd``; asymmetric pads become an ``F.pad`` first.

    A Conv that ``--prepack-conv`` marked (``node.prepack``: a channels-last 2-D float32
    convolution with a constant kernel) → ``ops.conv2d_prepacked`` with the same arguments and
    the fused activation (``activation='relu'`` when it absorbed the Relu after it): oneDNN with
    the kernel reordered once per process; light_resnet50's convolutions 0.56x the time of
    ``F.conv2d`` + ``torch.relu_`` (``bench/conv_prepack.py``, 1 thread; which convolutions,
    and the measurements: :mod:`ramiel.passes.prepack_conv`)."""
    n, kernel, strides, dil, begin, end = _rule_geometry(node)
    x = args[0]
    kwargs: dict = {}
    _tuple_kw(kwargs, "stride", strides, 1)
    if begin == end:
        _tuple_kw(kwargs, "padding", begin, 0)
    else:
        x = em.call("F.pad", x, torch_pad(begin, end))
    _tuple_kw(kwargs, "dilation", dil, 1)
    if node.attrs["group"] != 1:
        kwargs["groups"] = node.attrs["group"]
    if node.prepack is not None and n == 2:  # first: a fused Relu is no statement of its own
        if node.prepack != "none":
            kwargs["activation"] = node.prepack
        return [em.call("ops.conv2d_prepacked", x, args[1], args[2], **kwargs)]
    if _grouped_1x1(node, n, kwargs):
        return [em.call("ops.conv1x1_grouped", x, args[1], args[2], node.attrs["group"])]
    return [em.call(f"F.conv{n}d", x, args[1], args[2], **kwargs)]


def _conv_transpose_pads(node: NodeView, n: int) -> tuple[list[int], list[int], list[int]]:
    """(pads_begin, pads_end, output_padding) of a ConvTranspose, per the ONNX spec: an explicit
    ``output_shape`` (or SAME auto_pad, output = input * stride) determines the pads."""
    kernel, strides, dil = _known_kernel(node, n)
    op = list(node.attrs.get("output_padding") or [0] * n)
    auto = node.attrs.get("auto_pad") or "NOTSET"
    out_shape = node.attrs.get("output_shape")
    xs = known_shape(node, 0)
    if out_shape or auto in ("SAME_UPPER", "SAME_LOWER"):
        # output_shape lists the spatial dims (some models give N and C too: take the last n)
        same = [xs[2 + i] * strides[i] for i in range(n)]
        target = list(out_shape)[-n:] if out_shape else same
        begin, end = [], []
        for i in range(n):
            full = strides[i] * (xs[2 + i] - 1) + (kernel[i] - 1) * dil[i] + 1
            total = full + op[i] - target[i]
            half = total // 2
            if auto == "SAME_UPPER":
                begin.append(half)
                end.append(total - half)
            else:
                begin.append(total - half)
                end.append(half)
        return begin, end, op
    if auto == "VALID":
        return [0] * n, [0] * n, op
    pads = node.attrs.get("pads") or [0] * (2 * n)
    return list(pads[:n]), list(pads[n:]), op


@rule("ConvTranspose", check=_check_conv)
def _conv_transpose(node: NodeView, args, em):
    """ConvTranspose (1-D to 3-D) → ``F.conv_transposeNd``.

    Output position j is position j + pads_begin of the full transposed convolution (size
    ``stride * (in - 1) + (k - 1) * dilation + 1``), up to ``full + output_padding - pads_begin -
    pads_end``. Symmetric pads map onto torch's ``padding``/``output_padding``; otherwise the full
    result is cropped/extended with ``F.pad`` and the bias added afterwards.
    """
    n = _spatial_rank(node)
    kernel, strides, dil = _known_kernel(node, n)
    begin, end, op = _conv_transpose_pads(node, n)
    kwargs: dict = {}
    _tuple_kw(kwargs, "stride", strides, 1)
    native = begin == end and all(b >= 0 for b in begin)
    native = native and all(
        o < max(s, d) or o == 0 for o, s, d in zip(op, strides, dil, strict=True)
    )
    groups = node.attrs["group"]
    fn = f"F.conv_transpose{n}d"
    if native:
        _tuple_kw(kwargs, "padding", begin, 0)
        _tuple_kw(kwargs, "output_padding", op, 0)
        if groups != 1:
            kwargs["groups"] = groups
        _tuple_kw(kwargs, "dilation", dil, 1)
        return [em.call(fn, args[0], args[1], args[2], **kwargs)]
    if groups != 1:
        kwargs["groups"] = groups
    _tuple_kw(kwargs, "dilation", dil, 1)
    grow = [o - e for o, e in zip(op, end, strict=True)]
    extends = any(g > 0 for g in grow) or any(b < 0 for b in begin)
    bias = args[2] if not extends else None
    y = em.call(fn, args[0], args[1], bias, **kwargs)
    y = em.call("F.pad", y, torch_pad([-b for b in begin], grow))
    if extends and args[2] is not None:
        b = em.method(args[2], "reshape", -1, *([1] * n))
        y = em.call("operator.add", y, b)
    return [y]


def _conv_transpose_output_shapes(node: NodeView) -> list[tuple[int, ...] | None]:
    """ConvTranspose output shape (onnx 1.23 shape inference drops output_shape entries of 1)."""
    xs, ws = shape(node, 0), shape(node, 1)
    if xs is None or ws is None or _check_conv(node) is not None:
        return [None]
    n = len(xs) - 2
    kernel, strides, dil = _known_kernel(node, n)
    begin, end, op = _conv_transpose_pads(node, n)
    spatial = [
        strides[i] * (xs[2 + i] - 1) + (kernel[i] - 1) * dil[i] + 1 + op[i] - begin[i] - end[i]
        for i in range(n)
    ]
    return [(xs[0], ws[1] * node.attrs["group"], *spatial)]


SHAPE_RULES["ConvTranspose"] = _conv_transpose_output_shapes


# -- pooling -----------------------------------------------------------------------------------


def _check_pool(node: NodeView) -> str | None:
    n = _n_spatial(node)
    if n is None:
        return "the rank of the input is unknown"
    if n not in (1, 2, 3):
        return f"{n}-D pooling (torch has 1-D to 3-D)"
    kernel, strides, dil = _spatial_attrs(node, n)
    if kernel is None:
        return "kernel_shape is missing"
    p = _pads(node, kernel, strides, dil)
    if isinstance(p, str):
        return p
    if node.op_type == "MaxPool":
        begin, end = p
        if node.output(1) is not None:
            so = node.attrs.get("storage_order", 0)
            if so not in (0, 1):
                return f"storage_order={so}"
            if so == 1 and n != 2:
                return "storage_order=1 is only defined here for 2-D pooling"
            if not _native_max_pool(kernel, dil, begin, end):
                return "the Indices output with asymmetric or more than half-kernel pads"
            if shape(node, 0) is None:
                return "the Indices output needs a static input shape"
    if shape(node, 0) is None:
        begin, end = p
        if begin != end or node.attrs.get("ceil_mode"):
            return "asymmetric pads or ceil_mode need a static input shape"
    return None


def _pool_output_shapes(node: NodeView) -> list[tuple[int, ...] | None]:
    """Output shapes of a pooling node (also the Indices output of MaxPool)."""
    xs = shape(node, 0)
    if xs is None or _check_pool(node) is not None:
        return [None] * len(node.outputs)
    n = len(xs) - 2
    _, kernel, strides, dil, begin, end = _rule_geometry(node)
    ceil = bool(node.attrs.get("ceil_mode", 0))
    spatial = [
        pool_output_size(xs[2 + i], kernel[i], strides[i], dil[i], begin[i], end[i], ceil)
        for i in range(n)
    ]
    out = (xs[0], xs[1], *spatial)
    return [out] * len(node.outputs)


for _op in ("MaxPool", "AveragePool", "LpPool"):
    SHAPE_RULES[_op] = _pool_output_shapes


def _native_max_pool(kernel, dil, begin, end) -> bool:
    """Whether F.max_poolNd's own padding can express the pads (symmetric, at most half the
    undilated kernel, which is what torch checks)."""
    return begin == end and all(0 <= p <= k // 2 for p, k in zip(begin, kernel, strict=True))


@rule("MaxPool", check=_check_pool)
def _max_pool(node: NodeView, args, em):
    """MaxPool (1-D to 3-D) → ``F.max_poolNd``; asymmetric pads are torch's ``ceil_mode`` clipping
    where that gives the same windows (:func:`_clipped_pool`); other pads torch cannot express
    (or more than half the dilated kernel) become an ``F.pad`` with -inf and exact end padding
    for ``ceil_mode``. The optional Indices output holds flat indices into the whole input tensor
    (row-major, or column-major over H, W for ``storage_order=1``).

    2-D pooling runs on a channels-last tensor (:func:`through_channels_last`): PyTorch 2.13's
    contiguous CPU kernel is scalar, its channels-last one vectorised over channels. Measured
    (``python bench/layout_ops.py maxpool``, 1 thread, interleaved medians,
    ``bench/results/layout_ops.txt``, load average 13.5 on 2 cores): 3x3/2 ceil on
    (1, 64, 112, 112) 22.9 ms contiguous, 0.70 ms channels-last, 2.6 ms converting there and
    back; 3x3/1 pad 1 on (1, 256, 28, 28) 17.7 ms, 0.43 ms, 1.1 ms; on (1, 832, 7, 7) 1.17 ms,
    0.08 ms, 0.17 ms.
    """
    if node.output(1) is None and _whole_input_window(node):
        return [em.call("torch.amax", args[0], dim=_spatial_dims(node), keepdim=True)]
    return through_channels_last(node, em, args[0], lambda x: _max_pool_in(node, x, em))


def _whole_input_window(node: NodeView) -> bool:
    """Whether a pooling node has a single window, covering its whole input (pads at most add
    elements that do not count: -inf for MaxPool, ``count_include_pad=0`` for AveragePool), and
    that is best computed as ``torch.amax``/``torch.mean`` over the spatial dims.

    Measured (1 thread, interleaved medians, load 13; ``python bench/layout_ops.py avgpool``):
    7x7 on (1, 1024, 7, 7) ``F.avg_pool2d`` 39 µs contiguous, ``torch.mean`` 17 µs,
    ``F.avg_pool2d`` on a channels-last input 7.2 µs, so a channels-last pooling whose pads
    torch can express keeps its kernel; light_inception_v1's 7x7 pooling of (1, 1024, 6, 6) with
    end pads (``ops.avg_pool``: a padded window sum by convolution) took 0.77 ms in
    ``ramiel profile --compare-ort``, onnxruntime 0.01 ms.
    """
    xs = shape(node, 0)
    n = _n_spatial(node)
    if xs is None or n is None or len(xs) != n + 2:
        return False
    kernel, strides, dil = _spatial_attrs(node, n)
    p = _pads(node, kernel, strides, dil)
    if kernel is None or isinstance(p, str) or any(d != 1 for d in dil):
        return False
    begin, end = p
    ceil = bool(node.attrs.get("ceil_mode", 0))
    for i in range(n):
        size = pool_output_size(xs[2 + i], kernel[i], strides[i], 1, begin[i], end[i], ceil)
        if size != 1 or kernel[i] - begin[i] < xs[2 + i]:
            return False
    padded = any(begin) or any(end)
    if node.op_type == "AveragePool" and padded and node.attrs.get("count_include_pad", 0):
        return False
    # channels-last: the pooling kernel is faster where torch can express the pads
    return not (node.layout == "channels_last" and not padded)


def _max_pool_in(node: NodeView, x, em):
    """The MaxPool calls on ``x`` (the input in the format the op computes in)."""
    n, kernel, strides, dil, begin, end = _rule_geometry(node)
    ceil = bool(node.attrs.get("ceil_mode", 0))
    fn = f"F.max_pool{n}d"
    kwargs: dict = {}
    k = tuple(kernel)
    if strides != kernel:
        kwargs["stride"] = tuple(strides)
    want_idx = node.output(1) is not None
    if not want_idx and not _native_max_pool(kernel, dil, begin, end):
        clipped = _clipped_pool(node, kernel, strides, dil, begin, end, ceil)
        if clipped is not None:  # the same windows as torch's padding `begin` and `clipped`
            end, ceil = list(begin), clipped
    if _native_max_pool(kernel, dil, begin, end):
        _tuple_kw(kwargs, "padding", begin, 0)
        _tuple_kw(kwargs, "dilation", dil, 1)
        if ceil:
            kwargs["ceil_mode"] = True
        if not want_idx:
            return [em.call(fn, x, k, **kwargs)]
        res = em.call(fn, x, k, return_indices=True, **kwargs)
        y = em.call("operator.getitem", res, 0)
        idx = em.call("operator.getitem", res, 1)
        idx = em.call(
            "ops.max_pool_indices", idx, known_shape(node, 0), node.attrs.get("storage_order", 0)
        )
        return [y, idx]
    xs = shape(node, 0)
    if xs is not None:
        end = [
            (pool_output_size(xs[2 + i], kernel[i], strides[i], dil[i], begin[i], end[i], ceil) - 1)
            * strides[i]
            + (kernel[i] - 1) * dil[i]
            + 1
            - xs[2 + i]
            - begin[i]
            for i in range(n)
        ]
    fill = _lowest(in_dtype(node))
    x = em.call("F.pad", x, torch_pad(begin, end), value=fill)
    _tuple_kw(kwargs, "dilation", dil, 1)
    return [em.call(fn, x, k, **kwargs)]


def _clipped_pool(node: NodeView, kernel, strides, dil, begin, end, ceil) -> bool | None:
    """The ``ceil_mode`` with which torch's own pooling, padding ``begin`` on both sides, gives
    the output of ONNX's asymmetric ``(begin, end)`` pads, or ``None`` if neither does.

    Torch's windows start at the same places (``i * stride - begin``) and ignore what lies outside
    the input, as ONNX's MaxPool does with its pads and AveragePool with ``count_include_pad=0``
    in its divisor; so where the number of windows agrees in every dim the results are equal.
    It does for the end-only pads that TensorFlow-converted and Caffe-converted models use
    before a strided pooling: ``pads = [0, 0, 1, 1]``, 3x3/2 on 112x112 is 56x56 either way,
    ``ceil_mode=True`` without pads (the last window clipped at the input's end) in torch.
    Measured (1 thread, channels-last, medians of 50 calls, load 0.4): 3x3/2 on
    (1, 64, 112, 112) 0.82 ms as ``F.pad`` with -inf + ``F.max_pool2d``, 0.43 ms with
    ``ceil_mode``; on (1, 192, 56, 56) 0.56 and 0.29 ms (light_inception_v2's four)."""
    xs = shape(node, 0)
    if xs is None or not all(0 <= b <= k // 2 for b, k in zip(begin, kernel, strict=True)):
        return None
    n = len(kernel)
    want = [
        pool_output_size(xs[2 + i], kernel[i], strides[i], dil[i], begin[i], end[i], ceil)
        for i in range(n)
    ]
    for mode in (False, True):
        got = [
            pool_output_size(xs[2 + i], kernel[i], strides[i], dil[i], begin[i], begin[i], mode)
            for i in range(n)
        ]
        if got == want:
            return mode
    return None


def _lowest(dt: str) -> float | int:
    lows = {"int8": -128, "uint8": 0, "int16": -32768, "int32": -(2**31), "int64": -(2**63)}
    return lows.get(dt, float("-inf"))


@rule("AveragePool", check=_check_pool)
def _average_pool(node: NodeView, args, em):
    """AveragePool (1-D to 3-D) → ``F.avg_poolNd`` when torch computes the same thing (symmetric
    pads of at most half the kernel, no dilation; or, without the pads in the divisor, end pads
    that torch's ``ceil_mode`` clipping gives, see :func:`_clipped_pool`), else ``ops.avg_pool``.

    The divisor counts the window's elements inside input + pads (``count_include_pad=1``) or
    inside the input only (``count_include_pad=0``); ceil-mode overhang beyond the pads never counts.

    ``F.avg_pool2d`` runs on a channels-last tensor (:func:`through_channels_last`). Measured
    (``python bench/layout_ops.py avgpool``, 1 thread, load 13.5): 3x3/1 pad 1 without the pads
    in the divisor on (1, 256, 28, 28) 10.5 ms contiguous, 0.22 ms channels-last, 0.82 ms
    converting there and back; 2x2/2 on (1, 128, 56, 56) 0.94, 0.11, 0.61 ms.
    """
    n, kernel, strides, dil, begin, end = _rule_geometry(node)
    ceil = bool(node.attrs.get("ceil_mode", 0))
    cip = bool(node.attrs.get("count_include_pad", 0))
    native = begin == end and all(d == 1 for d in dil)
    native = native and all(0 <= p <= k // 2 for p, k in zip(begin, kernel, strict=True))
    if _whole_input_window(node):
        return [spatial_mean(node, args[0], em)]
    if not native and not cip and all(d == 1 for d in dil):
        clipped = _clipped_pool(node, kernel, strides, dil, begin, end, ceil)
        if clipped is not None:
            native, ceil = True, clipped
    if native:
        kwargs: dict = {}
        if strides != kernel:
            kwargs["stride"] = tuple(strides)
        _tuple_kw(kwargs, "padding", begin, 0)
        if ceil:
            kwargs["ceil_mode"] = True
        if any(begin) and not cip:
            kwargs["count_include_pad"] = False

        def pool(x):
            return em.call(f"F.avg_pool{n}d", x, tuple(kernel), **kwargs)

        return [through_channels_last(node, em, args[0], pool)]
    return [
        em.call(
            "ops.avg_pool",
            args[0],
            tuple(kernel),
            tuple(strides),
            tuple(begin) + tuple(end),
            dilations=tuple(dil),
            ceil_mode=ceil,
            count_include_pad=cip,
        )
    ]


@rule("LpPool", check=_check_pool)
def _lp_pool(node: NodeView, args, em):
    """LpPool: y = (sum over the window of |x|^p)^(1/p); pads add zeros."""
    n, kernel, strides, dil, begin, end = _rule_geometry(node)
    return [
        em.call(
            "ops.lp_pool",
            args[0],
            tuple(kernel),
            tuple(strides),
            tuple(begin) + tuple(end),
            p=node.attrs["p"],
            dilations=tuple(dil),
            ceil_mode=bool(node.attrs.get("ceil_mode", 0)),
        )
    ]


def _check_global(node: NodeView) -> str | None:
    return None if rank(node, 0) is not None else "the rank of the input is unknown"


def _spatial_dims(node: NodeView) -> tuple[int, ...]:
    return tuple(range(2, len(known_shape(node, 0))))


@rule("GlobalAveragePool", check=_check_global)
def _global_average_pool(node: NodeView, args, em):
    """GlobalAveragePool: mean over the spatial dims, kept as size 1
    (:func:`spatial_mean`)."""
    return [spatial_mean(node, args[0], em)]


def spatial_mean(node: NodeView, x, em):
    """The mean of ``x`` over its spatial dims, kept as size 1: ``torch.mean``, or on a
    channels-last float input (a global pooling in a channels-last region, :mod:`ramiel.layout`)
    ``F.avg_pool2d`` with the whole map as its window.

    torch 2.13 reduces a channels-last tensor in ``torch.mean`` vectorised across the channels,
    with the last ``C mod 16`` in a scalar tail, so equal channels come out up to 1 ULP apart
    (what made light_squeezenet's constant-weight logits, ~6.5e9, differ after Softmax); its
    channels-last average pooling sums every channel's window alike, equal to the contiguous
    ``F.avg_pool2d`` bit for bit, and is the fastest form. Measured against the conversion to
    contiguous and ``torch.mean`` (2026-12-07, AMD EPYC, 2 threads, hot, interleaved medians,
    /tmp script, load 1.0): (1, 1000, 13, 13) 25 against 185 µs, (1, 2048, 7, 7) 17 against 218,
    (1, 544, 7, 7) 8 against 64; ``torch.mean`` with float64 accumulation on the channels-last
    tensor 93, 68, 35; ``F.adaptive_avg_pool2d`` 31, 27, 18.
    """
    xs = shape(node, 0)
    dims = _spatial_dims(node)
    if (
        node.layout == "channels_last"
        and xs is not None
        and len(xs) == 4
        and all(isinstance(d, int) and d > 0 for d in xs[2:])
        and is_float(in_dtype(node))
    ):
        return em.call("F.avg_pool2d", x, (xs[2], xs[3]))
    if node.layout == "channels_last" and in_dtype(node) == "float32":
        wide = em.call("torch.mean", x, dim=dims, keepdim=True, dtype=dtype("float64"))
        return em.method(wide, "float")
    return em.call("torch.mean", x, dim=dims, keepdim=True)


@rule("GlobalMaxPool", check=_check_global)
def _global_max_pool(node: NodeView, args, em):
    """GlobalMaxPool: max over the spatial dims, kept as size 1 (in either memory format: a
    maximum does not round)."""
    return [em.call("torch.amax", args[0], dim=_spatial_dims(node), keepdim=True)]


@rule("GlobalLpPool", check=_check_global)
def _global_lp_pool(node: NodeView, args, em):
    """GlobalLpPool: the p-norm over the spatial dims, kept as size 1."""
    return [
        em.call(
            "torch.linalg.vector_norm",
            args[0],
            node.attrs["p"],
            dim=_spatial_dims(node),
            keepdim=True,
        )
    ]


# -- normalisation -----------------------------------------------------------------------------


def _check_batch_norm(node: NodeView) -> str | None:
    if node.opset < 9 and node.attrs.get("spatial", 1) != 1:
        return "spatial=0"
    training = node.attrs.get("training_mode", 0) if node.opset >= 14 else 0
    if node.opset < 14 and any(node.output(i) is not None for i in range(1, 5)):
        return "training-mode outputs (mean, var, saved_mean, saved_var) before opset 14"
    if not training and any(node.output(i) is not None for i in range(1, 3)):
        return "running_mean/running_var outputs need training_mode=1"
    return None


@rule("BatchNormalization", check=_check_batch_norm)
def _batch_norm(node: NodeView, args, em):
    """BatchNormalization: inference → ``F.batch_norm`` with the running statistics; with
    ``training_mode=1`` (opset >= 14) the batch statistics normalise and the running statistics
    are updated as ``running * momentum + batch * (1 - momentum)`` (population variance).
    Before opset 7 ``is_test`` is ignored (inference), as onnxruntime does."""
    x, scale, b, mean, var = args[:5]
    eps = node.attrs["epsilon"]
    dt = in_dtype(node)
    params = []
    for i, v in zip(range(1, 5), (scale, b, mean, var), strict=True):
        params.append(v if in_dtype(node, i) == dt else em.method(v, "to", dtype(dt)))
    scale, b, mean, var = params
    if node.opset >= 14 and node.attrs.get("training_mode", 0):
        res = em.call(
            "ops.batch_norm_training", x, scale, b, mean, var, eps, node.attrs["momentum"]
        )
        return [em.call("operator.getitem", res, i) for i in range(3)]
    kwargs = {} if eps == 1e-5 else {"eps": eps}
    return [em.call("F.batch_norm", x, mean, var, scale, b, **kwargs)]


@rule("InstanceNormalization")
def _instance_norm(node: NodeView, args, em):
    """InstanceNormalization: per (n, c) normalisation over the spatial dims, then scale/bias."""
    eps = node.attrs["epsilon"]
    kwargs = {} if eps == 1e-5 else {"eps": eps}
    return [em.call("F.instance_norm", args[0], weight=args[1], bias=args[2], **kwargs)]


def _check_layer_norm(node: NodeView) -> str | None:
    if rank(node, 0) is None:
        return "the rank of the input is unknown"
    return None


@rule("LayerNormalization", check=_check_layer_norm)
def _layer_norm(node: NodeView, args, em):
    """LayerNormalization (opset 17): normalise over dims axis.. (population variance), then
    ``* scale + B`` (broadcast). ``F.layer_norm`` when scale/B have exactly the normalised shape
    and the Mean/InvStdDev outputs are unused, else ``ops.layer_norm``."""
    xs = known_shape(node, 0)
    r = len(xs)
    axis = norm_axis(node.attrs["axis"], r)
    eps = node.attrs["epsilon"]
    norm_shape = tuple(xs[axis:])
    simple = node.output(1) is None and node.output(2) is None
    simple = simple and shape(node, 1) == norm_shape
    simple = simple and (node.input(2) is None or shape(node, 2) == norm_shape)
    if simple:
        kwargs = {} if eps == 1e-5 else {"eps": eps}
        return [em.call("F.layer_norm", args[0], norm_shape, args[1], args[2], **kwargs)]
    res = em.call("ops.layer_norm", args[0], args[1], args[2], axis, eps)
    return [em.call("operator.getitem", res, i) for i in range(3)]


def _check_group_norm(node: NodeView) -> str | None:
    xs = shape(node, 0)
    if xs is None:
        return "the input shape is unknown"
    return None


def _same_shape_as_input(node: NodeView) -> list[tuple[int, ...] | None]:
    """Output 0 has input 0's shape: the shape rule of the normalisations whose output shape
    onnx shape inference does not give (GroupNormalization-21, MeanVarianceNormalization: it
    does not infer their function bodies; a node after one had failed as 'shape not static')."""
    return [shape(node, 0)]


SHAPE_RULES["GroupNormalization"] = _same_shape_as_input
SHAPE_RULES["MeanVarianceNormalization"] = _same_shape_as_input


@rule("GroupNormalization", check=_check_group_norm)
def _group_norm(node: NodeView, args, em):
    """GroupNormalization: ``F.group_norm``; before opset 21 scale/bias have one value per
    group (repeated per channel here), from opset 21 one per channel."""
    xs = known_shape(node, 0)
    g = node.attrs["num_groups"]
    c = xs[1]
    scale, bias = args[1], args[2]
    ss = shape(node, 1)
    if ss is not None and ss[0] != c:
        scale = em.method(scale, "repeat_interleave", c // g)
        bias = em.method(bias, "repeat_interleave", c // g)
    eps = node.attrs["epsilon"]
    kwargs = {} if eps == 1e-5 else {"eps": eps}
    return [em.call("F.group_norm", args[0], g, scale, bias, **kwargs)]


@rule("RMSNormalization", check=_check_layer_norm)
def _rms_norm(node: NodeView, args, em):
    """RMSNormalization (opset 23): x / sqrt(mean(x^2 over axis..) + epsilon) * scale."""
    xs = known_shape(node, 0)
    axis = norm_axis(node.attrs["axis"], len(xs))
    norm_shape = tuple(xs[axis:])
    eps = node.attrs["epsilon"]
    if shape(node, 1) == norm_shape:
        return [em.call("F.rms_norm", args[0], norm_shape, args[1], eps=eps)]
    return [em.call("ops.rms_norm", args[0], args[1], axis, eps)]


@rule("LpNormalization")
def _lp_norm(node: NodeView, args, em):
    """LpNormalization: x / ||x||_p along ``axis`` (zero vectors stay zero)."""
    return [em.call("F.normalize", args[0], p=float(node.attrs["p"]), dim=node.attrs["axis"])]


@rule("MeanVarianceNormalization")
def _mvn(node: NodeView, args, em):
    """MeanVarianceNormalization: (x - mean) / (sqrt(mean(x^2) - mean^2) + 1e-9) over ``axes``."""
    axes = tuple(node.attrs.get("axes") or [0, 2, 3])
    return [em.call("ops.mean_variance_normalization", args[0], axes)]


@rule("LRN")
def _lrn(node: NodeView, args, em):
    """LRN: y = x / (bias + alpha / size * sum of x^2 over channels
    [c - floor((size-1)/2), c + ceil((size-1)/2)])^beta, by ``ops.lrn`` (shifted-slice sums of
    the squares, in the input's memory format) for every size and float type.

    ``F.local_response_norm`` (the window sum as an ``avg_pool3d``, then ``pow``) measured 4-20x
    slower (``python bench/layout_ops.py lrn``, 1 thread, interleaved medians, load 13.5): size 5
    on (1, 64, 56, 56) 15.5 ms against 0.94 ms, on (1, 192, 56, 56) 52.5 ms against 12.4 ms
    (channels-last: 0.96 and 10.9 ms); it also handles odd sizes only."""
    size = node.attrs["size"]
    a, b, k = node.attrs["alpha"], node.attrs["beta"], node.attrs["bias"]
    return [em.call("ops.lrn", args[0], size, alpha=a, beta=b, bias=k)]


# -- softmax family ----------------------------------------------------------------------------

_SOFTMAX = {"Softmax": "torch.softmax", "LogSoftmax": "torch.log_softmax", "Hardmax": "ops.hardmax"}


def _check_softmax(node: NodeView) -> str | None:
    if node.opset < 13 and rank(node, 0) is None:
        return "the rank of the input is unknown"
    return None


@rule("Softmax", "LogSoftmax", "Hardmax", check=_check_softmax)
def _softmax(node: NodeView, args, em):
    """Softmax / LogSoftmax / Hardmax. From opset 13 along ``axis`` (default -1); before, the
    input is flattened to 2-D at ``axis`` (default 1) and normalised along dim 1."""
    fn = _SOFTMAX[node.op_type]
    axis = node.attrs["axis"]
    if node.opset >= 13:
        return [em.call(fn, args[0], axis)]
    xs = known_shape(node, 0)
    r = len(xs)
    axis = norm_axis(axis, r)
    if axis == r - 1:
        return [em.call(fn, args[0], -1)]
    lead = math.prod(xs[:axis])
    rest = math.prod(xs[axis:])
    y = em.method(args[0], "reshape", lead, rest)
    y = em.call(fn, y, 1)
    return [em.method(y, "reshape", *xs)]


# -- attention ---------------------------------------------------------------------------------


def _check_attention(node: NodeView) -> str | None:
    qs, ks, vs = shape(node, 0), shape(node, 1), shape(node, 2)
    if qs is None or ks is None or vs is None:
        return "Q, K and V need static shapes"
    if not (len(qs) == len(ks) == len(vs)) or len(qs) not in (3, 4):
        return "Q, K and V must all be 3-D or all 4-D"
    if any(node.input(i) is not None for i in (4, 5, 6)):
        return "past_key/past_value/nonpad_kv_seqlen (a KV cache)"
    if any(node.output(i) is not None for i in (1, 2, 3)):
        return "the present_key/present_value/qk_matmul_output outputs"
    if node.attrs.get("softcap") or node.attrs.get("qk_matmul_output_mode"):
        return "softcap or qk_matmul_output_mode"
    if node.attrs.get("left_window_size", -1) not in (None, -1) or node.attrs.get(
        "right_window_size", -1
    ) not in (None, -1):
        return "a local attention window (left/right_window_size)"
    if in_dtype(node) not in ("float32", "float64", "float16", "bfloat16"):
        return f"element type {in_dtype(node)}"
    if len(qs) == 3:
        hq, hk = node.attrs.get("q_num_heads"), node.attrs.get("kv_num_heads")
        if not hq or not hk or qs[2] % hq or ks[2] % hk or vs[2] % hk:
            return "3-D inputs need q_num_heads/kv_num_heads dividing the hidden sizes"
    else:
        hq, hk = qs[1], ks[1]
    if hq % hk:
        return f"{hq} query heads are not a multiple of {hk} key/value heads"
    if node.attrs.get("is_causal") and node.input(3) is not None:
        return "is_causal together with attn_mask"
    ms = shape(node, 3)
    if node.input(3) is not None and (ms is None or ms[-1] != ks[-2 if len(ks) == 4 else 1]):
        return "attn_mask must have a static shape whose last dimension is the kv sequence"
    return None


@rule("Attention", check=_check_attention)
def _attention(node: NodeView, args, em):
    """Attention (opset 23) without a KV cache: ``softmax(Q K^T * scale + mask) V`` =
    ``F.scaled_dot_product_attention`` (``scale`` defaults to 1/sqrt(head size) in both; a
    boolean mask keeps the True positions in both; ``is_causal`` is the top-left lower triangle
    in both when there is no past; fewer key/value heads than query heads is ``enable_gqa``).
    A fully masked row gives zeros in both. 3-D inputs ``[B, S, heads * head]`` are split into
    heads first and merged back after."""
    qs, ks, vs = known_shape(node, 0), known_shape(node, 1), known_shape(node, 2)
    q, k, v = args[0], args[1], args[2]
    three_d = len(qs) == 3
    if three_d:
        hq, hk = node.attrs["q_num_heads"], node.attrs["kv_num_heads"]

        def heads(x, s, h):  # [B, S, h * d] -> [B, h, S, d]
            x = em.method(x, "reshape", s[0], s[1], h, s[2] // h)
            return em.method(x, "transpose", 1, 2)

        q, k, v = heads(q, qs, hq), heads(k, ks, hk), heads(v, vs, hk)
    else:
        hq, hk = qs[1], ks[1]
    kwargs: dict = {}
    if node.input(3) is not None:
        kwargs["attn_mask"] = args[3]
    if node.attrs.get("is_causal"):
        kwargs["is_causal"] = True
    scale = node.attrs.get("scale")
    if scale:
        kwargs["scale"] = scale
    if hq != hk:
        kwargs["enable_gqa"] = True
    y = em.call("F.scaled_dot_product_attention", q, k, v, **kwargs)
    if three_d:
        y = em.method(y, "transpose", 1, 2)
        y = em.method(y, "reshape", qs[0], qs[1], hq * (vs[2] // hk))
    return [y]


# -- matrix products ---------------------------------------------------------------------------


@rule("MatMul")
def _matmul(node: NodeView, args, em):
    """MatMul: numpy matmul semantics = ``torch.matmul``; one that ``--prepack-matmul`` marked
    (``node.prepack``: a constant 2-D float32 weight) → ``ops.matmul_prepacked``, the weight
    reordered once into oneDNN's format (measurements: :mod:`ramiel.passes.prepack_matmul`).
    With a fused epilogue (``node.prepack`` ``"bias"``, ``"bias+relu"``) the lowering passes
    the bias Add's constant as a third input: ``ops.matmul_prepacked(x, w, b)``, with
    ``activation='relu'``."""
    if node.prepack is not None and node.prepack != "none":
        kwargs = {"activation": "relu"} if node.prepack == "bias+relu" else {}
        return [em.call("ops.matmul_prepacked", args[0], args[1], args[2], **kwargs)]
    if node.prepack is not None:
        return [em.call("ops.matmul_prepacked", args[0], args[1])]
    return [em.call("torch.matmul", args[0], args[1])]


@rule("Gemm")
def _gemm(node: NodeView, args, em):
    """Gemm: Y = alpha * A' @ B' + beta * C, A' = A.T if transA, B' = B.T if transB; C (optional
    from opset 11) broadcasts to (M, N). ``F.linear`` for the common transB=1, alpha=beta=1,
    1-D C case; ``torch.addmm`` otherwise."""
    a, b, c = args[0], args[1], args[2]
    alpha, beta = node.attrs["alpha"], node.attrs["beta"]
    ta, tb = node.attrs["transA"], node.attrs["transB"]
    bs, cs = shape(node, 1), shape(node, 2)
    if ta:
        a = em.method(a, "t")
    bias_ok = c is None or (
        beta == 1.0 and cs is not None and bs is not None and tuple(cs) == (bs[0],)
    )
    if tb and alpha == 1.0 and bs is not None and bias_ok:
        return [em.call("F.linear", a, b, c)]
    if tb:
        b = em.method(b, "t")
    if c is None:
        y = em.call("torch.matmul", a, b)
        return [y if alpha == 1.0 else em.call("operator.mul", y, alpha)]
    kwargs = {}
    if beta != 1.0:
        kwargs["beta"] = beta
    if alpha != 1.0:
        kwargs["alpha"] = alpha
    return [em.call("torch.addmm", c, a, b, **kwargs)]


@rule("Einsum")
def _einsum(node: NodeView, args, em):
    """Einsum: ``torch.einsum`` (numpy conventions, implicit output included)."""
    eq = node.attrs["equation"].replace(" ", "")
    return [em.call("torch.einsum", eq, *args[: len(node.inputs)])]


@rule("Det")
def _det(node: NodeView, args, em):
    """Det: determinant of the trailing square matrices."""
    return [em.call("torch.linalg.det", args[0])]


_GRID_MODES = {"linear": "bilinear", "bilinear": "bilinear", "nearest": "nearest"}


def _check_grid_sample(node: NodeView) -> str | None:
    r = rank(node, 0)
    mode = node.attrs.get("mode") or "linear"
    if r not in (4, 5):
        return "needs a 4-D or 5-D input (torch's F.grid_sample)"
    if mode in ("cubic", "bicubic") and r != 4:
        return "cubic mode on a 5-D input (torch has bicubic for 4-D only)"
    if mode not in (*_GRID_MODES, "cubic", "bicubic"):
        return f"mode='{mode}'"
    if (node.attrs.get("padding_mode") or "zeros") not in ("zeros", "border", "reflection"):
        return f"padding_mode='{node.attrs.get('padding_mode')}'"
    return None


@rule("GridSample", check=_check_grid_sample)
def _grid_sample(node: NodeView, args, em):
    """GridSample (opset 16: bilinear/nearest/bicubic; 20: linear/nearest/cubic, also 5-D) =
    ``F.grid_sample``: grid values in [-1, 1] address input corners (``align_corners=1``) or
    pixel edges; out-of-range samples follow ``padding_mode``; nearest rounds half to even."""
    mode = node.attrs.get("mode") or "linear"
    tmode = "bicubic" if mode in ("cubic", "bicubic") else _GRID_MODES[mode]
    kwargs: dict = {"mode": tmode, "padding_mode": node.attrs.get("padding_mode") or "zeros"}
    kwargs["align_corners"] = bool(node.attrs.get("align_corners", 0))
    return [em.call("F.grid_sample", args[0], args[1], **kwargs)]


def _check_affine_grid(node: NodeView) -> str | None:
    if const(node, 1) is None:
        return "size (input 1) must be a compile-time constant"
    if in_dtype(node, 0) not in ("float32", "float64"):
        return f"theta has element type {in_dtype(node, 0)} (float32 or float64 only)"
    return None


@rule("AffineGrid", check=_check_affine_grid)
def _affine_grid(node: NodeView, args, em):
    """AffineGrid (opset 20) = ``F.affine_grid``: the grid of ``size`` ``[N, C, H, W]`` (or
    ``[N, C, D, H, W]``) sampled by the affine matrices ``theta``; ``align_corners`` as in
    GridSample (the ONNX operator is defined after PyTorch's)."""
    size = tuple(int(v) for v in np.asarray(const(node, 1)).reshape(-1))
    align = bool(node.attrs.get("align_corners", 0))
    return [em.call("F.affine_grid", args[0], size, align_corners=align)]
