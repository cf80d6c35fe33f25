"""``--fuse-gelu``: the decomposed GELU that exporters emit becomes one ``onnx.Gelu``.

What it does
    Before opset 20 ONNX has no Gelu, so ``torch.onnx.export`` (and other exporters) write
    ``F.gelu`` out as element-wise ops. The pass finds them and puts ``onnx.Gelu`` (opset 20;
    it carries ``onnx.opset = 20`` in an older model), which lowers to one ``F.gelu`` call:

    * the exact (erf) form ``x * 0.5 * (1 + erf(x / sqrt(2)))``, the erf argument also written
      ``x * (1 / sqrt(2))``: ``approximate = "none"``;
    * the tanh approximation ``x * 0.5 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))``, the
      cube written ``Pow(x, 3)`` or ``x * (x * x)``: ``approximate = "tanh"``
      (``F.gelu(..., approximate='tanh')``, BERT's and GPT-2's "new GELU").

    The three factors of the outer product may come in any order and grouping, and the operands
    of every Mul and Add in either order (what ``torch.onnx.export`` writes for
    ``nn.GELU``/``F.gelu`` and what the ``transformers`` activations give).

When (every condition, else the ops stay)
    Each constant is a one-element tensor equal to the exact value (sqrt(2), 1/sqrt(2), 0.5, 1,
    3, sqrt(2/pi), 0.044715) rounded to the tensor's element type; ``x`` is float32 or float64
    and the result has ``x``'s type (no broadcast grows it); every intermediate value is read only
    inside the pattern, and all its ops are in one block. A near-miss (another constant, a
    missing ``0.5``, an intermediate read elsewhere) stays unfused.

Options
    None.

Measured: see the commit message that added this pass (``bench/rewrites.py``).

Source: Hendrycks & Gimpel, *Gaussian Error Linear Units (GELUs)*, 2016 (both forms); the ONNX
Gelu operator, https://onnx.ai/onnx/operators/onnx__Gelu.html; onnxruntime's ``GeluFusion``
and ``FastGeluFusion`` graph transformers match the same subgraphs.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Attribute
from xdsl.passes import ModulePass

from ramiel.context import module_store
from ramiel.dialects.onnx import OnnxOp
from ramiel.dtypes import numpy_dtype_of
from ramiel.rewrite import (
    Const,
    Match,
    OneOf,
    Op,
    Pattern,
    Var,
    create_op,
    is_closed,
    match,
    replace_root,
)
from ramiel.weights import WeightStore

__all__ = ["FuseGelu", "fuse_gelu"]

_FLOATS = ("float32", "float64")


def equals(value: float, kinds: str = "f") -> Callable[[np.ndarray], bool]:
    """A constant predicate: one element of a kind in ``kinds`` (numpy kind letters), equal to
    ``value`` rounded to the element type."""

    def pred(arr: np.ndarray) -> bool:
        if arr.size != 1 or arr.dtype.kind not in kinds:
            return False
        return bool(arr.reshape(-1)[0] == np.array(value, arr.dtype))

    return pred


def _mul(a: Pattern, b: Pattern) -> Op:
    return Op("Mul", (a, b), commutative=True)


def _add(a: Pattern, b: Pattern) -> Op:
    return Op("Add", (a, b), commutative=True)


def _product(x: Pattern, half: Pattern, s: Pattern) -> Pattern:
    """``x * half * s`` in any grouping (each Mul commutative)."""
    return OneOf((_mul(_mul(x, half), s), _mul(_mul(x, s), half), _mul(x, _mul(half, s))))


X = Var("x")
HALF = Const(pred=equals(0.5))
ONE = Const(pred=equals(1.0))

ERF_FORM = _product(
    X,
    HALF,
    _add(
        ONE,
        Op(
            "Erf",
            (
                OneOf(
                    (
                        Op("Div", (X, Const(pred=equals(math.sqrt(2.0))))),
                        _mul(X, Const(pred=equals(1.0 / math.sqrt(2.0)))),
                    )
                ),
            ),
        ),
    ),
)
"""``x * 0.5 * (1 + erf(x / sqrt(2)))``."""

_CUBE = OneOf((Op("Pow", (X, Const(pred=equals(3.0, "fiu")))), _mul(X, _mul(X, X))))
TANH_FORM = _product(
    X,
    HALF,
    _add(
        ONE,
        Op(
            "Tanh",
            (
                _mul(
                    Const(pred=equals(math.sqrt(2.0 / math.pi))),
                    _add(X, _mul(Const(pred=equals(0.044715)), _CUBE)),
                ),
            ),
        ),
    ),
)
"""``x * 0.5 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))``."""


def _types_ok(m: Match, root: OnnxOp) -> bool:
    x = m.values["x"]
    el = getattr(x.type, "element_type", None)
    return el is not None and numpy_dtype_of(el).name in _FLOATS and x.type == root.results[0].type


def _closed_and_typed(m: Match, root: OnnxOp) -> bool:
    return is_closed(m) and _types_ok(m, root)


def fuse_gelu(module: ModuleOp, store: WeightStore | None) -> int:
    """Run the pass on ``module`` (``store``: its weights, ``None`` if it names no weights
    file); returns the number of Gelu ops made."""
    n = 0
    for op in reversed(list(module.walk())):
        if not isinstance(op, OnnxOp) or op.op_type != "Mul" or op.parent is None:
            continue
        for pattern, approximate in ((ERF_FORM, "none"), (TANH_FORM, "tanh")):
            m = match(
                pattern,
                op.results[0],
                store,
                functools.partial(_closed_and_typed, root=op),
            )
            if m is None:
                continue
            attrs: dict[str, Attribute] = (
                {"approximate": StringAttr(approximate)} if approximate != "none" else {}
            )
            gelu = create_op("Gelu", [m.values["x"]], [op.results[0].type], attrs, op, since=20)
            assert op.parent is not None
            op.parent.insert_op_before(gelu, op)
            replace_root(op, gelu.results[0], m.matched)
            n += 1
            break
    return n


@dataclass(frozen=True)
class FuseGelu(ModulePass):
    """Decomposed GELU -> ``onnx.Gelu`` (see the module doc)."""

    name = "fuse-gelu"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        fuse_gelu(op, module_store(ctx, op))
