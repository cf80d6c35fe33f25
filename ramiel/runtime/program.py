"""What a generated parallel module hands to the runtime: clusters, channels, graph inputs/outputs.

A generated module ends with one :class:`Program`::

    PROGRAM = Program(
        name="model",
        clusters={"c0": cluster_c0, "c1": cluster_c1},
        channels={
            "data_0__c0": ChannelSpec(src=None, dst="c0", shape=(1, 3, 224, 224), dtype=torch.float32),
            "conv1__c0_c1": ChannelSpec(src="c0", dst="c1", shape=(1, 64, 112, 112), dtype=torch.float32),
            "prob__out": ChannelSpec(src="c1", dst=None, shape=(1, 1000), dtype=torch.float32),
        },
        inputs={"data_0": ["data_0__c0"]},
        outputs={"prob": "prob__out"},
    )

Each cluster function is called once per inference as ``fn(ch, w)``: ``ch.get(name)`` receives the
tensor of a channel whose ``dst`` is the cluster, ``ch.put(name, tensor)`` sends one on a channel whose
``src`` is the cluster, and ``w`` is a :class:`~ramiel.runtime.weights.Weights`. ``src=None`` means the
caller sends (a graph input), ``dst=None`` means the caller receives (a graph output). Every channel
carries exactly one tensor per inference, of the static shape and dtype its spec declares.

Channel contract (all backends): a tensor is immutable once it has crossed a channel. The sender
must not modify it in place after ``put`` and the receiver must not modify what ``get`` returned. The
processes backend copies on ``put`` and so tolerates both; the threads backend passes references and
reports a violation as :class:`ChannelError` at the end of the inference (see
:mod:`ramiel.runtime.threads`).

This module also defines the errors of the runtime; all derive from
:class:`ramiel.errors.RamielError`.
"""

from __future__ import annotations

import copyreg
import hashlib
import importlib
import importlib.util
import os
import sys
import tempfile
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from ramiel.errors import RamielError, RuntimeFailure
from ramiel.omp import MAX_COUNT, thread_limit, usable_cores

ClusterFn = Callable[..., None]


# --------------------------------------------------------------------------------------------- errors


class ProgramError(RamielError, ValueError):
    """A :class:`Program` is malformed (unknown cluster, dangling channel, bad shape, ...)."""


class InputMismatch(RuntimeFailure, ValueError):
    """The tensors given to ``Runner.run`` do not match the program's input channels.

    Raised before anything is dispatched; the runner stays usable. ``batch_only``: the inputs
    differ from the program's only in the size of dimension 0; ``input_name``, ``got_shape``:
    the input whose shape or dtype differs, and its shape (``None`` for other mismatches).
    """

    batch_only: bool = False
    input_name: str | None = None
    got_shape: tuple[int, ...] | None = None


class RunnerClosed(RuntimeFailure):
    """``run`` was called on a runner that was closed or that shut down after a failure."""


class ChannelError(RuntimeFailure):
    """Generated code misused a channel.

    Examples: a put of the wrong shape or dtype, a get of a channel that does not reach the cluster, a
    channel put or got twice in one inference, a cluster that finished an inference without putting
    (or getting) one of its channels, or (threads backend) a tensor modified in place after it crossed
    a channel.
    """


class RemoteTraceback(Exception):
    """Carries the formatted traceback of an exception raised inside a worker (as ``__cause__``)."""

    def __init__(self, text: str):
        super().__init__(text)
        self.text = text

    def __str__(self) -> str:
        return "\n\n--- traceback in the worker ---\n" + self.text


class WorkerError(RuntimeFailure):
    """A cluster function raised.

    Attributes:
        cluster: name of the cluster whose function raised.
        exc_type: qualified name of the exception type, e.g. ``"builtins.ValueError"``.
        message: ``str()`` of the exception.
        remote_traceback: the formatted traceback text from the worker (also attached as
            ``__cause__`` so that it prints below this error).
    """

    def __init__(self, cluster: str, exc_type: str, message: str, remote_traceback: str):
        self.cluster = cluster
        self.exc_type = exc_type
        self.message = message
        self.remote_traceback = remote_traceback
        short = exc_type.removeprefix("builtins.")
        super().__init__(f"cluster '{cluster}' raised {short}: {message}")

    def __reduce__(self):
        return (type(self), (self.cluster, self.exc_type, self.message, self.remote_traceback))


