"""``--combine-parallel-convs``: run the 1x1 convolutions that read the same input with the same
geometry as one convolution, and split its result.

What it does
    1x1 convolutions that read the same activation ``x``, each with a constant kernel and the
    same strides, pads, dilations and one group, are one convolution with their kernels
    (and biases; a missing bias is zeros) concatenated along the output channels, followed by an
    ``onnx.Split`` along the channel axis into the original results::

        %a = onnx.Conv(%x, %wa, %ba)            %ab = onnx.Conv(%x, %wab, %bab)  // [wa; wb]
        %b = onnx.Conv(%x, %wb)          ->     %a, %b = onnx.Split(%ab) {axis = 1}

    Where each of them is read only by a ``Relu``, the Relu runs once, on the combined result,
    before the Split (so that ``--prepack-conv`` fuses it into the convolution); convolutions
    with and without a Relu after them are combined separately. The inception models read one
    input with three or four 1x1 convolutions per block (the 1x1 branch and the reductions
    before the 3x3 and 5x5 ones): 18 of light_inception_v2's 69 convolutions and 18 of
    light_inception_v1's 57 go.

    Why: each convolution call has a fixed cost besides its arithmetic (about 30 µs per prepacked
    oneDNN call on this machine, 70-80 µs in a model, see ``docs/benchmarks.md``); one wider
    convolution pays it once and keeps the matrix multiply's wider output dimension busy. The
    Split's parts are views: a channels-last convolution that reads one copies it into a
    channels-last tensor first (:func:`ramiel.runtime.ops.conv2d_prepacked`), the other readers
    (``torch.cat``, element-wise ops, pooling) read the view. The combined convolution is one
    task where there were several: the clustering can no longer put the branches' first
    convolutions on different cores (the ops after the Split still can). That is why larger
    kernels stay apart: two 3x3 convolutions that start two branches are the heavy work the
    clustering puts on two cores (a fork-join of two such branches, compiled for 2 clusters,
    became one cluster when they were combined), while the 1x1 reductions of an inception block
    are cheap next to the convolutions after them, which stay parallel. ``ramiel compile
    --trainable`` leaves the pass out: the combined kernel and bias are new Parameters (a
    convolution without a bias would train its zeros; a kernel two convolutions share would no
    longer be tied).

When (every condition, else the convolutions stay as they are)
    * the convolutions are in one block and read the same value as their input ``X``;
    * each has a constant kernel (an ``onnx.Constant``: a weight) and a constant bias or none,
      float, all of one element type;
    * each has a 1x1 kernel, ``group = 1``, ``auto_pad = NOTSET`` (explicit pads), and the
      same ``strides``, ``pads`` and ``dilations`` (defaults filled in), and a static 4-D
      result of one type but the channel count.

Options
    None.

Measured (``python bench/rewrites.py light_inception_v2 light_inception_v1 ramiel_inception
--passes combine-parallel-convs [--threads 2]``, 2026-12-05, AMD EPYC Zen 4, load about 1): the
sequential module 0-1.5 % faster at 1 thread, 1-3.4 % at 2 (ramiel_inception a tie); one
combined convolution alone 8-21 % faster than its parts. docs/benchmarks.md, "Combined 1x1
convolutions, and where the per-convolution cost goes".

Source: TVM's ``CombineParallelConv2D`` (Relay ``transform.CombineParallelConv2D``, which also
combines the element-wise ops after the convolutions and splits with ``strided_slice``), and
TensorRT's horizontal fusion of layers that share an input; ONNX Conv and Split semantics from
https://onnx.ai/onnx/operators/onnx__Conv.html and onnx__Split.html.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np
from onnx.defs import OpSchema
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, NoneType, TensorType
from xdsl.ir import Attribute, Block, SSAValue
from xdsl.passes import ModulePass

from ramiel.attrs import NODE_NAME_ATTR, set_str
from ramiel.context import module_store
from ramiel.dialects.onnx import OnnxOp, attr_from_python, opset_of, static_shape
from ramiel.rewrite import ConstantMaker, constant_array, create_op, erase_dead
from ramiel.weights import WeightStore

__all__ = ["CombineParallelConvs", "combine_parallel_convs"]


@dataclass
class _Conv:
    """A convolution that may be combined: its op, kernel, bias (or None) and the Relu that
    alone reads it (or None)."""

    op: OnnxOp
    weight: np.ndarray
    bias: np.ndarray | None
    relu: OnnxOp | None


def _geometry(op: OnnxOp, kernel: tuple[int, ...]) -> tuple[object, ...] | None:
    """The Conv's geometry with ONNX's defaults filled in, or None where it is not combinable
    (grouped, ``auto_pad`` other than NOTSET)."""
    if int(op.attr("group", 1)) != 1:
        return None
    auto_pad = op.attr("auto_pad", "NOTSET")
    if (auto_pad.decode() if isinstance(auto_pad, bytes) else auto_pad) != "NOTSET":
        return None
    k = len(kernel)
    shape = tuple(int(d) for d in op.attr("kernel_shape", kernel))
    if shape != kernel:
        return None
    strides = tuple(int(d) for d in op.attr("strides", [1] * k))
    dilations = tuple(int(d) for d in op.attr("dilations", [1] * k))
    pads = tuple(int(d) for d in op.attr("pads", [0] * (2 * k)))
    if len(strides) != k or len(dilations) != k or len(pads) != 2 * k:
        return None
    return (kernel, strides, pads, dilations)


def _sole_relu(op: OnnxOp) -> OnnxOp | None:
    """The ``Relu`` in ``op``'s block that alone reads ``op``'s result, or None."""
    uses = list(op.results[0].uses)
    if len(uses) != 1:
        return None
    user = uses[0].operation
    if isinstance(user, OnnxOp) and user.op_type == "Relu" and user.parent is op.parent:
        return user
    return None


def _candidate(op: OnnxOp, store: WeightStore | None) -> tuple[tuple[object, ...], _Conv] | None:
    """``op`` as a combinable Conv and the key of the convolutions it may join, or None."""
    if op.op_type != "Conv" or len(op.results) != 1 or not 2 <= len(op.operands) <= 3:
        return None
    out = op.results[0].type
    shape = static_shape(out)
    if not isinstance(out, TensorType) or shape is None or len(shape) != 4:
        return None
    weight = constant_array(op.operands[1], store)
    if weight is None or weight.ndim != 4 or weight.dtype.kind != "f":
        return None
    bias = None
    if len(op.operands) == 3 and not isinstance(op.operands[2].type, NoneType):
        bias = constant_array(op.operands[2], store)
        if bias is None or bias.shape != (weight.shape[0],) or bias.dtype != weight.dtype:
            return None
    geometry = _geometry(op, tuple(int(d) for d in weight.shape[2:]))
    if geometry is None or shape[1] != weight.shape[0] or weight.shape[2:] != (1, 1):
        return None
    relu = _sole_relu(op)
    key = (
        geometry,
        weight.shape[1],
        weight.dtype.str,
        out.element_type,
        (shape[0], *shape[2:]),
        relu is not None,
    )
    return key, _Conv(op, weight, bias, relu)


def _combine(x: SSAValue, convs: list[_Conv], consts: ConstantMaker) -> None:
    """Replace ``convs`` (in block order, all reading ``x``) by one Conv (and Relu) and a
    Split."""
    first = convs[0].op
    block = first.parent
    assert isinstance(block, Block)
    sizes = [c.weight.shape[0] for c in convs]
    weight = np.concatenate([c.weight for c in convs])
    base = x.name_hint or first.results[0].name_hint or "conv"
    w_val = consts.make(weight, f"{base}_combined_W", first)
    operands = [x, w_val]
    if any(c.bias is not None for c in convs):
        parts = [
            c.bias if c.bias is not None else np.zeros(n, weight.dtype)
            for c, n in zip(convs, sizes, strict=True)
        ]
        operands.append(consts.make(np.concatenate(parts), f"{base}_combined_B", first))
    shape = list(static_shape(first.results[0].type) or ())
    shape[1] = sum(sizes)
    out_t = TensorType(first.results[0].type.element_type, shape)  # type: ignore[attr-defined]
    attrs = dict(first.properties)
    attrs["kernel_shape"] = attr_from_python(OpSchema.AttrType.INTS, list(weight.shape[2:]))
    conv = create_op("Conv", operands, [out_t], attrs, first)
    set_str(conv, NODE_NAME_ATTR, _joined_name([c.op.node_name or c.op.op_type for c in convs]))
    new_ops: list[OnnxOp] = [conv]
    combined = conv.results[0]
    combined.name_hint = f"{base}_convs"
    ends = [c.relu if c.relu is not None else c.op for c in convs]
    if convs[0].relu is not None:
        relu = create_op("Relu", [combined], [out_t], {}, convs[0].relu)
        new_ops.append(relu)
        combined = relu.results[0]
        combined.name_hint = f"{base}_convs_relu"
    split_types = [e.results[0].type for e in ends]
    if opset_of(first) >= 13:
        sizes_val = consts.make(np.asarray(sizes, np.int64), f"{base}_split_sizes", first)
        split = create_op("Split", [combined, sizes_val], split_types, {"axis": _axis1()}, first)
    else:
        attrs = {"axis": _axis1(), "split": attr_from_python(OpSchema.AttrType.INTS, sizes)}
        split = create_op("Split", [combined], split_types, attrs, first)
    set_str(split, NODE_NAME_ATTR, conv.node_name)
    new_ops.append(split)
    for op in new_ops:
        block.insert_op_before(op, first)
    for end, res in zip(ends, split.results, strict=True):
        res.name_hint = end.results[0].name_hint
        end.results[0].replace_all_uses_with(res)
    erase_dead([*ends, *(c.op for c in convs if c.relu is not None)])


MAX_NAME_CHARS = 120
"""The combined convolution's node name joins its parts' (``a + b + c``, the generated code's
comment) up to this length; longer, it is the first part's and a count (``a + 2 more``)."""


