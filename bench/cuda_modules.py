"""The generated sequential modules on a CUDA device: outputs against onnxruntime, latency
against the same module on the CPU and onnxruntime; print a table.

Usage::

    python bench/cuda_modules.py [MODEL ...] [--calls 100] [--out FILE]

MODEL: ``.onnx`` paths, zoo names or project models as ``ramiel bench`` takes them (default: the
project's ``inception`` and ``transformer``, ``light_inception_v1``, ``light_resnet50`` and
``light_squeezenet``). For each model: ``ramiel.compile``'s default compile (layout ``auto``,
every rewrite), the sequential module (``model_seq.py``) moved with ``module.to("cuda")`` -- the
user's way; its prepacked oneDNN calls fall back to the plain ``F.conv2d``/``torch.matmul`` off
the CPU -- and its inputs with it. Its outputs are checked against onnxruntime's (CPU) on the
same inputs (largest error relative to the largest output magnitude), with TF32 off (cuDNN's
convolutions and cuBLAS's matrix products in full float32). Latency: median [95 % interval]
of ``--calls`` calls, each ended by ``torch.cuda.synchronize()``, after 10 warm-up calls;
beside it the same module on the CPU (all cores) and onnxruntime (CPU, all cores; its CUDA
execution provider too where the installed onnxruntime has it).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

DEFAULT_MODELS = [
    "inception",
    "transformer",
    "light_inception_v1",
    "light_resnet50",
    "light_squeezenet",
]


def _time(fn, calls: int, sync=lambda: None):  # type: ignore[no-untyped-def]
    from ramiel.bench import Timing

    for _ in range(10):
        fn()
    sync()
    samples = []
    for _ in range(calls):
        t = time.perf_counter()
        fn()
        sync()
        samples.append((time.perf_counter() - t) * 1e3)
    return Timing.of(samples)


def _cell(t) -> str:  # type: ignore[no-untyped-def]
    return "–" if t is None else f"{t.median:.2f} [{t.ci[0]:.2f}, {t.ci[1]:.2f}]"


def _row(spec, out_dir: str, args, cores: int, sync, cuda_ep: bool) -> str:  # type: ignore[no-untyped-def]
    """One model's line of the table: compile, check and time it."""
    import onnxruntime as ort
    import torch

    from ramiel.bench import ort_session, rel_error
    from ramiel.compiler import CompiledModel, CompileOptions, compile_model
    from ramiel.runtime.entry import random_inputs

    path = spec.resolve()
    with CompiledModel(
        compile_model(path, out_dir, CompileOptions(clusters=1)), CompileOptions()
    ) as m:
        feeds = random_inputs(m.input_specs, seed=0)
        np_feeds = {k: v.numpy() for k, v in feeds.items()}
        sess = ort_session(path, threads=cores)
        ref = sess.run(None, np_feeds)
        seq = m.sequential
        args_cpu = list(feeds.values())
        with torch.inference_mode():
            t_cpu = _time(lambda: seq(*args_cpu), max(10, args.calls // 4))
            seq.to(args.device)
            args_dev = [a.to(args.device) for a in args_cpu]
            out = seq(*args_dev)
            outs = out if isinstance(out, tuple) else (out,)
            err = rel_error([o.cpu().numpy() for o in outs], ref)
            t_dev = _time(lambda: seq(*args_dev), args.calls, sync)
        t_ort = _time(lambda: sess.run(None, np_feeds), max(10, args.calls // 4))
        t_ort_cuda = None
        if cuda_ep:
            cs = ort.InferenceSession(path, providers=["CUDAExecutionProvider"])
            t_ort_cuda = _time(lambda: cs.run(None, np_feeds), args.calls)
    return (
        f"{spec.name:<20} {_cell(t_dev):>22} {err:>8.1e} {_cell(t_cpu):>22} "
        f"{_cell(t_ort):>22} {_cell(t_ort_cuda):>22}"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", metavar="MODEL")
    ap.add_argument("--calls", type=int, default=100, help="timed calls per configuration")
    ap.add_argument("--device", default="cuda", help="where the module runs (cpu: a dry run)")
    ap.add_argument("--out", help="also write the table to this file")
    args = ap.parse_args(argv)
    if args.calls < 1:
        ap.error(f"--calls must be at least 1, got {args.calls}")

    import onnxruntime as ort
    import torch

    from ramiel.bench import load_average, resolve_models, write_report
    from ramiel.cost_model import usable_cores

    try:
        specs = resolve_models(args.models or DEFAULT_MODELS)
    except ValueError as e:
        ap.error(str(e))
    try:
        kind = torch.device(args.device).type
    except RuntimeError:
        kind = None
    if kind not in ("cpu", "cuda"):
        ap.error(f"--device {args.device!r} is not a device (cpu, cuda, cuda:N)")
    on_cuda = kind == "cuda"
    if on_cuda and not torch.cuda.is_available():
        print("no CUDA device: nothing to measure", file=sys.stderr)
        return 1
    sync = torch.cuda.synchronize if on_cuda else (lambda: None)
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    cores = usable_cores()
    torch.set_num_threads(cores)
    cuda_ep = "CUDAExecutionProvider" in ort.get_available_providers()
    cmd = " ".join(sys.argv[1:] if argv is None else argv)
    head = [
        f"# python bench/cuda_modules.py {cmd}",
        f"# {time.strftime('%Y-%m-%d %H:%M')}, "
        f"{torch.cuda.get_device_name() if on_cuda else args.device}, {cores} cores, "
        f"torch {torch.__version__}, onnxruntime {ort.__version__} "
        f"({'with' if cuda_ep else 'without'} its CUDA provider); load average "
        f"{load_average()[0]:.2f} before; TF32 off",
        f"# median ms [95 % interval] of {args.calls} calls; err: largest error of the "
        f"{args.device} module's outputs relative to the largest output of onnxruntime (CPU)",
        f"{'model':<20} {'module on ' + args.device:>22} {'err':>8} {'module on cpu':>22} "
        f"{'ort cpu':>22} {'ort cuda':>22}",
    ]
    print("\n".join(head), flush=True)
    lines = list(head)
    failed = 0
    with tempfile.TemporaryDirectory(prefix="ramiel-cuda-") as tmp:
        for spec in specs:
            try:
                line = _row(spec, os.path.join(tmp, spec.name), args, cores, sync, cuda_ep)
            except Exception as e:  # a model that fails is a row, not the end of the run
                line = f"{spec.name:<20} error: {type(e).__name__}: {e}"
                failed += 1
            print(line, flush=True)
            lines.append(line)
    write_report(lines, args.out, f"# load average {load_average()[0]:.2f} after")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
