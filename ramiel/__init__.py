"""Ramiel: ONNX models to readable, task-parallel PyTorch + Python, by static clustering on xDSL.

Python API::

    import ramiel
    model = ramiel.compile("model.onnx", clusters=2, backend="threads")
    y = model(x)                # parallel module
    y_seq = model.sequential(x) # sequential module, same weights
    model.close()

See :mod:`ramiel.compiler` for the pipeline and README.md for the command-line tools.
"""

from __future__ import annotations

from typing import Any

# OpenMP settings (the wait policy), effective when ramiel is imported before torch: ramiel.omp
from ramiel import omp as _omp  # noqa: F401

__version__ = "0.1.0"
__all__ = ["compile", "compile_model", "CompileOptions", "CompiledModel", "__version__"]


def __getattr__(name: str) -> Any:
    # Importing the compiler pulls in xDSL, onnx and torch: do it only when used.
    if name in ("compile", "compile_model", "CompileOptions", "CompiledModel"):
        from ramiel import compiler

        return getattr(compiler, name)
    raise AttributeError(f"module 'ramiel' has no attribute {name!r}")
