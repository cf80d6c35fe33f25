"""``--fuse-layer-norm``: the decomposed LayerNorm that exporters emit becomes one
``onnx.LayerNormalization``.

What it does
    Before opset 17 ONNX has no LayerNormalization, so ``torch.onnx.export`` writes
    ``nn.LayerNorm`` out as nine ops::

        mean = ReduceMean(x, axes)         d = Sub(x, mean)
        var  = ReduceMean(Pow(d, 2), axes) n = Div(d, Sqrt(Add(var, epsilon)))
        y    = Add(Mul(n, scale), bias)

    The pass replaces them by ``onnx.LayerNormalization(x, scale, bias) {axis, epsilon}``
    (opset 17; it carries ``onnx.opset = 17`` in an older model), lowered to one
    ``F.layer_norm``. Also matched: ``Mul(d, d)`` for the square, ``Mul(d, Reciprocal(...))``
    for the division, operands of Add and Mul in either order, ``axes`` as an attribute (before
    opset 18) or a constant input, and no bias or no affine part at all (the scale is then a
    constant of ones, in the module's weights).

When (every condition, else the ops stay)
    Both ReduceMean ops reduce the same trailing axes of ``x`` (``axis`` is the first of them)
    with ``keepdims = 1``; the exponent is the constant 2; ``epsilon`` is a one-element finite
    constant; ``scale`` and ``bias`` (any values, constants or not) have exactly the normalised
    shape ``x.shape[axis:]``; ``x`` is float32 (LayerNormalization computes in float32,
    ``stash_type = 1``) and the result has ``x``'s type; every intermediate value is read only
    inside the pattern, all in one block. Variance with another estimator, epsilon added after
    the square root, a mean over other axes (ConvNeXt's channels-first norm on axis 1 of a 4-D
    tensor) or a different constant stay unfused.

Options
    None.

Measured: see the commit message that added this pass (``bench/rewrites.py``).

Source: Ba, Kiros & Hinton, *Layer Normalization*, 2016; the ONNX operator,
https://onnx.ai/onnx/operators/onnx__LayerNormalization.html; onnxruntime's
``LayerNormFusion`` graph transformer matches the same subgraph.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, IntegerType, ModuleOp, Signedness, f32
from xdsl.ir import Attribute, SSAValue
from xdsl.passes import ModulePass

from ramiel.context import module_store
from ramiel.dialects.onnx import OnnxOp, static_shape
from ramiel.dtypes import numpy_dtype_of
from ramiel.passes.fuse_gelu import equals
from ramiel.rewrite import (
    Const,
    ConstantMaker,
    Match,
    OneOf,
    Op,
    Pattern,
    Var,
    constant_array,
    create_op,
    is_closed,
    match,
    replace_root,
)
from ramiel.weights import WeightStore

__all__ = ["FuseLayerNorm", "fuse_layer_norm"]


def _reduce_mean(x: Pattern, name: str) -> Pattern:
    """ReduceMean with ``axes`` as an attribute or as a constant operand."""
    return OneOf((Op("ReduceMean", (x,), name=name), Op("ReduceMean", (x, Const()), name=name)))


X = Var("x")
D = Op("Sub", (X, _reduce_mean(X, "mean")), name="d")
_SQUARE = OneOf((Op("Pow", (D, Const(pred=equals(2.0, "fiu")))), Op("Mul", (D, D))))
_STD = Op("Sqrt", (Op("Add", (_reduce_mean(_SQUARE, "var"), Const("eps")), commutative=True),))
NORMALISED = OneOf(
    (Op("Div", (D, _STD)), Op("Mul", (D, Op("Reciprocal", (_STD,))), commutative=True))
)
_SCALED = Op("Mul", (NORMALISED, Var("scale")), commutative=True)
LAYER_NORM = OneOf((Op("Add", (_SCALED, Var("bias")), commutative=True), _SCALED, NORMALISED))
"""The decomposed LayerNorm, with bias, scale only, or no affine part (tried in that order)."""


def _axes(op: OnnxOp, store: WeightStore | None, rank: int) -> tuple[int, ...] | None:
    """The normalised axes a ReduceMean reduces (``keepdims = 1`` required), or ``None``."""
    if op.attr("keepdims", 1) != 1:
        return None
    axes = op.attr("axes")
    if len(op.operands) > 1:
        arr = constant_array(op.operands[1], store)
        axes = None if arr is None else [int(a) for a in np.asarray(arr).reshape(-1)]
    if not axes:
        return None  # all axes, or none (noop_with_empty_axes): not a LayerNorm
    norm = sorted({a + rank if a < 0 else a for a in axes})
    return tuple(norm) if all(0 <= a < rank for a in norm) else None


def _accept(m: Match, root: OnnxOp, store: WeightStore | None) -> bool:
    if not is_closed(m):
        return False
    x = m.values["x"]
    shape = static_shape(x.type)
    el = getattr(x.type, "element_type", None)
    if shape is None or el is None or numpy_dtype_of(el).name != "float32":
        return False
    if root.results[0].type != x.type:
        return False
    r = len(shape)
    a1, a2 = (_axes(m.ops[k], store, r) for k in ("mean", "var"))
    if a1 is None or a1 != a2 or a1 != tuple(range(a1[0], r)):
        return False
    eps = m.arrays["eps"]
    if eps.size != 1 or not np.isfinite(eps).all() or float(eps.reshape(-1)[0]) < 0:
        return False
    norm_shape = shape[a1[0] :]
    for k in ("scale", "bias"):
        v = m.values.get(k)
        if v is not None and (static_shape(v.type) != norm_shape or v.type.element_type != el):  # type: ignore[attr-defined]
            return False
    return True


def fuse_layer_norm(module: ModuleOp, store: WeightStore | None) -> int:
    """Run the pass on ``module`` (``store``: its weights, ``None`` if it names no weights
    file); returns the number of LayerNormalization ops made."""
    consts = ConstantMaker(module, store)
    n = 0
    for op in reversed(list(module.walk())):
        if not isinstance(op, OnnxOp) or op.parent is None:
            continue
        if op.op_type not in ("Add", "Mul", "Div"):
            continue
        m = match(
            LAYER_NORM, op.results[0], store, functools.partial(_accept, root=op, store=store)
        )
        if m is None:
            continue
        x = m.values["x"]
        shape = static_shape(x.type)
        assert shape is not None
        axis = _axes(m.ops["mean"], store, len(shape))[0]  # type: ignore[index]
        scale: SSAValue | None = m.values.get("scale")
        if scale is None:
            name = f"{op.results[0].name_hint or 'layer_norm'}_scale"
            scale = consts.make(np.ones(shape[axis:], np.float32), name, op)
        operands = [x, scale]
        if "bias" in m.values:
            operands.append(m.values["bias"])
        eps = float(m.arrays["eps"].reshape(-1)[0])
        attrs: dict[str, Attribute] = {
            "axis": IntegerAttr(axis, IntegerType(64, Signedness.SIGNED)),
            "epsilon": FloatAttr(eps, f32),
        }
        ln = create_op("LayerNormalization", operands, [op.results[0].type], attrs, op, since=17)
        assert op.parent is not None
        op.parent.insert_op_before(ln, op)
        replace_root(op, ln.results[0], m.matched)
        n += 1
    return n


@dataclass(frozen=True)
class FuseLayerNorm(ModulePass):
    """Decomposed LayerNorm -> ``onnx.LayerNormalization`` (see the module doc)."""

    name = "fuse-layer-norm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        fuse_layer_norm(op, module_store(ctx, op))
