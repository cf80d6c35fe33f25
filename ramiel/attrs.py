"""The IR's attribute keys that passes share, with typed getters and setters.

One home for the string keys Ramiel writes on ops, functions and their arguments, so that a pass
never spells a key as a literal or imports it from another pass.

* ``onnx.name`` (:data:`ONNX_NAME`): argument and result attribute of ``@main``, the ONNX graph
  input or output name (:func:`io_name_attrs`, :func:`io_names`).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, StringAttr

from ramiel.dialects.torchpy import attr_text

ONNX_NAME = "onnx.name"
"""Argument/result attribute of ``@main`` holding the ONNX graph input/output name."""


def io_name_attrs(names: Sequence[str]) -> ArrayAttr[DictionaryAttr]:
    """``arg_attrs``/``res_attrs`` of ``@main`` that carry ``names`` as :data:`ONNX_NAME`."""
    return ArrayAttr([DictionaryAttr({ONNX_NAME: StringAttr(n)}) for n in names])


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
