"""Hybrid inter-/intra-op parallelism end to end: ``cores=N`` (``--intra-op-threads``).

A branchy model (the zoo's light_inception_v1 with seeded random weights) compiled in 2 clusters
with ``cores=4`` must compute what onnxruntime computes on both backends, with the generated code
setting the intra-op threads of each worker and every cluster's OpenMP pool within the 4 cores
(on 2 cores, 2 clusters keep one thread per op: their pools would share a core); the processes backend must not hang when the parent
has used its OpenMP pool before forking workers that raise their own count. The command-line
side: ``ramiel profile --threads`` and ``ramiel compile --cores``.
"""

from __future__ import annotations

import gc
import json
import os
import re
from pathlib import Path

import numpy as np
import onnx
import pytest
import torch
from conftest import ZOO_DIR
from onnx import TensorProto, helper, numpy_helper

from ramiel.compiler import CompiledModel, CompileOptions, compile_model
from ramiel.omp import usable_cores
from ramiel.tools import driver

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

INCEPTION = os.path.join(ZOO_DIR, "light_inception_v1.onnx")


class _Case:
    def __init__(self, out_dir: str, helpers) -> None:
        model = helpers.randomize_weights(onnx.load(INCEPTION), seed=1)
        rng = np.random.default_rng(2)
        self.feeds = {
            k: rng.standard_normal(v.shape).astype(np.float32)
            for k, v in helpers.onnx_backend_inputs(model).items()
        }
        self.ref = helpers.ort_run(model, self.feeds)
        self.result = compile_model(model, out_dir, CompileOptions(clusters=2, cores=4))

    def run(self, backend: str) -> list[np.ndarray]:
        model = CompiledModel(self.result, CompileOptions(clusters=2, backend=backend, cores=4))
        try:
            got = model.run({k: torch.from_numpy(v) for k, v in self.feeds.items()})
            return [got[n].numpy() for n in model.output_names]
        finally:
            model.close()
            del model
            gc.collect()


@pytest.fixture(scope="module")
def inception(tmp_path_factory, pipeline_helpers) -> _Case:
    return _Case(str(tmp_path_factory.mktemp("inception-cores4")), pipeline_helpers)


@pytest.fixture(autouse=True)
def _restore_threads():
    prev = torch.get_num_threads()
    yield
    torch.set_num_threads(prev)


def test_generated_code_sets_threads(inception):
    res = inception.result
    assert res.clusters == 2
    # planned for more cores than this process may use: the compile says that the counts are
    # capped when it runs; on a machine of 4 or more cores, nothing
    planned_for_more = [n for n in res.notes if n.startswith("cores=4: planned for 4 cores")]
    assert len(planned_for_more) == (usable_cores() < 4), res.notes
    with open(res.parallel_path) as f:
        par = f.read()
    with open(res.sequential_path) as f:
        seq = f.read()
    counts = [int(n) for n in re.findall(r"^    ops\.set_threads\((\d+)\)", par, re.M)]
    assert max(counts) > 1 and 1 in counts, counts
    assert set(counts) <= {1, 2, 3}
    # every cluster function sets its count before its first op
    for body in par.split("\ndef cluster_")[1:]:
        assert "ops.set_threads(" in body
    assert f"    max_threads={max(counts)},\n" in par
    # every cluster's pool has cores of its own: the widest counts add up to at most 4 (the
    # clusters that set more than 1 are named; the threads backend runs the widest in the
    # caller's thread)
    (widths,) = re.findall(r"^    threads=(\{.*\}),$", par, re.M)
    wide = eval(widths)  # noqa: S307 - our own output
    assert sum(wide.values()) + (2 - len(wide)) <= 4, wide
    assert "set_num_threads" not in seq  # the sequential module leaves threads to its caller
    assert inception.result.report.threaded_ops > 0
    assert inception.result.report.max_threads == max(counts)
    with open(os.path.join(res.out_dir, "schedule.txt")) as f:
        text = f.read()
    assert re.search(r"^intra-op threads  \d+ op\(s\) with up to \d threads$", text, re.M), text


