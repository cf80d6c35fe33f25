"""Compile-speed benchmark of the scheduling algorithms (ramiel.scheduling).

Graphs (fixed seeds):
  * ``layered-1k/10k/100k``: random layered DAGs shaped like CNNs: layers of 1-4 nodes, every node
    feeds 1-3 nodes of the next two layers; 40 % conv-like nodes (100-2000 us), the rest cheap
    (5-50 us); edges carry 64 KiB-1.6 MiB, transfer cost 30 us + bytes / (2 GB/s).
  * ``densenet-like``: ~1,750 nodes shaped like ONNX ``light_densenet121``: 4 dense blocks
    (6/12/24/16 layers), each layer BN-Mul-Add-Relu-Conv twice plus a Concat of the block input and
    every earlier layer's output (dense connectivity), every weight a constant node (0.5 us).
  * ``light_densenet121``: the real graph structure from onnx's test data, if that file is installed
    (same cost model by op type).

Timed (``time.perf_counter``, median of several runs): linear clustering, merging the linear
clusters to 2 and to 12, makespan estimation of the 12-cluster result, and cloning constants into
the 2-cluster result. ``(cpu ms)`` repeats linear clustering + merging to 12 in process CPU time
(``time.process_time``), which other jobs on a shared machine disturb less; the load average is
printed in the header. The growth lines divide the time ratio between consecutive layered sizes by
their size ratio (1.0 = linear growth).

Usage: ``python bench/compile_speed.py [--quick] [--out bench/results/compile_speed.txt]``
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import os
import platform
import random
import shlex
import statistics
import sys
import time
from collections.abc import Callable

from ramiel.scheduling import (
    TaskGraph,
    clone_producers,
    estimate_makespan,
    linear_clustering,
    merge_clusters,
)

BANDWIDTH_BYTES_PER_US = 2000.0  # 2 GB/s
LATENCY_US = 30.0


def _comm(nbytes: int) -> float:
    return LATENCY_US + nbytes / BANDWIDTH_BYTES_PER_US


def layered_dag(n: int, seed: int) -> tuple[TaskGraph, set[int]]:
    """A random CNN-like layered DAG with ``n`` nodes (ids in topological order)."""
    rng = random.Random(seed)
    layers: list[list[int]] = []
    v = 0
    while v < n:
        w = min(rng.randint(1, 4), n - v)
        layers.append(list(range(v, v + w)))
        v += w
    costs = [rng.uniform(100, 2000) if rng.random() < 0.4 else rng.uniform(5, 50) for _ in range(n)]
    edges: set[tuple[int, int]] = set()
    for li in range(len(layers) - 1):
        nxt = layers[li + 1] + (layers[li + 2] if li + 2 < len(layers) else [])
        for u in layers[li]:
            for s in rng.sample(nxt, min(len(nxt), rng.randint(1, 3))):
                edges.add((u, s))
        for s in layers[li + 1]:  # every node of the next layer has a producer
            if not any((u, s) in edges for u in layers[li]):
                edges.add((rng.choice(layers[li]), s))
    out = []
    for u, s in sorted(edges):
        b = rng.randint(64 << 10, 1600 << 10)
        out.append((u, s, _comm(b), b))
    return TaskGraph.from_edges(costs, out), set()


def densenet_like(seed: int) -> tuple[TaskGraph, set[int]]:
    """A DenseNet-121-shaped graph (~1,750 nodes); returns it and its constant nodes."""
    rng = random.Random(seed)
    costs: list[float] = []
    names: list[str] = []
    edges: list[tuple[int, int, float, int]] = []
    consts: set[int] = set()

    def node(name: str, cost: float, inputs: list[int], nbytes: int = 200_000) -> int:
        i = len(costs)
        costs.append(cost)
        names.append(name)
        for u in inputs:
            b = 4096 if u in consts else nbytes
            edges.append((u, i, _comm(b), b))
        return i

    def const(name: str) -> int:
        i = node(name, 0.5, [])
        consts.add(i)
        return i

    def bn_relu_conv(prefix: str, x: int, conv_cost: float) -> int:
        ws = [const(f"{prefix}/bn_{p}") for p in ("scale", "bias", "mean", "var")]
        x = node(f"{prefix}/bn", rng.uniform(20, 60), [x, *ws])
        x = node(
            f"{prefix}/mul",
            rng.uniform(5, 20),
            [x, node(f"{prefix}/unsq_w", 2, [const(f"{prefix}/w_s")])],
        )
        x = node(
            f"{prefix}/add",
            rng.uniform(5, 20),
            [x, node(f"{prefix}/unsq_b", 2, [const(f"{prefix}/b_s")])],
        )
        x = node(f"{prefix}/relu", rng.uniform(5, 20), [x])
        return node(
            f"{prefix}/conv", conv_cost * rng.uniform(0.7, 1.3), [x, const(f"{prefix}/conv_w")]
        )

    x = node("input", 0.0, [])
    x = node("conv1", 2500, [x, const("conv1_w")])
    x = node("pool1", 200, [x])
    for b, layers in enumerate((6, 12, 24, 16)):
        feats = [x]
        for i in range(layers):
            cat = node(f"b{b}/l{i}/concat", 10 + 3 * len(feats), list(feats))
            y = bn_relu_conv(f"b{b}/l{i}/x1", cat, 300)
            y = bn_relu_conv(f"b{b}/l{i}/x2", y, 600)
            feats.append(y)
        x = node(f"b{b}/concat", 10 + 3 * len(feats), list(feats))
        if b < 3:
            x = bn_relu_conv(f"t{b}", x, 800)
            x = node(f"t{b}/pool", 150, [x])
    x = node("gap", 50, [x])
    return TaskGraph.from_edges(costs, edges, names), consts


def real_densenet() -> tuple[TaskGraph, set[int]] | None:
    """The light_densenet121 structure from onnx's test data, or None if it is not installed."""
    try:
        import onnx
    except ImportError:
        return None
    path = os.path.join(
        os.path.dirname(onnx.__file__), "backend/test/data/light/light_densenet121.onnx"
    )
    if not os.path.exists(path):
        return None
    model = onnx.load(path, load_external_data=False)
    rng = random.Random(1)
    op_cost = {"Conv": (300, 900), "BatchNormalization": (20, 60), "Concat": (10, 80)}
    cheap = {"ConstantOfShape", "Unsqueeze"}
    prod: dict[str, int] = {}
    costs, names, consts = [], [], set()
    for i, nd in enumerate(model.graph.node):
        lo, hi = op_cost.get(nd.op_type, (5, 20))
        costs.append(0.5 if nd.op_type in cheap else rng.uniform(lo, hi))
        names.append(nd.name or f"{nd.op_type}_{i}")
        if nd.op_type in cheap:
            consts.add(i)
        for o in nd.output:
            prod[o] = i
    edges = []
    for i, nd in enumerate(model.graph.node):
        for x in nd.input:
            if x in prod:
                b = 4096 if prod[x] in consts else 200_000
                edges.append((prod[x], i, _comm(b), b))
    return TaskGraph.from_edges(costs, edges, names), consts


