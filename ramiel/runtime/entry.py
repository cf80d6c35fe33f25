"""``__main__`` of generated modules: ``python model.py`` runs one inference on random inputs.

``python model.py [--backend threads|processes] [--threads N] [--seed S]`` loads the weights from
``weights.safetensors`` beside the module, makes deterministic random inputs of the declared
shapes and dtypes, runs one inference and prints each output's shape, dtype and a few values.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence

import torch

WEIGHTS_FILE = "weights.safetensors"


def random_inputs(
    specs: Mapping[str, tuple[Sequence[int], torch.dtype]], seed: int = 0
) -> dict[str, torch.Tensor]:
    """Deterministic inputs: standard normal floats, integers in [0, 10), random booleans."""
    gen = torch.Generator().manual_seed(seed)
    out: dict[str, torch.Tensor] = {}
    for name, (shape, dtype) in specs.items():
        if dtype.is_floating_point:
            out[name] = torch.randn(tuple(shape), generator=gen).to(dtype)
        elif dtype == torch.bool:
            out[name] = torch.randint(0, 2, tuple(shape), generator=gen).bool()
        else:
            out[name] = torch.randint(0, 10, tuple(shape), generator=gen).to(dtype)
    return out


def _describe(name: str, t: torch.Tensor) -> str:
    flat = t.reshape(-1)
    head = ", ".join(f"{v:.6g}" for v in flat[:5].tolist())
    return f"{name}: shape={tuple(t.shape)} dtype={t.dtype} first=[{head}{', ...' if flat.numel() > 5 else ''}]"


def _args(argv: Sequence[str] | None, parallel: bool) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="Run one inference of this Ramiel-generated module.")
    if parallel:
        p.add_argument("--backend", default="threads", choices=["threads", "processes"])
        p.add_argument("--threads", type=int, default=1, help="intra-op threads per worker")
    else:
        p.add_argument("--threads", type=int, default=1, help="intra-op threads")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


def main(program, module_file: str, argv: Sequence[str] | None = None) -> None:  # type: ignore[no-untyped-def]
    """Run ``program`` (a parallel module's ``PROGRAM``) once on random inputs and print it."""
    from ramiel.errors import RamielError
    from ramiel.runtime import Weights, start

    args = _args(argv, parallel=True)
    weights = Weights.from_safetensors(os.path.join(os.path.dirname(module_file), WEIGHTS_FILE))
    specs = {
        name: (program.channels[chs[0]].shape, program.channels[chs[0]].dtype)
        for name, chs in program.inputs.items()
        if chs
    }
    inputs = random_inputs(specs, args.seed)
    try:
        with start(
            program, weights, backend=args.backend, threads_per_worker=args.threads
        ) as runner:
            t0 = time.perf_counter()
            outs = runner.run(inputs)
            ms = (time.perf_counter() - t0) * 1e3
    except RamielError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(1)
    print(f"{len(program.clusters)} clusters, backend {args.backend}: one inference in {ms:.2f} ms")
    for name, t in outs.items():
        print(_describe(name, t))


def main_sequential(
    forward: Callable[..., object],
    inputs: Mapping[str, tuple[Sequence[int], torch.dtype]],
    outputs: Sequence[str],
    module_file: str,
    argv: Sequence[str] | None = None,
) -> None:
    """Run a sequential module's ``forward`` once on random inputs and print its outputs."""
    from ramiel.runtime import Weights

    args = _args(argv, parallel=False)
    torch.set_num_threads(args.threads)
    weights = Weights.from_safetensors(os.path.join(os.path.dirname(module_file), WEIGHTS_FILE))
    feeds = random_inputs(inputs, args.seed)
    t0 = time.perf_counter()
    with torch.inference_mode():
        result = forward(weights, *feeds.values())
    ms = (time.perf_counter() - t0) * 1e3
    results = result if isinstance(result, tuple) else (result,)
    print(f"sequential, {args.threads} thread(s): one inference in {ms:.2f} ms")
    for name, t in zip(outputs, results, strict=False):
        print(_describe(name, t))  # type: ignore[arg-type]
