"""``--fold-into-weights``: fold BatchNormalization and Mul/Add/Sub/Div by constants into the
weights and bias of the Conv, ConvTranspose, Gemm or MatMul before them.

What it does
    Each of these ops computes, per output channel ``c``, ``y[c] = (x * W)[c] + B[c]``; an op
    after it that scales and shifts each channel by constants, ``z[c] = y[c] * s[c] + t[c]``,
    is the same affine op with ``W'[c] = W[c] * s[c]`` and ``B'[c] = B[c] * s[c] + t[c]``. The
    pass rewrites ``z`` into that one op and erases the follower, so no inference computes it:

    * ``BatchNormalization`` in inference form (``training_mode=0``, only the ``Y`` output used,
      ``spatial=1`` before opset 9): ``s = scale / sqrt(var + epsilon)``, ``t = B - mean * s``;
    * ``Mul(y, c)``, ``Div(y, c)`` (``s = c`` or ``1 / c``), ``Add(y, c)``, ``Sub(y, c)``,
      ``Sub(c, y)`` (``s = -1``), with the constant on either side of Mul and Add.

    Producers (the *affine* ops): ``Conv`` and ``ConvTranspose`` (channel axis 1; the weight's
    output-channel axis is 0 for Conv and, per group, 1 for ConvTranspose), ``Gemm`` (output
    columns; ``beta`` becomes 1 when ``C`` is rewritten), and ``MatMul(x, W)`` with a constant
    2-D ``W`` (the last axis), optionally followed by its bias ``Add(MatMul, b)`` with a
    constant ``b``; a follower without a bias Add gets one (``Add(MatMul', t)``). An ``Add`` that
    *is* a bare MatMul's bias is left as it is. An inference ``BatchNormalization`` that no such
    op precedes is a producer too, for a Mul/Add/Sub/Div after it (its ``scale`` and ``B`` are
    scaled and shifted: the Caffe-style BatchNormalization + Mul + Add of the DenseNet zoo model).

When (every condition, else the follower stays as it is)
    * the producer's result (and a MatMul's bias Add) has no other user: not another op, not
      the function's return, and the follower is in the same block (no region boundary);
    * the follower's constant broadcasts per output channel: after right-aligning it to the
      producer's rank, every dimension is 1 except the channel axis, which is 1 or the channel
      count (so the follower's result has the producer's shape and type); BatchNormalization
      after a MatMul or Gemm folds only on a 2-D result (its channel axis 1 is then the last);
    * weights, bias and constants are floating-point, of one element type, finite (and so are
      the folded values: ``var + epsilon > 0``), and the producer's weight and bias are
      constants.

    New weights are computed in float64 and rounded once to the weight's type, so the result
    equals the unfolded program within float32 rounding. They are new constants (the old ones
    stay for other users; ``--dce`` removes them otherwise): large ones go to the module's weight
    store like ``--constant-fold``'s results (:class:`ramiel.rewrite.ConstantMaker`), a splat
    weight scaled by one value stays a splat.

Options
    None.

Measured (2 cores, seq-1t, interleaved medians; see the commit message of this pass for the
    command): light_resnet50 and light_inception_v2 lose their 53 and 69 BatchNormalization ops.

Source: the inference-time batch-norm folding of Jacob et al., *Quantization and Training of
Neural Networks for Efficient Integer-Arithmetic-Only Inference* (CVPR 2018, §3.2), as done by
PyTorch's ``torch.fx.experimental.optimization.fuse`` and onnxruntime's ``ConvBNFusion``,
``ConvMulFusion`` and ``ConvAddFusion``; BatchNormalization semantics from
https://onnx.ai/onnx/operators/onnx__BatchNormalization.html.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import FloatAttr, ModuleOp, NoneType, f32
from xdsl.ir import Attribute, SSAValue
from xdsl.passes import ModulePass

from ramiel.context import module_store
from ramiel.dialects.onnx import OnnxOp, opset_of, static_shape
from ramiel.dtypes import numpy_dtype_of
from ramiel.rewrite import (
    ConstantMaker,
    all_finite,
    constant_array,
    create_op,
    erase_dead,
    is_splat_view,
    sole_user,
)
from ramiel.weights import WeightStore

__all__ = ["FoldIntoWeights"]

MAX_SPLAT_ELEMENTS = 1 << 22
"""A splat weight larger than this is folded only by a single scale (it is never materialised)."""

_FLOATS = frozenset({"float16", "float32", "float64"})


@dataclass
class _Producer:
    """An affine op whose output channels a follower scales and shifts."""

    op: OnnxOp  # Conv, ConvTranspose, Gemm or MatMul
    bias_add: OnnxOp | None  # MatMul's Add(MatMul, b)
    out: SSAValue  # the value the follower reads
    weight: np.ndarray
    bias: np.ndarray | None  # Conv/ConvTranspose: (C,); Gemm: C; MatMul: b of the bias Add
    channels: int
    channel_axis: int  # of the output


def _float_type(v: SSAValue) -> str | None:
    t = v.type
    el = getattr(t, "element_type", None)
    if el is None:
        return None
    name = numpy_dtype_of(el).name
    return name if name in _FLOATS else None


def _only_user(v: SSAValue, user: OnnxOp) -> bool:
    return sole_user(v) is user and v.owner is not None and v.owner.parent is user.parent


def _producer(v: SSAValue, follower: OnnxOp, store: WeightStore | None) -> _Producer | None:
    """The affine producer of ``v`` that only ``follower`` reads, or ``None``."""
    op = v.owner
    if not isinstance(op, OnnxOp) or not _only_user(v, follower):
        return None
    out_shape = static_shape(v.type)
    if out_shape is None or len(out_shape) < 2 or _float_type(v) is None:
        return None
    t = op.op_type
    if t in ("Conv", "ConvTranspose"):
        w = constant_array(op.operands[1], store)
        b = _optional_const(op, 2, store)
        if w is None or b is False:
            return None
        return _Producer(op, None, v, w, b, out_shape[1], 1)  # type: ignore[arg-type]
    if t == "Gemm":
        w = constant_array(op.operands[1], store)
        c = _optional_const(op, 2, store)
        if w is None or c is False or w.ndim != 2:
            return None
        return _Producer(op, None, v, w, c, out_shape[1], 1)  # type: ignore[arg-type]
    if t == "MatMul":
        return _matmul(op, None, v, None, store)
    if t == "BatchNormalization" and _batch_norm(op, store) is not None:
        # y = (x - mean) / sqrt(var + eps) * scale + B: per channel affine in (scale, B)
        scale, b = (constant_array(op.operands[i], store) for i in (1, 2))
        assert scale is not None and b is not None
        if scale.shape != (out_shape[1],) or b.shape != (out_shape[1],):
            return None
        return _Producer(op, None, v, scale, b, out_shape[1], 1)
    if t == "Add":
        for i in (0, 1):
            mm = op.operands[i].owner
            b = constant_array(op.operands[1 - i], store)
            if isinstance(mm, OnnxOp) and mm.op_type == "MatMul" and b is not None:
                if not _only_user(op.operands[i], op):
                    return None
                if _channel_vector(b, out_shape, -1) is None:
                    return None
                return _matmul(mm, op, v, b, store)
    return None


def _optional_const(op: OnnxOp, i: int, store: WeightStore | None) -> np.ndarray | None | bool:
    """Operand ``i``'s constant value, ``None`` if absent, ``False`` if it is not a constant."""
    if i >= len(op.operands) or isinstance(op.operands[i].type, NoneType):
        return None
    arr = constant_array(op.operands[i], store)
    return False if arr is None else arr


