"""Ramiel as an ONNX backend (:class:`onnx.backend.base.Backend`).

``prepare(model)`` compiles the model through the whole pipeline — import, constant folding,
clustering with ``clusters=2`` (one for a one-node graph; the merge pass keeps two only where it
estimates a gain), lowering to ``torchpy``, printing the parallel module — and the returned
:class:`RamielRep` runs the generated parallel module on the threads runtime (or ``processes``;
workers started once, reused by every ``run``)::

    import ramiel.backend as backend

    rep = backend.prepare(onnx.load("model.onnx"))
    (y,) = rep.run([x])               # numpy arrays in, numpy arrays out (graph order)
    rep.close()

This is what ``onnx.backend.test.BackendTest(ramiel.backend)`` drives (``tests/conformance``).

Binding at the first run
    Ramiel compiles ahead of time for static shapes, and the lowering needs some inputs as
    compile-time constants (Reshape's shape, Slice's starts/ends, Pad's pads, Resize's scales,
    ...). Models that give these as graph inputs, or whose inputs have dynamic dimensions, are
    compiled at ``run`` time instead: input shapes are bound from the arrays given, and the graph
    inputs the compiler asked for as constants are frozen into the model from the values given.
    Each such compilation is cached under its *signature* (input shapes and dtypes, plus the
    values of the frozen inputs), so a later ``run`` with the same signature reuses it and one
    with another signature compiles again. Which inputs to freeze is decided by the compiler, not
    guessed: a compile that fails with "... must be a compile-time constant" names the node, and
    the graph inputs of that node the message names (by schema input name or index; every
    operand but the data input 0 if it names none) are frozen; an operand computed in the graph
    from graph inputs (a Loop's trip count from a Range's start, limit and delta) has those
    frozen. An operand computed from no graph input cannot be bound, and the error stands.
    The graph inputs that give a Reshape, Expand, Tile or ConstantOfShape its shape are frozen
    from the start, also where the model declares the result's shape: onnxruntime follows their
    values (another value than the declared shape gives another result shape, with a warning),
    and so does each compilation here, whose declared output sizes are then left to shape
    inference.

Errors are :class:`~ramiel.errors.RamielError` subclasses (an unsupported op, attribute value or
element type is an :class:`~ramiel.errors.UnsupportedOpError` naming op, node, opset and reason),
raised by ``prepare`` when the model is compiled there, else by the first ``run``.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
import onnx.shape_inference
import torch
from onnx import numpy_helper
from onnx.backend.base import Backend, BackendRep, Device, DeviceType
from safetensors.torch import load_file

from ramiel.compiler import CompileOptions, compile_model
from ramiel.errors import (
    DataDependentShapeError,
    DynamicShapeError,
    RamielError,
    UnsupportedOpError,
)
from ramiel.lowering.node_view import freeze_inputs
from ramiel.runtime import Program, Weights, start
from ramiel.runtime.module import generated_class, with_state
from ramiel.runtime.program import InputMismatch, import_from_path
from ramiel.runtime.runner import BackendName
from ramiel.weights import numpy_from_torch, torch_from_numpy

__all__ = [
    "RamielBackend",
    "RamielRep",
    "BackendOptions",
    "prepare",
    "run_model",
    "run_node",
    "supports_device",
    "is_compatible",
]

#: How the lowering says "this operand must be known at compile time".
_NEEDS_CONSTANT = re.compile(r"must be (?:a )?(?:compile-time )?constant")
_INPUT_INDEX = re.compile(r"\binput (\d+)\b")
_MODULE_IDS = itertools.count()


@dataclass
class BackendOptions:
    """Options of :func:`prepare` (keyword arguments of the same names).

    ``clusters``: workers of the generated parallel module (capped at the graph's node count, so a
    one-node graph gets one cluster); ``backend``: the runtime (``threads`` or ``processes``);
    ``threads_per_worker``: intra-op threads per worker; ``keep_dir``: a directory to write the
    generated files to (one sub-directory per compilation) instead of a temporary one that is
    removed on :meth:`RamielRep.close`.
    """

    clusters: int = 2
    backend: BackendName = "threads"
    threads_per_worker: int = 1
    keep_dir: str | None = None


class _Compiled:
    """One compilation of the model for one input signature, with its started workers.

    ``parallel`` is False only when nothing is left to run in parallel: every graph output was
    computed at compile time (a Shape of a static input, a Constant), so the compiler prints
    ``model.py`` in its sequential form (no ``PROGRAM``); that generated module is run then.
    """

    def __init__(
        self,
        model: onnx.ModelProto,
        shapes: dict[str, tuple[int, ...]],
        opts: BackendOptions,
        out_dir: str,
    ):
        copts = CompileOptions(
            clusters=max(1, min(opts.clusters, _node_count(model))),
            backend=opts.backend,
            threads_per_worker=opts.threads_per_worker,
            input_shapes=shapes or None,
        )
        self.out_dir = out_dir
        self.result = compile_model(model, out_dir, copts)
        #: seconds per stage: the compiler's (import, passes, lower, print), then loading the
        #: generated module and weights, and starting the workers
        self.timings = dict(self.result.timings)
        self._module = f"ramiel_backend_{next(_MODULE_IDS)}"
        self.runner: Any = None
        try:
            self._load(opts)
        except BaseException:
            sys.modules.pop(self._module, None)
            raise

    def _load(self, opts: BackendOptions) -> None:

        t = time.perf_counter()
        mod = import_from_path(self._module, self.result.parallel_path)
        tensors = load_file(self.result.weights_path)
        self.timings["load"] = time.perf_counter() - t
        program = getattr(mod, "PROGRAM", None)
        self.parallel = isinstance(program, Program)
        t = time.perf_counter()
        if isinstance(program, Program):
            program.module_path = os.path.abspath(self.result.parallel_path)
            self.runner = start(
                program,
                Weights(tensors),
                backend=opts.backend,
                threads_per_worker=opts.threads_per_worker,
            )
            self.clusters = len(program.clusters)
        else:
            cls = generated_class(mod)
            self._model = with_state(cls, tensors)
            self._inputs = list(cls.INPUTS)
            self._outputs = list(cls.OUTPUTS)
            self.clusters = 0
        self.timings["start"] = time.perf_counter() - t

    def run(self, feeds: dict[str, Any]) -> dict[str, Any]:
        if self.runner is not None:
            return self.runner.run(feeds)

        with torch.inference_mode():
            outs = self._model(*(feeds[n] for n in self._inputs))
        if len(self._outputs) == 1 and not isinstance(outs, tuple | list):
            outs = (outs,)
        # the outputs are weights here: hand out copies, so a caller cannot change later runs
        return {n: o.clone() for n, o in zip(self._outputs, outs, strict=True)}

    def close(self) -> None:
        if self.runner is not None:
            self.runner.close()
            self.runner = None
        sys.modules.pop(self._module, None)


class RamielRep(BackendRep):
    """A model prepared by Ramiel; ``run(inputs)`` returns the outputs as numpy arrays.

    ``inputs`` is a sequence of arrays in the order of the graph inputs that are not initializers,
    or a mapping by input name (a single array is taken as the only input). Outputs come back as a
    tuple in graph output order. See the module docstring for when compilation happens.
    """

    def __init__(self, model: onnx.ModelProto, options: BackendOptions):
        self.onnx_model = model
        self.options = options
        init = {t.name for t in model.graph.initializer}
        self.input_names = [i.name for i in model.graph.input if i.name not in init]
        self._input_infos = {i.name: i for i in model.graph.input if i.name not in init}
        self.output_names = [o.name for o in model.graph.output]
        #: graph inputs frozen into the model from the values of a run (decided by the compiler,
        #: and from the start those that give a Reshape, Expand, Tile or ConstantOfShape its
        #: shape: a model may declare the result shape static, and onnxruntime follows the value)
        self.frozen: set[str] = _shape_operand_inputs(model, self.input_names)
        self._cache: dict[tuple, _Compiled] = {}
        self._lock = threading.Lock()
        self._tmp: str | None = None
        self._count = 0

    # ---------------------------------------------------------------------------- compilation

    def _out_dir(self) -> str:
        self._count += 1
        if self.options.keep_dir:
            d = os.path.join(self.options.keep_dir, f"compile_{self._count}")
            os.makedirs(d, exist_ok=True)
            return d
        if self._tmp is None:
            self._tmp = tempfile.mkdtemp(prefix="ramiel-backend-")
        d = os.path.join(self._tmp, str(self._count))
        os.makedirs(d)
        return d

    def _signature(self, feeds: Mapping[str, np.ndarray]) -> tuple:
        sig: list[Any] = []
        for name in self.input_names:
            a = feeds[name]
            sig.append((name, a.shape, a.dtype.name))
            if name in self.frozen:
                sig.append(a.tobytes())
        return tuple(sig)

    def compile_for(self, feeds: Mapping[str, np.ndarray]) -> _Compiled:
        """The compilation for these inputs' signature (compiled now if not cached)."""
        key = self._signature(feeds)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        while True:
            model = freeze_inputs(self.onnx_model, {n: feeds[n] for n in self.frozen})
            if model is not self.onnx_model:
                model = _declared_sizes_dropped(model)
            shapes = {n: tuple(feeds[n].shape) for n in self.input_names if n not in self.frozen}
            try:
                compiled = _Compiled(model, shapes, self.options, self._out_dir())
            except (UnsupportedOpError, DataDependentShapeError) as e:
                more = _inputs_to_freeze(self.onnx_model, e, self.input_names, self.frozen)
                if not more:
                    raise
                self.frozen |= more
                key = self._signature(feeds)
                continue
            self._cache[key] = compiled
            return compiled

    def try_compile_ahead(self) -> None:
        """Compile now from the model's static input shapes; leave it to ``run`` when the shapes
        are dynamic or the compiler needs input values. Other errors are raised."""
        feeds: dict[str, np.ndarray] = {}
        tensors_only = True
        for vi in self.onnx_model.graph.input:
            if vi.name not in self.input_names:
                continue
            if not vi.type.HasField("tensor_type"):
                tensors_only = False  # not a tensor: let the compiler say so now
                break
            shape = _static_shape(vi)
            if shape is None:
                return
            feeds[vi.name] = np.empty(shape, _np_dtype(vi))
        if self.frozen:
            return  # compiled from the first run's values
        try:
            compiled = _Compiled(self.onnx_model, {}, self.options, self._out_dir())
        except DynamicShapeError:
            return
        except (UnsupportedOpError, DataDependentShapeError) as e:
            more = _inputs_to_freeze(self.onnx_model, e, self.input_names, set())
            if not more:
                raise
            self.frozen |= more  # bound from the first run's values
        else:
            if not tensors_only:
                compiled.close()
            else:
                self._cache[self._signature(feeds)] = compiled

    # ---------------------------------------------------------------------------------- running

    def run(self, inputs: Any, **kwargs: Any) -> tuple[np.ndarray, ...]:
        """Run the generated parallel module; returns the outputs (numpy) in graph order."""
        feeds = self._feeds(inputs)
        with self._lock:
            compiled = self.compile_for(feeds)
        torch_feeds = {n: _to_torch(a) for n, a in feeds.items() if n not in self.frozen}
        t = time.perf_counter()
        outs = compiled.run(torch_feeds)
        compiled.timings.setdefault("first_run", time.perf_counter() - t)
        result = []
        for name in self.output_names:
            arr = _to_numpy(outs[name])
            if any(np.may_share_memory(arr, a) for a in feeds.values()):
                arr = arr.copy()  # an Identity-like output aliases an input: hand out a copy
            result.append(arr)
        return tuple(result)

    def _feeds(self, inputs: Any) -> dict[str, np.ndarray]:
        if isinstance(inputs, Mapping):
            feeds = dict(inputs)
        else:
            if isinstance(inputs, np.ndarray):
                inputs = [inputs]
            inputs = list(inputs)
            if len(inputs) != len(self.input_names):
                raise InputMismatch(
                    f"the model takes {len(self.input_names)} input(s) "
                    f"({', '.join(self.input_names)}), got {len(inputs)}"
                )
            feeds = dict(zip(self.input_names, inputs, strict=True))
        missing = [n for n in self.input_names if n not in feeds]
        unknown = [n for n in feeds if n not in self.input_names]
        if missing or unknown:
            raise InputMismatch(
                f"inputs: missing {missing}, unknown {unknown}; the model takes {self.input_names}"
            )
        out = {}
        for n, a in feeds.items():
            if isinstance(a, onnx.TensorProto):
                a = numpy_helper.to_array(a)
            elif isinstance(a, np.generic | int | float | bool):
                a = np.asarray(a)
            if not isinstance(a, np.ndarray):
                raise InputMismatch(f"input '{n}': expected a numpy array, got {type(a).__name__}")
            self._check_input(n, a)
            out[n] = a
        return out

    def _check_input(self, name: str, a: np.ndarray) -> None:
        """The array's dtype and the model's static dimensions must match (no implicit cast)."""
        vi = self._input_infos[name]
        if not vi.type.HasField("tensor_type"):
            return  # the compiler reports non-tensor inputs
        tt = vi.type.tensor_type
        want = _np_dtype(vi) if tt.elem_type else None
        if want is not None and a.dtype != want:
            raise InputMismatch(f"input '{name}': expected element type {want}, got {a.dtype}")
        if not tt.HasField("shape"):
            return
        dims = tt.shape.dim
        bad = len(dims) != a.ndim or any(
            d.HasField("dim_value") and d.dim_value != s
            for d, s in zip(dims, a.shape, strict=False)
        )
        if bad:
            shown = ",".join(
                str(d.dim_value) if d.HasField("dim_value") else (d.dim_param or "?") for d in dims
            )
            raise InputMismatch(f"input '{name}': expected shape [{shown}], got {list(a.shape)}")

    def stats(self) -> list[dict[str, Any]]:
        """One record per compilation: clusters (0: the sequential module ran, everything was
        computed at compile time), the graph inputs bound by value, and the stage timings."""
        return [
            {
                "clusters": c.clusters,
                "parallel": c.parallel,
                "bound_inputs": sorted(self.frozen),
                "timings": dict(c.timings),
            }
            for c in self._cache.values()
        ]

    def close(self) -> None:
        """Stop the workers of every compilation and remove the temporary files."""
        with self._lock:
            for c in self._cache.values():
                c.close()
            self._cache.clear()
            if self._tmp is not None:
                shutil.rmtree(self._tmp, ignore_errors=True)
                self._tmp = None

    def __enter__(self) -> RamielRep:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # interpreter shutdown
            self.close()


