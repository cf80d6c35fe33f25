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
random inputs: each segment is compiled in the thread or process that runs it, at the thread count
and with the tensor layouts it will see), so compile time is not part of an inference's
latency; :meth:`ramiel.runtime.Runner.compile_report` lists it per segment. One exception: an
inference under load runs with fewer intra-op threads than planned
(:mod:`ramiel.runtime.contention`); ``onednn-graph`` segments are warmed up for 1 thread too,
but an inductor segment compiles for such a count on the first inference that runs with it.

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

The ``onednn-graph`` backend (``@segment(backend='onednn-graph')``, ``--compile-backend
onednn-graph``; see :func:`_onednn_graph`): the first call at a thread count traces the segment
with ``torch.jit.trace`` (the weights it reads become constants of the graph; its in-place
statements made functional), runs the trace :data:`ONEDNN_GRAPH_RUNS` times with TorchScript's
oneDNN Graph fusion on, compares the result with the eager one, and times the trace against the
eager statements (:func:`_time_against_eager`): the faster runs every later call. oneDNN Graph
compiles each fused partition once, where eager PyTorch makes a oneDNN primitive descriptor on
every convolution call (50-70 µs each in a model, ``python bench/conv_overhead.py``). It
compiles in 0.1-1.5 s on the bench CNNs and BERT-base, 2.9-3.1 s on VGG-19 and ViT-Base (1
thread, quiet machine: about seven runs of the statements, eager, traced, fused and timed) and has
no on-disk cache. A trace holds its input shapes: a call with other shapes runs the statements
eagerly. Where the trace would hold a tensor's value (a ``TracerWarning`` outside the generated
shape asserts) or its result differs from eager, the segment runs eagerly, with a warning; where
the fusion fails inside TorchScript, it runs traced without the fusion; where eager was faster,
eagerly (both with a :attr:`CompileEvent.note`). The attempts (fused, its work-around, unfused:
:data:`_ATTEMPTS`) run first in a forked child with one thread (:mod:`ramiel.runtime.trial`, on
Linux), and the caller then runs only the one that worked there: a crash inside TorchScript (a
segmentation fault, found once) or a child past its time costs the child, and the segment runs
eagerly, with a warning. oneDNN Graph's fused Relu and clamp turn NaN into 0, so a call whose
input holds a NaN or an infinity runs the statements (:func:`_finite`), and weights holding one,
inference tensors (no version counter) and tensors off the CPU are never traced
(:func:`_eager_reason`). ``onednn-graph`` is the default where the cost model says it pays
(``compile="auto"``: :func:`ramiel.passes.compile_segments.onednn_graph_pays`).

``RAMIEL_COMPILE=0`` in the environment runs every segment eagerly (the same statements,
uncompiled), for debugging. A segment that cannot be compiled (a graph break, no C++ compiler)
runs eagerly too, with a warning, and its :class:`CompileEvent` says why.
"""

from __future__ import annotations

import contextlib
import dis
import functools
import inspect
import json
import linecache
import math
import operator
import os
import re
import threading
import time
import types
import warnings
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import torch

from ramiel.envflags import switch_on
from ramiel.errors import RuntimeFailure
from ramiel.runtime import ops, trial

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

BACKENDS = ("inductor", "onednn-graph")
"""How a segment is compiled: ``inductor`` (``torch.compile``, see the module docstring) or
``onednn-graph`` (``torch.jit.trace`` run by TorchScript with oneDNN Graph fusion: fractions of
a second to compile, see :func:`_onednn_graph`)."""

_COMPILE_LOCK = threading.RLock()  # inductor's config is process-wide: one compile at a time
# the thread that holds _COMPILE_LOCK to compile a segment (None: none does); see _traced
_compiling_thread: int | None = None


def _traced() -> bool:
    """Whether this segment call is being traced rather than run: by dynamo, ``torch.export``,
    ``torch.fx.symbolic_trace``. The flags torch sets for them are process-wide, and our own
    compilation of a segment in another thread sets them for as long as it runs (tens of seconds
    with inductor): taken at their word, a segment that another cluster's thread called then ran
    eagerly and was compiled at a later inference instead of at start (the threads backend; seen
    in CI). So while a segment compiles in another thread, they are that thread's. Under dynamo
    this reads as a constant (``_compiling_thread`` is ``None`` while it traces)."""
    if not (torch.compiler.is_compiling() or torch.fx._symbolic_trace.is_fx_symbolic_tracing()):
        return False
    owner = _compiling_thread
    return owner is None or owner == threading.get_ident()


@contextlib.contextmanager
def _compiling():  # type: ignore[no-untyped-def]
    """Hold ``_COMPILE_LOCK`` and mark this thread as the one compiling (see :func:`_traced`)."""
    global _compiling_thread
    with _COMPILE_LOCK:
        outer = _compiling_thread
        _compiling_thread = threading.get_ident()
        try:
            yield
        finally:
            _compiling_thread = outer


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
    the seconds its first call took (compiling, or loading from the cache, plus one run), if it
    could not be compiled, why (it then runs eagerly), and a note where it was compiled in a
    lesser way (an ``onednn-graph`` segment whose fusion failed runs traced without it, or
    eagerly where that timed faster than its trace), and
    the segment's backend (:data:`BACKENDS`)."""

    segment: str
    threads: int
    seconds: float
    error: str | None = None
    note: str | None = None
    backend: str = "inductor"


def _tensors_of(w: Any) -> Iterable[Any]:
    """The values of the weights object ``w`` (a :class:`~ramiel.runtime.Weights`, an
    ``nn.Module``'s parameters and buffers, or a mapping of tensors); not all tensors."""
    if isinstance(w, torch.nn.Module):
        return [*w.parameters(), *w.buffers()]
    if isinstance(w, Mapping):
        return w.values()
    return vars(w).values()


