"""Memory formats of activations: which ops compute in channels-last, and what a value is in.

A 4-D activation ``(N, C, H, W)`` is either *contiguous* (NCHW strides, PyTorch's default) or
*channels-last* (the same shape and values with NHWC strides, ``torch.channels_last``). The format
never changes a result, only how fast PyTorch's kernels run on it: on this project's 2-core
machine (PyTorch 2.13 eager, one thread, 2026-12-01, ``python bench/layout_ops.py``,
``bench/results/layout_ops.txt``) ``F.max_pool2d`` runs 14-45x faster on a channels-last tensor,
``F.avg_pool2d`` 8-47x, ``F.interpolate`` 16-50x, ``F.conv2d`` with a channels-last input and
kernel 0-15 % faster, and prepacked (``--prepack-conv``) 1.4-2.3x faster than ``F.conv2d``
contiguous (:data:`PREPACKED_CONV_SPEEDUP`); element-wise ops, ``torch.cat`` and
``F.batch_norm`` keep the format of their inputs at the same speed; a conversion is a strided
copy at 6-12 GB/s (:data:`CONVERT_BW`).

``--assign-layout`` (:mod:`ramiel.passes.assign_layout`) decides a format per op and records it
as the discardable attribute ``ramiel.layout = "channels_last"`` on the ops that compute in
channels-last (no attribute: contiguous). The lowering (:mod:`ramiel.passes.lower_to_torchpy`)
then converts an operand only where its producer's format differs from what the consumer
computes in (``x.contiguous(memory_format=torch.channels_last)`` or ``x.contiguous()``), once per
value and function, converts graph outputs back to contiguous, gives cross-cluster channels the
format of the tensor they carry and marks the 4-D weights of channels-last ops (conv kernels) to
be converted once when the weights file is loaded.

Op classes (for a 4-D first input; 5-D and other ranks stay contiguous):

* anchors (trait :class:`~ramiel.dialects.onnx_traits.LayoutAnchor`: Conv, MaxPool, AveragePool,
  Resize, Upsample) are faster in channels-last: they start a channels-last region;
* transparent ops (trait :class:`~ramiel.dialects.onnx_traits.LayoutTransparent`) run at the same
  speed in either format and keep the format of their inputs (element-wise, Concat,
  BatchNormalization, LRN through ``ops.lrn``, constant Pad, a channel shuffle: the
  Gather of ``--fuse-channel-shuffle``, one ``F.channel_shuffle``, and a Split along the
  channels, whose parts are channels-last views: ``--combine-parallel-convs``); they join the
  region of a channels-last input;
* every other op (Reshape, Flatten, Transpose, other Splits, Softmax, Gemm, ...) reads contiguous
  tensors.

Global poolings (:data:`GLOBAL_POOLS`, and a MaxPool or AveragePool to a 1x1 map) read their
input in the format it comes in, and their ``(N, C, 1, 1)`` result is both formats: a
channels-last region ends in them without a conversion. The conversion to contiguous before them had cost more than the pooling: 228 against
81 µs for light_squeezenet's (1, 1000, 13, 13), see the GlobalAveragePool lowering rule. torch
2.13 reduces a channels-last tensor over H, W vectorised across channels, with the last ``C mod
16`` channels in a scalar tail, so in float32 equal channels can come out 1 ULP apart (the
Softmax after it in the zoo models with constant weights, logits ~6.5e9 where 1 ULP = 512, then
gave 1/8 instead of 1/1000 to 8 classes of light_squeezenet); a channels-last mean is therefore
``F.avg_pool2d`` over the whole map, which sums every channel alike
(:func:`ramiel.lowering.nn.spatial_mean`). A maximum does not round.

A value of shape ``(N, C, H, W)`` with ``H * W == 1`` or ``C == 1`` is both contiguous and
channels-last (PyTorch ignores the strides of size-1 dims): it never needs a conversion.
"""

from __future__ import annotations

from typing import Literal, TypeGuard, get_args

from xdsl.dialects.builtin import TensorType
from xdsl.ir import BlockArgument, Operation, OpResult, SSAValue

from ramiel.attrs import LAYOUT_ATTR, PREPACK_ATTR, get_str, remove, set_str
from ramiel.dialects.cluster import ClusterOp, RecvOp, YieldOp
from ramiel.dialects.onnx import OnnxOp

CHANNELS_LAST = "channels_last"
"""The attribute value (and ``torch.channels_last``'s name) of the channels-last format."""

CONTIGUOUS = "contiguous_format"
"""The name of PyTorch's default (NCHW, row-major) format, ``torch.contiguous_format``."""

FORMATS = (CONTIGUOUS, CHANNELS_LAST)

GLOBAL_POOLS = ("GlobalAveragePool", "GlobalMaxPool")
"""The global poolings that read a 4-D input in either format (see the module docstring): in a
channels-last region they compute in channels-last; their result needs no conversion."""

