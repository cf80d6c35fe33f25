"""``--fuse-attention``: scaled dot-product attention written out as ops becomes one
``onnx.Attention``.

What it does
    Exporters write attention as a chain of ops on 4-D tensors ``[batch, heads, seq, head]``::

        scores = MatMul(Q, Kt)            # Kt: K transposed, [B, H, head, kv_seq]
        scores = scores / c  (or * c)     # the scale; or Q * c1 and Kt * c2 before the MatMul
        scores = scores + mask            # optional additive mask, broadcast to the scores
        probs  = Softmax(scores, axis=-1)
        probs  = Where(IsNaN(probs), 0, probs)   # optional guard for fully masked rows
        out    = MatMul(probs, V)

    (``torch.onnx.export`` of ``F.scaled_dot_product_attention`` splits the scale as
    ``sqrt(scale)`` on Q and on Kt and adds the NaN guard; a hand-written or ``eager``
    attention divides the scores.) The pass replaces the chain by
    ``onnx.Attention(Q, K, V, mask) {scale}`` (opset 23; it carries ``onnx.opset = 23`` in an
    older model), lowered to ``F.scaled_dot_product_attention``. K is Kt transposed back: a
    Transpose that produced Kt is composed with the swap (``perm=[0, 2, 3, 1]`` becomes
    ``[0, 2, 1, 3]``), otherwise a ``Transpose(perm=[0, 1, 3, 2])`` is added; both are views.

When (every condition, else the ops stay)
    Q, Kt and V are float32 4-D tensors with the same batch and head dimensions (no broadcast in
    the MatMuls), the result is ``[B, H, seq, V's head]``; every scale constant is one finite,
    non-zero element; the Softmax normalises the last axis (opset >= 13: ``axis`` -1 or 3;
    before: ``axis`` 3, where the flattening to 2-D changes nothing); the mask has rank 2 to 4,
    the scores' element type and broadcasts to the scores without growing them; the guard is
    exactly ``Where(IsNaN(probs), 0, probs)``; every intermediate value is read only inside the
    pattern, all in one block.

    A fully masked row (every mask value -inf) gives zeros in ``onnx.Attention`` and
    ``F.scaled_dot_product_attention``, and NaN in the unguarded chain; so a mask is accepted
    without the guard only when it is provably finite: a finite constant, or built from finite
    constants by Where, Expand, Reshape, Unsqueeze, Squeeze, Transpose, Identity or Cast (the
    ``torch.finfo.min`` masks of ``transformers`` are). With finite inputs the fused op then
    computes the chain's values (within float32 rounding: the scale is applied once).

Options
    None.

Measured: see the commit message that added this pass (``bench/rewrites.py``).

Source: Vaswani et al., *Attention Is All You Need*, NeurIPS 2017, eq. 1; the ONNX Attention
operator (opset 23), https://onnx.ai/onnx/operators/onnx__Attention.html; onnxruntime's
``AttentionFusion`` matches the same subgraph.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from onnx.defs import OpSchema
from xdsl.context import Context
from xdsl.dialects.builtin import FloatAttr, ModuleOp, TensorType, f32
from xdsl.ir import Attribute, SSAValue
from xdsl.passes import ModulePass

from ramiel.context import module_store
from ramiel.dialects import onnx as onnx_d
from ramiel.dialects.onnx import OnnxOp, broadcast_shapes, opset_of, static_shape
from ramiel.dtypes import numpy_dtype_of
from ramiel.passes.fuse_gelu import equals
from ramiel.rewrite import (
    Const,
    Match,
    OneOf,
    Op,
    Var,
    all_finite,
    constant_array,
    create_op,
    erase_dead,
    is_closed,
    match,
    replace_root,
    scalar,
)
from ramiel.weights import WeightStore

__all__ = ["FuseAttention", "fuse_attention"]


def _maybe_scaled(v: Var, const: str) -> OneOf:
    return OneOf((Op("Mul", (v, Const(const)), commutative=True), v))


_SCORES = Op("MatMul", (_maybe_scaled(Var("q"), "cq"), _maybe_scaled(Var("kt"), "ck")))
_SCALED = OneOf(
    (
        Op("Div", (_SCORES, Const("cd"))),
        Op("Mul", (_SCORES, Const("cm")), commutative=True),
        _SCORES,
    )
)
_MASKED = OneOf((Op("Add", (_SCALED, Var("mask")), commutative=True, name="add"), _SCALED))
_SOFTMAX = Op("Softmax", (_MASKED,), name="softmax")
_PROBS = OneOf(
    (
        Op("Where", (Op("IsNaN", (_SOFTMAX,)), Const("zero", equals(0.0)), _SOFTMAX), name="guard"),
        _SOFTMAX,
    )
)
ATTENTION = Op("MatMul", (_PROBS, Var("v")))
"""The attention chain (module docstring), the larger forms tried first."""

_FINITE_THROUGH = frozenset(
    ["Expand", "Reshape", "Unsqueeze", "Squeeze", "Transpose", "Identity", "Cast", "Flatten"]
)


def provably_finite(v: SSAValue, store: WeightStore | None, depth: int = 0) -> bool:
    """Whether every element of ``v`` is finite whatever the inputs (module docstring)."""
    if depth > 16:
        return False
    arr = constant_array(v, store)
    if arr is not None:
        return arr.dtype.kind in "fiub" and all_finite(arr)
    op = v.owner
    if not isinstance(op, OnnxOp):
        return False
    if op.op_type == "Where":
        return all(provably_finite(x, store, depth + 1) for x in op.operands[1:])
    if op.op_type == "Cast":
        src = getattr(op.operands[0].type, "element_type", None)
        if src is not None and numpy_dtype_of(src).kind in "iub":
            return True  # integers and booleans are finite in any float type torch casts to
        return provably_finite(op.operands[0], store, depth + 1)
    if op.op_type in _FINITE_THROUGH:
        return provably_finite(op.operands[0], store, depth + 1)
    return False


def _scale(m: Match) -> float | None:
    s = 1.0
    for k in ("cq", "ck", "cm", "cd"):
        if k not in m.arrays:
            continue
        c = scalar(m.arrays[k])
        if c is None or not np.isfinite(c) or c == 0.0 or m.arrays[k].dtype.kind != "f":
            return None
        s = s / c if k == "cd" else s * c
    return s if np.isfinite(s) and s != 0.0 else None


def _accept(m: Match, root: OnnxOp, store: WeightStore | None) -> bool:
    if not is_closed(m):
        return False
    q, kt, v = (static_shape(m.values[k].type) for k in ("q", "kt", "v"))
    if q is None or kt is None or v is None or not (len(q) == len(kt) == len(v) == 4):
        return False
    el = m.values["q"].type.element_type  # type: ignore[attr-defined]
    if numpy_dtype_of(el).name != "float32":
        return False
    if any(m.values[k].type.element_type != el for k in ("kt", "v")):  # type: ignore[attr-defined]
        return False
    b, h, s, d = q
    if kt[:2] != (b, h) or v[:2] != (b, h) or kt[2] != d or v[2] != kt[3]:
        return False
    if static_shape(root.results[0].type) != (b, h, s, v[3]):
        return False
    if _scale(m) is None:
        return False
    sm = m.ops["softmax"]
    axis = sm.attr("axis", -1 if opset_of(sm) >= 13 else 1)
    if axis not in (-1, 3) or (opset_of(sm) < 13 and axis != 3):
        return False
    mask = m.values.get("mask")
    if mask is not None:
        ms = static_shape(mask.type)
        if ms is None or not 2 <= len(ms) <= 4 or mask.type.element_type != el:  # type: ignore[attr-defined]
            return False
        if broadcast_shapes([ms, (b, h, s, kt[3])]) != (b, h, s, kt[3]):
            return False
        if "guard" not in m.ops and not provably_finite(mask, store):
            return False
    return True


def _key(kt: SSAValue, before: OnnxOp) -> tuple[SSAValue, OnnxOp | None]:
    """K ``[B, H, kv_seq, head]`` from Kt, and the Transpose that produced Kt (if any)."""
    owner = kt.owner
    shape = static_shape(kt.type)
    assert shape is not None
    perm = [0, 1, 3, 2]
    src = kt
    producer = None
    if isinstance(owner, OnnxOp) and owner.op_type == "Transpose":
        p = owner.attr("perm") or list(range(len(shape)))[::-1]
        perm = [p[i] for i in perm]
        src = owner.operands[0]
        producer = owner
    if perm == [0, 1, 2, 3]:
        return src, producer
    t = kt.type
    assert isinstance(t, TensorType)
    src_shape = static_shape(src.type)
    assert src_shape is not None
    k_type = TensorType(t.element_type, [src_shape[i] for i in perm])
    attrs = {"perm": onnx_d.attr_from_python(OpSchema.AttrType.INTS, perm)}
    tr = create_op("Transpose", [src], [k_type], attrs, producer or before)
    assert before.parent is not None
    before.parent.insert_op_before(tr, before)
    tr.results[0].name_hint = f"{(kt.name_hint or 'k')}_k"
    return tr.results[0], producer


def fuse_attention(module: ModuleOp, store: WeightStore | None) -> int:
    """Run the pass on ``module`` (``store``: its weights, ``None`` if it names no weights
    file); returns the number of Attention ops made."""
    n = 0
    for op in reversed(list(module.walk())):
        if not isinstance(op, OnnxOp) or op.op_type != "MatMul" or op.parent is None:
            continue
        m = match(ATTENTION, op.results[0], store, functools.partial(_accept, root=op, store=store))
        if m is None:
            continue
        scale = _scale(m)
        assert scale is not None
        k, producer = _key(m.values["kt"], op)
        operands = [m.values["q"], k, m.values["v"]]
        if "mask" in m.values:
            operands.append(m.values["mask"])
        attrs: dict[str, Attribute] = {"scale": FloatAttr(scale, f32)}
        att = create_op("Attention", operands, [op.results[0].type], attrs, op, since=23)
        assert op.parent is not None
        op.parent.insert_op_before(att, op)
        replace_root(op, att.results[0], m.matched)
        if producer is not None:
            erase_dead([producer])
        n += 1
    return n


@dataclass(frozen=True)
class FuseAttention(ModulePass):
    """Attention chains -> ``onnx.Attention`` (see the module doc)."""

    name = "fuse-attention"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        fuse_attention(op, module_store(ctx, op))
