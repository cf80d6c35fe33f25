"""The benchmark machinery (:mod:`ramiel.bench`, ``ramiel bench``) on a tiny two-branch model.

Behaviour, not speed: interleaving and stopping rules with a fake clock, the configurations, the
report files (markdown, JSON, PNG, Chrome trace) of a ``--quick`` run, and the trace's rows, boxes
and transfer arrows.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from ramiel import bench, measure
from ramiel.bench import run as bench_run

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")


def _tiny_model(path: str) -> str:
    """x[1,4,16,16] -> two conv branches -> concat -> global average pool -> flatten."""
    rng = np.random.default_rng(0)

    def init(name: str, shape: tuple[int, ...]) -> onnx.TensorProto:
        return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)

    nodes = [
        helper.make_node("Conv", ["x", "wa", "ba"], ["a0"], name="conv_a", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["a0"], ["a1"], name="relu_a"),
        helper.make_node("Conv", ["x", "wb", "bb"], ["b0"], name="conv_b"),
        helper.make_node("Relu", ["b0"], ["b1"], name="relu_b"),
        helper.make_node("Conv", ["b1", "wc", "bc"], ["b2"], name="conv_c", pads=[1, 1, 1, 1]),
        helper.make_node("Concat", ["a1", "b2"], ["cat"], name="concat", axis=1),
        helper.make_node("GlobalAveragePool", ["cat"], ["gap"], name="gap"),
        helper.make_node("Flatten", ["gap"], ["y"], name="flatten"),
    ]
    graph = helper.make_graph(
        nodes,
        "tiny_branches",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])],
        [
            init("wa", (8, 4, 3, 3)),
            init("ba", (8,)),
            init("wb", (8, 4, 1, 1)),
            init("bb", (8,)),
            init("wc", (8, 8, 3, 3)),
            init("bc", (8,)),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return path


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> str:
    return _tiny_model(str(tmp_path_factory.mktemp("model") / "tiny.onnx"))


@pytest.fixture(scope="module")
def quick_run(tiny: str, tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("bench")
    calls: list[tuple[int, int]] = []  # the progress reports (models done, models)
    results, env, md = bench.run_bench(
        [tiny],
        workers=2,
        out_dir=str(out),
        json_path=str(out / "extra.json"),
        quick=True,
        malloc_tuning=False,  # process-wide: not in the test process
        progress=lambda d, t: calls.append((d, t)),
    )
    return results, env, md, out, calls


# ----------------------------------------------------------------------------- pure machinery


class _FakeClock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_measure_interleaved_rotates_round_robin_and_stops_when_stable() -> None:
    clock = _FakeClock()
    calls: list[str] = []

    def fn(key: str, ms: float):
        def f() -> None:
            calls.append(key)
            clock.t += ms / 1e3

        return f

    plan = bench.Plan(warmup=1, min_reps=4, max_reps=50, budget_s=100.0, rel_ci=0.05, gap_s=0.5)
    gaps: list[float] = []
    out = bench.measure_interleaved(
        {"a": fn("a", 2.0), "b": fn("b", 5.0)}, plan, clock, sleep=gaps.append
    )
    assert gaps == [0.5] * 8  # an untimed pause before every timed call
    # warm-up once each, then rounds in rotating order; constant times are stable at min_reps.
    assert calls == ["a", "b"] + ["a", "b", "b", "a"] * 2
    assert out["a"].n == out["b"].n == 4
    assert out["a"].median == pytest.approx(2.0)
    assert out["b"].min == pytest.approx(5.0) and out["b"].max == pytest.approx(5.0)


def test_measure_interleaved_lets_a_spinning_configuration_settle() -> None:
    """A configuration whose threads spin after it returns (onnxruntime's default) gets an
    untimed pause after each of its calls, warm-up included, so the next one starts on quiet
    cores; the others only the plan's gap."""
    clock = _FakeClock()
    events: list[object] = []

    def fn(key: str):
        def f() -> None:
            events.append(key)
            clock.t += 0.001

        return f

    plan = bench.Plan(warmup=1, min_reps=2, max_reps=2, budget_s=100.0, rel_ci=1.0, gap_s=0.015)
    out = bench.measure_interleaved(
        {"a": fn("a"), "spin": fn("spin")},
        plan,
        clock,
        sleep=events.append,
        settle_after={"spin": bench.SPIN_SETTLE_S},
    )
    settle, gap = bench.SPIN_SETTLE_S, 0.015
    assert events == [
        *("a", "spin", settle),  # warm-up
        *(gap, "a", gap, "spin", settle),  # round 1
        *(gap, "spin", settle, gap, "a"),  # round 2, in rotated order
    ]
    assert out["a"].n == out["spin"].n == 2 and settle >= 0.05


def test_measure_interleaved_runs_until_max_reps_when_noisy() -> None:
    clock = _FakeClock()
    noise = iter(np.random.default_rng(1).uniform(1.0, 10.0, size=1000))

    def noisy() -> None:
        clock.t += next(noise) / 1e3

    plan = bench.Plan(warmup=0, min_reps=3, max_reps=12, budget_s=100.0, rel_ci=0.001, gap_s=0)
    out = bench.measure_interleaved({"n": noisy}, plan, clock)
    assert out["n"].n == 12
    t = out["n"]
    assert t.min <= t.ci[0] <= t.median <= t.ci[1] <= t.max
    assert len(t.samples) == 12


def test_median_and_its_confidence_interval() -> None:
    assert bench.median_of([1.0, 2.0, 3.0]) == 2.0
    assert bench.median_of([1.0, 2.0, 3.0, 4.0]) == 2.5
    s = [float(i) for i in range(100)]
    lo, hi = bench.median_ci(s)
    assert 38 <= lo <= 41 and 58 <= hi <= 61


def test_configs_for_two_and_four_workers() -> None:
    keys = [c.key for c in bench.configs_for(2)]
    assert keys == [
        "seq-1t",
        "seq-2t",
        "par-threads-2x1",
        "par-processes-2x1",
        "par-threads-2xH",
        "par-processes-2xH",
        "par-threads-1xH",
        "tuned",
        "default",
        "ort-1t",
        "ort-2t",
        "ort-2t-spin",
        "ort-par-2",
    ]
    spin = {c.key: c for c in bench.configs_for(2)}["ort-2t-spin"]
    assert spin.spinning and spin.threads == 2 and "spinning (its default)" in spin.label
    tuned = bench.configs_for(2)[7]
    assert tuned.tuned and tuned.threads == 2 and "ramiel tune" in tuned.label
    hybrid = {c.key: c for c in bench.configs_for(2) if c.hybrid}
    assert hybrid["par-threads-1xH"].clusters == 1 and hybrid["par-threads-2xH"].threads == 2
    four = {c.key: c for c in bench.configs_for(4)}
    assert {"par-threads-2x2", "par-threads-3x1", "par-threads-4x1"} <= set(four)
    assert four["par-processes-2x2"].threads == 2 and four["ort-par-4"].ort_parallel
    assert [c.key for c in bench.configs_for(1)] == ["seq-1t", "default", "ort-1t"]
    default = bench.configs_for(2)[8]
    assert default.default and default.clusters == 2 and "ramiel.compile(model)" in default.label


def test_variant_configurations_without_and_with_task_parallelism() -> None:
    """Each variant: the sequential module on 1 and P threads, and P clusters of 1 thread."""
    keys = [c.key for c in bench.configs_for(2, ["compiled", "nofold"]) if c.variant]
    assert keys == [
        "seq-1t-compiled",
        "seq-2t-compiled",
        "par-threads-2x1-compiled",
        "seq-1t-nofold",
        "seq-2t-nofold",
        "par-threads-2x1-nofold",
    ]
    c = next(c for c in bench.configs_for(2, ["compiled"]) if c.key == "seq-2t-compiled")
    assert c.threads == 2 and "torch.compile" in c.label
    assert bench.variants()["compiled"][1] == {"compile": True}
    assert bench.variants()["nofold"][1] == {"disable": ("all",)}
    assert bench.variants()["nchw"][1] == {"layout": "nchw"}  # the compiler has the option
    assert bench.variants()["onednn-graph"][1] == {"compile": "onednn-graph"}
    assert bench.variants()["eager"][1] == {"compile": False}
    assert bench.default_variants() == ["eager", "onednn-graph", "nofold", "nchw"]
    with pytest.raises(ValueError, match="unknown variant"):
        bench.configs_for(2, ["fast"])


def test_ratio_interval_from_the_medians_intervals() -> None:
    a = bench.Timing(10.0, 9.0, 12.0, 20, (9.5, 10.5))
    b = bench.Timing(20.0, 18.0, 22.0, 20, (19.0, 21.0))
    r, lo, hi = bench.ratio_ci(a, b)  # type: ignore[misc]
    assert r == pytest.approx(0.5)
    assert lo == pytest.approx(9.5 / 21.0) and hi == pytest.approx(10.5 / 19.0)
    assert bench.ratio_ci(a, None) is None


def test_measure_quiet_busy_interleaves_quiet_and_busy_blocks(monkeypatch) -> None:
    """Blocks of quiet calls alternate with blocks run inside busy_core (one untimed call after
    the spinner starts); each side gets rounds x calls samples."""
    import contextlib

    state = {"busy": False}
    seen: list[bool] = []

    @contextlib.contextmanager
    def fake_busy_core():
        state["busy"] = True
        yield None
        state["busy"] = False

    monkeypatch.setattr(measure, "busy_core", fake_busy_core)
    quiet, busy = bench.measure_quiet_busy(
        lambda: seen.append(state["busy"]), rounds=2, calls=2, warmup=1, gap_s=0
    )
    q, b = False, True
    assert seen == [q] + [q, q] + [b, b, b] + [q, q] + [b, b, b]
    assert quiet.n == busy.n == 4


def test_busy_core_spins_in_a_process_of_its_own_and_stops() -> None:
    with bench.busy_core(settle_s=0.3) as proc:
        assert proc.poll() is None  # running
        with open(f"/proc/{proc.pid}/stat") as f:
            utime = int(f.read().rsplit(")", 1)[1].split()[11])
        assert utime > 0  # it has been burning CPU
    assert proc.poll() is not None


def test_resolve_models(tiny: str) -> None:
    assert [m.name for m in bench.resolve_models([tiny])] == ["tiny"]
    assert bench.resolve_models(["inception_v1"])[0].name == "light_inception_v1"
    assert bench.resolve_models(["inception"])[0].project == "inception"
    defaults = [m.name for m in bench.default_models()]
    assert "light_densenet121" in defaults and defaults[-2:] == [
        "ramiel_inception",
        "ramiel_transformer",
    ]
    with pytest.raises(ValueError, match="unknown model"):
        bench.resolve_models(["no_such_model"])


# --------------------------------------------------------------------------------- a quick run


def test_quick_run_times_every_configuration(quick_run) -> None:
    results, env, _md, _out, calls = quick_run
    assert calls == [(0, 1), (1, 1)]  # progress: before the one model and after it
    (r,) = results
    assert r.error is None, r.error
    assert [c.key for c in r.configs] == [
        c.key for c in bench.configs_for(2, bench.default_variants())
    ]
    for c in r.configs:
        assert c.error is None, (c.key, c.error)
        assert c.timing is not None and c.timing.n == 3
        assert c.timing.min <= c.timing.median <= c.timing.max
        assert c.max_rel_err is not None and c.max_rel_err < 1e-4
    assert r.config("seq-1t").speedup == pytest.approx(1.0)  # type: ignore[union-attr]
    assert r.config("par-threads-2x1").est_makespan_ms > 0  # type: ignore[union-attr,operator]
    assert set(r.compile_s) == {"import", "passes", "lower", "print"}
    assert r.work_ms and r.cp_ms and r.work_ms >= r.cp_ms
    assert r.bound == pytest.approx(min(2.0, r.work_ms / r.cp_ms))
    assert set(r.efficiency) == {"par-threads-2x1", "par-processes-2x1"}
    assert env.workers == 2 and env.quick and env.load_after is not None
    # the default program, and once more under one busy background core (quick: 1 x 3 calls)
    assert r.config("default").actual_clusters in (1, 2)  # type: ignore[union-attr]
    assert r.busy_quiet is not None and r.busy_busy is not None
    assert r.busy_quiet.n == r.busy_busy.n == 3


def test_quick_run_writes_markdown_json_and_plot(quick_run) -> None:
    results, _env, md, out, _calls = quick_run
    assert (out / "bench.md").read_text() == md
    assert "| tiny |" in md and "par-threads-2x1" in md and "load average" in md
    assert "quick" in md
    data = json.loads((out / "bench.json").read_text())
    assert json.loads((out / "extra.json").read_text()) == data
    assert set(data) == {"environment", "models"}
    m = data["models"][0]
    assert m["name"] == "tiny"
    assert len(m["configs"]) == len(bench.configs_for(2, bench.default_variants()))
    # against onnxruntime with the same cores, the variants, the busy background core
    assert "## Against onnxruntime (same cores, P = 2)" in md
    assert "## Compile-option variants" in md and "| tiny | nofold |" in md
    assert "| tiny | nchw |" in md
    assert "## One busy background core" in md
    # ramiel tune ran, chose one of its candidates, and its program was timed with the others
    assert m["tuned_choice"] in {c["key"] for c in m["tuned_candidates"]}
    tc = next(c for c in m["configs"] if c["key"] == "tuned")
    assert tc["tuned"] and tc["timing"]["n"] >= 1
    assert "tuned vs best seq" in md and "`ramiel tune`" in md
    assert len(m["configs"][0]["timing"]["samples"]) == 3
    png = (out / "speedups.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


def test_trace_has_cluster_rows_statement_boxes_and_transfer_flows(quick_run) -> None:
    results, *_ = quick_run
    path = results[0].trace_path
    assert path and os.path.isfile(path)
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    rows = {
        e["tid"]: e["args"]["name"]
        for e in events
        if e.get("ph") == "M" and e.get("name") == "thread_name"
    }
    clusters = sorted(v for v in rows.values() if v.startswith("cluster "))
    assert clusters == ["cluster c0", "cluster c1"]
    names = {e["name"] for e in events if e.get("ph") == "X"}
    # one box per generated statement, named after its ONNX node and result (channels-last: the
    # prepacked conv_a runs relu_a fused, its result is a1)
    assert {"conv_a Conv -> a1", "conv_c Conv -> b2", "concat Concat -> cat"} <= names, names
    puts = {n[4:] for n in names if n.startswith("put ")}
    gets = {n[4:] for n in names if n.startswith("get ")}
    starts = [e for e in events if e.get("ph") == "s"]
    ends = [e for e in events if e.get("ph") == "f"]
    assert puts & gets  # at least one cluster-to-cluster transfer in a two-branch model
    assert len(starts) == len(ends) == len(puts & gets)
    for e in starts:
        assert rows.get(e["tid"], "").startswith("cluster ")


def test_driver_bench_subcommand(tiny: str, tmp_path, capsys) -> None:
    from ramiel.tools.driver import main

    js = tmp_path / "b.json"
    rc = main(
        ["bench", tiny, "--quick", "--workers", "2", "--out", str(tmp_path), "--json", str(js)]
        + ["--no-trace", "--no-malloc-tuning"]
    )
    assert rc == 0
    assert "| tiny |" in capsys.readouterr().out
    assert json.loads(js.read_text())["models"][0]["trace_path"] is None
    assert main(["bench", "no_such_model", "--quick", "--out", str(tmp_path)]) == 1


def test_tune_malloc_in_a_fresh_process() -> None:
    import subprocess
    import sys

    code = "from ramiel.bench import tune_malloc; import sys; sys.exit(0 if tune_malloc() else 3)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_write_markdown_replaces_only_the_marked_part(tmp_path) -> None:
    doc = tmp_path / "benchmarks.md"
    bench.write_markdown(str(doc), "# Ramiel benchmarks\n\nfirst\n")
    assert doc.read_text() == "# Ramiel benchmarks\n\nfirst\n"
    doc.write_text(
        f"# Benchmarks\n\nfindings stay\n\n{bench.BEGIN_MARK}\nold table\n{bench.END_MARK}\n\nend\n"
    )
    bench.write_markdown(str(doc), "# Ramiel benchmarks\n\nnew table\n")
    text = doc.read_text()
    assert text.startswith("# Benchmarks\n\nfindings stay\n")
    assert "new table" in text and "old table" not in text and text.endswith("\n\nend\n")


def test_machine_probes_return_sane_numbers() -> None:
    assert bench.machine_scaling(1) is None
    s = bench.machine_scaling(2, work_ms=5.0, repeats=1)
    assert s is not None and s > 0  # ~2 on an idle 2-core machine; a loaded one gives anything
    meter = bench.CpuMeter()
    sum(i * i for i in range(200_000))  # some work of our own, not counted as "other"
    other = meter.other_cores()
    assert other is None or other >= 0.0


def test_timing_is_repeated_while_the_machine_is_busy(tiny: str, tmp_path, monkeypatch) -> None:
    busy = iter([1.5, 0.9, 0.0])  # other processes' cores during attempts 1, 2, 3

    def other_cores(self) -> float:
        # ramiel profile (run by the bench before the timing) meters its own noise: quiet there
        caller = sys._getframe(1).f_globals.get("__name__")
        return next(busy) if caller == "ramiel.bench.run" else 0.0

    monkeypatch.setattr(bench.CpuMeter, "other_cores", other_cores)
    monkeypatch.setattr(bench_run, "machine_scaling", lambda p, **kw: 2.0)
    waits: list[float] = []
    monkeypatch.setattr(bench_run, "wait_quiet", lambda cores, timeout: waits.append(cores) or True)
    plan = bench.BenchPlan(warmup=0, min_reps=2, max_reps=2, budget_s=5.0, gap_s=0.0, attempts=3)
    spec = bench.resolve_models([tiny])[0]
    r = bench.bench_model(spec, 2, str(tmp_path), plan, trace=False)
    assert r.error is None, r.error
    assert r.attempts == 3 and waits == [0.25, 0.25]
    assert r.other_cores == 0.0 and r.machine_scaling == [2.0, 2.0]
    assert "Timed 3 times" in bench.render_markdown([r], bench.Environment.capture("x", 2, False))


def test_reports_render_again_from_the_json(quick_run, tmp_path) -> None:
    _results, _env, md, out, _calls = quick_run
    results, env, md2 = bench.run_bench(
        [], out_dir=str(tmp_path), render_from=str(out / "bench.json"), malloc_tuning=False
    )
    assert md2 == md
    assert results[0].config("par-threads-2x1").timing.n == 3  # type: ignore[union-attr]
    assert (tmp_path / "speedups.png").is_file() and not (tmp_path / "bench.json").exists()


def test_a_model_name_with_markdown_in_it_stays_one_cell_in_every_table(quick_run) -> None:
    """A model named ``a|b`` (a file ``a|b.onnx``): every table row of the report has as many
    cells as its table's header (the ratio, variant and busy-core tables had printed the raw
    name, one more cell; a fresh-user check)."""
    import dataclasses
    import re

    results, env, _md, _out, _calls = quick_run
    md = bench.render_markdown([dataclasses.replace(results[0], name="a|b`c")], env)
    cells = 0
    for line in md.splitlines():
        if not line.startswith("|"):
            cells = 0
            continue
        n = len(re.findall(r"(?<!\\)\|", line))
        if cells == 0:
            cells = n  # a table's header
        assert n == cells, line
    assert md.count("a\\|b\\`c") >= 3


@pytest.mark.parametrize(
    "module",
    [
        "import os\nos._exit(3)\n",
        # the pipe closes a second before the process exits: the caller sees the end of the pipe
        # while the process is not reaped yet (what a loaded machine does), and must wait for it
        "import os, time\nos.closerange(3, 4096)\ntime.sleep(1.0)\nos._exit(3)\n",
    ],
    ids=["exits", "closes-then-exits"],
)
def test_isolated_process_that_dies_at_start_is_reported_at_once(tmp_path, module) -> None:
    """A configuration process that dies before it answers (here: its generated module exits
    while being imported) is an error within a second or so, not after the whole timeout, and
    with its exit code."""
    import time

    from ramiel.compiler import CompileResult

    (tmp_path / "model.py").write_text(module)
    fake = CompileResult(
        out_dir=str(tmp_path),
        parallel_path=str(tmp_path / "model.py"),
        sequential_path=str(tmp_path / "model_seq.py"),
        weights_path=str(tmp_path / "weights.safetensors"),
        ir_path=str(tmp_path / "model.mlir"),
        report=None,
        timings={},
        clusters=1,
    )
    proc = bench.Isolated(bench.Recipe("par", {}, [], result=fake, options=None), timeout_s=120)
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match=r"died \(exit code 3\)"):
        proc.wait_ready()
    assert time.monotonic() - t0 < 60
    assert not proc.proc.is_alive()


def test_isolated_started_from_a_script_without_a_main_guard_is_an_error_not_a_hang(
    tiny: str, tmp_path
) -> None:
    """A user's script that starts a configuration process without ``if __name__ ==
    "__main__":`` makes the spawned child fail while it imports the script. With a recipe
    larger than a pipe's buffer (the inputs: 1 MB here) the parent used to block forever in
    multiprocessing's write of the arguments; now it reports the child's death."""
    script = tmp_path / "no_guard.py"
    script.write_text(
        "import numpy as np\n"
        "from ramiel import bench\n"
        "x = np.zeros((1, 4, 256, 256), np.float32)\n"
        f"proc = bench.Isolated(bench.Recipe('ort', {{'x': x}}, ['y'], path={tiny!r}), 60)\n"
        "for ask in (proc.wait_ready, proc, proc.outputs):\n"
        "    try:\n"
        "        ask()\n"
        "    except RuntimeError as e:\n"
        "        print('REPORTED', e)\n"
    )
    env = {**os.environ, "ORT_DISABLE_TELEMETRY": "1"}
    r = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, env=env
    )
    # each of the three calls (a call or outputs() without wait_ready() had escaped as a bare
    # BrokenPipeError: found by a fresh-user check)
    assert r.stdout.count("REPORTED configuration process died (exit code 1)") == 3, (
        r.stdout + r.stderr
    )
    # the child's own error (multiprocessing's) says what to do
    assert "freeze_support" in r.stderr or "__main__" in r.stderr