class RamielBackend(Backend):
    """The ONNX backend interface over :class:`RamielRep` (CPU only)."""

    @classmethod
    def is_compatible(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> bool:
        return cls.supports_device(device)

    @classmethod
    def prepare(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> RamielRep:
        """Compile ``model`` (see the module docstring); keyword options of
        :class:`BackendOptions`. Other keywords (``rtol``/``atol`` of the ONNX test runner) are
        ignored."""
        if not cls.supports_device(device):
            raise RamielError(f"device {device!r} is not supported (Ramiel runs on the CPU)")
        if isinstance(model, bytes):
            model = onnx.load_model_from_string(model)
        elif isinstance(model, str | os.PathLike):
            model = onnx.load(os.fspath(model))
        known = {k: kwargs[k] for k in BackendOptions.__dataclass_fields__ if k in kwargs}
        rep = RamielRep(model, BackendOptions(**known))
        rep.try_compile_ahead()
        return rep

    @classmethod
    def run_model(
        cls, model: onnx.ModelProto, inputs: Any, device: str = "CPU", **kwargs: Any
    ) -> tuple[Any, ...]:
        with cls.prepare(model, device, **kwargs) as rep:
            return rep.run(inputs)

    @classmethod
    def run_node(
        cls,
        node: onnx.NodeProto,
        inputs: Any,
        device: str = "CPU",
        outputs_info: Sequence[tuple[np.dtype, tuple[int, ...]]] | None = None,
        **kwargs: Any,
    ) -> tuple[Any, ...]:
        """Run one node: build a one-node model (opset from ``opset_version``, else the
        latest) and run it through the whole pipeline like any model."""
        super().run_node(node, inputs, device=device, outputs_info=outputs_info)
        opset = kwargs.pop("opset_version", onnx.defs.onnx_opset_version())
        if isinstance(inputs, Mapping):
            arrays = [np.asarray(inputs[n]) for n in node.input if n]
        else:
            arrays = [np.asarray(a) for a in inputs]
        names = [n for n in node.input if n]
        g_inputs = [
            onnx.helper.make_tensor_value_info(
                n, onnx.helper.np_dtype_to_tensor_dtype(a.dtype), a.shape
            )
            for n, a in zip(names, arrays, strict=True)
        ]
        inferred = _infer_output_types(node, g_inputs, arrays, opset)
        g_outputs = []
        for i, n in enumerate(o for o in node.output if o):
            if outputs_info is not None and i < len(outputs_info):
                dt, shape = outputs_info[i]
                g_outputs.append(
                    onnx.helper.make_tensor_value_info(
                        n, onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dt)), shape
                    )
                )
            elif n in inferred:
                g_outputs.append(onnx.helper.make_value_info(n, inferred[n]))
            else:
                raise RamielError(
                    f"run_node: cannot infer the type of output '{n}' of {node.op_type}; "
                    "pass outputs_info"
                )
        graph = onnx.helper.make_graph([node], f"run_node_{node.op_type}", g_inputs, g_outputs)
        model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", opset)])
        return cls.run_model(model, arrays, device, **kwargs)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return Device(device).type == DeviceType.CPU


