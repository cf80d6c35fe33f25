"""The benchmark scripts of bench/ that docs/benchmarks.md quotes: their tables come back from the
recorded raw data, bad arguments are one usage error, and the op-by-op check finds no difference
where there is none."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _script(name: str):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(
        f"bench_{name}", os.path.join(ROOT, "bench", f"{name}.py")
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_scaling_splits_are_powers_of_two_using_every_core():
    scaling = _script("scaling")
    assert scaling._splits(1) == []
    assert scaling._splits(2) == [(2, 1)]
    assert scaling._splits(16) == [(2, 8), (4, 4), (8, 2), (16, 1)]
    assert scaling._splits(6) == [(2, 3), (4, 1)]


def test_scaling_renders_the_recorded_run(capsys):
    """The 16-core table of docs/benchmarks.md from bench/results/scaling_h200.json."""
    scaling = _script("scaling")
    path = os.path.join(ROOT, "bench", "results", "scaling_h200.json")
    assert scaling.main(["--render", path]) == 0
    out = capsys.readouterr().out
    rows = {}
    model = None
    for line in out.splitlines():
        if line.startswith("## "):
            model = line.split()[1]
        elif model and line.split() and line.split()[0].isdigit():
            rows[(model, int(line.split()[0]))] = line
    # the fastest program of each core count: one core is seq-1t (not default-16, whose key
    # starts with default-1), 16 cores the 4 x 4 split for the project's inception CNN
    assert " seq-1t " in rows[("ramiel_inception", 1)]
    assert " par-4x4 " in rows[("ramiel_inception", 16)]
    assert "18.78 [18.34, 19.52] (16 cl.)" in rows[("ramiel_inception", 16)]
    with open(path) as f:
        rec = json.load(f)
    assert rec["cores"] == [1, 2, 4, 8, 16]
    assert len(rec["models"]["light_inception_v2"]["timings"]) == 25


def test_scaling_renders_the_second_run_with_the_new_default(capsys):
    """The re-measured default split on 16 cores (bench/results/scaling_h200_default.json): the
    default program makes 4 clusters for the inception CNN and 2 for the zoo's inception models."""
    scaling = _script("scaling")
    path = os.path.join(ROOT, "bench", "results", "scaling_h200_default.json")
    assert scaling.main(["--render", path]) == 0
    out = capsys.readouterr().out
    assert "13.38 [13.01, 13.98] (4 cl.)" in out
    assert "18.01 [17.09, 19.10] (2 cl.)" in out
    assert "17.54 [16.77, 17.85] (2 cl.)" in out


def test_device_run_rejects_an_unknown_step(tmp_path):
    env = dict(os.environ, SKIP_INSTALL="1", STEPS="scaling-typo", OUT=str(tmp_path))
    p = subprocess.run(
        ["bash", os.path.join(ROOT, "bench", "device_run.sh")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 2
    assert "unknown step scaling-typo" in p.stdout


@pytest.mark.parametrize("cores", ["0", "a,b", ""])
def test_scaling_bad_cores_is_a_usage_error(cores, capsys):
    scaling = _script("scaling")
    with pytest.raises(SystemExit) as e:
        scaling.main(["--cores", cores])
    assert e.value.code == 2
    assert "--cores wants a comma list of positive integers" in capsys.readouterr().err


def test_op_diff_finds_nothing_on_a_consistent_kernel(capsys):
    op_diff = _script("op_diff")
    assert op_diff.main(["light_squeezenet", "--threads", "2"]) == 0
    out = capsys.readouterr().out
    assert "output error against onnxruntime 0;" in out
    assert ", 0 differ by more than" in out and " aten ops recomputed on cpu at 1 thread" in out


def test_op_diff_reports_an_op_whose_recomputation_differs():
    import torch

    check = _script("op_diff")._checker("cpu", torch.get_num_threads())
    with check:
        torch.rand(5)  # another draw each time: its recomputation differs
        torch.ones(3) * 2  # the same each time
    assert check.ops == 3
    assert len(check.mismatches) == 1 and check.mismatches[0].startswith("aten.rand")


@pytest.mark.parametrize(
    ("script", "argv", "message"),
    [
        ("scaling", ["no_such_model", "--cores", "1"], "unknown model 'no_such_model'"),
        ("scaling", ["--render", "/no/such.json"], "not a bench/scaling.py --json file"),
        ("scaling", ["--render", os.path.join(ROOT, "README.md")], "not a bench/scaling.py"),
        ("op_diff", ["no_such_model"], "unknown model 'no_such_model'"),
        ("op_diff", ["light_squeezenet", "--threads", "0"], "--threads must be at least 1"),
        ("op_diff", ["light_squeezenet", "--device", "nowhere"], "is not a device"),
        ("op_diff", ["light_squeezenet", "--device", "meta"], "is not a device"),
        ("scaling", ["--budget", "0"], "--budget must be a positive number"),
        ("scaling", ["--json", "/no/such/dir/x.json"], "cannot write it"),
        ("cuda_modules", ["--calls", "0"], "--calls must be at least 1"),
        ("idle_gap", ["no_such_model"], "unknown model 'no_such_model'"),
        ("idle_gap", ["--gaps", "0,soon"], "--gaps: comma-separated seconds"),
        ("idle_gap", ["--calls", "0"], "must be at least 1"),
        ("idle_gap", ["--gaps", "-1"], "each 0 or more"),
        ("idle_gap", ["--gaps", "nan"], "each 0 or more"),
        ("idle_gap", ["--out", ROOT], "is a directory"),
        ("idle_gap", ["--out", os.path.join(ROOT, "README.md", "x.txt")], "is not a directory"),
        ("two_programs", ["--out", ROOT], "is a directory"),
        ("two_programs", ["--model", "no_such_model"], "unknown model 'no_such_model'"),
        ("cuda_modules", ["--device", "nowhere"], "is not a device"),
        ("start_cost", ["--gaps", "soon"], "argument --gaps: numbers separated by commas"),
        ("start_cost", ["--calls", "0"], "must be at least 1"),
        ("start_cost", ["--gaps", "-1"], "gaps from 0 to 10 s"),
        ("start_cost", ["--gaps", "nan"], "gaps from 0 to 10 s"),
        ("call_overhead", ["--calls", "0"], "must be at least 1"),
        ("call_overhead", ["no_such_model"], "unknown model 'no_such_model'"),
        ("call_overhead", ["--out", ROOT], "is a directory"),
        ("default_vs_ort", ["--calls", "0"], "must be at least 1"),
        ("default_vs_ort", ["--gap", "-1"], "seconds from 0 to 10"),
        ("default_vs_ort", ["--pause", "nan"], "seconds from 0 to 10"),
        ("default_vs_ort", ["no_such_model"], "unknown model 'no_such_model'"),
        ("default_vs_ort", ["--out", ROOT], "is a directory"),
    ],
)
def test_bad_arguments_are_one_usage_error(script, argv, message, capsys):
    with pytest.raises(SystemExit) as e:
        _script(script).main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_start_cost_times_the_three_ways(capsys):
    """bench/start_cost.py (the measurement behind cost_model.PARALLEL_START_US) runs its three
    configurations and prints one row each."""
    assert _script("start_cost").main(["--calls", "3", "--rounds", "1", "--gaps", "0"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if not line.startswith("#")]
    assert [r.split("  ")[0] for r in rows[1:]] == [
        "2 clusters",
        "1 cluster (inline)",
        "the two ops called directly",
    ]


def test_compile_stages_times_both_verifications(tmp_path, capsys):
    """bench/compile_stages.py compiles a model with the incremental verification and with every
    op checked after every pass, and leaves the verifier as it found it."""
    from onnx import TensorProto, helper, save

    from ramiel import parsing

    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Neg", ["r"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
    )
    model = tmp_path / "m.onnx"
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), model)
    before = parsing.IncrementalVerifier.verify
    out = tmp_path / "t.txt"
    assert _script("compile_stages").main([str(model), "--repeat", "1", "--out", str(out)]) == 0
    assert parsing.IncrementalVerifier.verify is before
    rows = [ln.split() for ln in out.read_text().splitlines() if not ln.startswith("#")][1:]
    assert [r[1] for r in rows] == ["incremental", "every"]
    for r in rows:  # total and verification seconds (2 decimals: a tiny model's may be 0.00)
        assert 0 <= float(r[-1]) <= float(r[-2])


