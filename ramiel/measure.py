"""Measuring latency on a shared, noisy machine: timing statistics, isolation in processes,
machine noise. Used by ``ramiel bench`` (:mod:`ramiel.bench`), ``ramiel tune``
(:mod:`ramiel.tune`) and ``ramiel profile`` (:mod:`ramiel.profiler`).

* statistics: :class:`Timing` (median, min, max and the distribution-free 95 % interval of the
  median, :func:`median_ci`), :func:`ratio_ci`, :class:`Plan` (warm-up, repetitions until the
  interval is within ``rel_ci``, a time budget, retries on a busy machine) and
  :func:`measure_interleaved` (round robin in a rotating order, so that drift hits every
  callable alike);
* isolation: :class:`Isolated` runs a configuration in a ``spawn``ed process of its own (no
  shared OpenMP pool, malloc arenas or onnxruntime pools) and reports each call as a
  :class:`Measured` time taken inside that process; every wait is bounded;
* machine noise: :class:`CpuMeter` (cores other processes kept busy), :func:`wait_quiet`,
  :func:`machine_scaling` (what P cores deliver now), :func:`busy_core` and
  :func:`measure_quiet_busy` (one spinning background core), :func:`tune_malloc` (no page faults
  per inference from glibc's trimming), :func:`load_average`, :func:`minor_faults`.

Source: median confidence interval from binomial order statistics (e.g. Conover, *Practical
Nonparametric Statistics*, 3rd ed., section 3.2).
"""

from __future__ import annotations

import contextlib
import math
import multiprocessing as mp
import os
import platform
import resource
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, Self

import numpy as np

from ramiel.runtime.contention import pid_stat_fields
from ramiel.runtime.memory import ENV_DISABLE as MALLOC_ENV_DISABLE
from ramiel.runtime.memory import MMAP_THRESHOLD, TRIM_THRESHOLD, reuse_freed_memory


@dataclass
class Timing:
    """Latencies of one configuration, ms. ``ci`` is the 95 % interval of the median."""

    median: float
    min: float
    max: float
    n: int
    ci: tuple[float, float]
    samples: list[float] = field(repr=False, default_factory=list)
    faults: float | None = None  # median minor page faults of this process per call

    @classmethod
    def of(cls, samples: Sequence[float], faults: Sequence[int] = ()) -> Timing:
        s = sorted(samples)
        n = len(s)
        lo, hi = median_ci(s)
        f = median_of(sorted(faults)) if faults else None
        return cls(median_of(s), s[0], s[-1], n, (lo, hi), [round(x, 4) for x in samples], f)


def median_of(sorted_samples: Sequence[float]) -> float:
    s = sorted_samples
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def median_ci(sorted_samples: Sequence[float]) -> tuple[float, float]:
    """Distribution-free 95 % confidence interval of the median (binomial order statistics,
    normal approximation): the samples of rank ``n/2 -+ 0.98 sqrt(n)``."""
    s = sorted_samples
    n = len(s)
    half = 0.98 * math.sqrt(n)
    lo = max(0, int(math.floor(n / 2 - half)))
    hi = min(n - 1, int(math.ceil(n / 2 + half)) - 1)
    return s[lo], s[max(lo, hi)]


@dataclass
class Plan:
    """How many repetitions: ``warmup`` calls each, then rounds until every configuration has at
    least ``min_reps`` and its median's CI is within ``rel_ci`` of it, or ``max_reps``/``budget_s``
    is reached (at least ``min_reps`` rounds are always run).

    ``gap_s``: an untimed pause before every timed call, so that threads of the previous
    configuration that spin-wait after their work (GNU OpenMP spins ~10 ms after a parallel region
    here) are asleep before the next configuration starts; otherwise a configuration is charged for
    its predecessor's spinning.

    A shared machine: a model's timing is repeated (up to ``attempts`` times, after waiting up to
    ``quiet_wait_s`` for other processes to use less than ``busy_cores`` cores) when other
    processes kept more than ``busy_cores`` cores busy during it, or when P threads of perfectly
    parallel work ran less than 0.75 P times faster than one (:func:`machine_scaling`) before or
    after it; the least disturbed attempt is kept."""

    warmup: int = 3
    min_reps: int = 15
    max_reps: int = 101
    budget_s: float = 60.0
    rel_ci: float = 0.02
    gap_s: float = 0.015
    attempts: int = 3
    busy_cores: float = 0.25
    quiet_wait_s: float = 180.0
    malloc_tuning: bool = False  # tune_malloc() in every configuration's process

    @classmethod
    def quick(cls) -> Self:
        """A few repetitions, no retries: a smoke run, not a measurement."""
        return cls(
            warmup=1, min_reps=3, max_reps=3, budget_s=5.0, rel_ci=1.0, gap_s=0.0, attempts=1
        )  # fmt: skip


