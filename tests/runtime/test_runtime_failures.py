"""Failure paths of the runtime: errors, deaths, hangs, misuse; never a hang, never a leak."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time

import pytest
import torch

from ramiel.errors import RuntimeFailure
from ramiel.runtime import (
    ChannelError,
    ChannelSpec,
    InputMismatch,
    Program,
    ProgramError,
    RunnerClosed,
    WorkerDied,
    WorkerError,
    WorkerTimeout,
    start,
)

F32 = torch.float32
X = torch.ones(2, 3)


@pytest.fixture(autouse=True)
def no_leaks():
    yield
    assert multiprocessing.active_children() == []
    stray = [t for t in threading.enumerate() if t.name.startswith("ramiel-")]
    assert stray == []


def first(ch, w):
    x = ch.get("x__c0")
    ch.put("a__c0_c1", x + 1)


def last(ch, w):
    b = ch.get("b__c1_c2")
    ch.put("y__out", b * 2)


def three(name: str, middle, threads: dict[str, int] | None = None) -> Program:
    """c0 -> c1 (``middle``) -> c2: c2 blocks on c1 when c1 misbehaves. ``threads``: the
    clusters that set their own intra-op threads (the threads backend runs the widest in the
    caller's thread)."""
    return Program(
        name=name,
        clusters={"c0": first, "c1": middle, "c2": last},
        channels={
            "x__c0": ChannelSpec(None, "c0", (2, 3), F32),
            "a__c0_c1": ChannelSpec("c0", "c1", (2, 3), F32),
            "b__c1_c2": ChannelSpec("c1", "c2", (2, 3), F32),
            "y__out": ChannelSpec("c2", None, (2, 3), F32),
        },
        inputs={"x": ["x__c0"]},
        outputs={"y": "y__out"},
        max_threads=max((threads or {}).values(), default=1),
        threads=dict(threads or {}),
    )


def ok_c1(ch, w):
    ch.put("b__c1_c2", ch.get("a__c0_c1") - 1)


def raise_c1(ch, w):
    a = ch.get("a__c0_c1")
    if a.sum() > 100:
        raise ValueError(f"boom: sum is {a.sum().item():g}")
    ch.put("b__c1_c2", a)


def kill_c1(ch, w):
    ch.get("a__c0_c1")
    os.kill(os.getpid(), signal.SIGKILL)


HANG = threading.Event()


def hang_thread_c1(ch, w):
    HANG.wait(30)
    ch.put("b__c1_c2", ch.get("a__c0_c1"))


def hang_process_c1(ch, w):
    time.sleep(60)


def bad_shape_c1(ch, w):
    ch.put("b__c1_c2", ch.get("a__c0_c1")[:1])


def no_put_c1(ch, w):
    ch.get("a__c0_c1")


def unknown_get_c1(ch, w):
    ch.get("nope")


def wrong_way_c1(ch, w):
    ch.get("b__c1_c2")


def twice_c1(ch, w):
    a = ch.get("a__c0_c1")
    ch.put("b__c1_c2", a)
    ch.put("b__c1_c2", a)


BACKENDS = ["threads", "processes", "inline"]
CONCURRENT = ["threads", "processes"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_cluster_raises(backend):
    r = start(three("raises", raise_c1), backend=backend, timeout_s=30)
    assert torch.equal(r(X)[0], (X + 1) * 2)  # fine while the sum is small
    with pytest.raises(WorkerError) as info:
        r(X * 100)
    err = info.value
    assert err.cluster == "c1"
    assert err.exc_type == "builtins.ValueError"
    assert "boom: sum is 606" in str(err)
    assert "cluster 'c1' raised ValueError" in str(err)
    assert "raise_c1" in err.remote_traceback and "boom" in err.remote_traceback
    assert isinstance(err, RuntimeFailure)
    assert r.closed
    with pytest.raises(RunnerClosed, match="after a failure"):
        r(X)
    r.close()  # idempotent


def test_worker_killed():
    r = start(three("killed", kill_c1), backend="processes", timeout_s=60)
    t0 = time.monotonic()
    with pytest.raises(WorkerDied) as info:
        r(X)
    assert time.monotonic() - t0 < 30  # generous: detection is by the process sentinel, not polling
    assert info.value.cluster == "c1"
    assert info.value.exitcode == -signal.SIGKILL
    assert "killed by signal 9" in str(info.value)
    with pytest.raises(RunnerClosed):
        r(X)


def test_worker_killed_between_inferences():
    with start(three("idle_kill", ok_c1), backend="processes") as r:
        assert torch.equal(r(X)[0], X * 2)
        pids = r.pids
        assert set(pids) == {"c0", "c1", "c2"}
        os.kill(pids["c2"], signal.SIGKILL)
        with pytest.raises(WorkerDied, match="cluster 'c2'"):
            r(X)


def test_thread_hang_times_out():
    HANG.clear()
    r = start(three("hang", hang_thread_c1), backend="threads", timeout_s=0.5)
    try:
        with pytest.raises(WorkerTimeout) as info:
            r(X)
        assert info.value.clusters == ["c1", "c2"]
        assert "0.5 s" in str(info.value)
        assert [t.name for t in r.stuck_threads] == ["ramiel-hang-c1"]
        # the interpreter's exit waits for it (a worker still inside PyTorch while the
        # interpreter tore down aborted the process: status 134)
        from ramiel.runtime import threads as threads_backend

        assert r.stuck_threads[0] in threads_backend._stuck
        HANG.set()
        threads_backend._join_stuck_at_exit()
        assert not r.stuck_threads[0].is_alive()
    finally:
        HANG.set()
        for t in r.stuck_threads:
            t.join(10)


def test_process_hang_times_out():
    r = start(three("hang", hang_process_c1), backend="processes", timeout_s=0.5)
    with pytest.raises(WorkerTimeout, match="'c1', 'c2'"):
        r(X)
    assert r.closed


@pytest.mark.parametrize(
    ("middle", "exc", "pattern"),
    [
        (
            bad_shape_c1,
            WorkerError,
            r"put \(1, 3\) float32 on channel 'b__c1_c2', declared \(2, 3\)",
        ),
        (unknown_get_c1, WorkerError, "cannot get channel 'nope': no such channel"),
        (wrong_way_c1, WorkerError, "cannot get channel 'b__c1_c2': it goes to cluster 'c2'"),
        (twice_c1, WorkerError, "put channel 'b__c1_c2' twice"),
        (no_put_c1, ChannelError, "'c1' finished the inference without putting channel 'b__c1_c2'"),
    ],
)
@pytest.mark.parametrize("backend", BACKENDS)
def test_channel_misuse(backend, middle, exc, pattern):
    r = start(three("misuse", middle), backend=backend, timeout_s=30)
    with pytest.raises(exc, match=pattern):
        r(X)
    assert r.closed


@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_inputs_leave_runner_usable(backend):
    with start(three("inputs", ok_c1), backend=backend) as r:
        with pytest.raises(
            InputMismatch, match=r"input 'x': expected \(2, 3\) float32, got \(3, 3\)"
        ):
            r(torch.ones(3, 3))
        with pytest.raises(InputMismatch, match="expected .* float32, got .* float64"):
            r(torch.ones(2, 3, dtype=torch.float64))
        with pytest.raises(InputMismatch, match="missing 'x'"):
            r.run({})
        with pytest.raises(InputMismatch, match="unknown 'z'"):
            r.run({"x": X, "z": X})
        with pytest.raises(InputMismatch, match="not a torch.Tensor|expected a torch.Tensor"):
            r.run({"x": [[1.0] * 3] * 2})
        with pytest.raises(InputMismatch, match="takes 1 input"):
            r(X, X)
        assert isinstance(InputMismatch("x"), ValueError)
        assert not r.closed
        assert torch.equal(r.run({"x": X.numpy()})["y"], X * 2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_closed_runner(backend):
    r = start(three("closed", ok_c1), backend=backend)
    r.close()
    r.close()
    with pytest.raises(RunnerClosed, match="is closed"):
        r(X)


def test_spawn_rejects_unimportable_function():
    def local_c1(ch, w):  # a closure: a spawned worker cannot import it
        ok_c1(ch, w)

    with pytest.raises(ProgramError, match="cannot be re-imported"):
        start(three("local", local_c1), backend="processes", start_method="spawn")


def test_fork_accepts_local_function():
    def local_c1(ch, w):
        ok_c1(ch, w)

    with start(three("local", local_c1), backend="processes", start_method="fork") as r:
        assert torch.equal(r(X)[0], X * 2)


def test_unknown_backend_and_option():
    with pytest.raises(ValueError, match="unknown backend"):
        start(three("x", ok_c1), backend="gpu")
    with pytest.raises(TypeError):
        start(three("x", ok_c1), backend="threads", no_such_option=1)


# ----------------------------------------------------- the cluster run in the caller's thread
RAN_IN: dict[str, str] = {}


def where_c0(ch, w):
    RAN_IN["c0"] = threading.current_thread().name
    first(ch, w)


def where_c2(ch, w):
    RAN_IN["c2"] = threading.current_thread().name
    torch.set_num_threads(2)  # as a cluster of --intra-op-threads does
    last(ch, w)


def test_caller_runs_the_widest_cluster():
    p = three("widest", ok_c1, threads={"c2": 2})
    p.clusters["c0"] = where_c0
    p.clusters["c2"] = where_c2
    caller_threads = torch.get_num_threads()
    with start(p, backend="threads", timeout_s=30) as r:
        assert p.widest_cluster() == "c2"
        workers = sorted(t.name for t in threading.enumerate() if t.name.startswith("ramiel-"))
        assert workers == ["ramiel-widest-c0", "ramiel-widest-c1"]  # no thread for c2
        for k in range(3):
            assert torch.equal(r(X * k)[0], (X * k + 1 - 1) * 2)
            ran = dict(RAN_IN)
            assert ran == {"c0": "ramiel-widest-c0", "c2": threading.current_thread().name}
            assert torch.get_num_threads() == caller_threads  # restored after the call


def test_threads_per_worker_above_one_runs_the_first_cluster_in_the_caller():
    p = three("tpw", ok_c1)
    p.clusters["c0"] = where_c0
    assert p.widest_cluster() is None
    with start(p, backend="threads", threads_per_worker=2, timeout_s=30) as r:
        assert torch.equal(r(X)[0], X * 2)
        assert RAN_IN["c0"] == threading.current_thread().name


def test_caller_cluster_raises():
    r = start(three("caller_raises", raise_c1, threads={"c1": 2}), backend="threads", timeout_s=30)
    assert torch.equal(r(X)[0], (X + 1) * 2)
    with pytest.raises(WorkerError) as info:
        r(X * 100)
    assert info.value.cluster == "c1"
    assert "boom: sum is 606" in str(info.value)
    assert r.closed  # the workers (c0, c2) were stopped; no_leaks checks their threads ended


def test_caller_cluster_waits_on_a_failing_worker():
    r = start(three("worker_raises", raise_c1, threads={"c2": 2}), backend="threads", timeout_s=30)
    with pytest.raises(WorkerError) as info:
        r(X * 100)
    assert info.value.cluster == "c1"
    assert r.closed


def test_caller_cluster_waits_on_a_hung_worker():
    HANG.clear()
    r = start(
        three("caller_hang", hang_thread_c1, threads={"c2": 2}), backend="threads", timeout_s=0.5
    )
    try:
        t0 = time.monotonic()
        with pytest.raises(WorkerTimeout) as info:
            r(X)
        assert time.monotonic() - t0 < 10
        assert info.value.clusters == ["c1", "c2"]  # c0 finished; c2 is the caller's
        assert [t.name for t in r.stuck_threads] == ["ramiel-caller_hang-c1"]
    finally:
        HANG.set()
        for t in r.stuck_threads:
            t.join(10)
