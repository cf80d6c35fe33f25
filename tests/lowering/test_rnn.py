"""ONNX LSTM, GRU and RNN against onnxruntime: the attributes of the spec, both lowerings.

Each case is one node with random weights (constants, as in exported models, or graph inputs),
run through the lowering rules eagerly (:func:`ramiel.lowering.node_view.run_graph_eagerly`) and,
for a few, through the whole compiler; onnxruntime is the oracle (rtol 1e-4 of the largest
output). ``ramiel.lowering.rnn`` picks PyTorch's fused layer where it computes the same as the
node, else the time loop of ``ops.recurrent``: both are checked.
"""

from __future__ import annotations

import itertools

import numpy as np
import onnx
import pytest
from _lowering_cases import assert_close, run_onnxruntime
from onnx import TensorProto, helper, numpy_helper

from ramiel.errors import UnsupportedOpError
from ramiel.lowering.api import NodeView, TensorInfo
from ramiel.lowering.node_view import run_graph_eagerly
from ramiel.lowering.rnn import GATES, _fused

H, I, T, BATCH = 5, 3, 4, 2


def rnn_model(
    kind: str,
    *,
    direction: str = "forward",
    layout: int = 0,
    initial: bool = False,
    bias: bool = True,
    seq_lens: list[int] | None = None,
    peepholes: bool = False,
    weights_as_inputs: bool = False,
    seed: int = 0,
    **attrs,
) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    dirs = 2 if direction == "bidirectional" else 1
    g = GATES[kind]
    x = rng.standard_normal((T, BATCH, I)).astype(np.float32)
    if layout:
        x = np.ascontiguousarray(x.transpose(1, 0, 2))
    tensors = {
        "W": rng.uniform(-0.5, 0.5, (dirs, g * H, I)).astype(np.float32),
        "R": rng.uniform(-0.5, 0.5, (dirs, g * H, H)).astype(np.float32),
    }
    names = ["X", "W", "R"]
    if bias:
        tensors["B"] = rng.uniform(-0.5, 0.5, (dirs, 2 * g * H)).astype(np.float32)
    names.append("B" if bias else "")
    if seq_lens is not None:
        tensors["sequence_lens"] = np.array(seq_lens, np.int32)
    names.append("sequence_lens" if seq_lens is not None else "")
    state = (BATCH, dirs, H) if layout else (dirs, BATCH, H)

    def initial_state():
        s = rng.standard_normal((dirs, BATCH, H)).astype(np.float32)
        return np.ascontiguousarray(s.transpose(1, 0, 2)) if layout else s

    if initial:
        tensors["initial_h"] = initial_state()
        if kind == "LSTM":
            tensors["initial_c"] = initial_state()
    names.append("initial_h" if initial else "")
    if kind == "LSTM":
        names.append("initial_c" if initial else "")
        if peepholes:
            tensors["P"] = rng.uniform(-0.5, 0.5, (dirs, 3 * H)).astype(np.float32)
        names.append("P" if peepholes else "")
    while names and names[-1] == "":
        names.pop()
    outs = ["Y", "Y_h"] + (["Y_c"] if kind == "LSTM" else [])
    if layout:
        attrs["layout"] = 1
    node = helper.make_node(kind, names, outs, hidden_size=H, direction=direction, **attrs)
    y_shape = [BATCH, T, dirs, H] if layout else [T, dirs, BATCH, H]
    out_vi = [helper.make_tensor_value_info("Y", TensorProto.FLOAT, y_shape)] + [
        helper.make_tensor_value_info(n, TensorProto.FLOAT, list(state)) for n in outs[1:]
    ]
    feeds = {"X": x}
    inputs = [helper.make_tensor_value_info("X", TensorProto.FLOAT, x.shape)]
    inits = []
    for name, arr in tensors.items():
        if weights_as_inputs or name in ("initial_h", "initial_c", "sequence_lens"):
            dt = TensorProto.INT32 if name == "sequence_lens" else TensorProto.FLOAT
            inputs.append(helper.make_tensor_value_info(name, dt, arr.shape))
            feeds[name] = arr
        else:
            inits.append(numpy_helper.from_array(arr, name))
    graph = helper.make_graph([node], kind.lower(), inputs, out_vi, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)], ir_version=10)
    return model, feeds


def reference(model, feeds, **params) -> list[np.ndarray]:
    """onnxruntime's outputs; for ``layout=1`` (which onnxruntime does not implement) those of
    the same node with ``layout=0`` on transposed inputs, transposed back."""
    node = model.graph.node[0]
    if not any(a.name == "layout" and a.i == 1 for a in node.attribute):
        return run_onnxruntime(model, feeds)
    twin, twin_feeds = rnn_model(node.op_type, **{**params, "layout": 0})
    refs = run_onnxruntime(twin, twin_feeds)
    return [refs[0].transpose(2, 0, 1, 3), *(r.transpose(1, 0, 2) for r in refs[1:])]


def check(model, feeds, fused: bool | None = None, **params):
    refs = reference(model, feeds, **params)
    got = run_graph_eagerly(model, feeds)
    for (name, g), r in zip(got.items(), refs, strict=True):
        assert_close(g, r, rtol=1e-4, what=name)
    if fused is not None:
        node = model.graph.node[0]
        assert _lowered_fused(model) is fused, node


