"""The ``onnx`` dialect: one op per ONNX operator, named and printed like onnx-mlir.

Every operator of the default ONNX domain (``ai.onnx``) that Ramiel can represent gets an op class
``onnx.<OpType>`` generated from the operator schemas that ship with the ``onnx`` package
(``onnx.defs``), the way onnx-mlir generates its ops from the same schemas. The textual form is
onnx-mlir's generic form::

    %y = "onnx.Conv"(%X, %W, %B) <{group = 1 : si64, strides = [2 : si64, 2 : si64]}>
         {onnx_node_name = "conv1"} : (tensor<1x3x224x224xf32>, ...) -> tensor<1x64x112x112xf32>

* Operands follow the schema's formal inputs in order; a missing optional input is an SSA value of
  type ``none`` produced by ``onnx.NoValue``. Trailing missing optional inputs may also be omitted.
* ONNX attributes are op *properties* with the spec's names: INT -> ``si64`` integer, FLOAT -> ``f32``
  float, STRING -> string, INTS/FLOATS/STRINGS -> arrays, TENSOR -> ``dense<...>`` (small) or
  ``dense_resource<key>`` (a tensor stored in the module's external safetensors weights file, see
  :mod:`ramiel.weights`).
* The ONNX opset the ops follow is the module attribute ``onnx.opset`` (default: the newest opset
  the installed ``onnx`` knows), or an op's own ``onnx.opset`` attribute: the fusion passes
  (``--fuse-layer-norm``, ``--fuse-gelu``, ``--fuse-attention``) create ops of a later opset
  than the model's, e.g. ``"onnx.Gelu"(%x) {onnx.opset = 20 : i64}`` in an opset-14 model, which
  follow that opset's schema. The verifier checks each op against the schema *of its opset*:
  arity, attribute names, kinds and required attributes, element-type constraints, and the shapes
  of the ops whose shape rules are simple (broadcasting element-wise ops, Conv, MatMul, Gemm,
  Concat).
* The ONNX node name is kept in the discardable attribute ``onnx_node_name``.
* Control flow: ``onnx.If``, ``onnx.Loop`` and ``onnx.Scan`` hold their GRAPH attributes as
  regions (``then_branch``/``else_branch``, ``body``; onnx-mlir's ONNXIfOp/ONNXLoopOp/ONNXScanOp),
  each one block ending in ``onnx.Yield``. Regions use values of the enclosing blocks directly
  (ONNX's outer-scope names), so a region op depends on its operands *and* on the values its
  regions capture (:func:`dependences`); ops never move across a region boundary (a fusion or
  reordering stays inside one block). :func:`verify_regions` says what is checked::

    %r = "onnx.If"(%c) ({
      %a = "onnx.Relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
      "onnx.Yield"(%a) : (tensor<4xf32>) -> ()
    }, {
      "onnx.Yield"(%x) : (tensor<4xf32>) -> ()
    }) {onnx_node_name = "if0"} : (tensor<i1>) -> tensor<4xf32>

Layout: the op classes (``ConvOp``, ...; :data:`OPS`) are generated ahead of time from ``onnx.defs``
into :mod:`ramiel.dialects.onnx_ops` by ``scripts/gen_onnx_dialect.py`` (each with named
accessors: ``conv.X``, ``conv.W``, ``conv.B``, ``conv.group``); their base class, the verifier and
the helpers are in :mod:`ramiel.dialects.onnx_base`; this module gathers both. The op categories
the analyses key on (``Elementwise``, ``Broadcasting``, ``LayoutAnchor``, ...) are xDSL traits of
:mod:`ramiel.dialects.onnx_traits`, which the generated classes carry (``op.has_trait(...)``).

Source: ONNX operator specification (https://onnx.ai/onnx/operators/) via ``onnx.defs``; textual
conventions from onnx-mlir's ``ONNXOps.td.inc``.
"""

from __future__ import annotations

from collections.abc import Sequence

import onnx
from xdsl.ir import Attribute, Dialect, Region, SSAValue

