"""The generated code as a ``torch.nn.Module``: standard weights, downstream tools, autograd.

For the nine zoo models and the project's CNN and transformer (seeded random weights; the
FC-heavy zoo models keep their 16-100 M-element fully connected layers as splats, as in
``test_hypercluster``), compiled once each:

* the sequential class of ``model_seq.py``, built empty and loaded with
  ``safetensors.torch.load_file`` + ``load_state_dict`` (the way a PyTorch user loads any
  checkpoint), equals onnxruntime within 1e-3 of the largest output magnitude;
* ``weights.safetensors`` is the one weights file of the compile (the IR refers to it), holds
  exactly the module's ``state_dict`` in real shapes and dtypes, and is within 5 % of the bytes
  of the ONNX model's weights in their real shapes;
* ``torch.fx.symbolic_trace``, ``torch.export.export`` and ``torch.compile(fullgraph=True)`` (no
  graph break; the ``aot_eager`` backend: dynamo capture and AOT autograd, without inductor's
  minutes of C++ compilation) give the eager module's outputs within 1e-5; the module moves with
  ``.to(torch.float64)`` (and still matches onnxruntime) and runs on the meta device (every
  tensor it makes follows its inputs' device).
"""

from __future__ import annotations

import os

import numpy as np
import onnx
import pytest
import torch
from conftest import ZOO_DIR, ZOO_MODELS
from safetensors import safe_open
from safetensors.torch import load_file

from ramiel import models
from ramiel.compiler import CompileOptions, compile_model, generated_class
from ramiel.models import onnx_weight_bytes, randomize_weights
from ramiel.runtime.program import import_from_path

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

ZOO = sorted(ZOO_MODELS)
PROJECT = ["inception", "transformer"]
FC_HEAVY = ("light_bvlc_alexnet", "light_vgg19", "light_zfnet512")
MAX_RANDOM_ELEMENTS = 1 << 22
RTOL = 1e-3


class Case:
    """One model with random weights, compiled once: its ONNX model, feeds, reference outputs
    and generated sequential class."""

    def __init__(self, name: str, out_dir: str, helpers):
        if name in PROJECT:
            model = onnx.load(models.export_model(name))
            (example,) = models.example_inputs(name)
            g = torch.Generator().manual_seed(3)
            if example.dtype == torch.int64:
                x = torch.randint(0, 1000, tuple(example.shape), generator=g)
            else:
                x = torch.randn(tuple(example.shape), generator=g)
            self.feeds = {models.input_names(name)[0]: x.numpy()}
        else:
            limit = MAX_RANDOM_ELEMENTS if name in FC_HEAVY else None
            model = randomize_weights(
                onnx.load(os.path.join(ZOO_DIR, f"{name}.onnx")), seed=1, max_elements=limit
            )
            rng = np.random.default_rng(2)
            init = {t.name for t in model.graph.initializer}
            self.feeds = {
                i.name: rng.standard_normal(
                    [d.dim_value for d in i.type.tensor_type.shape.dim]
                ).astype(np.float32)
                for i in model.graph.input
                if i.name not in init
            }
        self.name = name
        self.model = model
        self.result = compile_model(model, out_dir, CompileOptions(clusters=1))
        self.cls = generated_class(
            import_from_path(f"test_module_{name}", self.result.sequential_path)
        )
        self.inputs = [torch.from_numpy(self.feeds[k]) for k in self.cls.INPUTS]
        self.reference = helpers.ort_run(model, self.feeds)

    def loaded(self) -> torch.nn.Module:
        """The class built empty, then ``load_state_dict(safetensors.torch.load_file(...))``."""
        m = self.cls()
        m.load_state_dict(load_file(self.result.weights_path))
        return m.eval()


def outputs(out) -> list[torch.Tensor]:
    return list(out) if isinstance(out, tuple | list) else [out]


@pytest.fixture(scope="module", params=ZOO + PROJECT)
def case(request, tmp_path_factory, pipeline_helpers) -> Case:
    return Case(request.param, str(tmp_path_factory.mktemp(request.param)), pipeline_helpers)


@pytest.fixture(autouse=True)
def _one_thread():
    prev = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(prev)


def test_load_state_dict_from_the_weights_file_matches_onnxruntime(case: Case, pipeline_helpers):
    m = case.loaded()
    with torch.no_grad():
        got = outputs(m(*case.inputs))
    for o, r, name in zip(got, case.reference, case.cls.OUTPUTS, strict=True):
        pipeline_helpers.assert_close(o, r, RTOL, f"{case.name} output {name}")


def test_one_standard_weights_file(case: Case):
    """One weights file, named and shaped like the module's state_dict, the IR pointing at it,
    its size within 5 % of the ONNX weights' real bytes."""
    out = case.result.out_dir
    assert sorted(f for f in os.listdir(out) if f.endswith(".safetensors")) == [
        "weights.safetensors"
    ]
    with open(case.result.ir_path) as f:
        assert 'ramiel.weights = "weights.safetensors"' in f.readline()
    state = case.loaded().state_dict()
    with safe_open(case.result.weights_path, "pt") as f:
        keys = list(f.keys())
        assert sorted(keys) == sorted(state)
        for k in keys:
            t = f.get_slice(k)
            assert tuple(t.get_shape()) == tuple(state[k].shape), k
    size = os.path.getsize(case.result.weights_path)
    real = onnx_weight_bytes(case.model)
    assert abs(size - real) <= 0.05 * real, f"{case.name}: file {size} B, weights {real} B"


def test_fx_export_and_compile_match_eager(case: Case, pipeline_helpers):
    m = case.loaded()
    with torch.no_grad():
        eager = outputs(m(*case.inputs))
        traced = torch.fx.symbolic_trace(m)
        via_fx = outputs(traced(*case.inputs))
        exported = torch.export.export(m, tuple(case.inputs))
        via_export = outputs(exported.module()(*case.inputs))
        torch._dynamo.reset()
        compiled = torch.compile(m, backend="aot_eager", fullgraph=True)
        via_compile = outputs(compiled(*case.inputs))
    for how, got in (("fx", via_fx), ("export", via_export), ("compile", via_compile)):
        for e, g in zip(eager, got, strict=True):
            pipeline_helpers.assert_close(g, e, 1e-5, f"{case.name} {how}")


def test_moves_with_to(case: Case, pipeline_helpers):
    """``.to(torch.float64)``: float64 weights and inputs, still onnxruntime's outputs; the meta
    device: every tensor the code makes follows its inputs (no stray CPU tensor)."""
    m = case.loaded().to(torch.float64)
    assert all(t.dtype != torch.float32 for t in m.state_dict().values())
    xs = [x.double() if x.is_floating_point() else x for x in case.inputs]
    with torch.no_grad():
        got = outputs(m(*xs))
    for o, r in zip(got, case.reference, strict=True):
        assert o.dtype == torch.float64
        pipeline_helpers.assert_close(o, r, RTOL, f"{case.name} in float64")
    meta = case.loaded().to("meta")
    with torch.no_grad():
        shapes = [o.shape for o in outputs(meta(*[x.to("meta") for x in case.inputs]))]
    assert shapes == [torch.Size(r.shape) for r in case.reference]


