"""OpenMP wait policy and thread binding of generated programs, quiet and under one busy core.

Usage::

    python bench/omp_policy.py [--models light_bvlc_alexnet,light_inception_v1] [--rounds 6]
                               [--calls 10] [--configs default,passive,...] [--out FILE]

For every model and every OpenMP configuration (environment variables, which GNU OpenMP reads
once when it starts, so each configuration runs in a fresh process of its own), the default
program (``ramiel.compile(model)``: clusters = cores, threads backend, the one-cluster fall-back
to intra-op threads where the merge keeps one cluster) is timed in interleaved blocks: ``calls``
inferences on the machine as it is (``quiet``), then ``calls`` with a spinning background process
on one core (:func:`ramiel.bench.busy_core`), ``rounds`` times. Prints per configuration the two
medians with their 95 % intervals and the ratio busy / quiet, plus the load average.

Configurations (``--configs``): ``default`` (no variable set: libgomp spins 300,000 iterations
before it sleeps), ``passive`` (``OMP_WAIT_POLICY=PASSIVE``: sleep at once), ``active``
(``OMP_WAIT_POLICY=ACTIVE``: spin without limit), ``spin<N>`` (``GOMP_SPINCOUNT=N``, any N), ``bind``
(``OMP_PROC_BIND=true``: threads pinned to cores), ``passive-bind``, ``kmp0``
(``KMP_BLOCKTIME=0``, Intel OpenMP's knob: libgomp ignores it), and ``ramiel`` (what
:func:`ramiel.omp.configure` sets). ``<config>-fixed``: the same with ``RAMIEL_ADAPT_THREADS=0``
(the runtime keeps its planned intra-op threads under load, :mod:`ramiel.runtime.contention`).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys

CONFIGS: dict[str, dict[str, str]] = {
    "default": {},
    "passive": {"OMP_WAIT_POLICY": "PASSIVE"},
    "active": {"OMP_WAIT_POLICY": "ACTIVE"},
    "spin0": {"GOMP_SPINCOUNT": "0"},
    "spin1000": {"GOMP_SPINCOUNT": "1000"},
    "spin10000": {"GOMP_SPINCOUNT": "10000"},
    "spin100000": {"GOMP_SPINCOUNT": "100000"},
    "bind": {"OMP_PROC_BIND": "true"},
    "passive-bind": {"OMP_WAIT_POLICY": "PASSIVE", "OMP_PROC_BIND": "true"},
    "kmp0": {"KMP_BLOCKTIME": "0"},
    "ramiel": {},  # filled from ramiel.omp.DEFAULTS
}
OMP_VARS = (
    "OMP_WAIT_POLICY",
    "GOMP_SPINCOUNT",
    "OMP_PROC_BIND",
    "KMP_BLOCKTIME",
    "OMP_PLACES",
    "RAMIEL_ADAPT_THREADS",
)


def child(model: str, rounds: int, calls: int) -> dict:
    """Runs in the configuration's own process: compile, time, return the medians."""
    import ramiel
    from ramiel.bench import measure_quiet_busy, resolve_models
    from ramiel.runtime.entry import random_inputs

    (spec,) = resolve_models([model])
    m = ramiel.compile(spec.resolve())
    try:
        feeds = random_inputs(m.input_specs, seed=0)
        quiet, busy = measure_quiet_busy(lambda: m.run(feeds), rounds=rounds, calls=calls)
        backend, threads = m.runtime_config()
        return {
            "clusters": len(m.program.clusters),
            "backend": backend,
            "threads": threads,
            "quiet": [quiet.median, *quiet.ci],
            "busy": [busy.median, *busy.ci],
            "env": {k: os.environ[k] for k in OMP_VARS if k in os.environ},
        }
    finally:
        m.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="light_bvlc_alexnet,light_inception_v1")
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--calls", type=int, default=10)
    ap.add_argument("--out", help="also write the table to this file")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.rounds, args.calls)))
        return 0

    from ramiel.bench import write_report
    from ramiel.omp import DEFAULTS

    CONFIGS["ramiel"] = dict(DEFAULTS)
    configs = [c for c in args.configs.split(",") if c]
    for c in configs:  # any spin count: spin<N>; <config>-fixed: without adapting the threads
        base = c.removesuffix("-fixed")
        if base not in CONFIGS and base.startswith("spin") and base[4:].isdigit():
            CONFIGS[base] = {"GOMP_SPINCOUNT": base[4:]}
        if c != base and base in CONFIGS:
            CONFIGS[c] = {**CONFIGS[base], "RAMIEL_ADAPT_THREADS": "0"}
    unknown = [c for c in configs if c not in CONFIGS]
    if unknown:
        ap.error(f"unknown configuration(s) {', '.join(unknown)}; known: {', '.join(CONFIGS)}")
    load = os.getloadavg()
    lines = [
        f"# OpenMP wait policy under one busy core, {datetime.datetime.now():%Y-%m-%d %H:%M}, "
        f"{os.cpu_count()} cores, load average before {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}",
        f"# command: python bench/omp_policy.py --models {args.models} --configs "
        f"{args.configs} --rounds {args.rounds} --calls {args.calls}",
        "# the default program (ramiel.compile(model)); medians in ms [95 % interval], "
        f"{args.rounds} x {args.calls} calls each, quiet and busy blocks interleaved",
        "",
        f"{'model':<22} {'config':<13} {'program':<12} {'quiet ms':>24} {'busy ms':>24} "
        f"{'busy/quiet':>10}",
    ]
    print("\n".join(lines), flush=True)
    for model in args.models.split(","):
        for cfg in configs:
            env = {k: v for k, v in os.environ.items() if k not in OMP_VARS}
            env.update(CONFIGS[cfg])
            env.setdefault("ORT_DISABLE_TELEMETRY", "1")
            env["RAMIEL_OMP"] = "0"  # measure exactly this configuration, not Ramiel's defaults
            p = subprocess.run(
                [sys.executable, __file__, "--child", model, "--rounds", str(args.rounds),
                 "--calls", str(args.calls)],
                capture_output=True, text=True, env=env, timeout=3600,
            )  # fmt: skip
            if p.returncode != 0:
                line = f"{model:<22} {cfg:<13} failed: {p.stderr.strip().splitlines()[-1:]}"
            else:
                r = json.loads(p.stdout.strip().splitlines()[-1])
                q, b = r["quiet"], r["busy"]
                prog = f"{r['clusters']}x{r['threads']} {r['backend']}"
                line = (
                    f"{model:<22} {cfg:<13} {prog:<12} "
                    f"{q[0]:8.2f} [{q[1]:6.2f}, {q[2]:6.2f}] {b[0]:8.2f} [{b[1]:6.2f}, {b[2]:6.2f}] "
                    f"{b[0] / q[0]:9.2f}x"
                )
            print(line, flush=True)
            lines.append(line)
    load = os.getloadavg()
    tail = f"# load average after {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    return write_report(lines, args.out, tail)


if __name__ == "__main__":
    sys.exit(main())
