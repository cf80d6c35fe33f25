"""Threads backend: one thread per cluster, channels are one-slot handoffs of tensor references.

PyTorch releases the GIL inside its ops, so cluster threads run ops in parallel while the Python
glue between ops (a few µs per op) is serialised by the GIL. Tensors cross channels without a copy.

Tensors are passed by reference, so the channel contract matters here (see
:mod:`ramiel.runtime.program`): a tensor must not be modified in place after it crossed a channel
(neither by the sender after ``put`` nor by the receiver after ``get``). The runner records each
sent tensor's version counter at ``put`` and, at the end of every inference, raises
:class:`~ramiel.runtime.program.ChannelError` naming the channel if it changed; it also checks the
caller's input tensors this way. ``copy_on_put=True`` clones at every put instead (value
semantics, like the processes backend, at the price of one copy per transfer).

Intra-op threads: ``torch.set_num_threads`` sets a process-wide default, but with ATen's OpenMP
backend (this build: ``torch.__config__.parallel_info()`` says ``ATen parallel backend: OpenMP``)
the count actually used by an op is the calling thread's OpenMP ``nthreads`` setting, which
``torch.set_num_threads`` also sets for the calling thread only; MKL's is thread-local too. So each
worker thread calls ``torch.set_num_threads(threads_per_worker)`` first, and once all workers have
done so the runner restores the caller's own count (which also restores the process-wide default
for threads started later). Measured here (2 cores, two threads each running 20 1024x1024
matmuls concurrently): 1 thread each 0.51-0.56 s, 2 each 0.90 s (oversubscribed: 4 OpenMP threads
on 2 cores), while each thread reported its own ``torch.get_num_threads()`` and the caller kept 2.
With a non-OpenMP ATen backend the setting is process-wide and the last writer wins.

The caller's thread runs one cluster itself when some cluster uses more than one intra-op thread
(a program compiled with ``--intra-op-threads``, or ``threads_per_worker > 1``): the widest cluster
(:meth:`Program.widest_cluster`; the first one otherwise), the others run in worker threads. Every
thread that starts an OpenMP parallel region owns a pool of helper threads for the rest of its
life, and GNU OpenMP stops spin-waiting in all pools once it manages more threads than cores
(see :mod:`ramiel.scheduling.threads`); the caller's thread usually owns a pool already (any
PyTorch op it ran with 2+ threads made one), so running the widest cluster there reuses that pool
instead of adding one. Measured on 2 cores (light_inception_v1 with 2 threads in a worker thread):
56 ms next to a caller that owned a pool, 44 ms without. The caller's cluster is timed like the
others: a get that waits past ``timeout_s`` ends the inference with :class:`WorkerTimeout`; an op
that never returns would hold the caller (generated ops are single PyTorch calls; with
``threads_per_worker=1`` and no per-op threads, every cluster runs in a worker thread).

A hung cluster cannot be interrupted in a thread: after a :class:`WorkerTimeout` its thread is left
running as a daemon (it exits when its function returns); ``stuck_threads`` lists such threads.

:class:`InlineRunner` (backend ``"inline"``) runs the clusters one after another in the caller's
thread in a topological order of the cluster graph, passing tensors by reference with the same
in-place checks as the threads backend (or cloning at every put with ``copy_on_put=True``, a
value-semantics reference for tests); it needs an acyclic cluster graph and does not enforce
timeouts. ``CompiledModel`` uses it for one-cluster programs (no hand-off to a worker thread).

Both return each output as the cluster computed it, except an output that shares memory with a
weight, an input or another output, which is copied (see :mod:`ramiel.runtime.ownership`).
"""

from __future__ import annotations

import atexit
import queue
import threading
import time

import torch

from ramiel.runtime.binding import WorkerThreads
from ramiel.runtime.channels import (
    Aborted,
    Deadline,
    Slot,
    ThreadEndpoint,
    ThreadState,
    version_of,
)
from ramiel.runtime.ops import thread_cap
from ramiel.runtime.program import (
    ChannelError,
    Program,
    ProgramError,
    RuntimeFailure,
    WorkerError,
    WorkerTimeout,
    describe_exception,
)
from ramiel.runtime.runner import Runner
from ramiel.runtime.weights import Weights

