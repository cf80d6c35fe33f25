"""Memory formats (:mod:`ramiel.layout`, ``--assign-layout``): the op classes hold in PyTorch,
the runtime carries formats (weights file, shared weight arena, channel buffers), and programs
compiled with every layout keep onnxruntime's numerics on both backends.
"""

from __future__ import annotations

import os

import numpy as np
import onnx
import pytest
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

from ramiel.compiler import CompiledModel, CompileOptions, compile_model
from ramiel.dialects.onnx_traits import LayoutAnchor, LayoutTransparent, ops_with
from ramiel.errors import RamielError
from ramiel.layout import CHANNELS_LAST, has_format
from ramiel.lowering.api import NodeView, TensorInfo, lower_node
from ramiel.lowering.eval_emitter import EvalEmitter
from ramiel.runtime import ChannelSpec, Program, ProgramError, Weights
from ramiel.runtime.channels import ShmLayout
from ramiel.runtime.weights import pack_shared, unpack

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

CL = torch.channels_last
X = ((1, 6, 9, 9), "float32")


def _is_cl(t: torch.Tensor) -> bool:
    return t.is_contiguous(memory_format=CL)


def view(op, inputs, opset=17, layout="contiguous_format", **attrs) -> NodeView:
    ins = []
    for i, spec in enumerate(inputs):
        if spec is None:
            ins.append(None)
            continue
        shape, dt, *const = spec
        ins.append(TensorInfo(f"in{i}", shape, dt, const[0] if const else None))
    return NodeView(
        op, "n", "", opset, ins, [TensorInfo("out", None, "float32")], attrs, layout=layout
    )


def _const(shape, dtype="float32", value=0.5):
    return (shape, dtype, np.full(shape, value, dtype=dtype))


