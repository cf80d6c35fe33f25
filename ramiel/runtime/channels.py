"""Channel endpoints: the ``ch`` object a cluster function calls ``ch.get``/``ch.put`` on.

Each cluster gets its own endpoint, which knows only the channels whose ``dst`` (for ``get``) or
``src`` (for ``put``) is that cluster, so a misrouted get/put is a clear :class:`ChannelError`.
Every endpoint checks at ``put`` that the tensor has the channel's static shape and dtype, and
refuses a second put/get of one channel within one inference.

Two implementations:

* :class:`ThreadEndpoint` (threads backend): a channel is a one-slot handoff guarded by a lock;
  ``put`` stores the reference (no copy), ``get`` returns that same tensor. The tensor's version
  counter (``Tensor._version``, bumped by every in-place op on it or a view) is recorded at
  ``put`` so that the runner can report a tensor that was modified after it crossed a channel
  (not for an inference tensor, which has none: :func:`version_of`).
* :class:`ShmEndpoint` (processes backend): a channel is a pre-allocated buffer of the static
  shape, in the channel's memory format, in a shared-memory arena plus a semaphore counting
  "full". ``put`` copies the tensor into
  the buffer (one copy; the sender may then do anything with its tensor) and releases the
  semaphore; ``get`` acquires it and returns the buffer itself (zero-copy). The buffer is
  rewritten only in a later inference, and an inference ends only when every cluster has
  finished it, so the receiver may read it until its cluster function returns.

Every blocking wait uses a short timeout and re-checks an abort flag (and, in a worker process,
whether the parent still lives), so a failure elsewhere never leaves a worker blocked forever.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from dataclasses import dataclass

import numpy as np
import torch

from ramiel.runtime.program import ChannelError, ChannelSpec, Program, describe
from ramiel.runtime.weights import TensorSlot, layout, view

#: Seconds between two checks of the abort flag while a worker waits.
POLL_S = 0.05


class Aborted(BaseException):  # noqa: N818 - control flow, not an error
    """Raised inside a worker that waits on a channel after the inference was aborted."""


class Deadline(BaseException):  # noqa: N818 - control flow, not an error
    """Raised inside the cluster the caller's thread runs when a get waits past the deadline."""


def _check_tensor(cluster: str, name: str, spec: ChannelSpec, t: object) -> None:
    if not isinstance(t, torch.Tensor):
        raise ChannelError(
            f"cluster '{cluster}' put a {type(t).__name__} on channel '{name}', not a torch.Tensor"
        )
    if t.shape != spec.shape or t.dtype != spec.dtype:
        raise ChannelError(
            f"cluster '{cluster}' put {describe(t.shape, t.dtype)} on channel '{name}', "
            f"declared {describe(spec.shape, spec.dtype)}"
        )


def _no_channel(program: Program, cluster: str, name: str, verb: str) -> ChannelError:
    spec = program.channels.get(name)
    if spec is None:
        why = "no such channel"
    elif verb == "get":
        why = f"it goes to {_who(spec.dst)}"
    else:
        why = f"it comes from {_who(spec.src)}"
    return ChannelError(f"cluster '{cluster}' cannot {verb} channel '{name}': {why}")


def _who(c: str | None) -> str:
    return "the caller" if c is None else f"cluster '{c}'"


# ---------------------------------------------------------------------------------------- threads


class ThreadState:
    """What the caller shares with its worker threads: the current epoch and the abort flag."""

    __slots__ = ("epoch", "abort", "copy_on_put", "caller", "deadline")

    def __init__(self, copy_on_put: bool):
        self.epoch = 0
        self.abort = False
        self.copy_on_put = copy_on_put
        #: the cluster run in the caller's thread (threads backend), whose gets time out at
        #: ``deadline`` (``time.monotonic()``) with :class:`Deadline`; ``None``: none
        self.caller: str | None = None
        self.deadline = 0.0


