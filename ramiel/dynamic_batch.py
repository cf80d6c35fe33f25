"""The batch dimension of the sequential module: any size where the ONNX semantics allow.

Ramiel compiles for static shapes: every lowering rule decides from them, and shape computations
(``Shape -> Gather -> Concat -> Reshape`` chains) are folded into constants. The parallel program
stays that way (its channel buffers are sized once). The sequential module instead takes any
batch size when the graph says the batch is free:

* **Which inputs.** The *batch inputs* are the graph inputs whose dimension 0 is symbolic with the
  same ``dim_param`` as the first such input (``dynamic_batch=None``, the default), or every graph
  input of rank >= 1 (``dynamic_batch=True``, ``ramiel compile --dynamic-batch``: a model exported
  with a fixed batch of 1); ``False`` turns this off. The parallel program is compiled for the
  batch that ``input_shapes`` binds, else the model's own fixed value, else 1 (a note says so).
* **How** (:func:`generalize_batch`). The sequential module is lowered twice more, with the batch
  bound to :data:`SAMPLE_BATCHES` (17 and 1018: an odd and an even size; the second one
  higher where the model compares the batch with a larger constant), with the optimisations
  of the static program that hold at any batch size (its memory formats, :func:`copy_layout`;
  ``--prepack-conv`` and ``--prepack-matmul``, whose helpers pack a weight once per input shape;
  ``--inplace``), and the
  two ``torchpy`` functions are compared statement by statement. They must be the same program
  (same calls, operands, weights and keywords) whose literals differ only in integers ``n_a,
  n_b`` with ``n_a / B_a == n_b / B_b == k`` (an integer): each such integer is a multiple of the
  batch and
  becomes ``k * batch``, where ``batch = x.shape[0]`` is the first statement of ``forward``. So a
  Reshape's folded target ``(17, 1000)`` becomes ``(batch, 1000)``, an Expand's ``(17, 4, 64)``
  ``(batch, 4, 64)``, a folded shape tensor ``torch.tensor([17, 64])`` ``torch.tensor([batch, 64])``.
  A constant folded from an ``Expand`` to the batch (BERT's token type ids, a splat of shape
  ``(17, 32)``), whose rows are all one row in both samples, becomes that row (the batch-1
  program's constant, or a new one where that program folded it further) read as
  ``row.expand(batch, 32)`` (along whichever axis is the batch: a GRU's initial state
  ``(layers, batch, hidden)``). Statements inside ``if``/``for``/``while`` blocks are compared
  the same way, with the blocks' structure. The sequential module can read a constant the batch-1 program does
  not (ViT's class token, which the batch-1 program folded into the result of its ``Expand``):
  an inline one, or a model tensor the weights file holds with the same data; the parallel and
  the sequential program then read different tensors of the one weights file, and each
  ``from_safetensors`` takes its own.
  This is a check, not a guess: a literal that is not linear in the batch (``B + 1``, ``B // 2``),
  a statement, operand or weight that differs, or a sample that does not compile (a Reshape to a
  constant shape with 1 in the batch position fails ONNX shape inference at batch 17) keeps the
  static module, with a compile-time note naming the node, and the module then checks the batch
  size with one clear error (``torch._assert``, which ``torch.fx`` and ``torch.export`` keep).
  A value that saturates at a constant (a Slice end on the batch axis, ``min(B, 256)``,
  ``if B > 200``) would look like ``B`` if both samples were below it: the second sample is
  raised above every constant operand of a Slice, Pad, Clip, Min, Max, comparison or Range
  (:func:`sample_batches`), so such a value differs between the samples. A comparison that no
  two samples decide, of a value computed from a shape with a constant (``B == 2``, ``if B >
  8``, ``B % 3 == 0``: the TorchScript exporter writes them where the model branches on the
  batch size), keeps the static module (:func:`undecided_comparisons`). Known blind spot: a
  threshold computed from other values than such constants.

The ONNX graph outputs are not declared in terms of the batch; onnx shape inference recomputes
them at each sample.
"""

from __future__ import annotations

import ast
import contextlib
import linecache
import os
import re
import tempfile
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
import torch
from xdsl.context import Context
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    IntegerAttr,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Block, Operation, SSAValue
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import VerifyException

from ramiel.attrs import NODE_NAME_ATTR, get_str, set_str
from ramiel.context import module_store
from ramiel.dialects import torchpy as tp
from ramiel.dialects.onnx import OnnxOp
from ramiel.dtypes import numpy_dtype_of
from ramiel.errors import RamielError
from ramiel.importer import ImportOptions, constant_node_value, import_onnx
from ramiel.layout import CONTIGUOUS, layout_of, set_layout
from ramiel.lowering.to_torchpy import rebuild_call
from ramiel.passes.lower_to_torchpy import LowerToTorchpy
from ramiel.pipeline import clean_up_passes, late_passes, run_passes
from ramiel.printer import print_python
from ramiel.runtime.module import generated_class
from ramiel.runtime.program import import_from_path
from ramiel.weights import INLINE_LIMIT, constant_value, dense_from_numpy

SAMPLE_BATCHES = (17, 1018)
"""The two batch sizes the sequential module is compared at: an odd one and an even one above
1000, neither a size models are built around, so that a value of the batch's parity (``B % 2``)
or of a threshold anywhere between them, however the model computes it (``x[:150]``,
``x[-150:]``, ``min(B, 500)``, ``B > 300.5``, ``(B + 150 - |B - 150|) / 2``), differs between
them. With 17 and 19, both odd and below 32, such values had been frozen as constants; with 17
and 130, thresholds above 130 had (both fresh-user checks). :func:`sample_batches` raises the
second one above larger constants the model could hold the batch against."""

#: ONNX ops whose result saturates where the batch passes a constant operand (a Slice end clamps
#: to the dimension, ``Min(B, 150)``, ``B > 200``): -> the operand positions read (``None``: all)
_SATURATING: dict[str, tuple[int, ...] | None] = {
    "Slice": (1, 2),
    "Pad": (1,),
    "Clip": (1, 2),
    "Min": None,
    "Max": None,
    "Less": None,
    "LessOrEqual": None,
    "Greater": None,
    "GreaterOrEqual": None,
    "Equal": None,
    "Range": None,
}

#: of :data:`_SATURATING`, the ops that work on values (not on a tensor's shape, as Slice and Pad
#: do): their constants count only where another operand is computed from a shape
_ON_VALUES = frozenset(_SATURATING) - {"Slice", "Pad"}

#: ops that pass a constant's values on unchanged (the exporters' ``Unsqueeze(Constant)`` and
#: ``Concat`` before a Slice's ends)
_PASS_THROUGH = frozenset(
    {"Cast", "Unsqueeze", "Squeeze", "Reshape", "Identity", "Concat", "Flatten"}
)

