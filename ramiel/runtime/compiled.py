"""Compiled segments: the generated code's compute between channel operations, ``torch.compile``-d.

``ramiel compile --compile`` (``compile=True``; the pass ``--compile-segments``) prints every run
of compute statements between two channel operations of a cluster (and the whole sequential
``forward``) as a function of its own, decorated with :func:`segment`::

    @segment
    def c0_seg0(w, data):
        ...
        return r9

    def cluster_c0(ch, w):
        data = ch.get('data_0__c0')
        r9 = c0_seg0(w, data)
        ch.put('r9__c0_c1', r9)

A :class:`Segment` is called like the function it wraps. Its first call at a given intra-op
thread count (and weights object) compiles it -- ``torch.compile`` with inductor,
``fullgraph=True`` (a graph break is an error, not a silent split), ``dynamic=False`` (shapes are
static), and :data:`INDUCTOR_CONFIG` (``freezing``: the weights it reads from ``w``, marked as
static addresses, become constants of the graph that inductor folds and lays out once) -- and
every later call runs the compiled code: no recompilation per call (an input whose strides differ
from the compilation's, or that requires grad, is first copied into the compiled layout, so no
dynamo guard fails and recompiles on a call). The runtimes compile every
segment before the first inference (:func:`ramiel.runtime.start` runs one warm-up inference on
zero inputs: each segment is compiled in the thread or process that runs it, at the thread count
and with the tensor layouts it will see), so compile time is never part of an inference's
latency; :meth:`ramiel.runtime.Runner.compile_report` lists it per segment.

Why per thread count: inductor's C++ kernels are generated for ``torch.get_num_threads()`` at
compile time (``#pragma omp parallel num_threads(N)``; with N = 1 no parallel region at all), so
a segment compiled for 1 thread would run serially under 2. Each thread count gets its own
compiled version (its own copy of the function's code object, so that dynamo's per-code cache
never mixes them).

Why not inductor's weight prepacking (``cpp.weight_prepack``, on by default with freezing): it
turns convolution weights into MKL-DNN tensors, which inductor's FX graph cache cannot store, so
every start would compile again from scratch. Measured here (light_inception_v1, 1 thread, the
whole sequential module as one segment, 2 cores, load average 1.9-3.8 from other users; medians
of 20): prepacked 81.6-89.7 ms, a second start 19.5 s; not prepacked 47.0-54.3 ms, a second start
5.1 s (FX graph cache hit); eager 84.5 ms. (Without prepacking, freezing converts the
convolution weights to channels-last once and PyTorch's convolution runs on them directly.)

On-disk cache: inductor's caches (compiled kernels and FX graphs) go to :func:`cache_dir`
(``$RAMIEL_COMPILE_CACHE``, else ``~/.cache/ramiel/inductor``; a ``TORCHINDUCTOR_CACHE_DIR`` other
than inductor's default wins), shared by every program: the keys are hashes of the graphs, the inductor
configuration, the thread count and the constants' shapes (not their values: a cached graph gets
the current weights), so a second start of the same program skips inductor's code generation and
the C++ compiler.

``RAMIEL_COMPILE=0`` in the environment runs every segment eagerly (the same statements,
uncompiled), for debugging. A segment that cannot be compiled (a graph break, no C++ compiler)
runs eagerly too, with a warning, and its :class:`CompileEvent` says why.
"""

from __future__ import annotations

import functools
import os
import threading
import time
import types
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import torch

from ramiel.envflags import switch_on

ENV_DISABLE = "RAMIEL_COMPILE"
"""Set to ``0`` to run every segment eagerly (debugging)."""

ENV_CACHE = "RAMIEL_COMPILE_CACHE"
"""The directory of inductor's on-disk caches (default ``~/.cache/ramiel/inductor``)."""

INDUCTOR_CONFIG: dict[str, Any] = {
    "freezing": True,  # weights become constants: folded, converted to their layout once
    "cpp.weight_prepack": False,  # MKL-DNN packed weights would defeat the FX graph cache
    "fx_graph_cache": True,  # the default, made explicit: the on-disk cache is the point
}
"""The ``torch._inductor.config`` a segment is compiled with (see the module docstring)."""

_COMPILE_LOCK = threading.RLock()  # inductor's config is process-wide: one compile at a time


