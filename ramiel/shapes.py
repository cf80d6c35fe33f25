"""Integer shape arithmetic of ONNX operators, shared by the lowering (static shapes at compile
time) and the runtime helpers (:mod:`ramiel.runtime.ops`, shapes at run time).

Plain Python on ``int`` values, importing nothing: the lowering reads it without importing
torch (an interpreter start of ``ramiel-opt --lower-to-torchpy`` stays ~2 s cheaper), and the
runtime, which generated code imports alone, without importing the compiler.
"""

from __future__ import annotations

__all__ = ["pool_output_size"]


def pool_output_size(
    size: int, kernel: int, stride: int, dilation: int, pad_begin: int, pad_end: int, ceil: bool
) -> int:
    """Output length of a pooling window sliding over ``size`` input elements.

    ``floor_or_ceil((size + pad_begin + pad_end - ((kernel - 1) * dilation + 1)) / stride) + 1``;
    in ceil mode a last window that would start in the end padding is dropped (PyTorch's and
    onnxruntime's rule, and ONNX shape inference's from opset 22).
    """
    span = size + pad_begin + pad_end - ((kernel - 1) * dilation + 1)
    out = (-(-span // stride) if ceil else span // stride) + 1
    if ceil and (out - 1) * stride >= size + pad_begin:
        out -= 1
    return out
