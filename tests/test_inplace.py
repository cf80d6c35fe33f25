"""``--inplace``: ops that overwrite a fresh operand no one else reads, on both backends.

Property tests on the random DAGs of ``test_random_dags`` (forks, joins, several outputs,
convolutions followed by activations and element-wise ops): for 2 and 3 clusters on the threads
and on the processes backend, the program with in-place ops gives exactly the outputs of the
program without them, both match onnxruntime, a second call gives the same outputs (no weight
was overwritten) and the caller's inputs are unchanged. The ``transformers`` ResNet gets its
ReLUs and residual Adds in place. Flattening a clustered program whose cloned producer feeds an
in-place op in one cluster and another reader in the other drops that claim (the sequential
module must not overwrite a tensor two ops read).
"""

from __future__ import annotations

import os

import numpy as np
import onnx
import pytest
import torch
from hypothesis import HealthCheck, given, seed, settings
from test_random_dags import build_model, dag_specs

from ramiel import models
from ramiel.compiler import CompiledModel, CompileOptions, compile_model

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")


@pytest.fixture(autouse=True)
def _one_thread():
    prev = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(prev)


def _run_twice(model: CompiledModel, feeds: dict[str, torch.Tensor]):
    copies = {k: v.clone() for k, v in feeds.items()}
    first = model.run(feeds)
    second = model.run(feeds)
    for k, v in feeds.items():
        assert torch.equal(v, copies[k]), f"input {k} was overwritten"
    for k in first:
        assert torch.equal(first[k], second[k]), f"{k}: a second call differs (a weight changed?)"
    seq = model.sequential(*[feeds[k] for k in model.input_specs])
    for k, v in feeds.items():
        assert torch.equal(v, copies[k]), f"input {k} was overwritten by the sequential module"
    return first, seq if isinstance(seq, tuple) else (seq,)


_INPLACE_SEEDS = {
    "threads": 9522039126367222652811211636764017838238865498166533393870062137043727779748516983256713053421120531125074629978902,
    "processes": 2945855908402240993209661361686052078128187662723320073191911664759000525061829107272681508374248559591405576457798,
}
"""The examples the property test draws per backend: the seeds ``derandomize`` derived when each
backend was a parametrized ``@given`` test of its own (Hypothesis's digest of the function and
its pytest node id), kept so that moving the coverage check into the test did not change which
DAGs it tries."""


def test_random_dag_inplace(tmp_path_factory, pipeline_helpers):
    """Random DAGs with and without in-place ops agree with onnxruntime and each other on both
    backends, and a fair share of the programs had in-place ops (counted by this test itself:
    no state shared with other tests)."""
    marked: list[int] = []

    def property_test(backend: str):
        @seed(_INPLACE_SEEDS[backend])
        @settings(
            max_examples=12,
            deadline=None,
            derandomize=True,
            suppress_health_check=[HealthCheck.too_slow],
        )
        @given(spec=dag_specs())
        def inplace(spec):
            _check_inplace(backend, spec, tmp_path_factory, pipeline_helpers, marked)

        return inplace

    for backend in _INPLACE_SEEDS:
        property_test(backend)()
    assert sum(m > 0 for m in marked) >= len(marked) // 4, marked


def _check_inplace(backend, spec, tmp_path_factory, pipeline_helpers, marked: list[int]) -> None:
    model = build_model(spec)
    rng = np.random.default_rng(spec[3] + 2)
    feeds = {
        x.name: torch.from_numpy(
            rng.standard_normal([d.dim_value for d in x.type.tensor_type.shape.dim]).astype(
                np.float32
            )
        )
        for x in model.graph.input
    }
    ref = pipeline_helpers.ort_run(model, feeds)
    names = [o.name for o in model.graph.output]
    for clusters in (2, 3):
        outs = {}
        for disable in ((), ("inplace",)):
            opts = CompileOptions(clusters=clusters, backend=backend, disable=disable)
            res = compile_model(model, str(tmp_path_factory.mktemp("inplace")), opts)
            with open(res.ir_path) as f:
                marks = f.read().count("ramiel.inplace")
            if disable:
                assert marks == 0
            else:
                marked.append(marks)
            with CompiledModel(res, opts) as m:
                outs[disable] = _run_twice(m, dict(feeds))
        what = f"{backend}, {clusters} clusters"
        (par, seq), (par0, seq0) = outs[()], outs[("inplace",)]
        for k, (name, r) in enumerate(zip(names, ref, strict=True)):
            pipeline_helpers.assert_close(par[name], r, 1e-4, f"{name} parallel, {what}")
            assert torch.equal(par[name], par0[name]), f"{name}: in-place changed it, {what}"
            assert torch.equal(seq[k], seq0[k]), f"{name}: in-place changed sequential, {what}"