# ------------------------------------------------------------------------------------ training


@pytest.mark.parametrize("name", PROJECT)
def test_trainable_fine_tuning_step(name: str, tmp_path):
    """``trainable=True``: the floating-point weights are parameters; one SGD step on a toy
    target (the outputs pulled towards zero) changes them and lowers the loss."""
    import ramiel

    path = models.export_model(name)
    (example,) = models.example_inputs(name)
    with ramiel.compile(path, clusters=1, trainable=True, out_dir=str(tmp_path)) as compiled:
        m = compiled.sequential.train()
        params = dict(m.named_parameters())
        assert params and all(p.dtype.is_floating_point for p in params.values())
        assert all(not b.is_floating_point() for b in m.buffers())
        assert set(params) <= set(compiled.state_dict())  # one state for both modules
        before = {k: p.detach().clone() for k, p in params.items()}
        opt = torch.optim.SGD(m.parameters(), lr=1e-3)

        def loss() -> torch.Tensor:
            return m(example).float().pow(2).mean()

        first = loss()
        first.backward()
        assert all(p.grad is not None for p in params.values() if p.requires_grad)
        opt.step()
        opt.zero_grad()
        with torch.no_grad():
            after = loss()
        assert after.item() < first.item()
        changed = [k for k, p in params.items() if not torch.equal(p.detach(), before[k])]
        assert len(changed) > len(params) // 2, changed
        # the parallel module runs with the new weights (the same tensors)
        with torch.no_grad():
            pipeline_out = compiled(example)
            seq_out = m.eval()(example)
        torch.testing.assert_close(pipeline_out, seq_out, rtol=1e-5, atol=1e-5)
        # with autograd on it says once that its outputs carry no gradient (a backward() had
        # been torch's "does not require grad" alone: helper-27)
        with pytest.warns(RuntimeWarning, match="train the sequential module") as seen:
            out = compiled(example)
            compiled(example)
        assert len(seen) == 1 and seen[0].filename == __file__
        assert not out.requires_grad


# ------------------------------------------------------------------------------- batch dimension


def _free_squeezenet(path: str) -> str:
    from ramiel.data_parallel import free_batch

    model = free_batch(
        randomize_weights(onnx.load(os.path.join(ZOO_DIR, "light_squeezenet.onnx")), 1)
    )
    onnx.save(model, path)
    return path


@pytest.mark.parametrize(
    "name", ["inception", "transformer", "light_squeezenet", "gru_tagger", "refiner"]
)
def test_symbolic_batch_runs_at_any_size(name: str, tmp_path, pipeline_helpers):
    """A model whose input dimension 0 is symbolic (PyTorch's ``dynamic_axes`` export, whose
    reshapes come from ``Shape -> Gather -> Concat`` chains; squeezenet with a free batch; the
    GRU tagger, whose initial state of zeros ``(layers, batch, hidden)`` the compiler folds; the
    refiner, whose ``forward`` has a loop): the
    sequential module (with the static program's memory formats, prepacked convolutions and
    in-place ops) matches onnxruntime at batch 1, 3 and 8, and exports once with a dynamic
    batch dimension; the parallel program stays compiled for batch 1 and says so."""
    import ramiel
    from ramiel.runtime import InputMismatch

    if name == "light_squeezenet":
        path = _free_squeezenet(str(tmp_path / "free.onnx"))
    else:
        path = models.export_model(name, dynamic_batch=True)
    model = onnx.load(path)
    (inp,) = [
        i for i in model.graph.input if i.name not in {t.name for t in model.graph.initializer}
    ]
    dims = [d.dim_value for d in inp.type.tensor_type.shape.dim]
    with ramiel.compile(path, clusters=2, out_dir=str(tmp_path / "out")) as compiled:
        assert compiled.result.dynamic_batch == (inp.name,), compiled.result.notes
        with open(compiled.result.sequential_path) as f:
            source = f.read()
        assert "batch = " in source or name == "inception"
        # the docstring lists the bound shapes, outputs as inputs (the outputs had been shown
        # at a sample batch, float32[17, ...]: helper-22)
        (doc_outputs,) = [ln for ln in source.splitlines() if ln.startswith("    Outputs: ")]
        assert "[17," not in doc_outputs and "[1," in doc_outputs, doc_outputs
        if name in ("inception", "light_squeezenet"):  # the static program's formats, fusions
            assert "memory_format=torch.channels_last" in source
            assert "activation='relu')" in source
        seq = compiled.sequential
        g = torch.Generator().manual_seed(0)
        for b in (1, 3, 8):
            shape = (b, *dims[1:])
            if inp.type.tensor_type.elem_type == onnx.TensorProto.INT64:
                x = torch.randint(0, 1000, shape, generator=g)
            else:
                x = torch.randn(shape, generator=g)
            with torch.no_grad():
                got = outputs(seq(x))
            ref = pipeline_helpers.ort_run(model, {inp.name: x.numpy()})
            for o, r in zip(got, ref, strict=True):
                assert o.shape[0] == b
                pipeline_helpers.assert_close(o, r, RTOL, f"{name} at batch {b}")
            if b == 1:  # the parallel program (bound shapes) and the batch-generic sequential
                # module (the same formats, prepacked convolutions and in-place ops): the same
                # values up to rounding
                pipeline_helpers.assert_close(outputs(compiled(x))[0], got[0], 1e-5, "parallel")
            else:
                with pytest.raises(InputMismatch, match="sequential module takes any batch") as e:
                    compiled(x)
                # which dimension, bound to what, and how to compile for this size
                said = str(e.value)
                assert f"input_shapes={{{inp.name!r}: {tuple(shape)}}}" in said, said
                assert f"dimension 0 of input {inp.name!r}" in said and "bound to 1" in said
        batch = torch.export.Dim("batch", min=1, max=64)
        exported = torch.export.export(seq, (x,), dynamic_shapes=({0: batch},))
        for b in (2, 5):
            xb = x[:1].expand(b, *x.shape[1:]).contiguous()
            with torch.no_grad():
                torch.testing.assert_close(exported.module()(xb), seq(xb))


