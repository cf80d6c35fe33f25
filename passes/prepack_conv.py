"""``--prepack-conv``: run channels-last 2-D convolutions with oneDNN kernels packed once, fusing
the Relu that follows.

What it does
    Marks every ``onnx.Conv`` that ``--assign-layout`` put in channels-last (``ramiel.layout =
    "channels_last"``) and that :func:`packable_conv` accepts -- a 4-D float32 input of static
    shape with ``H * W > 1`` (as its output), a constant kernel (an ``onnx.Constant``: a
    weight); any kernel size, stride, dilation and group count -- with ``ramiel.prepack =
    "none"``; ``--lower-to-torchpy`` then prints it as ``ops.conv2d_prepacked(x, w, b,
    stride=..., padding=..., groups=...)`` (the arguments of ``F.conv2d``) instead of
    ``F.conv2d``. That helper reorders the kernel once per process and thread count into
    oneDNN's blocked format (``torch.ops.mkldnn._reorder_convolution_weight``, what inductor's
    freezing emits) and runs ``torch.ops.mkldnn._convolution_pointwise``; under tracing or
    compiling it is the plain ``F.conv2d`` (see :func:`ramiel.runtime.ops.conv2d_prepacked`).

    A marked Conv whose result is read only by an ``onnx.Relu`` in the same block (not a graph
    output, not sent on a channel) absorbs it: the Relu is erased, its uses read the Conv's
    result (which takes the Relu's name) and the Conv gets ``ramiel.prepack = "relu"`` (it then
    computes ``Relu(Conv(...))``: ``ops.conv2d_prepacked(..., activation='relu')``, which runs
    ``torch.relu_`` on the convolution's result, not oneDNN's Relu post-op, which turns NaN
    into 0).

    ``ramiel compile`` runs it after clustering, before ``--inplace`` (a late rewrite), and
    ``--no-prepack-conv`` / ``CompileOptions(disable=["prepack-conv"])`` switch it off;
    ``trainable=True`` leaves it out (the oneDNN op has no backward). Contiguous (NCHW)
    convolutions are left alone; ``--assign-layout`` counts on this pass when it weighs a
    channels-last region (:data:`ramiel.layout.PREPACKED_CONV_SPEEDUP`).

Options
    None.

Measured (``python bench/conv_prepack.py``, 1 thread, medians of interleaved rounds, every
Conv of the zoo models at batch 1 on a channels-last input; 2026-12-04, AMD EPYC, AVX2, load
0.6): packed (Relu fused) against ``F.conv2d`` + ``torch.relu_``, summed per model 0.56x
(light_resnet50), 0.60x (light_densenet121, light_shufflenet), 0.61x (light_squeezenet), 0.70x
(light_inception_v1), 0.74x (light_zfnet512), 0.78x (light_bvlc_alexnet), 0.91x (light_vgg19);
per kind 1x1 0.46-0.56x, 3x3 0.64-0.92x, grouped 0.55-0.80x, depthwise 0.80x, the stems (7x7,
11x11 on 3 channels) 0.95-1.00x; no kind slower, the small 1x1 kernels included (4K-32K
elements on 13x13-27x27: 0.56x in light_squeezenet). Whole sequential modules against the
thresholds this pass had until then (one group, at least 20 M multiply-accumulates and 128K
kernel elements; measured at load 6-8, where small kernels looked 1.1-1.3x slower packed):
docs/benchmarks.md, "Every channels-last convolution prepacked".

Source: PyTorch inductor's freezing passes (``torch/_inductor/fx_passes/mkldnn_fusion.py``:
``_register_weight_pack_pass`` packs a frozen convolution's weight, the unary fusion folds a
following ReLU into ``mkldnn._convolution_pointwise``); oneDNN post-ops
(https://oneapi-src.github.io/oneDNN/dev_guide_attributes_post_ops.html).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import Float32Type, ModuleOp, TensorType
from xdsl.passes import ModulePass

from ramiel.attrs import set_str
from ramiel.dialects.onnx import OnnxOp
from ramiel.layout import (
    CHANNELS_LAST,
    PREPACK_ATTR,
    has_format,
    layout_of,
    only_reader,
    static_shape_of,
)

__all__ = ["PrepackConv", "packable_conv", "prepack_convs"]


def _packable(op: OnnxOp) -> bool:
    """Whether the Conv ``op`` runs prepacked: channels-last and :func:`packable_conv`."""
    return layout_of(op) == CHANNELS_LAST and packable_conv(op)


def packable_conv(op: OnnxOp) -> bool:
    """Whether the Conv ``op`` would run prepacked in channels-last: a 4-D float32 input of
    static shape with more than one position (``H * W > 1``, as its output: a convolution of a
    1x1 map, e.g. a squeeze-and-excitation block's, is a matrix-vector product that packing
    slowed down), a constant kernel; any kernel size, stride, dilation and group count. (What
    ``--assign-layout`` asks when it weighs a channels-last region.)"""
    if op.op_type != "Conv" or len(op.operands) < 2:
        return False
    t = op.operands[0].type
    if not isinstance(t, TensorType) or not isinstance(t.element_type, Float32Type):
        return False
    xs, ws, ys = (static_shape_of(v) for v in (op.operands[0], op.operands[1], op.results[0]))
    if xs is None or ws is None or ys is None or len(xs) != 4 or len(ws) != 4:
        return False
    if not has_format(xs) or not has_format(ys):
        return False
    w = op.operands[1].owner
    return isinstance(w, OnnxOp) and w.op_type == "Constant"  # not a computed kernel


def _fuse_relu(op: OnnxOp) -> bool:
    """Erase the Relu that alone reads ``op``'s result (same block); whether there was one."""
    res = op.results[0]
    relu = only_reader(res, ("Relu",), op.parent)
    if relu is None:
        return False
    name = relu.results[0].name_hint
    relu.results[0].replace_all_uses_with(res)
    relu.detach()
    relu.erase()
    if name:
        res.name_hint = name
    return True


def prepack_convs(module: ModuleOp) -> int:
    """Run the pass on ``module``; returns the number of convolutions marked."""
    n = 0
    for op in [o for o in module.walk() if isinstance(o, OnnxOp) and o.op_type == "Conv"]:
        if not _packable(op):
            continue
        fused = _fuse_relu(op)
        set_str(op, PREPACK_ATTR, "relu" if fused else "none")
        n += 1
    return n


@dataclass(frozen=True)
class PrepackConv(ModulePass):
    """Mark the channels-last convolutions to run prepacked (see the module doc)."""

    name = "prepack-conv"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        prepack_convs(op)