def test_ort_recipe_builds_a_session_with_the_configured_executor(tiny: str) -> None:
    """An ``ort`` Recipe runs onnxruntime on the model file in the configuration's own process
    (sequential at 2 intra-op threads, or the parallel executor) with the same results as a plain
    session; ort_session binds input shapes of a model given as bytes too."""
    import onnxruntime as ort

    from ramiel.engines import ort_session

    x = np.random.default_rng(1).standard_normal((1, 4, 16, 16)).astype(np.float32)
    ref = ort.InferenceSession(tiny, providers=["CPUExecutionProvider"]).run(None, {"x": x})
    for extra in ({"threads": 2}, {"inter_op": 2}):
        proc = bench.Isolated(bench.Recipe("ort", {"x": x}, ["y"], path=tiny, **extra), 120)
        try:
            # without wait_ready() first: the answers had been one message behind (the first
            # call returned the ready message's report; found by a fresh-user check)
            assert isinstance(proc(), measure.Measured)
            assert proc.wait_ready() == []
            assert bench.rel_error(proc.outputs(), ref) < 1e-6
        finally:
            proc.close()
    with open(tiny, "rb") as f:
        sess = ort_session(f.read(), threads=1, input_shapes={"x": [1, 4, 16, 16]})
    np.testing.assert_allclose(sess.run(None, {"x": x})[0], ref[0], rtol=1e-6)


