"""Two compilations of the same models, their sequential modules timed against each other in one
process: what a change to the compiler does to the generated code.

Usage::

    python bench/ab_seq.py DIR_A DIR_B MODEL [MODEL ...] [--threads 2] [--rounds 40]
        [--calls 5] [--out FILE]

``DIR_A/MODEL`` and ``DIR_B/MODEL`` each hold a ``ramiel compile`` output (``model_seq.py`` and
``weights.safetensors``), e.g. one compiled by an older checkout (``git stash; ramiel compile
light_squeezenet -o /tmp/A/light_squeezenet; git stash pop``). Both modules are loaded into this
process and called on the same random inputs (first checked to give the same outputs: largest
difference printed), then timed in blocks of ``--calls`` calls back to back, A and B taking turns
(the order alternating each round) for ``--rounds`` rounds, with ``--threads`` intra-op threads
and ``RAMIEL_ADAPT_THREADS=0`` (no thread adaptation under load). Printed per model: each
module's median of the block medians in ms, and B / A as the median of the rounds' ratios [95 %
interval] (the rounds share the machine's drift; on this 2-core machine the same program differs
by up to 1.4x between processes, which one process avoids).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dir_a")
    p.add_argument("dir_b")
    p.add_argument("models", nargs="+")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=40)
    p.add_argument("--calls", type=int, default=5)
    p.add_argument("--out")
    args = p.parse_args(argv)
    if args.threads < 1 or args.rounds < 2 or args.calls < 1:
        p.error("--threads and --calls must be at least 1, --rounds at least 2")
    for d in (args.dir_a, args.dir_b):
        for m in args.models:
            if not os.path.isfile(os.path.join(d, m, "model_seq.py")):
                p.error(f"{os.path.join(d, m)}: no model_seq.py (a 'ramiel compile' output)")
    os.environ["RAMIEL_ADAPT_THREADS"] = "0"
    import torch

    from ramiel.compiler import generated_class
    from ramiel.measure import median_ci
    from ramiel.runtime.entry import random_inputs
    from ramiel.runtime.program import import_from_path

    torch.set_num_threads(args.threads)
    lines = [
        f"# python bench/ab_seq.py {' '.join(sys.argv[1:] if argv is None else argv)}",
        f"# {time.strftime('%Y-%m-%d %H:%M')}, {torch.get_num_threads()} thread(s), load "
        f"average {os.getloadavg()[0]:.2f} before",
    ]
    print("\n".join(lines), flush=True)
    for m in args.models:
        mods = {}
        for label, d in (("A", args.dir_a), ("B", args.dir_b)):
            cls = generated_class(import_from_path(f"ab_{label}_{m}", f"{d}/{m}/model_seq.py"))
            mods[label] = cls.from_safetensors(f"{d}/{m}/weights.safetensors").eval()
        a = mods["A"]
        feeds = random_inputs(a.INPUTS, 0, getattr(a, "INDEX_LIMITS", None))
        times: dict[str, list[float]] = {"A": [], "B": []}
        with torch.inference_mode():
            outs = {k: mod(*feeds.values()) for k, mod in mods.items()}
            pairs = zip(*(o if isinstance(o, tuple) else (o,) for o in outs.values()), strict=True)
            diff = max(float((x - y).abs().max()) for x, y in pairs)
            for r in range(args.rounds):
                for k in "AB" if r % 2 else "BA":
                    block = []
                    for _ in range(args.calls):
                        t0 = time.perf_counter()
                        mods[k](*feeds.values())
                        block.append(time.perf_counter() - t0)
                    times[k].append(statistics.median(block) * 1e3)
        ratios = sorted(b / x for x, b in zip(times["A"], times["B"], strict=True))
        lo, hi = median_ci(ratios)
        line = (
            f"{m:24s} A {statistics.median(times['A']):8.2f} ms   B "
            f"{statistics.median(times['B']):8.2f} ms   B/A {statistics.median(ratios):.3f} "
            f"[{lo:.3f}, {hi:.3f}]   max |A - B| {diff:.2e}"
        )
        print(line, flush=True)
        lines.append(line)
    lines.append(f"# load average {os.getloadavg()[0]:.2f} after")
    print(lines[-1])
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
