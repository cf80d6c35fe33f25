"""Measure channel transfer costs and run overhead of the runtime backends; print a table.

Usage::

    python bench/transfer_cost.py [--repeats 30] [--sizes 4,4096,...] [--out FILE] [--configs A,B]

For each configuration it prints the median ping-pong round trip per payload size (µs), the fitted
cost model (latency µs, µs per byte, effective GB/s) and the fixed cost of one ``Runner.run`` with
two clusters. See :mod:`ramiel.runtime.calibrate` for the method.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys

import torch

from ramiel.bench import write_report
from ramiel.runtime.calibrate import DEFAULT_SIZES, fit, measure_run_overhead, round_trips

CONFIGS = [
    ("threads", "threads", {}),
    ("threads copy_on_put", "threads", {"copy_on_put": True}),
    ("processes", "processes", {}),
    ("processes copy_on_get", "processes", {"copy_on_get": True}),
    ("distributed", "distributed", {}),  # gloo over loopback, one rank per cluster
]


def _size(n: int) -> str:
    for unit, k in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= k and n % k == 0:
            return f"{n // k}{unit}"
    return f"{n}B"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)))
    ap.add_argument("--out", help="also write the table to this file")
    ap.add_argument(
        "--configs",
        default=",".join(c[0] for c in CONFIGS),
        help="comma-separated configurations to measure (default: all)",
    )
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    wanted = [c.strip() for c in args.configs.split(",")]
    unknown = [c for c in wanted if c not in {k for k, _b, _o in CONFIGS}]
    if unknown:
        ap.error(f"unknown configuration(s) {', '.join(unknown)}")

    lines = [
        f"# ramiel transfer costs, {datetime.date.today().isoformat()}, "
        f"{os.cpu_count()} cpus, torch {torch.__version__}, "
        f"python {platform.python_version()}",
        f"# command: python bench/transfer_cost.py --repeats {args.repeats} --sizes {args.sizes}"
        + (f" --configs {args.configs}" if len(wanted) < len(CONFIGS) else ""),
        f"# load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}",
        "# round trip = put(size) + put(4 B) between two workers, median µs",
        "",
    ]
    header = f"{'config':<24}" + "".join(f"{_size(s):>10}" for s in sizes)
    header += f"{'lat µs':>9}{'µs/MiB':>9}{'GB/s':>7}{'run µs':>8}"
    lines.append(header)
    print("\n".join(lines), flush=True)
    for label, backend, opts in (c for c in CONFIGS if c[0] in wanted):
        rtts = round_trips(backend, sizes, repeats=args.repeats, **opts)
        cost = fit(rtts)
        overhead = measure_run_overhead(backend, **opts)
        gbps = 1e-3 / cost.us_per_byte if cost.us_per_byte > 0 else float("inf")
        row = f"{label:<24}" + "".join(f"{rtts[s]:>10.1f}" for s in sizes)
        row += f"{cost.latency_us:>9.1f}{cost.us_per_byte * (1 << 20):>9.1f}{gbps:>7.1f}"
        row += f"{overhead:>8.0f}"
        lines.append(row)
        print(row, flush=True)
        print(
            f"#   TransferCost(latency_us={cost.latency_us:.3g}, "
            f"us_per_byte={cost.us_per_byte:.3g})",
            flush=True,
        )
        lines.append(
            f"#   TransferCost(latency_us={cost.latency_us:.3g}, us_per_byte={cost.us_per_byte:.3g})"
        )
    return write_report(lines, args.out)


if __name__ == "__main__":
    sys.exit(main())
