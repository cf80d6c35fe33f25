"""Time the PyTorch forms of the zoo models' convolutions at batch 1; print a table per model.

Usage::

    python bench/conv_prepack.py [MODEL ...] [--repeats 15] [--threads 1] [--cpu-time] [--cases]
                                 [--out FILE]

MODEL: zoo names (default: light_shufflenet, light_squeezenet, light_inception_v1,
light_resnet50, light_densenet121). Every Conv of a model (its input shape from onnx shape
inference, its attributes, whether a Relu follows) is timed in the candidate forms, interleaved
in one process (every round runs each candidate once, rotating the order), on a channels-last
input prepared beforehand:

- ``F.conv2d``: the readable lowering, channels-last weights, then ``torch.relu_`` if a Relu
  follows (what ``--assign-layout`` prints today);
- ``prepacked``: ``torch.ops.mkldnn._convolution_pointwise`` with the weight reordered once by
  ``torch.ops.mkldnn._reorder_convolution_weight`` (what inductor's freezing emits), the Relu
  fused (``attr="relu"``);
- ``F.conv2d nchw`` / ``prepacked nchw``: the same on a contiguous input and kernel.

Identical convolutions (shape and attributes) are timed once and counted as often as they occur.
Rows per kind of convolution (1x1, kxk, grouped, depthwise) give the summed median µs of one
inference's convolutions and the ratio to ``F.conv2d``; each candidate's output is checked against
``F.conv2d`` (largest error relative to the largest magnitude < 1e-4). The load average before and
after is printed with the table: this is a shared machine. ``--cpu-time`` times the calling
thread's CPU time instead of the wall clock (on a loaded machine the wall clock also counts the
time other processes hold the core: use it there); ``--cases`` adds a row per convolution.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import time
from collections import Counter

import onnx
import torch
import torch.nn.functional as F
from onnx import shape_inference

from ramiel.bench import load_average, median_of, write_report, zoo_models

#: the clock: the calling thread's CPU time with ``--cpu-time`` (on a loaded machine the wall
#: clock also counts the time other processes hold the core), else the wall clock
CLOCK = time.perf_counter

DEFAULT = [
    "light_shufflenet",
    "light_squeezenet",
    "light_inception_v1",
    "light_resnet50",
    "light_densenet121",
]


def conv_cases(path: str) -> Counter:
    """Counter of (x shape, w shape, stride, pads(b+e), dilation, group, relu) of a model's Convs."""
    m = shape_inference.infer_shapes(onnx.load(path))
    g = m.graph
    shapes = {}
    for vi in list(g.value_info) + list(g.input) + list(g.output):
        dims = vi.type.tensor_type.shape.dim
        shapes[vi.name] = tuple(d.dim_value for d in dims)
    for init in g.initializer:
        shapes[init.name] = tuple(init.dims)
    users: dict[str, list] = {}
    for n in g.node:
        for i in n.input:
            users.setdefault(i, []).append(n)
    out: Counter = Counter()
    for n in g.node:
        if n.op_type != "Conv":
            continue
        a = {x.name: onnx.helper.get_attribute_value(x) for x in n.attribute}
        xs, ws = shapes.get(n.input[0]), shapes.get(n.input[1])
        if (
            not xs
            or not ws
            or len(xs) != 4
            or a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET")
        ):
            continue
        pads = tuple(a.get("pads", [0, 0, 0, 0]))
        if pads[:2] != pads[2:]:
            continue
        relu = [u.op_type for u in users.get(n.output[0], [])] == ["Relu"]
        out[
            (
                xs,
                ws,
                tuple(a.get("strides", [1, 1])),
                pads[:2],
                tuple(a.get("dilations", [1, 1])),
                int(a.get("group", 1)),
                len(n.input) > 2,
                relu,
            )
        ] += 1
    return out


def kind(ws: tuple, group: int) -> str:
    if group > 1:
        return "depthwise" if group == ws[0] and ws[1] == 1 else "grouped"
    return "1x1" if ws[2:] == (1, 1) else f"{ws[2]}x{ws[3]}"