def _requires_grad(w: Any) -> bool:
    """Whether a tensor of the weights object ``w`` requires grad."""
    return any(isinstance(t, torch.Tensor) and t.requires_grad for t in _tensors_of(w))


def _mark_static(w: Any) -> None:
    """Mark every tensor of the weights object ``w`` as a static address, so that dynamo makes
    them graph constants and inductor's freezing folds them (see :func:`_tensors_of`)."""
    for t in _tensors_of(w):
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

    def __init__(self, fn: Callable[..., Any], backend: str = "inductor"):
        if backend not in BACKENDS:
            raise ValueError(
                f"segment {fn.__name__}: backend must be one of {', '.join(BACKENDS)}, "
                f"not {backend!r}"
            )
        functools.update_wrapper(self, fn)
        self.fn = fn
        # the generated shape asserts' lines, read now: the file may be gone at the first call
        # (a temporary directory dropped with its CompiledModel; found by a fresh-user check)
        self._asserts = _generated_asserts(fn)
        self.backend = backend
        self.events: list[CompileEvent] = []
        self._taken = 0
        # (threads, id(weights)) -> what was compiled for them (:class:`_Entry`)
        self._entries: dict[tuple[int, int], _Entry] = {}

    @property
    def name(self) -> str:
        return self.fn.__name__

    def __repr__(self) -> str:
        return f"<compiled segment {self.name} ({len(self._entries)} compiled version(s))>"

    def __call__(self, w: Any, *inputs: Any) -> Any:
        if (
            _traced()
            or torch.jit.is_tracing()
            or any(isinstance(x, torch.Tensor) and _wrapped(x) for x in inputs)
        ):
            # dynamo, torch.export, a trace, torch.fx.symbolic_trace (its Proxies: a shape
            # comparison on one fails, and a first call on them had left the segment eager for
            # good; found by a fresh-user check), torch.func's transforms (functionalize: the
            # generated forward's autograd guard; vmap, grad), tensor subclasses: the readable
            # statements (a compiled version run on a functionalized input had segfaulted)
            return self.fn(w, *inputs)
        key = (torch.get_num_threads(), id(w))
        entry = self._entries.get(key)
        if entry is not None and entry.owner() is w:
            grad = torch.is_grad_enabled()
            if grad and any(isinstance(x, torch.Tensor) and x.requires_grad for x in inputs):
                return self.fn(w, *inputs)  # autograd records the eager statements only
            state = entry.weights_state(grad)
            if state == "grad":
                return self.fn(w, *inputs)  # a weight that requires grad: autograd, eagerly
            if state == "stale":
                self._forget(key)  # weights replaced or written: compile again
                return self(w, *inputs)
            if entry.shapes is not None and any(
                x.shape != sh or x.dtype != dt
                for x, (sh, dt) in zip(inputs, entry.shapes, strict=True)
            ):
                return self.fn(w, *inputs)  # a trace holds its shapes: another one runs eagerly
            for x, st in zip(inputs, entry.strides, strict=True):
                if st is not None and (x.stride() != st or x.requires_grad):
                    inputs = _as_compiled(inputs, entry.strides)
                    break
            if entry.fn is self.fn:
                return self.fn(w, *inputs)
            if entry.shapes is not None and not _finite(inputs):
                # a trace (onednn-graph): its fused Relu and clamp would turn NaN into 0, where
                # the statements (and onnxruntime) keep it; an infinity makes one in a product
                return self.fn(w, *inputs)
            try:
                return entry.fn(w, *inputs)
            except Exception:
                # the statements' own error (an index out of range: IndexError, not
                # TorchScript's multi-line RuntimeError), whichever version the timing chose
                # (found by a fresh-user check); on copies, as the failed run may have written
                # its inputs. Should they run, the compiled version's error stands.
                try:
                    self.fn(w, *_copies(inputs))
                except Exception as eager:  # noqa: BLE001 - re-raised as the caller's error
                    raise eager from None
                raise
        if not enabled():
            return self.fn(w, *inputs)  # off
        return self._compile_and_call(w, inputs)

    def _compile_and_call(self, w: Any, inputs: tuple[Any, ...]) -> Any:
        if _requires_grad(w):
            # autograd needs the statements, and a trace cannot hold such a weight: eagerly,
            # and the first call without one compiles (it had failed and stayed eager for good)
            return self.fn(w, *inputs)
        threads = torch.get_num_threads()
        key = (threads, id(w))
        with _compiling():
            entry = self._entries.get(key)
            if entry is not None and entry.owner() is w:  # another thread compiled it meanwhile
                return self(w, *inputs)
            t0 = time.perf_counter()
            reads = _WeightReads(w)
            # what the statements compute, on copies: a segment may write its inputs in place,
            # and the compiler runs it more than once. Outside the try: an error here is the
            # caller's (a wrong input's assert), raised as eagerly, and the next call compiles.
            with torch.no_grad():
                expected = self.fn(reads, *_copies(inputs))
            eager_s = time.perf_counter() - t0
            eager = _Entry(self.fn, _owner(w), (None,) * len(inputs))
            if not _tensors_in(expected):  # asserts only: nothing to gain, nothing to warn about
                self._keep(key, w, eager)
                return self.fn(w, *inputs)
            try:
                note = _eager_reason(self.backend, inputs, reads.seen)
                if note is not None:
                    compiled = self.fn
                elif self.backend == "onednn-graph":
                    timeout = TRIAL_TIMEOUT_S + TRIAL_TIMEOUT_RUNS * eager_s * threads
                    compiled, note = _onednn_graph(
                        self.fn, w, inputs, expected, self._asserts, timeout
                    )
                else:
                    compiled = _inductor(self.fn, w, _copies(inputs), threads)
            except RuntimeFailure:
                # the runtime's own failures (a rank that torchrun stops raises Terminated from
                # its SIGTERM handler, also while a segment compiles): the caller's, not the
                # compiler's; had become a warning and an eager segment (found by the test of
                # torchrun --timeout)
                raise
            except Exception as e:  # noqa: BLE001 - reported, then the segment runs eagerly
                # wrapped by the compiler (inductor's BackendCompilerFailed): the caller's too
                failure = _runtime_failure_in(e)
                if failure is not None:
                    raise failure from None
                why = _why(e)
                self.events.append(
                    CompileEvent(
                        self.name, threads, time.perf_counter() - t0, why, backend=self.backend
                    )
                )
                warnings.warn(
                    f"segment {self.name} could not be compiled ({why}); it runs eagerly",
                    RuntimeWarning,
                    stacklevel=3,
                )
                self._keep(key, w, eager)
                return self.fn(w, *inputs)
            self.events.append(
                CompileEvent(
                    self.name, threads, time.perf_counter() - t0, note=note, backend=self.backend
                )
            )
            strides = tuple(x.stride() if isinstance(x, torch.Tensor) else None for x in inputs)
            shapes = None
            if self.backend == "onednn-graph":
                shapes = tuple((x.shape, x.dtype) for x in inputs)
            self._keep(key, w, _Entry(compiled, _owner(w), strides, shapes, reads.seen))
            return self(w, *inputs)

    def _keep(self, key: tuple[int, int], w: Any, entry: _Entry) -> None:
        """Keep ``entry`` for ``key`` until ``w`` is collected or its weights change (see
        :class:`_Entry` on what TorchScript keeps of a trace regardless)."""
        self._forget(key)
        self._entries[key] = entry
        with contextlib.suppress(TypeError):  # no weak reference to w: the entry keeps it
            entry.finalizer = weakref.finalize(w, _drop, self._entries, key, entry)

    def _forget(self, key: tuple[int, int]) -> None:
        """Drop the entry for ``key``, and the finalizer that would have dropped it."""
        old = self._entries.pop(key, None)
        if old is not None and old.finalizer is not None:
            old.finalizer.detach()

    def take_events(self) -> list[CompileEvent]:
        """The events since the last ``take_events`` (a worker process reports them)."""
        new = self.events[self._taken :]
        self._taken = len(self.events)
        return new


