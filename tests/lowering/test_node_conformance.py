"""The lowering rules against the ONNX node conformance tests.

Every single-node test case of ``onnx.backend.test.case.node`` whose op has a rule is run through
``run_graph_eagerly`` and compared with the case's expected outputs (the ONNX reference), and —
where onnxruntime can load the case — with onnxruntime as a second oracle.

Cases with element types PyTorch lacks (uint64 beyond the ops Ramiel computes on int64, float8
arithmetic, 4-bit and 2-bit integers, float4, strings) must be *rejected* with UnsupportedOpError, as must the explicit entries of
``UNSUPPORTED``. ``XFAIL_EXPECTED`` lists cases where the test's expected values are wrong by the
spec (design.md §8), each with the reason; onnxruntime agrees with our value there.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from _lowering_cases import (
    NodeCase,
    assert_close,
    expanded_cases,
    frozen_model_and_feeds,
    supported_node_cases,
)

from ramiel.errors import UnsupportedOpError
from ramiel.lowering.api import (
    FLOAT8_DTYPES,
    FLOAT8_OPS,
    FLOAT_DTYPES,
    SUPPORTED_DTYPES,
    UINT64_IN_RULE,
    UINT64_VIA_INT64,
    UNSIGNED_NATIVE_OPS,
)
from ramiel.lowering.node_view import Mismatch, dtype_name, run_graph_eagerly

#: Cases that must raise UnsupportedOpError, with a fragment of the expected reason.
UNSUPPORTED = {
    "test_training_dropout_default": "random",
    "test_training_dropout_default_mask": "random",
    "test_training_dropout": "random",
    "test_training_dropout_mask": "random",
    "test_identity_sequence": "non-tensor",
    "test_identity_opt": "non-tensor",
    # Attention (the fused form of --fuse-attention) without a KV cache, softcap, extra
    # outputs, local windows, or a causal mask combined with attn_mask
    "test_attention_4d_attn_mask_3d_causal": "is_causal together with attn_mask",
    "test_attention_4d_attn_mask_4d_causal": "is_causal together with attn_mask",
    "test_attention_4d_with_past_and_present": "a KV cache",
    "test_attention_4d_gqa_with_past_and_present": "a KV cache",
    "test_attention_4d_gqa_with_past_and_present_fp16": "a KV cache",
    "test_attention_4d_diff_heads_with_past_and_present": "a KV cache",
    "test_attention_4d_diff_heads_with_past_and_present_mask3d": "a KV cache",
    "test_attention_4d_diff_heads_with_past_and_present_mask4d": "a KV cache",
    "test_attention_4d_softcap": "softcap or qk_matmul_output_mode",
    "test_attention_4d_gqa_softcap": "softcap or qk_matmul_output_mode",
    "test_attention_4d_diff_heads_sizes_softcap": "softcap or qk_matmul_output_mode",
    "test_attention_4d_with_qk_matmul": "qk_matmul_output outputs",
    "test_attention_4d_with_qk_matmul_bias": "qk_matmul_output outputs",
    "test_attention_4d_with_qk_matmul_softcap": "qk_matmul_output outputs",
    "test_attention_4d_with_qk_matmul_softmax": "qk_matmul_output outputs",
    "test_attention_4d_with_past_and_present_qk_matmul_bias": "a KV cache",
    "test_attention_4d_with_past_and_present_qk_matmul_bias_3d_mask": "a KV cache",
    "test_attention_4d_with_past_and_present_qk_matmul_bias_4d_mask": "a KV cache",
    "test_attention_4d_with_past_and_present_qk_matmul_bias_3d_mask_causal": "a KV cache",
    "test_attention_4d_with_past_and_present_qk_matmul_bias_4d_mask_causal": "a KV cache",
    "test_attention_4d_with_past_and_present_qk_matmul": "a KV cache",
    "test_attention_3d_softcap": "softcap or qk_matmul_output_mode",
    "test_attention_3d_gqa_softcap": "softcap or qk_matmul_output_mode",
    "test_attention_3d_diff_heads_sizes_softcap": "softcap or qk_matmul_output_mode",
    "test_attention_3d_with_past_and_present": "a KV cache",
    "test_attention_3d_gqa_with_past_and_present": "a KV cache",
    "test_attention_3d_diff_heads_with_past_and_present": "a KV cache",
    "test_attention_3d_with_past_and_present_qk_matmul": "a KV cache",
    "test_attention_3d_with_past_and_present_qk_matmul_bias": "a KV cache",
    "test_attention_3d_with_past_and_present_qk_matmul_softcap": "a KV cache",
    "test_attention_3d_with_past_and_present_qk_matmul_softmax": "a KV cache",
    "test_attention_4d_diff_heads_mask4d_padded_kv": "a KV cache",
    "test_attention_4d_padded_kv_bf16": "a KV cache",
    "test_attention_4d_causal_padded_kv_bf16": "a KV cache",
    "test_attention_4d_attn_mask_causal_bf16": "is_causal together with attn_mask",
    "test_attention_4d_softcap_neginf_mask": "softcap or qk_matmul_output_mode",
    "test_attention_4d_softcap_neginf_mask_poison": "softcap or qk_matmul_output_mode",
    "test_attention_4d_gqa_causal_nonpad_decode": "a KV cache",
    "test_attention_4d_gqa_causal_nonpad_decode_fp16": "a KV cache",
    "test_attention_4d_causal_nonpad_continued_prefill": "a KV cache",
    "test_attention_4d_causal_with_past_and_present": "a KV cache",
    "test_attention_causal_boolmask_nan_robustness": "is_causal together with attn_mask",
    "test_attention_4d_causal_nonpad_negative_offset_structural_empty": "a KV cache",
    "test_attention_23_fullymasked_qk_matmul_output_mode3_zero": "qk_matmul_output outputs",
    "test_attention_24_fullymasked_qk_matmul_output_mode3_zero": "qk_matmul_output outputs",
    "test_attention_24_qk_matmul_output_mode3_softmax_precision": "qk_matmul_output outputs",
    "test_attention_4d_causal_nonpad_attn_mask_composition": "a KV cache",
    "test_attention_4d_causal_nonpad_batch_prefill": "a KV cache",
    "test_attention_local_window": "local attention window",
    "test_attention_bidirectional_window": "local attention window",
    "test_attention_local_window_rank1_boolean_mask": "local attention window",
    "test_attention_local_window_with_past": "a KV cache",
    "test_attention_local_window_ext_cache_rank3_head_mask": "a KV cache",
    "test_attention_local_window_ext_cache_rank4_batch_mask": "a KV cache",
    "test_attention_local_window_ext_cache_rank2_mask": "a KV cache",
    "test_attention_local_window_ext_cache_float16_mask": "a KV cache",
    "test_attention_3d_local_window": "local attention window",
    "test_attention_local_window_gqa_rank4_mask": "qk_matmul_output outputs",
}

#: Cases whose expected outputs are wrong by the spec; the reason says why and who agrees.
XFAIL_EXPECTED = {
    "test_resize_downsample_scales_linear_align_corners": (
        "the ONNX reference uses the fractional in*scale as length_resized for align_corners; "
        "the Resize spec defines length_resized as the output length (onnxruntime agrees with us)"
    ),
    "test_resize_downsample_scales_cubic_align_corners": (
        "the ONNX reference uses the fractional in*scale as length_resized for align_corners; "
        "the Resize spec defines length_resized as the output length (onnxruntime agrees with us)"
    ),
}

#: Cases whose expected values were written with few digits: (rtol, reason).
TOLERANCE = {
    "test_averagepool_2d_ceil_last_window_starts_on_pad": (
        2e-4,
        "expected values are rounded to 4 decimals in the test (onnxruntime agrees with us "
        "to float32 precision)",
    ),
}

#: onnxruntime disagrees with the spec here (our value = the expected value).
XFAIL_ORT: dict[str, str] = {}

CASES = supported_node_cases()


def _unsupported_dtype(case: NodeCase) -> str | None:
    """The element type of the case that the rules reject (types PyTorch lacks, or uint64 on an
    op torch has no uint64 kernel for), or None."""
    allowed = SUPPORTED_DTYPES | {"uint16", "uint32"}
    g = case.model.graph
    float_base = bool(g.input) and dtype_name(g.input[0].type.tensor_type.elem_type) in FLOAT_DTYPES
    if (
        case.op_type in UNSIGNED_NATIVE_OPS
        or case.op_type in UINT64_VIA_INT64
        or (case.op_type in UINT64_IN_RULE and (case.op_type != "Pow" or float_base))
    ):
        allowed = allowed | {"uint64"}
    if case.op_type in FLOAT8_OPS:
        allowed = allowed | FLOAT8_DTYPES
    for vi in [*g.input, *g.output]:
        if not vi.type.HasField("tensor_type"):
            return "non-tensor"
        name = dtype_name(vi.type.tensor_type.elem_type)
        if name not in allowed:
            return name
    for a in g.node[0].attribute:
        if a.name == "to" and dtype_name(a.i) not in allowed:
            return dtype_name(a.i)
    return None


_OURS: dict[str, tuple[dict[str, np.ndarray], list[Mismatch]]] = {}


def _ours(case: NodeCase) -> tuple[dict[str, np.ndarray], list[Mismatch]]:
    """Our outputs for a case (and static-fact mismatches), computed once for both oracles."""
    if case.name not in _OURS:
        model, feeds = frozen_model_and_feeds(case)
        mismatches: list[Mismatch] = []
        _OURS[case.name] = (run_graph_eagerly(model, feeds, mismatches), mismatches)
    return _OURS[case.name]


def _params():
    out = []
    for c in CASES:
        marks = []
        if c.name in XFAIL_EXPECTED:
            marks.append(pytest.mark.xfail(reason=XFAIL_EXPECTED[c.name], strict=True))
        out.append(pytest.param(c, id=c.name, marks=marks))
    return out


@pytest.mark.parametrize("case", _params())
def test_node_case(case: NodeCase):
    model, feeds = frozen_model_and_feeds(case)
    bad_dtype = _unsupported_dtype(case)
    if case.name in UNSUPPORTED or bad_dtype is not None:
        fragment = UNSUPPORTED.get(case.name, bad_dtype)
        with pytest.raises(UnsupportedOpError) as info:
            run_graph_eagerly(model, feeds)
        assert fragment in str(info.value)
        op, node, opset, _ = info.value.items[0]
        assert op == case.op_type and node and opset == case.opset
        return
    got, mismatches = _ours(case)
    rtol = TOLERANCE.get(case.name, (None, ""))[0]
    for vi, expected in zip(case.model.graph.output, case.outputs, strict=True):
        assert_close(got[vi.name], expected, rtol=rtol, what=vi.name)
    # the generated code sizes buffers from the static facts: they must hold at runtime
    assert not mismatches, mismatches


def _ort_model(model: onnx.ModelProto) -> onnx.ModelProto:
    """The case's model at an IR version/opset onnxruntime 1.31 loads (same op semantics unless
    the op changed after opset 23, in which case loading or comparing fails and is skipped)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    m.ir_version = min(m.ir_version, 10)
    for imp in m.opset_import:
        if imp.domain in ("", "ai.onnx"):
            imp.version = min(imp.version, 23)
    return m


