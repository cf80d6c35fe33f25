"""Small compile-time helpers shared by the rule modules (no runtime code here)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

import numpy as np

from ramiel.dtypes import DTYPE_NAMES
from ramiel.errors import DynamicShapeError
from ramiel.lowering.api import Dtype, NodeView, TensorInfo, is_float, is_int, short_float

# Opset-1 Cast names its target type with a string.
ONNX_TYPE_STRINGS = {
    "FLOAT": "float32",
    "UINT8": "uint8",
    "INT8": "int8",
    "UINT16": "uint16",
    "INT16": "int16",
    "INT32": "int32",
    "INT64": "int64",
    "BOOL": "bool",
    "FLOAT16": "float16",
    "DOUBLE": "float64",
    "BFLOAT16": "bfloat16",
}


def elem_type_name(code: int | str) -> str:
    """Numpy-style name of an ONNX element type code (or an opset-1 type string)."""
    if isinstance(code, str):
        return ONNX_TYPE_STRINGS.get(code.upper(), code.lower())
    return DTYPE_NAMES.get(int(code), f"onnx_type_{code}")


def dtype(info: TensorInfo | str) -> Dtype:
    """The :class:`Dtype` literal of a tensor (or of a numpy-style dtype name)."""
    return Dtype(info if isinstance(info, str) else info.dtype)


def const(node: NodeView, i: int) -> np.ndarray | None:
    """The compile-time value of input ``i`` (None if absent or not constant)."""
    info = node.input(i)
    return None if info is None else info.const


def has_input(node: NodeView, i: int) -> bool:
    """Whether optional input ``i`` is present."""
    return node.input(i) is not None


def const_ints(node: NodeView, i: int) -> list[int] | None:
    """Constant input ``i`` as a list of Python ints (None if absent or not constant)."""
    c = const(node, i)
    return None if c is None else [int(v) for v in np.asarray(c).reshape(-1)]


def shape(node: NodeView, i: int = 0) -> tuple[int, ...] | None:
    """Static shape of input ``i`` (None if unknown or absent)."""
    info = node.input(i)
    return None if info is None else info.shape


def known_shape(node: NodeView, i: int = 0) -> tuple[int, ...]:
    """Static shape of input ``i`` for a rule that needs it; raises
    :class:`~ramiel.errors.DynamicShapeError` naming the node and input when it is unknown or
    absent (the lowering's static-shape check normally reports this before any rule runs)."""
    s = shape(node, i)
    if s is None:
        raise DynamicShapeError(
            f"{node.op_type} node '{node.name}': input {i} has no static shape, which its "
            "lowering needs (bind symbolic dimensions with --input-shape)"
        )
    return s


_T = TypeVar("_T")


def known(value: _T | None, node: NodeView, what: str) -> _T:
    """``value`` for a rule whose check made sure it is known; raises
    :class:`~ramiel.errors.DynamicShapeError` naming the node and ``what`` (e.g. "the axes")
    when it is ``None`` after all."""
    if value is None:
        raise DynamicShapeError(f"{node.op_type} node '{node.name}': {what} is unknown")
    return value


def rank(node: NodeView, i: int = 0) -> int | None:
    """Rank of input ``i`` (None if unknown)."""
    s = shape(node, i)
    return None if s is None else len(s)


def out_shape(node: NodeView, i: int = 0) -> tuple[int, ...] | None:
    """Static shape of output ``i`` (None if unknown)."""
    info = node.output(i)
    return None if info is None else info.shape


def in_dtype(node: NodeView, i: int = 0) -> str:
    """Element type of input ``i``."""
    info = node.input(i)
    return "undefined" if info is None else info.dtype


def out_dtype(node: NodeView, i: int = 0) -> str:
    """Element type of output ``i``."""
    info = node.output(i)
    return "undefined" if info is None else info.dtype


def norm_axis(axis: int, r: int) -> int:
    """Normalise a possibly negative axis for rank ``r``."""
    return axis + r if axis < 0 else axis


def scalar_literal(value: Any, dtype_name: str) -> int | float | bool:
    """A Python scalar literal of the right kind for a tensor of ``dtype_name``."""
    v = np.asarray(value).reshape(-1)[0] if np.size(value) else 0
    if dtype_name == "bool":
        return bool(v)
    if is_int(dtype_name):
        return int(v)
    return short_float(float(v))


def int_tuple(v: Sequence[int]) -> tuple[int, ...]:
    """A tuple of Python ints."""
    return tuple(int(x) for x in v)


def is_floating(info: TensorInfo | None) -> bool:
    """Whether the tensor has a floating-point element type."""
    return info is not None and is_float(info.dtype)
