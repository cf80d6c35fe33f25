"""Benchmark of the graph rewrites: each pass's effect on the models it changes.

For every model and every rewrite pass that changes its program, three configurations are timed
side by side (each in a process of its own, round robin, interleaved; ``ramiel.bench``'s
``measure_interleaved``), ``--threads`` intra-op threads each (default 1; on 2 cores the
default program of most models is the sequential module with 2):

* ``all``: Ramiel's sequential module with every rewrite (the default program),
* ``no-<pass>``: the same without that one pass,
* ``ort-<N>t``: onnxruntime, the same threads (its default graph optimisations, spinning off).

The table gives medians with their 95 % intervals, the pass's speed-up (``no-<pass>`` /
``all``) and both against onnxruntime, and the ops the pass removed or created. The zoo models
get seeded random weights (``randomize_weights``), as in the tests. The load average is
recorded before and after: this machine is shared, so compare within one row only.

    python bench/rewrites.py                          # default models, every rewrite
    python bench/rewrites.py light_resnet50 hf_bert --passes fold-into-weights --out FILE.md
    python bench/rewrites.py light_inception_v2 --passes combine-parallel-convs --threads 2
"""

from __future__ import annotations

import argparse
import collections
import os
import shlex
import sys
import tempfile
import time

import numpy as np
import onnx

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

DEFAULT_MODELS = (
    "light_resnet50",
    "light_inception_v2",
    "light_densenet121",
    "ramiel_inception",
    "ramiel_transformer",
    "hf_bert",
    "hf_vit",
    "hf_resnet50",
    "hf_mobilenet_v2",
    "hf_efficientnet_b0",
    "hf_convnext",
)


def _inplace_count(ir_path: str) -> int:
    with open(ir_path) as f:
        return sum("ramiel.inplace" in line for line in f)


def _model_file(name: str, work: str) -> str:
    """The ONNX file of a bench model name (zoo models with random weights)."""
    from ramiel.bench import resolve_models
    from ramiel.models import randomize_weights

    spec = resolve_models([name])[0]
    path = spec.resolve()
    if spec.project is None:  # a zoo model: seeded random weights
        m = randomize_weights(onnx.load(path), max_elements=1 << 22)
        path = os.path.join(work, f"{spec.name}.onnx")
        onnx.save(m, path)
    return path


def _feeds(path: str) -> dict[str, np.ndarray]:
    from ramiel.importer import load_model

    m = load_model(path)
    inits = {t.name for t in m.graph.initializer}
    rng = np.random.default_rng(0)
    out = {}
    for x in m.graph.input:
        if x.name in inits:
            continue
        tt = x.type.tensor_type
        shape = [d.dim_value for d in tt.shape.dim]
        dt = onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type)
        if np.issubdtype(dt, np.integer):
            out[x.name] = (
                np.ones(shape, dt) if "mask" in x.name else rng.integers(0, 100, shape).astype(dt)
            )
        else:
            out[x.name] = rng.standard_normal(shape).astype(dt)
    return out


def bench_model(name: str, passes: list[str], work: str, plan, threads: int = 1) -> list[str]:  # type: ignore[no-untyped-def]
    from ramiel.bench import Isolated, Recipe, load_average, measure_interleaved
    from ramiel.compiler import CompileOptions, compile_model

    path = _model_file(name, work)
    feeds = _feeds(path)
    base = compile_model(path, os.path.join(work, name, "all"), CompileOptions(clusters=1))
    base_ops = collections.Counter(base.op_counts())
    rows = []
    for p in passes:
        other = compile_model(
            path, os.path.join(work, name, p), CompileOptions(clusters=1, disable=(p,))
        )
        ops = collections.Counter(other.op_counts())
        diff = {k: base_ops[k] - ops[k] for k in set(ops) | set(base_ops) if base_ops[k] != ops[k]}
        inplace = _inplace_count(base.ir_path) - _inplace_count(other.ir_path)
        if not diff and not inplace:
            continue
        what = ", ".join(f"{k} {v:+d}" for k, v in sorted(diff.items()))
        if inplace:
            what = (what + ", " if what else "") + f"{inplace} ops in place"
        load0 = load_average()[0]
        ort = f"ort-{threads}t"
        fns = {
            "all": Isolated(Recipe("seq", feeds, [], result=base, threads=threads)),
            f"no-{p}": Isolated(Recipe("seq", feeds, [], result=other, threads=threads)),
            ort: Isolated(Recipe("ort", feeds, [], path=path, threads=threads)),
        }
        try:
            for f in fns.values():
                f.wait_ready()
            t = measure_interleaved(fns, plan)
        finally:
            for f in fns.values():
                f.close()
        load1 = load_average()[0]
        a, b, o = t["all"], t[f"no-{p}"], t[ort]

        def cell(x):  # type: ignore[no-untyped-def]
            return f"{x.median:.2f} [{x.ci[0]:.2f}, {x.ci[1]:.2f}]"

        rows.append(
            f"| {name} | {p} | {what} | {cell(a)} | {cell(b)} | {cell(o)} | "
            f"{b.median / a.median:.3f} | {a.median / o.median:.2f} | {b.median / o.median:.2f} "
            f"| {a.n} | {load0:.1f} / {load1:.1f} |"
        )
        print(rows[-1], flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    from ramiel.bench import Plan
    from ramiel.passes import REWRITE_PASSES

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="*", default=list(DEFAULT_MODELS))
    ap.add_argument("--passes", default=",".join(REWRITE_PASSES))
    ap.add_argument("--out", default="bench/results/rewrites.md")
    ap.add_argument("--budget", type=float, default=40.0, help="seconds of timing per row")
    ap.add_argument(
        "--threads", type=int, default=1, help="intra-op threads of every configuration"
    )
    args = ap.parse_args(argv)
    if not 1 <= args.threads <= (os.cpu_count() or 1):
        ap.error(f"--threads must be between 1 and the {os.cpu_count()} cores, not {args.threads}")
    passes = [p for p in args.passes.split(",") if p]
    plan = Plan(min_reps=15, max_reps=101, budget_s=args.budget, rel_ci=0.01, attempts=1)
    head = [
        f"# Graph rewrites, seq-{args.threads}t ({time.strftime('%Y-%m-%d %H:%M')})",
        "",
        f"Command: `{shlex.join(['python', 'bench/rewrites.py', *(argv if argv is not None else sys.argv[1:])])}`."
        " Medians in ms with 95 % intervals, each configuration in its own process, interleaved;"
        " speed-up = no-pass / all; load = 1-minute load average before / after the row"
        f" ({os.cpu_count()} cores).",
        "",
        f"| model | pass | ops changed by the pass | all ms | no-pass ms | ort-{args.threads}t ms | speed-up "
        "| all / ort | no-pass / ort | n | load |",
        "|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    rows = []
    with tempfile.TemporaryDirectory(prefix="ramiel-rewrites-") as work:
        for m in args.models:
            rows += bench_model(m, passes, work, plan, args.threads)
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as f:
        f.write("\n".join(head + rows) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