def _ort_params():
    out = []
    for c in CASES:
        if _unsupported_dtype(c) or c.name in UNSUPPORTED:
            continue
        marks = []
        if c.name in XFAIL_ORT:
            marks.append(pytest.mark.xfail(reason=XFAIL_ORT[c.name], strict=True))
        out.append(pytest.param(c, id=c.name, marks=marks))
    return out


@pytest.mark.parametrize("case", _ort_params())
def test_node_case_vs_onnxruntime(case: NodeCase, ort_session_options):
    ort = pytest.importorskip("onnxruntime")
    feeds_all = {
        vi.name: np.asarray(a) for vi, a in zip(case.model.graph.input, case.inputs, strict=False)
    }
    try:
        sess = ort.InferenceSession(_ort_model(case.model).SerializeToString(), ort_session_options)
        ref = sess.run(None, feeds_all)
    except Exception as e:  # noqa: BLE001 - onnxruntime lacks the op/type/version
        pytest.skip(f"onnxruntime cannot run this case: {str(e).splitlines()[0][:120]}")
    got, _ = _ours(case)
    rtol = TOLERANCE.get(case.name, (None, ""))[0]
    for vi, r in zip(case.model.graph.output, ref, strict=True):
        if got[vi.name].dtype.name.startswith("float8") and r.dtype == np.uint8:
            r = r.view(got[vi.name].dtype)  # onnxruntime returns float8 tensors as their bits
        assert_close(got[vi.name], r, rtol=rtol, what=vi.name)


