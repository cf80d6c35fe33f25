"""The nine ONNX zoo models end to end: ONNX -> Ramiel -> generated PyTorch modules -> outputs.

Each ``light_*.onnx`` model of the onnx wheel is compiled once (2 clusters) and run three ways:
the sequential module, and the parallel module on the threads and on the processes backend. The
outputs must equal, within 1e-3 of the largest output magnitude,

* the expected outputs shipped beside the model (``light_*_output_0.pb``), for the inputs onnx's
  backend test runner generates for these tests (``Runner.generate_dummy_data``: ``arange / n``);
* onnxruntime's outputs.

The zoo models' weights are ConstantOfShape splats, so their outputs are nearly uniform and a
wrong op could go unnoticed; every model is therefore also run with seeded random weights of the
same shapes (and random normal inputs), against onnxruntime.

The ``model.mlir`` each compile writes (the clustered program, in the ``cluster`` ops' custom
syntax) parses back to the same text and verifies; lowered to ``torchpy``, that text round-trips too.

Memory formats: the programs above use the default layout (``auto``: channels-last through the
conv/pool regions where the cost model says faster, every zoo model since the prepacked
convolutions); the random-weight variant also runs with the layout off (``nchw``).
"""

from __future__ import annotations

import gc
import os
import shutil

import numpy as np
import onnx
import pytest
import torch
from conftest import ZOO_DIR

from ramiel.compiler import CompiledModel, CompileOptions, compile_model
from ramiel.context import make_context
from ramiel.parsing import parse_module, verify_located
from ramiel.passes.lower_to_torchpy import LowerToTorchpy

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

MODELS = [
    "light_bvlc_alexnet",
    "light_densenet121",
    "light_inception_v1",
    "light_inception_v2",
    "light_resnet50",
    "light_shufflenet",
    "light_squeezenet",
    "light_vgg19",
    "light_zfnet512",
]
MODES = ["sequential", "threads", "processes"]


class _Case:
    """One compiled model: the compile result, the feeds and the reference outputs."""

    def __init__(self, name: str, variant: str, out_dir: str, helpers, layout: str) -> None:
        path = os.path.join(ZOO_DIR, f"{name}.onnx")
        model = onnx.load(path)
        self.expected = None
        if variant == "zoo":
            self.feeds = helpers.onnx_backend_inputs(model)
            self.expected = helpers.expected_zoo_outputs(path, model)
            source: str | onnx.ModelProto = path
        else:
            model = helpers.randomize_weights(model, seed=1)
            rng = np.random.default_rng(2)
            self.feeds = {
                k: rng.standard_normal(v.shape).astype(np.float32)
                for k, v in helpers.onnx_backend_inputs(model).items()
            }
            source = model
        self.ref = helpers.ort_run(model, self.feeds)
        self.out_names = [o.name for o in model.graph.output]
        self.out_dir = out_dir
        self.result = compile_model(source, out_dir, CompileOptions(clusters=2, layout=layout))

    def run(self, mode: str) -> list[np.ndarray]:
        backend = "threads" if mode == "sequential" else mode
        model = CompiledModel(self.result, CompileOptions(clusters=2, backend=backend))
        try:
            feeds = {k: torch.from_numpy(v) for k, v in self.feeds.items()}
            if mode == "sequential":
                inputs = [feeds[k] for k in model.input_specs]
                outs = model.sequential(*inputs)
                outs = outs if isinstance(outs, tuple) else (outs,)
                return [o.numpy() for o in outs]
            got = model.run(feeds)
            return [got[n].numpy() for n in model.output_names]
        finally:
            model.close()
            del model
            gc.collect()