def test_fixed_batch_is_a_note_and_a_clear_error(tmp_path):
    """``dynamic_batch=True`` on a zoo model whose Reshape fixes the batch to 1: a compile-time
    note quoting the statement, and a module that says which batch size it runs."""
    import ramiel

    path = os.path.join(ZOO_DIR, "light_inception_v1.onnx")
    with ramiel.compile(path, clusters=1, dynamic_batch=True, out_dir=str(tmp_path)) as m:
        assert m.result.dynamic_batch == ()
        (note,) = [n for n in m.result.notes if "data_0" in n]  # (and the default's segments)
        assert "node 'n140'" in note and "shape [1, 1024]" in note
        with pytest.raises(AssertionError, match="runs batch size 1 only"):
            m.sequential(torch.zeros(2, 3, 224, 224))
        assert m.sequential(torch.zeros(1, 3, 224, 224)).shape == (1, 1000)


def _expanded_rows_model() -> onnx.ModelProto:
    """``x: float[batch, 8, 64]``; token ids, a (1, 8) row of zeros ``Expand``-ed to
    ``(batch, 8)``, look up a (10, 64) table (BERT's token type ids); a random (1, 1, 64) row
    expanded to ``(batch, 1, 64)`` is put before ``x + table[ids]`` (ViT's class token)."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    inits = [
        numpy_helper.from_array(np.zeros((1, 8), np.int64), "ids"),
        numpy_helper.from_array(rng.standard_normal((10, 64)).astype(np.float32), "table"),
        numpy_helper.from_array(rng.standard_normal((1, 1, 64)).astype(np.float32), "cls"),
        numpy_helper.from_array(np.array([0], np.int64), "zero"),
        numpy_helper.from_array(np.array([8], np.int64), "eight"),
        numpy_helper.from_array(np.array([1, 64], np.int64), "one64"),
    ]
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "zero"], ["b"], axis=0),
        helper.make_node("Concat", ["b", "eight"], ["ids_shape"], axis=0),
        helper.make_node("Expand", ["ids", "ids_shape"], ["ids_b"]),
        helper.make_node("Gather", ["table", "ids_b"], ["emb"], axis=0),
        helper.make_node("Add", ["x", "emb"], ["h"]),
        helper.make_node("Concat", ["b", "one64"], ["cls_shape"], axis=0),
        helper.make_node("Expand", ["cls", "cls_shape"], ["cls_b"]),
        helper.make_node("Concat", ["cls_b", "h"], ["y"], axis=1),
    ]
    g = helper.make_graph(
        nodes,
        "expanded_rows",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 9, 64])],
        inits,
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def test_constants_expanded_to_the_batch_run_at_any_size(tmp_path, pipeline_helpers):
    """Constants ``Expand``-ed to the input's batch (what BERT's and ViT's exports do): at batch
    1 the compiler folds them, so the sequential module reads the batch-free row and expands it
    to the batch, and matches onnxruntime at batch 1, 3 and 8 (it had kept batch 1 with a
    note). The weights file serves both programs: the parallel one loads from it too."""
    import ramiel

    model = _expanded_rows_model()
    onnx.checker.check_model(model, full_check=True)
    path = str(tmp_path / "rows.onnx")
    onnx.save(model, path)
    with ramiel.compile(path, clusters=2, out_dir=str(tmp_path / "out")) as compiled:
        assert compiled.result.dynamic_batch == ("x",), compiled.result.notes
        with open(compiled.result.sequential_path) as f:
            assert ".expand(batch, " in f.read()
        g = torch.Generator().manual_seed(0)
        for b in (1, 3, 8):
            x = torch.randn((b, 8, 64), generator=g)
            with torch.no_grad():
                (got,) = outputs(compiled.sequential(x))
            (ref,) = pipeline_helpers.ort_run(model, {"x": x.numpy()})
            assert got.shape == (b, 9, 64)
            pipeline_helpers.assert_close(got, ref, RTOL, f"batch {b}")
        x = torch.randn((1, 8, 64), generator=g)
        (ref,) = pipeline_helpers.ort_run(model, {"x": x.numpy()})
        pipeline_helpers.assert_close(outputs(compiled(x))[0], ref, RTOL, "parallel")
        # the plain PyTorch way takes the file as it is (a fresh-user check: "Unexpected key(s)"
        # of the constants only the parallel program reads)
        plain = type(compiled.sequential)()
        plain.load_state_dict(load_file(compiled.result.weights_path))
        with torch.no_grad():
            pipeline_helpers.assert_close(outputs(plain(x))[0], ref, RTOL, "plain load")


def _batch_valued_model(kind: str) -> onnx.ModelProto:
    """``x: float[batch, 4]``; ``mod``: ``x * (batch % 2)``; ``slice``: ``x[:32]`` (the
    TorchScript exporter's ``x[:32]``), both computed from ``Shape(x)``."""
    from onnx import TensorProto, helper, numpy_helper

    end = {"slice": 32, "slice150": 150, "slice-unsqueezed": 150, "slice-negative": -150}
    consts = {
        "zero": np.array([0], np.int64),
        "two": np.array([2], np.int64),
        "end": np.array([end.get(kind, 0)], np.int64),
        "limit": np.array(200, np.int64),
        "c150": np.array([150], np.int64),
        "threshold": np.array(300.5, np.float32),
        "max": np.array([2**63 - 1], np.int64),
    }
    inits = [numpy_helper.from_array(v, k) for k, v in consts.items()]
    if kind == "mod":
        nodes = [
            helper.make_node("Shape", ["x"], ["s"]),
            helper.make_node("Gather", ["s", "zero"], ["b"], axis=0),
            helper.make_node("Mod", ["b", "two"], ["m"]),
            helper.make_node("Cast", ["m"], ["f"], to=TensorProto.FLOAT),
            helper.make_node("Mul", ["x", "f"], ["y"]),
        ]
        out = ["batch", 4]
    elif kind == "min":  # x * min(batch, 200)
        nodes = [
            helper.make_node("Shape", ["x"], ["s"]),
            helper.make_node("Gather", ["s", "zero"], ["b1"], axis=0),
            helper.make_node("Squeeze", ["b1"], ["b"]),
            helper.make_node("Min", ["b", "limit"], ["m"]),
            helper.make_node("Cast", ["m"], ["f"], to=TensorProto.FLOAT),
            helper.make_node("Mul", ["x", "f"], ["y"]),
        ]
        out = ["batch", 4]
    elif kind == "slice-negative":  # x[-150:]
        nodes = [helper.make_node("Slice", ["x", "end", "max", "zero"], ["y"])]
        out = ["rows", 4]
    elif kind == "float-threshold":  # where(float(batch) > 300.5, 2 x, 3 x)
        nodes = [
            helper.make_node("Shape", ["x"], ["s"]),
            helper.make_node("Gather", ["s", "zero"], ["b"], axis=0),
            helper.make_node("Cast", ["b"], ["bf"], to=TensorProto.FLOAT),
            helper.make_node("Greater", ["bf", "threshold"], ["c"]),
            helper.make_node("Cast", ["two"], ["two_f"], to=TensorProto.FLOAT),
            helper.make_node("Mul", ["x", "two_f"], ["x2"]),
            helper.make_node("Add", ["x2", "x"], ["x3"]),
            helper.make_node("Where", ["c", "x2", "x3"], ["y"]),
        ]
        out = ["batch", 4]
    elif kind == "computed-min":  # x[:(B + 150 - |B - 150|) / 2]: min(B, 150) without Min
        nodes = [
            helper.make_node("Shape", ["x"], ["s"]),
            helper.make_node("Gather", ["s", "zero"], ["b"], axis=0),
            helper.make_node("Sub", ["b", "c150"], ["d"]),
            helper.make_node("Abs", ["d"], ["a"]),
            helper.make_node("Add", ["b", "c150"], ["p"]),
            helper.make_node("Sub", ["p", "a"], ["q"]),
            helper.make_node("Div", ["q", "two"], ["e"]),
            helper.make_node("Slice", ["x", "zero", "e", "zero"], ["y"]),
        ]
        out = ["rows", 4]
    elif kind == "slice-unsqueezed":  # the TorchScript exporter's form of a Slice end
        nodes = [
            helper.make_node("Constant", [], ["e0"], value_int=150),
            helper.make_node("Unsqueeze", ["e0", "zero"], ["e"]),
            helper.make_node("Slice", ["x", "zero", "e", "zero"], ["y"]),
        ]
        out = ["rows", 4]
    else:
        nodes = [helper.make_node("Slice", ["x", "zero", "end", "zero"], ["y"])]
        out = ["rows", 4]
    g = helper.make_graph(
        nodes,
        kind,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, out)],
        inits,
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


