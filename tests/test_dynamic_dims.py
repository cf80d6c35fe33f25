"""Unknown dimensions written as numbers: ``dim_value: -1`` (paddle2onnx and others) and ``0``.

A negative ``dim_value`` on a graph input is a dynamic dimension like a ``dim_param``:
``--input-shape`` binds it, and without a binding the import is one error naming the input and
the dimension and suggesting a binding that parses. A ``dim_value`` of 0 is a real (empty)
dimension unless ``--input-shape`` binds it. Negative dimensions on outputs and ``value_info``
are forgotten before shape inference, and no negative dimension reaches the IR (the ``onnx``
verifier rejects one; the lowering rejects a dynamic graph input of hand-written IR).
"""

from __future__ import annotations

import os

import numpy as np
import onnx
import pytest
import torch
from conftest import one_error_line, tool_status
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.builtin import TensorType, f32
from xdsl.ir import Block
from xdsl.utils.exceptions import VerifyException

import ramiel
from ramiel.dialects import onnx as onnx_d
from ramiel.errors import DynamicShapeError
from ramiel.importer import ImportOptions, import_onnx, parse_input_shape
from ramiel.runtime.program import WorkerError
from ramiel.tools import driver


def paddle_style_model() -> onnx.ModelProto:
    """Conv -> Relu -> GlobalAveragePool -> Flatten -> MatMul, input ``x: float[-1, 3, -1, -1]``,
    output ``y: float[-1, 10]`` and a ``value_info`` with -1 dimensions, as paddle2onnx writes
    them."""
    rng = np.random.default_rng(0)
    inits = [
        numpy_helper.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float32), "W"),
        numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), "B"),
        numpy_helper.from_array(rng.standard_normal((8, 10)).astype(np.float32), "F"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "W", "B"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("GlobalAveragePool", ["r"], ["p"]),
        helper.make_node("Flatten", ["p"], ["f"]),
        helper.make_node("MatMul", ["f", "F"], ["y"]),
    ]
    g = helper.make_graph(
        nodes,
        "paddle",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [-1, 3, -1, -1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [-1, 10])],
        inits,
        value_info=[helper.make_tensor_value_info("c", TensorProto.FLOAT, [-1, 8, -1, -1])],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def test_negative_dim_compiles_with_binding_and_matches_onnxruntime(pipeline_helpers):
    model = paddle_style_model()
    x = np.random.default_rng(1).standard_normal((2, 3, 16, 12)).astype(np.float32)
    (ref,) = pipeline_helpers.ort_run(model, {"x": x})
    with ramiel.compile(model, clusters=2, input_shapes={"x": (2, 3, 16, 12)}) as m:
        pipeline_helpers.assert_close(m(torch_tensor(x)), ref, what="parallel")
        pipeline_helpers.assert_close(m.sequential(torch_tensor(x)), ref, what="sequential")
        assert m.input_specs["x"][0] == (2, 3, 16, 12)


def torch_tensor(a: np.ndarray):
    import torch

    return torch.from_numpy(a)


def test_negative_dim_without_binding_names_input_and_dimension():
    with pytest.raises(DynamicShapeError) as e:
        import_onnx(paddle_style_model())
    msg = str(e.value)
    assert "graph input 'x' has a dynamic dimension 0 (dim_value -1)" in msg
    assert "dimensions 0, 2, 3" in msg
    # the suggested binding parses, and binds
    suggested = msg.split("--input-shape ")[1].split(" ")[0]
    name, shape = parse_input_shape(suggested)
    assert (name, shape) == ("x", (1, 3, 1, 1))
    module = import_onnx(paddle_style_model(), ImportOptions(input_shapes={name: shape}))
    fn = next(o for o in module.walk() if o.name == "func.func")
    assert fn.function_type.outputs.data[0].get_shape() == (1, 10)


def test_no_negative_dimension_reaches_the_ir():
    module = import_onnx(paddle_style_model(), ImportOptions(input_shapes={"x": (1, 3, 8, 8)}))
    for op in module.walk():
        for v in [*op.results, *(a for r in op.regions for b in r.blocks for a in b.args)]:
            if isinstance(v.type, TensorType):
                assert all(d >= 0 for d in v.type.get_shape()), (op.name, v.type)


