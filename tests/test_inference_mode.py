"""Generated programs under ``torch.inference_mode``, the way users run inference.

Tensors made under inference mode have no version counter (``Tensor._version`` raises), which the
threads backend's channel contract and the prepacked kernels' cache read. So: an input made
under inference mode, a model loaded under it (``from_safetensors``), and weights that are
inference tensors must all give onnxruntime's outputs, on both backends and in the sequential
module, and a write into such weights must be seen.
"""

from __future__ import annotations

import os

import numpy as np
import onnx
import pytest
import torch
from conftest import ZOO_DIR

from ramiel.compiler import CompiledModel, CompileOptions, compile_model, generated_class
from ramiel.models import randomize_weights
from ramiel.runtime.program import import_from_path

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")


@pytest.fixture(scope="module")
def squeezenet(tmp_path_factory, pipeline_helpers):  # type: ignore[no-untyped-def]
    """light_squeezenet with seeded random weights, compiled for 2 clusters; its input and
    onnxruntime's output."""
    model = randomize_weights(onnx.load(os.path.join(ZOO_DIR, "light_squeezenet.onnx")), 3)
    x = np.random.default_rng(4).standard_normal((1, 3, 224, 224)).astype(np.float32)
    (name,) = pipeline_helpers.onnx_backend_inputs(model)
    (ref,) = pipeline_helpers.ort_run(model, {name: x})
    out = tmp_path_factory.mktemp("squeezenet")
    return compile_model(model, str(out), CompileOptions(clusters=2)), torch.from_numpy(x), ref


@pytest.mark.parametrize("backend", ["threads", "processes"])
def test_compiled_model_called_under_inference_mode(backend, squeezenet, pipeline_helpers):
    result, x, ref = squeezenet
    with CompiledModel(result, CompileOptions(clusters=2, backend=backend)) as m:
        assert len(m.program.clusters) == 2  # the inputs cross channels
        with torch.inference_mode():
            got = m(x.clone())  # an inference tensor as the input
            seq = m.sequential(x.clone())
        pipeline_helpers.assert_close(got, ref, what=f"{backend} under inference mode")
        pipeline_helpers.assert_close(seq, ref, what="sequential under inference mode")


@pytest.mark.parametrize("backend", ["threads", "processes"])
def test_generated_classes_loaded_under_inference_mode(backend, squeezenet, pipeline_helpers):
    result, x, ref = squeezenet
    par = generated_class(import_from_path(f"im_par_{backend}", result.parallel_path))
    seq = generated_class(import_from_path(f"im_seq_{backend}", result.sequential_path))
    with torch.inference_mode():
        with par.from_safetensors(backend=backend) as m:
            assert not any(t.is_inference() for t in m.buffers())
            pipeline_helpers.assert_close(m(x.clone()), ref, what=f"{backend} loaded")
        s = seq.from_safetensors()
        assert not any(t.is_inference() for t in s.buffers())
        pipeline_helpers.assert_close(s(x.clone()), ref, what="sequential loaded")


def test_inference_tensor_weights_run_and_a_write_is_seen(squeezenet, pipeline_helpers):
    """Weights that are inference tensors (a state dict made under inference mode, assigned):
    the prepacked convolutions run the plain kernel, so a later in-place write counts."""
    result, x, ref = squeezenet
    seq = generated_class(import_from_path("im_seq_assigned", result.sequential_path))
    plain = seq.from_safetensors()
    with torch.inference_mode():
        state = {k: v.clone() for k, v in plain.state_dict().items()}
        m = seq.from_safetensors()
        m.load_state_dict(state, assign=True)
        assert all(t.is_inference() for t in m.buffers())
        pipeline_helpers.assert_close(m(x.clone()), ref, what="inference-tensor weights")
        for t in m.buffers():
            if t.dim() == 4:  # every conv kernel scaled in place: outputs must change
                t.mul_(0.5)
        again = m(x.clone())
    assert not torch.allclose(again, torch.from_numpy(np.asarray(ref)), rtol=1e-2, atol=1e-6)
