"""Runtime of generated parallel modules: programs, channels, workers, weights.

A generated module imports ``from ramiel.runtime import ops, Program, ChannelSpec`` (``ops`` is the
submodule :mod:`ramiel.runtime.ops`, imported on demand) and ends with a ``PROGRAM``. To run it::

    from ramiel.runtime import Weights, load_program, start

    program = load_program("model.py")
    with start(program, Weights.from_safetensors("model.safetensors"), backend="processes") as run:
        (prob,) = run(x)                     # positional, outputs as a tuple
        out = run.run({"data_0": x})         # by name, outputs as a dict

See :mod:`ramiel.runtime.program` for the contract, :mod:`ramiel.runtime.threads` and
:mod:`ramiel.runtime.processes` for the backends, :mod:`ramiel.runtime.calibrate` for the measured
transfer costs.
"""

from ramiel.runtime.program import (
    ChannelError,
    ChannelSpec,
    InputMismatch,
    Program,
    ProgramError,
    RunnerClosed,
    WorkerDied,
    WorkerError,
    WorkerTimeout,
    load_program,
)
from ramiel.runtime.runner import BACKENDS, Runner, start
from ramiel.runtime.weights import Weights

__all__ = [
    "BACKENDS",
    "ChannelError",
    "ChannelSpec",
    "InputMismatch",
    "Program",
    "ProgramError",
    "Runner",
    "RunnerClosed",
    "WorkerDied",
    "WorkerError",
    "WorkerTimeout",
    "Weights",
    "load_program",
    "start",
]
