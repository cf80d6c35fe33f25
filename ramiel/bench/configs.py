"""The configurations ``ramiel bench`` times (:class:`Config`, :func:`configs_for`), the
compile-option variants (:func:`variants`) and the benchmark's plan (:class:`BenchPlan`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ramiel.layout import LayoutMode
from ramiel.measure import Plan
from ramiel.runtime.runner import BackendName


@dataclass(frozen=True)
class Config:
    """One way of running a model.

    Attributes:
        key: short unique name (``seq-1t``, ``par-threads-2x1``, ``ort-par-2``, ...).
        engine: ``ramiel-seq``, ``ramiel-par`` or ``ort``.
        clusters: workers (clusters) of a parallel module; 1 otherwise.
        threads: intra-op threads (per worker for ``ramiel-par``).
        backend: runtime backend of ``ramiel-par`` (``threads``/``processes``).
        ort_parallel: onnxruntime's ``ORT_PARALLEL`` executor with ``clusters`` inter-op threads.
        spinning: onnxruntime's pool threads spin between runs (its own default; the other
            onnxruntime configurations switch it off, see the report's method note).
        hybrid: ``ramiel-par`` compiled with ``--intra-op-threads{cores=threads}``: every op
            carries its own intra-op thread count (more while other clusters idle).
        tuned: the program ``ramiel tune`` chose for ``threads`` cores (:mod:`ramiel.tune`:
            the fastest of its candidates in a timing of its own, before this one).
        variant: ``""`` (the default compile options) or a key of :func:`variants`: the same
            configuration compiled with other options (``compiled``, ``nofold``, ...).
        default: the default program, as ``ramiel.compile(model)`` makes and runs it (clusters
            = cores, threads backend, the one-cluster fall-back to intra-op threads; analytic
            costs).
    """

    key: str
    engine: str
    clusters: int = 1
    threads: int = 1
    backend: BackendName | None = None
    ort_parallel: bool = False
    spinning: bool = False
    hybrid: bool = False
    tuned: bool = False
    variant: str = ""
    default: bool = False

    @property
    def label(self) -> str:
        if self.variant:
            base = dataclasses.replace(self, variant="").label
            return f"{base}, {variants()[self.variant][0]}"
        if self.default:
            return f"Ramiel default program for {self.threads} cores (ramiel.compile(model))"
        if self.tuned:
            return f"Ramiel tuned for {self.threads} cores (ramiel tune)"
        if self.engine == "ramiel-seq":
            return f"Ramiel sequential, {self.threads} thread(s)"
        if self.engine == "ramiel-par" and self.hybrid:
            return (
                f"Ramiel parallel, {self.backend}, {self.clusters} cluster(s), intra-op threads "
                f"per op for {self.threads} cores"
            )
        if self.engine == "ramiel-par":
            return f"Ramiel parallel, {self.backend}, {self.clusters}x{self.threads}"
        if self.ort_parallel:
            return f"ORT parallel executor, {self.clusters} inter-op"
        spin = ", spinning (its default)" if self.spinning else ""
        return f"ORT sequential, {self.threads} intra-op{spin}"


def variants() -> dict[str, tuple[str, dict[str, Any]]]:
    """The compile-option variants ``ramiel bench`` can time beside the default options: key ->
    (description, :class:`~ramiel.compiler.CompileOptions` fields).

    * ``eager``: no compiled segments (``--no-compile``), where the default would trace them;
    * ``compiled``: compiled segments (``--compile``: torch.compile, inductor, frozen weights);
    * ``onednn-graph``: compiled segments traced and run by TorchScript with oneDNN Graph fusion
      (``--compile-backend onednn-graph``; under a second to compile);
    * ``nofold``: the graph rewrites off (``--no-rewrites``: no folding into weights);
    * ``nchw``: activations in NCHW (``--layout nchw``), where the compiler has a layout option.
    """
    from ramiel.compiler import CompileOptions  # lazy: onnx.reference,torch

    out: dict[str, tuple[str, dict[str, Any]]] = {
        "eager": ("no compiled segments (--no-compile)", {"compile": False}),
        "compiled": ("compiled segments (torch.compile)", {"compile": True}),
        "onednn-graph": (
            "onednn-graph segments (--compile-backend onednn-graph)",
            {"compile": "onednn-graph"},
        ),
        "nofold": ("graph rewrites off (--no-rewrites)", {"disable": ("all",)}),
    }
    if "layout" in {f.name for f in dataclasses.fields(CompileOptions)}:
        out["nchw"] = ("NCHW layout (--layout nchw)", {"layout": "nchw"})
    return out


DEFAULT_VARIANTS = ("eager", "onednn-graph", "nofold", "nchw")
"""The variants ``ramiel bench`` times unless told otherwise (those :func:`variants` has);
``compiled`` is added by ``ramiel bench --compile`` (it costs seconds to minutes of inductor
compilation per configuration and model)."""


def default_variants() -> list[str]:
    """:data:`DEFAULT_VARIANTS` that this compiler has."""
    known = variants()
    return [v for v in DEFAULT_VARIANTS if v in known]


def check_variants(names: Sequence[str]) -> None:
    """Raise ``ValueError`` naming the ``names`` that are no variant of :func:`variants`, and
    the known ones."""
    known = variants()
    unknown = [v for v in names if v not in known]
    if unknown:
        raise ValueError(f"unknown variant(s) {', '.join(unknown)}; known: {', '.join(known)}")


def configs_for(workers: int, with_variants: Sequence[str] = ()) -> list[Config]:
    """The configurations of one model for ``workers`` (P) cores.

    Parallel splits: C clusters of T = P // C threads for every C in 2..P (P=2: 2x1), with both
    backends. Hybrid (``--intra-op-threads{cores=P}``, each op its own thread count, key
    ``…-CxH``): P clusters on both backends, and one cluster on the threads backend (the
    one-cluster fallback, each op with the thread count its profile says is fastest). ``tuned``:
    what ``ramiel tune`` chooses for P cores (P > 1). ``default``: the default program.

    Each of ``with_variants`` (keys of :func:`variants`) adds, without and with task
    parallelism, ``seq-1t-<v>``, ``seq-Pt-<v>`` and ``par-threads-Px1-<v>``.
    """
    p = max(1, workers)
    cfgs = [Config("seq-1t", "ramiel-seq")]
    if p > 1:
        cfgs.append(Config(f"seq-{p}t", "ramiel-seq", threads=p))
    for c in range(2, p + 1):
        t = p // c
        for backend in ("threads", "processes"):
            cfgs.append(Config(f"par-{backend}-{c}x{t}", "ramiel-par", c, t, backend))
    if p > 1:
        hybrids: tuple[tuple[int, BackendName], ...] = (
            (p, "threads"),
            (p, "processes"),
            (1, "threads"),
        )
        for c, backend in hybrids:
            cfgs.append(Config(f"par-{backend}-{c}xH", "ramiel-par", c, p, backend, hybrid=True))
        cfgs.append(Config("tuned", "ramiel-par", 1, p, "threads", tuned=True))
    cfgs.append(Config("default", "ramiel-par", p, p, "threads", default=True))
    check_variants(with_variants)
    for v in with_variants:
        cfgs.append(Config(f"seq-1t-{v}", "ramiel-seq", variant=v))
        if p > 1:
            cfgs.append(Config(f"seq-{p}t-{v}", "ramiel-seq", threads=p, variant=v))
            cfgs.append(Config(f"par-threads-{p}x1-{v}", "ramiel-par", p, 1, "threads", variant=v))
    cfgs.append(Config("ort-1t", "ort"))
    if p > 1:
        cfgs.append(Config(f"ort-{p}t", "ort", threads=p))
        cfgs.append(Config(f"ort-{p}t-spin", "ort", threads=p, spinning=True))
        cfgs.append(Config(f"ort-par-{p}", "ort", clusters=p, ort_parallel=True))
    return cfgs


@dataclass
class BenchPlan(Plan):
    """The benchmark's :class:`~ramiel.measure.Plan`: how to time, plus what to time beside the
    configurations of :func:`configs_for`."""

    variants: tuple[str, ...] = ()  # compile-option variants to time (configs_for)
    tune_compile: bool = False  # ramiel tune considers compiled candidates too
    busy_rounds: int = 6  # the busy-background-core timing of the default program (0: none)
    busy_calls: int = 10
    # CompileOptions.layout of every Ramiel configuration (a variant's wins)
    layout: LayoutMode = "auto"

    @classmethod
    def quick(cls) -> BenchPlan:
        return dataclasses.replace(super().quick(), busy_rounds=1, busy_calls=3)
