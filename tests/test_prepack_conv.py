"""Convolution lowerings chosen by measurement. Prepacked oneDNN convolutions
(``--prepack-conv``, ``ops.conv2d_prepacked``): the helper
computes ``F.conv2d`` (+ ReLU) in the same memory format, packs a kernel once per input shape and
again after an in-place write, and is the plain ``F.conv2d`` where tracing, autograd or another
dtype/format needs it; compiled programs print it for the channels-last convolutions and keep
onnxruntime's numerics on both backends (the zoo and project models: ``test_pipeline_zoo``,
``test_module``, which also traces, exports and compiles them). Grouped 1x1 convolutions on
contiguous inputs as batched matrix products (``ops.conv1x1_grouped``); ShuffleNet's channel
shuffle as ``F.channel_shuffle``. Random convolutions (groups, kernels, strides, dilations,
pads) compiled end to end against onnxruntime.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import onnx
import pytest
import torch
import torch.nn.functional as F
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ramiel
from ramiel.compiler import CompiledModel, CompileOptions, compile_model
from ramiel.models import randomize_weights
from ramiel.runtime import ops

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

CL = torch.channels_last
# (input shape, kernel shape, stride, padding, dilation, groups, bias)
CASES = [
    ((1, 16, 28, 28), (32, 16, 3, 3), (1, 1), (1, 1), (1, 1), 1, True),  # 3x3
    ((1, 64, 14, 14), (64, 1, 3, 3), (2, 2), (1, 1), (1, 1), 64, True),  # depthwise, stride 2
    ((1, 24, 28, 28), (48, 8, 1, 1), (1, 1), (0, 0), (1, 1), 3, False),  # grouped 1x1
    ((2, 3, 32, 32), (8, 3, 7, 7), (2, 2), (3, 3), (1, 1), 1, True),  # 7x7, batch 2
    ((1, 8, 17, 17), (8, 8, 3, 3), (1, 1), (2, 2), (2, 2), 1, True),  # dilated
    ((1, 32, 1, 1), (8, 32, 1, 1), (1, 1), (0, 0), (1, 1), 1, True),  # 1x1 spatial
]


def _tensors(case):
    xs, ws, _s, _p, _d, _g, has_bias = case
    g = torch.Generator().manual_seed(0)
    x = torch.randn(xs, generator=g).contiguous(memory_format=CL)
    w = torch.randn(ws, generator=g).contiguous(memory_format=CL)
    b = torch.randn(ws[0], generator=g) if has_bias else None
    return x, w, b


@pytest.mark.parametrize("activation", ["none", "relu"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[1]}g{c[5]}")
def test_prepacked_conv_is_f_conv2d(case, activation):
    x, w, b = _tensors(case)
    _xs, _ws, stride, padding, dilation, groups, _ = case
    ref = F.conv2d(x, w, b, stride, padding, dilation, groups)
    if activation == "relu":
        ref = torch.relu(ref)
    got = ops.conv2d_prepacked(x, w, b, stride, padding, dilation, groups, activation)
    torch.testing.assert_close(got, ref, rtol=1e-5, atol=1e-5 * ref.abs().max().item())
    assert got.is_contiguous(memory_format=CL) == ref.is_contiguous(memory_format=CL)
    assert got.shape == ref.shape and got.dtype == ref.dtype
    assert len(ops.packed_copies(w)) == 1


def test_a_nan_stays_nan_through_the_relu():
    """ONNX's Relu (and eager PyTorch, onnxruntime) keeps NaN; oneDNN's Relu post-op had turned
    it into 0 (found by a fresh-user check), so the Relu runs on the convolution's result."""
    x, w, b = _tensors(CASES[0])
    x[0, 0, 5, 5] = float("nan")
    ref = torch.relu(F.conv2d(x, w, b, 1, 1))
    got = ops.conv2d_prepacked(x, w, b, (1, 1), (1, 1), activation="relu")
    assert ref.isnan().sum() > 0
    torch.testing.assert_close(got, ref, equal_nan=True, rtol=1e-5, atol=1e-4)


