"""``ramiel tune``: candidates, the choice (the fastest median of its own timing), the files it
keeps, and that the chosen program computes what onnxruntime does."""

from __future__ import annotations

import json
import os

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper

from ramiel.compiler import CompiledModel
from ramiel.tools.driver import main
from ramiel.tune import PROGRAM_FILES, candidates_for, tune


def _fork_join(path: str) -> str:
    """x -> two heavy conv branches -> concat: worth two clusters."""
    rng = np.random.default_rng(0)
    inits, nodes = [], []
    for b in ("l", "r"):
        w1 = rng.standard_normal((32, 16, 3, 3)).astype(np.float32) * 0.1
        w2 = rng.standard_normal((32, 32, 3, 3)).astype(np.float32) * 0.1
        inits += [
            onnx.numpy_helper.from_array(w1, f"{b}w1"),
            onnx.numpy_helper.from_array(w2, f"{b}w2"),
        ]
        nodes += [
            helper.make_node(
                "Conv", ["x", f"{b}w1"], [f"{b}1"], pads=[1, 1, 1, 1], name=f"{b}conv1"
            ),
            helper.make_node("Relu", [f"{b}1"], [f"{b}2"], name=f"{b}relu"),
            helper.make_node(
                "Conv", [f"{b}2", f"{b}w2"], [f"{b}3"], pads=[1, 1, 1, 1], name=f"{b}conv2"
            ),
        ]
    nodes.append(helper.make_node("Concat", ["l3", "r3"], ["y"], axis=1, name="join"))
    g = helper.make_graph(
        nodes,
        "fork_join",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 32, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64, 32, 32])],
        inits,
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8  # what onnxruntime reads
    onnx.save(m, path)
    return path


def test_candidates():
    keys = [c.key for c in candidates_for(2, "p.json", onednn_graph=False)]
    assert keys == ["1x1", "1x2", "1xH", "2x1", "2xH"]
    by = {c.key: c.options for c in candidates_for(4, "p.json", onednn_graph=False)}
    assert (by["1x4"].clusters, by["1x4"].threads_per_worker, by["1x4"].cores) == (1, 4, None)
    assert (by["1xH"].clusters, by["1xH"].cores) == (1, 4)
    assert (by["4x1"].clusters, by["4x1"].threads_per_worker) == (4, 1)
    assert (by["4xH"].clusters, by["4xH"].cores) == (4, 4)
    assert all(o.profile == "p.json" and o.backend == "threads" for o in by.values())
    assert [c.key for c in candidates_for(1, None, onednn_graph=False)] == ["1x1"]
    assert [c.key for c in candidates_for(1, None)] == ["1x1", "1x1-onednn-graph"]


def test_compiled_candidates():
    """--compile: the plain candidates again, with compiled segments (not the per-op ones)."""
    cands = candidates_for(2, "p.json", compile=True)
    keys = [c.key for c in cands]
    plain = ["1x1", "1x2", "1xH", "2x1", "2xH"]
    onednn = ["1x1-onednn-graph", "1x2-onednn-graph", "2x1-onednn-graph"]
    assert keys == [*plain, *onednn, "1x1-compiled", "1x2-compiled", "2x1-compiled"]
    by = {c.key: c.options for c in cands}
    for key in ("1x1", "1x2", "2x1"):
        compiled = by[f"{key}-compiled"]
        assert compiled.compile is True and not by[key].compile
        assert by[f"{key}-onednn-graph"].compile == "onednn-graph"
        assert (compiled.clusters, compiled.threads_per_worker) == (
            by[key].clusters,
            by[key].threads_per_worker,
        )


@pytest.fixture(scope="module")
def tuned(tmp_path_factory):
    d = tmp_path_factory.mktemp("tune")
    model = _fork_join(str(d / "fj.onnx"))
    return model, str(d / "out"), tune(model, str(d / "out"), cores=2, budget_s=2.0)


def test_tune_keeps_the_fastest(tuned):
    model, out, res = tuned
    with open(os.path.join(out, "tune.json")) as f:
        data = json.load(f)
    timed = {c["key"]: c["median_ms"] for c in data["candidates"] if c["median_ms"] is not None}
    assert {"1x1", "1x2", "1xH"} <= set(timed)
    assert data["choice"] == res.choice == min(timed, key=timed.__getitem__)
    assert all(c["n"] >= 5 for c in data["candidates"] if c["median_ms"] is not None)
    # the multi-cluster candidates are there only where the merge kept more than one cluster
    for c in data["candidates"]:
        assert c["clusters"] >= 1
        if c["key"].startswith("2x"):
            assert c["clusters"] == 2
    for name in ("model.py", "model_seq.py", "weights.safetensors", "schedule.txt"):
        assert os.path.exists(os.path.join(out, name)), name
    assert set(PROGRAM_FILES) >= {"model.py", "weights.safetensors"}
    assert os.path.exists(os.path.join(out, "profile.json"))  # made with 1 and 2 threads
    with open(os.path.join(out, "profile.json")) as f:
        assert any(k.endswith("@t2") for k in json.load(f)["times_us"])


def test_tuned_program_matches_onnxruntime(tuned):
    import onnxruntime as ort

    model, out, res = tuned
    assert res.result.parallel_path == os.path.join(out, "model.py")
    x = np.random.default_rng(1).standard_normal((1, 16, 32, 32)).astype(np.float32)
    (ref,) = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, {"x": x})
    with CompiledModel(res.result, res.options) as m:
        y = m(torch.from_numpy(x))
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-4, atol=1e-4)


