"""Recurrent layers: ONNX ``LSTM``, ``GRU`` and ``RNN``.

Two lowerings, chosen per node at compile time:

* **PyTorch's fused layers** (the default, and the faster: ``bench/rnn_lowering.py``,
  ``bench/results/rnn_lowering.txt``): ``torch.lstm``/``torch.gru``/``torch.rnn_tanh``/
  ``torch.rnn_relu`` -- the functions behind ``nn.LSTM``/``nn.GRU``/``nn.RNN`` -- with the
  weights reordered once, at compile time, into PyTorch's gate order and split per direction
  (ONNX LSTM gates i, o, f, c -> PyTorch i, f, g, o; GRU z, r, h -> r, z, n): new weights keyed
  ``<weight>__torch_<direction>`` (:meth:`~ramiel.lowering.api.Emitter.constant`). Weights that
  are graph inputs are reordered at run time instead (``ops.rnn_params``). ``direction=reverse``
  runs on the time-flipped input; ``layout=1`` is ``batch_first``; the outputs are reshaped to
  ONNX's layout (``Y``: ``[seq, num_directions, batch, hidden]``, or
  ``[batch, seq, num_directions, hidden]`` with ``layout=1``; ``Y_h``/``Y_c``:
  ``[num_directions, batch, hidden]`` / ``[batch, num_directions, hidden]``).
* **An explicit time loop** (``ops.recurrent``, the operator's equations step by step) for what
  PyTorch's layers do not compute: LSTM peepholes ``P``, ``input_forget``, ``clip``, GRU's default
  ``linear_before_reset = 0`` (PyTorch's GRU is ``linear_before_reset = 1``), per-batch
  ``sequence_lens`` shorter than the sequence, other activations among Sigmoid, Tanh and Relu, and
  element types other than float32/float64.

Activations other than Sigmoid, Tanh and Relu (Affine, LeakyRelu, ThresholdedRelu, ScaledTanh,
HardSigmoid, Elu, Softsign, Softplus) are a clear error.

Semantics: https://onnx.ai/onnx/operators/onnx__LSTM.html, ``onnx__GRU``, ``onnx__RNN``.
"""

from __future__ import annotations

import numpy as np

from ramiel.lowering.api import NodeView, Value, rule
from ramiel.lowering.common import const, dtype, has_input, in_dtype, shape

#: Gates per cell, and PyTorch's gate order as indices into ONNX's.
GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
TORCH_ORDER = {"LSTM": (0, 2, 3, 1), "GRU": (1, 0, 2), "RNN": (0,)}
#: The default activations per direction (ONNX).
DEFAULT_ACTIVATIONS = {
    "LSTM": ("Sigmoid", "Tanh", "Tanh"),
    "GRU": ("Sigmoid", "Tanh"),
    "RNN": ("Tanh",),
}
SUPPORTED_ACTIVATIONS = frozenset({"Sigmoid", "Tanh", "Relu"})


def _directions(node: NodeView) -> int:
    return 2 if node.attrs.get("direction") == "bidirectional" else 1


def _activations(node: NodeView) -> list[str]:
    acts = node.attrs.get("activations")
    per = DEFAULT_ACTIVATIONS[node.op_type]
    if not acts:
        return list(per) * _directions(node)
    acts = [str(a) for a in acts]
    if _directions(node) == 1 and len(acts) == 2 * len(per):
        acts = acts[: len(per)]  # RNN's schema default lists one per direction (Tanh, Tanh)
    return acts


def _check(node: NodeView) -> str | None:
    direction = node.attrs.get("direction") or "forward"
    if direction not in ("forward", "reverse", "bidirectional"):
        return f"direction {direction!r} is not forward, reverse or bidirectional"
    acts = _activations(node)
    bad = [a for a in acts if a not in SUPPORTED_ACTIVATIONS]
    if bad:
        return (
            f"activation {bad[0]!r} is not supported (Sigmoid, Tanh and Relu are; "
            f"the default is {', '.join(DEFAULT_ACTIVATIONS[node.op_type])})"
        )
    if len(acts) != len(DEFAULT_ACTIVATIONS[node.op_type]) * _directions(node):
        return f"activations lists {len(acts)} functions, not one per gate function and direction"
    for i, what in ((0, "X"), (1, "W"), (2, "R")):
        s = shape(node, i)
        if s is None or len(s) != 3:
            return f"{what} (input {i}) needs a static rank-3 shape"
    if in_dtype(node, 0) not in ("float32", "float64", "float16", "bfloat16"):
        return f"element type {in_dtype(node, 0)} (only floating-point types)"
    return None


def _fused(node: NodeView) -> bool:
    """Does one of PyTorch's fused layers compute exactly this node?"""
    kind = node.op_type
    acts = _activations(node)
    if kind == "RNN":
        if len(set(acts)) != 1 or acts[0] not in ("Tanh", "Relu"):
            return False
    elif acts != list(DEFAULT_ACTIVATIONS[kind]) * _directions(node):
        return False
    if node.attrs.get("clip") is not None:
        return False
    if kind == "LSTM":
        if node.attrs.get("input_forget"):
            return False
        if has_input(node, 7):
            p = const(node, 7)
            if p is None or np.any(p != 0):
                return False
    if kind == "GRU" and not node.attrs.get("linear_before_reset"):
        return False
    if has_input(node, 4):
        lens = const(node, 4)
        steps = shape(node, 0)[1 if node.attrs.get("layout") else 0]  # type: ignore[index]
        if lens is None or np.any(np.asarray(lens) != steps):
            return False
    return in_dtype(node, 0) in ("float32", "float64")


