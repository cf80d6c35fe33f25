"""``--compile-segments``: outline the compute between channel operations into compiled segments.

On ``torchpy`` IR (after ``--lower-to-torchpy``). In every cluster function and in the sequential
``forward``, each maximal run of compute statements (``torchpy.call``/``torchpy.method``) that no
channel operation (``torchpy.get``/``torchpy.put``) nor thread count (``torchpy.set_threads``)
interrupts becomes a ``torchpy.func`` of kind ``segment`` -- ``c0_seg0``, ``c0_seg1``, ... for
cluster ``c0``, ``forward_seg0`` for the sequential module -- and the run is replaced by one
``torchpy.call_segment``. The printer writes each segment as its own function decorated with
``@segment`` (:mod:`ramiel.runtime.compiled`): the user sees exactly which statements form one
compiled graph, and the cluster function calls the segments between its channel operations::

    @segment
    def c0_seg0(w, data):
        r0 = F.conv2d(data, w.conv1_w, w.conv1_b, stride=(2, 2), padding=(3, 3))
        r1 = torch.relu(r0)
        return r1

    def cluster_c0(ch, w):
        data = ch.get('data_0__c0')
        r1 = c0_seg0(w, data)
        ch.put('r1__c0_c1', r1)

A segment's arguments are the values its statements read that are defined before it (a graph
input, a ``get``'s tensor, an earlier segment's result); its results are the values defined in it
that later operations read, in definition order. Weights are not arguments: the segment reads
them from ``w`` like the code it replaces (``torch.compile`` freezes them into the graph). So a
segment is one graph for ``torch.compile`` with no channel operation inside (the channel ops
block on other clusters, and ``torch.set_num_threads`` would break the graph) and the schedule is
unchanged: every ``put`` still happens as soon as its tensor exists, every ``get`` where it was.

Options: ``min-statements=N`` (default 1): runs of fewer statements stay inline, uncompiled;
``backend=NAME`` (default ``inductor``, see :data:`SEGMENT_BACKENDS`): how the segments are
compiled when the program loads. ``onednn-graph`` marks each segment with
``ramiel.segment_backend`` and the printer writes ``@segment(backend='onednn-graph')``: traced
with ``torch.jit.trace`` and run by TorchScript with oneDNN Graph fusion (compiled in a fraction
of a second, where inductor takes tens; see :mod:`ramiel.runtime.compiled`).

Naming: ``<cluster>_seg<k>`` (``k`` counts the cluster's segments from 0), made unique against
every symbol of the module. The segment carries ``ramiel.segment_of`` (the function it came from),
``ramiel.statements`` (its statement count) and, when the cluster set a thread count before it,
``ramiel.threads``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass

from ramiel.attrs import (
    SEGMENT_BACKEND_ATTR,
    SEGMENT_OF_ATTR,
    STATEMENTS_ATTR,
    THREADS_ATTR,
    set_int,
    set_str,
)
from ramiel.dialects import torchpy as tp
from ramiel.errors import RamielError

SEGMENT_BACKENDS = ("inductor", "onednn-graph")
"""The ``backend`` option's values (:data:`ramiel.runtime.compiled.BACKENDS`, named here so that
the pass does not import torch)."""


ENV_DISABLE = "RAMIEL_AUTO_SEGMENTS"
"""Set to ``0`` and the default compile option (``compile="auto"``) prints no segments: the
eager program, as ``--no-compile`` gives (:func:`onednn_graph_pays` is not asked). The test
suite sets it, but where a test is about the default's segments (they made CI's tests take 21
minutes instead of 10)."""

AUTO_CALL_US: dict[str, float] = {"onnx.Conv": 50.0, "onnx.Gemm": 30.0, "onnx.MatMul": 30.0}
"""What an op costs eagerly beyond its kernel, in µs (1 thread), that an ``onednn-graph`` trace
saves: eager PyTorch makes oneDNN's primitive descriptor again on every convolution call
(50-70 µs each in a model, measured with ``ONEDNN_VERBOSE`` kernel times against the profiler's
op times: ``python bench/conv_overhead.py``, 2026-12-05, AMD EPYC), and a prepacked matrix
product its primitive (about 30 µs: :func:`ramiel.runtime.ops.matmul_prepacked`)."""

AUTO_MIN_SAVING_US = 500.0
"""The least estimated saving (:data:`AUTO_CALL_US` over the model's ops, µs per inference at
1 thread) for which the default (``compile="auto"``) traces the program's segments."""