def measure_interleaved(
    fns: Mapping[str, Callable[[], object]],
    plan: Plan,
    clock: Callable[[], float] = time.perf_counter,
    sleep: Callable[[float], None] = time.sleep,
    faults: Callable[[], int] | None = None,
    settle_after: Mapping[str, float] | None = None,
) -> dict[str, Timing]:
    """Time every callable round-robin (rotating the order each round); see :class:`Plan`.

    ``faults``: a counter (e.g. :func:`minor_faults`) read around every call. A callable that
    returns a :class:`Measured` (a configuration in its own process) is timed by what it reports,
    measured inside its process, instead of by ``clock`` around the call. ``settle_after``: key
    -> seconds of an untimed pause after that key's calls (warm-up included), before the next
    configuration's ``gap_s``: for one whose threads keep a core busy longer than ``gap_s``
    after it returns (onnxruntime's spinning pool, :data:`SPIN_SETTLE_S`), which would slow
    down the configuration timed next and make a program that adapts its threads to busy cores
    (:mod:`ramiel.runtime.contention`) take it for another process's load.
    """
    settle = dict(settle_after or {})
    keys = list(fns)
    for _ in range(plan.warmup):
        for k in keys:
            fns[k]()
            if settle.get(k, 0.0) > 0:
                sleep(settle[k])
    samples: dict[str, list[float]] = {k: [] for k in keys}
    flts: dict[str, list[int]] = {k: [] for k in keys}
    t_end = clock() + plan.budget_s
    r = 0
    while r < plan.max_reps:
        order = keys[r % len(keys) :] + keys[: r % len(keys)]
        for k in order:
            if plan.gap_s > 0:
                sleep(plan.gap_s)
            f = faults() if faults else 0
            t = clock()
            out = fns[k]()
            elapsed = (clock() - t) * 1e3
            if settle.get(k, 0.0) > 0:
                sleep(settle[k])
            if isinstance(out, Measured):
                samples[k].append(out.ms)
                flts[k].append(out.faults)
                continue
            samples[k].append(elapsed)
            if faults:
                flts[k].append(faults() - f)
        r += 1
        if r < plan.min_reps:
            continue
        if clock() > t_end or all(_stable(samples[k], plan.rel_ci) for k in keys):
            break
    return {k: Timing.of(v, flts[k]) for k, v in samples.items()}


SPIN_SETTLE_S = 0.1
"""Seconds after a call of onnxruntime with its pool threads spinning (its own default) before the
next configuration is timed: those threads keep spinning after the run (measured here: one core
busy for the next 50 ms and more). With the benchmark's 15 ms gap alone, the default program
timed after it took light_squeezenet 9.18 ms where it takes 7.01 ms (its runtime saw a busy core
and ran one thread; 2026-12-06)."""


