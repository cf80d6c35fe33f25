"""Shared pytest fixtures: the ONNX zoo models in the onnx wheel and a Ramiel context.

This is the only ``conftest.py`` of the suite: test modules import helpers from it (``from
conftest import ...``), which works only while no other ``conftest`` module shadows it (pytest
imports every ``conftest.py`` as the module ``conftest``), so the fixtures and markers of
``tests/lowering`` and ``tests/conformance`` live here too.

The nine ``light_*.onnx`` files in ``onnx/backend/test/data/light/`` are small-file versions of
classic ImageNet CNNs (AlexNet, DenseNet-121, GoogLeNet/Inception v1, Inception v2, ResNet-50,
ShuffleNet, SqueezeNet, VGG-19, ZFNet-512): real topologies and shapes at opset 9, with every
weight produced by a ConstantOfShape node instead of stored, so each file is a few kB.
"""

from __future__ import annotations

import os

import onnx
import pytest
from xdsl.context import Context

from ramiel.bench.models import zoo_dir, zoo_models

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
# The default's onednn-graph segments (compile="auto") trace and fuse on each program's first
# call, in a child process first: everywhere, they made the suite take 21 minutes instead of 10
# on 2 cores. So the suite compiles the eager program unless a test asks for the default's
# segments (the fixture default_segments); the segments' own tests name their backend.
os.environ.setdefault("RAMIEL_AUTO_SEGMENTS", "0")


@pytest.fixture
def trace_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    """The trace wins the timing against eager that picks how a traced segment runs
    (``ramiel.runtime.compiled._time_against_eager``), so that a test sees the trace whatever
    the machine's load; in this process only (a worker the processes backend starts from its
    forkserver times for real)."""
    from ramiel.runtime import compiled  # lazy: torch

    monkeypatch.setattr(compiled, "_time_against_eager", lambda *_: (1.0, 2.0))


@pytest.fixture
def default_segments(monkeypatch: pytest.MonkeyPatch) -> None:
    """The default compile option's onednn-graph segments, where they pay (see above)."""
    monkeypatch.setenv("RAMIEL_AUTO_SEGMENTS", "1")


ZOO_DIR = zoo_dir()
"""Directory of the ONNX zoo models shipped in the installed onnx wheel
(:func:`ramiel.bench.zoo_dir`, the one home of that path)."""

ZOO_MODELS: dict[str, str] = zoo_models()
"""Zoo model name (``light_inception_v1``) -> path of its ``.onnx`` file, sorted by name
(:func:`ramiel.bench.zoo_models`)."""


@pytest.fixture(scope="session")
def zoo_models() -> dict[str, str]:
    """Name -> path of the nine zoo models (fails, rather than skips, if they are missing)."""
    assert len(ZOO_MODELS) == 9, f"expected the nine light_*.onnx zoo models in {ZOO_DIR}"
    return ZOO_MODELS


@pytest.fixture(scope="session")
def ramiel_ctx() -> Context:
    """An xDSL context with every Ramiel dialect registered."""
    from ramiel.context import make_context

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


from ramiel.models import randomize_weights  # noqa: E402


@pytest.fixture(scope="session")
def exported_model(tmp_path_factory):
    """``exported_model(name, opset=17)``: the ONNX file of a :mod:`ramiel.models` model (the
    project's or a ``transformers`` one), exported once per session into a temporary directory."""
    from ramiel import models

    out = tmp_path_factory.mktemp("exported-models")
    cache: dict[tuple[str, int], str] = {}

    def get(name: str, opset: int = 17) -> str:
        if (name, opset) not in cache:
            path = out / f"{name}-opset{opset}.onnx"
            cache[name, opset] = models.export_model(name, path=path, opset=opset)
        return cache[name, opset]

    return get


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


# ---------------------------------------------------------------------------------------------
# Markers and onnxruntime options shared by the lowering and conformance tests.
# ---------------------------------------------------------------------------------------------


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "zoo: an ONNX zoo model test (light_*; ~30 s together); deselect with -m 'not zoo'",
    )


