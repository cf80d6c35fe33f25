"""Intra-op threads that make room for other processes (:mod:`ramiel.runtime.contention`): the
``/proc`` readings, the thread-count rule, and every backend running an inference with the count
the rule gives while the monitor reports busy cores (a stand-in monitor), and with a real
spinning process on a real ``/proc/stat``."""

from __future__ import annotations

import contextlib
import os
import time

import pytest
import torch
from conftest import StandInMonitor

from ramiel.measure import busy_core
from ramiel.runtime import ChannelSpec, Program, contention, start
from ramiel.runtime import runner as runner_mod
from ramiel.runtime.contention import CoreMonitor, intra_op_threads, parse_proc_stat

STAT = """cpu  500 0 100 9000 10 0 5 0 0 0
cpu0 {a} 0 {b} 4500 5 0 {c} 7 0 0
cpu1 100 10 50 4500 5 0 2 0 0 0
intr 12345
"""


def test_parse_proc_stat_sums_busy_ticks_of_the_cpus_asked_for():
    text = STAT.format(a=200, b=40, c=3)
    assert parse_proc_stat(text, [0]) == 200 + 40 + 3  # steal (7) and idle not counted
    assert parse_proc_stat(text, [1]) == 100 + 10 + 50 + 2
    assert parse_proc_stat(text) == 243 + 162
    assert parse_proc_stat(text, [5]) == 0.0
    with pytest.raises(ValueError, match="cpuN"):
        parse_proc_stat("cpu  1 2 3 4\nintr 5\n")


def test_process_cpu_time_reads_proc_pid_stat():
    hz = os.sysconf("SC_CLK_TCK")
    t0 = contention.process_cpu_s(os.getpid(), hz)
    assert t0 is not None and t0 >= 0
    end = time.process_time() + 0.05
    while time.process_time() < end:
        pass
    t1 = contention.process_cpu_s(os.getpid(), hz)
    assert t1 is not None and t1 >= t0
    assert contention.process_cpu_s(2**22 + 12345, hz) is None  # no such process


class _Fake:
    """A /proc/stat whose cpu0 busy ticks and this process's CPU time the test sets."""

    def __init__(self):
        self.busy_ticks = 0
        self.own_s = 0.0
        self.now = 0.0

    def stat(self) -> str:
        return STAT.format(a=self.busy_ticks, b=0, c=0)

    def monitor(self, interval_s: float = 0.1, pids=()) -> CoreMonitor:
        """A monitor of cpu0 that reads this fake's /proc/stat, CPU time and clock."""
        self.m = CoreMonitor(
            cpus=[0], pids=pids, read_stat=self.stat, own_cpu_s=lambda: self.own_s,
            clock=lambda: self.now, interval_s=interval_s,
        )  # fmt: skip
        return self.m

    def window(self, seconds: float, busy_s: float, own_s: float) -> None:
        """One inference of ``seconds``: cpu0 busy ``busy_s`` of it, this process ``own_s``."""
        self.m.begin()
        self.now += seconds
        self.busy_ticks += round(busy_s * os.sysconf("SC_CLK_TCK"))
        self.own_s += own_s
        self.m.end()


def test_monitor_counts_the_others_busy_time_within_the_windows_only():
    f = _Fake()
    hz = os.sysconf("SC_CLK_TCK")
    m, window = f.monitor(), f.window

    assert m.others_busy() is None  # nothing seen yet
    window(0.06, 0.06, 0.03)  # an inference of 60 ms: half of the core was someone else's
    assert m.others_busy() is None  # 60 ms < interval_s: no estimate yet
    f.now += 5.0
    f.busy_ticks += round(5.0 * hz)  # between inferences another process computes: not counted
    window(0.06, 0.06, 0.03)
    assert m.others_busy() == pytest.approx(0.5)  # 120 ms of windows, 60 ms of it others'
    window(0.06, 0.06, 0.06)  # only this process computed
    window(0.06, 0.06, 0.06)
    assert m.others_busy() == pytest.approx(0.0, abs=1e-9)
    m.end()  # an end without a begin changes nothing
    assert m.others_busy() == pytest.approx(0.0, abs=1e-9)
    window(0.12, 0.12, 0.0)  # another process took the core: a full estimate says so
    assert m.others_busy() == pytest.approx(1.0)
    window(0.03, 0.03, 0.03)  # one inference of 30 ms alone: only for freeing the cores
    assert m.others_busy() == pytest.approx(1.0)
    assert m.others_busy(latest=True) == pytest.approx(0.0, abs=1e-9)
    window(0.01, 0.01, 0.0)  # shorter than LATEST_MIN_S: not an estimate of its own
    assert m.others_busy(latest=True) == pytest.approx(0.0, abs=1e-9)
    assert m.latest_busy() == pytest.approx(0.0, abs=1e-9)
    window(0.03, 0.03, 0.0)  # a process starts computing: the last window says so at once
    assert m.latest_busy() == pytest.approx(1.0)


