"""The weights object a cluster function receives as ``w``: named tensors with attribute access.

Generated cluster functions read ``w.conv1_w``; :class:`~ramiel.runtime.ParallelModel` makes one
of its buffers (:meth:`~ramiel.runtime.ParallelModel.weights_namespace`). The tensors live in the
instance's ``__dict__``, so attribute access is a plain lookup and a weight always wins over a method of the same name (call methods on
the class in that case: ``Weights.names(w)``). Names of the form ``__x__`` are reserved.

Weights are loaded from safetensors files (never pickle). For the processes backend,
:func:`pack_shared` copies all tensors once into one shared-memory arena that every worker maps,
so workers share one copy instead of holding one each.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file

from ramiel.files import make_readable
from ramiel.runtime.program import ProgramError, dtype_size

_ALIGN = 64


FORMATS_METADATA_KEY = "ramiel.memory_formats"
"""safetensors metadata entry: JSON ``{key: "channels_last"}``, the tensors the generated code
reads in a memory format other than contiguous (see from_safetensors)."""


def memory_format_name(t: torch.Tensor) -> str:
    """``"channels_last"`` for a 4-D tensor in that format whose strides differ from the
    contiguous ones, else ``"contiguous_format"``."""
    if (
        t.dim() == 4
        and not t.is_contiguous()
        and t.is_contiguous(memory_format=torch.channels_last)
    ):
        return "channels_last"
    return "contiguous_format"


class Weights:
    """Named tensors with attribute access (``w.conv1_w``) and item access (``w["conv1.w"]``).

    Args:
        tensors: name -> tensor. Names used with attribute access must be Python identifiers.

    Raises:
        ProgramError: a value is not a ``torch.Tensor`` or a name is not a string or is a dunder.
    """

    def __init__(self, tensors: Mapping[str, torch.Tensor] | None = None):
        for name, t in (tensors or {}).items():
            if not isinstance(name, str) or (name.startswith("__") and name.endswith("__")):
                raise ProgramError(f"invalid weight name {name!r}")
            if not isinstance(t, torch.Tensor):
                raise ProgramError(f"weight '{name}' is a {type(t).__name__}, not a torch.Tensor")
            self.__dict__[name] = t

    @classmethod
    def from_safetensors(cls, path: str | Path, keys: Collection[str] | None = None) -> Weights:
        """Load the tensors of a ``.safetensors`` file (CPU): all, or those named in ``keys``
        (names the file does not hold are ignored; a rank of the distributed backend loads only
        what its clusters read).

        The tensors listed in the file's metadata under :data:`FORMATS_METADATA_KEY` are
        converted here, once, into the memory format the generated code reads them in
        (:func:`to_formats`).
        """

        with torch.inference_mode(False):  # plain tensors even under inference mode
            if keys is None:
                tensors = load_file(str(path), device="cpu")
            with safe_open(str(path), "pt") as f:
                meta = f.metadata() or {}
                if keys is not None:
                    tensors = {k: f.get_tensor(k) for k in f.keys() if k in keys}  # noqa: SIM118
            formats = json.loads(meta.get(FORMATS_METADATA_KEY, "{}"))
            return cls(to_formats(tensors, formats))

    def save_safetensors(self, path: str | Path) -> None:
        """Write the tensors to a ``.safetensors`` file (made contiguous, storage not shared)."""
        save_file({k: v.contiguous().clone() for k, v in Weights.as_dict(self).items()}, str(path))
        make_readable(path)  # safetensors writes 0600 whatever the umask

    def as_dict(self) -> dict[str, torch.Tensor]:
        """A new dict name -> tensor."""
        return dict(vars(self))

    def names(self) -> list[str]:
        """The weight names, in insertion order."""
        return list(vars(self))

    def nbytes(self) -> int:
        """Total size of the tensors in bytes."""
        return sum(t.numel() * t.element_size() for t in vars(self).values())

    def __getattr__(self, name: str) -> torch.Tensor:
        # Only reached when the name is not in __dict__: an unknown weight.
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(f"no weight named '{name}'")

    def __getitem__(self, name: str) -> torch.Tensor:
        try:
            return vars(self)[name]
        except KeyError:
            raise KeyError(f"no weight named '{name}'") from None

    def __contains__(self, name: object) -> bool:
        return name in vars(self)

    def __iter__(self) -> Iterator[str]:
        return iter(list(vars(self)))

    def __len__(self) -> int:
        return len(vars(self))

    def __repr__(self) -> str:
        return f"Weights({len(self)} tensors, {Weights.nbytes(self)} bytes)"


def to_formats(
    tensors: dict[str, torch.Tensor], formats: Mapping[str, str]
) -> dict[str, torch.Tensor]:
    """``tensors`` with each one named in ``formats`` (key -> ``"channels_last"`` or
    ``"contiguous_format"``, a generated module's ``WEIGHT_FORMATS`` or a weights file's
    :data:`FORMATS_METADATA_KEY`) converted into that memory format; same values, other strides.

    Raises:
        ProgramError: an unknown format name, or ``channels_last`` for a tensor that is not 4-D.
    """
    out = dict(tensors)
    for key, fmt in formats.items():
        if key not in out:
            continue
        name = fmt if isinstance(fmt, str) else str(fmt).removeprefix("torch.")
        if name not in ("channels_last", "contiguous_format"):
            raise ProgramError(f"weight '{key}': unknown memory format {fmt!r}")
        t = out[key]
        if name == "channels_last" and t.dim() != 4:
            raise ProgramError(f"weight '{key}': channels_last needs a 4-D tensor, got {t.dim()}-D")
        out[key] = t.contiguous(memory_format=getattr(torch, name))
    return out


def own_tensors(
    module: torch.nn.Module, tensors: Mapping[str, torch.Tensor]
) -> dict[str, torch.Tensor]:
    """The tensors of ``tensors`` (a weights file's) that are ``module``'s own state (its
    ``state_dict`` keys): a compilation's one weights file holds the tensors of both its
    programs, and the sequential one can read a constant the parallel one does not (or the
    other way round: :mod:`ramiel.dynamic_batch`). What ``module`` lacks is not dropped here:
    ``load_state_dict`` names it."""
    own = module.state_dict().keys()
    return {k: v for k, v in tensors.items() if k in own}


def as_weights(weights: Weights | Mapping[str, torch.Tensor] | str | Path | None) -> Weights:
    """Accept a :class:`Weights`, a dict of tensors, a ``.safetensors`` path or ``None`` (empty)."""
    if weights is None:
        return Weights()
    if isinstance(weights, Weights):
        return weights
    if isinstance(weights, (str, Path)):
        return Weights.from_safetensors(weights)
    return Weights(weights)


@dataclass(frozen=True)
class TensorSlot:
    """Where one tensor lives in an arena: byte ``offset``, ``shape``, ``dtype`` and
    ``memory_format`` (``"channels_last"``: the bytes are in NHWC order, the view has
    channels-last strides)."""

    offset: int
    shape: tuple[int, ...]
    dtype: torch.dtype
    memory_format: str = "contiguous_format"

    @property
    def nbytes(self) -> int:
        n = dtype_size(self.dtype)
        for d in self.shape:
            n *= d
        return n


def layout(items: Mapping[str, tuple], start: int = 0):
    """Assign 64-byte-aligned offsets to tensors of given ``(shape, dtype)`` or
    ``(shape, dtype, memory_format)``.

    Returns:
        ``(slots, total_bytes)``: name -> :class:`TensorSlot`, and the arena size in bytes.
    """
    slots: dict[str, TensorSlot] = {}
    off = start
    for name, item in items.items():
        shape, dtype = item[0], item[1]
        fmt = item[2] if len(item) > 2 else "contiguous_format"
        off = (off + _ALIGN - 1) // _ALIGN * _ALIGN
        slot = TensorSlot(off, tuple(shape), dtype, fmt)
        slots[name] = slot
        off += slot.nbytes
    return slots, (off + _ALIGN - 1) // _ALIGN * _ALIGN


def shared_arena(nbytes: int) -> torch.Tensor:
    """A zero-filled uint8 tensor of ``nbytes`` (at least 64) in shared memory.

    The storage is an unlinked shm file held by descriptor (torch's ``file_descriptor`` strategy):
    forked children inherit the mapping, spawned children receive it when it is pickled through
    ``multiprocessing``, and the memory is freed when the last process drops it.
    """
    return torch.zeros(max(nbytes, _ALIGN), dtype=torch.uint8).share_memory_()


def view(arena: torch.Tensor, slot: TensorSlot) -> torch.Tensor:
    """The tensor ``slot`` describes, as a view into ``arena`` (no copy)."""
    raw = arena[slot.offset : slot.offset + slot.nbytes].view(slot.dtype)
    if slot.memory_format == "channels_last":
        n, c, h, w = slot.shape
        return raw.view(n, h, w, c).permute(0, 3, 1, 2)
    return raw.view(slot.shape)


def pack_shared(weights: Weights) -> tuple[torch.Tensor, dict[str, TensorSlot]]:
    """Copy all weights into one shared-memory arena (each in its memory format: a
    channels-last conv kernel stays channels-last in every worker).

    Returns:
        ``(arena, slots)``; :func:`unpack` rebuilds the :class:`Weights` in any process that has the
        arena (views, no copy).
    """
    tensors = Weights.as_dict(weights)
    slots, total = layout(
        {k: (tuple(t.shape), t.dtype, memory_format_name(t)) for k, t in tensors.items()}
    )
    arena = shared_arena(total)
    for name, t in tensors.items():
        view(arena, slots[name]).copy_(t.detach())
    return arena, slots


def unpack(arena: torch.Tensor, slots: Mapping[str, TensorSlot]) -> Weights:
    """The :class:`Weights` whose tensors are views of ``arena`` (see :func:`pack_shared`)."""
    return Weights({name: view(arena, s) for name, s in slots.items()})