def test_default_vs_ort_times_each_way(tmp_path, capsys):
    """bench/default_vs_ort.py checks a model against onnxruntime, then prints one row: the
    five medians (the sequential module also with RAMIEL_ADAPT_THREADS=0) and the two ratios to
    onnxruntime, and writes the same table to --out; with --busy also the table next to a busy
    core and each configuration's busy/quiet."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper, save

    w = numpy_helper.from_array(np.random.default_rng(0).random((16, 16), np.float32), "W")
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["t"]), helper.make_node("Relu", ["t"], ["y"])],
        "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])],
        [w],
    )
    path = str(tmp_path / "tiny.onnx")
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), path)
    out = str(tmp_path / "table.txt")
    argv = [path, "--rounds", "1", "--calls", "2", "--pause", "0", "--out", out]
    assert _script("default_vs_ort").main(argv) == 0
    (row,) = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("tiny")]
    assert row.count("[") == 7 and row.count("x [") == 2, row
    with open(out) as f:
        assert row in f.read().splitlines()
    assert _script("default_vs_ort").main([*argv, "--busy"]) == 0
    with open(out) as f:
        text = f.read()
    ratios = text.split("# busy/quiet")[1].splitlines()
    assert ratios[1].split() == ["model", "default", "seq", "seq-fixed", "ort", "spin"]
    assert ratios[2].startswith("tiny") and ratios[2].count("x [") == 5, ratios


def test_ab_seq_times_two_compilations_of_a_model(tmp_path, capsys, monkeypatch):
    """bench/ab_seq.py loads both compilations into one process, checks that they compute the
    same, and prints the B / A ratio; a directory without a compilation is a usage error."""
    from onnx import TensorProto, helper

    from ramiel.compiler import CompileOptions, compile_model

    vi = helper.make_tensor_value_info
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Neg", ["r"], ["y"])],
        "g",
        [vi("x", TensorProto.FLOAT, [2, 3])],
        [vi("y", TensorProto.FLOAT, [2, 3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    for d in ("A", "B"):
        compile_model(model, str(tmp_path / d / "tiny"), CompileOptions(clusters=1))
    ab = _script("ab_seq")
    monkeypatch.setenv("RAMIEL_ADAPT_THREADS", "0")  # main sets it: restored after the test
    out = tmp_path / "ab.txt"
    argv = [str(tmp_path / "A"), str(tmp_path / "B"), "tiny", "--rounds", "3", "--calls", "2"]
    assert ab.main([*argv, "--threads", "1", "--out", str(out)]) == 0
    (row,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("tiny")]
    assert " B/A " in row and row.endswith("max |A - B| 0.00e+00"), row
    assert row in out.read_text()
    with pytest.raises(SystemExit) as e:
        ab.main([str(tmp_path / "A"), str(tmp_path), "tiny"])
    assert e.value.code == 2
    assert "no model_seq.py" in capsys.readouterr().err
