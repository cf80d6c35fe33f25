"""``--fuse-pad-into-conv``: numerics against onnxruntime, and which Pads it removes.

Each case is a small ONNX graph with random weights: a ``Pad`` in one of its opset forms
(attributes before opset 11, a ``pads`` input, opset 18's ``axes``) before one or two Convs
(1-D to 3-D, strided, grouped, with pads of their own, ``auto_pad`` VALID). The compiled
program (sequential and parallel module) must equal onnxruntime on the original graph; the Pads
that qualify must be gone from the IR, a symmetric result must print no ``F.pad``, and the
near-misses (a non-zero value, reflect, a channel pad, a cropping pad, another reader, a
graph output, ``auto_pad`` SAME, a ConvTranspose) must keep their Pad. The ``transformers``
MobileNetV2 and EfficientNet test models lose all their Pads in ``tests/test_hf_models.py``.
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

N = helper.make_node


def _model(nodes, x_shape, inits, outputs=("y",), opset=17):
    rng = np.random.default_rng(len(nodes) + opset)
    protos = [
        numpy_helper.from_array(
            v if isinstance(v, np.ndarray) else rng.uniform(-1, 1, v).astype(np.float32), k
        )
        for k, v in inits.items()
    ]
    graph = helper.make_graph(
        nodes,
        "pad_conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
        protos,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return onnx.shape_inference.infer_shapes(model, strict_mode=True)


def i64(*v):
    return np.array(v, np.int64)


def _pad(pads, value=None, mode=None, axes=None, opset=17):
    """The Pad node ``x -> p`` and its constant inputs at ``opset``."""
    attrs = {} if mode is None else {"mode": mode}
    if opset < 11:
        attrs["pads"] = list(pads)
        if value is not None:
            attrs["value"] = float(value)
        return N("Pad", ["x"], ["p"], **attrs), {}
    inits = {"pads": i64(*pads)}
    ins = ["x", "pads"]
    if value is not None or axes is not None:
        ins.append("value" if value is not None else "")
        if value is not None:
            inits["value"] = np.array(value, np.float32)
    if axes is not None:
        ins.append("axes")
        inits["axes"] = i64(*axes)
    return N("Pad", ins, ["p"], **attrs), inits


def _case(pads, w_shape, x_shape, conv=None, opset=17, **pad_kw):
    pad, inits = _pad(pads, opset=opset, **pad_kw)
    k = list(w_shape[2:])
    nodes = [pad, N("Conv", ["p", "w", "b"], ["y"], kernel_shape=k, **(conv or {}))]
    inits.update({"w": w_shape, "b": (w_shape[0],)})
    return _model(nodes, x_shape, inits, opset=opset)


# name -> (model, Pads left, F.pad calls in the sequential module)
CASES = {
    "depthwise_symmetric": (
        _case([0, 0, 1, 1, 0, 0, 1, 1], (8, 1, 3, 3), [1, 8, 9, 9], {"group": 8}),
        0,
        0,
    ),
    "stride2_end_only": (
        _case([0, 0, 0, 0, 0, 0, 1, 1], (4, 3, 3, 3), [1, 3, 10, 10], {"strides": [2, 2]}),
        0,
        1,
    ),
    "added_to_conv_pads": (
        _case([0, 0, 1, 0, 0, 0, 0, 1], (4, 3, 3, 3), [1, 3, 7, 6], {"pads": [0, 1, 1, 0]}),
        0,
        0,
    ),
    "zero_value_input": (
        _case([0, 0, 2, 2, 0, 0, 2, 2], (4, 3, 5, 5), [1, 3, 6, 6], {"dilations": [1, 1]}, value=0),
        0,
        0,
    ),
    "opset18_axes": (
        _case([1, 1, 1, 1], (4, 3, 3, 3), [1, 3, 6, 7], opset=18, axes=[-1, 2]),
        0,
        0,
    ),
    "opset10_attributes_1d": (
        _case([0, 0, 2, 0, 0, 0], (4, 3, 3), [1, 3, 9], opset=10),
        0,
        1,
    ),
    "conv3d_valid": (
        _case(
            [0, 0, 1, 1, 1, 0, 0, 1, 1, 1], (2, 3, 3, 3, 3), [1, 3, 4, 4, 4], {"auto_pad": "VALID"}
        ),
        0,
        0,
    ),
    "nonzero_value": (_case([0, 0, 1, 1, 0, 0, 1, 1], (4, 3, 3, 3), [1, 3, 6, 6], value=0.5), 1, 1),
    "reflect": (_case([0, 0, 1, 1, 0, 0, 1, 1], (4, 3, 3, 3), [1, 3, 6, 6], mode="reflect"), 1, 1),
    "channel_pad": (_case([0, 1, 1, 1, 0, 0, 1, 1], (4, 4, 3, 3), [1, 3, 6, 6]), 1, 1),
    "cropping_pad": (_case([0, 0, -1, 1, 0, 0, 0, 1], (4, 3, 3, 3), [1, 3, 7, 6]), 1, 1),
    "auto_pad_same": (
        _case([0, 0, 1, 1, 0, 0, 1, 1], (4, 3, 3, 3), [1, 3, 6, 6], {"auto_pad": "SAME_UPPER"}),
        1,
        1,
    ),
}


def _two_readers(second: str):
    pad, inits = _pad([0, 0, 1, 1, 0, 0, 1, 1])
    nodes = [pad, N("Conv", ["p", "w"], ["y"], kernel_shape=[3, 3])]
    outs = ["y"]
    if second == "conv":
        nodes.append(N("Conv", ["p", "w"], ["z"], kernel_shape=[3, 3], strides=[2, 2]))
        outs.append("z")
    elif second == "relu":
        nodes.append(N("Relu", ["p"], ["z"]))
        outs.append("z")
    elif second == "output":
        outs.append("p")
    elif second == "conv_transpose":
        nodes = [pad, N("ConvTranspose", ["p", "wt"], ["y"], kernel_shape=[3, 3], pads=[1] * 4)]
        inits["wt"] = (3, 4, 3, 3)
    inits["w"] = (4, 3, 3, 3)
    return _model(nodes, [1, 3, 6, 6], inits, outputs=outs)


CASES["two_convs"] = (_two_readers("conv"), 0, 0)
CASES["conv_and_relu"] = (_two_readers("relu"), 1, 1)
CASES["graph_output"] = (_two_readers("output"), 1, 1)
CASES["conv_transpose"] = (_two_readers("conv_transpose"), 1, 1)


@pytest.mark.parametrize("case", sorted(CASES))
def test_pad_into_conv(case, tmp_path, pipeline_helpers):
    model, pads_left, f_pads = CASES[case]
    onnx.checker.check_model(model, full_check=True)
    rng = np.random.default_rng(5)
    x_shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    x = torch.from_numpy(rng.standard_normal(x_shape).astype(np.float32))
    expected = pipeline_helpers.ort_run(model, {"x": x})
    opts = CompileOptions(clusters=2)
    res = compile_model(model, str(tmp_path), opts)
    ops = collections.Counter(res.op_counts())
    assert ops.get("Pad", 0) == pads_left, dict(ops)
    with open(os.path.join(res.out_dir, "model_seq.py")) as f:
        assert f.read().count("F.pad(") == f_pads
    with CompiledModel(res, opts) as m:
        got_seq = m.sequential(x)
        got_par = m(x)
    for got, what in ((got_seq, "sequential"), (got_par, "parallel")):
        got = list(got) if isinstance(got, tuple | list) else [got]
        assert len(got) == len(expected)
        for g, e in zip(got, expected, strict=True):
            pipeline_helpers.assert_close(g, e, 1e-5, f"{case} {what}")


def test_no_fuse_pad_into_conv_keeps_the_pad(tmp_path):
    model = CASES["depthwise_symmetric"][0]
    res = compile_model(model, str(tmp_path), CompileOptions(disable=("fuse-pad-into-conv",)))
    assert res.op_counts().get("Pad") == 1