def describe_exception(e: BaseException, skip_frames: int = 0) -> tuple[str, str, str]:
    """``(qualified type name, message, formatted traceback)`` of ``e`` for a :class:`WorkerError`.

    ``skip_frames`` drops that many outermost frames (the worker loop) from the traceback.
    """
    tb = e.__traceback__
    for _ in range(skip_frames):
        if tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
    text = "".join(traceback.format_exception(type(e), e, tb))
    return f"{type(e).__module__}.{type(e).__qualname__}", str(e), text


class WorkerDied(RuntimeFailure):
    """A worker process exited while the runner was using it (killed, crashed, ``os._exit``).

    Attributes:
        cluster: the cluster the worker ran.
        exitcode: the process exit status; ``-N`` means killed by signal ``N`` (``-9``: SIGKILL).
    """

    def __init__(self, cluster: str, exitcode: int | None):
        self.cluster = cluster
        self.exitcode = exitcode
        how = f"killed by signal {-exitcode}" if exitcode is not None and exitcode < 0 else ""
        how = how or f"exit code {exitcode}"
        super().__init__(f"worker of cluster '{cluster}' died ({how})")


class WorkerTimeout(RuntimeFailure):
    """An inference did not finish within the runner's ``timeout_s``, or cannot finish: a worker
    process is stopped (``SIGSTOP``/``SIGTSTP``), seen by the liveness check long before the
    timeout (see :mod:`ramiel.runtime.processes`).

    Attributes:
        clusters: the clusters that had not finished the inference.
        timeout_s: the limit of the inference, in seconds.
        stopped: the clusters whose worker process is stopped (empty for a plain timeout).
    """

    def __init__(self, clusters: Sequence[str], timeout_s: float, stopped: Sequence[str] = ()):
        self.clusters = list(clusters)
        self.timeout_s = timeout_s
        self.stopped = list(stopped)
        names = ", ".join(f"'{c}'" for c in self.clusters)
        if self.stopped:
            which = ", ".join(f"'{c}'" for c in self.stopped)
            message = (
                f"the worker process of cluster(s) {which} is stopped (SIGSTOP or SIGTSTP), so "
                f"the inference cannot finish; waiting on cluster(s) {names}"
            )
        else:
            message = (
                f"inference did not finish within {timeout_s:g} s; still running: "
                f"cluster(s) {names}"
            )
        super().__init__(message)

    def __reduce__(self):
        return (type(self), (self.clusters, self.timeout_s, self.stopped))


# -------------------------------------------------------------------------------------------- program


@dataclass(frozen=True)
class ChannelSpec:
    """One tensor that crosses from a sender to a receiver once per inference.

    Attributes:
        src: the sending cluster, or ``None`` for the caller (a graph input).
        dst: the receiving cluster, or ``None`` for the caller (a graph output).
        shape: the static shape, a tuple of non-negative ints (``()`` for a scalar).
        dtype: the torch dtype.
        memory_format: the format the tensor crosses in (``torch.channels_last`` for a 4-D
            activation of a channels-last region, see :mod:`ramiel.layout`): the processes
            backend allocates the channel's shared buffer in it, so a put is a plain copy and a
            get returns a tensor in the sender's format. Default ``torch.contiguous_format``.
    """

    src: str | None
    dst: str | None
    shape: tuple[int, ...]
    dtype: torch.dtype
    memory_format: torch.memory_format = torch.contiguous_format

    def __post_init__(self) -> None:
        try:
            shape = tuple(int(d) for d in self.shape)
        except (TypeError, ValueError):
            raise ProgramError(
                f"channel shape must be a tuple of ints, got {self.shape!r}"
            ) from None
        object.__setattr__(self, "shape", shape)
        if not isinstance(self.memory_format, torch.memory_format):
            raise ProgramError(
                f"channel memory_format must be a torch.memory_format, got {self.memory_format!r}"
            )
        if self.memory_format == torch.channels_last and len(shape) != 4:
            raise ProgramError(f"channels_last needs a 4-D channel, got shape {shape}")
        if self.memory_format not in (torch.contiguous_format, torch.channels_last):
            raise ProgramError(
                f"channel memory_format must be contiguous_format or channels_last, got "
                f"{self.memory_format}"
            )

    @property
    def format_name(self) -> str:
        """``"channels_last"`` or ``"contiguous_format"``."""
        return str(self.memory_format).removeprefix("torch.")

    def __reduce__(self):  # type: ignore[no-untyped-def]
        # torch.memory_format objects do not pickle (their reduce names a global that is not in
        # their module): spawned and forkserver workers receive the format by name
        return _channel_spec, (self.src, self.dst, self.shape, self.dtype, self.format_name)

    @property
    def numel(self) -> int:
        """Number of elements."""
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def nbytes(self) -> int:
        """Size of the tensor in bytes."""
        return self.numel * dtype_size(self.dtype)


