"""``ramiel bench``: latency of the generated code against PyTorch intra-op threads and onnxruntime.

For each model, **interleaved** (every round times each configuration once, in a rotating order,
so that drift of a shared, noisy machine hits all configurations alike), each configuration in a
**process of its own** (:class:`Isolated`: spawned, so that no two configurations share an OpenMP
thread pool -- GNU OpenMP stops spin-waiting in every pool once a process has more pool threads
than cores, which slowed ``seq-2t`` by 15-25 % when all ran in one process -- nor malloc arenas or
onnxruntime pools; the time of a call is measured inside that process):

* ``seq-1t``/``seq-Pt``: the sequential generated module (``model_seq.py``) with 1 and P intra-op
  threads (``torch.set_num_threads``), under ``torch.inference_mode``;
* ``par-<backend>-CxT``: the parallel generated module (``model.py``) with C clusters of T intra-op
  threads each, for every useful split of the P cores (C >= 2, T = P // C) and both runtime
  backends (``threads``, ``processes``); workers are started before timing;
* ``par-<backend>-CxH``: hybrid, compiled with ``--intra-op-threads{cores=P}`` (every op its own
  intra-op thread count, more while other clusters idle), with C = P clusters on both backends and
  C = 1 on the threads backend (the one-cluster fallback with per-op thread counts);
* ``default``: the default program, as ``ramiel.compile(model)`` makes and runs it (analytic
  costs, clusters = cores, the one-cluster fall-back to intra-op threads);
* variants (:func:`variants`: ``nofold``, ``nchw`` where the compiler has a layout option,
  ``compiled`` with ``--compile``): ``seq-1t-<v>``, ``seq-Pt-<v>`` and ``par-threads-Px1-<v>``,
  the same configurations compiled with other options, without and with task parallelism;
* ``ort-1t``/``ort-Pt``: onnxruntime's sequential executor with 1 and P intra-op threads, and
  ``ort-par-P``: its parallel executor (``ORT_PARALLEL``, P inter-op threads of 1 intra-op thread),
  all on the original ONNX file with onnxruntime's default graph optimisations.

Latency = wall time of one call (inputs in, outputs out) after warm-up; each configuration gets
repetitions until the 95 % confidence interval of its median (order statistics) is within
``rel_ci`` of the median, within a time budget. Median, min and max are reported.

Per model also: compile time per stage of the default (analytic-cost) compile; a profile database
of measured per-op times (:func:`ramiel.profiler.profile_model`) from which W (work), CP (critical
path) and the bound ``min(P, W/CP)`` are computed; the parallel modules are compiled with that
profile, and their estimated makespan is shown beside the measured latency. Efficiency = achieved
speed-up (``seq-1t`` / parallel) / bound. Every configuration's outputs are checked against
``seq-1t`` (largest error relative to the largest output magnitude).

Per model also, unless switched off: the default program timed again in interleaved blocks on
the machine as it is and with one busy background core (:func:`measure_quiet_busy`: a spinning
process the benchmark starts itself), both medians reported (target: busy at most
:data:`TARGET_BUSY_RATIO` x quiet).

Outputs: a markdown report (:func:`render_markdown`), JSON (:func:`to_json`), a PNG plot
(:func:`plot_speedups`) and, per model, a Chrome trace of one parallel inference with the threads
backend (:func:`trace_inference`, opens in https://ui.perfetto.dev): one row per cluster, a box per
generated statement labelled with its ONNX node, get/put boxes for channel waits and hand-offs, and
flow arrows from each put to its get.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import functools
import glob
import json
import math
import os
import platform
import re
import shlex
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

# ------------------------------------------------------------------------------------------ models

PROJECT_MODELS = ("inception", "transformer")
"""The project's own models (:mod:`ramiel.models`) that ``ramiel bench`` runs by default."""

TARGET_MODELS = ("light_inception_v1", "light_inception_v2", "ramiel_inception")
"""Models with an efficiency target (>= 80 % of min(P, W/CP) with P 1-thread workers)."""

TARGET_EFFICIENCY = 0.8
TARGET_COMPILE_S = 2.0
TARGET_BUSY_RATIO = 1.5
"""The default program's median under one busy background core, at most this times its quiet
median (issue #12)."""

QUICK_MODEL = "light_squeezenet"
"""The model of ``ramiel bench --quick`` without model arguments (a smoke test of a minute)."""

COMPILE_TIMEOUT_S = 1800.0
"""Seconds a configuration process with compiled segments may take to compile before it answers."""


def zoo_dir() -> str:
    """``onnx/backend/test/data/light`` of the installed onnx wheel."""
    import onnx

    return os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")


def zoo_models() -> dict[str, str]:
    """Zoo model name (``light_inception_v1``) -> path, sorted by name."""
    paths = sorted(glob.glob(os.path.join(zoo_dir(), "light_*.onnx")))
    return {os.path.basename(p)[: -len(".onnx")]: p for p in paths}


@dataclass(frozen=True)
class ModelSpec:
    """A model to benchmark: a display name and an ONNX path (or a project model to export)."""

    name: str
    path: str | None = None
    project: str | None = None

    def resolve(self) -> str:
        """The ONNX file (exports a project model into the model cache on first use)."""
        if self.path is not None:
            return self.path
        from ramiel.models import export_model

        assert self.project is not None
        return export_model(self.project)


def default_models() -> list[ModelSpec]:
    """The zoo models of the onnx wheel, then the project's inception CNN and transformer."""
    out = [ModelSpec(n, p) for n, p in zoo_models().items()]
    return out + [ModelSpec(f"ramiel_{m}", project=m) for m in PROJECT_MODELS]


def resolve_models(args: Sequence[str]) -> list[ModelSpec]:
    """Model arguments -> specs: an ``.onnx`` path, a zoo name (``light_vgg19`` or ``vgg19``), or
    a project model (``inception``, ``transformer``, ``transformer_torch``, optionally with the
    ``ramiel_`` prefix), or a model built with ``transformers`` (``hf_bert``, ``hf_resnet50``...,
    :mod:`ramiel.hf_models`). No arguments: :func:`default_models`.

    Raises:
        ValueError: an argument that is none of these.
    """
    if not args:
        return default_models()
    from ramiel.hf_models import HF_MODELS
    from ramiel.models import MODELS

    zoo = zoo_models()
    out = []
    for a in args:
        if a.endswith(".onnx") or os.path.sep in a:
            if not os.path.isfile(a):
                raise ValueError(f"no such model file: {a}")
            out.append(ModelSpec(os.path.basename(a).removesuffix(".onnx"), a))
        elif a in zoo or f"light_{a}" in zoo:
            name = a if a in zoo else f"light_{a}"
            out.append(ModelSpec(name, zoo[name]))
        elif a in HF_MODELS:
            out.append(ModelSpec(a, project=a))
        elif a.removeprefix("ramiel_") in MODELS:
            m = a.removeprefix("ramiel_")
            out.append(ModelSpec(f"ramiel_{m}", project=m))
        else:
            known = ", ".join([*zoo, *MODELS, *HF_MODELS])
            raise ValueError(f"unknown model {a!r}: not an .onnx file; known names: {known}")
    return out


# ------------------------------------------------------------------------------ configurations


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
    backend: str | None = None
    ort_parallel: bool = False
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
        return f"ORT sequential, {self.threads} intra-op"


def variants() -> dict[str, tuple[str, dict[str, Any]]]:
    """The compile-option variants ``ramiel bench`` can time beside the default options: key ->
    (description, :class:`~ramiel.compiler.CompileOptions` fields).

    * ``compiled``: compiled segments (``--compile``: torch.compile, inductor, frozen weights);
    * ``nofold``: the graph rewrites off (``--no-rewrites``: no folding into weights);
    * ``nchw``: activations in NCHW (``--layout nchw``), where the compiler has a layout option.
    """
    from ramiel.compiler import CompileOptions

    out: dict[str, tuple[str, dict[str, Any]]] = {
        "compiled": ("compiled segments (torch.compile)", {"compile": True}),
        "nofold": ("graph rewrites off (--no-rewrites)", {"disable": ("all",)}),
    }
    if "layout" in {f.name for f in dataclasses.fields(CompileOptions)}:
        out["nchw"] = ("NCHW layout (--layout nchw)", {"layout": "nchw"})
    return out


DEFAULT_VARIANTS = ("nofold", "nchw")
"""The variants ``ramiel bench`` times unless told otherwise (those :func:`variants` has);
``compiled`` is added by ``ramiel bench --compile`` (it costs seconds to minutes of inductor
compilation per configuration and model)."""


def default_variants() -> list[str]:
    """:data:`DEFAULT_VARIANTS` that this compiler has."""
    known = variants()
    return [v for v in DEFAULT_VARIANTS if v in known]


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
        for c, backend in ((p, "threads"), (p, "processes"), (1, "threads")):
            cfgs.append(Config(f"par-{backend}-{c}xH", "ramiel-par", c, p, backend, hybrid=True))
        cfgs.append(Config("tuned", "ramiel-par", 1, p, "threads", tuned=True))
    cfgs.append(Config("default", "ramiel-par", p, p, "threads", default=True))
    known = variants()
    for v in with_variants:
        if v not in known:
            raise ValueError(f"unknown variant {v!r}; known: {', '.join(known)}")
        cfgs.append(Config(f"seq-1t-{v}", "ramiel-seq", variant=v))
        if p > 1:
            cfgs.append(Config(f"seq-{p}t-{v}", "ramiel-seq", threads=p, variant=v))
            cfgs.append(Config(f"par-threads-{p}x1-{v}", "ramiel-par", p, 1, "threads", variant=v))
    cfgs.append(Config("ort-1t", "ort"))
    if p > 1:
        cfgs.append(Config(f"ort-{p}t", "ort", threads=p))
        cfgs.append(Config(f"ort-par-{p}", "ort", clusters=p, ort_parallel=True))
    return cfgs


# ---------------------------------------------------------------------------------- statistics


@dataclass
class Timing:
    """Latencies of one configuration, ms. ``ci`` is the 95 % interval of the median."""

    median: float
    min: float
    max: float
    n: int
    ci: tuple[float, float]
    samples: list[float] = field(repr=False, default_factory=list)
    faults: float | None = None  # median minor page faults of this process per call

    @classmethod
    def of(cls, samples: Sequence[float], faults: Sequence[int] = ()) -> Timing:
        s = sorted(samples)
        n = len(s)
        lo, hi = median_ci(s)
        f = median_of(sorted(faults)) if faults else None
        return cls(median_of(s), s[0], s[-1], n, (lo, hi), [round(x, 4) for x in samples], f)


def median_of(sorted_samples: Sequence[float]) -> float:
    s = sorted_samples
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def median_ci(sorted_samples: Sequence[float]) -> tuple[float, float]:
    """Distribution-free 95 % confidence interval of the median (binomial order statistics,
    normal approximation): the samples of rank ``n/2 -+ 0.98 sqrt(n)``."""
    s = sorted_samples
    n = len(s)
    half = 0.98 * math.sqrt(n)
    lo = max(0, int(math.floor(n / 2 - half)))
    hi = min(n - 1, int(math.ceil(n / 2 + half)) - 1)
    return s[lo], s[max(lo, hi)]


