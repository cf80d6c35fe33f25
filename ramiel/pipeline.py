"""The compiler's pass stages and how they run: :func:`run_passes`, :func:`clean_up_passes`,
:func:`late_passes`.

``ramiel compile`` (:func:`ramiel.compiler.compile_model`), the batch-size generalisation
(:mod:`ramiel.dynamic_batch`), the profiler and ``ramiel profile --compare-ort`` build their pass
lists from here and run them through :func:`run_passes`, which verifies the IR after every pass
and names the pass that broke it, as ``ramiel-opt`` does (MLIR's pass manager verifies after each
pass the same way).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ramiel.dialects.registry import make_context
from ramiel.parsing import LocatedVerifyError, verify_located
from ramiel.passes import LATE_REWRITES, PASSES
from ramiel.passes.constant_fold import ConstantFold
from ramiel.passes.dce import DeadCodeElimination


def run_passes(module: ModuleOp, passes: Sequence[ModulePass]) -> None:
    """Apply ``passes`` to ``module`` in order, verifying the IR after each one.

    Raises:
        LocatedVerifyError: the IR is invalid after a pass; the reason starts with
            ``IR invalid after pass '<name>'`` and the error is located at the failing op.
    """
    ctx = make_context()
    for p in passes:
        p.apply(ctx, module)
        try:
            verify_located(module)
        except LocatedVerifyError as e:
            e.reason = f"IR invalid after pass '{p.name}': {e.reason}"
            e.args = (e.reason,)
            raise


def clean_up_passes(rewrites: Sequence[str]) -> list[ModulePass]:
    """The clean-up stage: ``--constant-fold --dce``, then the graph rewrites named in
    ``rewrites`` (:meth:`ramiel.compiler.CompileOptions.rewrites`) but
    :data:`~ramiel.passes.LATE_REWRITES`, and ``--dce`` again."""
    names = [n for n in rewrites if n not in LATE_REWRITES]
    passes = [PASSES[name]()() for name in names]
    return [
        ConstantFold(),
        DeadCodeElimination(),
        *passes,
        *([DeadCodeElimination()] if passes else []),
    ]


def late_passes(rewrites: Sequence[str]) -> list[ModulePass]:
    """The :data:`~ramiel.passes.LATE_REWRITES` named in ``rewrites``: run after clustering
    (they depend on which tensors cross channels), before lowering."""
    return [PASSES[name]()() for name in rewrites if name in LATE_REWRITES]