def test_ort_session_takes_a_newer_ir_version_and_its_errors_keep_the_reason(tmp_path) -> None:
    """A model of IR version 14 (``onnx.helper.make_model``'s default with onnx 1.23), which this
    onnxruntime refuses: the session gets it with the IR version onnxruntime names ('ramiel run'
    could not check such a model). onnxruntime's errors lose the C++ signature before their
    reason (cut at 300 characters, the reason had been lost; a fresh-user check)."""
    import onnx
    from onnx import TensorProto, helper

    from ramiel.engines import ort_error_text, ort_session

    vi = helper.make_tensor_value_info
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "g",
        [vi("x", TensorProto.FLOAT, [2])],
        [vi("y", TensorProto.FLOAT, [2])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=14)
    onnx.save(model, tmp_path / "m.onnx")
    for source in (str(tmp_path / "m.onnx"), model.SerializeToString()):
        out = ort_session(source).run(None, {"x": np.array([-1.0, 2.0], np.float32)})
        np.testing.assert_array_equal(out[0], [0.0, 2.0])
    raw = (
        "[ONNXRuntimeError] : 1 : FAIL : /onnxruntime_src/onnxruntime/core/graph/model.cc:256 "
        "onnxruntime::Model::Model(onnx::ModelProto&&, const onnxruntime::PathString&, const "
        "onnxruntime::ModelOptions&) Unsupported model IR version: 15, max supported IR version: 13"
    )
    assert ort_error_text(RuntimeError(raw)) == (
        "FAIL: Unsupported model IR version: 15, max supported IR version: 13"
    )
    opset = (  # a return type first, templates and spaces in the arguments (helper-31)
        "[ONNXRuntimeError] : 1 : FAIL : /onnxruntime_src/onnxruntime/core/graph/"
        "model_load_utils.h:46 void onnxruntime::model_load_utils::ValidateOpsetForDomain(const "
        "std::unordered_map<std::__cxx11::basic_string<char>, int>&, bool, const std::string&, "
        "int) ONNX Runtime only *guarantees* support for models stamped with official released "
        "onnx opset versions."
    )
    assert ort_error_text(RuntimeError(opset)) == (
        "FAIL: ONNX Runtime only *guarantees* support for models stamped with official released "
        "onnx opset versions."
    )
    plain = "[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : Invalid Feed Input Name:x"
    assert ort_error_text(RuntimeError(plain)) == "INVALID_ARGUMENT: Invalid Feed Input Name:x"
    assert ort_error_text(RuntimeError("x" * 500), limit=50).startswith("...")


