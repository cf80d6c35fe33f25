"""The results of ``ramiel bench``: per configuration, per model, the environment; JSON out and in."""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import os
import platform
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import onnx

from ramiel.errors import RamielError
from ramiel.files import output_file
from ramiel.measure import Timing, cpu_model, load_average


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
        import onnxruntime  # lazy: onnxruntime
        import torch  # lazy: torch

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
    """Read back what :func:`to_json` wrote (to render the report or plot again).

    Raises:
        RamielError: the file cannot be read, is not JSON, or is not a ``ramiel bench --json``
            results file (naming the file and what is wrong).
    """
    try:
        with open(path) as f:
            data = json.load(f)
    except OSError as e:
        raise RamielError(f"{path}: cannot read it ({e.strerror or e})") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise RamielError(f"{path} is not JSON ({e})") from None
    try:
        return _results_of(data)
    except (KeyError, TypeError, AttributeError, ValueError) as e:
        what = (
            f"no field {e}"
            if isinstance(e, KeyError)
            else f"a JSON {type(data).__name__}, not ramiel bench's object"
            if not isinstance(data, dict)
            else "its fields are not those ramiel bench writes"
        )
        raise RamielError(
            f"{path} is not a ramiel bench results file (written by --json or into --out as "
            f"bench.json): {what}"
        ) from None


def _results_of(data: Any) -> tuple[list[ModelResult], Environment]:
    """The results and environment of a parsed bench JSON (see :func:`load_json`)."""

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


def check_report_path(ap: argparse.ArgumentParser, out: str | None) -> None:
    """Refuse a benchmark script's ``--out`` that :func:`write_report` could not write (a
    directory, a path under a file, an unwritable place: :func:`ramiel.files.output_file`) with
    the script's usage error, before minutes of measuring rather than after them."""
    if out:
        try:
            output_file(out, "--out", make_dirs=True)
        except RamielError as e:
            ap.error(str(e))


def write_report(lines: list[str], out: str | None, last: str | None = None) -> int:
    """End a benchmark script: print ``last`` (its closing line, such as the load average after
    the run) and append it to ``lines``, then write ``lines``, one a line, to the file ``out``
    when one is given (its directory made). Returns 0, the script's exit status."""
    if last is not None:
        print(last)
        lines.append(last)
    if out:
        os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
        with open(out, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 0
