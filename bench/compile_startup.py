"""Start-up of compiled programs: torch.compile time per segment, cold and with inductor's cache.

Usage::

    python bench/compile_startup.py [--models light_squeezenet,light_inception_v1]
                                    [--clusters 2] [--backend threads] [--out FILE]

Per model: ``ramiel compile --compile`` once, then the same program started twice, each time in a
fresh process, with a fresh inductor cache directory (``RAMIEL_COMPILE_CACHE``) shared by the two
starts: the first start compiles every segment from scratch (cold), the second finds the compiled
graphs in the cache. For each start: the wall time of ``CompiledModel.start()`` (workers started,
every segment of the parallel module compiled by the warm-up inference) and of the sequential
module's first call (its one segment), the number of segments, the slowest ones, and inductor's
FX graph cache hits and misses; then the median latency of 20 inferences of each module against
the same program uncompiled, in the same process.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile


def child(model_dir: str, backend: str, clusters: int, eager_dir: str) -> dict:
    import time

    import torch
    from torch._dynamo.utils import counters

    from ramiel.bench import Timing
    from ramiel.compiler import CompiledModel, CompileOptions, CompileResult
    from ramiel.runtime.entry import random_inputs

    def load(d: str) -> CompiledModel:
        r = CompileResult(
            d,
            os.path.join(d, "model.py"),
            os.path.join(d, "model_seq.py"),
            os.path.join(d, "weights.safetensors"),
            os.path.join(d, "model.mlir"),
            report=None,  # type: ignore[arg-type]
        )
        return CompiledModel(r, CompileOptions(clusters=clusters, backend=backend))

    out: dict = {}
    m = load(model_dir)
    feeds = random_inputs(m.input_specs, seed=0)
    t = time.perf_counter()
    m.start()
    out["start_par_s"] = time.perf_counter() - t
    par_events = m.compile_report()
    torch.set_num_threads(1)
    t = time.perf_counter()
    m.sequential(*feeds.values())
    out["start_seq_s"] = time.perf_counter() - t
    seq_events = m.compile_report()[len(par_events) :]
    out["par"] = [(e.segment, e.threads, e.seconds, e.error) for e in par_events]
    out["seq"] = [(e.segment, e.threads, e.seconds, e.error) for e in seq_events]
    out["fx"] = {
        k: v for k, v in counters["inductor"].items() if k.startswith("fxgraph_cache")
    }  # the sequential module's (and threads workers') compilations: this process
    eager = load(eager_dir)

    def median(fn) -> list[float]:  # type: ignore[no-untyped-def]
        fn()
        ts = []
        for _ in range(20):
            t = time.perf_counter()
            fn()
            ts.append((time.perf_counter() - t) * 1e3)
        tm = Timing.of(ts)
        return [tm.median, *tm.ci]

    out["latency"] = {
        "par compiled": median(lambda: m.run(feeds)),
        "par eager": median(lambda: eager.run(feeds)),
        "seq-1t compiled": median(lambda: m.sequential(*feeds.values())),
        "seq-1t eager": median(lambda: eager.sequential(*feeds.values())),
    }
    m.close()
    eager.close()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="light_squeezenet,light_inception_v1")
    ap.add_argument("--clusters", type=int, default=2)
    ap.add_argument("--backend", default="threads", choices=["threads", "processes"])
    ap.add_argument("--out", help="also write the report to this file")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child[0], args.backend, args.clusters, args.child[1])))
        return 0

    from ramiel.bench import resolve_models, write_report
    from ramiel.compiler import CompileOptions, compile_model

    load = os.getloadavg()
    lines = [
        f"# compiled programs: start-up cold and with inductor's cache, "
        f"{datetime.datetime.now():%Y-%m-%d %H:%M}, {os.cpu_count()} cores, load average before "
        f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}",
        f"# command: python bench/compile_startup.py --models {args.models} --clusters "
        f"{args.clusters} --backend {args.backend}",
    ]
    print("\n".join(lines), flush=True)
    for name in args.models.split(","):
        (spec,) = resolve_models([name])
        with tempfile.TemporaryDirectory(prefix="ramiel-startup-") as tmp:
            d, e = os.path.join(tmp, "compiled"), os.path.join(tmp, "eager")
            opts = CompileOptions(clusters=args.clusters, backend=args.backend, compile=True)
            compile_model(spec.resolve(), d, opts)
            compile_model(spec.resolve(), e, CompileOptions(clusters=args.clusters))
            env = dict(os.environ, RAMIEL_COMPILE_CACHE=os.path.join(tmp, "cache"))
            env.pop("TORCHINDUCTOR_CACHE_DIR", None)
            for start in ("cold", "cached"):
                p = subprocess.run(
                    [sys.executable, __file__, "--child", d, e, "--backend", args.backend,
                     "--clusters", str(args.clusters)],
                    capture_output=True, text=True, env=env, timeout=3600,
                )  # fmt: skip
                if p.returncode != 0:
                    text = f"{name} {start}: failed: {p.stderr.strip().splitlines()[-1:]}"
                    print(text, flush=True)
                    lines.append(text)
                    continue
                r = json.loads(p.stdout.strip().splitlines()[-1])
                block = [f"\n## {name}, {args.clusters} clusters, {args.backend}: {start} start"]
                for mod, key, total in (("parallel", "par", "start_par_s"),
                                        ("sequential", "seq", "start_seq_s")):  # fmt: skip
                    evs = r[key]
                    seg_s = sum(x[2] for x in evs)
                    slow = sorted(evs, key=lambda x: -x[2])[:4]
                    failed = [x for x in evs if x[3]]
                    block.append(
                        f"{mod:10s} module: start {r[total]:6.1f} s, {len(evs)} segment(s) "
                        f"compiled in {seg_s:6.1f} s (slowest: "
                        + ", ".join(f"{x[0]} {x[2]:.1f} s" for x in slow)
                        + ")"
                        + (f"; {len(failed)} not compiled: {failed[0][3]}" if failed else "")
                    )
                block.append(f"inductor FX graph cache (this process): {r['fx']}")
                for k, (med, lo, hi) in r["latency"].items():
                    block.append(f"  latency {k:16s} {med:8.2f} ms [{lo:.2f}, {hi:.2f}]")
                print("\n".join(block), flush=True)
                lines += block
    load = os.getloadavg()
    tail = f"\n# load average after {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    return write_report(lines, args.out, tail)


if __name__ == "__main__":
    sys.exit(main())
