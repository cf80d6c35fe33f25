"""The IR's attribute keys, in one place, with typed getters and setters.

Passes talk to each other through attributes on ops, functions and the module; every key Ramiel
writes is defined here (never spelled as a literal, never imported from another pass). The
getters return ``None`` for a missing attribute and raise nothing; the setters replace it.

Keys, by what carries them:

* on ``onnx`` ops: :data:`OPSET_ATTR` (``onnx.opset``, the op's opset), :data:`NODE_NAME_ATTR`
  (``onnx_node_name``), :data:`COST_ATTR` (``ramiel.cost_us``, ``--estimate-cost``),
  :data:`BYTES_ATTR` (``ramiel.result_bytes``), :data:`LAYOUT_ATTR` (``ramiel.layout``,
  ``--assign-layout``), :data:`PREPACK_ATTR` (``ramiel.prepack``, ``--prepack-conv``,
  ``--prepack-matmul``),
  :data:`INPLACE_ATTR` (``ramiel.inplace``, ``--inplace``),
  :data:`THREADS_ATTR` (``ramiel.threads``, ``--intra-op-threads``; also on ``torchpy``
  segments), :data:`THREADED_COST_ATTR` (``ramiel.threaded_cost_us``);
* on ``@main``'s arguments and results: :data:`ONNX_NAME` (``onnx.name``);
* on the module: :data:`WEIGHTS_ATTR` (``ramiel.weights``, the weights file),
  :data:`BACKEND_ATTR`, :data:`TRANSFER_COST_ATTR`, :data:`CORES_ATTR`, :data:`BATCH_ATTR`;
* on ``torchpy`` ops and functions: :data:`CONVERSION_ATTR` (``ramiel.conversion``),
  :data:`SEGMENT_OF_ATTR` (``ramiel.segment_of``), :data:`SEGMENT_BACKEND_ATTR`, :data:`STATEMENTS_ATTR`,
  :data:`NUM_OPS_ATTR` (``ramiel.num_ops``).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    BytesAttr,
    DictionaryAttr,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    f64,
    i64,
)
from xdsl.ir import Attribute, Operation

ONNX_NAME = "onnx.name"
"""Argument/result attribute of ``@main`` holding the ONNX graph input/output name."""

OPSET_ATTR = "onnx.opset"
"""On an ``onnx`` op (or the module): the default-domain opset it follows."""

NODE_NAME_ATTR = "onnx_node_name"
"""On an ``onnx`` op: the ONNX node's name."""

INPLACE_ATTR = "ramiel.inplace"
"""Discardable attribute ``ramiel.inplace = i : i64``: the op may write its result into operand
``i``'s buffer (``torch.relu_(x)``, ``x.add_(y)``); see :func:`ramiel.dialects.onnx.inplace_violation`."""

COST_ATTR = "ramiel.cost_us"
"""Discardable attribute holding an op's estimated cost in µs (set by ``--estimate-cost``)."""

BYTES_ATTR = "ramiel.result_bytes"
"""Discardable attribute: the bytes of an op's results (``--estimate-cost``)."""

BACKEND_ATTR = "ramiel.backend"
"""Module attribute: the runtime backend whose transfer costs weight the edges."""

TRANSFER_COST_ATTR = "ramiel.transfer_cost"
"""Module attribute ``[latency_us, us_per_byte]`` (f64): a measured transfer cost model (from
``--estimate-cost{transfer-cost=FILE}``) that replaces the backend's default."""

THREADS_ATTR = "ramiel.threads"
"""Discardable attribute: intra-op threads an op (or a compiled segment) runs with
(``--intra-op-threads``)."""

THREADED_COST_ATTR = "ramiel.threaded_cost_us"
"""Discardable attribute: an op's estimated cost with its ``ramiel.threads`` threads (µs)."""