# -- helpers ------------------------------------------------------------------------------------


def _infer_output_types(
    node: onnx.NodeProto,
    g_inputs: Sequence[onnx.ValueInfoProto],
    arrays: Sequence[np.ndarray],
    opset: int,
) -> dict[str, onnx.TypeProto]:
    """ONNX shape inference of one node's outputs (values given, so shape inputs count)."""
    try:
        schema = onnx.defs.get_schema(node.op_type, opset, node.domain or "")
        return dict(
            onnx.shape_inference.infer_node_outputs(
                schema,
                node,
                {vi.name: vi.type for vi in g_inputs},
                {
                    vi.name: numpy_helper.from_array(a, vi.name)
                    for vi, a in zip(g_inputs, arrays, strict=True)
                },
                opset_imports=[onnx.helper.make_opsetid(node.domain or "", opset)],
            )
        )
    except Exception:  # noqa: BLE001 - unknown op or inference failure: the compiler will say
        return {}


def _node_count(model: onnx.ModelProto) -> int:
    return sum(1 for n in model.graph.node if n.op_type != "Constant")


def _static_shape(vi: onnx.ValueInfoProto) -> tuple[int, ...] | None:
    if not vi.type.HasField("tensor_type") or not vi.type.tensor_type.HasField("shape"):
        return None
    dims = []
    for d in vi.type.tensor_type.shape.dim:
        if not d.HasField("dim_value"):
            return None
        dims.append(d.dim_value)
    return tuple(dims)


