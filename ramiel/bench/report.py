"""The reports of ``ramiel bench``: markdown (:func:`render_markdown`, :func:`write_markdown`)
and the speed-up plot (:func:`plot_speedups`)."""

from __future__ import annotations

import contextlib
import math
import os
import re
from collections.abc import Callable, Sequence

import numpy as np

from ramiel.bench.configs import Config, configs_for, variants
from ramiel.bench.models import (
    TARGET_BUSY_RATIO,
    TARGET_COMPILE_S,
    TARGET_EFFICIENCY,
    TARGET_MODELS,
)
from ramiel.bench.results import ConfigResult, Environment, ModelResult
from ramiel.measure import Timing, ratio_ci


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
    if p == 1:
        out += [_summary_one_core(), ""]
    else:
        out += _summary_words(p)
    out += _method_words()
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


def _summary_words(p: int) -> list[str]:
    """The summary's legend for P >= 2 cores."""
    return [
        f"Median latency in ms (batch 1). P = {p}. `seq` = the sequential generated module "
        f"with 1 or {p} intra-op threads; `par` = the parallel generated module, clusters × "
        "threads per worker, threads or processes backend; `ORT` = onnxruntime on the ONNX file "
        f"(1 / {p} intra-op threads; `spin`: its pool threads spinning, its own default; "
        f"`par` = its parallel executor with {p} inter-op threads). "
        "W and CP come from measured per-op times (`ramiel profile`); bound = min(P, W/CP); "
        f"est. speed-up = W / estimated makespan of the par-…-{p}x1 schedule (profiled costs); "
        f"speed-up = measured seq-1t / par-…-{p}x1 (the faster backend); efficiency = speed-up / "
        f"bound. `clusters`: how many clusters the compiler made when asked for {p} (merging "
        "may leave fewer; the cores left free become intra-op threads: a 1-cluster program runs in the caller's thread with P of them, as `CompiledModel` runs it). `noise`: cores other processes kept busy while the model was timed / the lowest "
        f"speed-up of {p} threads of perfectly parallel work over one, measured just before and "
        f"after (ideal: 0 / {p}). Next-to-last column: the fastest parallel-module "
        "configuration (several clusters, or the hybrid one-cluster program with per-op "
        "threads, `…xH`) against the fastest "
        f"intra-op-only one (seq-1t, seq-{p}t), i.e. what Ramiel gains over falling back to one "
        "cluster. `tuned`: the program `ramiel tune` chose (the fastest of one cluster with 1, "
        f"{p} or per-op threads, {p} clusters with 1 or per-op threads, in a timing of its own "
        "before this one), and how it compares with the best intra-op-only configuration "
        "(`ties`: the 95 % intervals of the two medians overlap).",
        "",
    ]


def _summary_one_core() -> str:
    """The summary's legend for P = 1 core: no parallel configuration to compare."""
    return (
        "Median latency in ms (batch 1). P = 1: one core, so no parallel configuration is timed "
        "and the speed-up, efficiency and parallel-against-sequential columns are empty. "
        "`seq-1t` = the sequential generated module with 1 intra-op thread; `default` = the "
        "program `ramiel compile` makes by default for 1 core; `ort-1t` = onnxruntime on the "
        "ONNX file with 1 intra-op thread. W and CP come from measured per-op times "
        "(`ramiel profile`); bound = min(P, W/CP). `noise`: cores other processes kept busy "
        "while the model was timed."
    )


def _method_words() -> list[str]:
    """How the configurations are timed."""
    return [
        "Method: all configurations of a model are timed round-robin in one process (rotating "
        "order), each call after an untimed pause (so that threads spinning after the previous "
        "configuration are idle), until the 95 % CI of every median is within ±2 % or the time "
        "budget is spent; onnxruntime runs with its pool threads' spinning switched off "
        "(`session.intra_op/inter_op.allow_spinning = 0`), since a spinning pool keeps a core "
        "busy after each run and would slow down the next configuration; `ort-…-spin` keeps "
        "onnxruntime's default (spinning on), the pause letting its threads settle.",
        "",
    ]


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


_COMPILED = ("compiled", "onednn-graph")
"""The variants whose programs have compiled segments."""


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
        "(`onednn-graph` by default, inductor's `compiled` with `ramiel bench --compile`), "
        "named after the ratio, and the seconds its process spent compiling them at load "
        f"time. `ort-{p}t-spin`: onnxruntime with its pool threads spinning between runs, its "
        "own default (the other onnxruntime configurations switch spinning off, see the "
        "method note); `default / spin` compares the default program with it.",
        "",
        f"| model | ort-1t ms | ort-{p}t ms | ort-{p}t-spin ms | seq-1t / ort-1t | "
        f"compiled 1t / ort-1t | default / ort-{p}t | default / spin | best / ort-{p}t | "
        f"compiled / ort-{p}t | compile s |",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for r in rows:
        o1, op = _timing(r, "ort-1t"), _timing(r, f"ort-{p}t")
        spin = _timing(r, f"ort-{p}t-spin")
        best = _fastest(r, _on_all_cores)
        comp = _fastest(r, lambda c: _on_all_cores(c) and c.variant in _COMPILED)
        comp1 = _fastest(r, lambda c: c.key in {f"seq-1t-{v}" for v in _COMPILED})
        cells = [
            md_text(r.name),
            _ms(o1.median if o1 else None),
            _ms(op.median if op else None),
            _ms(spin.median if spin else None),
            _ratio(ratio_ci(_timing(r, "seq-1t"), o1)),
            _ratio(ratio_ci(comp1.timing if comp1 else None, o1), comp1.key if comp1 else None),
            _ratio(ratio_ci(_timing(r, "default"), op)),
            _ratio(ratio_ci(_timing(r, "default"), spin)),
            _ratio(ratio_ci(best.timing if best else None, op), best.key if best else None),
            _ratio(ratio_ci(comp.timing if comp else None, op), comp.key if comp else None),
            f"{comp.compile_s:.1f}" if comp and comp.compile_s is not None else "–",
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
        + ". `compile s`: the compiled segments' compile at load time, per process.",
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
            cells = [md_text(r.name), v]
            comp: list[float] = []
            for k in keys:
                c = r.config(f"{k}-{v}")
                t = c.timing if c else None
                cells += [_ms(t.median if t else None), _ratio(ratio_ci(t, _timing(r, k)))]
                if c is not None and c.compile_s is not None:
                    comp.append(c.compile_s)
            cells.append(", ".join(f"{x:.1f}" for x in comp) if comp else "–")
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
            f"| {md_text(r.name)} | {prog} | {_ms(q.median)} [{_ms(q.ci[0])}, {_ms(q.ci[1])}] | "
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


def plot_speedups(results: Sequence[ModelResult], env: Environment, path: str) -> None:
    """Two panels of speed-ups over Ramiel's sequential module with 1 thread, per model: (top)
    Ramiel's own configurations with the bound min(P, W/CP) marked; (bottom) onnxruntime's, with
    the best Ramiel configuration for reference. Bars are medians; whiskers span min..max."""
    import matplotlib  # lazy: matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazy: matplotlib

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
        cands = [(c.timing.median, c.key) for c in r.configs if c.engine != "ort" and c.timing]
        best.append(speedup(r, min(cands)[1]) if cands else (0, 0, 0))
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