def cache_dir() -> str:
    """The directory of inductor's on-disk caches for compiled segments (see module docstring)."""
    env = os.environ.get(ENV_CACHE)
    if env:
        return env
    return os.path.join(os.path.expanduser("~"), ".cache", "ramiel", "inductor")


def configure_cache() -> str:
    """Point inductor's caches at :func:`cache_dir`, unless the user chose a
    ``TORCHINDUCTOR_CACHE_DIR``; returns the directory in use (inductor reads the variable when
    it compiles).

    ``import torch._dynamo`` itself sets the variable to inductor's default
    (``/tmp/torchinductor_<user>``) when it is unset, so that value counts as not chosen.
    """
    from torch._inductor.runtime.cache_dir_utils import (  # lazy: torch._inductor (the compiler)
        default_cache_dir,
    )

    current = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    if not current or os.path.abspath(current) == os.path.abspath(default_cache_dir()):
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.abspath(cache_dir())
    return os.environ["TORCHINDUCTOR_CACHE_DIR"]


def enabled() -> bool:
    """Whether segments are compiled (``RAMIEL_COMPILE`` is not ``0``)."""
    return switch_on(ENV_DISABLE)


@dataclass(frozen=True)
class CompileEvent:
    """One compilation of a segment: its name, the intra-op thread count it was compiled for,
    the seconds its first call took (compiling, or loading from the cache, plus one run) and,
    if it could not be compiled, why (it then runs eagerly)."""

    segment: str
    threads: int
    seconds: float
    error: str | None = None


def _mark_static(w: Any) -> None:
    """Mark every tensor of the weights object ``w`` as a static address, so that dynamo makes
    them graph constants and inductor's freezing folds them (a :class:`~ramiel.runtime.Weights`,
    an ``nn.Module``'s parameters and buffers, or a mapping of tensors)."""
    if isinstance(w, torch.nn.Module):
        tensors: Iterable[Any] = [*w.parameters(), *w.buffers()]
    elif isinstance(w, Mapping):
        tensors = w.values()
    else:
        tensors = vars(w).values()
    for t in tensors:
        if isinstance(t, torch.Tensor) and getattr(t, "_dynamo_static_input_type", None) is None:
            torch._dynamo.mark_static_address(t, guard=True)


def _fresh_copy(fn: Callable[..., Any], threads: int) -> Callable[..., Any]:
    """``fn`` with a code object of its own, so dynamo caches its compilation separately."""
    code = fn.__code__.replace()
    if code is fn.__code__:  # pragma: no cover - CPython always makes a new object
        code = fn.__code__.replace(co_name=f"{fn.__code__.co_name}__t{threads}")
    copy = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    copy.__qualname__ = fn.__qualname__
    copy.__module__ = fn.__module__
    return copy


class Segment:
    """A compiled segment of generated code (see the module docstring): call it as the function
    it wraps, ``seg(w, *inputs)``.

    Attributes:
        fn: the plain function (``seg.fn(w, *inputs)`` runs the statements eagerly).
        events: every :class:`CompileEvent` of this process, oldest first.
    """

    def __init__(self, fn: Callable[..., Any]):
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.events: list[CompileEvent] = []
        self._taken = 0
        # (threads, id(weights)) -> (callable, weights, input strides at compile time); the
        # weights are kept so that the id stays theirs
        self._entries: dict[tuple[int, int], tuple[Callable[..., Any], Any, tuple[Any, ...]]] = {}

    @property
    def name(self) -> str:
        return self.fn.__name__

    def __repr__(self) -> str:
        return f"<compiled segment {self.name} ({len(self._entries)} compiled version(s))>"

    def __call__(self, w: Any, *inputs: Any) -> Any:
        entry = self._entries.get((torch.get_num_threads(), id(w)))
        if entry is not None:
            fn, _, strides = entry
            for x, st in zip(inputs, strides, strict=True):
                if st is not None and (x.stride() != st or x.requires_grad):
                    inputs = _as_compiled(inputs, strides)
                    break
            return fn(w, *inputs)
        if not enabled():
            return self.fn(w, *inputs)
        return self._compile_and_call(w, inputs)

    def _compile_and_call(self, w: Any, inputs: tuple[Any, ...]) -> Any:
        threads = torch.get_num_threads()
        key = (threads, id(w))
        with _COMPILE_LOCK:
            if key in self._entries:  # another thread compiled it meanwhile
                return self(w, *inputs)
            configure_cache()
            import torch._inductor.config as inductor_config  # lazy: torch._inductor (the compiler)

            _mark_static(w)
            compiled = torch.compile(
                _fresh_copy(self.fn, threads), fullgraph=True, dynamic=False, backend="inductor"
            )
            t0 = time.perf_counter()
            try:
                with inductor_config.patch(INDUCTOR_CONFIG):
                    out = compiled(w, *inputs)
            except Exception as e:  # noqa: BLE001 - reported, then the segment runs eagerly
                why = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"
                self.events.append(
                    CompileEvent(self.name, threads, time.perf_counter() - t0, why[:500])
                )
                warnings.warn(
                    f"segment {self.name} could not be compiled ({why[:200]}); it runs eagerly",
                    RuntimeWarning,
                    stacklevel=3,
                )
                self._entries[key] = (self.fn, w, (None,) * len(inputs))
                return self.fn(w, *inputs)
            self.events.append(CompileEvent(self.name, threads, time.perf_counter() - t0))
            strides = tuple(x.stride() if isinstance(x, torch.Tensor) else None for x in inputs)
            self._entries[key] = (compiled, w, strides)
            return out

    def take_events(self) -> list[CompileEvent]:
        """The events since the last ``take_events`` (a worker process reports them)."""
        new = self.events[self._taken :]
        self._taken = len(self.events)
        return new