@dataclass
class Plan:
    """How many repetitions: ``warmup`` calls each, then rounds until every configuration has at
    least ``min_reps`` and its median's CI is within ``rel_ci`` of it, or ``max_reps``/``budget_s``
    is reached (at least ``min_reps`` rounds are always run).

    ``gap_s``: an untimed pause before every timed call, so that threads of the previous
    configuration that spin-wait after their work (GNU OpenMP spins ~10 ms after a parallel region
    here) are asleep before the next configuration starts; otherwise a configuration is charged for
    its predecessor's spinning.

    A shared machine: a model's timing is repeated (up to ``attempts`` times, after waiting up to
    ``quiet_wait_s`` for other processes to use less than ``busy_cores`` cores) when other
    processes kept more than ``busy_cores`` cores busy during it, or when P threads of perfectly
    parallel work ran less than 0.75 P times faster than one (:func:`machine_scaling`) before or
    after it; the least disturbed attempt is kept."""

    warmup: int = 3
    min_reps: int = 15
    max_reps: int = 101
    budget_s: float = 60.0
    rel_ci: float = 0.02
    gap_s: float = 0.015
    attempts: int = 3
    busy_cores: float = 0.25
    quiet_wait_s: float = 180.0
    malloc_tuning: bool = False  # tune_malloc() in every configuration's process
    variants: tuple[str, ...] = ()  # compile-option variants to time (configs_for)
    tune_compile: bool = False  # ramiel tune considers compiled candidates too
    busy_rounds: int = 6  # the busy-background-core timing of the default program (0: none)
    busy_calls: int = 10
    layout: str = "auto"  # CompileOptions.layout of every Ramiel configuration (a variant's wins)

    @classmethod
    def quick(cls) -> Plan:
        return cls(
            warmup=1, min_reps=3, max_reps=3, budget_s=5.0, rel_ci=1.0, gap_s=0.0, attempts=1,
            busy_rounds=1, busy_calls=3,
        )  # fmt: skip


def measure_interleaved(
    fns: Mapping[str, Callable[[], object]],
    plan: Plan,
    clock: Callable[[], float] = time.perf_counter,
    sleep: Callable[[float], None] = time.sleep,
    faults: Callable[[], int] | None = None,
) -> dict[str, Timing]:
    """Time every callable round-robin (rotating the order each round); see :class:`Plan`.

    ``faults``: a counter (e.g. :func:`minor_faults`) read around every call. A callable that
    returns a :class:`Measured` (a configuration in its own process) is timed by what it reports,
    measured inside its process, instead of by ``clock`` around the call.
    """
    keys = list(fns)
    for _ in range(plan.warmup):
        for k in keys:
            fns[k]()
    samples: dict[str, list[float]] = {k: [] for k in keys}
    flts: dict[str, list[int]] = {k: [] for k in keys}
    t_end = clock() + plan.budget_s
    r = 0
    while r < plan.max_reps:
        order = keys[r % len(keys) :] + keys[: r % len(keys)]
        for k in order:
            if plan.gap_s > 0:
                sleep(plan.gap_s)
            f = faults() if faults else 0
            t = clock()
            out = fns[k]()
            elapsed = (clock() - t) * 1e3
            if isinstance(out, Measured):
                samples[k].append(out.ms)
                flts[k].append(out.faults)
                continue
            samples[k].append(elapsed)
            if faults:
                flts[k].append(faults() - f)
        r += 1
        if r < plan.min_reps:
            continue
        if clock() > t_end or all(_stable(samples[k], plan.rel_ci) for k in keys):
            break
    return {k: Timing.of(v, flts[k]) for k, v in samples.items()}


def minor_faults() -> int:
    """Minor page faults of this process so far (threads included, child processes not)."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def _stable(samples: list[float], rel_ci: float) -> bool:
    s = sorted(samples)
    lo, hi = median_ci(s)
    m = median_of(s)
    return m > 0 and (hi - lo) / 2 <= rel_ci * m


SPINNER = "while True:\n    pass\n"
"""The busy background core: a Python loop that never sleeps (one runnable thread)."""


@contextlib.contextmanager
def busy_core(settle_s: float = 0.2) -> Any:
    """Keep one core busy while the block runs: a child process spinning in :data:`SPINNER` at
    normal priority (another user's job, as far as the scheduler can tell), killed afterwards.
    ``settle_s``: seconds to let it start before the block."""
    import subprocess

    proc = subprocess.Popen(
        [sys.executable, "-c", SPINNER], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL
    )
    try:
        time.sleep(settle_s)
        yield proc
    finally:
        proc.kill()
        proc.wait(10.0)


def measure_quiet_busy(
    fn: Callable[[], object],
    rounds: int = 6,
    calls: int = 10,
    warmup: int = 2,
    gap_s: float = 0.015,
) -> tuple[Timing, Timing]:
    """Latency of ``fn`` on the machine as it is (``quiet``) and with one :func:`busy_core`
    (``busy``), interleaved: ``rounds`` times a block of ``calls`` quiet calls, then a block of
    ``calls`` with the spinner running (started before, killed after the block). Returns the two
    :class:`Timing` (ms). A call that returns a :class:`Measured` is timed by what it reports."""

    def block(out: list[float]) -> None:
        for _ in range(calls):
            if gap_s > 0:
                time.sleep(gap_s)
            t = time.perf_counter()
            r = fn()
            ms = (time.perf_counter() - t) * 1e3
            out.append(r.ms if isinstance(r, Measured) else ms)

    for _ in range(warmup):
        fn()
    quiet: list[float] = []
    busy: list[float] = []
    for _ in range(rounds):
        block(quiet)
        with busy_core():
            fn()  # the first call after the spinner starts finds the caches cold: untimed
            block(busy)
    return Timing.of(quiet), Timing.of(busy)


def machine_scaling(workers: int, work_ms: float = 50.0, repeats: int = 5) -> float | None:
    """What P cores deliver right now on perfectly parallel work: P threads (1 intra-op thread
    each) run the same fixed amount of matrix products as one thread does alone; returns
    ``P * t_alone / t_together`` (P on an idle machine with P real cores; less when other
    processes, or the hypervisor, take cores away). The median of ``repeats`` tries."""
    import threading

    import torch

    if workers < 2:
        return None
    a = torch.randn(192, 192)
    caller = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.no_grad():
            t = time.perf_counter()
            n = 0
            while time.perf_counter() - t < 0.005:
                torch.mm(a, a)
                n += 1
        iters = max(1, int(n * work_ms / 5.0))

        def job(barrier: threading.Barrier | None) -> None:
            torch.set_num_threads(1)
            if barrier is not None:
                barrier.wait()
            with torch.no_grad():
                for _ in range(iters):
                    torch.mm(a, a)

        ratios = []
        for _ in range(repeats):
            t = time.perf_counter()
            job(None)
            alone = time.perf_counter() - t
            barrier = threading.Barrier(workers + 1)
            ths = [threading.Thread(target=job, args=(barrier,)) for _ in range(workers)]
            for th in ths:
                th.start()
            barrier.wait()
            t = time.perf_counter()
            for th in ths:
                th.join()
            together = time.perf_counter() - t
            ratios.append(workers * alone / together)
    finally:
        torch.set_num_threads(caller)
    ratios.sort()
    return round(ratios[len(ratios) // 2], 3)


def tune_malloc(mmap_threshold: int = 32 << 20, trim_threshold: int = 1 << 30) -> bool:
    """Stop glibc's malloc from handing tensor memory back to the kernel after every inference.

    PyTorch's CPU allocator takes every tensor from ``malloc``. With glibc's defaults, big blocks
    are ``mmap``-ed and ``munmap``-ed per allocation, and the per-thread arenas of worker threads
    are trimmed as soon as they are free, so every inference page-faults its activations in again
    (measured here: ~31,000 minor faults per inference of light_densenet121 with the threads
    backend, ~3,700 sequentially). ``mallopt(M_MMAP_THRESHOLD, 32 MiB)`` (the largest value glibc
    takes) and ``mallopt(M_TRIM_THRESHOLD, 1 GiB)`` keep freed blocks for reuse; memory stays at
    its peak instead. Process-wide, affects forked children too; returns False where it is not
    glibc.
    """
    import ctypes
    import ctypes.util

    if platform.system() != "Linux":
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    m_trim_threshold, m_mmap_threshold = -1, -3
    return bool(mallopt(m_mmap_threshold, mmap_threshold)) and bool(
        mallopt(m_trim_threshold, trim_threshold)
    )


# ----------------------------------------------------------------------------------- results


@dataclass
class ConfigResult:
    """A configuration's timing and facts (times in ms)."""

    key: str
    label: str
    engine: str
    clusters: int
    threads: int
    backend: str | None
    timing: Timing | None = None
    speedup: float | None = None  # seq-1t median / this median
    est_makespan_ms: float | None = None  # parallel modules: estimate with profiled costs
    est_speedup: float | None = None  # W / estimated makespan (profiled costs)
    actual_clusters: int | None = None  # clusters the compiler made (merge may make fewer)
    max_rel_err: float | None = None  # vs seq-1t outputs
    error: str | None = None
    hybrid: bool = False  # per-op intra-op threads (--intra-op-threads)
    tuned: bool = False  # the program ramiel tune chose
    variant: str = ""  # compile-option variant (variants())
    default: bool = False  # the default program (ramiel.compile(model))
    compile_s: float | None = None  # compiled segments: seconds of torch.compile at load time
    compiled_segments: int = 0  # compiled segments: how many compilations
    compile_errors: list[str] = field(default_factory=list)  # segments that run eagerly, why


@dataclass
class ModelResult:
    """Everything measured for one model."""

    name: str
    path: str
    workers: int
    nodes: int = 0
    compile_s: dict[str, float] = field(default_factory=dict)
    compile_total_s: float = 0.0
    profile_s: float = 0.0
    work_ms: float | None = None  # W from measured per-op times
    cp_ms: float | None = None  # CP from measured per-op times
    parallelism: float | None = None  # W / CP
    bound: float | None = None  # min(P, W/CP)
    analytic_parallelism: float | None = None  # W/CP of the default analytic cost model
    configs: list[ConfigResult] = field(default_factory=list)
    best_par: str | None = None
    best_intra: str | None = None
    efficiency: dict[str, float] = field(default_factory=dict)  # par config -> speedup/bound
    trace_path: str | None = None
    trace: dict[str, Any] = field(default_factory=dict)  # see _decorate_trace
    notes: list[str] = field(default_factory=list)
    error: str | None = None
    other_cores: float | None = None  # cores kept busy by other processes while timing
    machine_scaling: list[float] = field(default_factory=list)  # before and after timing
    attempts: int = 0  # timings of this model (repeated while the machine was busy)
    tuned_choice: str | None = None  # the candidate ramiel tune chose (1x1, 1xP, 1xH, Px1, PxH)
    tuned_candidates: list[dict[str, Any]] = field(default_factory=list)  # its own timing
    tune_s: float = 0.0  # ramiel tune's wall time (compiles and timing)
    busy_quiet: Timing | None = None  # the default program, interleaved with busy_busy...
    busy_busy: Timing | None = None  # ... under one spinning background core (busy_core)

    def config(self, key: str) -> ConfigResult | None:
        return next((c for c in self.configs if c.key == key), None)

    def median(self, key: str) -> float | None:
        c = self.config(key)
        return c.timing.median if c and c.timing else None


@dataclass
class Environment:
    """Where and when: machine, versions, load, command."""

    date: str
    cpu: str
    nproc: int
    python: str
    torch: str
    onnxruntime: str
    onnx: str
    load_before: tuple[float, float, float]
    load_after: tuple[float, float, float] | None = None
    other_cores: float | None = None  # cores kept busy by other processes during the run
    command: str = ""
    workers: int = 1
    quick: bool = False
    malloc_tuned: bool = False

    @classmethod
    def capture(cls, command: str, workers: int, quick: bool) -> Environment:
        import onnx
        import onnxruntime
        import torch

        return cls(
            date=datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
            cpu=cpu_model(),
            nproc=os.cpu_count() or 1,
            python=platform.python_version(),
            torch=torch.__version__,
            onnxruntime=onnxruntime.__version__,
            onnx=onnx.__version__,
            load_before=load_average(),
            command=command,
            workers=workers,
            quick=quick,
        )


def cpu_model() -> str:
    """``model name`` of /proc/cpuinfo, with the family/model numbers when the name is vague."""
    info: dict[str, str] = {}
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        for line in f:
            if ":" in line:
                k, v = line.split(":", 1)
                info.setdefault(k.strip(), v.strip())
            elif info:
                break
    name = info.get("model name") or platform.processor() or platform.machine()
    if "cpu family" in info and "model" in info:
        name += f" (family {info['cpu family']}, model {info['model']})"
    return name


class CpuMeter:
    """How many cores *other* processes kept busy while it ran: machine-wide busy time from
    ``/proc/stat`` minus this process's own CPU time (threads and reaped children included),
    divided by wall time. 0 on an otherwise idle machine; ``None`` where /proc is missing."""

    def __init__(self) -> None:
        self._start = self._snap()

    @staticmethod
    def _snap() -> tuple[float, float, float] | None:
        try:
            with open("/proc/stat") as f:
                v = [int(x) for x in f.readline().split()[1:]]
        except (OSError, ValueError):
            return None
        tick = os.sysconf("SC_CLK_TCK")
        busy = (sum(v[:8]) - v[3] - v[4]) / tick  # all but idle and iowait; no guest double count
        t = os.times()
        own = t.user + t.system + t.children_user + t.children_system + _live_children_cpu(tick)
        return busy, own, time.monotonic()

    def other_cores(self) -> float | None:
        end = self._snap()
        if self._start is None or end is None:
            return None
        wall = end[2] - self._start[2]
        if wall <= 0:
            return None
        other = (end[0] - self._start[0]) - (end[1] - self._start[1])
        return round(max(0.0, other / wall), 3)


def _live_children_cpu(tick: int) -> float:
    """CPU seconds of this process's live (not yet reaped) children, e.g. process workers."""
    me = os.getpid()
    total = 0.0
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == me:  # ppid
            total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    return total


def wait_quiet(busy_cores: float, timeout_s: float, sample_s: float = 2.0) -> bool:
    """Wait until other processes use at most ``busy_cores`` cores over ``sample_s`` seconds (at
    most ``timeout_s``); returns whether that happened."""
    end = time.monotonic() + timeout_s
    while True:
        meter = CpuMeter()
        time.sleep(sample_s)
        other = meter.other_cores()
        if other is None or other <= busy_cores:
            return True
        if time.monotonic() > end:
            return False


def load_average() -> tuple[float, float, float]:
    try:
        a, b, c = os.getloadavg()
    except OSError:
        return (float("nan"),) * 3  # type: ignore[return-value]
    return (round(a, 2), round(b, 2), round(c, 2))


# ----------------------------------------------------------------------------------- engines


def _rel_err(out: Sequence[Any], ref: Sequence[Any]) -> float:
    worst = 0.0
    for o, r in zip(out, ref, strict=True):
        o = np.asarray(o, dtype=np.float64)
        r = np.asarray(r, dtype=np.float64)
        if r.size == 0:
            continue
        scale = float(np.max(np.abs(r))) or 1.0
        worst = max(worst, float(np.max(np.abs(o - r))) / scale)
    return worst


def _as_tuple(x: Any) -> tuple[Any, ...]:
    return x if isinstance(x, tuple) else (x,)


def _ort_session(
    path: str | bytes,
    cfg: Config,
    input_shapes: Mapping[str, Sequence[int]] | None,
    profile_prefix: str | None = None,
):
    """An onnxruntime session for ``cfg`` on the model at ``path`` (or its serialized bytes);
    ``profile_prefix``: with onnxruntime's profiler on, its JSON written there."""
    import onnxruntime as ort

    from ramiel.importer import load_model, prepare_model

    so = ort.SessionOptions()
    so.log_severity_level = 3
    if profile_prefix is not None:
        so.enable_profiling = True
        so.profile_file_prefix = profile_prefix
    # onnxruntime's pool threads spin after a run (measured: one core kept busy for the next
    # 50 ms and more), which would slow down whichever configuration is timed next.
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    so.add_session_config_entry("session.inter_op.allow_spinning", "0")
    if cfg.ort_parallel:
        so.execution_mode = ort.ExecutionMode.ORT_PARALLEL
        so.inter_op_num_threads = cfg.clusters
        so.intra_op_num_threads = 1
    else:
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.intra_op_num_threads = cfg.threads
    model: Any = path
    if input_shapes:
        model = prepare_model(load_model(path), input_shapes).SerializeToString()
    return ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])


