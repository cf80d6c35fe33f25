"""What the runtime adds to an inference: a one-cluster program (``ramiel.compile(model,
clusters=1, threads_per_worker=P)``, the default on 2 cores) called back to back, against its own
sequential module, in one process, in blocks of calls timed round-robin.

Usage::

    python bench/call_overhead.py [MODEL ...] [--calls 20] [--rounds 15] [--out FILE]

MODEL: as ``ramiel bench`` takes them, or ``tiny`` (a 64x64 MatMul and a Relu, built here: the
runtime's own cost with almost no compute); default: ``tiny``, ``light_squeezenet``,
``transformer``. Columns, each the median of the blocks' mean per-call time in µs [95 %
interval]:

- ``seq``: the sequential module (``model.sequential``) with P threads;
- ``par``: the parallel module as it runs by default (contention monitor on, readings shared by
  calls back to back: :data:`ramiel.runtime.contention.REUSE_GAP_S`);
- ``par-2-reads``: the same, with two ``/proc/stat`` readings per call (``REUSE_GAP_S = -1``:
  the monitor before 2026-12-07);
- ``par-no-monitor``: ``RAMIEL_ADAPT_THREADS=0`` (no monitor: the runtime's other costs).

``par - seq`` is the runtime's cost per call. Several processes of the same program differ by up
to 1.4x on this machine (a plain PyTorch loop: 5.5-8.5 ms), hence one process and ratios.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time


def _tiny_model(path: str) -> str:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])
    w = numpy_helper.from_array(np.random.default_rng(0).random((64, 64), np.float32), "W")
    nodes = [helper.make_node("MatMul", ["x", "W"], ["t"]), helper.make_node("Relu", ["t"], ["y"])]
    graph = helper.make_graph(nodes, "tiny", [x], [y], [w])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def _caller(module, feeds):  # type: ignore[no-untyped-def]
    return lambda: module(*feeds)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", metavar="MODEL")
    ap.add_argument("--calls", type=int, default=20, help="calls per block (tiny: 100x)")
    ap.add_argument("--rounds", type=int, default=15, help="blocks per configuration")
    ap.add_argument("--out", help="also write the table to this file")
    args = ap.parse_args(argv)
    if args.rounds < 1 or args.calls < 1:
        ap.error("--rounds and --calls must be at least 1")

    from ramiel.bench import check_report_path, load_average, resolve_models, write_report

    check_report_path(ap, args.out)
    names = args.models or ["tiny", "light_squeezenet", "transformer"]
    try:
        specs = {n: None if n == "tiny" else resolve_models([n])[0] for n in names}
    except ValueError as e:
        ap.error(str(e))

    import torch

    import ramiel
    from ramiel.measure import median_ci
    from ramiel.omp import usable_cores
    from ramiel.runtime import contention
    from ramiel.runtime.entry import random_inputs

    cores = usable_cores()
    lines = [
        f"# python bench/call_overhead.py {' '.join(sys.argv[1:] if argv is None else argv)}",
        f"# {time.strftime('%Y-%m-%d %H:%M')}, {cores} usable cores, load average "
        f"{load_average()[0]:.2f} before",
        "# µs per call, median of the blocks [95 % interval]; par - seq: the runtime's cost",
        f"{'model':20s} {'seq':>24s} {'par':>24s} {'par-2-reads':>24s} {'par-no-monitor':>24s}"
        f" {'par - seq':>10s}",
    ]
    print("\n".join(lines), flush=True)
    with tempfile.TemporaryDirectory(prefix="ramiel-overhead-") as tmp:
        for name, spec in specs.items():
            path = _tiny_model(os.path.join(tmp, "tiny.onnx")) if spec is None else spec.resolve()
            calls = args.calls * 100 if name == "tiny" else args.calls
            m = ramiel.compile(path, clusters=1, threads_per_worker=cores)
            x = random_inputs(m.input_specs, limits=m.index_limits)
            feeds = [x[n] for n in m.input_specs]
            seq = m.sequential
            reuse = contention.REUSE_GAP_S
            run_seq, run_par = _caller(seq, feeds), _caller(m, feeds)
            confs = {
                "seq": (run_seq, reuse, None),
                "par": (run_par, reuse, None),
                "par-2-reads": (run_par, -1.0, None),
                "par-no-monitor": (run_par, reuse, "0"),
            }
            got: dict[str, list[float]] = {k: [] for k in confs}
            torch.set_num_threads(cores)
            try:
                with torch.no_grad():
                    for r in range(args.rounds + 1):
                        keys = list(confs)
                        for k in keys[r % len(keys) :] + keys[: r % len(keys)]:
                            fn, contention.REUSE_GAP_S, adapt = confs[k]
                            if adapt is None:
                                os.environ.pop(contention.ENV_DISABLE, None)
                            else:
                                os.environ[contention.ENV_DISABLE] = adapt
                            fn()
                            fn()
                            t0 = time.perf_counter()
                            for _ in range(calls):
                                fn()
                            if r:  # the first round warms up
                                got[k].append((time.perf_counter() - t0) / calls * 1e6)
            finally:
                contention.REUSE_GAP_S = reuse
                os.environ.pop(contention.ENV_DISABLE, None)
                m.close()
            cells = []
            for k in confs:
                s = sorted(got[k])
                lo, hi = median_ci(s)
                cells.append(f"{statistics.median(s):9.1f} [{lo:.1f}, {hi:.1f}]")
            diff = statistics.median(got["par"]) - statistics.median(got["seq"])
            line = f"{name:20s} " + " ".join(f"{c:>24s}" for c in cells) + f" {diff:10.1f}"
            print(line, flush=True)
            lines.append(line)
    return write_report(lines, args.out, f"# load average {load_average()[0]:.2f} after")


if __name__ == "__main__":
    sys.exit(main())