@pytest.mark.parametrize(
    "kind",
    [
        "mod",
        "slice",
        "slice150",
        "slice-unsqueezed",
        "min",
        "slice-negative",
        "float-threshold",
        "computed-min",
    ],
)
def test_values_of_the_batch_that_two_odd_samples_would_share_keep_the_batch(kind, tmp_path):
    """The batch's parity and a Slice end of 32 on the batch axis: the sample batches differ in
    both, so the module keeps the bound batch with a note (with 17 and 19 such a value had been
    frozen: silently wrong results at an even batch, or beyond 32; a fresh-user check). A
    threshold between the samples, or above them (the second sample is raised above the
    model's constants): at 17 and 130 ``x[:150]`` had been read as ``x[:batch]`` and returned 200
    rows at batch 200 (helper-22), and so had ``x[-150:]``, a float threshold and one computed
    from other ops (helper-23)."""
    import ramiel
    from ramiel.runtime import InputMismatch

    path = str(tmp_path / f"{kind}.onnx")
    onnx.save(_batch_valued_model(kind), path)
    with ramiel.compile(path, clusters=1, out_dir=str(tmp_path / "out")) as compiled:
        assert compiled.result.dynamic_batch == ()
        assert any("keeps batch size 1" in n for n in compiled.result.notes), compiled.result.notes
        with pytest.raises(AssertionError, match="runs batch size 1 only") as e:
            compiled.sequential(torch.ones(40, 4))
        assert "cannot take another: " in str(e.value)  # the reason, not "see the notes"
        assert compiled.result.batch_inputs == {"x": "batch"}
        # the parallel module names the model's dimension and the compile that takes the size
        with pytest.raises(InputMismatch) as e:
            compiled(torch.ones(40, 4))
        said = str(e.value)
        assert "dynamic dimension 'batch', bound to 1" in said, said
        assert "input_shapes={'x': (40, 4)} (ramiel compile --input-shape x=40,4)" in said, said
        assert "runs batch size 1 only as well" in said, said
        with pytest.raises(InputMismatch) as e:  # another mismatch: as it was
            compiled(torch.ones(1, 5))
        assert "dimension 0" not in str(e.value)


def _branch_on_batch_model(test: str, c: int) -> onnx.ModelProto:
    """``x: float[batch, 4]``; ``y = x * 2 if <test>(batch, c) else x * 3``: an ``If`` on a
    comparison of ``Shape(x)[0]`` (TorchScript's export of ``if x.shape[0] > 1:``); ``Mod``:
    ``batch % c == 0``."""
    from onnx import TensorProto, helper, numpy_helper

    def branch(name: str, factor: float) -> onnx.GraphProto:
        k = numpy_helper.from_array(np.array(factor, np.float32), f"{name}_k")
        return helper.make_graph(
            [helper.make_node("Mul", ["x", f"{name}_k"], [f"{name}_y"])],
            name,
            [],
            [helper.make_tensor_value_info(f"{name}_y", TensorProto.FLOAT, ["batch", 4])],
            [k],
        )

    inits = [
        numpy_helper.from_array(np.array(0, np.int64), "zero"),
        numpy_helper.from_array(np.array(c, np.int64), "c"),
    ]
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "zero"], ["b"], axis=0),
    ]
    if test == "Mod":
        nodes += [
            helper.make_node("Mod", ["b", "c"], ["m"]),
            helper.make_node("Equal", ["m", "zero"], ["cond"]),
        ]
    else:
        nodes.append(helper.make_node(test, ["b", "c"], ["cond"]))
    nodes.append(
        helper.make_node(
            "If", ["cond"], ["y"], then_branch=branch("then", 2.0), else_branch=branch("else", 3.0)
        )
    )
    g = helper.make_graph(
        nodes,
        "branch_on_batch",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])],
        inits,
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


@pytest.mark.parametrize(
    "test, c, dynamic",
    [
        ("Greater", 1, False),
        ("Equal", 2, False),
        ("Mod", 3, False),
        ("GreaterOrEqual", 9, False),
        ("Greater", 0, True),  # true at every batch size: no decision, the batch stays free
        ("Equal", -1, True),  # (TorchScript's Equal(shape, -1) before an Expand)
    ],
)
def test_a_branch_on_the_batch_size_keeps_the_batch(test, c, dynamic, tmp_path, pipeline_helpers):
    """``if x.shape[0] > 1:`` (``== 2``, ``% 3 == 0``, ``>= 9``), exported to an ``If``: the
    sample batches 17 and 1018 take the same branch, so the sequential module had been given it
    at every batch size (wrong at batch 1, 2, 3: a fresh-user check). Now it keeps the bound
    batch with a note naming the comparison; comparisons a batch size cannot change still
    leave the batch free. Checked against onnxruntime at every batch the module takes."""
    import ramiel

    model = _branch_on_batch_model(test, c)
    path = str(tmp_path / "branch.onnx")
    onnx.save(model, path)
    with ramiel.compile(path, clusters=1, out_dir=str(tmp_path / "out")) as compiled:
        notes = compiled.result.notes
        if dynamic:
            assert compiled.result.dynamic_batch == ("x",), notes
        else:
            assert compiled.result.dynamic_batch == (), notes
            (note,) = [n for n in notes if "keeps batch size 1" in n]
            assert f"({test})" in note, note
        for b in (1, 2, 3, 6, 9):
            x = torch.arange(4 * b, dtype=torch.float32).reshape(b, 4)
            if b > 1 and not dynamic:
                with pytest.raises(AssertionError, match="runs batch size 1 only"):
                    compiled.sequential(x)
                continue
            (ref,) = pipeline_helpers.ort_run(model, {"x": x.numpy()})
            pipeline_helpers.assert_close(compiled.sequential(x), ref, 1e-6, f"batch {b}")
        (ref,) = pipeline_helpers.ort_run(model, {"x": np.ones((1, 4), np.float32)})
        pipeline_helpers.assert_close(compiled(torch.ones(1, 4)), ref, 1e-6, "parallel")