def test_monitor_estimate_frees_quickly_and_takes_quickly_only_when_clearly_busy():
    f = _Fake()
    m = f.monitor()

    def window(seconds: float, others_s: float) -> None:
        f.window(seconds, seconds, seconds - others_s)

    assert m.estimate(False) is None and m.estimate(True) is None
    window(0.12, 0.0)  # quiet
    assert m.estimate(False) == pytest.approx(0.0, abs=1e-9)
    window(0.03, 0.03)  # one inference next to a process that just started computing
    assert m.estimate(False) == pytest.approx(1.0)  # taken at once (TAKE_NOW_AT)
    window(0.03, 0.015)  # half busy: not clear enough alone
    assert m.estimate(False) == pytest.approx(0.0, abs=1e-9)
    window(0.06, 0.06)  # 0.12 s of windows now, 0.105 s of them others' (0.875), the last 1.0
    assert m.others_busy() == pytest.approx(0.875)
    assert m.estimate(False) == pytest.approx(1.0)
    window(0.03, 0.0)  # lowered: one quiet inference frees the core again
    assert m.estimate(True) == pytest.approx(0.0, abs=1e-9)
    assert m.estimate(False) == pytest.approx(0.875)
    assert m.usable == 1


def test_back_to_back_windows_share_readings_of_proc_stat():
    """Inferences called back to back share readings (REUSE_GAP_S): a window starts from the last
    one's end reading, and one shorter than LATEST_MIN_S goes on through the next inferences
    until it is that long; after a pause a window reads at its start again, and a short one left
    open then is dropped. The estimates are those of the windows merged."""
    f = _Fake()
    reads = []
    stat = f.stat
    f.stat = lambda: reads.append(f.now) or stat()  # type: ignore[method-assign]
    m = f.monitor()
    for _ in range(4):
        f.window(0.03, 0.03, 0.015)  # back to back (the fake clock does not move between)
    assert len(reads) == 5  # the first begin, then one end each
    assert m.others_busy() == pytest.approx(0.5)
    for _ in range(4):  # 10 ms inferences (a tick each): one read per 20 ms of them
        f.window(0.01, 0.01, 0.0)
    assert len(reads) == 7
    assert m.latest_busy() == pytest.approx(1.0)  # 20 ms merged: an estimate of its own
    f.now += 2 * contention.REUSE_GAP_S  # a pause: the next window reads at its start again
    f.window(0.03, 0.03, 0.03)
    assert len(reads) == 9
    f.window(0.01, 0.01, 0.0)  # back to back, short: left open ...
    assert len(reads) == 9
    f.now += 1.0  # ... and dropped after a pause, with the others' ticks of that second
    f.busy_ticks += round(1.0 * os.sysconf("SC_CLK_TCK"))
    f.window(0.12, 0.12, 0.12)
    assert len(reads) == 11
    assert m.latest_busy() == pytest.approx(0.0, abs=1e-9)


def test_monitor_without_proc_stat_reports_nothing():
    def unreadable() -> str:
        raise OSError("no /proc here")

    m = CoreMonitor(read_stat=unreadable, interval_s=0.0)
    m.begin()
    m.end()
    assert m.broken and m.others_busy() is None
    m = CoreMonitor(read_stat=lambda: "no cpu lines\n", interval_s=0.0)
    m.begin()
    m.end()
    assert m.broken and m.others_busy() is None


@pytest.mark.parametrize(
    ("planned", "workers", "usable", "others", "lowered", "want"),
    [
        (2, 1, 2, None, False, 2),  # unknown: as planned
        (2, 1, 2, 0.0, False, 2),
        (2, 1, 2, 0.5, False, 2),  # below TAKE_AT: a daemon, not a computing process
        (2, 1, 2, 0.7, False, 1),
        (2, 1, 2, 0.5, True, 1),  # lowered: the core is free again only below FREE_AT
        (2, 1, 2, 0.2, True, 2),
        (2, 1, 2, 3.0, False, 1),  # never fewer than 1
        (1, 2, 2, 2.0, False, 1),
        (4, 4, 16, 1.0, False, 3),
        (8, 2, 16, 2.1, False, 7),
        (4, 2, 16, 1.0, False, 4),  # 8 threads still fit the 15 free cores
        (8, 1, 2, 0.0, False, 8),  # more threads than cores, but nobody else: as asked
        (8, 1, 2, 1.0, False, 1),
    ],
)
def test_intra_op_threads(planned, workers, usable, others, lowered, want):
    assert intra_op_threads(planned, workers, usable, others, lowered) == want