SLOW_TESTS_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "slow_tests.txt")
"""The measured long tests, one ``path::function`` a line (``scripts/slow_tests.py`` writes it
from a ``--durations`` run): every test of those functions gets the ``slow`` marker, so the
default ``python -m pytest`` is the fast tier and ``-m slow`` the slow one."""


def _slow_tests() -> frozenset[str]:
    try:
        with open(SLOW_TESTS_FILE, encoding="utf-8") as f:
            lines = [line.split("#", 1)[0].strip() for line in f]
    except FileNotFoundError:
        return frozenset()
    return frozenset(line for line in lines if line)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests of :data:`SLOW_TESTS_FILE` ``slow`` (before ``-m`` deselects)."""
    slow = _slow_tests()
    for item in items:
        if item.nodeid.split("[", 1)[0] in slow:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def ort_session_options():
    """onnxruntime session options: one thread, no spinning (so torch keeps the cores), quiet,
    no graph optimisation (the light models would materialise all ConstantOfShape weights)."""
    ort = pytest.importorskip("onnxruntime")
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return so


# ---------------------------------------------------------------------------------------------
# Helpers of the command-line error tests: a user error is exactly one "error:" line.
# ---------------------------------------------------------------------------------------------


def one_error_line(err: str) -> str:
    """The single ``error:`` (or ``file:line:col: error:``) line of a tool's stderr (progress
    lines may precede it, the offending IR line and a caret may follow it): no
    traceback, not the line of an unexpected exception (a bug in Ramiel), no second error
    line."""
    from ramiel.errors import INTERNAL_ERROR

    assert "Traceback" not in err, err
    assert INTERNAL_ERROR not in err, err
    import re

    located = re.compile(r"^\S.*:\d+:\d+: error: ")  # MLIR style: file:line:col: error: ...
    lines = [ln for ln in err.splitlines() if ln.startswith("error:") or located.match(ln)]
    assert len(lines) == 1, err
    assert not [ln for ln in err.splitlines() if ln.strip() and "error" in ln and ln != lines[0]]
    return lines[0]


def gather_model(gathered: str = "g") -> onnx.ModelProto:
    """``g = Gather(a[3, 4], idx[2], axis=1)`` beside ``n = Neg(Relu(a))``: a cluster that raises
    on its data (an index out of range, 4 or more) and one that does not; ``gathered``: the name
    of the Gather's output (a graph output)."""
    from onnx import TensorProto, helper

    vi = helper.make_tensor_value_info
    nodes = [
        helper.make_node("Gather", ["a", "idx"], [gathered], axis=1),
        helper.make_node("Relu", ["a"], ["r"]),
        helper.make_node("Neg", ["r"], ["n"]),
    ]
    graph = helper.make_graph(
        nodes,
        "gather",
        [vi("a", TensorProto.FLOAT, [3, 4]), vi("idx", TensorProto.INT64, [2])],
        [vi(gathered, TensorProto.FLOAT, [3, 2]), vi("n", TensorProto.FLOAT, [3, 4])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def tool_status(main, argv) -> int:  # type: ignore[no-untyped-def]
    """Run a tool's ``main(argv)`` in-process; argparse's exit (a bad value: status 2) is
    returned like the other statuses."""
    try:
        return main(argv)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 1


class StandInMonitor:
    """Stands in for :class:`ramiel.runtime.contention.CoreMonitor` (patched into
    ``ramiel.runtime.runner``): other processes keep :attr:`others` cores busy, as the test sets
    it; ``usable`` ``None``: the runner asks ``usable_cores()``."""

    others = 0.0
    usable = None

    def __init__(self, pids=()):
        self.pids = list(pids)

    def others_busy(self, latest=False):
        return StandInMonitor.others

    def latest_busy(self):
        return None

    def estimate(self, lowered):
        return StandInMonitor.others

    def begin(self):
        pass

    def end(self):
        pass

    def close(self):
        pass
