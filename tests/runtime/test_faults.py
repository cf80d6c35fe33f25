"""Fault injection into running programs, both backends (issue #13, class 2).

Each fault has one defined behaviour, in bounded time, and leaves nothing behind:

==============================  ==============================================================
fault                           behaviour
==============================  ==============================================================
worker killed (idle, running)   ``WorkerDied`` with the signal, at once; the runner is closed
worker stopped (SIGSTOP)        ``WorkerTimeout`` with ``stopped`` set, in ~``STOPPED_S``, not
                                after the 60 s inference timeout
SIGINT in the caller            ``KeyboardInterrupt`` re-raised after the workers are stopped
six threads' first calls        one runner (one set of workers) for the model
call after ``close()``          ``RunnerClosed``; no worker is started again
inputs on another device        ``InputMismatch``; the runner stays usable
no ``__main__`` guard, ``-c``,  the program runs: workers never re-import the caller's main
``python -``                    (forkserver and spawn)
==============================  ==============================================================

"Leaves nothing behind": after every test the process has the same child processes, Python
threads, file descriptors and shared-memory files as before (:func:`resources`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import onnx
import pytest
import torch
from conftest import ZOO_DIR, gather_model

import ramiel
from ramiel.runtime import (
    ChannelSpec,
    InputMismatch,
    Program,
    RunnerClosed,
    WorkerDied,
    WorkerError,
    WorkerTimeout,
    start,
)
from ramiel.runtime.processes import STOPPED_S

F32 = torch.float32
X = torch.ones(2, 3)
SQUEEZENET = os.path.join(ZOO_DIR, "light_squeezenet.onnx")


# ------------------------------------------------------------------------------ leak accounting


def _children() -> set[int]:
    """Live (or zombie) child processes of this process, found in /proc (not only the ones
    multiprocessing knows); multiprocessing's forkserver and resource tracker, started once and
    kept for the life of the process, are not counted."""
    from multiprocessing import forkserver, resource_tracker

    helpers = {
        getattr(forkserver._forkserver, "_forkserver_pid", None),
        getattr(resource_tracker._resource_tracker, "_pid", None),
    }
    me = os.getpid()
    out = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if int(fields[1]) == me and int(entry) not in helpers:
            out.add(int(entry))
    return out


def _fds() -> dict[int, str]:
    out = {}
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # the listing's own descriptor, closed meanwhile
            out[int(fd)] = os.readlink(f"/proc/self/fd/{fd}")
    return out


def resources() -> dict[str, object]:
    """What a runner may leak: child processes, ``ramiel-`` threads, file descriptors (shared
    memory is held through descriptors: torch's file_descriptor strategy unlinks at once) and
    the /dev/shm files named after this process."""
    me = str(os.getpid())
    shm = sorted(n for n in os.listdir("/dev/shm") if me in n) if os.path.isdir("/dev/shm") else []
    return {
        "children": _children(),
        "threads": sorted(t.name for t in threading.enumerate() if t.name.startswith("ramiel-")),
        "fds": _fds(),
        "shm": shm,
    }


@pytest.fixture(autouse=True)
def no_leaks():
    """Every test ends with exactly the resources it started with."""
    # warm-up: the forkserver and torch's shared-memory manager keep descriptors for good
    before = resources()
    yield
    deadline = time.monotonic() + 10
    while True:
        after = resources()
        if after == before or time.monotonic() > deadline:
            break
        time.sleep(0.1)  # a process that was just killed may still be being reaped
    assert after["children"] == before["children"], "leaked child processes"
    assert after["threads"] == before["threads"], "leaked threads"
    new_fds = {fd: p for fd, p in after["fds"].items() if before["fds"].get(fd) != p}  # type: ignore[union-attr]
    assert not new_fds, f"leaked file descriptors: {new_fds}"
    assert after["shm"] == before["shm"], "leaked shared-memory files"


@pytest.fixture(scope="module", autouse=True)
def _warm_forkserver():
    """Start the forkserver once before the leak accounting (it lives as long as the process)."""
    r = start(_program("warm", _relay), backend="processes", start_method="forkserver")
    r.close()


# ------------------------------------------------------------------------------------ programs


def _first(ch, w):
    ch.put("a__c0_c1", ch.get("x__c0") + 1)


def _relay(ch, w):
    ch.put("y__out", ch.get("a__c0_c1") * 2)


def _slow(ch, w):
    a = ch.get("a__c0_c1")
    time.sleep(3.0)
    ch.put("y__out", a * 2)


def _program(name: str, second) -> Program:
    return Program(
        name=name,
        clusters={"c0": _first, "c1": second},
        channels={
            "x__c0": ChannelSpec(None, "c0", (2, 3), F32),
            "a__c0_c1": ChannelSpec("c0", "c1", (2, 3), F32),
            "y__out": ChannelSpec("c1", None, (2, 3), F32),
        },
        inputs={"x": ["x__c0"]},
        outputs={"y": "y__out"},
    )


def _later(seconds: float, fn, *args) -> threading.Timer:
    t = threading.Timer(seconds, fn, args)
    t.daemon = True
    t.start()
    return t


# ------------------------------------------------------------------------- processes: signals


@pytest.mark.parametrize("when", ["idle", "running"])
@pytest.mark.parametrize("method", ["fork", "forkserver"])
def test_killed_worker_is_worker_died(when, method):
    r = start(_program("kill", _slow), backend="processes", start_method=method, timeout_s=60)
    assert torch.equal(r(X)[0], (X + 1) * 2)
    pid = r.pids["c1"]
    if when == "idle":
        os.kill(pid, signal.SIGKILL)
        time.sleep(0.2)
    else:
        _later(0.5, os.kill, pid, signal.SIGKILL)
    t0 = time.monotonic()
    with pytest.raises(WorkerDied) as info:
        r(X)
    assert time.monotonic() - t0 < 10
    assert info.value.cluster == "c1" and info.value.exitcode == -signal.SIGKILL
    assert r.closed
    with pytest.raises(RunnerClosed):
        r(X)


@pytest.mark.parametrize("when", ["idle", "running"])
def test_stopped_worker_is_reported_long_before_the_timeout(when):
    r = start(_program("stop", _slow), backend="processes", timeout_s=60)
    r(X)
    pid = r.pids["c1"]
    if when == "idle":
        os.kill(pid, signal.SIGSTOP)
    else:
        _later(0.5, os.kill, pid, signal.SIGSTOP)
    t0 = time.monotonic()
    with pytest.raises(WorkerTimeout) as info:
        r(X)
    took = time.monotonic() - t0
    assert STOPPED_S <= took < 15, took  # the inference timeout is 60 s
    assert info.value.stopped == ["c1"] and "is stopped (SIGSTOP" in str(info.value)
    assert r.closed  # and the stopped worker was killed (the leak check sees no child)


def test_stop_that_ends_is_not_a_failure():
    """A worker stopped and continued within STOPPED_S (job control) only delays the inference."""
    with start(_program("pause", _slow), backend="processes", timeout_s=60) as r:
        r(X)
        pid = r.pids["c1"]
        _later(0.2, os.kill, pid, signal.SIGSTOP)
        _later(0.2 + STOPPED_S / 4, os.kill, pid, signal.SIGCONT)
        assert torch.equal(r(X)[0], (X + 1) * 2)


@pytest.mark.parametrize("backend", ["threads", "processes"])
def test_interrupt_stops_the_workers_and_is_re_raised(backend):
    r = start(_program("interrupt", _slow), backend=backend, timeout_s=60)
    r(X)
    _later(0.5, os.kill, os.getpid(), signal.SIGINT)
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        r(X)
    assert time.monotonic() - t0 < 10
    assert r.closed
    if backend == "threads":  # the sleeping worker thread finishes its sleep, then exits
        for t in r.stuck_threads:
            t.join(10)


@pytest.mark.parametrize("backend", ["threads", "processes"])
def test_a_second_interrupt_while_the_workers_stop_is_held(backend):
    """Ctrl-C twice: the second one comes while the runner stops its workers after the first.
    One KeyboardInterrupt, not a second one chained to it from the middle of the shutdown, and
    the workers are stopped all the same (the fixture checks that nothing leaked)."""
    r = start(_program("interrupt2", _slow), backend=backend, timeout_s=60)
    r(X)
    _later(0.5, os.kill, os.getpid(), signal.SIGINT)
    _later(0.7, os.kill, os.getpid(), signal.SIGINT)  # the worker still sleeps: mid-shutdown
    with pytest.raises(KeyboardInterrupt) as info:
        r(X)
    assert info.value.__context__ is None
    assert r.closed
    time.sleep(0.5)  # the held signal is not delivered later either
    for t in getattr(r, "stuck_threads", []):
        t.join(10)


def test_interrupt_while_the_caller_runs_a_cluster():
    """threads backend with intra-op threads: the caller's thread runs a cluster itself."""
    program = _program("caller", _slow)
    program.threads = {"c1": 2}
    program.max_threads = 2
    r = start(program, backend="threads", timeout_s=60)
    r(X)
    _later(0.5, os.kill, os.getpid(), signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        r(X)
    assert r.closed


# ------------------------------------------------------------------- both backends: misuse


@pytest.mark.parametrize("backend", ["threads", "processes"])
def test_call_after_close(backend, tmp_path):
    model = ramiel.compile(SQUEEZENET, clusters=2, backend=backend, out_dir=str(tmp_path))
    x = torch.randn(1, 3, 224, 224)
    model(x)
    model.close()
    before = _children()
    with pytest.raises(RunnerClosed, match="is closed"):
        model(x)
    with pytest.raises(RunnerClosed):
        model.run({"data_0": x})
    assert _children() == before  # no worker started again
    assert model.sequential(x).shape == (1, 1000, 1, 1)  # no workers needed
    model.close()  # idempotent


def test_call_after_a_failure_starts_new_workers(tmp_path):
    """A compiled model whose worker died: the call that sees it is WorkerDied, and the next one
    starts new workers and computes (it had been RunnerClosed, for good: one failure disabled
    the module; helper-22); ``last_failure`` keeps what stopped the old ones."""
    model = ramiel.compile(SQUEEZENET, clusters=2, backend="processes", out_dir=str(tmp_path))
    x = torch.randn(1, 3, 224, 224)
    model(x)
    (first, pid), *_ = model.runner.pids.items()
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while not model.runner.dead_workers() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert f"the worker of {first} died" in repr(model)
    with pytest.raises(WorkerDied):
        model(x)
    assert isinstance(model.runner.failure, WorkerDied)
    assert "stopped after a failure (WorkerDied); the next call starts new workers" in repr(model)
    old_pids = set(model.runner.pids.values())
    torch.testing.assert_close(model(x), model.sequential(x), rtol=1e-3, atol=1e-5)
    assert isinstance(model.last_failure, WorkerDied)
    assert not old_pids & set(model.runner.pids.values()) and "running" in repr(model)
    model.close()
    with pytest.raises(RunnerClosed, match="is closed"):
        model(x)


@pytest.mark.parametrize("backend", ["threads", "processes"])
def test_six_threads_first_call_start_one_runner(backend, tmp_path):
    model = ramiel.compile(SQUEEZENET, clusters=2, backend=backend, out_dir=str(tmp_path))
    x = torch.randn(1, 3, 224, 224)
    expected = model.sequential(x)
    barrier = threading.Barrier(6)
    results: list[object] = [None] * 6
    runners: set[int] = set()

    def call(i):
        barrier.wait()
        results[i] = model(x)
        runners.add(id(model._runner))

    try:
        threads = [threading.Thread(target=call, args=(i,)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert len(runners) == 1
        if backend == "processes":
            assert _children() == set(model._runner.pids.values())  # one worker per cluster
        for y in results:
            torch.testing.assert_close(y, expected, rtol=1e-4, atol=1e-5)
    finally:
        model.close()


@pytest.mark.parametrize("backend", ["threads", "processes", "inline"])
@pytest.mark.parametrize(
    "make",
    [
        lambda: torch.ones(2, 3, device="meta"),
        lambda: torch.ones(2, 3).to_sparse(),
    ],
    ids=["meta", "sparse"],
)
def test_inputs_that_are_not_dense_cpu_tensors(backend, make):
    with start(_program("device", _relay), backend=backend) as r:
        with pytest.raises(InputMismatch, match="expected a dense CPU tensor"):
            r(make())
        assert torch.equal(r(X)[0], (X + 1) * 2)  # still usable


# ------------------------------------------------------ mains: no guard, python -c, python -

_SCRIPT = textwrap.dedent(
    """
    import multiprocessing, sys
    import torch
    import ramiel
    from ramiel.runtime import load_program, start

    print("main module runs", flush=True)  # must be printed once: workers never re-run it
    model_path, out, methods = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
    model = ramiel.compile(model_path, clusters=2, backend="processes", out_dir=out)
    x = torch.randn(4, 64)
    ref = model.sequential(x)
    program = load_program(model.result.parallel_path)
    for method in methods:
        if method == "auto":  # intra-op threads in a parent that used its OpenMP pool
            torch.set_num_threads(2)
            torch.randn(256, 256) @ torch.randn(256, 256)
            options = dict(threads_per_worker=2)
        else:
            options = dict(start_method=method)
        with start(program, model.weights_namespace(), backend="processes", **options) as run:
            y = run(x)[0]
            chosen = run.start_method
        assert torch.allclose(y, ref, rtol=1e-4, atol=1e-5), method
        print(method, chosen, "ok", flush=True)
    model.close()
    print("children after close:", len(multiprocessing.active_children()), flush=True)
    """
)


def _two_branch_model(path: str) -> str:
    """A small model with two independent branches (two clusters), quick to compile."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    w1 = numpy_helper.from_array(rng.standard_normal((64, 64)).astype(np.float32), "w1")
    w2 = numpy_helper.from_array(rng.standard_normal((64, 64)).astype(np.float32), "w2")
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["a"]),
        helper.make_node("Tanh", ["a"], ["b"]),
        helper.make_node("MatMul", ["x", "w2"], ["c"]),
        helper.make_node("Sigmoid", ["c"], ["d"]),
        helper.make_node("Add", ["b", "d"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "two_branch",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 64])],
        [w1, w2],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


@pytest.mark.parametrize(
    "how,methods",
    [("script", "forkserver,spawn,auto"), ("-c", "auto"), ("stdin", "auto")],
)
def test_processes_backend_from_unguarded_mains(how, methods, tmp_path):
    model = _two_branch_model(str(tmp_path / "two_branch.onnx"))
    args = [model, str(tmp_path / "out"), methods]
    env = dict(os.environ, ORT_DISABLE_TELEMETRY="1")
    if how == "script":
        script = tmp_path / "unguarded.py"
        script.write_text(_SCRIPT)
        cmd, stdin = [sys.executable, str(script), *args], None
    elif how == "-c":
        cmd, stdin = [sys.executable, "-c", _SCRIPT, *args], None
    else:
        cmd, stdin = [sys.executable, "-", *args], _SCRIPT
    proc = subprocess.run(
        cmd, input=stdin, capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert lines.count("main module runs") == 1, proc.stdout
    expected = [f"{m} {'forkserver' if m == 'auto' else m} ok" for m in methods.split(",")]
    assert lines[1:] == [*expected, "children after close: 0"], proc.stdout


def test_workers_that_would_start_workers_get_a_clear_error(tmp_path):
    """A program defined in an unguarded script must be imported by its spawned workers; the
    script then starts a runner at import time, which the worker refuses with advice."""
    script = tmp_path / "selfstart.py"
    script.write_text(
        textwrap.dedent(
            """
            import torch
            from ramiel.runtime import ChannelSpec, Program, start

            def c0(ch, w):
                ch.put("y__out", ch.get("x__c0") + 1)

            prog = Program("p", {"c0": c0},
                           {"x__c0": ChannelSpec(None, "c0", (2,), torch.float32),
                            "y__out": ChannelSpec("c0", None, (2,), torch.float32)},
                           {"x": ["x__c0"]}, {"y": "y__out"})
            with start(prog, backend="processes", start_method="spawn") as run:
                print(run(torch.ones(2)))
            """
        )
    )
    proc = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("ramiel.runtime.program.WorkerError: cluster 'c0' raised"), last
    assert 'under if __name__ == "__main__":' in last, last


@pytest.mark.parametrize(
    ("clusters", "backend"), [(1, "threads"), (2, "threads"), (2, "processes")]
)
def test_a_bad_input_fails_its_call_only(clusters, backend, tmp_path):
    """An index out of range is the failing call's WorkerError; the next call with good inputs
    computes (the module had raised RunnerClosed on every later call, even with one cluster
    run in the caller's thread; helper-22)."""
    model = gather_model()
    a = torch.randn(3, 4)
    with ramiel.compile(model, clusters=clusters, backend=backend, out_dir=str(tmp_path)) as m:
        torch.testing.assert_close(m(a, torch.tensor([0, 3]))[0], a[:, [0, 3]])
        with pytest.raises(WorkerError, match="index 9 is out of bounds") as raised:
            m(a, torch.tensor([0, 9]))
        assert m.last_failure is raised.value  # known from the failing call on
        for _ in range(2):
            g, n = m(a, torch.tensor([1, 2]))
            torch.testing.assert_close(g, a[:, [1, 2]])
            torch.testing.assert_close(n, -torch.relu(a))
        assert isinstance(m.last_failure, WorkerError)


@pytest.mark.parametrize(("clusters", "backend"), [(1, "threads"), (2, "processes")])
def test_a_bad_input_in_one_thread_fails_no_call_of_another(clusters, backend, tmp_path):
    """Two threads share the module, one with an index out of range every call: its calls raise
    WorkerError, and every call of the other thread computes (they had failed with RunnerClosed
    quoting the other thread's error, 23-24 of 25; found by a fresh-user check)."""
    from onnx import TensorProto, helper

    vi = helper.make_tensor_value_info
    graph = helper.make_graph(
        [helper.make_node("Gather", ["a", "idx"], ["g"], axis=1)],
        "gather",
        [vi("a", TensorProto.FLOAT, [3, 4]), vi("idx", TensorProto.INT64, [2])],
        [vi("g", TensorProto.FLOAT, [3, 2])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    a = torch.randn(3, 4)
    good, bad = torch.tensor([1, 3]), torch.tensor([0, 9])
    results: dict[str, list] = {"good": [], "bad": []}

    def calls(kind: str, idx: torch.Tensor) -> None:
        for _ in range(12):
            try:
                results[kind].append(m(a, idx))
            except Exception as e:  # noqa: BLE001 - what each call raised is the test
                results[kind].append(e)

    with ramiel.compile(model, clusters=clusters, backend=backend, out_dir=str(tmp_path)) as m:
        threads = [threading.Thread(target=calls, args=k) for k in (("good", good), ("bad", bad))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=240)
        assert not any(t.is_alive() for t in threads)
        with pytest.raises(
            InputMismatch, match=r"takes a dict of input name -> tensor, not a list"
        ):
            m.run([a, good])  # (an AttributeError from inside Ramiel before)
    assert all(isinstance(r, WorkerError) for r in results["bad"]), results["bad"]
    assert len(results["good"]) == 12
    for r in results["good"]:
        assert isinstance(r, torch.Tensor), r
        torch.testing.assert_close(r, a[:, [1, 3]])


def test_processes_backend_in_a_daemonic_process_is_one_clear_error(monkeypatch):
    """A processes-backend program started in a ``multiprocessing.Pool`` worker (daemonic, so
    it may not have children): a ProgramError that says so and names the threads backend (the
    standard library's bare ``AssertionError`` had come through; a fresh-user check)."""
    import types

    from ramiel.runtime import ProgramError, processes

    monkeypatch.setattr(processes.mp, "current_process", lambda: types.SimpleNamespace(daemon=True))
    with pytest.raises(ProgramError, match=r"daemonic process .* use backend='threads'"):
        start(_program("daemonic", _slow), backend="processes")
