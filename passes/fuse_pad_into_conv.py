"""``--fuse-pad-into-conv``: a constant zero ``Pad`` of a convolution's input becomes the
convolution's own ``pads``.

What it does
    Exporters that follow TensorFlow's "SAME" padding write an explicit ``Pad`` before each
    convolution instead of the Conv's ``pads`` (``transformers``' MobileNetV2 and EfficientNet
    with ``tf_padding``, TF-converted models). A zero pad of the spatial dims followed by
    ``Conv`` is the same as ``Conv`` with those pads added to its ``pads``: the pass adds them,
    makes the Conv read the Pad's input and erases the Pad. The lowering then writes one
    ``F.conv2d(x, w, b, padding=...)`` for a symmetric result, which pads inside the kernel,
    where the generated code used to materialise the padded tensor with ``F.pad`` first; an
    asymmetric result lowers to ``F.pad`` and the convolution as before.

When (every condition, else the Pad stays)
    * the Pad's ``mode`` is ``constant`` and its value is absent or zero;
    * ``pads`` (and ``axes``, opset 18) are compile-time constants (attributes before opset 11),
      non-negative, and zero on the batch and channel dims (0 and 1), with the input's rank
      known;
    * every reader of the Pad's result is the ``X`` input (operand 0) of a ``Conv`` whose
      ``auto_pad`` is ``NOTSET`` or ``VALID`` (a ``VALID`` one becomes ``NOTSET`` with the
      pads) and that is not the function's return or another op: a Pad read elsewhere stays,
      whole, for all its readers.

    ``ConvTranspose`` (its pads crop the output), pooling (a max pool pads with -inf, an average
    pool may exclude pads from its count) and the quantised convolutions are left alone.

Options
    None.

Measured: see the commit message that added this pass (``bench/seq_vs_ort.py``).

Source: onnxoptimizer's ``fuse_pad_into_conv`` and onnxruntime's ``PadFusion`` do the same
rewrite; semantics from https://onnx.ai/onnx/operators/onnx__Pad.html and
https://onnx.ai/onnx/operators/onnx__Conv.html (``pads`` format
``[x1_begin, x2_begin, ..., x1_end, x2_end, ...]``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from onnx.defs import OpSchema
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType
from xdsl.passes import ModulePass

from ramiel.context import module_store
from ramiel.dialects.onnx import OnnxOp, attr_from_python, opset_of
from ramiel.rewrite import constant_array
from ramiel.weights import WeightStore

__all__ = ["FusePadIntoConv", "fuse_pad_into_conv", "zero_pads"]


def zero_pads(pad: OnnxOp, store: WeightStore | None) -> list[int] | None:
    """The spatial ``(begin..., end...)`` pads of an ``onnx.Pad`` that pads only dims 2 and on,
    with zeros, by constant non-negative amounts (the Conv ``pads`` format, one begin and one
    end per spatial dim); ``None`` for any other Pad (see the module doc)."""
    if pad.attr("mode", "constant") != "constant":
        return None
    t = pad.operands[0].type
    if not isinstance(t, TensorType):
        return None
    r = len(t.get_shape())
    opset = opset_of(pad)
    if opset < 11:
        raw = pad.attr("pads", pad.attr("paddings"))
        if raw is None:
            return None
        pads = [int(p) for p in raw]
        value = float(pad.attr("value", 0.0))
    else:
        arr = constant_array(pad.required_input("pads"), store)
        if arr is None or arr.dtype.kind not in "iu":
            return None
        pads = [int(p) for p in arr.reshape(-1)]
        v = pad.input("constant_value")
        value = 0.0
        if v is not None:
            c = constant_array(v, store)
            if c is None or c.size != 1:
                return None
            value = c.reshape(-1)[0]
        axes_v = pad.input("axes") if opset >= 18 else None
        if axes_v is not None:
            axes = constant_array(axes_v, store)
            if axes is None or axes.dtype.kind not in "iu" or len(pads) != 2 * axes.size:
                return None
            k = axes.size
            full = [0] * (2 * r)
            for j, a in enumerate(int(a) for a in axes.reshape(-1)):
                if not -r <= a < r:
                    return None
                a %= r
                full[a], full[r + a] = pads[j], pads[k + j]
            pads = full
    if len(pads) != 2 * r or r < 3 or not np.all(np.asarray(value) == 0):
        return None
    if any(p < 0 for p in pads) or any(pads[i] or pads[r + i] for i in (0, 1)):
        return None
    return pads[2:r] + pads[r + 2 :]


def _fusable_conv(use_op: object, index: int) -> OnnxOp | None:
    if not isinstance(use_op, OnnxOp) or use_op.op_type != "Conv" or index != 0:
        return None
    return use_op if use_op.attr("auto_pad", "NOTSET") in ("NOTSET", "VALID") else None


def fuse_pad_into_conv(module: ModuleOp, store: WeightStore | None) -> int:
    """Run the pass on ``module`` (``store``: its weights, ``None`` if it names no weights
    file); returns the number of Pad ops erased."""
    n = 0
    for pad in list(module.walk()):
        if not isinstance(pad, OnnxOp) or pad.op_type != "Pad" or pad.parent is None:
            continue
        out = pad.results[0]
        convs = [_fusable_conv(u.operation, u.index) for u in out.uses]
        if not convs or any(c is None for c in convs):
            continue
        extra = zero_pads(pad, store)
        if extra is None:
            continue
        k = len(extra) // 2
        plan = []
        for conv in convs:
            assert conv is not None
            old = [int(p) for p in conv.attr("pads", [])] or [0] * (2 * k)
            if len(old) != 2 * k:
                break  # a malformed Conv: left to the verifier and the lowering's check
            plan.append((conv, [a + b for a, b in zip(old, extra, strict=True)]))
        else:
            for conv, pads in plan:
                conv.properties["pads"] = attr_from_python(OpSchema.AttrType.INTS, pads)
                if "auto_pad" in conv.properties:
                    conv.properties["auto_pad"] = StringAttr("NOTSET")
                conv.operands[0] = pad.operands[0]
        if not out.uses:
            pad.detach()
            pad.erase()
            n += 1
    return n


@dataclass(frozen=True)
class FusePadIntoConv(ModulePass):
    """Zero ``Pad`` + ``Conv`` -> ``Conv`` with the pads (see the module doc)."""

    name = "fuse-pad-into-conv"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        fuse_pad_into_conv(op, module_store(ctx, op))