@dataclass
class _Entry:
    """What a segment compiled for one thread count and weights object: the callable, a
    callable giving the weights object back (a weak reference where it allows one: a module that
    is dropped drops its entries), the input strides it was compiled for, the input shapes and
    dtypes a trace holds (``None``: any), the weights it read (``(namespace, name, tensor,
    version, data_ptr)`` each, to see them replaced -- ``load_state_dict(assign=True)``,
    ``.double()`` -- or written in place -- ``load_state_dict``) and the finalizer that drops it.

    TorchScript keeps every function ``torch.jit.trace`` made in its global compilation unit
    (``torch.jit._state._python_cu``), with the weights it holds as constants, for the life of
    the process: a process that loads the same ``onednn-graph`` program many times, or replaces
    its weights again and again, grows by the weights each time (a fresh-user check: 4 MB a
    module). Reload in a new process, or compile with inductor or without segments, there."""

    fn: Callable[..., Any]
    owner: Callable[[], Any]
    strides: tuple[Any, ...]
    shapes: tuple[tuple[Any, Any], ...] | None = None
    reads: tuple[tuple[Any, str, torch.Tensor, int | None, int], ...] = ()
    finalizer: Any = None
    #: the reads column by column, where they all come from one namespace and have a version
    #: counter (see :meth:`weights_state`); ``None`` otherwise
    _columns: (
        tuple[Any, tuple[str, ...], tuple[torch.Tensor, ...], tuple[int, ...], tuple[int, ...]]
        | None
    ) = None

    def __post_init__(self) -> None:
        spaces = {id(r[0]) for r in self.reads}
        if self.reads and len(spaces) == 1 and all(r[3] is not None for r in self.reads):
            space, names, tensors, versions, ptrs = zip(*self.reads, strict=True)
            self._columns = (space[0], names, tensors, versions, ptrs)  # type: ignore[assignment]

    def weights_state(self, grad: bool) -> str:
        """``"stale"`` where a weight read at compile time was replaced or written in place
        through torch (a write through ``.data`` or ``.numpy()`` leaves its version counter
        and is not seen), ``"grad"`` where one requires grad and ``grad`` (grad mode) is on,
        else ``"ok"``. Checked on every call: where the reads allow it (:attr:`_columns`),
        compared a column at a time with C-level ``map`` (the project transformer's 68 weights:
        9 µs, where the loop below takes 32 µs)."""
        cols = self._columns
        if cols is not None:
            space, names, tensors, versions, ptrs = cols
            if not (
                all(map(operator.is_, map(space.get, names), tensors))
                and tuple(map(_VERSION, tensors)) == versions
                and tuple(map(torch.Tensor.data_ptr, tensors)) == ptrs
            ):
                return "stale"
            return "grad" if grad and any(map(_REQUIRES_GRAD, tensors)) else "ok"
        state = "ok"
        for space, name, t, version, ptr in self.reads:
            if space.get(name) is not t:
                return "stale"
            if version is not None and (t._version != version or t.data_ptr() != ptr):
                return "stale"  # (an inference tensor has no version: such a segment is eager)
            if grad and t.requires_grad:
                state = "grad"
        return state