def test_kernel_is_packed_once_and_again_after_a_write():
    x, w, b = _tensors(CASES[0])
    ops.conv2d_prepacked(x, w, b, padding=(1, 1))
    (packed,) = ops.packed_copies(w).values()
    ops.conv2d_prepacked(x, w, b, padding=(1, 1))
    assert next(iter(ops.packed_copies(w).values())) is packed
    with torch.no_grad():
        w.mul_(-2.0)  # load_state_dict without assign copies in place like this
    got = ops.conv2d_prepacked(x, w, b, padding=(1, 1))
    torch.testing.assert_close(got, F.conv2d(x, w, b, padding=(1, 1)), rtol=1e-5, atol=1e-4)
    cache = ops.packed_copies(w)
    assert len(cache) == 1 and next(iter(cache.values())) is not packed
    # another input shape gets a packing of its own, the first one is kept
    x2 = torch.randn(3, 16, 28, 28).contiguous(memory_format=CL)
    ops.conv2d_prepacked(x2, w, b, padding=(1, 1))
    assert len(ops.packed_copies(w)) == 2


def test_each_intra_op_thread_count_gets_its_own_packing():
    """oneDNN lays the kernel out for the thread count it packs at; a packing made at another
    count ran about 2x slower (ramiel.runtime.ops._packed), so each count packs once and the
    results agree."""
    x, w, b = _tensors(CASES[0])
    ref = F.conv2d(x, w, b, padding=(1, 1))
    caller = torch.get_num_threads()
    try:
        packed = {}
        for n in (1, 2, 1, 2):
            torch.set_num_threads(n)
            got = ops.conv2d_prepacked(x, w, b, padding=(1, 1))
            torch.testing.assert_close(got, ref, rtol=1e-5, atol=1e-4)
            cache = ops.packed_copies(w)
            (mine,) = [v for k, v in cache.items() if k[1] == n]
            assert packed.setdefault(n, mine) is mine  # made once per count, then reused
        assert len(ops.packed_copies(w)) == 2
    finally:
        torch.set_num_threads(caller)


def test_plain_where_packing_does_not_apply():
    """Contiguous inputs, float64, Parameters with autograd: ``F.conv2d`` (nothing packed);
    gradients flow."""
    x, w, b = _tensors(CASES[0])
    for xx, ww in [(x.contiguous(), w), (x.double(), w.double())]:
        bb = b.to(ww.dtype)
        got = ops.conv2d_prepacked(xx, ww, bb, padding=(1, 1), activation="relu")
        torch.testing.assert_close(got, torch.relu(F.conv2d(xx, ww, bb, padding=(1, 1))))
        assert not ops.packed_copies(ww)
    p = torch.nn.Parameter(w.clone())
    y = ops.conv2d_prepacked(x, p, b, padding=(1, 1), activation="relu")
    y.sum().backward()
    assert p.grad is not None and p.grad.shape == p.shape
    assert not ops.packed_copies(p)


def test_tracing_and_compiling_see_f_conv2d():
    x, w, b = _tensors(CASES[1])

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("w", w.clone(memory_format=CL))
            self.register_buffer("b", b.clone())

        def forward(self, x):
            return ops.conv2d_prepacked(x, self.w, self.b, (2, 2), (1, 1), groups=64,
                                        activation="relu")  # fmt: skip

    m = M()
    with torch.no_grad():
        eager = m(x)
        traced = torch.jit.trace(m, (x,))
        exported = torch.export.export(m, (x,))
        torch._dynamo.reset()
        compiled = torch.compile(m, backend="aot_eager", fullgraph=True)
        results = {
            "jit.trace": traced(x),
            "export": exported.module()(x),
            "compile": compiled(x),
            "fx": torch.fx.symbolic_trace(m)(x),
        }
    assert "mkldnn" not in str(exported.graph)
    assert "mkldnn" not in str(traced.graph)
    for how, got in results.items():
        torch.testing.assert_close(got, eager, rtol=1e-5, atol=1e-5, msg=how)