def test_dynamic_batch_names_a_symbolic_dimension_it_does_not_free(tmp_path):
    """``dynamic_batch=True`` frees dimension 0 of every input; where an input's symbolic
    dimension is another one (an LSTM's ``(seq, batch, features)``), a note says so and how to
    bind that one instead (it had been silent, and the module's check called the sequence
    length the batch: helper-26)."""
    from onnx import TensorProto, helper

    import ramiel

    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "seq_first",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5, "batch", 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [5, "batch", 8])],
    )
    path = str(tmp_path / "seq_first.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), path)
    opts = {"input_shapes": {"x": (5, 1, 8)}, "out_dir": str(tmp_path / "out")}
    with ramiel.compile(path, clusters=1, dynamic_batch=True, **opts) as m:
        (note,) = [n for n in m.result.notes if "--dynamic-batch frees" in n]
        assert "dimension 1 is the symbolic 'batch'" in note and "--input-shape" in note
    with ramiel.compile(path, clusters=1, **opts) as m:  # without: bound, no such note
        assert not [n for n in m.result.notes if "--dynamic-batch frees" in n]
        assert m(torch.ones(5, 1, 8)).shape == (5, 1, 8)


def test_sample_batches_clear_the_model_s_thresholds() -> None:
    """The second sample is raised above the largest constant a Slice, Min or comparison could
    hold the batch against; "to the end" sentinels and other ops' constants do not count."""
    from ramiel.dynamic_batch import SAMPLE_BATCHES, sample_batches, saturation_constants

    assert sample_batches(_batch_valued_model("slice")) == SAMPLE_BATCHES
    assert saturation_constants(_batch_valued_model("slice150")) == {150: "Slice"}
    model = _batch_valued_model("slice150")

    def with_end(value: object) -> onnx.ModelProto:
        model.graph.initializer[2].CopyFrom(onnx.numpy_helper.from_array(np.array([value]), "end"))
        return model

    assert sample_batches(with_end(1500)) == (17, 1502)
    assert sample_batches(with_end(-1500)) == (17, 1502)  # x[-1500:] holds B against 1500
    assert sample_batches(with_end(2**63 - 1)) == SAMPLE_BATCHES  # "to the end"
    with pytest.raises(Exception, match="could hold the batch size against 70000, beyond"):
        sample_batches(with_end(70000))
    # min(batch, 200) counts (computed from Shape); a constant 1e4 of a Clip on values does not
    assert saturation_constants(_batch_valued_model("min")) == {200: "Min"}
    relu6 = _batch_valued_model("slice")
    relu6.graph.initializer.append(onnx.numpy_helper.from_array(np.array(1e4, np.float32), "hi"))
    relu6.graph.node.append(onnx.helper.make_node("Clip", ["y", "zero", "hi"], ["z"]))
    assert 10000 not in saturation_constants(relu6)


def test_resize_of_a_dynamic_batch_runs_after_the_meta_device_check(tmp_path, pipeline_helpers):
    """The compiler checks a dynamic-batch module at another batch size on the meta device;
    Resize's per-axis index tables (cached by size) were made there too, as meta tensors, and
    every later call failed ('Tensor.item() cannot be called on meta tensors'). Found by a
    fresh-user check on a torch.onnx export with dynamic_axes."""
    from onnx import TensorProto, helper

    import ramiel

    nodes = [  # sizes = (B, C) of x, then (7, 9): as torch.onnx.export writes F.interpolate
        helper.make_node("Shape", ["x"], ["shape"], end=2),
        helper.make_node("Concat", ["shape", "hw"], ["sizes"], axis=0),
        helper.make_node("Resize", ["x", "", "", "sizes"], ["r"], mode="nearest"),
        helper.make_node("Add", ["r", "one"], ["y"]),
    ]
    g = helper.make_graph(
        nodes,
        "resize",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", 3, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["B", 3, 7, 9])],
        [
            helper.make_tensor("hw", TensorProto.INT64, [2], [7, 9]),
            helper.make_tensor("one", TensorProto.FLOAT, [], [1.0]),
        ],
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 15)], ir_version=8)
    x = torch.randn(1, 3, 4, 4, generator=torch.Generator().manual_seed(0))
    (ref,) = pipeline_helpers.ort_run(model, {"x": x.numpy()})
    with ramiel.compile(model, clusters=1, out_dir=str(tmp_path)) as compiled:
        assert compiled.result.dynamic_batch == ("x",), compiled.result.notes
        with torch.no_grad():
            pipeline_helpers.assert_close(compiled.sequential(x), ref, 1e-6, "sequential")
            pipeline_helpers.assert_close(outputs(compiled(x))[0], ref, 1e-6, "parallel")
            x3 = torch.randn(3, 3, 4, 4, generator=torch.Generator().manual_seed(1))
            (ref3,) = pipeline_helpers.ort_run(model, {"x": x3.numpy()})
            pipeline_helpers.assert_close(compiled.sequential(x3), ref3, 1e-6, "batch 3")
        from ramiel.runtime import InputMismatch

        # the parallel program's errors point at the sequential module for another batch only
        with pytest.raises(InputMismatch, match="sequential module takes any batch"):
            compiled(x3)
        for bad in (x.double(), x[:, :2], x[0]):
            with pytest.raises(InputMismatch) as info:
                compiled(bad)
            assert "sequential module" not in str(info.value), info.value


