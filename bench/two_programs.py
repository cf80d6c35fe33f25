"""Two Ramiel programs side by side on one machine, with and without adapting their threads.

Usage::

    python bench/two_programs.py [--model light_densenet121] [--seconds 8] [--same-process]
                                 [--out FILE]

Twice starts two processes at once that each compile the model's default program
(``ramiel.compile``) and run it back to back for ``--seconds``: first as Ramiel runs it, then with
``RAMIEL_ADAPT_THREADS=0`` (each keeps its planned intra-op threads,
:mod:`ramiel.runtime.contention`). Prints per process the median latency of the second half of
its calls and the thread counts it ran with there. With ``--same-process`` the two programs
run in two threads of one process instead (a server that calls two models at once).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any


def child(model: str, out_dir: str, seconds: float, barrier: Any = None) -> dict:
    import ramiel
    from ramiel.runtime.entry import random_inputs

    m = ramiel.compile(model, out_dir=out_dir)  # the default program, as a user makes it
    feeds = random_inputs(m.input_specs, seed=0)
    m.run(feeds)
    if barrier is not None:
        barrier.wait()  # both programs compiled and warm: start together
    ts, threads = [], []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t = time.perf_counter()
        m.run(feeds)
        ts.append((time.perf_counter() - t) * 1e3)
        threads.append(m._runner.threads_now)
    half = len(ts) // 2
    return {
        "median_ms": statistics.median(ts[half:]),
        "threads": sorted(set(threads[half:])),
        "calls": len(ts),
    }


def pair(model: str, out_dir: str, seconds: float) -> list[dict]:
    """Two programs of ``model`` run at once from two threads of this process."""
    import threading

    results: list[dict] = [{}, {}]
    barrier = threading.Barrier(2, timeout=600)
    ready = [False, False]

    def run(i: int) -> None:
        results[i] = child(model, os.path.join(out_dir, str(i)), seconds, barrier)
        ready[i] = True

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if not all(ready):
        raise SystemExit("a program failed")
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="light_densenet121")
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--same-process", action="store_true", help="two threads of one process")
    ap.add_argument("--out", help="also write the lines to this file")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--pair", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child[0], args.child[1], args.seconds)))
        return 0
    if args.pair:
        print(json.dumps(pair(args.pair[0], args.pair[1], args.seconds)))
        return 0
    from ramiel.bench import check_report_path, load_average, resolve_models, write_report

    check_report_path(ap, args.out)
    try:
        (spec,) = resolve_models([args.model])
    except ValueError as e:
        ap.error(str(e))

    lines = [
        f"# python bench/two_programs.py {' '.join(sys.argv[1:] if argv is None else argv)}",
        f"# {time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cores, load average "
        f"{load_average()[0]:.2f} before",
    ]
    print("\n".join(lines), flush=True)
    with tempfile.TemporaryDirectory(prefix="ramiel-two-") as tmp:
        path = spec.resolve()
        for label, extra in (("adapting", {}), ("fixed", {"RAMIEL_ADAPT_THREADS": "0"})):
            env = {**os.environ, **extra, "ORT_DISABLE_TELEMETRY": "1"}
            procs = []
            for i in range(1 if args.same_process else 2):
                out_dir = os.path.join(tmp, f"{label}{i}")
                mode = "--pair" if args.same_process else "--child"
                cmd = [sys.executable, __file__, mode, path, out_dir,
                       "--seconds", str(args.seconds)]  # fmt: skip
                procs.append(subprocess.Popen(
                    cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
                ))  # fmt: skip
            for i, p in enumerate(procs):
                out, err = p.communicate(timeout=600)
                if p.returncode != 0:
                    fail = f"failed: {err.strip().splitlines()[-1:]}"
                    print(f"{label:<9} process {i}: {fail}", flush=True)
                    lines.append(f"{label:<9} process {i}: {fail}")
                    continue
                got = json.loads(out.strip().splitlines()[-1])
                for j, r in enumerate(got if args.same_process else [got]):
                    who = f"thread {j}" if args.same_process else f"process {i}"
                    line = (
                        f"{label:<9} {who}: {spec.name} {r['median_ms']:8.2f} ms "
                        f"(median, second half of {r['calls']} calls), threads {r['threads']}"
                    )
                    print(line, flush=True)
                    lines.append(line)
            time.sleep(2.0)
    return write_report(lines, args.out, f"# load average {load_average()[0]:.2f} after")


if __name__ == "__main__":
    raise SystemExit(main())
