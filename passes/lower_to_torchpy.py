"""``--lower-to-torchpy``: lower ``onnx`` + ``cluster`` IR to the ``torchpy`` dialect.

Each ``onnx`` op becomes the few ``torchpy.call``/``torchpy.method`` statements its lowering rule
emits (:mod:`ramiel.lowering`: exact ONNX semantics, decided from static shapes, attributes and
constant inputs). Constants become ``torchpy.weight`` references (``self.<key>`` in the
sequential module, ``w.<key>`` in cluster functions), keyed by sanitised tensor names that are
stable across runs: the buffer names of the generated classes and the tensor names of the
weights file.

* A clustered ``@main`` (``cluster.cluster`` ops) becomes one ``torchpy.func`` of kind ``cluster``
  per cluster: ``cluster.recv``/``cluster.send`` become ``torchpy.get``/``torchpy.put``, each graph
  input a cluster reads arrives on its own channel ``<input>__<cluster>``, and each graph output is
  put on ``<output>__out``; a ``torchpy.program`` op records the graph input/output channels.
* A flat ``@main`` becomes one ``torchpy.func @forward`` of kind ``sequential`` whose arguments are
  the graph inputs; an output that may share memory with a weight, an input or another output is
  returned as a copy (``--own-outputs``), the others as computed.

Memory formats (``ramiel.layout`` from ``--assign-layout``, see :mod:`ramiel.layout`): an operand
whose producer computes in another format than its consumer is converted first
(``x.contiguous(memory_format=torch.channels_last)`` or ``x.contiguous()``, marked
``ramiel.conversion``), once per value and function; graph outputs are converted to contiguous;
``torchpy.get``/``torchpy.put`` carry the format of the channel's tensor and a 4-D weight read by a
channels-last op its ``memory_format`` (converted once when the weights are loaded).

In a cluster function, an op whose ``ramiel.threads`` (from ``--intra-op-threads``) differs from
the count set before it is preceded by a ``torchpy.set_threads`` (the first one at the first such
op); the sequential module ignores the counts (its caller chooses its threads).

Options: ``mode=auto|sequential``: ``sequential`` flattens a clustered program first (the
sequential version of the same model, with the same weight keys).

Raises :class:`~ramiel.errors.UnsupportedOpError` listing every op that has no lowering rule, then
:class:`~ramiel.errors.DataDependentShapeError` listing every op whose result shape is not static
(NonZero, a Reshape of a run-time shape, ...): channel buffers and lowering rules need static
shapes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from ramiel.context import module_store
from ramiel.lowering.to_torchpy import lower_to_torchpy
from ramiel.passes import TypedOptions

__all__ = ["LowerToTorchpy"]


@dataclass(frozen=True)
class LowerToTorchpy(TypedOptions):
    """See the module docstring."""

    name = "lower-to-torchpy"

    mode: Literal["auto", "sequential"] = "auto"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        lower_to_torchpy(op, self.mode, module_store(ctx, op))