def test_the_sequential_module_checks_every_compiled_dimension(tmp_path, pipeline_helpers):
    """The sequential module is compiled for the bound shapes (folded shape computations): a
    sequence length other than the bound one gave a wrong-shaped result without an error, or a
    torch error deep inside forward (found by a fresh-user check). Now one AssertionError names
    the input and the shape it takes; the batch stays free where it is."""
    from onnx import TensorProto, helper

    import ramiel

    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Reshape", ["x", "shape"], ["same"]),
        helper.make_node("ReduceSum", ["same", "axes"], ["y"], keepdims=0),
    ]
    g = helper.make_graph(
        nodes,
        "seqlen",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", "S", 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["B", 16])],
        [helper.make_tensor("axes", TensorProto.INT64, [1], [1])],
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    gen = torch.Generator().manual_seed(0)
    with ramiel.compile(
        model, clusters=1, input_shapes={"x": [2, 8, 16]}, out_dir=str(tmp_path)
    ) as compiled:
        assert compiled.result.dynamic_batch == ("x",), compiled.result.notes
        x = torch.randn(3, 8, 16, generator=gen)
        (ref,) = pipeline_helpers.ort_run(model, {"x": x.numpy()})
        pipeline_helpers.assert_close(compiled.sequential(x), ref, 1e-6, "batch 3")
        for bad in ((3, 5, 16), (3, 8), (3, 8, 16, 1)):
            with pytest.raises(
                AssertionError, match=r"input 'x': this module takes shape \(B, 8, 16\)"
            ):
                compiled.sequential(torch.zeros(bad))
    static = tmp_path / "static"
    with ramiel.compile(
        model, clusters=1, input_shapes={"x": [2, 8, 16]}, dynamic_batch=False, out_dir=str(static)
    ) as compiled:
        with pytest.raises(AssertionError, match=r"takes shape \(2, 8, 16\) only"):
            compiled.sequential(torch.zeros(3, 8, 16))
        assert compiled.sequential(torch.zeros(2, 8, 16)).shape == (2, 16)


def test_the_sequential_module_checks_integer_input_types(tmp_path):
    """An integer (or bool) input takes exactly the model's dtype: a float index tensor had run
    and given a float result where ONNX says int64 (found by a fresh-user check); the parallel
    module refused it already. Floating-point inputs follow the module's own dtype."""
    from onnx import TensorProto, helper

    import ramiel

    g = helper.make_graph(
        [helper.make_node("Gather", ["t", "i"], ["y"], axis=0)],
        "gather",
        [
            helper.make_tensor_value_info("t", TensorProto.FLOAT, [5, 3]),
            helper.make_tensor_value_info("i", TensorProto.INT64, [2]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    t, i = torch.randn(5, 3), torch.tensor([0, 4])
    with ramiel.compile(model, clusters=1, out_dir=str(tmp_path)) as compiled:
        torch.testing.assert_close(compiled.sequential(t, i), t[i])
        for bad in (i.float(), i.int(), i.bool()):
            with pytest.raises(AssertionError, match=r"input 'i': this module takes int64"):
                compiled.sequential(t, bad)
        seq64 = compiled.sequential.double()
        assert seq64(t.double(), i).dtype == torch.float64


# --------------------------------------------------------------------------- standalone modules


def test_generated_modules_run_without_xdsl_and_onnx(tmp_path):
    """``model_seq.py`` and ``model.py`` need torch, safetensors and ``ramiel.runtime`` only:
    they load and run in a process where importing xdsl, onnx or onnxruntime fails."""
    import subprocess
    import sys
    import textwrap

    from safetensors.torch import save_file

    import ramiel

    path = os.path.join(ZOO_DIR, "light_squeezenet.onnx")
    model = randomize_weights(onnx.load(path), seed=4)
    with ramiel.compile(model, clusters=2, out_dir=str(tmp_path / "out")) as compiled:
        x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(0))
        with torch.no_grad():
            y = compiled.sequential(x)
        result = compiled.result
    save_file({"x": x, "y": y.contiguous()}, str(tmp_path / "io.safetensors"))
    script = textwrap.dedent(
        """
        import importlib.abc, importlib.util, sys

        class Blocked(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path, target=None):
                if name.split(".")[0] in ("xdsl", "onnx", "onnxruntime"):
                    raise ImportError(f"{name} is blocked in this process")
                return None

        sys.meta_path.insert(0, Blocked())
        import torch
        from safetensors.torch import load_file

        data = load_file(sys.argv[3])
        for i, path in enumerate(sys.argv[1:3]):
            spec = importlib.util.spec_from_file_location(f"generated_{i}", path)
            mod = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = mod
            spec.loader.exec_module(mod)
            (cls,) = [
                v for v in vars(mod).values()
                if isinstance(v, type) and issubclass(v, torch.nn.Module)
                and v.__module__ == mod.__name__
            ]
            m = cls.from_safetensors()
            with torch.no_grad():
                y = m(data["x"])
            if hasattr(m, "close"):
                m.close()
            torch.testing.assert_close(y, data["y"], rtol=1e-5, atol=1e-6)
            print(cls.__name__, "ok")
        assert not any(k.split(".")[0] in ("xdsl", "onnx") for k in sys.modules)
        """
    )
    run = subprocess.run(
        [sys.executable, "-c", script, result.sequential_path, result.parallel_path,
         str(tmp_path / "io.safetensors")],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.split() == ["SqueezenetOld", "ok", "SqueezenetOldParallel", "ok"]


# ------------------------------------------------------------------------ the compiled module


@pytest.mark.parametrize("backend", ["threads", "processes"])
def test_compiled_model_is_a_module_whose_state_dict_round_trips(backend: str, tmp_path):
    """``ramiel.compile`` returns an ``nn.Module`` whose ``state_dict`` is the weights file;
    ``load_state_dict`` of other weights changes what the parallel program computes (its
    workers restart with them) and what ``.sequential`` computes; loading back restores it."""
    import ramiel

    path = os.path.join(ZOO_DIR, "light_squeezenet.onnx")
    a = randomize_weights(onnx.load(path), seed=5)
    b = randomize_weights(onnx.load(path), seed=6)
    x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(0))
    with (
        ramiel.compile(a, clusters=2, backend=backend, out_dir=str(tmp_path / "a")) as ma,
        ramiel.compile(b, clusters=2, backend=backend, out_dir=str(tmp_path / "b")) as mb,
    ):
        assert isinstance(ma, torch.nn.Module) and isinstance(ma.sequential, torch.nn.Module)
        state = {k: v.clone() for k, v in ma.state_dict().items()}  # state_dict() aliases
        assert sorted(state) == sorted(load_file(ma.result.weights_path))
        ya, yb = ma(x), mb(x)
        assert not torch.allclose(ya, yb)
        ma.load_state_dict(mb.state_dict())
        torch.testing.assert_close(ma(x), yb)
        with torch.no_grad():
            torch.testing.assert_close(ma.sequential(x), yb)
        ma.load_state_dict(state)
        torch.testing.assert_close(ma(x), ya)
        with torch.no_grad():
            torch.testing.assert_close(ma.sequential(x), ya)
    assert ma.closed and mb.closed


def test_parallel_module_class_owns_its_workers(tmp_path):
    """The class of ``model.py``: ``from_safetensors`` like the sequential one, the same
    state_dict keys, workers started on first use and stopped by ``close``/``with``."""
    import ramiel

    path = os.path.join(ZOO_DIR, "light_squeezenet.onnx")
    with ramiel.compile(
        randomize_weights(onnx.load(path), 7), clusters=2, out_dir=str(tmp_path)
    ) as c:
        result, seq_state = c.result, c.sequential.state_dict()
        x = torch.randn(1, 3, 224, 224)
        want = c(x)
    cls = generated_class(import_from_path("test_module_par", result.parallel_path))
    assert cls.__name__ == "SqueezenetOldParallel"
    with cls.from_safetensors(backend="processes") as m:
        assert sorted(m.state_dict()) == sorted(seq_state)
        assert m.closed and "not started" in repr(m)
        torch.testing.assert_close(m(x), want)
        assert not m.closed and len(m.runner.pids) == 2 and "running" in repr(m)
        pids = list(m.runner.pids.values())
    assert m.closed and "closed" in repr(m)
    for pid in pids:  # joined: gone
        assert not os.path.exists(f"/proc/{pid}"), pid


def test_weight_keys_never_clash_with_module_attributes(tmp_path):
    """An initializer named like an nn.Module attribute (``training``, ``forward``, ``state_dict``)
    or a dunder gets another buffer name; the list the lowering avoids covers every public
    attribute of torch.nn.Module and of Ramiel's module classes."""
    from onnx import TensorProto, helper, numpy_helper

    from ramiel.compiler import CompiledModel
    from ramiel.dialects.torchpy import MODULE_ATTRIBUTES, is_weight_key
    from ramiel.runtime import ParallelModel

    public = {n for c in (torch.nn.Module, ParallelModel, CompiledModel) for n in dir(c)}
    public |= set(vars(torch.nn.Module()))
    assert {n for n in public if not n.startswith("_")} <= MODULE_ATTRIBUTES
    assert not is_weight_key("__init__") and not is_weight_key("_x") and is_weight_key("conv_w")

    names = ["training", "forward", "state_dict", "__dict__", "run"]
    inits = [
        numpy_helper.from_array(np.full((2, 2), i + 1.5, np.float32), n)
        for i, n in enumerate(names)
    ]
    nodes, prev = [], "x"
    for i, n in enumerate(names):
        nodes.append(helper.make_node("Add", [prev, n], [f"y{i}"], name=f"add{i}"))
        prev = f"y{i}"
    graph = helper.make_graph(
        nodes, "attrs", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [2, 2])], inits,
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    result = compile_model(model, str(tmp_path), CompileOptions(clusters=1))
    keys = list(load_file(result.weights_path))
    assert len(keys) == len(names)
    assert all(is_weight_key(k) for k in keys), keys
    cls = generated_class(import_from_path("test_module_attrs", result.sequential_path))
    m = cls.from_safetensors()
    assert m.training is True and callable(m.forward) and callable(m.state_dict)
    x = torch.zeros(2, 2)
    torch.testing.assert_close(m(x), torch.full((2, 2), sum(i + 1.5 for i in range(len(names)))))


def test_python_api_is_discoverable():
    """``dir(ramiel)`` and ``help(ramiel)`` show the API, each name with its docstring."""
    import pydoc

    import ramiel

    names = {"compile", "compile_model", "CompileOptions", "CompiledModel", "ParallelModel",
             "RamielError", "UnsupportedOpError", "InputMismatch", "WorkerError", "BACKENDS",
             "backend"}  # fmt: skip
    assert names <= set(dir(ramiel))
    for n in names - {"BACKENDS"}:
        assert getattr(ramiel, n).__doc__, n
    text = pydoc.render_doc(ramiel, renderer=pydoc.plaintext)
    for n in ("compile(", "class CompiledModel", "class CompileOptions", "class RamielError",
              "class ParallelModel", "BACKENDS"):  # fmt: skip
        assert n in text, n


def test_dtype_changes_and_tracing_are_refused_and_the_model_keeps_working(tmp_path):
    """.to(torch.float64) was accepted and every later call failed (the runner closed);
    torch.export of the parallel model sent fake tensors to the workers, with the same end
    (found by a fresh-user check). Both are now one clear error and the model still runs."""
    import ramiel
    from ramiel.runtime import InputMismatch
    from ramiel.runtime.program import ProgramError

    path = os.path.join(ZOO_DIR, "light_squeezenet.onnx")
    x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(0))
    with ramiel.compile(path, clusters=2, out_dir=str(tmp_path)) as m:
        with torch.no_grad():
            want = outputs(m(x))[0]
        for convert in (lambda: m.to(torch.float64), m.double, m.half):
            with pytest.raises(ProgramError, match="converting them .* is not supported"):
                convert()
        with pytest.raises(InputMismatch, match="cannot be traced"):
            torch.export.export(m, (x,))
        with torch.no_grad():
            torch.testing.assert_close(outputs(m(x))[0], want)
        m.float()  # no change of dtype: fine
        assert m.sequential.double() is m.sequential  # the sequential module converts


def _matmul_relu(tmp_path) -> str:
    from onnx import TensorProto, helper, numpy_helper

    w = numpy_helper.from_array(np.random.default_rng(3).standard_normal((8, 8), np.float32), "W")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["t"]), helper.make_node("Relu", ["t"], ["y"])],
        "mm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8])],
        [w],
    )
    path = str(tmp_path / "mm.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def test_the_sequential_module_shares_the_tensors_both_ways(tmp_path):
    """``model.sequential`` holds the parallel module's tensors, whichever of the two replaces
    them: ``assign=True`` through the sequential module reaches the parallel one (which had
    kept the old weights), and converting the shared sequential module makes the parallel
    module's next call one clear ProgramError; a converted copy leaves both alone (found by a
    fresh-user check)."""
    import copy

    import ramiel
    from ramiel.runtime import ProgramError

    x = torch.randn(2, 8)
    with ramiel.compile(_matmul_relu(tmp_path), compile=False) as m:
        (name,) = [k for k, _ in m.named_buffers()]
        new = torch.randn(8, 8)
        held = new.clone()
        m.sequential.load_state_dict({name: held}, assign=True)
        assert dict(m.named_buffers())[name] is held
        torch.testing.assert_close(m(x), torch.relu(x @ new))
        torch.testing.assert_close(m.sequential(x), torch.relu(x @ new))
        m.load_state_dict({name: 2 * new})  # copied into held, through the parallel module
        torch.testing.assert_close(m.sequential(x), torch.relu(x @ (2 * new)))

        double = copy.deepcopy(m.sequential).double()
        torch.testing.assert_close(double(x.double()), torch.relu(x.double() @ (2 * new).double()))
        torch.testing.assert_close(m(x), torch.relu(x @ (2 * new)))  # unchanged by the copy

        m.sequential.double()
        with pytest.raises(ProgramError, match=r"is torch.float64 on cpu, and the program is"):
            m(x)
        m.load_state_dict({name: new.double()}, assign=True)
        with pytest.raises(ProgramError, match="convert a copy of the sequential module"):
            m(x)
        m.load_state_dict({name: new.clone()}, assign=True)  # float32 again: runs again
        torch.testing.assert_close(m(x), torch.relu(x @ new))


@pytest.mark.parametrize("backend", ["threads", "processes"])
def test_a_compiled_model_deep_copies_and_pickles(backend, tmp_path):
    """``copy.deepcopy``, ``pickle`` and ``torch.save``/``torch.load`` of what
    ``ramiel.compile`` returns: each copy runs on workers of its own and gives the original's
    outputs, also once the original is closed (the copy had failed with "cannot pickle
    'mappingproxy' object": the generated class's ARG_NAMES; helper-27)."""
    import copy
    import io
    import pickle

    import ramiel

    path = os.path.join(ZOO_DIR, "light_squeezenet.onnx")
    x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(0))
    with ramiel.compile(path, clusters=2, backend=backend, out_dir=str(tmp_path)) as m:
        y = m(x)
        buf = io.BytesIO()
        torch.save(m, buf)
        buf.seek(0)
        copies = [
            copy.deepcopy(m),
            pickle.loads(pickle.dumps(m)),
            torch.load(buf, weights_only=False),
        ]
    for c in copies:
        assert c.runner is None or c.runner is not m.runner
        torch.testing.assert_close(c(x), y, rtol=1e-4, atol=1e-6)  # (threads may differ)
        c.close()


