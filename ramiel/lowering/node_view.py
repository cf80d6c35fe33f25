"""Build :class:`~ramiel.lowering.api.NodeView` objects from an ``onnx.ModelProto``, and run a small
model node by node through the lowering rules (:func:`run_graph_eagerly`).

This is the test harness of the lowering rules, not the product: the compiler builds its
NodeViews from the ``onnx`` dialect IR. Shapes and dtypes come from ``onnx.shape_inference``
(with data propagation); constants from initializers, Constant nodes and — for small tensors —
from folding nodes whose inputs are all constant (so that Reshape/Slice/... see the shape tensors a
PyTorch export computes with Shape → Gather → Concat chains).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
import torch
from onnx import numpy_helper

from ramiel.dtypes import dtype_name
from ramiel.errors import UnsupportedOpError
from ramiel.lowering.api import (
    ONNX_DOMAINS,
    NodeView,
    TensorInfo,
    Value,
    attribute_value,
    check_supported,
    lower_node,
    refine_output_shapes,
    with_defaults,
)
from ramiel.lowering.eval_emitter import EvalEmitter, EvalValue
from ramiel.weights import numpy_from_torch, torch_from_numpy

#: Constant folding in :func:`node_views` keeps outputs up to this many elements.
FOLD_LIMIT = 4096


def _info_from_type(name: str, tp: onnx.TypeProto) -> TensorInfo | None:
    if tp.WhichOneof("value") is None:
        return None  # no type at all (an untyped graph output): unknown
    if not tp.HasField("tensor_type"):
        return TensorInfo(name, None, "non-tensor")
    tt = tp.tensor_type
    shape: tuple[int, ...] | None = None
    if tt.HasField("shape"):
        dims = [int(d.dim_value) for d in tt.shape.dim if d.HasField("dim_value")]
        shape = tuple(dims) if len(dims) == len(tt.shape.dim) else None
    return TensorInfo(name, shape, dtype_name(tt.elem_type))


def _constant_node_value(node: onnx.NodeProto) -> np.ndarray | None:
    for a in node.attribute:
        v = attribute_value(a)
        if a.name == "value":
            return np.asarray(v)
        if a.name in ("value_float", "value_floats"):
            return np.asarray(v, dtype=np.float32)
        if a.name in ("value_int", "value_ints"):
            return np.asarray(v, dtype=np.int64)
    return None


@dataclass
class GraphViews:
    """NodeViews of a model's main graph, in graph order, with the tensor facts they came from."""

    model: onnx.ModelProto
    views: list[tuple[onnx.NodeProto, NodeView]]
    infos: dict[str, TensorInfo]
    initializers: dict[str, np.ndarray] = field(default_factory=dict)


def _views(
    graph: onnx.GraphProto, opsets: dict[str, int], infos: dict[str, TensorInfo]
) -> Iterator[tuple[onnx.NodeProto, NodeView]]:
    for i, node in enumerate(graph.node):
        name = node.name or f"{node.op_type}_{i}"
        attrs: dict[str, Any] = {a.name: attribute_value(a) for a in node.attribute}
        ins = [infos.get(n, TensorInfo(n, None, "undefined")) if n else None for n in node.input]
        outs = [infos.get(n, TensorInfo(n, None, "undefined")) if n else None for n in node.output]
        domain = "" if node.domain in ONNX_DOMAINS else node.domain
        opset = opsets.get(domain, 0)
        view = NodeView(node.op_type, name, domain, opset, ins, outs, attrs)
        view = refine_output_shapes(with_defaults(view))
        for info in view.outputs:
            if info is not None:
                infos[info.name] = info
        yield node, view


