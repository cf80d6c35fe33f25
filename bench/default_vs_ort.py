"""The default program against onnxruntime on the same cores, in one process, timed interleaved.

Usage::

    python bench/default_vs_ort.py [MODEL ...] [--rounds 12] [--calls 10] [--gap 0] [--out FILE]

MODEL: as ``ramiel bench`` takes them (default: the nine zoo models, ``inception`` and
``transformer``). Columns, in ms:

- ``default``: ``ramiel.compile(model)`` as it comes (the merge's clusters, the runtime's
  threads and binding), called as the user calls it;
- ``seq``: its sequential module (``model.sequential``) with P intra-op threads;
- ``ort-Pt``: onnxruntime with P intra-op threads, its pool threads not spinning between runs
  (``ramiel bench``'s ``ort-Pt``);
- ``ort-spin``: onnxruntime's own default (its pool threads spin);

each the median of its blocks' medians [95 % interval of those], and the ratios ``default /
ort-Pt`` and ``default / ort-spin``: the median of the rounds' ratios [95 % interval]. P: the
cores this process may use. Intervals come from the blocks, not from the calls: the machine
drifts by more than one block's calls vary (two blocks of the same program, one round apart,
differed by up to 1.2x here).

Why one process: the same program run in several processes of this machine differs by up to
1.4x (a plain PyTorch loop took 5.5-8.5 ms), which ``bench/split_vs_threads.py`` (a process per
configuration) carries into its ratios. Here the four take turns in blocks (rotating order), each
block after a pause of ``--pause`` seconds, so that a spinning pool of the previous block has
gone to sleep; ``--gap`` sleeps before each timed call too (``0``: back to back, a server under
load; ``0.1``: requests apart, after the threads slept). Every model's outputs are checked
against onnxruntime first (relative error < 1e-3 of the largest output).
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import sys
import time


def _ratio(a: list[float], b: list[float]) -> str:
    """The median of the rounds' ratios ``a[i] / b[i]`` (block medians of one round, timed
    minutes apart at most) [its 95 % interval]: the machine drifts by more than the calls of one
    block vary, and a round's blocks share its drift."""
    from ramiel.measure import median_ci

    ratios = sorted(x / y for x, y in zip(a, b, strict=True))
    lo, hi = median_ci(ratios)
    return f"{statistics.median(ratios):.2f}x [{lo:.2f}, {hi:.2f}]"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", metavar="MODEL")
    ap.add_argument("--rounds", type=int, default=12, help="blocks per configuration")
    ap.add_argument("--calls", type=int, default=10, help="timed calls per block")
    ap.add_argument("--gap", type=float, default=0.0, help="seconds of sleep before each call")
    ap.add_argument("--pause", type=float, default=0.3, help="seconds of sleep before each block")
    ap.add_argument("--out", help="also write the table to this file")
    args = ap.parse_args(argv)
    if args.rounds < 1 or args.calls < 1:
        ap.error("--rounds and --calls must be at least 1")
    if not (0 <= args.gap <= 10 and 0 <= args.pause <= 10):
        ap.error("--gap and --pause: seconds from 0 to 10")

    from ramiel.bench import check_report_path, load_average, resolve_models, write_report

    check_report_path(ap, args.out)
    try:
        specs = resolve_models(args.models)
    except ValueError as e:
        ap.error(str(e))

    import numpy as np
    import torch

    import ramiel
    from ramiel.engines import ort_session
    from ramiel.measure import median_ci
    from ramiel.omp import usable_cores
    from ramiel.runtime.entry import random_inputs

    cores = usable_cores()
    cmd = " ".join(sys.argv[1:] if argv is None else argv)
    lines = [
        f"# python bench/default_vs_ort.py {cmd}".rstrip(),
        f"# {time.strftime('%Y-%m-%d %H:%M')}, {cores} usable cores, torch {torch.__version__}, "
        f"load average {load_average()[0]:.2f} before",
        f"# ms of one call: median of the block medians [95 % interval]; ratios: median of the "
        f"rounds' ratios; gap {args.gap} s before each call, {args.rounds} blocks of "
        f"{args.calls} calls each, interleaved in one process",
        f"{'model':20s} {'clusters':>8s} {'default':>22s} {'seq':>22s} {f'ort-{cores}t':>22s} "
        f"{'ort-spin':>22s} {'default/ort':>20s} {'default/spin':>20s}",
    ]
    print("\n".join(lines), flush=True)
    for spec in specs:
        path = spec.resolve()
        m = ramiel.compile(path)
        try:
            x = random_inputs(m.input_specs, limits=m.index_limits)
            feeds = [x[n] for n in m.input_specs]
            arrays = {n: t.numpy() for n, t in x.items()}
            seq = m.sequential
            quiet = ort_session(path, threads=cores)
            spin = ort_session(path, threads=cores, spinning=True)
            ref = quiet.run(None, arrays)
            with torch.no_grad():
                got = m(*feeds)
            got = got if isinstance(got, tuple) else (got,)
            for g, r in zip(got, ref, strict=True):
                scale = max(float(np.abs(r).max()), 1e-12)
                err = float(np.abs(g.numpy().astype(np.float64) - r).max()) / scale
                if err > 1e-3:
                    raise SystemExit(f"{spec.name}: output differs from onnxruntime ({err:.1e})")
            confs = {
                "default": functools.partial(m, *feeds),
                "seq": functools.partial(seq, *feeds),
                "ort": functools.partial(quiet.run, None, arrays),
                "spin": functools.partial(spin.run, None, arrays),
            }
            got_ms: dict[str, list[float]] = {k: [] for k in confs}  # block medians
            torch.set_num_threads(cores)
            with torch.no_grad():
                for r in range(args.rounds + 1):
                    keys = list(confs)
                    for k in keys[r % len(keys) :] + keys[: r % len(keys)]:
                        fn = confs[k]
                        time.sleep(args.pause)
                        fn()
                        block = []
                        for _ in range(args.calls):
                            if args.gap:
                                time.sleep(args.gap)
                            t0 = time.perf_counter()
                            fn()
                            block.append((time.perf_counter() - t0) * 1e3)
                        if r:  # the first round warms up
                            got_ms[k].append(statistics.median(block))
        finally:
            m.close()
        cells = []
        for k in confs:
            s = sorted(got_ms[k])
            lo, hi = median_ci(s)
            cells.append(f"{statistics.median(s):.2f} [{lo:.2f}, {hi:.2f}]")
        line = (
            f"{spec.name:20s} {len(m.program.clusters):>8d} "
            + " ".join(f"{c:>22s}" for c in cells)
            + f" {_ratio(got_ms['default'], got_ms['ort']):>20s}"
            + f" {_ratio(got_ms['default'], got_ms['spin']):>20s}"
        )
        print(line, flush=True)
        lines.append(line)
    return write_report(lines, args.out, f"# load average {load_average()[0]:.2f} after")


if __name__ == "__main__":
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    sys.exit(main())
