"""Which lowering of ONNX LSTM/GRU/RNN is faster: PyTorch's fused layer or the time loop?

Usage::

    python bench/rnn_lowering.py [--repeats 30] [--out bench/results/rnn_lowering.txt]

For each configuration (cell, hidden size, sequence length, batch 1, one thread) it builds one
ONNX node with random weights, lowers it both ways -- ``torch.lstm``/``torch.gru``/
``torch.rnn_tanh`` with weights reordered at compile time (what :mod:`ramiel.lowering.rnn` emits)
and ``ops.recurrent`` (the explicit time loop it falls back to) -- checks both against
onnxruntime, and times them interleaved (round robin, one warm-up each), printing the medians
with the 25-75 % range and the ratio. The load average is printed with the table: compare the
ratios, not the absolute times, on a shared machine.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import torch
from onnx import TensorProto, helper

from ramiel.bench import write_report
from ramiel.lowering.rnn import GATES

CONFIGS = [
    ("LSTM", 64, 50, "forward"),
    ("LSTM", 128, 100, "forward"),
    ("LSTM", 128, 100, "bidirectional"),
    ("GRU", 64, 50, "forward"),
    ("GRU", 128, 100, "bidirectional"),
    ("RNN", 128, 100, "forward"),
]
INPUT = 32


def _model(kind: str, hidden: int, steps: int, direction: str, seed: int = 0):
    """One ONNX node with random constant weights, and its input."""
    rng = np.random.default_rng(seed)
    dirs = 2 if direction == "bidirectional" else 1
    g = GATES[kind]
    x = rng.standard_normal((steps, 1, INPUT)).astype(np.float32)
    scale = 1.0 / np.sqrt(hidden)  # PyTorch's init range: the recurrence stays contracting
    w = (rng.uniform(-1, 1, (dirs, g * hidden, INPUT)) * scale).astype(np.float32)
    r = (rng.uniform(-1, 1, (dirs, g * hidden, hidden)) * scale).astype(np.float32)
    b = (rng.standard_normal((dirs, 2 * g * hidden)) * 0.2).astype(np.float32)
    attrs = {"hidden_size": hidden, "direction": direction}
    if kind == "GRU":
        attrs["linear_before_reset"] = 1  # what torch.gru computes
    node = helper.make_node(kind, ["X", "W", "R", "B"], ["Y", "Y_h"], **attrs)
    graph = helper.make_graph(
        [node],
        "rnn",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, x.shape)],
        [
            helper.make_tensor_value_info("Y", TensorProto.FLOAT, [steps, dirs, 1, hidden]),
            helper.make_tensor_value_info("Y_h", TensorProto.FLOAT, [dirs, 1, hidden]),
        ],
        [onnx.numpy_helper.from_array(a, n) for a, n in ((w, "W"), (r, "R"), (b, "B"))],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), x


def _compile(model: onnx.ModelProto, fused: bool):
    """The sequential module of ``model`` with the fused lowering, or with the time loop."""
    import ramiel
    import ramiel.lowering.rnn as rnn

    saved = rnn._fused
    if not fused:
        rnn._fused = lambda _node: False  # type: ignore[assignment]
    try:
        return ramiel.compile(model, clusters=1)
    finally:
        rnn._fused = saved  # type: ignore[assignment]


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--out", help="also write the table to this file")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    lines = [
        f"# ONNX LSTM/GRU/RNN lowerings, {datetime.date.today().isoformat()}, "
        f"{os.cpu_count()} cpus, torch {torch.__version__}, python {platform.python_version()}, "
        f"1 intra-op thread, batch 1, input size {INPUT}; load average before: "
        f"{_load()}",
        "# fused: torch.lstm/gru/rnn_tanh (weights reordered at compile time); loop: "
        "ops.recurrent; ms median [25-75 %] of interleaved runs",
        f"{'cell':<5} {'hidden':>6} {'steps':>5} {'direction':<13} {'fused ms':>20} "
        f"{'loop ms':>20} {'loop/fused':>10}",
    ]
    print("\n".join(lines))
    with torch.inference_mode():
        for kind, hidden, steps, direction in CONFIGS:
            model, x = _model(kind, hidden, steps, direction)
            so = ort.SessionOptions()
            so.intra_op_num_threads = 1
            ref = ort.InferenceSession(model.SerializeToString(), so).run(None, {"X": x})
            compiled = {k: _compile(model, k == "fused") for k in ("fused", "loop")}
            xt = torch.from_numpy(x)
            runs = {k: (lambda m=m, xt=xt: m.sequential(xt)) for k, m in compiled.items()}
            code = Path(compiled["fused"].result.sequential_path).read_text()
            assert ("torch." + kind.lower()) in code or "torch.rnn_tanh" in code, code
            assert "ops.recurrent" in Path(compiled["loop"].result.sequential_path).read_text()
            for k, run in runs.items():
                got = run()
                for g, e in zip(got, ref, strict=True):
                    err = float(np.max(np.abs(g.numpy() - e)) / max(np.max(np.abs(e)), 1e-6))
                    assert err < 1e-3, f"{kind} {k}: error {err} against onnxruntime"
                run()  # warm-up
            times: dict[str, list[float]] = {k: [] for k in runs}
            for _ in range(args.repeats):
                for k, run in runs.items():
                    t = time.perf_counter()
                    run()
                    times[k].append((time.perf_counter() - t) * 1e3)

            def show(ts: list[float]) -> str:
                q = statistics.quantiles(ts, n=4)
                return f"{statistics.median(ts):7.2f} [{q[0]:6.2f}-{q[2]:6.2f}]"

            ratio = statistics.median(times["loop"]) / statistics.median(times["fused"])
            line = (
                f"{kind:<5} {hidden:>6} {steps:>5} {direction:<13} {show(times['fused']):>20} "
                f"{show(times['loop']):>20} {ratio:>10.2f}"
            )
            print(line, flush=True)
            lines.append(line)
            for m in compiled.values():
                m.close()
    return write_report(lines, args.out, f"# load average after: {_load()}")


if __name__ == "__main__":
    raise SystemExit(main())