def minor_faults() -> int:
    """Minor page faults of this process so far (threads included, child processes not)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def _stable(samples: list[float], rel_ci: float) -> bool:
    s = sorted(samples)
    lo, hi = median_ci(s)
    m = median_of(s)
    return m > 0 and (hi - lo) / 2 <= rel_ci * m


SPINNER = "while True:\n    pass\n"
"""The busy background core: a Python loop that never sleeps (one runnable thread)."""


@contextlib.contextmanager
def busy_core(settle_s: float = 0.2) -> Any:
    """Keep one core busy while the block runs: a child process spinning in :data:`SPINNER` at
    normal priority (another user's job, as far as the scheduler can tell), killed afterwards.
    ``settle_s``: seconds to let it start before the block."""
    proc = subprocess.Popen(
        [sys.executable, "-c", SPINNER], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL
    )
    try:
        time.sleep(settle_s)
        yield proc
    finally:
        proc.kill()
        proc.wait(10.0)


def measure_quiet_busy(
    fn: Callable[[], object],
    rounds: int = 6,
    calls: int = 10,
    warmup: int = 2,
    gap_s: float = 0.015,
) -> tuple[Timing, Timing]:
    """Latency of ``fn`` on the machine as it is (``quiet``) and with one :func:`busy_core`
    (``busy``), interleaved: ``rounds`` times a block of ``calls`` quiet calls, then a block of
    ``calls`` with the spinner running (started before, killed after the block). Returns the two
    :class:`Timing` (ms). A call that returns a :class:`Measured` is timed by what it reports."""

    def block(out: list[float]) -> None:
        for _ in range(calls):
            if gap_s > 0:
                time.sleep(gap_s)
            t = time.perf_counter()
            r = fn()
            ms = (time.perf_counter() - t) * 1e3
            out.append(r.ms if isinstance(r, Measured) else ms)

    for _ in range(warmup):
        fn()
    quiet: list[float] = []
    busy: list[float] = []
    for _ in range(rounds):
        block(quiet)
        with busy_core():
            fn()  # the first call after the spinner starts finds the caches cold: untimed
            block(busy)
    return Timing.of(quiet), Timing.of(busy)


def machine_scaling(workers: int, work_ms: float = 50.0, repeats: int = 5) -> float | None:
    """What P cores deliver right now on perfectly parallel work: P threads (1 intra-op thread
    each) run the same fixed amount of matrix products as one thread does alone; returns
    ``P * t_alone / t_together`` (P on an idle machine with P real cores; less when other
    processes, or the hypervisor, take cores away). The median of ``repeats`` tries."""
    import torch  # lazy: torch

    if workers < 2:
        return None
    a = torch.randn(192, 192)
    caller = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.no_grad():
            t = time.perf_counter()
            n = 0
            while time.perf_counter() - t < 0.005:
                torch.mm(a, a)
                n += 1
        iters = max(1, int(n * work_ms / 5.0))

        def job(barrier: threading.Barrier | None) -> None:
            torch.set_num_threads(1)
            if barrier is not None:
                barrier.wait()
            with torch.no_grad():
                for _ in range(iters):
                    torch.mm(a, a)

        ratios = []
        for _ in range(repeats):
            t = time.perf_counter()
            job(None)
            alone = time.perf_counter() - t
            barrier = threading.Barrier(workers + 1)
            ths = [threading.Thread(target=job, args=(barrier,)) for _ in range(workers)]
            for th in ths:
                th.start()
            barrier.wait()
            t = time.perf_counter()
            for th in ths:
                th.join()
            together = time.perf_counter() - t
            ratios.append(workers * alone / together)
    finally:
        torch.set_num_threads(caller)
    ratios.sort()
    return round(ratios[len(ratios) // 2], 3)


def tune_malloc(mmap_threshold: int = MMAP_THRESHOLD, trim_threshold: int = TRIM_THRESHOLD) -> bool:
    """Stop glibc's malloc from handing tensor memory back to the kernel after every inference:
    :func:`ramiel.runtime.memory.reuse_freed_memory` (the measurements are there), which every
    Ramiel program also calls when it loads; process-wide, returns False where it is not glibc.
    """
    return reuse_freed_memory(mmap_threshold, trim_threshold)


def cpu_model() -> str:
    """``model name`` of /proc/cpuinfo, with the family/model numbers when the name is vague."""
    info: dict[str, str] = {}
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        for line in f:
            if ":" in line:
                k, v = line.split(":", 1)
                info.setdefault(k.strip(), v.strip())
            elif info:
                break
    name = info.get("model name") or platform.processor() or platform.machine()
    if "cpu family" in info and "model" in info:
        name += f" (family {info['cpu family']}, model {info['model']})"
    return name


class CpuMeter:
    """How many cores *other* processes kept busy while it ran: machine-wide busy time from
    ``/proc/stat`` minus this process's own CPU time (threads and reaped children included),
    divided by wall time. 0 on an otherwise idle machine; ``None`` where /proc is missing."""

    def __init__(self) -> None:
        self._start = self._snap()

    @staticmethod
    def _snap() -> tuple[float, float, float] | None:
        try:
            with open("/proc/stat") as f:
                v = [int(x) for x in f.readline().split()[1:]]
        except (OSError, ValueError):
            return None
        tick = os.sysconf("SC_CLK_TCK")
        busy = (sum(v[:8]) - v[3] - v[4]) / tick  # all but idle and iowait; no guest double count
        t = os.times()
        own = t.user + t.system + t.children_user + t.children_system + _live_children_cpu(tick)
        return busy, own, time.monotonic()

    def other_cores(self) -> float | None:
        end = self._snap()
        if self._start is None or end is None:
            return None
        wall = end[2] - self._start[2]
        if wall <= 0:
            return None
        other = (end[0] - self._start[0]) - (end[1] - self._start[1])
        return round(max(0.0, other / wall), 3)

    def closing_line(self) -> str:
        """A benchmark script's last line: the load average now and :meth:`other_cores`."""
        return (
            f"# load average {load_average()[0]:.2f} after; other processes kept "
            f"{self.other_cores()} cores busy on average"
        )


def _live_children_cpu(tick: int) -> float:
    """CPU seconds of this process's live (not yet reaped) children, e.g. process workers."""
    me = os.getpid()
    total = 0.0
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        fields = pid_stat_fields(int(d))
        if fields is not None and int(fields[1]) == me:  # ppid
            total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    return total


def wait_quiet(busy_cores: float, timeout_s: float, sample_s: float = 2.0) -> bool:
    """Wait until other processes use at most ``busy_cores`` cores over ``sample_s`` seconds (at
    most ``timeout_s``); returns whether that happened."""
    end = time.monotonic() + timeout_s
    while True:
        meter = CpuMeter()
        time.sleep(sample_s)
        other = meter.other_cores()
        if other is None or other <= busy_cores:
            return True
        if time.monotonic() > end:
            return False


def load_average() -> tuple[float, float, float]:
    try:
        a, b, c = os.getloadavg()
    except OSError:
        return (float("nan"),) * 3  # type: ignore[return-value]
    return (round(a, 2), round(b, 2), round(c, 2))


@dataclass(frozen=True)
class Measured:
    """One call of a configuration that runs in its own process (:class:`Isolated`), measured
    there: wall time in ms and that process's minor page faults during the call."""

    ms: float
    faults: int


class Buildable(Protocol):
    """What :class:`Isolated` runs: a picklable description of a configuration (e.g.
    :class:`ramiel.engines.Recipe`) that builds, in the configuration's own process, the
    callable to time (returning the outputs) and the object to ``close()`` afterwards (or
    ``None``; its ``compile_report()``, if it has one, is the ready message)."""

    malloc_tuning: bool  # call tune_malloc() in the process first

    def build(self) -> tuple[Callable[[], Sequence[Any]], Any]: ...


def _serve(conn: Any) -> None:
    """Main function of a configuration's process: receive the recipe, build the callable, say
    ``ready``, then answer ``run`` (one timed call: a :class:`Measured`) and ``outputs`` (the
    outputs as numpy arrays) until ``stop`` or the pipe closes."""
    closer = None
    try:
        recipe: Buildable = conn.recv()
        if recipe.malloc_tuning:
            tune_malloc()
        else:  # glibc's defaults, also for the program the recipe loads (it would tune them)
            os.environ[MALLOC_ENV_DISABLE] = "0"
        fn, closer = recipe.build()
        report = closer.compile_report() if hasattr(closer, "compile_report") else []
        conn.send(("ready", report))
        while True:
            try:
                msg = conn.recv()
            except EOFError:
                return
            if msg == "run":
                f0 = minor_faults()
                t = time.perf_counter()
                fn()
                ms = (time.perf_counter() - t) * 1e3
                conn.send(("ok", Measured(ms, minor_faults() - f0)))
            elif msg == "outputs":
                conn.send(("ok", as_numpy(fn())))
            else:
                return
    except BaseException as e:  # noqa: BLE001 - reported to the parent, then the process ends
        with contextlib.suppress(Exception):
            conn.send(("error", f"{type(e).__name__}: {e}"))
    finally:
        if closer is not None:
            with contextlib.suppress(Exception):
                closer.close()


class Isolated:
    """A configuration served by its own process (``spawn``ed, so it shares no OpenMP pool,
    malloc arena or onnxruntime thread pool with the others, as in a user's process of its own).

    Calling it runs one inference there and returns the :class:`Measured` time; ``outputs()``
    returns the outputs. Every wait is bounded (``timeout_s``): a process that dies or hangs
    becomes a :class:`RuntimeError`, never a hang. ``close()`` stops the process.
    """

    def __init__(self, recipe: Buildable, timeout_s: float = 300.0):
        ctx = mp.get_context("spawn")
        self.timeout_s = timeout_s
        self.conn, child = ctx.Pipe()
        # not a daemon: the processes backend starts worker processes of its own there
        self.proc = ctx.Process(target=_serve, args=(child,), name="ramiel-bench-config")
        self.proc.start()
        child.close()
        # The recipe (inputs, compiled programs: megabytes) goes over the pipe, not as an
        # argument: multiprocessing writes the arguments into a pipe whose read end the parent
        # keeps open, so a child that dies while starting (a script without an
        # ``if __name__ == "__main__":`` guard) left the parent blocked in that write forever.
        # Here its death closes the pipe: the send fails, and the next wait reports it.
        with contextlib.suppress(OSError):
            self.conn.send(recipe)
        self._report: list[Any] | None = None  # the ready message's, once received
        self._ended: str | None = None  # why the process is gone, once it is

    def _ask(self, msg: str | None) -> Any:
        if self._ended is not None:  # asked again after a failure: the same error
            raise RuntimeError(self._ended)
        if msg is not None:
            try:
                self.conn.send(msg)
            except OSError:  # the process is gone (a bare BrokenPipeError had escaped)
                raise RuntimeError(self._died()) from None
        deadline = time.monotonic() + self.timeout_s
        while not self.conn.poll(min(0.2, max(0.0, deadline - time.monotonic()))):
            if not self.proc.is_alive() and not self.conn.poll(0):  # died without a word
                raise RuntimeError(self._died())
            if time.monotonic() >= deadline:
                self.close()
                self._ended = f"configuration process did not answer within {self.timeout_s} s"
                raise RuntimeError(self._ended)
        try:
            status, value = self.conn.recv()
        except EOFError:
            # The pipe closed because the process is exiting; it may not be reaped yet (its exit
            # code still None on a loaded machine): wait for it, as long as any answer.
            raise RuntimeError(self._died()) from None
        if status == "error":
            raise RuntimeError(value)
        return value

    def _died(self) -> str:
        """The error of a process that ended without answering, with its exit code: it is
        reaped first (up to ``timeout_s``; ``exitcode`` is ``None`` until then, and a process
        whose pipe closed may still be running its exit handlers on a loaded machine), killed if
        it is still there."""
        self.proc.join(self.timeout_s)
        code = self.proc.exitcode
        self.close()
        if code is None:
            self._ended = (
                f"configuration process closed its pipe and did not exit within {self.timeout_s} s"
            )
        else:
            self._ended = (
                f"configuration process died (exit code {code}); its own error, if it printed "
                "one, is above"
            )
        return self._ended

    def wait_ready(self) -> list[Any]:
        """Wait until the configuration is built; returns its compile report (the
        :class:`~ramiel.runtime.compiled.CompileEvent` list of a compiled program, else empty).
        Calling it again returns the same report."""
        if self._report is None:
            self._report = self._ask(None) or []
        return self._report

    def __call__(self) -> Measured:
        self.wait_ready()  # the first message is the ready one (it was taken for the answer)
        return self._ask("run")

    def outputs(self) -> list[np.ndarray]:
        self.wait_ready()
        return self._ask("outputs")

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.conn.send("stop")
        self.proc.join(10.0)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(5.0)
        with contextlib.suppress(Exception):
            self.conn.close()


def as_numpy(outs: Sequence[Any]) -> list[np.ndarray]:
    return [o.detach().numpy() if hasattr(o, "detach") else np.asarray(o) for o in outs]


def ratio_ci(a: Timing | None, b: Timing | None) -> tuple[float, float, float] | None:
    """``a.median / b.median`` and a 95 % interval of it from the two medians' intervals (the
    smallest and largest ratio they allow: conservative, no independence assumed)."""
    if a is None or b is None or b.median <= 0 or b.ci[0] <= 0:
        return None
    return a.median / b.median, a.ci[0] / b.ci[1], a.ci[1] / b.ci[0]
