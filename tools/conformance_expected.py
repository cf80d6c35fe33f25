"""Expected failures of the ONNX backend conformance suite, each with its reason.

Every node test case of the selected op types (``ramiel.tools.conformance.SELECTED_OPS``) that
does not pass through :mod:`ramiel.backend` is listed here; ``tests/conformance`` turns the
entries into strict xfails, so CI fails both when a case that passed starts failing and when a
listed case starts passing (then remove it here, and rerun ``python -m ramiel.tools.conformance
--markdown docs/conformance.md`` to refresh the table). It is part of the package, so the
conformance tool runs from a non-editable install.

``UNSUPPORTED``: Ramiel rejects the case at compile time with an
:class:`~ramiel.errors.UnsupportedOpError`; the test also checks that the error names the op (or
the tensor), the opset and the second string of the entry (what is missing). ``WRONG``: the case
compiles and runs, and its result differs from the test's expected output because that output is
wrong by the ONNX specification (design.md §8: derived from the spec, and the second oracle says
who agrees).

Torch facts below were checked with torch 2.13 on CPU.
"""

from __future__ import annotations

_FLOAT4 = (
    "FLOAT4E2M1 has no PyTorch dtype (only the packed float4_e2m1fn_x2, two values per byte, "
    "without conversions)"
)
_SUB_BYTE = (
    "4-bit and 2-bit integer element types have no PyTorch dtype with kernels (torch.int4/uint4 "
    "are shell dtypes)"
)
_STRING = "string tensors have no PyTorch counterpart"
_RANDOM = (
    "Dropout in training mode draws a random mask; the expected output comes from numpy's "
    "generator (np.random.seed(0)), which no other runtime reproduces, so Ramiel rejects it"
)
_NON_TENSOR = (
    "sequence and optional values are not tensors; Ramiel's IR and generated code carry tensors "
    "only"
)

#: Reasons that are about PyTorch itself (no dtype, or no kernel and no exact workaround), not
#: about what Ramiel implements; the table reports the pass rate without these cases too.
OUTSIDE_PYTORCH = frozenset({_FLOAT4, _SUB_BYTE, _STRING})

#: case -> (reason, a string the UnsupportedOpError message must contain)
UNSUPPORTED: dict[str, tuple[str, str]] = {
    "test_cast_FLOAT16_to_FLOAT4E2M1": (_FLOAT4, "FLOAT4E2M1"),
    "test_cast_FLOAT16_to_INT2": (_SUB_BYTE, "INT2"),
    "test_cast_FLOAT16_to_INT4": (_SUB_BYTE, "INT4"),
    "test_cast_FLOAT16_to_UINT2": (_SUB_BYTE, "UINT2"),
    "test_cast_FLOAT16_to_UINT4": (_SUB_BYTE, "UINT4"),
    "test_cast_FLOAT4E2M1_to_FLOAT": (_FLOAT4, "FLOAT4E2M1"),
    "test_cast_FLOAT4E2M1_to_FLOAT16": (_FLOAT4, "FLOAT4E2M1"),
    "test_cast_FLOAT_to_FLOAT4E2M1": (_FLOAT4, "FLOAT4E2M1"),
    "test_cast_FLOAT_to_INT2": (_SUB_BYTE, "INT2"),
    "test_cast_FLOAT_to_INT4": (_SUB_BYTE, "INT4"),
    "test_cast_FLOAT_to_UINT2": (_SUB_BYTE, "UINT2"),
    "test_cast_FLOAT_to_UINT4": (_SUB_BYTE, "UINT4"),
    "test_cast_INT2_to_FLOAT": (_SUB_BYTE, "INT2"),
    "test_cast_INT2_to_FLOAT16": (_SUB_BYTE, "INT2"),
    "test_cast_INT2_to_INT8": (_SUB_BYTE, "INT2"),
    "test_cast_INT4_to_FLOAT": (_SUB_BYTE, "INT4"),
    "test_cast_INT4_to_FLOAT16": (_SUB_BYTE, "INT4"),
    "test_cast_INT4_to_INT8": (_SUB_BYTE, "INT4"),
    "test_cast_UINT2_to_FLOAT": (_SUB_BYTE, "UINT2"),
    "test_cast_UINT2_to_FLOAT16": (_SUB_BYTE, "UINT2"),
    "test_cast_UINT2_to_UINT8": (_SUB_BYTE, "UINT2"),
    "test_cast_UINT4_to_FLOAT": (_SUB_BYTE, "UINT4"),
    "test_cast_UINT4_to_FLOAT16": (_SUB_BYTE, "UINT4"),
    "test_cast_UINT4_to_UINT8": (_SUB_BYTE, "UINT4"),
    "test_equal_string": (_STRING, "STRING"),
    "test_equal_string_broadcast": (_STRING, "STRING"),
    "test_identity_opt": (_NON_TENSOR, "non-tensor"),
    "test_if_opt": (_NON_TENSOR, "sequence, map, optional or string values"),
    "test_if_seq": (_NON_TENSOR, "sequence, map, optional or string values"),
    "test_loop13_seq": (_NON_TENSOR, "non-tensor"),
    "test_loop16_seq_none": (_NON_TENSOR, "non-tensor"),
    "test_identity_sequence": (_NON_TENSOR, "non-tensor"),
    "test_training_dropout": (_RANDOM, "training mode"),
    "test_training_dropout_default": (_RANDOM, "training mode"),
    "test_training_dropout_default_mask": (_RANDOM, "training mode"),
    "test_training_dropout_mask": (_RANDOM, "training mode"),
}

_ALIGN_CORNERS = (
    "the expected output is wrong by the spec: the ONNX reference implementation uses the "
    "fractional output_width = in * scale as length_resized in align_corners' "
    "x_original = x_resized * (length_original - 1) / (length_resized - 1), while the Resize "
    "spec defines length_resized as the length of the resized tensor (an integer). With the "
    "integer length the sampling points are exact ({0}); onnxruntime 1.31 returns the same "
    "values as Ramiel"
)

#: case -> (reason, what the spec gives)
WRONG: dict[str, tuple[str, str]] = {
    "test_resize_downsample_scales_linear_align_corners": (
        _ALIGN_CORNERS.format("columns 0 and 3 of [1, 2, 3, 4], so [[1, 4]]"),
        "[[1, 4]], the test expects [[1, 3.142857]]",
    ),
    "test_resize_downsample_scales_cubic_align_corners": (
        _ALIGN_CORNERS.format(
            "coordinates 0, 1.5, 3 of the 4x4 ramp 1..16, where cubic interpolation of a "
            "linear ramp is exact"
        ),
        "[[1, 2.5, 4], [7, 8.5, 10], [13, 14.5, 16]], the test expects 2.395, 3.790, ...",
    ),
}


def reason(case: str) -> str | None:
    """The listed reason of ``case`` (None if it is not listed)."""
    if case in UNSUPPORTED:
        return UNSUPPORTED[case][0]
    if case in WRONG:
        return WRONG[case][0]
    return None
