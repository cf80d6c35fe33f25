"""Write ``tests/slow_tests.txt``, the tests of the ``slow`` tier, from a ``--durations`` run.

A test function is slow when its runs (setup, call and teardown of all its parameters, as
pytest's ``--durations=0`` reports them) take at least ``--threshold`` seconds together; a
test that only pays for a slow module-scoped fixture is listed with the fixture's setup time
when it is the one charged (pytest charges the first test that uses it). Usage::

    python -m pytest -m "not extended" -p no:randomly --durations=0 | tee durations.txt
    python scripts/slow_tests.py durations.txt [--threshold 10] [--merge]

``--merge`` keeps the functions the file already lists (a function stays slow once a run found
it slow: timings move between machines and runs), each with its old comment.

The conftest hook (``tests/conftest.py``) marks every test of a listed function ``slow``.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_LINE = re.compile(r"^\s*([\d.]+)s (setup|call|teardown)\s+(\S+)")


def durations(lines: list[str]) -> dict[str, float]:
    """Seconds per test function (``path::function``, parameters summed)."""
    total: dict[str, float] = collections.defaultdict(float)
    for line in lines:
        m = _LINE.match(line)
        if m:
            total[m.group(3).split("[", 1)[0]] += float(m.group(1))
    return dict(total)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("durations", help="pytest's output with --durations=0")
    ap.add_argument("--threshold", type=float, default=10.0, help="seconds (default %(default)s)")
    ap.add_argument("-o", "--output", default=os.path.join(ROOT, "tests", "slow_tests.txt"))
    ap.add_argument(
        "--keep",
        action="append",
        default=[],
        help="a path::function to list anyway (it shares a slow fixture with a listed test)",
    )
    ap.add_argument(
        "--merge", action="store_true", help="keep the functions the output file already lists"
    )
    args = ap.parse_args(argv)
    listed: dict[str, str] = {}
    if args.merge and os.path.exists(args.output):
        with open(args.output, encoding="utf-8") as f:
            for line in f:
                if line.strip() and not line.startswith("#"):
                    name, _, why = line.partition("  # ")
                    listed[name.strip()] = why.strip()
    with open(args.durations, encoding="utf-8") as f:
        times = durations(f.readlines())
    slow = {k: v for k, v in times.items() if v >= args.threshold}
    kept = {k for k in args.keep if k not in slow}
    for k in kept:
        slow[k] = times.get(k, 0.0)
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(
            f"# The slow tier: test functions that took >= {args.threshold:g} s (all parameters),\n"
            f"# written by scripts/slow_tests.py from a --durations=0 run; seconds as measured.\n"
        )
        for k in sorted(set(slow) | set(listed)):
            if k in slow:
                why = "shares a slow fixture" if k in kept else f"{slow[k]:.0f} s"
            else:
                why = listed[k]  # an earlier run's
            f.write(f"{k}  # {why}\n" if why else f"{k}\n")
    fast = sum(v for k, v in times.items() if k not in slow and k not in listed)
    kept_listed = len(set(listed) - set(slow))
    print(
        f"{len(slow)} slow test functions, {sum(slow.values()):.0f} s"
        + (f" (and {kept_listed} listed before)" if kept_listed else "")
        + f"; the rest {fast:.0f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
