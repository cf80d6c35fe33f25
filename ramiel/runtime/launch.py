"""Start a program's workers once, then run many inferences: :func:`start` picks the backend
(:mod:`ramiel.runtime.threads`, :mod:`ramiel.runtime.processes`,
:mod:`ramiel.runtime.distributed`) and returns its started :class:`~ramiel.runtime.runner.Runner`.

Life cycle: see :mod:`ramiel.runtime.runner`. This module sits above the backends (each of them
subclasses ``Runner``), so that ``runner`` never imports a backend.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from ramiel.envflags import check_switches
from ramiel.runtime.compiled import program_segments
from ramiel.runtime.distributed import DistributedRunner
from ramiel.runtime.processes import ProcessRunner
from ramiel.runtime.program import Program, check_threads
from ramiel.runtime.runner import BACKENDS, Runner
from ramiel.runtime.threads import InlineRunner, ThreadRunner
from ramiel.runtime.weights import Weights, as_weights


def start(
    program: Program,
    weights: Weights | Mapping[str, torch.Tensor] | str | Path | None = None,
    backend: str = "threads",
    threads_per_worker: int | None = None,
    timeout_s: float = 60.0,
    **options: Any,
) -> Runner:
    """Validate ``program`` and start one worker per cluster.

    Args:
        program: the program (usually ``PROGRAM`` of a generated module).
        weights: a :class:`Weights`, a dict of tensors, a ``.safetensors`` path, or ``None``.
        backend: ``"threads"`` (one thread per cluster, tensors passed by reference),
            ``"processes"`` (one process per cluster, shared-memory channel buffers), or
            ``"inline"`` (clusters run one after another in the caller's thread, for debugging;
            needs an acyclic cluster graph), or ``"distributed"`` (one rank of a
            ``torch.distributed`` process group per cluster, started on this machine; see
            :mod:`ramiel.runtime.distributed`).
        threads_per_worker: intra-op threads per worker (``torch.set_num_threads`` in the worker;
            ``inline`` sets the caller's count for the call and restores it afterwards); default
            :meth:`Program.planned_threads` (the cores the program was compiled for that
            merging left without a cluster, shared among the workers; 1 when unknown).
        timeout_s: default limit for one inference, seconds.
        **options: backend options: ``copy_on_put`` (threads, inline), ``start_method`` and
            ``startup_timeout_s`` (processes, distributed), ``ranks``, ``placement``,
            ``device`` and ``link`` (distributed); ``compile_timeout_s``
            (all backends, default 1800): the limit of the warm-up inference that compiles a
            compiled program.

    Returns:
        A started :class:`Runner`; close it (or use it as a context manager).

    Raises:
        ProgramError: the program is invalid, or cannot be run by the backend.
        ValueError: an unknown backend or option; ``threads_per_worker`` not an int of at
            least 1 (a :class:`ProgramError`, also a ``RamielError``).
        RuntimeFailure: a worker failed to start.
    """
    program.validate()
    check_switches()  # an odd RAMIEL_* value warns here, not once per worker process
    w = as_weights(weights)
    if threads_per_worker is None:
        threads_per_worker = program.planned_threads()
    check_threads(threads_per_worker)
    compile_timeout_s = float(options.pop("compile_timeout_s", 1800.0))
    runner: Runner
    if backend == "threads":
        runner = ThreadRunner(program, w, threads_per_worker, timeout_s, **options)
    elif backend == "processes":
        runner = ProcessRunner(program, w, threads_per_worker, timeout_s, **options)
    elif backend == "inline":
        runner = InlineRunner(program, w, threads_per_worker, timeout_s, **options)
    elif backend == "distributed":
        runner = DistributedRunner(program, w, threads_per_worker, timeout_s, **options)
    else:
        raise ValueError(f"unknown backend {backend!r}; expected one of {', '.join(BACKENDS)}")
    if program_segments(program):
        runner.warm_up(timeout_s=max(timeout_s, compile_timeout_s))
    return runner
