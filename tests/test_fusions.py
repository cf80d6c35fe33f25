"""``--fuse-layer-norm``, ``--fuse-gelu``, ``--fuse-attention`` on real exports and near-misses.

The project's transformers and the ``transformers`` library's BERT, ViT and ConvNeXt (test
sizes), exported at opset 14 (LayerNorm decomposed) and 17: every LayerNorm, GELU and attention
of the model is fused (counted per model), and the program with and without the rewrites
matches onnxruntime on the original model (sequential module, and the parallel module on both
backends). BERT's attention mask is a graph input: masks with padded and fully masked positions
check the fused attention's masked rows (zeros, as the exported NaN guard gives). Small graphs
check that near-misses stay unfused and still compute the right values.
"""

from __future__ import annotations

import collections
import math
import os

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper

from ramiel import models
from ramiel.compiler import CompiledModel, CompileOptions, compile_model

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

# model -> (layers, LayerNorms) of its architecture: one attention and one GELU per layer
MODELS = {
    "transformer": (4, 9),
    "transformer_torch": (4, 8),
    "hf_bert_test": (2, 5),
    "hf_vit_test": (2, 5),
    "hf_convnext_test": (2, 5),  # no attention; its stem's channels-first norm is written out
}


@pytest.fixture(autouse=True)
def _one_thread():
    prev = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(prev)


def _feeds(name: str) -> dict[str, torch.Tensor]:
    return dict(zip(models.input_names(name), models.example_inputs(name), strict=True))


@pytest.mark.parametrize("opset", [14, 17])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_fusions(name, opset, exported_model, tmp_path, pipeline_helpers):
    path = exported_model(name, opset)
    feeds = _feeds(name)
    (ref,) = pipeline_helpers.ort_run(onnx.load(path), feeds)
    layers, norms = MODELS[name]
    attention = 0 if "convnext" in name else layers
    for disable in ((), ("all",)):
        opts = CompileOptions(clusters=2, backend="threads", disable=disable)
        res = compile_model(path, str(tmp_path / str(len(disable))), opts)
        ops = collections.Counter(res.op_counts())
        if not disable:
            assert (ops["Attention"], ops["Gelu"], ops["LayerNormalization"]) == (
                attention,
                layers,
                norms,
            ), dict(ops)
            assert ops["Softmax"] == ops["Erf"] == ops["Sqrt"] == 0, dict(ops)
        else:
            assert ops["Attention"] == ops["Gelu"] == 0
        with CompiledModel(res, opts) as m:
            what = f"{name} opset {opset} disable={disable}"
            pipeline_helpers.assert_close(m.sequential(*feeds.values()), ref, 1e-3, what)
            pipeline_helpers.assert_close(m(*feeds.values()), ref, 1e-3, f"{what} parallel")


@pytest.mark.parametrize("name", ["transformer", "hf_bert_test"])
def test_processes_backend(name, exported_model, tmp_path, pipeline_helpers):
    path = exported_model(name, 14)
    feeds = _feeds(name)
    (ref,) = pipeline_helpers.ort_run(onnx.load(path), feeds)
    opts = CompileOptions(clusters=2, backend="processes")
    res = compile_model(path, str(tmp_path), opts)
    assert res.clusters == 2
    with CompiledModel(res, opts) as m:
        pipeline_helpers.assert_close(m(*feeds.values()), ref, 1e-3, f"{name} processes")


@pytest.mark.parametrize("masked", ["padding", "all"])
def test_bert_attention_mask(masked, exported_model, tmp_path, pipeline_helpers):
    """Padded keys, and a mask of all zeros (every row fully masked: the exported NaN guard and
    the fused attention both give zeros there)."""
    path = exported_model("hf_bert_test", 17)
    ids, mask = models.example_inputs("hf_bert_test")
    mask = mask.clone()
    if masked == "padding":
        mask[:, 10:] = 0
    else:
        mask[:] = 0
    feeds = {"input_ids": ids, "attention_mask": mask}
    (ref,) = pipeline_helpers.ort_run(onnx.load(path), feeds)
    assert np.isfinite(ref).all()
    res = compile_model(path, str(tmp_path), CompileOptions(clusters=1))
    assert res.op_counts()["Attention"] == 2
    with CompiledModel(res, CompileOptions(clusters=1)) as m:
        pipeline_helpers.assert_close(m.sequential(ids, mask), ref, 1e-3, masked)


# -- small graphs: what fuses and what does not ------------------------------------------------

N = helper.make_node


def _graph(nodes, inputs, out_shape, inits=None, opset=17):
    rng = np.random.default_rng(3)
    protos = [
        numpy_helper.from_array(
            v if isinstance(v, np.ndarray) else rng.uniform(-1, 1, v).astype(np.float32), k
        )
        for k, v in (inits or {}).items()
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info(k, TensorProto.FLOAT, s) for k, s in inputs.items()],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)],
        protos,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return onnx.shape_inference.infer_shapes(model, strict_mode=True)


def f(v):
    return np.array(v, np.float32)


