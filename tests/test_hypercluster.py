"""Hyperclustering (``--hypercluster{batch=B}``) end to end: numerics on the zoo models, the
Python API and CLI, and the data-parallel baseline of :mod:`ramiel.data_parallel`.

The oracle is the *sequential batch-1 module* of the same model, run once per sample: the B
outputs of the hyperclustered parallel module (and of its own sequential module) must equal it to
1e-3 of the largest output magnitude. The zoo models build their weights with ConstantOfShape
splats, which make every sample's output nearly the same; the models are rebuilt with seeded
random weights (:func:`ramiel.models.randomize_weights`) and, where they end in a Softmax
that random weights saturate, with the Softmax input (the logits) as an extra graph output.
Each test also checks that the samples' outputs differ by much more than the tolerance, so that a
mix-up of samples could not pass.

Each model is compiled twice (batch 1 and batch B) by one test; densenet121 only at B=2.
"""

from __future__ import annotations

import dataclasses
import os

import numpy as np
import onnx
import pytest
import torch

import ramiel
from ramiel.compiler import CompiledModel
from ramiel.data_parallel import (
    data_parallel_from_compiled,
    fixed_batch_reshapes,
    free_batch,
    split_batch,
)
from ramiel.models import randomize_weights
from ramiel.passes.hypercluster import sample_name
from ramiel.runtime import start

RTOL = 1e-3
#: Samples must differ by this multiple of the tolerance on at least one output.
DISTINCT = 5.0
#: The FC-heavy models keep their 16-100 M-element fully connected weights as splats.
FC_HEAVY = ("light_bvlc_alexnet", "light_vgg19", "light_zfnet512")
MAX_RANDOM_ELEMENTS = 1 << 22


def rebuilt(path: str, seed: int = 0) -> onnx.ModelProto:
    """The zoo model with random weights and the logits of its Softmax as an extra output."""
    name = os.path.basename(path)[: -len(".onnx")]
    limit = MAX_RANDOM_ELEMENTS if name in FC_HEAVY else None
    m = randomize_weights(onnx.load(path), seed=seed, max_elements=limit)
    inferred = onnx.shape_inference.infer_shapes(m)
    types = {vi.name: vi for vi in inferred.graph.value_info}
    outputs = {o.name for o in m.graph.output}
    for n in m.graph.node:
        if n.op_type == "Softmax" and n.input[0] not in outputs and n.input[0] in types:
            m.graph.output.append(types[n.input[0]])
    return m


def sample_inputs(specs: dict, batch: int) -> list[list[torch.Tensor]]:
    """Per sample, the graph inputs of a batch-1 module (seeded; sample k scaled by 1 + k)."""
    gen = torch.Generator().manual_seed(1234)
    return [
        [torch.randn(tuple(shape), generator=gen) * (1 + k) for shape, _dtype in specs.values()]
        for k in range(batch)
    ]


def as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def assert_close(got: torch.Tensor, ref: torch.Tensor, what: str) -> None:
    r = ref.numpy()
    g = got.numpy()
    assert g.shape == r.shape, f"{what}: shape {g.shape} != {r.shape}"
    scale = float(np.abs(r).max()) if r.size else 0.0
    err = float(np.abs(g - r).max()) if r.size else 0.0
    assert err <= RTOL * max(scale, 1e-30), f"{what}: max error {err:.3g} vs max |ref| {scale:.3g}"


def reference(seq1: CompiledModel, samples: list[list[torch.Tensor]]) -> list[tuple]:
    """The sequential batch-1 module on each sample (one intra-op thread, deterministic)."""
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return [as_tuple(seq1.sequential(*xs)) for xs in samples]
    finally:
        torch.set_num_threads(old)


def assert_samples_differ(refs: list[tuple]) -> None:
    """The test has power: some output differs between samples 0 and 1 well above tolerance."""
    best = 0.0
    for a, b in zip(refs[0], refs[1], strict=True):
        scale = float(a.abs().max())
        if scale > 0:
            best = max(best, float((a - b).abs().max()) / scale)
    assert best > DISTINCT * RTOL, f"samples differ by only {best:.2g} of the output magnitude"


def feeds_of(names: list[str], samples: list[list[torch.Tensor]]) -> dict[str, torch.Tensor]:
    return {
        sample_name(n, k): x for k, xs in enumerate(samples) for n, x in zip(names, xs, strict=True)
    }


def check_batch_outputs(
    out: dict[str, torch.Tensor], output_names: list[str], refs: list[tuple], what: str
) -> None:
    assert set(out) == {sample_name(o, k) for k in range(len(refs)) for o in output_names}
    for k, ref in enumerate(refs):
        for o, r in zip(output_names, ref, strict=True):
            assert_close(out[sample_name(o, k)], r, f"{what} {sample_name(o, k)}")


# ------------------------------------------------------------------------------- zoo numerics


