"""Processes backend: one worker process per cluster, channels in pre-allocated shared memory.

Set-up (once, in :class:`ProcessRunner`):

* one shared-memory arena holds a control block (abort flag, per-channel put/get epochs) and one
  buffer of the static shape and dtype per channel (:class:`~ramiel.runtime.channels.ShmLayout`);
  one semaphore per channel that a cluster receives counts "full";
* all weights are copied once into a second shared arena (:func:`~ramiel.runtime.weights.pack_shared`)
  that every worker maps: one copy for all workers, not one each;
* per worker, a pipe from the caller (``b"<epoch>:<threads>"``: run one inference with that many
  intra-op threads, fewer than planned while other processes hold cores, see
  :mod:`ramiel.runtime.contention`; ``b"Q"``: quit) and a
  pipe back (``b"R"`` ready, ``b"D"`` done, ``b"A"`` aborted, ``b"E"`` + pickled error text).

An inference: the caller copies each graph input into its channel buffers and releases their
semaphores, sends the epoch to every worker, and waits with
:func:`multiprocessing.connection.wait` on the reply pipes *and* the process sentinels, so a worker
that dies (even by SIGKILL) is seen at once as :class:`WorkerDied`. It returns when every worker has
answered; outputs are cloned out of their buffers. ``put`` copies into the receiver's buffer (so the
sender may modify its tensor afterwards) and ``get`` returns the buffer itself, zero-copy: the
buffer is next written in a later inference, which starts only after every cluster finished this
one. Measured here (``bench/results/transfer_cost.txt``): a put costs ~8 µs plus ~62 µs/MiB (one
memcpy); cloning at get as well (``copy_on_get=True``, kept for that measurement) doubles the
per-byte cost to ~119 µs/MiB, so get is zero-copy by default.

Start method (``start_method=None`` picks one): ``fork`` when ``threads_per_worker == 1`` or the
parent is single-threaded, else ``forkserver``. ``fork`` after the parent used its OpenMP pool hangs
a child that runs a parallel region with more than one thread (reproduced here with GNU OpenMP:
children with ``torch.set_num_threads(2)`` hung, with 1 thread they ran), so each worker calls
``torch.set_num_threads(threads_per_worker)`` before anything else, and multi-threaded workers are
forked from the clean forkserver instead (a worker is multi-threaded also when its cluster function
raises its own count, ``Program.max_threads > 1``, as with ``--intra-op-threads``).
A program with inductor-compiled segments (:mod:`ramiel.runtime.compiled`) always starts its
workers from the forkserver (``onednn-graph`` segments, the default's, follow the rule above): each
worker compiles (or loads from inductor's on-disk cache) its own cluster's
segments in the warm-up inference that :func:`~ramiel.runtime.start` runs, with inductor's
compile workers off (``compile_threads = 1``: no helper processes that a killed worker would
leave behind), and reports the compile times with that inference's ``b"D"`` (``b"D"`` + pickled
:class:`~ramiel.runtime.compiled.CompileEvent` list); a parent that used inductor itself has its
compile threads and pools, which a forked child must not inherit.
``spawn``/``forkserver`` workers re-import the cluster functions by module name, or from
``Program.module_path`` (or the module's ``__file__``) when the module was loaded from a file path
(see :func:`~ramiel.runtime.program.load_program`); functions defined inside other functions
cannot be re-imported and need ``fork``. They never re-import the caller's main module, unlike
``multiprocessing``'s own workers: the preparation data sent to them leaves out
``init_main_from_path``/``init_main_from_name`` (:func:`_without_main`), so a script without an
``if __name__ == "__main__":`` guard, ``python -c`` and ``python -`` all work, and the worker
runs only Ramiel's code and the program's module. Only a program whose cluster functions are
defined in the main script itself makes the worker import that script (under another name, so
its guard holds); a script that then starts workers again at import time gets a
:class:`~ramiel.runtime.program.ProgramError` that says to guard it.

Failure handling: every wait in a worker polls an abort flag and its parent's liveness every
:data:`~ramiel.runtime.channels.POLL_S`; the caller's wait is bounded by ``timeout_s`` and checks
the workers' liveness every :data:`LIVENESS_S`: a worker that exited (killed while idle or while
running) is :class:`~ramiel.runtime.program.WorkerDied` at once, before anything is sent to it;
one that is stopped (state ``T`` in ``/proc/<pid>/stat``: ``SIGSTOP``, ``SIGTSTP``) for
:data:`STOPPED_S` is :class:`~ramiel.runtime.program.WorkerTimeout` with ``stopped`` set, long
before ``timeout_s``. On any failure the caller sets the abort flag, wakes all waiters, asks
workers to quit, and terminates (SIGTERM and SIGCONT, then SIGKILL) the ones that do not exit
within a grace period. Workers ignore SIGINT (Ctrl-C reaches the caller, whose
``KeyboardInterrupt`` shuts them down and is re-raised) and are daemonic.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import multiprocessing as mp
import multiprocessing.connection as mpc
import multiprocessing.forkserver as mp_forkserver
import multiprocessing.resource_tracker as mp_resource_tracker
import multiprocessing.spawn as mp_spawn
import os
import pickle
import signal
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch
import torch.multiprocessing  # noqa: F401 - registers the shared-memory tensor pickling

from ramiel.runtime.binding import WorkerThreads
from ramiel.runtime.channels import Aborted, ShmEndpoint, ShmLayout
from ramiel.runtime.compiled import configure_cache, program_segments, segments_in, take_events
from ramiel.runtime.memory import reuse_freed_memory
from ramiel.runtime.ops import thread_cap
from ramiel.runtime.program import (
    ChannelError,
    Program,
    ProgramError,
    RemoteTraceback,
    RuntimeFailure,
    WorkerDied,
    WorkerError,
    WorkerTimeout,
    describe_exception,
    import_from_path,
)
from ramiel.runtime.runner import Runner, _interrupts_held
from ramiel.runtime.weights import TensorSlot, Weights, pack_shared, shared_arena, unpack

#: Seconds a failed runner waits for its workers to exit before terminating them.
FAILED_GRACE_S = 0.5
#: Seconds ``close`` waits for idle workers to exit before terminating them.
CLOSE_GRACE_S = 5.0
#: Seconds between two liveness checks of the workers while the caller waits for them.
LIVENESS_S = 0.1
#: Seconds a worker must stay stopped before the inference is given up (a stop that ends, e.g.
#: job control stopping and continuing the whole process group, is not a failure).
STOPPED_S = 1.0

#: Set in a worker process while it imports the cluster functions; a ProcessRunner made then
#: comes from a main script that starts workers at import time.
_IMPORTING_PROGRAM = False
_PREPARATION_LOCK = threading.Lock()


@contextlib.contextmanager
def _without_main() -> Iterator[None]:
    """While starting a spawn/forkserver worker: send it preparation data without the caller's
    main module, so that the worker does not re-import (re-run) the user's script.

    ``multiprocessing`` makes every such child import ``__main__`` again (``init_main_from_path``
    or ``init_main_from_name`` of :func:`multiprocessing.spawn.get_preparation_data`), which runs
    a script without a main guard a second time and fails for ``python -`` (``<stdin>``). The
    worker's target and arguments live in Ramiel's modules and the program's module, so it needs
    neither.
    """
    with _PREPARATION_LOCK:
        original = mp_spawn.get_preparation_data

        def without_main(name: str) -> dict[str, Any]:
            data = original(name)
            data.pop("init_main_from_path", None)
            data.pop("init_main_from_name", None)
            return data

        mp_spawn.get_preparation_data = without_main
        try:
            yield
        finally:
            mp_spawn.get_preparation_data = original


def process_state(pid: int) -> str | None:
    """The state letter of process ``pid`` from ``/proc/<pid>/stat`` (``R``, ``S``, ``T``...),
    or ``None`` where it cannot be read (no ``/proc``, the process is gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    end = stat.rfind(b")")  # the command name may hold spaces and parentheses
    fields = stat[end + 2 :].split()
    return fields[0].decode() if end >= 0 and fields else None


def choose_start_method(
    requested: str | None, threads_per_worker: int, inductor: bool = False
) -> str:
    """The multiprocessing start method to use (see the module docstring for the rule);
    ``inductor``: the program has inductor-compiled segments.

    Raises:
        ValueError: ``requested`` is not available on this platform.
    """
    methods = mp.get_all_start_methods()
    if requested is not None:
        if requested not in methods:
            raise ValueError(f"start method {requested!r} unavailable; have {', '.join(methods)}")
        return requested
    if "fork" in methods and not inductor and (threads_per_worker == 1 or _single_threaded()):
        return "fork"
    return "forkserver" if "forkserver" in methods else "spawn"


def start_forkserver(ctx: Any, preload: list[str]) -> None:
    """Start ``multiprocessing``'s forkserver (if it is not running yet) with ``preload``, with
    SIGINT blocked in it and in every worker it forks.

    A Ctrl-C in a terminal reaches every process of the foreground group, the forkserver
    included, and ``multiprocessing.forkserver.main`` ignores SIGINT only once it has imported
    its preload modules (torch: 1-3 s): a Ctrl-C during a program's start printed the
    forkserver's ``KeyboardInterrupt`` traceback below the caller's one ``error: interrupted``
    line. The signal mask is inherited through fork and exec, so blocking SIGINT in this thread
    while the forkserver is started closes that window; the workers ignore SIGINT anyway (the
    caller stops them). The caller's own SIGINT only waits until the mask is restored.
    CPython starts its resource tracker the same way (bpo-33613), and unblocks SIGINT after
    it: so the tracker is started first."""
    ctx.set_forkserver_preload(preload)
    mp_resource_tracker.ensure_running()
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        mp_forkserver.ensure_running()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _single_threaded() -> bool:
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


@dataclass(frozen=True)
class FnRef:
    """How a spawned worker finds a cluster function again: module, qualified name, file."""

    module: str
    qualname: str
    file: str | None

    @classmethod
    def of(cls, cluster: str, fn: Any, module_path: str | None) -> FnRef:
        module = getattr(fn, "__module__", None)
        qualname = getattr(fn, "__qualname__", None)
        if not module or not qualname or "<" in qualname:
            raise ProgramError(
                f"cluster '{cluster}': function {fn!r} cannot be re-imported by a spawned worker "
                "(define it at module level, or use start_method='fork')"
            )
        mod = sys.modules.get(module)
        file = module_path or getattr(mod, "__file__", None)
        if module == "__main__" and not (file and os.path.isfile(file)):
            raise ProgramError(
                f"cluster '{cluster}': {qualname} is defined in a __main__ without a script file "
                "(stdin, -c, interactive), which a spawned worker cannot import; use "
                "start_method='fork' or put the program in a module"
            )
        return cls(module, qualname, file)

    def resolve(self) -> Any:
        mod = sys.modules.get(self.module)
        if mod is None:
            try:
                mod = importlib.import_module(self.module)
            except ImportError:
                if not self.file:
                    raise
                mod = import_from_path(self.module, self.file)
        try:
            return self._lookup(mod)
        except AttributeError:
            if not self.file:
                raise ProgramError(
                    f"a spawned worker cannot find {self.qualname} in module {self.module} "
                    "(no source file to re-import it from; use start_method='fork')"
                ) from None
        # e.g. ``__main__`` of a process without the script: import the file under another name.
        return self._lookup(
            import_from_path(f"ramiel_reimported_{abs(hash(self.file))}", self.file)
        )

    def _lookup(self, mod: Any) -> Any:
        obj: Any = mod
        for part in self.qualname.split("."):
            obj = getattr(obj, part)
        return obj


@dataclass
class _Boot:
    """Everything one worker needs (pickled for spawn/forkserver, inherited for fork)."""

    cluster: str
    fn: Any  # the function (fork) or a FnRef
    program: Program
    layout: ShmLayout
    arena: torch.Tensor
    weights_arena: torch.Tensor
    weight_slots: dict[str, TensorSlot]
    sems: list
    start_r: Any
    done_w: Any
    threads: int
    copy_on_get: bool
    close_in_child: list = dataclasses.field(default_factory=list)
    compiled: bool = False
    slot: tuple[int, int] = (0, 1)  # worker index, workers: its cores (ramiel.runtime.binding)


def _worker_main(boot: _Boot) -> None:
    torch.set_num_threads(boot.threads)  # first, before any torch compute in this process
    reuse_freed_memory()  # a spawned worker is a fresh process: its own malloc settings
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for conn in boot.close_in_child:
        conn.close()
    start, done = boot.start_r, boot.done_w
    ppid = os.getppid()
    segments: list[Any] = []
    global _IMPORTING_PROGRAM
    try:
        _IMPORTING_PROGRAM = True
        try:
            fn = boot.fn.resolve() if isinstance(boot.fn, FnRef) else boot.fn
        finally:
            _IMPORTING_PROGRAM = False
        if boot.compiled:
            segments = list(segments_in(getattr(fn, "__globals__", {})).values())
        if any(s.backend == "inductor" for s in segments):
            import torch._inductor.config as inductor_config  # lazy: torch._inductor (the compiler)

            inductor_config.compile_threads = 1
            configure_cache()
        ep = ShmEndpoint(boot.program, boot.cluster, boot.layout, boot.arena, boot.sems, ppid)
        if boot.copy_on_get:
            _clone_on_get(ep)
        w = unpack(boot.weights_arena, boot.weight_slots)
    except BaseException as e:
        done.send_bytes(b"E" + pickle.dumps(describe_exception(e)))
        return
    ctrl = boot.layout.ctrl(boot.arena)
    threads_now = WorkerThreads(boot.threads, *boot.slot)  # its helpers on cores of their own
    cap = boot.program.thread_caps()[boot.cluster]  # its ops.set_threads (--intra-op-threads)
    del boot
    done.send_bytes(b"R")
    with torch.no_grad(), thread_cap(cap):
        while True:
            try:
                while not start.poll(1.0):
                    if os.getppid() != ppid:
                        return
                msg = start.recv_bytes()
            except (EOFError, OSError):
                return
            if msg == b"Q":
                return
            epoch, threads, bind = msg.split(b":")
            ep.epoch = int(epoch)
            threads_now.use(int(threads), bind == b"1")
            try:
                fn(ep, w)
            except Aborted:
                reply = b"A"
            except BaseException as e:
                ctrl[ShmLayout.ABORT] = 1
                reply = b"E" + pickle.dumps(describe_exception(e, skip_frames=1))
            else:
                reply = b"D"
                if segments:
                    events = take_events(segments)
                    if events:
                        reply += pickle.dumps(events)
            try:
                done.send_bytes(reply)
            except OSError:
                return


def _clone_on_get(ep: ShmEndpoint) -> None:
    get = ep.get
    ep.get = lambda name: get(name).clone()  # type: ignore[method-assign]


class ProcessRunner(Runner):
    """Processes backend (see the module docstring). Made by ``start(..., backend="processes")``.

    Options:
        start_method: ``"fork"``, ``"forkserver"``, ``"spawn"`` or ``None`` (automatic).
        startup_timeout_s: limit for all workers to become ready, seconds (spawn imports torch).
        copy_on_get: clone at ``get`` instead of returning the shared buffer (for measurement).
    """

    backend = "processes"
    fresh_outputs = True  # cloned out of the shared-memory buffers

    def __init__(
        self,
        program: Program,
        weights: Weights,
        threads_per_worker: int,
        timeout_s: float,
        start_method: str | None = None,
        startup_timeout_s: float = 120.0,
        copy_on_get: bool = False,
    ):
        if _IMPORTING_PROGRAM:
            raise ProgramError(
                "a worker process that imports the program's module was asked to start workers "
                "itself: the module (the main script, whose functions the program uses) starts "
                'a runner when imported; put that code under if __name__ == "__main__":'
            )
        super().__init__(program, weights, threads_per_worker, timeout_s)
        self._procs: list[Any] = []
        self._start_ws: list[Any] = []
        self._done_rs: list[Any] = []
        self._sems: list[Any] = []
        # the cluster functions may raise their own intra-op threads (--intra-op-threads)
        most = max(threads_per_worker, program.max_threads)

        segments = program_segments(program).values()
        self._compiled = bool(segments)
        # a parent that used inductor must not be forked (its compile threads and pools); the
        # onednn-graph segments (the default's) need nothing the eager rule does not give
        inductor = any(s.backend == "inductor" for s in segments)
        self.start_method = choose_start_method(start_method, most, inductor)
        self._names = list(program.clusters)
        try:
            self._launch(copy_on_get, startup_timeout_s)
        except BaseException:
            self._closed = True
            self._shutdown(failed=True)
            raise

    @property
    def pids(self) -> dict[str, int]:
        """Cluster name -> process id of its worker (empty once closed)."""
        return {c: p.pid for c, p in zip(self._names, self._procs, strict=False)}

    def dead_workers(self) -> list[str]:
        """The clusters whose worker process has exited while the runner is open (the next call
        raises :class:`WorkerDied` for the first)."""
        if self.closed:
            return []
        return [c for c, p in zip(self._names, self._procs, strict=False) if not p.is_alive()]

    # ------------------------------------------------------------------------------------ start-up

    def _launch(self, copy_on_get: bool, startup_timeout_s: float) -> None:
        program, method = self.program, self.start_method
        if mp.current_process().daemon:  # (the standard library's assert said only that)
            raise ProgramError(
                f"program '{program.name}': the processes backend cannot start its workers in "
                "a daemonic process (a multiprocessing.Pool worker: daemonic processes may not "
                "have children); use backend='threads' there, or the sequential module"
            )
        ctx: Any = mp.get_context(method)
        if method == "forkserver":
            start_forkserver(ctx, ["torch", __name__])
        lay = self._layout = ShmLayout.of(program)
        try:
            self._arena = shared_arena(lay.nbytes)
            warena, wslots = pack_shared(self.weights)
        except (RuntimeError, MemoryError, OSError) as e:
            raise RuntimeFailure(
                f"program '{program.name}': cannot allocate the shared memory of its channels "
                f"({lay.nbytes} bytes) and weights ({self.weights.nbytes()} bytes): "
                f"{str(e).splitlines()[0] if str(e) else type(e).__name__}"
            ) from None
        self._ctrl = lay.ctrl(self._arena)
        self._bufs = lay.buffers(self._arena)
        self._index = {n: i for i, n in enumerate(lay.names)}
        self._sems = [
            ctx.Semaphore(0) if program.channels[n].dst is not None else None for n in lay.names
        ]
        if method == "fork":
            fns: dict[str, Any] = dict(program.clusters)
            shipped = program
        else:
            fns = {c: FnRef.of(c, f, program.module_path) for c, f in program.clusters.items()}
            shipped = dataclasses.replace(program, clusters=dict(fns))
        parent_ends: list[Any] = []
        # Ctrl-C while the workers start is held until they are all known, so that the
        # shutdown stops them: raised inside a start, it left a worker the forkserver had
        # forked but this process did not know, which then printed a traceback when the
        # semaphores it was unpickling had gone with this process
        with _interrupts_held():
            for c in self._names:
                start_r, start_w = ctx.Pipe(duplex=False)
                done_r, done_w = ctx.Pipe(duplex=False)
                parent_ends += [start_w, done_r]
                boot = _Boot(
                    c, fns[c], shipped, lay, self._arena, warena, wslots, self._sems,
                    start_r, done_w, self.threads_per_worker, copy_on_get,
                    list(parent_ends) if method == "fork" else [], self._compiled,
                    (len(self._start_ws), len(self._names)),
                )  # fmt: skip
                p = ctx.Process(
                    target=_worker_main,
                    args=(boot,),
                    name=f"ramiel-{program.name}-{c}",
                    daemon=True,
                )
                self._start_ws.append(start_w)
                self._done_rs.append(done_r)
                if method == "fork":
                    p.start()
                else:
                    with _without_main():
                        p.start()
                self._procs.append(p)
                start_r.close()
                done_w.close()
        del warena  # the workers hold it now
        self._await_all(b"R", time.monotonic() + startup_timeout_s, startup_timeout_s)

    def _worker_pids(self) -> list[int]:
        return [pid for pid in self.pids.values() if pid is not None]

    # ---------------------------------------------------------------------------------- inference

    def _run(
        self, inputs: dict[str, torch.Tensor], epoch: int, timeout_s: float
    ) -> dict[str, torch.Tensor]:
        for i, p in enumerate(self._procs):  # died while idle: say so before sending anything
            if not p.is_alive():
                raise self._died(i)
        ctrl, lay = self._ctrl, self._layout
        ctrl[ShmLayout.EPOCH] = epoch
        for name, t in inputs.items():
            for ch in self.program.inputs[name]:
                i = self._index[ch]
                self._bufs[ch].copy_(t)
                ctrl[lay.put_word(i)] = epoch
                self._sems[i].release()
        threads, bind = self._threads_for_run()
        msg = f"{epoch}:{threads}:{int(bind)}".encode()
        for i, conn in enumerate(self._start_ws):
            try:
                conn.send_bytes(msg)
            except OSError:  # the worker's end is closed: it died since the check above
                raise self._died(i) from None
        self._await_all(b"D", time.monotonic() + timeout_s, timeout_s, epoch)
        return {o: self._bufs[ch].clone() for o, ch in self.program.outputs.items()}

    def _await_all(
        self, expect: bytes, deadline: float, timeout_s: float, epoch: int | None = None
    ) -> None:
        """Wait until every worker answered ``expect``; raise the first failure seen."""
        pending = set(range(len(self._names)))
        by_conn = {id(c): i for i, c in enumerate(self._done_rs)}
        by_sentinel = {p.sentinel: i for i, p in enumerate(self._procs)}
        aborted = False
        stopped_since: dict[int, float] = {}
        while pending:
            remaining = deadline - time.monotonic()
            ready = mpc.wait(
                [self._done_rs[i] for i in pending] + list(by_sentinel),
                min(max(remaining, 0.0), LIVENESS_S),
            )
            if not ready:
                names = [self._names[i] for i in sorted(pending)]
                stopped = self._stopped(pending, stopped_since)
                if stopped:
                    raise WorkerTimeout(names, timeout_s, [self._names[i] for i in stopped])
                if remaining > 0:
                    continue
                if expect == b"R":
                    raise RuntimeFailure(
                        f"worker(s) of cluster(s) {', '.join(names)} did not start within "
                        f"{timeout_s:g} s"
                    )
                raise WorkerTimeout(names, timeout_s)
            # Messages first: a worker may have answered just before exiting.
            conns: list[Any] = [r for r in ready if not isinstance(r, int)]
            for conn in conns:
                i = by_conn[id(conn)]
                try:
                    data = conn.recv_bytes()
                except (EOFError, OSError):
                    raise self._died(i) from None
                pending.discard(i)
                if data[:1] == b"E":
                    exc_type, message, text = pickle.loads(data[1:])
                    err = WorkerError(self._names[i], exc_type, message, text)
                    raise err from RemoteTraceback(text)
                if data[:1] == b"D" and len(data) > 1:
                    self._compile_events += pickle.loads(data[1:])
                    data = b"D"
                if data == b"A":
                    aborted = True  # the error that caused it is on its way
                elif data != expect:
                    raise RuntimeFailure(f"unexpected message {data[:20]!r} from a worker")
                elif epoch is not None and not aborted:
                    self._check_finished(i, epoch)
            for s in ready:
                if isinstance(s, int) and not self._done_rs[by_sentinel[s]].poll():
                    raise self._died(by_sentinel[s])
        if aborted:  # pragma: no cover - an abort always comes with an error
            raise RuntimeFailure("inference aborted")

    def _stopped(self, pending: set[int], since: dict[int, float]) -> list[int]:
        """The pending workers that have been stopped for :data:`STOPPED_S` (``since``: when each
        was first seen stopped, updated here)."""
        now = time.monotonic()
        out = []
        for i in sorted(pending):
            if process_state(self._procs[i].pid) == "T":
                first = since.setdefault(i, now)
                if now - first >= STOPPED_S:
                    out.append(i)
            else:
                since.pop(i, None)
        return out

    def _new_compile_events(self) -> list[Any]:
        return []  # the workers' arrive with their replies (_await_all)

    def _died(self, i: int) -> WorkerDied:
        p = self._procs[i]
        p.join(timeout=2.0)
        return WorkerDied(self._names[i], p.exitcode)

    def _check_finished(self, i: int, epoch: int) -> None:
        c, ctrl, lay = self._names[i], self._ctrl, self._layout
        for ch in self.program.channels_from(c):
            if ctrl[lay.put_word(self._index[ch])] != epoch:
                raise ChannelError(
                    f"cluster '{c}' finished the inference without putting channel '{ch}'"
                )
        for ch in self.program.channels_into(c):
            if ctrl[lay.get_word(self._index[ch])] != epoch:
                raise ChannelError(
                    f"cluster '{c}' finished the inference without getting channel '{ch}'"
                )

    # ----------------------------------------------------------------------------------- shutdown

    def _shutdown(self, failed: bool) -> None:
        if failed and hasattr(self, "_ctrl"):
            self._ctrl[ShmLayout.ABORT] = 1
            for s in self._sems:
                if s is not None:
                    s.release()
        for conn in self._start_ws:
            with contextlib.suppress(OSError):
                conn.send_bytes(b"Q")
        deadline = time.monotonic() + (FAILED_GRACE_S if failed else CLOSE_GRACE_S)
        for p in self._procs:
            p.join(timeout=max(0.0, deadline - time.monotonic()))
        for p in self._procs:
            if p.is_alive():
                p.terminate()
                with contextlib.suppress(
                    OSError
                ):  # a stopped process acts on SIGTERM once continued
                    os.kill(p.pid, signal.SIGCONT)
        for p in self._procs:
            p.join(timeout=1.0)
            if p.is_alive():
                p.kill()
                p.join(timeout=5.0)
        for conn in self._start_ws + self._done_rs:
            conn.close()
        for p in self._procs:
            if p.exitcode is not None:
                p.close()
        self._procs = []
        self._start_ws = []
        self._done_rs = []
        # the shared memory (held through file descriptors) and the semaphores go with the
        # workers, not when the runner object is collected
        self._sems = []
        self._bufs = {}
        for name in ("_ctrl", "_arena"):
            if hasattr(self, name):
                delattr(self, name)
