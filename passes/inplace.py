"""``--inplace``: mark the ops that may write their result into an operand's buffer.

What it does
    An activation or an element-wise op whose input is a fresh tensor that nothing else reads
    (a Conv's output read only by its ReLU, a residual Add or ONNX Sum read only by the ReLU
    after it, the Sigmoid of a SiLU read only by its Mul) can overwrite that tensor instead of allocating a new
    one: ``torch.relu_(conv)``, ``conv.add_(identity)``, ``F.hardswish(x, inplace=True)``,
    ``torch.clamp_(x, 0.0, 6.0)``, ``conv.add_(identity)`` for a two-input ``Sum``. The pass sets ``ramiel.inplace = i`` on each such op (``i``:
    the operand it overwrites); ``--lower-to-torchpy`` emits the in-place form for it and the
    usual form for every other op. Chains work: a ReLU after an in-place Add overwrites the same
    buffer.

    The claim is an IR property the ``onnx`` dialect's verifier checks after every pass
    (:func:`ramiel.dialects.onnx.inplace_violation`): the overwritten operand has the result's
    type, exactly one use (this op), and comes from an op of
    :data:`~ramiel.dialects.onnx.FRESH_RESULT_OPS` (or another in-place op) in the same block.
    So never in place on a graph input, a weight, a graph output, a tensor that crosses a channel
    (a ``cluster.send`` is a use; a received tensor has no such producer), an alias or view of
    one of those, or a tensor someone else reads. Rewrites that add a use (re-clustering,
    merging clones when the clustered program is flattened for the sequential module) drop the
    claims they break (:func:`ramiel.dialects.onnx.drop_invalid_inplace`).

    ``ramiel compile`` runs it last, after clustering (channels decide which tensors may be
    overwritten), for the parallel and the sequential module alike.

Options
    None.

Measured: see the commit message that added this pass (``bench/rewrites.py``).

Source: PyTorch's in-place ops (``Tensor.add_``, ``torch.relu_``, ``inplace=True`` of
``torch.nn.functional``); the single-use condition is the buffer-reuse rule of MLIR's
one-shot bufferization (an operand may be written in place when no later read of it exists,
https://mlir.llvm.org/docs/Bufferization/).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ramiel.attrs import INPLACE_ATTR, has, remove, set_int
from ramiel.dialects.onnx import INPLACE_OPS, OnnxOp, inplace_violation

__all__ = ["Inplace", "mark_inplace"]


def mark_inplace(module: ModuleOp) -> int:
    """Run the pass on ``module`` (program order, so chains are found); returns the number of
    ops marked."""
    n = 0
    for op in module.walk():
        if not isinstance(op, OnnxOp) or has(op, INPLACE_ATTR):
            continue
        for i in INPLACE_OPS.get(op.op_type, ()):
            set_int(op, INPLACE_ATTR, i)
            if inplace_violation(op) is None:
                n += 1
                break
            remove(op, INPLACE_ATTR)
    return n


@dataclass(frozen=True)
class Inplace(ModulePass):
    """Mark ops that may overwrite an operand (see the module doc)."""

    name = "inplace"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        mark_inplace(op)
