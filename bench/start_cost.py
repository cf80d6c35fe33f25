"""What starting the workers of a task-parallel program costs per inference: the fixed cost the
merge charges a program of several clusters (:data:`ramiel.cost_model.PARALLEL_START_US`).

Usage::

    python bench/start_cost.py [--calls 400] [--rounds 3] [--gaps 0,0.005]

Three ways to run ``relu(x)`` and ``sigmoid(x)`` of one (2, 3) tensor (a few µs of compute)
(:func:`ramiel.runtime.start`): ``2 clusters`` (a program of two independent clusters, one op
each, on the threads backend: worker threads take them), ``1 cluster`` (one cluster with both
ops on the inline backend, in the caller's thread, as :class:`ramiel.compiler.CompiledModel`
runs a one-cluster program) and the two ops called directly. Each is called ``--calls`` times after sleeping ``gap`` seconds before
each call, every gap in turn, the three taking turns ``--rounds`` times. Prints the median µs
per call with its 95 % interval (:func:`ramiel.measure.median_ci`): what ``2 clusters`` costs
over ``1 cluster`` is the price of starting a worker and waiting for it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time


def relu_c(ch, w):  # type: ignore[no-untyped-def]
    ch.put("y0__out", ch.get("x__c0").relu())


def sigmoid_c(ch, w):  # type: ignore[no-untyped-def]
    ch.put("y1__out", ch.get("x__c1").sigmoid())


def both_c(ch, w):  # type: ignore[no-untyped-def]
    x = ch.get("x__c0")
    ch.put("y0__out", x.relu())
    ch.put("y1__out", x.sigmoid())


def _programs():  # type: ignore[no-untyped-def]
    import torch

    from ramiel.runtime import ChannelSpec, Program

    f32, shape = torch.float32, (2, 3)
    outs = {"y0__out": ChannelSpec("c0", None, shape, f32)}
    two = Program(
        name="two",
        clusters={"c0": relu_c, "c1": sigmoid_c},
        channels={
            "x__c0": ChannelSpec(None, "c0", shape, f32),
            "x__c1": ChannelSpec(None, "c1", shape, f32),
            **outs,
            "y1__out": ChannelSpec("c1", None, shape, f32),
        },
        inputs={"x": ["x__c0", "x__c1"]},
        outputs={"y0": "y0__out", "y1": "y1__out"},
    )
    one = Program(
        name="one",
        clusters={"c0": both_c},
        channels={
            "x__c0": ChannelSpec(None, "c0", shape, f32),
            **outs,
            "y1__out": ChannelSpec("c0", None, shape, f32),
        },
        inputs={"x": ["x__c0"]},
        outputs={"y0": "y0__out", "y1": "y1__out"},
    )
    return two, one


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=400, help="calls per gap and round")
    ap.add_argument("--rounds", type=int, default=3, help="turns of the configurations")
    ap.add_argument("--gaps", default="0,0.005", help="seconds of sleep before each call")
    args = ap.parse_args(argv)
    try:
        gaps = [float(g) for g in args.gaps.split(",")]
    except ValueError:
        ap.error(f"argument --gaps: numbers separated by commas, got {args.gaps!r}")
    if args.calls < 1 or args.rounds < 1 or any(not 0 <= g < 10 for g in gaps):
        ap.error("--calls and --rounds must be at least 1, gaps from 0 to 10 s")

    import torch

    from ramiel.bench import median_ci
    from ramiel.runtime import start

    two_p, one_p = _programs()
    two = start(two_p, None, backend="threads", threads_per_worker=1)
    one = start(one_p, None, backend="inline", threads_per_worker=1)
    x = torch.randn(2, 3)
    configs = {
        "2 clusters": lambda: two.run({"x": x}),
        "1 cluster (inline)": lambda: one.run({"x": x}),
        "the two ops called directly": lambda: (x.relu(), x.sigmoid()),
    }
    times: dict[tuple[str, float], list[float]] = {(c, g): [] for c in configs for g in gaps}
    torch.set_num_threads(1)
    with torch.no_grad():
        for f in configs.values():
            for _ in range(20):
                f()
        for r in range(args.rounds):
            order = list(configs) if r % 2 == 0 else list(reversed(configs))
            for name in order:
                f = configs[name]
                for gap in gaps:
                    for _ in range(args.calls):
                        if gap:
                            time.sleep(gap)
                        t = time.perf_counter()
                        f()
                        times[(name, gap)].append((time.perf_counter() - t) * 1e6)
    two.close()
    one.close()
    load = os.getloadavg()[0]
    print(f"# python bench/start_cost.py {' '.join(argv if argv is not None else sys.argv[1:])}")
    print(f"# {time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cpus, load average {load:.2f}")
    print("# median µs per call [95 % interval]; gap: sleep before each call")
    print(f"{'configuration':32}" + "".join(f"{'gap ' + format(g, 'g') + ' s':>26}" for g in gaps))
    for name in configs:
        cells = []
        for gap in gaps:
            s = sorted(times[(name, gap)])
            lo, hi = median_ci(s)
            cells.append(f"{statistics.median(s):9.1f} [{lo:7.1f}, {hi:7.1f}]")
        print(f"{name:32}" + "".join(f"{c:>26}" for c in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
