"""``--combine-parallel-convs``: numerics against onnxruntime, and which convolutions it combines.

Each case is a small inception-like ONNX graph with random weights: convolutions that read one
input (with and without a bias, with and without a Relu after them), whose results go to a 3x3
convolution, a pooling, a Concat and a graph output. The compiled program (the sequential
module and the parallel one, on the threads and the processes backend) must equal onnxruntime
on the original graph, and the IR must have the expected convolutions and Splits. These graphs
are small enough for the merge to keep one cluster; the project's inception CNN, whose Split
parts cross channels, is checked on both backends in ``test_pipeline_models``, and the zoo's
inception models (``test_pipeline_zoo``) run the pass on their blocks.
"""

from __future__ import annotations

import collections
import os

import numpy as np
import onnx
import pytest
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

from ramiel.compiler import CompiledModel, CompileOptions, compile_model
from ramiel.runtime import ops

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

N = helper.make_node


def _block(opset: int = 17, relu_c: bool = True) -> onnx.ModelProto:
    """x -> 1x1 convs a (bias), b (no bias), c (bias; Relu after it unless ``relu_c`` is
    False), each but c with a Relu; b -> 3x3 conv; a, b3, maxpool(c) -> Concat -> y; and c's
    result is a graph output too."""
    rng = np.random.default_rng(opset)

    def w(*shape: int) -> np.ndarray:
        return rng.uniform(-1, 1, shape).astype(np.float32)

    inits = {
        "wa": w(4, 8, 1, 1), "ba": w(4), "wb": w(6, 8, 1, 1), "wc": w(2, 8, 1, 1), "bc": w(2),
        "w3": w(5, 6, 3, 3), "b3": w(5),
    }  # fmt: skip
    c_out = "rc" if relu_c else "c"
    nodes = [
        N("Conv", ["x", "wa", "ba"], ["a"], kernel_shape=[1, 1], name="a"),
        N("Relu", ["a"], ["ra"]),
        N("Conv", ["x", "wb"], ["b"], kernel_shape=[1, 1], name="b"),
        N("Relu", ["b"], ["rb"]),
        N("Conv", ["x", "wc", "bc"], ["c"], kernel_shape=[1, 1], name="c"),
        N("Conv", ["rb", "w3", "b3"], ["b3o"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        N("MaxPool", [c_out], ["pc"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1]),
        N("Concat", ["ra", "b3o", "pc"], ["y"], axis=1),
    ]
    if relu_c:
        nodes.insert(5, N("Relu", ["c"], ["rc"]))
    graph = helper.make_graph(
        nodes,
        "block",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 12, 12])],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
            helper.make_tensor_value_info(c_out, TensorProto.FLOAT, None),
        ],
        [numpy_helper.from_array(v, k) for k, v in inits.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return onnx.shape_inference.infer_shapes(model, strict_mode=True)


# name -> (model, Convs left, Splits)
CASES = {
    "three_with_relu": (_block(), 2, 1),  # a, b, c -> one; the 3x3 stays
    "opset11_attribute": (_block(opset=11), 2, 1),
    "relu_and_none": (_block(relu_c=False), 3, 1),  # a, b combine; c has no Relu: alone
}


@pytest.mark.parametrize("backend", ["threads", "processes"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_combined_convs_match_onnxruntime(case, backend, tmp_path, pipeline_helpers):
    model, convs_left, splits = CASES[case]
    x = torch.from_numpy(np.random.default_rng(3).standard_normal((1, 8, 12, 12), np.float32))
    expected = pipeline_helpers.ort_run(model, {"x": x})
    opts = CompileOptions(clusters=2, backend=backend)
    res = compile_model(model, str(tmp_path), opts)
    counts = collections.Counter(res.op_counts())
    assert counts.get("Conv", 0) == convs_left, dict(counts)
    assert counts.get("Split", 0) == splits, dict(counts)
    with CompiledModel(res, opts) as m:
        got_seq = m.sequential(x)
        got_par = m(x)
    for got, what in ((got_seq, "sequential"), (got_par, "parallel")):
        assert len(got) == len(expected)
        for g, e in zip(got, expected, strict=True):
            pipeline_helpers.assert_close(g, e, 1e-5, f"{case} {what}")
            assert g.is_contiguous(), f"{case} {what}: an output is a view"


def test_no_combine_parallel_convs_keeps_them(tmp_path):
    res = compile_model(
        CASES["three_with_relu"][0],
        str(tmp_path),
        CompileOptions(disable=("combine-parallel-convs",)),
    )
    assert res.op_counts().get("Conv") == 4
    assert "Split" not in res.op_counts()


def test_prepacked_conv_of_a_channel_slice():
    """A Split part (a channels-last view that is not dense) is copied, then convolved: the
    same result as ``F.conv2d`` on it."""
    g = torch.Generator().manual_seed(0)
    whole = torch.randn(1, 12, 9, 9, generator=g).contiguous(memory_format=torch.channels_last)
    part = torch.split(whole, [5, 7], dim=1)[1]
    assert ops._channel_slice(part)
    assert not ops._channel_slice(whole)
    assert not ops._channel_slice(whole.contiguous())
    assert not ops._channel_slice(torch.randn(2, 3))
    w = torch.randn(4, 7, 3, 3, generator=g)
    b = torch.randn(4, generator=g)
    got = ops.conv2d_prepacked(part, w, b, padding=(1, 1), activation="relu")
    want = torch.relu(F.conv2d(part.contiguous(), w, b, padding=1))
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    assert got.is_contiguous(memory_format=torch.channels_last)


def test_trainable_keeps_the_convolutions_apart(tmp_path):
    """``trainable=True``: the pass is left out, so a convolution without a bias gets no
    trainable zeros and each keeps its own Parameter (found by a fresh-user check)."""
    opts = CompileOptions(trainable=True)
    assert "combine-parallel-convs" not in opts.rewrites()
    res = compile_model(CASES["three_with_relu"][0], str(tmp_path), opts)
    assert res.op_counts().get("Conv") == 4 and "Split" not in res.op_counts()


def test_long_node_names_are_shortened_in_the_combined_name():
    from ramiel.passes.combine_parallel_convs import MAX_NAME_CHARS, _joined_name

    assert _joined_name(["a", "b"]) == "a + b"
    long = [f"/groups/groups.0/branch{i}/Conv" + "x" * 40 for i in range(3)]
    assert _joined_name(long) == f"{long[0]} + 2 more"
    assert len(_joined_name(long)) <= MAX_NAME_CHARS