def test_bad_activation():
    x, w, b = _tensors(CASES[0])
    with pytest.raises(ValueError, match="activation must be 'none' or 'relu', not 'gelu'"):
        ops.conv2d_prepacked(x, w, b, activation="gelu")


@pytest.mark.parametrize("backend", ["threads", "processes"])
def test_compiled_squeezenet_prints_prepacked_convs(
    backend, tmp_path, zoo_models, pipeline_helpers
):
    """light_squeezenet (every Conv followed by a Relu): its 26 channels-last convolutions are
    ``ops.conv2d_prepacked`` in both modules, with the Relu fused
    (``activation='relu'``) except where the result also crosses a channel; with
    ``disable=["prepack-conv"]`` they are ``F.conv2d``; both match onnxruntime, parallel (each
    worker packs its own kernels) and sequential."""
    model = randomize_weights(onnx.load(zoo_models["light_squeezenet"]), seed=1)
    path = str(tmp_path / "squeezenet.onnx")
    onnx.save(model, path)
    x = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)
    ref = pipeline_helpers.ort_run(model, {"data_0": x})
    for disable in [(), ("prepack-conv",)]:
        opts = CompileOptions(clusters=2, backend=backend, disable=disable)
        res = compile_model(path, str(tmp_path / "-".join(disable or ("default",))), opts)
        for p in (res.parallel_path, res.sequential_path):
            with open(p) as f:
                src = f.read()
            packed, plain = src.count("ops.conv2d_prepacked("), src.count("F.conv2d(")
            if disable:
                assert packed == 0 and plain == 26
            else:
                fused = src.count("activation='relu'")
                assert packed == 26 and plain == 0 and fused > 0
                assert fused + src.count("torch.relu") == 26, (fused, src.count("torch.relu"))
        with CompiledModel(res, opts) as m:
            par = m.run({"data_0": torch.from_numpy(x)})
            seq = m.sequential(torch.from_numpy(x))
        (name,) = list(par)
        pipeline_helpers.assert_close(par[name], ref[0], 1e-3, f"parallel {disable}")
        pipeline_helpers.assert_close(seq, ref[0], 1e-3, f"sequential {disable}")


def test_a_nan_pixel_reaches_the_output_as_onnxruntime_gives_it(zoo_models, pipeline_helpers):
    """light_squeezenet, default options (prepacked convolutions with their Relu): a NaN in the
    input comes out where onnxruntime puts it (the oneDNN post-op had made it 0, so the output
    was finite; found by a fresh-user check), and the rest still matches."""
    model = randomize_weights(onnx.load(zoo_models["light_squeezenet"]), seed=1)
    x = np.random.default_rng(1).standard_normal((1, 3, 224, 224)).astype(np.float32)
    x[0, 1, 100, 100] = np.nan
    (ref,) = pipeline_helpers.ort_run(model, {"data_0": x})
    with ramiel.compile(model, clusters=1) as m:
        assert "activation='relu'" in Path(m.result.sequential_path).read_text()
        got = m.sequential(torch.from_numpy(x)).numpy()
    assert np.isnan(ref).any()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))


# -------------------------------------------------------------- grouped 1x1 convolutions


@pytest.mark.parametrize("batch", [1, 3])
@pytest.mark.parametrize("has_bias", [True, False])
def test_conv1x1_grouped_is_f_conv2d(batch, has_bias):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(batch, 24, 9, 7, generator=g)
    w = torch.randn(112, 6, 1, 1, generator=g)
    b = torch.randn(112, generator=g) if has_bias else None
    ref = F.conv2d(x, w, b, groups=4)
    got = ops.conv1x1_grouped(x, w, b, 4)
    torch.testing.assert_close(got, ref, rtol=1e-5, atol=1e-5 * ref.abs().max().item())
    assert got.is_contiguous()