def _np_dtype(vi: onnx.ValueInfoProto) -> np.dtype:
    try:
        return onnx.helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type)
    except Exception:  # noqa: BLE001 - undefined / exotic element type: any placeholder will do
        return np.dtype(np.float32)


def _declared_sizes_dropped(model: onnx.ModelProto) -> onnx.ModelProto:
    """``model`` (a copy with frozen inputs, changed in place) with the sizes it declares for
    its outputs made symbolic (their ranks kept) and no ``value_info``: shape inference
    recomputes them from the frozen values, which may give other sizes than the model declares
    (a Reshape's shape given as an input: onnxruntime follows the value, with a warning)."""
    for vi in model.graph.output:
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape"):
            for i, d in enumerate(vi.type.tensor_type.shape.dim):
                d.Clear()
                d.dim_param = f"{vi.name}_{i}"
    del model.graph.value_info[:]
    return model


#: ONNX ops whose result shape an operand gives -> its position
_SHAPE_OPERAND = {"Reshape": 1, "Expand": 1, "Tile": 1, "ConstantOfShape": 0}


def _shape_operand_inputs(model: onnx.ModelProto, graph_inputs: Sequence[str]) -> set[str]:
    """The graph inputs a main-graph Reshape, Expand, Tile or ConstantOfShape takes its result
    shape from (directly, or computed from them: :func:`_graph_inputs_of`)."""
    g_inputs = set(graph_inputs)
    wanted = set()
    for node in model.graph.node:
        pos = _SHAPE_OPERAND.get(node.op_type) if node.domain in ("", "ai.onnx") else None
        if pos is not None and pos < len(node.input) and node.input[pos]:
            wanted.add(node.input[pos])
    return _graph_inputs_of(model, wanted, g_inputs) & g_inputs if wanted else set()