@dataclass(frozen=True)
class Measured:
    """One call of a configuration that runs in its own process (:class:`Isolated`), measured
    there: wall time in ms and that process's minor page faults during the call."""

    ms: float
    faults: int


@dataclass
class Recipe:
    """What a configuration's own process needs to build its callable (picklable).

    ``kind``: ``seq`` (the sequential module of ``result`` at ``threads`` intra-op threads),
    ``par`` (the parallel module of ``result`` run with ``options``; workers started before the
    first timed call) or ``ort`` (onnxruntime on ``path`` as ``config`` says); ``feeds``: the
    graph inputs; ``out_names``: the output order; ``malloc_tuning``: call :func:`tune_malloc`
    first."""

    kind: str
    feeds: dict[str, np.ndarray]
    out_names: list[str]
    result: Any = None
    options: Any = None
    threads: int = 1
    path: str | None = None
    config: Config | None = None
    malloc_tuning: bool = True


def _build(recipe: Recipe) -> tuple[Callable[[], tuple[Any, ...]], Any]:
    """The callable of ``recipe`` and the object to ``close()`` afterwards (or ``None``)."""
    import torch

    from ramiel.compiler import CompiledModel, CompileOptions

    feeds = {k: torch.from_numpy(v) for k, v in recipe.feeds.items()}
    if recipe.kind == "seq":
        m = CompiledModel(recipe.result, CompileOptions())
        runner = _SeqRunner(m, recipe.threads, feeds)
        if m.compiled:
            runner()  # compiles the segments, at this configuration's thread count
        return runner, m
    if recipe.kind == "par":
        m = CompiledModel(recipe.result, recipe.options)
        m.run(feeds)  # starts the workers (process workers fork before any torch compute here)
        return _par_fn(m, feeds, recipe.out_names), m
    assert recipe.path is not None and recipe.config is not None
    sess = _ort_session(recipe.path, recipe.config, None)
    return _ort_fn(sess, recipe.feeds), None


def _serve(conn: Any, recipe: Recipe) -> None:
    """Main function of a configuration's process: build the callable, say ``ready``, then
    answer ``run`` (one timed call: a :class:`Measured`) and ``outputs`` (the outputs as numpy
    arrays) until ``stop`` or the pipe closes."""
    closer = None
    try:
        if recipe.malloc_tuning:
            tune_malloc()
        fn, closer = _build(recipe)
        report = closer.compile_report() if hasattr(closer, "compile_report") else []
        conn.send(("ready", report))
        while True:
            try:
                msg = conn.recv()
            except EOFError:
                return
            if msg == "run":
                f0 = minor_faults()
                t = time.perf_counter()
                fn()
                ms = (time.perf_counter() - t) * 1e3
                conn.send(("ok", Measured(ms, minor_faults() - f0)))
            elif msg == "outputs":
                conn.send(("ok", _numpy(fn())))
            else:
                return
    except BaseException as e:  # noqa: BLE001 - reported to the parent, then the process ends
        with contextlib.suppress(Exception):
            conn.send(("error", f"{type(e).__name__}: {e}"))
    finally:
        if closer is not None:
            with contextlib.suppress(Exception):
                closer.close()


class Isolated:
    """A configuration served by its own process (``spawn``ed, so it shares no OpenMP pool,
    malloc arena or onnxruntime thread pool with the others, as in a user's process of its own).

    Calling it runs one inference there and returns the :class:`Measured` time; ``outputs()``
    returns the outputs. Every wait is bounded (``timeout_s``): a process that dies or hangs
    becomes a :class:`RuntimeError`, never a hang. ``close()`` stops the process.
    """

    def __init__(self, recipe: Recipe, timeout_s: float = 300.0):
        import multiprocessing as mp

        ctx = mp.get_context("spawn")
        self.timeout_s = timeout_s
        self.conn, child = ctx.Pipe()
        # not a daemon: the processes backend starts worker processes of its own there
        self.proc = ctx.Process(target=_serve, args=(child, recipe), name="ramiel-bench-config")
        self.proc.start()
        child.close()

    def _ask(self, msg: str | None) -> Any:
        if msg is not None:
            self.conn.send(msg)
        deadline = time.monotonic() + self.timeout_s
        while not self.conn.poll(min(0.2, max(0.0, deadline - time.monotonic()))):
            if not self.proc.is_alive() and not self.conn.poll(0):  # died without a word
                code = self.proc.exitcode
                self.close()
                raise RuntimeError(f"configuration process died (exit code {code})")
            if time.monotonic() >= deadline:
                self.close()
                raise RuntimeError(
                    f"configuration process did not answer within {self.timeout_s} s"
                )
        try:
            status, value = self.conn.recv()
        except EOFError:
            # The pipe closed because the process is exiting; it may not be reaped yet (its
            # exit code still None on a loaded machine): wait for it, bounded.
            self.proc.join(10.0)
            code = self.proc.exitcode
            self.close()
            raise RuntimeError(f"configuration process died (exit code {code})") from None
        if status == "error":
            raise RuntimeError(value)
        return value

    def wait_ready(self) -> list[Any]:
        """Wait until the configuration is built; returns its compile report (the
        :class:`~ramiel.runtime.compiled.CompileEvent` list of a compiled program, else empty)."""
        return self._ask(None) or []

    def __call__(self) -> Measured:
        return self._ask("run")

    def outputs(self) -> list[np.ndarray]:
        return self._ask("outputs")

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.conn.send("stop")
        self.proc.join(10.0)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(5.0)
        with contextlib.suppress(Exception):
            self.conn.close()


