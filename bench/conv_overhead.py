"""Where a generated module's convolution time goes: oneDNN's kernel, or the call around it.

Usage::

    python bench/conv_overhead.py [MODEL ...] [--repeats 20] [--threads 1] [--out FILE]

MODEL: zoo names, ``.onnx`` paths or project models as ``ramiel bench`` takes them (default:
light_inception_v2, light_squeezenet, ramiel_inception). Each is compiled (default options, one
cluster) and its sequential module run on random inputs, every ``ops.conv2d_prepacked`` call
timed in place (the wall clock around the call, median over ``--repeats`` inferences). One more
inference runs with oneDNN's verbose output on, which gives the time of each convolution's
execution inside oneDNN (``exec`` lines; its own clock). The difference, summed over the
model's convolutions, is what a call costs around the kernel: PyTorch's dispatch, ideep's
primitive descriptor (made again on every call: ``torch.ops.mkldnn._convolution_pointwise``
keeps no primitive), the output's allocation, Ramiel's wrapper. Printed per model: the number of
convolutions, both sums in ms and the difference per convolution in µs; the load average before
and after (a shared machine).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
import time


def _exec_times_ms(run) -> list[float]:  # type: ignore[no-untyped-def]
    """The ``exec`` times (ms) oneDNN's verbose mode prints for the convolutions of one call of
    ``run``, in order (read from the process's stdout, where oneDNN writes them)."""
    import torch

    r, w = os.pipe()
    saved = os.dup(1)
    sys.stdout.flush()
    os.dup2(w, 1)
    try:
        with torch.backends.mkldnn.verbose(torch.backends.mkldnn.VERBOSE_ON):
            run()
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
        os.close(w)
    with open(r) as f:
        text = f.read()
    return [
        float(line.rsplit(",", 1)[1])
        for line in text.splitlines()
        if ",exec," in line and ",convolution," in line
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", metavar="MODEL")
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", help="also write the table to this file")
    args = ap.parse_args(argv)

    import statistics

    import torch

    from ramiel.bench import load_average, resolve_models, write_report
    from ramiel.compiler import CompiledModel, CompileOptions, compile_model
    from ramiel.runtime import ops
    from ramiel.runtime.entry import random_inputs

    torch.set_num_threads(args.threads)
    names = args.models or ["light_inception_v2", "light_squeezenet", "ramiel_inception"]
    head = [
        f"# python bench/conv_overhead.py {' '.join(sys.argv[1:] if argv is None else argv)}",
        f"# {time.strftime('%Y-%m-%d %H:%M')}, torch {torch.__version__}, {args.threads} "
        f"intra-op thread(s); load average {load_average()[0]:.2f} before",
        "# sums over one inference's convolutions; around = call - oneDNN exec",
        f"{'model':<22} {'convs':>5} {'call ms':>9} {'exec ms':>9} {'around µs/conv':>15}",
    ]
    print("\n".join(head), flush=True)
    lines = list(head)
    real = ops.conv2d_prepacked
    with tempfile.TemporaryDirectory(prefix="ramiel-conv-overhead-") as tmp:
        for spec in resolve_models(names):
            res = compile_model(spec.resolve(), os.path.join(tmp, spec.name),
                                CompileOptions(clusters=1))  # fmt: skip
            model = CompiledModel(res, CompileOptions(clusters=1))
            seq = model.sequential
            feeds = list(random_inputs(model.input_specs, seed=0).values())
            calls: list[float] = []

            def timed(*a, calls=calls, **k):  # type: ignore[no-untyped-def]
                t0 = time.perf_counter()
                y = real(*a, **k)
                calls.append(time.perf_counter() - t0)
                return y

            with torch.no_grad():
                for _ in range(3):
                    seq(*feeds)
                ops.conv2d_prepacked = timed
                try:
                    seq(*feeds)
                    per = len(calls)
                    calls.clear()
                    for _ in range(args.repeats):
                        seq(*feeds)
                finally:
                    ops.conv2d_prepacked = real
                with contextlib.redirect_stderr(io.StringIO()):
                    execs = _exec_times_ms(lambda seq=seq, feeds=feeds: seq(*feeds))
            model.close()
            if per == 0:
                continue
            medians = [
                statistics.median(calls[i::per]) * 1e3 for i in range(per)
            ]  # per convolution, ms
            call_ms, exec_ms = sum(medians), sum(execs)
            line = (
                f"{spec.name:<22} {per:>5} {call_ms:>9.2f} {exec_ms:>9.2f} "
                f"{(call_ms - exec_ms) / per * 1e3:>15.1f}"
            )
            if len(execs) != per:
                line += f"  (oneDNN printed {len(execs)} convolutions)"
            print(line, flush=True)
            lines.append(line)
    return write_report(lines, args.out, f"# load average {load_average()[0]:.2f} after")


if __name__ == "__main__":
    raise SystemExit(main())