#: Seconds ``close`` waits for worker threads to finish after a failure.
SHUTDOWN_GRACE_S = 1.0

#: Seconds the interpreter's exit waits for worker threads still running after their runner
#: closed (:func:`_join_stuck_at_exit`).
EXIT_GRACE_S = 10.0

_stuck: list[threading.Thread] = []


@atexit.register
def _join_stuck_at_exit() -> None:
    """Wait (at most :data:`EXIT_GRACE_S` in all) for worker threads a runner left running when
    it closed after a failure (a Ctrl-C during a long op): they stop at their next op, but one
    still inside PyTorch while the interpreter tears down aborted the process ('terminate called
    without an active exception', status 134)."""
    deadline = time.monotonic() + EXIT_GRACE_S
    for t in _stuck:
        t.join(timeout=max(0.0, deadline - time.monotonic()))


def _worker_error(cluster: str, e: BaseException, skip_frames: int) -> WorkerError:
    exc_type, message, text = describe_exception(e, skip_frames)
    err = WorkerError(cluster, exc_type, message, text)
    err.__cause__ = e
    return err


class _Run:
    """State shared by the thread and inline runners: slots, endpoints, end-of-inference checks."""

    def __init__(self, program: Program, copy_on_put: bool):
        self.state = ThreadState(copy_on_put)
        self.slots = {n: Slot(n, s) for n, s in program.channels.items()}
        self.endpoints = {
            c: ThreadEndpoint(program, c, self.slots, self.state) for c in program.clusters
        }
        self.sent = {c: [self.slots[n] for n in program.channels_from(c)] for c in program.clusters}
        self.got = {c: [self.slots[n] for n in program.channels_into(c)] for c in program.clusters}
        self.program = program

    def feed(self, inputs: dict[str, torch.Tensor], epoch: int) -> None:
        self.state.epoch = epoch
        for name, t in inputs.items():
            for ch in self.program.inputs[name]:
                self.slots[ch].fill(t, epoch)

    def check_finished(self, cluster: str, epoch: int) -> None:
        for slot in self.sent[cluster]:
            if slot.put_epoch != epoch:
                raise ChannelError(
                    f"cluster '{cluster}' finished the inference without putting channel "
                    f"'{slot.name}'"
                )
        for slot in self.got[cluster]:
            if slot.get_epoch != epoch:
                raise ChannelError(
                    f"cluster '{cluster}' finished the inference without getting channel "
                    f"'{slot.name}'"
                )

    def wake_all(self) -> None:
        for slot in self.slots.values():
            slot.wake()

    def collect(self, check_versions: bool) -> dict[str, torch.Tensor]:
        if check_versions:
            for slot in self.slots.values():
                v = slot.value
                if v is not None and version_of(v) != slot.version:
                    spec = slot.spec
                    who = f"cluster '{spec.src}'" if spec.src is not None else "the caller"
                    to = f"cluster '{spec.dst}'" if spec.dst is not None else "the caller"
                    raise ChannelError(
                        f"the tensor on channel '{slot.name}' (from {who} to {to}) was modified in "
                        "place after it was put; tensors that cross channels must not be mutated "
                        "(use an out-of-place op, or start(..., copy_on_put=True))"
                    )
        out = {o: self.slots[ch].value for o, ch in self.program.outputs.items()}
        for slot in self.slots.values():
            slot.value = None
        return out  # type: ignore[return-value]