class _SeqRunner:
    """The sequential module at a fixed intra-op thread count (set before every call)."""

    def __init__(self, model: Any, threads: int, feeds: Mapping[str, Any]):
        self.model = model.sequential
        self.threads = threads
        self.args = list(feeds.values())

    def __call__(self) -> tuple[Any, ...]:
        import torch

        torch.set_num_threads(self.threads)
        with torch.inference_mode():
            return _as_tuple(self.model(*self.args))


def bench_model(
    spec: ModelSpec,
    workers: int,
    out_dir: str,
    plan: Plan,
    trace: bool = True,
    say: Callable[[str], None] = lambda _m: None,
    build_dir: str | None = None,
) -> ModelResult:
    """Compile, profile and time one model (see the module docstring); never raises for a model
    that fails: the error is recorded in the result. Generated files go to ``build_dir``
    (default: a temporary directory, removed afterwards); the trace to ``out_dir/traces``."""
    res = ModelResult(spec.name, spec.path or "", workers)
    with contextlib.ExitStack() as stack:
        if build_dir is None:
            build_dir = stack.enter_context(tempfile.TemporaryDirectory(prefix="ramiel-bench-"))
        work = os.path.join(build_dir, spec.name)
        os.makedirs(work, exist_ok=True)
        try:
            res.path = spec.resolve()
            _bench_model(res, work, plan, trace, out_dir, say)
        except Exception as e:  # a model that cannot be compiled or run is a row, not a crash
            if os.environ.get("RAMIEL_DEBUG"):
                raise
            res.error = f"{type(e).__name__}: {e}"
    return res


def _bench_model(
    res: ModelResult,
    work: str,
    plan: Plan,
    trace: bool,
    out_dir: str,
    say: Callable[[str], None],
) -> None:
    import torch

    from ramiel.compiler import CompiledModel, CompileOptions, compile_model
    from ramiel.profiler import profile_model
    from ramiel.runtime.entry import random_inputs

    p = res.workers
    caller_threads = torch.get_num_threads()

    # 1. The default compile (analytic costs), timed per stage: best of two runs.
    say(f"{res.name}: compile")
    runs = 1 if plan.max_reps <= 3 else 2
    best = None
    for _ in range(runs):
        r = compile_model(
            res.path, os.path.join(work, "analytic"), CompileOptions(clusters=p, layout=plan.layout)
        )
        if best is None or sum(r.timings.values()) < sum(best.timings.values()):
            best = r
    assert best is not None
    res.compile_s = {k: round(v, 4) for k, v in best.timings.items()}
    res.compile_total_s = round(sum(best.timings.values()), 4)
    res.analytic_parallelism = round(best.report.parallelism, 4)
    res.nodes = best.report.nodes

    # 2. Measured per-op costs: W, CP and the bound.
    say(f"{res.name}: profile")
    db = os.path.join(work, "profile.json")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(db)
    t = time.perf_counter()
    profile_model(res.path, db, repeat=3 if plan.max_reps <= 3 else 10, layout=plan.layout)
    res.profile_s = round(time.perf_counter() - t, 3)
    torch.set_num_threads(caller_threads)

    # 3. Compile every parallel configuration with the profile (and each variant's program).
    cfgs = configs_for(p, plan.variants)
    seq_model = CompiledModel(best, CompileOptions(clusters=p, layout=plan.layout))
    feeds = random_inputs(seq_model.input_specs, seed=0)
    compiled: dict[tuple[int, str, bool, str], Any] = {}
    models: dict[str, Any] = {}
    seq_results: dict[str, Any] = {"": best}  # variant -> analytic compile (sequential module)
    for v in plan.variants:
        say(f"{res.name}: compile ({variants()[v][0]})")
        opts = CompileOptions(clusters=p, **{"layout": plan.layout, **variants()[v][1]})
        seq_results[v] = compile_model(res.path, os.path.join(work, f"analytic-{v}"), opts)
    for cfg in cfgs:
        if cfg.default:
            models[cfg.key] = CompiledModel(best, CompileOptions(clusters=p, layout=plan.layout))
            continue
        if cfg.tuned:
            from ramiel.tune import tune

            say(f"{res.name}: ramiel tune")
            t = time.perf_counter()
            tr = tune(
                res.path,
                os.path.join(work, "tuned"),
                cores=cfg.threads,
                profile=db,
                base=CompileOptions(layout=plan.layout),
                budget_s=3.0 if plan.max_reps <= 3 else 15.0,
                compile=plan.tune_compile,
            )
            res.tune_s = round(time.perf_counter() - t, 3)
            res.tuned_choice = tr.choice
            res.tuned_candidates = tr.to_json()["candidates"]
            models[cfg.key] = CompiledModel(tr.result, tr.options)
            continue
        if cfg.engine != "ramiel-par":
            continue
        assert cfg.backend is not None
        ck = (cfg.clusters, cfg.backend, cfg.hybrid, cfg.variant)
        extra = variants()[cfg.variant][1] if cfg.variant else {}
        if ck not in compiled:
            how = ", intra-op threads per op" if cfg.hybrid else ""
            how += f", {variants()[cfg.variant][0]}" if cfg.variant else ""
            say(f"{res.name}: compile {cfg.clusters} clusters, {cfg.backend}{how}, profiled")
            d = os.path.join(
                work,
                f"par-{cfg.backend}-{cfg.clusters}{'-h' if cfg.hybrid else ''}"
                + (f"-{cfg.variant}" if cfg.variant else ""),
            )
            opts = CompileOptions(
                clusters=cfg.clusters,
                backend=cfg.backend,
                profile=db,
                cores=cfg.threads if cfg.hybrid else None,
                **{"layout": plan.layout, **extra},
            )
            compiled[ck] = compile_model(res.path, d, opts)
        r = compiled[ck]
        if res.work_ms is None and not cfg.hybrid and not cfg.variant:
            rep = r.report
            res.work_ms = rep.work_us / 1e3
            res.cp_ms = rep.critical_path_us / 1e3
            res.parallelism = rep.parallelism
            res.bound = min(float(p), rep.parallelism)
        opts = CompileOptions(
            clusters=cfg.clusters,
            backend=cfg.backend,
            threads_per_worker=1 if cfg.hybrid else cfg.threads,
            profile=db,
            **{"layout": plan.layout, **extra},
        )
        models[cfg.key] = CompiledModel(r, opts)
    if res.work_ms is None:  # P = 1: still report W and CP
        opts = CompileOptions(clusters=1, profile=db, layout=plan.layout)
        rep = compile_model(res.path, os.path.join(work, "profiled-1"), opts).report
        res.work_ms, res.cp_ms = rep.work_us / 1e3, rep.critical_path_us / 1e3
        res.parallelism = rep.parallelism
        res.bound = min(float(p), rep.parallelism)

    # 4. One process per configuration (started together; each loads its module or session).
    say(f"{res.name}: start {len(cfgs)} configuration processes")
    fns: dict[str, Callable[[], Any]] = {}
    np_feeds = {k: v.numpy() for k, v in feeds.items()}
    out_names = list(seq_model.output_names)
    results = {
        c.key: ConfigResult(
            c.key,
            c.label,
            c.engine,
            c.clusters,
            c.threads,
            c.backend,
            hybrid=c.hybrid,
            tuned=c.tuned,
            variant=c.variant,
            default=c.default,
        )
        for c in cfgs
    }
    procs: dict[str, Isolated] = {}
    try:
        for cfg in cfgs:
            cr = results[cfg.key]
            common = {
                "feeds": np_feeds,
                "out_names": out_names,
                "malloc_tuning": plan.malloc_tuning,
            }
            if cfg.engine == "ramiel-seq":
                result = seq_results[cfg.variant]
                recipe = Recipe("seq", result=result, threads=cfg.threads, **common)
            elif cfg.engine == "ramiel-par":
                m = models[cfg.key]
                recipe = Recipe("par", result=m.result, options=m.options, **common)
                cr.est_makespan_ms = round(m.report.makespan_us / 1e3, 4)
                cr.est_speedup = round(m.report.speedup, 4)
                cr.actual_clusters = len(m.program.clusters)
            else:
                recipe = Recipe("ort", path=res.path, config=cfg, **common)
            # compiled programs compile in that process before they answer: minutes, not seconds
            slow = cfg.variant == "compiled" or (cfg.tuned and plan.tune_compile)
            procs[cfg.key] = Isolated(recipe, timeout_s=COMPILE_TIMEOUT_S if slow else 300.0)
        if any(c.variant == "compiled" for c in cfgs):
            say(f"{res.name}: torch.compile in the compiled configurations' processes")
        for cfg in cfgs:
            try:
                events = procs[cfg.key].wait_ready()
                fns[cfg.key] = procs[cfg.key]
            except Exception as e:
                results[cfg.key].error = f"{type(e).__name__}: {e}"
                continue
            if events:
                results[cfg.key].compile_s = round(sum(e.seconds for e in events), 3)
                results[cfg.key].compiled_segments = len(events)
                results[cfg.key].compile_errors = [
                    f"{e.segment}: {e.error}" for e in events if e.error
                ]

        # 5. Correctness against seq-1t, then the interleaved timing.
        ref = procs["seq-1t"].outputs()
        for k in list(fns):
            try:
                results[k].max_rel_err = _rel_err(procs[k].outputs(), ref)
            except Exception as e:
                results[k].error = f"{type(e).__name__}: {e}"
                del fns[k]
        best: tuple[float, dict[str, Timing], float | None, list[float]] | None = None
        for attempt in range(1, plan.attempts + 1):
            if attempt > 1:
                say(f"{res.name}: machine busy, waiting to time again (attempt {attempt})")
                wait_quiet(plan.busy_cores, plan.quiet_wait_s)
            say(f"{res.name}: timing {len(fns)} configurations")
            meter = CpuMeter()
            repeats = 1 if plan.attempts == 1 else 5
            before = machine_scaling(p, repeats=repeats)
            timings = measure_interleaved(fns, plan, faults=minor_faults)
            after = machine_scaling(p, repeats=repeats)
            other = meter.other_cores()
            scaling = [x for x in (before, after) if x is not None]
            torch.set_num_threads(caller_threads)
            disturbance = max(other or 0.0, *(max(0.0, 0.75 * p - x) for x in scaling or [p]))
            if best is None or disturbance < best[0]:
                best = (disturbance, timings, other, scaling)
            res.attempts = attempt
            if disturbance <= plan.busy_cores:
                break
        assert best is not None
        _, timings, res.other_cores, res.machine_scaling = best
        for k, tm in timings.items():
            results[k].timing = tm

        # 5b. The default program under one busy background core, interleaved with quiet blocks.
        if plan.busy_rounds > 0 and "default" in fns:
            say(f"{res.name}: the default program quiet and with one busy background core")
            res.busy_quiet, res.busy_busy = measure_quiet_busy(
                fns["default"], rounds=plan.busy_rounds, calls=plan.busy_calls, gap_s=plan.gap_s
            )

        # 6. Trace of one parallel inference with the threads backend.
        if trace:
            par_threads = [
                c
                for c in cfgs
                if c.engine == "ramiel-par"
                and c.backend == "threads"
                and c.clusters > 1
                and not (c.variant or c.default)
            ]
            if par_threads and par_threads[0].key in models:
                tdir = os.path.join(out_dir, "traces")
                os.makedirs(tdir, exist_ok=True)
                tp = os.path.join(tdir, f"{res.name}.json")
                say(f"{res.name}: trace")
                m = models[par_threads[0].key]
                res.trace = trace_inference(
                    m.program,
                    m.weights_namespace(),
                    feeds,
                    tp,
                    threads_per_worker=par_threads[0].threads,
                )
                res.trace_path = tp
    finally:
        for proc in procs.values():
            proc.close()
        for m in models.values():
            m.close()
        torch.set_num_threads(caller_threads)
    res.configs = [results[c.key] for c in cfgs]
    _summarise(res)


