"""Element types: ONNX ``TensorProto.DataType`` <-> MLIR element types <-> numpy dtypes.

The one home of these tables: the ``onnx`` dialect (:mod:`ramiel.dialects.onnx` re-exports
them), the importer, the verifiers of printable Python (:mod:`ramiel.pysource`), the folder and
the lowering (its numpy-style dtype names, :data:`DTYPE_NAMES`) read them from here. Signless
integers stand for ONNX's signed ones and ``i1`` for bool, as in onnx-mlir.
"""

from __future__ import annotations

import numpy as np
import onnx
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float8E4M3FNType,
    Float8E4M3FNUZType,
    Float8E5M2FNUZType,
    Float8E5M2Type,
    Float8E8M0FNUType,
    Float16Type,
    Float64Type,
    IntegerType,
    Signedness,
    f32,
)
from xdsl.ir import Attribute

i1 = IntegerType(1)
SIGNLESS = {8: IntegerType(8), 16: IntegerType(16), 32: IntegerType(32), 64: IntegerType(64)}
UNSIGNED = {w: IntegerType(w, Signedness.UNSIGNED) for w in (8, 16, 32, 64)}

#: ONNX ``TensorProto`` data type -> MLIR element type (signless integers for signed ONNX integers,
#: as in onnx-mlir; ``i1`` for bool; the float8 types are MLIR's builtin ``f8E4M3FN``,
#: ``f8E4M3FNUZ``, ``f8E5M2``, ``f8E5M2FNUZ`` and ``f8E8M0FNU``, with the same encodings).
ELEMENT_TYPES: dict[int, Attribute] = {
    onnx.TensorProto.FLOAT: f32,
    onnx.TensorProto.DOUBLE: Float64Type(),
    onnx.TensorProto.FLOAT16: Float16Type(),
    onnx.TensorProto.BFLOAT16: BFloat16Type(),
    onnx.TensorProto.BOOL: i1,
    onnx.TensorProto.INT8: SIGNLESS[8],
    onnx.TensorProto.INT16: SIGNLESS[16],
    onnx.TensorProto.INT32: SIGNLESS[32],
    onnx.TensorProto.INT64: SIGNLESS[64],
    onnx.TensorProto.UINT8: UNSIGNED[8],
    onnx.TensorProto.UINT16: UNSIGNED[16],
    onnx.TensorProto.UINT32: UNSIGNED[32],
    onnx.TensorProto.UINT64: UNSIGNED[64],
    onnx.TensorProto.FLOAT8E4M3FN: Float8E4M3FNType(),
    onnx.TensorProto.FLOAT8E4M3FNUZ: Float8E4M3FNUZType(),
    onnx.TensorProto.FLOAT8E5M2: Float8E5M2Type(),
    onnx.TensorProto.FLOAT8E5M2FNUZ: Float8E5M2FNUZType(),
    onnx.TensorProto.FLOAT8E8M0: Float8E8M0FNUType(),
}
ONNX_OF_ELEMENT = {v: k for k, v in ELEMENT_TYPES.items()}

#: ONNX type string used in schema type constraints (``tensor(float)``) per data type.
SCHEMA_TYPE_STRINGS: dict[int, str] = {
    onnx.TensorProto.FLOAT: "float",
    onnx.TensorProto.DOUBLE: "double",
    onnx.TensorProto.FLOAT16: "float16",
    onnx.TensorProto.BFLOAT16: "bfloat16",
    onnx.TensorProto.BOOL: "bool",
    onnx.TensorProto.INT8: "int8",
    onnx.TensorProto.INT16: "int16",
    onnx.TensorProto.INT32: "int32",
    onnx.TensorProto.INT64: "int64",
    onnx.TensorProto.UINT8: "uint8",
    onnx.TensorProto.UINT16: "uint16",
    onnx.TensorProto.UINT32: "uint32",
    onnx.TensorProto.UINT64: "uint64",
    onnx.TensorProto.FLOAT8E4M3FN: "float8e4m3fn",
    onnx.TensorProto.FLOAT8E4M3FNUZ: "float8e4m3fnuz",
    onnx.TensorProto.FLOAT8E5M2: "float8e5m2",
    onnx.TensorProto.FLOAT8E5M2FNUZ: "float8e5m2fnuz",
    onnx.TensorProto.FLOAT8E8M0: "float8e8m0",
}


#: ONNX ``TensorProto`` data type -> the numpy-style name the lowering uses for it
#: (:class:`ramiel.lowering.TensorInfo`'s ``dtype``; torch's names for the float8 types).
DTYPE_NAMES: dict[int, str] = {
    onnx.TensorProto.FLOAT: "float32",
    onnx.TensorProto.DOUBLE: "float64",
    onnx.TensorProto.FLOAT16: "float16",
    onnx.TensorProto.BFLOAT16: "bfloat16",
    onnx.TensorProto.INT8: "int8",
    onnx.TensorProto.INT16: "int16",
    onnx.TensorProto.INT32: "int32",
    onnx.TensorProto.INT64: "int64",
    onnx.TensorProto.UINT8: "uint8",
    onnx.TensorProto.UINT16: "uint16",
    onnx.TensorProto.UINT32: "uint32",
    onnx.TensorProto.UINT64: "uint64",
    onnx.TensorProto.BOOL: "bool",
    onnx.TensorProto.STRING: "string",
    onnx.TensorProto.COMPLEX64: "complex64",
    onnx.TensorProto.COMPLEX128: "complex128",
    onnx.TensorProto.FLOAT8E4M3FN: "float8_e4m3fn",
    onnx.TensorProto.FLOAT8E4M3FNUZ: "float8_e4m3fnuz",
    onnx.TensorProto.FLOAT8E5M2: "float8_e5m2",
    onnx.TensorProto.FLOAT8E5M2FNUZ: "float8_e5m2fnuz",
    onnx.TensorProto.FLOAT8E8M0: "float8_e8m0fnu",
}


def dtype_name(elem_type: int) -> str:
    """Numpy-style name of an ONNX element type (``TensorProto.FLOAT`` -> ``"float32"``); a type
    outside :data:`DTYPE_NAMES` by its ONNX name in lower case, ``UNDEFINED`` as ``"undefined"``."""
    if elem_type in DTYPE_NAMES:
        return DTYPE_NAMES[elem_type]
    if elem_type == onnx.TensorProto.UNDEFINED:
        return "undefined"
    return onnx.TensorProto.DataType.Name(elem_type).lower()


def element_type_of(onnx_dtype: int) -> Attribute:
    """MLIR element type for an ONNX ``TensorProto.DataType``; raises ``KeyError`` if unsupported."""
    return ELEMENT_TYPES[onnx_dtype]


def onnx_dtype_of(element_type: Attribute) -> int:
    """ONNX ``TensorProto.DataType`` of an MLIR element type; raises ``KeyError`` if unknown."""
    return ONNX_OF_ELEMENT[element_type]


def numpy_dtype_of(element_type: Attribute) -> np.dtype:
    """numpy dtype of an MLIR element type (``f32`` -> ``float32``, ``i1`` -> ``bool``...)."""
    return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(onnx_dtype_of(element_type)))
