"""``--fold-into-weights``: numerics against onnxruntime, and which followers it folds.

Each case is a small ONNX graph (random weights): an affine producer (Conv, ConvTranspose, Gemm,
MatMul with or without its bias Add, an inference BatchNormalization) and followers that scale
and shift its channels. The compiled program must equal onnxruntime on the original graph, the
followers that qualify must be gone from the IR, and near-misses must stay. The zoo models with
batch norm (random weights) lose their BatchNormalization ops and still match onnxruntime.
"""

from __future__ import annotations

import collections
import os

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper

from ramiel.compiler import CompiledModel, CompileOptions, compile_model

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")


def _model(nodes, x_shape, y_shape, inits, opset=17, n_out=1):
    rng = np.random.default_rng(len(nodes))
    init_protos = [
        numpy_helper.from_array(
            v if isinstance(v, np.ndarray) else rng.uniform(*v[1], v[0]).astype(np.float32), k
        )
        for k, v in inits.items()
    ]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)]
    if n_out == 2:
        outputs.append(helper.make_tensor_value_info("p", TensorProto.FLOAT, None))
    graph = helper.make_graph(
        nodes,
        "fold",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        outputs,
        init_protos,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return onnx.shape_inference.infer_shapes(model, strict_mode=True)


N = helper.make_node
W = (-1.0, 1.0)
POS = (0.5, 1.5)


def _bn(x, y, c, prefix="bn"):
    return (
        N("BatchNormalization", [x, f"{prefix}s", f"{prefix}b", f"{prefix}m", f"{prefix}v"], [y],
          epsilon=1e-3),
        {f"{prefix}s": ((c,), POS), f"{prefix}b": ((c,), W), f"{prefix}m": ((c,), W),
         f"{prefix}v": ((c,), POS)},
    )  # fmt: skip


def _case_conv_bn():
    bn, p = _bn("c", "y", 4)
    nodes = [N("Conv", ["x", "w"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]), bn]
    return _model(nodes, [1, 3, 8, 8], [1, 4, 8, 8], {"w": ((4, 3, 3, 3), W), **p})


def _case_conv_chain():
    """Conv with bias -> BN -> Mul per channel -> Add scalar -> Sub per channel -> Div."""
    bn, p = _bn("c", "n", 4)
    nodes = [
        N("Conv", ["x", "w", "b"], ["c"], kernel_shape=[1, 1]),
        bn,
        N("Mul", ["k", "n"], ["m"]),
        N("Add", ["m", "one"], ["a"]),
        N("Sub", ["a", "k2"], ["s"]),
        N("Div", ["s", "k3"], ["y"]),
    ]
    inits = {"w": ((4, 3, 1, 1), W), "b": ((4,), W), **p, "k": ((4, 1, 1), W),
             "one": ((1,), W), "k2": ((1, 4, 1, 1), W), "k3": ((4, 1, 1), POS)}  # fmt: skip
    return _model(nodes, [1, 3, 5, 5], [1, 4, 5, 5], inits)


def _case_conv_transpose_groups():
    nodes = [
        N("ConvTranspose", ["x", "w"], ["c"], kernel_shape=[2, 2], strides=[2, 2], group=2),
        N("Mul", ["c", "k"], ["m"]),
        N("Sub", ["k2", "m"], ["y"]),
    ]
    inits = {"w": ((4, 3, 2, 2), W), "k": ((6, 1, 1), W), "k2": ((6, 1, 1), W)}
    return _model(nodes, [1, 4, 3, 3], [1, 6, 6, 6], inits)


def _case_gemm():
    bn, p = _bn("g", "n", 5)
    nodes = [
        N("Gemm", ["x", "w", "c"], ["g"], transB=1, alpha=0.5, beta=2.0),
        bn,
        N("Mul", ["n", "k"], ["y"]),
    ]
    inits = {"w": ((5, 3), W), "c": ((2, 5), W), **p, "k": ((5,), W)}
    return _model(nodes, [2, 3], [2, 5], inits)


def _case_gemm_no_c():
    nodes = [N("Gemm", ["x", "w"], ["g"]), N("Add", ["g", "b"], ["y"])]
    return _model(nodes, [2, 3], [2, 5], {"w": ((3, 5), W), "b": ((1, 5), W)})


def _case_matmul_bias():
    nodes = [
        N("MatMul", ["x", "w"], ["mm"]),
        N("Add", ["b", "mm"], ["a"]),
        N("Mul", ["a", "k"], ["y"]),
    ]
    inits = {"w": ((8, 6), W), "b": ((6,), W), "k": ((1, 1, 6), W)}
    return _model(nodes, [1, 4, 8], [1, 4, 6], inits)


def _case_matmul_bn_2d():
    bn, p = _bn("mm", "y", 6)
    nodes = [N("MatMul", ["x", "w"], ["mm"]), bn]
    return _model(nodes, [3, 8], [3, 6], {"w": ((8, 6), W), **p})


def _case_caffe_bn():
    """BatchNormalization + Mul + Add with nothing affine before it (DenseNet's zoo form)."""
    bn, p = _bn("r", "n", 4)
    nodes = [N("Relu", ["x"], ["r"]), bn, N("Mul", ["n", "k"], ["m"]), N("Add", ["m", "d"], ["y"])]
    inits = {**p, "k": ((4, 1, 1), W), "d": ((4, 1, 1), W)}
    return _model(nodes, [1, 4, 3, 3], [1, 4, 3, 3], inits)


# Near-misses: nothing may be folded.
def _miss_two_users():
    nodes = [
        N("Conv", ["x", "w"], ["c"], kernel_shape=[1, 1]),
        N("Mul", ["c", "k"], ["y"]),
        N("Relu", ["c"], ["p"]),
    ]
    return _model(nodes, [1, 3, 4, 4], [1, 4, 4, 4], {"w": ((4, 3, 1, 1), W), "k": ((4, 1, 1), W)},
                  n_out=2)  # fmt: skip


def _miss_not_per_channel():
    nodes = [N("Conv", ["x", "w"], ["c"], kernel_shape=[1, 1]), N("Mul", ["c", "k"], ["y"])]
    inits = {"w": ((4, 3, 1, 1), W), "k": ((4, 1, 4), W)}  # varies along W too
    return _model(nodes, [1, 3, 4, 4], [1, 4, 4, 4], inits)


def _miss_matmul_wrong_axis():
    nodes = [N("MatMul", ["x", "w"], ["mm"]), N("Mul", ["mm", "k"], ["y"])]
    inits = {"w": ((8, 6), W), "k": ((4, 1), W)}  # per row, not per output column
    return _model(nodes, [1, 4, 8], [1, 4, 6], inits)


def _miss_matmul_bn_3d():
    bn, p = _bn("mm", "y", 4)  # channel axis 1 of a 3-D MatMul result is not its columns
    nodes = [N("MatMul", ["x", "w"], ["mm"]), bn]
    return _model(nodes, [1, 4, 8], [1, 4, 6], {"w": ((8, 6), W), **p})


def _miss_broadcast_grows():
    nodes = [N("Conv", ["x", "w"], ["c"], kernel_shape=[1, 1]), N("Add", ["c", "k"], ["y"])]
    inits = {"w": ((4, 3, 1, 1), W), "k": ((2, 4, 1, 1), W)}  # makes the batch 2
    return _model(nodes, [1, 3, 4, 4], [2, 4, 4, 4], inits)


def _miss_div_by_y():
    nodes = [N("Conv", ["x", "w"], ["c"], kernel_shape=[1, 1]), N("Div", ["k", "c"], ["y"])]
    return _model(nodes, [1, 3, 4, 4], [1, 4, 4, 4], {"w": ((4, 3, 1, 1), W), "k": ((4, 1, 1), W)})


CASES = {
    # name: (model builder, op types that must be gone, op type counts that must remain)
    "conv_bn": (_case_conv_bn, {"BatchNormalization"}, {"Conv": 1}),
    "conv_chain": (_case_conv_chain, {"BatchNormalization", "Mul", "Add", "Sub", "Div"}, {}),
    "conv_transpose_groups": (_case_conv_transpose_groups, {"Mul", "Sub"}, {}),
    "gemm": (_case_gemm, {"BatchNormalization", "Mul"}, {"Gemm": 1}),
    "gemm_no_c": (_case_gemm_no_c, {"Add"}, {"Gemm": 1}),
    "matmul_bias": (_case_matmul_bias, {"Mul"}, {"MatMul": 1, "Add": 1}),
    "matmul_bn_2d": (_case_matmul_bn_2d, {"BatchNormalization"}, {"MatMul": 1, "Add": 1}),
    "caffe_bn": (_case_caffe_bn, {"Mul", "Add"}, {"BatchNormalization": 1}),
    "miss_two_users": (_miss_two_users, set(), {"Mul": 1}),
    "miss_not_per_channel": (_miss_not_per_channel, set(), {"Mul": 1}),
    "miss_matmul_wrong_axis": (_miss_matmul_wrong_axis, set(), {"Mul": 1}),
    "miss_matmul_bn_3d": (_miss_matmul_bn_3d, set(), {"BatchNormalization": 1}),
    "miss_broadcast_grows": (_miss_broadcast_grows, set(), {"Add": 1}),
    "miss_div_by_y": (_miss_div_by_y, set(), {"Div": 1}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_fold_case(case, tmp_path, pipeline_helpers):
    build, gone, kept = CASES[case]
    model = build()
    onnx.checker.check_model(model, full_check=True)
    x_shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    x = np.random.default_rng(7).standard_normal(x_shape).astype(np.float32)
    ref = pipeline_helpers.ort_run(model, {"x": x})
    before = collections.Counter(n.op_type for n in model.graph.node)
    opts = CompileOptions(clusters=1)
    res = compile_model(model, str(tmp_path), opts)
    ops = collections.Counter(res.op_counts())
    for op in gone:
        assert ops[op] == 0, f"{case}: {op} was not folded: {dict(ops)}"
    for op, n in kept.items():
        assert ops[op] == n, f"{case}: expected {n} {op}, got {dict(ops)}"
    if not gone:
        assert sum(ops.values()) == sum(before.values()), f"{case}: near-miss changed: {ops}"
    with CompiledModel(res, opts) as m:
        out = m.sequential(torch.from_numpy(x))
    out = out if isinstance(out, tuple) else (out,)
    for o, r in zip(out, ref, strict=True):
        pipeline_helpers.assert_close(o, r, 1e-5, case)


BN_ZOO = {"light_resnet50": 0, "light_inception_v2": 0, "light_densenet121": 62}
"""Zoo models with batch norm -> BatchNormalization ops left after folding (DenseNet's
pre-activation ones follow a Concat or a pool, not an affine op)."""


def logits_model(model: onnx.ModelProto) -> onnx.ModelProto:
    """``model`` with a final Softmax removed (random-weight logits saturate it to one-hot)."""
    last = model.graph.node[-1]
    if last.op_type != "Softmax" or last.output[0] != model.graph.output[0].name:
        return model
    m = onnx.shape_inference.infer_shapes(model)
    (info,) = [vi for vi in m.graph.value_info if vi.name == last.input[0]]
    del m.graph.node[-1]
    m.graph.output[0].CopyFrom(info)
    return m


@pytest.mark.parametrize("name", sorted(BN_ZOO))
def test_zoo_batch_norm_folded(name, zoo_models, tmp_path, pipeline_helpers):
    model = logits_model(
        pipeline_helpers.randomize_weights(onnx.load(zoo_models[name]), max_elements=1 << 22)
    )
    feeds = {
        k: torch.from_numpy(np.random.default_rng(0).standard_normal(v.shape).astype(v.dtype))
        for k, v in pipeline_helpers.onnx_backend_inputs(model).items()
    }
    (ref,) = pipeline_helpers.ort_run(model, feeds)
    before = collections.Counter(n.op_type for n in model.graph.node)["BatchNormalization"]
    counts = {}
    for disable in ((), ("fold-into-weights",)):
        opts = CompileOptions(clusters=2, disable=disable)
        res = compile_model(model, str(tmp_path / str(len(disable))), opts)
        counts[disable] = res.op_counts().get("BatchNormalization", 0)
        with CompiledModel(res, opts) as m:
            par = m(*feeds.values())
            seq = m.sequential(*feeds.values())
        pipeline_helpers.assert_close(par, ref, 1e-3, f"{name} parallel, disable={disable}")
        pipeline_helpers.assert_close(seq, ref, 1e-3, f"{name} sequential, disable={disable}")
    assert counts[("fold-into-weights",)] == before
    assert counts[()] == BN_ZOO[name]


def test_unknown_rewrite_is_an_error(tmp_path):
    from ramiel.errors import RamielError

    with pytest.raises(RamielError, match="unknown rewrite.*fold-into-wieghts"):
        compile_model(
            _case_conv_bn(), str(tmp_path), CompileOptions(disable=("fold-into-wieghts",))
        )