def test_bound_dimension_must_agree_with_fixed_ones():
    with pytest.raises(DynamicShapeError, match="dimension 1 is fixed to 3 in the model, 4 given"):
        import_onnx(paddle_style_model(), ImportOptions(input_shapes={"x": (1, 4, 8, 8)}))
    with pytest.raises(DynamicShapeError, match="-2 is not a size"):
        import_onnx(paddle_style_model(), ImportOptions(input_shapes={"x": (1, 3, -2, 8)}))


def test_zero_dim_is_empty_unless_bound():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [0, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [0, 3])
    model = helper.make_model(
        helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y]),
        opset_imports=[helper.make_opsetid("", 17)],
        ir_version=8,
    )
    fn = next(o for o in import_onnx(model).walk() if o.name == "func.func")
    assert fn.function_type.inputs.data[0].get_shape() == (0, 3)
    bound = import_onnx(model, ImportOptions(input_shapes={"x": (4, 3)}))
    fn = next(o for o in bound.walk() if o.name == "func.func")
    assert fn.function_type.inputs.data[0].get_shape() == (4, 3)
    assert fn.function_type.outputs.data[0].get_shape() == (4, 3)


@pytest.mark.parametrize("spec", ["x=-1,3", "x=0,3", "x=1,-3"])
def test_input_shape_values_must_be_sizes(spec):
    with pytest.raises(ValueError, match="dimensions must be positive"):
        parse_input_shape(spec)


def test_verifier_rejects_a_negative_dimension():
    t = TensorType(f32, [-5, 3])
    block = Block(arg_types=[t])
    op = onnx_d.create("Relu", [block.args[0]], [t])
    block.add_op(op)
    with pytest.raises(VerifyException, match="negative dimension -5"):
        op.verify()