def test_recipe_of_an_unknown_kind_or_without_a_path_is_a_clear_error() -> None:
    from ramiel.engines import _build

    with pytest.raises(ValueError, match="kind 'gpu' is none of"):
        _build(bench.Recipe("gpu", {}, []))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="needs the model's path"):
        _build(bench.Recipe("ort", {}, []))


def test_the_one_core_report_says_so_instead_of_comparing_1_with_1() -> None:
    one = bench.render_markdown([], bench.Environment.capture("x", 1, False))
    assert "P = 1: one core, so no parallel configuration is timed" in one
    assert "1 or 1" not in one and "seq-1t, seq-1t" not in one and "-1x1 schedule" not in one
    two = bench.render_markdown([], bench.Environment.capture("x", 2, False))
    assert "with 1 or 2 intra-op threads" in two and "(seq-1t, seq-2t)" in two


def test_a_traced_bench_prints_no_profiler_chatter(tiny: str, tmp_path) -> None:
    """libkineto wrote 'USDT: ... profiler_start' / 'profiler_stop' lines on stderr for every
    trace; ramiel bench keeps its output to its own progress and report."""
    env = {k: v for k, v in os.environ.items() if k != "KINETO_LOG_LEVEL"}
    argv = ["bench", tiny, "--quick", "--workers", "2", "--out", str(tmp_path), "--variants"]
    argv += ["none", "--no-busy-core", "--no-malloc-tuning"]
    code = "import sys; from ramiel.tools.driver import main; sys.exit(main(sys.argv[1:]))"
    p = subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, text=True, env=env, timeout=600
    )
    assert p.returncode == 0, p.stderr[-2000:]
    assert (tmp_path / "traces" / "tiny.json").is_file()
    assert "USDT" not in p.stderr + p.stdout


