"""Run many inferences on a program's started workers: :class:`Runner`, the base class of the
backends (:func:`ramiel.runtime.launch.start` starts one).

Life cycle: ``start`` validates the program, starts one worker per cluster and waits until every
worker is ready (start-up cost is not part of any inference). ``run`` checks the inputs, hands them
to the workers, waits until *every* cluster has finished the inference (not only until the outputs
arrived) and returns the outputs. Because inferences never overlap, every channel buffer is free
again when the next inference starts.

A program with compiled segments (:mod:`ramiel.runtime.compiled`) is compiled by ``start``: it
runs one warm-up inference on random inputs, so that every segment compiles (or loads from
inductor's on-disk cache) in the thread or process that runs it, before the first real
inference; ``Runner.compile_report()`` lists each compilation with its time.

Failures are terminal: the first worker error, worker death, timeout or channel misuse during a
``run`` is raised in the caller, the runner shuts down (all workers stopped, joined or killed) and
every later ``run`` raises :class:`~ramiel.runtime.program.RunnerClosed`. Only
:class:`~ramiel.runtime.program.InputMismatch` (found before dispatch) leaves the runner usable.
"""

from __future__ import annotations

import atexit
import contextlib
import signal
import sys
import threading
import traceback
import weakref
from collections.abc import Mapping
from typing import Any, Literal, get_args

import torch

from ramiel.omp import usable_cores
from ramiel.runtime.binding import HelperBinding, binding_for
from ramiel.runtime.compiled import program_segments, take_events
from ramiel.runtime.contention import CoreMonitor, enabled, fits_free_cores, intra_op_threads
from ramiel.runtime.ownership import HeldMemory, own_outputs
from ramiel.runtime.program import (
    InputMismatch,
    Program,
    ProgramNames,
    RunnerClosed,
    check_inputs,
)
from ramiel.runtime.weights import Weights

BackendName = Literal["threads", "processes", "inline", "distributed"]
"""The runtimes a program runs on (``start(..., backend=...)``, ``CompileOptions.backend``):
threads of this process, worker processes with shared memory, this thread alone (no workers: the
clusters run one after another), or ``torch.distributed`` ranks."""

BACKENDS: tuple[str, ...] = get_args(BackendName)
"""The values of :data:`BackendName`."""

_open_runners: weakref.WeakSet[Runner] = weakref.WeakSet()

#: id of a runner of this process inside ``run`` -> the threads it computes with in this process
#: (the threads and inline backends; the processes backend's workers are other processes, which
#: ``/proc/stat`` shows). A program called from another thread at the same time counts them as
#: busy cores of others: the CoreMonitor cannot, as it takes this process's CPU time for its own.
_in_flight: dict[int, int] = {}
_in_flight_lock = threading.Lock()