SATURATION_LIMIT = 1 << 16
"""The largest second sample batch: a constant from here on (below :data:`SENTINEL`) that the
model could hold the batch against keeps the static module (a note names it)."""

SENTINEL = 2**31 - 1
"""Constants from here on are "no limit", not a threshold (``x[:2**31 - 1]``, ``INT64_MAX``: the
exporters' "to the end"; ``3.4e38`` in a Clip)."""


def _numbers(values: np.ndarray) -> list[float]:
    """The values of a small numeric constant, finite and below :data:`SENTINEL` in magnitude;
    none for a constant of more than 64 values or of no numeric type."""
    if values.size > 64 or not np.issubdtype(values.dtype, np.number):
        return []
    flat = values.astype(np.float64).reshape(-1)
    return [float(v) for v in flat if np.isfinite(v) and abs(v) < SENTINEL]


def _magnitude(v: float) -> int:
    """A constant's threshold: ``-150`` and ``150.0`` are both 150; a fraction rounds up."""
    return int(np.ceil(abs(v)))


@dataclass
class _Graphs:
    """The nodes of a model, its control-flow bodies' included (graph order: producers first),
    the values of its small constants (:func:`_numbers`), and the values computed from a
    ``Shape`` or ``Size``."""

    nodes: list[onnx.NodeProto]
    consts: dict[str, list[float]]
    producer: dict[str, onnx.NodeProto]
    shaped: set[str]

    @classmethod
    def of(cls, model: onnx.ModelProto) -> _Graphs:
        graphs = [model.graph]
        nodes: list[onnx.NodeProto] = []
        consts: dict[str, list[float]] = {}
        while graphs:
            g = graphs.pop(0)
            for init in g.initializer:
                if np.prod(init.dims, dtype=np.int64) <= 64:
                    with contextlib.suppress(Exception):  # a type numpy cannot hold: none
                        consts[init.name] = _numbers(onnx.numpy_helper.to_array(init))
            for node in g.node:
                nodes.append(node)
                for attr in node.attribute:  # If, Loop and Scan bodies
                    if attr.type == onnx.AttributeProto.GRAPH:
                        graphs.append(attr.g)
                    graphs.extend(attr.graphs)
                if node.op_type == "Constant" and node.attribute:
                    with contextlib.suppress(Exception):  # a string or sparse constant: none
                        consts[node.output[0]] = _numbers(constant_node_value(node))
        producer = {out: node for node in nodes for out in node.output}
        shaped = {o for n in nodes if n.op_type in ("Shape", "Size") for o in n.output}
        for node in nodes:
            if any(i in shaped for i in node.input if i):
                shaped.update(o for o in node.output if o)
        return cls(nodes, consts, producer, shaped)

    def constant(self, name: str, depth: int = 0) -> list[float]:
        """The values of the constant ``name`` is, through :data:`_PASS_THROUGH` ops (``[]``:
        not a constant this can read)."""
        if name in self.consts:
            return self.consts[name]
        node = self.producer.get(name)
        if node is None or node.op_type not in _PASS_THROUGH or depth >= 8:
            return []
        found: list[float] = []
        for i in node.input[: 1 if node.op_type != "Concat" else None]:
            found += self.constant(i, depth + 1)
        return found


def saturation_constants(model: onnx.ModelProto | _Graphs) -> dict[int, str]:
    """The constants of ``model`` that an op could compare with the batch size -> the node
    that reads each (first seen): the constant operands (through :data:`_PASS_THROUGH` ops,
    as magnitudes: ``x[-150:]`` holds the batch against 150) of Slice and Pad and their
    attribute forms (Slice-1's ``starts``/``ends``, Pad-2's ``pads``), and of the other
    :data:`_SATURATING` ops where another operand is computed from a ``Shape`` or ``Size``
    (a ReLU6's Clip is no threshold of the batch), in the main graph and in control-flow
    bodies, from 2 below :data:`SENTINEL`."""
    g = model if isinstance(model, _Graphs) else _Graphs.of(model)
    found: dict[int, str] = {}
    for node in g.nodes:
        if node.op_type not in _SATURATING:
            continue
        if node.op_type in _ON_VALUES and not any(i in g.shaped for i in node.input if i):
            continue
        reader = node.name or node.op_type
        positions = _SATURATING[node.op_type]
        for pos, name in enumerate(node.input):
            if name and (positions is None or pos in positions):
                for v in g.constant(name):
                    found.setdefault(_magnitude(v), reader)
        for attr in node.attribute:
            if attr.name in ("starts", "ends", "pads"):
                for v in onnx.helper.get_attribute_value(attr):
                    if abs(v) < SENTINEL:
                        found.setdefault(abs(v), reader)
    return {v: found[v] for v in sorted(found) if v >= 2}


#: comparisons of a value with a constant: the samples tell ``B > 300`` apart (one on each
#: side, :func:`sample_batches`), not ``B > 1``, ``B == 2`` or ``B % 3 == 0``
_COMPARISONS = frozenset({"Less", "LessOrEqual", "Greater", "GreaterOrEqual", "Equal"})


def undecided_comparisons(model: onnx.ModelProto | _Graphs) -> tuple[str, str, float] | None:
    """The first op of ``model`` (its control-flow bodies' included) that holds a value
    computed from a ``Shape`` or ``Size`` against a constant the sample batch sizes cannot
    decide, as ``(node name, op type, constant)``; ``None`` where there is none.

    Such an op: an ``Equal`` with a constant from 1 on (``B == 2``: no two samples are equal
    to it, whatever they are), another comparison with a constant from 1 to the first sample
    (``B > 1``, ``B <= 8``: true, or false, at both samples and at the bound batch of 1 or
    more), a ``Mod`` by a constant from 2 on (``B % 3 == 0``: false at 17 and at 1018).
    Constants below 1 decide nothing: a batch size is at least 1 (TorchScript's
    ``Equal(shape, -1)`` before an ``Expand`` stays). A model that branches on the batch size
    this way (``if x.shape[0] > 1:``, exported to an ``If``) had been given the branch the
    samples took, at every batch size (a fresh-user check: wrong results at batch 1, 2, 3)."""
    g = model if isinstance(model, _Graphs) else _Graphs.of(model)
    first = SAMPLE_BATCHES[0]
    for node in g.nodes:
        op = node.op_type
        if op not in _COMPARISONS and op != "Mod":
            continue
        if not any(i in g.shaped for i in node.input if i):
            continue
        constants = [v for i in node.input if i and i not in g.shaped for v in g.constant(i)]
        for v in constants:
            if op == "Mod":
                undecided = abs(v) >= 2
            elif op == "Equal":
                undecided = v >= 1
            else:
                undecided = 1 <= v <= first
            if undecided:
                return node.name or op, op, v
    return None


