"""The compiler's pass pipeline and how it runs: :data:`DEFAULT_PIPELINE`, :func:`compile_pipeline`,
:func:`run_passes`, and the stages the other tools take from it (:func:`clean_up_passes`,
:func:`late_passes`, :func:`profile_passes`).

``ramiel compile`` (:func:`ramiel.compiler.compile_model`), the batch-size generalisation
(:mod:`ramiel.dynamic_batch`), the profiler and ``ramiel profile --compare-ort`` build their pass
lists from :data:`DEFAULT_PIPELINE` and run them through :func:`run_passes`, which verifies the IR
after every pass and names the pass that broke it, as ``ramiel-opt`` does (MLIR's pass manager
verifies after each pass the same way). ``ramiel-opt --help`` and the README show the string.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.arg_spec import ArgSpec, parse_pipeline

from ramiel.parsing import IncrementalVerifier
from ramiel.passes import LATE_REWRITES, PASSES, REWRITE_PASSES

#: ``ramiel compile``'s passes from the imported ``onnx`` IR to the clustered ``cluster`` IR, with
#: its default options, in ``ramiel-opt``'s pipeline syntax (``ramiel-opt -p '...'``): the clean-up
#: (``constant-fold,dce``, the graph rewrites of :data:`~ramiel.passes.REWRITE_PASSES` but the late
#: ones, ``dce``), then the clustering (``hypercluster`` to ``clone,dce``; ``--clusters`` defaults to
#: the machine's cores, 2 here), then the :data:`~ramiel.passes.LATE_REWRITES`. The compiler's
#: options change it as :func:`compile_pipeline` says; ``--lower-to-torchpy`` and
#: ``ramiel-translate --to-python`` follow.
DEFAULT_PIPELINE = (
    "constant-fold,dce,fuse-layer-norm,fuse-gelu,fuse-attention,fuse-channel-shuffle,"
    "fuse-pad-into-conv,fold-into-weights,combine-parallel-convs,dce,"
    "hypercluster,assign-layout,estimate-cost,linear-cluster,merge{clusters=2},clone,dce,"
    "prepack-conv,prepack-matmul,inplace"
)

#: The first pass of the clustering stage of :data:`DEFAULT_PIPELINE` (the clean-up ends before it).
CLUSTERING_START = "hypercluster"


def compile_pipeline(
    rewrites: Sequence[str] = REWRITE_PASSES,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    clone: bool = True,
    intra_op_threads: bool = False,
) -> list[ModulePass]:
    """The passes of :data:`DEFAULT_PIPELINE` as the compiler's options change it.

    Args:
        rewrites: the graph rewrites to run (:meth:`ramiel.compiler.CompileOptions.rewrites`);
            the others are left out, and so is the clean-up's second ``dce`` when no rewrite of
            the clean-up is left.
        options: pass name -> option name -> value, replacing the string's options of that pass
            (a value ``None``: the pass's default), e.g. ``{"merge": {"clusters": 4}}``.
        clone: keep ``clone`` and the ``dce`` after it.
        intra_op_threads: add ``intra-op-threads`` (its options from ``options``) after the
            clustering, before the late rewrites.

    Raises:
        ValueError: an option the pass does not have, or a value of the wrong type (xDSL's
            message).
    """
    options = options or {}
    kept: list[ArgSpec] = []
    dropped_clone = False
    for spec in parse_pipeline(DEFAULT_PIPELINE):
        name = spec.name
        if intra_op_threads and name in LATE_REWRITES:
            kept.append(_with_options(ArgSpec("intra-op-threads", {}), options))
            intra_op_threads = False
        if name in REWRITE_PASSES and name not in rewrites:
            continue
        if name == "clone" and not clone:
            dropped_clone = True
            continue
        if name == "dce" and (dropped_clone or (kept and kept[-1].name == "dce")):
            dropped_clone = False
            continue
        kept.append(_with_options(spec, options))
    if intra_op_threads:
        kept.append(_with_options(ArgSpec("intra-op-threads", {}), options))
    return [PASSES[s.name]().from_spec(s) for s in kept]


def _with_options(spec: ArgSpec, options: Mapping[str, Mapping[str, Any]]) -> ArgSpec:
    params = dict(spec.parameters)
    for key, value in options.get(spec.name, {}).items():
        if value is None:
            params.pop(key, None)
        else:
            params[key] = (value,)
    return ArgSpec(spec.name, params)


def split_clean_up(passes: Sequence[ModulePass]) -> tuple[list[ModulePass], list[ModulePass]]:
    """``passes`` (of :func:`compile_pipeline`) as (the clean-up, the rest from
    :data:`CLUSTERING_START` on): the compiler checks that the model can be lowered between them."""
    at = next((i for i, p in enumerate(passes) if p.name == CLUSTERING_START), len(passes))
    return list(passes[:at]), list(passes[at:])


def run_passes(
    module: ModuleOp,
    passes: Sequence[ModulePass],
    ctx: Context,
    verifier: IncrementalVerifier | None = None,
) -> None:
    """Apply ``passes`` to ``module`` in order, verifying the IR after each one (the ops the pass
    changed and their neighbours: :class:`~ramiel.parsing.IncrementalVerifier`; every op after
    the last pass). ``ctx``: the session's context (:func:`ramiel.context.make_context`), whose
    weight stores the passes read the module's weights from and add new tensors to (the caller
    writes them with the IR). ``verifier``: one that has verified ``module`` as it is (after
    the import, or an earlier stage), so that the first pass's check covers only what it
    changed; default a fresh one.

    Raises:
        LocatedVerifyError: the IR is invalid after a pass; the reason starts with
            ``IR invalid after pass '<name>'`` (``IR invalid after the passes '<a>', ...``
            where only the final check of every op finds it) and the error is located at the
            failing op.
    """
    verifier = verifier or IncrementalVerifier()
    for p in passes:
        p.apply(ctx, module)
        verifier.after_pass(module, p.name)
    verifier.after_pipeline(module, [p.name for p in passes])


def clean_up_passes(rewrites: Sequence[str]) -> list[ModulePass]:
    """The clean-up stage of :data:`DEFAULT_PIPELINE`: ``--constant-fold --dce``, then the graph
    rewrites named in ``rewrites`` (:meth:`ramiel.compiler.CompileOptions.rewrites`) but
    :data:`~ramiel.passes.LATE_REWRITES`, and ``--dce`` again (when a rewrite ran)."""
    return split_clean_up(compile_pipeline(rewrites))[0]


def late_passes(rewrites: Sequence[str]) -> list[ModulePass]:
    """The :data:`~ramiel.passes.LATE_REWRITES` named in ``rewrites``: the end of
    :data:`DEFAULT_PIPELINE`, after clustering (they depend on which tensors cross channels)."""
    return [p for p in compile_pipeline(rewrites) if p.name in LATE_REWRITES]


def profile_passes(
    layout: str = "auto", rewrites: Sequence[str] = REWRITE_PASSES
) -> list[ModulePass]:
    """What ``ramiel profile`` runs before timing the ops: the clean-up of
    :data:`DEFAULT_PIPELINE` with the graph rewrites named in ``rewrites`` (default: those
    ``ramiel compile`` runs), and its ``assign-layout`` with ``format=layout``, so that an op is
    timed as the compiler gives it: in its memory format, and with what the rewrites put into it
    (a Conv that took a BatchNormalization has a bias; its profile key differs from the
    unfolded one, and a compile with the default rewrites would not find the unfolded one)."""
    passes = compile_pipeline(rewrites, {"assign-layout": {"format": layout}})
    return [*clean_up_passes(rewrites), *(p for p in passes if p.name == "assign-layout")]
