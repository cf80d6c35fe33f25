"""Intra-op threads that make room for other processes: a program's workers run with fewer
OpenMP threads while other processes keep some of its cores busy, and with their planned count
again once those cores are free.

Why: a worker with 2+ intra-op threads waits in OpenMP for every helper thread at the end of
each parallel region, and an inference at batch size 1 is hundreds of short regions. When
another process holds one of the cores a helper needs, every region waits for that helper's
turn on the core. With GNU OpenMP's default (helpers spin about 10 ms after a region before
they sleep, as in any process that imported torch before Ramiel, or with a user's
``GOMP_SPINCOUNT``) light_densenet121's one-cluster program with 2 threads on 2 cores took
41-44 ms quiet and 161-190 ms while another process spun on one core; with
``OMP_WAIT_POLICY=PASSIVE`` (Ramiel's setting until 2026-12-05, :mod:`ramiel.omp`) 58-68 ms
quiet and 75-78 ms busy, its 1-thread time being 68 ms. So the runtime watches the cores while it computes: :class:`CoreMonitor` tells
how many of the usable cores other processes kept busy during the program's recent inferences
(``/proc/stat``'s busy time on those cores minus the program's own CPU time, read at the start
and end of each inference, 30-60 µs a read; inferences called back to back share readings, one
per 20 ms of them, :data:`REUSE_GAP_S`), and before each inference :func:`intra_op_threads`
lowers the workers' thread count so that the program's threads and the busy cores fit the
usable ones: 70 ms under the busy core with spinning helpers, 68-70 ms with passive ones.
Measured with ``bench/omp_policy.py`` (docs/benchmarks.md, section "OpenMP wait policy").

What counts as the program's own CPU time: this process's (all its threads; the threads and
inline backends) plus that of the processes listed in ``pids`` (the processes backend's
workers). ``RAMIEL_ADAPT_THREADS=0`` turns the adaptation off (the planned count always). Where
``/proc/stat`` cannot be read (not Linux), nothing adapts. A program whose cluster code sets its
own thread counts (``--intra-op-threads``) keeps those; the distributed backend's ranks keep
theirs.

Source: proc(5) (``/proc/stat``: per-CPU times in ``USER_HZ`` ticks; ``/proc/PID/stat``: fields
14-15, utime and stime); libgomp's ``GOMP_SPINCOUNT``/``OMP_WAIT_POLICY`` (GCC's libgomp manual).
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ramiel.envflags import switch_on
from ramiel.omp import usable_cores

ENV_DISABLE = "RAMIEL_ADAPT_THREADS"
"""``RAMIEL_ADAPT_THREADS=0``: runners always use their planned intra-op threads."""

INTERVAL_S = 0.1
"""Seconds of inference time an estimate of the others' busy cores averages over (``/proc/stat``
counts busy time in ticks of 10 ms: over 0.1 s on 2 cores the estimate is good to about 0.2 of a
core)."""

LATEST_MIN_S = 0.02
"""The shortest window (inference) whose own estimate may free the cores again (two ticks of
``/proc/stat``; a process that kept a core busy all along shows as at least about 0.5 there).
A monitor that also counts worker processes' CPU time (read in ticks too, from
``/proc/PID/stat``) needs ``LATEST_MIN_S * (1 + workers)``: with 2 workers a 20 ms window could
be off by a whole core, and a program on the processes backend next to a busy core switched
between 1 and 2 threads from one inference to the next (found by a fresh-user check)."""

TAKE_NOW_AT = 0.9
"""Busy cores of others in the last inference alone from which a core counts as taken at once
(before :data:`INTERVAL_S` of inferences confirm it: the first inferences next to a process that
just started computing would otherwise all run with too many threads)."""

TAKE_AT = 0.6
"""Busy cores of other processes from which one core counts as taken (0.6 of a core: a process
that computes most of the time, not a daemon that wakes now and then)."""

REUSE_GAP_S = 0.001
"""Inferences called back to back (the next begins at most this long after the last ended)
share readings: a window starts from the last one's end reading instead of reading
``/proc/stat`` again, and a window shorter than :attr:`CoreMonitor.latest_min_s` is not closed
at its end but goes on through the next inferences until it is that long. One read per
inference at most, one per 20 ms of inferences at least (a read and its parse cost 30-60 µs
between the inferences' own work: a tenth of a tiny model's inference); the gaps, a few µs of
the caller's Python, count as part of the window."""