def _thread_worker(
    i: int,
    name: str,
    fn,
    r: _Run,
    w: Weights,
    threads_per_worker: int,
    start_q: queue.SimpleQueue,
    done_q: queue.SimpleQueue,
    slot: tuple[int, int] = (0, 1),
    cap: int | None = None,
) -> None:
    torch.set_num_threads(threads_per_worker)
    threads_now = WorkerThreads(threads_per_worker, *slot)  # its helpers on cores of their own
    # ATen initialises a thread's OpenMP setting lazily, from the process-wide value, on its first
    # parallel query; trigger that now, before the caller restores its own count.
    torch.get_num_threads()
    ep = r.endpoints[name]
    st = r.state
    done_q.put((i, "ready", None))
    try:
        with torch.no_grad(), thread_cap(cap):  # its ops.set_threads calls (--intra-op-threads)
            while True:
                item = start_q.get()
                if item is None:
                    return
                threads_now.use(item[1], item[2])  # (epoch, threads, bind)
                reply: tuple[int, str, BaseException | None]
                try:
                    fn(ep, w)
                except Aborted:
                    reply = (i, "aborted", None)
                except BaseException as e:
                    st.abort = True
                    r.wake_all()
                    reply = (i, "error", e)
                else:
                    reply = (i, "done", None)
                threads_now.idle()  # its cores free for another program while this one waits
                done_q.put(reply)
    finally:
        threads_now.close()  # its cores free for the next program of this process


class ThreadRunner(Runner):
    """Threads backend (see the module docstring). Made by ``start(..., backend="threads")``.

    Options:
        copy_on_put: clone every tensor at ``put`` (value semantics; default False: references).
    """

    backend = "threads"

    def __init__(
        self,
        program: Program,
        weights: Weights,
        threads_per_worker: int,
        timeout_s: float,
        copy_on_put: bool = False,
    ):
        super().__init__(program, weights, threads_per_worker, timeout_s)
        self._r = _Run(program, copy_on_put)
        self._caller: str | None = program.widest_cluster()
        if self._caller is None and threads_per_worker > 1:
            self._caller = next(iter(program.clusters))
        self._r.state.caller = self._caller
        self._names = [c for c in program.clusters if c != self._caller]
        self._start_qs: list[queue.SimpleQueue] = [queue.SimpleQueue() for _ in self._names]
        self._done_q: queue.SimpleQueue = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self.stuck_threads: list[threading.Thread] = []
        caller_threads = torch.get_num_threads()
        first = 0 if self._caller is None else 1  # the caller's cluster has the first cores
        workers = len(self._names) + first
        caps = self._caps = program.thread_caps()
        try:
            for i, c in enumerate(self._names):
                # The thread must not reference the runner, so that an unclosed runner can be
                # garbage-collected (its __del__ then stops the threads).
                t = threading.Thread(
                    target=_thread_worker,
                    args=(
                        i,
                        c,
                        program.clusters[c],
                        self._r,
                        weights,
                        threads_per_worker,
                        self._start_qs[i],
                        self._done_q,
                        (first + i, workers),
                        caps[c],
                    ),
                    name=f"ramiel-{program.name}-{c}",
                    daemon=True,
                )
                t.start()
                self._threads.append(t)
            for _ in self._names:
                self._done_q.get(timeout=30.0)
        finally:
            torch.set_num_threads(caller_threads)

    def _run(
        self, inputs: dict[str, torch.Tensor], epoch: int, timeout_s: float
    ) -> dict[str, torch.Tensor]:
        r = self._r
        r.feed(inputs, epoch)
        deadline = time.monotonic() + timeout_s
        r.state.deadline = deadline
        threads, bind = self._threads_for_run()
        for q in self._start_qs:
            q.put((epoch, threads, bind))
        pending = set(range(len(self._names)))
        aborted = False
        if self._caller is not None:
            failure = self._run_caller_cluster(epoch, threads, bind)
            if failure is not None:
                if isinstance(failure, Deadline):
                    # which workers finished (or failed) while the caller's cluster waited
                    while True:
                        try:
                            i, kind, payload = self._done_q.get_nowait()
                        except queue.Empty:
                            break
                        pending.discard(i)
                        if kind == "error":
                            raise _worker_error(self._names[i], payload, skip_frames=1)
                    r.state.abort = True
                    r.wake_all()
                    late = {self._caller, *(self._names[i] for i in pending)}
                    raise WorkerTimeout([c for c in self.program.clusters if c in late], timeout_s)
                if not isinstance(failure, Aborted):  # its own error: stop the others
                    r.state.abort = True
                    r.wake_all()
                    raise _worker_error(self._caller, failure, skip_frames=1)
                aborted = True  # a worker failed; its error is on its way
        while pending:
            remaining = deadline - time.monotonic()
            try:
                if remaining <= 0:
                    raise queue.Empty
                i, kind, payload = self._done_q.get(timeout=remaining)
            except queue.Empty:
                raise WorkerTimeout([self._names[i] for i in sorted(pending)], timeout_s) from None
            pending.discard(i)
            if kind == "error":
                raise _worker_error(self._names[i], payload, skip_frames=1)
            if kind == "aborted":
                aborted = True  # the error that caused it is on its way
            elif not aborted:
                r.check_finished(self._names[i], epoch)
        if aborted:  # pragma: no cover - an abort always comes with an error
            raise RuntimeFailure("inference aborted")
        return r.collect(check_versions=not r.state.copy_on_put)

    def _run_caller_cluster(self, epoch: int, threads: int, bind: bool) -> BaseException | None:
        """Run the caller's cluster here with ``threads`` intra-op threads (bound to its cores
        where ``bind``); returns what stopped it (``None`` when it finished)."""
        r, c = self._r, self._caller
        assert c is not None
        caller_threads = torch.get_num_threads()  # the cluster function may set its own
        torch.set_num_threads(threads)
        try:
            with (
                torch.no_grad(),
                self._caller_binding(0, 1 + len(self._names)).during(
                    threads, self.threads_per_worker, bind
                ),
                thread_cap(self._caps[c]),
            ):
                self.program.clusters[c](r.endpoints[c], self.weights)
        except Exception as e:  # noqa: BLE001 - reported like a worker's error
            return e
        except (Aborted, Deadline) as e:
            return e
        finally:
            torch.set_num_threads(caller_threads)
        r.check_finished(c, epoch)
        return None

    def _shutdown(self, failed: bool) -> None:
        if failed:
            self._r.state.abort = True
            self._r.wake_all()
        for q in self._start_qs:
            q.put(None)
        deadline = time.monotonic() + SHUTDOWN_GRACE_S
        for t in self._threads:
            t.join(timeout=max(0.0, deadline - time.monotonic()) if failed else None)
        self.stuck_threads = [t for t in self._threads if t.is_alive()]
        _stuck[:] = [t for t in _stuck if t.is_alive()] + self.stuck_threads
        for slot in self._r.slots.values():
            slot.value = None
        self._release_bindings()


