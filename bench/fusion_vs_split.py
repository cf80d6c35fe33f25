"""Task parallelism against one fused cluster: the default program (``ramiel.compile(model)``)
beside the P-cluster program (1 thread each) and the one-cluster program (P intra-op threads),
each traced (``onednn-graph`` segments, ``--compile-backend onednn-graph``: what the default
``compile="auto"`` gives the one cluster) and eager (``--no-compile``), and onnxruntime with P threads without and with spinning; every program in a
process of its own, timed interleaved, outputs checked against onnxruntime first.

Usage::

    python bench/fusion_vs_split.py [MODEL ...] [--budget 8] [--out FILE]

MODEL: as ``ramiel bench`` takes them (default: the project's inception CNN and transformer,
light_inception_v1 and light_inception_v2: the branchy models). Columns: the default program
(``CxT``: clusters x threads) and its median, then ``Px1`` and ``1xP`` traced and eager, then
onnxruntime; medians in ms [95 % interval]. The merge's ``onednn-graph=true`` estimate
(``ramiel.passes.merge``) is what decides between ``Px1`` and ``1xP`` for the default.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
import time

DEFAULT_MODELS = ["inception", "transformer", "light_inception_v1", "light_inception_v2"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", metavar="MODEL")
    ap.add_argument("--budget", type=float, default=8.0, help="seconds of timing per model")
    ap.add_argument("--out", help="also write the table to this file")
    args = ap.parse_args(argv)

    from ramiel.bench import (
        CpuMeter,
        Isolated,
        Plan,
        Recipe,
        check_and_time,
        load_average,
        resolve_models,
        tune_malloc,
        write_report,
    )
    from ramiel.compiler import CompiledModel, CompileOptions, compile_model
    from ramiel.omp import usable_cores
    from ramiel.runtime.entry import random_inputs

    cores = usable_cores()
    specs = resolve_models(args.models or DEFAULT_MODELS)
    # a pause longer than onnxruntime's threads spin before each call
    plan = dataclasses.replace(
        Plan(), budget_s=args.budget, malloc_tuning=tune_malloc(), gap_s=max(Plan().gap_s, 0.1)
    )
    configs = {
        "default": CompileOptions(),
        # explicitly: the default traces a program of one cluster only (since 2026-12-06)
        f"{cores}x1-traced": CompileOptions(clusters=cores, compile="onednn-graph"),
        f"{cores}x1-eager": CompileOptions(clusters=cores, compile=False),
        f"1x{cores}-traced": CompileOptions(
            clusters=1, threads_per_worker=cores, compile="onednn-graph"
        ),
        f"1x{cores}-eager": CompileOptions(clusters=1, threads_per_worker=cores, compile=False),
    }
    columns = [*configs, f"ort-{cores}t", "ort-spin"]
    head = [
        f"# python bench/fusion_vs_split.py {' '.join(sys.argv[1:] if argv is None else argv)}",
        f"# {time.strftime('%Y-%m-%d %H:%M')}, {cores} usable cores, load average "
        f"{load_average()[0]:.2f} before",
        "# median ms of one inference [95 % interval]; default: clusters x threads it chose",
        f"{'model':<20} {'default':>8} " + " ".join(f"{c:>24}" for c in columns),
    ]
    print("\n".join(head), flush=True)
    lines = list(head)
    meter = CpuMeter()
    with tempfile.TemporaryDirectory(prefix="ramiel-fusion-") as tmp:
        for spec in specs:
            path = spec.resolve()
            results = {
                k: compile_model(path, os.path.join(tmp, spec.name, k), o)
                for k, o in configs.items()
            }
            m = CompiledModel(results["default"], configs["default"])
            feeds = {k: v.numpy() for k, v in random_inputs(m.input_specs, seed=0).items()}
            _, threads = m.runtime_config()
            prog = f"{len(m.program.clusters)}x{threads}"
            outs = list(m.output_names)
            procs = {
                k: Isolated(Recipe("par", feeds, outs, result=results[k], options=o))
                for k, o in configs.items()
            }
            procs[f"ort-{cores}t"] = Isolated(Recipe("ort", feeds, outs, path=path, threads=cores))
            procs["ort-spin"] = Isolated(
                Recipe("ort", feeds, outs, path=path, threads=cores, ort_spinning=True)
            )
            t, errs = check_and_time(procs, plan, f"ort-{cores}t")
            cells = [
                f"{t[c].median:8.2f} [{t[c].ci[0]:.2f}, {t[c].ci[1]:.2f}]".rjust(24)
                for c in columns
            ]
            bad = "".join(f" ERR {k} {errs[k]:.1e}" for k in configs if errs[k] > 1e-3)
            line = f"{spec.name:<20} {prog:>8} " + " ".join(cells) + bad
            print(line, flush=True)
            lines.append(line)
    return write_report(lines, args.out, meter.closing_line())


if __name__ == "__main__":
    raise SystemExit(main())
