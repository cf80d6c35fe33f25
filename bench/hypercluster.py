"""Hyperclustering against the other ways of running a small batch, side by side in one run.

Usage::

    python bench/hypercluster.py [--models light_inception_v1,...] [--batches 2,4,8]
        [--workers 2] [--repeat 15] [--backend threads] [--out bench/results/hypercluster]

For each model (a zoo model from the onnx wheel, rebuilt with seeded random weights: the
ConstantOfShape splat weights are unrealistic) and each batch size B, these variants run on the
same B random samples:

    hyper       the hyperclustered module (``--batch B``) on P workers, 1 intra-op thread each
    par1 xB     the batch-1 parallel module (P workers, 1 thread each) called B times
    dp          data parallelism: the B samples split over P workers (contiguous blocks), each
                running the sequential batch-1 module on its samples (``ramiel.data_parallel``)
    seqB        the sequential module compiled for the whole batch (leading dimension B, bound
                with ``input_shapes``), P intra-op threads; only for models whose Reshapes do not
                fix the batch to 1 (``ramiel.data_parallel.fixed_batch_reshapes``)
    seq1 xB     the sequential batch-1 module called B times, P intra-op threads
    seq1 xB 1t  the same with 1 intra-op thread (the sequential work W, the speed-up reference)

Measurement: workers are started once, before timing; every variant is warmed up twice; then
``--repeat`` rounds, each timing one call of every variant (the order rotates each round) so that
all variants see the same background load. Reported: median, min and max wall time per call of
the whole batch (ms), ms per sample, and the speed-up of the median over ``seq1 xB 1t``. The
outputs of every variant are checked against ``seq1 xB`` once (max error relative to the largest
output magnitude). Results go to ``<out>.txt`` (appended, with date, machine, load and command)
and ``<out>.json``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import onnx
import torch

import ramiel
from ramiel.data_parallel import (
    data_parallel_from_compiled,
    fixed_batch_reshapes,
    free_batch,
    randomize_weights,
)
from ramiel.passes.hypercluster import sample_name
from ramiel.runtime import start

ZOO_DIR = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
DEFAULT_MODELS = "light_inception_v1,light_inception_v2,light_squeezenet"


@dataclass
class Result:
    model: str
    batch: int
    variant: str
    median_ms: float
    min_ms: float
    max_ms: float
    per_sample_ms: float
    speedup: float = 0.0
    max_rel_error: float = 0.0
    times_ms: list[float] = field(default_factory=list)


@dataclass
class Variant:
    name: str
    run: Callable[[], list[torch.Tensor]]  # returns the outputs, sample-major
    threads: int  # caller's intra-op threads while it runs (sequential variants)
    times: list[float] = field(default_factory=list)


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cpus, torch {torch.__version__}, python {platform.python_version()}"


def _forward(model: Any) -> Callable[..., Any]:
    """The sequential module of a compiled model (``model_seq.py``'s class, same weights)."""
    return model.sequential


def _seq_call(forward: Callable[..., Any], inputs: list[torch.Tensor]) -> tuple:
    with torch.no_grad():
        out = forward(*inputs)
    return out if isinstance(out, tuple) else (out,)


def bench_model(
    name: str,
    batches: list[int],
    workers: int,
    repeat: int,
    backend: str,
    say: Callable[[str], None],
) -> tuple[list[Result], dict[str, Any]]:
    model = randomize_weights(onnx.load(os.path.join(ZOO_DIR, f"{name}.onnx")), seed=0)
    fixed = fixed_batch_reshapes(model)
    info: dict[str, Any] = {"fixed_batch_reshapes": fixed, "estimates": {}}
    say(f"{name}: compiling batch 1")
    c1 = ramiel.compile(model, clusters=workers, backend=backend)
    in_names = list(c1.input_specs)
    out_names = list(c1.output_names)
    fwd1 = _forward(c1)
    par1 = start(c1.program, c1.weights_namespace(), backend=backend, threads_per_worker=1)
    info["estimates"][1] = _estimate(c1)
    results: list[Result] = []
    try:
        for batch in batches:
            results += _bench_batch(
                name, model, batch, workers, repeat, backend, c1, fwd1, par1, in_names,
                out_names, bool(fixed), info, say,
            )  # fmt: skip
    finally:
        par1.close()
        c1.close()
    return results, info


def _estimate(m: Any) -> dict[str, float]:
    r = m.report
    return {
        "work_ms": r.work_us / 1e3,
        "makespan_ms": r.makespan_us / 1e3,
        "speedup": r.speedup,
        "transfers": r.transfers,
        "clusters": len(r.clusters),
    }


def _bench_batch(
    name: str,
    model: onnx.ModelProto,
    batch: int,
    workers: int,
    repeat: int,
    backend: str,
    c1: Any,
    fwd1: Callable[..., Any],
    par1: Any,
    in_names: list[str],
    out_names: list[str],
    fixed: bool,
    info: dict[str, Any],
    say: Callable[[str], None],
) -> list[Result]:
    say(f"{name} B={batch}: compiling (hyper{', whole batch' if not fixed else ''})")
    gen = torch.Generator().manual_seed(batch)
    samples = [
        [torch.randn(tuple(shape), generator=gen) for shape, _ in c1.input_specs.values()]
        for _ in range(batch)
    ]
    feeds = {
        sample_name(n, k): x
        for k, xs in enumerate(samples)
        for n, x in zip(in_names, xs, strict=True)
    }
    hyper_m = ramiel.compile(model, clusters=workers, backend=backend, batch=batch)
    info["estimates"][batch] = _estimate(hyper_m)
    hyper = start(
        hyper_m.program, hyper_m.weights_namespace(), backend=backend, threads_per_worker=1
    )
    dp = start(
        data_parallel_from_compiled(c1, batch, workers), c1.weights_namespace(), backend=backend,
        threads_per_worker=1,
    )  # fmt: skip
    sample_outs = [sample_name(o, k) for k in range(batch) for o in out_names]
    whole_m = None
    try:
        variants = [
            Variant("hyper", lambda: _by_name(hyper.run(feeds), sample_outs), 1),
            Variant(
                "par1 xB",
                lambda: [
                    t
                    for xs in samples
                    for t in _by_name(par1.run(dict(zip(in_names, xs, strict=True))), out_names)
                ],
                1,
            ),
            Variant("dp", lambda: _by_name(dp.run(feeds), sample_outs), 1),
        ]
        if not fixed:
            (iname,) = in_names
            shape = (batch, *c1.input_specs[iname][0][1:])
            whole_m = ramiel.compile(
                free_batch(model), clusters=1, backend=backend, input_shapes={iname: shape}
            )
            fwd_b = _forward(whole_m)
            x_b = torch.cat([xs[0] for xs in samples])
            variants.append(
                Variant(
                    "seqB",
                    lambda: _unbatch(_seq_call(fwd_b, [x_b]), batch),
                    workers,
                )
            )
        seq1 = lambda: [t for xs in samples for t in _seq_call(fwd1, xs)]  # noqa: E731
        variants.append(Variant("seq1 xB", seq1, workers))
        variants.append(Variant("seq1 xB 1t", seq1, 1))

        say(f"{name} B={batch}: checking and warming up")
        ref = _run(variants[-2])
        errors = {}
        for v in variants:
            outs = _run(v)
            _run(v)
            errors[v.name] = max(
                float((a - b).abs().max()) / max(float(b.abs().max()), 1e-30)
                for a, b in zip(outs, ref, strict=True)
            )
        say(f"{name} B={batch}: {repeat} rounds of {len(variants)} variants (load {_load()})")
        for r in range(repeat):
            k = r % len(variants)
            for v in variants[k:] + variants[:k]:
                t = time.perf_counter()
                _run(v)
                v.times.append((time.perf_counter() - t) * 1e3)
        base = statistics.median(variants[-1].times)
        out = []
        for v in variants:
            med = statistics.median(v.times)
            out.append(
                Result(
                    name,
                    batch,
                    v.name,
                    med,
                    min(v.times),
                    max(v.times),
                    med / batch,
                    base / med,
                    errors[v.name],
                    [round(t, 3) for t in v.times],
                )  # fmt: skip
            )
        return out
    finally:
        hyper.close()
        dp.close()
        hyper_m.close()
        if whole_m is not None:
            whole_m.close()


def _run(v: Variant) -> list[torch.Tensor]:
    old = torch.get_num_threads()
    torch.set_num_threads(v.threads)
    try:
        return v.run()
    finally:
        torch.set_num_threads(old)


def _by_name(out: dict[str, torch.Tensor], names: list[str]) -> list[torch.Tensor]:
    return [out[n] for n in names]


def _unbatch(outs: tuple, batch: int) -> list[torch.Tensor]:
    return [o[k : k + 1] for k in range(batch) for o in outs]


def format_table(results: list[Result], infos: dict[str, dict[str, Any]]) -> str:
    lines = []
    for model in dict.fromkeys(r.model for r in results):
        info = infos[model]
        fixed = info["fixed_batch_reshapes"]
        lines.append(
            f"## {model}  (whole-batch seqB: "
            + (f"not possible, Reshape {', '.join(fixed)} fixes batch 1)" if fixed else "yes)")
        )
        est1 = info["estimates"][1]
        lines.append(
            f"   batch-1 estimate: W {est1['work_ms']:.1f} ms, makespan {est1['makespan_ms']:.1f} ms"
            f" on {est1['clusters']} clusters ({est1['transfers']} transfers)"
        )
        for batch in dict.fromkeys(r.batch for r in results if r.model == model):
            est = info["estimates"][batch]
            lines.append(
                f"   B={batch}: hyper estimate W {est['work_ms']:.1f} ms, makespan "
                f"{est['makespan_ms']:.1f} ms ({est['speedup']:.2f}x, {est['transfers']} transfers)"
            )
            lines.append(
                f"   {'variant':<12}{'median ms':>10}{'min':>9}{'max':>9}{'ms/sample':>11}"
                f"{'speed-up':>10}{'max err':>10}"
            )
            for r in results:
                if r.model == model and r.batch == batch:
                    lines.append(
                        f"   {r.variant:<12}{r.median_ms:>10.1f}{r.min_ms:>9.1f}{r.max_ms:>9.1f}"
                        f"{r.per_sample_ms:>11.1f}{r.speedup:>9.2f}x{r.max_rel_error:>10.1e}"
                    )
            lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=DEFAULT_MODELS)
    ap.add_argument("--batches", default="2,4,8")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--backend", default="threads", choices=["threads", "processes"])
    ap.add_argument("--out", help="write <out>.txt (appended) and <out>.json")
    args = ap.parse_args(argv)
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    batches = [int(b) for b in args.batches.split(",")]
    command = shlex.join(
        ["python", "bench/hypercluster.py", *(argv if argv is not None else sys.argv[1:])]
    )

    def say(msg: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)

    load_before = _load()
    t0 = time.perf_counter()
    results: list[Result] = []
    infos: dict[str, dict[str, Any]] = {}
    for m in models:
        res, info = bench_model(m, batches, args.workers, args.repeat, args.backend, say)
        results += res
        infos[m] = info
    load_after = _load()
    header = [
        f"# bench/hypercluster.py, {datetime.datetime.now().isoformat(timespec='minutes')}",
        f"# machine: {_machine()}",
        f"# command: {command}",
        f"# load average (1/5/15 min) before: {load_before}, after: {load_after}; "
        f"{time.perf_counter() - t0:.0f} s",
        f"# backend {args.backend}, P = {args.workers} workers; {args.repeat} interleaved rounds; "
        "times per call of the whole batch; speed-up = seq1 xB 1t median / median",
        "",
    ]
    text = "\n".join(header) + format_table(results, infos)
    print(text)
    if args.out:
        with open(args.out + ".txt", "a") as f:
            f.write(text + "\n")
        with open(args.out + ".json", "w") as f:
            json.dump(
                {
                    "command": command,
                    "date": datetime.datetime.now().isoformat(timespec="minutes"),
                    "machine": _machine(),
                    "load_before": load_before,
                    "load_after": load_after,
                    "backend": args.backend,
                    "workers": args.workers,
                    "repeat": args.repeat,
                    "models": infos,
                    "results": [asdict(r) for r in results],
                },
                f,
                indent=1,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