def test_cli(tuned, tmp_path, capsys):
    model, out, _ = tuned
    prof = os.path.join(out, "profile.json")
    rc = main(["tune", model, "-o", str(tmp_path / "cli"), "--profile", prof, "--budget", "1"])
    text = capsys.readouterr().out
    assert rc == 0, text
    assert "tuned " in text and "<- chosen" in text
    assert not os.path.exists(tmp_path / "cli" / "profile.json")  # the given one was used
    with pytest.raises(SystemExit) as info:  # argparse's status for a bad value
        main(["tune", model, "-o", str(tmp_path / "bad"), "--cores", "0"])
    assert info.value.code == 2
    assert "argument --cores: must be from 1 to 1024, got 0" in capsys.readouterr().err


def test_options_reproduce_the_program(tuned, tmp_path):
    import ramiel

    model, out, res = tuned
    with open(os.path.join(out, "tune.json")) as f:
        data = json.load(f)
    opts = data["options"]
    assert os.path.isabs(opts["profile"])  # usable from any working directory
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        m = ramiel.compile(model, out_dir=str(tmp_path / "again"), **opts)
    finally:
        os.chdir(cwd)
    with m, open(m.result.parallel_path) as f, open(os.path.join(out, "model.py")) as g:
        assert f.read() == g.read()
    assert data["run"].startswith(f"python {os.path.join(out, 'model.py')}")
    assert data["run"].endswith(f" --threads {opts['threads_per_worker']}")


def test_bad_requests_fail_before_any_work(tuned, tmp_path, capsys):
    from ramiel.errors import INTERNAL_ERROR, RamielError

    model, _, _ = tuned
    afile = tmp_path / "afile"
    afile.write_text("")
    with pytest.raises(RamielError, match="exists and is not a directory"):
        tune(model, str(afile))
    with pytest.raises(RamielError, match="not found"):
        tune(model, str(tmp_path / "o1"), profile=str(tmp_path / "missing.json"))
    for budget in (0.0, -5.0, float("nan"), float("inf")):
        with pytest.raises(RamielError, match="budget"):
            tune(model, str(tmp_path / "o2"), budget_s=budget)
    assert not (tmp_path / "o1").exists() and not (tmp_path / "o2").exists()
    assert main(["tune", model, "-o", str(afile)]) == 1
    assert main(["compile", model, "-o", str(afile)]) == 1
    err = capsys.readouterr().err
    assert err.count("exists and is not a directory") == 2 and INTERNAL_ERROR not in err


def test_progress_counts_every_step(tuned, tmp_path):
    model, out, _ = tuned
    calls: list[tuple[int, int]] = []
    tune(
        model,
        str(tmp_path / "p"),
        cores=1,
        profile=os.path.join(out, "profile.json"),
        budget_s=0.5,
        progress=lambda d, t: calls.append((d, t)),
    )
    # two candidates (1x1 and 1x1-onednn-graph): the profile step, each one's compile and
    # process, the timing
    assert calls[0] == (0, 2) and calls[-1] == (6, 6)
    done = [d for d, _ in calls]
    assert done == sorted(done) and all(d <= t for d, t in calls)


def test_stale_candidates_are_removed(tuned, tmp_path):
    model, out, _ = tuned
    stale = tmp_path / "o" / "candidates" / "9x9"
    stale.mkdir(parents=True)
    tune(
        model, str(tmp_path / "o"), cores=1, profile=os.path.join(out, "profile.json"), budget_s=0.5
    )
    assert sorted(os.listdir(tmp_path / "o" / "candidates")) == ["1x1", "1x1-onednn-graph"]


def test_files_ramiel_did_not_write_are_never_replaced(tmp_path, capsys):
    """``ramiel tune -o DIR`` with a user's own model.py, tune.json or a file in ``candidates``
    there: one error before any work, nothing changed (a fresh-user check lost a model.py)."""
    model = _fork_join(str(tmp_path / "m.onnx"))
    for name, text in (("model.py", "print('mine')\n"), ("tune.json", "{}\n"), ("candidates/x", "notes\n")):  # fmt: skip
        out = tmp_path / f"o_{name.replace('/', '_')}"
        (out / name).parent.mkdir(parents=True)
        (out / name).write_text(text)
        assert main(["tune", model, "-o", str(out)]) == 1
        err = capsys.readouterr().err
        assert "which Ramiel did not write and tuning would replace" in err, err
        assert name.split("/")[0] in err
        assert (out / name).read_text() == text
        assert sorted(p.name for p in out.iterdir()) == [name.split("/")[0]]


def test_a_dynamic_batch_is_bound_as_compile_binds_it(tmp_path, capsys):
    """``ramiel tune`` and ``ramiel profile`` of a model whose batch dimension is symbolic bind it
    to 1, as ``ramiel compile`` and ``ramiel run`` do (they refused it; found by a fresh-user
    check)."""
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "dyn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    path = str(tmp_path / "dyn.onnx")
    onnx.save(m, path)
    assert main(["profile", path, "-o", str(tmp_path / "p.json"), "--repeat", "2"]) == 0
    assert main(["tune", path, "-o", str(tmp_path / "t"), "--budget", "0.5"]) == 0
    capsys.readouterr()
    assert json.loads((tmp_path / "t" / "tune.json").read_text())["choice"]


def test_cli_takes_a_model_name_and_refuses_an_unknown_one_before_any_work(tmp_path, capsys):
    """``ramiel tune`` resolves a model name as ``run`` and ``bench`` do; an unknown one is
    one error line before the profiling starts (it had started, then failed on the file)."""
    rc = main(["tune", "light_nosuchnet", "-o", str(tmp_path / "t")])
    captured = capsys.readouterr()
    assert rc == 1
    assert "error: light_nosuchnet: no such file" in captured.err
    assert "profile" not in captured.out + captured.err.split("error:")[0]
    assert not os.path.exists(tmp_path / "t")