FREE_AT = 0.35
"""While the threads are lowered, a taken core counts as free again only below this much busy
time of others (hysteresis: no switching back and forth around :data:`TAKE_AT`)."""


def enabled(environ: dict[str, str] | None = None) -> bool:
    """Whether runners adapt their thread counts (not with ``RAMIEL_ADAPT_THREADS=0``)."""
    env = os.environ if environ is None else environ
    return switch_on(ENV_DISABLE, env)


def parse_proc_stat(text: str, cpus: Iterable[int] | None = None) -> float:
    """Busy time of the given CPUs (all when ``None``) in ticks, from ``/proc/stat``'s text:
    user + nice + system + irq + softirq of each ``cpuN`` line (not idle, iowait or steal: time
    a hypervisor gave to another machine is no process of this one). Raises ``ValueError`` for
    text without a ``cpuN`` line."""
    want = None if cpus is None else set(cpus)
    total = 0.0
    seen = False
    for line in text.splitlines():
        if line.startswith("cpu "):
            continue
        if not line.startswith("cpu"):
            if seen:
                break  # the per-CPU lines come first; the rest (intr, ...) is long
            continue
        name, *fields = line.split()
        try:
            n = int(name[3:])
        except ValueError:
            continue
        seen = True
        if want is not None and n not in want:
            continue
        v = [float(f) for f in fields[:7]] + [0.0] * (7 - len(fields[:7]))
        user, nice, system, _idle, _iowait, irq, softirq = v
        total += user + nice + system + irq + softirq
    if not seen:
        raise ValueError("no per-CPU line (cpuN) in /proc/stat")
    return total