#: Ops whose function expansions are large and slow to run eagerly (the rules they use are
#: covered elsewhere).
SLOW_EXPANSIONS = ("Attention", "CausalConvWithState")


def _expanded_params():
    out = []
    for c in expanded_cases():
        if c.op_type in SLOW_EXPANSIONS:
            continue
        out.append(pytest.param(c, id=c.name))
    return out


@pytest.mark.parametrize("case", _expanded_params())
def test_expanded_case(case: NodeCase):
    """The function-expanded node tests: compositions of supported ops, often at older opsets
    (e.g. Softmax through ReduceMax/Exp/ReduceSum at opset 18), with Shape → ... → Reshape
    chains that must fold to constants."""
    model, feeds = frozen_model_and_feeds(case)
    g = case.model.graph
    if any(dtype_name(vi.type.tensor_type.elem_type) == "uint64" for vi in g.input):
        # uint64 is computed by some ops only: the others must say so
        try:
            got = run_graph_eagerly(model, feeds)
        except UnsupportedOpError as e:
            assert "uint64" in str(e)
            return
    else:
        got = run_graph_eagerly(model, feeds)
    for vi, expected in zip(g.output, case.outputs, strict=True):
        assert_close(got[vi.name], expected, rtol=1e-4, what=vi.name)


def test_coverage_is_substantial():
    """Most node cases of the supported ops pass (guards against a rule silently vanishing)."""
    runnable = [c for c in CASES if not _unsupported_dtype(c) and c.name not in UNSUPPORTED]
    assert len({c.op_type for c in runnable}) >= 140
    assert len(runnable) >= 800
