"""Models built with the ``transformers`` library (ramiel.hf_models), small configurations.

Each ``hf_*_test`` model is built offline from a config with random weights, exported, checked
by the ONNX checker and compared three ways on its example inputs: onnxruntime against the
PyTorch model, and Ramiel's sequential module and parallel module (2 clusters, threads backend)
against onnxruntime, within 1e-3 of the largest output magnitude.
"""

from __future__ import annotations

import os

import numpy as np
import onnx
import pytest
import torch

import ramiel
from ramiel import models
from ramiel.hf_models import HF_MODELS

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

TEST_MODELS = sorted(n for n in HF_MODELS if n.endswith("_test"))
STANDARD_MODELS = sorted(n for n in HF_MODELS if not n.endswith("_test"))


@pytest.fixture(autouse=True)
def _one_thread():
    prev = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(prev)


def _feeds(name: str) -> dict[str, torch.Tensor]:
    return dict(zip(models.input_names(name), models.example_inputs(name), strict=True))


def test_registry():
    """Every architecture of the issue at a standard size and a test size, known to
    ``ramiel bench`` by name."""
    from ramiel.bench import resolve_models

    assert len(STANDARD_MODELS) == len(TEST_MODELS) + 1  # ResNet at two standard sizes
    for arch in ("bert", "vit", "resnet", "mobilenet_v2", "efficientnet", "convnext"):
        assert any(n.startswith(f"hf_{arch}") for n in STANDARD_MODELS), arch
        assert f"hf_{arch}_test" in TEST_MODELS
    spec = resolve_models(["hf_bert"])[0]
    assert (spec.name, spec.project) == ("hf_bert", "hf_bert")
    assert set(models.all_models()) == set(models.MODELS) | set(HF_MODELS)
    with pytest.raises(KeyError, match="hf_bert_test"):
        models.example_inputs("hf_nope")


@pytest.mark.parametrize("name", TEST_MODELS)
def test_export_matches_torch(exported_model, name, pipeline_helpers):
    path = exported_model(name)
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    assert [i.name for i in model.graph.input] == list(models.input_names(name))
    assert [o.name for o in model.graph.output] == list(models.output_names(name))
    with torch.no_grad():
        expected = models.build_model(name)(*models.example_inputs(name)).numpy()
    assert np.isfinite(expected).all() and np.abs(expected).max() > 0
    (got,) = pipeline_helpers.ort_run(model, _feeds(name))
    pipeline_helpers.assert_close(got, expected, 1e-4, f"{name}: onnxruntime vs torch")


#: What the graph rewrites do to each test model: fused ops, and in-place ops (at least).
REWRITES = {
    "hf_bert_test": ({"Attention": 2, "Gelu": 2, "Erf": 0, "Softmax": 0}, 1),
    "hf_vit_test": ({"Attention": 2, "Gelu": 2, "Erf": 0, "Softmax": 0}, 1),
    # the residual Adds and the ReLUs after them (the ReLUs after Convs run in the prepacked Convs)
    "hf_resnet_test": ({}, 4),
    # the ReLU6 (Clip) after each Conv; tf_padding's Pads become the Convs' pads
    "hf_mobilenet_v2_test": ({"Pad": 0}, 20),
    # SiLU's Mul on its Sigmoid, Sigmoid after the SE Conv; the stride-2 Pads into the Convs
    "hf_efficientnet_test": ({"Pad": 0}, 10),
    "hf_convnext_test": ({"Gelu": 2, "Mul": 0}, 1),  # the layer-scale Muls folded into weights
}