@rule("LSTM", "GRU", "RNN", check=_check)
def _recurrent(node: NodeView, args, em):
    """LSTM, GRU and RNN: PyTorch's fused layer where it computes the same, else the time loop
    of ``ops.recurrent`` (see the module docstring)."""
    if _fused(node):
        return _lower_fused(node, args, em)
    kind = node.op_type
    lstm = kind == "LSTM"
    out = em.call(
        "ops.recurrent",
        kind,
        args[0],
        args[1],
        args[2],
        args[3],
        args[4],
        args[5],
        args[6] if lstm else None,
        args[7] if lstm else None,
        hidden_size=shape(node, 2)[-1],  # type: ignore[index]
        direction=node.attrs.get("direction") or "forward",
        activations=tuple(_activations(node)),
        clip=node.attrs.get("clip"),
        layout=node.attrs.get("layout") or 0,
        input_forget=node.attrs.get("input_forget") or 0,
        linear_before_reset=node.attrs.get("linear_before_reset") or 0,
    )
    outs = [em.call("operator.getitem", out, k) for k in range(3 if lstm else 2)]
    return outs


def _params(node: NodeView, args, em) -> list[Value] | Value:
    """PyTorch's parameter list ``[w_ih, w_hh, b_ih, b_hh]`` per direction, gates reordered:
    new weights computed now when W, R and B are constants, else ``ops.rnn_params``."""
    kind = node.op_type
    gates = GATES[kind]
    order = TORCH_ORDER[kind]
    dirs = _directions(node)
    hidden = shape(node, 2)[-1]  # type: ignore[index]
    w, r = const(node, 1), const(node, 2)
    b = const(node, 3) if has_input(node, 3) else None
    if w is None or r is None or (has_input(node, 3) and b is None):
        return em.call("ops.rnn_params", kind, args[1], args[2], args[3])

    def reorder(m: np.ndarray) -> np.ndarray:
        blocks = np.split(m, gates, axis=0)
        return np.ascontiguousarray(np.concatenate([blocks[k] for k in order], axis=0))

    params: list[Value] = []
    for d in range(dirs):
        tag = "torch" if dirs == 1 else f"torch_{('forward', 'backward')[d]}"
        params.append(em.constant(reorder(w[d]), args[1], tag))
        params.append(em.constant(reorder(r[d]), args[2], tag))
        if b is not None:
            params.append(em.constant(reorder(b[d][: gates * hidden]), args[3], f"{tag}_ih"))
            params.append(em.constant(reorder(b[d][gates * hidden :]), args[3], f"{tag}_hh"))
    return params


def _lower_fused(node: NodeView, args, em):
    kind = node.op_type
    dirs = _directions(node)
    layout = node.attrs.get("layout") or 0
    xs = shape(node, 0)
    assert xs is not None
    batch = xs[0] if layout else xs[1]
    hidden = shape(node, 2)[-1]  # type: ignore[index]
    time_axis = 1 if layout else 0
    reverse = node.attrs.get("direction") == "reverse"
    x = args[0]
    if reverse:
        x = em.method(x, "flip", time_axis)

    def state(i: int) -> Value:
        if args[i] is None:
            return em.call("torch.zeros", (dirs, batch, hidden), dtype=dtype(in_dtype(node)))
        return em.method(args[i], "transpose", 0, 1) if layout else args[i]

    hx = [state(5), state(6)] if kind == "LSTM" else state(5)
    params = _params(node, args, em)
    fn = {"LSTM": "torch.lstm", "GRU": "torch.gru"}.get(kind)
    if fn is None:
        fn = "torch.rnn_relu" if _activations(node)[0] == "Relu" else "torch.rnn_tanh"
    res = em.call(
        fn,
        x,
        hx,
        params,
        has_biases=has_input(node, 3),
        num_layers=1,
        dropout=0.0,
        train=False,
        bidirectional=dirs == 2,
        batch_first=bool(layout),
    )
    outs: list[Value | None] = [None] * (3 if kind == "LSTM" else 2)
    if node.output(0) is not None:
        y = em.call("operator.getitem", res, 0)
        if reverse:
            y = em.method(y, "flip", time_axis)
        steps = xs[time_axis]
        if layout:
            y = em.method(y, "reshape", batch, steps, dirs, hidden)
        else:
            y = em.method(y, "reshape", steps, batch, dirs, hidden)
            y = em.method(y, "transpose", 1, 2)
        outs[0] = y
    for k in range(1, len(outs)):
        if node.output(k) is not None:
            h = em.call("operator.getitem", res, k)
            outs[k] = em.method(h, "transpose", 0, 1) if layout else h
    return outs