_VERSION = operator.attrgetter("_version")
_REQUIRES_GRAD = operator.attrgetter("requires_grad")


def _wrapped(x: torch.Tensor) -> bool:
    """Whether ``x`` is a tensor subclass (fake, an fx proxy's) or a tensor of ``torch.func``'s
    transforms (functionalized, batched by ``vmap``, tracked by ``grad``)."""
    return type(x) is not torch.Tensor or torch._C._functorch.is_functorch_wrapped_tensor(x)


def _owner(w: Any) -> Callable[[], Any]:
    """A weak reference to ``w`` where it allows one, else a function returning it."""
    try:
        return weakref.ref(w)
    except TypeError:
        return lambda: w


def _drop(entries: dict[tuple[int, int], _Entry], key: tuple[int, int], entry: _Entry) -> None:
    """Forget ``entry`` (its weights object was collected), unless ``key`` was reused since."""
    if entries.get(key) is entry:
        del entries[key]


class _WeightReads:
    """Stands for a weights object ``w`` while a segment runs once: every tensor it reads is
    noted with the dict it lives in (an ``nn.Module``'s ``_parameters`` or ``_buffers``, or the
    object's ``__dict__``), its version counter and data pointer (:class:`_Entry`)."""

    def __init__(self, w: Any) -> None:
        self._w = w
        self._reads: dict[str, tuple[Any, str, torch.Tensor, int | None, int]] = {}

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._w, name)
        if isinstance(value, torch.Tensor) and name not in self._reads:
            space = _namespace_of(self._w, name, value)
            if space is not None:
                version = None if value.is_inference() else value._version  # none to read
                self._reads[name] = (space, name, value, version, value.data_ptr())
        return value

    @property
    def seen(self) -> tuple[tuple[Any, str, torch.Tensor, int | None, int], ...]:
        return tuple(self._reads.values())


def _namespace_of(w: Any, name: str, value: torch.Tensor) -> Any:
    """The dict of ``w`` that holds ``value`` under ``name``, or ``None``."""
    spaces = [getattr(w, "_parameters", None), getattr(w, "_buffers", None)]
    spaces.append(getattr(w, "__dict__", None))
    for space in spaces:
        if isinstance(space, dict) and space.get(name) is value:
            return space
    return None


def _eager_reason(
    backend: str, inputs: tuple[Any, ...], reads: tuple[tuple[Any, str, Any, Any, int], ...]
) -> str | None:
    """Why a segment of ``backend`` that read the weights ``reads`` (:class:`_WeightReads`)
    must run its statements eagerly on ``inputs``, as its compile event's note, or ``None``:
    weights that are inference tensors (no version counter: a write to one would go unseen by
    the compiled version, found when the default traced a module made under
    ``torch.inference_mode``); for ``onednn-graph``, tensors off the CPU (``.to("meta")``,
    CUDA: oneDNN Graph fuses CPU tensors only) or a weight holding NaN or an infinity (the
    fused Relu and clamp would turn NaN into 0)."""
    weights = [r[2] for r in reads]
    if any(r[3] is None for r in reads):
        return (
            "runs eagerly: its weights are inference tensors (no version counter, so a write "
            "to one would go unseen)"
        )
    if backend != "onednn-graph":
        return None
    tensors = [t for t in (*weights, *inputs) if isinstance(t, torch.Tensor)]
    devices = sorted({t.device.type for t in tensors} - {"cpu"})
    if devices:
        return f"runs eagerly: tensors on {', '.join(devices)} (oneDNN Graph fuses CPU tensors)"
    if not _finite(weights):
        return "runs eagerly: a weight holds NaN or infinity (a fused Relu would make NaN 0)"
    return None


def _finite(values: Iterable[Any]) -> bool:
    """Whether every floating-point tensor of ``values`` holds finite numbers only, by one sum
    each: a NaN or an infinity makes it NaN or infinite. 11-47 µs at 1 thread on 0.1-0.8 M
    elements, where ``torch.isfinite(x).all()`` took 90-2000 µs on channels-last tensors (torch
    2.13, AMD EPYC). A sum of finite numbers that overflows says no too; its caller then runs
    the statements eagerly, right either way."""
    return not any(
        isinstance(x, torch.Tensor)
        and x.is_floating_point()
        and x.numel() > 0
        and not math.isfinite(float(x.sum()))
        for x in values
    )


