"""A generated parallel program as a ``torch.nn.Module``: :class:`ParallelModel`.

The class a generated ``model.py`` defines derives from :class:`ParallelModel`::

    class InceptionV1Parallel(ParallelModel):
        PROGRAM = PROGRAM
        WEIGHTS_FILE = "weights.safetensors"

        def __init__(self, **runtime_options):
            super().__init__(**runtime_options)
            self.register_buffer("conv1_w", torch.empty((64, 3, 7, 7), dtype=torch.float32))
            ...

    with InceptionV1Parallel.from_safetensors(backend="processes") as model:
        prob = model(x)

The module owns the weights (registered buffers, named as in the weights file, so ``state_dict``
and ``load_state_dict`` work as for any module) and the workers of its program
(:func:`ramiel.runtime.start`): they start on the first call (or ``start()``; threads that make
their first call at once share them) and serve every later one; ``close()``, ``with`` or garbage
collection stops them, and a call after ``close()`` raises
:class:`~ramiel.runtime.RunnerClosed`. A failure (a cluster that raised, a worker that died or
timed out) stops the workers and is raised by the call that saw it; the next call starts new
ones (``last_failure`` keeps what stopped the last), so one bad input does not disable the
module, nor fail the calls other threads made meanwhile. ``copy.deepcopy`` and pickling keep the weights, not the
workers. The cluster functions receive the weights
as ``w``, a :class:`~ramiel.runtime.weights.Weights` namespace of the module's tensors: the same
tensor objects on the threads and inline backends, one shared-memory copy that every worker maps
on the processes backend (:func:`~ramiel.runtime.weights.pack_shared`, made once per start, so no
call copies weights). When the weights change (``load_state_dict``, ``.to(...)``, an in-place
update: any tensor that is replaced or whose version counter moved), the next call restarts the
workers with the new ones.

The program is compiled for the static shapes and dtypes of its channels: ``forward`` runs it on
exactly those (:class:`~ramiel.runtime.program.InputMismatch` otherwise, which says so when the
sequential module takes any batch size). Autograd does not cross workers: the outputs carry no
gradient (the sequential module does).

Outputs, as for the sequential module: ``model(*inputs)`` returns one tensor for a one-output
graph, else a tuple in graph order; ``model.run({name: tensor})`` returns a dict by ONNX output
name.
"""

from __future__ import annotations

import contextlib
import operator
import os
import sys
import threading
import warnings
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any, ClassVar

import torch
from safetensors.torch import load_file

from ramiel.errors import RamielError
from ramiel.runtime.channels import version_of
from ramiel.runtime.launch import start
from ramiel.runtime.memory import reuse_freed_memory
from ramiel.runtime.program import (
    InputMismatch,
    Program,
    ProgramError,
    ProgramNames,
    RunnerClosed,
    check_threads,
)
from ramiel.runtime.weights import Weights, own_tensors, to_formats


def with_state(
    cls: type, state: Mapping[str, torch.Tensor], only_own: bool = False, **kwargs: Any
) -> Any:
    """``cls(**kwargs)`` (a module class) holding the tensors of ``state`` (no copy): built on the
    meta device, so its own uninitialised weights take no memory, then
    ``load_state_dict(state, assign=True)``; with ``only_own``, the tensors of ``state`` that
    are not the module's are skipped (a compilation's weights file holds those of both its
    programs: the sequential one can read a constant that the parallel one folded into another).

    Raises ``RuntimeError`` (``load_state_dict``) for a missing weight, one of another shape, or
    (without ``only_own``) an unexpected one.
    """
    with torch.device("meta"):
        model = cls(**kwargs)
    if only_own:
        state = own_tensors(model, state)
    model.load_state_dict(state, assign=True)
    return model