def sample_batches(model: onnx.ModelProto) -> tuple[int, int]:
    """The two batch sizes the sequential module of ``model`` is compared at:
    :data:`SAMPLE_BATCHES`, the second one raised above the largest of
    :func:`saturation_constants` (to an even size), so that a threshold anywhere between the
    two samples tells them apart (``x[:1500]`` on the batch axis gives 17 and 1500 rows at 17
    and 1502, which is no multiple of the batch).

    Raises :class:`_NotPolymorphic` for a constant from :data:`SATURATION_LIMIT` on (no sample
    is compiled that large), and for a comparison no two samples decide
    (:func:`undecided_comparisons`)."""
    first, second = SAMPLE_BATCHES
    graphs = _Graphs.of(model)
    comparison = undecided_comparisons(graphs)
    if comparison is not None:
        node, op, v = comparison
        raise _NotPolymorphic(
            f"node '{ascii(node)[1:-1]}' ({op}) holds a value computed from the input shapes "
            f"against {v:g}, which no two sample batch sizes decide for every batch size "
            f"(a branch on the batch size, such as 'if x.shape[0] > 1')"
        )
    found = saturation_constants(graphs)
    top = max(found, default=0)
    if top >= SATURATION_LIMIT:
        raise _NotPolymorphic(
            f"node '{ascii(found[top])[1:-1]}' could hold the batch size against {top}, beyond "
            f"the batch sizes the check compiles (up to {SATURATION_LIMIT})"
        )
    if top >= second:
        second = top + 2 - top % 2
    return first, second


BATCH_NAME = "batch"
"""The name hint of ``x.shape[0]`` in the generated ``forward``."""


@dataclass
class BatchPlan:
    """Which graph inputs carry the batch, and how the static program is bound.

    ``inputs``: ONNX names of the batch inputs (empty: static shapes); ``bound``: the batch the
    parallel program is compiled for; ``bound_shapes``: the ``input_shapes`` to import with;
    ``model``: the model to import (a copy with dimension 0 bound where ``bound_shapes`` cannot
    say it: an input with other unbound dimensions, which the importer then names), or
    ``None`` for the original; ``free``: whether the ONNX model fixes dimension 0
    (``dynamic_batch=True`` frees it for the samples); ``dim_params``: batch input -> the
    ``dim_param`` of its dimension 0 in the model (``""`` where the model fixes it); ``notes``:
    what a user should know.
    """

    inputs: tuple[str, ...] = ()
    bound: int = 1
    dim_params: dict[str, str] = field(default_factory=dict)
    bound_shapes: dict[str, tuple[int, ...]] | None = None
    model: onnx.ModelProto | None = None
    free: bool = False
    notes: list[str] = field(default_factory=list)


@dataclass
class Generalized:
    """The sequential ``torchpy`` module to print: ``dynamic`` lists the inputs whose dimension 0
    it takes at any size (empty: the static module, checking the batch size); ``notes``: why."""

    module: ModuleOp
    dynamic: tuple[str, ...] = ()
    notes: list[str] = field(default_factory=list)


