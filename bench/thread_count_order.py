"""The sequential module run at several intra-op thread counts one after another in one process.

Usage::

    python bench/thread_count_order.py MODEL [--order 2,1,2,1] [--calls 6] [--disable PASS,...]

MODEL: an ``.onnx`` path, zoo name or project model as ``ramiel bench`` takes them. The model is
compiled as one cluster (``--disable``: rewrites left out, e.g. ``prepack-conv``), then its
sequential module runs ``--calls`` times at each thread count of ``--order`` in turn
(``torch.set_num_threads`` before each block), and every call's ms is printed, block by block.
What it shows: whether a count runs slower after another count ran first in the same process
(a cache keyed without the thread count, see :func:`ramiel.runtime.ops._packed`). Run it for
both orders; each run is one process.
"""

from __future__ import annotations

import argparse
import tempfile
import time


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("--order", default="2,1,2,1", help="thread counts, comma list")
    ap.add_argument("--calls", type=int, default=6, help="calls per block")
    ap.add_argument("--disable", default="", help="rewrites to leave out, comma list")
    args = ap.parse_args(argv)
    try:
        order = [int(n) for n in args.order.split(",") if n]
    except ValueError:
        ap.error(f"--order: thread counts must be integers, got {args.order!r}")
    if not order or min(order) < 1 or args.calls < 1:
        ap.error("--order needs thread counts of at least 1, and --calls at least 1")

    import torch

    from ramiel.bench import load_average, resolve_models
    from ramiel.compiler import CompiledModel, CompileOptions, compile_model
    from ramiel.errors import RamielError
    from ramiel.runtime.entry import random_inputs

    opts = CompileOptions(clusters=1, disable=[p for p in args.disable.split(",") if p])
    try:
        opts.check()
        path = resolve_models([args.model])[0].resolve()
    except (ValueError, RamielError) as e:
        ap.error(str(e))
    print(
        f"# python bench/thread_count_order.py {args.model} --order {args.order} "
        f"--calls {args.calls}" + (f" --disable {args.disable}" if args.disable else "")
    )
    print(f"# {time.strftime('%Y-%m-%d %H:%M')}, load average {load_average()[0]:.2f} before")
    with tempfile.TemporaryDirectory(prefix="ramiel-order-") as tmp:
        model = CompiledModel(compile_model(path, tmp, opts), opts)
        seq = model.sequential
        feeds = list(random_inputs(model.input_specs, seed=0).values())
        with model, torch.inference_mode():
            for n in order:
                torch.set_num_threads(n)
                ms = []
                for _ in range(args.calls):
                    t = time.perf_counter()
                    seq(*feeds)
                    ms.append((time.perf_counter() - t) * 1e3)
                print(f"{n} thread(s): " + " ".join(f"{x:.1f}" for x in ms), flush=True)
    print(f"# load average {load_average()[0]:.2f} after")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