AUTO_MIN_SHARE = 0.02
"""The least estimated saving, as a share of the estimated sequential time (the schedule's
W), for which the default traces the program's segments: below it the first call's trace
(0.1-3 s) buys little (VGG-19: 0.15 %, AlexNet 0.8 %, no gain measured)."""


def traced_saving_us(ops: Iterable[Operation]) -> float:
    """The eager call overhead, µs per inference at 1 thread, that tracing ``ops`` as
    ``onednn-graph`` segments saves: :data:`AUTO_CALL_US` of each op."""
    return math.fsum(AUTO_CALL_US.get(op.name, 0.0) for op in ops)


def onednn_graph_pays(module: ModuleOp, work_us: float) -> tuple[bool, str]:
    """Whether the default (``compile="auto"``) prints ``onednn-graph`` segments for
    ``module`` (after clustering: its ``onnx`` ops; ``work_us``: the schedule's estimated
    sequential time, µs), and why, for the compile notes: the estimated saving of
    :data:`AUTO_CALL_US` over its ops must reach :data:`AUTO_MIN_SAVING_US` and
    :data:`AUTO_MIN_SHARE` of ``work_us``.

    Measured (``python bench/seq_vs_ort.py --layout auto --eager --threads 1``, 2026-12-06,
    docs/benchmarks.md, *onednn-graph by default*): on the models this says yes to, the
    default's sequential module ran 1.10-1.62x faster than eager (light_shufflenet, its
    saving 40 % of W, 1.62x; light_squeezenet 12 %, 1.32x; the transformer 10 %, 1.30x;
    light_densenet121 7 %, 1.13x; the inception models 4-7 %, 1.12-1.31x; light_resnet50
    2.3 %, 1.10x); on 2026-12-05 the trace was 1.00-1.07x faster than eager on those it says no to
    (light_vgg19 0.15 %, light_bvlc_alexnet 0.8 %, light_zfnet512 0.4 %)."""
    counts: dict[str, int] = {}
    for op in module.walk():
        if op.name in AUTO_CALL_US:
            counts[op.name] = counts.get(op.name, 0) + 1
    saving = traced_saving_us(module.walk())
    calls = ", ".join(f"{n} {name.removeprefix('onnx.')}" for name, n in sorted(counts.items()))
    share = saving / work_us if work_us > 0 else 0.0
    why = (
        f"estimated eager call overhead {saving / 1000:.2f} ms per inference "
        f"({calls or 'no Conv, Gemm or MatMul'}), {100 * share:.1f} % of the estimated "
        f"{work_us / 1000:.2f} ms"
    )
    return saving >= AUTO_MIN_SAVING_US and share >= AUTO_MIN_SHARE, why


def _runs(block: Block) -> list[tuple[list[Operation], int | None]]:
    """The maximal runs of call/method ops of ``block`` and the thread count set before each."""
    runs: list[tuple[list[Operation], int | None]] = []
    current: list[Operation] = []
    threads: int | None = None
    for op in block.ops:
        if isinstance(op, tp.CallOp | tp.MethodOp):
            current.append(op)
            continue
        if isinstance(op, tp.WeightOp):
            continue  # printed inline where used: no statement, no boundary
        if current:
            runs.append((current, threads))
            current = []
        if isinstance(op, tp.SetThreadsOp):
            threads = op.count.value.data
    if current:
        runs.append((current, threads))
    return runs