def _matmul(
    mm: OnnxOp,
    add: OnnxOp | None,
    out: SSAValue,
    bias: np.ndarray | None,
    store: WeightStore | None,
) -> _Producer | None:
    w = constant_array(mm.operands[1], store)
    shape = static_shape(out.type)
    if w is None or w.ndim != 2 or shape is None:
        return None
    return _Producer(mm, add, out, w, bias, shape[-1], len(shape) - 1)


def _channel_vector(c: np.ndarray, out_shape: tuple[int, ...], axis: int) -> np.ndarray | None:
    """``c`` as one float64 value per channel when it broadcasts per channel of an output of
    ``out_shape`` along ``axis`` (see the module docstring), else ``None``."""
    r = len(out_shape)
    if c.ndim > r:
        return None
    full = (1,) * (r - c.ndim) + tuple(c.shape)
    ax = axis % r
    n = out_shape[ax]
    for i, d in enumerate(full):
        if d != 1 and (i != ax or d != n):
            return None
    return np.broadcast_to(np.asarray(c, np.float64).reshape(-1), (n,))


def _follower_affine(
    op: OnnxOp, store: WeightStore | None
) -> tuple[SSAValue, np.ndarray | None, np.ndarray | None, int] | None:
    """(data operand, scale, shift, channel axis or 0 meaning "the producer's") of a follower,
    scale and shift per channel of the data operand's shape, or ``None``."""
    t = op.op_type
    if t == "BatchNormalization":
        return _batch_norm(op, store)
    if t not in ("Mul", "Div", "Add", "Sub") or len(op.operands) != 2:
        return None
    for i in (0, 1):
        if t == "Div" and i == 1:
            break  # c / y is not affine in y
        x, c = op.operands[i], constant_array(op.operands[1 - i], store)
        if c is None or isinstance(x.owner, OnnxOp) and x.owner.op_type == "Constant":
            continue
        if not all_finite(c):
            return None
        return x, c, None, i  # resolved per producer in _scale_shift
    return None


