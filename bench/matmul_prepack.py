"""Matrix products with a constant weight at few rows: torch's kernels against onnxruntime's.

Usage::

    python bench/matmul_prepack.py [--threads 1] [--calls 200] [--shapes M,K,N ...]

For each shape, ``x (1, M, K) @ W (K, N) + b`` as a generated module may run it -- ``torch.matmul``
then ``add_`` (what the lowering prints without ``--prepack-matmul``), ``F.linear`` with the (N,
K) transpose, MKL's packed GEMM (``torch.ops.mkl._mkl_linear``), oneDNN with the weight reordered
once (``torch.ops.mkldnn._linear_pointwise``, what ``ops.matmul_prepacked`` runs) -- and
onnxruntime on the two-node ONNX graph MatMul + Add (sequential executor, no spinning), all
in this process with ``--threads`` intra-op threads. Prints the median µs of ``--calls`` hot
calls per variant, after 20 warm-up calls. Default shapes: BERT-base and ViT-Base at batch 1
(32 and 197 tokens), the project transformer's (64 tokens, hidden 256), and single rows.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

DEFAULT_SHAPES = [
    (32, 768, 768), (32, 768, 3072), (32, 3072, 768), (197, 768, 768), (197, 768, 3072),
    (64, 256, 256), (64, 256, 1024), (64, 1024, 256), (16, 256, 256), (8, 512, 512),
    (1, 768, 768), (1, 2048, 1000),
]  # fmt: skip


def _median_us(f, calls: int) -> float:
    for _ in range(20):
        f()
    ts = []
    for _ in range(calls):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e6


def _row(m: int, k: int, n: int, threads: int, calls: int) -> list[float]:
    """Median µs per variant for x (1, m, k) @ W (k, n) + b (see the module docstring)."""
    import onnxruntime as ort
    import torch
    import torch.nn.functional as F
    from onnx import TensorProto, helper, numpy_helper

    x, w, b = torch.randn(1, m, k), torch.randn(k, n), torch.randn(n)
    wt = w.t().contiguous()
    mkl = torch.ops.mkl._mkl_reorder_linear_weight(wt, m)
    dnnl = torch.ops.mkldnn._reorder_linear_weight(wt, m)
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "W"], ["t"]),
            helper.make_node("Add", ["t", "b"], ["y"]),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, m, k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w.numpy(), "W"), numpy_helper.from_array(b.numpy(), "b")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    so = ort.SessionOptions()
    so.intra_op_num_threads, so.inter_op_num_threads = threads, 1
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    xn = x.numpy()
    with torch.no_grad():
        return [
            _median_us(lambda: torch.matmul(x, w).add_(b), calls),
            _median_us(lambda: F.linear(x, wt, b), calls),
            _median_us(lambda: torch.ops.mkl._mkl_linear(x, mkl, wt, b, m), calls),
            _median_us(
                lambda: torch.ops.mkldnn._linear_pointwise(x, dnnl, b, "none", [], ""),
                calls,
            ),
            _median_us(lambda: sess.run(None, {"x": xn}), calls),
        ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--shapes", nargs="*", metavar="M,K,N")
    args = ap.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

    import torch

    torch.set_num_threads(args.threads)
    shapes = [tuple(int(v) for v in s.split(",")) for s in args.shapes or []] or DEFAULT_SHAPES
    cols = ["matmul+add_", "F.linear", "mkl packed", "oneDNN packed", "onnxruntime"]
    print(f"# python bench/matmul_prepack.py {' '.join(sys.argv[1:] if argv is None else argv)}")
    print(f"# torch {torch.__version__}, {args.threads} thread(s); median µs of {args.calls} calls")
    print(f"{'M x K @ K x N':<18}" + "".join(f"{c:>15}" for c in cols))
    for m, k, n in shapes:
        times = _row(m, k, n, args.threads, args.calls)
        print(f"{f'{m}x{k} @ {k}x{n}':<18}" + "".join(f"{t:>15.0f}" for t in times), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