@pytest.mark.parametrize("name", TEST_MODELS)
def test_ramiel_matches_onnxruntime(exported_model, name, tmp_path, pipeline_helpers):
    """Sequential and parallel (2 clusters, threads) modules, with and without the graph
    rewrites, against onnxruntime; with them, the fusions and in-place ops happen."""
    from ramiel.compiler import CompileOptions, compile_model

    path = exported_model(name)
    feeds = _feeds(name)
    (expected,) = pipeline_helpers.ort_run(onnx.load(path), feeds)
    fused, inplace = REWRITES[name]
    for disable in ((), ("all",)):
        opts = CompileOptions(clusters=2, backend="threads", disable=disable)
        res = compile_model(path, str(tmp_path / str(len(disable))), opts)
        with open(res.ir_path) as f:
            marks = f.read().count("ramiel.inplace")
        ops = res.op_counts()
        if disable:
            assert marks == 0 and "Attention" not in ops and "Gelu" not in ops
        else:
            assert {k: ops.get(k, 0) for k in fused} == fused, ops
            assert marks >= inplace, marks
        with ramiel.CompiledModel(res, opts) as m:
            what = f"{name}, disable={disable}"
            pipeline_helpers.assert_close(m.sequential(*feeds.values()), expected, 1e-3, what)
            pipeline_helpers.assert_close(m(*feeds.values()), expected, 1e-3, f"{what} parallel")


def test_cache_key_names_the_transformers_version(tmp_path, monkeypatch):
    import transformers

    monkeypatch.setenv("RAMIEL_MODEL_CACHE", str(tmp_path))
    path = models.export_model("hf_resnet_test", opset=17)
    tag = f"v{models.MODELS_VERSION}-transformers{transformers.__version__}"
    assert os.path.basename(path) == f"hf_resnet_test-opset17-{tag}.onnx"
    assert models.export_model("hf_resnet_test", opset=17) == path


@pytest.mark.parametrize("name", ["hf_bert_test", "hf_vit_test"])
def test_dynamic_batch_export_runs_at_any_batch(name, tmp_path, pipeline_helpers):
    """A ``dynamic_axes`` export of BERT and ViT: the sequential module takes any batch size
    and matches onnxruntime at batch 1, 3 and 8. Their batch-1 program folds a constant
    that depends on the batch (BERT's token type ids expanded to the input's shape, ViT's
    class token expanded to the batch): the sequential module reads the batch-free row
    expanded to the batch, or the initializer the batch-1 program folded away (they had kept
    batch 1, with a note). The parallel program, compiled for batch 1, loads from the same
    weights file and matches too."""
    from ramiel.compiler import CompileOptions, compile_model

    path = models.export_model(name, dynamic_batch=True)
    model = onnx.load(path)
    res = compile_model(path, str(tmp_path / "out"), CompileOptions(clusters=2, backend="threads"))
    names = models.input_names(name)
    assert res.dynamic_batch == names, res.notes
    with open(res.sequential_path) as f:
        assert ".expand(batch, " in f.read()
    feeds = _feeds(name)
    g = torch.Generator().manual_seed(0)
    with ramiel.CompiledModel(res, CompileOptions(clusters=2, backend="threads")) as m:
        for b in (1, 3, 8):
            xs = {
                k: (
                    torch.randint(0, 2 if "mask" in k else 90, (b, *v.shape[1:]), generator=g)
                    if not v.is_floating_point()
                    else torch.randn((b, *v.shape[1:]), generator=g)
                )
                for k, v in feeds.items()
            }
            (expected,) = pipeline_helpers.ort_run(model, {k: v.numpy() for k, v in xs.items()})
            with torch.no_grad():
                got = m.sequential(*xs.values())
            assert got.shape[0] == b
            pipeline_helpers.assert_close(got, expected, 1e-3, f"{name} at batch {b}")
        (expected,) = pipeline_helpers.ort_run(model, {k: v.numpy() for k, v in feeds.items()})
        pipeline_helpers.assert_close(m(*feeds.values()), expected, 1e-3, f"{name} parallel")


def test_dynamic_batch_of_a_batch_1_export_is_a_note_not_an_internal_error(tmp_path):
    """BERT exported at batch 1 (its reshapes fix the batch) with ``dynamic_batch=True``: the
    sample batch compiles into IR the verifier rejects after constant folding (onnx shape
    inference had let the fixed shape through), which had escaped as 'internal error:
    LocatedVerifyError'. It keeps batch 1, with a note naming the node."""
    from ramiel.compiler import CompileOptions, compile_model

    path = models.export_model("hf_bert_test")
    res = compile_model(path, str(tmp_path / "out"), CompileOptions(clusters=1, dynamic_batch=True))
    assert res.dynamic_batch == ()
    assert any(
        "it does not compile: IR invalid after pass 'constant-fold': onnx.MatMul" in n
        for n in res.notes
    ), res.notes