def _segment_base(f: tp.FuncOp) -> str:
    name = f.sym_name.data
    return name.removeprefix("cluster_") if f.kind.data == "cluster" else name


def outline_run(
    run: list[Operation], name: str, owner: str, threads: int | None
) -> tuple[tp.FuncOp, tp.CallSegmentOp]:
    """Move the ops of ``run`` (consecutive call/method ops of one block of the function
    ``owner``) into a new segment function ``name`` and put a ``torchpy.call_segment`` where they
    were; returns both (the function is not inserted anywhere yet)."""
    in_run = set(run)
    inputs: list[SSAValue] = []
    weights: list[tp.WeightOp] = []
    for op in run:
        for v in op.operands:
            producer = v.owner
            if isinstance(producer, tp.WeightOp):
                if producer not in weights:
                    weights.append(producer)
            elif producer not in in_run and v not in inputs:
                inputs.append(v)
    outputs = [
        r for op in run for r in op.results if any(u.operation not in in_run for u in r.uses)
    ]
    body = Block(arg_types=[v.type for v in inputs])
    mapping: dict[SSAValue, SSAValue] = {}
    for old, new in zip(inputs, body.args, strict=True):
        new.name_hint = old.name_hint
        mapping[old] = new
    for w in weights:
        c = w.clone()
        body.add_op(c)
        mapping[w.result] = c.result
    for op in run:
        copy = op.clone(value_mapper=mapping)
        body.add_op(copy)
        for res, copied in zip(op.results, copy.results, strict=True):
            copied.name_hint = res.name_hint
            mapping[res] = copied
    body.add_op(tp.ReturnOp([mapping[v] for v in outputs]))
    seg = tp.FuncOp(name, "segment", body)
    set_str(seg, SEGMENT_OF_ATTR, owner)
    set_int(seg, STATEMENTS_ATTR, len(run))
    if threads is not None:
        set_int(seg, THREADS_ATTR, threads)
    call = tp.CallSegmentOp(name, inputs, [v.type for v in outputs])
    block = run[0].parent_block()
    assert block is not None
    block.insert_op_before(call, run[0])
    for out, seg_out in zip(outputs, call.outs, strict=True):
        seg_out.name_hint = out.name_hint
        out.replace_all_uses_with(seg_out)
    for op in reversed(run):
        op.detach()
        op.erase()
    return seg, call


@dataclass(frozen=True)
class CompileSegments(ModulePass):
    """See the module docstring."""

    name = "compile-segments"

    min_statements: int = 1
    backend: str = "inductor"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.min_statements < 1:
            raise RamielError(
                f"compile-segments: min-statements must be at least 1, got {self.min_statements}"
            )
        if self.backend not in SEGMENT_BACKENDS:
            raise RamielError(
                f"compile-segments: backend must be one of {', '.join(SEGMENT_BACKENDS)}, "
                f"got {self.backend!r}"
            )
        funcs = [f for f in op.body.block.ops if isinstance(f, tp.FuncOp)]
        if any(f.kind.data == "segment" for f in funcs):
            raise RamielError("compile-segments: the module already has segment functions")
        taken = {f.sym_name.data for f in funcs}
        for f in funcs:
            block = f.body.block
            base = _segment_base(f)
            k = 0
            for run, threads in _runs(block):
                if len(run) < self.min_statements:
                    continue
                name = f"{base}_seg{k}"
                i = 1
                while name in taken:
                    name = f"{base}_seg{k}_{i}"
                    i += 1
                taken.add(name)
                k += 1
                seg, _ = outline_run(run, name, f.sym_name.data, threads)
                if self.backend != "inductor":
                    set_str(seg, SEGMENT_BACKEND_ATTR, self.backend)
                op.body.block.insert_op_before(seg, f)
            for w in [o for o in block.ops if isinstance(o, tp.WeightOp)]:
                if not w.result.uses:
                    w.detach()
                    w.erase()
