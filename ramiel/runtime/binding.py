"""Each worker's OpenMP helper threads bound to cores of their own, so that GNU OpenMP's
threads can spin between parallel regions without paying for it after an idle pause.

Why: with 2+ intra-op threads, a worker's helpers spin about 10 ms after each parallel region
(libgomp's default) and then sleep. When the next inference comes later than that, the kernel
wakes a helper onto the core where the worker's own thread is already spinning at the region's
barrier, and the helper runs only once that thread is preempted: 6-8 ms for the first region
instead of 0.2 (``bench/omp_wake.py``: the project transformer with 2 threads took 15.9 ms per
request 0.1 s apart, 3.9 ms back to back). With the helpers bound to the other cores of the
worker's group and the worker's thread to the first one, the same requests took 4.6-7.0 ms.
Workers of one thread each (a task-parallel program of as many clusters as cores) have the
same trouble without any helper: a worker that waits on a channel sleeps, and after an idle
pause the thread that wakes it (the sender) pulls it onto its own core. ramiel_inception's 2
clusters of 1 thread on 2 cores took 17 ms back to back and 26-27 ms per request 0.1 s apart;
with each worker's thread on a core of its own, 18-19.5 ms (the waits on channels within one
inference fell from a median of 1.0 ms to 0.15-0.2 ms). While another process keeps a core
busy, a worker tied to that core runs slower than one the kernel may move (28-35 ms against
25-26 ms), so nothing is bound then (:attr:`ramiel.runtime.runner.Runner.crowded`).
``OMP_PROC_BIND`` cannot do this for Ramiel's programs: libgomp then binds the process's first
thread to the first core, every thread started later inherits that core, and the pools of
several worker threads are bound to the same places.

How: :func:`pool_helpers` asks libgomp itself which threads form the calling thread's team of
``n`` (``GOMP_parallel`` through ctypes, each member reporting its thread id; the same pool
threads serve every later team of at most ``n``), and :class:`HelperBinding` sets their CPU
affinity (``sched_setaffinity`` on the thread ids) while the worker runs its planned thread
count, and gives them all usable cores again while the runtime has lowered the count because
other processes hold cores (:mod:`ramiel.runtime.contention`: then nothing should be tied to a
core another process may hold). Worker ``i`` of ``C`` with ``T`` threads each gets the cores
``i*T .. i*T+T-1`` of the usable ones; where ``C*T`` exceeds them, or for a lone worker of
one thread, nothing is bound. Cores are
claimed per process, for the length of an inference: while one binding holds a core (another
program's worker computing now, or the same program called from another thread), a second one
leaves its helpers unbound; a program waiting for its next request holds none.
``RAMIEL_BIND=0`` turns it off. Where libgomp or ``sched_setaffinity`` is missing (not Linux,
another OpenMP runtime), nothing is bound.

Source: GCC's libgomp (``GOMP_parallel``, the pool reuse in ``gomp_team_start``);
sched_setaffinity(2).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading
from collections.abc import Sequence

import torch

from ramiel.envflags import switch_on

ENV_DISABLE = "RAMIEL_BIND"
"""``RAMIEL_BIND=0``: no worker binds its helper threads."""

_lock = threading.Lock()
_claimed: dict[int, int] = {}  # core -> id of the HelperBinding bound to it (this process)
_gomp: ctypes.CDLL | None = None
_gomp_looked = False
_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
if hasattr(os, "register_at_fork"):  # a forked worker process holds none of its parent's cores
    os.register_at_fork(after_in_child=_claimed.clear)


def enabled(environ: dict[str, str] | None = None) -> bool:
    """Whether workers bind their helper threads (not with ``RAMIEL_BIND=0``, not where the
    platform has no ``sched_setaffinity``)."""
    env = os.environ if environ is None else environ
    if not switch_on(ENV_DISABLE, env):
        return False
    return hasattr(os, "sched_setaffinity")


def _libgomp() -> ctypes.CDLL | None:
    """The libgomp this process loaded (PyTorch's), or ``None``."""
    global _gomp, _gomp_looked
    with _lock:
        if not _gomp_looked:
            _gomp_looked = True
            try:
                with open("/proc/self/maps") as f:
                    paths = {ln.split()[-1] for ln in f if "libgomp" in ln and "/" in ln}
                if len(paths) == 1:
                    lib = ctypes.CDLL(paths.pop())
                    lib.GOMP_parallel.argtypes = [
                        _CALLBACK, ctypes.c_void_p, ctypes.c_uint, ctypes.c_uint,
                    ]  # fmt: skip
                    lib.GOMP_parallel.restype = None
                    _gomp = lib
            except (OSError, AttributeError):
                _gomp = None
        return _gomp


def pool_helpers(threads: int) -> list[int] | None:
    """Thread ids of the helpers in the calling thread's OpenMP team of ``threads`` (its pool
    threads, made now if it had none), or ``None`` where libgomp cannot be asked. Must run in
    the thread that owns the pool."""
    if threads <= 1:
        return []
    lib = _libgomp()
    if lib is None:
        return None
    seen: list[int] = []
    seen_lock = threading.Lock()

    def member(_data: int | None) -> None:
        tid = threading.get_native_id()
        with seen_lock:
            seen.append(tid)

    cb = _CALLBACK(member)
    lib.GOMP_parallel(cb, None, threads, 0)
    me = threading.get_native_id()
    return sorted({t for t in seen if t != me})


def worker_cores(usable: Sequence[int], worker: int, workers: int, threads: int) -> list[int]:
    """The cores of worker ``worker`` of ``workers`` with ``threads`` threads each: its slice of
    ``usable``, or ``[]`` where ``workers * threads`` exceed them or where a lone worker has one
    thread (nothing to bind then).

    >>> worker_cores([0, 1], 0, 1, 2), worker_cores(range(16), 2, 4, 4), worker_cores([0, 1], 1, 2, 2)
    ([0, 1], [8, 9, 10, 11], [])
    >>> worker_cores([0, 1], 1, 2, 1), worker_cores([0, 1], 0, 1, 1)
    ([1], [])
    """
    usable = list(usable)
    threads = max(1, threads)
    alone = workers <= 1 and threads <= 1
    if alone or workers * threads > len(usable) or not 0 <= worker < workers:
        return []
    return usable[worker * threads : (worker + 1) * threads]


class HelperBinding:
    """The binding of one worker thread's OpenMP team (see the module docstring).

    Args:
        cores: the worker's cores (:func:`worker_cores`): its own thread on the first, its
            helpers on the others. Empty: nothing is bound.
        usable: all usable cores (where the threads go back while the count is lowered).
        own_thread: also bind the calling thread to ``cores[0]`` while bound (worker threads
            and processes); the caller's own thread is bound only during :meth:`during`.

    :meth:`apply` runs in the worker's thread before each inference.
    """

    def __init__(self, cores: Sequence[int], usable: Sequence[int], own_thread: bool = True):
        self.cores = list(cores)
        self.usable = set(usable)
        self.own_thread = own_thread
        self.helpers: list[int] | None = None
        self.bound = False

    def _claim(self, want: bool) -> bool:
        """Take this binding's cores in the process-wide register (``want``), or give them
        back; ``False`` when another binding of this process holds one of them: two programs
        called at the same time from two threads would otherwise pin both teams to the same
        cores (measured: 100-106 ms per inference each against 78-80 ms unbound)."""
        me = id(self)
        with _lock:
            if not want:
                for c in self.cores:
                    if _claimed.get(c) == me:
                        del _claimed[c]
                return True
            if any(_claimed.get(c, me) != me for c in self.cores):
                return False
            for c in self.cores:
                _claimed[c] = me
            return True

    def apply(self, threads: int, planned: int, bind: bool = True) -> None:
        """Bind for ``threads == planned`` and ``bind`` (the first time: find the helpers),
        unbind below, without ``bind`` (other processes hold cores: :attr:`ramiel.runtime.runner.
        Runner.crowded`) or while another binding of this process holds the cores."""
        if not self.cores:
            return
        want = bind and threads >= planned and self._claim(True)
        if want == self.bound:
            return
        if self.helpers is None:
            self.helpers = pool_helpers(planned) or []  # none for one thread
        helper_set = set(self.cores[1:]) if want else self.usable
        ok = True
        for tid in self.helpers:
            try:
                os.sched_setaffinity(tid, helper_set)
            except OSError:
                ok = False  # the thread is gone (another pool): find them again next time
        if self.own_thread:
            with contextlib.suppress(OSError):
                os.sched_setaffinity(0, {self.cores[0]} if want else self.usable)
        if not ok:
            self.helpers = None
        self.bound = want
        if not want:
            self._claim(False)

    def idle(self) -> None:
        """The inference ended: give the cores back to the register (the threads stay bound,
        asleep, at no cost; the next :meth:`apply` claims them again, or unbinds where another
        binding of this process claimed them meanwhile). A program that waits for its next
        request holds no core another program of the process could use."""
        self._claim(False)

    def release(self) -> None:
        """Give the helpers all usable cores again (when the runner closes; any thread may call
        it for a binding without ``own_thread``)."""
        if self.bound and self.helpers:
            for tid in self.helpers:
                with contextlib.suppress(OSError):
                    os.sched_setaffinity(tid, self.usable)
        self.bound = False
        self._claim(False)

    def during(self, threads: int, planned: int, bind: bool = True) -> _During:
        """Bind while the block runs in the caller's thread, its own affinity restored after
        (``threads``, ``planned``, ``bind``: as for :meth:`apply`); after it the helpers are
        unbound and the cores given back to the register (:meth:`release`). Unlike a worker's,
        the caller's OpenMP team also runs the caller's own torch calls between inferences: a
        helper left on one core stalls each of their parallel regions while another process
        keeps that core busy (measured on 2 cores next to a busy one: a small BERT's sequential
        module called in that thread took 260 ms per call instead of 0.4 ms). Two
        ``sched_setaffinity`` calls per helper and inference, a few µs each (the first system
        call after a model's inference takes 30-50 µs, whichever it is)."""
        return _During(self, threads, planned, bind)


class _During(contextlib.AbstractContextManager[None]):
    """:meth:`HelperBinding.during`'s block (a class, not a generator: entered on every call)."""

    __slots__ = ("_binding", "_args", "_before")

    def __init__(self, binding: HelperBinding, threads: int, planned: int, bind: bool):
        self._binding, self._args = binding, (threads, planned, bind)
        self._before: set[int] | None = None

    def __enter__(self) -> None:
        b = self._binding
        b.apply(*self._args)
        if b.bound and b.cores:
            try:
                mine = os.sched_getaffinity(0)
                os.sched_setaffinity(0, {b.cores[0]})
                self._before = mine
            except OSError:
                pass

    def __exit__(self, *exc: object) -> None:
        try:
            if self._before is not None:
                with contextlib.suppress(OSError):
                    os.sched_setaffinity(0, self._before)
        finally:
            self._binding.release()


def binding_for(worker: int, workers: int, threads: int, own_thread: bool = True) -> HelperBinding:
    """A :class:`HelperBinding` for worker ``worker`` of ``workers`` (nothing bound where
    :func:`enabled` says no)."""
    try:
        usable = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = []
    cores = worker_cores(usable, worker, workers, threads) if enabled() else []
    return HelperBinding(cores, usable, own_thread)


class WorkerThreads:
    """The intra-op threads of a worker thread or process (not the caller's thread): its planned
    count ``planned`` (already set with ``torch.set_num_threads``), fewer for an inference while
    the runner says so (:mod:`ramiel.runtime.contention`), its helpers bound as worker ``worker``
    of ``workers`` (:func:`binding_for`)."""

    def __init__(self, planned: int, worker: int = 0, workers: int = 1):
        self.planned = self.current = planned
        self.binding = binding_for(worker, workers, planned)

    def use(self, threads: int, bind: bool = True) -> None:
        """Run the next inference with ``threads`` intra-op threads, bound to the worker's cores
        where ``threads`` is the planned count and ``bind`` (:meth:`HelperBinding.apply`)."""
        if threads != self.current:
            torch.set_num_threads(threads)
            self.current = threads
        self.binding.apply(threads, self.planned, bind)

    def idle(self) -> None:
        """The inference ended (:meth:`HelperBinding.idle`)."""
        self.binding.idle()

    def close(self) -> None:
        """Give the worker's cores back (when the worker stops): its helpers may run anywhere, and
        another program of this process may bind the cores."""
        self.binding.release()
