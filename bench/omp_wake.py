"""What an idle pause costs the next inference, per OpenMP wait policy.

Usage::

    python bench/omp_wake.py [--models transformer,light_squeezenet] [--threads 2]
                             [--configs passive,default,spin30000000,default-pinned]
                             [--gaps 0,0.015,0.05,0.1,0.3] [--calls 20] [--out FILE]

For every configuration (environment variables that GNU OpenMP reads once, when torch loads it,
so each configuration runs in a fresh process of its own): ``passive``
(``OMP_WAIT_POLICY=PASSIVE``, Ramiel's default), ``default`` (nothing set: libgomp spins
300,000 iterations after a parallel region, then sleeps), ``spin<N>`` (``GOMP_SPINCOUNT=N``),
and ``<config>-pinned`` (the same, with the helper threads of the process's OpenMP pool, found
by :func:`ramiel.runtime.binding.pool_helpers`, bound to the cores other than the first). In that process, with ``--threads`` intra-op threads:

* ``wake``: one small parallel op (an in-place add on 64 Ki floats) after sleeping ``gap``
  seconds, median ms of ``calls``;
* per model, the sequential generated module (``ramiel compile MODEL --clusters 1``, compiled
  in that process) after
  sleeping ``gap`` seconds, median ms of ``calls`` inferences (requests that arrive with that
  much idle time between them).

Prints one line per configuration and gap. The module's outputs are not checked here (the same
generated code as everywhere; only the OpenMP setting differs).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

OMP_VARS = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OMP_PROC_BIND", "OMP_PLACES", "RAMIEL_OMP")


def _env(config: str) -> dict[str, str]:
    base = config.removesuffix("-pinned")
    env = {k: v for k, v in os.environ.items() if k not in OMP_VARS}
    env["RAMIEL_OMP"] = "0"  # exactly this configuration, not Ramiel's default
    if base == "passive":
        env["OMP_WAIT_POLICY"] = "PASSIVE"
    elif base.startswith("spin") and base[4:].isdigit():
        env["GOMP_SPINCOUNT"] = base[4:]
    elif base != "default":
        raise SystemExit(f"omp_wake: unknown configuration {config!r}")
    env.setdefault("ORT_DISABLE_TELEMETRY", "1")
    return env


def child(args: argparse.Namespace) -> dict:
    """In the configuration's own process: compile the models, then the medians per gap."""
    import torch

    from ramiel.bench import resolve_models
    from ramiel.compiler import CompiledModel, CompileOptions, compile_model
    from ramiel.runtime.binding import pool_helpers
    from ramiel.runtime.entry import random_inputs
    from ramiel.runtime.memory import reuse_freed_memory

    reuse_freed_memory()
    torch.set_num_threads(args.threads)
    z = torch.zeros(1 << 16)
    helpers = pool_helpers(args.threads) or []  # makes the pool
    if args.pinned:
        cores = sorted(os.sched_getaffinity(0))
        for tid in helpers:
            os.sched_setaffinity(tid, set(cores[1:]) or set(cores))
    gaps = [float(g) for g in args.gaps.split(",")]
    models = []
    with tempfile.TemporaryDirectory(prefix="ramiel-omp-wake-") as tmp:
        for spec in resolve_models(args.models.split(",")):
            res = compile_model(
                spec.resolve(), os.path.join(tmp, spec.name), CompileOptions(clusters=1)
            )
            cm = CompiledModel(res, CompileOptions())
            feeds = list(random_inputs(cm.input_specs, seed=0).values())
            models.append((spec.name, cm.sequential, feeds))

    def timed(fn, gap: float) -> float:
        ts = []
        for _ in range(args.calls):
            time.sleep(gap)
            t = time.perf_counter()
            fn()
            ts.append((time.perf_counter() - t) * 1e3)
        return statistics.median(ts)

    out: dict = {"helpers": len(helpers), "rows": []}
    with torch.inference_mode():
        for _name, m, feeds in models:
            for _ in range(3):
                m(*feeds)
        for gap in gaps:
            row = {"gap": gap, "wake": timed(lambda: z.add_(1), gap)}
            for name, m, feeds in models:
                row[name] = timed(lambda m=m, feeds=feeds: m(*feeds), gap)
            out["rows"].append(row)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="transformer,light_squeezenet")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--configs", default="passive,default,spin30000000,default-pinned")
    ap.add_argument("--gaps", default="0,0.015,0.05,0.1,0.3")
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--out", help="also write the table to this file")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--pinned", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args)))
        return 0

    from ramiel.bench import resolve_models, write_report

    load = os.getloadavg()
    lines = [
        f"# python bench/omp_wake.py {' '.join(sys.argv[1:] if argv is None else argv)}",
        f"# {datetime.datetime.now():%Y-%m-%d %H:%M}, {os.cpu_count()} cores, "
        f"{args.threads} intra-op threads, load average before {load[0]:.2f}",
        "# median ms after sleeping `gap` s before each call; wake: one small parallel op",
    ]
    names = [spec.name for spec in resolve_models(args.models.split(","))]
    lines.append(f"{'config':<22} {'gap s':>6} {'wake':>8} " + " ".join(f"{n:>20}" for n in names))
    print("\n".join(lines), flush=True)
    for cfg in args.configs.split(","):
        cmd = [sys.executable, __file__, "--child", "--threads", str(args.threads),
               "--gaps", args.gaps, "--calls", str(args.calls), "--models", args.models]  # fmt: skip
        if cfg.endswith("-pinned"):
            cmd.append("--pinned")
        p = subprocess.run(cmd, capture_output=True, text=True, env=_env(cfg), timeout=3600)
        if p.returncode != 0:
            line = f"{cfg:<22} failed: {p.stderr.strip().splitlines()[-1:]}"
            print(line, flush=True)
            lines.append(line)
            continue
        r = json.loads(p.stdout.strip().splitlines()[-1])
        for row in r["rows"]:
            line = f"{cfg:<22} {row['gap']:6.3f} {row['wake']:8.3f} " + " ".join(
                f"{row[n]:20.2f}" for n in names
            )
            print(line, flush=True)
            lines.append(line)
    load = os.getloadavg()
    return write_report(lines, args.out, f"# load average after {load[0]:.2f}")


if __name__ == "__main__":
    raise SystemExit(main())