BIAS = _const((1, 6, 1, 1))
UNARY_OPSETS = {"Gelu": 20, "Mish": 18}
NODES = [
    *[
        view(op, [X], opset=UNARY_OPSETS.get(op, 17))
        for op in sorted(ops_with(LayoutTransparent))
        if op
        in {
            "Abs",
            "Neg",
            "Exp",
            "Log",
            "Sqrt",
            "Reciprocal",
            "Floor",
            "Ceil",
            "Round",
            "Relu",
            "Sigmoid",
            "Tanh",
            "Erf",
            "Sign",
            "Softsign",
            "Softplus",
            "LeakyRelu",
            "Elu",
            "Celu",
            "Selu",
            "HardSigmoid",
            "HardSwish",
            "Mish",
            "Gelu",
            "ThresholdedRelu",
            "Identity",
            "Dropout",
            "IsNaN",
            "IsInf",
        }
    ],  # fmt: skip
    view("Clip", [X, _const((), value=-0.5), _const((), value=0.5)]),
    view("PRelu", [X, _const((6, 1, 1), value=0.1)]),
    view("Cast", [X], to=TensorProto.FLOAT16),
    view("Not", [(X[0], "bool")]),
    *[view(op, [X, X]) for op in ("Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean")],
    *[view(op, [X, BIAS]) for op in ("Add", "Mul", "Sub", "Div")],
    *[view(op, [X, X]) for op in ("Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual")],
    *[view(op, [(X[0], "bool"), (X[0], "bool")]) for op in ("And", "Or", "Xor")],
    view("Where", [(X[0], "bool"), X, X]),
    view("Sum", [X, X, X]),
    view("BatchNormalization", [X, *[_const((6,), value=v) for v in (1.5, 0.1, 0.2, 2.0)]]),
    view("LRN", [X], size=3),
    view("LRN", [X], size=4, beta=0.5),
    view("Concat", [X, X], axis=1),
    view("Concat", [X, X], axis=3),
    view("Pad", [X, _const((8,), "int64", 1)], mode="constant"),
    view("Pad", [X, _const((8,), "int64", 1)], mode="reflect"),
    view("Pad", [X, _const((8,), "int64", 1)], mode="edge"),
    view("GlobalAveragePool", [X]),
    view("GlobalMaxPool", [X]),
    # anchors
    view("Conv", [X, ((4, 6, 3, 3), "float32"), ((4,), "float32")], pads=[1, 1, 1, 1]),
    view("Conv", [X, ((6, 1, 3, 3), "float32"), None], group=6, strides=[2, 2]),
    view("MaxPool", [X], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
    view("MaxPool", [X], kernel_shape=[2, 2], pads=[0, 0, 1, 1]),
    view("AveragePool", [X], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    view("AveragePool", [X], kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1),
    view(
        "Resize",
        [X, None, _const((4,), value=1.0)],
        mode="nearest",
        coordinate_transformation_mode="asymmetric",
        nearest_mode="floor",
    ),
    view("Resize", [X, None, (((4,), "float32", np.array([1, 1, 2, 2], np.float32)))]),
    view(
        "Resize", [X, None, (((4,), "float32", np.array([1, 1, 2, 2], np.float32)))], mode="linear"
    ),  # fmt: skip
]


def _inputs(node: NodeView, seed: int = 0) -> list[torch.Tensor | None]:
    gen = torch.Generator().manual_seed(seed)
    out: list[torch.Tensor | None] = []
    for info in node.inputs:
        if info is None:
            out.append(None)
        elif info.const is not None:
            out.append(torch.from_numpy(np.asarray(info.const).copy()))
        elif info.dtype == "bool":
            out.append(torch.rand(info.shape, generator=gen) > 0.5)
        else:
            out.append(torch.rand(info.shape, generator=gen) + 0.25)
    return out


def _run(node: NodeView, tensors: list[torch.Tensor | None]) -> list[torch.Tensor]:
    em = EvalEmitter()
    args = [em.wrap(t) if t is not None else None for t in tensors]
    return [o.obj for o in lower_node(node, args, em) if o is not None]


def test_every_transparent_and_anchor_op_is_covered():
    covered = {n.op_type for n in NODES}
    assert (ops_with(LayoutTransparent) | ops_with(LayoutAnchor)) - covered <= {"Swish", "Upsample"}


@pytest.mark.parametrize("node", NODES, ids=lambda n: n.op_type)
def test_op_keeps_channels_last(node):
    if node.op_type == "Pad" and node.attrs["mode"] != "constant":
        pytest.skip("not transparent: the pass keeps a reflect/edge Pad contiguous")
    """What ramiel.layout claims for every transparent and anchor op: lowered for channels-last
    (``NodeView.layout``) and fed channels-last activations, the op's 4-D result is
    channels-last, and the values are those of the contiguous lowering on contiguous inputs."""
    ref = _run(node, _inputs(node))
    cl_node = view(node.op_type, [], node.opset, CHANNELS_LAST, **node.attrs)
    cl_node.inputs = node.inputs
    ins = []
    for info, t in zip(node.inputs, _inputs(node), strict=True):
        activation = t is not None and info.const is None and has_format(tuple(t.shape))
        ins.append(t.contiguous(memory_format=CL) if activation else t)
    got = _run(cl_node, ins)
    for r, g in zip(ref, got, strict=True):
        if has_format(tuple(g.shape)):
            assert _is_cl(g), f"{node.op_type}: result strides {g.stride()} are not channels-last"
        torch.testing.assert_close(g, r, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("channels", [1000, 24, 16])
def test_channels_last_global_average_pool_reduces_every_channel_alike(channels):
    """A channels-last GlobalAveragePool (it ends a channels-last region without a conversion)
    gives equal channels equal means: torch 2.13's float32 reduction of a channels-last tensor
    handles the last ``C mod 16`` channels in a scalar tail, 1 ULP apart, which made
    light_squeezenet's constant-weight logits (~6.5e9) differ after its Softmax; the lowering
    accumulates in float64."""
    x = torch.full((1, channels, 13, 13), 6.5e9 / 169 * 1.37).contiguous(memory_format=CL)
    node = view("GlobalAveragePool", [((1, channels, 13, 13), "float32")], 17, CHANNELS_LAST)
    (got,) = _run(node, [x])
    (ref,) = _run(view("GlobalAveragePool", [((1, channels, 13, 13), "float32")]), [x.contiguous()])
    assert got.dtype == torch.float32 and got.shape == (1, channels, 1, 1)
    assert got.unique().numel() == 1, got.unique()
    torch.testing.assert_close(got, ref, rtol=1e-6, atol=0)
    assert torch.softmax(got.reshape(1, -1), 1).max().item() == pytest.approx(1 / channels)


# -- the runtime carries formats -----------------------------------------------------------------


def test_weights_file_lists_formats_and_loader_converts(tmp_path):
    res = compile_model(_cnn(), str(tmp_path), CompileOptions(clusters=1, layout="channels-last"))
    w = Weights.from_safetensors(res.weights_path)
    assert _is_cl(w["c1_w"]) and not w["c1_w"].is_contiguous()
    assert w["c4_w"].is_contiguous()  # a 1x1 kernel: the same strides in both formats
    with open(res.sequential_path) as f:
        text = f.read()
    assert "WEIGHT_FORMATS = {" in text and "'c1_w': torch.channels_last," in text
    # the shared arena of the processes backend keeps the format
    arena, slots = pack_shared(w)
    shared = unpack(arena, slots)
    assert _is_cl(shared["c1_w"]) and torch.equal(shared["c1_w"], w["c1_w"])
    nchw = compile_model(_cnn(), str(tmp_path / "nchw"), CompileOptions(clusters=1, layout="nchw"))
    assert Weights.from_safetensors(nchw.weights_path)["c1_w"].is_contiguous()
    with open(nchw.sequential_path) as f:
        assert "WEIGHT_FORMATS" not in f.read()


def test_module_classes_load_weights_in_their_formats(tmp_path, pipeline_helpers):
    """The generated classes' from_safetensors (sequential and parallel) and CompiledModel
    convert the channels-last conv kernels once, when they load the weights file: the buffers
    are channels-last, state_dict round-trips, the processes backend's workers compute what
    onnxruntime does; with --layout nchw every buffer stays contiguous."""
    from ramiel.compiler import generated_class
    from ramiel.runtime.program import import_from_path

    model = _cnn()
    x = np.random.default_rng(5).standard_normal((1, 8, 64, 64)).astype(np.float32)
    ref = pipeline_helpers.ort_run(model, {"x": x})
    for layout in ("channels-last", "nchw"):
        out_dir = tmp_path / layout
        opts = CompileOptions(clusters=2, backend="processes", layout=layout)
        res = compile_model(model, str(out_dir), opts)
        seq_cls = generated_class(import_from_path(f"cl_seq_{layout}", res.sequential_path))
        par_cls = generated_class(import_from_path(f"cl_par_{layout}", res.parallel_path))
        seq = seq_cls.from_safetensors()
        assert _is_cl(seq.c1_w) == (layout == "channels-last"), layout
        blank = seq_cls()  # load_state_dict copies into buffers made in the code's format
        blank.load_state_dict(seq.state_dict())
        assert _is_cl(blank.c1_w) == (layout == "channels-last"), layout
        ys = seq(torch.from_numpy(x))
        pipeline_helpers.assert_close(ys[0], ref[0], 1e-4, f"y, sequential, {layout}")
        with par_cls.from_safetensors(backend="processes") as par:
            assert _is_cl(par.c1_w) == (layout == "channels-last"), layout
            assert _is_cl(par.weights_namespace()["c1_w"]) == (layout == "channels-last")
            yp = par(torch.from_numpy(x))
        pipeline_helpers.assert_close(yp[0], ref[0], 1e-4, f"y, processes, {layout}")
        with CompiledModel(res, opts) as m:
            assert _is_cl(m.c1_w) == (layout == "channels-last"), layout


def test_channel_spec_memory_format():
    spec = ChannelSpec("a", "b", (1, 4, 5, 5), torch.float32, memory_format=CL)
    assert spec.format_name == "channels_last"
    assert ChannelSpec("a", "b", (4,), torch.float32).format_name == "contiguous_format"
    with pytest.raises(ProgramError, match="channels_last needs a 4-D channel"):
        ChannelSpec("a", "b", (4, 5), torch.float32, memory_format=CL)
    with pytest.raises(ProgramError, match="must be a torch.memory_format"):
        ChannelSpec("a", "b", (1, 4, 5, 5), torch.float32, memory_format="channels_last")
    with pytest.raises(ProgramError, match="contiguous_format or channels_last"):
        ChannelSpec("a", "b", (1, 4, 5, 5, 2), torch.float32, memory_format=torch.preserve_format)
    prog = Program(
        "p",
        {"a": lambda ch, w: None, "b": lambda ch, w: None},
        {"x": spec, "y": ChannelSpec("a", "b", (1, 4, 5, 5), torch.float32)},
        {},
        {},
    )
    lay = ShmLayout.of(prog)
    arena = torch.zeros(lay.nbytes, dtype=torch.uint8)
    bufs = lay.buffers(arena)
    assert _is_cl(bufs["x"]) and not bufs["x"].is_contiguous()
    assert bufs["y"].is_contiguous()
    src = torch.randn(1, 4, 5, 5).contiguous(memory_format=CL)
    bufs["x"].copy_(src)  # a put into a channels-last buffer is a plain copy of the same bytes
    assert torch.equal(bufs["x"], src)
    start = lay.slots["x"].offset
    raw = arena[start : start + src.numel() * 4].view(torch.float32)
    assert torch.equal(raw, src.permute(0, 2, 3, 1).reshape(-1))


# -- end to end ----------------------------------------------------------------------------------


def _cnn(seed: int = 0) -> onnx.ModelProto:
    """A small branchy CNN: conv stem, two branches (max pool + 3x3 conv, average pool + 3x3
    and 1x1 convs), concat, LRN, nearest x2 resize, then a global pool into Flatten/Gemm; the
    concat is a second output."""
    rng = np.random.default_rng(seed)

    def w(name, *shape):
        return numpy_helper.from_array((rng.standard_normal(shape) / 3).astype(np.float32), name)

    inits = [
        w("c1_w", 32, 8, 3, 3), w("c1_b", 32), w("c2_w", 32, 32, 3, 3), w("c3_w", 32, 32, 3, 3),
        w("c4_w", 32, 32, 1, 1), w("fc_w", 10, 64), w("fc_b", 10),
        numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales"),
    ]  # fmt: skip
    n = helper.make_node
    nodes = [
        n("Conv", ["x", "c1_w", "c1_b"], ["c1"], name="c1", pads=[1, 1, 1, 1]),
        n("Relu", ["c1"], ["r1"], name="r1"),
        n("MaxPool", ["r1"], ["p1"], name="p1", kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
        n("Conv", ["p1", "c2_w"], ["c2"], name="c2", pads=[1, 1, 1, 1]),
        n("AveragePool", ["r1"], ["a1"], name="a1", kernel_shape=[2, 2], strides=[2, 2]),
        n("Conv", ["a1", "c3_w"], ["c3a"], name="c3a", pads=[1, 1, 1, 1]),
        n("Conv", ["c3a", "c4_w"], ["c3"], name="c3"),
        n("Concat", ["c2", "c3"], ["cat"], name="cat", axis=1),
        n("LRN", ["cat"], ["lrn"], name="lrn", size=5),
        n("Resize", ["lrn", "", "scales"], ["up"], name="up", mode="nearest"),
        n("GlobalAveragePool", ["up"], ["gap"], name="gap"),
        n("Flatten", ["gap"], ["flat"], name="flat"),
        n("Gemm", ["flat", "fc_w", "fc_b"], ["y"], name="fc", transB=1),
    ]
    graph = helper.make_graph(
        nodes,
        "cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 64, 64])],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10]),
            helper.make_tensor_value_info("cat", TensorProto.FLOAT, [1, 64, 32, 32]),
        ],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


@pytest.mark.parametrize("backend", ["threads", "processes"])
@pytest.mark.parametrize("layout", ["auto", "channels-last", "nchw"])
def test_cnn_matches_onnxruntime(layout, backend, tmp_path, pipeline_helpers):
    model = _cnn()
    x = np.random.default_rng(1).standard_normal((1, 8, 64, 64)).astype(np.float32)
    ref = pipeline_helpers.ort_run(model, {"x": x})
    opts = CompileOptions(clusters=2, backend=backend, layout=layout)
    res = compile_model(model, str(tmp_path), opts)
    assert res.clusters == 2
    with CompiledModel(res, opts) as m:
        formats = {s.format_name for s in m.program.channels.values()}
        if layout == "nchw":
            assert formats == {"contiguous_format"}
        else:  # the branches run in separate clusters: activations cross channels-last
            assert "channels_last" in formats
        for name, spec in m.program.channels.items():
            if spec.src is None or spec.dst is None:  # graph inputs and outputs: contiguous
                assert spec.format_name == "contiguous_format", name
        par = m.run({"x": torch.from_numpy(x)})
        seq = m.sequential(torch.from_numpy(x))
        if backend == "processes":
            runner = m._runner  # noqa: SLF001 - the shared buffers are the point here
            for name, spec in m.program.channels.items():
                assert _is_cl(runner._bufs[name]) == (spec.format_name == "channels_last")  # noqa: SLF001
    for i, name in enumerate(["y", "cat"]):
        assert par[name].is_contiguous() and seq[i].is_contiguous()
        pipeline_helpers.assert_close(par[name], ref[i], 1e-4, f"{name} parallel, {layout}")
        pipeline_helpers.assert_close(seq[i], ref[i], 1e-4, f"{name} sequential, {layout}")


def test_layout_option_errors(tmp_path):
    with pytest.raises(RamielError, match="layout must be one of auto, channels-last, nchw"):
        compile_model(_cnn(), str(tmp_path), CompileOptions(layout="nhwc"))
    assert not os.listdir(tmp_path)  # before any work


# -- LRN -----------------------------------------------------------------------------------------


def _lrn_spec(x: np.ndarray, size: int, alpha: float, beta: float, bias: float) -> np.ndarray:
    """LRN from the ONNX spec, in float64: square_sum over channels
    [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)] clipped to [0, C - 1]."""
    x = x.astype(np.float64)
    c = x.shape[1]
    lo, hi = (size - 1) // 2, size - 1 - (size - 1) // 2
    sq = np.zeros_like(x)
    for ch in range(c):
        sq[:, ch] = (x[:, max(0, ch - lo) : min(c - 1, ch + hi) + 1] ** 2).sum(axis=1)
    return x / (bias + alpha / size * sq) ** beta


@pytest.mark.parametrize(
    "size,beta", [(1, 0.75), (2, 0.75), (3, 0.5), (4, 1.3), (5, 0.75), (6, 1.0)]
)
@pytest.mark.parametrize("fmt", ["nchw", "channels_last"])
def test_lrn_matches_the_spec(size, beta, fmt, pipeline_helpers):
    """ops.lrn against the spec's formula (every size; onnx.reference 1.23 sums over the wrong
    axis) and against onnxruntime (odd sizes only: its kernel rejects even ones), in both memory
    formats and in float16."""
    from ramiel.runtime import ops

    x = np.random.default_rng(size).standard_normal((1, 7, 5, 6)).astype(np.float32) * 3
    refs = [_lrn_spec(x, size, 0.02, beta, 1.5)]
    if size % 2:
        node = helper.make_node("LRN", ["x"], ["y"], size=size, alpha=0.02, beta=beta, bias=1.5)
        graph = helper.make_graph(
            [node],
            "lrn",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, x.shape)],
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 8
        refs += pipeline_helpers.ort_run(model, {"x": x})
    t = torch.from_numpy(x)
    if fmt == "channels_last":
        t = t.contiguous(memory_format=CL)
    y = ops.lrn(t, size, alpha=0.02, beta=beta, bias=1.5)
    assert _is_cl(y) == (fmt == "channels_last")
    y16 = ops.lrn(t.half(), size, alpha=0.02, beta=beta, bias=1.5)
    for ref in refs:
        pipeline_helpers.assert_close(y, ref, 1e-5, f"LRN size {size} beta {beta} {fmt}")
        pipeline_helpers.assert_close(y16.float(), ref, 5e-3, f"LRN float16 size {size}")


@pytest.mark.parametrize("beta", [0.75, 0.5, 1.3])
@pytest.mark.parametrize("fmt", ["nchw", "channels_last"])
def test_lrn_differentiates(beta, fmt):
    """ops.lrn under autograd (a --trainable module's LRN, or an input gradient): the gradient
    of the spec's formula written out in float64 torch ops (torch.autograd.gradcheck's numbers
    would be float32 ones here). The in-place power of beta = 0.75 had made backward() fail."""
    from ramiel.runtime import ops

    x = torch.from_numpy(np.random.default_rng(3).standard_normal((1, 7, 5, 6)) * 3)
    if fmt == "channels_last":
        x = x.contiguous(memory_format=CL)
    xs = x.float().requires_grad_(True)
    ops.lrn(xs, 5, alpha=0.02, beta=beta, bias=1.5).pow(2).sum().backward()
    xd = x.clone().requires_grad_(True)
    sq = F.pad(xd * xd, [0, 0, 0, 0, 2, 2])
    total = sum(sq[:, i : i + 7] for i in range(5))
    (xd / (1.5 + 0.02 / 5 * total) ** beta).pow(2).sum().backward()
    assert xs.grad is not None and xd.grad is not None
    np.testing.assert_allclose(xs.grad.double().numpy(), xd.grad.numpy(), rtol=1e-4, atol=1e-5)


# -- pooling with one window -------------------------------------------------------------------


@pytest.mark.parametrize(
    "op,attrs,shape,form",
    [
        ("AveragePool", {"kernel_shape": [7, 7], "pads": [0, 0, 1, 1]}, (1, 16, 6, 6), "torch.mean"),
        ("MaxPool", {"kernel_shape": [7, 7], "pads": [0, 0, 1, 1]}, (1, 16, 6, 6), "torch.amax"),
        ("AveragePool", {"kernel_shape": [7, 7]}, (1, 16, 7, 7), "torch.mean"),
        ("MaxPool", {"kernel_shape": [4, 4], "pads": [1, 1, 1, 1], "strides": [4, 4]}, (1, 4, 3, 3),
         "torch.amax"),
        # the window misses the last row and column: a real pooling
        ("AveragePool", {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [3, 3]},
         (1, 4, 3, 3), "F.avg_pool2d"),
        # the pads count in the divisor: a real pooling
        ("AveragePool", {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [3, 3],
                         "count_include_pad": 1}, (1, 4, 2, 2), "F.avg_pool2d"),
    ],
)  # fmt: skip
def test_pooling_with_one_window_is_a_reduction(op, attrs, shape, form, pipeline_helpers):
    """A pooling whose single window covers the whole input (light_inception_v1's 7x7 average
    pooling of a 6x6 map with end pads) is a mean/amax over the spatial dims, equal to
    onnxruntime; a window that misses part of the input, or pads that count, stay poolings."""
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node(op, ["x"], ["y"], **attrs)],
        "pool",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    (ref,) = pipeline_helpers.ort_run(model, {"x": x})
    node = NodeView(op, "n", "", 17, [TensorInfo("x", shape, "float32")],
                    [TensorInfo("y", None, "float32")], attrs)  # fmt: skip
    em = EvalEmitter()
    (y,) = lower_node(node, [em.wrap(torch.from_numpy(x), "x")], em)
    assert em.lines[-1].split(" = ")[1].startswith(form), em.lines
    assert tuple(y.obj.shape) == ref.shape
    pipeline_helpers.assert_close(y.obj, ref, 1e-6, f"{op} {attrs}")


def test_channel_specs_pickle():
    """Spawned and forkserver workers receive the program pickled: a channel's memory format
    survives (torch.memory_format objects themselves do not pickle)."""
    import pickle

    for fmt in (CL, torch.contiguous_format):
        spec = ChannelSpec("a", None, (1, 4, 5, 5), torch.float32, memory_format=fmt)
        assert pickle.loads(pickle.dumps(spec)) == spec


def test_channels_last_channels_in_spawned_workers(tmp_path, pipeline_helpers):
    """The processes backend with spawned workers (the program and its channel formats
    pickled): channels-last buffers in every worker, the same outputs as onnxruntime."""
    from ramiel.runtime import start

    model = _cnn()
    x = np.random.default_rng(2).standard_normal((1, 8, 64, 64)).astype(np.float32)
    ref = pipeline_helpers.ort_run(model, {"x": x})
    opts = CompileOptions(clusters=2, backend="processes", layout="channels-last")
    res = compile_model(model, str(tmp_path), opts)
    m = CompiledModel(res, opts)
    assert any(s.format_name == "channels_last" for s in m.program.channels.values())
    with start(
        m.program, m.weights_namespace(), backend="processes", start_method="spawn"
    ) as runner:
        out = runner.run({"x": torch.from_numpy(x)})
    pipeline_helpers.assert_close(out["y"], ref[0], 1e-4, "y, spawned workers")
    pipeline_helpers.assert_close(out["cat"], ref[1], 1e-4, "cat, spawned workers")


@pytest.mark.parametrize("layout", ["channels-last", "nchw"])
def test_cnn_on_distributed_ranks(layout, tmp_path, pipeline_helpers):
    """The distributed backend (gloo, one rank per cluster) with activations crossing ranks in
    channels-last: a rank receives into a buffer of the channel's format and sends the tensor
    as it is (its bytes are in that order), so the values arrive unchanged."""
    from ramiel.runtime import load_program, start

    model = _cnn()
    x = np.random.default_rng(4).standard_normal((1, 8, 64, 64)).astype(np.float32)
    ref = pipeline_helpers.ort_run(model, {"x": x})
    # the threads backend's transfer costs, so that the merge keeps both branches' clusters
    opts = CompileOptions(clusters=2, backend="threads", layout=layout)
    res = compile_model(model, str(tmp_path), opts)
    program = load_program(res.parallel_path)
    assert len(program.clusters) == 2
    crossing = {s.format_name for s in program.channels.values() if s.src and s.dst}
    assert crossing == ({"channels_last"} if layout == "channels-last" else {"contiguous_format"})
    with start(program, Weights.from_safetensors(res.weights_path), backend="distributed",
               timeout_s=120) as r:  # fmt: skip
        for _ in range(2):
            out = r.run({"x": torch.from_numpy(x)})
            pipeline_helpers.assert_close(out["y"], ref[0], 1e-4, f"y, ranks, {layout}")
            pipeline_helpers.assert_close(out["cat"], ref[1], 1e-4, f"cat, ranks, {layout}")
            assert out["y"].is_contiguous() and out["cat"].is_contiguous()
