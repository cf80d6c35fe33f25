"""``--own-outputs``: the sequential function returns tensors that no one else holds.

What it does
    In every ``torchpy.func`` of kind ``sequential``, an output that may share memory with a
    weight, a graph input or another output is returned as a copy: a ``torchpy.method "clone"``
    is inserted before the ``torchpy.return`` (``return (w.W.clone(), x_copy, y)`` in Python
    terms). Such outputs come from graphs like ``Identity(W)``, ``Identity(x)``, a Reshape of an
    input (a view), or one value returned as two outputs. Every other output is returned as
    computed, without a copy, so a caller who writes into an output in place never changes the
    weights, its own inputs or another output, and nothing is copied where nothing is shared.
    ``--lower-to-torchpy`` runs it on the sequential function it builds. Cluster functions are
    left alone: their outputs leave through the runner, which applies the same rule to the
    tensors themselves (:mod:`ramiel.runtime.ownership`).

Options
    None.

Algorithm
    A may-alias analysis of the function's straight-line code (the points-to sets of Andersen's
    analysis, restricted to one basic block): every value gets the set of *roots* whose memory it
    may share. A graph input or a weight is its own root and is held by someone else; the result
    of a call known to allocate new memory (:data:`FRESH_CALLEES`, :data:`FRESH_METHODS`: torch
    ops that never return an input or a view of one; ``.to`` to another element type) is a new
    root; the result of any other call
    (a view such as ``reshape``/``getitem``/``t``, ``.to`` to the operand's own element type,
    which returns the operand, a helper this pass does not know) may share the roots of all its operands. An output is copied when
    one of its roots is an input or a weight, or is a root of an output returned before it; the
    copy is a new root. The lists are checked against what torch does on every ONNX node
    conformance case (``tests/test_outputs_owned.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ramiel.dialects import torchpy as tp
from ramiel.lowering.outputs import own_outputs

__all__ = ["OwnOutputs"]


@dataclass(frozen=True)
class OwnOutputs(ModulePass):
    """See the module docstring."""

    name = "own-outputs"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in op.walk():
            if isinstance(f, tp.FuncOp) and f.kind.data == "sequential":
                own_outputs(f)
