"""Outputs owned by the caller: copy an output only when someone else may hold its memory.

A runner promises that every output it returns is a tensor no one else holds: writing into it in
place changes nothing the model (or the caller's own inputs, or another output) sees. The threads
and inline backends pass tensors by reference, so a graph output can be

* a weight (``Identity(W)``) or a view of one (``Reshape(W)``),
* a graph input, i.e. the caller's own tensor, or a view of it,
* the same tensor as another output (one value returned twice, two views of one tensor, a value a
  cluster both outputs and sends to another cluster that outputs it too).

:func:`own_outputs` copies exactly those outputs (``clone``), and returns every other output as
the cluster computed it, without a copy. The test is on memory, not on names or on how the
weights are stored: an output is shared when its storage's byte range overlaps the storage of a
weight, of an input or of an output already returned (or when it *is* one of those tensor
objects, which also covers tensors without memory). A view shares its base's storage, so views
are covered wherever they come from; a numpy array wrapped twice (``torch.from_numpy``) gives two
storages over one range, which the overlap test covers too.

The processes backend copies every output out of its shared-memory buffer anyway, so its outputs
are always fresh; the sequential module's outputs are made owned at compile time
(:mod:`ramiel.passes.own_outputs`).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping

import torch


def storage_range(t: torch.Tensor) -> tuple[int, int] | None:
    """``(first byte, end byte)`` of the memory of ``t``'s storage, or ``None`` when it has none
    (no elements, or not a CPU/CUDA tensor whose memory can be addressed)."""
    try:
        s = t.untyped_storage()
        start, n = s.data_ptr(), s.nbytes()
    except (RuntimeError, NotImplementedError):  # meta, sparse, ... tensors: no addressable memory
        return None
    if n == 0 or start == 0:
        return None
    return start, start + n


class HeldMemory:
    """Tensors someone else holds: their objects and the byte ranges of their storages.

    ``add`` keeps the ranges sorted and merged, so ``overlaps`` is a binary search (one per
    output per inference).
    """

    def __init__(self, tensors: Iterable[torch.Tensor] = ()):
        self._starts: list[int] = []
        self._ends: list[int] = []
        self._ids: set[int] = set()
        self._keep: list[torch.Tensor] = []  # the objects whose ids are recorded stay alive
        for t in tensors:
            self.add(t)

    def add(self, t: torch.Tensor) -> None:
        """Record ``t`` as held by someone else."""
        self._ids.add(id(t))
        self._keep.append(t)
        r = storage_range(t)
        if r is None:
            return
        start, end = r
        i = bisect.bisect_left(self._starts, start)
        # merge with the neighbours it touches
        if i > 0 and self._ends[i - 1] >= start:
            i -= 1
            start = self._starts[i]
        j = i
        while j < len(self._starts) and self._starts[j] <= end:
            end = max(end, self._ends[j])
            j += 1
        self._starts[i:j] = [start]
        self._ends[i:j] = [end]

    def overlaps(self, t: torch.Tensor) -> bool:
        """True when ``t`` is a recorded tensor or its memory overlaps a recorded one's."""
        if id(t) in self._ids:
            return True
        r = storage_range(t)
        if r is None:
            return False
        start, end = r
        i = bisect.bisect_right(self._starts, start)
        if i > 0 and self._ends[i - 1] > start:
            return True
        return i < len(self._starts) and self._starts[i] < end


def own_outputs(
    outputs: Mapping[str, torch.Tensor],
    held: HeldMemory,
    inputs: Iterable[torch.Tensor] = (),
) -> tuple[dict[str, torch.Tensor], list[str]]:
    """The outputs with every shared one replaced by a copy (see the module docstring).

    Args:
        outputs: output name -> tensor, as the clusters computed them (in output order).
        held: the memory of the weights (not modified).
        inputs: the caller's input tensors of this inference.

    Returns:
        ``(outputs, copied)``: a new dict in the same order, and the names of the outputs that were
        copied (empty when none shared memory).
    """
    taken = HeldMemory(inputs)  # this inference's: the inputs, then the outputs returned so far
    out: dict[str, torch.Tensor] = {}
    copied: list[str] = []
    for name, t in outputs.items():
        if isinstance(t, torch.Tensor):
            if held.overlaps(t) or taken.overlaps(t):
                t = t.clone()
                copied.append(name)
            taken.add(t)
        out[name] = t
    return out, copied