def _nthreads(ch, w):
    ch.put("n__out", torch.tensor(torch.get_num_threads()))


def _second(ch, w):
    ch.put("m__out", torch.tensor(torch.get_num_threads()))


NTHREADS = Program(
    name="nthreads_two",
    clusters={"c0": _nthreads, "c1": _second},
    channels={
        "n__out": ChannelSpec("c0", None, (), torch.int64),
        "m__out": ChannelSpec("c1", None, (), torch.int64),
    },
    inputs={},
    outputs={"n": "n__out", "m": "m__out"},
)


_Monitor = StandInMonitor


@pytest.mark.parametrize("backend", ["inline", "threads", "processes"])
def test_every_backend_runs_with_fewer_threads_while_cores_are_busy(monkeypatch, backend):
    monkeypatch.setattr(runner_mod, "CoreMonitor", _Monitor)
    monkeypatch.setattr(runner_mod, "usable_cores", lambda: 4)
    monkeypatch.delenv(contention.ENV_DISABLE, raising=False)
    caller = torch.get_num_threads()
    with start(NTHREADS, None, backend=backend, threads_per_worker=2, timeout_s=120) as r:
        _Monitor.others = 0.0
        assert [t.item() for t in r()] == [2, 2] and r.threads_now == 2
        _Monitor.others = 3.0  # 3 of the 4 cores taken: one thread per worker
        assert [t.item() for t in r()] == [1, 1] and r.threads_now == 1
        _Monitor.others = 0.0
        assert [t.item() for t in r()] == [2, 2] and r.threads_now == 2
        if backend == "processes":
            assert sorted(r._monitor.pids) == sorted(r.pids.values())
    assert torch.get_num_threads() == caller


def test_adaptation_can_be_turned_off(monkeypatch):
    monkeypatch.setattr(runner_mod, "CoreMonitor", _Monitor)
    monkeypatch.setenv(contention.ENV_DISABLE, "0")
    _Monitor.others = 8.0
    with start(NTHREADS, None, backend="inline", threads_per_worker=2) as r:
        assert [t.item() for t in r()] == [2, 2] and r.threads_now == 2


@pytest.mark.skipif(not os.path.exists("/proc/stat"), reason="needs Linux's /proc/stat")
def test_a_spinning_process_is_seen_on_the_real_proc_stat():
    """Behaviour on the real machine: a process spinning on one core shows as (about) one busy
    core of others, this process's own computing does not."""
    m = CoreMonitor(interval_s=0.0)
    with busy_core(settle_s=0.1):
        m.begin()
        time.sleep(0.5)
        m.end()
        seen = m.others_busy()
    assert seen is not None and 0.5 <= seen <= len(m.cpus or [0]) + 0.2
    m.begin()
    end = time.perf_counter() + 0.5
    while time.perf_counter() < end:  # this process computes; nobody else does (much)
        pass
    m.end()
    mine = m.others_busy()
    assert mine is not None and mine < seen


def test_a_program_computing_in_another_thread_of_this_process_counts_as_busy(monkeypatch):
    """Two programs called at the same time from two threads of one process: each counts the
    other's threads as busy cores (the monitor cannot see them: it takes this process's CPU time
    for the program's own), so together they do not run 4 threads on 2 cores."""
    monkeypatch.setattr(runner_mod, "CoreMonitor", _Monitor)
    monkeypatch.setattr(runner_mod, "usable_cores", lambda: 2)
    monkeypatch.delenv(contention.ENV_DISABLE, raising=False)
    _Monitor.others = 0.0
    with start(NTHREADS, None, backend="inline", threads_per_worker=2) as r:
        assert [t.item() for t in r()] == [2, 2] and not r.crowded
        monkeypatch.setitem(runner_mod._in_flight, -1, 2)  # another program's 2 threads, now
        assert [t.item() for t in r()] == [1, 1] and r.crowded
        monkeypatch.delitem(runner_mod._in_flight, -1)
        assert [t.item() for t in r()] == [2, 2] and not r.crowded
        assert id(r) not in runner_mod._in_flight  # only while it computes