class InlineRunner(Runner):
    """Inline backend: clusters run sequentially in the caller's thread (see module docstring)."""

    backend = "inline"

    def __init__(
        self,
        program: Program,
        weights: Weights,
        threads_per_worker: int,
        timeout_s: float,
        copy_on_put: bool = False,
    ):
        super().__init__(program, weights, threads_per_worker, timeout_s)
        order = program.cluster_order()
        if order is None:
            raise ProgramError(
                f"program '{program.name}': the cluster graph has a cycle, so the clusters cannot "
                "run one after another; use the threads or processes backend"
            )
        self._order = order
        self._caps = program.thread_caps(together=False)  # one cluster at a time
        self._r = _Run(program, copy_on_put)
        self._r.state.abort = False

    def _concurrent_workers(self) -> int:
        return 1  # one cluster at a time

    def _run(
        self, inputs: dict[str, torch.Tensor], epoch: int, timeout_s: float
    ) -> dict[str, torch.Tensor]:
        r = self._r
        r.feed(inputs, epoch)
        caller_threads = torch.get_num_threads()  # cluster functions may set their own
        threads, bind = self._threads_for_run()
        torch.set_num_threads(threads)
        binding = self._caller_binding(0, 1)  # its OpenMP helpers on cores of their own
        try:
            with torch.no_grad(), binding.during(threads, self.threads_per_worker, bind):
                # Topological order + check_finished: every get finds its channel already put.
                for c in self._order:
                    try:
                        with thread_cap(self._caps[c]):
                            self.program.clusters[c](r.endpoints[c], self.weights)
                    except Exception as e:
                        raise _worker_error(c, e, skip_frames=1) from e
                    r.check_finished(c, epoch)
        finally:
            torch.set_num_threads(caller_threads)
        return r.collect(check_versions=not r.state.copy_on_put)

    def _shutdown(self, failed: bool) -> None:
        for slot in self._r.slots.values():
            slot.value = None
        self._release_bindings()