def _inputs_to_freeze(
    model: onnx.ModelProto,
    err: UnsupportedOpError | DataDependentShapeError,
    graph_inputs: Sequence[str],
    frozen: set[str],
) -> set[str]:
    """Graph inputs to bind by value so that the nodes of ``err`` that ask for compile-time
    constants (or whose result shape is not static) can compile; empty if some unsupported
    item is of another kind (or no graph input would help), so that the error stands. For a
    :class:`DataDependentShapeError` the operands are those after the data input (a Reshape's
    shape given as a graph input, its result declared with symbolic dimensions; helper-27)."""
    by_name = {(n.name or f"{n.op_type}_{i}"): n for i, n in enumerate(model.graph.node)}
    g_inputs = set(graph_inputs) - frozen
    out: set[str] = set()
    for item in err.items:
        node_name, opset = item[1], item[2]
        node = by_name.get(node_name)
        if node is None:
            return set()
        positions: set[int] = set()  # data-dependent: no operand named (those after the data)
        if isinstance(err, UnsupportedOpError):
            what = item[3]
            if not _NEEDS_CONSTANT.search(what):
                return set()
            positions = _named_positions(node, opset, what)
        if not positions:  # the message names no operand: every operand but the data input
            positions = set(range(1, len(node.input))) if len(node.input) > 1 else {0}
        wanted = {node.input[p] for p in positions if p < len(node.input) and node.input[p]}
        wanted = _graph_inputs_of(model, wanted, g_inputs)
        hits = wanted & g_inputs
        if not hits:
            return set()
        out |= hits
    return out


