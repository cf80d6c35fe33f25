"""``ramiel profile``: measure every op of a model in PyTorch, into a profile database.

The paper's profile database: each compute op of the cleaned-up ``onnx`` IR is run alone, through
the same lowering rule the code generator uses (:mod:`ramiel.lowering`, executed eagerly), on
random inputs of its static shapes (constant inputs take their real values), ``repeat`` times after
one warm-up with one intra-op thread; the median time in µs is stored under
:func:`ramiel.cost_model.profile_key` (op type, operand types, attributes). Identical ops are
measured once. ``--estimate-cost{profile=FILE}`` and ``ramiel compile --profile FILE`` use it.
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any

import torch

from ramiel.cost_model import ProfileDB, profile_key
from ramiel.lowering.api import lower_node
from ramiel.lowering.eval_emitter import EvalEmitter, EvalValue


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


def profile_model(
    model: str,
    out: str,
    repeat: int = 10,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
) -> int:
    """Profile every compute op of ``model`` into the JSON database ``out``; returns the op count.

    An existing database is extended (entries for the same keys are replaced).
    """
    import tempfile

    from ramiel.clustering import compute_ops, main_func
    from ramiel.compiler import _run_passes
    from ramiel.importer import ImportOptions, import_onnx
    from ramiel.passes.constant_fold import ConstantFold
    from ramiel.passes.dce import DeadCodeElimination
    from ramiel.passes.lower_to_torchpy import _Lowering
    from ramiel.weights import set_ir_base_dir

    db = ProfileDB.load(out) if os.path.exists(out) else ProfileDB(out, {})
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(0)
    with tempfile.TemporaryDirectory() as d:
        set_ir_base_dir(d)
        module = import_onnx(
            model,
            ImportOptions(
                input_shapes=input_shapes,
                weights_path=os.path.join(d, "w.safetensors"),
                weights_ref="w.safetensors",
            ),
        )
        _run_passes(module, [ConstantFold(), DeadCodeElimination()])
        lowering = _Lowering(module)
        measured: dict[str, float] = {}
        ops = compute_ops(main_func(module).body.block)
        for op in ops:
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
                    args.append(em.wrap(_random(info.shape or (), info.dtype, gen)))
            times = []
            with torch.inference_mode():
                lower_node(node, args, em)  # warm-up
                for _ in range(repeat):
                    t = time.perf_counter()
                    lower_node(node, args, em)
                    times.append((time.perf_counter() - t) * 1e6)
            times.sort()
            measured[key] = round(times[len(times) // 2], 2)
    db.times.update(measured)
    db.save(
        {
            "machine": platform.processor() or platform.machine(),
            "cores": os.cpu_count(),
            "torch": torch.__version__,
            "date": date.today().isoformat(),
            "threads": 1,
            "repeat": repeat,
        }
    )
    return len(ops)
