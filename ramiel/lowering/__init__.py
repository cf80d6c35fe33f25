"""ONNX → PyTorch lowering rules.

:func:`lower_node` emits, for one ONNX node, a few PyTorch/Python calls computing it exactly as the
ONNX specification says; :func:`check_supported` says why a node cannot be lowered;
:func:`refine_output_shapes` corrects output shapes where onnx shape inference is wrong. Rules live in
the modules :mod:`.elementwise`, :mod:`.nn`, :mod:`.tensor`, :mod:`.reduce`, :mod:`.resize` and :mod:`.rnn`
(imported here so that :data:`RULES` is complete); helpers they call at runtime are in
:mod:`ramiel.runtime.ops`. See :mod:`.api` for the interface.
"""

from ramiel.lowering import (  # noqa: F401, E402  (registers rules)
    elementwise,
    nn,
    reduce,
    resize,
    rnn,
    tensor,
)
from ramiel.lowering.api import (
    RULES,
    Dtype,
    Emitter,
    NodeView,
    Rule,
    TensorInfo,
    Value,
    check_supported,
    lower_node,
    refine_output_shapes,
    rule,
)

__all__ = [
    "RULES",
    "Dtype",
    "Emitter",
    "NodeView",
    "Rule",
    "TensorInfo",
    "Value",
    "check_supported",
    "lower_node",
    "refine_output_shapes",
    "rule",
]
