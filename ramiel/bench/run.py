"""Running ``ramiel bench``: one model (:func:`bench_model`), every model and the reports
(:func:`run_bench`)."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shlex
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

from ramiel.bench.configs import (
    BenchPlan,
    check_variants,
    configs_for,
    default_variants,
    variants,
)
from ramiel.bench.models import QUICK_MODEL, ModelSpec, resolve_models
from ramiel.bench.report import plot_speedups, render_markdown, write_markdown
from ramiel.bench.results import ConfigResult, Environment, ModelResult, load_json, to_json
from ramiel.bench.trace import trace_inference
from ramiel.engines import COMPILE_TIMEOUT_S, Recipe, rel_error
from ramiel.errors import RamielError
from ramiel.layout import LayoutMode
from ramiel.measure import (
    SPIN_SETTLE_S,
    CpuMeter,
    Isolated,
    Timing,
    load_average,
    machine_scaling,
    measure_interleaved,
    measure_quiet_busy,
    minor_faults,
    tune_malloc,
    wait_quiet,
)
from ramiel.omp import usable_cores


def _error_text(e: BaseException) -> str:
    """How a failed model or configuration reads in the report: Ramiel's own errors by their
    message, anything else with its type (an ``ImportError_`` had shown its class name)."""
    return str(e) if isinstance(e, RamielError) else f"{type(e).__name__}: {e}"


def bench_model(
    spec: ModelSpec,
    workers: int,
    out_dir: str,
    plan: BenchPlan,
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
            res.error = _error_text(e)
    return res


def _bench_model(
    res: ModelResult,
    work: str,
    plan: BenchPlan,
    trace: bool,
    out_dir: str,
    say: Callable[[str], None],
) -> None:
    import torch  # lazy: torch

    from ramiel.compiler import (  # lazy: onnx.reference,torch
        CompiledModel,
        CompileOptions,
        compile_model,
    )
    from ramiel.profiler import profile_model  # lazy: torch
    from ramiel.runtime.entry import random_inputs  # lazy: torch

    p = res.workers
    caller_threads = torch.get_num_threads()

    # 1. The default compile (analytic costs), timed per stage: best of two runs. On all of
    # this process's cores it is ramiel.compile(model)'s: no clusters option, so the merge may
    # choose one cluster of intra-op threads (asked for P clusters, the compiler keeps the
    # split and its clusters eager: the 'default' configuration had measured that program)
    say(f"{res.name}: compile")
    runs = 1 if plan.max_reps <= 3 else 2
    best = None
    default_options = CompileOptions(
        clusters=None if p == usable_cores() else p, layout=plan.layout
    )
    for _ in range(runs):
        r = compile_model(res.path, os.path.join(work, "analytic"), default_options)
        if best is None or sum(r.timings.values()) < sum(best.timings.values()):
            best = r
    assert best is not None
    res.compile_s = {k: round(v, 4) for k, v in best.timings.items()}
    res.compile_total_s = round(sum(best.timings.values()), 4)
    res.analytic_parallelism = round(best.report.parallelism, 4)
    res.nodes = best.report.nodes

    # 2. Measured per-op costs: W, CP and the bound. A compile-option variant whose layout or
    # rewrites differ gets a database of its own (its ops have other keys,
    # ramiel.pipeline.profile_passes).
    profiles: dict[tuple[str, tuple[str, ...]], str] = {}

    def profile_for(layout: str, disable: tuple[str, ...] = ()) -> str:
        if (layout, disable) not in profiles:
            path = os.path.join(work, f"profile-{len(profiles)}.json")
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
            profile_model(
                res.path,
                path,
                repeat=3 if plan.max_reps <= 3 else 10,
                layout=layout,
                rewrites=CompileOptions(disable=disable).rewrites(),
            )
            torch.set_num_threads(caller_threads)
            profiles[layout, disable] = path
        return profiles[layout, disable]

    def db_for(variant: str) -> str:
        """The profile a variant's configurations compile with."""
        extra = variants()[variant][1] if variant else {}
        key = (extra.get("layout", plan.layout), tuple(extra.get("disable", ())))
        if key not in profiles:
            say(f"{res.name}: profile ({variants()[variant][0]})")
        return profile_for(*key)

    say(f"{res.name}: profile")
    t = time.perf_counter()
    db = profile_for(plan.layout)
    res.profile_s = round(time.perf_counter() - t, 3)

    # 3. Compile every parallel configuration with the profile (and each variant's program).
    cfgs = configs_for(p, plan.variants)
    seq_model = CompiledModel(best, default_options)
    feeds = random_inputs(seq_model.input_specs, 0, seq_model.index_limits)
    compiled: dict[tuple[int, str, bool, str], Any] = {}
    models: dict[str, Any] = {}
    seq_results: dict[str, Any] = {"": best}  # variant -> analytic compile (sequential module)
    for v in plan.variants:
        say(f"{res.name}: compile ({variants()[v][0]})")
        opts = CompileOptions(clusters=p, **{"layout": plan.layout, **variants()[v][1]})
        seq_results[v] = compile_model(res.path, os.path.join(work, f"analytic-{v}"), opts)
    for cfg in cfgs:
        if cfg.default:
            models[cfg.key] = CompiledModel(best, default_options)
            continue
        if cfg.tuned:
            from ramiel.tune import tune  # lazy: onnx.reference,torch

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
                profile=db_for(cfg.variant),
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
            profile=db_for(cfg.variant),
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
            common: dict[str, Any] = {
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
                recipe = Recipe(
                    "ort",
                    path=res.path,
                    threads=cfg.threads,
                    inter_op=cfg.clusters if cfg.ort_parallel else 0,
                    ort_spinning=cfg.spinning,
                    **common,
                )
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
                results[cfg.key].error = _error_text(e)
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
                results[k].max_rel_err = rel_error(procs[k].outputs(), ref)
            except Exception as e:
                results[k].error = _error_text(e)
                del fns[k]
        timed: tuple[float, dict[str, Timing], float | None, list[float]] | None = None
        for attempt in range(1, plan.attempts + 1):
            if attempt > 1:
                say(f"{res.name}: machine busy, waiting to time again (attempt {attempt})")
                wait_quiet(plan.busy_cores, plan.quiet_wait_s)
            say(f"{res.name}: timing {len(fns)} configurations")
            meter = CpuMeter()
            repeats = 1 if plan.attempts == 1 else 5
            before = machine_scaling(p, repeats=repeats)
            spinning = {c.key: SPIN_SETTLE_S for c in cfgs if c.spinning and c.key in fns}
            timings = measure_interleaved(fns, plan, faults=minor_faults, settle_after=spinning)
            after = machine_scaling(p, repeats=repeats)
            other = meter.other_cores()
            scaling = [x for x in (before, after) if x is not None]
            torch.set_num_threads(caller_threads)
            disturbance = max(other or 0.0, *(max(0.0, 0.75 * p - x) for x in scaling or [p]))
            if timed is None or disturbance < timed[0]:
                timed = (disturbance, timings, other, scaling)
            res.attempts = attempt
            if disturbance <= plan.busy_cores:
                break
        assert timed is not None
        _, timings, res.other_cores, res.machine_scaling = timed
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


def run_bench(
    models: Sequence[str],
    workers: int | None = None,
    *,
    out_dir: str,
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
    layout: LayoutMode = "auto",
    progress: Callable[[int, int], None] | None = None,
) -> tuple[list[ModelResult], Environment, str]:
    """Benchmark ``models`` (see :func:`resolve_models`); write the report files into ``out_dir``
    (required: the library writes nowhere by default; ``ramiel bench --out``)
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
    ``layout`` is already ``nchw``). ``progress``: called with ``(models done, models)`` before
    the first model and after each one.
    """
    import torch  # lazy: torch

    if render_from is not None:
        results, env = load_json(render_from)
        try:
            for r in results:  # derived numbers follow the current rules
                if r.configs and not r.error:
                    r.efficiency, r.notes = {}, []
                    _summarise(r)
            render_markdown(results, env)  # a field of the wrong type fails here, not midway
        except (TypeError, ValueError, KeyError, AttributeError, ZeroDivisionError) as e:
            raise RamielError(
                f"{render_from} is not a ramiel bench results file (written by --json or into "
                f"--out as bench.json): a field has the wrong type or value "
                f"({type(e).__name__}: {e})"
            ) from None
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
    if variant_names is None:
        chosen = [v for v in default_variants() if not (v == "nchw" and layout == "nchw")]
    else:
        chosen = list(variant_names)
        check_variants(chosen)
    if compile and "compiled" not in chosen:
        chosen.append("compiled")
    env = Environment.capture(cmd, p, quick)
    if malloc_tuning:
        env.malloc_tuned = tune_malloc()
    plan = BenchPlan.quick() if quick else BenchPlan()
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
    for done, spec in enumerate(specs):
        if progress is not None:
            progress(done, len(specs))
        say(f"{spec.name}")
        results.append(bench_model(spec, p, out_dir, plan, trace=trace, say=say))
        torch.set_num_threads(caller_threads)
    if progress is not None:
        progress(len(specs), len(specs))
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
        os.makedirs(os.path.dirname(os.path.abspath(json_path)), exist_ok=True)
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