CORES_ATTR = "ramiel.cores"
"""Module attribute: the cores the schedule was planned for (``--merge{clusters=N}``, then
``--intra-op-threads{cores=N}``); printed as the program's ``cores``."""

BATCH_ATTR = "ramiel.batch"
"""Module attribute: the samples ``--hypercluster{batch=B}`` made of the graph."""

LAYOUT_ATTR = "ramiel.layout"
"""Discardable op attribute: the memory format the op computes its 4-D activations in."""

WEIGHTS_ATTR = "ramiel.weights"
"""Module attribute: the safetensors file the module's ``dense_resource`` weights are in."""

PREPACK_ATTR = "ramiel.prepack"
"""Discardable attribute of an ``onnx.Conv`` (``--prepack-conv``) or ``onnx.MatMul``
(``--prepack-matmul``): run by oneDNN with its kernel or weight reordered once per process
(``ops.conv2d_prepacked``, ``ops.matmul_prepacked``); the value is what runs fused into it:
``"none"``; for a Conv ``"relu"`` (the op then computes ``Relu(Conv(...))``, the Relu erased); for
a MatMul ``"bias"``, ``"bias+relu"`` (the bias Add and Relu that alone read the product, which stay in the IR and are lowered into the MatMul's call:
:func:`ramiel.layout.matmul_epilogue`)."""

CONVERSION_ATTR = "ramiel.conversion"
"""On a torchpy op: it converts a tensor to this memory format (placed by the layout)."""

SEGMENT_OF_ATTR = "ramiel.segment_of"
"""On a torchpy segment function: the function it was cut from (``--compile-segments``)."""

SEGMENT_BACKEND_ATTR = "ramiel.segment_backend"
"""On a torchpy segment function: how it is compiled where not with inductor (``onednn-graph``,
see :data:`ramiel.runtime.compiled.BACKENDS`; ``--compile-segments=backend=...``)."""

STATEMENTS_ATTR = "ramiel.statements"
"""On a torchpy segment function: how many statements it holds (``--compile-segments``)."""

NUM_OPS_ATTR = "ramiel.num_ops"
"""On a torchpy cluster function: how many ONNX ops it computes (the printer's summary)."""

INDEX_LIMITS_ATTR = "ramiel.index_limits"
"""Module attribute (set by the importer): a JSON object, integer graph input name -> the size of
the table it indexes (an ``onnx.Gather`` of a constant, as embeddings are), so that the random
inputs of ``python model.py`` and ``ramiel run`` stay inside it (``INDEX_LIMITS`` of the
generated classes)."""


def attr_text(a: Attribute | None) -> str | None:
    """The text of a string attribute. xDSL parses a printed string that holds non-ASCII
    characters back as a ``BytesAttr``; both are accepted (UTF-8)."""
    if isinstance(a, StringAttr):
        return a.data
    if isinstance(a, BytesAttr):
        return a.data.decode("utf-8", errors="backslashreplace")
    return None


def has(op: Operation, key: str) -> bool:
    """Whether ``op`` carries the attribute ``key`` (of any type)."""
    return key in op.attributes


def get_attr(op: Operation, key: str) -> Attribute | None:
    """The attribute ``key`` of ``op`` as it is (``None`` when missing), for a caller that checks
    its type itself or prints it."""
    return op.attributes.get(key)


def set_attr(op: Operation, key: str, value: Attribute) -> None:
    """Set the attribute ``key`` of ``op`` to ``value`` (any attribute)."""
    op.attributes[key] = value


def remove(op: Operation, key: str) -> None:
    """Drop the attribute ``key`` of ``op`` (nothing happens when it is missing)."""
    op.attributes.pop(key, None)


def get_float(op: Operation, key: str) -> float | None:
    """The float attribute ``key`` of ``op`` (``None`` when missing or not a float)."""
    a = op.attributes.get(key)
    return float(a.value.data) if isinstance(a, FloatAttr) else None


