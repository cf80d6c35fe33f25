"""``ramiel profile``: measure every op of a model in PyTorch, into a profile database.

The paper's profile database: each compute op of the cleaned-up ``onnx`` IR is run alone, through
the same lowering rule the code generator uses (:mod:`ramiel.lowering`, executed eagerly), on
random inputs of its static shapes in the memory format ``--assign-layout`` gives the op
(constant inputs take their real values), ``repeat`` times after
one warm-up, with 1 and each intra-op thread count of ``threads`` (default: the usable cores;
the counts alternate per op, so that drift of a shared machine hits them alike); the median time in
µs is stored under :func:`ramiel.cost_model.profile_key` (op type, operand types, attributes),
with ``@t<N>`` appended for N > 1 threads. Identical ops are measured once. The ops in the
regions of If, Loop and Scan are measured one by one (a region op's cost follows from theirs).
``--estimate-cost{profile=FILE}``, ``--intra-op-threads{profile=FILE}`` and ``ramiel compile
--profile FILE`` use it.

A busy machine makes per-op times wrong by large factors, silently: an op whose times spread
more than :data:`NOISY_SPREAD` of their median is timed again (up to :data:`RETRIES` times), the
cores other processes kept busy are measured as ``ramiel bench`` does (:class:`ProfileNoise`,
recorded in the database's ``meta``), and ``ramiel profile`` warns when the result is not
trustworthy.
"""

from __future__ import annotations

import os
import platform
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

import torch

from ramiel.clustering import compute_ops, is_ambient, main_func
from ramiel.context import make_context
from ramiel.cost_model import ProfileDB, profile_key, threads_key, usable_cores
from ramiel.dialects.onnx import OnnxOp
from ramiel.dynamic_batch import batch_inputs
from ramiel.importer import ImportOptions, import_onnx, load_model
from ramiel.layout import CHANNELS_LAST, has_format
from ramiel.lowering.api import lower_node
from ramiel.lowering.eval_emitter import EvalEmitter, EvalValue
from ramiel.lowering.to_torchpy import Lowering
from ramiel.measure import CpuMeter
from ramiel.passes import REWRITE_PASSES


def _time_op(node, args, em, counts: list[int], repeat: int) -> dict[int, list[float]]:  # type: ignore[no-untyped-def]
    """``repeat`` times (µs) of one op per thread count, after one warm-up per count; the
    counts alternate, so that drift of a shared machine hits them alike."""
    times: dict[int, list[float]] = {n: [] for n in counts}
    with torch.inference_mode():
        for n in counts:  # warm-up (and oneDNN's primitive cache) per thread count
            torch.set_num_threads(n)
            lower_node(node, args, em)
        for _ in range(repeat):
            for n in counts:
                torch.set_num_threads(n)
                t = time.perf_counter()
                lower_node(node, args, em)
                times[n].append((time.perf_counter() - t) * 1e6)
    return times


class _TimingEmitter(EvalEmitter):
    """EvalEmitter without the pseudo-Python record (keeps the timing to the torch calls)."""

    def _record(self, target: str, args: tuple, kwargs: dict) -> EvalValue:
        return EvalValue(None, "t")


def _random(shape: tuple[int, ...], dtype: str, gen: torch.Generator) -> torch.Tensor:
    td = getattr(torch, dtype)
    if td.is_floating_point:
        return torch.randn(shape, generator=gen).to(td)
    if td == torch.bool:
        return torch.randint(0, 2, shape, generator=gen).bool()
    return torch.randint(0, 3, shape, generator=gen).to(td)


#: An op's timing is noisy when its interquartile range exceeds this share of its median.
NOISY_SPREAD = 0.25
#: Noisy ops are timed again up to this many times; the least spread timing is kept.
RETRIES = 2