@pytest.fixture(scope="module")
def compiled(tmp_path_factory, pipeline_helpers):
    """``compiled(name, variant, layout)``: the model compiled once; only the latest one is kept
    (the tests run model by model), so the large weight files do not pile up on disk."""
    cache: dict[tuple[str, str, str], _Case] = {}

    def get(name: str, variant: str, layout: str = "auto") -> _Case:
        key = (name, variant, layout)
        if key not in cache:
            for old in cache.values():
                shutil.rmtree(old.out_dir, ignore_errors=True)
            cache.clear()
            gc.collect()
            out = str(tmp_path_factory.mktemp(f"{name}-{variant}-{layout}"))
            cache[key] = _Case(name, variant, out, pipeline_helpers, layout)
        return cache[key]

    yield get
    for c in cache.values():
        shutil.rmtree(c.out_dir, ignore_errors=True)


@pytest.fixture(autouse=True)
def _one_thread():
    """The CI machine has two shared cores: sequential runs use one intra-op thread."""
    prev = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(prev)


VARIANTS = [("zoo", "auto"), ("random", "auto"), ("random", "nchw")]
CASES = [(n, v, lay) for n in MODELS for v, lay in VARIANTS]


# The backends (threads, processes) with the default layout and both weight variants; layout
# nchw only sequentially: the printed statements of a layout are the same in every backend, and
# channels carrying channels-last tensors are covered by the "auto" runs.
RUNS = [(*case, mode) for case in CASES for mode in MODES if case[2] != "nchw" or mode == MODES[0]]


@pytest.mark.parametrize(
    "name,variant,layout,mode", RUNS, ids=[f"{n}-{v}-{lay}-{m}" for n, v, lay, m in RUNS]
)
def test_zoo_model(name, variant, layout, mode, compiled, pipeline_helpers):
    case = compiled(name, variant, layout)
    if mode == MODES[0]:
        _assert_ir_round_trips(case)
    outs = case.run(mode)
    assert len(outs) == len(case.ref)
    for i, (got, ref) in enumerate(zip(outs, case.ref, strict=True)):
        assert np.all(np.isfinite(got)), f"{name} output {i}: non-finite values"
        what = f"{name} ({variant}, {mode}, layout {layout}) vs onnxruntime"
        pipeline_helpers.assert_close(got, ref, 1e-3, what)
        if case.expected is not None:
            pipeline_helpers.assert_close(
                got, case.expected[i], 1e-3, f"{name} ({mode}) vs {name}_output_{i}.pb"
            )


def _assert_ir_round_trips(case: _Case) -> None:
    """``model.mlir`` parses, verifies and prints back to itself (custom ``cluster`` syntax); its
    ``--lower-to-torchpy`` result prints in the custom ``torchpy`` syntax and round-trips too."""
    path = os.path.join(case.out_dir, "model.mlir")
    with open(path) as f:
        text = f.read()
    assert "cluster.cluster @" in text and "cluster.yield" in text
    assert '"cluster.' not in text, "a cluster op printed in the generic form"
    ctx = make_context(case.out_dir)
    module = parse_module(ctx, text, path)
    verify_located(module)
    assert str(module) + "\n" == text
    LowerToTorchpy().apply(ctx, module)
    lowered = str(module)
    assert "torchpy.func cluster @" in lowered and '"torchpy.' not in lowered
    again = parse_module(ctx, lowered, "lowered.mlir")
    verify_located(again)
    assert str(again) == lowered


@pytest.mark.parametrize("name", ["light_inception_v1", "light_squeezenet"])
def test_random_weights_are_not_degenerate(name, compiled):
    """The random-weight variant is a real check: its output is far from uniform, unlike the
    zoo's ConstantOfShape weights (every class gets almost the same probability)."""
    zoo = compiled(name, "zoo")
    assert len(np.unique(zoo.expected[0])) == 1
    case = compiled(name, "random")
    out = np.asarray(case.ref[0])
    assert len(np.unique(out)) > out.size // 2


def test_parallel_module_has_two_clusters(compiled):
    """A branching model really runs on two clusters, with channels between them."""
    case = compiled("light_inception_v1", "zoo")
    assert case.result.clusters == 2
    with open(case.result.parallel_path) as f:
        text = f.read()
    assert "def cluster_c0(ch, w):" in text and "def cluster_c1(ch, w):" in text
    assert "ch.put(" in text and "ch.get(" in text