def test_zoo_hypercluster_matches_batch1(zoo_model: str, zoo_models: dict[str, str]):
    """B=2 on two workers: parallel and sequential B-sample modules against batch 1 per sample."""
    batch = 2
    model = rebuilt(zoo_models[zoo_model])
    with (
        ramiel.compile(model, clusters=1) as seq1,
        ramiel.compile(model, clusters=2, batch=batch) as hyper,
    ):
        in_names = list(seq1.input_specs)
        out_names = list(seq1.output_names)
        assert list(hyper.input_specs) == [
            sample_name(n, k) for k in range(batch) for n in in_names
        ]
        assert hyper.output_names == [sample_name(o, k) for k in range(batch) for o in out_names]
        samples = sample_inputs(seq1.input_specs, batch)
        refs = reference(seq1, samples)
        assert_samples_differ(refs)

        feeds = feeds_of(in_names, samples)
        check_batch_outputs(hyper.run(feeds), out_names, refs, "parallel")
        seq_b = as_tuple(hyper.sequential(*feeds.values()))
        check_batch_outputs(
            dict(zip(hyper.output_names, seq_b, strict=True)), out_names, refs, "sequential"
        )
        # The schedule estimate is that of B copies: B times the work, the same critical path.
        r1, rb = seq1.report, hyper.report
        assert rb.work_us == pytest.approx(batch * r1.work_us, rel=1e-9)
        assert rb.critical_path_us == pytest.approx(r1.critical_path_us, rel=1e-9)
        assert rb.makespan_us <= rb.work_us * (1 + 1e-9)


@pytest.fixture(scope="module")
def squeezenet3(zoo_models: dict[str, str]):
    """squeezenet with random weights: (batch-1 module, module for 3 samples on 2 workers)."""
    model = rebuilt(zoo_models["light_squeezenet"])
    seq1 = ramiel.compile(model, clusters=1)
    hyper = ramiel.compile(model, clusters=2, batch=3)
    yield seq1, hyper
    hyper.close()
    seq1.close()


@pytest.mark.parametrize("backend", ["threads", "processes"])
def test_squeezenet_batch3_both_backends(squeezenet3, backend: str):
    """B=3 on 2 workers mixes the samples (one is split over both workers); both backends."""
    seq1, hyper = squeezenet3
    samples = sample_inputs(seq1.input_specs, 3)
    refs = reference(seq1, samples)
    assert_samples_differ(refs)
    # The 3-sample schedule is not whole samples per worker: some tensor crosses workers.
    assert hyper.report.transfers > 0
    opts = dataclasses.replace(hyper.options, backend=backend)
    with CompiledModel(hyper.result, opts) as model:
        for _ in range(2):  # workers serve several inferences
            out = model.run(feeds_of(list(seq1.input_specs), samples))
            check_batch_outputs(out, list(seq1.output_names), refs, backend)


@pytest.mark.parametrize("backend", ["threads", "processes"])
@pytest.mark.parametrize(("batch", "workers"), [(3, 2), (4, 2), (1, 2)])
def test_data_parallel_program(squeezenet3, backend: str, batch: int, workers: int):
    """The data-parallel baseline: samples split over workers, each runs the batch-1 module."""
    seq1, _ = squeezenet3
    samples = sample_inputs(seq1.input_specs, batch)
    refs = reference(seq1, samples)
    prog = data_parallel_from_compiled(seq1, batch, workers)
    assert len(prog.clusters) == min(batch, workers)
    assert list(prog.inputs) == [sample_name(n, k) for k in range(batch) for n in seq1.input_specs]
    with start(prog, seq1.weights_namespace(), backend=backend) as runner:
        out = runner.run(feeds_of(list(seq1.input_specs), samples))
    check_batch_outputs(out, list(seq1.output_names), refs, f"data parallel {backend}")


def test_data_parallel_single_output(zoo_models: dict[str, str]):
    """A batch-1 module with one output (returned bare by its forward)."""
    with ramiel.compile(zoo_models["light_squeezenet"], clusters=1) as seq1:
        assert len(seq1.output_names) == 1
        samples = sample_inputs(seq1.input_specs, 3)
        refs = reference(seq1, samples)
        with start(data_parallel_from_compiled(seq1, 3, 2), seq1.weights_namespace()) as runner:
            out = runner.run(feeds_of(list(seq1.input_specs), samples))
    check_batch_outputs(out, list(seq1.output_names), refs, "data parallel")


# ------------------------------------------------------------------------------- batch helpers


def test_split_batch():
    assert split_batch(8, 2) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert split_batch(3, 2) == [[0], [1, 2]]
    assert split_batch(1, 2) == [[0]]
    assert sorted(sum(split_batch(7, 3), [])) == list(range(7))
    with pytest.raises(ValueError):
        split_batch(0, 2)


def test_fixed_batch_reshapes(zoo_models: dict[str, str]):
    """Which zoo models can run a whole batch in one call (no Reshape to a batch of 1)."""
    free = {n for n, p in zoo_models.items() if not fixed_batch_reshapes(onnx.load(p))}
    assert free == {"light_densenet121", "light_squeezenet"}
    with pytest.raises(ValueError, match="fix the batch to 1"):
        free_batch(onnx.load(zoo_models["light_inception_v1"]))


