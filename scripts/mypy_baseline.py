"""Compare mypy's output with the per-file error baseline (see scripts/mypy.sh).

Usage: mypy_baseline.py BASELINE.json MYPY_OUTPUT [--update]. Exit status 1 when a file has more
errors than the baseline allows (its new errors are printed), 0 otherwise.
"""

from __future__ import annotations

import collections
import json
import re
import sys

ERROR = re.compile(r"^(?P<path>[^:]+):\d+(?::\d+)?: error: ")


def main(argv: list[str]) -> int:
    baseline_path, output_path, *rest = argv
    with open(output_path) as f:
        lines = f.read().splitlines()
    counts = collections.Counter(m["path"] for line in lines if (m := ERROR.match(line)))
    if rest == ["--update"]:
        with open(baseline_path, "w") as f:
            json.dump(dict(sorted(counts.items())), f, indent=1)
            f.write("\n")
        print(f"mypy baseline: {sum(counts.values())} errors in {len(counts)} files written")
        return 0
    with open(baseline_path) as f:
        baseline: dict[str, int] = json.load(f)
    worse = {p: n for p, n in counts.items() if n > baseline.get(p, 0)}
    better = {p: n for p, n in baseline.items() if counts.get(p, 0) < n}
    for line in lines:
        m = ERROR.match(line)
        if m and m["path"] in worse:
            print(line)
    for p, n in sorted(worse.items()):
        print(f"{p}: {n} mypy errors, the baseline allows {baseline.get(p, 0)}")
    if better:
        print(
            "mypy: fewer errors than the baseline in "
            + ", ".join(f"{p} ({counts.get(p, 0)} < {n})" for p, n in sorted(better.items()))
            + ": shrink it with `bash scripts/mypy.sh --update`"
        )
    total = sum(counts.values())
    print(f"mypy: {total} errors (baseline {sum(baseline.values())}), {len(worse)} files over it")
    return 1 if worse else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
