"""The ONNX backend interface of Ramiel (:mod:`ramiel.backend`) on small hand-made models.

Compilation ahead for static shapes, lazily per input signature for dynamic shapes and for
inputs the compiler needs as constants, outputs in graph order, ``run_node``, and clear errors
(unsupported ops and attribute values, bad inputs) instead of crashes inside generated code.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import ramiel.backend as backend
from ramiel.errors import RamielError, UnsupportedOpError

F = TensorProto.FLOAT


def _model(nodes, inputs, outputs, opset=17, initializers=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _two_branch_model(batch="N"):
    """x -> (Relu, Sigmoid) -> Add, and a second output Neg(x): two independent branches."""
    return _model(
        [
            helper.make_node("Relu", ["x"], ["a"], name="relu"),
            helper.make_node("Sigmoid", ["x"], ["b"], name="sigmoid"),
            helper.make_node("Add", ["a", "b"], ["y"], name="add"),
            helper.make_node("Neg", ["x"], ["z"], name="neg"),
        ],
        [helper.make_tensor_value_info("x", F, [batch, 4])],
        [
            helper.make_tensor_value_info("y", F, [batch, 4]),
            helper.make_tensor_value_info("z", F, [batch, 4]),
        ],
    )


def _expected(x):
    return np.maximum(x, 0) + 1 / (1 + np.exp(-x)), -x


def test_static_model_compiles_in_prepare_and_runs_in_parallel():
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    with backend.prepare(_two_branch_model(batch=3)) as rep:
        (st,) = rep.stats()  # compiled ahead, before any run
        assert st["clusters"] == 2 and st["parallel"] and st["bound_inputs"] == []
        y, z = rep.run([x])
        ey, ez = _expected(x)
        np.testing.assert_allclose(y, ey, rtol=1e-6)
        np.testing.assert_array_equal(z, ez)
        assert isinstance(y, np.ndarray) and y.dtype == np.float32
        y2, _ = rep.run({"x": x})  # by name, reusing the compilation and its workers
        np.testing.assert_array_equal(y2, y)
        assert len(rep.stats()) == 1


def test_dynamic_shapes_are_bound_at_the_first_run_and_cached_per_signature():
    rng = np.random.default_rng(1)
    with backend.prepare(_two_branch_model()) as rep:
        assert rep.stats() == []  # dynamic batch: nothing compiled yet
        for n in (2, 5, 2):
            x = rng.standard_normal((n, 4)).astype(np.float32)
            y, z = rep.run([x])
            ey, ez = _expected(x)
            np.testing.assert_allclose(y, ey, rtol=1e-6)
            np.testing.assert_array_equal(z, ez)
        assert len(rep.stats()) == 2  # batch 2 reused


def test_inputs_the_compiler_needs_as_constants_are_bound_by_value():
    """Slice's starts/ends as graph inputs: the compiler asks for them as constants, so each
    distinct value gets its own compilation (and an unchanged value reuses one)."""
    i64 = TensorProto.INT64
    m = _model(
        [helper.make_node("Slice", ["x", "starts", "ends", "axes"], ["y"], name="slice")],
        [
            helper.make_tensor_value_info("x", F, [4, 6]),
            helper.make_tensor_value_info("starts", i64, [1]),
            helper.make_tensor_value_info("ends", i64, [1]),
            helper.make_tensor_value_info("axes", i64, [1]),
        ],
        [helper.make_tensor_value_info("y", F, [4, 2])],
    )
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    one = np.array([1], np.int64)
    with backend.prepare(m) as rep:
        for start in (1, 3, 1):
            b = np.array([start], np.int64)
            (y,) = rep.run([x, b, b + 2, one])
            np.testing.assert_array_equal(y, x[:, start : start + 2])
        stats = rep.stats()
        assert len(stats) == 2
        assert stats[0]["bound_inputs"] == ["axes", "ends", "starts"]
        assert stats[0]["clusters"] == 1 and stats[0]["parallel"]


@pytest.mark.parametrize("declared", [[3, 4], ["a", "b"]])
def test_a_reshape_s_shape_given_as_an_input_follows_its_value(declared):
    """Reshape(x, s) with ``s`` a graph input: each value of ``s`` gets its compilation, as
    onnxruntime follows the value. With the result declared ``[3, 4]`` the backend had
    compiled ``x.reshape(3, 4)`` once and returned (3, 4) for every ``s``; declared ``[a, b]``
    it had raised "shape not static" (helper-27)."""
    m = _model(
        [helper.make_node("Reshape", ["x", "s"], ["y"], name="reshape")],
        [
            helper.make_tensor_value_info("x", F, [2, 6]),
            helper.make_tensor_value_info("s", TensorProto.INT64, [2]),
        ],
        [helper.make_tensor_value_info("y", F, declared)],
    )
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    with backend.prepare(m) as rep:
        for s in ([3, 4], [4, 3], [12, -1], [3, 4]):
            (y,) = rep.run([x, np.array(s, np.int64)])
            np.testing.assert_array_equal(y, x.reshape(s))
        assert len(rep.stats()) == 3 and rep.stats()[0]["bound_inputs"] == ["s"]


def test_a_compiled_reshape_to_a_run_time_shape_checks_the_shape_it_is_compiled_for(tmp_path):
    """``ramiel.compile`` of the same model declared ``[3, 4]``: the generated code reshapes to
    the run-time value and raises where it gives another shape than the program is compiled
    for (it had reshaped to (3, 4) whatever the value)."""
    import torch

    import ramiel
    from ramiel.runtime import WorkerError

    m = _model(
        [helper.make_node("Reshape", ["x", "s"], ["y"], name="reshape")],
        [
            helper.make_tensor_value_info("x", F, [2, 6]),
            helper.make_tensor_value_info("s", TensorProto.INT64, [2]),
        ],
        [helper.make_tensor_value_info("y", F, [3, 4])],
    )
    x = torch.arange(12, dtype=torch.float32).reshape(2, 6)
    with ramiel.compile(m, clusters=1, out_dir=str(tmp_path)) as c:
        assert c(x, torch.tensor([3, -1])).shape == (3, 4)
        with pytest.raises(WorkerError, match=r"gives \(4, 3\), and the program is compiled"):
            c(x, torch.tensor([4, 3]))
        with pytest.raises(ValueError, match=r"compiled for \(3, 4\)"):
            c.sequential(x, torch.tensor([4, 3]))


def test_graph_folded_at_compile_time_runs_the_generated_sequential_module():
    """Shape of a static input is a compile-time constant: no parallel program is left."""
    m = _model(
        [helper.make_node("Shape", ["x"], ["s"], name="shape")],
        [helper.make_tensor_value_info("x", F, [2, 3])],
        [helper.make_tensor_value_info("s", TensorProto.INT64, [2])],
    )
    with backend.prepare(m) as rep:
        (s,) = rep.run([np.zeros((2, 3), np.float32)])
        np.testing.assert_array_equal(s, [2, 3])
        assert rep.stats()[0]["clusters"] <= 1  # no parallel program: the ops were folded away
        s[0] = 7  # the caller owns its outputs: a later run is unaffected
        (s,) = rep.run([np.zeros((2, 3), np.float32)])
        np.testing.assert_array_equal(s, [2, 3])


def test_output_aliasing_an_input_is_a_copy():
    m = _model(
        [helper.make_node("Identity", ["x"], ["y"], name="id")],
        [helper.make_tensor_value_info("x", F, [3])],
        [helper.make_tensor_value_info("y", F, [3])],
    )
    x = np.ones(3, np.float32)
    with backend.prepare(m) as rep:
        (y,) = rep.run([x])
    y[0] = 5
    assert x[0] == 1


def test_run_node_builds_a_one_node_model():
    node = helper.make_node("LeakyRelu", ["x"], ["y"], alpha=0.5)
    x = np.array([-2.0, 3.0], np.float32)
    (y,) = backend.run_node(node, [x])
    np.testing.assert_array_equal(y, [-1.0, 3.0])


def test_supports_only_the_cpu():
    assert backend.supports_device("CPU")
    assert not backend.supports_device("CUDA")
    with pytest.raises(RamielError, match="CUDA"):
        backend.prepare(_two_branch_model(3), "CUDA")


def _assert_clear(err: UnsupportedOpError, op: str, node: str, opset: int, what: str):
    assert (op, node, opset) == err.items[0][:3], err.items
    assert what in err.items[0][3]
    msg = str(err)
    assert op in msg and f"'{node}'" in msg and f"opset {opset}" in msg and what in msg


def test_unsupported_op_is_reported_with_op_node_opset_and_reason():
    assert "Bernoulli" not in __import__("ramiel.lowering", fromlist=["RULES"]).RULES
    m = _model(
        [
            helper.make_node("Relu", ["x"], ["a"], name="relu"),
            helper.make_node("Bernoulli", ["a"], ["y"], name="coin"),
        ],
        [helper.make_tensor_value_info("x", F, [4])],
        [helper.make_tensor_value_info("y", F, [4])],
    )
    with pytest.raises(UnsupportedOpError) as info:
        backend.prepare(m)
    _assert_clear(info.value, "Bernoulli", "coin", 17, "")


def test_unsupported_attribute_value_is_reported_before_any_code_runs():
    m = _model(
        [helper.make_node("Gelu", ["x"], ["y"], name="gelu", approximate="sigmoid")],
        [helper.make_tensor_value_info("x", F, [4])],
        [helper.make_tensor_value_info("y", F, [4])],
        opset=20,
    )
    with pytest.raises(UnsupportedOpError) as info:
        backend.prepare(m)
    _assert_clear(info.value, "Gelu", "gelu", 20, "approximate='sigmoid'")


def test_unsupported_element_type_and_domain_are_reported():
    m = _model(
        [helper.make_node("Identity", ["x"], ["y"], name="id")],
        [helper.make_tensor_value_info("x", TensorProto.STRING, [4])],
        [helper.make_tensor_value_info("y", TensorProto.STRING, [4])],
    )
    with pytest.raises(UnsupportedOpError) as info:
        backend.prepare(m)
    assert info.value.items == [("<tensor>", "x", 17, "element type STRING")]
    # a tensor, not a node (it had read "<tensor> (node 'x'; opset 17)": helper-22)
    assert str(info.value) == (
        "unsupported ONNX operator(s): tensor 'x' (opset 17): element type STRING"
    )

    m = _model(
        [helper.make_node("Foo", ["x"], ["y"], name="foo", domain="com.example")],
        [helper.make_tensor_value_info("x", F, [4])],
        [helper.make_tensor_value_info("y", F, [4])],
    )
    m.opset_import.append(helper.make_opsetid("com.example", 1))
    with pytest.raises(UnsupportedOpError) as info:
        backend.prepare(m)
    _assert_clear(info.value, "com.example.Foo", "foo", 1, "domain")


def test_lazy_compilation_reports_unsupported_ops_at_the_first_run():
    m = _model(
        [helper.make_node("Bernoulli", ["x"], ["y"], name="coin")],
        [helper.make_tensor_value_info("x", F, ["N"])],
        [helper.make_tensor_value_info("y", F, ["N"])],
    )
    with backend.prepare(m) as rep, pytest.raises(UnsupportedOpError) as info:
        rep.run([np.zeros(3, np.float32)])
    _assert_clear(info.value, "Bernoulli", "coin", 17, "")


@pytest.mark.parametrize(
    "bad, match",
    [
        ([np.zeros((3, 4), np.float64)], "element type float32"),
        ([np.zeros((4, 4), np.float32)], r"shape \[3,4\]"),
        ([], "takes 1 input"),
        ({"y": np.zeros((3, 4), np.float32)}, "missing"),
    ],
)
def test_bad_inputs_are_clear_errors(bad, match):
    with backend.prepare(_two_branch_model(batch=3)) as rep:
        with pytest.raises(RamielError, match=match):
            rep.run(bad)
        (y, _) = rep.run([np.zeros((3, 4), np.float32)])  # still usable
        np.testing.assert_allclose(y, 0.5)


def test_model_given_as_bytes_or_path(tmp_path):
    m = _two_branch_model(batch=3)
    p = tmp_path / "m.onnx"
    onnx.save(m, p)
    x = np.ones((3, 4), np.float32)
    for src in (m.SerializeToString(), str(p)):
        (y, z) = backend.run_model(src, [x])
        np.testing.assert_array_equal(z, -x)
