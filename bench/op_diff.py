"""Which aten op of a generated sequential module computes differently at N intra-op threads than
at one, or on a device than on the CPU; print the mismatches.

Usage::

    python bench/op_diff.py MODEL [--threads 4] [--device cpu|cuda] [--layout auto|nchw]

MODEL: an ``.onnx`` path, zoo name or project model as ``ramiel bench`` takes them. The model's
default compile (``--layout`` as ``ramiel compile``'s); one inference of its sequential module
on random inputs (seed 0) at ``--threads`` threads on ``--device``, under a
``torch.utils._python_dispatch.TorchDispatchMode`` that recomputes every aten op from copies of
the same inputs, at one thread on the same device (``--device cpu``) or on the CPU (another
device), and compares the floating-point outputs (largest error relative to the op's largest
output; above 1e-4 is a mismatch, listed with the input shapes and strides). Also printed: the
whole output's error against onnxruntime's. Used to tell a kernel that depends on the thread
count or device from an ill-conditioned model whose output moves with any change of summation
order (docs/benchmarks.md, section *More cores and a GPU*).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from typing import Any

TOLERANCE = 1e-4
NO_VALUES = ("empty", "new_empty", "empty_like", "empty_strided")  # outputs with no defined values


def _checker(ref_device: str, threads: int) -> Any:
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten, tree_map

    class Recompute(TorchDispatchMode):
        """Every aten op again from copies of its inputs: on ``ref_device``, at one thread."""

        def __init__(self) -> None:
            super().__init__()
            self.ops = 0
            self.mismatches: list[str] = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            kwargs = kwargs or {}

            def copy(x: Any) -> Any:
                if isinstance(x, torch.Tensor) and x.layout == torch.strided:
                    return x.detach().to(ref_device).clone(memory_format=torch.preserve_format)
                if isinstance(x, torch.device):
                    return torch.device(ref_device)
                return x

            ref_args, ref_kwargs = tree_map(copy, args), tree_map(copy, kwargs)
            out = func(*args, **kwargs)  # before the copies are used: it may write its inputs
            if any(s in str(func) for s in NO_VALUES):
                return out
            self.ops += 1
            torch.set_num_threads(1)
            try:
                ref = func(*ref_args, **ref_kwargs)
            except Exception as e:
                self.mismatches.append(f"{func}: the recomputation raised {type(e).__name__}: {e}")
                return out
            finally:
                torch.set_num_threads(threads)
            for a, b in zip(tree_flatten(out)[0], tree_flatten(ref)[0], strict=False):
                if not (
                    isinstance(a, torch.Tensor)
                    and a.layout == torch.strided
                    and a.is_floating_point()
                    and a.numel()
                ):
                    continue
                a64, b64 = a.detach().to(ref_device).double(), b.double()
                err = float((a64 - b64).abs().max()) / max(float(b64.abs().max()), 1e-30)
                if err > TOLERANCE:
                    shapes = [
                        f"{tuple(x.shape)}/{tuple(x.stride())}"
                        for x in tree_flatten(args)[0]
                        if isinstance(x, torch.Tensor) and x.layout == torch.strided
                    ]
                    self.mismatches.append(f"{func}: error {err:.2e}; inputs {', '.join(shapes)}")
            return out

    return Recompute()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("--threads", type=int, default=4, help="intra-op threads of the inference")
    ap.add_argument("--device", default="cpu", help="where the inference runs (cpu, cuda)")
    ap.add_argument("--layout", default="auto", choices=("auto", "channels-last", "nchw"))
    args = ap.parse_args(argv)
    if args.threads < 1:
        ap.error(f"--threads must be at least 1, got {args.threads}")

    import torch

    from ramiel.bench import ort_session, rel_error, resolve_models
    from ramiel.compiler import CompiledModel, CompileOptions, compile_model
    from ramiel.runtime.entry import random_inputs

    try:
        kind = torch.device(args.device).type
    except RuntimeError:
        kind = None
    if kind not in ("cpu", "cuda"):
        ap.error(f"--device {args.device!r} is not a device (cpu, cuda, cuda:N)")
    on_cuda = kind == "cuda"
    if on_cuda:
        if not torch.cuda.is_available():
            print("no CUDA device", file=sys.stderr)
            return 1
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
    try:
        path = resolve_models([args.model])[0].resolve()
    except ValueError as e:
        ap.error(str(e))
    with tempfile.TemporaryDirectory(prefix="ramiel-op-diff-") as tmp:
        r = compile_model(path, os.path.join(tmp, "out"), CompileOptions(layout=args.layout))
        with CompiledModel(r, CompileOptions()) as m:
            feeds = random_inputs(m.input_specs, seed=0)
            ref = ort_session(path).run(None, {k: v.numpy() for k, v in feeds.items()})
            seq = m.sequential.to(args.device)
            inputs = [v.to(args.device) for v in feeds.values()]
            ref_device = "cpu" if torch.device(args.device).type != "cpu" else args.device
            torch.set_num_threads(args.threads)
            with torch.inference_mode():
                seq(*inputs)  # packs the prepacked kernels at this thread count
                check = _checker(ref_device, args.threads)
                with check:
                    out = seq(*inputs)
    outs = out if isinstance(out, tuple) else (out,)
    err = rel_error([o.cpu().numpy() for o in outs], ref)
    print(
        f"{args.model}: {args.threads} thread(s) on {args.device}; output error against "
        f"onnxruntime {err:.3g}; {check.ops} aten ops recomputed on {ref_device} at 1 thread, "
        f"{len(check.mismatches)} differ by more than {TOLERANCE}"
    )
    for line in check.mismatches[:20]:
        print("  " + line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