def test_render_of_a_results_file_with_a_mistyped_field_is_one_error(quick_run, tmp_path):
    """A bench.json whose cp_ms is a string was an internal error of the report (TypeError);
    other malformed files were already one error naming the file (found by a fresh-user
    check)."""
    from ramiel.errors import RamielError

    _results, _env, _md, out, _calls = quick_run
    data = json.loads((out / "bench.json").read_text())
    data["models"][0]["work_ms"], data["models"][0]["cp_ms"] = None, "x"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(RamielError, match=r"bad.json is not a ramiel bench results file .*type"):
        bench.run_bench([], out_dir=str(tmp_path / "r"), render_from=str(bad), malloc_tuning=False)
    assert not (tmp_path / "r").exists()


def test_a_failed_model_reads_as_ramiel_s_message(tmp_path):
    """An empty .onnx among the models is a row with Ramiel's message (it showed the internal
    class name 'ImportError_: ...'; found by a fresh-user check); other exceptions keep their
    type."""
    from ramiel.bench.run import _error_text
    from ramiel.errors import ImportError_, RamielError

    assert _error_text(ImportError_("m.onnx: not an ONNX model")) == "m.onnx: not an ONNX model"
    assert _error_text(RamielError("x")) == "x"
    assert _error_text(KeyError("k")) == "KeyError: 'k'"
    empty = tmp_path / "empty.onnx"
    empty.write_bytes(b"")
    results, _env, _md = bench.run_bench(
        [str(empty)], out_dir=str(tmp_path / "r"), quick=True, malloc_tuning=False
    )[:3]
    assert results[0].error and "ImportError_" not in results[0].error
    assert "empty.onnx" in results[0].error


def test_trace_names_with_quotes_and_backslashes_read_back(tmp_path):
    """A node or channel name with ``"``, a backslash or a newline, as a profiler label: torch's
    ``export_chrome_trace`` writes names unescaped, so ``ramiel bench`` of a node named ``a"b``
    failed to read its own trace (found by a fresh-user check); the labels replace them."""
    import torch

    from ramiel.bench.trace import _profiler_name

    name = _profiler_name('put conv "1"\\x\nn')
    assert name == "put conv '1'/x n"
    cpu = [torch.profiler.ProfilerActivity.CPU]
    with torch.profiler.profile(activities=cpu) as prof, torch.profiler.record_function(name):
        torch.ones(2).add_(1)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    names = {e.get("name") for e in json.loads(path.read_text())["traceEvents"]}
    assert name in names