def set_float(op: Operation, key: str, value: float) -> None:
    """Set the f64 attribute ``key`` of ``op``."""
    op.attributes[key] = FloatAttr(float(value), f64)


def get_int(op: Operation, key: str) -> int | None:
    """The integer attribute ``key`` of ``op`` (``None`` when missing or not an integer)."""
    a = op.attributes.get(key)
    return int(a.value.data) if isinstance(a, IntegerAttr) else None


def set_int(op: Operation, key: str, value: int) -> None:
    """Set the i64 attribute ``key`` of ``op``."""
    op.attributes[key] = IntegerAttr(int(value), i64)


def get_str(op: Operation, key: str) -> str | None:
    """The string attribute ``key`` of ``op`` (``None`` when missing or not a string)."""
    return attr_text(op.attributes.get(key))


def set_str(op: Operation, key: str, value: str) -> None:
    """Set the string attribute ``key`` of ``op``."""
    op.attributes[key] = StringAttr(value)


def _array(op: Operation, key: str, kind: type[IntegerAttr] | type[FloatAttr]) -> list | None:
    """The values of the array attribute ``key`` of ``op`` when every element is a ``kind``."""
    a = op.attributes.get(key)
    if not isinstance(a, ArrayAttr) or not all(isinstance(x, kind) for x in a.data):
        return None
    return [x.value.data for x in a.data]


def get_ints(op: Operation, key: str) -> list[int] | None:
    """The integer-array attribute ``key`` of ``op`` (``None`` when missing or not an array of
    integers)."""
    values = _array(op, key, IntegerAttr)
    return None if values is None else [int(v) for v in values]


def set_ints(op: Operation, key: str, values: Sequence[int]) -> None:
    """Set the attribute ``key`` of ``op`` to an array of i64."""
    op.attributes[key] = ArrayAttr([IntegerAttr(int(v), i64) for v in values])


def get_floats(op: Operation, key: str) -> list[float] | None:
    """The float-array attribute ``key`` of ``op`` (``None`` when missing or not an array of
    floats)."""
    values = _array(op, key, FloatAttr)
    return None if values is None else [float(v) for v in values]


def set_floats(op: Operation, key: str, values: Sequence[float]) -> None:
    """Set the attribute ``key`` of ``op`` to an array of f64."""
    op.attributes[key] = ArrayAttr([FloatAttr(float(v), f64) for v in values])


def io_name_attrs(names: Sequence[str]) -> ArrayAttr[DictionaryAttr]:
    """``arg_attrs``/``res_attrs`` of ``@main`` that carry ``names`` as :data:`ONNX_NAME`."""
    return ArrayAttr([DictionaryAttr({ONNX_NAME: StringAttr(n)}) for n in names])


def with_onnx_name(attrs: Attribute | None, name: str) -> DictionaryAttr:
    """An argument/result attribute dictionary: ``attrs`` (when a dictionary) with
    :data:`ONNX_NAME` set to ``name``."""
    d = dict(attrs.data) if isinstance(attrs, DictionaryAttr) else {}
    d[ONNX_NAME] = StringAttr(name)
    return DictionaryAttr(d)


def io_names(fn: func.FuncOp) -> tuple[list[str], list[str]]:
    """ONNX names of the graph inputs and outputs of ``@main`` (:data:`ONNX_NAME` arg/res
    attributes; ``input<i>``/``output<i>`` where one is missing)."""

    def names(attrs: ArrayAttr | None, n: int, prefix: str) -> list[str]:
        out = []
        for i in range(n):
            d = attrs.data[i] if attrs is not None and i < len(attrs.data) else None
            text = attr_text(d.data.get(ONNX_NAME)) if isinstance(d, DictionaryAttr) else None
            out.append(text if text is not None else f"{prefix}{i}")
        return out

    ft = fn.function_type
    return (
        names(fn.arg_attrs, len(ft.inputs.data), "input"),
        names(fn.res_attrs, len(ft.outputs.data), "output"),
    )