def _lowered_fused(model) -> bool:
    from ramiel.lowering.node_view import node_views

    (_, view), *_ = node_views(model).views
    from ramiel.lowering.api import with_defaults

    return _fused(with_defaults(view))


CASES = list(
    itertools.product(
        ["LSTM", "GRU", "RNN"], ["forward", "reverse", "bidirectional"], [0, 1], [False, True]
    )
)


@pytest.mark.parametrize("kind, direction, layout, initial", CASES)
def test_directions_layouts_initial_states(kind, direction, layout, initial):
    params = dict(direction=direction, layout=layout, initial=initial)
    if kind == "GRU":
        params["linear_before_reset"] = 1
    model, feeds = rnn_model(kind, **params)
    check(model, feeds, fused=True, **params)


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_ragged_sequence_lens_use_the_time_loop(kind, direction):
    """A batch entry shorter than the sequence stops there (Y is 0 after it, Y_h its last
    state; reverse starts at its last step), as onnxruntime computes."""
    model, feeds = rnn_model(kind, direction=direction, initial=True, seq_lens=[T, 2])
    check(model, feeds, fused=False)


def test_full_sequence_lens_keep_the_fused_layer():
    model, feeds = rnn_model("LSTM", seq_lens=[T, T])
    model.graph.initializer.append(
        numpy_helper.from_array(feeds.pop("sequence_lens"), "sequence_lens")
    )
    del model.graph.input[-1]
    check(model, feeds, fused=True)


@pytest.mark.parametrize("lbr", [0, 1])
@pytest.mark.parametrize("direction", ["forward", "bidirectional"])
def test_gru_linear_before_reset(lbr, direction):
    """PyTorch's GRU is linear_before_reset = 1; ONNX's default 0 takes the time loop."""
    model, feeds = rnn_model("GRU", direction=direction, initial=True, linear_before_reset=lbr)
    check(model, feeds, fused=bool(lbr))


@pytest.mark.parametrize(
    "kind, attrs, peepholes",
    [
        ("LSTM", {}, True),
        ("LSTM", {"input_forget": 1}, False),
        ("LSTM", {"clip": 0.3}, False),
        ("GRU", {"clip": 0.3, "linear_before_reset": 1}, False),
        ("RNN", {"clip": 0.3}, False),
        ("LSTM", {"activations": ["Sigmoid", "Relu", "Tanh"]}, False),
        ("GRU", {"activations": ["Sigmoid", "Relu"], "linear_before_reset": 1}, False),
    ],
)
def test_time_loop_features(kind, attrs, peepholes):
    model, feeds = rnn_model(kind, initial=True, peepholes=peepholes, **attrs)
    check(model, feeds, fused=False)


def test_rnn_relu_is_fused():
    model, feeds = rnn_model("RNN", direction="bidirectional", activations=["Relu", "Relu"])
    check(model, feeds, fused=True)


def test_weights_given_at_run_time():
    """Weights as graph inputs: reordered by ``ops.rnn_params`` at run time."""
    model, feeds = rnn_model("LSTM", direction="bidirectional", weights_as_inputs=True)
    check(model, feeds, fused=True)


def test_no_bias():
    model, feeds = rnn_model("GRU", bias=False, linear_before_reset=1)
    check(model, feeds, fused=True)


def test_other_activations_are_a_clear_error():
    model, feeds = rnn_model("RNN", activations=["LeakyRelu"], activation_alpha=[0.1])
    with pytest.raises(UnsupportedOpError, match=r"RNN .*activation 'LeakyRelu' is not supported"):
        run_graph_eagerly(model, feeds)


def test_weights_are_reordered_at_compile_time(tmp_path):
    """The generated code calls torch.lstm on weights stored in PyTorch's gate order; no
    reordering happens per inference."""
    import torch

    import ramiel

    model, feeds = rnn_model("LSTM", direction="bidirectional", initial=True)
    refs = run_onnxruntime(model, feeds)
    with ramiel.compile(model, clusters=1, out_dir=str(tmp_path)) as m:
        code = (tmp_path / "model_seq.py").read_text()
        assert "torch.lstm(" in code and "ops.rnn_params" not in code
        assert "self.W__torch_forward" in code and "self.R__torch_backward" in code
        outs = m.sequential(*(torch.from_numpy(feeds[n]) for n in m.input_specs))
        for g, r in zip(outs, refs, strict=True):
            assert_close(g, r, rtol=1e-4)
        from safetensors.numpy import load_file

        stored = load_file(str(tmp_path / "weights.safetensors"))
        w = numpy_helper.to_array(next(t for t in model.graph.initializer if t.name == "W"))
        i, o, f, c = np.split(w[0], 4)
        np.testing.assert_array_equal(stored["W__torch_forward"], np.concatenate([i, f, c, o]))


def test_view_defaults():
    """A NodeView without attributes gets the schema's defaults (forward, layout 0)."""
    view = NodeView(
        "RNN", "r", "", 22,
        [TensorInfo("X", (T, 1, I), "float32"), TensorInfo("W", (1, H, I), "float32"),
         TensorInfo("R", (1, H, H), "float32")],
        [TensorInfo("Y", None, "float32")],
    )  # fmt: skip
    from ramiel.lowering.api import check_supported, with_defaults

    assert check_supported(view) is None
    assert _fused(with_defaults(view))
