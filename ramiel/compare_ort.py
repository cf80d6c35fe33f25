"""``ramiel profile --compare-ort``: Ramiel's time per ONNX op type next to onnxruntime's.

For one model and thread count:

* **Ramiel**: the sequential module ``ramiel compile --clusters 1`` generates (same options:
  memory-format ``layout``, input shapes), with a probe after the statements of each ONNX node
  (``_probe(i)`` records ``time.perf_counter()``): a node's time is the wall time from the probe
  before it to its own, so the statements a rule emits, the layout conversions placed before a
  node (own row ``(layout conversion)``) and the Python between them are all counted. Threads:
  ``torch.set_num_threads``, under ``torch.inference_mode``.
* **onnxruntime**: its own profiler (``SessionOptions.enable_profiling``) on the same model with
  the same intra-op thread count and its default graph optimisations (as ``ramiel bench``'s
  ``ort-*`` configurations: sequential executor, no spinning); each ``Node`` event
  ``<name>_kernel_time`` is mapped back to an ONNX op type: by node name where the node is the
  model's own; where onnxruntime named a fused node after the model's node it starts from
  (``<node>/<Fusion>``: ``/layers.0/fc1/MatMul/MatMulAddFusion``, a Gemm kernel computing the
  MatMul and its bias Add; ``.../MatMul/MatMulScaleFusion/``), by that node's op type; else by
  its kernel (``FusedConv`` and the NCHWc ``Conv`` -> Conv, ``FusedGemm`` -> Gemm,
  ``ReorderInput``/``ReorderOutput`` -> ``(layout conversion)``, ...). A type onnxruntime fused
  into another (Relu into Conv, an Add into a MatMul's Gemm) has no onnxruntime nodes: its row
  shows Ramiel's time against 0.

Both run ``warmup`` times, then ``repeat`` rounds, interleaved (each round runs the probed
module, the plain module, the profiled session and a plain session once, in rotating order);
per node the median over the rounds; per op type the sum of its nodes' medians. The end-to-end
medians of the plain module and session are reported beside the sums. Rows are sorted by the gap
(Ramiel ms - onnxruntime ms), largest first, so the next gap to close is always the first row.
Per node (``--nodes N``: the N largest gaps; every node in the JSON): Ramiel's node next to
onnxruntime's node of the same name and op type, the NCHWc nodes (named after the last output of
the chain they fused, ``r2_nchwc``) mapped back to the node the chain starts from; ``-`` where
onnxruntime has no such node (fused into another, or renamed by its other optimisations).
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ramiel.attrs import CONVERSION_ATTR, NODE_NAME_ATTR, get_str, has
from ramiel.context import make_context
from ramiel.dialects import torchpy as tp
from ramiel.engines import ort_session
from ramiel.importer import load_model, prepare_model
from ramiel.layout import LayoutMode
from ramiel.parsing import parse_module
from ramiel.printer import print_python, write_weights

CONVERSION = "(layout conversion)"
"""The row of memory-format conversions (Ramiel's ``.contiguous(...)``, ORT's reorders)."""

#: onnxruntime kernels that are not ONNX ops of the same name -> the ONNX op type they compute.
ORT_KERNELS = {
    "FusedConv": "Conv",
    "NhwcConv": "Conv",
    "FusedGemm": "Gemm",
    "FusedMatMul": "MatMul",
    "NhwcMaxPool": "MaxPool",
    "ReorderInput": CONVERSION,
    "ReorderOutput": CONVERSION,
    "BiasGelu": "Gelu",
    "FastGelu": "Gelu",
    "QuickGelu": "Gelu",
    "SkipLayerNormalization": "LayerNormalization",
    "SimplifiedLayerNormalization": "LayerNormalization",
    "BiasSoftmax": "Softmax",
}


@dataclass
class OpTypeRow:
    """One op type: summed per-node median times (ms) and node counts of both runtimes."""

    op_type: str
    ramiel_ms: float = 0.0
    ort_ms: float = 0.0
    ramiel_nodes: int = 0
    ort_nodes: int = 0

    @property
    def gap_ms(self) -> float:
        """Ramiel's time minus onnxruntime's, ms (positive: Ramiel is slower)."""
        return self.ramiel_ms - self.ort_ms

    @property
    def ratio(self) -> float | None:
        """Ramiel / onnxruntime (``None`` where onnxruntime spends no time on the type)."""
        return self.ramiel_ms / self.ort_ms if self.ort_ms > 0 else None


@dataclass
class NodeRow:
    """One ONNX node: Ramiel's median time (ms; its statements and the layout conversions placed
    before it) and onnxruntime's kernel time for the node of the same name (``None`` where
    onnxruntime runs no node of that name: fused into another, or renamed by its graph
    optimisations)."""

    name: str
    op_type: str
    ramiel_ms: float
    ort_ms: float | None

    @property
    def gap_ms(self) -> float:
        """Ramiel's time minus onnxruntime's (all of Ramiel's time where onnxruntime has none)."""
        return self.ramiel_ms - (self.ort_ms or 0.0)


@dataclass
class Comparison:
    """The result of :func:`compare_with_ort`; ``to_text()`` is the table the driver prints."""

    model: str
    threads: int
    layout: str
    repeat: int
    rows: list[OpTypeRow]
    ramiel_latency_ms: float
    ort_latency_ms: float
    load: tuple[float, float] = (0.0, 0.0)  # 1-minute load average before, after
    notes: list[str] = field(default_factory=list)
    nodes: list[NodeRow] = field(default_factory=list)  # every node, largest gap first

    @property
    def ramiel_sum_ms(self) -> float:
        return sum(r.ramiel_ms for r in self.rows)

    @property
    def ort_sum_ms(self) -> float:
        return sum(r.ort_ms for r in self.rows)

    def to_text(self, nodes: int = 0) -> str:
        """A plain-text table, one row per op type, sorted by the gap; with ``nodes`` > 0, then
        the ``nodes`` nodes with the largest gaps (node name, op type, both times)."""

        def ratio(a: float, b: float) -> str:
            return f"{a / b:6.2f}x" if b > 0 else "      -"

        head = (
            f"{os.path.basename(self.model)}: Ramiel (sequential module, eager, layout {self.layout}) vs "
            f"onnxruntime, {self.threads} thread(s), median of {self.repeat} runs, load average "
            f"{self.load[0]:.2f} before, {self.load[1]:.2f} after"
        )
        cols = f"{'op type':<22} {'nodes':>5} {'ramiel ms':>10} {'ort nodes':>9} {'ort ms':>9}"
        lines = [head, "", cols + f" {'ratio':>7} {'gap ms':>8}"]
        for r in self.rows:
            lines.append(
                f"{r.op_type:<22} {r.ramiel_nodes:>5} {r.ramiel_ms:>10.3f} {r.ort_nodes:>9} "
                f"{r.ort_ms:>9.3f} {ratio(r.ramiel_ms, r.ort_ms)} {r.gap_ms:>+8.3f}"
            )
        rs, os_ = self.ramiel_sum_ms, self.ort_sum_ms
        lines.append(
            f"{'sum of the ops':<22} {sum(r.ramiel_nodes for r in self.rows):>5} {rs:>10.3f} "
            f"{sum(r.ort_nodes for r in self.rows):>9} {os_:>9.3f} {ratio(rs, os_)} "
            f"{rs - os_:>+8.3f}"
        )
        lr, lo = self.ramiel_latency_ms, self.ort_latency_ms
        lines.append(
            f"{'end to end (no probes)':<22} {'':>5} {lr:>10.3f} {'':>9} {lo:>9.3f} "
            f"{ratio(lr, lo)} {lr - lo:>+8.3f}"
        )
        lines += [f"note: {n}" for n in self.notes]
        if nodes > 0 and self.nodes:
            shown = self.nodes[:nodes]
            # a name as the generated code's comments write it (ascii, escaped): a newline in
            # one had broken the table (found by a fresh-user check)
            names = [ascii(n.name)[1:-1] for n in shown]
            width = min(48, max(len("node"), *(len(x) for x in names)))
            lines += [
                "",
                f"the {len(shown)} of {len(self.nodes)} nodes with the largest gaps "
                "(onnxruntime's node of the same name; '-': it has none, fused or renamed)",
                f"{'node':<{width}} {'op type':<20} {'ramiel ms':>10} {'ort ms':>9} "
                f"{'ratio':>7} {'gap ms':>8}",
            ]
            for n, name in zip(shown, names, strict=True):
                name = name if len(name) <= width else name[: width - 3] + "..."
                ort = f"{n.ort_ms:>9.3f}" if n.ort_ms is not None else f"{'-':>9}"
                rt = ratio(n.ramiel_ms, n.ort_ms) if n.ort_ms is not None else "      -"
                lines.append(
                    f"{name:<{width}} {n.op_type:<20} {n.ramiel_ms:>10.3f} {ort} {rt} "
                    f"{n.gap_ms:>+8.3f}"
                )
        return "\n".join(lines)

    def to_json(self) -> str:
        d = asdict(self)
        d["ramiel_sum_ms"], d["ort_sum_ms"] = self.ramiel_sum_ms, self.ort_sum_ms
        return json.dumps(d, indent=1)


# ------------------------------------------------------------------------------------- Ramiel


def _probed_module(out_dir: str, ir_path: str) -> tuple[str, str, list[tuple[str, str]]]:
    """Write ``model_probed.py`` and its weights: the sequential module of the clustered IR at
    ``ir_path``, with ``_probe(i)`` after each node's statements; returns (module path, weights
    path, the (op type, ONNX node name) of each probe)."""
    from ramiel.passes.lower_to_torchpy import LowerToTorchpy  # lazy: torch
    from ramiel.pipeline import run_passes  # lazy: onnx.reference

    ctx = make_context(os.path.dirname(os.path.abspath(ir_path)))  # the IR's weights beside it
    with open(ir_path) as f:
        module = parse_module(ctx, f.read(), ir_path)
    store = ctx.weights.of(module)
    run_passes(module, [LowerToTorchpy(mode="sequential")], ctx)
    fwd = next(op for op in module.ops if isinstance(op, tp.FuncOp))
    kinds: list[tuple[str, str]] = []
    for op in list(fwd.body.block.ops):
        if not has(op, NODE_NAME_ATTR) or not isinstance(op, tp.CallOp | tp.MethodOp):
            continue
        text = get_str(op, NODE_NAME_ATTR) or ""
        name, kind = text.rsplit(" (", 1) if text.endswith(")") and " (" in text else (text, "")
        kind = CONVERSION if has(op, CONVERSION_ATTR) else kind[:-1] or text
        probe = tp.CallOp("_probe", [], [str(len(kinds))], None, [])
        fwd.body.block.insert_op_after(probe, op)
        kinds.append((kind, name))
    path = os.path.join(out_dir, "model_probed.py")
    with open(path, "w") as f:
        f.write(print_python(module, "a probed sequential module"))
    weights = os.path.join(out_dir, "probed.safetensors")
    write_weights([module], store, weights)
    return path, weights, kinds


class _ProbedForward:
    """The probed module's ``forward`` and the probe times of its last call."""

    def __init__(self, path: str, weights_path: str, n: int):
        from ramiel.runtime.module import generated_class  # lazy: torch
        from ramiel.runtime.program import import_from_path  # lazy: torch

        self.marks = [0.0] * n
        mod = import_from_path(f"ramiel_probed_{id(self)}", path)
        marks, clock = self.marks, time.perf_counter

        def probe(i: int) -> None:
            marks[i] = clock()

        mod._probe = probe  # noqa: SLF001 - the name the printed probes call
        self.forward = generated_class(mod).from_safetensors(weights_path).forward
        self.start = 0.0

    def __call__(self, inputs: Sequence[Any]) -> list[float]:
        """Run once; the seconds of each probed node."""
        self.start = time.perf_counter()
        self.forward(*inputs)
        out, prev = [], self.start
        for t in self.marks:
            out.append(t - prev)
            prev = t
        return out


# -------------------------------------------------------------------------------- onnxruntime


def fused_from(name: str, node_types: Mapping[str, str]) -> str | None:
    """The model's node that onnxruntime's node ``name`` was fused from, where its graph
    optimiser named the new node after it: ``<node>/<Fusion>[/...]`` (``MatMulAddFusion``,
    ``MatMulScaleFusion``, ...), the longest ``/``-bounded prefix of ``name`` that is a node of
    the model (``node_types``: node name -> op type), followed by a segment naming a fusion;
    else ``None``. Source: onnxruntime's ``graph.GenerateNodeName(node.Name() + "/...Fusion")``
    in ``onnxruntime/core/optimizer``."""
    head, sep, _ = name.rpartition("/")
    while sep:
        rest = name[len(head) + 1 :]
        if head in node_types and rest.split("/", 1)[0].endswith("Fusion"):
            return head
        head, sep, _ = head.rpartition("/")
    return None


def ort_op_type(event_name: str, kernel: str, node_types: Mapping[str, str]) -> str:
    """The ONNX op type of an onnxruntime profiler ``Node`` event (see the module docstring):
    ``event_name`` is ``<node>_kernel_time``, ``kernel`` its ``args.op_name``; ``node_types``
    maps the model's node names to their op types."""
    name = event_name.removesuffix("_kernel_time")
    if name in node_types:
        return node_types[name]
    origin = fused_from(name, node_types)
    if origin is not None:
        return node_types[origin]
    return ORT_KERNELS.get(kernel, kernel)


def ort_node_times(
    profile_path: str, node_types: Mapping[str, str], skip: int = 0
) -> dict[tuple[str, str], list[float]]:
    """onnxruntime's profile JSON -> ``(op type, node event name)`` -> the node's kernel time
    (ms) in each run, in run order, the first ``skip`` runs (warm-up) left out."""
    with open(profile_path) as f:
        events = json.load(f)
    out: dict[tuple[str, str], list[float]] = {}
    nodes = [
        e
        for e in events
        if e.get("cat") == "Node" and str(e.get("name", "")).endswith("_kernel_time")
    ]
    for e in sorted(nodes, key=lambda e: e.get("ts", 0)):
        kind = ort_op_type(e["name"], e.get("args", {}).get("op_name", ""), node_types)
        out.setdefault((kind, e["name"]), []).append(e["dur"] / 1e3)
    return {k: v[skip:] or v for k, v in out.items()}


def _ort_node_name(
    name: str, kind: str, model: Any, node_types: Mapping[str, str] | None = None
) -> str:
    """The ONNX node an onnxruntime node named ``name`` computes (of op type ``kind``): ``name``
    itself, except for the nodes its NCHWc transformer makes, named after the output of the
    chain they compute (``r2_nchwc``: a Conv with its BatchNormalization and Relu fused, whose
    last output is ``r2``); for those, the ``kind`` node that chain starts from, found by
    following first inputs back from the output's producer (at most 4 nodes); and for a node
    named after the one it was fused from (``<node>/MatMulAddFusion``, :func:`fused_from`), that
    node. ``node_types``: the model's node name -> op type, where the caller has it."""
    if not name.endswith("_nchwc"):
        if node_types is None:
            node_types = {n.name: n.op_type for n in model.graph.node if n.name}
        origin = fused_from(name, node_types)
        return origin if origin is not None else name
    producer = {out: n for n in model.graph.node for out in n.output}
    node = producer.get(name.removesuffix("_nchwc"))
    for _ in range(4):
        if node is None or node.op_type == kind:
            break
        node = producer.get(node.input[0]) if node.input else None
    return node.name if node is not None and node.op_type == kind and node.name else name


# ------------------------------------------------------------------------------------ driver


def compare_with_ort(
    model: str,
    threads: int = 1,
    layout: LayoutMode = "auto",
    repeat: int = 20,
    warmup: int = 3,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    say: Callable[[str], None] = lambda _m: None,
    disable: Sequence[str] = (),
) -> Comparison:
    """Measure ``model`` (see the module docstring) and return the per-op-type comparison.
    ``disable``: graph rewrites not to run (``CompileOptions.disable``).

    Raises :class:`~ramiel.errors.RamielError` for a model Ramiel cannot compile, and
    ``ValueError`` for a thread or repeat count below 1.
    """
    import torch  # lazy: torch

    from ramiel.compiler import (  # lazy: onnx.reference,torch
        CompiledModel,
        CompileOptions,
        compile_model,
    )
    from ramiel.runtime.entry import random_inputs  # lazy: torch

    if threads < 1 or repeat < 1:
        raise ValueError(f"threads and repeat must be at least 1, got {threads} and {repeat}")
    load_before = os.getloadavg()[0]
    onnx_model = load_model(model)
    if input_shapes:
        onnx_model = prepare_model(onnx_model, input_shapes)
    node_types = {n.name: n.op_type for n in onnx_model.graph.node if n.name}
    caller_threads = torch.get_num_threads()
    with tempfile.TemporaryDirectory(prefix="ramiel-compare-") as d:
        say("compile")
        opts = CompileOptions(  # eager: the probes time the statements one by one
            clusters=1,
            layout=layout,
            input_shapes=input_shapes,
            disable=tuple(disable),
            compile=False,
        )
        res = compile_model(model, d, opts)
        plain = CompiledModel(res, opts)
        feeds = random_inputs(plain.input_specs, 0, plain.index_limits)
        inputs = list(feeds.values())
        probed_path, probed_weights, kinds = _probed_module(d, res.ir_path)
        probed = _ProbedForward(probed_path, probed_weights, len(kinds))
        say("onnxruntime sessions")
        proto = onnx_model.SerializeToString()
        np_feeds = {k: v.numpy() for k, v in feeds.items()}
        sess = ort_session(proto, threads=threads)
        psess = ort_session(proto, threads=threads, profile_prefix=os.path.join(d, "ort_profile"))
        ramiel_nodes: list[list[float]] = []
        ramiel_total: list[float] = []
        ort_total: list[float] = []

        def run_probed() -> None:
            ramiel_nodes.append(probed(inputs))

        def run_plain() -> None:
            t = time.perf_counter()
            plain.sequential(*inputs)
            ramiel_total.append(time.perf_counter() - t)

        def run_ort_profiled() -> None:
            psess.run(None, np_feeds)

        def run_ort() -> None:
            t = time.perf_counter()
            sess.run(None, np_feeds)
            ort_total.append(time.perf_counter() - t)

        fns = [run_probed, run_plain, run_ort_profiled, run_ort]
        say(f"time {repeat} rounds")
        torch.set_num_threads(threads)
        try:
            with torch.inference_mode():
                for _ in range(warmup):
                    probed(inputs)
                    plain.sequential(*inputs)
                    sess.run(None, np_feeds)
                # onnxruntime's profile holds every run: the warm-up runs are dropped below
                for _ in range(warmup):
                    psess.run(None, np_feeds)
                for r in range(repeat):
                    for f in fns[r % len(fns) :] + fns[: r % len(fns)]:
                        f()
        finally:
            torch.set_num_threads(caller_threads)
            plain.close()
        prof = psess.end_profiling()
        ort_times = ort_node_times(prof, node_types, skip=warmup)
    rows: dict[str, OpTypeRow] = {}
    per_node: dict[tuple[str, str], float] = {}  # (op type, node name) -> Ramiel ms
    for i, (kind, name) in enumerate(kinds):
        ms = statistics.median(run[i] for run in ramiel_nodes) * 1e3
        row = rows.setdefault(kind, OpTypeRow(kind))
        row.ramiel_ms += ms
        row.ramiel_nodes += 1
        per_node[kind, name] = per_node.get((kind, name), 0.0) + ms
    ort_per_node: dict[tuple[str, str], float] = {}  # (op type, node name) -> onnxruntime ms
    for (kind, event), ts in ort_times.items():
        row = rows.setdefault(kind, OpTypeRow(kind))
        row.ort_ms += statistics.median(ts)
        row.ort_nodes += 1
        key = (
            kind,
            _ort_node_name(event.removesuffix("_kernel_time"), kind, onnx_model, node_types),
        )
        ort_per_node[key] = ort_per_node.get(key, 0.0) + statistics.median(ts)
    nodes = [
        NodeRow(name, kind, ms, None if kind == CONVERSION else ort_per_node.get((kind, name)))
        for (kind, name), ms in per_node.items()
    ]
    notes = []
    fused = [r.op_type for r in rows.values() if r.ort_nodes == 0 and r.ramiel_nodes > 0]
    if fused:
        notes.append(
            "onnxruntime runs no node of type " + ", ".join(sorted(fused)) + " (fused into "
            "another kernel, or removed by its graph optimisations)"
        )
    return Comparison(
        model=model,
        threads=threads,
        layout=layout,
        repeat=repeat,
        rows=sorted(rows.values(), key=lambda r: (-r.gap_ms, r.op_type)),
        ramiel_latency_ms=statistics.median(ramiel_total) * 1e3,
        ort_latency_ms=statistics.median(ort_total) * 1e3,
        load=(load_before, os.getloadavg()[0]),
        notes=notes,
        nodes=sorted(nodes, key=lambda n: (-n.gap_ms, n.name)),
    )
