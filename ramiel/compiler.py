"""The whole job: ONNX model -> parallel + sequential Python modules, weights and schedule report.

Stages (each also available alone through ``ramiel-translate``/``ramiel-opt``)::

    import      ramiel-translate --import-onnx            (ramiel.importer)
    clean-up    --constant-fold --dce, then the graph rewrites (REWRITE_PASSES) and --dce
    layout      --assign-layout{format=auto}
    cluster     --estimate-cost --linear-cluster --merge{clusters=N} --clone --dce, --inplace
    lower       --lower-to-torchpy  (once as clustered, once with mode=sequential)
    print       ramiel-translate --to-python               (ramiel.printer)

Output directory: ``model.py`` (parallel: the cluster functions, ``PROGRAM`` and class
``<Name>Parallel(ramiel.runtime.ParallelModel)``), ``model_seq.py`` (sequential: class
``<Name>(torch.nn.Module)``), ``weights.safetensors`` (one standard safetensors file shared by
both and by the IR: every weight in its real shape and dtype, named as the classes' buffers; no
pickle), ``schedule.txt``/``schedule.json`` (the schedule estimate) and ``model.mlir`` (the
clustered ``onnx``/``cluster`` IR, whose ``dense_resource`` weights are tensors of that same
file). ``<Name>`` comes from the ONNX graph name (the file name when that is a generic one).

Batch dimension: see :mod:`ramiel.dynamic_batch` (the sequential module takes any batch size
where the ONNX graph's first input dimension is symbolic, or with ``dynamic_batch=True``; the
parallel program stays compiled for the bound shapes).

Python API: :func:`compile` returns a :class:`CompiledModel`, a ``torch.nn.Module``.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import itertools
import math
import numbers
import os
import re
import sys
import tempfile
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, get_args

import numpy as np
import onnx
import torch
from xdsl.dialects.builtin import DenseResourceAttr, ModuleOp
from xdsl.passes import ModulePass

from ramiel.attrs import INDEX_LIMITS_ATTR, WEIGHTS_ATTR, get_str, has, remove, set_str
from ramiel.clustering import current_clustering
from ramiel.context import make_context
from ramiel.cost_model import Backend, ProfileDB
from ramiel.dialects import torchpy as tp
from ramiel.dialects.onnx import OnnxOp, static_shape
from ramiel.dynamic_batch import (
    batch_inputs,
    check_input_shapes,
    generalize_batch,
    result_types,
)
from ramiel.envflags import switch_on
from ramiel.errors import MAX_TENSOR_BYTES, RamielError
from ramiel.files import (
    file_head,
    input_file,
    output_dir,
    read_json_file,
    removed_if_left_empty,
    same_file,
    shell_quote,
)
from ramiel.importer import ImportOptions, import_onnx, load_model
from ramiel.layout import LAYOUT_MODES, LayoutMode
from ramiel.lowering.to_torchpy import check_lowerable, weight_keys
from ramiel.model_names import model_path
from ramiel.omp import MAX_COUNT, thread_limit, usable_cores
from ramiel.parsing import IncrementalVerifier, LocatedVerifyError
from ramiel.passes import REWRITE_PASSES
from ramiel.passes.compile_segments import ENV_DISABLE as AUTO_SEGMENTS_SWITCH
from ramiel.passes.compile_segments import SEGMENT_BACKENDS, CompileSegments, onednn_graph_pays
from ramiel.passes.lower_to_torchpy import LowerToTorchpy
from ramiel.passes.merge import Merge
from ramiel.passes.schedule_report import schedule_report
from ramiel.pipeline import compile_pipeline, run_passes, split_clean_up
from ramiel.printer import (
    WEIGHTS_FILE,
    class_name_problem,
    forward_parameters,
    make_class_name,
    print_python,
    write_weights,
)
from ramiel.runtime import Weights, load_program, trial
from ramiel.runtime.compiled import segments_in, take_events
from ramiel.runtime.module import ParallelModel, generated_class
from ramiel.runtime.program import (
    GENERATED_PREFIX,
    InputMismatch,
    import_from_path,
    pickle_by_source,
)
from ramiel.runtime.runner import BackendName
from ramiel.scheduling import ScheduleReport
from ramiel.scheduling.threads import pools_fit
from ramiel.weights import WeightStore, constant_value, dense_from_numpy

#: Unique suffixes for the generated modules' names in ``sys.modules`` (every compiled model is
#: imported as ``model.py``/``model_seq.py``; ``id()`` values are reused after garbage collection).
_MODULE_IDS = itertools.count()


@dataclass
class CompileOptions:
    r"""Options of :func:`compile_model`.

    ``clusters``: the number of clusters/workers (default: the cores this process may use, its CPU
    affinity: :func:`ramiel.omp.usable_cores`); ``backend``:
    ``threads``, ``processes`` or ``distributed`` (also selects the transfer cost model);
    ``threads_per_worker``:
    intra-op threads of each worker (default ``None``: the program's
    :meth:`~ramiel.runtime.Program.planned_threads`, the cores merging left free shared among the
    clusters; a number is used as it is, as by the generated class); ``clone``: duplicate cheap producers; ``profile``: a profile
    database for costs; ``input_shapes``: bindings for dynamic input dimensions; ``batch``: compile
    the program for B samples (``--hypercluster{batch=B}``: B inputs and B outputs per graph
    input/output, named ``<name>__s<k>``); ``cores``: plan intra-op threads per op for this many
    cores (``--intra-op-threads{cores=N}``: an op runs with more threads while other clusters
    idle; the generated code sets them, overriding ``threads_per_worker``); ``None``: off.
    ``disable``: names of the :data:`REWRITE_PASSES` not to run (``"all"``: none of them).
    ``transfer_cost``: a transfer cost file (``ramiel calibrate -o FILE``) that replaces the
    backend's measured default (e.g. a real network for ``backend="distributed"``).
    ``compile``: print the compute between channel operations (and the whole sequential
    module) as segments compiled when the program loads (``--compile-segments``,
    :mod:`ramiel.runtime.compiled`): ``True`` or ``"inductor"`` with ``torch.compile``
    (inductor; tens of seconds per segment, cached on disk), ``"onednn-graph"`` traced and run
    by TorchScript with oneDNN Graph fusion on the first call (0.1-3 s); ``False``: eager;
    ``"auto"`` (the default): ``"onednn-graph"`` where the cost model says its saving pays
    (:func:`ramiel.passes.compile_segments.onednn_graph_pays`: convolution-heavy models such as
    ShuffleNet, SqueezeNet, the Inception and ResNet families, transformers), its fusion can be
    tried in a child process first (Linux: :mod:`ramiel.runtime.trial`) and the weights are
    not ``trainable``, and ``RAMIEL_AUTO_SEGMENTS`` is not ``0``; else eager (a compile note
    says which and why). Where it traces, the merge counts the saving for one cluster
    (``--merge{onednn-graph=true}``), and a parallel module that keeps several clusters
    (``clusters=N``) is eager, its sequential module traced.
    ``layout``: memory format of 4-D activations (``--assign-layout{format=...}``): ``auto``
    (channels-last through conv/pool/element-wise/concat regions where the cost model says it
    is faster), ``channels-last`` (every such region) or ``nchw`` (contiguous everywhere).
    ``trainable``: the floating-point weights of the sequential class are ``torch.nn.Parameter``\ s
    (else buffers); ``dynamic_batch``: ``None`` (default) lets the sequential module take any batch
    size where the ONNX graph's first input dimension is symbolic (bound to 1, or to
    ``input_shapes``, for the parallel program), ``True`` also where it is fixed, ``False`` never
    (see :mod:`ramiel.dynamic_batch`); ``class_name``: the generated class (default: from the ONNX
    graph name, else the file name).
    """

    clusters: int | None = None
    backend: BackendName = "threads"
    threads_per_worker: int | None = None
    clone: bool = True
    profile: str | None = None
    input_shapes: Mapping[str, Sequence[int]] | None = None
    ort_optimize: bool = False
    batch: int = 1
    cores: int | None = None
    disable: Sequence[str] = ()
    transfer_cost: str | None = None
    compile: bool | str = "auto"
    layout: LayoutMode = "auto"
    trainable: bool = False
    dynamic_batch: bool | None = None
    class_name: str | None = None

    def check(self) -> None:
        """Raise :class:`~ramiel.errors.RamielError` naming the first option
        :func:`compile_model` cannot take and why: a ``backend`` that is not a compilation
        target (``inline`` only runs a compiled program), a ``layout`` not in
        :data:`~ramiel.layout.LAYOUT_MODES`, a count below 1 (``clusters``, ``threads_per_worker``,
        ``batch``, ``cores``) or above :data:`ramiel.omp.MAX_COUNT` (1024: the command line's
        bound; a million threads crashed libgomp), a ``class_name`` the generated code cannot use
        (:func:`ramiel.printer.class_name_problem`), a ``disable`` that is a string instead of a
        list, or an unknown name in it, ``input_shapes`` that are not a dict of input names to
        lists of ints of at least 0."""
        if not isinstance(self.compile, bool) and self.compile not in (*SEGMENT_BACKENDS, "auto"):
            raise RamielError(
                f"CompileOptions.compile must be True, False, 'auto' or one of "
                f"{', '.join(SEGMENT_BACKENDS)}, not {self.compile!r}"
            )
        if self.compile == "onednn-graph" and self.trainable:
            raise RamielError(
                "CompileOptions: compile='onednn-graph' (--compile-backend onednn-graph) "
                "traces the weights as constants, so they could not be trained (trainable=True, "
                "--trainable); use one or the other"
            )
        targets = get_args(Backend)
        if self.backend not in targets:
            inline = (
                " ('inline', clusters one after another in the caller's thread, is the runtime's "
                "choice for a one-cluster program of the threads backend, not a compile target; "
                "ramiel.runtime.start(..., backend='inline') runs any program so)"
                if self.backend == "inline"
                else ""
            )
            raise RamielError(
                f"CompileOptions.backend must be one of {', '.join(targets)}, not "
                f"{self.backend!r}{inline}"
            )
        if self.layout not in LAYOUT_MODES:
            raise RamielError(
                f"CompileOptions.layout must be one of {', '.join(LAYOUT_MODES)}, "
                f"not {self.layout!r}"
            )
        if self.class_name is not None:
            problem = class_name_problem(self.class_name)
            if problem:
                raise RamielError(f"CompileOptions.class_name: {problem}")
        for name in ("clusters", "threads_per_worker", "batch", "cores"):
            value = getattr(self, name)
            if value is not None and (type(value) is not int or not 1 <= value <= MAX_COUNT):
                raise RamielError(
                    f"CompileOptions.{name} must be an int from 1 to {MAX_COUNT} (as on the "
                    f"command line), not {value!r}"
                )
        if isinstance(self.disable, str):
            raise RamielError(
                f"CompileOptions.disable must be a list of rewrite names, not the string "
                f"{self.disable!r} (write [{self.disable!r}])"
            )
        if self.input_shapes is not None:
            _check_input_shapes(self.input_shapes)
        self.rewrites()

    def rewrites(self) -> list[str]:
        """The :data:`REWRITE_PASSES` this compilation runs, in order. ``trainable`` leaves out
        ``inplace``: an op that overwrites a tensor autograd saved for the backward pass (the
        Sigmoid output a SiLU's Mul overwrites) would make ``backward()`` fail; and
        ``prepack-conv`` and ``prepack-matmul``: the packed oneDNN convolution and MKL product
        have no backward pass (Parameters would take the plain ``F.conv2d`` and
        ``torch.matmul`` anyway); and ``combine-parallel-convs``: its concatenated kernel and
        bias are new Parameters, so a convolution without a bias would train the zeros it gets,
        and a kernel two convolutions share would no longer be tied (found by a fresh-user
        check).

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
        training_off = (
            ["inplace", "prepack-conv", "prepack-matmul", "combine-parallel-convs"]
            if self.trainable
            else []
        )
        off = {*self.disable, *training_off}
        return [p for p in REWRITE_PASSES if p not in off]


@dataclass
class CompileResult:
    """Paths and facts of one compilation (times in seconds).

    ``class_name``: the sequential class (``<class_name>Parallel`` is the parallel one);
    ``dynamic_batch``: the ONNX names of the graph inputs whose dimension 0 the sequential module
    takes at any size (empty: static shapes); ``batch_inputs``: ONNX input name -> the name of
    its dimension 0 in the ONNX model (its ``dim_param``; ``""`` where the model fixes it and
    ``dynamic_batch=True`` freed it), for the inputs whose dimension 0 is the model's batch;
    ``batch``: the batch size the parallel program is compiled for (``input_shapes``, else the
    model's own, else 1); ``notes``: what the compiler wants a user to know (why a batch
    dimension stayed fixed, ...).
    """

    out_dir: str
    parallel_path: str
    sequential_path: str
    weights_path: str
    ir_path: str
    report: ScheduleReport
    timings: dict[str, float] = field(default_factory=dict)
    clusters: int = 1
    class_name: str = "Model"
    dynamic_batch: tuple[str, ...] = ()
    notes: list[str] = field(default_factory=list)
    batch_inputs: dict[str, str] = field(default_factory=dict)
    batch: int = 1

    def op_counts(self) -> dict[str, int]:
        """How many ops of each ONNX type the compiled program has (``model.mlir``; constants
        aside): what the graph rewrites left, e.g. ``{"Conv": 53, "Attention": 12, ...}``."""
        counts: collections.Counter[str] = collections.Counter()
        with open(self.ir_path) as f:
            for line in f:
                if '"onnx.' in line:
                    op = line.split('"onnx.', 1)[1].split('"', 1)[0]
                    if op not in ("Constant", "NoValue"):
                        counts[op] += 1
        return dict(counts)


#: ONNX graph names that say nothing about the model (exporters' defaults): the class is named
#: after the file instead.
GENERIC_GRAPH_NAMES = frozenset(
    {"", "torch_jit", "torch-jit-export", "main_graph", "graph", "model", "tf2onnx", "test"}
)


def model_class_name(model: onnx.ModelProto, path: str | None) -> str:
    """The generated class's name: the CamelCase ONNX graph name, or the file's name when the
    graph name is one of :data:`GENERIC_GRAPH_NAMES`, else ``Model``."""
    graph = model.graph.name
    if graph.strip().lower() not in GENERIC_GRAPH_NAMES:
        return make_class_name(graph)
    if path:
        return make_class_name(os.path.splitext(os.path.basename(path))[0])
    return "Model"


def _relink_ir_weights(
    module: ModuleOp, keys: Mapping[str, str], ref: str, store: WeightStore | None
) -> None:
    """Make ``module``'s ``dense_resource`` constants name tensors of the weights file ``ref``.

    ``keys``: resource handle -> weight key of the written file. A constant whose handle has no
    key (the generated code never reads it: a shape only the compiler used) is made inline
    (its value read from ``store``, the module's weights).
    """
    for op in module.walk():
        value = op.properties.get("value")
        if not isinstance(value, DenseResourceAttr):
            continue
        key = keys.get(value.resource_handle.data)
        if key is not None:
            op.properties["value"] = DenseResourceAttr.from_params(key, value.type)
        else:
            arr = constant_value(value, store)
            assert arr is not None
            op.properties["value"] = dense_from_numpy(np.asarray(arr))
    set_str(module, WEIGHTS_ATTR, ref)


def _keep_ir_weights(module: ModuleOp, lowered: Sequence[ModuleOp]) -> None:
    """Give the ``torchpy`` modules a (never read) ``torchpy.weight`` for each ``dense_resource``
    constant of ``module`` (the large ones) that their code does not read, so that it is a buffer
    of the generated classes and a tensor of the weights file, which ``model.mlir`` refers to
    (e.g. an LSTM's weights in ONNX's gate order, which the code reads reordered at compile
    time)."""

    used = {op.key.data for m in lowered for op in m.walk() if isinstance(op, tp.WeightOp)}
    extra = [
        (key, op)
        for op, key in weight_keys(module).items()
        if isinstance(op.properties.get("value"), DenseResourceAttr) and key not in used
    ]
    if not extra:
        return
    for m in lowered:
        first = next(f for f in m.ops if isinstance(f, tp.FuncOp) and f.kind.data != "segment")
        block = first.body.block
        for key, op in extra:
            w = tp.WeightOp(key, op.properties["value"], op.results[0].type)
            w.result.name_hint = key
            if block.first_op is None:
                block.add_op(w)
            else:
                block.insert_op_before(w, block.first_op)


#: The files :func:`compile_model` writes into its output directory, and the weights file of
#: an older Ramiel's output, which it removes (the scratch file of the import's weights has a
#: name of its own each time, ``.ramiel-import-*.safetensors``, and is removed at the end).
OUTPUT_FILES = (
    "model.py", "model_seq.py", WEIGHTS_FILE, "model.mlir", "schedule.txt", "schedule.json",
    "model.ir.safetensors",
)  # fmt: skip


def _check_input_shapes(shapes: object) -> None:
    """``CompileOptions.input_shapes``: a mapping of input names to sequences of ints of at
    least 0 (an empty tensor is a size to compile for here; the command line's
    ``--input-shape`` takes positive ones), and of fewer elements than any machine holds
    (:data:`~ramiel.errors.MAX_TENSOR_BYTES`). Raises :class:`RamielError` naming the input and
    the value (a fresh-user check got a ValueError, a TypeError, an AttributeError, or a float or
    bool taken)."""
    if not isinstance(shapes, Mapping):
        raise RamielError(
            "CompileOptions.input_shapes must be a dict of input name -> shape (a list of ints), "
            f"not {type(shapes).__name__} {shapes!r:.80}"
        )
    for name, shape in shapes.items():
        ok = isinstance(name, str) and isinstance(shape, list | tuple)
        if ok:
            ok = all(isinstance(d, numbers.Integral) and not isinstance(d, bool) for d in shape)
        if not ok:
            raise RamielError(
                f"CompileOptions.input_shapes: {name!r}: {shape!r:.80} is not a shape (a list "
                "of ints, e.g. [1, 3, 224, 224]; [] for a scalar)"
            )
        if any(d < 0 for d in shape):
            raise RamielError(
                f"CompileOptions.input_shapes: {name!r}: {list(shape)} has a negative dimension "
                "(a size to compile for; -1 is what the model may say for an unknown one)"
            )
        if math.prod(shape) > MAX_TENSOR_BYTES:
            raise RamielError(
                f"CompileOptions.input_shapes: {name!r}: {math.prod(shape)} elements, more than "
                f"any machine can hold ({MAX_TENSOR_BYTES} bytes)"
            )


def _written_by_ramiel(path: str) -> bool:
    """Whether the code or report file ``path`` is one :func:`compile_model` wrote (by its
    content: a generated module's docstring says so, the IR's module names its weights file,
    the schedule reports have their header)."""
    name = os.path.basename(path)
    head = file_head(path, 512)
    if head is None:
        return False
    if name.endswith(".py"):
        return b"generated by Ramiel" in head
    if name == "model.mlir":
        return head.startswith(b"builtin.module") and b"ramiel." in head.split(b"\n", 1)[0]
    if name == "schedule.txt":
        return head.startswith(b"cluster ")
    if name == "schedule.json":
        return head.lstrip().startswith(b'{\n  "clusters"')
    return False


def foreign_outputs(out_dir: str) -> list[str]:
    """The files in ``out_dir`` that :func:`compile_model` would replace but did not write: a
    code or report file of :data:`OUTPUT_FILES` whose content is not Ramiel's (a user's own
    ``model.py``), anything of those names that is not a plain file or is a symbolic link
    (writing through it would replace its target, which may be another directory's output), and
    the weights files when no Ramiel-generated module or IR lies beside them. Empty for a new
    directory or an earlier output."""
    if not os.path.isdir(out_dir):
        return []
    present = [n for n in OUTPUT_FILES if os.path.lexists(os.path.join(out_dir, n))]
    links = [n for n in present if os.path.islink(os.path.join(out_dir, n))]
    code = [n for n in present if not n.endswith(".safetensors") and n not in links]
    ours = {n for n in code if _written_by_ramiel(os.path.join(out_dir, n))}
    foreign = [n for n in code if n not in ours] + [f"{n} (a symbolic link)" for n in links]
    beside = ours & {"model.py", "model_seq.py", "model.mlir"}
    for n in present:  # weights: Ramiel's where its generated module or IR lies beside them
        weights = n.endswith(".safetensors") and n not in links
        if weights and (not os.path.isfile(os.path.join(out_dir, n)) or not beside):
            foreign.append(n)
    return foreign


def foreign_outputs_message(out_dir: str, foreign: Sequence[str], doing: str) -> str:
    """The error for :func:`foreign_outputs` (or ``ramiel tune``'s) ``foreign`` in ``out_dir``,
    which ``doing`` (``"compiling"``) would replace."""
    return (
        f"output directory {out_dir} holds {', '.join(foreign)}, which Ramiel did not write and "
        f"{doing} would replace: choose another output directory (-o), or move "
        + ("it" if len(foreign) == 1 else "them")
    )


def _default_input_notes(model: onnx.ModelProto) -> list[str]:
    """A note for the graph inputs that also have an initializer (ONNX: an input with a default
    value): Ramiel compiles them as that constant, so the generated code takes no such input.
    Not for models of IR version < 4, which had to list every initializer as an input (the
    weights of the older zoo models)."""
    if model.ir_version < 4:
        return []
    inits = {t.name for t in model.graph.initializer}
    fixed = [i.name for i in model.graph.input if i.name in inits]
    if not fixed:
        return []
    listed = ", ".join(f"'{n}'" for n in fixed)
    return [
        f"graph input(s) {listed} also have an initializer (a default value): compiled as that "
        "constant, so the generated code does not take them as inputs; remove the initializer "
        "from the model to feed them"
    ]


def _binding_misfit(
    input_shapes: Mapping[str, Sequence[int]] | None, e: LocatedVerifyError
) -> Exception:
    """What to raise for IR the clean-up made invalid: with input shapes bound, the model does
    not fit them (two inputs that share a dimension bound to different sizes, a sequence longer
    than a position table), a :class:`RamielError` naming the bindings and the node; without,
    ``e`` itself (invalid IR from a valid model is Ramiel's own failure)."""
    if not input_shapes:
        return e
    bound = ", ".join(f"{k} {tuple(int(d) for d in v)}" for k, v in input_shapes.items())
    reason = re.sub(r"^IR invalid after (pass '[^']*'|the passes [^:]*): ", "", e.reason)
    return RamielError(f"the model does not fit the bound input shapes ({bound}): {reason}")


#: ONNX ops whose result size the input data decide (their declared shape is one case).
DATA_DEPENDENT_OPS = frozenset(["NonZero", "Unique", "NonMaxSuppression", "Compress"])


def data_dependent_notes(module: ModuleOp) -> list[str]:
    """A note for each op left after the clean-up whose result size the data decide but whose
    result type the model declares static (an exporter's or the ONNX file's value_info: onnx's
    node test ``test_nonzero_example`` declares (2, 3)): a NonZero, Unique, NonMaxSuppression,
    a Compress on a condition that is not a constant, a Loop with scan outputs whose trip
    count is not one. Ramiel compiles them with that shape: other data make the parallel
    program refuse its channel (ChannelError at run time) and the ops after them fail; the
    graph outputs of the sequential module take their real size (found by a fresh-user check,
    which met the ChannelError with no word at compile time)."""
    notes = []
    for op in module.walk():
        if not isinstance(op, OnnxOp) or not op.results:
            continue
        kind = op.op_type
        if kind == "Compress" and len(op.operands) > 1:
            owner = op.operands[1].owner
            if isinstance(owner, OnnxOp) and owner.op_type == "Constant":
                continue
        elif kind == "Loop":
            trip = op.operands[0].owner if op.operands else None
            carried = max(0, len(op.operands) - 2)
            if len(op.results) <= carried or (
                isinstance(trip, OnnxOp) and trip.op_type == "Constant"
            ):
                continue
        elif kind not in DATA_DEPENDENT_OPS:
            continue
        shape = static_shape(op.results[-1].type)
        if shape is None:
            continue  # the lowering refuses it: "shape not static"
        name = op.node_name or kind
        notes.append(
            f"node '{name}' ({kind}): the input data decide the size of its result, compiled "
            f"as the model declares it, {tuple(shape)}: other data make the parallel program "
            "refuse it (ChannelError) and the ops after it fail"
        )
    return notes


def _intra_op_notes(cores: int | None, report: Any) -> list[str]:
    """What to say about ``cores=N`` (``--cores N``, the ``--intra-op-threads`` pass): why no op
    got more than one thread (every cluster's OpenMP pool needs cores of its own,
    :mod:`ramiel.scheduling.threads` step 4, or no op was estimated faster with more), or that
    the program was planned for more cores than this process may use, where its counts are
    capped at run time (:meth:`ramiel.runtime.Program.thread_caps`)."""
    if cores is None or cores == 1:
        return []
    clusters = len(report.clusters)
    if not report.threaded_ops:
        if not pools_fit([2] + [1] * (clusters - 1), cores):  # not even one cluster at 2
            why = (
                f"{clusters} clusters on {cores} cores leave no cluster's OpenMP pool a second "
                "core of its own (a pool's helpers spin after every parallel region, and would "
                "take another cluster's core)"
            )
        else:
            why = "no op was estimated faster with more (the profile, or the analytic model)"
        return [f"cores={cores}: no op got more than one intra-op thread: {why}"]
    usable = usable_cores()
    if cores > usable:
        scaled = (
            "the widest clusters' counts scaled down so that they fit together"
            if clusters > 1
            else f"at most {usable}"
        )
        return [
            f"cores={cores}: planned for {cores} cores (ops with up to {report.max_threads} "
            f"threads), and this process may use {usable}: the counts are capped when it runs "
            f"({scaled}), and the estimated speed-up is for {cores} cores; compile with "
            f"cores={usable} to plan for this machine"
        ]
    return []


def _transfer_cost_notes(options: CompileOptions) -> list[str]:
    """A note where ``--transfer-cost``'s file was measured on another backend than the one the
    program is compiled for (``ramiel calibrate`` records it: channels cost per backend; found
    by a fresh-user check)."""
    if not options.transfer_cost:
        return []
    data = read_json_file(options.transfer_cost, "transfer cost file")
    measured = data.get("backend") if isinstance(data, dict) else None
    if isinstance(measured, str) and measured != options.backend:
        return [
            f"the transfer cost file {options.transfer_cost} was measured on the {measured} "
            f"backend, this program runs on {options.backend} (calibrate it there: ramiel "
            f"calibrate --backend {options.backend} -o FILE)"
        ]
    return []


def _segment_backend(
    options: CompileOptions, module: ModuleOp, work_us: float
) -> tuple[str | None, str | None]:
    """The backend of the compiled segments ``options.compile`` asks for (``None``: eager), and
    where ``"auto"`` found that they pay, why (:func:`_segment_note` says it; see
    :class:`CompileOptions`)."""
    if options.compile is False:
        return None, None
    if options.compile is True:
        return "inductor", None
    if options.compile != "auto":
        return str(options.compile), None
    if options.trainable or not switch_on(AUTO_SEGMENTS_SWITCH):
        return None, None
    pays, why = onednn_graph_pays(module, work_us)
    if not pays:
        return None, None
    return ("onednn-graph" if trial.available() else None), why


def _segment_note(backend: str | None, why: str | None, clusters: int) -> str | None:
    """The compile note on the ``"auto"`` default's segments (``backend`` and ``why`` from
    :func:`_segment_backend`; ``clusters``: the parallel module's), ``None`` where it did not
    find that they pay."""
    if why is None:
        return None
    if backend is None:
        return (
            f"eager, not onednn-graph segments (--compile-backend): {why}, but this "
            "platform cannot try their fusion in a child process first (Linux only)"
        )
    where = ""
    if clusters > 1:
        where = (
            f" in the sequential module, not in the {clusters} clusters (their segments would "
            "be a few ops each; --compile-backend onednn-graph: there too)"
        )
    return (
        f"onednn-graph segments by default{where} (traced and fused on the first call: 0.1-4.5 s "
        f"a segment; --no-compile: eager): {why}"
    )


def compile_model(
    model: str | os.PathLike[str] | onnx.ModelProto | bytes,
    out_dir: str,
    options: CompileOptions | None = None,
    progress: Callable[[str], None] | None = None,
) -> CompileResult:
    """Compile ``model`` into ``out_dir`` (created if needed). See the module docstring.

    Raises :class:`~ramiel.errors.RamielError` subclasses for bad models, unsupported ops and
    impossible clustering requests, and for a bad option (:meth:`CompileOptions.check`) before
    anything is read or written.
    """

    options = options or CompileOptions()
    say = progress or (lambda _msg: None)
    options.check()
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise RamielError(f"output {out_dir} exists and is not a directory")
    if isinstance(model, str | os.PathLike) and os.path.exists(model):
        for out_name in OUTPUT_FILES:
            if same_file(model, os.path.join(out_dir, out_name)):
                raise RamielError(
                    f"the model {os.fspath(model)} is where the compiler writes its {out_name}: "
                    "choose another output directory (-o), or move the model"
                )
    foreign = foreign_outputs(out_dir)
    if foreign:
        raise RamielError(foreign_outputs_message(out_dir, foreign, "compiling"))
    # Inputs, then the output: one clear error before any work (and before creating anything).
    if isinstance(model, str | os.PathLike):
        input_file(model, "ONNX model")
    if options.profile is not None:
        ProfileDB.load(options.profile)
    with removed_if_left_empty(out_dir):
        output_dir(out_dir)
        return _compile_into(model, out_dir, options, say)


def _compile_into(
    model: str | os.PathLike[str] | onnx.ModelProto | bytes,
    out_dir: str,
    options: CompileOptions,
    say: Callable[[str], None],
) -> CompileResult:
    """The work of :func:`compile_model` once its checks passed and ``out_dir`` exists."""
    timings: dict[str, float] = {}
    n = options.clusters if options.clusters is not None else usable_cores()
    path = os.fspath(model) if isinstance(model, str | os.PathLike) else None
    src_name = os.path.basename(path) if path else "an in-memory ONNX model"

    t = time.perf_counter()
    say("import")
    onnx_model = load_model(model)
    name = options.class_name or model_class_name(onnx_model, path)
    batch = batch_inputs(onnx_model, options.input_shapes, options.dynamic_batch, options.batch)
    # the importer's weights go to a scratch file: the output has one weights file, written last
    # (a name of its own: never a file of the user's, nor another compilation's scratch file)
    fd, scratch = tempfile.mkstemp(".safetensors", ".ramiel-import-", os.path.abspath(out_dir))
    os.close(fd)
    os.remove(scratch)  # the importer writes it only when the model has large initializers
    # the compilation's context: its weight stores hold the scratch file and the tensors the
    # passes add, until write_weights writes the one weights file
    ctx = make_context(out_dir)
    verifier = IncrementalVerifier()  # the import's check, then each pass's
    try:
        module = import_onnx(
            batch.model or onnx_model,
            ImportOptions(
                input_shapes=batch.bound_shapes,
                weights_path=scratch,
                weights_ref=scratch,
                ort_optimize=options.ort_optimize,
            ),
            verifier,
        )
        if not has(module, WEIGHTS_ATTR):
            # every initializer was inline; give the weights constant folding adds a file anyway
            set_str(module, WEIGHTS_ATTR, scratch)
        timings["import"] = time.perf_counter() - t

        t = time.perf_counter()
        say("clean-up and clustering")
        rewrites = options.rewrites()
        clean_up, passes = split_clean_up(
            compile_pipeline(
                rewrites,
                {
                    "hypercluster": {"batch": options.batch},
                    "assign-layout": {
                        "format": options.layout,
                        "prepacked": "prepack-conv" in rewrites,
                    },
                    "estimate-cost": {
                        "profile": options.profile,
                        "backend": options.backend,
                        "transfer_cost": options.transfer_cost,
                    },
                    # clusters = cores: one cluster of intra-op threads where that is faster
                    "merge": {
                        "clusters": n,
                        "intra_op": options.clusters is None,
                        "max_threads": thread_limit(),
                    },
                    "intra-op-threads": {"cores": options.cores, "profile": options.profile},
                },
                clone=options.clone,
                intra_op_threads=options.cores is not None,
            )
        )
        try:
            run_passes(module, clean_up, ctx, verifier)
        except LocatedVerifyError as e:
            raise _binding_misfit(options.input_shapes, e) from None
        data_notes = data_dependent_notes(module)
        # What the lowering would reject (unsupported ops, shapes only the data decide), found
        # before the clustering sizes channels with those shapes (a dynamic channel is invalid IR)
        check_lowerable(module, ctx.weights.of(module))
        # the segments are decided before the merge, which estimates one cluster with them
        at = next(i for i, p in enumerate(passes) if isinstance(p, Merge))
        run_passes(module, passes[:at], ctx, verifier)
        gv, _ = current_clustering(module)
        backend, auto_why = _segment_backend(options, module, gv.graph.total_work())
        merge = passes[at]
        if backend == "onednn-graph" and isinstance(merge, Merge) and merge.intra_op:
            merge = dataclasses.replace(merge, onednn_graph=True)
        run_passes(module, [merge, *passes[at + 1 :]], ctx, verifier)
        report = schedule_report(module)
        timings["passes"] = time.perf_counter() - t

        t = time.perf_counter()
        say("lowering to torchpy")
        par = module.clone()
        seq = module.clone()
        segments: list[ModulePass] = []
        if backend is not None:
            segments = [CompileSegments(backend=backend)]
        # The default's segments go into a parallel module of one cluster (its forward: one
        # segment), not into several clusters: cut at every channel operation into segments of
        # a few ops, traced clusters ran 0.90-1.17x the eager ones' time and were slower on 3
        # of the 4 branchy models (docs/benchmarks.md, *Task parallelism against one fused
        # cluster*). The sequential module is traced all the same. compile="onednn-graph"
        # traces the clusters too.
        auto = auto_why is not None and backend is not None
        par_segments = [] if auto and len(report.clusters) > 1 else segments
        auto_note = _segment_note(backend, auto_why, len(report.clusters))
        run_passes(par, [LowerToTorchpy(), *par_segments], ctx)
        run_passes(seq, [LowerToTorchpy(mode="sequential")], ctx)
        notes = list(batch.notes) + _default_input_notes(onnx_model) + data_notes
        notes += _transfer_cost_notes(options)
        if auto_note:
            notes.append(auto_note)
        notes += _intra_op_notes(options.cores, report)
        dynamic: tuple[str, ...] = ()
        bound_types = None  # the docstring's output shapes: the bound batch's, as INPUTS
        if batch.inputs:
            bound_types = result_types(seq)
            say("batch dimension")
            general = generalize_batch(onnx_model, batch, seq, options, ctx, decided=module)
            notes += general.notes
            seq, dynamic = general.module, general.dynamic
            # random inputs come at the bound batch (INPUTS): the table sizes of its import, not
            # of a sample batch's (17 rows had been the limit of a 3-row table)
            limits = get_str(module, INDEX_LIMITS_ATTR)
            if limits:
                set_str(seq, INDEX_LIMITS_ATTR, limits)
            else:
                remove(seq, INDEX_LIMITS_ATTR)
        check_input_shapes(seq, dynamic)
        if segments:
            run_passes(seq, segments, ctx)
        timings["lower"] = time.perf_counter() - t

        _keep_ir_weights(module, [par, seq])

        t = time.perf_counter()
        say("printing Python")
        par_path = os.path.join(out_dir, "model.py")
        seq_path = os.path.join(out_dir, "model_seq.py")
        par_text = print_python(  # both before either is written
            par, src_name, class_name=name, arg_names=forward_parameters(seq)
        )
        seq_text = print_python(
            seq,
            src_name,
            class_name=name,
            trainable=options.trainable,
            dynamic_batch=dynamic,
            output_types=bound_types,
        )
        with open(par_path, "w") as f:
            f.write(par_text)
        with open(seq_path, "w") as f:
            f.write(seq_text)
        weights_path = os.path.join(out_dir, WEIGHTS_FILE)
        store = ctx.weights.of(module)
        written = set(write_weights([par, seq], store, weights_path))
        # model.mlir: its dense_resource weights are tensors of that same file
        by_handle: dict[str, str] = {}
        for op, key in weight_keys(module).items():
            value = op.properties.get("value")
            if isinstance(value, DenseResourceAttr):
                by_handle[value.resource_handle.data] = key
        _relink_ir_weights(
            module, {h: k for h, k in by_handle.items() if k in written}, WEIGHTS_FILE, store
        )
        ir_path = os.path.join(out_dir, "model.mlir")
        with open(ir_path, "w") as f:
            f.write(str(module) + "\n")
        with open(os.path.join(out_dir, "schedule.txt"), "w") as f:
            f.write(report.to_text() + "\n")
        with open(os.path.join(out_dir, "schedule.json"), "w") as f:
            f.write(report.to_json() + "\n")
        timings["print"] = time.perf_counter() - t
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.remove(scratch)
        with contextlib.suppress(FileNotFoundError):
            os.remove(os.path.join(out_dir, "model.ir.safetensors"))  # an older Ramiel's
    tune_files = ("tune.json", "profile.json", "candidates")
    tuned = [n for n in tune_files if os.path.lexists(os.path.join(out_dir, n))]
    if "tune.json" in tuned:  # compiled into a ramiel tune's directory (a fresh-user check)
        notes.append(
            f"{', '.join(tuned)} in {out_dir} are from an earlier 'ramiel tune': they describe the "
            "program it chose, not this one"
        )
    return CompileResult(
        out_dir=out_dir,
        parallel_path=par_path,
        sequential_path=seq_path,
        weights_path=weights_path,
        ir_path=ir_path,
        report=report,
        timings=timings,
        clusters=len(report.clusters),
        class_name=name,
        dynamic_batch=dynamic,
        notes=notes,
        batch_inputs=batch.dim_params,
        batch=batch.bound,
    )


def _load_generated(path: str, kind: str) -> Any:
    """The class of the generated file ``path``, imported under a name of its own; its
    instances pickle with the file's text (:func:`~ramiel.runtime.program.pickle_by_source`)."""
    module = import_from_path(f"{GENERATED_PREFIX}{kind}_{next(_MODULE_IDS)}", path)
    return pickle_by_source(generated_class(module))


class CompiledModel(ParallelModel):
    """A compiled model: a ``torch.nn.Module`` that runs the parallel program.

    ``model(*inputs)`` (graph inputs in order, or by ONNX name as keywords) runs the parallel
    module on workers started once, on first use, and returns one tensor for a one-output graph,
    else a tuple in graph order; ``model.run({name: tensor})`` returns a dict by ONNX output name;
    ``close()`` (or ``with``) stops the workers. ``model.sequential`` is the generated sequential
    class (``model_seq.py``) holding the same tensors: it runs in the caller's thread, takes any
    batch size where ``result.dynamic_batch`` lists the input, traces with ``torch.fx``, exports
    with ``torch.export`` and, with ``trainable=True``, trains (its floating-point weights are
    parameters of both modules then).

    The weights are this module's buffers (or parameters), named as in ``weights.safetensors``:
    ``state_dict()``/``load_state_dict()`` round-trip, and the workers restart with new weights
    after a change (see :class:`~ramiel.runtime.ParallelModel`). ``report``: the schedule
    estimate; ``result``: paths and facts of the compilation; ``options``: how it was compiled.

    Compiled with ``compile=True``, the first call of each module compiles its segments
    (``start()`` does it for the parallel module ahead of time); ``compile_report()`` lists the
    compilations and their times.
    """

    #: the sequential module, set with ``object.__setattr__`` (not a submodule)
    _seq: torch.nn.Module

    def __init__(self, result: CompileResult, options: CompileOptions, tmp: Any = None):
        par_module = f"{GENERATED_PREFIX}par_{next(_MODULE_IDS)}"
        program = load_program(result.parallel_path, module_name=par_module)
        super().__init__(program=program, threads_per_worker=options.threads_per_worker)
        # the keywords the generated parallel class takes besides the ONNX names, as printed
        self.ARG_NAMES = dict(generated_class(sys.modules[par_module]).ARG_NAMES)
        self.result = result
        self.options = options
        self.backend = options.backend
        self._tmp = tmp
        if tmp is not None:  # removed with this object, without TemporaryDirectory's warning
            weakref.finalize(self, tmp.cleanup)
        seq_cls = _load_generated(result.sequential_path, "seq")
        self.input_specs: dict[str, tuple[tuple[int, ...], Any]] = dict(seq_cls.INPUTS)
        #: integer input -> the size of the table it indexes (random inputs stay inside it)
        self.index_limits: dict[str, int] = dict(getattr(seq_cls, "INDEX_LIMITS", {}))
        self.DYNAMIC_BATCH = tuple(getattr(seq_cls, "DYNAMIC_BATCH", ()))
        with torch.device("meta"):
            seq = seq_cls()
        params = set(seq._parameters)
        # the weights file's metadata names those the code reads channels-last: converted here, once
        for key, t in Weights.as_dict(Weights.from_safetensors(result.weights_path)).items():
            if key in params:
                self.register_parameter(key, torch.nn.Parameter(t))
            else:
                self.register_buffer(key, t)
        self._declared_dtypes = {
            k: t.dtype
            for d in (seq._buffers, seq._parameters)
            for k, t in d.items()
            if t is not None
        }
        if set(seq._buffers) == set(self._buffers) and set(seq._parameters) == set(
            self._parameters
        ):
            # one set of tensors for both modules: replacing one through either (assign=True,
            # .to(), .double()) replaces it in both (a fresh-user check saw them drift apart)
            object.__setattr__(seq, "_buffers", self._buffers)
            object.__setattr__(seq, "_parameters", self._parameters)
        else:  # (a generated class with tensors of its own: copied in by .sequential)
            self._seq_ids: tuple = ()
        object.__setattr__(self, "_seq", seq)  # not a submodule: no second copy in state_dict
        self._seq_events: list[Any] = []

    def __getstate__(self) -> dict[str, Any]:
        """What a copy needs (``copy.deepcopy``, ``pickle``, ``torch.save``). The generated
        modules go as their text, imported again where the copy loads (the program:
        :meth:`Program.__reduce_ex__ <ramiel.runtime.Program.__reduce_ex__>`; the sequential
        module: :func:`~ramiel.runtime.program.pickle_by_source`), so a copy loads in another
        process too. The temporary directory of a model compiled without ``out_dir`` stays
        with the original."""
        state = super().__getstate__()
        state["_tmp"] = None
        return state

    @property
    def report(self) -> ScheduleReport:
        return self.result.report

    def _mismatch(self, e: InputMismatch) -> InputMismatch:
        """``e``, where only the batch size of a batch input differs, saying which dimension
        of the ONNX model it is, what it was bound to and how to compile for the size given
        (a model exported with a dynamic batch had said only "expected (1, 3) float32, got
        (8, 3) float32"; the sequential module's own check names its reason)."""
        name, shape = e.input_name, e.got_shape
        if not e.batch_only or name not in self.result.batch_inputs or shape is None:
            return super()._mismatch(e)
        symbol = self.result.batch_inputs[name]
        what = (
            f"the ONNX model's dynamic dimension '{symbol}'"
            if symbol
            else "the batch (fixed in the ONNX model, freed by dynamic_batch=True)"
        )
        dims = ",".join(str(d) for d in shape)
        flag = shell_quote(f"{name}={dims}")
        if name in self.DYNAMIC_BATCH:
            seq = "the sequential module takes any batch size (.sequential)"
        else:
            seq = (
                f"the sequential module runs batch size {self.result.batch} only as well "
                "(result.notes says why)"
            )
        return InputMismatch(
            f"{e}: dimension 0 of input {name!r} is {what}, bound to {self.result.batch} when "
            f"compiling; compile with input_shapes={{{name!r}: {shape}}} (ramiel compile "
            f"--input-shape {flag}) for batch size {shape[0]}; {seq}"
        )

    def output_specs(self) -> dict[str, tuple[tuple[int, ...], Any]]:
        """Graph output name -> (shape, torch dtype), from the parallel program's channels."""
        return {
            name: (self.program.channels[ch].shape, self.program.channels[ch].dtype)
            for name, ch in self.program.outputs.items()
        }

    @property
    def output_names(self) -> list[str]:
        return list(self.program.outputs)

    @property
    def sequential(self) -> torch.nn.Module:
        """The sequential module (``model_seq.py``'s class), holding this module's tensors: the
        same dicts of buffers and parameters, so a tensor replaced or written through either
        module (``load_state_dict``, ``assign=True`` too, ``.double()``) is so in both. A
        sequential module of another dtype is a copy: ``copy.deepcopy(model.sequential)
        .double()`` (this module then keeps its own; converting the shared one makes this
        module's next call raise :class:`~ramiel.runtime.ProgramError`)."""
        seq = self._seq
        if seq._buffers is self._buffers:
            return seq
        ids = tuple(id(t) for d in (self._buffers, self._parameters) for t in d.values())
        if ids != self._seq_ids:  # first use, or tensors replaced (load_state_dict, .to(...))
            seq._parameters.update(self._parameters)
            seq._buffers.update(self._buffers)
            self._seq_ids = ids
        return seq

    def runtime_config(self) -> tuple[str, int]:
        """The backend and intra-op threads per worker the parallel module runs with.

        The options' backend and ``threads_per_worker`` where given. By default the cores the
        compiler planned for go to the clusters it made (merging keeps a cluster only where it
        estimates a gain, and takes the fewest that come close to the best schedule, so it may
        make fewer than ``clusters`` asked for): each worker gets the program's
        :meth:`~ramiel.runtime.Program.planned_threads`, ``cores // made``, where ``cores`` is
        ``clusters``, at most the cores this process may use (asking for more clusters than
        there are cores gives no worker more threads than the machine has; the generated
        module's own default is the same), and a
        one-cluster program on the threads backend runs in the caller's thread (``inline``: no
        hand-off to a worker thread; the caller's thread count is restored after each call). So
        a model without useful task parallelism falls back to plain intra-op parallelism on the
        same cores.
        """
        threads = self.options.threads_per_worker or self.program.planned_threads()
        backend = self.options.backend
        if len(self.program.clusters) == 1 and backend == "threads":
            backend = "inline"
        return backend, threads

    @property
    def compiled(self) -> bool:
        """Whether the generated modules have compiled segments (``compile=True``, a backend, or
        the ``"auto"`` default's onednn-graph segments). Under the default a program of several
        clusters has them in its sequential module only (its clusters stay eager); the compile
        note in ``result.notes`` says which."""
        return bool(segments_in(vars(sys.modules[type(self._seq).__module__])))

    def compile_report(self) -> list[Any]:
        """The compilations of compiled segments so far (parallel and sequential module), as
        :class:`~ramiel.runtime.compiled.CompileEvent` items; empty unless compiled."""
        namespace = vars(sys.modules[type(self._seq).__module__])
        self._seq_events += take_events(segments_in(namespace).values())
        return [*super().compile_report(), *self._seq_events]

    def _runtime(self) -> tuple[str, int]:
        return self.runtime_config()

    def extra_repr(self) -> str:
        backend, threads = self.runtime_config()
        return (
            f"{self.result.class_name}, clusters={len(self.program.clusters)}, "
            f"backend={backend!r}, threads_per_worker={threads}, {self._state_text()}"
        )


def compile(  # noqa: A001 - the public name the README promises
    model: str | os.PathLike[str] | onnx.ModelProto | bytes,
    clusters: int | CompileOptions | None = None,
    backend: BackendName | None = None,
    threads_per_worker: int | None = None,
    out_dir: str | None = None,
    **options: Any,
) -> CompiledModel:
    """Compile an ONNX model (path, ``ModelProto`` or its serialized bytes) into a :class:`CompiledModel` (an
    ``nn.Module``; ``.sequential`` is the sequential one).

    A string that is no file and does not look like one (no ``.onnx`` ending, no path
    separator) is a model name, as the ``ramiel`` commands take it: ``"light_squeezenet"``,
    ``"inception"``, ``"hf_bert"`` (:func:`ramiel.model_names.model_path`; a project or
    ``transformers`` model is exported on first use).

    Generated files go to ``out_dir`` (default: a temporary directory kept while the object
    lives). Other keyword options are those of :class:`CompileOptions` (``trainable``,
    ``dynamic_batch``, ``input_shapes``, ``cores``, ``compile``, ...). Raises
    :class:`~ramiel.errors.RamielError` subclasses (see :func:`compile_model`), also for a
    keyword that is no option. ``compile(model, CompileOptions(...))`` (the options as
    :func:`compile_model` takes them, in place of ``clusters``) works too, without keywords
    (``backend=None`` is ``"threads"``).
    """
    known = {f.name for f in fields(CompileOptions)}
    unknown = sorted(set(options) - known)
    if unknown:  # (was a bare TypeError from the dataclass; found by a fresh-user check)
        raise RamielError(
            f"ramiel.compile: no option {', '.join(map(repr, unknown))}; the options are "
            f"{', '.join(sorted(known))} (compile=False, True, 'auto', 'inductor' or "
            "'onednn-graph' chooses the segments' backend)"
        )
    if isinstance(clusters, CompileOptions):  # compile(model, CompileOptions(...))
        if options or backend is not None or threads_per_worker is not None:
            raise RamielError(
                "ramiel.compile: give the options either as a CompileOptions or as keywords, "
                "not both (dataclasses.replace(opts, ...) changes some of a CompileOptions)"
            )
        opts = clusters
    else:
        opts = CompileOptions(
            clusters=clusters,
            backend="threads" if backend is None else backend,
            threads_per_worker=threads_per_worker,
            **options,
        )
    if isinstance(model, str):
        model = model_path(model)
    tmp = None
    if out_dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="ramiel-")
        out_dir = tmp.name
    try:
        result = compile_model(model, out_dir, opts)
        return CompiledModel(result, opts, tmp)
    except BaseException:
        if tmp is not None:  # removed now, not by a ResourceWarning at garbage collection
            tmp.cleanup()
        raise