def _graph_inputs(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    init = {t.name for t in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in init]


def _dims(vi: onnx.ValueInfoProto) -> list[onnx.TensorShapeProto.Dimension] | None:
    t = vi.type
    if not t.HasField("tensor_type") or not t.tensor_type.HasField("shape"):
        return None
    return list(t.tensor_type.shape.dim)


def batch_inputs(
    model: onnx.ModelProto,
    input_shapes: Mapping[str, Sequence[int]] | None,
    dynamic_batch: bool | None,
    samples: int = 1,
) -> BatchPlan:
    """The :class:`BatchPlan` of ``model`` (see the module docstring).

    ``samples``: the hypercluster batch (``--batch``); above 1 the program has one input per
    sample and keeps static shapes.

    Raises :class:`~ramiel.errors.RamielError` when ``dynamic_batch=True`` finds no input with a
    dimension 0, or the batch inputs are bound to different sizes.
    """
    shapes = {k: tuple(int(d) for d in v) for k, v in (input_shapes or {}).items()}
    plan = BatchPlan(bound_shapes=dict(shapes) or None)
    if dynamic_batch is False:
        return plan
    inputs = _graph_inputs(model)
    chosen: list[tuple[onnx.ValueInfoProto, list[Any]]] = []
    symbol = None
    for vi in inputs:
        dims = _dims(vi)
        if not dims:
            continue
        d0 = dims[0]
        if d0.HasField("dim_param") and d0.dim_param:
            if symbol is None:
                symbol = d0.dim_param
            if d0.dim_param == symbol:
                chosen.append((vi, dims))
        elif dynamic_batch and d0.HasField("dim_value") and d0.dim_value > 0:
            chosen.append((vi, dims))
            plan.free = True
            named = [(i, d.dim_param) for i, d in enumerate(dims) if i and d.dim_param]
            if named:  # (an LSTM's (seq, batch, features) input: helper-26)
                i, sym = named[0]
                plan.notes.append(
                    f"--dynamic-batch frees dimension 0 of input '{vi.name}' (size "
                    f"{d0.dim_value} in the model), whose dimension {i} is the symbolic "
                    f"'{sym}': if that is the batch, compile without --dynamic-batch and bind "
                    "it with --input-shape"
                )
    if not chosen:
        if dynamic_batch:
            raise RamielError(
                "--dynamic-batch: no graph input has a dimension 0 "
                f"(inputs: {', '.join(repr(i.name) for i in inputs) or 'none'})"
            )
        return plan
    given = {vi.name: shapes[vi.name][0] for vi, _ in chosen if shapes.get(vi.name)}
    fixed = {vi.name: d[0].dim_value for vi, d in chosen if d[0].HasField("dim_value")}
    bound_by = given or fixed
    if len(set(bound_by.values())) > 1:
        listed = ", ".join(f"'{k}' = {v}" for k, v in bound_by.items())
        raise RamielError(f"the batch inputs disagree on dimension 0 ({listed})")
    if bound_by:
        plan.bound = next(iter(bound_by.values()))
    elif samples > 1:
        plan.notes.append(
            f"batch dimension '{symbol}' bound to 1 in each of the {samples} samples "
            "(--input-shape binds another size)"
        )
    else:
        plan.notes.append(
            f"batch dimension '{symbol}' bound to 1 for the parallel program (--input-shape "
            "binds another size); the sequential module takes any batch size where it can"
        )
    bound_shapes = dict(shapes)
    partial = []
    for vi, dims in chosen:
        if vi.name in bound_shapes:
            continue
        rest = dims[1:]
        if all(d.HasField("dim_value") for d in rest):
            bound_shapes[vi.name] = (plan.bound, *(d.dim_value for d in rest))
        else:
            partial.append(vi.name)
    plan.bound_shapes = bound_shapes or None
    if partial:  # bind dimension 0 in a copy: the importer names the other unbound ones
        plan.model = onnx.ModelProto()
        plan.model.CopyFrom(model)
        for vi in plan.model.graph.input:
            if vi.name in partial:
                d0 = vi.type.tensor_type.shape.dim[0]
                d0.Clear()
                d0.dim_value = plan.bound
    if samples > 1:  # bound as above (a dynamic batch is 1 per sample), never generalized
        plan.notes.append(
            f"the sequential module of a {samples}-sample program (--batch {samples}) keeps its "
            "static shapes"
        )
        return plan
    plan.inputs = tuple(vi.name for vi, _ in chosen)
    plan.dim_params = {vi.name: dims[0].dim_param for vi, dims in chosen}
    return plan


def free_batch_dims(model: onnx.ModelProto, names: Sequence[str]) -> onnx.ModelProto:
    """A copy of ``model`` whose graph inputs ``names`` and graph outputs have a symbolic
    dimension 0, and no ``value_info`` (shape inference recomputes it)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    for vi in [i for i in g.input if i.name in names] + list(g.output):
        dims = _dims(vi)
        if dims:
            dims[0].Clear()
            dims[0].dim_param = BATCH_NAME
    del g.value_info[:]
    return m


def copy_layout(decided: ModuleOp, module: ModuleOp) -> int:
    """Give every ``onnx`` op of ``module`` the memory format (``ramiel.layout``) that
    ``--assign-layout`` gave the op of the same ONNX node in ``decided`` (ops of a node name
    that ``decided`` has in several formats, or not at all, stay contiguous); returns the
    number of ops made channels-last.

    The samples take the static program's formats instead of deciding their own: with
    ``format=auto`` the cost model weighs each region's gain against its conversions at the
    sample's batch size, and two samples whose formats differed would not be one program."""
    formats: dict[str, set[str]] = {}
    for op in decided.walk():
        if isinstance(op, OnnxOp) and op.node_name:
            formats.setdefault(op.node_name, set()).add(layout_of(op))
    n = 0
    for op in module.walk():
        if not isinstance(op, OnnxOp):
            continue
        found = formats.get(op.node_name, set()) if op.node_name else set()
        fmt = next(iter(found)) if len(found) == 1 else CONTIGUOUS
        set_layout(op, fmt)
        n += fmt != CONTIGUOUS
    return n


def _sample_module(
    model: onnx.ModelProto,
    plan: BatchPlan,
    batch: int,
    options: Any,
    work: str,
    ctx: Context,
    decided: ModuleOp | None = None,
) -> ModuleOp:
    """The sequential ``torchpy`` module of ``model`` at batch size ``batch``: the compiler's
    clean-up stage; the memory formats of ``decided`` (the static program before lowering,
    :func:`copy_layout`); the late rewrites (``--prepack-conv``, ``--prepack-matmul``, ``--inplace``: without
    clusters, no tensor crosses a channel); then the sequential lowering. ``ctx``: the
    session's context (its weight stores hold the sample's scratch weights file)."""

    shapes = {
        k: (batch, *v[1:]) if k in plan.inputs else v for k, v in (plan.bound_shapes or {}).items()
    }
    scratch = os.path.join(work, f"batch{batch}.safetensors")
    module = import_onnx(
        model,
        ImportOptions(
            input_shapes=shapes,
            weights_path=scratch,
            weights_ref=scratch,
            ort_optimize=options.ort_optimize,
        ),
    )
    run_passes(module, clean_up_passes(options.rewrites()), ctx)
    if decided is not None:
        copy_layout(decided, module)
    run_passes(module, [*late_passes(options.rewrites()), LowerToTorchpy(mode="sequential")], ctx)
    return module


class _NotPolymorphic(Exception):
    """The two samples differ in a way that is not a multiple of the batch (``args[0]``: why)."""


def _node(op: Operation) -> tuple[str, str | None]:
    """A statement's kind and the ONNX node it computes."""
    return op.name, get_str(op, NODE_NAME_ATTR)


def _where(op: Operation) -> str:
    name = get_str(op, NODE_NAME_ATTR)
    if name:
        return f"node {ascii(name)[1:-1]}"
    return f"statement {op.name}"


def _readers(weight: tp.WeightOp) -> str:
    """`` (read by node 'n1', 'n2')``: the ONNX nodes of the statements that read ``weight``
    (a folded constant is named after a node that no longer exists), or ''."""
    names = []
    for use in weight.result.uses:
        name = get_str(use.operation, NODE_NAME_ATTR)
        if name and name not in names:
            names.append(name)
    if not names:
        return ""
    shown = ", ".join(f"'{ascii(n)[1:-1]}'" for n in names[:3])
    more = f" and {len(names) - 3} more" if len(names) > 3 else ""
    return f" (read by node{'s' if len(names) > 1 else ''} {shown}{more})"


_PH = re.compile(r"\$(\d+)")
_PH_NAME = "_ramiel_operand_"


def _parse(text: str) -> ast.expr:
    src = _PH.sub(lambda m: f"{_PH_NAME}{m.group(1)}", text)
    return ast.parse(f"_[{src}]", mode="eval").body.slice  # type: ignore[attr-defined]


def _unparse(node: ast.expr, subscript: bool) -> str:
    text = ast.unparse(node)
    if subscript and isinstance(node, ast.Tuple) and text.startswith("(") and text.endswith(")"):
        text = text[1:-1]
    return re.sub(rf"{_PH_NAME}(\d+)", lambda m: f"${m.group(1)}", text)


def _multiple(a: int, b: int, samples: tuple[int, int] = SAMPLE_BATCHES) -> int | None:
    """``k`` with ``a == k * B_a`` and ``b == k * B_b`` (``samples == (B_a, B_b)``), or ``None``."""
    ba, bb = samples
    if a % ba == 0 and b % bb == 0 and a // ba == b // bb:
        return a // ba
    return None


def _generalize_literal(
    a: str, b: str, batch_ref: str, samples: tuple[int, int] = SAMPLE_BATCHES
) -> str | None:
    """``a`` with each integer that is ``k`` times the batch (``b`` has the other sample's;
    ``samples``: the two batch sizes) replaced by ``k * <batch_ref>``; ``None`` when ``a == b``.

    Raises :class:`_NotPolymorphic` when they differ otherwise.
    """
    if a == b:
        return None
    try:
        ta, tb = _parse(a), _parse(b)
    except SyntaxError:
        raise _NotPolymorphic(f"literal {a!r} differs from {b!r}") from None
    ref = _parse(batch_ref)

    def walk(x: Any, y: Any) -> Any:
        if type(x) is not type(y):
            raise _NotPolymorphic(f"literal {a!r} differs from {b!r}")
        if isinstance(x, ast.Constant):
            if x.value == y.value and type(x.value) is type(y.value):
                return x
            if type(x.value) is int and type(y.value) is int:
                k = _multiple(x.value, y.value, samples)
                if k is not None:
                    expr = ref if k == 1 else ast.BinOp(ast.Constant(k), ast.Mult(), ref)
                    return ast.copy_location(expr, x)
            raise _NotPolymorphic(
                f"literal {a!r} differs from {b!r} in a value that is no multiple of the batch"
            )
        if isinstance(x, ast.AST):
            for name, fx in ast.iter_fields(x):
                setattr(x, name, walk(fx, getattr(y, name)))
            return x
        if isinstance(x, list):
            if len(x) != len(y):
                raise _NotPolymorphic(f"literal {a!r} differs from {b!r} in length")
            return [walk(i, j) for i, j in zip(x, y, strict=True)]
        if x != y:
            raise _NotPolymorphic(f"literal {a!r} differs from {b!r}")
        return x

    out = walk(ta, tb)
    subscript = isinstance(ta, ast.Tuple) and not a.lstrip().startswith("(")
    return _unparse(ast.fix_missing_locations(out), subscript)


def _statements(block: Block) -> Iterator[Operation]:
    """The ops of ``block`` and of the blocks of its if/for/while statements, in source order."""
    for op in block.ops:
        yield op
        for region in op.regions:
            for inner in region.blocks:
                yield from _statements(inner)


def _index(block: Block) -> dict[Any, tuple[int, int]]:
    """SSA value -> (defining position, result index) over :func:`_statements`; the arguments of
    the ``k``-th block (``block`` itself: 0, then its statements' blocks in source order) are
    ``(-1 - k, i)``; an op -> ``(its position, the number of its block)`` (:func:`_place`)."""
    pos: dict[Any, tuple[int, int]] = {}
    blocks = 0

    def visit(b: Block) -> None:
        nonlocal blocks
        k = blocks
        blocks += 1
        for i, arg in enumerate(b.args):
            pos[arg] = (-1 - k, i)
        for op in b.ops:
            pos[op] = (len(pos), k)
            for j, r in enumerate(op.results):
                pos[r] = (pos[op][0], j)
            for region in op.regions:
                for inner in region.blocks:
                    visit(inner)

    visit(block)
    return pos


def _place(op: Operation, pos: dict[Any, tuple[int, int]]) -> int:
    """The number of the block ``op`` is in (see :func:`_index`)."""
    return pos[op][1]


def _items(op: tp.CallOp | tp.MethodOp) -> list[tuple[str, Any]]:
    items: list[tuple[str, Any]] = [(f"arg{i}", a) for i, a in enumerate(op.args.data)]
    if op.kwargs is not None:
        items += [(f"kw:{k}", v) for k, v in op.kwargs.data.items()]
    return items


def _forward(module: ModuleOp) -> tp.FuncOp:
    for op in module.ops:
        if isinstance(op, tp.FuncOp) and op.kind.data == "sequential":
            return op
    raise RamielError("the module has no sequential torchpy.func")


BroadcastWeight = Callable[[tp.WeightOp, tp.WeightOp], "tuple[tp.WeightOp, int] | None"]
"""Given a weight of the two samples that differs between them, the batch-free weight (of
size 1 along the axis that is the batch) and that axis: ``.expand(..., batch, ...)`` turns it
into the weight at every batch size; or ``None``."""


def generalize(
    a: ModuleOp,
    b: ModuleOp,
    batch_arg: int = 0,
    broadcast: BroadcastWeight | None = None,
    samples: tuple[int, int] = SAMPLE_BATCHES,
) -> ModuleOp:
    """``a`` (the sequential module at batch ``samples[0]``) written for any batch, given ``b``
    (the same at ``samples[1]``; :func:`sample_batches`); ``batch_arg``: the ``forward`` argument whose dimension 0 is
    the batch; ``broadcast``: where a weight differs between the samples, its batch-free row
    (see :data:`BroadcastWeight`), which ``a`` then reads expanded to the batch (a constant
    folded from ``Expand(row, Shape(x))``: BERT's token type ids, ViT's class token). ``a`` is
    modified in place and returned.

    Raises :class:`_NotPolymorphic` (see the module docstring).
    """
    fa, fb = _forward(a), _forward(b)
    ba, bb = fa.body.block, fb.body.block
    ops_a, ops_b = list(_statements(ba)), list(_statements(bb))
    if len(ops_a) != len(ops_b) or len(ba.args) != len(bb.args):
        # the first statement that differs, named after its node in the program that has it
        # (the other one may have folded it away: x[:150] is no statement at batch 17)
        at = next(
            (i for i, (x, y) in enumerate(zip(ops_a, ops_b, strict=False)) if _node(x) != _node(y)),
            min(len(ops_a), len(ops_b)),
        )
        longer, batch = (ops_a, samples[0]) if len(ops_a) > len(ops_b) else (ops_b, samples[1])
        named = [op for op in longer[at:] if get_str(op, NODE_NAME_ATTR)]
        where = f" from {_where(named[0])} on (at batch size {batch})" if named else ""
        raise _NotPolymorphic(f"the program has other statements at another batch size{where}")
    pa, pb = _index(ba), _index(bb)
    # batch = x.shape[0], first statement of forward
    x = ba.args[batch_arg]
    size = tp.CallOp("operator.getitem", [x], ["$0.shape", "0"], None, [tp.ObjectType()])
    size.results[0].name_hint = BATCH_NAME
    set_str(size, NODE_NAME_ATTR, "the batch size")
    rewrites: list[tuple[tp.CallOp | tp.MethodOp, dict[str, str]]] = []
    expanded: list[tuple[tp.WeightOp, tp.WeightOp, int]] = []
    for oa, ob in zip(ops_a, ops_b, strict=True):
        if type(oa) is not type(ob) or len(oa.operands) != len(ob.operands):
            raise _NotPolymorphic(f"{_where(oa)} is another statement at another batch size")
        if [pa[v] for v in oa.operands] != [pb[v] for v in ob.operands] or _place(oa, pa) != _place(
            ob, pb
        ):
            raise _NotPolymorphic(f"{_where(oa)} has other operands at another batch size")
        if isinstance(oa, (*tp.REGION_OPS, tp.YieldOp)):  # if/for/while: the same structure
            if oa.properties != ob.properties:
                raise _NotPolymorphic(f"{_where(oa)}: {oa.name} differs at another batch size")
            continue
        if isinstance(oa, tp.WeightOp):
            assert isinstance(ob, tp.WeightOp)
            if oa.key != ob.key or oa.result.type != ob.result.type or oa.value != ob.value:
                row = broadcast(oa, ob) if broadcast is not None and oa.key == ob.key else None
                if row is not None:
                    expanded.append((oa, *row))
                    continue
                raise _NotPolymorphic(
                    f"weight '{oa.key.data}'{_readers(oa)} depends on the batch size (a constant "
                    "computed from the input's shape)"
                )
            continue
        if isinstance(oa, tp.CallOp | tp.MethodOp):
            assert isinstance(ob, tp.CallOp | tp.MethodOp)
            name_a = oa.callee if isinstance(oa, tp.CallOp) else oa.method
            name_b = ob.callee if isinstance(ob, tp.CallOp) else ob.method  # type: ignore[union-attr]
            items_a, items_b = _items(oa), _items(ob)
            if name_a != name_b or [k for k, _ in items_a] != [k for k, _ in items_b]:
                raise _NotPolymorphic(f"{_where(oa)} is another call at another batch size")
            ref = f"${len(oa.operands)}"
            changed: dict[str, str] = {}
            for (k, va), (_, vb) in zip(items_a, items_b, strict=True):
                if isinstance(va, IntegerAttr) or isinstance(vb, IntegerAttr):
                    if va != vb:
                        raise _NotPolymorphic(f"{_where(oa)} has other operands")
                    continue
                ta, tb = tp.attr_text(va), tp.attr_text(vb)
                assert ta is not None and tb is not None
                try:
                    new = _generalize_literal(ta, tb, ref, samples)
                except _NotPolymorphic as e:
                    raise _NotPolymorphic(f"{_where(oa)}: {e}") from None
                if new is not None:
                    changed[k] = new
            if changed:
                rewrites.append((oa, changed))
            continue
        if not isinstance(oa, tp.ReturnOp):
            raise _NotPolymorphic(f"{_where(oa)}: {oa.name} is not expected in forward")
    if not rewrites and not expanded:  # no statement depends on the batch size
        return a
    first = ba.first_op
    assert first is not None
    ba.insert_op_before(size, first)
    for op, changed in rewrites:
        _replace_call(op, changed, size.results[0])
    for weight, batch_free, axis in expanded:
        _expand_weight(weight, batch_free, axis, size.results[0])
    return a


def _expand_weight(weight: tp.WeightOp, row: tp.WeightOp, axis: int, batch: SSAValue) -> None:
    """Replace ``weight`` (a constant whose dimension ``axis`` is the batch, every row alike)
    by ``row`` (its batch-free row) and ``row.expand(..., batch, ...)`` before its first
    reader."""
    block = weight.parent_block()
    assert block is not None
    readers = {use.operation for use in weight.result.uses}
    at = next(op for op in block.ops if any(op is r or op.is_ancestor(r) for r in readers))
    shape = weight.result.type.get_shape()  # type: ignore[attr-defined]
    expand = tp.MethodOp(
        "expand",
        [row.result, batch],
        [1 if i == axis else str(d) for i, d in enumerate(shape)],
        None,
        [weight.result.type],
    )
    reader = get_str(next(iter(readers)), NODE_NAME_ATTR)
    set_str(expand, NODE_NAME_ATTR, reader or f"{weight.key.data} along the batch")
    block.insert_op_before(row, weight)
    block.insert_op_before(expand, at)
    weight.result.replace_all_uses_with(expand.results[0])
    block.erase_op(weight)


def _broadcast_rows(
    a_store: Any,
    b_store: Any,
    static: ModuleOp,
    static_store: Any,
    bound: int,
    samples: tuple[int, int] = SAMPLE_BATCHES,
) -> BroadcastWeight:
    """The :data:`BroadcastWeight` of the samples (their weights in ``a_store``,
    ``b_store``) against the static program ``static`` compiled for batch ``bound`` (its
    weights in ``static_store``), where one row is every row of both samples' weights along
    the one axis where they differ (of the samples' batch sizes; a GRU's initial state
    ``(layers, batch, hidden)``): the static weight of the same key, of size 1 there, when it
    is that row; where the static program has no weight of that key (it folded
    the constant further), a new inline one holding the row, where it is a splat or tiny (as
    the samples' constants that depend on the batch are: ``--constant-fold`` folds no other
    ``Expand``)."""
    have = {op.key.data: op for op in static.walk() if isinstance(op, tp.WeightOp)}

    def row(op: tp.WeightOp, store: Any, axis: int, n: int) -> np.ndarray | None:
        """The one row of ``op`` along ``axis`` (of size ``n``), or ``None``."""
        t = op.result.type
        if not isinstance(t, TensorType) or len(t.get_shape()) <= axis:
            return None
        arr = constant_value(op.value, store)
        if arr is None or arr.shape[axis] != n:
            return None
        first = arr.take([0], axis=axis)
        return first if _same_array(arr, np.broadcast_to(first, arr.shape)) else None

    def broadcast(oa: tp.WeightOp, ob: tp.WeightOp) -> tuple[tp.WeightOp, int] | None:
        ta, tb = oa.result.type, ob.result.type
        if bound != 1 or not isinstance(ta, TensorType) or not isinstance(tb, TensorType):
            return None
        sa, sb = list(ta.get_shape()), list(tb.get_shape())
        axes = [i for i, (x, y) in enumerate(zip(sa, sb, strict=False)) if x != y]
        if len(sa) != len(sb) or len(axes) != 1:
            return None
        (axis,) = axes
        if (sa[axis], sb[axis]) != samples:
            return None
        ra = row(oa, a_store, axis, samples[0])
        rb = row(ob, b_store, axis, samples[1])
        if ra is None or rb is None or not _same_array(ra, rb):
            return None
        mine = have.get(oa.key.data)
        if mine is not None:  # the batch-1 program reads the row itself
            rs = row(mine, static_store, axis, 1)
            return (mine.clone(), axis) if rs is not None and _same_array(ra, rs) else None
        # the batch-1 program folded it further (a Gather of constant ids): a new weight, inline
        flat = ra.reshape(-1)
        if flat.size > INLINE_LIMIT and not np.all(flat == flat[0]):
            return None
        value = dense_from_numpy(np.ascontiguousarray(ra))
        return tp.WeightOp(oa.key.data, value, value.type), axis

    return broadcast


def _replace_call(op: tp.CallOp | tp.MethodOp, changed: dict[str, str], batch: SSAValue) -> None:
    """Give ``op`` the batch size as one more operand and the rewritten literals."""
    args: list[Any] = [changed.get(f"arg{i}", a) for i, a in enumerate(op.args.data)]
    kwargs: dict[str, Any] = {
        k: changed.get(f"kw:{k}", v) for k, v in (op.kwargs.data.items() if op.kwargs else ())
    }
    rebuild_call(op, [*op.operands, batch], args, kwargs)


def _check_batch(module: ModuleOp, names: Sequence[str], bound: int, why: str) -> ModuleOp:
    """``module`` (the static sequential module) with a batch-size check first in ``forward``."""
    f = _forward(module)
    block = f.body.block
    order = _input_order(module)
    first = block.first_op
    for name in names:
        if name not in order:
            continue
        arg = block.args[order.index(name)]
        message = f"input {name!r}: this module runs batch size {bound} only ({why})"
        _insert_assert(block, first, arg, f"$0.shape[0] == {bound}", message, "the batch size")
    return module


def _insert_assert(
    block: Block, before: Operation | None, arg: SSAValue, test: str, message: str, what: str
) -> None:
    """``torch._assert(<test on $0 = arg>, message)`` before ``before`` (``None``: at the end of
    ``block``), labelled as the check of ``what`` this module is compiled for."""
    chk = tp.CallOp("torch._assert", [arg], [test, repr(message).replace("$", "\\x24")], None, [])
    set_str(chk, NODE_NAME_ATTR, f"{what} this module is compiled for")
    if before is None:
        block.add_op(chk)
    else:
        block.insert_op_before(chk, before)


def check_input_shapes(module: ModuleOp, dynamic: Sequence[str]) -> ModuleOp:
    """``module`` (the sequential module, modified in place) with a shape check of every tensor
    input first in ``forward``: ``torch._assert(x.shape[1:] == (8, 16), ...)`` for the inputs
    in ``dynamic`` (any batch size), ``x.shape == (1, 8, 16)`` for the others; and of the dtype
    of an integer or bool input (``x.dtype == torch.int64``: a float tensor there ran and gave
    a float result; floating-point inputs follow the module's own dtype, ``.double()``). The module is
    compiled for those shapes (shape computations folded into constants): another size of a
    bound dimension made wrong-shaped results without an error, or a torch error deep inside
    ``forward``. ``torch._assert`` is what ``torch.fx`` and ``torch.export`` keep; a check costs
    about a microsecond per input and call."""
    f = _forward(module)
    block = f.body.block
    order = _input_order(module)
    first = next(
        (
            op
            for op in block.ops
            if not (isinstance(op, tp.CallOp) and op.callee.data == "torch._assert")
        ),
        None,
    )
    for name, arg in zip(order, block.args, strict=False):
        if not isinstance(arg.type, TensorType):
            continue
        dims = tuple(int(d) for d in arg.type.get_shape())
        if name in dynamic:
            test = f"$0.shape[1:] == {dims[1:]!r}"
            wanted = "(" + ", ".join(["B", *map(str, dims[1:])]) + ")"
            why = "B: any batch size; the other dimensions are compiled in"
        else:
            test = f"$0.shape == {dims!r}"
            wanted, why = repr(dims), "compiled for it; recompile with --input-shape for another"
        message = f"input {name!r}: this module takes shape {wanted} only ({why})"
        _insert_assert(block, first, arg, test, message, "the input shapes")
        dt = numpy_dtype_of(arg.type.element_type).name
        if not dt.startswith(("float", "bfloat")):  # an integer or bool input: exactly its type
            message = f"input {name!r}: this module takes {dt} (the model's type) only"
            _insert_assert(block, first, arg, f"$0.dtype == torch.{dt}", message, "the input types")
    return module


def _input_order(module: ModuleOp) -> list[str]:
    for op in module.ops:
        if isinstance(op, tp.ProgramOp):
            return [tp.attr_text(a) or "" for a in op.input_order.data]
    return []


def generalize_batch(
    model: onnx.ModelProto,
    plan: BatchPlan,
    static: ModuleOp,
    options: Any,
    ctx: Context,
    decided: ModuleOp | None = None,
) -> Generalized:
    """The sequential module for any batch size, or ``static`` with a batch-size check and a
    note saying why (see the module docstring). ``options``: the
    :class:`~ramiel.compiler.CompileOptions` (the clean-up stage's options); ``ctx``: the
    compilation's context (:func:`ramiel.context.make_context`); ``decided``: the
    static program's ``onnx`` module after its passes, whose memory formats the samples take
    (``None``: contiguous)."""
    names = list(plan.inputs)
    order = _input_order(static)
    source = free_batch_dims(model, names) if plan.free else model
    why = ""
    try:
        samples = sample_batches(model)
        with tempfile.TemporaryDirectory(prefix="ramiel-batch-") as work:
            modules = []
            for batch in samples:
                try:
                    modules.append(_sample_module(source, plan, batch, options, work, ctx, decided))
                except (RamielError, VerifyException) as e:
                    # (a shape the model fixes, which onnx shape inference let through, makes
                    # invalid IR: BERT exported at batch 1 with --dynamic-batch had been an
                    # 'internal error' after constant-fold)
                    reason = str(e).removeprefix("error: ")
                    raise _NotPolymorphic(
                        f"at batch size {batch} it does not compile: {reason}"
                    ) from None
            a, b = modules
            expected = {
                plan.bound: result_types(static),
                samples[0]: result_types(a),
                samples[1]: result_types(b),
            }
            store_a, store_static = module_store(ctx, a), module_store(ctx, static)
            broadcast = _broadcast_rows(
                store_a, module_store(ctx, b), static, store_static, plan.bound, samples
            )
            general = generalize(a, b, order.index(names[0]), broadcast, samples)
            _same_weights(general, static, store_a, store_static, samples[0])
            _keep_static_weights(general, static)
            # INPUTS lists the bound shapes (the printed table)
            fs, fg = _forward(static), _forward(general)
            for ga, sa in zip(fg.body.block.args, fs.body.block.args, strict=True):
                Rewriter.replace_value_with_new_type(ga, sa.type)
            _run_on_meta(general, static, names, expected, work)
    except _NotPolymorphic as e:
        why = str(e)
    if why:
        listed = ", ".join(f"'{n}'" for n in names)
        note = f"the sequential module keeps batch size {plan.bound} for input(s) {listed}: {why}"
        checked = _check_batch(
            static,
            names,
            plan.bound,
            f"compiled for it, and it cannot take another: {why}; recompile with --input-shape "
            "(input_shapes=) for another size",
        )
        return Generalized(checked, (), [note])
    return Generalized(general, tuple(names), [])


def result_types(module: ModuleOp) -> list[Any]:
    """The types of the values the sequential ``forward`` of ``module`` returns."""
    ret = _forward(module).body.block.last_op
    assert isinstance(ret, tp.ReturnOp)
    return [v.type for v in ret.values]


def _shapes_on_meta(module: ModuleOp, batches: dict[str, int], work: str, tag: str) -> list[Any]:
    """Run the printed ``module`` on the meta device (no data, no compute: shapes only), with
    dimension 0 of the inputs ``batches`` names set to their value; returns the outputs."""

    path = os.path.join(work, f"{tag}.py")
    with open(path, "w") as f:
        f.write(print_python(module, class_name="BatchCheck"))
    cls = generated_class(import_from_path(f"ramiel_batch_check_{id(module)}_{tag}", path))
    with torch.device("meta"):
        m = cls()
        feeds = []
        for name, (shape, dtype) in cls.INPUTS.items():
            if name in batches:
                shape = (batches[name], *shape[1:])
            feeds.append(torch.empty(shape, dtype=dtype))
        with torch.no_grad():
            out = m(*feeds)
    return list(out) if isinstance(out, tuple) else [out]


def _failing_statement(e: BaseException, path: str) -> str | None:
    """The statement of the generated file ``path`` where ``e`` was raised, quoted."""

    frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == path]
    if not frames:
        return None
    line = linecache.getline(path, frames[-1].lineno or 0).strip()
    return f"`{line}`" if line else None