def _copies(inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """``inputs`` with every tensor cloned (same strides)."""
    return tuple(x.clone() if isinstance(x, torch.Tensor) else x for x in inputs)


def _tensors_in(value: Any) -> bool:
    """Whether ``value`` (a result: a tensor, or a tuple or list of them) holds a tensor."""
    if isinstance(value, torch.Tensor):
        return True
    return isinstance(value, tuple | list) and any(_tensors_in(v) for v in value)


def _inductor(
    fn: Callable[..., Any], w: Any, inputs: tuple[Any, ...], threads: int
) -> Callable[..., Any]:
    """``fn`` compiled by ``torch.compile`` (inductor, :data:`INDUCTOR_CONFIG`) for ``threads``
    intra-op threads, compiled by one call on ``inputs`` (copies: the call may write them)."""
    configure_cache()
    import torch._inductor.config as inductor_config  # lazy: torch._inductor (the compiler)

    _mark_static(w)
    compiled = torch.compile(
        _fresh_copy(fn, threads), fullgraph=True, dynamic=False, backend="inductor"
    )
    with inductor_config.patch(INDUCTOR_CONFIG):
        compiled(w, *inputs)
    return compiled


ONEDNN_GRAPH_RUNS = 3
"""Calls of a traced ``onednn-graph`` segment at load time: TorchScript's profiling executor
records the shapes on the first, builds the oneDNN Graph partitions on the second, and the
third's result is compared with the eager one."""


def _onednn_graph(
    fn: Callable[..., Any],
    w: Any,
    inputs: tuple[Any, ...],
    expected: Any,
    asserts: frozenset[tuple[str, int]] = frozenset(),
    trial_timeout_s: float = 60.0,
) -> tuple[Callable[..., Any], str | None]:
    """``fn`` traced with ``torch.jit.trace`` (the weights it reads from ``w`` become constants
    of the graph) and run by TorchScript with oneDNN Graph fusion
    (``torch.jit.enable_onednn_fusion``), checked against ``expected`` (the eager result on
    ``inputs``; every run is on copies of them, as a segment may write its inputs in place), and
    a note where the fusion failed and the trace runs without it (TorchScript alone: still no
    Python per statement). Where the eager statements time clearly faster than the trace
    (:func:`_time_against_eager`; below :data:`EAGER_MARGIN` of its time), ``fn`` itself is
    returned, with a note that says so and gives both times.

    Raises ``TypeError`` for an input that is not a tensor, ``RuntimeError`` where the trace
    depends on a tensor's value (a ``TracerWarning``: the traced code would not follow another
    input) or where the traced result differs from the eager one (relative to the largest
    value: more than 1e-3), and what TorchScript raises; the caller then runs the segment
    eagerly."""
    if not all(isinstance(x, torch.Tensor) for x in inputs):
        raise TypeError("an input that is not a tensor cannot be traced")

    try:  # torch.jit.trace keeps the function it traced: not the weights object itself
        held: Any = weakref.proxy(w)
    except TypeError:
        held = w

    def bound(*xs: Any) -> Any:
        return fn(held, *xs)

    with torch.no_grad():
        attempts, error = _ATTEMPTS, None
        if trial.available():
            # the attempts first in a child process: a crash there costs the child, not the
            # caller (one was found, on EfficientNet-B0); then only the one that worked there
            start, error = _fusion_trial(bound, inputs, expected, asserts, trial_timeout_s)
            attempts = _ATTEMPTS[start : start + 1]
        traced = None
        for kw in attempts:
            try:
                traced = _traced_run(bound, inputs, expected, asserts=asserts, **kw)
                break
            except RuntimeFailure:
                raise  # the runtime's own (Terminated by torchrun's SIGTERM): not the fusion's
            except Exception as e:  # noqa: BLE001 - the fusion's failure: its work-around, or none
                if not kw["fuse"]:
                    raise
                error = error or _why(e)
        if traced is None:
            raise _TrialFailure(error or "no trace")
        note = None
        if not kw["fuse"]:
            note = f"oneDNN Graph fusion failed ({error}); traced without it"
        traced_ms, eager_ms = _time_against_eager(traced, bound, inputs)
    if eager_ms < EAGER_MARGIN * traced_ms:
        kind = "traced without fusion" if note else "fused"
        return fn, (
            f"runs eagerly: {_ms(eager_ms)} eagerly against {_ms(traced_ms)} {kind}"
            + (f"; {note}" if note else "")
        )
    return (lambda _w, *xs: traced(*xs)), note


_ATTEMPTS: tuple[dict[str, bool], ...] = (
    {"fuse": True},
    {"fuse": True, "bound_cats": True},  # the fusion's work-around (see _contiguous_cat_inputs)
    {"fuse": False},  # traced without the fusion
)
"""What :func:`_onednn_graph` tries, in order, until one traces, runs and matches eager
(:func:`_traced_run`'s keyword arguments)."""

TRIAL_TIMEOUT_S = 60.0
"""Seconds a fusion trial's child process may take beyond :data:`TRIAL_TIMEOUT_RUNS` times the
segment's eager run (then it is killed, and the segment runs eagerly)."""

TRIAL_TIMEOUT_RUNS = 30
"""Eager runs' time, at the caller's thread count times its threads (the child has one), a
fusion trial may take beyond :data:`TRIAL_TIMEOUT_S`: the trial traces and runs the segment
:data:`ONEDNN_GRAPH_RUNS` times for each of up to three attempts."""


class _TrialFailure(RuntimeError):
    """No attempt of :data:`_ATTEMPTS` worked (the child's or the caller's): the message is the
    reason, as :func:`_why` gives it."""


def _fusion_trial(
    bound: Callable[..., Any],
    inputs: tuple[Any, ...],
    expected: Any,
    asserts: frozenset[tuple[str, int]],
    timeout_s: float,
) -> tuple[int, str | None]:
    """The index in :data:`_ATTEMPTS` of the first attempt that worked in a child process
    (:func:`ramiel.runtime.trial.run_in_child`, one intra-op thread) and the first attempt's
    failure (``None`` where the first worked).

    Raises :class:`~ramiel.runtime.trial.TrialCrash` where the child crashed or ran out of time
    (the caller then runs the segment eagerly), :class:`_TrialFailure` where no attempt worked
    (the last one's reason: a trace that depends on a tensor's value, a result unlike eager)."""

    def attempts() -> str:
        first = last = None
        for i, kw in enumerate(_ATTEMPTS):
            try:
                _traced_run(bound, inputs, expected, asserts=asserts, **kw)
                return json.dumps([i, first])
            except Exception as e:  # noqa: BLE001 - said in the result
                last = _why(e)
                first = first or last
        return json.dumps([len(_ATTEMPTS), last])

    index, why = json.loads(
        trial.run_in_child(attempts, timeout_s, "oneDNN Graph fusion trial (a child process)")
    )
    if index >= len(_ATTEMPTS):
        raise _TrialFailure(why)
    return index, why


def _ms(ms: float) -> str:
    """``ms`` milliseconds for a note: ``12.34 ms``, or ``56.7 µs`` below a millisecond."""
    return f"{ms:.2f} ms" if ms >= 1 else f"{ms * 1e3:.1f} µs"


EAGER_MARGIN = 0.9
"""An ``onednn-graph`` segment runs its eager statements instead of its trace only where they timed
below this fraction of the trace's time. The timing is a few calls at start-up, often while
other processes start too: three configurations of light_shufflenet warming up at once timed
32.36 ms eagerly against 32.39 ms fused (an inference takes 5 ms), and the one that went eager by
that hair then ran 6.76 ms per inference for its lifetime against 5.15-5.17 for the two that kept
the trace (2026-12-06). Where the fusion is really slower, it is slower by far (fused LRN: 4.6x,
see :func:`_time_against_eager`)."""

TIMING_BUDGET_S = 0.3
"""Seconds an ``onednn-graph`` segment's compilation spends, beyond one run of each, timing its
trace against its eager statements (:func:`_time_against_eager`)."""


def _time_against_eager(
    traced: Callable[..., Any], bound: Callable[..., Any], inputs: tuple[Any, ...]
) -> tuple[float, float]:
    """The fastest of the timed calls of ``traced`` and of ``bound`` (the eager statements) on
    copies of ``inputs``, in milliseconds, timed alternately: one round, then as many more as
    :data:`TIMING_BUDGET_S` allows (at most 4). The minimum, not the median: with a few calls
    on a shared machine, the minimum is the steadier estimate of what each costs (a fresh-user
    check saw the choice follow the noise). The faster runs the segment: oneDNN Graph's
    fused partitions are not always faster than eager PyTorch, and can be much slower (its fused
    LRN, as the generated code writes it, made light_inception_v1 4.6x slower at 1 thread,
    before :func:`ramiel.runtime.ops.opaque_to_fusion` kept the LRN out of the fusion)."""
    times: tuple[list[float], list[float]] = ([], [])
    rounds = 1
    while len(times[0]) < rounds:
        for fn, got in zip((traced, bound), times, strict=True):
            xs = _copies(inputs)
            t0 = time.perf_counter()
            fn(*xs)
            got.append(time.perf_counter() - t0)
        if len(times[0]) == 1:
            spent = times[0][0] + times[1][0]
            rounds = 1 + min(4, int(TIMING_BUDGET_S / max(spent, 1e-9)))
    return tuple(min(t) * 1e3 for t in times)  # type: ignore[return-value]


def _runtime_failure_in(e: BaseException) -> RuntimeFailure | None:
    """The :class:`~ramiel.errors.RuntimeFailure` that ``e`` wraps (its ``__cause__`` or
    ``__context__`` chain), if any: a rank's ``Terminated``, raised by its SIGTERM handler while
    a segment compiled, which the compiler wrapped in an error of its own."""
    seen: set[int] = set()
    cur: BaseException | None = e
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, RuntimeFailure):
            return cur
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return None


