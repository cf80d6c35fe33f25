"""OpenMP settings of Ramiel's programs, set in the environment before the OpenMP runtime starts.

PyTorch's CPU kernels run their intra-op threads on GNU OpenMP (``libgomp``, loaded with
``import torch``; MKL and inductor's compiled kernels use the same runtime). libgomp reads its
settings from the environment once, when it is loaded, so they must be set before the first
``import torch`` of a process; :func:`configure` sets :data:`DEFAULTS` there, without overriding
a variable the user set, unless ``RAMIEL_OMP=0``. Where Ramiel guarantees that order:

* ``import ramiel`` (the package imports this module first; nothing else) -- so also
  ``ramiel`` (the command-line driver, :mod:`ramiel.tools.driver`, which imports torch only
  inside its commands) and any program that imports ramiel before torch;
* ``python model.py`` / ``python model_seq.py``: the generated modules ``import ramiel.omp``
  before ``import torch`` (a module imported into a process that already has torch inherits that
  process's settings);
* worker processes of the processes backend and the configuration processes of ``ramiel bench``
  and ``ramiel tune``: started with ``spawn``/``forkserver`` (fresh interpreters), the variables
  set in ``os.environ`` before they start (``fork``ed workers inherit the parent's running
  libgomp: they run one thread each, which never waits in OpenMP).

In a user's process that imported torch first, the process's own settings apply:
:func:`started` tells whether it is too late; a variable set on the command line
(``OMP_WAIT_POLICY=PASSIVE python app.py``) reaches every process.

What is set, and why (``bench/omp_policy.py``, ``bench/omp_wake.py``; docs/benchmarks.md,
section "Passive, spinning, and threads that make room"): nothing -- libgomp's own default,
spinning 300,000 iterations (about 10 ms) after each parallel region before its threads sleep.
An inference at batch size 1 is hundreds of short parallel regions, and a helper that sleeps at
once must be woken by the kernel for every one of them: with ``OMP_WAIT_POLICY=PASSIVE``
(Ramiel's setting from 2026-12-01 to 12-05) light_densenet121's one-cluster program with 2
threads on 2 cores took 60-62 ms, spinning 44 ms; the project transformer's sequential module
8.0 against 3.9 ms. Spinning has two costs, and the runtime pays for both: a helper woken after
an idle pause waits for the core of its spinning worker thread (6-8 ms per request), unless it
is bound to a core of its own (:mod:`ramiel.runtime.binding`); and spinning threads fight other
processes for their cores (densenet121 188 ms next to one busy core), unless the worker runs
fewer threads while others hold cores (:mod:`ramiel.runtime.contention`: 71 ms). The generated
sequential ``nn.Module``, called directly, makes room the same way
(:class:`ramiel.runtime.contention.ThreadAdapter`); it binds nothing. :data:`DEFAULTS` stays the place for a
setting that all of Ramiel's processes need before torch starts.
"""

from __future__ import annotations

import os
import sys

from ramiel.envflags import switch_on

DEFAULTS: dict[str, str] = {}
"""What :func:`configure` sets: nothing (libgomp's default spinning; see the module docstring)."""

ENV_DISABLE = "RAMIEL_OMP"
"""``RAMIEL_OMP=0``: :func:`configure` changes nothing."""


def configure(environ: dict[str, str] | None = None) -> dict[str, str]:
    """Set :data:`DEFAULTS` in ``environ`` (default ``os.environ``) where unset; returns the
    variables it set. Does nothing with ``RAMIEL_OMP=0``. Takes effect in this process only if
    torch is not imported yet (:func:`started`), and in every process started afterwards."""
    env = os.environ if environ is None else environ
    if not switch_on(ENV_DISABLE, env):
        return {}
    if any(k in env for k in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")):
        return {}  # the user chose a wait policy
    done: dict[str, str] = {}
    for k, v in DEFAULTS.items():
        if k not in env:
            env[k] = v
            done[k] = v
    return done


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity; ``os.cpu_count()`` where the
    platform has no affinity). Here, below torch, so that generated programs size their intra-op
    thread pools with it (:meth:`ramiel.runtime.Program.planned_threads`) as the compiler does."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


MAX_COUNT = 1024
"""The largest count any option takes (clusters, workers, threads, cores, samples): more would
start that many threads or processes, or replicate the graph that many times. The ``ramiel``
commands' counts and a generated module's ``--threads`` keep to it."""


def thread_limit(environ: dict[str, str] | None = None) -> int | None:
    """The user's limit on intra-op threads: ``OMP_NUM_THREADS`` (its first entry, as OpenMP
    reads a list), or ``None`` where it is unset or not a positive number. Generated programs run
    no worker with more threads than this (:meth:`ramiel.runtime.Program.planned_threads`), as
    PyTorch runs no op with more; ``torchrun`` sets it to 1 for every rank unless set.

    >>> thread_limit({"OMP_NUM_THREADS": "4"}), thread_limit({"OMP_NUM_THREADS": "2,1"})
    (4, 2)
    >>> thread_limit({}), thread_limit({"OMP_NUM_THREADS": "0"}), thread_limit({"OMP_NUM_THREADS": "x"})
    (None, None, None)
    """
    env = os.environ if environ is None else environ
    first = env.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    return int(first) if first.isdigit() and int(first) > 0 else None


def started() -> bool:
    """Whether this process already loaded PyTorch (and so its OpenMP runtime and settings)."""
    return "torch" in sys.modules


configure()