def _batch_norm(
    op: OnnxOp, store: WeightStore | None
) -> tuple[SSAValue, np.ndarray | None, np.ndarray | None, int] | None:
    opset = opset_of(op)
    if any(r.uses for r in op.results[1:] if not isinstance(r.type, NoneType)):
        return None
    if opset >= 14 and op.attr("training_mode", 0):
        return None
    if opset < 9 and op.attr("spatial", 1) != 1:
        return None
    if len(op.operands) != 5:
        return None
    params = [constant_array(v, store) for v in op.operands[1:]]
    if any(p is None for p in params):
        return None
    scale, b, mean, var = (np.asarray(p, np.float64).reshape(-1) for p in params)  # type: ignore[arg-type]
    eps = float(op.attr("epsilon", 1e-5))
    with np.errstate(all="ignore"):
        s = scale / np.sqrt(var + eps)
        t = b - mean * s
    if not (np.all(np.isfinite(s)) and np.all(np.isfinite(t))):
        return None
    return op.operands[0], s, t, -1


def _scale_shift(
    follower: OnnxOp, info: tuple[SSAValue, np.ndarray | None, np.ndarray | None, int], p: _Producer
) -> tuple[np.ndarray | None, np.ndarray | None] | None:
    """Per-channel float64 (scale, shift) of ``follower`` on producer ``p``, or ``None``."""
    x, a, b, side = info
    shape = static_shape(p.out.type)
    assert shape is not None
    if follower.op_type == "BatchNormalization":
        if p.channel_axis != 1 or (p.op.op_type in ("Gemm", "MatMul") and len(shape) != 2):
            return None
        if p.op.op_type == "BatchNormalization":
            return None  # BatchNormalization after BatchNormalization: not folded
        assert a is not None and b is not None
        if a.shape != (p.channels,) or b.shape != (p.channels,):
            return None
        return a, b
    assert a is not None
    vec = _channel_vector(a, shape, p.channel_axis)
    if vec is None:
        return None
    t = follower.op_type
    if t == "Mul":
        return vec, None
    if t == "Div":
        with np.errstate(all="ignore"):
            inv = 1.0 / vec
        return (inv, None) if np.all(np.isfinite(inv)) else None
    if t == "Add":
        if p.op.op_type == "MatMul" and p.bias_add is None:
            return None  # Add(MatMul, b) is the bias form already
        return None, vec
    assert t == "Sub"
    if side == 0:  # y - c
        if p.op.op_type == "MatMul" and p.bias_add is None:
            return None
        return None, -vec
    return -np.ones(p.channels), vec  # c - y