@dataclass
class ProfileNoise:
    """How trustworthy a profile is: ``other_cores`` (cores other processes kept busy while it
    ran, as ``ramiel bench`` measures them; ``None`` where /proc is unreadable), ``retimed`` (ops
    timed again because their times spread more than :data:`NOISY_SPREAD` of the median) and
    ``noisy`` (ops still that spread after :data:`RETRIES` retries), out of ``ops``."""

    ops: int = 0
    retimed: int = 0
    noisy: int = 0
    other_cores: float | None = None

    def warning(self, busy_cores: float = 0.25) -> str | None:
        """A one-line warning when the per-op times are not trustworthy, else ``None``."""
        busy = self.other_cores is not None and self.other_cores > busy_cores
        if not busy and self.noisy <= max(1, self.ops // 10):
            return None
        load = f"other processes kept {self.other_cores:.2f} cores busy; " if busy else ""
        return (
            f"{load}{self.noisy} of {self.ops} ops kept times spread over "
            f"{NOISY_SPREAD:.0%} of their median after {RETRIES} retries: the profile may "
            "mislead --profile compiles; profile again on a quiet machine"
        )


def _spread(ts: list[float]) -> float:
    ts = sorted(ts)
    n = len(ts)
    med = ts[n // 2]
    return (ts[(3 * n) // 4] - ts[n // 4]) / med if med > 0 else 0.0


def profile_model(
    model: str,
    out: str,
    repeat: int = 10,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    threads: Sequence[int] | None = None,
    progress: Callable[[int, int], None] | None = None,
    noise: ProfileNoise | None = None,
    layout: str = "auto",
    rewrites: Sequence[str] = REWRITE_PASSES,
) -> int:
    """Profile every compute op of ``model`` into the JSON database ``out``; returns the op count.

    ``threads``: the intra-op thread counts to measure each op with (default ``(1, cores)``).
    ``layout``: the memory formats are assigned as ``--assign-layout{format=layout}`` would
    (the compile option of the same name); an op computing in channels-last is timed on
    channels-last inputs, under a key of its own (:func:`~ramiel.cost_model.profile_key`).
    ``rewrites``: the graph rewrites run first (:meth:`ramiel.compiler.CompileOptions.rewrites`;
    default: all of :data:`~ramiel.passes.REWRITE_PASSES`, as ``ramiel compile`` runs them), so
    that the ops timed are those the compiler costs (:func:`ramiel.pipeline.profile_passes`).
    An existing database is extended (entries for the same keys are replaced). ``progress`` is
    called with ``(ops done, ops)`` after each op. An op whose times spread more than
    :data:`NOISY_SPREAD` of their median (a busy machine) is timed again, up to
    :data:`RETRIES` times, keeping its least spread timing; ``noise`` (filled in if given) and
    the database's ``meta`` say how noisy the run was (:class:`ProfileNoise`).
    """
    from ramiel.pipeline import profile_passes, run_passes  # lazy: onnx.reference

    db = ProfileDB.load(out) if os.path.exists(out) else ProfileDB(out, {})
    if threads is not None and (not threads or min(threads) < 1):
        raise ValueError(f"thread counts must be at least 1, got {list(threads)}")
    # one thread always: it is the cost every pass reads (``ramiel.cost_us``)
    counts = sorted({1, *(threads or (1, usable_cores()))})
    caller_threads = torch.get_num_threads()
    gen = torch.Generator().manual_seed(0)
    # a dynamic batch dimension is bound as ramiel compile binds it (to 1, or --input-shape)
    onnx_model = load_model(model)
    plan = batch_inputs(onnx_model, input_shapes, None)
    with tempfile.TemporaryDirectory() as d:
        ctx = make_context(d)
        module = import_onnx(
            plan.model or onnx_model,
            ImportOptions(
                input_shapes=plan.bound_shapes,
                weights_path=os.path.join(d, "w.safetensors"),
                weights_ref="w.safetensors",
            ),
        )
        run_passes(module, profile_passes(layout, rewrites), ctx)
        lowering = Lowering(module, ctx.weights.of(module))
        measured: dict[str, float] = {}
        # the ops inside If/Loop/Scan are measured one by one; a region op's cost is derived
        # from theirs (ramiel.cost_model.region_cost_us)
        ops = [
            inner
            for top in compute_ops(main_func(module).body.block)
            for inner in top.walk()
            if not inner.regions and isinstance(inner, OnnxOp) and not is_ambient(inner)
        ]
        noise = noise if noise is not None else ProfileNoise()
        noise.ops = len(ops)
        meter = CpuMeter()
        for done, op in enumerate(ops, 1):
            if progress is not None:
                progress(done - 1, len(ops))
            key = profile_key(op)
            if key in measured:
                continue
            node = lowering.node_view(op)  # type: ignore[arg-type]
            em = _TimingEmitter()
            args: list[Any] = []
            for info in node.inputs:
                if info is None:
                    args.append(None)
                elif info.const is not None:
                    args.append(em.wrap(torch.from_numpy(info.const.copy())))
                else:
                    t = _random(info.shape or (), info.dtype, gen)
                    if node.layout == CHANNELS_LAST and has_format(info.shape):
                        t = t.contiguous(memory_format=torch.channels_last)
                    args.append(em.wrap(t))
            best: dict[int, list[float]] | None = None
            for attempt in range(RETRIES + 1):
                times = _time_op(node, args, em, counts, repeat)
                worst = max(_spread(ts) for ts in times.values())
                if best is None or worst < max(_spread(ts) for ts in best.values()):
                    best = times
                if worst <= NOISY_SPREAD:
                    break
                noise.retimed += attempt == 0
            assert best is not None
            noise.noisy += max(_spread(ts) for ts in best.values()) > NOISY_SPREAD
            for n, ts in best.items():
                ts.sort()
                measured[threads_key(key, n)] = round(ts[len(ts) // 2], 2)
        noise.other_cores = meter.other_cores()
        if progress is not None:
            progress(len(ops), len(ops))
    torch.set_num_threads(caller_threads)
    db.times.update(measured)
    db.save(
        {
            "machine": platform.processor() or platform.machine(),
            "cores": os.cpu_count(),
            "torch": torch.__version__,
            "date": date.today().isoformat(),
            "threads": counts,
            "repeat": repeat,
            "other_cores": noise.other_cores,
            "retimed_ops": noise.retimed,
            "noisy_ops": noise.noisy,
        }
    )
    return len(ops)
