"""Sequential generated modules against onnxruntime with the same intra-op threads; print a table.

Usage::

    python bench/seq_vs_ort.py [MODEL ...] [--layout auto,nchw] [--program LABEL=DIR ...]
                               [--compile] [--onednn-graph] [--eager] [--threads 1]
                               [--budget 40] [--out FILE]

MODEL: ``.onnx`` paths, zoo names or project models as ``ramiel bench`` takes them (default:
the nine zoo models, ``inception`` and ``transformer``). For each model, the sequential module
(``model_seq.py``) of every program -- one compiled here per ``--layout`` value (the current
tree, default compile options: since 2026-12-06 ``onednn-graph`` segments where the cost model
says they pay), and ``--program LABEL=DIR`` directories holding one compiled elsewhere (``DIR/<model>/``
with ``model_seq.py`` and ``weights.safetensors``, e.g. by an older checkout), with
``--compile`` also the compiled sequential module of the current tree (``compile=True``,
layout ``auto``: column ``compiled``; it compiles in its timing process at start-up), with
``--onednn-graph`` the sequential module with ``onednn-graph`` segments (``compile=
"onednn-graph"``: traced, run by TorchScript with oneDNN Graph fusion; column ``onednn-graph``),
with ``--eager`` the sequential module without segments (``compile=False``, layout ``auto``:
column ``eager``) -- and
onnxruntime on the original model (default graph optimisations, sequential executor, no
spinning: ``ramiel bench``'s ``ort-1t``; with ``--ort-spinning`` also with spinning, its own
default, column ``ort-spin``; the untimed pause before each call is then 0.1 s, longer than its
threads spin) run each in a spawned process of its own and are timed
interleaved (:func:`ramiel.bench.measure_interleaved`: rounds in rotating order, until every
median's 95 % interval is within 2 % or the budget is spent). Every program's outputs are
checked against onnxruntime first (largest error relative to the largest output magnitude).
The table gives each median [95 % interval] in ms and its ratio to onnxruntime; the load
average before and after, and the cores other processes kept busy meanwhile, are printed with
it (a shared machine).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
import time


def _result_of(directory: str):  # type: ignore[no-untyped-def]
    """A CompileResult for an already compiled output directory."""
    from ramiel.compiler import CompileResult

    return CompileResult(
        out_dir=directory,
        parallel_path=os.path.join(directory, "model.py"),
        sequential_path=os.path.join(directory, "model_seq.py"),
        weights_path=os.path.join(directory, "weights.safetensors"),
        ir_path=os.path.join(directory, "model.mlir"),
        report=None,  # type: ignore[arg-type] - not needed to run the module
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", metavar="MODEL")
    ap.add_argument("--layout", default="auto,nchw", help="layouts to compile here (comma list)")
    ap.add_argument("--program", action="append", default=[], metavar="LABEL=DIR")
    ap.add_argument("--compile", action="store_true", help="also the compiled sequential module")
    ap.add_argument(
        "--onednn-graph",
        action="store_true",
        help="also the sequential module with onednn-graph segments (column onednn-graph)",
    )
    ap.add_argument(
        "--eager",
        action="store_true",
        help="also the sequential module without compiled segments (column eager)",
    )
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--budget", type=float, default=40.0, help="seconds of timing per model")
    ap.add_argument("--out", help="also write the table to this file")
    ap.add_argument(
        "--ort-spinning",
        action="store_true",
        help="also onnxruntime with its pool threads spinning (its default), column ort-spin",
    )
    args = ap.parse_args(argv)

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
    from ramiel.runtime.entry import random_inputs

    layouts = [x for x in args.layout.split(",") if x]
    programs = dict(p.split("=", 1) for p in args.program)
    specs = resolve_models(args.models)
    plan = dataclasses.replace(Plan(), budget_s=args.budget, malloc_tuning=tune_malloc())
    if args.ort_spinning:  # onnxruntime's threads spin for 50 ms and more after a run
        plan = dataclasses.replace(plan, gap_s=max(plan.gap_s, 0.1))
    compiled: dict[str, bool | str] = {"compiled": True} if args.compile else {}
    if args.onednn_graph:
        compiled["onednn-graph"] = "onednn-graph"
    if args.eager:
        compiled["eager"] = False
    labels = [f"ramiel {lay}" for lay in layouts] + list(compiled)
    labels += list(programs)
    if args.ort_spinning:
        labels.append("ort-spin")
    head = [
        f"# python bench/seq_vs_ort.py {' '.join(sys.argv[1:] if argv is None else argv)}",
        f"# {time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cpus, torch {torch.__version__}, "
        f"{args.threads} intra-op thread(s); load average {load_average()[0]:.2f} before",
        "# median ms of one inference [95 % interval]; x: ratio to onnxruntime",
        f"{'model':<22} {'onnxruntime':>22} " + " ".join(f"{lab:>30}" for lab in labels),
    ]
    print("\n".join(head), flush=True)
    lines = list(head)
    meter = CpuMeter()
    with tempfile.TemporaryDirectory(prefix="ramiel-seq-ort-") as tmp:
        for spec in specs:
            path = spec.resolve()
            results = {}
            for lay in layouts:
                d = os.path.join(tmp, spec.name, lay)
                results[f"ramiel {lay}"] = compile_model(
                    path, d, CompileOptions(clusters=1, layout=lay)
                )
            for lab, how in compiled.items():
                d = os.path.join(tmp, spec.name, lab)
                results[lab] = compile_model(
                    path, d, CompileOptions(clusters=1, layout="auto", compile=how)
                )
            for lab, d in programs.items():
                results[lab] = _result_of(os.path.join(d, spec.name))
            first = CompiledModel(next(iter(results.values())), CompileOptions())
            feeds = {k: v.numpy() for k, v in random_inputs(first.input_specs, seed=0).items()}
            out_names = list(first.output_names)
            procs = {"ort": Isolated(Recipe("ort", feeds, out_names, path=path,
                                            threads=args.threads))}  # fmt: skip
            for lab, r in results.items():
                procs[lab] = Isolated(Recipe("seq", feeds, out_names, result=r,
                                             threads=args.threads))  # fmt: skip
            if args.ort_spinning:
                procs["ort-spin"] = Isolated(Recipe("ort", feeds, out_names, path=path,
                                                    threads=args.threads, ort_spinning=True))  # fmt: skip
            timings, errs = check_and_time(procs, plan, "ort")
            ort = timings["ort"].median
            cells = [f"{ort:8.2f} [{timings['ort'].ci[0]:.2f}, {timings['ort'].ci[1]:.2f}]"]
            for lab in labels:
                t = timings[lab]
                bad = "" if errs[lab] <= 1e-3 else f" ERR {errs[lab]:.1e}"
                cells.append(
                    f"{t.median:8.2f} [{t.ci[0]:.2f}, {t.ci[1]:.2f}] {t.median / ort:4.2f}x{bad}"
                )
            line = f"{spec.name:<22} " + " ".join(f"{c:>30}" for c in [cells[0]] + cells[1:])
            print(line, flush=True)
            lines.append(line)
    return write_report(lines, args.out, meter.closing_line())


if __name__ == "__main__":
    raise SystemExit(main())