def test_resnet_relu_and_residual_in_place(tmp_path, pipeline_helpers):
    path = models.export_model("hf_resnet_test", path=tmp_path / "r.onnx")
    names = models.input_names("hf_resnet_test")
    feeds = dict(zip(names, models.example_inputs("hf_resnet_test"), strict=True))
    (ref,) = pipeline_helpers.ort_run(onnx.load(path), feeds)
    for backend in ("threads", "processes"):
        opts = CompileOptions(clusters=2, backend=backend)
        res = compile_model(path, str(tmp_path / backend), opts)
        with open(res.sequential_path) as f:
            code = f.read()
        # the 2 ReLUs after the residual Adds and those 2 Adds in place; the 5 ReLUs after a
        # Conv run in the prepacked Conv
        assert code.count("torch.relu_(") == 2 and code.count(".add_(") == 2, code
        assert code.count("activation='relu'") == 5 and "torch.relu(" not in code, code
        with CompiledModel(res, opts) as m:
            par, seq = _run_twice(m, dict(feeds))
        pipeline_helpers.assert_close(par["logits"], ref, 1e-4, backend)
        pipeline_helpers.assert_close(seq[0], ref, 1e-4, f"{backend} sequential")


CLONED = """
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @main(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %w = "onnx.Constant"() <{value = dense<0.5> : tensor<2x2x1x1xf32>}> : () -> tensor<2x2x1x1xf32>
  %a = "cluster.cluster"() <{sym_name = "c0"}> ({
    %c = "onnx.Conv"(%x, %w) <{kernel_shape = [1 : si64, 1 : si64]}> : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
    %r = "onnx.Relu"(%c) {ramiel.inplace = 0 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
    "cluster.yield"(%r) : (tensor<1x2x4x4xf32>) -> ()
  }) : () -> tensor<1x2x4x4xf32>
  %b = "cluster.cluster"() <{sym_name = "c1"}> ({
    %c1 = "onnx.Conv"(%x, %w) <{kernel_shape = [1 : si64, 1 : si64]}> : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
    %s = "onnx.Sigmoid"(%c1) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
    "cluster.yield"(%s) : (tensor<1x2x4x4xf32>) -> ()
  }) : () -> tensor<1x2x4x4xf32>
  func.return %a, %b : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}
}
"""


def test_flattening_drops_broken_claims(ramiel_ctx):
    """The clone of the Conv in c1 is merged with c0's when the program is flattened: the Conv
    then has two readers, so the Relu must not overwrite it in the sequential module."""
    from ramiel.parsing import parse_module
    from ramiel.passes.lower_to_torchpy import LowerToTorchpy
    from ramiel.printer import print_python

    par = parse_module(ramiel_ctx, CLONED)
    par.verify()
    seq = par.clone()
    LowerToTorchpy().apply(ramiel_ctx, par)
    LowerToTorchpy(mode="sequential").apply(ramiel_ctx, seq)
    assert "torch.relu_(" in print_python(par, "test")
    code = print_python(seq, "test")
    assert "torch.relu_(" not in code and "torch.relu(" in code


