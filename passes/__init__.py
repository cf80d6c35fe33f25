"""Ramiel passes, one module per pass, named after the pass (``dce.py`` <-> ``--dce``).

:data:`PASSES` maps each pass name to a factory returning the pass class, so that tools import a
pass only when it is used.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable
from typing import Any, Literal, get_args, get_origin, get_type_hints

from xdsl.passes import ModulePass
from xdsl.utils.arg_spec import ArgSpec

from ramiel.errors import RamielError

_MODULES: dict[str, tuple[str, str]] = {
    "dce": ("ramiel.passes.dce", "DeadCodeElimination"),
    "constant-fold": ("ramiel.passes.constant_fold", "ConstantFold"),
    "fold-into-weights": ("ramiel.passes.fold_into_weights", "FoldIntoWeights"),
    "combine-parallel-convs": ("ramiel.passes.combine_parallel_convs", "CombineParallelConvs"),
    "fuse-gelu": ("ramiel.passes.fuse_gelu", "FuseGelu"),
    "fuse-layer-norm": ("ramiel.passes.fuse_layer_norm", "FuseLayerNorm"),
    "fuse-attention": ("ramiel.passes.fuse_attention", "FuseAttention"),
    "fuse-channel-shuffle": ("ramiel.passes.fuse_channel_shuffle", "FuseChannelShuffle"),
    "fuse-pad-into-conv": ("ramiel.passes.fuse_pad_into_conv", "FusePadIntoConv"),
    "prepack-conv": ("ramiel.passes.prepack_conv", "PrepackConv"),
    "prepack-matmul": ("ramiel.passes.prepack_matmul", "PrepackMatmul"),
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
    "fuse-pad-into-conv",
    "fold-into-weights",
    "combine-parallel-convs",
    "prepack-conv",
    "prepack-matmul",
    "inplace",
)
"""The graph rewrites ``ramiel compile`` runs by default, in this order, after ``--constant-fold
--dce`` (those of :data:`LATE_REWRITES` after clustering instead); each is switched off by
``--no-<name>`` or ``CompileOptions.disable``."""

LATE_REWRITES: frozenset[str] = frozenset(["prepack-conv", "prepack-matmul", "inplace"])
"""Rewrites that depend on the clustering (which tensors cross channels): run last, before
lowering."""


def _factory(module: str, cls: str) -> Callable[[], type[ModulePass]]:
    return lambda: getattr(importlib.import_module(module), cls)


PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    name: _factory(mod, cls) for name, (mod, cls) in _MODULES.items()
}
"""Pass name -> factory of the pass class."""


def literal_options(cls: type) -> dict[str, tuple[Any, ...]]:
    """Option name -> allowed values, for each option of the pass dataclass ``cls`` typed
    ``Literal[...]`` (or ``Literal[...] | None``)."""
    hints = get_type_hints(cls)
    out: dict[str, tuple[Any, ...]] = {}
    for f in dataclasses.fields(cls):
        t = hints.get(f.name)
        if get_origin(t) is Literal:
            out[f.name] = get_args(t)
        else:
            lits = [a for a in get_args(t) if get_origin(a) is Literal]
            if lits:
                out[f.name] = tuple(v for a in lits for v in get_args(a))
    return out


def check_choice(pass_name: str, option: str, allowed: tuple[Any, ...], value: Any) -> None:
    """Raise :class:`RamielError` naming the pass, the option and ``allowed`` unless ``value`` is
    one of ``allowed`` (or ``None``: an unset optional option)."""
    if value is not None and value not in allowed:
        raise RamielError(
            f"{pass_name}: option '{option.replace('_', '-')}' must be one of "
            f"{', '.join(map(str, allowed))}, not {value!r}"
        )


class TypedOptions(ModulePass):
    """Base of a pass whose ``Literal[...]`` options are checked when the pass is made, from a
    pipeline spec (``--assign-layout{format=nhwc}``, before any pass runs) or in Python
    (``AssignLayout(format="nhwc")``): a value outside the literal's is a :class:`RamielError`
    that names the pass, the option and the allowed values."""

    def __post_init__(self) -> None:
        for option, allowed in literal_options(type(self)).items():
            check_choice(self.name, option, allowed, getattr(self, option))

    @classmethod
    def from_spec(cls, spec: ArgSpec) -> Any:
        params = spec.normalize_parameter_names().parameters
        for option, allowed in literal_options(cls).items():
            given = params.get(option)
            if given is not None and len(given) == 1:
                check_choice(cls.name, option, allowed, given[0])
        return super().from_spec(spec)


def register(name: str, module: str, cls: str) -> None:
    """Register a pass implemented by ``module.cls`` under ``name``."""
    _MODULES[name] = (module, cls)
    PASSES[name] = _factory(module, cls)