def _as_compiled(inputs: tuple[Any, ...], strides: tuple[Any, ...]) -> tuple[Any, ...]:
    """``inputs`` with every tensor in the strides the segment was compiled for, and not
    requiring grad: dynamo guards on both, and a call that failed a guard would compile again
    (on the call, without freezing). A copy only for a tensor that differs (a non-contiguous
    view a user passed, say); the programs' own tensors always match."""
    out = []
    for x, st in zip(inputs, strides, strict=True):
        if st is not None and (x.stride() != st or x.requires_grad):
            y = torch.empty_strided(x.shape, st, dtype=x.dtype, device=x.device)
            y.copy_(x.detach())
            x = y
        out.append(x)
    return tuple(out)


def segment(fn: Callable[..., Any]) -> Segment:
    """Decorator of generated segment functions: ``@segment def c0_seg0(w, x): ...``."""
    return Segment(fn)


def segments_in(namespace: Mapping[str, Any]) -> dict[str, Segment]:
    """The segments defined in a module's namespace (``vars(module)``), by name."""
    return {k: v for k, v in namespace.items() if isinstance(v, Segment)}


def program_segments(program: Any) -> dict[str, Segment]:
    """The segments the cluster functions of a :class:`~ramiel.runtime.Program` call (those
    defined in the modules of its cluster functions), by name; empty for an uncompiled one."""
    out: dict[str, Segment] = {}
    for fn in program.clusters.values():
        fn = getattr(fn, "__wrapped__", fn)
        namespace = getattr(fn, "__globals__", None)
        if isinstance(namespace, dict):
            out.update(segments_in(namespace))
    return out


def take_events(segments: Iterable[Segment]) -> list[CompileEvent]:
    """The new events of ``segments`` (see :meth:`Segment.take_events`)."""
    return [e for s in segments for e in s.take_events()]


def summary(events: Iterable[CompileEvent]) -> str:
    """One line: how many segments were compiled, in how many seconds, the slowest, failures."""
    evs = list(events)
    if not evs:
        return "no segment compiled"
    total = sum(e.seconds for e in evs)
    slow = max(evs, key=lambda e: e.seconds)
    failed = [e for e in evs if e.error]
    text = (
        f"{len(evs)} segment compilation(s) in {total:.1f} s (slowest {slow.segment} "
        f"{slow.seconds:.1f} s)"
    )
    if failed:
        text += f"; {len(failed)} not compiled, run eagerly: " + ", ".join(
            f"{e.segment} ({e.error})" for e in failed
        )
    return text


__all__ = [
    "CompileEvent",
    "ENV_CACHE",
    "ENV_DISABLE",
    "INDUCTOR_CONFIG",
    "Segment",
    "cache_dir",
    "configure_cache",
    "enabled",
    "program_segments",
    "segment",
    "segments_in",
    "summary",
    "take_events",
]