def version_of(t: torch.Tensor) -> int:
    """``t``'s version counter (``Tensor._version``, bumped by every in-place op on it or a view),
    or -1 for an inference tensor (made under ``torch.inference_mode``), which has none: a
    tensor put on a channel is checked against its version when the inference ends, and an
    inference tensor written in place cannot be caught (it compares -1 with -1)."""
    return -1 if t.is_inference() else t._version


class Slot:
    """One channel of the threads backend.

    ``lock`` is held while the slot is empty (``None`` for a channel to the caller, which reads the
    value only after every cluster has finished).
    """

    __slots__ = ("name", "spec", "lock", "value", "version", "put_epoch", "get_epoch")

    def __init__(self, name: str, spec: ChannelSpec):
        self.name = name
        self.spec = spec
        self.lock: threading.Lock | None = None
        if spec.dst is not None:
            self.lock = threading.Lock()
            self.lock.acquire()
        self.value: torch.Tensor | None = None
        self.version = 0
        self.put_epoch = 0
        self.get_epoch = 0

    def fill(self, t: torch.Tensor, epoch: int) -> None:
        """Store ``t`` (by reference) and wake the receiver."""
        self.value = t
        self.version = version_of(t)
        self.put_epoch = epoch
        if self.lock is not None:
            self.lock.release()

    def wake(self) -> None:
        """Release the lock if held (used to wake a waiting receiver on abort)."""
        if self.lock is not None and self.lock.locked():
            with contextlib.suppress(RuntimeError):
                self.lock.release()


class ThreadEndpoint:
    """``ch`` of one cluster in the threads backend (see the module docstring)."""

    def __init__(self, program: Program, cluster: str, slots: dict[str, Slot], state: ThreadState):
        self.program = program
        self.cluster = cluster
        self._in = {n: slots[n] for n in program.channels_into(cluster)}
        self._out = {n: slots[n] for n in program.channels_from(cluster)}
        self._state = state

    def get(self, name: str) -> torch.Tensor:
        """Wait for and return the tensor of channel ``name`` (the sender's own tensor).

        Raises:
            ChannelError: the channel does not go to this cluster, or was already got.
        """
        slot = self._in.get(name)
        if slot is None:
            raise _no_channel(self.program, self.cluster, name, "get")
        st = self._state
        if slot.get_epoch == st.epoch:
            raise ChannelError(f"cluster '{self.cluster}' got channel '{name}' twice")
        lock = slot.lock
        assert lock is not None
        if not lock.acquire(False):
            timed = st.caller == self.cluster
            while not lock.acquire(True, POLL_S):
                if st.abort:
                    raise Aborted
                if timed and time.monotonic() > st.deadline:
                    raise Deadline
        if st.abort:
            raise Aborted
        slot.get_epoch = st.epoch
        return slot.value  # type: ignore[return-value]

    def put(self, name: str, tensor: torch.Tensor) -> None:
        """Send ``tensor`` on channel ``name``; by reference unless ``copy_on_put`` was set.

        Raises:
            ChannelError: the channel does not come from this cluster, was already put, or
                ``tensor`` is not a tensor of the declared shape and dtype.
        """
        slot = self._out.get(name)
        if slot is None:
            raise _no_channel(self.program, self.cluster, name, "put")
        _check_tensor(self.cluster, name, slot.spec, tensor)
        st = self._state
        if slot.put_epoch == st.epoch:
            raise ChannelError(f"cluster '{self.cluster}' put channel '{name}' twice")
        if st.copy_on_put:
            tensor = tensor.clone()
        slot.fill(tensor, st.epoch)


# -------------------------------------------------------------------------------------- processes