def _run_on_meta(
    general: ModuleOp,
    static: ModuleOp,
    names: Sequence[str],
    expected: dict[int, list[Any]],
    work: str,
) -> None:
    """Check ``general`` at each batch size of ``expected`` (batch -> the ONNX graph's result
    types there) by running it on the meta device: every statement runs, with PyTorch's shape
    checks, so a literal that is right at one size only fails. The static module runs first: if
    it cannot run on the meta device either (a helper that reads data), nothing can be checked.

    Raises :class:`_NotPolymorphic`.
    """
    bound = next(iter(expected))
    try:
        _shapes_on_meta(static, {}, work, "static")
    except Exception as e:  # noqa: BLE001 - any failure: the check is not available
        raise _NotPolymorphic(
            f"cannot check the module at other batch sizes (it does not run on the meta device: "
            f"{type(e).__name__}: {e})"
        ) from None
    for batch, types in expected.items():
        try:
            outs = _shapes_on_meta(general, dict.fromkeys(names, batch), work, f"b{batch}")
        except Exception as e:  # noqa: BLE001 - the generated module fails at this size
            first = str(e).strip().splitlines()[0] if str(e).strip() else ""
            where = _failing_statement(e, os.path.join(work, f"b{batch}.py"))
            raise _NotPolymorphic(
                f"at batch size {batch}, {where or 'the generated module'} fails "
                f"({type(e).__name__}: {first})"
            ) from None
        for i, (o, t) in enumerate(zip(outs, types, strict=True)):
            want = tuple(t.get_shape())
            dt = np.dtype(numpy_dtype_of(t.element_type)).name
            got_dt = str(o.dtype).removeprefix("torch.")
            if tuple(o.shape) != want or got_dt != dt:
                raise _NotPolymorphic(
                    f"at batch size {batch} output {i} is {tuple(o.shape)} {got_dt}, the ONNX "
                    f"graph says {want} {dt}"
                    + (" (the size it is bound to)" if batch == bound else "")
                )