SQRT2 = math.sqrt(2.0)


def _gelu(sqrt2=SQRT2, half=0.5):
    nodes = [
        N("Div", ["x", "s2"], ["d"]),
        N("Erf", ["d"], ["e"]),
        N("Add", ["e", "one"], ["a"]),
        N("Mul", ["x", "a"], ["m"]),
        N("Mul", ["m", "half"], ["y"]),
    ]
    return _graph(nodes, {"x": [2, 8]}, [2, 8], {"s2": f(sqrt2), "one": f(1.0), "half": f(half)})


def _layer_norm(axes=(-1,), eps_after_sqrt=False, x_shape=(2, 3, 8)):
    r = len(x_shape)
    first = min(a % r for a in axes)
    norm = tuple(x_shape[i] if i in {a % r for a in axes} else 1 for i in range(first, r))
    nodes = [
        N("ReduceMean", ["x"], ["mu"], axes=list(axes)),
        N("Sub", ["x", "mu"], ["d"]),
        N("Pow", ["d", "two"], ["p"]),
        N("ReduceMean", ["p"], ["var"], axes=list(axes)),
    ]
    if eps_after_sqrt:
        nodes += [N("Sqrt", ["var"], ["sd"]), N("Add", ["sd", "eps"], ["s"])]
    else:
        nodes += [N("Add", ["var", "eps"], ["ve"]), N("Sqrt", ["ve"], ["s"])]
    nodes += [
        N("Div", ["d", "s"], ["n"]),
        N("Mul", ["n", "g"], ["sc"]),
        N("Add", ["sc", "b"], ["y"]),
    ]
    inits = {"two": f(2.0), "eps": f(1e-5), "g": norm, "b": norm}
    return _graph(nodes, {"x": list(x_shape)}, list(x_shape), inits, opset=14)


def _attention(axis=-1, guard=False, mask_input=False, scale=0.25):
    """Q [1,2,4,8], Kt [1,2,8,6], V [1,2,6,8]; the mask is a graph input (not provably finite)
    or a finite constant."""
    nodes = [N("MatMul", ["q", "kt"], ["s"]), N("Mul", ["s", "c"], ["sc"])]
    inputs = {"q": [1, 2, 4, 8], "kt": [1, 2, 8, 6], "v": [1, 2, 6, 8]}
    inits = {"c": f(scale)}
    if mask_input:
        inputs["mask"] = [1, 1, 4, 6]
    else:
        inits["mask"] = (1, 1, 4, 6)
    nodes += [N("Add", ["sc", "mask"], ["a"]), N("Softmax", ["a"], ["p"], axis=axis)]
    if guard:
        nodes += [N("IsNaN", ["p"], ["nan"]), N("Where", ["nan", "zero", "p"], ["pg"])]
        inits["zero"] = f(0.0)
    nodes.append(N("MatMul", ["pg" if guard else "p", "v"], ["y"]))
    return _graph(nodes, inputs, [1, 2, 4, 8], inits)


SMALL = {
    # name: (model, fused op expected or None for a near-miss)
    "gelu": (_gelu(), "Gelu"),
    "gelu_wrong_sqrt2": (_gelu(sqrt2=1.41), None),
    "gelu_wrong_half": (_gelu(half=0.25), None),
    "layer_norm": (_layer_norm(), "LayerNormalization"),
    "layer_norm_two_axes": (_layer_norm(axes=(-2, -1)), "LayerNormalization"),
    "layer_norm_eps_after_sqrt": (_layer_norm(eps_after_sqrt=True), None),
    "layer_norm_inner_axis": (_layer_norm(axes=(1,)), None),
    "attention_const_mask": (_attention(), "Attention"),
    "attention_guarded_input_mask": (_attention(guard=True, mask_input=True), "Attention"),
    "attention_unguarded_input_mask": (_attention(mask_input=True), None),
    "attention_softmax_axis_2": (_attention(axis=2), None),
}


@pytest.mark.parametrize("case", sorted(SMALL))
def test_small_graph(case, tmp_path, pipeline_helpers):
    model, fused = SMALL[case]
    onnx.checker.check_model(model, full_check=True)
    rng = np.random.default_rng(11)
    feeds = {
        i.name: torch.from_numpy(
            rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim]).astype(
                np.float32
            )
        )
        for i in model.graph.input
    }
    (ref,) = pipeline_helpers.ort_run(model, feeds)
    res = compile_model(model, str(tmp_path), CompileOptions(clusters=1))
    ops = collections.Counter(res.op_counts())
    if fused:
        # Kt is a graph input here: K is its Transpose (a view)
        extra = {"Transpose": 1} if fused == "Attention" else {}
        assert ops == collections.Counter({fused: 1, **extra}), dict(ops)
    else:
        assert ops == collections.Counter(n.op_type for n in model.graph.node), dict(ops)
    with CompiledModel(res, CompileOptions(clusters=1)) as m:
        out = m.sequential(*[feeds[i.name] for i in model.graph.input])
    pipeline_helpers.assert_close(out, ref, 1e-5, case)