def node_views(model: onnx.ModelProto, fold: bool = True) -> GraphViews:
    """Shape-infer ``model`` and build one NodeView per node of its main graph.

    With ``fold``, nodes whose inputs are all constant are evaluated (through the lowering rules)
    and their outputs of at most :data:`FOLD_LIMIT` elements become constants too.
    """
    try:
        inferred = onnx.shape_inference.infer_shapes(model, data_prop=True)
    except Exception:  # noqa: BLE001 - fall back to the model's own value_info
        inferred = model
    g = inferred.graph
    infos: dict[str, TensorInfo] = {}
    for vi in [*g.input, *g.value_info, *g.output]:
        info = _info_from_type(vi.name, vi.type)
        if info is not None and (vi.name not in infos or info.dtype != "undefined"):
            infos[vi.name] = info
    # From IR 4 an initializer that is also a graph input is only a default value (the caller may
    # feed another); before IR 4 every initializer had to be listed as an input, so all are weights.
    input_names = {vi.name for vi in model.graph.input} if model.ir_version >= 4 else set()
    inits: dict[str, np.ndarray] = {}
    for t in g.initializer:
        arr = numpy_helper.to_array(t)
        inits[t.name] = arr
        const = None if t.name in input_names else arr
        infos[t.name] = TensorInfo(t.name, tuple(arr.shape), dtype_name(t.data_type), const)
    opsets = {
        ("" if i.domain in ONNX_DOMAINS else i.domain): int(i.version) for i in model.opset_import
    }
    views = []
    for node, view in _views(g, opsets, infos):
        if node.op_type == "Constant" and view.domain in ONNX_DOMAINS and node.output:
            value = _constant_node_value(node)
            out = view.outputs[0]
            if value is not None and out is not None:
                infos[out.name] = TensorInfo(out.name, tuple(value.shape), out.dtype, value)
                view.outputs[0] = infos[out.name]
        elif fold and view.op_type in ("Shape", "Size") and view.domain in ONNX_DOMAINS:
            _fold_shape(view, infos)
        elif fold and _foldable(view):
            _fold(view, infos)
        if fold and any(o is not None and o.shape is None for o in view.outputs):
            _propagate_shapes(view, infos)
        views.append((node, view))
    return GraphViews(inferred, views, infos, inits)


def _fold_shape(view: NodeView, infos: dict[str, TensorInfo]) -> None:
    """Shape/Size of a statically shaped tensor is a constant (what lets the Shape → Gather →
    Concat → Reshape chains of PyTorch exports fold)."""
    x, out = view.inputs[0], view.outputs[0]
    if x is None or x.shape is None or out is None:
        return
    if view.op_type == "Size":
        value = np.asarray(int(np.prod(x.shape)), dtype=np.int64)
    else:
        start = view.attrs.get("start", 0) or 0
        value = np.asarray(list(x.shape)[slice(start, view.attrs.get("end"))], dtype=np.int64)
    infos[out.name] = TensorInfo(out.name, tuple(value.shape), "int64", value)
    view.outputs[0] = infos[out.name]


def _foldable(view: NodeView) -> bool:
    if view.domain not in ONNX_DOMAINS or not view.inputs:
        return False
    if view.op_type in ("RandomNormal", "RandomUniform", "Bernoulli", "Multinomial"):
        return False
    if any(i is not None and i.const is None for i in view.inputs):
        return False
    return check_supported(view) is None


def _fold(view: NodeView, infos: dict[str, TensorInfo]) -> None:
    if any(
        o is not None and o.shape is not None and math.prod(o.shape) > FOLD_LIMIT
        for o in view.outputs
    ):
        return
    em = EvalEmitter()
    args: list[Value | None] = [
        None if i is None or i.const is None else em.wrap(_to_torch(i.const)) for i in view.inputs
    ]
    try:
        outs = lower_node(view, args, em)
    except Exception:  # noqa: BLE001 - folding is best effort; the node runs normally then
        return
    if any(isinstance(v.obj, torch.Tensor) and v.obj.numel() > FOLD_LIMIT for v in outs if v):
        return
    for k, (o, v) in enumerate(zip(view.outputs, outs, strict=False)):
        if o is None or v is None:
            continue
        arr = _to_numpy(v.obj)
        info = TensorInfo(o.name, tuple(arr.shape), o.dtype, arr)
        infos[o.name] = info
        view.outputs[k] = info


_TORCH_DTYPES = {
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "float32": torch.float32,
    "float64": torch.float64,
    "int8": torch.int8,
    "int16": torch.int16,
    "int32": torch.int32,
    "int64": torch.int64,
    "uint8": torch.uint8,
    "uint16": torch.uint16,
    "uint32": torch.uint32,
    "uint64": torch.uint64,
    "bool": torch.bool,
    "float8_e4m3fn": torch.float8_e4m3fn,
    "float8_e4m3fnuz": torch.float8_e4m3fnuz,
    "float8_e5m2": torch.float8_e5m2,
    "float8_e5m2fnuz": torch.float8_e5m2fnuz,
    "float8_e8m0fnu": torch.float8_e8m0fnu,
}