def _channel_spec(
    src: str | None, dst: str | None, shape: tuple[int, ...], dtype: torch.dtype, fmt: str
) -> ChannelSpec:
    """A :class:`ChannelSpec` from a memory format name (what ``ChannelSpec.__reduce__`` ships)."""
    return ChannelSpec(src, dst, shape, dtype, getattr(torch, fmt))


def dtype_size(dtype: torch.dtype) -> int:
    """Bytes per element of ``dtype``."""
    return torch.empty((), dtype=dtype).element_size()


def describe(shape: Sequence[int], dtype: torch.dtype) -> str:
    """``"(1, 3, 224, 224) float32"``: a shape and dtype for error messages."""
    return f"{tuple(shape)} {str(dtype).removeprefix('torch.')}"


def check_threads(threads_per_worker: object, what: str = "threads_per_worker") -> None:
    """Raise :class:`ProgramError` unless ``threads_per_worker`` is an int from 1 to
    :data:`ramiel.omp.MAX_COUNT` (not a bool, float or string: ``torch.set_num_threads`` in a
    worker would fail later, far from the mistake; a million threads crashed libgomp)."""
    if type(threads_per_worker) is not int or not 1 <= threads_per_worker <= MAX_COUNT:
        raise ProgramError(
            f"{what} must be an int from 1 to {MAX_COUNT}, got {threads_per_worker!r}"
        )


