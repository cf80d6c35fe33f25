"""``ramiel tune``: measure the few programs Ramiel can make of a model and keep the fastest.

The static pipeline picks clusters from estimated costs, and on a small machine the estimate's
margins are thinner than its errors: on 2 cores the measured latency of a 2-cluster program was
0.93-1.43x of the sequential module's, where the estimate said 1.04-1.48x, and whether 1 or 2
intra-op threads are faster for the whole model is not what the per-op profile predicts
(light_shufflenet: 13.7 ms with 1 thread, 16.6 ms with 2, though most ops time faster with 2).
So, once per model and machine, ``tune`` compiles each candidate (seconds) and times them side
by side -- each in a process of its own (:class:`ramiel.measure.Isolated`), round robin, medians --
then copies the fastest into the output directory with ``tune.json`` saying what was chosen and
why. Candidates for P cores (all compiled with the same profile database):

* ``1x1``, ``1xP``: one cluster run in the caller's thread with 1 or P intra-op threads (the
  fall-back: the sequential program, as ``CompiledModel`` runs it);
* ``1xH``: one cluster, each op with the thread count its profile says is fastest
  (``--intra-op-threads{cores=P}``);
* ``Px1``: P clusters, one thread each (threads backend), when the merge keeps more than one;
* ``PxH``: P clusters with per-op threads where the others are idle, when it keeps more than one.

The candidates ``1x1``, ``1xP`` and ``Px1`` are also compiled with ``onednn-graph`` segments
(``...-onednn-graph``: traced on its first call and run by TorchScript with oneDNN Graph fusion,
:mod:`ramiel.runtime.compiled`; a fraction of a second each; ``onednn_graph=False``, ``ramiel tune
--no-onednn-graph``: not): measured against the eager module, as fast or faster on all 11
bench models at 1 and 2 threads (0.64-1.00x at 1 thread; docs/benchmarks.md, "oneDNN Graph
segments fused whole"), but a crash inside TorchScript or a fused NaN (see the README) are its
own, and the margin is a few percent on the large-kernel models, so a timing tells. With
``compile=True`` (``ramiel tune --compile``) they are also compiled with inductor
(``...-compiled``: torch.compile, frozen weights). Each compiled candidate compiles in its own
process before the timing starts (its compile time, reported per candidate, is never part of a
timed call).

The search is over at most eight programs (eleven with ``--compile``), not over schedules: it costs a few seconds of timing
per model (``budget_s`` caps it), against the tens of minutes of search-based planners.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from ramiel.compiler import (
    CompiledModel,
    CompileOptions,
    CompileResult,
    compile_model,
    foreign_outputs,
    foreign_outputs_message,
)
from ramiel.cost_model import usable_cores
from ramiel.engines import COMPILE_TIMEOUT_S, Recipe
from ramiel.errors import RamielError, RuntimeFailure
from ramiel.files import file_head, removed_if_left_empty
from ramiel.measure import Isolated, Plan, measure_interleaved
from ramiel.profiler import profile_model
from ramiel.runtime.entry import random_inputs

#: The files of a compiled program that ``tune`` copies from the winner to the output directory.
PROGRAM_FILES = (
    "model.py",
    "model_seq.py",
    "weights.safetensors",
    "model.mlir",
    "schedule.txt",
    "schedule.json",
)


@dataclass
class Candidate:
    """One program ``tune`` times: its key (``1x1``, ``1xP``, ``1xH``, ``Px1``, ``PxH`` with P
    replaced by the cores), compile options and results."""

    key: str
    options: CompileOptions
    result: CompileResult | None = None
    clusters: int = 0
    median_ms: float | None = None
    min_ms: float | None = None
    n: int = 0
    error: str | None = None
    compile_s: float | None = None  # compiled candidates: their segments' compile at load, s


@dataclass
class TuneResult:
    """What ``tune`` chose. ``choice``: the winning candidate's key; ``options``: its compile
    options (``CompiledModel(result, options)`` runs it as timed); ``candidates``: every
    candidate with its median (ms) or error."""

    choice: str
    options: CompileOptions
    result: CompileResult
    cores: int
    candidates: list[Candidate] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        o = self.options
        options = asdict(o)
        if o.input_shapes is not None:
            options["input_shapes"] = {k: list(v) for k, v in o.input_shapes.items()}
        return {
            "choice": self.choice,
            "cores": self.cores,
            # ramiel.compile(model, **options) makes the same program; run it with
            # threads_per_worker intra-op threads per worker (CompiledModel does)
            "options": options,
            "run": self.run_command(),
            "candidates": [
                {
                    "key": c.key,
                    "clusters": c.clusters,
                    "median_ms": c.median_ms,
                    "min_ms": c.min_ms,
                    "n": c.n,
                    "error": c.error,
                    "compile_s": c.compile_s,
                }
                for c in self.candidates
            ],
        }

    def run_command(self) -> str:
        """The command that runs the chosen program once as it was timed, as a shell line (the
        path quoted: an output directory named ``x;touch PWNED`` stays one word)."""
        argv = ["python", os.path.join(self.result.out_dir, "model.py")]
        if self.options.threads_per_worker is not None:  # else the module's own default
            argv += ["--threads", str(self.options.threads_per_worker)]
        return shlex.join(argv)


def candidates_for(
    cores: int,
    profile: str | None,
    base: CompileOptions | None = None,
    compile: bool = False,  # noqa: A002 - the option's name (ramiel tune --compile)
    onednn_graph: bool = True,
) -> list[Candidate]:
    """The candidate programs for ``cores`` cores (module docstring), in order of simplicity;
    then the ``onednn-graph`` ones (``onednn_graph``), then the inductor ones (``compile``)."""
    base = base or CompileOptions()

    def opts(**kw: Any) -> CompileOptions:
        d = asdict(base)
        d.update(profile=profile, backend="threads", cores=None, threads_per_worker=1)
        if d["compile"] == "auto":  # the plain candidates are eager: tune times both kinds
            d["compile"] = False
        d.update(kw)
        return CompileOptions(**d)

    p = max(1, cores)
    out = [Candidate("1x1", opts(clusters=1))]
    if p > 1:
        out.append(Candidate(f"1x{p}", opts(clusters=1, threads_per_worker=p)))
        out.append(Candidate("1xH", opts(clusters=1, cores=p)))
        out.append(Candidate(f"{p}x1", opts(clusters=p)))
        out.append(Candidate(f"{p}xH", opts(clusters=p, cores=p)))
    plain = {c.key: c for c in out if not c.key.endswith("H")}
    for suffix, how, wanted in (("onednn-graph", "onednn-graph", onednn_graph),
                                ("compiled", True, compile)):  # fmt: skip
        if wanted:
            for key, c in plain.items():
                compiled = CompileOptions(**{**asdict(c.options), "compile": how})
                out.append(Candidate(f"{key}-{suffix}", compiled))
    return out


def tune(
    model: str,
    out_dir: str,
    cores: int | None = None,
    profile: str | None = None,
    base: CompileOptions | None = None,
    budget_s: float = 20.0,
    say: Callable[[str], None] = lambda _m: None,
    compile: bool = False,  # noqa: A002 - the option's name (ramiel tune --compile)
    progress: Callable[[int, int], None] | None = None,
    onednn_graph: bool = True,
) -> TuneResult:
    """Compile the candidates of ``model`` for ``cores`` cores, time them, keep the fastest.

    ``profile``: a profile database with per-op times for 1 and ``cores`` threads (made with
    ``ramiel profile --threads 1,P`` into ``out_dir/profile.json`` when not given). ``base``:
    other compile options (input shapes, batch, ...). ``budget_s``: timing budget (seconds; at
    least 5 rounds are always run). ``compile``: consider inductor-compiled candidates too;
    ``onednn_graph``: the ``onednn-graph`` ones (default). ``progress``: called with ``(steps done,
    steps)`` as the tune goes (profiling, one step per candidate compiled, one per candidate
    process started, the timing). Writes the winner's program files and ``tune.json`` into
    ``out_dir``; the candidates stay in ``out_dir/candidates/<key>``.

    Raises:
        RamielError: the model does not compile (as ``ramiel compile`` would).
        RuntimeFailure: no candidate ran (each candidate's error in the message).
    """

    p = cores if cores is not None else usable_cores()
    if p < 1:
        raise RamielError(f"ramiel tune: cores must be at least 1, got {p}")
    if not budget_s > 0 or budget_s == float("inf"):
        raise RamielError(
            f"ramiel tune: the timing budget must be a positive number, got {budget_s}"
        )
    if profile is not None:
        if not os.path.isfile(profile):
            raise RamielError(
                f"profile database {profile} not found (create it with 'ramiel profile')"
            )
        profile = os.path.abspath(profile)
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise RamielError(f"ramiel tune: output {out_dir} exists and is not a directory")
    _check_own_outputs(out_dir, profile is None)
    out_dir = os.path.abspath(out_dir)
    own_profile = os.path.join(out_dir, "profile.json")
    made_profile = profile is None and not os.path.lexists(own_profile)
    with removed_if_left_empty(out_dir):
        os.makedirs(out_dir, exist_ok=True)
        try:
            return _tune_into(
                model, out_dir, p, profile, base, budget_s, say, compile, onednn_graph, progress
            )
        except BaseException:
            # a failed or interrupted run leaves no half of its work behind (its candidates
            # and the profile it made had stayed after Ctrl-C; a fresh-user check), as
            # ramiel compile leaves none
            shutil.rmtree(os.path.join(out_dir, "candidates"), ignore_errors=True)
            if made_profile:
                with contextlib.suppress(OSError):
                    os.remove(own_profile)
            raise


def _tune_into(
    model: str,
    out_dir: str,
    p: int,
    profile: str | None,
    base: CompileOptions | None,
    budget_s: float,
    say: Callable[[str], None],
    compile: bool,  # noqa: A002
    onednn_graph: bool,
    progress: Callable[[int, int], None] | None,
) -> TuneResult:
    """The work of :func:`tune` once its checks passed and ``out_dir`` exists (``p``: the
    cores)."""
    # an earlier run's candidates (maybe of another model) must not be mistaken for this one's
    shutil.rmtree(os.path.join(out_dir, "candidates"), ignore_errors=True)
    steps = [0, 2]  # done, total (the total grows once the candidates are known)

    def step(done: int = 1) -> None:
        steps[0] += done
        if progress is not None:
            progress(steps[0], steps[1])

    step(0)
    if profile is None:
        profile = os.path.join(out_dir, "profile.json")
        say(f"profile (1 and {p} threads)")
        shapes = (base.input_shapes if base else None) or None
        profile_model(
            model,
            profile,
            repeat=5,
            input_shapes=shapes,
            threads=sorted({1, p}),
            layout=base.layout if base else "auto",
            rewrites=(base or CompileOptions()).rewrites(),
        )
    step()
    cands = candidates_for(p, profile, base, compile, onednn_graph)
    steps[1] += 2 * len(cands)
    for c in cands:
        d = os.path.join(out_dir, "candidates", c.key)
        say(f"compile {c.key}")
        c.result = compile_model(model, d, c.options)
        c.clusters = c.result.clusters
        step()
    # a multi-cluster candidate the merge left with one cluster is a one-cluster program again
    dropped = len(cands)
    cands = [c for c in cands if c.options.clusters == 1 or c.clusters > 1]
    steps[1] -= dropped - len(cands)
    if any(c.options.compile for c in cands):
        say("compiling the segments of the compiled candidates (each in its own process)")

    first = CompiledModel(cands[0].result, cands[0].options)  # type: ignore[arg-type]
    feeds = {
        k: v.numpy() for k, v in random_inputs(first.input_specs, 0, first.index_limits).items()
    }
    out_names = list(first.output_names)
    first.close()
    procs: dict[str, Isolated] = {}
    try:
        for c in cands:
            procs[c.key] = Isolated(
                Recipe("par", feeds, out_names, result=c.result, options=c.options),
                timeout_s=COMPILE_TIMEOUT_S if c.options.compile else 300.0,
            )
        fns = {}
        for c in cands:
            try:
                events = procs[c.key].wait_ready()
                if events:
                    c.compile_s = round(sum(e.seconds for e in events), 3)
                fns[c.key] = procs[c.key]
            except Exception as e:  # noqa: BLE001 - recorded, the other candidates go on
                c.error = f"{type(e).__name__}: {e}"
            step()
        if not fns:
            raise RuntimeFailure(
                "ramiel tune: no candidate program ran: "
                + "; ".join(f"{c.key}: {c.error}" for c in cands)
            )
        say(f"timing {len(fns)} candidates")
        plan = Plan(warmup=2, min_reps=5, max_reps=41, budget_s=budget_s, rel_ci=0.03)
        timings = measure_interleaved(fns, plan)
        step()
    finally:
        for proc in procs.values():
            proc.close()
    for c in cands:
        t = timings.get(c.key)
        if t is not None and t.n:
            c.median_ms, c.min_ms, c.n = round(t.median, 4), round(t.min, 4), t.n
    timed = [c for c in cands if c.median_ms is not None]
    win = min(timed, key=lambda c: c.median_ms)  # type: ignore[arg-type, return-value]
    assert win.result is not None
    for name in PROGRAM_FILES:
        src = os.path.join(win.result.out_dir, name)
        if os.path.exists(src):
            shutil.copyfile(src, os.path.join(out_dir, name))
    res = TuneResult(win.key, win.options, _moved(win.result, out_dir), p, cands)
    with open(os.path.join(out_dir, "tune.json"), "w") as f:
        json.dump(res.to_json(), f, indent=2)
        f.write("\n")
    return res


def _check_own_outputs(out_dir: str, profiles: bool) -> None:
    """Raise :class:`RamielError` when ``out_dir`` holds files ``tune`` would replace or remove
    but Ramiel did not write (a fresh-user check lost a ``model.py``): the program's files as
    ``ramiel compile`` checks them (:func:`ramiel.compiler.foreign_outputs`), and a
    ``tune.json``, ``profile.json`` (when ``tune`` profiles) or ``candidates`` that no earlier
    ``ramiel tune`` left (by their content: the JSON files' first key, only candidate
    directories in ``candidates``)."""
    if not os.path.isdir(out_dir):
        return

    def starts(name: str, head: bytes) -> bool:
        path = os.path.join(out_dir, name)
        return not os.path.islink(path) and file_head(path, len(head)) == head

    def candidates_dir(path: str) -> bool:  # only candidate directories inside
        if not os.path.isdir(path) or os.path.islink(path):
            return False
        return all(e.is_dir(follow_symlinks=False) for e in os.scandir(path))

    foreign = foreign_outputs(out_dir)
    checks = {
        "tune.json": lambda: starts("tune.json", b'{\n  "choice"'),
        "candidates": lambda: candidates_dir(os.path.join(out_dir, "candidates")),
    }
    if profiles:
        checks["profile.json"] = lambda: starts("profile.json", b'{\n "meta"')
    foreign += [
        n for n, ours in checks.items() if os.path.lexists(os.path.join(out_dir, n)) and not ours()
    ]
    if foreign:
        raise RamielError("ramiel tune: " + foreign_outputs_message(out_dir, foreign, "tuning"))


def _moved(r: CompileResult, out_dir: str) -> CompileResult:
    """``r`` with its paths in ``out_dir`` (where ``tune`` copied the winner's files)."""

    def here(path: str) -> str:
        return os.path.join(out_dir, os.path.basename(path))

    return replace(
        r,
        out_dir=out_dir,
        parallel_path=here(r.parallel_path),
        sequential_path=here(r.sequential_path),
        weights_path=here(r.weights_path),
        ir_path=here(r.ir_path),
    )
