"""The default program against onnxruntime on the same cores, in one process, timed interleaved.

Usage::

    python bench/default_vs_ort.py [MODEL ...] [--rounds 12] [--calls 10] [--gap 0] [--busy]
        [--out FILE]

MODEL: as ``ramiel bench`` takes them (default: the nine zoo models, ``inception`` and
``transformer``). Columns, in ms:

- ``default``: ``ramiel.compile(model)`` as it comes (the merge's clusters, the runtime's
  threads and binding), called as the user calls it;
- ``seq``: its sequential module (``model.sequential``) with P intra-op threads, called as the
  user calls it (fewer threads while other processes keep cores busy:
  :class:`ramiel.runtime.contention.ThreadAdapter`);
- ``seq-fixed``: the same with ``RAMIEL_ADAPT_THREADS=0`` (always P threads);
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

``--busy``: every round also times each configuration while a process the benchmark starts
spins on one core (``ramiel.measure.busy_core``, started before the block and killed after
it), right after its quiet block; a second table gives those medians and each configuration's
``busy/quiet`` (the median of the rounds' ratios; issue #12's target for the default: 1.5x).
"""

from __future__ import annotations

import argparse
import contextlib
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


def _without_adapting(fn, *args):
    """``fn(*args)`` with ``RAMIEL_ADAPT_THREADS=0`` (the sequential module keeps its threads)."""
    os.environ["RAMIEL_ADAPT_THREADS"] = "0"
    try:
        return fn(*args)
    finally:
        os.environ.pop("RAMIEL_ADAPT_THREADS", None)


def _block(fn, args) -> list[float]:
    """ms of each of ``args.calls`` timed calls of ``fn``, after ``args.pause`` s and one untimed
    call (``args.gap`` s of sleep before each timed one)."""
    time.sleep(args.pause)
    fn()
    block = []
    for _ in range(args.calls):
        if args.gap:
            time.sleep(args.gap)
        t0 = time.perf_counter()
        fn()
        block.append((time.perf_counter() - t0) * 1e3)
    return block


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", metavar="MODEL")
    ap.add_argument("--rounds", type=int, default=12, help="blocks per configuration")
    ap.add_argument("--calls", type=int, default=10, help="timed calls per block")
    ap.add_argument("--gap", type=float, default=0.0, help="seconds of sleep before each call")
    ap.add_argument("--pause", type=float, default=0.3, help="seconds of sleep before each block")
    ap.add_argument("--busy", action="store_true", help="also time next to one busy core")
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
    from ramiel.measure import busy_core, median_ci
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
    ]
    head = (
        f"{'model':20s} {'clusters':>8s} {'default':>22s} {'seq':>22s} {'seq-fixed':>22s} "
        f"{f'ort-{cores}t':>22s} {'ort-spin':>22s} {'default/ort':>20s} {'default/spin':>20s}"
    )
    lines.append(head)
    rows: list[str] = []
    busy_rows: list[str] = []
    ratio_rows: list[str] = []
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
                "seq-fixed": functools.partial(_without_adapting, seq, *feeds),
                "ort": functools.partial(quiet.run, None, arrays),
                "spin": functools.partial(spin.run, None, arrays),
            }
            conds = ("quiet", "busy") if args.busy else ("quiet",)
            got_ms = {(c, k): [] for c in conds for k in confs}  # block medians
            torch.set_num_threads(cores)
            with torch.no_grad():
                for r in range(args.rounds + 1):
                    keys = list(confs)
                    for k in keys[r % len(keys) :] + keys[: r % len(keys)]:
                        for c in conds:
                            with busy_core() if c == "busy" else contextlib.nullcontext():
                                block = _block(confs[k], args)
                            if r:  # the first round warms up
                                got_ms[c, k].append(statistics.median(block))
        finally:
            m.close()
        for c in conds:
            cells = []
            for k in confs:
                s = sorted(got_ms[c, k])
                lo, hi = median_ci(s)
                cells.append(f"{statistics.median(s):.2f} [{lo:.2f}, {hi:.2f}]")
            line = (
                f"{spec.name:20s} {len(m.program.clusters):>8d} "
                + " ".join(f"{x:>22s}" for x in cells)
                + f" {_ratio(got_ms[c, 'default'], got_ms[c, 'ort']):>20s}"
                + f" {_ratio(got_ms[c, 'default'], got_ms[c, 'spin']):>20s}"
            )
            (rows if c == "quiet" else busy_rows).append(line)
            print(line if c == "quiet" else f"(busy) {line}", flush=True)
        if args.busy:
            ratios = [_ratio(got_ms["busy", k], got_ms["quiet", k]) for k in confs]
            ratio_rows.append(f"{spec.name:20s} " + " ".join(f"{x:>20s}" for x in ratios))
    lines += rows
    if args.busy:
        tail = ["", "# next to one busy background core (a spinning process), same columns", head]
        tail += [*busy_rows, "", "# busy/quiet: median of the rounds' ratios [95 % interval]"]
        tail.append(f"{'model':20s} " + " ".join(f"{k:>20s}" for k in confs))
        tail += ratio_rows
        print("\n".join(tail), flush=True)
        lines += tail
    return write_report(lines, args.out, f"# load average {load_average()[0]:.2f} after")


if __name__ == "__main__":
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    sys.exit(main())