def _par_fn(model: Any, feeds: Mapping[str, Any], out_names: Sequence[str]) -> Callable[[], Any]:
    feeds = dict(feeds)

    def run() -> tuple[Any, ...]:
        out = model.run(feeds)
        return tuple(out[n] for n in out_names)

    return run


def _ort_fn(sess: Any, feeds: Mapping[str, Any]) -> Callable[[], Any]:
    feeds = dict(feeds)
    return lambda: tuple(sess.run(None, feeds))


def _numpy(outs: Sequence[Any]) -> list[np.ndarray]:
    return [o.detach().numpy() if hasattr(o, "detach") else np.asarray(o) for o in outs]


def _summarise(res: ModelResult) -> None:
    seq1 = res.median("seq-1t")
    for c in res.configs:
        if c.timing and seq1:
            c.speedup = round(seq1 / c.timing.median, 4)
    # Ramiel's configurations: every parallel module, the hybrid one-cluster fallback included
    # (with the default compile options: the variants and the default program have tables of
    # their own)
    base = [c for c in res.configs if not (c.variant or c.default)]
    par = [
        c
        for c in base
        if c.engine == "ramiel-par" and (c.clusters > 1 or c.hybrid) and c.timing and not c.tuned
    ]
    intra = [c for c in base if c.engine == "ramiel-seq" and c.timing]
    if par:
        res.best_par = min(par, key=lambda c: c.timing.median).key  # type: ignore[union-attr]
    if intra:
        res.best_intra = min(intra, key=lambda c: c.timing.median).key  # type: ignore[union-attr]
    if res.bound:  # the bound min(P, W/CP) holds for task parallelism alone: not for hybrids,
        # nor for a program the merge left with one cluster (it runs with P intra-op threads)
        for c in (c for c in par if not c.hybrid and (c.actual_clusters or c.clusters) > 1):
            if c.speedup is not None:
                res.efficiency[c.key] = round(c.speedup / res.bound, 4)
    for c in res.configs:
        if c.max_rel_err is not None and c.max_rel_err > 1e-3:
            res.notes.append(
                f"{c.key}: outputs differ from seq-1t by {c.max_rel_err:.2e} (relative)"
            )
        if c.error:
            res.notes.append(f"{c.key}: {c.error}")
        if c.compile_errors:
            res.notes.append(
                f"{c.key}: {len(c.compile_errors)} segment(s) not compiled, run eagerly: "
                + "; ".join(c.compile_errors[:3])
            )


# ------------------------------------------------------------------------------------- trace


_NODE_COMMENT = re.compile(r"#\s*(\S+)\s+\((\w+)\)\s*$")


def trace_inference(
    program: Any,
    weights: Any,
    feeds: Mapping[str, Any],
    path: str,
    threads_per_worker: int = 1,
    warmup: int = 2,
) -> dict[str, Any]:
    """Run one inference of ``program`` with the threads backend under ``torch.profiler`` and write
    a Chrome trace (JSON) to ``path``; returns a summary (events per cluster, transfers).

    Each cluster function runs with a channel wrapper that labels every ``get``/``put`` with
    ``torch.profiler.record_function`` and a :class:`torch.overrides.TorchFunctionMode` that wraps
    every torch call of the generated code in a ``record_function`` named after the ONNX node of
    its line (the ``# n12 (Conv)`` comment), so the trace has a box per generated statement (with
    the ATen ops inside it). The labelling adds a few µs per op: the trace shows the schedule, the
    table the latency. After export, rows are renamed ``cluster <name>`` and a flow arrow is added
    from each ``put`` to the matching ``get``.
    """
    import torch
    from torch.profiler import ProfilerActivity, profile

    from ramiel.runtime import start

    traced = dataclasses.replace(
        program,
        clusters={
            c: _traced_cluster(c, fn, program.module_path) for c, fn in program.clusters.items()
        },
    )
    cfg = torch._C._profiler._ExperimentalConfig(profile_all_threads=True)
    with start(traced, weights, backend="threads", threads_per_worker=threads_per_worker) as run:
        for _ in range(warmup):
            run.run(dict(feeds))
        _tids.clear()
        with (
            profile(activities=[ProfilerActivity.CPU], experimental_config=cfg) as prof,
            torch.profiler.record_function("inference (caller)"),
        ):
            run.run(dict(feeds))
        tids = dict(_tids)
    with tempfile.TemporaryDirectory() as d:
        raw = os.path.join(d, "trace.json")
        prof.export_chrome_trace(raw)
        with open(raw) as f:
            data = json.load(f)
    summary = _decorate_trace(data, tids, program)
    with open(path, "w") as f:
        json.dump(data, f)
    return summary


_tids: dict[int, str] = {}  # native thread id -> cluster, filled by traced clusters


class _TracingChannel:
    """Wraps a channel endpoint: ``get``/``put`` inside ``record_function`` boxes (the torch calls
    the endpoint itself makes are not labelled as statements)."""

    def __init__(self, ch: Any, state: Any):
        self._ch = ch
        self._state = state

    def get(self, name: str) -> Any:
        from torch.profiler import record_function

        self._state.in_channel = True
        try:
            with record_function(f"get {name}"):
                return self._ch.get(name)
        finally:
            self._state.in_channel = False

    def put(self, name: str, tensor: Any) -> None:
        from torch.profiler import record_function

        self._state.in_channel = True
        try:
            with record_function(f"put {name}"):
                self._ch.put(name, tensor)
        finally:
            self._state.in_channel = False


def _traced_cluster(cluster: str, fn: Callable[..., Any], module_path: str | None):
    import threading

    from torch.overrides import TorchFunctionMode
    from torch.profiler import record_function

    source = os.path.realpath(module_path) if module_path else fn.__code__.co_filename
    state = threading.local()

    class _Label(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            if getattr(state, "in_channel", False):
                return func(*args, **(kwargs or {}))
            with record_function(_statement_label(source)):
                return func(*args, **(kwargs or {}))

    def run(ch: Any, w: Any) -> None:
        _tids[threading.get_native_id()] = cluster
        with record_function(f"cluster {cluster}"), _Label():
            fn(_TracingChannel(ch, state), w)

    run.__name__ = run.__qualname__ = getattr(fn, "__name__", cluster)
    return run


@functools.lru_cache(maxsize=4096)
def _realpath(filename: str) -> str:
    return os.path.realpath(filename)


@functools.lru_cache(maxsize=65536)
def _line_label(filename: str, lineno: int) -> str:
    import linecache

    line = linecache.getline(filename, lineno)
    m = _NODE_COMMENT.search(line)
    target = line.split("=", 1)[0].strip() if "=" in line else ""
    if m:
        return f"{m.group(1)} {m.group(2)}" + (f" -> {target}" if target else "")
    return line.strip()[:60] or "torch op"


def _statement_label(source: str) -> str:
    """The label of the generated statement (in file ``source``) that made the current call."""
    f = sys._getframe(2)
    while f is not None and _realpath(f.f_code.co_filename) != source:
        f = f.f_back  # type: ignore[assignment]
    if f is None:
        return "torch op"
    return _line_label(f.f_code.co_filename, f.f_lineno)


def _decorate_trace(data: Any, tids: Mapping[int, str], program: Any) -> dict[str, Any]:
    """Rename cluster rows, add put->get flow arrows; return a summary: the inference's wall time
    and, per cluster, its span and the time in statements (``busy``), waiting in ``get``, in
    ``put``, and the rest (Python glue and the labelling itself), all in ms."""
    events = data["traceEvents"] if isinstance(data, dict) else data
    pid = None
    puts: dict[str, dict[str, Any]] = {}
    gets: dict[str, dict[str, Any]] = {}
    stats: dict[str, dict[str, float]] = {}
    wall = 0.0
    for e in events:
        if e.get("ph") != "X":
            continue
        name = str(e.get("name", ""))
        dur = float(e.get("dur", 0.0)) / 1e3
        if name == "inference (caller)":
            wall = dur
        tid = e.get("tid")
        c = tids.get(tid) if isinstance(tid, int) else None
        if c is None:
            continue
        pid = e.get("pid")
        st = stats.setdefault(c, {"span": 0.0, "busy": 0.0, "get": 0.0, "put": 0.0, "ops": 0})
        if name.startswith("put "):
            puts[name[4:]] = e
            st["put"] += dur
        elif name.startswith("get "):
            gets[name[4:]] = e
            st["get"] += dur
        elif name.startswith("cluster "):
            st["span"] += dur
        elif not name.startswith(("aten::", "mkldnn::")):
            st["busy"] += dur
            st["ops"] += 1
    for st in stats.values():
        st["other"] = st["span"] - st["busy"] - st["get"] - st["put"]
        for k in st:
            st[k] = round(st[k], 3)
    flow = 0
    for ch, p in puts.items():
        g = gets.get(ch)
        if g is None:
            continue
        flow += 1
        common = {"name": ch, "cat": "transfer", "id": flow}
        events.append({**common, "ph": "s", "pid": p["pid"], "tid": p["tid"], "ts": p["ts"]})
        end = g["ts"] + max(g.get("dur", 0) - 0.001, 0)
        events.append({**common, "ph": "f", "bp": "e", "pid": g["pid"], "tid": g["tid"], "ts": end})
    order = list(program.clusters)
    for tid, c in tids.items():
        if pid is None:
            break
        events.append(
            {
                "ph": "M",
                "name": "thread_name",
                "pid": pid,
                "tid": tid,
                "args": {"name": f"cluster {c}"},
            }
        )
        events.append(
            {
                "ph": "M",
                "name": "thread_sort_index",
                "pid": pid,
                "tid": tid,
                "args": {"sort_index": order.index(c) if c in order else 99},
            }
        )
    return {
        "wall_ms": round(wall, 3),
        "clusters": {c: stats[c] for c in order if c in stats},
        "transfers": flow,
    }


# ----------------------------------------------------------------------------------- reports


def _ms(x: float | None) -> str:
    if x is None:
        return "–"
    return f"{x:.1f}" if x >= 100 else f"{x:.2f}" if x >= 1 else f"{x:.3f}"


def _x(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}×"


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.0f} %"


_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|#~!])")


def md_text(text: object) -> str:
    """``text`` as literal Markdown on one line: every character that could start markup
    (``|`` ends a table cell, `` ` `` a code span, ``#`` a heading, ``<`` HTML...) backslash-
    escaped, line breaks as spaces. Model names and error messages go through it."""
    one = " ".join(str(text).splitlines())
    return _MD_SPECIAL.sub(r"\\\1", one)


