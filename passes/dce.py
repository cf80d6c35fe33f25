"""``--dce``: dead code elimination for Ramiel IR.

What it does
    1. Erases every operation without side effects whose results are all unused: ``onnx.*`` ops,
       ``onnx.NoValue`` and any other op with the ``Pure`` trait (or no memory effects). It
       iterates to a fixed point, so a chain that only fed a dead op disappears with it (the
       ``_SHAPE`` constants of folded ConstantOfShape weights, a whole unused branch). Ops with
       effects, terminators (``func.return``) and symbols (``func.func``) always stay alive, so
       the function's inputs and outputs never change. Region ops (``onnx.If``, ``onnx.Loop``,
       ``onnx.Scan``) are as pure as the ops of their regions: an unused one is erased whole,
       and unused ops inside a body are erased (the body's arguments and ``onnx.Yield`` stay).
    2. Drops the *unused optional outputs* of the ``onnx`` ops that stay alive, so that an output
       nobody reads does not have to be computed: Dropout's ``mask``, MaxPool's ``Indices``,
       BatchNormalization's training statistics. A trailing unused optional output is removed;
       an unused optional output followed by a used one becomes a ``none`` result (the IR form of
       ONNX's empty output name).

Options
    None.

Algorithm
    Liveness by backward propagation over each region (xDSL's
    :func:`xdsl.transforms.dead_code_elimination.region_dce`, which follows MLIR's
    ``WouldOpBeTriviallyDead``): an op is live if it may have effects or if a live op uses one of
    its results; everything else is erased. Then one sweep over the surviving ``onnx`` ops checks
    each unused result against the op's ONNX schema at the module's opset
    (``OpSchema.FormalParameterOption.Optional``) and rebuilds the op without it.

Example::

    %y, %mask = "onnx.Dropout"(%x) <{ratio = 5.0e-01 : f32}> : (...) -> (tensor<2xf32>, tensor<2xi1>)
    %unused = "onnx.Relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
    func.return %y : tensor<2xf32>

becomes ``%y = "onnx.Dropout"(%x) <{ratio = 5.0e-01 : f32}> : (...) -> tensor<2xf32>``.

Source: MLIR's ``-symbol-dce``/``-canonicalize`` dead-op removal; ONNX operator schemas for
optional outputs (https://onnx.ai/onnx/operators/).
"""

from __future__ import annotations

from dataclasses import dataclass

from onnx.defs import OpSchema
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, NoneType
from xdsl.ir import Attribute
from xdsl.passes import ModulePass
from xdsl.transforms.dead_code_elimination import region_dce

from ramiel.dialects.onnx import OnnxOp, opset_of, schema_info

__all__ = ["DeadCodeElimination", "drop_unused_optional_outputs"]

_OPTIONAL = OpSchema.FormalParameterOption.Optional


def _droppable_outputs(op: OnnxOp, opset: int) -> list[bool]:
    """Per result: is it an unused (or ``none``) result that the schema calls optional?"""
    info = schema_info(op.op_type, opset)
    if info is None:
        return [False] * len(op.results)
    return [
        i < len(info.outputs)
        and info.outputs[i][1] == _OPTIONAL
        and (r.first_use is None or isinstance(r.type, NoneType))
        for i, r in enumerate(op.results)
    ]


def drop_unused_optional_outputs(op: OnnxOp, opset: int) -> OnnxOp | None:
    """Rebuild ``op`` without its unused optional outputs; returns the new op, or ``None``.

    Trailing unused optional outputs are removed, earlier ones become ``none`` results. ``op``
    must be in a block; it is replaced and erased. An op whose results are all unused is left
    alone (it is dead: :func:`region_dce` erases it).
    """
    drop = _droppable_outputs(op, opset)
    keep = len(drop)
    while keep > 0 and drop[keep - 1]:
        keep -= 1
    if keep == 0:
        return None
    if keep == len(drop) and all(
        isinstance(r.type, NoneType) for r, d in zip(op.results, drop, strict=True) if d
    ):
        return None
    types: list[Attribute] = [
        NoneType() if drop[i] else r.type for i, r in enumerate(op.results[:keep])
    ]
    new = type(op).create(
        operands=list(op.operands),
        result_types=types,
        properties=dict(op.properties),
        attributes=dict(op.attributes),
    )
    new.location = op.location
    block = op.parent
    assert block is not None
    block.insert_op_before(new, op)
    for old, res in zip(op.results[:keep], new.results, strict=True):
        res.name_hint = old.name_hint
        if not isinstance(res.type, NoneType):
            old.replace_all_uses_with(res)
    block.erase_op(op)
    return new


@dataclass(frozen=True)
class DeadCodeElimination(ModulePass):
    """Erase unused side-effect-free ops and unused optional ONNX outputs (see module doc)."""

    name = "dce"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        region_dce(op.body)
        for o in list(op.walk()):
            if isinstance(o, OnnxOp) and len(o.results) > 1:
                drop_unused_optional_outputs(o, opset_of(o))