def test_cli_negative_dim(tmp_path, capsys):
    path = str(tmp_path / "paddle.onnx")
    onnx.save(paddle_style_model(), path)
    rc = driver.main(["compile", path, "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert rc == 1
    line = one_error_line(err)
    assert "graph input 'x'" in line and "--input-shape x=1,3,1,1" in line
    rc = driver.main(["compile", path, "-o", str(tmp_path / "out"), "--input-shape", "x=1,3,16,16"])
    assert rc == 0, capsys.readouterr().err
    rc = tool_status(
        driver.main,
        ["compile", path, "-o", str(tmp_path / "out2"), "--input-shape", "x=-1,3,16,16"],
    )
    err = capsys.readouterr().err
    assert rc == 2 and "dimensions must be positive" in one_error_line(err)


def test_lowering_rejects_a_dynamic_graph_input(ramiel_ctx):
    from ramiel.parsing import parse_module
    from ramiel.passes.lower_to_torchpy import LowerToTorchpy

    text = """
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main(%x: tensor<?x3xf32> {onnx.name = "x"}) -> tensor<?x3xf32> {
    %y = "onnx.Relu"(%x) : (tensor<?x3xf32>) -> tensor<?x3xf32>
    func.return %y : tensor<?x3xf32>
  }
}
"""
    module = parse_module(ramiel_ctx, text, "dyn.mlir")
    with pytest.raises(
        DynamicShapeError, match=r"graph input 'x' has a dynamic dimension 0.*x=1,3"
    ):
        LowerToTorchpy().apply(ramiel_ctx, module)


@pytest.mark.parametrize(
    ("y_dims", "message"),
    [
        # y's own symbols: only constant folding sees the Reshape that cannot hold y
        (["B", "T"], "the model does not fit the bound input shapes (x (2, 8), y (2, 9))"),
        # one symbol S in both: the bindings themselves contradict each other
        (["B", "S"], "--input-shape y: dimension 'S' is 8 in the shape of 'x' and 9 here"),
    ],
)
def test_bindings_the_model_does_not_fit_are_one_error_naming_them(
    y_dims, message, tmp_path, capsys
):
    """Two inputs bound to sizes the model cannot take together (as in a BERT export bound
    input_ids=2,8 and attention_mask=2,9): an internal error ('IR invalid after pass
    constant-fold', an xDSL VerifyException from the API) before; now a RamielError naming the
    bindings and the node where constant folding finds it, or the symbol two bindings give two
    sizes (found by fresh-user checks)."""
    nodes = [
        helper.make_node("Shape", ["x"], ["sx"]),
        helper.make_node("Reshape", ["y", "sx"], ["r"], name="reshape_y"),
        helper.make_node("Add", ["x", "r"], ["z"]),
    ]
    io = [
        helper.make_tensor_value_info(n, TensorProto.FLOAT, d)
        for n, d in (("x", ["B", "S"]), ("y", y_dims), ("z", ["B", "S"]))
    ]
    g = helper.make_graph(nodes, "g", io[:2], io[2:])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    with pytest.raises(ramiel.RamielError) as info:
        ramiel.compile(model, input_shapes={"x": [2, 8], "y": [2, 9]}, out_dir=str(tmp_path))
    msg = str(info.value)
    assert msg.startswith(message), msg
    assert ("node 'reshape_y'" in msg) == (y_dims[1] == "T") and "IR invalid" not in msg
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    argv = ["compile", str(path), "-o", str(tmp_path / "o"), "--input-shape", "x=2,8"]
    assert tool_status(driver.main, [*argv, "--input-shape", "y=2,9"]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert message in line, line


def test_declared_shapes_of_data_dependent_results_are_noted(tmp_path):
    """A NonZero whose result the model declares (2, 3) (onnx's test_nonzero_example does):
    compiled with that shape and a note saying that other data fail; a Compress on a constant
    condition has one size, and no note (the parallel program's ChannelError had come with no
    word at compile time; found by a fresh-user check)."""
    from onnx import TensorProto, helper, numpy_helper

    from ramiel.compiler import CompileOptions, compile_model

    g = helper.make_graph(
        [
            helper.make_node("NonZero", ["x"], ["nz"], name="where_nonzero"),
            helper.make_node("Compress", ["v", "keep"], ["c"], axis=0, name="fixed"),
        ],
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2]),
            helper.make_tensor_value_info("v", TensorProto.FLOAT, [3]),
        ],
        [
            helper.make_tensor_value_info("nz", TensorProto.INT64, [2, 3]),
            helper.make_tensor_value_info("c", TensorProto.FLOAT, [2]),
        ],
        [numpy_helper.from_array(np.array([True, False, True]), "keep")],
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    res = compile_model(model, str(tmp_path / "out"), CompileOptions(clusters=1))
    noted = [n for n in res.notes if "the input data decide the size" in n]
    assert len(noted) == 1, res.notes
    assert noted[0].startswith("node 'where_nonzero' (NonZero): ") and "(2, 3)" in noted[0]


def test_a_broadcast_with_an_operand_shape_known_only_after_folding(pipeline_helpers):
    """``Add(x[2, 6], m[1, 1, 1, ?])``, where ``m``'s last dimension comes from ``Shape ->
    Range`` and is 6 once the constants are folded: the verifier skips the broadcast check
    until the shapes are static, and does not take the op for a unary element-wise one (it had
    refused the valid model: "result shape (1, 1, 2, 6) != operand shape (2, 6)"; helper-27).
    Checked against onnxruntime."""
    ints = {"zero": 0, "one": 1, "shp": [1, 1, 1, -1]}
    inits = [numpy_helper.from_array(np.array(v, np.int64), k) for k, v in ints.items()]
    nodes = [
        helper.make_node("Shape", ["x"], ["s"], start=1, end=2),
        helper.make_node("Squeeze", ["s"], ["n"]),
        helper.make_node("Range", ["zero", "n", "one"], ["r"]),
        helper.make_node("Cast", ["r"], ["rf"], to=TensorProto.FLOAT),
        helper.make_node("Reshape", ["rf", "shp"], ["m"]),
        helper.make_node("Add", ["x", "m"], ["y"]),
    ]
    g = helper.make_graph(
        nodes,
        "late_broadcast",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 2, 6])],
        inits,
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    x = np.random.default_rng(0).standard_normal((2, 6)).astype(np.float32)
    (ref,) = pipeline_helpers.ort_run(model, {"x": x})
    with ramiel.compile(model, clusters=1) as m:
        got = m(torch.from_numpy(x))
    pipeline_helpers.assert_close(got, ref, 1e-6, "late broadcast")


