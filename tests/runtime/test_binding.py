"""Each worker's OpenMP helper threads on cores of their own (:mod:`ramiel.runtime.binding`):
libgomp's team members found through libgomp itself, their affinity set while the worker runs
its planned threads and given back while it runs fewer, the caller's own affinity restored after
each inference, and nothing bound with ``RAMIEL_BIND=0``."""

from __future__ import annotations

import os
import threading

import pytest
import torch
from conftest import StandInMonitor

from ramiel.runtime import ChannelSpec, Program, binding, contention, start
from ramiel.runtime import runner as runner_mod
from ramiel.runtime.binding import HelperBinding, pool_helpers, worker_cores

CORES = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
needs_two = pytest.mark.skipif(
    len(CORES) < 2 or binding._libgomp() is None, reason="needs 2 cores and libgomp"
)


def _affinity(tid: int) -> set[int]:
    return os.sched_getaffinity(tid)


def test_worker_cores_slices_the_usable_cores():
    assert worker_cores([0, 1], 0, 1, 2) == [0, 1]
    assert worker_cores(range(16), 2, 4, 4) == [8, 9, 10, 11]
    assert worker_cores([4, 5, 6, 7], 1, 2, 2) == [6, 7]
    assert worker_cores([0, 1], 1, 2, 2) == []  # 4 threads do not fit 2 cores: nothing bound
    assert worker_cores([0, 1], 0, 2, 1) == [0]  # one-thread workers: a core each
    assert worker_cores([0, 1], 1, 2, 1) == [1]
    assert worker_cores([0, 1], 0, 1, 1) == []  # a lone one-thread worker: nothing to bind
    assert worker_cores([0, 1], 2, 3, 1) == []  # 3 workers do not fit 2 cores


def _in_thread(fn):
    """Run ``fn`` in a fresh thread (its own OpenMP pool and affinity); return its result."""
    out: list = []
    t = threading.Thread(target=lambda: out.append(fn()))
    t.start()
    t.join(60)
    return out[0]


@needs_two
def test_pool_helpers_are_the_threads_of_the_callers_team():
    def find():
        torch.set_num_threads(2)
        torch.zeros(1 << 18).add_(1)  # a pool made by ATen first, as a user's ops make one
        a, b = pool_helpers(2), pool_helpers(2)
        return a, b, set(os.listdir("/proc/self/task")), threading.get_native_id()

    a, b, tasks, me = _in_thread(find)
    assert a == b and len(a) == 1  # the same pool thread serves every team of 2
    assert me not in a and {str(t) for t in a} <= tasks


@needs_two
def test_binding_pins_the_helpers_while_planned_and_frees_them_when_lowered():
    def run():
        torch.set_num_threads(2)
        b = HelperBinding([CORES[0], CORES[1]], CORES)
        b.apply(2, 2)
        (helper,) = b.helpers
        bound = (_affinity(helper), os.sched_getaffinity(0), b.bound)
        b.apply(1, 2)  # lowered: everything may run anywhere again
        freed = (_affinity(helper), os.sched_getaffinity(0), b.bound)
        return bound, freed

    bound, freed = _in_thread(run)
    assert bound == ({CORES[1]}, {CORES[0]}, True)
    assert freed == (set(CORES), set(CORES), False)


def _helper_affinity(ch, w):
    helpers = pool_helpers(torch.get_num_threads()) or []
    cores = sorted(set().union(*(os.sched_getaffinity(t) for t in helpers))) if helpers else []
    ch.put("n__out", torch.tensor(len(helpers)))
    ch.put("c__out", torch.tensor(cores + [-1] * (len(CORES) - len(cores))))


AFFINITY = Program(
    name="affinity",
    clusters={"c0": _helper_affinity},
    channels={
        "n__out": ChannelSpec("c0", None, (), torch.int64),
        "c__out": ChannelSpec("c0", None, (max(1, len(CORES)),), torch.int64),
    },
    inputs={},
    outputs={"n": "n__out", "c": "c__out"},
)


@needs_two
@pytest.mark.parametrize("backend", ["inline", "threads", "processes"])
def test_a_one_cluster_program_runs_with_its_helpers_off_its_own_core(monkeypatch, backend):
    monkeypatch.delenv(binding.ENV_DISABLE, raising=False)
    # the binding, not the contention monitor: under the suite's own load (the other xdist
    # worker) the monitor lowered the threads to 1, which unbinds the helpers (seen twice in CI)
    monkeypatch.setenv("RAMIEL_ADAPT_THREADS", "0")
    mine = os.sched_getaffinity(0)
    with start(AFFINITY, None, backend=backend, threads_per_worker=2, timeout_s=120) as r:
        n, cores = r()
        assert n.item() == 1
        assert [c for c in cores.tolist() if c >= 0] == [CORES[1]]
        if backend == "inline":
            # between inferences the caller's team runs the caller's own torch calls: its
            # helpers may run anywhere again (one left on a core another process keeps busy
            # stalled every parallel region: 260 ms per call of a 0.4 ms module)
            helpers = pool_helpers(2) or []
            assert helpers and all(os.sched_getaffinity(t) == set(CORES) for t in helpers)
            n, cores = r()  # and the next inference binds them again
            assert [c for c in cores.tolist() if c >= 0] == [CORES[1]]
    assert os.sched_getaffinity(0) == mine  # the caller's thread is given back its cores
    if backend == "inline":  # and, once the runner is closed, its helpers all cores
        assert all(os.sched_getaffinity(t) == set(CORES) for t in pool_helpers(2) or [])