from ramiel.attrs import set_str
from ramiel.dialects.onnx_base import (
    _REPRESENTABLE_NAMES,
    FRESH_RESULT_OPS,
    INPLACE_ATTR,
    INPLACE_OPS,
    LATEST_OPSET,
    MIN_OPSET,
    NODE_NAME_ATTR,
    OPSET_ATTR,
    REGION_ATTRS,
    REPRESENTABLE_KINDS,
    NoValueOp,
    OnnxOp,
    SchemaInfo,
    YieldOp,
    attr_from_python,
    attr_kind_name,
    broadcast_shapes,
    captured_values,
    compatible,
    dependences,
    drop_invalid_inplace,
    fits,
    inplace_violation,
    loop_trip_count,
    opset_of,
    python_from_attr,
    region_yield,
    representable,
    schema_info,
    static_shape,
    tensor_type,
    verify_regions,
)
from ramiel.dialects.onnx_ops import OPS
from ramiel.dtypes import ELEMENT_TYPES, element_type_of, i1, numpy_dtype_of, onnx_dtype_of

__all__ = [
    "ONNX",
    "OPS",
    "create",
    "unrepresentable_reason",
    "attr_from_python",
    "broadcast_shapes",
    "captured_values",
    "compatible",
    "dependences",
    "drop_invalid_inplace",
    "element_type_of",
    "ELEMENT_TYPES",
    "fits",
    "FRESH_RESULT_OPS",
    "i1",
    "INPLACE_ATTR",
    "INPLACE_OPS",
    "inplace_violation",
    "LATEST_OPSET",
    "loop_trip_count",
    "MIN_OPSET",
    "NODE_NAME_ATTR",
    "NoValueOp",
    "numpy_dtype_of",
    "onnx_dtype_of",
    "OnnxOp",
    "OPSET_ATTR",
    "opset_of",
    "python_from_attr",
    "REGION_ATTRS",
    "region_yield",
    "representable",
    "REPRESENTABLE_KINDS",
    "schema_info",
    "SchemaInfo",
    "static_shape",
    "tensor_type",
    "verify_regions",
    "YieldOp",
]

ONNX = Dialect("onnx", [NoValueOp, YieldOp, *OPS.values()], [])
"""The ``onnx`` dialect."""


#: what a deprecated operator version did differently, for its error (``unrepresentable_reason``)
_DEPRECATED_HINTS = {
    "GroupNormalization": " (its scale and bias hold one value per group, not per channel)",
}


def unrepresentable_reason(op_type: str, opset: int) -> str | None:
    """Why ``op_type`` at ``opset`` cannot be an ``onnx`` dialect op, or ``None`` if it can."""
    info = schema_info(op_type, opset)
    if info is None:
        try:
            old = onnx.defs.get_schema(op_type, opset, "")
        except onnx.defs.SchemaError:
            return f"no ONNX operator '{op_type}' in the default domain at opset {opset}"
        later = [
            v for v in range(opset + 1, LATEST_OPSET + 1) if schema_info(op_type, v) is not None
        ]
        redefined = (
            f"; opset {later[0]} redefines it: export the model at opset {later[0]} or later"
            if later
            else ""
        )
        hint = _DEPRECATED_HINTS.get(op_type, "")
        return f"'{op_type}' of opset {old.since_version} is deprecated in ONNX{hint}{redefined}"
    if op_type not in OPS:
        s = info.schema
        if any(a.type not in REPRESENTABLE_KINDS for a in s.attributes.values()):
            kinds = sorted(
                {attr_kind_name(a.type) for a in s.attributes.values()} - _REPRESENTABLE_NAMES
            )
            if "GRAPH" in kinds or "GRAPHS" in kinds:
                return "subgraph attributes are only supported on If, Loop and Scan"
            return f"attributes of kind {', '.join(kinds)} are not supported"
        return "sequence, map, optional or string values are not supported"
    return None


def create(
    op_type: str,
    operands: Sequence[SSAValue],
    result_types: Sequence[Attribute],
    attrs: dict[str, Attribute] | None = None,
    node_name: str | None = None,
    regions: Sequence[Region] = (),
) -> OnnxOp:
    """Create ``onnx.<op_type>`` with the given operands, result types and ONNX attributes
    (and, for If, Loop and Scan, its regions in the order of :data:`REGION_ATTRS`)."""
    cls = OPS[op_type]
    op = cls.create(
        operands=list(operands),
        result_types=list(result_types),
        properties=dict(attrs or {}),
        regions=list(regions),
    )
    if node_name:
        set_str(op, NODE_NAME_ATTR, node_name)
    return op
