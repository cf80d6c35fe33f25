"""The printer's torch dtype table (ramiel.pysource.TORCH_DTYPE_NAMES) against torch itself."""

from __future__ import annotations

import numpy as np
import torch
from xdsl.dialects.builtin import TensorType

from ramiel.dtypes import ELEMENT_TYPES, numpy_dtype_of
from ramiel.pysource import TORCH_DTYPE_NAMES, tensor_type_problem


def test_every_name_is_a_torch_dtype_of_the_numpy_element_size():
    for name in sorted(TORCH_DTYPE_NAMES):
        dtype = getattr(torch, name, None)
        assert isinstance(dtype, torch.dtype), name
        assert dtype.itemsize == numpy_dtype_of_name(name).itemsize, name


def test_every_onnx_element_type_with_a_torch_dtype_is_in_the_table():
    for onnx_dtype, el in ELEMENT_TYPES.items():
        name = numpy_dtype_of(el).name
        has_torch = isinstance(getattr(torch, name, None), torch.dtype)
        assert (name in TORCH_DTYPE_NAMES) == has_torch, (onnx_dtype, name)


def test_tensor_type_problem_sizes_by_the_element_type():
    f32, i64 = ELEMENT_TYPES[1], ELEMENT_TYPES[7]
    assert tensor_type_problem(TensorType(f32, [2, 3])) is None
    # 2**59 int64 elements are 2**62 bytes: more than MAX_TENSOR_BYTES; as float32 half that
    big = tensor_type_problem(TensorType(i64, [2**30, 2**29]))
    assert big is not None and str(2**62) in big


def numpy_dtype_of_name(name: str) -> np.dtype:
    for el in ELEMENT_TYPES.values():
        if numpy_dtype_of(el).name == name:
            return numpy_dtype_of(el)
    raise AssertionError(f"no onnx element type has the numpy dtype {name}")
