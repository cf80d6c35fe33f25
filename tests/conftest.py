"""Shared pytest fixtures: the ONNX zoo models in the onnx wheel and a Ramiel context.

The nine ``light_*.onnx`` files in ``onnx/backend/test/data/light/`` are small-file versions of
classic ImageNet CNNs (AlexNet, DenseNet-121, GoogLeNet/Inception v1, Inception v2, ResNet-50,
ShuffleNet, SqueezeNet, VGG-19, ZFNet-512): real topologies and shapes at opset 9, with every
weight produced by a ConstantOfShape node instead of stored, so each file is a few kB.
"""

from __future__ import annotations

import glob
import os

import onnx
import pytest
from xdsl.context import Context

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

ZOO_DIR = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
"""Directory of the ONNX zoo models shipped in the installed onnx wheel."""

ZOO_MODELS: dict[str, str] = {
    os.path.basename(p)[: -len(".onnx")]: p
    for p in sorted(glob.glob(os.path.join(ZOO_DIR, "light_*.onnx")))
}
"""Zoo model name (``light_inception_v1``) -> path of its ``.onnx`` file."""


@pytest.fixture(scope="session")
def zoo_models() -> dict[str, str]:
    """Name -> path of the nine zoo models (fails, rather than skips, if they are missing)."""
    assert len(ZOO_MODELS) == 9, f"expected the nine light_*.onnx zoo models in {ZOO_DIR}"
    return ZOO_MODELS


@pytest.fixture(scope="session")
def ramiel_ctx() -> Context:
    """An xDSL context with every Ramiel dialect registered."""
    from ramiel.dialects.registry import make_context

    return make_context()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test taking a ``zoo_model`` argument runs once per zoo model (the argument is its name)."""
    if "zoo_model" in metafunc.fixturenames:
        metafunc.parametrize("zoo_model", sorted(ZOO_MODELS))


# ---------------------------------------------------------------------------------------------
# Helpers of the end-to-end pipeline tests (test_pipeline_*.py, test_random_dags.py,
# test_hostile_names.py, test_clustering_ir.py): numerics against onnxruntime, the inputs onnx's
# backend test runner feeds the zoo models, random weights for the zoo models.
# ---------------------------------------------------------------------------------------------


def max_rel_error(actual, expected) -> float:
    """Largest absolute difference relative to the largest magnitude of ``expected``.

    Random-weight outputs span many orders of magnitude, so an element-wise rtol would be either
    too loose for the large values or too strict for the tiny ones.
    """
    import numpy as np

    a = np.asarray(actual.numpy() if hasattr(actual, "numpy") else actual, dtype=np.float64)
    e = np.asarray(expected.numpy() if hasattr(expected, "numpy") else expected, dtype=np.float64)
    assert a.shape == e.shape, f"shape {a.shape} != expected {e.shape}"
    if e.size == 0:
        return 0.0
    scale = float(np.max(np.abs(e)))
    return float(np.max(np.abs(a - e))) / (scale if scale > 0 else 1.0)


def assert_close(actual, expected, rtol: float = 1e-3, what: str = "") -> None:
    """``max_rel_error(actual, expected) <= rtol`` with a readable message."""
    err = max_rel_error(actual, expected)
    assert err <= rtol, f"{what}: max error {err:.3g} of the largest magnitude (> {rtol})"


def ort_run(model, feeds) -> list:
    """onnxruntime's outputs (one intra-op thread, no graph optimisation beyond basic)."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    data = model.SerializeToString() if isinstance(model, onnx.ModelProto) else model
    sess = ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])
    return sess.run(None, {k: (v.numpy() if hasattr(v, "numpy") else v) for k, v in feeds.items()})


def onnx_backend_inputs(model: onnx.ModelProto) -> dict:
    """The inputs onnx's backend test runner feeds a ``light`` zoo model (its expected outputs,
    ``light_*_output_0.pb``, were computed from these): ``Runner.generate_dummy_data`` with
    ``random=False``, i.e. ``arange(n).reshape(shape) / n`` for every non-initializer input."""
    from onnx.backend.test.runner import Runner

    inits = {t.name for t in model.graph.initializer}
    return {
        x.name: Runner.generate_dummy_data(x, seed=0, name=model.graph.name, random=False)
        for x in model.graph.input
        if x.name not in inits
    }