def _propagate_shapes(view: NodeView, infos: dict[str, TensorInfo]) -> None:
    """Fill output shapes onnx shape inference left unknown by running the rule on ``meta``
    tensors (shapes only, no data), when every input shape is static. Best effort."""
    if check_supported(view) is not None:
        return
    em = EvalEmitter()
    args: list[Value | None] = []
    for i in view.inputs:
        if i is None:
            args.append(None)
            continue
        if i.shape is None or i.dtype not in _TORCH_DTYPES:
            return
        args.append(em.wrap(torch.empty(i.shape, dtype=_TORCH_DTYPES[i.dtype], device="meta")))
    try:
        outs = lower_node(view, args, em)
    except Exception:  # noqa: BLE001 - ops without meta kernels (or data-dependent) stay unknown
        return
    for k, (o, v) in enumerate(zip(view.outputs, outs, strict=False)):
        if o is None or v is None or o.shape is not None or not isinstance(v.obj, torch.Tensor):
            continue
        info = TensorInfo(o.name, tuple(v.obj.shape), o.dtype, o.const)
        infos[o.name] = info
        view.outputs[k] = info


def _to_torch(a: np.ndarray) -> torch.Tensor:
    return torch_from_numpy(np.array(a, copy=True, order="C"))


def _to_numpy(t: Any) -> np.ndarray:
    if not isinstance(t, torch.Tensor):
        return np.asarray(t)
    if t.dtype == torch.bfloat16:
        t = t.float()
    return numpy_from_torch(t.contiguous())


@dataclass
class Mismatch:
    """A runtime tensor whose dtype or shape differs from the static facts of the NodeView."""

    node: str
    tensor: str
    expected: tuple[str, tuple[int, ...] | None]
    actual: tuple[str, tuple[int, ...]]


def run_graph_eagerly(
    model: onnx.ModelProto,
    feeds: Mapping[str, np.ndarray],
    mismatches: list[Mismatch] | None = None,
    fold: bool = True,
) -> dict[str, np.ndarray]:
    """Run ``model`` node by node through the lowering rules with an :class:`EvalEmitter`.

    ``feeds`` maps graph input names to arrays; returns the graph outputs as numpy arrays
    (bfloat16 converted to float32). Raises :class:`~ramiel.errors.UnsupportedOpError` listing every
    unsupported node first. If ``mismatches`` is given, every output whose runtime dtype or shape
    differs from its inferred TensorInfo is appended to it.
    """
    gv = node_views(model, fold=fold)
    bad = []
    for _, nv in gv.views:
        reason = check_supported(nv)
        if reason is not None:
            bad.append((nv.op_type, nv.name, nv.opset, reason))
    if bad:
        raise UnsupportedOpError(bad)
    em = EvalEmitter()
    env: dict[str, EvalValue] = {}
    for name, arr in gv.initializers.items():
        env[name] = em.wrap(_to_torch(arr), name)
    for name, arr in feeds.items():
        env[name] = em.wrap(_to_torch(np.asarray(arr)), name)
    for node, view in gv.views:
        args: list[Value | None] = [env[n] if n else None for n in node.input]
        outs = lower_node(view, args, em)
        for info, v in zip(view.outputs, outs, strict=False):
            if info is None:
                continue
            if v is None:
                raise RuntimeError(f"rule for {view.op_type} returned no value for {info.name}")
            env[info.name] = v
            if mismatches is not None and isinstance(v.obj, torch.Tensor):
                actual_dtype = str(v.obj.dtype).removeprefix("torch.")
                actual = (actual_dtype, tuple(v.obj.shape))
                if actual_dtype != info.dtype or (
                    info.shape is not None and tuple(info.shape) != actual[1]
                ):
                    mismatches.append(
                        Mismatch(view.name, info.name, (info.dtype, info.shape), actual)
                    )
    return {o.name: _to_numpy(env[o.name].obj) for o in model.graph.output}


def freeze_inputs(model: onnx.ModelProto, values: Mapping[str, np.ndarray]) -> onnx.ModelProto:
    """A copy of ``model`` where the graph inputs in ``values`` become initializers (constants).

    Node tests feed shape-like operands (axes, starts, sizes, K, ...) as graph inputs; in real
    models they are initializers or Constant nodes, which the rules need to generate static code
    (the node tests and :mod:`ramiel.backend` freeze them). With no ``values``, ``model`` itself.
    """
    if not values:
        return model
    m = onnx.ModelProto()
    m.CopyFrom(model)
    keep = [vi for vi in m.graph.input if vi.name not in values]
    del m.graph.input[:]
    m.graph.input.extend(keep)
    for name, arr in values.items():
        m.graph.initializer.append(numpy_helper.from_array(np.asarray(arr), name))
    return m