def candidates(case) -> dict:
    xs, ws, stride, pad, dil, group, has_bias, relu = case
    torch.manual_seed(0)
    x = torch.randn(xs)
    w = torch.randn(ws) * 0.1
    b = torch.randn(ws[0]) if has_bias else None
    cl = torch.channels_last
    x_cl, w_cl = x.contiguous(memory_format=cl), w.contiguous(memory_format=cl)
    packed = torch.ops.mkldnn._reorder_convolution_weight(
        w, list(pad), list(stride), list(dil), group, list(xs)
    )
    packed_nchw = packed
    attr = "relu" if relu else "none"

    def conv(xx, ww):
        y = F.conv2d(xx, ww, b, stride=stride, padding=pad, dilation=dil, groups=group)
        return torch.relu_(y) if relu else y

    def pointwise(xx, ww):
        return torch.ops.mkldnn._convolution_pointwise(
            xx, ww, b, list(pad), list(stride), list(dil), group, attr, [], ""
        )

    return {
        "F.conv2d": lambda: conv(x_cl, w_cl),
        "prepacked": lambda: pointwise(x_cl, packed),
        "F.conv2d nchw": lambda: conv(x, w),
        "prepacked nchw": lambda: pointwise(x, packed_nchw),
    }


def time_case(case, repeats: int) -> dict[str, float]:
    cands = candidates(case)
    ref = cands["F.conv2d"]()
    for name, fn in cands.items():
        y = fn()
        err = (y - ref).abs().max().item() / max(ref.abs().max().item(), 1e-30)
        assert err < 1e-4, f"{name} differs from F.conv2d by {err:.2e} on {case}"
        fn()
    names = list(cands)
    samples: dict[str, list[float]] = {n: [] for n in names}
    for r in range(repeats):
        order = names[r % len(names) :] + names[: r % len(names)]
        for n in order:
            t0 = CLOCK()
            cands[n]()
            samples[n].append((CLOCK() - t0) * 1e6)
    return {n: median_of(sorted(s)) for n, s in samples.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", default=DEFAULT)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--cpu-time", action="store_true", help="time CPU time of the thread")
    ap.add_argument("--cases", action="store_true", help="also a row per convolution")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    global CLOCK
    CLOCK = time.thread_time if args.cpu_time else time.perf_counter
    torch.set_num_threads(args.threads)
    zoo = zoo_models()
    lines = [
        f"# python bench/conv_prepack.py {' '.join(args.models)} --repeats {args.repeats} "
        f"--threads {args.threads}{' --cpu-time' if args.cpu_time else ''}",
        f"# {datetime.datetime.now().isoformat(timespec='minutes')}, {os.cpu_count()} cpus, torch "
        f"{torch.__version__}, python {platform.python_version()}; load average {load_average()[0]:.2f} before",
        "# summed median µs of one inference's convolutions per kind (count); x: ratio to F.conv2d (channels-last)",
    ]
    print("\n".join(lines), flush=True)
    for model in args.models:
        cases = conv_cases(zoo[model])
        per_kind: dict[str, dict[str, float]] = {}
        counts: Counter = Counter()
        rows = []
        for case, count in cases.items():
            k = kind(case[1], case[5])
            counts[k] += count
            times = time_case(case, args.repeats)
            if args.cases:
                xs, ws, st, pd, _d, g, _b, relu = case
                rows.append(
                    f"    x{list(xs)} w{list(ws)} s{st[0]} p{pd[0]} g{g}{' relu' if relu else ''} "
                    f"x{count}: F.conv2d {times['F.conv2d']:7.0f} us, prepacked "
                    f"{times['prepacked'] / times['F.conv2d']:4.2f}x"
                )
            for n, t in times.items():
                per_kind.setdefault(k, {}).setdefault(n, 0.0)
                per_kind[k][n] += t * count
        total: dict[str, float] = {}
        block = [f"\n{model}", *rows]
        for k, ts in sorted(per_kind.items()):
            base = ts["F.conv2d"]
            cells = "  ".join(f"{n} {t:9.0f} {t / base:5.2f}x" for n, t in ts.items())
            block.append(f"  {k:10s} ({counts[k]:3d})  {cells}")
            for n, t in ts.items():
                total[n] = total.get(n, 0.0) + t
        base = total["F.conv2d"]
        cells = "  ".join(f"{n} {t:9.0f} {t / base:5.2f}x" for n, t in total.items())
        block.append(f"  {'all':10s} ({sum(counts.values()):3d})  {cells}")
        print("\n".join(block), flush=True)
        lines += block
    tail = f"# load average {load_average()[0]:.2f} after"
    return write_report(lines, args.out, tail)


if __name__ == "__main__":
    raise SystemExit(main())