LayoutMode = Literal["auto", "channels-last", "nchw"]
"""Type of ``--assign-layout{format=...}``, ``ramiel compile --layout`` and ``layout=``."""

LAYOUT_MODES: tuple[str, ...] = get_args(LayoutMode)
"""The values of :data:`LayoutMode`."""


def layout_of(op: Operation) -> str:
    """The format ``op`` computes its 4-D activations in (``ramiel.layout``; default
    :data:`CONTIGUOUS`)."""
    fmt = get_str(op, LAYOUT_ATTR)
    return fmt if fmt is not None else CONTIGUOUS


def prepack_of(op: Operation) -> str | None:
    """What a prepacked op runs fused (``ramiel.prepack``): for a Conv the activation
    (``"none"``, ``"relu"``), for a MatMul its epilogue (``"none"`` or one of
    :data:`MATMUL_EPILOGUES`); None when ``op`` is not prepacked."""
    return get_str(op, PREPACK_ATTR)


MATMUL_EPILOGUES = ("bias", "bias+relu")
"""The ``ramiel.prepack`` values of a MatMul that runs its epilogue fused (``--prepack-matmul``):
the bias Add that alone reads the product, then the Relu that alone reads the sum (a Gelu stays
``F.gelu``: oneDNN's GELU post-op was measured slower, see :mod:`ramiel.passes.prepack_matmul`)."""


def only_reader(v: SSAValue, op_types: tuple[str, ...], block: object) -> OnnxOp | None:
    """The op of ``op_types`` that alone reads ``v``, in ``block``, with ``v``'s type (the op a
    prepacked Conv or MatMul may run fused), or None."""
    uses = list(v.uses)
    if len(uses) != 1:
        return None
    user = uses[0].operation
    if (
        not isinstance(user, OnnxOp)
        or user.op_type not in op_types
        or user.parent is not block
        or len(user.results) != 1
        or user.results[0].type != v.type
    ):
        return None
    return user


def _bias_of(add: OnnxOp, product: SSAValue) -> SSAValue | None:
    """The constant bias of ``add`` (the operand that is not ``product``): float32, of shape
    ``(N,)`` with leading 1s allowed, where N is the product's last dimension."""
    if len(add.operands) != 2:
        return None
    others = [v for v in add.operands if v is not product]
    if len(others) != 1:
        return None
    bias, ps = others[0], static_shape_of(product)
    owner, bs = bias.owner, static_shape_of(bias)
    if not isinstance(owner, OnnxOp) or owner.op_type != "Constant" or bs is None or not ps:
        return None
    if not isinstance(bias.type, TensorType) or bias.type.element_type != _element(product):
        return None
    if len(bs) > len(ps) or not bs or bs[-1] != ps[-1] or any(d != 1 for d in bs[:-1]):
        return None
    return bias


def _element(v: SSAValue) -> object:
    return v.type.element_type if isinstance(v.type, TensorType) else None


def matmul_epilogue(op: OnnxOp) -> tuple[str, list[OnnxOp], SSAValue | None]:
    """The epilogue a prepacked MatMul ``op`` can run fused: ``(marker, ops, bias)``.

    ``ops`` is ``[add]`` or ``[add, relu]`` and ``marker`` its :data:`MATMUL_EPILOGUES` value,
    or ``("none", [], None)``. The Add alone reads the product (so the product is no graph
    output and crosses no channel), in the same block, and adds a constant float32 bias of shape
    ``(N,)`` (leading 1s allowed) with the product's type; the Relu then alone reads the sum, in
    the same block.
    """
    block, product = op.parent, op.results[0]
    add = only_reader(product, ("Add",), block)
    bias = None if add is None else _bias_of(add, product)
    if add is None or bias is None:
        return "none", [], None
    relu = only_reader(add.results[0], ("Relu",), block)
    if relu is None:
        return "bias", [add], bias
    return "bias+relu", [add, relu], bias


def set_layout(op: Operation, fmt: str) -> None:
    """Record ``fmt`` on ``op`` (the attribute is removed for :data:`CONTIGUOUS`)."""
    if fmt == CONTIGUOUS:
        remove(op, LAYOUT_ATTR)
    else:
        set_str(op, LAYOUT_ATTR, fmt)


def static_shape_of(v: SSAValue) -> tuple[int, ...] | None:
    t = v.type
    if not isinstance(t, TensorType):
        return None
    s = tuple(t.get_shape())
    return s if all(d >= 0 for d in s) else None


def has_format(shape: tuple[int, ...] | None) -> TypeGuard[tuple[int, ...]]:
    """Whether a tensor of ``shape`` can be in two different formats: 4-D with ``C > 1`` and
    ``H * W > 1`` (otherwise its contiguous and channels-last strides are the same to PyTorch)."""
    return shape is not None and len(shape) == 4 and shape[1] > 1 and shape[2] * shape[3] > 1