@dataclass
class Program:
    """A task-parallel program: cluster functions that exchange tensors over named channels.

    Attributes:
        name: a name for messages.
        clusters: cluster name -> function ``fn(ch, w) -> None``, run once per inference.
        channels: channel name -> :class:`ChannelSpec`.
        inputs: graph input name -> the channels (``src=None``) it feeds, one per consuming
            cluster; may be empty for an input no cluster reads. The dict order is the order of
            positional arguments of ``Runner.__call__``.
        outputs: graph output name -> the channel (``dst=None``) it arrives on. The dict order is
            the order of the tuple ``Runner.__call__`` returns.
        module_path: file of the generated module that defines the cluster functions, so that a
            worker started with ``spawn``/``forkserver`` can re-import it (set by
            :func:`load_program`; optional when the functions' module is importable by name).
        max_threads: the most intra-op threads a cluster function sets itself
            (``ops.set_threads`` in its body, from ``--intra-op-threads``; 1 when it sets
            none). The processes backend forks multi-threaded workers only from a clean
            forkserver, so it needs to know.
        threads: cluster name -> the most intra-op threads that cluster's function sets itself,
            for the clusters that set more than 1 (the threads backend runs the widest of them
            in the caller's thread; see :mod:`ramiel.runtime.threads`).
        cores: the cores the schedule was planned for (``--merge{clusters=N}``'s N, or
            ``--intra-op-threads{cores=N}``'s); ``None`` when unknown. Merging may make fewer
            clusters than that: :meth:`planned_threads` gives the others' cores to the workers.
    """

    name: str
    clusters: dict[str, ClusterFn]
    channels: dict[str, ChannelSpec]
    inputs: dict[str, list[str]]
    outputs: dict[str, str]
    module_path: str | None = field(default=None)
    max_threads: int = 1
    threads: dict[str, int] = field(default_factory=dict)
    cores: int | None = None

    def __reduce_ex__(self, protocol):  # type: ignore[no-untyped-def]
        """A program loaded from a generated file under a name only this process knows
        (``ramiel.compile``'s ``ramiel_par_3``) pickles as that file's text, imported again where
        it is unpickled (:func:`program_from_source`): a copy in another process (``pickle``,
        ``torch.save``/``torch.load``) had failed with "No module named 'ramiel_par_0'". Any
        other program pickles as a dataclass (its functions by reference)."""
        source = _generated_source(self)
        if source is not None:
            return program_from_source, source
        return super().__reduce_ex__(protocol)

    def planned_threads(self) -> int:
        """Intra-op threads per worker the program runs with by default: its :attr:`cores`, at
        most the cores this process may use (:func:`ramiel.omp.usable_cores`), shared evenly
        among its clusters, and at most ``OMP_NUM_THREADS`` where the user set it
        (:func:`ramiel.omp.thread_limit`); at least 1, and 1 when :attr:`cores` is unknown.
        E.g. a program planned for 8 cores that merging left with 2 clusters: 4 threads per
        worker on a machine with 8 or more cores, 1 on a 2-core one, 2 with
        ``OMP_NUM_THREADS=2``."""
        if type(self.cores) is not int or self.cores < 1:  # unknown, or invalid (validate says)
            return 1
        threads = min(self.cores, usable_cores()) // max(1, len(self.clusters))
        return max(1, min(threads, thread_limit() or threads))

    def thread_caps(self, usable: int | None = None, together: bool = True) -> dict[str, int]:
        """The most intra-op threads each cluster's function may set itself
        (:func:`ramiel.runtime.ops.set_threads`, from ``--intra-op-threads``) on ``usable``
        cores (default: :func:`ramiel.omp.usable_cores`): its widest count (:attr:`threads`; 1
        for a cluster that sets none) where the widest counts of all clusters add up to at most
        ``usable``, else each scaled down in proportion, at least 1. A program planned for more
        cores than it runs on (``--cores 4`` run on 2) would otherwise run more spinning OpenMP
        threads than cores (see :func:`~ramiel.runtime.ops.set_threads`). ``together=False``:
        the clusters run one at a time (the inline backend), each capped at ``usable`` alone."""
        cores = usable if usable is not None else usable_cores()
        widths = {c: max(1, self.threads.get(c, 1)) for c in self.clusters}
        if not together:
            return {c: min(w, cores) for c, w in widths.items()}
        total = sum(widths.values())
        if total <= cores:
            return widths
        return {c: max(1, w * cores // total) for c, w in widths.items()}

    def widest_cluster(self) -> str | None:
        """The cluster that sets the most intra-op threads (the first of a tie), or ``None``
        when none sets more than 1."""
        best: str | None = None
        for c in self.clusters:
            if self.threads.get(c, 1) > (self.threads.get(best, 1) if best else 1):
                best = c
        return best

    def validate(self) -> None:
        """Check the program's structure.

        Raises:
            ProgramError: with every problem found, one per line: an empty program, ``cores``
                not a positive int (or ``None``), a cluster that is not callable, a channel that
                names an unknown cluster, has no cluster end, is a self-loop or has a bad
                shape/dtype, an input/output that names an unknown channel or one with the wrong
                end, a caller-side channel that no input/output lists, or the channels of one
                input that disagree on shape or dtype.
        """
        problems: list[str] = []
        if not self.clusters:
            problems.append("the program has no cluster")
        if self.cores is not None and (type(self.cores) is not int or self.cores < 1):
            problems.append(f"cores must be a positive int or None, got {self.cores!r}")
        for cname, fn in self.clusters.items():
            if not isinstance(cname, str) or not cname:
                problems.append(f"cluster name {cname!r} is not a non-empty string")
            if not callable(fn):
                problems.append(f"cluster '{cname}' is not callable: {fn!r}")
        for name, spec in self.channels.items():
            where = f"channel '{name}'"
            if not isinstance(spec, ChannelSpec):
                problems.append(f"{where} is not a ChannelSpec: {spec!r}")
                continue
            for end in ("src", "dst"):
                c = getattr(spec, end)
                if c is not None and c not in self.clusters:
                    problems.append(f"{where}: {end} '{c}' is not a cluster")
            if spec.src is None and spec.dst is None:
                problems.append(f"{where} has neither a sending nor a receiving cluster")
            if spec.src is not None and spec.src == spec.dst:
                problems.append(f"{where} goes from cluster '{spec.src}' to itself")
            if any(d < 0 for d in spec.shape):
                problems.append(f"{where} has a negative dimension: {spec.shape}")
            if not isinstance(spec.dtype, torch.dtype):
                problems.append(f"{where}: dtype {spec.dtype!r} is not a torch.dtype")
        listed_in: dict[str, str] = {}
        for iname, chans in self.inputs.items():
            if isinstance(chans, str):
                problems.append(f"input '{iname}': channels must be a list, got a string")
                continue
            specs: list[tuple[str, ChannelSpec]] = []
            for c in chans:
                found = self.channels.get(c)
                if found is None:
                    problems.append(f"input '{iname}': unknown channel '{c}'")
                elif found.src is not None:
                    problems.append(f"input '{iname}': channel '{c}' is sent by '{found.src}'")
                elif c in listed_in:
                    problems.append(
                        f"channel '{c}' is listed by inputs '{listed_in[c]}' and '{iname}'"
                    )
                else:
                    listed_in[c] = iname
                    specs.append((c, found))
            for c, spec in specs[1:]:
                c0, s0 = specs[0]
                if (spec.shape, spec.dtype) != (s0.shape, s0.dtype):
                    problems.append(
                        f"input '{iname}': channel '{c}' is {describe(spec.shape, spec.dtype)} but "
                        f"'{c0}' is {describe(s0.shape, s0.dtype)}"
                    )
        out_of: dict[str, str] = {}
        for oname, c in self.outputs.items():
            out_spec = self.channels.get(c)
            if out_spec is None:
                problems.append(f"output '{oname}': unknown channel '{c}'")
            elif out_spec.dst is not None:
                problems.append(f"output '{oname}': channel '{c}' is received by '{out_spec.dst}'")
            elif c in out_of:
                problems.append(f"channel '{c}' is listed by outputs '{out_of[c]}' and '{oname}'")
            else:
                out_of[c] = oname
        for name, spec in self.channels.items():
            if not isinstance(spec, ChannelSpec):
                continue
            if spec.src is None and name not in listed_in:
                problems.append(f"channel '{name}' comes from the caller but no input lists it")
            if spec.dst is None and spec.src is not None and name not in out_of:
                problems.append(f"channel '{name}' goes to the caller but no output lists it")
        if problems:
            raise ProgramError(f"invalid program '{self.name}':\n  " + "\n  ".join(problems))

    def channels_into(self, cluster: str) -> list[str]:
        """Names of the channels ``cluster`` receives (``dst == cluster``), in declaration order."""
        return [n for n, s in self.channels.items() if s.dst == cluster]

    def channels_from(self, cluster: str) -> list[str]:
        """Names of the channels ``cluster`` sends (``src == cluster``), in declaration order."""
        return [n for n, s in self.channels.items() if s.src == cluster]

    def cluster_order(self) -> list[str] | None:
        """A topological order of the cluster graph (edge ``src -> dst`` per channel).

        Returns ``None`` when that graph has a cycle (legal for the concurrent backends, e.g. ``c0``
        sends to ``c1`` which later sends back to ``c0``, but not runnable one cluster at a time).
        """
        succ: dict[str, set[str]] = {c: set() for c in self.clusters}
        indeg = dict.fromkeys(self.clusters, 0)
        for s in self.channels.values():
            if s.src is not None and s.dst is not None and s.dst not in succ[s.src]:
                succ[s.src].add(s.dst)
                indeg[s.dst] += 1
        ready = [c for c in self.clusters if indeg[c] == 0]
        order: list[str] = []
        while ready:
            c = ready.pop(0)
            order.append(c)
            for d in sorted(succ[c], key=list(self.clusters).index):
                indeg[d] -= 1
                if indeg[d] == 0:
                    ready.append(d)
        return order if len(order) == len(self.clusters) else None


class ProgramNames:
    """``input_names`` and ``output_names`` of an object that runs ``self.program`` (a
    :class:`Program`): the :class:`~ramiel.runtime.Runner` and the generated
    :class:`~ramiel.runtime.ParallelModel` classes."""

    program: Program

    @property
    def input_names(self) -> list[str]:
        """ONNX names of the graph inputs, in the order of the positional arguments
        (``forward``, ``Runner.__call__``)."""
        return list(self.program.inputs)

    @property
    def output_names(self) -> list[str]:
        """ONNX names of the graph outputs, in the order of the tuple ``forward`` and
        ``Runner.__call__`` return."""
        return list(self.program.outputs)


def load_program(
    path: str | Path, module_name: str | None = None, attr: str = "PROGRAM"
) -> Program:
    """Import a generated module from a file and return its program.

    Args:
        path: the ``.py`` file.
        module_name: the name to register the module under in ``sys.modules`` (default: the file's
            stem prefixed with ``ramiel_generated_`` and followed by a hash of its resolved path and
            modification time, so that two generated files, or a regenerated one, never share a
            cached module).
        attr: the module attribute that holds the :class:`Program`.

    Returns:
        The program, with ``module_path`` set so that spawned workers can import it again.

    Raises:
        ProgramError: the module has no ``attr`` or it is not a :class:`Program`.
    """
    path = Path(path).resolve()
    if module_name is None:
        stat = path.stat() if path.exists() else None
        key = f"{path}:{stat.st_mtime_ns if stat else 0}:{stat.st_size if stat else 0}"
        digest = hashlib.sha1(key.encode()).hexdigest()[:12]
        stem = "".join(ch if ch.isalnum() else "_" for ch in path.stem)
        module_name = f"ramiel_generated_{stem}_{digest}"
    name = module_name
    module = import_from_path(name, str(path))
    prog = getattr(module, attr, None)
    if not isinstance(prog, Program):
        raise ProgramError(f"{path}: module attribute '{attr}' is not a ramiel.runtime.Program")
    prog.module_path = str(path)
    return prog


GENERATED_PREFIX = "ramiel_"
"""The start of the module names Ramiel gives the generated files it imports itself
(``ramiel_par_3``, ``ramiel_seq_4``, ``ramiel_generated_model_<hash>``): names no other process
can import."""


_SOURCES: dict[str, tuple[str, str, str]] = {}
"""Module name -> ``(name, text, file stem)`` of the generated files imported under a
:data:`GENERATED_PREFIX` name, read when they were imported (:func:`import_from_path`): a
model compiled into a temporary directory takes its files with it, and its sequential module,
kept alone, must still pickle (a fresh-user check)."""


def _module_source(name: str) -> tuple[str, str, str] | None:
    """``(name, text, file stem)`` of module ``name`` where it is a generated file Ramiel
    imported under a :data:`GENERATED_PREFIX` name (see :func:`generated_module`); else
    ``None`` (a module any process can import by name, or one whose text was never read)."""
    if not name.startswith(GENERATED_PREFIX):
        return None
    if name not in _SOURCES:
        file = getattr(sys.modules.get(name), "__file__", None)
        if not file:
            return None
        try:
            _SOURCES[name] = (name, Path(file).read_text(), Path(file).stem)
        except OSError:  # the file is gone: pickle by reference, as before
            return None
    return _SOURCES[name]


def _generated_source(program: Program) -> tuple[str, str, str] | None:
    """:func:`_module_source` of the module ``program`` is the ``PROGRAM`` of; ``None`` for any
    other program (a copy made with other functions: the processes backend's shipped one)."""
    fns = list(program.clusters.values())
    name = getattr(fns[0], "__module__", None) if fns else None
    if not name or getattr(sys.modules.get(name), "PROGRAM", None) is not program:
        return None
    return _module_source(name)


def generated_module(name: str, text: str, stem: str):  # type: ignore[no-untyped-def]
    """The generated module of source ``text`` (a file named ``stem``.py) that another process,
    or this one, imported as ``name``: that module where this process has it with this text
    (``copy.deepcopy``), else the text imported once per process under a name made of its hash,
    from the file of that name in ``~/.cache/ramiel/generated/<hash>/`` (the temporary
    directory where the home one cannot be written), written there first where it is missing.
    A worker of the processes backend started by ``spawn`` or ``forkserver`` imports the same
    file again.

    Raises:
        ProgramError: the file can be neither found nor written."""
    mine = _module_source(name) if name in sys.modules else None
    if mine is not None and mine[1] == text:
        return sys.modules[name]
    digest = hashlib.sha1(text.encode()).hexdigest()[:16]
    safe = "".join(ch if ch.isalnum() else "_" for ch in stem)
    copy = f"{GENERATED_PREFIX}copy_{safe}_{digest}"
    if copy in sys.modules:
        return sys.modules[copy]
    errors = []
    uid = os.getuid() if hasattr(os, "getuid") else 0
    for root in (
        Path.home() / ".cache" / "ramiel" / "generated",
        Path(tempfile.gettempdir()) / f"ramiel-generated-{uid}",
    ):
        path = root / digest / f"{safe}.py"
        try:
            if not path.is_file() or path.read_text() != text:
                path.parent.mkdir(parents=True, exist_ok=True)
                part = path.with_suffix(f".{os.getpid()}.tmp")
                part.write_text(text)
                os.replace(part, path)
            return import_from_path(copy, str(path))
        except OSError as e:
            errors.append(f"{path}: {e.strerror or e}")
    raise ProgramError(f"cannot write the generated module {stem}.py: {'; '.join(errors)}")


def program_from_source(name: str, text: str, stem: str) -> Program:
    """The ``PROGRAM`` of a generated module (:func:`generated_module`): how a pickled
    :class:`Program` comes back."""
    module = generated_module(name, text, stem)
    prog = getattr(module, "PROGRAM", None)
    if not isinstance(prog, Program):
        raise ProgramError(f"generated module {stem}.py: 'PROGRAM' is not a ramiel.runtime.Program")
    prog.module_path = module.__file__
    return prog


def pickle_by_source(cls: type) -> type:
    """Make instances of ``cls``, a class of a generated module Ramiel imported under a
    :data:`GENERATED_PREFIX` name (``ramiel.compile``'s sequential class), pickle with that
    module's text (:func:`copyreg.pickle`; ``copy.deepcopy`` uses it too), so that they load in
    another process (``torch.save(model.sequential)``, then ``torch.load`` elsewhere: "No
    module named 'ramiel_seq_1'"). Returns ``cls``."""
    copyreg.pickle(cls, _reduce_by_source)
    return cls


def _reduce_by_source(obj: Any) -> Any:
    source = _module_source(type(obj).__module__)
    if source is None:  # the file is gone: by reference, as before
        return object.__reduce_ex__(obj, 2)
    state = obj.__getstate__() if hasattr(obj, "__getstate__") else obj.__dict__
    return _new_by_source, (*source, type(obj).__qualname__), state


def _new_by_source(name: str, text: str, stem: str, qualname: str) -> Any:
    obj: Any = generated_module(name, text, stem)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    pickle_by_source(obj)  # its copies pickle the same way
    return obj.__new__(obj)


def import_from_path(name: str, path: str):
    """Import the file ``path`` as module ``name`` (re-using ``sys.modules[name]`` if present)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ProgramError(f"cannot import {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    _module_source(name)  # a generated file's text, while it is there (see _SOURCES)
    return module


def check_inputs(program: Program, inputs: Mapping[str, object]) -> dict[str, torch.Tensor]:
    """Check the tensors given for the program's graph inputs against their channel specs.

    Numpy arrays are accepted and wrapped without a copy (``torch.from_numpy``).

    Returns:
        graph input name -> tensor.

    Raises:
        InputMismatch: a missing or unknown input name, a value that is not a tensor, a tensor
            that is not a dense CPU tensor (a meta, CUDA or sparse tensor), or a shape or dtype
            different from the spec (no implicit cast or broadcast).
    """
    missing = [n for n in program.inputs if n not in inputs]
    unknown = [n for n in inputs if n not in program.inputs]
    if missing or unknown:
        parts = []
        if missing:
            parts.append("missing " + ", ".join(f"'{n}'" for n in missing))
        if unknown:
            parts.append("unknown " + ", ".join(f"'{n}'" for n in unknown))
        expected = ", ".join(f"'{n}'" for n in program.inputs)
        raise InputMismatch(
            f"program '{program.name}': {'; '.join(parts)} input(s) (expected {expected})"
        )
    out: dict[str, torch.Tensor] = {}
    for name, chans in program.inputs.items():
        t = inputs[name]
        if not isinstance(t, torch.Tensor):
            if type(t).__module__ == "numpy" and type(t).__name__ == "ndarray":
                t = torch.from_numpy(t)
            else:
                raise InputMismatch(
                    f"input '{name}': expected a torch.Tensor, got {type(t).__name__}"
                )
        if t.device.type != "cpu" or t.layout != torch.strided:
            raise InputMismatch(
                f"input '{name}': expected a dense CPU tensor, got a tensor on device "
                f"'{t.device}' with layout {str(t.layout).removeprefix('torch.')}"
            )
        if chans:
            spec = program.channels[chans[0]]
            if tuple(t.shape) != spec.shape or t.dtype != spec.dtype:
                err = InputMismatch(
                    f"input '{name}': expected {describe(spec.shape, spec.dtype)}, "
                    f"got {describe(t.shape, t.dtype)}"
                )
                # only another batch size: what a batch-generic sequential module would take
                err.batch_only = (
                    t.dtype == spec.dtype
                    and t.dim() == len(spec.shape) >= 1
                    and tuple(t.shape[1:]) == tuple(spec.shape[1:])
                )
                err.input_name, err.got_shape = name, tuple(t.shape)
                raise err
        out[name] = t
    return out