@pytest.mark.parametrize("layout", ["auto", "nchw"])
def test_shufflenet_convs(tmp_path, zoo_models, pipeline_helpers, layout):
    """light_shufflenet: under format=auto one channels-last region from the first Conv to and
    with the global pooling, its 49 convolutions (grouped and depthwise ones included) prepacked and its
    16 channel shuffles (Reshape/Transpose/Reshape, ``--fuse-channel-shuffle``)
    ``F.channel_shuffle`` with no conversion around them; contiguous (format=nchw) its 32
    grouped 1x1 convolutions are ``ops.conv1x1_grouped``, the depthwise and dense ones
    ``F.conv2d``; onnxruntime's outputs either way."""
    model = randomize_weights(onnx.load(zoo_models["light_shufflenet"]), seed=1)
    path = str(tmp_path / "shufflenet.onnx")
    onnx.save(model, path)
    (inp,) = [
        i for i in model.graph.input if i.name not in {t.name for t in model.graph.initializer}
    ]
    x = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)
    ref = pipeline_helpers.ort_run(model, {inp.name: x})
    opts = CompileOptions(clusters=1, layout=layout)
    res = compile_model(path, str(tmp_path / "out"), opts)
    with open(res.sequential_path) as f:
        src = f.read()
    assert src.count("F.channel_shuffle(") == 16 and ".permute(" not in src
    if layout == "auto":
        assert src.count("ops.conv2d_prepacked(") == 49 and "F.conv2d(" not in src
        # the graph input to channels-last; the global pooling reads the last activation as it
        # comes (its (1, C, 1, 1) result is both formats)
        assert src.count(".contiguous(") == 1, src.count(".contiguous(")
    else:
        assert src.count("ops.conv1x1_grouped(") == 32 and src.count("F.conv2d(") == 17
    with CompiledModel(res, opts) as m:
        seq = m.sequential(torch.from_numpy(x))
    pipeline_helpers.assert_close(seq, ref[0], 1e-3, "sequential")


# -------------------------------------------------------------- random convolutions, end to end


