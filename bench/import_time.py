"""Front-end time per ONNX zoo model: import + ``--constant-fold`` + ``--dce`` (not a test).

For each of the nine ``light_*.onnx`` models in the onnx wheel, in one process (Python start-up
and module imports excluded, as a long-lived driver would run it), times with
``time.perf_counter``, median of ``--repeats`` runs (default 5):

* import:  ``ramiel.importer.import_onnx`` (read, checker, shape inference, IR construction,
           large initializers written to a safetensors file in a temporary directory),
* fold:    the ``constant-fold`` pass,
* dce:     the ``dce`` pass,
* total:   the three together, the number the targets apply to: under 1 s for
           ``light_inception_v1`` and under 5 s for ``light_densenet121``,
* total cpu: the process CPU time of the three (``time.process_time``): on a shared machine the
           wall-clock times grow with the load, the CPU time much less (the load average is
           recorded with the results),
* print+parse: printing the cleaned-up IR and parsing it back (what each ``ramiel-opt`` call on
           a file adds), for reference.

The table goes to stdout and, with the date, machine and command, to ``--out`` (default
``bench/results/import_time.txt``).

Usage: ``python bench/import_time.py [--repeats 5] [--out FILE]``
"""

from __future__ import annotations

import argparse
import datetime
import glob
import io
import os
import platform
import statistics
import sys
import tempfile
import time

import onnx
from xdsl.printer import Printer

from ramiel.context import make_context
from ramiel.dialects.onnx import OnnxOp
from ramiel.importer import ImportOptions, import_onnx
from ramiel.parsing import parse_module
from ramiel.passes.constant_fold import ConstantFold
from ramiel.passes.dce import DeadCodeElimination

ZOO_DIR = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
TARGETS_S = {"light_inception_v1": 1.0, "light_densenet121": 5.0}


def _one_run(path: str, tmp: str, ctx) -> tuple[dict[str, float], dict[str, int]]:
    weights = os.path.join(tmp, "w.safetensors")
    c0 = time.process_time()
    t0 = time.perf_counter()
    module = import_onnx(path, ImportOptions(weights_path=weights, weights_ref=weights))
    t1 = time.perf_counter()
    n_before = sum(isinstance(o, OnnxOp) for o in module.walk())
    ConstantFold().apply(ctx, module)
    t2 = time.perf_counter()
    DeadCodeElimination().apply(ctx, module)
    t3 = time.perf_counter()
    c3 = time.process_time()
    buf = io.StringIO()
    Printer(stream=buf).print_op(module)
    text = buf.getvalue()
    parse_module(ctx, text, "bench")
    t4 = time.perf_counter()
    n_after = sum(isinstance(o, OnnxOp) for o in module.walk())
    times = {"import": t1 - t0, "fold": t2 - t1, "dce": t3 - t2, "total": t3 - t0}
    times["total cpu"] = c3 - c0
    times["print+parse"] = t4 - t3
    return times, {"ops in": n_before, "ops out": n_after, "IR kB": len(text) // 1000}


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown cpu"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument(
        "--out", default=os.path.join(os.path.dirname(__file__), "results", "import_time.txt")
    )
    args = p.parse_args()
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

    ctx = make_context()
    models = sorted(glob.glob(os.path.join(ZOO_DIR, "light_*.onnx")))
    cols = ["import", "fold", "dce", "total", "total cpu", "print+parse"]
    load_before = os.getloadavg()[0]
    header = f"{'model':<20} {'ops in':>6} {'ops out':>7} {'IR kB':>6} " + " ".join(
        f"{c + ' s':>13}" for c in cols
    )
    lines = [header]
    print(header, flush=True)
    missed = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in models:
            name = os.path.basename(path)[: -len(".onnx")]
            runs = [_one_run(path, tmp, ctx) for _ in range(args.repeats)]
            med = {c: statistics.median(r[0][c] for r in runs) for c in cols}
            sizes = runs[0][1]
            line = (
                f"{name:<20} {sizes['ops in']:>6} {sizes['ops out']:>7} {sizes['IR kB']:>6} "
                + " ".join(f"{med[c]:>13.3f}" for c in cols)
            )
            if name in TARGETS_S:
                ok = med["total"] < TARGETS_S[name]
                line += f"   target < {TARGETS_S[name]:.0f} s: {'met' if ok else 'MISSED'}"
                if not ok:
                    missed.append(name)
            lines.append(line)
            print(line, flush=True)

    load_after = os.getloadavg()[0]
    from importlib.metadata import version

    stamp = (
        f"# ramiel front-end time (import + constant-fold + dce), "
        f"{datetime.date.today().isoformat()}, {os.cpu_count()} cpus "
        f"({platform.machine()}, {_cpu_model()}), python {platform.python_version()}, "
        f"onnx {version('onnx')}, xdsl {version('xdsl')}, numpy {version('numpy')}\n"
        f"# command: python bench/import_time.py --repeats {args.repeats}\n"
        f"# median of {args.repeats} runs per model, seconds, in one process (start-up excluded); "
        f"'ops in' = onnx dialect ops after import (nodes + initializers), 'ops out' = after folding and DCE\n"
        f"# 1-minute load average {load_before:.1f} before, {load_after:.1f} after "
        f"(above the cpu count, wall-clock times include waiting for a cpu)\n"
    )
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        f.write(stamp + "\n".join(lines) + "\n")
    print(f"\nwritten to {args.out}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