class ParallelModel(ProgramNames, torch.nn.Module):
    """A task-parallel program whose weights are this module's buffers (see the module docstring).

    Args:
        backend: ``"threads"``, ``"processes"``, ``"distributed"`` or ``"inline"`` (see
            :func:`ramiel.runtime.start`); default: the class's :attr:`BACKEND`, the one the
            generated class was compiled for.
        threads_per_worker: intra-op threads of each worker; default: the program's
            :meth:`~ramiel.runtime.Program.planned_threads` (a program compiled for 8 cores that
            merging left with 2 clusters runs 4 per worker where 8 cores are usable).
        timeout_s: limit of one inference, seconds.
        program: the program (default: the class attribute ``PROGRAM``).
        **options: further options of :func:`ramiel.runtime.start` (``start_method``, ...).

    Raises:
        ProgramError: no program, or it is invalid (at the first call); ``threads_per_worker``
            not an int of at least 1 (here).
    """

    PROGRAM: ClassVar[Program | None] = None
    #: The backend an instance runs on unless told otherwise: the generated class sets the one
    #: it was compiled for (``processes``, ``distributed``).
    BACKEND: ClassVar[str] = "threads"
    WEIGHTS_FILE: ClassVar[str] = "weights.safetensors"
    #: Weight key -> memory format the cluster functions read it in (``torch.channels_last``:
    #: conv kernels of channels-last convolutions); the generated class sets it.
    WEIGHT_FORMATS: ClassVar[Mapping[str, Any]] = {}
    #: ONNX names of the inputs whose dimension 0 the *sequential* module takes at any size (the
    #: generated class sets it; a ``CompiledModel`` per instance, from its sequential module).
    DYNAMIC_BATCH: tuple[str, ...] = ()
    #: The sequential module's ``forward`` parameter names (sanitised ONNX names) -> the ONNX
    #: names they stand for (empty where every one is its ONNX name): ``forward`` takes either
    #: set as keywords, so that a call written for one module works on the other (the
    #: generated class sets it). Keywords that are all ONNX names are read as those.
    ARG_NAMES: Mapping[str, str] = MappingProxyType({})
    #: weight name -> the dtype the program is compiled for, checked when the workers start
    #: (:meth:`_check_weights`; a ``CompiledModel`` sets it from its sequential class;
    #: a name not listed is not checked)
    _declared_dtypes: Mapping[str, torch.dtype] = MappingProxyType({})

    def __init__(
        self,
        backend: str | None = None,
        threads_per_worker: int | None = None,
        timeout_s: float = 60.0,
        program: Program | None = None,
        **options: Any,
    ):
        super().__init__()
        reuse_freed_memory()  # freed tensor memory kept for the next call (RAMIEL_MALLOC=0: off)
        prog = program if program is not None else type(self).PROGRAM
        if not isinstance(prog, Program):
            raise ProgramError(f"{type(self).__name__} has no PROGRAM (a ramiel.runtime.Program)")
        self.program = prog
        self.backend = backend if backend is not None else type(self).BACKEND
        if threads_per_worker is not None:
            check_threads(threads_per_worker)
        self.threads_per_worker = threads_per_worker
        self.timeout_s = timeout_s
        self.runtime_options = dict(options)
        self._runner: Any = None
        self._signature: tuple | None = None
        self._closed = False
        self._start_lock = threading.Lock()  # concurrent first calls start one runner
        #: the failure that stopped the last workers (set by the call that raised it; the next
        #: call starts new ones), or None
        self.last_failure: BaseException | None = None

    def __getstate__(self) -> dict[str, Any]:
        # copy.deepcopy, torch.save: the weights and settings; neither workers nor the lock
        state = self.__dict__.copy()
        state["_runner"], state["_signature"], state["_closed"] = None, None, False
        del state["_start_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._start_lock = threading.Lock()

    # ------------------------------------------------------------------------------ loading

    @classmethod
    def from_safetensors(
        cls, path: str | os.PathLike[str] | None = None, device: Any = None, **kwargs: Any
    ) -> ParallelModel:
        """An instance holding the weights of the safetensors file ``path`` (default:
        ``WEIGHTS_FILE`` beside the class's module); ``kwargs`` go to the constructor.

        The weights of ``WEIGHT_FORMATS`` are converted here, once, into the memory format the
        cluster functions read them in (:func:`~ramiel.runtime.weights.to_formats`); the
        processes backend's shared copy keeps that format.

        The file holds the weights of both programs of the compilation; the tensors only the
        sequential one reads are skipped. Raises ``RuntimeError`` (``load_state_dict``) when the
        file lacks a weight or holds one of another shape.
        """
        if path is None:
            mod = sys.modules.get(cls.__module__)
            where = getattr(mod, "__file__", None)
            if where is None:  # a module loaded without sys.modules: its cluster functions'
                where = next(  # globals (helper-27)
                    (
                        f.__globals__.get("__file__")
                        for f in getattr(getattr(cls, "PROGRAM", None), "clusters", {}).values()
                        if getattr(f, "__globals__", None)
                    ),
                    None,
                )
            if where is None:
                raise ProgramError(f"{cls.__name__}: no module file to find {cls.WEIGHTS_FILE} by")
            path = os.path.join(os.path.dirname(os.path.abspath(where)), cls.WEIGHTS_FILE)
        with torch.inference_mode(False):  # plain tensors even under inference mode
            state = load_file(os.fspath(path), device=str(device or "cpu"))
            return with_state(cls, to_formats(state, cls.WEIGHT_FORMATS), only_own=True, **kwargs)

    # ---------------------------------------------------------------------------- the workers

    @property
    def runner(self) -> Any:
        """The started :class:`~ramiel.runtime.Runner` (``None`` before the first call)."""
        return self._runner

    @property
    def closed(self) -> bool:
        """True when no workers run (before the first call, after ``close()`` or a failure)."""
        return self._runner is None or self._runner.closed

    def weights_namespace(self) -> Weights:
        """The ``w`` the cluster functions get: the module's tensors by name (not copies)."""
        tensors: dict[str, torch.Tensor] = {}
        tensors.update(self._buffers)  # type: ignore[arg-type]
        tensors.update(self._parameters)  # type: ignore[arg-type]
        return Weights(tensors)

    def _weights_signature(self) -> tuple:
        """The names, identities and version counters of the module's tensors: a change means
        the workers must start again with the new ones. Checked on every call, so written with
        C-level ``map`` (11 µs for the project transformer's 69 tensors, where a generator of
        ``(name, id, version)`` tuples took 47 µs)."""
        tensors: list[Any] = [*self._buffers.values(), *self._parameters.values()]
        try:
            versions = tuple(map(_VERSION, tensors))
        except (RuntimeError, AttributeError):  # an inference tensor (no counter), or a None
            tensors = [t for t in tensors if t is not None]
            versions = tuple(map(version_of, tensors))
        return (*self._buffers, "", *self._parameters), tuple(map(id, tensors)), versions

    def _runtime(self) -> tuple[str, int]:
        """The backend and intra-op threads per worker to start (subclasses may adapt them)."""
        threads = self.threads_per_worker
        return self.backend, threads if threads is not None else self.program.planned_threads()

    def start(self) -> Any:
        """Start the workers now (the first call does it otherwise) and return the started
        :class:`~ramiel.runtime.Runner` (compiled segments are compiled here).

        Raises :class:`~ramiel.runtime.RunnerClosed` after :meth:`close`.
        """
        return self._start()

    def compile_report(self) -> list[Any]:
        """The compilations of the program's compiled segments so far
        (:class:`~ramiel.runtime.compiled.CompileEvent` items; empty unless compiled)."""
        return self._runner.compile_report() if self._runner is not None else []

    def _start(self) -> Any:
        sig = self._weights_signature()
        runner = self._runner
        if runner is not None and sig == self._signature and not runner.closed:
            return runner
        with self._start_lock:
            if self._closed:
                raise RunnerClosed(
                    f"{type(self).__name__} is closed; make another to run the program again "
                    "(a sequential module still works)"
                )
            current = self._runner
            if current is not None and current.closed:
                # a failure (or Ctrl-C) stopped the workers and released them; the call that saw
                # it raised it, and this one starts fresh workers (one bad input had disabled
                # the module for good, even where the failure was the input's: helper-22)
                self.last_failure = current.failure
                self._runner = None
            elif current is not None and sig != self._signature:
                current.close()  # the weights changed: the workers must see the new ones
                self._runner = None
            if self._runner is None:
                self._check_weights()
                backend, threads = self._runtime()
                self._runner = start(
                    self.program,
                    self.weights_namespace(),
                    backend=backend,
                    threads_per_worker=threads,
                    timeout_s=self.timeout_s,
                    **self.runtime_options,
                )
                self._signature = sig
            return self._runner

    def _check_weights(self) -> None:
        """Raise :class:`ProgramError` before the workers start where a weight was never loaded
        (a meta tensor), or is not of the dtype the program was compiled for
        (:attr:`_declared_dtypes`), or not on the CPU: replaced by ``load_state_dict(...,
        assign=True)`` with tensors of another dtype, or converted through the sequential module
        that shares them (the call had failed in a cluster with a dtype mismatch, a WorkerError;
        found by a fresh-user check)."""
        for name, t in self.named_buffers():
            if t.is_meta:
                raise ProgramError(
                    f"{type(self).__name__}: weight '{name}' was never loaded (a meta "
                    "tensor); use from_safetensors or load_state_dict(..., assign=True)"
                )
        declared = self._declared_dtypes
        for d in (self._buffers, self._parameters):
            for name, tensor in d.items():
                if tensor is None:
                    continue
                want = declared.get(name, tensor.dtype)
                if tensor.dtype != want or tensor.device.type != "cpu":
                    raise ProgramError(
                        f"{type(self).__name__}: weight '{name}' is {tensor.dtype} on "
                        f"{tensor.device}, and "
                        f"the program is compiled for {want} on the CPU; load tensors of that "
                        f"dtype, or {_CONVERT_A_COPY}"
                    )

    def _mismatch(self, e: InputMismatch) -> InputMismatch:
        if not (e.batch_only and e.input_name in self.DYNAMIC_BATCH):
            return e
        return InputMismatch(
            f"{e} (the parallel program is compiled for the shapes it was bound to; the "
            "sequential module takes any batch size)"
        )

    def __call__(self, /, *args: Any, **kwargs: Any) -> Any:
        """``nn.Module.__call__``, which cannot take a keyword named ``self``: an ONNX input of
        that name (a fresh-user check: "got multiple values for argument 'self'") is passed on
        by position."""
        if "self" in kwargs:
            feeds = self._feeds(args, kwargs)
            if set(feeds) != set(self.input_names):
                return self.forward(*args, **kwargs)  # (raises InputMismatch)
            return super().__call__(*(feeds[n] for n in self.input_names))
        return super().__call__(*args, **kwargs)

    def forward(self, /, *inputs: Any, **named: Any) -> Any:
        """Run the program once on the graph inputs (positional in ``input_names`` order, or by
        ONNX name or by the sequential module's parameter name, :attr:`ARG_NAMES`); returns one
        tensor for a one-output graph, else a tuple in graph order.

        Raises:
            InputMismatch: missing, unknown or misshapen inputs (the workers stay usable).
            RuntimeFailure: a worker raised, died or timed out (see :mod:`ramiel.runtime`).
        """
        outs = self.run(self._feeds(inputs, named))
        if self._parameters and torch.is_grad_enabled() and not self._warned_no_grad:
            self._warn_no_grad()
        values = tuple(outs[n] for n in self.output_names)
        return values[0] if len(values) == 1 else values

    _warned_no_grad = False

    def _feeds(self, inputs: tuple[Any, ...], named: Mapping[str, Any]) -> dict[str, Any]:
        """The inputs of a call by ONNX name: ``inputs`` in ``input_names`` order, then
        ``named`` (see :meth:`forward`)."""
        names = self.input_names
        if len(inputs) > len(names):
            raise InputMismatch(
                f"{type(self).__name__} takes {len(names)} input(s) ({', '.join(names)}), "
                f"got {len(inputs)}"
            )
        feeds = dict(zip(names, inputs, strict=False))
        for k, v in self._by_onnx_name(named).items():
            if k in feeds:
                raise InputMismatch(f"input '{k}' given twice (by position and by name)")
            feeds[k] = v
        return feeds

    def _warn_no_grad(self) -> None:
        """Once per module: a call with autograd on and trainable weights (``trainable=True``)
        returns outputs without a gradient (the clusters run on worker threads or processes):
        a ``backward()`` had failed with torch's "element 0 of tensors does not require grad"
        alone (a fresh-user check)."""
        if any(p is not None and p.requires_grad for p in self._parameters.values()):
            self._warned_no_grad = True
            warnings.warn(
                f"{type(self).__name__} runs its clusters without autograd: its outputs carry "
                "no gradient; train the sequential module (.sequential, model_seq.py), which "
                "holds the same weights, or call this one under torch.no_grad()",
                RuntimeWarning,
                stacklevel=6,  # the caller of model(...), past __call__ and torch's _call_impl
            )

    def _by_onnx_name(self, named: Mapping[str, Any]) -> dict[str, Any]:
        """``named`` keyed by ONNX names: the sequential module's parameter names
        (:attr:`ARG_NAMES`) where every key is one of those and not every key an ONNX name."""
        aliases, names = self.ARG_NAMES, set(self.input_names)
        if aliases and not set(named) <= names and set(named) <= set(aliases):
            return {aliases[k]: v for k, v in named.items()}
        return dict(named)

    def run(self, feeds: Mapping[str, Any]) -> dict[str, torch.Tensor]:
        """Run the program once on inputs by ONNX name (or all by the sequential module's
        parameter names, :attr:`ARG_NAMES`, as ``forward`` takes them); returns the outputs by
        ONNX name.

        Raises :class:`InputMismatch` (the workers stay usable) under ``torch.export``,
        ``torch.compile`` or ``torch.jit`` tracing: the clusters run on worker threads or
        processes, which a tracer cannot follow (its fake tensors failed in the workers and
        closed the runner); the sequential module (``.sequential``, ``model_seq.py``) is the one
        to export or compile."""
        if not isinstance(feeds, Mapping):
            raise InputMismatch(
                f"{type(self).__name__}.run takes a dict of input name -> tensor, not a "
                f"{type(feeds).__name__} (model(*tensors) takes them in order: "
                f"{', '.join(self.input_names)})"
            )
        if _tracing(feeds.values()):
            raise InputMismatch(_CANNOT_TRACE.format(type(self).__name__))
        for attempt in range(_RESTARTS + 1):
            runner = self._start()
            try:
                return runner.run(self._by_onnx_name(feeds))
            except InputMismatch as e:
                raise self._mismatch(e) from None
            except RunnerClosed:
                # Another thread's call failed and stopped these workers while this one waited
                # for them (the runner raises it before anything of this call ran): the next
                # _start() starts fresh ones, as for a later call; where close() was called,
                # it raises. (Valid calls from other threads had failed with the other
                # thread's error; found by a fresh-user check.)
                if attempt == _RESTARTS:
                    raise
            except BaseException:
                if runner.closed and runner.failure is not None:
                    # what stopped these workers, known from this call on (it had been set by
                    # the next call only; a fresh-user check)
                    self.last_failure = runner.failure
                raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _apply(self, fn: Any, recurse: bool = True) -> Any:
        """``nn.Module._apply`` (behind ``.to``, ``.double()``, ``.half()``, ``.cuda()``, ...),
        refusing a change of the weights' dtype or device before any weight is touched: the
        program's ops and channels are compiled for the dtypes and the CPU it was made for (a
        float64 copy of the weights made every later call fail).

        Raises:
            ProgramError: ``fn`` changes a float32 CPU tensor's dtype or device.
        """
        probe = torch.zeros(1)
        moved = fn(probe)
        if isinstance(moved, torch.Tensor) and (
            moved.dtype != probe.dtype or moved.device != probe.device
        ):
            raise ProgramError(
                f"{type(self).__name__} is compiled for its weights' dtypes on the CPU; "
                f"converting them (to {moved.dtype} on {moved.device}) is not supported: compile "
                f"a model of that dtype, or {_CONVERT_A_COPY}"
            )
        return super()._apply(fn, recurse)

    def close(self) -> None:
        """Stop the workers; later parallel calls raise ``RunnerClosed``. Idempotent."""
        with self._start_lock:
            self._closed = True
            runner, self._runner = self._runner, None
        if runner is not None:
            runner.close()

    def __enter__(self) -> ParallelModel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # interpreter shutdown, half-initialised instance
            self.close()

    def _state_text(self) -> str:
        """``running``, ``closed`` (by ``close()``), ``stopped after a failure`` or ``not
        started`` (for repr)."""
        runner = self._runner
        if self._closed:
            return "closed"
        if runner is not None and runner.closed:
            failure = f" ({type(runner.failure).__name__})" if runner.failure is not None else ""
            return f"stopped after a failure{failure}; the next call starts new workers"
        if runner is None:
            return "not started (workers start on the first call)"
        dead = runner.dead_workers()
        if dead:
            return f"running, but the worker of {', '.join(dead)} died (the next call raises)"
        return "running"

    def extra_repr(self) -> str:
        backend, threads = self._runtime()
        return (
            f"program={self.program.name!r}, clusters={len(self.program.clusters)}, "
            f"backend={backend!r}, threads_per_worker={threads}, {self._state_text()}"
        )


__all__ = ["ParallelModel", "with_state"]


def generated_class(module: Any) -> Any:
    """The ``torch.nn.Module`` class a generated module file defines (exactly one); typed ``Any``:
    its class attributes (``INPUTS``, ``OUTPUTS``, ``from_safetensors``, ...) are the file's.

    Raises:
        RamielError: the module defines no such class, or several.
    """
    found = [
        v
        for v in vars(module).values()
        if isinstance(v, type)
        and issubclass(v, torch.nn.Module)
        and v.__module__ == module.__name__
    ]
    if len(found) != 1:
        raise RamielError(
            f"{getattr(module, '__file__', module.__name__)}: expected one torch.nn.Module class, "
            f"found {len(found)}"
        )
    return found[0]


_VERSION = operator.attrgetter("_version")

_CONVERT_A_COPY = (
    "convert a copy of the sequential module (copy.deepcopy(model.sequential).double(), or "
    "model_seq.py's class): model.sequential shares this module's tensors"
)
"""The way to another dtype, for the errors that refuse one."""

_RESTARTS = 64
"""How many times a call starts fresh workers when the ones it was given were stopped by another
thread's failed call before it ran (:meth:`ParallelModel.run`): each time is another failed call
of another thread, so this bounds only a pathological run of them (a thread that sends a bad
input again and again beats the others to the fresh workers about every other time)."""

_CANNOT_TRACE = (
    "{} cannot be traced (torch.export, torch.compile, torch.jit, torch.fx): its clusters run on "
    "worker threads or processes; export, compile or trace the sequential module (.sequential, "
    "model_seq.py) instead"
)


def _tracing(values: Iterable[Any]) -> bool:
    """Whether a tracer is running this call: torch.compile / torch.export (dynamo), torch.jit
    tracing, or fake tensors (torch.export's non-strict mode, ``FakeTensorMode``). torch.fx's
    symbolic tracing fails before ``forward`` runs (its proxy for ``*inputs`` cannot be
    unpacked), with torch's own error."""
    if torch.compiler.is_compiling() or torch.jit.is_tracing():
        return True
    try:
        from torch._subclasses.fake_tensor import FakeTensor  # lazy: torch (private module)
    except ImportError:  # pragma: no cover - another torch layout
        return False
    return any(isinstance(v, FakeTensor) for v in values)