def median_time(fn: Callable[[], object], runs: int, cpu: bool = False) -> float:
    """Median seconds of ``runs`` calls: wall time (perf_counter), or this process's CPU time."""
    clock = time.process_time if cpu else time.perf_counter
    times = []
    for _ in range(runs):
        t0 = clock()
        fn()
        times.append(clock() - t0)
    return statistics.median(times)


def bench_graph(label: str, g: TaskGraph, consts: set[int], runs: int) -> dict:
    lc = linear_clustering(g)
    m2 = merge_clusters(g, lc, 2)
    m12 = merge_clusters(g, lc, 12)
    row = {
        "graph": label,
        "nodes": g.n,
        "edges": g.num_edges,
        "linear_clusters": len(lc),
        "lc": median_time(lambda: linear_clustering(g), runs),
        "merge2": median_time(lambda: merge_clusters(g, lc, 2), runs),
        "merge12": median_time(lambda: merge_clusters(g, lc, 12), runs),
        "estimate": median_time(lambda: estimate_makespan(g, m12), runs),
        "clone": median_time(lambda: clone_producers(g, m2, consts), runs) if consts else None,
        "cpu": median_time(lambda: merge_clusters(g, linear_clustering(g), 12), runs, cpu=True),
    }
    w = g.total_work()
    row["speedup2"] = w / estimate_makespan(g, m2).makespan
    row["speedup12"] = w / estimate_makespan(g, m12).makespan
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="skip the 100k graph, fewer runs")
    ap.add_argument("--out", default=None, help="also write the output to this file")
    args = ap.parse_args(argv)

    cases: list[tuple[str, Callable[[], tuple[TaskGraph, set[int]]], int]] = [
        ("layered-1k", lambda: layered_dag(1_000, 1), 7),
        ("layered-10k", lambda: layered_dag(10_000, 2), 5),
    ]
    if not args.quick:
        cases.append(("layered-100k", lambda: layered_dag(100_000, 3), 3))
    cases.append(("densenet-like", lambda: densenet_like(4), 7))
    real = real_densenet()
    if real is not None:
        cases.append(("light_densenet121", lambda: real, 7))

    rows = []
    for label, make, runs in cases:
        g, consts = make()
        rows.append(bench_graph(label, g, consts, 3 if args.quick else runs))
        print(f"  done {label}", file=sys.stderr)

    def ms(x: float | None) -> str:
        return "-" if x is None else f"{x * 1e3:.1f}"

    head = ["graph", "nodes", "edges", "lin.cl.", "linear ms", "merge2 ms", "merge12 ms",
            "estimate ms", "clone ms", "lc+merge12 ms", "(cpu ms)", "est. speed-up P=2/12"]  # fmt: skip
    table = [head]
    for r in rows:
        table.append(
            [
                r["graph"],
                str(r["nodes"]),
                str(r["edges"]),
                str(r["linear_clusters"]),
                ms(r["lc"]),
                ms(r["merge2"]),
                ms(r["merge12"]),
                ms(r["estimate"]),
                ms(r["clone"]),
                ms(r["lc"] + r["merge12"]),
                ms(r["cpu"]),
                f"{r['speedup2']:.2f} / {r['speedup12']:.2f}",
            ]
        )
    widths = [max(len(t[i]) for t in table) for i in range(len(head))]
    lines = [
        "  ".join(
            x.ljust(w) if i == 0 else x.rjust(w)
            for i, (x, w) in enumerate(zip(t, widths, strict=True))
        )
        for t in table
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))

    layered = [r for r in rows if r["graph"].startswith("layered")]
    growth = []
    for a, b in itertools.pairwise(layered):
        k = b["nodes"] / a["nodes"]
        parts = [
            f"{key} {(b[key] / a[key]) / k:.2f}"
            for key in ("lc", "merge2", "merge12", "estimate")
            if a[key] > 0
        ]
        growth.append(f"  {a['graph']} -> {b['graph']} (x{k:.0f} nodes): " + ", ".join(parts))

    header = [
        "# ramiel.scheduling compile speed",
        f"# date: {datetime.datetime.now().isoformat(timespec='seconds')}",
        "# command: " + shlex.join(["python", "bench/compile_speed.py", *(argv or sys.argv[1:])]),
        f"# python {platform.python_version()} on {platform.machine()}, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end; "
        "times are medians in ms (time.perf_counter)",
        "",
    ]
    text = "\n".join(
        header + lines + ["", "growth (time ratio / size ratio, 1.00 = linear):"] + growth
    )
    print(text)
    if args.out:
        os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
        with open(args.out, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