def test_two_clusters_on_two_cores_keep_one_thread_per_op(tmp_path):
    """Each cluster's OpenMP pool needs cores of its own (its helpers spin after every parallel
    region): 2 clusters on 2 cores leave none a second core. Planned so before, ShuffleNet took
    600 ms per inference against 7.7 ms for its 1-thread sequential module."""
    model = os.path.join(ZOO_DIR, "light_shufflenet.onnx")
    res = compile_model(model, str(tmp_path), CompileOptions(clusters=2, cores=2))
    assert res.clusters == 2 and res.report.threaded_ops == 0
    assert re.findall(r"ops\.set_threads\((\d+)\)", Path(res.parallel_path).read_text()) == [
        "1",
        "1",
    ]  # each cluster's one count, before its first op
    (note,) = [n for n in res.notes if n.startswith("cores=2:")]
    assert note.startswith("cores=2: no op got more than one intra-op thread: 2 clusters on 2 ")
    one = compile_model(model, str(tmp_path / "one"), CompileOptions(clusters=1, cores=2))
    assert one.report.threaded_ops > 0  # one cluster: its pool may take both cores
    assert not [n for n in one.notes if n.startswith("cores=")]
    many = compile_model(model, str(tmp_path / "many"), CompileOptions(clusters=1, cores=1000))
    (note,) = [n for n in many.notes if n.startswith("cores=1000:")]
    assert f"this process may use {usable_cores()}: the counts are capped" in note, note
    assert "compile with cores=" in note


@pytest.mark.parametrize("backend", ["threads", "processes"])
def test_outputs_match_onnxruntime(backend, inception, pipeline_helpers):
    torch.set_num_threads(1)
    outs = inception.run(backend)
    assert len(outs) == len(inception.ref)
    for got, ref in zip(outs, inception.ref, strict=True):
        assert np.all(np.isfinite(got))
        pipeline_helpers.assert_close(got, ref, 1e-3, f"inception cores=2 ({backend})")


def test_threads_backend_leaves_the_callers_count(inception):
    torch.set_num_threads(1)
    inception.run("threads")
    assert torch.get_num_threads() == 1


def test_processes_after_the_parent_used_openmp(inception, pipeline_helpers):
    """fork() after the parent ran a parallel region hangs a child that then runs one with more
    threads (GNU OpenMP); workers that raise their own count must come from the forkserver."""
    torch.set_num_threads(2)
    a = torch.randn(512, 512)
    for _ in range(3):
        a @ a  # the parent's OpenMP pool is now started
    model = CompiledModel(
        inception.result, CompileOptions(clusters=2, backend="processes", cores=4)
    )
    try:
        assert model.program.max_threads > 1
        got = model.run({k: torch.from_numpy(v) for k, v in inception.feeds.items()})
        assert model._runner.start_method != "fork"
        name = model.output_names[0]
        pipeline_helpers.assert_close(got[name].numpy(), inception.ref[0], 1e-3, "processes")
    finally:
        model.close()