def _same_weights(
    general: ModuleOp,
    static: ModuleOp,
    sample_store: Any = None,
    static_store: Any = None,
    sample: int = SAMPLE_BATCHES[0],
) -> None:
    """Every weight ``general`` reads is one of ``static``'s (same key, type and value), or a
    constant the static program does not read, under a key it does not use: inline (``dense``),
    or a tensor of the static program's weights file (``static_store``: a model initializer,
    which the static program folded into another constant, e.g. ViT's class token under an
    ``Expand`` to batch 1) holding the same data as the sample's (``sample_store``)."""
    have = {op.key.data: op for op in static.walk() if isinstance(op, tp.WeightOp)}
    for op in general.walk():
        if not isinstance(op, tp.WeightOp):
            continue
        mine = have.get(op.key.data)
        if mine is None and _same_tensor(op, sample_store, static_store):
            continue
        if mine is None or mine.result.type != op.result.type or mine.value != op.value:
            raise _NotPolymorphic(
                f"weight '{op.key.data}'{_readers(op)} is not the one of the "
                f"batch-{sample} program (a constant folded from the input's shape)"
            )


def _keep_static_weights(general: ModuleOp, static: ModuleOp) -> None:
    """Give ``general`` the weights ``static`` reads and it does not (a constant the batch-1
    program folded from the batch, ``general`` computes), unread: they are tensors of the one
    weights file (the parallel program reads them), so the sequential class registers them as
    buffers and ``load_state_dict(load_file(weights.safetensors))`` takes the file as it is
    (found by a fresh-user check: "Unexpected key(s)")."""
    mine = {op.key.data for op in general.walk() if isinstance(op, tp.WeightOp)}
    block = _forward(general).body.block
    first = block.first_op
    assert first is not None
    for op in static.walk():
        if isinstance(op, tp.WeightOp) and op.key.data not in mine:
            mine.add(op.key.data)
            block.insert_op_before(op.clone(), first)