@st.composite
def _conv_specs(draw):  # type: ignore[no-untyped-def]
    """A Conv (then a Relu or not) of random geometry: groups (depthwise included), kernel,
    stride, dilation, explicit (possibly asymmetric) pads or ``auto_pad``, batch and channel
    counts that are no multiple of the vector width."""
    groups = draw(st.sampled_from([1, 1, 2, 3, "depthwise"]))
    per_group = draw(st.integers(1, 5))
    c = per_group * (draw(st.integers(1, 6)) if groups == "depthwise" else groups)
    g = c if groups == "depthwise" else groups
    o = g * draw(st.integers(1, 4))
    k = (draw(st.integers(1, 5)), draw(st.integers(1, 5)))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    span = [(k[i] - 1) * dilation[i] + 1 for i in range(2)]
    hw = (draw(st.integers(span[0], span[0] + 12)), draw(st.integers(span[1], span[1] + 12)))
    auto_pad = draw(st.sampled_from(["NOTSET", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"]))
    if auto_pad.startswith("SAME"):
        dilation = (1, 1)  # onnxruntime (the oracle) has no dilated SAME padding
    pads = [draw(st.integers(0, min(2, span[i % 2] - 1))) for i in range(4)]
    return {
        "x": (draw(st.integers(1, 3)), c, *hw),
        "w": (o, c // g, *k),
        "group": g,
        "strides": list(stride),
        "dilations": list(dilation),
        "auto_pad": auto_pad,
        "pads": pads,
        "bias": draw(st.booleans()),
        "relu": draw(st.booleans()),
        "seed": draw(st.integers(0, 2**16)),
    }


def _conv_model(spec) -> onnx.ModelProto:  # type: ignore[no-untyped-def]
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(spec["seed"])
    inits = [numpy_helper.from_array(rng.standard_normal(spec["w"]).astype(np.float32), "w")]
    inputs = ["x", "w"]
    if spec["bias"]:
        inits.append(
            numpy_helper.from_array(rng.standard_normal(spec["w"][0]).astype(np.float32), "b")
        )
        inputs.append("b")
    attrs = {"group": spec["group"], "strides": spec["strides"], "dilations": spec["dilations"]}
    if spec["auto_pad"] == "NOTSET":
        attrs["pads"] = spec["pads"]
    else:
        attrs["auto_pad"] = spec["auto_pad"]
    nodes = [onnx.helper.make_node("Conv", inputs, ["c" if spec["relu"] else "y"], **attrs)]
    if spec["relu"]:
        nodes.append(onnx.helper.make_node("Relu", ["c"], ["y"]))
    graph = helper.make_graph(
        nodes,
        "conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(spec["x"]))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return onnx.shape_inference.infer_shapes(model, strict_mode=True)


def test_random_convs_match_onnxruntime(tmp_path_factory, pipeline_helpers):
    """Random 2-D convolutions compiled in channels-last: every one whose input and output have
    more than one channel and position runs ``ops.conv2d_prepacked`` (the others
    ``F.conv2d``), and the
    sequential module's output is onnxruntime's (1e-4 of the largest magnitude)."""
    packed: list[bool] = []

    @settings(max_examples=30, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
    @given(spec=_conv_specs())
    def check(spec):  # type: ignore[no-untyped-def]
        model = _conv_model(spec)
        (out,) = model.graph.output
        dims = [d.dim_value for d in out.type.tensor_type.shape.dim]
        if len(dims) != 4 or min(dims) < 1:
            return  # a geometry onnx rejects or leaves empty: not a case
        x = np.random.default_rng(spec["seed"] + 1).standard_normal(spec["x"]).astype(np.float32)
        (ref,) = pipeline_helpers.ort_run(model, {"x": x})
        d = tmp_path_factory.mktemp("conv")
        onnx.save(model, str(d / "m.onnx"))
        opts = CompileOptions(clusters=1, layout="channels-last")
        res = compile_model(str(d / "m.onnx"), str(d / "out"), opts)
        with open(res.sequential_path) as f:
            src = f.read()
        # input and output: more than one channel and more than one position
        expect = all(c > 1 and h * w > 1 for _, c, h, w in (spec["x"], dims))
        packed.append("ops.conv2d_prepacked(" in src)
        assert packed[-1] == expect, (spec, dims, src)
        with CompiledModel(res, opts) as m:
            got = m.sequential(torch.from_numpy(x))
        pipeline_helpers.assert_close(got, ref, 1e-4, str(spec))

    check()
    assert sum(packed) >= len(packed) // 2, packed


class _PackedNet(torch.nn.Module):
    def __init__(self, w: torch.Tensor, b: torch.Tensor):
        super().__init__()
        self.register_buffer("w", w)
        self.register_buffer("b", b)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ops.conv2d_prepacked(x, self.w, self.b, padding=(1, 1), activation="relu")


def test_a_module_stays_copyable_after_its_kernels_are_packed():
    """The packed kernels were kept in the weight tensor's __dict__, which deepcopy, pickle and
    torch.save copy: 'Cannot access storage of OpaqueTensorImpl' after the first call (found by
    a fresh-user check). Copies run and repack their own."""
    import copy
    import io
    import pickle

    x, w, b = _tensors(CASES[0])
    net = _PackedNet(w, b)
    with torch.no_grad():
        want = net(x)
        assert ops.packed_copies(net.w)  # packed (where oneDNN runs it)
        buf = io.BytesIO()
        torch.save(net, buf)
        for twin in (copy.deepcopy(net), pickle.loads(pickle.dumps(net))):
            torch.testing.assert_close(twin(x), want)
        buf.seek(0)
        torch.testing.assert_close(torch.load(buf, weights_only=False)(x), want)