# ------------------------------------------------------------------ command line
def _conv_model(path: str, c: int = 3, k: int = 8, hw: int = 32) -> onnx.ModelProto:
    """x -> Conv(3x3, c -> k channels, hw x hw) -> Relu -> y; the default profiles in a moment."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((k, c, 3, 3)).astype(np.float32), "w")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, hw, hw])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, k, hw, hw])
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["y"], name="relu"),
    ]
    graph = helper.make_graph(nodes, "tiny", [x], [y], initializer=[w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return model


def test_inline_backend_restores_the_callers_count(tmp_path, pipeline_helpers):
    """The inline backend runs the cluster functions in the caller's thread: their
    set_num_threads calls must not leak into the caller. One cluster (the inline backend needs an
    acyclic cluster graph) and a convolution large enough to gain from 2 threads."""
    model = _conv_model(str(tmp_path / "conv.onnx"), c=64, k=64, hw=56)
    feeds = {"x": np.random.default_rng(1).standard_normal((1, 64, 56, 56)).astype(np.float32)}
    ref = pipeline_helpers.ort_run(model, feeds)
    res = compile_model(model, str(tmp_path / "out"), CompileOptions(clusters=1, cores=2))
    with open(res.parallel_path) as f:
        assert "ops.set_threads(2)" in f.read()
    torch.set_num_threads(1)
    compiled = CompiledModel(res, CompileOptions(clusters=1, backend="inline", cores=2))
    try:
        got = compiled.run({"x": torch.from_numpy(feeds["x"])})
    finally:
        compiled.close()
    assert torch.get_num_threads() == 1
    pipeline_helpers.assert_close(got["y"].numpy(), ref[0], 1e-3, "conv cores=2 (inline)")


def test_profile_threads_writes_per_count_keys(tmp_path, capsys):
    model = str(tmp_path / "tiny.onnx")
    _conv_model(model)
    db = tmp_path / "prof.json"
    prev = torch.get_num_threads()
    rc = driver.main(["profile", model, "-o", str(db), "--threads", "1,2", "--repeat", "2"])
    assert rc == 0, capsys.readouterr().err
    assert torch.get_num_threads() == prev  # the caller's count is restored
    data = json.loads(db.read_text())
    keys = set(data["times_us"])
    assert data["meta"]["threads"] == [1, 2]
    for op in ("Conv(", "Relu("):
        one = [k for k in keys if k.startswith(op) and "@t" not in k]
        assert len(one) == 1, keys
        assert f"{one[0]}@t2" in keys
    assert all(v > 0 for v in data["times_us"].values())
    # the database feeds --intra-op-threads through compile --profile --cores
    out = tmp_path / "out"
    rc = driver.main(
        ["compile", model, "-o", str(out), "--profile", str(db), "--cores", "2", "--clusters", "1"]
    )
    assert rc == 0, capsys.readouterr().err


@pytest.mark.parametrize("spec", ["0", "1,0", "-1", "a,b", "2,x"])
def test_profile_bad_thread_counts(spec, tmp_path, capsys):
    model = str(tmp_path / "tiny.onnx")
    _conv_model(model)
    db = tmp_path / "prof.json"
    with pytest.raises(SystemExit) as info:  # argparse's status for a bad value
        driver.main(["profile", model, "-o", str(db), "--threads", spec])
    err = capsys.readouterr().err
    assert info.value.code == 2
    assert err.startswith("error: argument --threads: ") and err.count("\n") == 1, err
    assert not db.exists()


def test_compile_cores_writes_the_report_line(tmp_path, capsys):
    out = tmp_path / "out"
    model = os.path.join(ZOO_DIR, "light_squeezenet.onnx")
    rc = driver.main(["compile", model, "-o", str(out), "--clusters", "1", "--cores", "2"])
    assert rc == 0, capsys.readouterr().err
    text = (out / "schedule.txt").read_text()
    assert re.search(r"^intra-op threads  \d+ op\(s\) with up to 2 threads$", text, re.M), text
    data = json.loads((out / "schedule.json").read_text())
    assert data["max_threads"] == 2 and data["threaded_ops"] > 0
    assert "ops.set_threads(2)" in (out / "model.py").read_text()
    # without --cores: no counts, no line
    out1 = tmp_path / "out1"
    assert driver.main(["compile", model, "-o", str(out1), "--clusters", "2"]) == 0
    assert "intra-op threads" not in (out1 / "schedule.txt").read_text()
    assert "set_num_threads" not in (out1 / "model.py").read_text()


def test_the_default_program_keeps_to_omp_num_threads_and_the_affinity(tmp_path, monkeypatch):
    """A user's ``OMP_NUM_THREADS`` caps the default threads per worker (as it caps PyTorch's
    own; torchrun sets it to 1), and the default number of clusters is the cores this process
    may use (``taskset``), not the machine's."""
    import ramiel
    import ramiel.compiler as compiler_mod

    path = str(tmp_path / "conv.onnx")
    _conv_model(path, c=64, k=64, hw=56)
    feeds = {"x": torch.randn(1, 64, 56, 56)}
    cores = len(os.sched_getaffinity(0))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    with ramiel.compile(path, out_dir=str(tmp_path / "a")) as m:  # one conv: one cluster
        m.run(feeds)
        assert len(m.program.clusters) == 1 and m.program.cores == cores
        assert m.runtime_config()[1] == 1 and m.runner.threads_per_worker == 1
    monkeypatch.delenv("OMP_NUM_THREADS")
    with ramiel.compile(path, out_dir=str(tmp_path / "b")) as m:
        assert m.runtime_config()[1] == cores
    monkeypatch.setattr(compiler_mod, "usable_cores", lambda: 1)
    with ramiel.compile(path, out_dir=str(tmp_path / "c")) as m:
        assert len(m.program.clusters) == 1 and m.program.cores == 1