def _joined_name(names: list[str]) -> str:
    joined = " + ".join(names)
    return joined if len(joined) <= MAX_NAME_CHARS else f"{names[0]} + {len(names) - 1} more"


def _axis1() -> Attribute:
    return attr_from_python(OpSchema.AttrType.INT, 1)


def combine_parallel_convs(module: ModuleOp, store: WeightStore | None) -> int:
    """Run the pass on ``module`` (``store``: its weights, ``None`` if it names no weights
    file); returns the number of convolutions removed (each group of k becomes one: k - 1)."""
    groups: dict[tuple[int, int, tuple[object, ...]], list[_Conv]] = defaultdict(list)
    values: dict[int, SSAValue] = {}
    for op in module.walk():
        if not isinstance(op, OnnxOp) or op.op_type != "Conv" or op.parent is None:
            continue
        found = _candidate(op, store)
        if found is None:
            continue
        key, conv = found
        x = op.operands[0]
        values[id(x)] = x
        groups[(id(x), id(op.parent), key)].append(conv)
    consts = ConstantMaker(module, store)
    n = 0
    for (xid, _, _), convs in groups.items():
        if len(convs) < 2:
            continue
        _combine(values[xid], convs, consts)
        n += len(convs) - 1
    return n


@dataclass(frozen=True)
class CombineParallelConvs(ModulePass):
    """Combine the 1x1 convolutions of one input and one geometry (see the module doc)."""

    name = "combine-parallel-convs"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        combine_parallel_convs(op, module_store(ctx, op))