@pytest.mark.parametrize("op", ["Expand", "ConstantOfShape", "Reshape"])
def test_a_run_time_shape_operand_is_followed_and_checked(op, pipeline_helpers):
    """A shape operand that is a graph input, with the result declared static (2, 3): the
    program follows the operand's value (checked against onnxruntime) and, for a value that
    gives another shape than the one compiled for, raises one error saying so. The lowering had
    printed ``x.expand(2, 3)`` / ``torch.zeros((2, 3))`` from the declared shape and ignored the
    value: another value gave a (2, 3) result without an error (Reshape had the same bug,
    mended on 2026-12-07; Expand and ConstantOfShape were left)."""
    data = {"Expand": [2, 1], "ConstantOfShape": [2], "Reshape": [6]}[op]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, data)]
    if op == "ConstantOfShape":
        fill = numpy_helper.from_array(np.array([1.5], np.float32))
        first = helper.make_node(op, ["s"], ["e"], value=fill)
        inputs = []
    else:
        first = helper.make_node(op, ["x", "s"], ["e"])
    g = helper.make_graph(
        [first, helper.make_node("Mul", ["e", "k"], ["y"])],
        "run_time_shape",
        [*inputs, helper.make_tensor_value_info("s", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [numpy_helper.from_array(np.float32(2.0).reshape(1), "k")],
        value_info=[helper.make_tensor_value_info("e", TensorProto.FLOAT, [2, 3])],
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    rng = np.random.default_rng(0)
    feeds = {"x": rng.standard_normal(data).astype(np.float32)} if inputs else {}
    feeds["s"] = np.array([2, 3], np.int64)
    (ref,) = pipeline_helpers.ort_run(model, feeds)
    with ramiel.compile(model, clusters=1) as m:
        got = m(*[torch.from_numpy(v) for v in feeds.values()])
        pipeline_helpers.assert_close(got, ref, 1e-6, op)
        other = dict(feeds, s=np.array([3, 2] if op == "Reshape" else [2, 4], np.int64))
        with pytest.raises((ValueError, WorkerError)) as err:
            m(*[torch.from_numpy(v) for v in other.values()])
    assert "is compiled for (2, 3)" in str(err.value), str(err.value)


def test_the_binding_hint_for_a_name_with_a_newline_can_be_pasted(tmp_path, capsys):
    """An input named ``a\\nb`` with a dynamic dimension: the error's ``--input-shape`` hint is
    a shell word that gives the name back (``$'a\\nb=1,4'``); it was ``'a\\nb=1,4'``, whose
    backslash a shell keeps (a fresh-user check). The pasted binding then imports."""
    import re
    import shutil
    import subprocess

    g = helper.make_graph(
        [helper.make_node("Relu", ["a\nb"], ["out"])],
        "g",
        [helper.make_tensor_value_info("a\nb", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["N", 4])],
    )
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), path)
    from ramiel.tools import translate

    assert tool_status(translate.main, ["--import-onnx", str(path), "-o", os.devnull]) == 1
    line = one_error_line(capsys.readouterr().err)
    word = re.search(r"bind it with --input-shape (\S+)", line).group(1)
    assert word == "$'a\\nb=1,4'", line
    if shutil.which("bash"):
        pasted = subprocess.run(["bash", "-c", f"printf %s {word}"], capture_output=True, text=True)
        assert pasted.stdout == "a\nb=1,4"
    argv = ["--import-onnx", str(path), "--input-shape", "a\nb=1,4", "-o", os.devnull]
    assert tool_status(translate.main, argv) == 0