def source_value(v: SSAValue, sends: dict[str, SSAValue] | None = None) -> SSAValue:
    """The value ``v`` stands for across clusters: a ``cluster.recv`` is the value sent on its
    channel (``sends``: channel -> sent value), a ``cluster.cluster`` result the value its
    cluster yields."""
    seen = set()
    while v not in seen:
        seen.add(v)
        owner = v.owner
        if isinstance(owner, RecvOp) and sends and owner.channel.data in sends:
            v = sends[owner.channel.data]
        elif isinstance(owner, ClusterOp) and isinstance(v, OpResult):
            term = owner.body.block.last_op
            assert isinstance(term, YieldOp)
            v = term.values[v.index]
        else:
            break
    return v


def value_format(v: SSAValue, sends: dict[str, SSAValue] | None = None) -> str:
    """The format ``v`` is in at run time: its producer's :func:`layout_of` for a value that
    :func:`has_format` (through channels, see :func:`source_value`); graph inputs and constants
    are contiguous."""
    src = source_value(v, sends)
    if not has_format(static_shape_of(src)) or isinstance(src, BlockArgument):
        return CONTIGUOUS
    owner = src.owner
    return layout_of(owner) if isinstance(owner, Operation) else CONTIGUOUS


PREPACKED_CONV_SPEEDUP = 1.4
"""Time of a convolution's contiguous lowering (``F.conv2d``; ``ops.conv1x1_grouped`` for a
grouped 1x1 one) / the prepacked channels-last one (``ops.conv2d_prepacked``,
``--prepack-conv``), one thread: the smallest of the measured classes. ``python
bench/conv_prepack.py`` (2026-12-04, AMD EPYC, AVX2, load 0.6; summed medians of one
inference's convolutions): ``F.conv2d`` contiguous / prepacked 1.57 (light_inception_v1), 1.68
(light_shufflenet), 1.79 (light_densenet121), 1.81 (light_squeezenet), 1.84 (light_resnet50);
depthwise ones 2.27 (light_shufflenet); light_shufflenet's 32 grouped 1x1 ones as
``ops.conv1x1_grouped`` 1.40 (2.6 against 1.86 ms, a throwaway timing of the same shapes)."""

CONVERT_BW = 6e3
"""Bytes of tensor per µs a format conversion copies: 6 GB/s, the slow end of ``python
bench/layout_ops.py convert`` (2026-12-04, AMD EPYC, 1 thread, load 0.35): (1, 64, 112, 112) to
contiguous 541 µs (5.9 GB/s) and to channels-last 346 µs (9.3 GB/s), (1, 192, 56, 56) 345 and
224 µs (7.0, 10.8 GB/s), (1, 480, 14, 14) 35 and 31 µs (10.8, 12.0 GB/s). (3 GB/s until then,
measured at load 1.9; it kept light_shufflenet and EfficientNet-B0 contiguous, 1.2-1.3x slower
than channels-last with prepacked convolutions.)"""

THROUGH_CL_MIN_ELEMENTS = 1024
"""The smallest contiguous input the MaxPool/AveragePool/Resize lowerings convert to
channels-last for the kernel (``ramiel.lowering.nn.through_channels_last``): 3x3 max pooling
of (1, 16, 8, 8) measured 15 µs contiguous and 12 µs through channels-last, of (1, 3, 2, 2) 3 µs
and 7 µs, of (1, 32, 16, 16) 218 µs and 42 µs (1 thread, interleaved medians of 41, load 12.6)."""

CONV_SPEEDUP = 1.1
"""``F.conv2d`` time contiguous / channels-last (input and kernel), one thread: the gain of a
channels-last convolution that does not run prepacked (``--no-prepack-conv``, a computed kernel).

Depthwise convolutions (``groups`` = channels) gain more and stay anchors: 3x3 kernels
measured 1.28-1.64x faster channels-last on 7x7 to 28x28 inputs (light_shufflenet's and
MobileNetV2's later stages), 1.77x on light_shufflenet's 56x56 one (stride 2), 0.92-1.20x on
MobileNetV2's 56x56 and 112x112 ones, but 1.2-8.2x slower than contiguous when computed
contiguous-in, contiguous-out through two conversions (``python bench/layout_ops.py
depthwise``, ``bench/results/layout_ops_shuffle_depthwise.txt``: 1 thread, medians of 41,
load average 7.5). So a depthwise convolution pays off only inside a channels-last region:
MobileNetV2 (``hf_mobilenet_v2``) is one region under ``format=auto`` (one conversion at the
input, one before the global pooling), and so is light_shufflenet since its grouped 1x1
convolutions run prepacked (faster than ``ops.conv1x1_grouped`` contiguous) and its channel
shuffles keep the format (:data:`PREPACKED_CONV_SPEEDUP`)."""
