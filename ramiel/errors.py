"""Errors Ramiel reports to users.

Every error a user can cause (bad ONNX file, unsupported op, invalid IR, a worker that dies) is a
subclass of :class:`RamielError`; the command-line tools print ``error: <message>`` on one line and
exit with status 1 instead of showing a traceback.
"""

from __future__ import annotations


class RamielError(Exception):
    """Base class of all user-facing Ramiel errors."""


class ImportError_(RamielError):
    """The ONNX file cannot be read, checked or shape-inferred."""


TENSOR = "<tensor>"
"""The op type of an :class:`UnsupportedOpError` item about a tensor (its element type or kind
of value), not a node: its message names the tensor."""


class UnsupportedOpError(RamielError):
    """An ONNX operator (or an attribute value of one) that Ramiel cannot compile.

    ``items`` lists ``(op_type, node_name, opset, what)`` tuples so that every unsupported op of a
    model is reported at once.
    """

    def __init__(self, items: list[tuple[str, str, int, str]]):
        self.items = items
        groups: dict[tuple[str, int, str], list[str]] = {}
        for op, node, opset, what in items:
            groups.setdefault((op, opset, what), []).append(node)
        lines = []
        for (op, opset, what), nodes in groups.items():
            shown = ", ".join(f"'{n}'" for n in nodes[:4])
            more = f" and {len(nodes) - 4} more" if len(nodes) > 4 else ""
            because = f": {what}" if what else ""
            if op == TENSOR:  # a value, not a node: a graph input, an initializer, a result
                noun = "tensor" if len(nodes) == 1 else f"{len(nodes)} tensors"
                lines.append(f"{noun} {shown}{more} (opset {opset}){because}")
                continue
            noun = "node" if len(nodes) == 1 else f"{len(nodes)} nodes"
            lines.append(f"{op} ({noun} {shown}{more}; opset {opset}){because}")
        super().__init__("unsupported ONNX operator(s): " + "; ".join(lines))


class DynamicShapeError(RamielError):
    """An input dimension is symbolic or unknown and was not bound with ``--input-shape``."""


class InputShapeError(DynamicShapeError, ValueError):
    """A ``--input-shape`` value that is not ``NAME=D0,D1,...`` with positive sizes."""


class DataDependentShapeError(RamielError):
    """Values whose shape is not static after import and constant folding: it depends on the
    input data (NonZero, a Reshape or Expand whose shape operand is computed at run time, ...).

    Ramiel sizes every tensor and channel buffer at compile time, so such a model cannot be
    compiled; :func:`~ramiel.lowering.to_torchpy.lower_to_torchpy` raises this before
    lowering. ``items`` lists ``(op_type, node_name, opset, value, shape)`` tuples, one per op
    whose inputs are static but whose result is not (values computed from such a result are
    not listed again): ``value`` is the result's SSA name (from the ONNX tensor name) and
    ``shape`` its IR shape (``2x?``: ``?`` is a dimension only the data decide; ``*``: unknown
    rank).
    """

    def __init__(self, items: list[tuple[str, str, int, str, str]]):
        self.items = items
        parts = [
            f"{op} node '{node}' (opset {opset}): {value} has shape {shape}"
            for op, node, opset, value, shape in items[:4]
        ]
        more = f"; and {len(items) - 4} more" if len(items) > 4 else ""
        super().__init__(
            "shape not static: it depends on the input data, and Ramiel sizes every tensor and "
            "channel buffer at compile time: " + "; ".join(parts) + more
        )


class SchedulingError(RamielError):
    """A clustering request that cannot be satisfied (a cycle, zero clusters, ...)."""


class RuntimeFailure(RamielError):
    """A worker of a generated parallel module raised, died or timed out."""


#: The words that start the message of an error that is Ramiel's fault, not the user's (a bug):
#: the tools print ``error: internal error: <type>: <message> (set RAMIEL_DEBUG=1 ...)``.
INTERNAL_ERROR = "internal error"

#: The most bytes one tensor may take: 2**47 (128 TiB), the user address space of x86-64 and
#: AArch64 Linux. No machine can allocate a larger tensor, so a shape beyond it is rejected where
#: it is read (``--input-shape``, the verifiers) instead of failing at run time.
MAX_TENSOR_BYTES = 2**47


def internal_error_message(e: BaseException) -> str:
    """The one line the tools print for an unexpected exception ``e`` (a bug in Ramiel)."""
    text = " ".join(str(e).split())
    return f"{INTERNAL_ERROR}: {type(e).__name__}: {text} (set RAMIEL_DEBUG=1 for the traceback)"