@dataclass(frozen=True)
class ShmLayout:
    """Where everything of the processes backend lives in the channel arena.

    The arena starts with a control block of int64 words: ``[abort, epoch]`` followed by one
    put-epoch and one get-epoch word per channel; the channel buffers follow, 64-byte aligned.
    """

    names: tuple[str, ...]
    slots: dict[str, TensorSlot]
    nbytes: int

    ABORT = 0
    EPOCH = 1
    HEADER = 2

    @classmethod
    def of(cls, program: Program) -> ShmLayout:
        names = tuple(program.channels)
        ctrl_bytes = 8 * (cls.HEADER + 2 * len(names))
        slots, total = layout(
            {n: (s.shape, s.dtype, s.format_name) for n, s in program.channels.items()},
            start=ctrl_bytes,
        )
        return cls(names, slots, total)

    def put_word(self, i: int) -> int:
        return self.HEADER + i

    def get_word(self, i: int) -> int:
        return self.HEADER + len(self.names) + i

    def ctrl(self, arena: torch.Tensor) -> np.ndarray:
        """The control block as an int64 numpy array sharing the arena's memory."""
        n = self.HEADER + 2 * len(self.names)
        return arena[: 8 * n].view(torch.int64).numpy()

    def buffers(self, arena: torch.Tensor) -> dict[str, torch.Tensor]:
        return {n: view(arena, s) for n, s in self.slots.items()}


class ShmEndpoint:
    """``ch`` of one cluster in the processes backend (see the module docstring).

    ``epoch`` is set by the worker before each inference.
    """

    def __init__(
        self,
        program: Program,
        cluster: str,
        lay: ShmLayout,
        arena: torch.Tensor,
        sems: list,
        parent_pid: int,
    ):
        self.program = program
        self.cluster = cluster
        self.epoch = 0
        self._ctrl = lay.ctrl(arena)
        self._parent_pid = parent_pid
        bufs = lay.buffers(arena)
        index = {n: i for i, n in enumerate(lay.names)}
        self._in = {
            n: (lay.get_word(index[n]), bufs[n], sems[index[n]])
            for n in program.channels_into(cluster)
        }
        self._out = {
            n: (lay.put_word(index[n]), bufs[n], sems[index[n]], program.channels[n])
            for n in program.channels_from(cluster)
        }

    def aborted(self) -> bool:
        """True when the caller or another worker aborted, or the parent process is gone."""
        return bool(self._ctrl[ShmLayout.ABORT]) or os.getppid() != self._parent_pid

    def get(self, name: str) -> torch.Tensor:
        """Wait for channel ``name`` and return its shared buffer (zero-copy).

        The returned tensor stays valid and unchanged until this cluster's function returns.

        Raises:
            ChannelError: the channel does not go to this cluster, or was already got.
        """
        entry = self._in.get(name)
        if entry is None:
            raise _no_channel(self.program, self.cluster, name, "get")
        word, buf, sem = entry
        ctrl = self._ctrl
        if ctrl[word] == self.epoch:
            raise ChannelError(f"cluster '{self.cluster}' got channel '{name}' twice")
        if not sem.acquire(False):
            while not sem.acquire(True, POLL_S):
                if self.aborted():
                    raise Aborted
        if ctrl[ShmLayout.ABORT]:
            raise Aborted
        ctrl[word] = self.epoch
        return buf

    def put(self, name: str, tensor: torch.Tensor) -> None:
        """Copy ``tensor`` into the channel's shared buffer and signal the receiver.

        Raises:
            ChannelError: the channel does not come from this cluster, was already put, or
                ``tensor`` is not a tensor of the declared shape and dtype.
        """
        entry = self._out.get(name)
        if entry is None:
            raise _no_channel(self.program, self.cluster, name, "put")
        word, buf, sem, spec = entry
        _check_tensor(self.cluster, name, spec, tensor)
        ctrl = self._ctrl
        if ctrl[word] == self.epoch:
            raise ChannelError(f"cluster '{self.cluster}' put channel '{name}' twice")
        buf.copy_(tensor)
        ctrl[word] = self.epoch
        if sem is not None:
            sem.release()
