"""The project's own exported models end to end, through the Python API ``ramiel.compile``.

``ramiel.models`` exports, with random weights, an inception-style CNN (four-branch blocks) and two
transformer encoders (explicit multi-head attention, LayerNorm, GELU; and PyTorch's
``nn.TransformerEncoderLayer``). Each is compiled once for 2 clusters; its parallel module on the
threads and on the processes backend and its sequential module must equal onnxruntime within 1e-3
of the largest output magnitude. ``batch=2`` (hyperclustering: two samples in one program) must
give, for each sample, the output of the batch-1 model on that sample.
"""

from __future__ import annotations

import os

import numpy as np
import onnx
import pytest
import torch

import ramiel
from ramiel import models
from ramiel.compiler import CompiledModel, CompileOptions

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

NAMES = ["inception", "transformer", "transformer_torch"]


def _inputs(name: str, seed: int) -> dict[str, torch.Tensor]:
    """Inputs of the model's fixed shapes: an image, or token ids in the vocabulary."""
    g = torch.Generator().manual_seed(seed)
    (example,) = models.example_inputs(name)
    if example.dtype == torch.int64:
        x = torch.randint(0, 1000, tuple(example.shape), generator=g, dtype=torch.int64)
    else:
        x = torch.randn(tuple(example.shape), generator=g)
    return {models.input_names(name)[0]: x}


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """``compiled(name)``: (model path, CompiledModel for 2 clusters on threads), built once."""
    cache: dict[str, tuple[str, CompiledModel]] = {}

    def get(name: str) -> tuple[str, CompiledModel]:
        if name not in cache:
            path = models.export_model(name, tmp_path_factory.mktemp(name) / f"{name}.onnx")
            cache[name] = (path, ramiel.compile(path, clusters=2, backend="threads"))
        return cache[name]

    yield get
    for _, m in cache.values():
        m.close()


@pytest.fixture(autouse=True)
def _one_thread():
    prev = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(prev)


@pytest.mark.parametrize("name", NAMES)
def test_models_branch(name, compiled):
    """Each model has real branching: the compiler finds two clusters and channels between them."""
    _, model = compiled(name)
    assert model.result.clusters == 2
    assert model.report.parallelism > 1.0
    assert model.program.channels, "no channel at all"


def test_inception_sends_combined_conv_parts(compiled):
    """``--combine-parallel-convs`` runs each block's 1x1 convolutions as one, split along the
    channels; the Split's parts (views of the combined result) cross channels to the other
    cluster, on the threads and the processes backend alike (test_model_matches_onnxruntime
    checks those programs' numerics)."""
    _, model = compiled("inception")
    counts = model.result.op_counts()
    assert counts.get("Split", 0) >= 4, counts
    with open(model.result.ir_path) as f:
        ir = f.read()
    split_values = set()
    for line in ir.splitlines():
        if '"onnx.Split"' in line:
            split_values.update(v.strip() for v in line.split("=")[0].split(","))
    sent = [ln for ln in ir.splitlines() if "cluster.send" in ln]
    assert any(any(f"{v} " in ln or f"{v})" in ln for v in split_values) for ln in sent), (
        "no Split part crosses a channel"
    )


@pytest.mark.parametrize("name", NAMES)
def test_no_constant_subgraph_is_recomputed(name, compiled):
    """Constant folding leaves no op computed from constants alone in the compiled program (the
    transformer's position-embedding Gather at constant positions becomes a weight), so no
    inference recomputes one."""
    from ramiel.clustering import is_ambient
    from ramiel.context import make_context
    from ramiel.dialects.onnx import OnnxOp
    from ramiel.parsing import parse_module

    _, model = compiled(name)
    with open(model.result.ir_path) as f:
        module = parse_module(make_context(), f.read(), model.result.ir_path)
    constants: set = set()
    recomputed = []
    for op in module.walk():
        if not isinstance(op, OnnxOp):
            continue
        if is_ambient(op):
            constants.update(op.results)
        elif op.operands and all(v in constants for v in op.operands):
            recomputed.append(op.node_name)
    assert not recomputed


