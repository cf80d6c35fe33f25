"""Task-parallel scaling past 2 cores: Ramiel's programs against intra-op threads and onnxruntime
on 1, 2, 4, ... P cores; print a table per model.

Usage::

    python bench/scaling.py [MODEL ...] [--cores 1,2,4,8,16] [--budget 30] [--json FILE]
                            [--out FILE]

MODEL: ``.onnx`` paths, zoo names or project models as ``ramiel bench`` takes them (default: the
branchy ones, ``inception``, ``light_inception_v1`` and ``light_inception_v2``). For each model
and each core count P of ``--cores`` (1 always; a count above the usable cores is measured as
all of them), these configurations run in
spawned processes of their own and are timed interleaved (:func:`ramiel.bench.measure_interleaved`,
rounds in rotating order until every median's 95 % interval is within 2 % or ``--budget``
seconds are spent; all core counts of a model in one timing, so drift hits them alike):

* ``seq-Pt``: the sequential module with P intra-op threads (one-cluster fall-back);
* ``ort-Pt``: onnxruntime, sequential executor, P intra-op threads, no spinning; and for the
  largest P, ``ort-par-P``: its parallel executor with P inter-op threads (one intra-op thread);
* ``default-P`` (P > 1): the program ``ramiel.compile(model)`` makes for P cores (analytic costs,
  ``clusters=P``; where the merge keeps fewer clusters, the free cores become intra-op threads);
* ``par-CxT`` (P > 1): the parallel module compiled with measured per-op costs (``ramiel
  profile``, one thread) for C clusters, C a power of two from 2 to P, each worker with T = P // C
  intra-op threads, threads backend.

Every configuration's outputs are checked against ``seq-1t`` first (largest error relative to
the largest output magnitude). The table gives per P: the medians, the fastest Ramiel program
and its ratio to ``ort-Pt`` with a 95 % interval, and its speed-up over ``seq-1t``; the load
average and the cores other processes kept busy are printed with it. ``--json`` writes every
timing (medians, intervals, samples); ``--render JSON`` prints its tables again.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import os
import sys
import tempfile
import time

DEFAULT_MODELS = ["inception", "light_inception_v1", "light_inception_v2"]


def _splits(p: int) -> list[tuple[int, int]]:
    """(clusters, threads per worker) for P cores: C a power of two, 2 <= C <= P."""
    out, c = [], 2
    while c <= p:
        out.append((c, p // c))
        c *= 2
    return out


def _cell(timings: dict, key: str) -> str:  # type: ignore[type-arg]
    """``median [low, high]`` of ``timings[key]``, or ``–``."""
    t = timings.get(key)
    return "–" if t is None else f"{t.median:.2f} [{t.ci[0]:.2f}, {t.ci[1]:.2f}]"


def _table(
    name: str,
    cores: list[int],
    timings: dict,  # type: ignore[type-arg]
    made: dict[str, int],
    errs: dict[str, float],
    note: str = "",
) -> list[str]:
    """One model's lines of the report (see the module docstring); ``note`` opens its heading."""
    from ramiel.bench import ratio_ci

    bad = {k: float(f"{e:.3g}") for k, e in errs.items() if e > 1e-3}
    lines = [
        f"## {name} ({note}{len(timings)} configurations; "
        + (f"OUTPUTS DIFFER from seq-1t: {bad}" if bad else "outputs match seq-1t")
        + ")",
        f"{'P':>3} {'seq-Pt':>22} {'ort-Pt':>22} {'default-P':>28} "
        f"{'best':>10} {'best ms':>22} {'best / ort-Pt':>22} {'speed-up':>9}",
    ]
    seq1 = timings["seq-1t"].median if "seq-1t" in timings else None
    cell = functools.partial(_cell, timings)
    for p in cores:
        ours = [f"seq-{p}t", f"default-{p}", *(f"par-{c}x{t}" for c, t in _splits(p))]
        best = min((k for k in ours if k in timings), key=lambda k: timings[k].median)
        rc = ratio_ci(timings[best], timings.get(f"ort-{p}t"))
        dflt = f"default-{p}"
        dflt = f"{cell(dflt)} ({made[dflt]} cl.)" if dflt in timings else "–"
        ratio = "–" if rc is None else f"{rc[0]:.2f} [{rc[1]:.2f}, {rc[2]:.2f}]"
        sp = f"{seq1 / timings[best].median:.2f}x" if seq1 else "–"
        lines.append(
            f"{p:>3} {cell(f'seq-{p}t'):>22} {cell(f'ort-{p}t'):>22} {dflt:>28} "
            f"{best:>10} {cell(best):>22} {ratio:>22} {sp:>9}"
        )
    others = [k for k in timings if k.startswith("par-")]
    if others:
        lines.append(
            "   par: "
            + ", ".join(f"{k} {timings[k].median:.2f} ({made[k]} cl.)" for k in others)
            + "".join(f"; {k} {cell(k)}" for k in timings if k.startswith("ort-par-"))
        )
    return lines


