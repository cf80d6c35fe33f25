"""The distributed backend against the processes backend and the sequential module, with the cost
model's estimate of the same schedule on loopback and on a 10 GbE network.

    python bench/distributed.py [MODEL ...] [--clusters 2] [--json FILE] [--markdown FILE]
    python bench/distributed.py --render FILE.json [--markdown FILE]   # the table again

Default models: the branchy ones (light_inception_v1, light_inception_v2, the project's inception
CNN). For each model, in this process, round robin (:func:`ramiel.bench.measure_interleaved`,
medians with a distribution-free 95 % interval), one intra-op thread everywhere:

* ``sequential``: the generated sequential module in this process;
* ``processes``: the program compiled for the processes backend (``--backend processes``), on it;
* ``distributed``: the program compiled for the distributed backend (gloo transfer costs), one
  rank per cluster over loopback;
* ``dist, same program``: the processes backend's program on the distributed backend, so that the
  two backends run the same schedule.

First it measures the per-message cost of gloo over loopback (``ramiel calibrate``'s sweep). The
estimates are the schedule report's makespan of the distributed program: with the measured
loopback model, and with a 10 GbE model (:data:`TEN_GBE`: an assumption, not a measurement: the
loopback per-message latency plus 25 µs of wire and switch, 1.15 GB/s) for the same schedule and
for the program the compiler makes for that network (``--transfer-cost``).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
import tempfile

import torch

#: 10 GbE: 10 Gb/s is 1.25 GB/s on the wire; gloo over TCP keeps about 1.15 GB/s of it. A message
#: costs the loopback software latency plus one switch hop and two NICs, ~25 µs (typical kernel TCP
#: on 10 GbE). Assumed, not measured here (one machine).
TEN_GBE_EXTRA_LATENCY_US = 25.0
TEN_GBE_BYTES_PER_S = 1.15e9

DEFAULT_MODELS = ["light_inception_v1", "light_inception_v2", "inception"]


def ten_gbe(loopback_latency_us: float) -> dict[str, float]:
    """The 10 GbE transfer model (a ``--transfer-cost`` file's content)."""
    return {
        "latency_us": round(loopback_latency_us + TEN_GBE_EXTRA_LATENCY_US, 3),
        "us_per_byte": 1e6 / TEN_GBE_BYTES_PER_S,
    }


def estimate_with(ir_path: str, model: dict[str, float]):  # type: ignore[no-untyped-def]
    """The schedule report of the clustered IR ``ir_path`` under another transfer model."""
    from xdsl.dialects.builtin import ArrayAttr, Float64Type, FloatAttr

    from ramiel.clustering import TRANSFER_COST_ATTR
    from ramiel.context import make_context
    from ramiel.parsing import parse_module
    from ramiel.passes.schedule_report import schedule_report

    with open(ir_path) as f:
        module = parse_module(make_context(os.path.dirname(ir_path)), f.read(), ir_path)
    module.attributes[TRANSFER_COST_ATTR] = ArrayAttr(
        [
            FloatAttr(model["latency_us"], Float64Type()),
            FloatAttr(model["us_per_byte"], Float64Type()),
        ]
    )
    return schedule_report(module)


def messages(program, placement) -> int:  # type: ignore[no-untyped-def]
    """Messages per inference: channels between ranks, plus a control and a status message per
    follower."""
    n = sum(
        1
        for s in program.channels.values()
        if placement.rank_of(s.src) != placement.rank_of(s.dst) and s.numel > 0
    )
    return n + 2 * (placement.world_size - 1)


def bench_model(name: str, clusters: int, plan, workdir: str, say) -> dict:  # type: ignore[no-untyped-def]
    from ramiel.bench import measure_interleaved, resolve_models
    from ramiel.compiler import CompileOptions, compile_model
    from ramiel.runtime import Weights, load_program, start
    from ramiel.runtime.entry import random_inputs
    from ramiel.runtime.program import import_from_path

    (spec,) = resolve_models([name])
    path = spec.resolve()
    res_p = compile_model(
        path,
        os.path.join(workdir, name, "p"),
        CompileOptions(clusters=clusters, backend="processes"),
    )
    res_d = compile_model(
        path,
        os.path.join(workdir, name, "d"),
        CompileOptions(clusters=clusters, backend="distributed"),
    )
    prog_p = load_program(res_p.parallel_path)
    prog_d = load_program(res_d.parallel_path)
    seq = import_from_path(f"bench_seq_{name}", res_p.sequential_path)
    weights_p = Weights.from_safetensors(res_p.weights_path)
    weights_d = Weights.from_safetensors(res_d.weights_path)
    feeds = random_inputs(dict(seq.INPUTS), seed=0)
    torch.set_num_threads(1)
    runners = {
        "processes": start(prog_p, weights_p, backend="processes", timeout_s=300),
        "distributed": start(prog_d, weights_d, backend="distributed", timeout_s=300),
        "dist, same program": start(prog_p, weights_p, backend="distributed", timeout_s=300),
    }
    try:
        args = list(feeds.values())

        def sequential():
            with torch.inference_mode():
                return seq.forward(weights_p, *args)

        fns = {"sequential": sequential}
        fns.update({k: (lambda r=r: r.run(feeds)) for k, r in runners.items()})
        say(f"{name}: timing {', '.join(fns)}")
        timings = measure_interleaved(fns, plan)
        placement_d = runners["distributed"].placement
        placement_s = runners["dist, same program"].placement
        msgs = {
            "distributed": messages(prog_d, placement_d),
            "dist, same program": messages(prog_p, placement_s),
        }
    finally:
        for r in runners.values():
            r.close()
    return {
        "model": name,
        "clusters": {"processes": len(prog_p.clusters), "distributed": len(prog_d.clusters)},
        "messages": msgs,
        "timings": {
            k: {"median_ms": t.median, "ci_ms": list(t.ci), "n": t.n} for k, t in timings.items()
        },  # fmt: skip
        "ir": {"distributed": res_d.ir_path, "processes": res_p.ir_path},
        "estimate_loopback_ms": res_d.report.makespan_us / 1e3,
        "transfer_share_loopback": res_d.report.transfer_share,
        "source": path,
    }


def main(argv: list[str] | None = None) -> int:
    from ramiel.bench import Plan, load_average
    from ramiel.compiler import CompileOptions, compile_model
    from ramiel.runtime.calibrate import calibrate

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", default=DEFAULT_MODELS)
    ap.add_argument("--clusters", type=int, default=2)
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--markdown", help="write the markdown section here")
    ap.add_argument("--quick", action="store_true", help="few repetitions (a smoke test)")
    ap.add_argument("--render", metavar="JSON", help="measure nothing: the markdown of a --json")
    args = ap.parse_args(argv)
    if args.render:
        with open(args.render) as f:
            data = json.load(f)
        md = render(data["rows"], data["env"])
        print(md)
        if args.markdown:
            with open(args.markdown, "w") as f:
                f.write(md + "\n")
        return 0

    def say(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    load_before = load_average()
    say("measuring gloo over loopback (ramiel calibrate)")
    # the 10th percentile: the cost when the ranks have their cores (the machine is shared);
    # the medians are recorded beside it
    cost, cal = calibrate("distributed", repeats=10 if args.quick else 100, quantile=0.1)
    net = ten_gbe(cost.latency_us)
    plan = (
        Plan.quick() if args.quick else Plan(min_reps=15, max_reps=61, budget_s=90.0, rel_ci=0.03)
    )
    rows = []
    with tempfile.TemporaryDirectory(prefix="ramiel-bench-dist-") as d:
        net_file = os.path.join(d, "10gbe.json")
        with open(net_file, "w") as f:
            json.dump(net, f)
        for name in args.models:
            row = bench_model(name, args.clusters, plan, d, say)
            same = estimate_with(row["ir"]["distributed"], net)
            row["estimate_10gbe_same_ms"] = same.makespan_us / 1e3
            row["transfer_share_10gbe_same"] = same.transfer_share
            own = compile_model(
                row["source"],
                os.path.join(d, name, "net"),
                CompileOptions(
                    clusters=args.clusters, backend="distributed", transfer_cost=net_file
                ),
            )
            row["estimate_10gbe_own_ms"] = own.report.makespan_us / 1e3
            row["clusters_10gbe_own"] = own.clusters
            row["estimate_sequential_ms"] = own.report.work_us / 1e3
            del row["ir"], row["source"]
            rows.append(row)
    env = {
        "date": datetime.datetime.now().isoformat(timespec="minutes"),
        "command": "python bench/distributed.py "
        + " ".join(argv if argv is not None else sys.argv[1:]),
        "cpus": os.cpu_count(),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "load_before": load_before,
        "load_after": load_average(),
        "gloo_loopback": {
            k: cal[k]
            for k in (
                "latency_us",
                "us_per_byte",
                "round_trips_us",
                "median_round_trips_us",
                "load",
            )
        },
        "ten_gbe_model": net,
    }
    if args.json:  # first: the markdown can be rendered again from it (--render)
        with open(args.json, "w") as f:
            json.dump({"env": env, "rows": rows}, f, indent=2)
    md = render(rows, env)
    print(md)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(md + "\n")
    return 0


def _t(row: dict, key: str) -> str:
    t = row["timings"][key]
    lo, hi = t["ci_ms"]
    return f"{t['median_ms']:.1f} [{lo:.1f}, {hi:.1f}]"


def render(rows: list[dict], env: dict) -> str:
    g = env["gloo_loopback"]
    net = env["ten_gbe_model"]
    mib = g["us_per_byte"] * (1 << 20)
    out = [
        f"Measured {env['date']} with `{env['command']}` ({env['cpus']} cores, torch "
        f"{env['torch']}; load average {env['load_before'][0]} before, {env['load_after'][0]} "
        "after: the machine is shared, see the intervals).",
        "",
        f"gloo over loopback, measured first (`ramiel calibrate --quantile 0.1`'s sweep, load "
        f"{g['load']}): **{g['latency_us']:.0f} µs per message**, {mib:.0f} µs per MiB "
        f"({1e-3 / g['us_per_byte']:.2f} GB/s), from the 10th percentile of 100 round trips per "
        f"size (the median round trip of 4 B was {g['median_round_trips_us']['4'] / 1e3:.2f} ms: "
        "a busy machine delays most messages by a scheduler tick). The 10 GbE model is assumed: "
        f"{net['latency_us']:.0f} µs per message, {net['us_per_byte'] * (1 << 20):.0f} µs per MiB "
        "(1.15 GB/s).",
        "",
        "Latency per inference, median ms [95 % interval], one intra-op thread per worker/rank; "
        "clusters as the merge kept them for each backend's transfer costs; estimates are the "
        "schedule report's makespan of the distributed program (transfer share in parentheses).",
        "",
        "| model | sequential | processes | distributed | dist, same program | est. loopback | "
        "est. 10 GbE, same schedule | est. 10 GbE, compiled for it |",
        "|---|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for r in rows:
        c, m = r["clusters"], r["messages"]
        out.append(
            f"| {r['model']} | {_t(r, 'sequential')} | {_t(r, 'processes')} ({c['processes']} cl.) "
            f"| {_t(r, 'distributed')} ({c['distributed']} ranks, {m['distributed']} msgs) "
            f"| {_t(r, 'dist, same program')} ({m['dist, same program']} msgs) "
            f"| {r['estimate_loopback_ms']:.1f} ({100 * r['transfer_share_loopback']:.0f} %) "
            f"| {r['estimate_10gbe_same_ms']:.1f} ({100 * r['transfer_share_10gbe_same']:.0f} %) "
            f"| {r['estimate_10gbe_own_ms']:.1f} ({r['clusters_10gbe_own']} cl.) |"
        )
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