def _scaled_weight(p: _Producer, s: np.ndarray) -> np.ndarray | None:
    """``p``'s weight with output channel ``c`` multiplied by ``s[c]`` (float64 math, rounded
    once to the weight's type); ``None`` for a huge splat scaled per channel."""
    w = p.weight
    if is_splat_view(w):
        if bool(np.all(s == s[0])):
            one = np.asarray(np.float64(w[(0,) * w.ndim]) * s[0]).astype(w.dtype)
            return np.broadcast_to(one, w.shape)
        if w.size > MAX_SPLAT_ELEMENTS:
            return None
    w64 = np.asarray(w, np.float64)
    t = p.op.op_type
    if t in ("Conv", "BatchNormalization"):
        out = w64 * s.reshape((-1,) + (1,) * (w.ndim - 1))
    elif t == "ConvTranspose":
        g = int(p.op.attr("group", 1))
        cin, per = w.shape[0], w.shape[1]
        shaped = w64.reshape((g, cin // g, per) + w.shape[2:])
        out = (shaped * s.reshape((g, 1, per) + (1,) * (w.ndim - 2))).reshape(w.shape)
    elif t == "Gemm":
        out = w64 * (s[None, :] if not p.op.attr("transB", 0) else s[:, None])
    else:  # MatMul: x @ W, W is (K, N)
        out = w64 * s[None, :]
    return out.astype(w.dtype)


def _new_bias(
    p: _Producer, s: np.ndarray | None, t: np.ndarray | None, dtype: np.dtype
) -> np.ndarray | None:
    """The bias after the fold (float64 math, rounded once), ``None`` if there is none."""
    b = p.bias
    if b is None and t is None:
        return None
    if p.op.op_type == "Gemm" and b is not None:
        b = np.asarray(b, np.float64) * float(p.op.attr("beta", 1.0))
    b64 = np.zeros(p.channels) if b is None else np.asarray(b, np.float64)
    if p.op.op_type in ("Conv", "ConvTranspose", "BatchNormalization"):
        b64 = b64.reshape(-1)
    # Gemm's C and MatMul's b broadcast along the last axis: scale/shift the last axis
    if s is not None:
        b64 = b64 * s
    if t is not None:
        b64 = b64 + t
    return np.ascontiguousarray(b64.astype(dtype))


def _hint(v: SSAValue | None, suffix: str) -> str:
    if v is None or isinstance(v.type, NoneType):
        return ""
    h = v.name_hint or ""
    if not h or h.startswith("onnx__"):
        return ""
    return h if h.endswith(f"_{suffix}") else f"{h}_{suffix}"


def _fold(follower: OnnxOp, consts: ConstantMaker) -> bool:
    store = consts.store
    info = _follower_affine(follower, store)
    if info is None:
        return False
    p = _producer(info[0], follower, store)
    if p is None:
        return False
    res = follower.results[0]
    if static_shape(res.type) != static_shape(p.out.type) or res.type != p.out.type:
        return False
    dt = _float_type(p.out)
    if dt is None or p.weight.dtype.name != dt:
        return False
    if p.bias is not None and p.bias.dtype.name != dt:
        return False
    ss = _scale_shift(follower, info, p)
    if ss is None:
        return False
    s, t = ss
    w = p.weight if s is None else _scaled_weight(p, s)
    if w is None:
        return False
    bias = _new_bias(p, s, t, p.weight.dtype)
    if (bias is not None and not all_finite(bias)) or not all_finite(w):
        return False
    op = p.op
    name = op.results[0].name_hint or op.node_name or op.op_type
    w_val = (
        op.operands[1]
        if s is None
        else consts.make(w, _hint(op.operands[1], "folded") or f"{name}_W", op)
    )
    attrs: dict[str, Attribute] = dict(op.properties)
    kind = op.op_type
    new_ops: list[OnnxOp] = []
    if kind == "BatchNormalization":
        assert bias is not None
        b_val = consts.make(bias, _hint(op.operands[2], "folded") or f"{name}_B", op)
        operands = [op.operands[0], w_val, b_val, *op.operands[3:5]]
        new = create_op(kind, operands, [res.type], attrs, op)
        new_ops.append(new)
        out = new.results[0]
    elif kind in ("Conv", "ConvTranspose", "Gemm"):
        operands = [op.operands[0], w_val]
        if bias is not None:
            old_b = op.operands[2] if len(op.operands) > 2 else None
            hint = _hint(old_b, "folded")
            operands.append(consts.make(bias, hint or f"{name}_B", op))
            if kind == "Gemm":
                attrs["beta"] = FloatAttr(1.0, f32)
        elif len(op.operands) > 2:
            operands.append(op.operands[2])
        new = create_op(kind, operands, [res.type], attrs, op)
        new_ops.append(new)
        out = new.results[0]
    else:  # MatMul (+ bias Add)
        new = create_op("MatMul", [op.operands[0], w_val], [op.results[0].type], attrs, op)
        new_ops.append(new)
        out = new.results[0]
        if bias is not None:
            like = p.bias_add or follower
            old_b = None
            if p.bias_add is not None:
                old_b = next(v for v in p.bias_add.operands if v.owner is not op)
            hint = _hint(old_b, "folded")
            b_val = consts.make(bias, hint or f"{name}_B", op)
            add = create_op("Add", [out, b_val], [res.type], {}, like)
            new_ops.append(add)
            out.name_hint = op.results[0].name_hint
            out = add.results[0]
    block = op.parent
    assert block is not None
    for n in new_ops:
        block.insert_op_before(n, op)
    new_ops[0].results[0].name_hint = op.results[0].name_hint
    if len(new_ops) > 1:
        out.name_hint = (p.bias_add or follower).results[0].name_hint
    res.replace_all_uses_with(out)
    erase_dead([follower, *([p.bias_add] if p.bias_add is not None else []), op])
    return True


def fold_into_weights(module: ModuleOp, store: WeightStore | None) -> int:
    """Run the pass on ``module`` (``store``: its weights, ``None`` if it names no weights
    file); returns the number of followers folded."""
    consts = ConstantMaker(module, store)
    n = 0
    for op in list(module.walk()):
        if isinstance(op, OnnxOp) and op.parent is not None and op.results:
            n += _fold(op, consts)
    return n


@dataclass(frozen=True)
class FoldIntoWeights(ModulePass):
    """Fold per-channel scales and shifts into affine ops' weights (see the module doc)."""

    name = "fold-into-weights"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        fold_into_weights(op, module_store(ctx, op))
