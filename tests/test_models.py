"""The project's own test models (ramiel.models): export, ONNX checker, numerics vs onnxruntime,
and the branching structure the task-parallel compiler relies on."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch

from ramiel import models

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

NAMES = sorted(models.MODELS)

# ONNX op types of each export at opset 17 (torch 2.13 legacy exporter, constant folding on).
EXPECTED_OPS = {
    "inception": {"Concat", "Conv", "Flatten", "Gemm", "GlobalAveragePool", "MaxPool", "Relu"},
    "transformer": {
        "Add",
        "Constant",
        "Div",
        "Erf",
        "Gather",
        "LayerNormalization",
        "MatMul",
        "Mul",
        "Reshape",
        "Softmax",
        "Transpose",
    },
    "transformer_torch": {
        "Add",
        "Cast",
        "Concat",
        "Constant",
        "Div",
        "Erf",
        "Gather",
        "Gemm",
        "LayerNormalization",
        "MatMul",
        "Mod",
        "Mul",
        "Reshape",
        "Shape",
        "Slice",
        "Softmax",
        "Sqrt",
        "Squeeze",
        "Transpose",
        "Unsqueeze",
    },
    # scripted before export: the data-dependent if is an If, the while loop a Loop
    "streaming_detector": {
        "Cast", "Concat", "Constant", "Conv", "Gather", "Gemm", "If", "LSTM", "Less", "Pow",
        "ReduceMean", "Relu", "Sigmoid", "Slice", "Squeeze", "Transpose",
    },
    "gru_tagger": {
        "Add", "Concat", "Constant", "Expand", "GRU", "Gather", "MatMul", "Reshape", "Shape",
        "Transpose", "Unsqueeze",
    },
    "refiner": {"Constant", "Gemm", "Loop", "Relu"},
}  # fmt: skip


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> dict[str, str]:
    out = tmp_path_factory.mktemp("models")
    return {name: models.export_model(name, path=out / f"{name}.onnx") for name in NAMES}


def consumers(graph: onnx.GraphProto) -> dict[str, list[onnx.NodeProto]]:
    users: dict[str, list[onnx.NodeProto]] = {}
    for node in graph.node:
        for name in set(node.input):
            if name:
                users.setdefault(name, []).append(node)
    return users


def run_ort(path: str, name: str) -> list[np.ndarray]:
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    feeds = {
        n: t.numpy()
        for n, t in zip(models.input_names(name), models.example_inputs(name), strict=True)
    }
    return sess.run(list(models.output_names(name)), feeds)


@pytest.mark.parametrize("name", NAMES)
def test_export_checks_and_names(exported, name):
    model = onnx.load(exported[name])
    onnx.checker.check_model(model, full_check=True)
    graph = model.graph
    assert [i.name for i in graph.input] == list(models.input_names(name))
    assert [o.name for o in graph.output] == list(models.output_names(name))
    # Fixed shapes: every input dimension is a number, equal to the example input's.
    for vi, t in zip(graph.input, models.example_inputs(name), strict=True):
        dims = [
            d.dim_value if d.HasField("dim_value") else None for d in vi.type.tensor_type.shape.dim
        ]
        assert dims == list(t.shape)
    # Distinct random weights: no initializer was deduplicated into an Identity node.
    assert not any(n.op_type == "Identity" for n in graph.node)


@pytest.mark.parametrize("name", NAMES)
def test_op_types(exported, name):
    ops = Counter(n.op_type for n in onnx.load(exported[name]).graph.node)
    print(f"\n{name}: {len(ops)} op types, {sum(ops.values())} nodes: {dict(sorted(ops.items()))}")
    assert set(ops) == EXPECTED_OPS[name]


@pytest.mark.parametrize("name", NAMES)
def test_onnxruntime_matches_torch(exported, name):
    module = models.build_model(name)
    with torch.no_grad():
        out = module(*models.example_inputs(name))
    for got, expected in zip(
        run_ort(exported[name], name), out if isinstance(out, tuple) else (out,), strict=True
    ):
        expected = expected.numpy()
        assert got.shape == expected.shape
        assert np.isfinite(expected).all()
        scale = float(np.abs(expected).max())
        assert scale > 0
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-4 * scale)


def test_inception_branches(exported):
    graph = onnx.load(exported["inception"]).graph
    n_blocks = sum(len(g) for g in models.INCEPTION_GROUPS)
    concats = [n for n in graph.node if n.op_type == "Concat"]
    assert len(concats) == n_blocks
    assert all(len(n.input) == 4 for n in concats)
    # Each block's input feeds its four branches: three 1x1 convs and a max-pool.
    fanout4 = {t: us for t, us in consumers(graph).items() if len(us) == 4}
    assert len(fanout4) == n_blocks
    for users in fanout4.values():
        assert sorted(u.op_type for u in users) == ["Conv", "Conv", "Conv", "MaxPool"]


def _branch_macs(cin: int, s: models.InceptionSpec) -> list[int]:
    """Multiply-accumulates per output pixel of each branch (the max-pool counted as 2 per input)."""
    return [
        cin * s.b1,
        cin * s.r3 + 9 * s.r3 * s.b3,
        cin * s.r5 + 9 * s.r5 * s.b5 + 9 * s.b5 * s.b5,
        cin * s.pool + 2 * cin,
    ]


def test_inception_branches_balanced():
    """Branch costs within 25% of each other, so W/CP is set by the number of branches."""
    cin = models.InceptionNet().groups[0][0].branch1[0].in_channels
    for group in models.INCEPTION_GROUPS:
        for spec in group:
            macs = _branch_macs(cin, spec)
            assert max(macs) <= 1.25 * min(macs), (spec, macs)
            cin = spec.out


@pytest.mark.parametrize(
    ("name", "op"), [("transformer", "MatMul"), ("transformer_torch", "Gather")]
)
def test_transformer_qkv_branches(exported, name, op):
    """Per layer, one tensor feeds three independent Q/K/V ops (projections, or the split of the
    fused in-projection of nn.MultiheadAttention)."""
    graph = onnx.load(exported[name]).graph
    qkv = [t for t, us in consumers(graph).items() if [u.op_type for u in us].count(op) == 3]
    assert len(qkv) == 4


def test_build_is_deterministic_and_layers_differ():
    a, b = models.build_model("transformer_torch"), models.build_model("transformer_torch")
    for (ka, va), (kb, vb) in zip(a.state_dict().items(), b.state_dict().items(), strict=True):
        assert ka == kb and torch.equal(va, vb)
    layers = a.encoder.layers
    assert not torch.equal(layers[0].linear1.weight, layers[1].linear1.weight)
    assert not torch.equal(layers[0].self_attn.in_proj_weight, layers[1].self_attn.in_proj_weight)
    # The global RNG is left alone.
    torch.manual_seed(5)
    x = torch.rand(1)
    torch.manual_seed(5)
    models.build_model("transformer")
    assert torch.equal(torch.rand(1), x)


def test_example_inputs():
    (image,) = models.example_inputs("inception")
    assert image.shape == (1, 3, 224, 224) and image.dtype == torch.float32
    (ids,) = models.example_inputs("transformer")
    assert ids.shape == (1, 64) and ids.dtype == torch.int64
    assert int(ids.min()) >= 0 and int(ids.max()) < 1000
    assert torch.equal(ids, models.example_inputs("transformer")[0])


def test_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RAMIEL_MODEL_CACHE", str(tmp_path / "cache"))
    path = models.export_model("transformer", opset=17)
    assert path == str(tmp_path / "cache" / f"transformer-opset17-v{models.MODELS_VERSION}.onnx")
    mtime = os.stat(path).st_mtime_ns
    assert models.export_model("transformer", opset=17) == path
    assert os.stat(path).st_mtime_ns == mtime
    assert [p.name for p in (tmp_path / "cache").iterdir()] == [os.path.basename(path)]


def test_cache_dir_default(monkeypatch):
    monkeypatch.delenv("RAMIEL_MODEL_CACHE", raising=False)
    assert models.cache_dir() == Path.home() / ".cache" / "ramiel" / "models"


def test_errors(tmp_path):
    with pytest.raises(KeyError, match="unknown model 'nope'"):
        models.export_model("nope", path=tmp_path / "x.onnx")
    with pytest.raises(ValueError, match="opset >= 14"):
        models.export_model("transformer_torch", path=tmp_path / "x.onnx", opset=13)
    assert not list(tmp_path.iterdir())