def test_with_worker_processes_one_short_window_is_no_estimate(monkeypatch):
    """The workers' CPU time comes in ticks of /proc/PID/stat: with 2 of them a 30 ms window
    could be off by a core, so it needs (1 + 2) * LATEST_MIN_S to stand alone."""
    f = _Fake()
    monkeypatch.setattr(contention, "process_cpu_s", lambda pid, hz: 0.0)
    m = f.monitor(interval_s=1.0, pids=[101, 102])
    assert m.latest_min_s == pytest.approx(3 * contention.LATEST_MIN_S)
    f.window(0.03, 0.03, 0.0)  # all of it someone else's
    assert m.latest_busy() is None
    f.window(0.07, 0.07, 0.0)
    assert m.latest_busy() == pytest.approx(1.0)


class _Counts(torch.nn.Module):
    """Returns the intra-op threads its forward runs with (and raises on request)."""

    def forward(self, fail: bool = False):
        if fail:
            raise RuntimeError("forward failed")
        return torch.get_num_threads()


@contextlib.contextmanager
def _adapted(module, monkeypatch):
    """``module`` with a ThreadAdapter watching the stand-in monitor of 2 cores, called with 2
    threads (the caller's count and the monitor's reset afterwards)."""
    monkeypatch.delenv(contention.ENV_DISABLE, raising=False)
    monitor = _Monitor()
    monitor.usable = 2
    adapter = contention.ThreadAdapter.attach(module, monitor)
    caller = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        yield adapter
    finally:
        torch.set_num_threads(caller)
        _Monitor.others = 0.0


def test_the_sequential_module_runs_with_fewer_threads_while_cores_are_busy(monkeypatch):
    """A plain module (the generated sequential one, called by the user with no runner around
    it): while the monitor reports another process on one of 2 cores, each call runs 1 thread,
    and the caller's count is back after the call, also after a forward that raised; with the
    cores free again, the caller's count. Turned off by RAMIEL_ADAPT_THREADS=0; nothing to do
    while the caller runs 1 thread."""
    module = _Counts()
    with _adapted(module, monkeypatch) as adapter:
        _Monitor.others = 0.0
        assert module() == 2 and not adapter.lowered
        _Monitor.others = 1.0
        assert module() == 1 and adapter.lowered and torch.get_num_threads() == 2
        with pytest.raises(RuntimeError, match="forward failed"):
            module(True)
        assert torch.get_num_threads() == 2
        assert module() == 1  # (the lock was released by the failed call)
        monkeypatch.setenv(contention.ENV_DISABLE, "0")
        assert module() == 2
        monkeypatch.delenv(contention.ENV_DISABLE)
        _Monitor.others = 0.0
        assert module() == 2 and not adapter.lowered
        torch.set_num_threads(1)
        _Monitor.others = 1.0
        assert module() == 1 and torch.get_num_threads() == 1


def test_a_generated_sequential_module_adapts_and_still_copies(tmp_path):
    """The printed ``adapt_threads(self)`` registers the adapter on the generated sequential
    module; the module still deep-copies and pickles (the adapter starts afresh in the copy),
    and its results do not change."""
    import copy
    import pickle

    from onnx import TensorProto, helper

    import ramiel

    vi = helper.make_tensor_value_info
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Mul", ["r", "x"], ["y"])],
        "relu_mul",
        [vi("x", TensorProto.FLOAT, [2, 8])],
        [vi("y", TensorProto.FLOAT, [2, 8])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    with ramiel.compile(model, clusters=1) as m:
        seq = m.sequential
        hooks = list(seq._forward_pre_hooks.values())
        assert [type(getattr(h, "__self__", None)) for h in hooks] == [contention.ThreadAdapter]
        x = torch.randn(2, 8)
        want = seq(x)
        torch.testing.assert_close(want, torch.relu(x) * x)
        for other in (copy.deepcopy(seq), pickle.loads(pickle.dumps(seq))):
            torch.testing.assert_close(other(x), want)
            assert len(other._forward_pre_hooks) == 1


def test_a_call_inside_a_watched_call_changes_nothing(monkeypatch):
    """The module called again inside its own call (same thread): the inner call neither sets
    the threads nor ends the outer call's watch; the outer call sets the caller's count back."""

    class Outer(torch.nn.Module):
        def forward(self, depth: int = 1):
            inner = self(depth - 1) if depth else None
            return torch.get_num_threads(), inner

    module = Outer()
    with _adapted(module, monkeypatch) as adapter:
        _Monitor.others = 1.0
        assert module(2) == (1, (1, (1, None)))
        assert torch.get_num_threads() == 2 and adapter._owner is None and adapter._nested == 0
        assert module(0) == (1, None)  # (the lock is free again)
