"""Task parallelism against intra-op threads, as the runtime runs them: the default program
(``ramiel.compile(model)``: clusters = cores) against the one-cluster program with all the
cores as intra-op threads, each in a process of its own, timed interleaved.

Usage::

    python bench/split_vs_threads.py [MODEL ...] [--budget 15] [--out FILE]

MODEL: as ``ramiel bench`` takes them (default: the nine zoo models, ``inception`` and
``transformer``). Columns: ``default`` (what the merge chose: C clusters x P // C threads, or
one cluster with P threads where it kept one), ``1xP`` (``CompileOptions(clusters=1,
threads_per_worker=P)``), both on the threads backend through the runtime (helpers bound,
threads adapting: :mod:`ramiel.runtime.binding`, :mod:`ramiel.runtime.contention`); medians
in ms [95 % interval] and the ratio default / 1xP (< 1: the default is faster); with ``--ort``
also onnxruntime with P threads, without spinning (``ramiel bench``'s ``ort-Pt``) and with it
(its own default), and the default's ratio to each. Every program's outputs are checked against
onnxruntime first.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
import time


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", metavar="MODEL")
    ap.add_argument("--budget", type=float, default=15.0, help="seconds of timing per model")
    ap.add_argument("--out", help="also write the table to this file")
    ap.add_argument(
        "--ort",
        action="store_true",
        help="also time onnxruntime with the same cores, without and with spinning (its default;"
        " the pause before each call is then 0.1 s, longer than its threads spin)",
    )
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
    specs = resolve_models(args.models)
    plan = dataclasses.replace(Plan(), budget_s=args.budget, malloc_tuning=tune_malloc())
    if args.ort:
        plan = dataclasses.replace(plan, gap_s=max(plan.gap_s, 0.1))
    head = [
        f"# python bench/split_vs_threads.py {' '.join(sys.argv[1:] if argv is None else argv)}",
        f"# {time.strftime('%Y-%m-%d %H:%M')}, {cores} usable cores, load average "
        f"{load_average()[0]:.2f} before",
        "# median ms of one inference [95 % interval]; x: default / 1xP",
        f"{'model':<22} {'default program':>16} {'default ms':>24} {f'1x{cores} ms':>24} {'x':>6}"
        + (
            f" {f'ort-{cores}t ms':>24} {'default/ort':>11} {'ort-spin ms':>24} {'default/spin':>12}"
            if args.ort
            else ""
        ),
    ]
    print("\n".join(head), flush=True)
    lines = list(head)
    meter = CpuMeter()
    with tempfile.TemporaryDirectory(prefix="ramiel-split-") as tmp:
        for spec in specs:
            path = spec.resolve()
            default = compile_model(path, os.path.join(tmp, spec.name, "d"), CompileOptions())
            one_opts = CompileOptions(clusters=1, threads_per_worker=cores)
            one = compile_model(path, os.path.join(tmp, spec.name, "1"), one_opts)
            m = CompiledModel(default, CompileOptions())
            feeds = {k: v.numpy() for k, v in random_inputs(m.input_specs, seed=0).items()}
            backend, threads = m.runtime_config()
            prog = f"{len(m.program.clusters)}x{threads}"
            outs = list(m.output_names)
            procs = {
                "ort": Isolated(Recipe("ort", feeds, outs, path=path, threads=cores)),
                "default": Isolated(
                    Recipe("par", feeds, outs, result=default, options=CompileOptions())
                ),  # fmt: skip
                "one": Isolated(Recipe("par", feeds, outs, result=one, options=one_opts)),
            }
            if args.ort:
                procs["ort-spin"] = Isolated(Recipe("ort", feeds, outs, path=path, threads=cores,
                                                    ort_spinning=True))  # fmt: skip
            timed = None if args.ort else ["default", "one"]
            t, errs = check_and_time(procs, plan, "ort", timed)
            d, o = t["default"], t["one"]
            bad = "".join(f" ERR {k} {errs[k]:.1e}" for k in ("default", "one") if errs[k] > 1e-3)
            line = (
                f"{spec.name:<22} {prog:>16} {d.median:8.2f} [{d.ci[0]:.2f}, {d.ci[1]:.2f}]"
                f"{'':>4} {o.median:8.2f} [{o.ci[0]:.2f}, {o.ci[1]:.2f}]{'':>4} "
                f"{d.median / o.median:5.2f}x{bad}"
            )
            if args.ort:
                r, sp = t["ort"], t["ort-spin"]
                line += (
                    f" {r.median:8.2f} [{r.ci[0]:.2f}, {r.ci[1]:.2f}]{'':>4} {d.median / r.median:10.2f}x"
                    f" {sp.median:8.2f} [{sp.ci[0]:.2f}, {sp.ci[1]:.2f}]{'':>4}"
                    f" {d.median / sp.median:11.2f}x"
                )
            print(line, flush=True)
            lines.append(line)
    return write_report(lines, args.out, meter.closing_line())


if __name__ == "__main__":
    raise SystemExit(main())
