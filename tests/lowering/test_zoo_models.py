"""The nine ``light_*.onnx`` zoo models shipped in the onnx wheel, run node by node through the
lowering rules and compared with onnxruntime (rtol 1e-3 of the largest output magnitude).

The light models build their weights with ConstantOfShape (every weight tensor is one repeated
value), so their outputs are nearly uniform; a second run gives them seeded random weights of the
same shapes (:func:`ramiel.models.randomize_weights`: He-scaled for conv/gemm weights, positive
for BatchNormalization scale/variance) to exercise the numerics (on the six models whose weights
are small enough to randomise quickly).
"""

from __future__ import annotations

import os

import numpy as np
import onnx
import pytest
from _lowering_cases import assert_close
from conftest import ZOO_MODELS

from ramiel.lowering.node_view import Mismatch, run_graph_eagerly
from ramiel.models import randomize_weights

MODELS = list(ZOO_MODELS.values())


def _feeds(model: onnx.ModelProto, seed: int = 0) -> dict[str, np.ndarray]:
    inits = {t.name for t in model.graph.initializer}
    rng = np.random.default_rng(seed)
    feeds = {}
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        shape = [d.dim_value for d in vi.type.tensor_type.shape.dim]
        feeds[vi.name] = rng.standard_normal(shape).astype(np.float32)
    return feeds


def _compare(model: onnx.ModelProto, ort_session_options) -> None:
    ort = pytest.importorskip("onnxruntime")
    feeds = _feeds(model)
    mismatches: list[Mismatch] = []
    ours = run_graph_eagerly(model, feeds, mismatches)
    sess = ort.InferenceSession(model.SerializeToString(), ort_session_options)
    ref = sess.run(None, feeds)
    for vi, r in zip(model.graph.output, ref, strict=True):
        assert_close(ours[vi.name], r, rtol=1e-3, what=vi.name)
    # only outputs shape inference could not type (unused Dropout masks) may lack static facts
    assert all(m.expected[0] == "undefined" for m in mismatches), mismatches


@pytest.mark.parametrize("path", MODELS, ids=[os.path.basename(p)[:-5] for p in MODELS])
def test_zoo_model(path: str, ort_session_options):
    _compare(onnx.load(path), ort_session_options)


#: alexnet, vgg19 and zfnet512 have 60-140 M parameters in fully connected layers, which take
#: long to randomise; their op types are all covered by the other models.
RANDOMISED = [p for p in MODELS if not any(k in p for k in ("alexnet", "vgg19", "zfnet"))]


@pytest.mark.parametrize("path", RANDOMISED, ids=[os.path.basename(p)[:-5] for p in RANDOMISED])
def test_zoo_model_random_weights(path: str, ort_session_options):
    model = randomize_weights(onnx.load(path))
    _compare(model, ort_session_options)


def test_there_are_nine_zoo_models():
    assert len(MODELS) == 9
