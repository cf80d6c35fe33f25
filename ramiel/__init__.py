"""Ramiel: ONNX models to readable, task-parallel PyTorch + Python, by static clustering on xDSL.

Python API::

    import ramiel

    model = ramiel.compile("model.onnx", clusters=2, backend="threads")  # a torch.nn.Module
    y = model(x)                 # the parallel program: a tensor, or a tuple for several outputs
    out = model.run({"x": x})    # the same by ONNX name: a dict by output name
    seq = model.sequential       # the generated sequential module (same weights): fx, export,
    y = seq(x)                   # torch.compile, autograd with trainable=True
    model.load_state_dict(safetensors.torch.load_file("weights.safetensors"))
    model.close()                # stops the workers (or: with ramiel.compile(...) as model)

* :func:`compile` -> :class:`CompiledModel`; :func:`compile_model` writes the generated files
  (``model.py``, ``model_seq.py``, ``weights.safetensors``, ``model.mlir``, the schedule) and
  returns a :class:`CompileResult`; :class:`CompileOptions` lists every option.
* The generated classes: ``model_seq.py`` defines ``<Name>(torch.nn.Module)``, ``model.py``
  ``<Name>Parallel(ParallelModel)``; both load ``weights.safetensors`` with
  ``from_safetensors()``.
* Backends of the parallel program (:data:`BACKENDS`): ``threads`` (one thread per cluster),
  ``processes`` (one process per cluster, shared-memory channels and weights), ``inline``
  (clusters one after another in the caller's thread) and ``distributed`` (one cluster per rank
  of a ``torch.distributed`` group, ``docs/distributed.md``); :mod:`ramiel.backend` is an
  ``onnx.backend`` (``prepare(model).run(inputs)``: numpy arrays in, a tuple of numpy arrays out,
  as that API prescribes).
* Errors: every error a user can cause is a :class:`RamielError`: :class:`ImportError_` (a bad
  file), :class:`UnsupportedOpError`, :class:`DynamicShapeError`,
  :class:`DataDependentShapeError`, :class:`SchedulingError`, and at run time
  :class:`InputMismatch` and the :class:`RuntimeFailure`\\ s :class:`WorkerError`,
  :class:`WorkerDied`, :class:`WorkerTimeout`, :class:`RunnerClosed`.

See README.md for the command-line tools (``ramiel``, ``ramiel-opt``, ``ramiel-translate``).
"""

from __future__ import annotations

import importlib
from typing import Any

# Ctrl-C while a ramiel command or a generated module run as a script loads torch: one line,
# status 130 (ramiel.interrupts); nothing changes in a program that imports ramiel as a library
from ramiel import interrupts as _interrupts

# OpenMP settings (the wait policy), effective when ramiel is imported before torch: ramiel.omp
from ramiel import omp as _omp  # noqa: F401
from ramiel.errors import (
    DataDependentShapeError,
    DynamicShapeError,
    ImportError_,
    RamielError,
    RuntimeFailure,
    SchedulingError,
    UnsupportedOpError,
)

_interrupts.install_at_start()

__version__ = "0.1.0"

BACKENDS = ("threads", "processes", "inline", "distributed")
"""The runtime backends of the parallel program (``backend=`` of :func:`compile`)."""

# Importing these pulls in xDSL, onnx or torch: done on first use.
_LAZY = {
    "compile": "ramiel.compiler",
    "compile_model": "ramiel.compiler",
    "CompileOptions": "ramiel.compiler",
    "CompileResult": "ramiel.compiler",
    "CompiledModel": "ramiel.compiler",
    "ParallelModel": "ramiel.runtime.module",
    "InputMismatch": "ramiel.runtime.program",
    "WorkerError": "ramiel.runtime.program",
    "WorkerDied": "ramiel.runtime.program",
    "WorkerTimeout": "ramiel.runtime.program",
    "RunnerClosed": "ramiel.runtime.program",
    "backend": None,
}

__all__ = [
    "BACKENDS",
    "CompileOptions",
    "CompileResult",
    "CompiledModel",
    "DataDependentShapeError",
    "DynamicShapeError",
    "ImportError_",
    "InputMismatch",
    "ParallelModel",
    "RamielError",
    "RunnerClosed",
    "RuntimeFailure",
    "SchedulingError",
    "UnsupportedOpError",
    "WorkerDied",
    "WorkerError",
    "WorkerTimeout",
    "__version__",
    "backend",
    "compile",
    "compile_model",
]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'ramiel' has no attribute {name!r}")
    where = _LAZY[name]
    if where is None:  # a submodule
        return importlib.import_module(f"ramiel.{name}")
    return getattr(importlib.import_module(where), name)


def __dir__() -> list[str]:
    return sorted(__all__)