def _same_tensor(op: tp.WeightOp, sample_store: Any, static_store: Any) -> bool:
    """Whether ``op``'s value is inline (``dense``: written from the IR), or a ``dense_resource``
    of the sample's weights that the static program's weights hold with the same shape, dtype
    and data."""
    value = op.value
    if isinstance(value, DenseIntOrFPElementsAttr):
        return True  # inline: the IR holds it whole (and it is the same in both samples)
    if not isinstance(value, DenseResourceAttr) or sample_store is None or static_store is None:
        return False
    handle = value.resource_handle.data
    if handle not in set(static_store.keys()):
        return False
    try:
        theirs = constant_value(value, static_store)
        ours = constant_value(value, sample_store)
    except RamielError:
        return False
    return theirs is not None and ours is not None and _same_array(theirs, ours)


def _same_array(x: np.ndarray, y: np.ndarray) -> bool:
    """Same dtype, shape and values (NaN equal to NaN)."""
    return x.dtype == y.dtype and np.array_equal(x, y, equal_nan=x.dtype.kind in "fc")


__all__ = [
    "BATCH_NAME",
    "SAMPLE_BATCHES",
    "SATURATION_LIMIT",
    "BatchPlan",
    "Generalized",
    "batch_inputs",
    "free_batch_dims",
    "generalize",
    "generalize_batch",
    "result_types",
    "sample_batches",
    "saturation_constants",
]