def pid_stat_fields(pid: int) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` from the third on (state, ppid, ...: index ``i`` is
    field ``i + 3`` of proc(5)), or ``None`` if the process is gone or the file unreadable. The
    command name (field 2) is in parentheses and may hold spaces: the split starts after it."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
    except OSError:
        return None
    return text[text.rfind(")") + 2 :].split()


def process_cpu_s(pid: int, ticks_per_s: float) -> float | None:
    """CPU time (user + system, all threads) of process ``pid`` in seconds, from
    ``/proc/PID/stat``; ``None`` if it is gone or unreadable."""
    rest = pid_stat_fields(pid)
    if rest is None:
        return None
    try:
        return (float(rest[11]) + float(rest[12])) / ticks_per_s  # fields 14 and 15
    except (IndexError, ValueError):
        return None


class CoreMonitor:
    """How many of this process's usable cores other processes keep busy *while the program
    runs*: :meth:`begin` and :meth:`end` bracket each inference, and the busy time of others
    within those windows (not between them: a process that computes while the program waits for
    its next request takes nothing from it) is averaged over at least ``interval_s`` seconds of
    inference time.

    Args:
        cpus: the CPU numbers to watch (default: this process's affinity).
        pids: other processes whose CPU time is the program's own (worker processes).
        interval_s: see :data:`INTERVAL_S`.
        read_stat: returns ``/proc/stat``'s text (for tests; default: a ``pread`` of the file,
            about 10 µs); ``own_cpu_s``: this process's CPU time in seconds (default
            ``time.process_time``: all its threads); ``clock``: seconds, monotonic.

    :meth:`others_busy` is ``None`` until ``interval_s`` of windows were seen, and always where
    ``/proc/stat`` cannot be read (:attr:`broken`).
    """

    def __init__(
        self,
        cpus: Sequence[int] | None = None,
        pids: Sequence[int] = (),
        interval_s: float = INTERVAL_S,
        read_stat: Callable[[], str] | None = None,
        own_cpu_s: Callable[[], float] = time.process_time,
        clock: Callable[[], float] = time.monotonic,
    ):
        if cpus is None:
            try:
                cpus = sorted(os.sched_getaffinity(0))
            except (AttributeError, OSError):
                cpus = None
        self.cpus = None if cpus is None else list(cpus)
        self.pids = list(pids)
        self.interval_s = interval_s
        self._proc_stat = None if read_stat else _ProcStat()
        self._read_stat = read_stat or self._proc_stat.read  # type: ignore[union-attr]
        self._own_cpu_s = own_cpu_s
        self._clock = clock
        try:
            self._hz = float(os.sysconf("SC_CLK_TCK"))
        except (AttributeError, ValueError, OSError):
            self._hz = 100.0
        self._start: tuple[float, float, float] | None = None
        self._last_end: tuple[float, float, float] | None = None
        self._paused: float | None = None  # clock when an open window's last inference ended
        self._streak = False  # the open window began with an inference called back to back
        self._sum = [0.0, 0.0, 0.0]  # wall s, busy s of the watched cores, own CPU s
        self._others: float | None = None
        self._latest: float | None = None
        self.broken = False

    def _own(self) -> float:
        own = self._own_cpu_s()
        for pid in self.pids:
            t = process_cpu_s(pid, self._hz)
            own += t if t is not None else 0.0
        return own

    def _look(self) -> tuple[float, float, float] | None:
        if self.broken:
            return None
        try:
            busy = parse_proc_stat(self._read_stat(), self.cpus) / self._hz
        except (OSError, ValueError):
            self.broken = True
            return None
        return self._clock(), busy, self._own()

    def begin(self) -> None:
        """The start of a window (an inference), or its continuation (see
        :data:`REUSE_GAP_S`): the open window goes on where the last inference ended at most
        that long ago; else a new window starts from the last end reading where that recent,
        else from a new reading."""
        now = self._clock()
        paused, self._paused = self._paused, None
        if self._start is not None and paused is not None and now - paused <= REUSE_GAP_S:
            return  # the window the last inference left open goes on
        last = self._last_end
        if last is not None and now - last[0] <= REUSE_GAP_S:
            self._start, self._streak = last, True
        else:  # (a window left open by an inference that failed is dropped here)
            self._start, self._streak = self._look(), False

    def end(self) -> None:
        """The end of the window :meth:`begin` started: its times count towards the estimate;
        a window of back-to-back inferences shorter than :attr:`latest_min_s` stays open for
        the next inference instead (:data:`REUSE_GAP_S`)."""
        if self._start is None:
            return
        now_s = self._clock()
        if self._streak and now_s - self._start[0] < self.latest_min_s:
            self._paused = now_s
            return
        now = self._look()
        start, self._start = self._start, None
        self._last_end = now
        if now is None:
            return
        d = [now[i] - start[i] for i in range(3)]
        if d[0] >= self.latest_min_s:
            self._latest = max(0.0, (d[1] - d[2]) / d[0])
        for i in range(3):
            self._sum[i] += d[i]
        wall, busy, own = self._sum
        if wall >= self.interval_s:
            self._others = max(0.0, (busy - own) / wall)
            self._sum = [0.0, 0.0, 0.0]

    @property
    def latest_min_s(self) -> float:
        """The shortest window with an estimate of its own (:data:`LATEST_MIN_S`, longer with
        worker processes)."""
        return LATEST_MIN_S * (1 + len(self.pids))

    def latest_busy(self) -> float | None:
        """Cores other processes kept busy during the last window alone (at least
        :attr:`latest_min_s` long), or ``None``: noisy, for quick decisions only."""
        return None if self.broken else self._latest

    def others_busy(self, latest: bool = False) -> float | None:
        """Cores other processes kept busy on average during the latest windows that added up to
        ``interval_s`` (``None`` before that, or without ``/proc/stat``). ``latest``: the
        smaller of that and the estimate of the last window alone, if it lasted at least
        :data:`LATEST_MIN_S` (quick to see cores become free again, at the price of noise)."""
        if self.broken:
            return None
        if latest and self._latest is not None:
            return self._latest if self._others is None else min(self._others, self._latest)
        return self._others

    def estimate(self, lowered: bool) -> float | None:
        """The busy cores of others to decide the next inference's threads with: while the
        threads are ``lowered``, the last inference alone may say the cores are free again
        (``others_busy(latest=True)``); otherwise it may say at once that another process took a
        core (from :data:`TAKE_NOW_AT`), before :data:`INTERVAL_S` of inferences confirm it."""
        if lowered:
            return self.others_busy(latest=True)
        others, last = self.others_busy(), self.latest_busy()
        if last is not None and last >= TAKE_NOW_AT:
            return max(others or 0.0, last)
        return others

    def close(self) -> None:
        """Close ``/proc/stat`` (the runner closes its monitor when it closes)."""
        if self._proc_stat is not None:
            self._proc_stat.close()

    @property
    def usable(self) -> int | None:
        """How many cores it watches (``None``: all of the machine's)."""
        return None if self.cpus is None else len(self.cpus)


class _ProcStat:
    """``/proc/stat`` read with ``pread`` on a descriptor opened once (the kernel writes the file
    anew for every read; opening it each time costs about as much again)."""

    def __init__(self) -> None:
        self._fd: int | None = None

    def read(self) -> str:
        if self._fd is None:
            self._fd = os.open("/proc/stat", os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        return os.pread(self._fd, 1 << 16, 0).decode("ascii", "replace")

    def close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)

    def __del__(self) -> None:
        self.close()


def intra_op_threads(
    planned: int, workers: int, usable: int, others_busy: float | None, lowered: bool = False
) -> int:
    """Intra-op threads per worker for the next inference.

    ``planned`` threads in each of ``workers`` workers on ``usable`` cores while other processes
    keep ``others_busy`` cores busy: the planned count when the cores the others take leave room
    for ``workers * planned`` threads, else the most threads per worker (at least 1) that fit
    the free cores. A core counts as taken from :data:`TAKE_AT` of a core busy, or, when the
    previous inference already ran ``lowered``, from :data:`FREE_AT` (hysteresis). ``None``
    (unknown): the planned count.

    >>> intra_op_threads(2, 1, 2, 0.05), intra_op_threads(2, 1, 2, 0.97)
    (2, 1)
    >>> intra_op_threads(4, 4, 16, 1.0), intra_op_threads(8, 2, 16, 2.1)
    (3, 7)
    """
    if others_busy is None or planned <= 1:
        return max(1, planned)
    if fits_free_cores(planned, workers, usable, others_busy, lowered):
        return planned  # nobody else needs the cores (a count above them was asked for)
    free = max(1, usable - cores_taken(others_busy, lowered))
    return max(1, min(planned, free // max(1, workers)))


def cores_taken(others_busy: float, lowered: bool = False) -> int:
    """How many cores other processes keeping ``others_busy`` cores busy take: a core from
    :data:`TAKE_AT` of one busy, or, when the program already made room (``lowered``), from
    :data:`FREE_AT` (hysteresis).

    >>> cores_taken(0.5), cores_taken(0.5, lowered=True), cores_taken(1.7)
    (0, 1, 2)
    """
    return math.floor(others_busy + 1.0 - (FREE_AT if lowered else TAKE_AT))


def fits_free_cores(
    threads: int, workers: int, usable: int, others_busy: float | None, lowered: bool = False
) -> bool:
    """Whether ``workers`` workers of ``threads`` threads each fit the ``usable`` cores besides
    those other processes take (:func:`cores_taken`; ``None``: unknown, they fit). Where they do,
    the workers' threads are bound to cores of their own (:mod:`ramiel.runtime.binding`); where
    they do not, nothing is bound, so that no thread is tied to a core another process holds.

    >>> fits_free_cores(1, 2, 2, 0.05), fits_free_cores(1, 2, 2, 0.97), fits_free_cores(2, 1, 4, 1.0)
    (True, False, True)
    """
    if others_busy is None:
        return True
    taken = cores_taken(others_busy, lowered)
    return taken <= 0 or workers * threads <= max(1, usable - taken)


class ThreadAdapter:
    """The contention rule of the runners (:func:`intra_op_threads`) for the calls of one plain
    ``torch.nn.Module``: the generated sequential module, which a user calls directly, with no
    runner around it. Before a call, the thread count the caller set
    (``torch.get_num_threads()``) is lowered while other processes keep cores busy during the
    module's calls (:class:`CoreMonitor`), and set back when the call returns or raises.

    Why: next to a process spinning on one of 2 cores, light_inception_v2's sequential module
    took 168 ms a call with its 2 threads and 64 ms adapting (quiet: 44 ms); while another
    user's ``pip install`` ran, light_squeezenet's took 36-151 ms against 14 ms for its
    parallel module, whose runner adapts (docs/benchmarks.md, *The sequential module next to a
    busy core*; the module docstring says why spinning OpenMP helpers wait).

    :meth:`attach` registers it as the module's forward pre-hook and forward hook (called
    also when forward raises). It does nothing while the caller runs 1 thread, under
    ``torch.jit`` tracing, ``torch.compile``/``torch.export`` (a compiled graph's threads are
    the caller's), with ``RAMIEL_ADAPT_THREADS=0``, for a call made while another thread is
    inside a call of the same module (each call sees the count its own thread set), or for a
    call inside a call of the same thread (the outer one decides).
    """

    def __init__(self, monitor: CoreMonitor | None = None) -> None:
        self._lock = threading.Lock()
        self._monitor = monitor  # (default: a CoreMonitor of this process's cores, made lazily)
        self._owner: int | None = None  # the thread whose call is being watched
        self._nested = 0  # calls of the owner inside its watched call (they change nothing)
        self._restore: int | None = None  # the caller's count, to set back after the call
        self.lowered = False  # the last watched call ran with fewer threads than asked
        self.threads_now: int | None = None  # the threads the last watched call ran with

    @classmethod
    def attach(cls, module: Any, monitor: CoreMonitor | None = None) -> ThreadAdapter:
        """A new adapter (watching with ``monitor``), registered on ``module`` (a
        ``torch.nn.Module``); returns it."""
        adapter = cls(monitor)
        module.register_forward_pre_hook(adapter.before)
        module.register_forward_hook(adapter.after, always_call=True)
        return adapter

    def __getstate__(self) -> dict[str, Any]:  # copy/pickle a module: a fresh adapter
        return {}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__()  # type: ignore[misc]

    def before(self, module: Any, args: Any) -> None:
        """Forward pre-hook: the threads for this call."""
        import torch  # lazy: torch

        if torch.compiler.is_compiling() or torch.jit.is_tracing():
            return
        if self._owner == threading.get_ident():
            self._nested += 1  # a call inside this thread's watched call
            return
        planned = torch.get_num_threads()
        if planned <= 1 or not enabled():
            return
        if not self._lock.acquire(blocking=False):
            return  # another thread's call is being watched
        self._owner = threading.get_ident()
        try:
            m = self._monitor
            if m is None:  # /proc/stat opened for each read: no descriptor held by a module
                m = self._monitor = CoreMonitor(read_stat=_read_proc_stat)
            usable = m.usable or usable_cores()
            n = intra_op_threads(planned, 1, usable, m.estimate(self.lowered), self.lowered)
            self.lowered, self.threads_now = n < planned, n
            if n != planned:
                torch.set_num_threads(n)
                self._restore = planned
            m.begin()
        except BaseException:
            self._owner = None
            self._lock.release()
            raise

    def after(self, module: Any, args: Any, output: Any) -> None:
        """Forward hook (also when forward raised): the caller's thread count back."""
        if self._owner is None or self._owner != threading.get_ident():
            return
        import torch  # lazy: torch

        if torch.compiler.is_compiling() or torch.jit.is_tracing():
            return  # (as in before: a traced call inside the watched one changed nothing)
        if self._nested:
            self._nested -= 1
            return
        try:
            if self._monitor is not None:
                self._monitor.end()
            restore, self._restore = self._restore, None
            if restore is not None:
                torch.set_num_threads(restore)
        finally:
            self._owner = None
            self._lock.release()


def _read_proc_stat() -> str:
    """``/proc/stat``'s text, the file opened for this read alone (a module's adapter reads it
    at most once per 20 ms of calls, :data:`REUSE_GAP_S`)."""
    with open("/proc/stat", "rb") as f:
        return f.read().decode("ascii", "replace")


def adapt_threads(module: Any) -> ThreadAdapter:
    """Make ``module`` (a ``torch.nn.Module``, the generated sequential one) run its calls with
    fewer intra-op threads while other processes keep this process's cores busy, and with the
    caller's count otherwise (:class:`ThreadAdapter`); returns the adapter."""
    return ThreadAdapter.attach(module)