def _render(path: str) -> list[str]:
    """The report's model tables again, from a ``--json`` file."""
    from ramiel.bench import Timing

    with open(path) as f:
        rec = json.load(f)
    lines = [f"# python bench/scaling.py {rec['command']}  (rendered from {path})"]
    for name, m in rec["models"].items():
        timings = {k: Timing(**t) for k, t in m["timings"].items()}
        lines += _table(name, rec["cores"], timings, m["clusters_made"], m["max_rel_err"])
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", metavar="MODEL")
    ap.add_argument("--cores", default="1,2,4,8,16", help="core counts P (comma list)")
    ap.add_argument("--budget", type=float, default=30.0, help="seconds of timing per model")
    ap.add_argument("--json", help="write every timing here")
    ap.add_argument("--out", help="also write the table to this file")
    ap.add_argument(
        "--render", metavar="JSON", help="measure nothing: print a --json file's tables"
    )
    args = ap.parse_args(argv)
    if args.render:
        from ramiel.bench import write_report

        try:
            lines = _render(args.render)
        except (OSError, ValueError, KeyError, TypeError) as e:
            ap.error(f"--render {args.render}: not a bench/scaling.py --json file ({e})")
        print("\n".join(lines))
        return write_report(lines, args.out)
    try:
        cores = sorted({int(x) for x in args.cores.split(",") if x})
    except ValueError:
        ap.error(f"--cores wants a comma list of positive integers, not {args.cores!r}")
    if not cores or cores[0] < 1:
        ap.error(f"--cores wants a comma list of positive integers, not {args.cores!r}")
    if not args.budget > 0:
        ap.error(f"--budget must be a positive number of seconds, not {args.budget}")
    if args.json:
        try:  # before minutes of measuring, not after
            with open(args.json, "a"):
                pass
        except OSError as e:
            ap.error(f"--json {args.json}: cannot write it ({e.strerror})")

    import torch

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
    from ramiel.cost_model import usable_cores
    from ramiel.profiler import profile_model
    from ramiel.runtime.entry import random_inputs

    have = usable_cores()
    # seq-1t is the reference every configuration is checked against; more cores than this
    # process may use are measured as all of them
    cores = sorted({1, *(min(p, have) for p in cores)})
    try:
        specs = resolve_models(args.models or DEFAULT_MODELS)
    except ValueError as e:
        ap.error(str(e))
    plan = dataclasses.replace(Plan(), budget_s=args.budget, malloc_tuning=tune_malloc())
    cmd = " ".join(sys.argv[1:] if argv is None else argv)
    head = [
        f"# python bench/scaling.py {cmd}",
        f"# {time.strftime('%Y-%m-%d %H:%M')}, {have} usable cores, torch {torch.__version__}; "
        f"load average {load_average()[0]:.2f} before",
        "# median ms of one inference [95 % interval]; best: the fastest Ramiel program on P "
        "cores (default-P or par-CxT); x: its ratio to ort-Pt [95 % interval]; speed-up: "
        "seq-1t / best",
    ]
    print("\n".join(head), flush=True)
    lines = list(head)
    record: dict[str, dict[str, object]] = {}
    meter = CpuMeter()
    with tempfile.TemporaryDirectory(prefix="ramiel-scaling-") as tmp:
        for spec in specs:
            path = spec.resolve()
            work = os.path.join(tmp, spec.name)
            t0 = time.perf_counter()
            db = os.path.join(work, "profile.json")
            os.makedirs(work, exist_ok=True)
            profile_model(path, db, repeat=5, threads=(1,))
            torch.set_num_threads(have)
            results: dict[str, tuple[object, CompileOptions]] = {}
            analytic = {}
            for p in cores:
                opts = CompileOptions(clusters=p)
                analytic[p] = compile_model(path, os.path.join(work, f"default-{p}"), opts)
                if p > 1:
                    results[f"default-{p}"] = (analytic[p], opts)
            profiled = {}
            for p in cores:
                for c, t in _splits(p):
                    if c not in profiled:
                        o = CompileOptions(clusters=c, profile=db)
                        profiled[c] = compile_model(path, os.path.join(work, f"par-{c}"), o)
                    results[f"par-{c}x{t}"] = (
                        profiled[c],
                        CompileOptions(clusters=c, profile=db, threads_per_worker=t),
                    )
            compile_s = time.perf_counter() - t0
            first = CompiledModel(analytic[cores[0]], CompileOptions())
            feeds = {k: v.numpy() for k, v in random_inputs(first.input_specs, seed=0).items()}
            out_names = list(first.output_names)
            procs: dict[str, Isolated] = {}
            made: dict[str, int] = {}
            try:
                for p in cores:
                    procs[f"seq-{p}t"] = Isolated(
                        Recipe("seq", feeds, out_names, result=analytic[cores[0]], threads=p)
                    )
                    procs[f"ort-{p}t"] = Isolated(
                        Recipe("ort", feeds, out_names, path=path, threads=p)
                    )
                if cores[-1] > 1:
                    procs[f"ort-par-{cores[-1]}"] = Isolated(
                        Recipe("ort", feeds, out_names, path=path, inter_op=cores[-1])
                    )
                for key, (r, o) in results.items():
                    m = CompiledModel(r, o)  # type: ignore[arg-type]
                    made[key] = len(m.program.clusters)
                    m.close()
                    procs[key] = Isolated(Recipe("par", feeds, out_names, result=r, options=o))
            except BaseException:
                for proc in procs.values():  # those started before the failure
                    proc.close()
                raise
            timings, errs = check_and_time(procs, plan, "seq-1t")
            note = f"profile + {len(analytic) + len(profiled)} compiles {compile_s:.1f} s; "
            table = _table(spec.name, cores, timings, made, errs, note)
            print("\n".join(table), flush=True)
            lines += table
            record[spec.name] = {
                "path": path,
                "clusters_made": made,
                "max_rel_err": errs,
                "timings": {k: dataclasses.asdict(t) for k, t in timings.items()},
            }
            if args.json:  # after every model: a run cut short keeps what it measured
                with open(args.json, "w") as f:
                    json.dump({"command": cmd, "cores": cores, "models": record}, f, indent=1)
    return write_report(lines, args.out, meter.closing_line())


if __name__ == "__main__":
    raise SystemExit(main())
