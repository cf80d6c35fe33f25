"""Runtime of generated modules: programs, channels, workers, weights, the parallel module.

A generated sequential module imports only ``from ramiel.runtime import ops`` (the submodule
:mod:`ramiel.runtime.ops`, helpers for ONNX semantics; it needs torch alone, neither xDSL nor
onnx). A generated parallel module also imports ``ChannelSpec``, ``Program`` and
:class:`ParallelModel` and ends with a ``PROGRAM`` and its module class::

    with InceptionV1Parallel.from_safetensors(backend="processes") as model:
        prob = model(x)                      # positional: a tensor, or a tuple for several
        out = model.run({"data_0": x})       # by name: a dict

The lower level, without a module::

    from ramiel.runtime import Weights, load_program, start

    program = load_program("model.py")
    with start(program, Weights.from_safetensors("weights.safetensors")) as run:
        prob = run(x)                        # the same conventions
        out = run.run({"data_0": x})

See :mod:`ramiel.runtime.program` for the contract, :mod:`ramiel.runtime.module` for the module,
:mod:`ramiel.runtime.threads` and :mod:`ramiel.runtime.processes` for the backends,
:mod:`ramiel.runtime.calibrate` for the measured transfer costs.
"""

from ramiel.runtime.launch import start
from ramiel.runtime.module import ParallelModel
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
from ramiel.runtime.runner import BACKENDS, Runner
from ramiel.runtime.weights import Weights

__all__ = [
    "BACKENDS",
    "ChannelError",
    "ChannelSpec",
    "InputMismatch",
    "ParallelModel",
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