def expected_zoo_outputs(path: str, model: onnx.ModelProto) -> list:
    """The expected outputs shipped beside a zoo model (``<model>_output_<i>.pb``)."""
    from onnx import numpy_helper

    prefix = os.path.splitext(path)[0]
    out = []
    for i in range(len(model.graph.output)):
        t = onnx.TensorProto()
        with open(f"{prefix}_output_{i}.pb", "rb") as f:
            t.ParseFromString(f.read())
        out.append(numpy_helper.to_array(t))
    return out


def randomize_weights(model: onnx.ModelProto, seed: int = 0) -> onnx.ModelProto:
    """A copy of ``model`` whose weights are seeded random values of the same shapes.

    Every ConstantOfShape with a constant shape (the zoo models' weights) becomes an initializer,
    and every float initializer with more than one element is redrawn: He-scaled normal for
    Conv/Gemm/MatMul weights, uniform [0.5, 1.5] for BatchNormalization scales and variances and
    for multipliers, normal(0, 0.1) otherwise. Initializers are also listed as graph inputs when
    the IR version requires it (< 4).
    """
    import numpy as np
    from onnx import numpy_helper

    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    rng = np.random.default_rng(seed)
    inits = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    consumers: dict[str, tuple[str, int]] = {}
    for n in g.node:
        for i, name in enumerate(n.input):
            consumers.setdefault(name, (n.op_type, i))

    def uniform(shape: tuple[int, ...], lo: float, hi: float):
        w = rng.random(shape, dtype=np.float32)  # float32 uniform: fast for 100M-weight layers
        w *= np.float32(hi - lo)
        w += np.float32(lo)
        return w

    def draw(name: str, shape: tuple[int, ...]):
        op, idx = consumers.get(name, ("", 0))
        if op in ("Conv", "Gemm", "MatMul", "ConvTranspose") and idx == 1 and len(shape) >= 2:
            fan_in = int(np.prod(shape[1:])) if op != "MatMul" else shape[0]
            if op == "Gemm":
                fan_in = shape[-1]
            a = float(np.sqrt(6.0 / max(fan_in, 1)))  # He: variance 2 / fan_in
            return uniform(shape, -a, a)
        if (op == "BatchNormalization" and idx in (1, 4)) or op in ("Mul", "Unsqueeze"):
            return uniform(shape, 0.5, 1.5)
        return uniform(shape, -0.17, 0.17)  # standard deviation ~0.1

    keep = []
    for n in g.node:
        if n.op_type == "ConstantOfShape" and n.input and n.input[0] in inits:
            shape = tuple(int(d) for d in inits[n.input[0]])
            g.initializer.append(numpy_helper.from_array(draw(n.output[0], shape), n.output[0]))
            if m.ir_version < 4:
                g.input.append(onnx.helper.make_tensor_value_info(n.output[0], 1, shape))
        else:
            keep.append(n)
    del g.node[:]
    g.node.extend(keep)
    used = {name for n in g.node for name in n.input} | {o.name for o in g.output}
    kept = [t for t in g.initializer if t.name in used]
    del g.initializer[:]
    g.initializer.extend(kept)
    inputs = [x for x in g.input if x.name in used]
    del g.input[:]
    g.input.extend(inputs)
    for t in g.initializer:
        arr = numpy_helper.to_array(t)
        if arr.dtype == np.float32 and arr.size > 1 and t.name in inits:
            t.CopyFrom(numpy_helper.from_array(draw(t.name, arr.shape), t.name))
    return m


@pytest.fixture(scope="session")
def pipeline_helpers():
    """The helpers above, for test modules: ``pipeline_helpers.assert_close(...)`` etc."""
    from types import SimpleNamespace

    return SimpleNamespace(
        max_rel_error=max_rel_error,
        assert_close=assert_close,
        ort_run=ort_run,
        onnx_backend_inputs=onnx_backend_inputs,
        expected_zoo_outputs=expected_zoo_outputs,
        randomize_weights=randomize_weights,
    )