@pytest.mark.parametrize("mode", ["sequential", "threads", "processes"])
@pytest.mark.parametrize("name", NAMES)
def test_model_matches_onnxruntime(name, mode, compiled, pipeline_helpers):
    path, model = compiled(name)
    feeds = _inputs(name, seed=7)
    (ref,) = pipeline_helpers.ort_run(onnx.load(path), feeds)
    if mode == "sequential":
        out = model.sequential(*feeds.values())
    elif mode == "threads":
        out = model(*feeds.values())
    else:
        with CompiledModel(model.result, CompileOptions(clusters=2, backend="processes")) as m:
            out = m(*feeds.values())
            again = m(*_inputs(name, seed=8).values())  # workers serve many inferences
            assert not torch.equal(out, again)
    pipeline_helpers.assert_close(out, ref, 1e-3, f"{name} ({mode}) vs onnxruntime")


@pytest.mark.parametrize("backend", ["threads", "processes"])
def test_inception_with_the_layout_off(backend, compiled, tmp_path, pipeline_helpers):
    """The inception CNN (channels-last by default: ``layout=auto``) compiled with
    ``layout="nchw"`` (every activation between ops contiguous) equals onnxruntime too, parallel
    and sequential; its default program really is channels-last."""
    path, default = compiled("inception")
    with open(default.result.sequential_path) as f:
        assert "memory_format=torch.channels_last" in f.read()
    feeds = _inputs("inception", seed=5)
    (ref,) = pipeline_helpers.ort_run(onnx.load(path), feeds)
    with ramiel.compile(
        path, clusters=2, backend=backend, layout="nchw", out_dir=str(tmp_path)
    ) as m:
        with open(m.result.sequential_path) as f:
            text = f.read()  # pooling still runs through channels-last, inside its statement
        assert "WEIGHT_FORMATS" not in text and "to channels-last for" not in text
        pipeline_helpers.assert_close(m(*feeds.values()), ref, 1e-3, f"nchw, {backend}")
        pipeline_helpers.assert_close(m.sequential(*feeds.values()), ref, 1e-3, "nchw, sequential")


def test_compile_api(compiled, tmp_path, pipeline_helpers):
    """``ramiel.compile``: path or ModelProto in; named and positional calls; files in out_dir."""
    path, _ = compiled("inception")
    proto = onnx.load(path)
    feeds = _inputs("inception", seed=3)
    (ref,) = pipeline_helpers.ort_run(proto, feeds)
    with ramiel.compile(proto, clusters=2, backend="processes", out_dir=str(tmp_path)) as m:
        assert set(os.listdir(tmp_path)) >= {
            "model.py",
            "model_seq.py",
            "weights.safetensors",
            "schedule.txt",
            "schedule.json",
        }
        assert m.output_names == ["logits"]
        assert list(m.input_specs) == ["image"]
        by_name = m.run(feeds)
        pipeline_helpers.assert_close(by_name["logits"], ref, 1e-3, "run(feeds)")
        pipeline_helpers.assert_close(m(feeds["image"]), ref, 1e-3, "positional call")


@pytest.mark.parametrize("name", ["inception", "transformer"])
def test_batch2_equals_per_sample(name, compiled, pipeline_helpers):
    """``batch=2``: two samples in one program (hyperclustering); each output equals the
    sequential batch-1 model on that sample."""
    path, single = compiled(name)
    in_name = models.input_names(name)[0]
    out_name = models.output_names(name)[0]
    samples = [_inputs(name, seed=s)[in_name] for s in (11, 12)]
    with ramiel.compile(path, clusters=2, batch=2) as m:
        assert list(m.input_specs) == [f"{in_name}__s0", f"{in_name}__s1"]
        assert m.output_names == [f"{out_name}__s0", f"{out_name}__s1"]
        # The samples are independent: twice the work and twice the ops of batch 1.
        assert m.report.nodes == 2 * single.report.nodes
        assert m.report.work_us == pytest.approx(2 * single.report.work_us, rel=1e-6)
        outs = m.run({f"{in_name}__s{k}": x for k, x in enumerate(samples)})
        seq = m.sequential(*samples)
        for k, x in enumerate(samples):
            want = single.sequential(x)
            pipeline_helpers.assert_close(outs[f"{out_name}__s{k}"], want, 1e-5, f"sample {k}")
            pipeline_helpers.assert_close(seq[k], want, 1e-5, f"sequential sample {k}")
        assert not torch.equal(outs[f"{out_name}__s0"], outs[f"{out_name}__s1"])


def test_outputs_differ_between_inputs(compiled):
    """Sanity of the oracle: different inputs give clearly different outputs."""
    _, model = compiled("transformer")
    a = model.sequential(*_inputs("transformer", 1).values())
    b = model.sequential(*_inputs("transformer", 2).values())
    assert float((a - b).abs().max()) > 1e-2 * float(a.abs().max())
    assert np.isfinite(a.numpy()).all()