def test_free_batch_squeezenet_matches_batch1(squeezenet3, zoo_models: dict[str, str]):
    """squeezenet with a free batch, imported at B=4, equals the batch-1 module per sample."""
    seq1, _ = squeezenet3
    model = free_batch(rebuilt(zoo_models["light_squeezenet"]))
    samples = sample_inputs(seq1.input_specs, 4)
    refs = reference(seq1, samples)
    (name,) = seq1.input_specs
    with ramiel.compile(model, clusters=1, input_shapes={name: (4, 3, 224, 224)}) as whole:
        outs = as_tuple(whole.sequential(torch.cat([xs[0] for xs in samples])))
    for k, ref in enumerate(refs):
        for o, r in zip(seq1.output_names, ref, strict=True):
            assert_close(outs[list(seq1.output_names).index(o)][k : k + 1], r, f"{o} sample {k}")


def test_randomize_weights_is_seeded(zoo_models: dict[str, str]):
    m = onnx.load(zoo_models["light_squeezenet"])
    a, b, c = randomize_weights(m, 0), randomize_weights(m, 0), randomize_weights(m, 1)
    assert not [n for n in a.graph.node if n.op_type == "ConstantOfShape"]
    assert a.SerializeToString() == b.SerializeToString()
    assert a.SerializeToString() != c.SerializeToString()


# ------------------------------------------------------------------------------- CLI


def test_cli_compile_batch(tmp_path, zoo_models: dict[str, str], capsys):
    """``ramiel compile --batch 3``: B inputs and outputs, the estimate of the B-sample program."""
    from ramiel.runtime import load_program
    from ramiel.tools.driver import main

    out = tmp_path / "out"
    path = zoo_models["light_squeezenet"]
    assert main(["compile", path, "-o", str(out), "--batch", "3", "--clusters", "2"]) == 0
    assert "estimated: W/CP" in capsys.readouterr().out
    prog = load_program(out / "model.py")
    assert list(prog.inputs) == ["data_0__s0", "data_0__s1", "data_0__s2"]
    assert list(prog.outputs) == ["softmaxout_1__s0", "softmaxout_1__s1", "softmaxout_1__s2"]
    assert len(prog.clusters) == 2
    mlir = (out / "model.mlir").read_text()
    assert "ramiel.batch = 3 : i64" in mlir
    assert "onnx_node_name = " in mlir and "@s2" in mlir
    report = (out / "schedule.txt").read_text()
    assert "est. makespan" in report
    with pytest.raises(SystemExit) as info:  # argparse's one-line error for a bad value
        main(["compile", path, "-o", str(tmp_path / "bad"), "--batch", "0"])
    assert info.value.code == 2
    assert "argument --batch: must be from 1" in capsys.readouterr().err
    assert not (tmp_path / "bad").exists()


def test_batch_of_a_model_with_a_symbolic_batch_dimension(tmp_path):
    """``--batch 3`` on a model whose dimension 0 is symbolic (PyTorch's ``dynamic_axes``
    export): each sample bound to 1, as without ``--batch`` (it had stopped with "graph input
    'x' has a dynamic dimension 0 ('batch'): bind it with --input-shape"; helper-26), and each
    sample's output matches onnxruntime on its own input."""
    import numpy as np
    import onnx
    import onnxruntime as ort
    import torch
    from onnx import TensorProto, helper, numpy_helper

    import ramiel

    w = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["t"]), helper.make_node("Relu", ["t"], ["y"])],
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 5])],
        [numpy_helper.from_array(w, "W")],
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    path = str(tmp_path / "mlp.onnx")
    onnx.save(model, path)
    with ramiel.compile(path, batch=3, out_dir=str(tmp_path / "out")) as m:
        assert any("bound to 1 in each of the 3 samples" in n for n in m.result.notes)
        xs = [torch.randn(1, 4) for _ in range(3)]
        outs = m(*xs)
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        for x, y in zip(xs, outs, strict=True):
            (ref,) = sess.run(None, {"x": x.numpy()})
            np.testing.assert_allclose(y.numpy(), ref, rtol=1e-5, atol=1e-6)


def test_cli_run_batch_checks_every_sample(zoo_models: dict[str, str], capsys):
    """``ramiel run --batch 2``: each sample's outputs against onnxruntime on that sample's inputs
    (the original model's input names, not the program's ``<name>__s<k>``)."""
    from ramiel.tools.driver import main

    path = zoo_models["light_squeezenet"]
    argv = ["run", path, "--batch", "2", "--clusters", "2", "--random-weights", "--repeat", "1"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "batch 2 (hyperclustered)" in out
    for k in range(2):
        assert f"output softmaxout_1 (sample {k}): max error vs onnxruntime" in out
    assert "check against onnxruntime: OK (tolerance 1e-3; each of the 2 samples" in out
    assert "onnxruntime (1 thread, 2 runs):" in out
