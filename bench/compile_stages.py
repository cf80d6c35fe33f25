"""Compile time per stage, with the verification after each pass incremental (the default) and
checking every op after every pass (what ``run_passes`` did before
:class:`ramiel.parsing.IncrementalVerifier`), side by side in one process.

Each model is compiled ``--repeat`` times per configuration, the two alternating; the table gives
the best total of each (the stages of that run) and the time spent verifying. Issue #12's target:
the default compile stays under 2 s.

    python bench/compile_stages.py                       # the eleven bench models
    python bench/compile_stages.py light_densenet121 --repeat 5 --out FILE
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", metavar="MODEL")
    ap.add_argument("--repeat", type=int, default=3, help="compiles per configuration")
    ap.add_argument("--out", help="also write the table to this file")
    args = ap.parse_args(argv)
    args.argv = sys.argv[1:] if argv is None else list(argv)

    from ramiel import parsing

    spent = [0.0]
    full = [False]
    incremental_verify = parsing.IncrementalVerifier.verify

    def verify(self, module):  # type: ignore[no-untyped-def]
        t = time.perf_counter()
        try:
            if full[0]:
                self._seen = {}  # forget what was checked: every op again
            return incremental_verify(self, module)
        finally:
            spent[0] += time.perf_counter() - t

    parsing.IncrementalVerifier.verify = verify  # type: ignore[method-assign]
    try:
        lines = _table(args, full, spent)
    finally:
        parsing.IncrementalVerifier.verify = incremental_verify  # type: ignore[method-assign]
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 0


def _table(args: argparse.Namespace, full: list[bool], spent: list[float]) -> list[str]:
    """Compile every model ``args.repeat`` times per configuration (``full[0]``: every op after
    every pass); print and return the table's lines. ``spent[0]``: the verifier's seconds."""
    from ramiel.bench import load_average, resolve_models
    from ramiel.compiler import CompileOptions, compile_model

    head = [
        f"# python bench/compile_stages.py {' '.join(args.argv)}",
        f"# {time.strftime('%Y-%m-%d %H:%M')}, load average {load_average()[0]:.2f} before; "
        f"best of {args.repeat} compiles (s), clusters = 2",
        f"{'model':<22} {'verification':<13} {'import':>7} {'passes':>7} {'lower':>7} "
        f"{'print':>7} {'total':>7} {'verify':>7}",
    ]
    print("\n".join(head), flush=True)
    lines = list(head)
    for spec in resolve_models(args.models):
        path = spec.resolve()
        best: dict[str, tuple[float, dict[str, float], float]] = {}
        for _ in range(args.repeat):
            for mode in ("incremental", "every op"):
                full[0] = mode == "every op"
                spent[0] = 0.0
                with tempfile.TemporaryDirectory(prefix="ramiel-stages-") as out:
                    r = compile_model(path, out, CompileOptions(clusters=2))
                total = sum(r.timings.values())
                if mode not in best or total < best[mode][0]:
                    best[mode] = (total, dict(r.timings), spent[0])
        for mode, (total, t, v) in best.items():
            row = (
                f"{spec.name:<22} {mode:<13} {t['import']:7.2f} {t['passes']:7.2f} "
                f"{t['lower']:7.2f} {t['print']:7.2f} {total:7.2f} {v:7.2f}"
            )
            print(row, flush=True)
            lines.append(row)
    tail = f"# load average {load_average()[0]:.2f} after"
    print(tail)
    lines.append(tail)
    return lines


if __name__ == "__main__":
    raise SystemExit(main())
