"""The default program quiet and next to one busy background core (issue #12's target: the
busy median at most 1.5x the quiet one), without the rest of ``ramiel bench``.

Usage::

    python bench/busy_core.py [MODEL ...] [--rounds 6] [--calls 10] [--out FILE]

MODEL: as ``ramiel bench`` takes them (default: its eleven). Each model's default program
(``ramiel.compile(model)``: clusters = cores, the default's segments) runs in a process of its
own (``ramiel.measure.Isolated``), its outputs checked against onnxruntime first, and so does the
same model's program for one core (``clusters=1, threads_per_worker=1``). Then ``rounds``
times: a block of ``calls`` calls of the default program on the machine as it is, a block of
the one-core program, and a block of the default program while a process the benchmark starts
spins on one core (``ramiel.measure.busy_core``; its first call untimed), as ``ramiel bench``'s
*One busy background core* table measures it. Medians in ms [95 % interval]; ``busy/quiet`` is
issue #12's ratio (target 1.5x), ``busy/1-core`` what the busy core costs beyond the core it
takes (1.0: the program runs as fast as on the one core left).
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
    ap.add_argument("--rounds", type=int, default=6, help="quiet and busy blocks (default 6)")
    ap.add_argument("--calls", type=int, default=10, help="calls per block (default 10)")
    ap.add_argument("--out", help="also write the table to this file")
    args = ap.parse_args(argv)
    if args.rounds < 1 or args.calls < 1:
        ap.error("--rounds and --calls must be at least 1")

    from ramiel.bench import (
        CpuMeter,
        Isolated,
        Plan,
        Recipe,
        load_average,
        rel_error,
        resolve_models,
        tune_malloc,
        write_report,
    )
    from ramiel.compiler import CompiledModel, CompileOptions, compile_model
    from ramiel.omp import usable_cores
    from ramiel.runtime.entry import random_inputs

    specs = resolve_models(args.models)
    plan = dataclasses.replace(Plan(), malloc_tuning=tune_malloc())
    head = [
        f"# python bench/busy_core.py {' '.join(sys.argv[1:] if argv is None else argv)}",
        f"# {time.strftime('%Y-%m-%d %H:%M')}, {usable_cores()} usable cores, load average "
        f"{load_average()[0]:.2f} before",
        f"# median ms of one call [95 % interval], {args.rounds} x {args.calls} calls each",
        f"{'model':<20} {'program':>8} {'quiet ms':>25} {'busy ms':>25} {'1-core ms':>25}"
        f" {'busy/quiet':>11} {'busy/1-core':>11}",
    ]
    print("\n".join(head), flush=True)
    lines = list(head)
    meter = CpuMeter()
    with tempfile.TemporaryDirectory(prefix="ramiel-busy-") as tmp:
        for spec in specs:
            path = spec.resolve()
            opts = CompileOptions()
            res = compile_model(path, os.path.join(tmp, spec.name), opts)
            m = CompiledModel(res, opts)
            feeds = {k: v.numpy() for k, v in random_inputs(m.input_specs, seed=0).items()}
            _, threads = m.runtime_config()
            prog = f"{len(m.program.clusters)}x{threads}"
            outs = list(m.output_names)
            one_opts = CompileOptions(clusters=1, threads_per_worker=1)
            one_res = compile_model(path, os.path.join(tmp, spec.name + "-1"), one_opts)
            ort = Isolated(Recipe("ort", feeds, outs, path=path, threads=1))
            proc = Isolated(Recipe("par", feeds, outs, result=res, options=opts))
            one = Isolated(Recipe("par", feeds, outs, result=one_res, options=one_opts))
            try:
                want = ort.outputs()
                ort.close()
                err = max(rel_error(proc.outputs(), want), rel_error(one.outputs(), want))
                quiet, busy, alone = _quiet_busy_one(proc, one, args.rounds, args.calls, plan)
            finally:
                ort.close()
                proc.close()
                one.close()
            line = (
                f"{spec.name:<20} {prog:>8} "
                + "".join(
                    f" {t.median:8.2f} [{t.ci[0]:.2f}, {t.ci[1]:.2f}]".rjust(25)
                    for t in (quiet, busy, alone)
                )
                + f" {busy.median / quiet.median:10.2f}x {busy.median / alone.median:10.2f}x"
                + (f" ERR {err:.1e}" if err > 1e-3 else "")
            )
            print(line, flush=True)
            lines.append(line)
    return write_report(lines, args.out, meter.closing_line())


def _quiet_busy_one(proc, one, rounds: int, calls: int, plan):  # type: ignore[no-untyped-def]
    """(default quiet, default busy, one-core program quiet): :class:`~ramiel.measure.Timing`
    of each, from ``rounds`` rounds of three blocks of ``calls`` calls."""
    from ramiel.measure import Timing, busy_core

    def block(fn, out: list[float]) -> None:  # type: ignore[no-untyped-def]
        for _ in range(calls):
            time.sleep(plan.gap_s)
            out.append(fn().ms)

    quiet: list[float] = []
    busy: list[float] = []
    alone: list[float] = []
    for fn in (proc, one, proc, one):  # warm-up
        fn()
    for _ in range(rounds):
        block(proc, quiet)
        block(one, alone)
        with busy_core():
            proc()  # the first call after the spinner starts finds the caches cold: untimed
            block(proc, busy)
    return Timing.of(quiet), Timing.of(busy), Timing.of(alone)


if __name__ == "__main__":
    raise SystemExit(main())