def _graph_inputs_of(model: onnx.ModelProto, names: set[str], g_inputs: set[str]) -> set[str]:
    """``names``, each replaced by the graph inputs it is computed from when it is computed in
    the graph (a Loop's trip count from a Range's start, limit and delta): binding those makes
    it a constant that constant folding computes. A name computed from no graph input stays."""
    producer = {o: n for n in model.graph.node for o in n.output if o}
    out: set[str] = set()
    for name in names:
        seen: set[str] = set()
        stack = [name]
        found: set[str] = set()
        while stack:
            v = stack.pop()
            if v in seen:
                continue
            seen.add(v)
            if v in g_inputs:
                found.add(v)
            elif v in producer:
                stack.extend(i for i in producer[v].input if i)
        out |= found or {name}
    return out


def _named_positions(node: onnx.NodeProto, opset: int, what: str) -> set[int]:
    """Operand positions ``what`` names: ``input N`` or a schema input name as a word."""
    pos = {int(m) for m in _INPUT_INDEX.findall(what)}
    try:
        schema = onnx.defs.get_schema(node.op_type, opset, node.domain or "")
    except Exception:  # noqa: BLE001 - unknown schema: only the indices are usable
        return pos
    for i, formal in enumerate(schema.inputs):
        if formal.name != "input" and re.search(rf"\b{re.escape(formal.name)}\b", what):
            pos.add(i)
    return pos


def _to_torch(a: np.ndarray) -> Any:
    # np.ascontiguousarray would turn a 0-d array into a 1-d one: copy with np.array instead
    if not a.flags.c_contiguous or not a.flags.writeable:
        a = np.array(a, order="C", copy=True)
    return torch_from_numpy(a)


def _to_numpy(t: Any) -> np.ndarray:
    return numpy_from_torch(t)


# -- the module-level backend interface (``onnx.backend.test.BackendTest(ramiel.backend)``) -----

prepare = RamielBackend.prepare
run_model = RamielBackend.run_model
run_node = RamielBackend.run_node
supports_device = RamielBackend.supports_device
is_compatible = RamielBackend.is_compatible
