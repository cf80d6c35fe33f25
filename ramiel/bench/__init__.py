"""``ramiel bench``: latency of the generated code against PyTorch intra-op threads and onnxruntime.

For each model, **interleaved** (every round times each configuration once, in a rotating order,
so that drift of a shared, noisy machine hits all configurations alike), each configuration in a
**process of its own** (:class:`ramiel.measure.Isolated`: spawned, so that no two configurations share an OpenMP
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

Layout: :mod:`ramiel.bench.models` (what to time), :mod:`~ramiel.bench.configs` (the
configurations, variants and :class:`BenchPlan`), :mod:`ramiel.engines` (what a
configuration's process runs; shared with ``ramiel tune``), :mod:`~ramiel.bench.run` (timing a model, the whole benchmark),
:mod:`~ramiel.bench.results` (results, JSON), :mod:`~ramiel.bench.report` (markdown, plot),
:mod:`~ramiel.bench.trace` (Chrome traces), over :mod:`ramiel.measure` (timing statistics,
isolation in processes, machine noise; shared with ``ramiel tune`` and ``ramiel profile``), whose
names this package also exports. Reports go where ``out_dir`` (``ramiel bench --out``) says.
"""

from __future__ import annotations

from ramiel.bench.configs import (
    DEFAULT_VARIANTS,
    BenchPlan,
    Config,
    configs_for,
    default_variants,
    variants,
)
from ramiel.bench.models import (
    PROJECT_MODELS,
    QUICK_MODEL,
    TARGET_BUSY_RATIO,
    TARGET_COMPILE_S,
    TARGET_EFFICIENCY,
    TARGET_MODELS,
    ModelSpec,
    default_models,
    resolve_models,
    zoo_dir,
    zoo_models,
)
from ramiel.bench.report import (
    BEGIN_MARK,
    END_MARK,
    md_code,
    md_text,
    plot_speedups,
    render_markdown,
    write_markdown,
)
from ramiel.bench.results import (
    ConfigResult,
    Environment,
    ModelResult,
    check_report_path,
    load_json,
    to_json,
    write_report,
)
from ramiel.bench.run import (
    bench_model,
    run_bench,
)
from ramiel.bench.trace import (
    trace_inference,
)
from ramiel.engines import COMPILE_TIMEOUT_S, Recipe, check_and_time, ort_session, rel_error
from ramiel.measure import (
    SPIN_SETTLE_S,
    SPINNER,
    Buildable,
    CpuMeter,
    Isolated,
    Measured,
    Plan,
    Timing,
    as_numpy,
    busy_core,
    cpu_model,
    load_average,
    machine_scaling,
    measure_interleaved,
    measure_quiet_busy,
    median_ci,
    median_of,
    minor_faults,
    ratio_ci,
    tune_malloc,
    wait_quiet,
)

__all__ = [
    "as_numpy",
    "BEGIN_MARK",
    "bench_model",
    "BenchPlan",
    "Buildable",
    "busy_core",
    "COMPILE_TIMEOUT_S",
    "Config",
    "ConfigResult",
    "configs_for",
    "cpu_model",
    "CpuMeter",
    "check_and_time",
    "check_report_path",
    "default_models",
    "DEFAULT_VARIANTS",
    "default_variants",
    "END_MARK",
    "Environment",
    "Isolated",
    "load_average",
    "load_json",
    "machine_scaling",
    "md_code",
    "md_text",
    "SPIN_SETTLE_S",
    "measure_interleaved",
    "measure_quiet_busy",
    "Measured",
    "median_ci",
    "median_of",
    "minor_faults",
    "ModelResult",
    "ModelSpec",
    "ort_session",
    "rel_error",
    "Plan",
    "plot_speedups",
    "PROJECT_MODELS",
    "QUICK_MODEL",
    "ratio_ci",
    "Recipe",
    "render_markdown",
    "resolve_models",
    "run_bench",
    "SPINNER",
    "TARGET_BUSY_RATIO",
    "TARGET_COMPILE_S",
    "TARGET_EFFICIENCY",
    "TARGET_MODELS",
    "Timing",
    "to_json",
    "trace_inference",
    "tune_malloc",
    "variants",
    "wait_quiet",
    "write_markdown",
    "write_report",
    "zoo_dir",
    "zoo_models",
]
