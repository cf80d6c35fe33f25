"""The nine ONNX zoo models through the front end, as the command-line tools run it.

For each model: ``ramiel-translate --import-onnx`` -> ``ramiel-opt --constant-fold --dce`` ->
parse -> print must give the same text, verify, hold no ConstantOfShape and only static shapes,
and stay small (the DenseNet-121 IR under 1 MB). The folded weights are checked against the values
the ONNX file defines, and, for three models, onnxruntime gives bit-identical outputs when the
folded nodes are replaced by initializers holding Ramiel's folded values.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import numpy_helper
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp, NoneType
from xdsl.printer import Printer

from ramiel.context import RamielContext, make_context
from ramiel.dialects.onnx import OPS, OnnxOp, static_shape
from ramiel.parsing import parse_module, verify_located
from ramiel.passes.constant_fold import ConstantFold
from ramiel.tools import opt, translate
from ramiel.weights import constant_value, splat_value

MAX_IR_BYTES = 1_000_000


def _print(module: ModuleOp) -> str:
    buf = io.StringIO()
    Printer(stream=buf).print_op(module)
    buf.write("\n")
    return buf.getvalue()


@dataclass
class ZooRun:
    """One model through the command-line pipeline."""

    raw_path: str  # ramiel-translate --import-onnx output
    clean_path: str  # ramiel-opt --constant-fold --dce output
    text: str  # the clean IR text
    module: ModuleOp  # the clean IR, parsed back


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory, zoo_models):
    """Run the CLI pipeline once per model (cached); returns ``name -> ZooRun``."""
    runs: dict[str, ZooRun] = {}

    def run(name: str) -> ZooRun:
        if name not in runs:
            d = tmp_path_factory.mktemp(name)
            raw, clean = str(d / "raw.mlir"), str(d / "clean.mlir")
            assert translate.main(["--import-onnx", zoo_models[name], "-o", raw]) == 0
            assert opt.main(["--constant-fold", "--dce", raw, "-o", clean]) == 0
            text, module, _ = _load(clean)
            runs[name] = ZooRun(raw, clean, text, module)
        return runs[name]

    return run


def _load(path: str) -> tuple[str, ModuleOp, RamielContext]:
    """The IR at ``path``: its text, the module, and the context it was parsed in (whose weight
    stores resolve its relative ``ramiel.weights`` beside it)."""
    ctx = make_context(os.path.dirname(path))
    with open(path) as f:
        text = f.read()
    return text, parse_module(ctx, text, path), ctx


def test_roundtrip_is_stable_and_verifies(zoo_model, pipeline):
    run = pipeline(zoo_model)
    text, module = run.text, run.module
    verify_located(module)
    assert _print(module).rstrip("\n") == text.rstrip("\n")
    assert len(text.encode()) < MAX_IR_BYTES, f"{zoo_model}: IR is {len(text)} bytes"


def test_clean_ir_has_no_constant_of_shape_and_static_shapes(zoo_model, pipeline):
    module = pipeline(zoo_model).module
    ops = [op for op in module.walk() if isinstance(op, OnnxOp)]
    assert ops
    assert not [op for op in ops if op.op_type == "ConstantOfShape"]
    for op in ops:
        for r in op.results:
            assert isinstance(r.type, NoneType) or static_shape(r.type) is not None, op
    # Dropout masks nobody reads are gone (DCE of unused optional outputs).
    assert all(len(op.results) == 1 for op in ops if op.op_type == "Dropout")


def test_densenet_ir_under_1mb(pipeline, zoo_models):
    size = os.path.getsize(pipeline("light_densenet121").clean_path)
    assert size < MAX_IR_BYTES, size


def _node_name(node: onnx.NodeProto, idx: int) -> str:
    """The importer's name for ``node`` (``<OpType>_<index>`` when the file gives none)."""
    return node.name or f"{node.op_type}_{idx}"


def _folded_values(run: ZooRun) -> dict[str, object]:
    """ONNX node name -> value of the onnx.Constant that ``--constant-fold`` (without ``--dce``,
    so no folded constant is lost) made of the node: ``(scalar, shape)`` for a splat, else the
    array."""
    _, module, ctx = _load(run.raw_path)
    ConstantFold().apply(ctx, module)
    store = ctx.weights.of(module)
    values: dict[str, object] = {}
    for op in module.walk():
        if isinstance(op, OPS["Constant"]) and op.node_name:
            attr = op.properties["value"]
            # a large folded result is a new weight (dense_resource), never a splat
            s = splat_value(attr) if isinstance(attr, DenseIntOrFPElementsAttr) else None
            shape = tuple(attr.type.get_shape())
            values[op.node_name] = (s, shape) if s is not None else constant_value(attr, store)
    return values


def test_folded_constant_of_shape_weights_have_the_onnx_values(zoo_model, pipeline, zoo_models):
    """Every ConstantOfShape of the file became a splat of its `value` over its shape input."""
    model = onnx.load(zoo_models[zoo_model])
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    folded = _folded_values(pipeline(zoo_model))
    checked = 0
    for idx, node in enumerate(model.graph.node):
        name = _node_name(node, idx)
        if node.op_type != "ConstantOfShape" or name not in folded:
            continue
        shape = tuple(int(d) for d in inits[node.input[0]])
        value = numpy_helper.to_array(node.attribute[0].t).reshape(-1)[0]
        got = folded[name]
        assert isinstance(got, tuple), name  # a compact splat, never materialised
        scalar, got_shape = got
        assert got_shape == shape, name
        assert scalar.dtype == value.dtype and scalar == value, name
        checked += 1
    assert checked == sum(n.op_type == "ConstantOfShape" for n in model.graph.node)


def _with_folded_initializers(model: onnx.ModelProto, folded) -> onnx.ModelProto:
    """``model`` with every folded node replaced by an initializer holding Ramiel's value."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    keep = []
    for idx, node in enumerate(m.graph.node):
        name = _node_name(node, idx)
        if name in folded and len(node.output) == 1:
            v = folded[name]
            arr = np.full(v[1], v[0]) if isinstance(v, tuple) else v
            m.graph.initializer.append(numpy_helper.from_array(arr, node.output[0]))
            if m.ir_version < 4:  # initializers must also be graph inputs before IR version 4
                m.graph.input.append(
                    onnx.helper.make_tensor_value_info(
                        node.output[0], numpy_helper.from_array(arr).data_type, arr.shape
                    )
                )
        else:
            keep.append(node)
    del m.graph.node[:]
    m.graph.node.extend(keep)
    return m


@pytest.mark.parametrize(
    "name", ["light_squeezenet", "light_inception_v1", "light_densenet121", "light_shufflenet"]
)
def test_folding_preserves_numerics_under_onnxruntime(name, pipeline, zoo_models):
    model = onnx.load(zoo_models[name])
    folded = _folded_values(pipeline(name))
    rebuilt = _with_folded_initializers(model, folded)
    assert len(rebuilt.graph.node) < len(model.graph.node)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.log_severity_level = 3
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    inits = {t.name for t in model.graph.initializer}
    rng = np.random.default_rng(0)
    feeds = {
        i.name: rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim]).astype(
            np.float32
        )
        for i in model.graph.input
        if i.name not in inits
    }
    ref = ort.InferenceSession(model.SerializeToString(), so).run(None, feeds)
    got = ort.InferenceSession(rebuilt.SerializeToString(), so).run(None, feeds)
    for r, g in zip(ref, got, strict=True):
        np.testing.assert_array_equal(g, r)
