"""Control flow (If, Loop, Scan) through the importer, the verifier and the clean-up passes.

Models are built with ``onnx.helper``; the ONNX node conformance cases of If, Loop and Scan run in
``tests/conformance``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from ramiel.dialects.onnx import OnnxOp, captured_values, dependences, region_yield
from ramiel.errors import ImportError_
from ramiel.importer import import_onnx


def _vi(name, shape, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def _model(nodes, inputs, outputs, initializers=(), opset=17):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def _ops(module, op_type):
    return [o for o in module.walk() if isinstance(o, OnnxOp) and o.op_type == op_type]


def if_model(disagree: bool = False):
    """``y = If(sum(x) > 0) then relu(x) + w else x * w``: both branches read the outer ``x``
    and the outer weight ``w``. With ``disagree`` the else branch is ``concat(x, x)``: 4
    elements, not 2."""
    w = numpy_helper.from_array(np.arange(2, dtype=np.float32), "w")
    then = helper.make_graph(
        [
            helper.make_node("Relu", ["x"], ["r"], name="relu"),
            helper.make_node("Add", ["r", "w"], ["t"], name="add"),
        ],
        "then",
        [],
        [_vi("t", [2])],
    )
    els = helper.make_graph(
        [
            helper.make_node("Concat", ["x", "x"], ["e"], axis=0, name="cat")
            if disagree
            else helper.make_node("Mul", ["x", "w"], ["e"], name="mul")
        ],
        "else",
        [],
        [_vi("e", [4 if disagree else 2])],
    )
    nodes = [
        helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0, name="sum"),
        helper.make_node("Greater", ["s", "zero"], ["c"], name="gt"),
        helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=els, name="branch"),
    ]
    zero = numpy_helper.from_array(np.array(0, np.float32), "zero")
    return _model(nodes, [_vi("x", [2])], [_vi("y", ["n"])], [w, zero])


def test_if_imports_as_region_op_reading_outer_values():
    module = import_onnx(if_model())
    module.verify()
    (op,) = _ops(module, "If")
    assert op.node_name == "branch"
    assert str(op.results[0].type) == "tensor<2xf32>"
    then_ops = [o.op_type for o in op.regions[0].block.ops if isinstance(o, OnnxOp)]
    assert then_ops == ["Relu", "Add"]
    captured = {v.name_hint for v in captured_values(op)}
    assert captured == {"x", "w"}
    assert dependences(op)[0] is op.operands[0]
    assert [v.name_hint for v in region_yield(op.regions[1]).values] == ["e"]


def test_if_branches_with_different_shapes_are_a_clear_error(tmp_path):
    """The If's result is dynamic in the IR (constant folding might still pick a branch); the
    compile is one error naming the node and both shapes."""
    from ramiel.compiler import compile_model
    from ramiel.errors import UnsupportedOpError

    module = import_onnx(if_model(disagree=True))
    (op,) = _ops(module, "If")
    assert str(op.results[0].type) == "tensor<?xf32>"
    with pytest.raises(UnsupportedOpError) as e:
        compile_model(if_model(disagree=True), str(tmp_path))
    msg = str(e.value)
    assert "If (node 'branch'" in msg
    assert "output 0 has shape [2] in then_branch and [4] in else_branch" in msg


def test_if_branches_with_different_shapes_fold_away_with_a_constant_condition(
    tmp_path, pipeline_helpers
):
    """A constant condition picks the branch before anything needs the shape."""
    import torch

    import ramiel

    model = if_model(disagree=True)
    cond = numpy_helper.from_array(np.array(True), "always")
    model.graph.initializer.append(cond)
    model.graph.node[2].input[0] = "always"
    x = np.array([1.0, -2.0], np.float32)
    with ramiel.compile(model, clusters=1) as m:
        (ref,) = pipeline_helpers.ort_run(model, {"x": x})
        pipeline_helpers.assert_close(m(torch.from_numpy(x)), ref, what="folded If")


def test_nested_constant_ifs_fold_in_one_sweep(pipeline_helpers):
    """An If with a constant condition inside the taken branch of another is inlined by the same
    forward sweep of ``--constant-fold`` (the walker visits the ops the outer inlining moved),
    an If inside the branch not taken goes with it, and the result matches onnxruntime."""
    from ramiel.folding import fold_constants

    def branch(name, nodes, out):
        return helper.make_graph(nodes, name, [], [_vi(out, [2])])

    inner_then = branch("inner_then", [helper.make_node("Relu", ["x"], ["ir"])], "ir")
    inner_else = branch("inner_else", [helper.make_node("Neg", ["x"], ["ie"])], "ie")
    dead_then = branch("dead_then", [helper.make_node("Abs", ["x"], ["dt"])], "dt")
    dead_else = branch("dead_else", [helper.make_node("Exp", ["x"], ["de"])], "de")
    outer_then = branch(
        "outer_then",
        [
            helper.make_node("If", ["no"], ["ti"], then_branch=inner_then, else_branch=inner_else),
            helper.make_node("Add", ["ti", "w"], ["to"]),
        ],
        "to",
    )
    outer_else = branch(
        "outer_else",
        [
            helper.make_node("If", ["c"], ["eo"], then_branch=dead_then, else_branch=dead_else),
        ],
        "eo",
    )
    nodes = [
        helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
        helper.make_node("Greater", ["s", "zero"], ["c"]),
        helper.make_node("If", ["yes"], ["y"], then_branch=outer_then, else_branch=outer_else),
    ]
    inits = [
        numpy_helper.from_array(np.arange(2, dtype=np.float32), "w"),
        numpy_helper.from_array(np.array(0, np.float32), "zero"),
        numpy_helper.from_array(np.array(True), "yes"),
        numpy_helper.from_array(np.array(False), "no"),
    ]
    model = _model(nodes, [_vi("x", [2])], [_vi("y", [2])], inits)
    module = import_onnx(model)
    assert len(_ops(module, "If")) == 3
    fold_constants(module, None)
    module.verify()
    assert _ops(module, "If") == []
    kept = {o.op_type for o in module.walk() if isinstance(o, OnnxOp)}
    assert {"Neg", "Add"} <= kept and not kept & {"Relu", "Abs", "Exp"}

    import torch

    import ramiel

    x = np.array([1.0, -2.0], np.float32)
    with ramiel.compile(model, clusters=1) as m:
        (ref,) = pipeline_helpers.ort_run(model, {"x": x})
        pipeline_helpers.assert_close(m(torch.from_numpy(x)), ref, what="nested folded Ifs")


def loop_model(grow: bool = False):
    """``for i in range(3): acc = acc + x`` (or ``concat(acc, x)`` with ``grow``: the carried
    value changes shape), with one scan output."""
    body_nodes = [
        helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        (
            helper.make_node("Concat", ["acc_in", "x"], ["acc_out"], axis=0)
            if grow
            else helper.make_node("Add", ["acc_in", "x"], ["acc_out"])
        ),
        helper.make_node("Identity", ["acc_out"], ["scan"]),
    ]
    shape = [None] if grow else [2]
    body = helper.make_graph(
        body_nodes,
        "body",
        [
            _vi("i", [], TensorProto.INT64),
            _vi("cond_in", [], TensorProto.BOOL),
            _vi("acc_in", shape),
        ],
        [_vi("cond_out", [], TensorProto.BOOL), _vi("acc_out", shape), _vi("scan", shape)],
    )
    m = numpy_helper.from_array(np.array(3, np.int64), "m")
    nodes = [helper.make_node("Loop", ["m", "", "x"], ["acc", "scans"], body=body, name="loop")]
    return _model(nodes, [_vi("x", [2])], [_vi("acc", ["a"]), _vi("scans", ["s", "t"])], [m])


def test_loop_imports_with_carried_values_and_scan_outputs():
    module = import_onnx(loop_model())
    module.verify()
    (op,) = _ops(module, "Loop")
    body = op.regions[0].block
    assert [str(a.type) for a in body.args] == ["tensor<i64>", "tensor<i1>", "tensor<2xf32>"]
    assert str(op.results[0].type) == "tensor<2xf32>"
    assert {v.name_hint for v in captured_values(op)} == {"x"}


def test_loop_carried_value_that_changes_shape_is_a_clear_error():
    with pytest.raises(ImportError_) as e:
        import_onnx(loop_model(grow=True))
    msg = str(e.value)
    assert "Loop node 'loop'" in msg or "shape inference" in msg


# -- through the whole pipeline, against onnxruntime --------------------------------------------


C, H = 16, 32  # branchy_model's channels and size: the two branches are worth two workers


def branchy_model() -> onnx.ModelProto:
    """Two independent convolution branches ``a`` and ``b`` of ``x`` (conv, relu, conv); an If on ``sum(a) > 0``
    whose branches read both (``relu(a) + b`` / ``a * b``); a Loop of 3 refinement steps
    ``y = y + tanh(b) * 0.5`` with the per-step values as a scan output; a Scan summing the
    rows of ``y``. Every region reads outer values, so clustering into two workers sends them
    to the region op's cluster."""
    rng = np.random.default_rng(0)

    def w(name, shape):
        return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) * 0.3, name)

    half = numpy_helper.from_array(np.array(0.5, np.float32), "half")
    zero = numpy_helper.from_array(np.array(0.0, np.float32), "zero")
    three = numpy_helper.from_array(np.array(3, np.int64), "three")
    then = helper.make_graph(
        [
            helper.make_node("Relu", ["a"], ["ra"], name="then_relu"),
            helper.make_node("Add", ["ra", "b"], ["then_out"], name="then_add"),
        ],
        "then",
        [],
        [_vi("then_out", [1, C, H, H])],
    )
    els = helper.make_graph(
        [helper.make_node("Mul", ["a", "b"], ["e"], name="else_mul")],
        "else",
        [],
        [_vi("e", [1, C, H, H])],
    )
    body = helper.make_graph(
        [
            helper.make_node("Tanh", ["b"], ["tb"], name="body_tanh"),
            helper.make_node("Mul", ["tb", "half"], ["step"], name="body_mul"),
            helper.make_node("Add", ["y_in", "step"], ["y_out"], name="body_add"),
            helper.make_node("ReduceMean", ["y_out"], ["m"], keepdims=0, name="body_mean"),
            helper.make_node("Identity", ["c_in"], ["c_out"], name="body_cond"),
        ],
        "body",
        [
            _vi("i", [], TensorProto.INT64),
            _vi("c_in", [], TensorProto.BOOL),
            _vi("y_in", [1, C, H, H]),
        ],
        [_vi("c_out", [], TensorProto.BOOL), _vi("y_out", [1, C, H, H]), _vi("m", [])],
    )
    scan_body = helper.make_graph(
        [
            helper.make_node("Add", ["acc_in", "row"], ["acc_out"], name="scan_add"),
            helper.make_node("Identity", ["acc_out"], ["partial"], name="scan_id"),
        ],
        "scan_body",
        [_vi("acc_in", [256]), _vi("row", [256])],
        [_vi("acc_out", [256]), _vi("partial", [256])],
    )
    nodes = [
        helper.make_node("Conv", ["x", "wa"], ["a0"], pads=[1, 1, 1, 1], name="conv_a"),
        helper.make_node("Relu", ["a0"], ["a1"], name="relu_a"),
        helper.make_node("Conv", ["a1", "wa2"], ["a"], pads=[1, 1, 1, 1], name="conv_a2"),
        helper.make_node("Conv", ["x", "wb"], ["b0"], pads=[1, 1, 1, 1], name="conv_b"),
        helper.make_node("Relu", ["b0"], ["b1"], name="relu_b"),
        helper.make_node("Conv", ["b1", "wb2"], ["b"], pads=[1, 1, 1, 1], name="conv_b2"),
        helper.make_node("ReduceSum", ["a"], ["s"], keepdims=0, name="sum"),
        helper.make_node("Greater", ["s", "zero"], ["c"], name="gt"),
        helper.make_node("If", ["c"], ["r"], then_branch=then, else_branch=els, name="choose"),
        helper.make_node("Loop", ["three", "", "r"], ["y", "means"], body=body, name="refine"),
        helper.make_node("Reshape", ["y", "rows_shape"], ["rows"], name="rows"),
        helper.make_node(
            "Scan", ["init", "rows"], ["total", "partials"], body=scan_body, num_scan_inputs=1,
            scan_input_directions=[1], name="scan",
        ),
    ]  # fmt: skip
    inits = [
        w("wa", (C, C, 3, 3)),
        w("wa2", (C, C, 3, 3)),
        w("wb", (C, C, 3, 3)),
        w("wb2", (C, C, 3, 3)),
        half,
        zero,
        three,
        numpy_helper.from_array(np.array([C * H * H // 256, 256], np.int64), "rows_shape"),
        numpy_helper.from_array(np.zeros(256, np.float32), "init"),
    ]
    return _model(
        nodes,
        [_vi("x", [1, C, H, H])],
        [
            _vi("y", [1, C, H, H]),
            _vi("means", [3]),
            _vi("total", [256]),
            _vi("partials", [C * H * H // 256, 256]),
        ],
        inits,
    )


@pytest.mark.parametrize("layout", ["auto", "channels-last", "nchw"])
@pytest.mark.parametrize("sign", [1.0, -1.0])
@pytest.mark.parametrize("backend", ["threads", "processes"])
def test_control_flow_pipeline_matches_onnxruntime(backend, sign, layout, pipeline_helpers):
    import torch

    import ramiel

    model = branchy_model()
    x = np.random.default_rng(3).standard_normal((1, C, H, H)).astype(np.float32) * sign
    # the sign of sum(conv_a(x)) decides the branch: both are taken across the two signs
    refs = pipeline_helpers.ort_run(model, {"x": x})
    with ramiel.compile(model, clusters=2, backend=backend, layout=layout) as m:
        assert len(m.program.clusters) == 2
        outs = m(torch.from_numpy(x))
        for name, got, ref in zip(m.output_names, outs, refs, strict=True):
            pipeline_helpers.assert_close(got, ref, what=f"parallel {name}")
        seq = m.sequential(torch.from_numpy(x))
        for name, got, ref in zip(m.output_names, seq, refs, strict=True):
            pipeline_helpers.assert_close(got, ref, what=f"sequential {name}")


def test_control_flow_prints_readable_python(tmp_path):
    from ramiel.compiler import CompileOptions, compile_model

    res = compile_model(branchy_model(), str(tmp_path), CompileOptions(clusters=2))
    seq = Path(res.sequential_path).read_text()
    # the body of the module class's forward: 8 spaces, 12 in a block
    assert "        if bool(c):  # choose (If)\n" in seq
    assert "        else:\n" in seq
    assert "        for i in range(3):  # refine (Loop)\n" in seq
    assert "        for t in range(64):  # scan (Scan)\n" in seq
    assert "            t_reversed = 63 - t\n            row = rows[t_reversed]\n" in seq
    assert "c_in" not in seq  # the condition a for loop ignores is not computed
    par = Path(res.parallel_path).read_text()
    compile(par, "model.py", "exec")
    assert "if bool(c):  # choose (If)" in par


def test_region_ops_are_layout_boundaries(tmp_path, ramiel_ctx):
    """With the convolutions in channels-last, the values the If and the Loop read (``b``, and
    ``a`` through the If) are converted to contiguous once, before the compound statements,
    never inside a body (that would copy on every iteration); the bodies' ops get no layout."""
    from ramiel.compiler import CompileOptions, compile_model
    from ramiel.dialects.onnx import OnnxOp
    from ramiel.layout import LAYOUT_ATTR
    from ramiel.parsing import parse_module

    res = compile_model(branchy_model(), str(tmp_path), CompileOptions(layout="channels-last"))
    seq = Path(res.sequential_path).read_text()
    lines = seq.splitlines()
    start = next(i for i, line in enumerate(lines) if "if bool(c):  # choose (If)" in line)
    before, after = lines[:start], lines[start:]
    assert "        b_nchw = b.contiguous()  # to contiguous for choose (If)" in before  # forward
    assert not [line for line in after if ".contiguous(" in line]  # none in or after the regions
    assert any("torch.tanh(b_nchw)" in line for line in after)  # the Loop reuses the If's copy
    module = parse_module(ramiel_ctx, Path(res.ir_path).read_text(), "model.mlir")
    regions = [o for o in module.walk() if isinstance(o, OnnxOp) and o.regions]
    assert {o.op_type for o in regions} == {"If", "Loop", "Scan"}
    for op in regions:
        assert LAYOUT_ATTR not in op.attributes, op.op_type
        assert not [o for o in op.walk() if LAYOUT_ATTR in o.attributes], op.op_type
    convs = [o for o in module.walk() if isinstance(o, OnnxOp) and o.op_type == "Conv"]
    assert convs and all(LAYOUT_ATTR in o.attributes for o in convs)


def loop_then_if_model():
    """``y = x; repeat n times: y = tanh(y) + x``, then ``If(sum(y) > 0) then y * 2 else y - 1``,
    declared as ``torch.onnx.export`` of the scripted loop writes it (the body's result with
    symbolic dims, its argument 2x8): onnx's shape inference leaves the Loop's result unranked,
    and so the ReduceSum, the If's condition and the branches' products."""
    body = helper.make_graph(
        [
            helper.make_node("Tanh", ["y_in"], ["t"]),
            helper.make_node("Add", ["t", "x"], ["y_out"]),
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        ],
        "body",
        [
            _vi("i", [], TensorProto.INT64),
            _vi("cond_in", [], TensorProto.BOOL),
            _vi("y_in", [2, 8]),
        ],
        [_vi("cond_out", [], TensorProto.BOOL), _vi("y_out", ["d0", "d1"])],
    )
    then = helper.make_graph(
        [helper.make_node("Mul", ["looped", "two"], ["a"])], "then", [], [_vi("a", ["d0", "d1"])]
    )
    els = helper.make_graph(
        [helper.make_node("Sub", ["looped", "one"], ["b"])], "else", [], [_vi("b", ["d0", "d1"])]
    )
    nodes = [
        helper.make_node("Loop", ["n", "true", "x"], ["looped"], body=body, name="loop"),
        helper.make_node("ReduceSum", ["looped"], ["s"], name="sum"),
        helper.make_node("Greater", ["s", "zero"], ["c"], name="gt"),
        helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=els, name="branch"),
    ]
    inits = [
        numpy_helper.from_array(np.array(True), "true"),
        numpy_helper.from_array(np.array(0, np.float32), "zero"),
        numpy_helper.from_array(np.array(1, np.float32), "one"),
        numpy_helper.from_array(np.array(2, np.float32), "two"),
    ]
    return _model(
        nodes, [_vi("x", [2, 8]), _vi("n", [], TensorProto.INT64)], [_vi("y", ["d0", "d1"])], inits
    )


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_an_if_on_a_loop_result_compiles(sign, pipeline_helpers):
    """The Loop's result type comes from its body (x's 2x8): the ops after it are inferred again
    from that, so the If's condition is one bool and its results 2x8. The If had been refused as
    an invalid model ("cond must be one bool, got tensor<*xi1>") though onnx's checker and
    onnxruntime take it."""
    import torch

    import ramiel

    model = loop_then_if_model()
    inferred = onnx.shape_inference.infer_shapes(model)
    known = {v.name for v in inferred.graph.value_info if v.type.tensor_type.HasField("shape")}
    assert not {"looped", "s", "c"} & known  # what the import has to work out itself
    module = import_onnx(model)
    (branch,) = _ops(module, "If")
    assert str(branch.operands[0].type) == "tensor<1x1xi1>"  # ReduceSum keeps the dims
    assert str(branch.results[0].type) == "tensor<2x8xf32>"
    x = np.random.default_rng(5).standard_normal((2, 8)).astype(np.float32) * sign
    n = np.array(3, np.int64)
    (ref,) = pipeline_helpers.ort_run(model, {"x": x, "n": n})
    with ramiel.compile(model) as m:
        got = m(torch.from_numpy(x), torch.from_numpy(n))  # one output: the tensor itself
        pipeline_helpers.assert_close(got, ref, what="parallel y")
        seq = m.sequential(torch.from_numpy(x), torch.from_numpy(n))
        pipeline_helpers.assert_close(seq, ref, what="sequential y")


def test_an_if_whose_condition_shape_is_unknown_is_not_an_invalid_model():
    """A condition whose shape no inference can tell (here the result of a Reshape to a shape
    the data give) is one bool only at run time: the verifier takes an unranked or dynamic bool
    tensor, as onnx's checker does; a tensor that is certainly not one element stays an error."""
    from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType, UnrankedTensorType, i1, i32

    from ramiel.dialects.onnx_base import _may_be_scalar_of

    assert _may_be_scalar_of(UnrankedTensorType(i1), i1)
    assert _may_be_scalar_of(TensorType(i1, [DYNAMIC_INDEX]), i1)
    assert _may_be_scalar_of(TensorType(i1, [1, DYNAMIC_INDEX]), i1)
    assert _may_be_scalar_of(TensorType(i1, []), i1)
    assert not _may_be_scalar_of(TensorType(i1, [2, DYNAMIC_INDEX]), i1)
    assert not _may_be_scalar_of(TensorType(i32, [1]), i1)
    assert not _may_be_scalar_of(UnrankedTensorType(i32), i1)


@pytest.mark.parametrize("early_stop", [False, True])
def test_a_loop_that_runs_no_iteration_gives_empty_scan_outputs(early_stop, pipeline_helpers):
    """``Loop(M, cond)`` with M given at run time (or a condition computed in the body) and its
    scan output declared ``(5, 2)``: the sequential module runs the iterations the inputs ask
    for, as onnxruntime does, and at M = 0 (or a false condition) the scan output is ``(0, 2)``;
    the generated
    ``torch.stack`` of no steps had raised 'stack expects a non-empty TensorList' (helper-22).
    A loop that runs is unchanged."""
    import torch

    import ramiel

    body_nodes = [
        helper.make_node("Add", ["y_in", "y_in"], ["y_out"]),
        helper.make_node("Identity", ["y_out"], ["scan"]),
    ]
    if early_stop:  # keep going while the first element stays below 10
        body_nodes += [
            helper.make_node("ReduceMax", ["y_out"], ["top"], keepdims=0),
            helper.make_node("Less", ["top", "ten"], ["c_out"]),
        ]
    else:
        body_nodes.append(helper.make_node("Identity", ["c_in"], ["c_out"]))
    body = helper.make_graph(
        body_nodes,
        "body",
        [_vi("i", [], TensorProto.INT64), _vi("c_in", [], TensorProto.BOOL), _vi("y_in", [2])],
        [_vi("c_out", [], TensorProto.BOOL), _vi("y_out", [2]), _vi("scan", [2])],
    )
    ten = numpy_helper.from_array(np.array(10, np.float32), "ten")
    cond = numpy_helper.from_array(np.array(True), "go")
    model = _model(
        [helper.make_node("Loop", ["n", "go", "x"], ["y", "ys"], body=body, name="loop")],
        [_vi("n", [], TensorProto.INT64), _vi("x", [2])],
        [_vi("y", [2]), _vi("ys", [5, 2])],  # as the helper's model: 5 steps declared
        [ten, cond],
    )
    with ramiel.compile(model, clusters=1) as m:
        code = Path(m.result.sequential_path).read_text()
        assert "ops.stack_steps(ys_steps, (0, 2), torch.float32)" in code
        for n, x in [(0, [1.0, 1.0]), (3, [1.0, 2.0]), (5, [20.0, 1.0])]:
            feeds = {"n": np.array(n, np.int64), "x": np.array(x, np.float32)}
            refs = pipeline_helpers.ort_run(model, feeds)
            got = m.sequential(*(torch.from_numpy(v) for v in feeds.values()))
            for g, r in zip(got, refs, strict=True):
                assert tuple(g.shape) == r.shape, (n, x, g.shape, r.shape)
                pipeline_helpers.assert_close(g, r, what=f"n={n} x={x}")
