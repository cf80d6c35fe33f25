"""Ramiel passes, one module per pass, named after the pass (``dce.py`` <-> ``--dce``).

:data:`PASSES` maps each pass name to a factory returning the pass class, so that tools import a
pass only when it is used.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from xdsl.passes import ModulePass

_MODULES: dict[str, tuple[str, str]] = {
    "dce": ("ramiel.passes.dce", "DeadCodeElimination"),
    "constant-fold": ("ramiel.passes.constant_fold", "ConstantFold"),
    "fold-into-weights": ("ramiel.passes.fold_into_weights", "FoldIntoWeights"),
    "fuse-gelu": ("ramiel.passes.fuse_gelu", "FuseGelu"),
    "fuse-layer-norm": ("ramiel.passes.fuse_layer_norm", "FuseLayerNorm"),
    "fuse-attention": ("ramiel.passes.fuse_attention", "FuseAttention"),
    "fuse-channel-shuffle": ("ramiel.passes.fuse_channel_shuffle", "FuseChannelShuffle"),
    "prepack-conv": ("ramiel.passes.prepack_conv", "PrepackConv"),
    "inplace": ("ramiel.passes.inplace", "Inplace"),
    "estimate-cost": ("ramiel.passes.estimate_cost", "EstimateCost"),
    "linear-cluster": ("ramiel.passes.linear_cluster", "LinearCluster"),
    "merge": ("ramiel.passes.merge", "Merge"),
    "clone": ("ramiel.passes.clone", "Clone"),
    "schedule-report": ("ramiel.passes.schedule_report", "ScheduleReport"),
    "hypercluster": ("ramiel.passes.hypercluster", "Hypercluster"),
    "intra-op-threads": ("ramiel.passes.intra_op_threads", "IntraOpThreads"),
    "assign-layout": ("ramiel.passes.assign_layout", "AssignLayout"),
    "lower-to-torchpy": ("ramiel.passes.lower_to_torchpy", "LowerToTorchpy"),
    "own-outputs": ("ramiel.passes.own_outputs", "OwnOutputs"),
    "compile-segments": ("ramiel.passes.compile_segments", "CompileSegments"),
}


REWRITE_PASSES: tuple[str, ...] = (
    "fuse-layer-norm",
    "fuse-gelu",
    "fuse-attention",
    "fuse-channel-shuffle",
    "fold-into-weights",
    "prepack-conv",
    "inplace",
)
"""The graph rewrites ``ramiel compile`` runs by default, in this order, after ``--constant-fold
--dce`` (those of :data:`LATE_REWRITES` after clustering instead); each is switched off by
``--no-<name>`` or ``CompileOptions.disable``."""

LATE_REWRITES: frozenset[str] = frozenset(["prepack-conv", "inplace"])
"""Rewrites that depend on the clustering (which tensors cross channels): run last, before
lowering."""


def _factory(module: str, cls: str) -> Callable[[], type[ModulePass]]:
    return lambda: getattr(importlib.import_module(module), cls)


PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    name: _factory(mod, cls) for name, (mod, cls) in _MODULES.items()
}
"""Pass name -> factory of the pass class."""


def register(name: str, module: str, cls: str) -> None:
    """Register a pass implemented by ``module.cls`` under ``name``."""
    _MODULES[name] = (module, cls)
    PASSES[name] = _factory(module, cls)