def test_a_compiled_model_loads_in_another_process(tmp_path):
    """``torch.save`` of what ``ramiel.compile`` returns (compiled into a temporary directory,
    removed with the original), ``torch.load`` in a fresh interpreter: the copy runs its
    parallel program on spawned workers and its sequential module, with the original's outputs.
    Both generated modules travel as their text (the load had failed with "No module named
    'ramiel_par_0'", the name only the first process knew)."""
    import subprocess
    import sys

    import ramiel

    path = os.path.join(ZOO_DIR, "light_squeezenet.onnx")
    x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(0))
    m = ramiel.compile(path, clusters=2, backend="processes")
    y = m(x)
    gone = os.path.dirname(m.result.parallel_path)
    torch.save(m, tmp_path / "model.pt")
    torch.save(x, tmp_path / "x.pt")
    seq = m.sequential  # the nn.Module of model_seq.py, kept alone
    m.close()
    del m
    import gc

    gc.collect()
    assert not os.path.exists(gone)  # the original's temporary directory went with it
    torch.save(seq, tmp_path / "seq.pt")  # (it had pickled by reference then; helper-31)
    script = (
        "import sys, torch\n"
        "m = torch.load(sys.argv[1], weights_only=False)\n"
        "x = torch.load(sys.argv[2])\n"
        "seq = torch.load(sys.argv[4], weights_only=False)\n"
        "torch.save((m(x), m.sequential(x), seq(x)), sys.argv[3])\n"
        "m.close()\n"
    )
    env = dict(os.environ, HOME=str(tmp_path / "home"))
    done = subprocess.run(
        [sys.executable, "-c", script]
        + [str(tmp_path / f) for f in ("model.pt", "x.pt", "y.pt", "seq.pt")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    for got in torch.load(tmp_path / "y.pt"):  # parallel, its sequential, the sequential alone
        torch.testing.assert_close(got, y, rtol=1e-4, atol=1e-6)
    assert list((tmp_path / "home" / ".cache" / "ramiel" / "generated").glob("*/model*.py"))


def test_an_onnx_input_named_self_is_taken_by_name(tmp_path):
    """The parallel module takes the ONNX names as keywords, ``self`` too (nn.Module's call had
    raised "got multiple values for argument 'self'"; a fresh-user check)."""
    import onnx
    from onnx import TensorProto, helper

    import ramiel
    from ramiel.runtime import InputMismatch

    vi = helper.make_tensor_value_info
    graph = helper.make_graph(
        [helper.make_node("Sub", ["self", "other"], ["y"])],
        "g",
        [vi("self", TensorProto.FLOAT, [2, 3]), vi("other", TensorProto.FLOAT, [2, 3])],
        [vi("y", TensorProto.FLOAT, [2, 3])],
    )
    path = tmp_path / "self.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    a, b = torch.randn(2, 3), torch.randn(2, 3)
    with ramiel.compile(str(path), out_dir=str(tmp_path / "out")) as m:
        torch.testing.assert_close(m(**{"self": a, "other": b}), a - b)
        torch.testing.assert_close(m(a, other=b), a - b)
        with pytest.raises(InputMismatch, match="missing 'other'"):
            m(**{"self": a})


def test_generated_modules_from_source_fall_back_to_the_temporary_directory(tmp_path, monkeypatch):
    """Where the home cache cannot be written, :func:`generated_module` writes the generated
    file into the temporary directory; the same text imports once per process."""
    from pathlib import Path

    from ramiel.runtime.program import generated_module

    blocked = tmp_path / "home"
    blocked.write_text("a file, not a directory")
    monkeypatch.setattr(Path, "home", classmethod(lambda cls: blocked))
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    text = "VALUE = 42\n"
    mod = generated_module("ramiel_seq_999", text, "model_seq")
    assert mod.VALUE == 42 and mod.__file__.startswith(str(tmp_path / "tmp"))
    assert generated_module("ramiel_seq_998", text, "model_seq") is mod


def test_from_safetensors_of_a_parallel_module_loaded_without_sys_modules(tmp_path):
    """``model.py`` loaded with ``importlib.util.spec_from_file_location`` + ``exec_module``,
    not registered in ``sys.modules``: ``<Name>Parallel.from_safetensors()`` finds the weights
    file beside it through its cluster functions' globals, as ``model_seq.py``'s class does
    (it had raised "no module file to find weights.safetensors by"; helper-27)."""
    import importlib.util

    import ramiel

    path = os.path.join(ZOO_DIR, "light_squeezenet.onnx")
    x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(0))
    with ramiel.compile(path, clusters=2, out_dir=str(tmp_path)) as m:
        ref = m(x)
        name = m.result.class_name + "Parallel"
    spec = importlib.util.spec_from_file_location("anonymous_parallel", tmp_path / "model.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with getattr(mod, name).from_safetensors() as again:
        torch.testing.assert_close(again(x), ref, rtol=1e-4, atol=1e-6)
