"""``--fuse-channel-shuffle``: ShuffleNet's channel shuffle becomes one ``onnx.Gather`` of the
channels, which lowers to one ``F.channel_shuffle``.

What it does
    ShuffleNet (Zhang et al., 2018) and the models built on it mix the channels of ``g`` groups
    between two grouped convolutions; ONNX has no op for it, so exporters write::

        r = Reshape(x, [N, g, C / g, H, W])        # x: [N, C, H, W]
        t = Transpose(r, perm = [0, 2, 1, 3, 4])
        y = Reshape(t, [N, C, H, W])

    The pass replaces the three ops by ``y = Gather(x, p, axis = 1)`` with the constant
    permutation ``p[j * g + i] = i * (C / g) + j`` (``i < g``, ``j < C / g``): the same values,
    as one ONNX op. Its lowering recognises that permutation and prints
    ``F.channel_shuffle(x, g)`` (:func:`ramiel.lowering.tensor.shuffle_groups`), and
    ``--assign-layout`` lets such a Gather keep the format of its input (it is one copy in
    either format), where the 5-D Reshape forced a contiguous tensor.

When (every condition, else the ops stay)
    ``x`` is a 4-D tensor of static shape with ``1 < g < C``; the first Reshape's result is
    ``[N, g, C / g, H, W]``, the Transpose swaps exactly axes 1 and 2, the last Reshape's
    result has ``x``'s shape and type; the Reshape and Transpose results are read only inside
    the pattern, all three ops in one block.

Options
    None.

Measured (``python bench/layout_ops.py shuffle``, ``bench/results/layout_ops_shuffle_depthwise.txt``:
1 thread, interleaved medians of 41 calls in µs, light_shufflenet's four shapes (1, 112, 56, 56)
/ (1, 136, 28, 28) / (1, 272, 14, 14) / (1, 544, 7, 7), 4 groups; 2026-12-01, load average 7.5
on 2 cores): the exported 5-D Reshape/Transpose/Reshape 74.3 / 24.2 / 16.4 / 14.2 contiguous
and 472 / 94.7 / 49.2 / 28.1 channels-last; ``F.channel_shuffle`` 66.8 / 18.8 / 11.5 / 9.1
contiguous and 93.0 / 29.3 / 11.5 / 7.0 channels-last; ``index_select`` on dim 1 62.2 / 17.5 /
10.3 / 6.7 contiguous but 366 / 94.1 / 46.2 / 25.9 channels-last; advanced indexing
``x[:, p]`` 256 / 78.0 / 46.3 / 29.4. ``F.channel_shuffle`` is the one form that is fast in
both formats. End to end the sequential module of light_shufflenet (contiguous under
``--layout auto`` then: its grouped 1x1 convolutions were batched products on contiguous
tensors) was unchanged within the noise: 33.8 ms [33.1, 35.0] against 33.9 ms [32.8, 35.2]
thread CPU time per inference (medians of 100 interleaved calls, load average 8.1), bitwise the
same outputs, 130 statements instead of 162. Since the grouped convolutions run prepacked,
the model is one channels-last region through its 16 shuffles (docs/benchmarks.md).

Source: Zhang, Zhou, Lin, Sun, *ShuffleNet: An Extremely Efficient Convolutional Neural
Network for Mobile Devices*, CVPR 2018 (the channel shuffle operation);
``torch.nn.ChannelShuffle``; the ONNX Gather operator,
https://onnx.ai/onnx/operators/onnx__Gather.html.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from onnx.defs import OpSchema
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass

from ramiel.context import module_store
from ramiel.dialects import onnx as onnx_d
from ramiel.dialects.onnx import OnnxOp
from ramiel.rewrite import Op, Var, create_op, is_closed, match, replace_root, shape_of
from ramiel.weights import WeightStore, dense_from_numpy

__all__ = ["FuseChannelShuffle", "fuse_channel_shuffle", "shuffle_permutation"]


def shuffle_permutation(channels: int, groups: int) -> np.ndarray:
    """The channel order of a shuffle of ``groups`` groups: output channel ``j * groups + i`` is
    input channel ``i * (channels // groups) + j`` (int64, shape ``(channels,)``)."""
    return np.arange(channels, dtype=np.int64).reshape(groups, channels // groups).T.reshape(-1)


X = Var("x")
PATTERN = Op(
    "Reshape",
    (
        Op(
            "Transpose",
            (Op("Reshape", (X, Var("s1")), name="split"),),
            check=lambda op: list(op.attr("perm", []) or []) == [0, 2, 1, 3, 4],
        ),
        Var("s2"),
    ),
)


def _groups(split: OnnxOp, x_shape: tuple[int, ...] | None) -> int | None:
    """``g`` when ``split`` reshapes ``x`` of ``x_shape`` to ``[N, g, C / g, H, W]``."""
    s = shape_of(split.results[0])
    if x_shape is None or s is None or len(x_shape) != 4 or len(s) != 5:
        return None
    n, c, h, w = x_shape
    g = s[1]
    if s != (n, g, c // g if g else 0, h, w) or not 1 < g < c or c % g:
        return None
    return g


def _constant(arr: np.ndarray, before: OnnxOp) -> SSAValue:
    """An inline ``onnx.Constant`` of ``arr`` before ``before``: the lowering reads it at compile
    time (:func:`~ramiel.lowering.tensor.shuffle_groups`) and the generated code never does, so
    it is no weight (a ``dense_resource`` tensor would be a buffer of the weights file)."""
    attr = dense_from_numpy(arr)
    new = onnx_d.create("Constant", [], [attr.get_type()], {"value": attr})  # type: ignore[attr-defined]
    new.location = before.location
    assert before.parent is not None
    before.parent.insert_op_before(new, before)
    new.results[0].name_hint = "shuffle"
    return new.results[0]


def fuse_channel_shuffle(module: ModuleOp, store: WeightStore | None) -> int:
    """Run the pass on ``module`` (``store``: its weights, ``None`` if it names no weights
    file); returns the number of shuffles made Gathers."""
    n = 0
    for op in reversed(list(module.walk())):
        if not isinstance(op, OnnxOp) or op.op_type != "Reshape" or op.parent is None:
            continue
        m = match(PATTERN, op.results[0], store, is_closed)
        if m is None:
            continue
        x = m.values["x"]
        g = _groups(m.ops["split"], shape_of(x))
        if g is None or x.type != op.results[0].type:
            continue
        c = shape_of(x)[1]  # type: ignore[index]
        perm = _constant(shuffle_permutation(c, g), op)
        axis = {"axis": onnx_d.attr_from_python(OpSchema.AttrType.INT, 1)}
        gather = create_op("Gather", [x, perm], [op.results[0].type], axis, op)
        op.parent.insert_op_before(gather, op)
        replace_root(op, gather.results[0], m.matched)
        n += 1
    return n


@dataclass(frozen=True)
class FuseChannelShuffle(ModulePass):
    """Reshape/Transpose/Reshape channel shuffle -> ``onnx.Gather`` (see the module doc)."""

    name = "fuse-channel-shuffle"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        fuse_channel_shuffle(op, module_store(ctx, op))
