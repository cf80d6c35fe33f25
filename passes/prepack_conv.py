"""``--prepack-conv``: run channels-last 2-D convolutions with oneDNN kernels packed once, fusing
the Relu that follows.

What it does
    Marks every ``onnx.Conv`` that ``--assign-layout`` put in channels-last (``ramiel.layout =
    "channels_last"``) and that was measured faster packed -- a 4-D float32 input of static
    shape, a constant kernel (an ``onnx.Constant``: a weight), one group, at least
    :data:`MIN_MACS` multiply-accumulates and a kernel of at least :data:`MIN_WEIGHTS` elements
    -- with ``ramiel.prepack = "none"``; ``--lower-to-torchpy``
    then prints it as ``ops.conv2d_prepacked(x, w, b, stride=..., padding=...)`` (the arguments
    of ``F.conv2d``) instead of ``F.conv2d``. That helper reorders the kernel once per process
    into oneDNN's blocked format (``torch.ops.mkldnn._reorder_convolution_weight``, what
    inductor's freezing emits) and runs ``torch.ops.mkldnn._convolution_pointwise``; under
    tracing or compiling it is the plain ``F.conv2d`` (see
    :func:`ramiel.runtime.ops.conv2d_prepacked`).

    A marked Conv whose result is read only by an ``onnx.Relu`` in the same block (not a graph
    output, not sent on a channel) absorbs it: the Relu is erased, its uses read the Conv's
    result (which takes the Relu's name) and the Conv gets ``ramiel.prepack = "relu"`` (it then
    computes ``Relu(Conv(...))``; oneDNN applies the Relu as a post-op).

    ``ramiel compile`` runs it after clustering, before ``--inplace`` (a late rewrite), and
    ``--no-prepack-conv`` / ``CompileOptions(disable=["prepack-conv"])`` switch it off;
    ``trainable=True`` leaves it out (the oneDNN op has no backward). Contiguous (NCHW) and
    grouped convolutions are left alone.

Options
    None.

Measured (``python bench/conv_prepack.py MODEL --cpu-time --cases``, 1 thread, the calling
thread's CPU time, medians of interleaved rounds, every Conv of the zoo models at batch 1 on a
channels-last input; 2026-12-01 on the shared 2-core machine at load 6-8, where the wall clock
is useless): packed (Relu fused) against ``F.conv2d`` + ``torch.relu_``, light_resnet50's 3x3
and large 1x1 convolutions 0.48-0.97x (512x512x3x3 on 7x7: 0.65x; 2048x1024 1x1: 0.48x), all
its convolutions 0.86x; light_squeezenet's 3x3 0.85-0.96x but its small 1x1 ones (4K-32K
kernel elements on 13x13-27x27) 1.09-1.34x, light_densenet121's 1x1 on 7x7/14x14 1.0-1.3x:
the oneDNN op makes its primitive on every call (about 40 µs of fixed cost), hence the
thresholds. Whole sequential modules, CPU time, interleaved in one process (load 12-15),
median ms without the pass / with it: light_resnet50 131.5 / 115.8 (0.88x), light_inception_v1
50.4 / 50.0, light_densenet121 95.5 / 94.5, light_squeezenet 13.5 / 13.3.

Source: PyTorch inductor's freezing passes (``torch/_inductor/fx_passes/mkldnn_fusion.py``:
``_register_weight_pack_pass`` packs a frozen convolution's weight, the unary fusion folds a
following ReLU into ``mkldnn._convolution_pointwise``); oneDNN post-ops
(https://oneapi-src.github.io/oneDNN/dev_guide_attributes_post_ops.html).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import Float32Type, ModuleOp, TensorType
from xdsl.passes import ModulePass

from ramiel.attrs import set_str
from ramiel.dialects.onnx import OnnxOp
from ramiel.layout import CHANNELS_LAST, PREPACK_ATTR, layout_of, only_reader, static_shape_of

__all__ = ["PrepackConv", "prepack_convs"]


#: Multiply-accumulates below which a convolution stays ``F.conv2d``: the oneDNN pointwise op
#: makes its primitive on every call (about 40 µs on this machine, against 5 µs for a tiny
#: ``F.conv2d``), which only a large convolution amortises (light_densenet121's 1x1
#: convolutions of 3-20 M multiply-accumulates: 1.0-1.3x slower packed).
MIN_MACS = 20_000_000

#: Kernel elements below which a convolution stays ``F.conv2d``: what packing saves is the
#: per-call reorder of the kernel, small for small kernels (light_squeezenet's 1x1 kernels of
#: 4K-32K elements: 1.1-1.3x slower packed; light_resnet50's of 128K-2.4M: 0.48-0.97x). Whole
#: modules with 64K for 1x1 and any larger kernel instead: light_densenet121 96.1 vs 95.5 ms,
#: with this threshold 94.5 (CPU time, see the module docstring).
MIN_WEIGHTS = 131072


def _packable(op: OnnxOp) -> bool:
    """Whether the Conv ``op`` runs prepacked: channels-last, 4-D float32 static input, constant
    kernel, one group, at least :data:`MIN_MACS` multiply-accumulates and a kernel of at least
    :data:`MIN_WEIGHTS` elements."""
    if op.op_type != "Conv" or layout_of(op) != CHANNELS_LAST or len(op.operands) < 2:
        return False
    t = op.operands[0].type
    if not isinstance(t, TensorType) or not isinstance(t.element_type, Float32Type):
        return False
    xs, ws, ys = (static_shape_of(v) for v in (op.operands[0], op.operands[1], op.results[0]))
    if xs is None or ws is None or ys is None or len(xs) != 4 or len(ws) != 4:
        return False
    w = op.operands[1].owner
    if not isinstance(w, OnnxOp) or w.op_type != "Constant" or ws[1] != xs[1]:
        return False  # a computed kernel, or grouped (not measured faster packed)
    if math.prod(ys) * math.prod(ws[1:]) < MIN_MACS:
        return False
    return math.prod(ws) >= MIN_WEIGHTS


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