@needs_two
def test_nothing_is_bound_with_ramiel_bind_0(monkeypatch):
    monkeypatch.setenv(binding.ENV_DISABLE, "0")
    with start(AFFINITY, None, backend="inline", threads_per_worker=2) as r:
        n, cores = r()
        assert n.item() == 1
        assert [c for c in cores.tolist() if c >= 0] == CORES


@needs_two
def test_a_second_binding_of_the_same_cores_stays_unbound_until_they_are_free():
    """Two programs called at the same time from two threads of one process: the second team
    is not pinned onto the cores the first one holds (found by a fresh-user check)."""
    first = HelperBinding([CORES[0], CORES[1]], CORES, own_thread=False)
    second = HelperBinding([CORES[0], CORES[1]], CORES, own_thread=False)

    def bind(b):
        def run():
            torch.set_num_threads(2)
            b.apply(2, 2)
            return b.bound, [_affinity(t) for t in b.helpers or []]

        return run

    bound1, aff1 = _in_thread(bind(first))
    assert bound1 and aff1 == [{CORES[1]}]
    bound2, aff2 = _in_thread(bind(second))
    assert not bound2 and all(a == set(CORES) for a in aff2)
    first.release()
    bound2, aff2 = _in_thread(bind(second))
    assert bound2
    second.release()
    assert not binding._claimed


def _own_cores(out):
    def cluster(ch, w):
        cores = sorted(os.sched_getaffinity(0))
        ch.put(out, torch.tensor(cores + [-1] * (len(CORES) - len(cores))))

    return cluster


TWO_WORKERS = Program(
    name="two_workers",
    clusters={"c0": _own_cores("a__out"), "c1": _own_cores("b__out")},
    channels={
        "a__out": ChannelSpec("c0", None, (max(1, len(CORES)),), torch.int64),
        "b__out": ChannelSpec("c1", None, (max(1, len(CORES)),), torch.int64),
    },
    inputs={},
    outputs={"a": "a__out", "b": "b__out"},
)


@needs_two
@pytest.mark.parametrize("backend", ["threads", "processes"])
def test_one_thread_workers_run_on_a_core_each_while_the_cores_are_free(monkeypatch, backend):
    """Two clusters of one thread each: each worker's thread on a core of its own (after an idle
    pause the kernel would otherwise wake a worker onto the core of the thread that woke it), and
    nothing bound while another process keeps a core busy."""
    monkeypatch.delenv(binding.ENV_DISABLE, raising=False)
    monkeypatch.delenv(contention.ENV_DISABLE, raising=False)
    monkeypatch.setattr(runner_mod, "CoreMonitor", StandInMonitor)
    mine = os.sched_getaffinity(0)

    def cores(r):
        return [[c for c in t.tolist() if c >= 0] for t in r()]

    with start(TWO_WORKERS, None, backend=backend, threads_per_worker=1, timeout_s=120) as r:
        StandInMonitor.others = 0.0
        assert cores(r) == [[CORES[0]], [CORES[1]]] and not r.crowded
        StandInMonitor.others = 1.0  # another process holds a core: run anywhere
        assert cores(r) == [CORES, CORES] and r.crowded and r.threads_now == 1
        StandInMonitor.others = 0.0
        assert cores(r) == [[CORES[0]], [CORES[1]]] and not r.crowded
    assert os.sched_getaffinity(0) == mine
    assert not binding._claimed  # the cores are free for the next program of this process


@needs_two
def test_a_program_waiting_for_its_next_call_holds_no_core(monkeypatch):
    """Claims last one inference: a program that waits for its next request leaves the cores to
    another program of the process (found by a fresh-user check: an idle one-cluster program
    kept both cores claimed, and a 2-cluster program started after it never bound), and a
    calling thread that ended leaves no binding behind."""
    monkeypatch.delenv(binding.ENV_DISABLE, raising=False)
    monkeypatch.delenv(contention.ENV_DISABLE, raising=False)
    monkeypatch.setattr(runner_mod, "CoreMonitor", StandInMonitor)
    StandInMonitor.others = 0.0
    with start(AFFINITY, None, backend="inline", threads_per_worker=2) as first:
        for _ in range(2):  # from two threads, one after the other
            n, cores = _in_thread(first)
            assert n.item() == 1 and [c for c in cores.tolist() if c >= 0] == [CORES[1]]
        assert len(first._bindings) == 1  # the first thread's is gone with it
        assert not binding._claimed  # idle: nothing held
        with start(TWO_WORKERS, None, backend="threads", threads_per_worker=1) as second:
            got = [[c for c in t.tolist() if c >= 0] for t in second()]
            assert got == [[CORES[0]], [CORES[1]]]
            assert not binding._claimed
        n, cores = first()  # and the first one binds again
        assert [c for c in cores.tolist() if c >= 0] == [CORES[1]]
    assert not binding._claimed