def _why(e: BaseException) -> str:
    """``e``'s type and the first line of its message, at most 200 characters; for an error
    TorchScript's interpreter reports (a traceback of the graph, then the error), the error's
    own line (``RuntimeError: ...``)."""
    if isinstance(e, _TrialFailure):
        return str(e)
    lines = [line.strip() for line in str(e).strip().splitlines() if line.strip()]
    first = lines[0] if lines else ""
    if first.startswith("The following operation failed in the TorchScript interpreter"):
        inner = [line for line in lines[1:] if re.match(r"[A-Za-z_.]*(Error|Exception): ", line)]
        if inner:
            return inner[0][:200]
    return f"{type(e).__name__}: {first}"[:200]


def _traced_run(
    bound: Callable[..., Any],
    inputs: tuple[Any, ...],
    expected: Any,
    fuse: bool,
    bound_cats: bool = False,
    asserts: frozenset[tuple[str, int]] = frozenset(),
) -> Any:
    """``bound`` traced and run :data:`ONEDNN_GRAPH_RUNS` times on ``inputs`` by TorchScript,
    with oneDNN Graph fusion where ``fuse`` (traced under :func:`ops.opaque_to_fusion`, then
    TorchScript's ``remove_mutation`` pass, :func:`_pool_strides_explicit` and
    :func:`_matmul_bias_as_linear`; and :func:`_contiguous_cat_inputs` where ``bound_cats``,
    ``RuntimeError`` where there is no concatenation); the traced function, its last result
    checked against ``expected`` (see :func:`_check_same`)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", torch.jit.TracerWarning)
        warnings.simplefilter("ignore", DeprecationWarning)  # torch.jit: chosen for its fusion
        with ops.opaque_to_fusion() if fuse else contextlib.nullcontext():
            traced = torch.jit.trace(bound, _copies(inputs), check_trace=False)
    _check_trace_warnings(caught, asserts)
    if fuse:
        # In-place statements (the generated code's relu_, add_, SiLU's sigmoid(x).mul_(x)) as
        # their functional ops where no input or output aliases them: oneDNN Graph fuses only
        # functional ops, and its fusion crashed the process (a segmentation fault, torch 2.13)
        # on EfficientNet-B0's mul_. Measured at 1 thread (light_shufflenet 8.5 -> 6.1 ms,
        # MobileNetV2 11.4 -> 9.6 ms): docs/benchmarks.md.
        torch._C._jit_pass_remove_mutation(traced.graph)
        _pool_strides_explicit(traced.graph)
        _matmul_bias_as_linear(traced.graph)
    if bound_cats and not _contiguous_cat_inputs(traced.graph):
        raise RuntimeError("no concatenation to make a boundary of")  # no runs for nothing
    previous = torch.jit.onednn_fusion_enabled()
    torch.jit.enable_onednn_fusion(fuse)
    try:
        for _ in range(ONEDNN_GRAPH_RUNS):
            got = traced(*_copies(inputs))
    finally:
        torch.jit.enable_onednn_fusion(previous)
    _check_same(expected, got)
    return traced


_MATMUL_ADD = """
graph(%x, %w, %b, %alpha):
    %y = aten::matmul(%x, %w)
    %z = aten::{add}(%y, %b, %alpha)
    return (%z)"""
_LINEAR = """
graph(%x, %w, %b, %alpha):
    %wt = aten::t(%w)
    %z = aten::linear(%x, %wt, %b)
    return (%z)"""


def _matmul_bias_as_linear(graph: Any) -> bool:
    """Rewrite every ``aten::matmul(x, W)`` whose one use is ``aten::add``/``add_`` of a bias into
    ``aten::linear(x, W.t(), b)``, where every such pair has a constant 2-D ``W`` (K, N), a
    constant 1-D bias (N,) and ``alpha`` 1 (else nothing is rewritten); returns whether it
    rewrote. TorchScript's oneDNN Graph fusion fails on a matmul followed by a bias add
    (``vector::_M_range_check``, torch 2.13: every transformer's projections, as the generated
    code prints them) but fuses ``aten::linear``; measured on the project's transformer at 1
    thread: 4.5-5.2 ms fused against 5.8-6.3 ms traced without fusion."""
    pairs = []
    for node in graph.nodes():
        if node.kind() != "aten::matmul":
            continue
        uses = node.output().uses()
        if len(uses) != 1 or uses[0].user.kind() not in ("aten::add", "aten::add_"):
            continue
        add = uses[0].user
        if uses[0].offset != 0:
            return False
        w, b, alpha = (_constant(v) for v in (node.inputsAt(1), add.inputsAt(1), add.inputsAt(2)))
        if not (
            isinstance(w, torch.Tensor)
            and w.dim() == 2
            and isinstance(b, torch.Tensor)
            and b.shape == (w.shape[1],)
            and alpha == 1
        ):
            return False
        pairs.append(node)
    if not pairs:
        return False
    for add in ("add", "add_"):
        torch._C._jit_pass_custom_pattern_based_rewrite_graph(
            _MATMUL_ADD.replace("{add}", add), _LINEAR, graph
        )
    return True


_POOLS = tuple(f"aten::{k}_pool{d}d" for k in ("avg", "max") for d in (1, 2, 3))


def _pool_strides_explicit(graph: Any) -> int:
    """Give every pooling node whose ``stride`` is the empty list (``F.avg_pool2d(x, (2, 2))``:
    the stride defaults to the kernel size, as the generated code prints an ONNX pool whose
    strides equal its kernel) its kernel size as stride; returns how many. TorchScript's oneDNN
    Graph fusion fails on the empty list (``could not set attribute to the op``: the transitions
    of light_densenet121, whose whole segment then ran unfused, and light_vgg19's pools)."""
    count = 0
    for kind in _POOLS:
        for node in graph.findAllNodes(kind):
            stride = node.inputsAt(2).node()
            if stride.kind() == "prim::ListConstruct" and not list(stride.inputs()):
                node.replaceInput(2, node.inputsAt(1))
                count += 1
    return count


def _contiguous_cat_inputs(graph: Any) -> int:
    """Put an ``aten::contiguous`` (in the input's traced memory format: channels-last for a
    4-D channels-last tensor, else contiguous) before every input of every ``aten::cat``;
    returns how many. Eagerly each is a no-op on the dense tensors the generated code
    concatenates, but it makes the input a boundary of oneDNN Graph's partitions. Without it the
    fusion handed an opaque mkldnn tensor to ``aten::cat`` on light_shufflenet (``Could not run
    'aten::cat.out' with arguments from the 'MkldnnCPU' backend``; with it, 7.5 ms fused against
    8.3 traced without fusion and 8.7 eager, 1 thread). Since the trace's in-place statements
    are made functional before the fusion (see :func:`_traced_run`), light_shufflenet fuses
    without it; it stays a retry where the fusion failed: elsewhere the boundaries could split
    partitions that fuse."""
    count = 0
    for cat in list(graph.findAllNodes("aten::cat")):
        items = cat.inputsAt(0).node()
        if items.kind() != "prim::ListConstruct":
            continue
        for i, v in enumerate(list(items.inputs())):
            t = v.type()
            sizes = t.sizes() if isinstance(t, torch._C.TensorType) else None
            strides = t.strides() if isinstance(t, torch._C.TensorType) else None
            channels_last = (
                sizes is not None and strides is not None and len(sizes) == 4 and strides[1] == 1
            )
            graph.setInsertPoint(items)
            fmt = graph.insertConstant(2 if channels_last else 0)  # MemoryFormat's numbering
            node = graph.create("aten::contiguous", [v, fmt])
            node.insertBefore(items)
            node.output().setType(t)
            items.replaceInput(i, node.output())
            count += 1
    return count


def _constant(value: Any) -> Any:
    """The value of a TorchScript ``prim::Constant`` output (a tensor or a number), else
    ``None``."""
    node = value.node()
    if node.kind() != "prim::Constant" or not node.hasAttributes():
        return None
    name = node.attributeNames()[0]
    kind = node.kindOf(name)
    return {"t": node.t, "i": node.i, "f": node.f}.get(kind, lambda _n: None)(name)


@functools.cache
def _torch_shape_checks() -> frozenset[tuple[str, int]]:
    """The lines (real path, number) of torch's own functions that check an input's shape:
    ``torch._assert`` (a condition the trace made a tensor, as ``x.shape[0] == 1`` of a
    ``--dynamic-batch`` module compiled for batch 1 only) and, inside ``torch.nn.functional``,
    ``_verify_batch_size`` of batch norm and ``_verify_spatial_size`` of instance norm (an
    InstanceNormalization segment had never traced: found by a fresh-user check). Under
    tracing they turn sizes into Python values, but the trace is made for and run on one input
    shape."""
    import torch.nn.functional as F  # lazy: torch (loaded with this module anyway)

    names = ("_verify_batch_size", "_verify_spatial_size")
    fns = (torch._assert, *(getattr(F, name, None) for name in names))
    lines: set[tuple[str, int]] = set()
    for fn in fns:
        code = getattr(fn, "__code__", None)
        if code is not None:
            path = os.path.realpath(code.co_filename)
            lines.update((path, line) for _, line in dis.findlinestarts(code) if line)
    return frozenset(lines)


def _generated_asserts(fn: Callable[..., Any]) -> frozenset[tuple[str, int]]:
    """The (file, line) of every ``torch._assert(...)`` line of ``fn``'s source (empty where
    its source cannot be read)."""
    try:
        lines, start = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return frozenset()
    file = fn.__code__.co_filename
    return frozenset((file, start + i) for i, line in enumerate(lines) if _is_assert(line))


def _is_assert(line: str) -> bool:
    """Whether a source line is a generated shape assert, ``torch._assert(...)``."""
    return line.strip().startswith("torch._assert(")


def _check_trace_warnings(
    caught: list[warnings.WarningMessage], asserts: frozenset[tuple[str, int]] = frozenset()
) -> None:
    """Raise ``RuntimeError`` for the first ``TracerWarning`` in ``caught`` (a tensor made a Python
    value while tracing: the trace holds that value as a constant) that is neither on a generated
    ``torch._assert(...)`` line nor inside one of torch's shape checks
    (:func:`_torch_shape_checks`): those check the input shapes the trace is made for, and the
    segment runs a trace only on inputs of those shapes. Other warnings are shown again."""
    for w in caught:
        if not issubclass(w.category, torch.jit.TracerWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
            continue
        if (w.filename, w.lineno) in asserts:
            continue
        if _is_assert(linecache.getline(w.filename, w.lineno)):
            continue
        if (os.path.realpath(w.filename), w.lineno) in _torch_shape_checks():
            continue
        first = str(w.message).split(". ")[0]
        raise RuntimeError(  # the reason first: a long path is what a shortened message loses
            f"the trace depends on a tensor's value ({first}) at {w.filename}:{w.lineno}"
        )


def _check_same(expected: Any, got: Any) -> None:
    """Raise ``RuntimeError`` unless ``got`` has ``expected``'s structure and values (floating
    tensors: equal where either is not finite -- the same infinity, NaN where NaN -- and
    elsewhere within 1e-3 of the largest finite magnitude; others: equal)."""
    exp = expected if isinstance(expected, tuple | list) else (expected,)
    out = got if isinstance(got, tuple | list) else (got,)
    if len(exp) != len(out):
        raise RuntimeError(f"the traced segment returned {len(out)} values, not {len(exp)}")
    for i, (e, g) in enumerate(zip(exp, out, strict=True)):
        if not isinstance(e, torch.Tensor):
            continue
        if not isinstance(g, torch.Tensor) or g.shape != e.shape or g.dtype != e.dtype:
            raise RuntimeError(f"the traced segment's result {i} differs in shape or type")
        if e.is_floating_point():
            same = (g == e) | (g.isnan() & e.isnan())
            finite = e.isfinite() & g.isfinite()
            if not bool((same | finite).all()):
                raise RuntimeError(f"the traced segment's result {i} differs from eager (inf/NaN)")
            scale = float(e[finite].abs().max()) if bool(finite.any()) else 0.0
            err = float((g - e)[finite].abs().max()) if bool(finite.any()) else 0.0
            if not err <= 1e-3 * max(scale, 1e-30):
                raise RuntimeError(
                    f"the traced segment's result {i} differs from eager by {err:.3g} "
                    f"(largest value {scale:.3g})"
                )
        elif not torch.equal(e, g):
            raise RuntimeError(f"the traced segment's result {i} differs from eager")


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


def segment(fn: Callable[..., Any] | None = None, *, backend: str = "inductor") -> Any:
    """Decorator of generated segment functions: ``@segment def c0_seg0(w, x): ...`` (inductor)
    or ``@segment(backend='onednn-graph') def ...`` (see :data:`BACKENDS`). Raises
    ``ValueError`` for another backend."""
    if fn is None:
        return functools.partial(Segment, backend=backend)
    return Segment(fn, backend)


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


def threads_label(n: int) -> str:
    """``1 thread``, ``2 threads``: a compilation's thread count in a report."""
    return f"{n} thread{'' if n == 1 else 's'}"


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
    noted = [e for e in evs if e.note]
    if noted:
        text += "; " + ", ".join(
            f"{e.segment} ({threads_label(e.threads)}): {e.note}" for e in noted
        )
    return text


__all__ = [
    "BACKENDS",
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
    "threads_label",
]