class Runner(ProgramNames):
    """Workers of one program, started once, serving inferences one at a time.

    Use :func:`start` to make one. ``run`` and ``__call__`` may be called from any thread; calls are
    serialised.

    Attributes:
        program: the :class:`~ramiel.runtime.program.Program`.
        backend: ``"threads"``, ``"processes"`` or ``"inline"``.
        threads_per_worker: intra-op threads of each worker (``torch.set_num_threads``), as
            planned; an inference runs with fewer while other processes keep cores busy
            (:mod:`ramiel.runtime.contention`).
        threads_now: the intra-op threads per worker the last inference ran with.
        crowded: whether other processes kept cores busy that the last inference's planned
            threads needed (then it ran with fewer threads, and nothing bound to cores).
        timeout_s: default limit for one inference, in seconds.
    """

    backend = "?"
    #: True when the backend's outputs are always new tensors (the processes backend copies them
    #: out of shared memory); otherwise ``run`` copies the outputs that share memory with a
    #: weight, an input or another output (:mod:`ramiel.runtime.ownership`).
    fresh_outputs = False

    def __init__(
        self, program: Program, weights: Weights, threads_per_worker: int, timeout_s: float
    ):
        self.program = program
        self.weights = weights
        self.threads_per_worker = threads_per_worker
        self.threads_now = threads_per_worker
        self.crowded = False
        self.timeout_s = timeout_s
        self._monitor: CoreMonitor | None = None
        #: native thread id -> the binding of that calling thread's OpenMP team (binding)
        self._bindings: dict[int, HelperBinding] = {}
        self._lock = threading.Lock()
        self._closed = False
        self._failure: BaseException | None = None
        self._epoch = 0
        self._held = HeldMemory(Weights.as_dict(weights).values())
        #: names of the outputs the last ``run`` copied because they shared memory (see
        #: :mod:`ramiel.runtime.ownership`); empty when every output was returned as computed
        self.copied_outputs: list[str] = []
        self._compile_events: list[Any] = []
        self._warm_threads: int | None = None  # warm_up: the thread count to compile for
        _open_runners.add(self)

    # ---------------------------------------------------------------------------------- public API

    @property
    def closed(self) -> bool:
        """True once the runner was closed or shut down after a failure."""
        return self._closed

    def run(
        self, inputs: Mapping[str, torch.Tensor], timeout_s: float | None = None
    ) -> dict[str, torch.Tensor]:
        """Run one inference.

        Args:
            inputs: graph input name -> tensor of exactly the shape and dtype of its channels.
            timeout_s: limit for this inference in seconds (default: the runner's ``timeout_s``).

        Returns:
            graph output name -> tensor, owned by the caller: no weight, input, other output or
            later run shares its memory (an output that would is returned as a copy; the others
            are returned as computed, without a copy).

        Raises:
            InputMismatch: wrong input names, shapes or dtypes (the runner stays usable).
            WorkerError: a cluster function raised (carries the cluster and remote traceback).
            WorkerDied: a worker process exited (processes backend).
            WorkerTimeout: the inference took longer than ``timeout_s``.
            ChannelError: the generated code misused a channel.
            RunnerClosed: the runner was closed or failed before.
        """
        with self._lock:
            if self._closed:
                why = f" after a failure: {self._failure}" if self._failure is not None else ""
                raise RunnerClosed(f"runner of program '{self.program.name}' is closed{why}")
            tensors = check_inputs(self.program, inputs)
            self._epoch += 1
            limit = self.timeout_s if timeout_s is None else timeout_s
            try:
                out = self._run(tensors, self._epoch, limit)
                if self._monitor is not None:
                    self._monitor.end()
            except InputMismatch:
                raise
            except BaseException as e:  # KeyboardInterrupt too: never leave workers mid-inference
                self._failure = e
                try:
                    with _interrupts_held():
                        self._shutdown(failed=True)
                finally:
                    self._close_monitor()
                self._closed = True
                _open_runners.discard(self)
                # The backend's frames in the traceback hold views of its shared memory and
                # buffers; the caller may keep the error for long: let the memory go now.
                traceback.clear_frames(e.__traceback__)
                raise
            finally:
                with _in_flight_lock:
                    _in_flight.pop(id(self), None)
            if self.fresh_outputs:
                return out
            out, self.copied_outputs = own_outputs(out, self._held, tensors.values())
            return out

    def __call__(self, *tensors: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """Run one inference with positional inputs (``program.inputs`` order).

        Returns:
            The outputs as a tuple in ``program.outputs`` order.
        """
        names = self.input_names
        if len(tensors) != len(names):
            raise InputMismatch(
                f"program '{self.program.name}' takes {len(names)} input(s) "
                f"({', '.join(names)}), got {len(tensors)}"
            )
        out = self.run(dict(zip(names, tensors, strict=True)))
        return tuple(out[n] for n in self.output_names)

    def compile_report(self) -> list[Any]:
        """Every compilation of a compiled segment this runner's workers made, in order: a list
        of :class:`~ramiel.runtime.compiled.CompileEvent` (segment, thread count, seconds,
        error). Empty for a program without compiled segments."""
        self._compile_events += self._new_compile_events()
        return list(self._compile_events)

    def warm_up(self, timeout_s: float | None = None) -> None:
        """Run one inference (compiles a compiled program's segments, each for its thread
        count) on inputs drawn from a normal distribution (seed 0; integer and bool inputs: zeros,
        valid indices): an ``onednn-graph`` segment checks its fused trace against its eager
        statements and times both on what this inference gives it, and zeros would check little
        (a wrong kernel can still map zeros to the right result) and time a special case. With
        ``onednn-graph`` segments (a fraction of a second each) and more than one planned thread
        per worker, one more at 1 thread: an inference under load runs with fewer threads
        (:mod:`ramiel.runtime.contention`), and would otherwise compile then. (Inductor's
        segments take tens of seconds each: they compile for the planned count only, and for
        another on its first inference.)"""
        feeds: dict[str, torch.Tensor] = {}
        g = torch.Generator().manual_seed(0)
        for name, chans in self.program.inputs.items():
            if chans:
                spec = self.program.channels[chans[0]]
                feeds[name] = torch.zeros(spec.shape, dtype=spec.dtype)
                if spec.dtype.is_floating_point or spec.dtype.is_complex:
                    with contextlib.suppress(RuntimeError, TypeError):  # no randn: float8
                        feeds[name] = torch.randn(spec.shape, generator=g, dtype=spec.dtype)
            else:
                feeds[name] = torch.zeros(())
        counts = [self.threads_per_worker]
        segments = program_segments(self.program).values()
        if self.threads_per_worker > 1 and any(s.backend == "onednn-graph" for s in segments):
            counts.append(1)
        try:
            for n in counts:
                self._warm_threads = n
                self.run(feeds, timeout_s=timeout_s)
        finally:
            self._warm_threads = None

    def close(self) -> None:
        """Stop and join all workers. Idempotent; never raises for an already failed runner."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            _open_runners.discard(self)
            try:
                with _interrupts_held():
                    self._shutdown(failed=False)
            finally:
                self._close_monitor()

    def dead_workers(self) -> list[str]:
        """The clusters whose worker has died while the runner is open (only the processes
        backend's workers can; the next call raises ``WorkerDied``)."""
        return []

    @property
    def failure(self) -> BaseException | None:
        """The error that stopped the runner (a worker's failure, a timeout, Ctrl-C), or ``None``
        while it runs or after a plain ``close()``."""
        return self._failure

    def _close_monitor(self) -> None:
        if self._monitor is not None:
            self._monitor.close()

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            if not self._closed:
                self.close()
        except Exception:
            pass

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return (
            f"<{type(self).__name__} program='{self.program.name}' "
            f"clusters={len(self.program.clusters)} {state}>"
        )

    # --------------------------------------------------------------------------- for the backends

    def _run(
        self, inputs: dict[str, torch.Tensor], epoch: int, timeout_s: float
    ) -> dict[str, torch.Tensor]:
        raise NotImplementedError

    def _shutdown(self, failed: bool) -> None:
        raise NotImplementedError

    #: how many workers run their intra-op threads at the same time (the inline backend: 1)
    def _concurrent_workers(self) -> int:
        return max(1, len(self.program.clusters))

    def _worker_pids(self) -> list[int]:
        """Processes whose CPU time is the program's own besides this one (worker processes)."""
        return []

    def _threads_for_run(self) -> tuple[int, bool]:
        """Intra-op threads per worker for the next inference, and whether the workers' threads
        are bound to cores of their own (:mod:`ramiel.runtime.binding`):
        :attr:`threads_per_worker` and bound, or fewer threads and unbound while other processes
        keep cores busy (:func:`~ramiel.runtime.contention.intra_op_threads`,
        :func:`~ramiel.runtime.contention.fits_free_cores`; not with ``RAMIEL_ADAPT_THREADS=0``).
        Sets :attr:`threads_now` and :attr:`crowded`."""
        planned, workers = self.threads_per_worker, self._concurrent_workers()
        n, crowded = planned, False
        if self._warm_threads is not None:
            n = self._warm_threads
        elif (planned > 1 or workers > 1) and enabled():
            if self._monitor is None:
                self._monitor = CoreMonitor(pids=self._worker_pids())
            m, lowered = self._monitor, self.crowded
            usable = m.usable or usable_cores()
            others = m.estimate(lowered)
            with _in_flight_lock:  # programs of this process computing now, in other threads
                here = sum(t for r, t in _in_flight.items() if r != id(self))
            if here:
                others = (others or 0.0) + here
            n = intra_op_threads(planned, workers, usable, others, lowered=lowered)
            crowded = not fits_free_cores(planned, workers, usable, others, lowered=lowered)
            self._monitor.begin()  # the window ends when the inference returns (run)
        self.threads_now, self.crowded = n, crowded
        if self.backend != "processes":
            with _in_flight_lock:
                _in_flight[id(self)] = n * workers
        return n, not crowded

    def _caller_binding(self, worker: int, workers: int) -> HelperBinding:
        """The binding of the calling thread's OpenMP team, as worker ``worker`` of ``workers``
        (one per calling thread; :mod:`ramiel.runtime.binding`)."""
        tid = threading.get_native_id()
        b = self._bindings.get(tid)
        if b is None:
            # a thread that called before and has ended: its OpenMP pool ended with it
            alive = _live_thread_ids()
            for gone in [t for t in self._bindings if t not in alive]:
                self._bindings.pop(gone).idle()
            b = self._bindings[tid] = binding_for(
                worker, workers, self.threads_per_worker, own_thread=False
            )
        return b

    def _release_bindings(self) -> None:
        """The calling threads' OpenMP helpers get all usable cores again (at shutdown; those of
        threads that ended are gone with them, and their ids may name other threads now)."""
        alive = _live_thread_ids()
        for tid, b in self._bindings.items():
            if tid in alive:
                b.release()
            else:
                b.idle()
        self._bindings.clear()

    def _new_compile_events(self) -> list[Any]:
        """Compilations since the last call (threads and inline: the segments of this process)."""
        return take_events(program_segments(self.program).values())


def _live_thread_ids() -> set[int]:
    """Native ids of this process's threads that are alive (Python's threads)."""
    return {t.native_id for t in threading.enumerate() if t.native_id is not None}


@contextlib.contextmanager
def _interrupts_held():  # type: ignore[no-untyped-def]
    """Ctrl-C while the workers are being stopped (a bounded wait: the backends' grace periods,
    then a kill) is held until they are: a second Ctrl-C right after the first would otherwise
    break off the shutdown with a second traceback chained to the first. One held during
    ``close`` is raised after it; one held while stopping after a failure (the first Ctrl-C
    included) is dropped, as that failure is already being raised. Only in the main thread,
    where Python delivers signals, and only over Python's own SIGINT handler."""
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield
        return
    held: list[int] = []
    signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if held and sys.exc_info()[0] is None:
        raise KeyboardInterrupt


@atexit.register
def _close_all() -> None:
    for r in list(_open_runners):
        with contextlib.suppress(Exception):
            r.close()