def _sum_joins_model() -> onnx.ModelProto:
    """Residual joins written as ONNX ``Sum`` (the zoo's ResNet-50 exports them so): a two-input
    Sum of a Conv and the block input, a three-input Sum, a one-input Sum of a graph output."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(3)
    w = numpy_helper.from_array(rng.standard_normal((4, 4, 3, 3)).astype(np.float32) * 0.2, "w")
    n = helper.make_node
    nodes = [
        n("Relu", ["x"], ["r"]),
        n("Conv", ["r", "w"], ["c"], pads=[1, 1, 1, 1]),
        n("Sum", ["c", "r"], ["s"]),
        n("Relu", ["s"], ["y"]),
        n("Conv", ["y", "w"], ["c2"], pads=[1, 1, 1, 1]),
        n("Conv", ["y", "w"], ["c3"], pads=[1, 1, 1, 1]),
        n("Sum", ["y", "c2", "c3"], ["s3"]),
        n("Relu", ["s3"], ["z"]),
        n("Conv", ["z", "w"], ["c4"], pads=[1, 1, 1, 1]),
        n("Sum", ["c4"], ["one"]),
        n("Relu", ["one"], ["out1"]),
    ]
    t = helper.make_tensor_value_info
    graph = helper.make_graph(
        nodes,
        "sum_joins",
        [t("x", TensorProto.FLOAT, [1, 4, 8, 8])],
        [t("out1", TensorProto.FLOAT, [1, 4, 8, 8]), t("c4", TensorProto.FLOAT, [1, 4, 8, 8])],
        [w],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


@pytest.mark.parametrize("backend", ["threads", "processes"])
def test_sum_joins_in_place(tmp_path, pipeline_helpers, backend):
    """ONNX Sum joins overwrite their fresh Conv input (``c.add_(r)``, the three-input one
    ``c2.add_(y).add_(c3)``) and the Relu after each runs in place; the one-input Sum is its
    input, a graph output, so the Relu after it must not overwrite it. Outputs match
    onnxruntime on the parallel and the sequential module, inputs and weights unchanged."""
    model = _sum_joins_model()
    feeds = {
        "x": torch.from_numpy(
            np.random.default_rng(4).standard_normal((1, 4, 8, 8)).astype(np.float32)
        )
    }
    ref = pipeline_helpers.ort_run(model, feeds)
    opts = CompileOptions(clusters=2, backend=backend)
    res = compile_model(model, str(tmp_path), opts)
    with open(res.sequential_path) as f:
        code = f.read()
    assert code.count(".add_(") == 3, code
    assert code.count("torch.relu_(") == 2 and code.count("torch.relu(") == 2, code
    with CompiledModel(res, opts) as m:
        par, seq = _run_twice(m, dict(feeds))
    for k, (name, r) in enumerate(zip(["out1", "c4"], ref, strict=True)):
        pipeline_helpers.assert_close(par[name], r, 1e-4, f"{name} parallel")
        pipeline_helpers.assert_close(seq[k], r, 1e-4, f"{name} sequential")


def _saved_result_model() -> onnx.ModelProto:
    """``relu(sigmoid(x) + 1) * 3``: --inplace writes the Add into the Sigmoid's result, which
    autograd saves for the Sigmoid's backward, and the Mul into the Relu's, saved for its."""
    from onnx import TensorProto, helper, numpy_helper

    g = helper.make_graph(
        [
            helper.make_node("Sigmoid", ["x"], ["s"]),
            helper.make_node("Add", ["s", "one"], ["a"]),
            helper.make_node("Relu", ["a"], ["r"]),
            helper.make_node("Mul", ["r", "three"], ["y"]),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [
            numpy_helper.from_array(np.array(1, np.float32), "one"),
            numpy_helper.from_array(np.array(3, np.float32), "three"),
        ],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def test_backward_through_in_place_statements(tmp_path):
    """An input gradient (a saliency map) through a module with in-place statements: the
    module runs them as copies under autograd (ops.records_autograd, then
    torch.func.functionalize) and gives torch's own gradient; without autograd it runs them in
    place, as printed. backward() had failed: the Sigmoid's saved result was overwritten."""
    options = CompileOptions(clusters=1)
    res = compile_model(_saved_result_model(), str(tmp_path / "out"), options)
    with open(tmp_path / "out" / "model_seq.py") as f:
        src = f.read()
    assert ".add_(" in src and "if ops.records_autograd(x):" in src
    with CompiledModel(res, options) as m:
        x = torch.randn(2, 3, requires_grad=True)
        y = m.sequential(x)
        y.sum().backward()
        ref_x = x.detach().clone().requires_grad_(True)
        ref = torch.relu(torch.sigmoid(ref_x) + 1) * 3
        ref.sum().backward()
        torch.testing.assert_close(y, ref)
        assert x.grad is not None and ref_x.grad is not None
        torch.testing.assert_close(x.grad, ref_x.grad)
        with torch.no_grad():
            torch.testing.assert_close(m.sequential(x), ref.detach())
        # torch.fx follows the straight-line code: the check is plain Python, not a leaf
        traced = torch.fx.symbolic_trace(m.sequential)
        assert "records_autograd" not in traced.code
        torch.testing.assert_close(traced(x.detach()), ref.detach())


def test_no_check_without_in_place_statements(tmp_path):
    compile_model(
        _saved_result_model(),
        str(tmp_path / "out"),
        CompileOptions(clusters=1, disable=["inplace"]),
    )
    with open(tmp_path / "out" / "model_seq.py") as f:
        src = f.read()
    assert "records_autograd" not in src and "_(" not in src.split("def forward")[1]
