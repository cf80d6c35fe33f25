"""Time the PyTorch forms of the CNN ops whose lowering depends on the memory format; print a table.

Usage::

    python bench/layout_ops.py [GROUP ...] [--repeats 31] [--threads 1] [--out FILE]

Groups: ``lrn``, ``maxpool``, ``avgpool``, ``resize``, ``conv``, ``convert``, ``shuffle``
(light_shufflenet's channel shuffles), ``depthwise`` (depthwise 3x3 convolutions of
light_shufflenet and MobileNetV2) (default: all). For
every case (shapes and attributes of the zoo models' ops: light_inception_v1, light_bvlc_alexnet,
light_inception_v2, light_densenet121, light_resnet50) the candidate forms are timed
**interleaved** in one process (every round runs each candidate once, rotating the order) on
contiguous (``nchw``) and channels-last (``cl``) inputs; each row gives the median in µs and the
95 % confidence interval of the median (binomial order statistics). Every candidate's result is
checked against the first one (largest error relative to the largest magnitude < 1e-5). The load
average before and after is printed with the table: this is a shared machine.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import time
from collections.abc import Callable

import torch
import torch.nn.functional as F

from ramiel.bench import median_ci, median_of
from ramiel.runtime import ops

CL = torch.channels_last


def _cl(x: torch.Tensor) -> torch.Tensor:
    return x.contiguous(memory_format=CL)


def _via_cl(fn: Callable[[torch.Tensor], torch.Tensor]) -> Callable[[torch.Tensor], torch.Tensor]:
    """``fn`` on a contiguous tensor through channels-last: convert, compute, convert back."""
    return lambda x: fn(_cl(x)).contiguous()


def lrn_cases() -> list[tuple[str, torch.Tensor, dict[str, Callable]]]:
    out = []
    for shape in [(1, 64, 56, 56), (1, 192, 56, 56), (1, 96, 54, 54), (1, 256, 26, 26)]:
        x = torch.randn(shape) * 3

        def ref(t: torch.Tensor) -> torch.Tensor:
            return F.local_response_norm(t, 5, alpha=1e-4, beta=0.75, k=1.0)

        def new(t: torch.Tensor) -> torch.Tensor:
            return ops.lrn(t, 5, alpha=1e-4, beta=0.75, bias=1.0)

        out.append(
            (
                f"LRN size 5 {shape}",
                x,
                {
                    "F.local_response_norm nchw": (ref, "nchw"),
                    "F.local_response_norm cl": (ref, "cl"),
                    "ops.lrn nchw": (new, "nchw"),
                    "ops.lrn cl": (new, "cl"),
                },
            )
        )
    return out


def _pool_cases(kind: str) -> list[tuple[str, torch.Tensor, dict[str, Callable]]]:
    cases = [
        ((1, 64, 112, 112), 3, 2, 0, True),
        ((1, 192, 56, 56), 3, 2, 0, True),
        ((1, 256, 28, 28), 3, 1, 1, False),
        ((1, 480, 14, 14), 3, 1, 1, False),
        ((1, 832, 7, 7), 3, 1, 1, False),
        ((1, 64, 112, 112), 3, 2, 1, False),
        ((1, 128, 56, 56), 2, 2, 0, False),
    ]
    if kind == "avgpool":
        cases = [
            ((1, 256, 28, 28), 3, 1, 1, False),
            ((1, 576, 14, 14), 3, 1, 1, False),
            ((1, 128, 56, 56), 2, 2, 0, False),
            ((1, 1024, 7, 7), 7, 1, 0, False),
        ]
    out = []
    for shape, k, s, p, ceil in cases:
        x = torch.randn(shape)
        if kind == "maxpool":

            def fn(t, k=k, s=s, p=p, ceil=ceil):
                return F.max_pool2d(t, k, s, p, ceil_mode=ceil)
        else:

            def fn(t, k=k, s=s, p=p, ceil=ceil):
                return F.avg_pool2d(t, k, s, p, ceil_mode=ceil, count_include_pad=False)

        name = "F.max_pool2d" if kind == "maxpool" else "F.avg_pool2d"
        cands = {
            f"{name} nchw": (fn, "nchw"),
            f"{name} cl": (fn, "cl"),
            f"{name} nchw via cl": (_via_cl(fn), "nchw"),
        }
        if k == shape[2] == shape[3] and p == 0:  # one window: a global pooling
            red = torch.amax if kind == "maxpool" else torch.mean
            cands[f"torch.{red.__name__} nchw"] = (
                lambda t, red=red: red(t, dim=(2, 3), keepdim=True),
                "nchw",
            )
        out.append((f"{name} k={k} s={s} p={p} ceil={int(ceil)} {shape}", x, cands))
    return out


def resize_cases() -> list[tuple[str, torch.Tensor, dict[str, Callable]]]:
    out = []
    for shape, mode in [((1, 256, 28, 28), "nearest"), ((1, 64, 56, 56), "bilinear")]:
        x = torch.randn(shape)

        def fn(t, mode=mode):
            kw = {} if mode == "nearest" else {"align_corners": False}
            return F.interpolate(t, scale_factor=2.0, mode=mode, **kw)

        out.append(
            (
                f"F.interpolate x2 {mode} {shape}",
                x,
                {
                    "F.interpolate nchw": (fn, "nchw"),
                    "F.interpolate cl": (fn, "cl"),
                    "F.interpolate nchw via cl": (_via_cl(fn), "nchw"),
                },
            )
        )
    return out


def conv_cases() -> list[tuple[str, torch.Tensor, dict[str, Callable]]]:
    out = []
    for shape, o, k, s, p in [
        ((1, 3, 224, 224), 64, 7, 2, 3),
        ((1, 64, 56, 56), 64, 1, 1, 0),
        ((1, 64, 56, 56), 192, 3, 1, 1),
        ((1, 192, 28, 28), 64, 1, 1, 0),
        ((1, 96, 28, 28), 128, 3, 1, 1),
        ((1, 16, 28, 28), 32, 5, 1, 2),
        ((1, 480, 14, 14), 192, 1, 1, 0),
        ((1, 112, 14, 14), 224, 3, 1, 1),
        ((1, 832, 7, 7), 384, 1, 1, 0),
        ((1, 192, 7, 7), 384, 3, 1, 1),
        ((1, 128, 28, 28), 32, 3, 1, 1),
    ]:
        x = torch.randn(shape)
        w = torch.randn(o, shape[1], k, k) * 0.1
        b = torch.randn(o)
        wcl = _cl(w)
        out.append(
            (
                f"F.conv2d {shape} -> {o}, k={k} s={s} p={p}",
                x,
                {
                    "nchw": (lambda t, w=w, b=b, s=s, p=p: F.conv2d(t, w, b, s, p), "nchw"),
                    "cl input": (lambda t, w=w, b=b, s=s, p=p: F.conv2d(t, w, b, s, p), "cl"),
                    "cl input and kernel": (
                        lambda t, w=wcl, b=b, s=s, p=p: F.conv2d(t, w, b, s, p),
                        "cl",
                    ),
                },
            )
        )
    return out


def shuffle_cases() -> list[tuple[str, torch.Tensor, dict[str, Callable]]]:
    """light_shufflenet's channel shuffles (4 groups): the exported 5-D form and the
    candidates of ``--fuse-channel-shuffle``'s lowering."""
    out = []
    for c, hw in [(112, 56), (136, 28), (272, 14), (544, 7)]:
        g = 4
        perm = torch.arange(c).reshape(g, c // g).t().reshape(-1)

        def five_d(t, c=c, hw=hw, g=g):
            return t.reshape(1, g, c // g, hw, hw).permute(0, 2, 1, 3, 4).reshape(1, c, hw, hw)

        out.append(
            (
                f"channel shuffle (1, {c}, {hw}, {hw}), 4 groups",
                torch.randn(1, c, hw, hw),
                {
                    "5-D reshape/permute nchw": (five_d, "nchw"),
                    "5-D reshape/permute cl": (five_d, "cl"),
                    "F.channel_shuffle nchw": (lambda t, g=g: F.channel_shuffle(t, g), "nchw"),
                    "F.channel_shuffle cl": (lambda t, g=g: F.channel_shuffle(t, g), "cl"),
                    "index_select nchw": (lambda t, p=perm: t.index_select(1, p), "nchw"),
                    "index_select cl": (lambda t, p=perm: t.index_select(1, p), "cl"),
                    "x[:, p] nchw": (lambda t, p=perm: t[:, p], "nchw"),
                },
            )
        )
    return out


def depthwise_cases() -> list[tuple[str, torch.Tensor, dict[str, Callable]]]:
    """Depthwise 3x3 convolutions (groups = channels) of light_shufflenet and MobileNetV2."""
    out = []
    for c, hw, s in [
        (112, 56, 2), (136, 28, 1), (136, 28, 2), (272, 14, 1), (544, 7, 1),
        (32, 112, 1), (96, 112, 2), (144, 56, 1), (192, 28, 1), (384, 14, 1), (960, 7, 1),
    ]:  # fmt: skip
        w = torch.randn(c, 1, 3, 3) * 0.3
        b = torch.randn(c)
        wcl = _cl(w)
        out.append(
            (
                f"depthwise 3x3 (1, {c}, {hw}, {hw}) stride {s}",
                torch.randn(1, c, hw, hw),
                {
                    "nchw": (
                        lambda t, w=w, b=b, s=s, c=c: F.conv2d(t, w, b, s, 1, groups=c),
                        "nchw",
                    ),
                    "cl input and kernel": (
                        lambda t, w=wcl, b=b, s=s, c=c: F.conv2d(t, w, b, s, 1, groups=c),
                        "cl",
                    ),
                    "via cl (2 conversions)": (
                        _via_cl(lambda t, w=wcl, b=b, s=s, c=c: F.conv2d(t, w, b, s, 1, groups=c)),
                        "nchw",
                    ),
                },
            )
        )
    return out


def convert_cases() -> list[tuple[str, torch.Tensor, dict[str, Callable]]]:
    out = []
    for shape in [(1, 3, 224, 224), (1, 64, 112, 112), (1, 192, 56, 56), (1, 480, 14, 14)]:
        x = torch.randn(shape)
        out.append(
            (
                f"conversion {shape}",
                x,
                {
                    "clone (plain copy)": (lambda t: t.clone(), "nchw"),
                    "to channels_last": (lambda t: t.contiguous(memory_format=CL), "nchw"),
                    "to contiguous": (lambda t: t.contiguous(), "cl"),
                },
            )
        )
    return out


GROUPS: dict[str, Callable[[], list]] = {
    "lrn": lrn_cases,
    "maxpool": lambda: _pool_cases("maxpool"),
    "avgpool": lambda: _pool_cases("avgpool"),
    "resize": resize_cases,
    "conv": conv_cases,
    "convert": convert_cases,
    "shuffle": shuffle_cases,
    "depthwise": depthwise_cases,
}


def run(groups: list[str], repeats: int) -> list[str]:
    """The table lines of ``groups``; each candidate gets its input in its format (``nchw`` or
    ``cl``), prepared outside the timed region."""
    lines = []
    for g in groups:
        for title, x, cands in GROUPS[g]():
            given = {"nchw": x, "cl": _cl(x)}
            calls = {n: (lambda f=f, t=given[fmt]: f(t)) for n, (f, fmt) in cands.items()}
            with torch.inference_mode():
                ref = None
                for name, call in calls.items():
                    y = call()
                    if ref is None:
                        ref = y
                        continue
                    err = float((y - ref).abs().max() / ref.abs().max().clamp_min(1e-30))
                    assert err < 1e-5, f"{title}: {name} differs from the first form ({err})"
            samples = _time_calls(calls, repeats)
            lines.append(f"\n{title}")
            for name, ts in samples.items():
                srt = sorted(ts)
                lo, hi = median_ci(srt)
                lines.append(f"  {name:34s} {median_of(srt):10.1f} us  [{lo:.1f}, {hi:.1f}]")
    return lines


def _time_calls(fns: dict[str, Callable[[], object]], repeats: int) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {n: [] for n in fns}
    keys = list(fns)
    with torch.inference_mode():
        for n in keys:
            fns[n]()
        for r in range(repeats):
            for n in keys[r % len(keys) :] + keys[: r % len(keys)]:
                t = time.perf_counter()
                fns[n]()
                samples[n].append((time.perf_counter() - t) * 1e6)
    return samples


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("groups", nargs="*", metavar="GROUP", help=f"of {', '.join(GROUPS)}")
    ap.add_argument("--repeats", type=int, default=31)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", help="also write the table to this file")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    groups = args.groups or list(GROUPS)
    unknown = [g for g in groups if g not in GROUPS]
    if unknown:
        ap.error(f"unknown group(s) {', '.join(unknown)}; have {', '.join(GROUPS)}")
    before = os.getloadavg()
    body = run(groups, args.repeats)
    after = os.getloadavg()
    head = [
        f"# python bench/layout_ops.py {' '.join(groups)} --repeats {args.repeats} "
        f"--threads {args.threads}",
        f"# {datetime.datetime.now().isoformat(timespec='minutes')}, {os.cpu_count()} cpus, "
        f"torch {torch.__version__}, python {platform.python_version()}; load average "
        f"{before[0]:.2f} before, {after[0]:.2f} after",
        "# median µs of one call [95 % interval of the median]; nchw: contiguous input, cl: a "
        "channels-last input prepared beforehand, via cl: convert, compute, convert back",
    ]
    text = "\n".join(head + body) + "\n"
    print(text, end="")
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
