"""Baselines for batches of B > 1 samples, and the ONNX rewrites the batch experiments need.

Hyperclustering (``--hypercluster{batch=B}``, :mod:`ramiel.passes.hypercluster`) schedules the
operations of B samples together. This module holds what it is measured and tested against:

* :func:`data_parallel_program` (and :func:`data_parallel_from_compiled`): plain data
  parallelism. The B samples are split over P workers in contiguous blocks (worker ``j`` of ``P``
  takes samples ``j*B//P .. (j+1)*B//P - 1``, as ``torch.nn.DataParallel`` scatters a batch) and
  each worker runs the *sequential* batch-1 module on its samples, one after another. It is an ordinary :class:`~ramiel.runtime.Program`
  (P clusters, no cluster-to-cluster channel) with the hyperclustered module's input and output
  names (``<name>__s<k>``), so it runs on every runtime backend and takes the same feeds.
* :func:`randomize_weights` (re-exported from :mod:`ramiel.models`): the zoo models build every
  weight with ``ConstantOfShape`` (one repeated value), which gives nearly uniform, degenerate
  outputs; this rebuilds a model with seeded random weights of the same shapes, so that
  numerics tests can tell samples apart.
* :func:`fixed_batch_reshapes` and :func:`free_batch`: whether a batch-1 model can be run on a
  whole batch at once (its Reshapes must not spell out a batch of 1), and the model with a
  symbolic leading dimension to import with ``--input-shape NAME=B,...``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import onnx
import torch
from onnx import numpy_helper

from ramiel.models import randomize_weights
from ramiel.passes.hypercluster import sample_name
from ramiel.runtime import ChannelSpec, Program

__all__ = [
    "data_parallel_from_compiled",
    "data_parallel_program",
    "fixed_batch_reshapes",
    "free_batch",
    "randomize_weights",
    "sample_name",
    "split_batch",
]


def split_batch(batch: int, workers: int) -> list[list[int]]:
    """Contiguous shares of ``range(batch)`` over ``workers`` (sizes differ by at most one).

    Workers that would get no sample (``workers > batch``) are left out.
    """
    if batch < 1 or workers < 1:
        raise ValueError(f"batch and workers must be >= 1, got {batch} and {workers}")
    shares = [list(range(j * batch // workers, (j + 1) * batch // workers)) for j in range(workers)]
    return [s for s in shares if s]


def data_parallel_program(
    forward: Callable[..., Sequence[torch.Tensor]],
    inputs: Mapping[str, tuple[Sequence[int], torch.dtype]],
    outputs: Mapping[str, tuple[Sequence[int], torch.dtype]],
    batch: int,
    workers: int,
    name: str = "data_parallel",
) -> Program:
    """A :class:`Program` that runs ``forward`` (a sequential batch-1 module) on B samples.

    Args:
        forward: ``forward(w, *inputs) -> tuple of outputs``: the (unbound) ``forward`` of the
            class of a ``model_seq.py``, with the weights namespace ``w`` as ``self`` (it reads
            only ``self.<weight>``).
        inputs: graph input name -> (shape, dtype) of one sample (``INPUTS`` of the module).
        outputs: graph output name -> (shape, dtype) of one sample.
        batch: B, the number of samples per inference.
        workers: P; worker ``c<j>`` runs the samples of :func:`split_batch` share ``j``.

    The program's inputs are ``<input>__s<k>`` and its outputs ``<output>__s<k>`` for every sample
    ``k`` (sample-major, like the hyperclustered module's). Cluster functions are closures, so the
    processes backend needs the ``fork`` start method (its default with one thread per worker).
    """
    shares = split_batch(batch, workers)
    channels: dict[str, ChannelSpec] = {}
    prog_in: dict[str, list[str]] = {}
    prog_out: dict[str, str] = {}
    clusters: dict[str, Callable[..., None]] = {}
    for j, share in enumerate(shares):
        c = f"c{j}"
        for k in share:
            for n, (shape, dtype) in inputs.items():
                ch = f"{sample_name(n, k)}__{c}"
                channels[ch] = ChannelSpec(src=None, dst=c, shape=tuple(shape), dtype=dtype)
                prog_in[sample_name(n, k)] = [ch]
            for n, (shape, dtype) in outputs.items():
                ch = f"{sample_name(n, k)}__out"
                channels[ch] = ChannelSpec(src=c, dst=None, shape=tuple(shape), dtype=dtype)
                prog_out[sample_name(n, k)] = ch
        clusters[c] = _share_fn(forward, list(inputs), list(outputs), share, c)
    # Inputs and outputs in sample order, whatever the share order.
    order = [sample_name(n, k) for k in range(batch) for n in inputs]
    out_order = [sample_name(n, k) for k in range(batch) for n in outputs]
    return Program(
        name=name,
        clusters=clusters,
        channels=channels,
        inputs={n: prog_in[n] for n in order},
        outputs={n: prog_out[n] for n in out_order},
    )


def data_parallel_from_compiled(model: Any, batch: int, workers: int) -> Program:
    """:func:`data_parallel_program` of a batch-1 :class:`~ramiel.compiler.CompiledModel`.

    Uses its sequential module (``model_seq.py``), its input specs, and the output shapes of its
    parallel program; run it with ``start(program, model.weights_namespace(), ...)``.
    """
    if model.options.batch != 1:
        raise ValueError(f"needs a batch-1 compiled model, got batch={model.options.batch}")
    forward = type(model.sequential).forward
    prog = model.program
    outputs = {n: (prog.channels[c].shape, prog.channels[c].dtype) for n, c in prog.outputs.items()}
    return data_parallel_program(forward, model.input_specs, outputs, batch, workers)


def _share_fn(
    forward: Callable[..., Sequence[torch.Tensor]],
    in_names: list[str],
    out_names: list[str],
    share: list[int],
    cluster: str,
) -> Callable[[Any, Any], None]:
    def run_share(ch: Any, w: Any) -> None:
        for k in share:
            args = [ch.get(f"{sample_name(n, k)}__{cluster}") for n in in_names]
            results = forward(w, *args)
            # a module with one output returns it bare
            outs = (results,) if isinstance(results, torch.Tensor) else results
            for n, t in zip(out_names, outs, strict=True):
                ch.put(f"{sample_name(n, k)}__out", t)

    run_share.__name__ = run_share.__qualname__ = f"data_parallel_{cluster}"
    return run_share


# ---------------------------------------------------------------------------------------------
# ONNX rewrites for the batch experiments
# ---------------------------------------------------------------------------------------------


def _constant_arrays(graph: onnx.GraphProto) -> dict[str, np.ndarray]:
    arrays = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    for n in graph.node:
        if n.op_type == "Constant":
            for a in n.attribute:
                if a.name == "value":
                    arrays[n.output[0]] = numpy_helper.to_array(a.t)
    return arrays


def fixed_batch_reshapes(model: onnx.ModelProto) -> list[str]:
    """Names of the Reshape nodes whose constant target shape spells out a batch of 1.

    Such a model cannot run a batch B > 1 in one call (the Reshape would fail or mix samples);
    an empty list means its leading dimension can be freed with :func:`free_batch`.
    Reshapes whose shape is computed at run time are not reported.
    """
    g = model.graph
    arrays = _constant_arrays(g)
    inputs = {i.name for i in g.input} - {t.name for t in g.initializer}
    fixed = []
    for i, n in enumerate(g.node):
        if n.op_type != "Reshape" or len(n.input) < 2 or n.input[1] not in arrays:
            continue
        shape = arrays[n.input[1]].reshape(-1)
        # A Reshape of a weight (not downstream of the graph input) does not carry the batch.
        if shape.size and int(shape[0]) == 1 and _depends_on(g, n, inputs):
            fixed.append(n.name or f"#{i}")
    return fixed


def _depends_on(graph: onnx.GraphProto, node: onnx.NodeProto, names: set[str]) -> bool:
    producer = {o: n for n in graph.node for o in n.output}
    seen: set[str] = set()
    stack = [node.input[0]]
    while stack:
        v = stack.pop()
        if v in names:
            return True
        if v in seen or v not in producer:
            continue
        seen.add(v)
        stack.extend(producer[v].input)
    return False


def free_batch(model: onnx.ModelProto, dim_param: str = "N") -> onnx.ModelProto:
    """A copy of ``model`` with the leading dimension of every graph input and output symbolic.

    Intermediate ``value_info`` is dropped so that shape inference recomputes it. Import the
    result with ``input_shapes={name: (B, ...)}`` (``--input-shape``) to bind the batch.

    Raises:
        ValueError: a Reshape fixes the batch to 1 (see :func:`fixed_batch_reshapes`).
    """
    fixed = fixed_batch_reshapes(model)
    if fixed:
        raise ValueError(f"Reshape node(s) {', '.join(fixed)} fix the batch to 1")
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    inits = {t.name for t in g.initializer}
    for vi in [i for i in g.input if i.name not in inits] + list(g.output):
        dims = vi.type.tensor_type.shape.dim
        if dims:
            dims[0].Clear()
            dims[0].dim_param = dim_param
    del g.value_info[:]
    return m
