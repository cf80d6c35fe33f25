"""What an idle pause between requests costs a task-parallel program, with and without its
workers bound to cores of their own (:mod:`ramiel.runtime.binding`).

Usage::

    python bench/idle_gap.py [MODEL ...] [--clusters 2] [--backend threads]
                             [--gaps 0,0.02,0.1,0.3] [--calls 30] [--rounds 2] [--out FILE]

Per model, two configurations, each in a fresh process of its own (``bound``: as Ramiel runs
it; ``unbound``: ``RAMIEL_BIND=0``), both compile the model with ``--clusters`` clusters of
``cores // clusters`` threads and time ``--calls`` inferences after sleeping ``gap`` seconds
before each (requests that arrive that far apart), every gap in turn. The two processes take
turns ``--rounds`` times; the table gives the median ms over all rounds with its 95 % interval
(:func:`ramiel.measure.median_ci`). Default models: ramiel_inception, light_inception_v1,
light_squeezenet. The outputs are not checked here (the same generated code as everywhere; only
the binding differs).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def child(model: str, out_dir: str, clusters: int, backend: str, gaps: list[float], calls: int):
    import ramiel
    from ramiel.runtime.entry import random_inputs

    m = ramiel.compile(model, clusters=clusters, backend=backend, out_dir=out_dir)
    feeds = random_inputs(m.input_specs, seed=0)
    for _ in range(5):
        m.run(feeds)
    out: dict[str, list[float]] = {}
    for gap in gaps:
        ts = []
        for _ in range(calls):
            time.sleep(gap)
            t = time.perf_counter()
            m.run(feeds)
            ts.append((time.perf_counter() - t) * 1e3)
        out[str(gap)] = ts
    m.close()
    return {"times": out, "threads": m.runtime_config()[1], "clusters": len(m.program.clusters)}


def _stats(ts: list[float]) -> tuple[float, float, float]:
    """(median, 95 % interval low, high) of ``ts``."""
    from ramiel.bench import median_ci

    s = sorted(ts)
    return (statistics.median(s), *median_ci(s))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", metavar="MODEL")
    ap.add_argument("--clusters", type=int, default=2)
    ap.add_argument("--backend", default="threads", choices=("threads", "processes"))
    ap.add_argument("--gaps", default="0,0.02,0.1,0.3")
    ap.add_argument("--calls", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out", help="also write the table to this file")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    try:
        gaps = [float(g) for g in args.gaps.split(",")]
    except ValueError:
        gaps = []
    if not gaps or not all(0.0 <= g < float("inf") for g in gaps):
        ap.error(f"--gaps: comma-separated seconds, each 0 or more, got {args.gaps!r}")
    if args.clusters < 1 or args.calls < 1 or args.rounds < 1:
        ap.error("--clusters, --calls and --rounds must be at least 1")
    if args.child:
        r = child(args.child[0], args.child[1], args.clusters, args.backend, gaps, args.calls)
        print(json.dumps(r))
        return 0

    from ramiel.bench import check_report_path, load_average, resolve_models, write_report

    check_report_path(ap, args.out)
    try:
        specs = resolve_models(
            args.models or ["inception", "light_inception_v1", "light_squeezenet"]
        )
    except ValueError as e:
        ap.error(str(e))
    lines = [
        f"# python bench/idle_gap.py {' '.join(sys.argv[1:] if argv is None else argv)}",
        f"# {time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cores, {args.backend} backend, "
        f"load average {load_average()[0]:.2f} before",
        "# median ms of one inference [95 % interval] after an idle pause of <gap> s",
        f"{'model':<20} {'program':>7} {'gap s':>6} {'bound':>24} {'unbound':>24} {'x':>6}",
    ]
    print("\n".join(lines), flush=True)
    configs = {"bound": {}, "unbound": {"RAMIEL_BIND": "0"}}
    with tempfile.TemporaryDirectory(prefix="ramiel-gap-") as tmp:
        for spec in specs:
            path = spec.resolve()
            times: dict[str, dict[str, list[float]]] = {c: {} for c in configs}
            shape = ""
            for rnd in range(args.rounds):
                for label, extra in configs.items():
                    env = {**os.environ, **extra, "ORT_DISABLE_TELEMETRY": "1"}
                    cmd = [
                        sys.executable, __file__, "--child", path,
                        os.path.join(tmp, f"{spec.name}-{label}-{rnd}"),
                        "--clusters", str(args.clusters), "--backend", args.backend,
                        "--gaps", args.gaps, "--calls", str(args.calls),
                    ]  # fmt: skip
                    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
                    if p.returncode != 0:
                        tail = p.stderr.strip().splitlines()[-1:]
                        raise SystemExit(f"{spec.name} {label}: the child failed: {tail}")
                    r = json.loads(p.stdout.strip().splitlines()[-1])
                    shape = f"{r['clusters']}x{r['threads']}"
                    for g, ts in r["times"].items():
                        times[label].setdefault(g, []).extend(ts)
            for g in (str(x) for x in gaps):
                b, u = _stats(times["bound"][g]), _stats(times["unbound"][g])
                line = (
                    f"{spec.name:<20} {shape:>7} {float(g):>6.2f} "
                    f"{b[0]:8.2f} [{b[1]:6.2f}, {b[2]:6.2f}] {u[0]:8.2f} [{u[1]:6.2f}, {u[2]:6.2f}]"
                    f" {b[0] / u[0]:5.2f}x"
                )
                print(line, flush=True)
                lines.append(line)
    return write_report(lines, args.out, f"# load average {load_average()[0]:.2f} after")


if __name__ == "__main__":
    raise SystemExit(main())
