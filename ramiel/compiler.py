"""The whole job: ONNX model -> parallel + sequential Python modules, weights and schedule report.

Stages (each also available alone through ``ramiel-translate``/``ramiel-opt``)::

    import      ramiel-translate --import-onnx            (ramiel.importer)
    clean-up    --constant-fold --dce, then the graph rewrites (REWRITE_PASSES) and --dce
    layout      --assign-layout{format=auto}
    cluster     --estimate-cost --linear-cluster --merge{clusters=N} --clone --dce, --inplace
    lower       --lower-to-torchpy  (once as clustered, once with mode=sequential)
    print       ramiel-translate --to-python               (ramiel.printer)

Output directory: ``model.py`` (parallel), ``model_seq.py`` (sequential), ``weights.safetensors``
(shared by both; no pickle), ``schedule.txt``/``schedule.json`` (the schedule estimate) and
``model.mlir`` (the clustered ``onnx``/``cluster`` IR, with its own ``model.ir.safetensors``).

Python API: :func:`compile` returns a :class:`CompiledModel` callable.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass

from ramiel.errors import RamielError, SchedulingError
from ramiel.importer import ImportOptions, import_onnx
from ramiel.passes import REWRITE_PASSES
from ramiel.scheduling import ScheduleReport

WEIGHTS_FILE = "weights.safetensors"


#: Unique suffixes for the generated modules' names in ``sys.modules`` (every compiled model is
#: imported as ``model.py``/``model_seq.py``; ``id()`` values are reused after garbage collection).
_MODULE_IDS = itertools.count()


@dataclass
class CompileOptions:
    """Options of :func:`compile_model`.

    ``clusters``: the number of clusters/workers (default: the number of cores); ``backend``:
    ``threads``, ``processes`` or ``distributed`` (also selects the transfer cost model);
    ``threads_per_worker``:
    intra-op threads of each worker; ``clone``: duplicate cheap producers; ``profile``: a profile
    database for costs; ``input_shapes``: bindings for dynamic input dimensions; ``batch``: compile
    the program for B samples (``--hypercluster{batch=B}``: B inputs and B outputs per graph
    input/output, named ``<name>__s<k>``); ``cores``: plan intra-op threads per op for this many
    cores (``--intra-op-threads{cores=N}``: an op runs with more threads while other clusters
    idle; the generated code sets them, overriding ``threads_per_worker``); ``None``: off.
    ``disable``: names of the :data:`REWRITE_PASSES` not to run (``"all"``: none of them).
    ``transfer_cost``: a transfer cost file (``ramiel calibrate -o FILE``) that replaces the
    backend's measured default (e.g. a real network for ``backend="distributed"``).
    ``compile``: print the compute between channel operations (and the whole sequential
    module) as segments compiled with ``torch.compile`` when the program loads
    (``--compile-segments``, :mod:`ramiel.runtime.compiled`).
    ``layout``: memory format of 4-D activations (``--assign-layout{format=...}``): ``auto``
    (channels-last through conv/pool/element-wise/concat regions where the cost model says it
    is faster), ``channels-last`` (every such region) or ``nchw`` (contiguous everywhere).
    """

    clusters: int | None = None
    backend: str = "threads"
    threads_per_worker: int = 1
    clone: bool = True
    profile: str | None = None
    input_shapes: Mapping[str, Sequence[int]] | None = None
    ort_optimize: bool = False
    batch: int = 1
    cores: int | None = None
    disable: Sequence[str] = ()
    transfer_cost: str | None = None
    compile: bool = False
    layout: str = "auto"

    def rewrites(self) -> list[str]:
        """The :data:`REWRITE_PASSES` this compilation runs, in order.

        Raises :class:`~ramiel.errors.RamielError` for a name in ``disable`` that is neither
        one of them nor ``all``.
        """
        unknown = sorted(set(self.disable) - {*REWRITE_PASSES, "all"})
        if unknown:
            raise RamielError(
                f"unknown rewrite(s) to disable: {', '.join(unknown)} (known: "
                f"{', '.join(REWRITE_PASSES)}, all)"
            )
        if "all" in self.disable:
            return []
        return [p for p in REWRITE_PASSES if p not in self.disable]


@dataclass
class CompileResult:
    """Paths and facts of one compilation (times in seconds)."""

    out_dir: str
    parallel_path: str
    sequential_path: str
    weights_path: str
    ir_path: str
    report: ScheduleReport
    timings: dict[str, float] = field(default_factory=dict)
    clusters: int = 1

    def op_counts(self) -> dict[str, int]:
        """How many ops of each ONNX type the compiled program has (``model.mlir``; constants
        aside): what the graph rewrites left, e.g. ``{"Conv": 53, "Attention": 12, ...}``."""
        import collections

        counts: collections.Counter[str] = collections.Counter()
        with open(self.ir_path) as f:
            for line in f:
                if '"onnx.' in line:
                    op = line.split('"onnx.', 1)[1].split('"', 1)[0]
                    if op not in ("Constant", "NoValue"):
                        counts[op] += 1
        return dict(counts)


def _run_passes(module: ModuleOp, passes: Sequence[ModulePass]) -> None:
    from ramiel.dialects.registry import make_context

    ctx = make_context()
    for p in passes:
        p.apply(ctx, module)
    module.verify()


def write_weights(modules: Sequence[ModuleOp], source: ModuleOp, path: str) -> None:
    """Collect every ``torchpy.weight`` value into one safetensors file (keys are the w.<key>).

    A splat weight (``dense<v>`` of any shape, e.g. a folded ConstantOfShape) is stored as its one
    element and listed in the file's metadata; :meth:`ramiel.runtime.Weights.from_safetensors`
    expands it, so neither compile time nor disk grow with its size. Weights the code reads in
    another memory format (``torch.weight`` with ``memory_format``: conv kernels of channels-last
    convolutions) are stored contiguous and listed too; the loader converts them once.
    """
    import json

    import torch
    from safetensors.torch import save_file
    from xdsl.dialects.builtin import DenseIntOrFPElementsAttr

    from ramiel.dialects.torchpy import WeightOp
    from ramiel.files import make_readable
    from ramiel.runtime.weights import FORMATS_METADATA_KEY, SPLAT_METADATA_KEY
    from ramiel.weights import constant_value, splat_value, torch_from_numpy

    tensors: dict[str, torch.Tensor] = {}
    splats: dict[str, list[int]] = {}
    formats: dict[str, str] = {}
    for m in modules:
        for op in m.walk():
            if isinstance(op, WeightOp) and op.memory_format is not None:
                formats[op.key.data] = op.memory_format.data
            if not isinstance(op, WeightOp) or op.key.data in tensors:
                continue
            value = op.value
            one = splat_value(value) if isinstance(value, DenseIntOrFPElementsAttr) else None
            if one is not None:
                splats[op.key.data] = list(value.get_shape())  # type: ignore[union-attr]
                arr = np.array(one).reshape(1)
            else:
                arr = constant_value(value, source)
                assert arr is not None
                # np.array, not np.ascontiguousarray: that one makes 0-d (scalar) weights 1-d
                arr = np.array(arr, order="C", copy=True)
            tensors[op.key.data] = torch_from_numpy(arr)
    meta = {SPLAT_METADATA_KEY: json.dumps(splats)}
    if formats:
        meta[FORMATS_METADATA_KEY] = json.dumps(formats, sort_keys=True)
    save_file(tensors, path, metadata=meta)
    make_readable(path)  # safetensors writes 0600 whatever the umask


def compile_model(
    model: str | os.PathLike[str] | onnx.ModelProto,
    out_dir: str,
    options: CompileOptions | None = None,
    progress: Callable[[str], None] | None = None,
) -> CompileResult:
    """Compile ``model`` into ``out_dir`` (created if needed). See the module docstring.

    Raises :class:`~ramiel.errors.RamielError` subclasses for bad models, unsupported ops and
    impossible clustering requests.
    """
    from ramiel.cost_model import ProfileDB
    from ramiel.files import input_file, output_dir
    from ramiel.passes.assign_layout import AssignLayout
    from ramiel.passes.clone import Clone
    from ramiel.passes.compile_segments import CompileSegments
    from ramiel.passes.constant_fold import ConstantFold
    from ramiel.passes.dce import DeadCodeElimination
    from ramiel.passes.estimate_cost import EstimateCost
    from ramiel.passes.hypercluster import Hypercluster
    from ramiel.passes.intra_op_threads import IntraOpThreads
    from ramiel.passes.linear_cluster import LinearCluster
    from ramiel.passes.lower_to_torchpy import LowerToTorchpy, check_lowerable
    from ramiel.passes.merge import Merge
    from ramiel.passes.schedule_report import schedule_report
    from ramiel.printer import print_python
    from ramiel.weights import WEIGHTS_ATTR, set_ir_base_dir, store_of

    options = options or CompileOptions()
    say = progress or (lambda _msg: None)
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise RamielError(f"output {out_dir} exists and is not a directory")
    # Inputs, then the output: one clear error before any work (and before creating anything).
    if isinstance(model, str | os.PathLike):
        input_file(model, "ONNX model")
    if options.profile is not None:
        ProfileDB.load(options.profile)
    output_dir(out_dir)
    timings: dict[str, float] = {}
    n = options.clusters if options.clusters is not None else (os.cpu_count() or 1)
    if n < 1:
        raise SchedulingError(f"the number of clusters must be at least 1, got {n}")
    from ramiel.layout import LAYOUT_MODES

    if options.layout not in LAYOUT_MODES:
        raise RamielError(
            f"layout must be one of {', '.join(LAYOUT_MODES)}, not {options.layout!r}"
        )

    t = time.perf_counter()
    say("import")
    ir_weights = os.path.join(out_dir, "model.ir.safetensors")
    set_ir_base_dir(out_dir)
    module = import_onnx(
        model,
        ImportOptions(
            input_shapes=options.input_shapes,
            weights_path=ir_weights,
            weights_ref="model.ir.safetensors",
            ort_optimize=options.ort_optimize,
        ),
    )
    if WEIGHTS_ATTR not in module.attributes:
        # every initializer was inline; give the weights constant folding adds a file anyway
        with contextlib.suppress(FileNotFoundError):
            os.remove(ir_weights)  # a previous compilation's
        module.attributes[WEIGHTS_ATTR] = StringAttr("model.ir.safetensors")
    timings["import"] = time.perf_counter() - t

    t = time.perf_counter()
    say("clean-up and clustering")
    from ramiel.passes import LATE_REWRITES, PASSES

    chosen = options.rewrites()
    rewrites = [PASSES[name]()() for name in chosen if name not in LATE_REWRITES]
    late = [PASSES[name]()() for name in chosen if name in LATE_REWRITES]
    cleanup: list[ModulePass] = [
        ConstantFold(),
        DeadCodeElimination(),
        *rewrites,
        *([DeadCodeElimination()] if rewrites else []),
    ]
    _run_passes(module, cleanup)
    # What the lowering would reject (unsupported ops, shapes only the data decide), found
    # before the clustering sizes channels with those shapes (a dynamic channel is invalid IR)
    check_lowerable(module)
    passes: list[ModulePass] = [
        Hypercluster(batch=options.batch),
        AssignLayout(format=options.layout),
        EstimateCost(
            profile=options.profile, backend=options.backend, transfer_cost=options.transfer_cost
        ),
        LinearCluster(),
        Merge(clusters=n),
    ]
    if options.clone:
        passes += [Clone(), DeadCodeElimination()]
    if options.cores is not None:
        passes.append(IntraOpThreads(cores=options.cores, profile=options.profile))
    passes += late
    _run_passes(module, passes)
    report = schedule_report(module)
    timings["passes"] = time.perf_counter() - t

    store = store_of(module)
    if store.new_keys():  # large constants folded into new weights: model.mlir names them
        store.save()
    ir_path = os.path.join(out_dir, "model.mlir")
    with open(ir_path, "w") as f:
        f.write(str(module) + "\n")

    t = time.perf_counter()
    say("lowering to torchpy")
    par = module.clone()
    seq = module.clone()
    segments: list[ModulePass] = [CompileSegments()] if options.compile else []
    _run_passes(par, [LowerToTorchpy(), *segments])
    _run_passes(seq, [LowerToTorchpy(mode="sequential"), *segments])
    timings["lower"] = time.perf_counter() - t

    t = time.perf_counter()
    say("printing Python")
    if isinstance(model, str | os.PathLike):
        src_name = os.path.basename(os.fspath(model))
    else:
        src_name = "an in-memory ONNX model"
    par_path = os.path.join(out_dir, "model.py")
    seq_path = os.path.join(out_dir, "model_seq.py")
    with open(par_path, "w") as f:
        f.write(print_python(par, src_name))
    with open(seq_path, "w") as f:
        f.write(print_python(seq, src_name))
    weights_path = os.path.join(out_dir, WEIGHTS_FILE)
    write_weights([par, seq], module, weights_path)
    with open(os.path.join(out_dir, "schedule.txt"), "w") as f:
        f.write(report.to_text() + "\n")
    with open(os.path.join(out_dir, "schedule.json"), "w") as f:
        f.write(report.to_json() + "\n")
    timings["print"] = time.perf_counter() - t
    return CompileResult(
        out_dir=out_dir,
        parallel_path=par_path,
        sequential_path=seq_path,
        weights_path=weights_path,
        ir_path=ir_path,
        report=report,
        timings=timings,
        clusters=len(report.clusters),
    )


class CompiledModel:
    """A compiled model: call it like a function on tensors (graph inputs in order).

    ``model(*inputs)`` runs the parallel module (workers started once, on first use) and returns
    the outputs as a tuple (a single tensor if the graph has one output); ``model.sequential(...)``
    runs the sequential module. ``close()`` (or ``with``) stops the workers; a parallel call after
    it raises :class:`~ramiel.runtime.RunnerClosed`. Threads that make their first call at once
    share one runner.

    Compiled with ``compile=True``, the first call of each module compiles its segments
    (``start()`` does it for the parallel module ahead of time); ``compile_report()`` lists the
    compilations and their times.
    """

    def __init__(self, result: CompileResult, options: CompileOptions, tmp: Any = None):
        from ramiel.runtime import Weights, load_program
        from ramiel.runtime.program import import_from_path

        self.result = result
        self.options = options
        self._tmp = tmp
        uid = next(_MODULE_IDS)
        self.program = load_program(result.parallel_path, module_name=f"ramiel_par_{uid}")
        seq_mod = import_from_path(f"ramiel_seq_{uid}", result.sequential_path)
        self._forward = seq_mod.forward
        self._seq_namespace = vars(seq_mod)
        self._seq_events: list[Any] = []
        self.input_specs: dict[str, tuple[tuple[int, ...], Any]] = dict(seq_mod.INPUTS)
        self.output_names: list[str] = list(seq_mod.OUTPUTS)
        self.weights = Weights.from_safetensors(result.weights_path)
        self._runner: Any = None
        self._closed = False
        self._start_lock = threading.Lock()  # concurrent first calls start one runner

    @property
    def report(self) -> ScheduleReport:
        return self.result.report

    def output_specs(self) -> dict[str, tuple[tuple[int, ...], Any]]:
        """Graph output name -> (shape, torch dtype), from the parallel program's channels."""
        return {
            name: (self.program.channels[ch].shape, self.program.channels[ch].dtype)
            for name, ch in self.program.outputs.items()
        }

    def runtime_config(self) -> tuple[str, int]:
        """The backend and intra-op threads per worker the parallel module runs with.

        The options' backend and ``threads_per_worker``, except where the compiler made fewer
        clusters than ``clusters`` asked for (merging keeps a cluster only where it estimates a
        gain): the cores left free go to intra-op threads (each worker gets
        ``threads_per_worker * (asked // made)``), and a one-cluster program on the threads backend
        runs in the caller's thread (``inline``: no hand-off to a worker thread; the caller's thread
        count is restored after each call). So a model without useful task parallelism falls back
        to plain intra-op parallelism on the same cores.
        """
        from ramiel.cost_model import usable_cores

        made = max(1, len(self.program.clusters))
        asked = self.options.clusters or usable_cores()
        threads = self.options.threads_per_worker * max(1, asked // made)
        backend = self.options.backend
        if made == 1 and backend == "threads":
            backend = "inline"
        return backend, threads

    def start(self) -> None:
        """Start the parallel module's workers now (compiling its segments, if compiled); the
        first call does it otherwise."""
        self._start()

    @property
    def compiled(self) -> bool:
        """Whether the modules have compiled segments (compiled with ``compile=True``)."""
        from ramiel.runtime.compiled import segments_in

        return bool(segments_in(self._seq_namespace))

    def compile_report(self) -> list[Any]:
        """The compilations of compiled segments so far (parallel and sequential module), as
        :class:`~ramiel.runtime.compiled.CompileEvent` items; empty unless compiled."""
        from ramiel.runtime.compiled import segments_in, take_events

        self._seq_events += take_events(segments_in(self._seq_namespace).values())
        par = self._runner.compile_report() if self._runner is not None else []
        return [*par, *self._seq_events]

    def _start(self) -> Any:
        runner = self._runner
        if runner is not None:
            return runner
        with self._start_lock:
            if self._closed:
                from ramiel.runtime import RunnerClosed

                raise RunnerClosed(
                    f"the compiled model of {self.result.out_dir} is closed; compile or load it "
                    "again to run it in parallel (model.sequential still works)"
                )
            if self._runner is None:
                from ramiel.runtime import start

                backend, threads = self.runtime_config()
                self._runner = start(
                    self.program, self.weights, backend=backend, threads_per_worker=threads
                )
            return self._runner

    def __call__(self, *inputs: Any) -> Any:
        outs = self._start()(*inputs)
        return outs[0] if len(outs) == 1 else tuple(outs)

    def run(self, feeds: Mapping[str, Any]) -> dict[str, Any]:
        """Run the parallel module on named inputs; returns outputs by name."""
        return self._start().run(dict(feeds))

    def sequential(self, *inputs: Any) -> Any:
        """Run the sequential module (same weights, same semantics)."""
        import torch

        with torch.inference_mode():
            return self._forward(self.weights, *inputs)

    def close(self) -> None:
        """Stop the workers; later parallel calls raise ``RunnerClosed``. Idempotent."""
        with self._start_lock:
            self._closed = True
            runner, self._runner = self._runner, None
        if runner is not None:
            runner.close()

    def __enter__(self) -> CompiledModel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # interpreter shutdown
            self.close()


def compile(  # noqa: A001 - the public name the README promises
    model: str | os.PathLike[str] | onnx.ModelProto,
    clusters: int | None = None,
    backend: str = "threads",
    threads_per_worker: int = 1,
    out_dir: str | None = None,
    **options: Any,
) -> CompiledModel:
    """Compile an ONNX model (path or ``ModelProto``) and return a callable :class:`CompiledModel`.

    Generated files go to ``out_dir`` (default: a temporary directory kept while the object
    lives). Other keyword options are those of :class:`CompileOptions`.
    """
    opts = CompileOptions(
        clusters=clusters, backend=backend, threads_per_worker=threads_per_worker, **options
    )
    tmp = None
    if out_dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="ramiel-")
        out_dir = tmp.name
    result = compile_model(model, out_dir, opts)
    return CompiledModel(result, opts, tmp)