def md_code(text: object) -> str:
    """``text`` as one Markdown code span: fenced by more backticks than the longest run in it
    (CommonMark), so a command or path with backticks stays literal; line breaks as spaces."""
    one = " ".join(str(text).splitlines())
    longest = max((len(m) for m in re.findall(r"`+", one)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if one.startswith("`") or one.endswith("`") else ""
    return f"{fence}{pad}{one}{pad}{fence}"


def render_markdown(results: Sequence[ModelResult], env: Environment) -> str:
    """The benchmark report: environment, summary table, targets, per-model details."""
    p = env.workers
    out = ["# Ramiel benchmarks", ""]
    out += _env_lines(env)
    out += ["", "## Summary", ""]
    out += [
        f"Median latency in ms (batch 1). P = {p}. `seq` = the sequential generated module "
        f"with 1 or {p} intra-op threads; `par` = the parallel generated module, clusters × "
        "threads per worker, threads or processes backend; `ORT` = onnxruntime on the ONNX file "
        f"(1 / {p} intra-op threads; `par` = its parallel executor with {p} inter-op threads). "
        "W and CP come from measured per-op times (`ramiel profile`); bound = min(P, W/CP); "
        f"est. speed-up = W / estimated makespan of the par-…-{p}x1 schedule (profiled costs); "
        f"speed-up = measured seq-1t / par-…-{p}x1 (the faster backend); efficiency = speed-up / "
        f"bound. `clusters`: how many clusters the compiler made when asked for {p} (merging "
        "may leave fewer; the cores left free become intra-op threads: a 1-cluster program runs in the caller's thread with P of them, as `CompiledModel` runs it). `noise`: cores other processes kept busy while the model was timed / the lowest "
        f"speed-up of {p} threads of perfectly parallel work over one, measured just before and "
        f"after (ideal: 0 / {p}). Next-to-last column: the fastest multi-cluster configuration "
        "against the fastest "
        f"intra-op-only one (seq-1t, seq-{p}t), i.e. what Ramiel gains over falling back to one "
        "cluster. `tuned`: the program `ramiel tune` chose (the fastest of one cluster with 1, "
        f"{p} or per-op threads, {p} clusters with 1 or per-op threads, in a timing of its own "
        "before this one), and how it compares with the best intra-op-only configuration "
        "(`ties`: the 95 % intervals of the two medians overlap).",
        "",
        "Method: all configurations of a model are timed round-robin in one process (rotating "
        "order), each call after an untimed pause (so that threads spinning after the previous "
        "configuration are idle), until the 95 % CI of every median is within ±2 % or the time "
        "budget is spent; onnxruntime runs with its pool threads' spinning switched off "
        "(`session.intra_op/inter_op.allow_spinning = 0`), since a spinning pool keeps a core "
        "busy after each run and would slow down the next configuration.",
        "",
    ]
    keys = [c.key for c in configs_for(p)]
    head = [
        "model",
        "nodes",
        "W ms",
        "W/CP",
        "bound",
        "clusters",
        *keys,
        "est. speed-up",
        "speed-up",
        "eff.",
        "best par vs best seq",
        "tuned vs best seq",
        "noise",
    ]
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "|".join(["---"] + ["--:"] * (len(head) - 1)) + "|")
    for r in results:
        if r.error:
            out.append(
                f"| {md_text(r.name)} | "
                + " | ".join(["–"] * (len(head) - 2))
                + f" | error: {md_text(r.error)} |"
            )
            continue
        key, sp, eff, est = _headline(r)
        cells = [
            md_text(r.name),
            str(r.nodes),
            _ms(r.work_ms),
            f"{r.parallelism:.2f}" if r.parallelism else "–",
            f"{r.bound:.2f}" if r.bound else "–",
            _clusters(r, key),
        ]
        best_lat = min((r.median(k) or math.inf) for k in keys)
        for k in keys:
            m = r.median(k)
            s = _ms(m)
            cells.append(f"**{s}**" if m is not None and m == best_lat else s)
        cells += [_x(est), _x(sp), _pct(eff), _verdict(r), _tuned_verdict(r), _noise(r)]
        out.append("| " + " | ".join(cells) + " |")
    out += ["", "Bold: the fastest configuration of the row.", ""]
    out += _ort_lines(results, p)
    out += _variant_lines(results, p)
    out += _busy_lines(results)
    out += _target_lines(results, p)
    runs = "best of 2" if not env.quick else "one run"
    out += ["", f"## Compile time (s, default analytic-cost compile, {runs})", ""]
    out.append(
        "ONNX file to Python files and weights (`ramiel compile`); `print` includes writing the "
        "weights file. `profile` = `ramiel profile` (per-op timing, a separate step)."
    )
    out.append("")
    out.append("| model | import | passes | lower | print | total | < 2 s | profile (s) |")
    out.append("|---|--:|--:|--:|--:|--:|:-:|--:|")
    for r in results:
        if r.error and not r.compile_s:
            continue
        c = r.compile_s
        ok = "yes" if r.compile_total_s < TARGET_COMPILE_S else "**no**"
        out.append(
            f"| {md_text(r.name)} | {c.get('import', 0):.2f} | {c.get('passes', 0):.2f} | "
            f"{c.get('lower', 0):.2f} | {c.get('print', 0):.2f} | {r.compile_total_s:.2f} | {ok} | "
            f"{r.profile_s:.1f} |"
        )
    out += ["", "## Per model", ""]
    out += [
        "Per configuration: median, min and max latency (ms) over n timed calls; the estimated "
        "makespan of the parallel schedule (profiled costs); the median number of minor page "
        "faults of the benchmark process per call (fresh memory the kernel had to map in; the "
        "processes backend's workers are other processes, not counted); the largest output "
        "error relative to seq-1t.",
        "",
    ]
    for r in results:
        out += _model_lines(r)
    return "\n".join(out) + "\n"


def ratio_ci(a: Timing | None, b: Timing | None) -> tuple[float, float, float] | None:
    """``a.median / b.median`` and a 95 % interval of it from the two medians' intervals (the
    smallest and largest ratio they allow: conservative, no independence assumed)."""
    if a is None or b is None or b.median <= 0 or b.ci[0] <= 0:
        return None
    return a.median / b.median, a.ci[0] / b.ci[1], a.ci[1] / b.ci[0]


def _ratio(x: tuple[float, float, float] | None, key: str | None = None) -> str:
    if x is None:
        return "–"
    text = f"{x[0]:.2f} [{x[1]:.2f}, {x[2]:.2f}]"
    if x[2] <= 1.0:
        text = f"**{text}**"  # faster than onnxruntime, interval included
    return f"{text} {key}" if key else text


def _timing(r: ModelResult, key: str) -> Timing | None:
    c = r.config(key)
    return c.timing if c is not None else None


def _fastest(r: ModelResult, pred: Callable[[ConfigResult], bool]) -> ConfigResult | None:
    cands = [c for c in r.configs if c.engine != "ort" and c.timing and pred(c)]
    return min(cands, key=lambda c: c.timing.median) if cands else None  # type: ignore[union-attr]


def _on_all_cores(c: ConfigResult) -> bool:
    """A Ramiel configuration that uses more than one core (P threads, clusters or per-op)."""
    return c.threads > 1 or c.clusters > 1 or c.hybrid


def _ort_lines(results: Sequence[ModelResult], p: int) -> list[str]:
    """Ramiel against onnxruntime with the same cores: medians [95 % interval] as ratios."""
    rows = [r for r in results if not r.error and r.configs]
    if not rows or p < 2:
        return []
    out = [
        f"## Against onnxruntime (same cores, P = {p})",
        "",
        "Ratio of medians, Ramiel / onnxruntime (< 1: Ramiel faster), with a 95 % interval "
        "(from the two medians' intervals: the smallest and largest ratio they allow); bold: "
        f"the whole interval at or below 1. 1 core: against `ort-1t`; {p} cores: against "
        f"`ort-{p}t`. `default` = the default program (`ramiel.compile(model)`, analytic costs: "
        "clusters = cores, the one-cluster fall-back to intra-op threads); `best` = the "
        f"fastest Ramiel configuration on {p} cores (any compile options, `ramiel tune`'s "
        "included), named after the ratio; `compiled` = the fastest with compiled segments "
        "(`ramiel bench --compile`), and the seconds of torch.compile its process spent at "
        "load time.",
        "",
        f"| model | ort-1t ms | ort-{p}t ms | seq-1t / ort-1t | compiled 1t / ort-1t | "
        f"default / ort-{p}t | best / ort-{p}t | compiled / ort-{p}t | compile s |",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for r in rows:
        o1, op = _timing(r, "ort-1t"), _timing(r, f"ort-{p}t")
        best = _fastest(r, _on_all_cores)
        comp = _fastest(r, lambda c: _on_all_cores(c) and c.variant == "compiled")
        comp1 = r.config("seq-1t-compiled")
        cells = [
            r.name,
            _ms(o1.median if o1 else None),
            _ms(op.median if op else None),
            _ratio(ratio_ci(_timing(r, "seq-1t"), o1)),
            _ratio(ratio_ci(comp1.timing if comp1 else None, o1)),
            _ratio(ratio_ci(_timing(r, "default"), op)),
            _ratio(ratio_ci(best.timing if best else None, op), best.key if best else None),
            _ratio(ratio_ci(comp.timing if comp else None, op), comp.key if comp else None),
            f"{comp.compile_s:.0f}" if comp and comp.compile_s is not None else "–",
        ]
        out.append("| " + " | ".join(cells) + " |")
    return [*out, ""]


def _variant_lines(results: Sequence[ModelResult], p: int) -> list[str]:
    """Each compile-option variant against the default options, same configuration."""
    present = sorted({c.variant for r in results for c in r.configs if c.variant})
    if not present:
        return []
    known = variants()
    out = [
        "## Compile-option variants",
        "",
        "Median ms of each configuration compiled with the variant's options, and its ratio to "
        "the same configuration with the default options (< 1: the variant is faster). "
        + "; ".join(f"`{v}`: {known[v][0] if v in known else v}" for v in present)
        + ". `compile s`: torch.compile at load time (compiled segments), per process.",
        "",
    ]
    keys = ["seq-1t"] + ([f"seq-{p}t", f"par-threads-{p}x1"] if p > 1 else [])
    head = ["model", "variant"]
    for k in keys:
        head += [f"{k} ms", "vs default"]
    head.append("compile s")
    out.append("| " + " | ".join(head) + " |")
    out.append("|---|---|" + "--:|" * (len(head) - 2))
    for r in results:
        if r.error or not r.configs:
            continue
        for v in present:
            cells = [r.name, v]
            comp: list[float] = []
            for k in keys:
                c = r.config(f"{k}-{v}")
                t = c.timing if c else None
                cells += [_ms(t.median if t else None), _ratio(ratio_ci(t, _timing(r, k)))]
                if c is not None and c.compile_s is not None:
                    comp.append(c.compile_s)
            cells.append(", ".join(f"{x:.0f}" for x in comp) if comp else "–")
            out.append("| " + " | ".join(cells) + " |")
    return [*out, ""]


def _busy_lines(results: Sequence[ModelResult]) -> list[str]:
    rows = [r for r in results if r.busy_quiet is not None and r.busy_busy is not None]
    if not rows:
        return []
    out = [
        "## One busy background core",
        "",
        "The default program (`ramiel.compile(model)`), timed in interleaved blocks: calls on "
        "the machine as it is, then calls while a process the benchmark started spins on one "
        "core (`ramiel.bench.busy_core`), repeated. Medians ms [95 % interval]; target: busy "
        f"at most {TARGET_BUSY_RATIO}× quiet.",
        "",
        "| model | program | quiet ms | busy ms | busy / quiet | ≤ 1.5× |",
        "|---|---|--:|--:|--:|:-:|",
    ]
    for r in rows:
        q, b = r.busy_quiet, r.busy_busy
        assert q is not None and b is not None
        c = r.config("default")
        prog = f"{c.actual_clusters} cluster(s)" if c and c.actual_clusters else "–"
        ratio = b.median / q.median
        ok = "yes" if ratio <= TARGET_BUSY_RATIO else "**no**"
        out.append(
            f"| {r.name} | {prog} | {_ms(q.median)} [{_ms(q.ci[0])}, {_ms(q.ci[1])}] | "
            f"{_ms(b.median)} [{_ms(b.ci[0])}, {_ms(b.ci[1])}] | {ratio:.2f}× | {ok} |"
        )
    return [*out, ""]


def _env_lines(env: Environment) -> list[str]:
    lb = ", ".join(f"{x:.2f}" for x in env.load_before)
    la = ", ".join(f"{x:.2f}" for x in env.load_after) if env.load_after else "?"
    lines = [
        f"- date: {env.date}",
        f"- machine: {env.nproc} cores ({env.cpu}), P = {env.workers} workers",
        f"- versions: Python {env.python}, torch {env.torch}, onnxruntime {env.onnxruntime}, "
        f"onnx {env.onnx}",
        f"- load average (1, 5, 15 min): {lb} before, {la} after",
        f"- command: {md_code(env.command)}"
        + (" (quick: few repetitions, not a measurement)" if env.quick else ""),
    ]
    if env.other_cores is not None:
        lines.append(
            f"- other processes kept {env.other_cores:.2f} of the {env.nproc} cores busy on "
            "average during the run (machine-wide busy time minus this process's own)"
        )
    if not env.malloc_tuned:
        lines.append("- glibc malloc defaults (`--no-malloc-tuning`)")
    else:
        lines.append(
            "- glibc malloc tuned for every configuration (`mallopt(M_MMAP_THRESHOLD, 32 MiB)`, "
            "`mallopt(M_TRIM_THRESHOLD, 1 GiB)`; `--no-malloc-tuning` to see the defaults): "
            "freed tensor memory is kept for reuse instead of being page-faulted in again on "
            "every inference"
        )
    busy = env.other_cores if env.other_cores is not None else env.load_before[0]
    if busy > 0.25 * env.nproc:
        lines.append(
            f"- **warning**: other processes used {busy:.2f} cores: they competed with the "
            "benchmark, so these numbers are not reliable (threaded configurations get a larger "
            "share of a loaded machine and look better than they are)"
        )
    return lines


def _headline(
    r: ModelResult,
) -> tuple[str | None, float | None, float | None, float | None]:
    """The best 1-thread-per-worker parallel config with P clusters: key, speed-up, efficiency,
    estimated speed-up."""
    cands = [
        c
        for c in r.configs
        if c.engine == "ramiel-par"
        and c.threads == 1
        and c.clusters == r.workers
        and c.timing
        and not (c.variant or c.default)
    ]
    if not cands:
        return None, None, None, None
    best = min(cands, key=lambda c: c.timing.median)  # type: ignore[union-attr]
    return best.key, best.speedup, r.efficiency.get(best.key), best.est_speedup


def _clusters(r: ModelResult, key: str | None) -> str:
    c = r.config(key) if key else None
    return str(c.actual_clusters) if c and c.actual_clusters is not None else "–"


def _noise(r: ModelResult) -> str:
    """Other processes' cores and the lowest machine scaling while the model was timed."""
    other = "?" if r.other_cores is None else f"{r.other_cores:.2f}"
    scaling = f"{min(r.machine_scaling):.2f}×" if r.machine_scaling else "–"
    return f"{other} / {scaling}"


def _verdict(r: ModelResult) -> str:
    if r.best_par is None or r.best_intra is None:
        return "–"
    bp, bi = r.median(r.best_par), r.median(r.best_intra)
    assert bp is not None and bi is not None
    ratio = bi / bp
    word = "wins" if ratio >= 1.0 else "**loses**"
    return f"{word} {ratio:.2f}× ({r.best_par} vs {r.best_intra})"


def _tuned_verdict(r: ModelResult) -> str:
    """``ramiel tune``'s program against the fastest intra-op-only configuration: ``wins``/
    ``loses`` only where the 95 % intervals of the two medians do not overlap, else ``ties``."""
    tc, bi = r.config("tuned"), r.config(r.best_intra) if r.best_intra else None
    if tc is None or tc.timing is None or bi is None or bi.timing is None:
        return "–"
    ratio = bi.timing.median / tc.timing.median
    if tc.timing.ci[1] < bi.timing.ci[0]:
        word = "wins"
    elif tc.timing.ci[0] > bi.timing.ci[1]:
        word = "**loses**"
    else:
        word = "ties"
    return f"{word} {ratio:.2f}× ({r.tuned_choice} vs {bi.key})"


def _target_lines(results: Sequence[ModelResult], p: int) -> list[str]:
    out = ["## Targets", ""]
    for r in results:
        if r.name not in TARGET_MODELS or r.error:
            continue
        key, sp, eff, est = _headline(r)
        ok = eff is not None and eff >= TARGET_EFFICIENCY
        out.append(
            f"- {md_text(r.name)}: {key} speed-up {_x(sp)} of bound {r.bound or 0:.2f} = efficiency "
            f"{_pct(eff)} — {'met' if ok else '**missed**'} (target ≥ {_pct(TARGET_EFFICIENCY)}; "
            f"the schedule itself was estimated at {_x(est)})"
        )
    tuned = [r for r in results if not r.error and _tuned_verdict(r) != "–"]
    if tuned:
        lose = [md_text(r.name) for r in tuned if _tuned_verdict(r).startswith("**loses")]
        win = [md_text(r.name) for r in tuned if _tuned_verdict(r).startswith("wins")]
        out.append(
            "- `ramiel tune`'s program vs the best intra-op-only configuration (95 % intervals of "
            f"the medians): slower on {', '.join(lose) if lose else 'no model'}; faster on "
            f"{', '.join(win) if win else 'no model'}; a tie (overlapping intervals) on the rest"
        )
    losers = [r for r in results if not r.error and _verdict(r).startswith("**loses")]
    if losers:
        names = ", ".join(md_text(r.name) for r in losers)
        out.append(
            f"- best parallel config slower than the best intra-op-only config on: {names} "
            "(see the per-model traces)"
        )
    else:
        out.append("- best parallel config never slower than the best intra-op-only config")
    slow = [r for r in results if r.compile_s and r.compile_total_s >= TARGET_COMPILE_S]
    if slow:
        out.append(
            "- compile ≥ 2 s: "
            + ", ".join(f"{md_text(r.name)} {r.compile_total_s:.2f} s" for r in slow)
        )
    else:
        out.append("- compile time < 2 s on every model")
    return out


def _model_lines(r: ModelResult) -> list[str]:
    out = [f"### {md_text(r.name)}", ""]
    if r.error:
        return [*out, f"error: {md_text(r.error)}", ""]
    out.append(
        f"{r.nodes} nodes; measured W = {_ms(r.work_ms)} ms, CP = {_ms(r.cp_ms)} ms, W/CP = "
        f"{r.parallelism or 0:.2f} (analytic model: {r.analytic_parallelism or 0:.2f}); bound "
        f"min(P, W/CP) = {r.bound or 0:.2f}."
        + (f" Trace: {md_code(os.path.relpath(r.trace_path))}." if r.trace_path else "")
        + (
            f" Other processes kept {r.other_cores:.2f} cores busy while timing."
            if r.other_cores is not None
            else ""
        )
        + (
            (
                f" Timed {r.attempts} times (machine busy), the least disturbed kept."
                if r.attempts > 1
                else ""
            )
            + f" Machine scaling on perfectly parallel work (P threads vs 1, ideal {r.workers}): "
            + " before, ".join(f"{x:.2f}×" for x in r.machine_scaling)
            + " after timing."
            if r.machine_scaling
            else ""
        )
        + (
            f" `ramiel tune` ({r.tune_s:.0f} s) chose {r.tuned_choice}; its own medians: "
            + ", ".join(
                f"{c['key']} {c['median_ms']:.2f} ms"
                if c.get("median_ms") is not None
                else f"{c['key']} failed"
                for c in r.tuned_candidates
            )
            + "."
            if r.tuned_choice
            else ""
        )
    )
    out += [
        "",
        "| config | median ms | min | max | n | speed-up vs seq-1t | est. makespan ms | "
        "page faults | max rel. err |",
    ]
    out.append("|---|--:|--:|--:|--:|--:|--:|--:|--:|")
    for c in r.configs:
        t = c.timing
        if t is None:
            out.append(f"| {c.key} | error: {c.error} | | | | | | | |")
            continue
        pf = "–" if c.backend == "processes" or t.faults is None else f"{t.faults:.0f}"
        out.append(
            f"| {c.key} | {_ms(t.median)} | {_ms(t.min)} | {_ms(t.max)} | {t.n} | {_x(c.speedup)} | "
            f"{_ms(c.est_makespan_ms)} | {pf} | {c.max_rel_err:.1e} |"
        )
    if r.trace.get("clusters"):
        out += [
            "",
            f"Traced inference (threads backend, {r.trace['wall_ms']:.1f} ms with the tracing "
            "overhead), per cluster in ms: `busy` = in statements, `get` = waiting for a "
            "transfer, `other` = Python glue and tracing.",
            "",
            "| cluster | ops | span | busy | get | put | other |",
            "|---|--:|--:|--:|--:|--:|--:|",
        ]
        for c, st in r.trace["clusters"].items():
            out.append(
                f"| {c} | {st['ops']:.0f} | {st['span']:.1f} | {st['busy']:.1f} | {st['get']:.1f} | "
                f"{st['put']:.2f} | {st['other']:.1f} |"
            )
    for n in r.notes:
        out.append(f"\nnote: {n}")
    out.append("")
    return out


def to_json(results: Sequence[ModelResult], env: Environment) -> str:
    """Everything as JSON (samples included)."""
    return json.dumps(
        {
            "environment": dataclasses.asdict(env),
            "models": [dataclasses.asdict(r) for r in results],
        },
        indent=1,
    )


def load_json(path: str) -> tuple[list[ModelResult], Environment]:
    """Read back what :func:`to_json` wrote (to render the report or plot again)."""
    with open(path) as f:
        data = json.load(f)

    def tup(v: Any) -> Any:
        return tuple(v) if isinstance(v, list) else v

    env_fields = {f.name for f in dataclasses.fields(Environment)}
    env = Environment(**{k: tup(v) for k, v in data["environment"].items() if k in env_fields})
    cfg_fields = {f.name for f in dataclasses.fields(ConfigResult)}
    res_fields = {f.name for f in dataclasses.fields(ModelResult)}
    results = []
    for m in data["models"]:
        configs = []
        for c in m.get("configs", []):
            c = {k: v for k, v in c.items() if k in cfg_fields}
            if c.get("timing"):
                c["timing"] = Timing(**{**c["timing"], "ci": tuple(c["timing"]["ci"])})
            configs.append(ConfigResult(**c))
        fields = {k: v for k, v in m.items() if k in res_fields}
        fields["configs"] = configs
        for k in ("busy_quiet", "busy_busy"):
            if fields.get(k):
                fields[k] = Timing(**{**fields[k], "ci": tuple(fields[k]["ci"])})
        results.append(ModelResult(**fields))
    return results, env


def plot_speedups(results: Sequence[ModelResult], env: Environment, path: str) -> None:
    """Two panels of speed-ups over Ramiel's sequential module with 1 thread, per model: (top)
    Ramiel's own configurations with the bound min(P, W/CP) marked; (bottom) onnxruntime's, with
    the best Ramiel configuration for reference. Bars are medians; whiskers span min..max."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rs = [r for r in results if not r.error and r.median("seq-1t")]
    cfgs = [c for c in configs_for(env.workers) if c.key != "seq-1t"]
    ramiel = [c for c in cfgs if c.engine != "ort"]
    ort = [c for c in cfgs if c.engine == "ort"]
    palette = {
        "ramiel-seq": ["#6baed6"],
        "ramiel-par-threads": ["#d94801", "#f16913", "#fd8d3c"],
        "ramiel-par-processes": ["#fdae6b", "#fdd0a2", "#feedde"],
        "ort": ["#a1d99b", "#41ab5d", "#006d2c"],
    }
    used: dict[str, int] = {}

    def colour(c: Config) -> str:
        group = c.engine if c.engine != "ramiel-par" else f"ramiel-par-{c.backend}"
        k = used.get(group, 0)
        used[group] = k + 1
        opts = palette[group]
        return opts[min(k, len(opts) - 1)]

    def speedup(r: ModelResult, key: str) -> tuple[float, float, float]:
        c, seq = r.config(key), r.config("seq-1t")
        if not c or not c.timing or not seq or not seq.timing:
            return 0.0, 0.0, 0.0
        base = seq.timing.median
        return base / c.timing.median, base / c.timing.max, base / c.timing.min

    def bars(ax, series: list[tuple[str, str, list[tuple[float, float, float]]]]) -> None:  # type: ignore[no-untyped-def]
        width = 0.8 / max(1, len(series))
        for j, (label, col, vals) in enumerate(series):
            x = xs - 0.4 + (j + 0.5) * width
            mid = np.array([v[0] for v in vals])
            err = np.array(
                [[max(0.0, v[0] - v[1]) for v in vals], [max(0.0, v[2] - v[0]) for v in vals]]
            )
            ax.bar(x, mid, width, label=label, color=col, edgecolor="white", linewidth=0.4)
            ax.errorbar(x, mid, yerr=err, fmt="none", ecolor="#555555", elinewidth=0.6, capsize=0)
        top_y = max([v[2] for _l, _c, vals in series for v in vals] + [2.0])
        ax.set_ylim(0, 1.3 * top_y)  # room for the legend
        ax.axhline(1.0, color="grey", linewidth=0.8, linestyle=":")
        ax.grid(axis="y", alpha=0.3)
        ax.set_ylabel("speed-up over Ramiel\nsequential, 1 thread")

    xs = np.arange(len(rs))
    fig, (top, bottom) = plt.subplots(
        2, 1, figsize=(max(8.0, 1.1 * len(rs) + 2.5), 7.5), sharex=True
    )
    bars(top, [(c.label, colour(c), [speedup(r, c.key) for r in rs]) for c in ramiel])
    for i, r in enumerate(rs):
        if r.bound:
            top.hlines(r.bound, i - 0.45, i + 0.45, colors="black", linewidth=1.8)
    top.plot([], [], color="black", linewidth=1.8, label=f"bound min({env.workers}, W/CP)")
    top.set_title("Ramiel: task parallelism (clusters x threads) vs intra-op threads", fontsize=10)
    top.legend(fontsize=8, ncol=2, loc="upper left", frameon=False)

    best = []
    for r in rs:
        cands = [c for c in r.configs if c.engine != "ort" and c.timing]
        best.append(
            speedup(r, min(cands, key=lambda c: c.timing.median).key) if cands else (0, 0, 0)
        )  # type: ignore[union-attr]
    bars(
        bottom,
        [("best Ramiel configuration", "#d94801", best)]
        + [(c.label, colour(c), [speedup(r, c.key) for r in rs]) for c in ort],
    )
    bottom.set_title("onnxruntime on the same ONNX file", fontsize=10)
    bottom.legend(fontsize=8, ncol=2, loc="upper left", frameon=False)
    bottom.set_xticks(xs)
    bottom.set_xticklabels([r.name.removeprefix("light_") for r in rs], rotation=30, ha="right")
    fig.suptitle(
        f"Latency speed-ups, batch 1, P = {env.workers} ({env.nproc} cores), medians "
        f"(whiskers: min..max); {env.date[:10]}",
        fontsize=11,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ----------------------------------------------------------------------------------- driver


BEGIN_MARK = "<!-- ramiel-bench:begin -->"
END_MARK = "<!-- ramiel-bench:end -->"


def write_markdown(path: str, md: str) -> None:
    """Write the report to ``path``; if the file has :data:`BEGIN_MARK`/:data:`END_MARK` lines,
    only the text between them is replaced (so hand-written findings around it stay)."""
    old = ""
    with contextlib.suppress(FileNotFoundError), open(path) as f:
        old = f.read()
    if BEGIN_MARK in old and END_MARK in old.split(BEGIN_MARK, 1)[1]:
        head, rest = old.split(BEGIN_MARK, 1)
        tail = rest.split(END_MARK, 1)[1]
        body = md.split("\n", 1)[1] if md.startswith("# ") else md  # keep the file's own title
        text = f"{head}{BEGIN_MARK}\n{body.strip()}\n{END_MARK}{tail}"
    else:
        text = md
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def run_bench(
    models: Sequence[str],
    workers: int | None = None,
    out_dir: str = "bench/results",
    json_path: str | None = None,
    quick: bool = False,
    markdown_path: str | None = None,
    plot: bool = True,
    trace: bool = True,
    command: str | None = None,
    say: Callable[[str], None] = lambda _m: None,
    malloc_tuning: bool = True,
    render_from: str | None = None,
    compile: bool = False,  # noqa: A002 - the option's name (ramiel bench --compile)
    variant_names: Sequence[str] | None = None,
    busy_core: bool = True,
    layout: str = "auto",
) -> tuple[list[ModelResult], Environment, str]:
    """Benchmark ``models`` (see :func:`resolve_models`); write the report files into ``out_dir``
    (``bench.md``, ``bench.json``, ``speedups.png``, ``traces/<model>.json``), the markdown also to
    ``markdown_path`` and the JSON also to ``json_path`` if given. Returns the results, the
    environment and the markdown text. ``malloc_tuning``: call :func:`tune_malloc` first (for
    every configuration alike; without it, whichever configuration's thread glibc happens to trim
    pays page faults per inference, e.g. seq-1t of light_densenet121 ~20,000 per inference).
    ``render_from``: measure nothing, render the reports again from that JSON file.
    ``variant_names``: the compile-option variants to time beside the defaults (keys of
    :func:`variants`; default :data:`DEFAULT_VARIANTS`, those available); ``compile``: add the
    ``compiled`` variant and let ``ramiel tune`` consider compiled candidates; ``busy_core``:
    time the default program under one busy background core too. With ``quick`` and no
    models: one small zoo model (:data:`QUICK_MODEL`).
    ``layout``: the memory-format option of every Ramiel configuration (``CompileOptions.layout``;
    a variant's own options win: ``nchw`` is ``layout="nchw"``, and is not a default variant when
    ``layout`` is already ``nchw``).
    """
    import torch

    if render_from is not None:
        results, env = load_json(render_from)
        for r in results:  # derived numbers follow the current rules
            if r.configs and not r.error:
                r.efficiency, r.notes = {}, []
                _summarise(r)
        return (
            results,
            env,
            _write_reports(
                results, env, out_dir, json_path, markdown_path, plot, say, write_json=False
            ),
        )
    specs = resolve_models(models if models or not quick else [QUICK_MODEL])
    p = workers or os.cpu_count() or 1
    cmd = command or "ramiel bench " + " ".join(shlex.quote(a) for a in models)
    known = variants()
    if variant_names is None:
        chosen = [v for v in default_variants() if not (v == "nchw" and layout == "nchw")]
    else:
        chosen = list(variant_names)
        unknown = [v for v in chosen if v not in known]
        if unknown:
            raise ValueError(f"unknown variant(s) {', '.join(unknown)}; known: {', '.join(known)}")
    if compile and "compiled" not in chosen:
        chosen.append("compiled")
    env = Environment.capture(cmd, p, quick)
    if malloc_tuning:
        env.malloc_tuned = tune_malloc()
    plan = Plan.quick() if quick else Plan()
    plan = dataclasses.replace(
        plan,
        malloc_tuning=env.malloc_tuned,
        variants=tuple(chosen),
        tune_compile=compile,
        busy_rounds=plan.busy_rounds if busy_core else 0,
        layout=layout,
    )
    os.makedirs(out_dir, exist_ok=True)
    caller_threads = torch.get_num_threads()
    results = []
    meter = CpuMeter()
    for spec in specs:
        say(f"{spec.name}")
        results.append(bench_model(spec, p, out_dir, plan, trace=trace, say=say))
        torch.set_num_threads(caller_threads)
    env.load_after = load_average()
    env.other_cores = meter.other_cores()
    md = _write_reports(results, env, out_dir, json_path, markdown_path, plot, say)
    return results, env, md


def _write_reports(
    results: Sequence[ModelResult],
    env: Environment,
    out_dir: str,
    json_path: str | None,
    markdown_path: str | None,
    plot: bool,
    say: Callable[[str], None],
    write_json: bool = True,
) -> str:
    os.makedirs(out_dir, exist_ok=True)
    md = render_markdown(results, env)
    with open(os.path.join(out_dir, "bench.md"), "w") as f:
        f.write(md)
    js = to_json(results, env)
    if write_json:
        with open(os.path.join(out_dir, "bench.json"), "w") as f:
            f.write(js)
    if json_path:
        with open(json_path, "w") as f:
            f.write(js)
    if markdown_path:
        write_markdown(markdown_path, md)
    if plot:
        try:
            plot_speedups(results, env, os.path.join(out_dir, "speedups.png"))
        except ImportError:
            say("matplotlib is not installed: no plot")
    return md
