"""``--assign-layout``: choose the memory format (contiguous NCHW or channels-last) of every 4-D
activation, and record it as ``ramiel.layout = "channels_last"`` on the ops that compute in it.

What it does
    Every ``onnx`` op of ``@main`` (inside clusters too) gets a format (see :mod:`ramiel.layout`
    for the op classes and the measurements behind them):

    1. the *anchor* ops that are faster in channels-last (Conv, MaxPool and AveragePool with more
       than one output position, Resize on a 4-D input) compute in channels-last;
    2. a *transparent* op (element-wise, Concat, BatchNormalization, LRN, constant Pad, a
       channel shuffle: the Gather of ``--fuse-channel-shuffle``, a Split along the channels:
       ``--combine-parallel-convs``'s; GlobalAveragePool, GlobalMaxPool and a pooling to a 1x1
       map, whose ``(N, C, 1, 1)`` result is both formats) computes in channels-last when
       one of its 4-D activation operands is channels-last, so the format flows through
       conv/pool/element-wise/concat stacks (to a fixed point, so that values crossing clusters
       through ``cluster.send``/``cluster.recv`` count too);
    3. every other op (Reshape, Flatten, Transpose, other Splits, Gemm, Softmax, ...)
       reads contiguous tensors; so do the control-flow ops (If, Loop, Scan) and every op in
       their bodies: a body is a layout boundary (the lowering converts the channels-last values
       a control-flow op reads or its bodies capture once, before the compound statement).

    The ops in channels-last form *regions*: connected through values of shape ``(N, C, H, W)``
    with ``C > 1`` and ``H * W > 1`` (other shapes are the same in both formats). With
    ``format=auto`` a region is kept only where the cost model says it is faster: its gain
    (each Conv on a map of more than one position 1 - 1 / ``PREPACKED_CONV_SPEEDUP`` of its
    analytic cost where it will run prepacked, else 1 - 1 / ``CONV_SPEEDUP``; each
    MaxPool/AveragePool/Resize the two conversions its contiguous lowering makes around a
    channels-last kernel, for inputs of at least ``THROUGH_CL_MIN_ELEMENTS`` elements) must
    exceed the conversions at its boundary (values entering from a graph input or a contiguous
    op, values leaving to a contiguous op or a graph output), each
    :func:`~ramiel.cost_model.conversion_cost_us`. ``format=channels-last`` keeps every region;
    ``format=nchw`` assigns contiguous everywhere (removes every ``ramiel.layout``).

    The lowering then places the conversions: an operand is converted where its producer's format
    differs from its consumer's, once per value and function; graph outputs are returned
    contiguous; a channel carries its tensor in the producer's format; conv kernels (4-D weights
    of channels-last ops) are converted once when the weights are loaded.

Options
    ``format=auto|channels-last|nchw`` (default ``auto``); ``prepacked=true|false`` (default
    ``true``): whether ``--prepack-conv`` runs later, so that a channels-last Conv it accepts
    gains 1 - 1 / :data:`~ramiel.layout.PREPACKED_CONV_SPEEDUP` of its cost instead of 1 - 1 /
    ``CONV_SPEEDUP`` (``ramiel compile`` sets it from its rewrites).

Algorithm
    Forward propagation of a two-valued lattice to a fixed point, then connected components
    (union-find) over the format-carrying edges, each kept or dropped by its estimated gain, as
    in layout assignment for tensor compilers (e.g. TVM's ``ConvertLayout`` and XLA's
    ``LayoutAssignment``, which also propagate a preferred layout from convolutions through
    layout-agnostic ops and insert transposes at the boundaries).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue

from ramiel.clustering import is_ambient, main_func
from ramiel.context import module_store
from ramiel.cost_model import analytic_cost_us, conversion_cost_us
from ramiel.dialects.cluster import SendOp
from ramiel.dialects.onnx import OnnxOp
from ramiel.dialects.onnx_traits import LayoutAnchor, LayoutTransparent
from ramiel.layout import (
    CHANNELS_LAST,
    CONTIGUOUS,
    CONV_SPEEDUP,
    GLOBAL_POOLS,
    LAYOUT_MODES,
    PREPACKED_CONV_SPEEDUP,
    THROUGH_CL_MIN_ELEMENTS,
    LayoutMode,
    has_format,
    set_layout,
    source_value,
    static_shape_of,
)
from ramiel.passes import TypedOptions, check_choice
from ramiel.passes.prepack_conv import packable_conv
from ramiel.weights import WeightStore

if TYPE_CHECKING:
    from ramiel.lowering.api import NodeView
    from ramiel.lowering.to_torchpy import Lowering


def _activations(op: Operation) -> list[SSAValue]:
    """The operands of ``op`` that are computed at run time (not constants, not ``none``)."""
    out = []
    for v in op.operands:
        owner = v.owner
        if isinstance(owner, Operation) and is_ambient(owner):
            continue
        out.append(v)
    return out


class _NodeViews:
    """The lowering's view of an op (``Lowering.node_view``: shapes, constants, attributes),
    from one :class:`~ramiel.lowering.to_torchpy.Lowering` made on first use and kept for the
    pass (making one walks the module)."""

    def __init__(self, module: ModuleOp, store: WeightStore | None) -> None:
        self._module, self._store = module, store
        self._lowering: Lowering | None = None

    def __call__(self, op: OnnxOp) -> NodeView:
        if self._lowering is None:
            from ramiel.lowering.to_torchpy import Lowering  # lazy: torch

            self._lowering = Lowering(self._module, self._store)
        return self._lowering.node_view(op)


def _is_anchor(op: OnnxOp, node_view: _NodeViews) -> bool:
    """An anchor op on a 4-D input (a Resize only where it is one ``F.interpolate``)."""
    if not op.has_trait(LayoutAnchor) or not op.operands:
        return False
    shape = static_shape_of(op.operands[0])
    if shape is None or len(shape) != 4:
        return False
    if op.op_type in ("MaxPool", "AveragePool"):
        out = static_shape_of(op.results[0])
        return out is not None and len(out) == 4 and out[2] * out[3] > 1  # not a global pooling
    if op.op_type in ("Resize", "Upsample"):
        from ramiel.lowering.resize import interpolates  # lazy: torch

        return interpolates(node_view(op))
    return True


def _is_transparent(op: OnnxOp, node_view: _NodeViews) -> bool:
    """A transparent op (a Pad only in ``constant`` mode: torch's reflect/edge padding returns
    contiguous tensors; a Gather only where it is a channel shuffle, one ``F.channel_shuffle``,
    which keeps its input's format; a Split only along the channels of a 4-D value; a global
    pooling of a 4-D value, :data:`~ramiel.layout.GLOBAL_POOLS`, and a MaxPool or AveragePool
    to a 1x1 map, whose result is both formats)."""
    if op.op_type == "Gather":
        from ramiel.lowering.tensor import shuffle_groups  # lazy: torch

        return shuffle_groups(node_view(op)) is not None
    if op.op_type == "Split":
        return _splits_channels(op)
    if op.op_type == "Pad":
        mode = op.attr("mode", "constant")
        return (mode.decode() if isinstance(mode, bytes) else mode) == "constant"
    if op.op_type in GLOBAL_POOLS:
        shape = static_shape_of(op.operands[0]) if op.operands else None
        return shape is not None and len(shape) == 4
    if op.op_type in ("MaxPool", "AveragePool") and len(op.results) == 1:
        x, out = static_shape_of(op.operands[0]), static_shape_of(op.results[0])
        return x is not None and out is not None and len(x) == len(out) == 4 and not has_format(out)
    return op.has_trait(LayoutTransparent)


def _splits_channels(op: OnnxOp) -> bool:
    """A Split of a 4-D value along the channel axis (``--combine-parallel-convs`` makes them):
    its parts are views of a channels-last input that keep its strides; a reader that needs a
    dense tensor copies the part (:func:`ramiel.runtime.ops.conv2d_prepacked`; torch's pooling
    and element-wise kernels read the strided view)."""
    shape = static_shape_of(op.operands[0])
    if shape is None or len(shape) != 4:
        return False
    return int(op.attr("axis", 0)) % 4 == 1


def _in_region_op(op: Operation) -> bool:
    """Is ``op`` in a body of a control-flow op (If, Loop, Scan)? Such bodies are layout
    boundaries: they compute in contiguous format (the lowering converts the channels-last
    values they read once, before the compound statement)."""
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, OnnxOp):
            return True
        parent = parent.parent_op()
    return False


class _Regions:
    """Union-find over ops."""

    def __init__(self) -> None:
        self.parent: dict[Operation, Operation] = {}

    def find(self, op: Operation) -> Operation:
        self.parent.setdefault(op, op)
        root = op
        while self.parent[root] is not root:
            root = self.parent[root]
        while self.parent[op] is not root:
            self.parent[op], op = root, self.parent[op]
        return root

    def union(self, a: Operation, b: Operation) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra is not rb:
            self.parent[rb] = ra


def assign_layout(
    module: ModuleOp, mode: str, store: WeightStore | None, prepacked: bool = True
) -> int:
    """Assign formats in ``module`` (see the module docstring; ``store``: its weights, ``None``
    if it names no weights file; ``prepacked``: whether ``--prepack-conv`` runs later, which
    makes a channels-last convolution faster); returns the number of ops in channels-last."""
    check_choice("assign-layout", "format", LAYOUT_MODES, mode)
    fn = main_func(module)
    every = [o for o in fn.body.walk() if isinstance(o, OnnxOp) and not is_ambient(o)]
    for o in every:
        set_layout(o, CONTIGUOUS)
    ops = [o for o in every if not _in_region_op(o)]
    sends = {o.channel.data: o.value for o in fn.body.walk() if isinstance(o, SendOp)}
    if mode == "nchw":
        return 0
    cl: set[OnnxOp] = set()

    def is_cl(v: SSAValue) -> bool:
        src = source_value(v, sends)
        return has_format(static_shape_of(src)) and src.owner in cl

    node_view = _NodeViews(module, store)
    changed = True
    while changed:
        changed = False
        for o in ops:
            if o in cl:
                continue
            if _is_anchor(o, node_view) or (
                any(map(is_cl, _activations(o))) and _is_transparent(o, node_view)
            ):
                cl.add(o)
                changed = True
    if mode == "auto":
        ret = fn.body.block.last_op
        outputs = list(ret.operands) if isinstance(ret, func.ReturnOp) else []
        _drop_unprofitable(ops, outputs, cl, sends, prepacked)
    for o in cl:
        set_layout(o, CHANNELS_LAST)
    return len(cl)


def _drop_unprofitable(
    ops: list[OnnxOp],
    outputs: list[SSAValue],
    cl: set[OnnxOp],
    sends: dict[str, SSAValue],
    prepacked: bool,
) -> None:
    """Remove from ``cl`` every region whose estimated gain does not exceed its boundary
    conversions (``format=auto``); ``outputs``: the graph outputs (returned contiguous)."""
    regions = _Regions()
    for o in cl:
        regions.find(o)
    boundary: dict[Operation, dict[SSAValue, float]] = {}  # region root -> converted values
    entering: list[tuple[Operation, SSAValue]] = []
    leaving: list[tuple[Operation, SSAValue]] = []
    for o in ops:
        for v in _activations(o):
            src = source_value(v, sends)
            shape = static_shape_of(src)
            if not has_format(shape):
                continue
            producer = src.owner
            if o in cl and producer in cl:
                regions.union(o, producer)  # type: ignore[arg-type]
            elif o in cl:
                entering.append((o, src))
            elif producer in cl:
                leaving.append((producer, src))  # type: ignore[arg-type]
    for v in outputs:
        src = source_value(v, sends)
        if has_format(static_shape_of(src)) and src.owner in cl:
            leaving.append((src.owner, src))  # type: ignore[arg-type]
    for end_op, v in entering + leaving:
        shape = static_shape_of(v)
        assert shape is not None
        boundary.setdefault(regions.find(end_op), {})[v] = conversion_cost_us(shape)
    gain: dict[Operation, float] = {}
    for o in cl:
        root = regions.find(o)
        gain[root] = gain.get(root, 0.0) + _gain_us(o, prepacked)
    for root, g in gain.items():
        cost = sum(boundary.get(root, {}).values())
        if g <= cost:
            cl.difference_update({o for o in list(cl) if regions.find(o) is root})


def _gain_us(op: OnnxOp, prepacked: bool) -> float:
    """Estimated µs ``op`` saves in channels-last (see the module docstring)."""
    if op.op_type == "Conv":
        if not has_format(static_shape_of(op.operands[0])):
            return 0.0  # a 1x1 map (or one channel): the same tensor in both formats
        packed = prepacked and packable_conv(op)
        return analytic_cost_us(op) * (
            1.0 - 1.0 / (PREPACKED_CONV_SPEEDUP if packed else CONV_SPEEDUP)
        )
    if op.has_trait(LayoutAnchor):
        x = static_shape_of(op.operands[0])
        if not has_format(static_shape_of(op.results[0])):
            return 0.0  # a pooling to a 1x1 map: a reduction, as fast in both formats
        if x is None or math.prod(x) < THROUGH_CL_MIN_ELEMENTS:
            return 0.0  # contiguous, the lowering computes it in place: same speed
        shapes = [x, static_shape_of(op.results[0])]
        return sum(conversion_cost_us(s) for s in shapes if has_format(s))
    return 0.0


@dataclass(frozen=True)
class AssignLayout(TypedOptions):
    """See the module docstring."""

    name = "assign-layout"

    format: LayoutMode = "auto"
    prepacked: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        assign_layout(op, self.format, module_store(ctx, op), self.prepacked)
