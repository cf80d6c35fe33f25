"""ONNX model -> ``onnx`` dialect IR (``func.func @main``), the entry of the Ramiel pipeline.

Steps (``import_onnx``):

1. read the file (``onnx.load``; a non-protobuf or truncated file is a clear error),
2. optionally let onnxruntime's basic graph optimiser fold constants and drop dead nodes
   (``ort_optimize=True``, the paper's ORT plugin step),
3. bind symbolic/unknown input dimensions from ``input_shapes`` and check every graph input is
   static (else :class:`~ramiel.errors.DynamicShapeError` naming the input and dimension). A
   dimension is dynamic when it has a ``dim_param``, no value, or a negative ``dim_value`` (``-1``,
   how paddle2onnx and others write "unknown"); a ``dim_value`` of 0 is a real, empty dimension
   unless ``input_shapes`` binds it (some exporters write 0 for "unknown"),
4. run the ONNX checker and shape inference (``strict_mode``, ``data_prop``),
5. check every node is a known default-domain operator at the model's opset (all unsupported nodes
   are reported at once, with node names and opset),
6. emit one op per node. Initializers (also those listed as graph inputs, the pre-IR-4 convention)
   become ``onnx.Constant`` ops: inline when small or splat, else ``dense_resource`` entries in an
   external safetensors file (:mod:`ramiel.weights`).

The function's arguments are the graph inputs and its results the graph outputs; SSA names come
from the ONNX tensor names.
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
from collections import ChainMap, Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
import onnx.numpy_helper
import onnx.shape_inference
from google.protobuf.message import DecodeError, Message
from xdsl.builder import Builder, InsertPoint
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    IntegerType,
    ModuleOp,
    NoneType,
    TensorType,
)
from xdsl.ir import Attribute, Block, Region, SSAValue

from ramiel.attrs import (
    INDEX_LIMITS_ATTR,
    OPSET_ATTR,
    WEIGHTS_ATTR,
    io_name_attrs,
    set_int,
    set_str,
)
from ramiel.dialects import onnx as onnx_d
from ramiel.dtypes import ELEMENT_TYPES, onnx_dtype_of
from ramiel.errors import (
    MAX_TENSOR_BYTES,
    TENSOR,
    DynamicShapeError,
    ImportError_,
    InputShapeError,
    UnsupportedOpError,
)
from ramiel.files import input_file, shell_quote
from ramiel.naming import name_hint
from ramiel.parsing import IncrementalVerifier, LocatedVerifyError
from ramiel.weights import WeightStore, resource_key, value_attr

__all__ = [
    "ImportOptions",
    "constant_node_value",
    "import_onnx",
    "load_model",
    "parse_input_shape",
    "prepare_model",
    "upgraded",
]


@dataclass
class ImportOptions:
    """Options of :func:`import_onnx`.

    ``input_shapes`` binds graph input shapes (``{"data": (1, 3, 224, 224)}``); ``weights_path`` is
    where large initializers are written (safetensors) and ``weights_ref`` how the IR names that file
    (relative to the IR file's directory); ``ort_optimize`` runs onnxruntime's basic optimiser first.
    """

    input_shapes: Mapping[str, Sequence[int]] | None = None
    weights_path: str | None = None
    weights_ref: str | None = None
    ort_optimize: bool = False


def parse_input_shape(spec: str) -> tuple[str, tuple[int, ...]]:
    """Parse ``NAME=1,3,224,224`` (the ``--input-shape`` syntax); ``NAME=`` is a scalar.

    The name is everything before the last ``=`` (ONNX names may hold ``=``); every dimension is
    a positive decimal integer, and the tensor must be smaller than
    :data:`~ramiel.errors.MAX_TENSOR_BYTES` even at one byte per element.

    Raises :class:`~ramiel.errors.InputShapeError` (a ``ValueError``): no ``=``, an empty name, an
    empty, non-integer (``a``, ``1.5``), zero or negative dimension, or a size no machine holds.
    """
    name, sep, dims = spec.rpartition("=")
    if not sep or not name:
        raise InputShapeError(f"--input-shape expects NAME=D0,D1,..., got {spec!r}")
    shape: list[int] = []
    if dims.strip():
        for d in dims.split(","):
            text = d.strip()
            if not text:
                raise InputShapeError(f"--input-shape {spec!r}: an empty dimension (two commas?)")
            if not re.fullmatch(r"[+-]?\d+", text):
                raise InputShapeError(
                    f"--input-shape {spec!r}: dimensions must be integers, got {text!r}"
                )
            shape.append(int(text))
    if any(d <= 0 for d in shape):
        raise InputShapeError(
            f"--input-shape {spec!r}: dimensions must be positive (a size to compile for; "
            "-1 and 0 are what the model may say for an unknown dimension)"
        )
    numel = 1
    for dim in shape:
        numel *= dim
    if numel > MAX_TENSOR_BYTES:
        raise InputShapeError(
            f"--input-shape {spec!r}: {numel} elements, more than any machine can hold "
            f"({MAX_TENSOR_BYTES} bytes)"
        )
    return name, tuple(shape)


def load_model(
    path_or_model: str | os.PathLike[str] | onnx.ModelProto | bytes,
) -> onnx.ModelProto:
    """Read an ONNX model: a file, a ``ModelProto``, or its serialized bytes. Raises
    :class:`ImportError_` for missing, non-ONNX or truncated files or bytes, and for another
    kind of value."""
    if isinstance(path_or_model, onnx.ModelProto):
        _no_unread_external_data(path_or_model, "the ModelProto given")
        return path_or_model
    if isinstance(path_or_model, bytes | bytearray | memoryview):
        try:
            model = onnx.load_model_from_string(bytes(path_or_model))
        except Exception as e:  # noqa: BLE001 - protobuf's DecodeError and friends
            raise ImportError_(
                f"the {len(path_or_model)} bytes given are not an ONNX model ({type(e).__name__})"
            ) from None
        if not model.graph.node and not model.graph.output:
            raise ImportError_(f"the {len(path_or_model)} bytes given are not an ONNX model")
        _no_unread_external_data(model, f"the {len(path_or_model)} bytes given")
        return model
    if not isinstance(path_or_model, str | os.PathLike):
        raise ImportError_(
            "expected an ONNX model as a path, an onnx.ModelProto or its bytes, not "
            f"{type(path_or_model).__name__}"
        )
    path = os.fspath(path_or_model)
    if not os.path.exists(path):
        raise ImportError_(f"{path}: no such file")
    input_file(path, "ONNX model")  # not a directory, FIFO or device (which would never end)
    try:
        model = onnx.load(path)
    except DecodeError as e:
        raise ImportError_(f"{path}: not a valid ONNX protobuf ({e})") from None
    except Exception as e:  # onnx raises assorted errors for external data, truncation...
        raise ImportError_(f"{path}: cannot read ONNX model ({type(e).__name__}: {e})") from None
    if not model.graph.node and not model.graph.output:
        raise ImportError_(
            f"{path}: not an ONNX model (empty graph; is it a protobuf of another kind?)"
        )
    return model


def _no_unread_external_data(model: onnx.ModelProto, what: str) -> None:
    """Raise :class:`ImportError_` where an initializer of ``model`` (a ``ModelProto`` or bytes:
    no directory to find its files in) still keeps its data in an external file (the checker
    had said 'should be stored in ext.data, but it is not regular file'; a fresh-user check)."""
    from onnx.external_data_helper import uses_external_data  # lazy: onnx

    for t in model.graph.initializer:
        if uses_external_data(t):
            where = next((e.value for e in t.external_data if e.key == "location"), "?")
            raise ImportError_(
                f"{what}: initializer '{ascii(t.name)[1:-1]}' keeps its data in the external file "
                f"'{ascii(where)[1:-1]}', which only the model's path locates: pass the path of "
                "the .onnx file, or onnx.load it first (which reads its external data)"
            )


def _default_opset(model: onnx.ModelProto) -> int:
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx"):
            return o.version
    return 1


def _ort_optimize(model: onnx.ModelProto) -> onnx.ModelProto:
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    import onnxruntime as ort  # lazy: onnxruntime

    with tempfile.TemporaryDirectory() as d:
        src, dst = os.path.join(d, "in.onnx"), os.path.join(d, "opt.onnx")
        onnx.save(model, src)
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        so.optimized_model_filepath = dst
        so.log_severity_level = 3
        try:
            ort.InferenceSession(src, so, providers=["CPUExecutionProvider"])
        except Exception as e:
            raise ImportError_(f"onnxruntime could not optimise the model: {e}") from None
        return _inputs_mended(onnx.load(dst), model)


def _inputs_mended(optimised: onnx.ModelProto, source: onnx.ModelProto) -> onnx.ModelProto:
    """``optimised`` (onnxruntime's optimised ``source``) without the graph inputs that were initializers of ``source`` and that
    onnxruntime's optimiser removed, where nothing reads them any more. An IR-3 model lists its
    initializers among the graph inputs; onnxruntime merges equal ones (pytorch-converted
    test_BatchNorm2d_eval: the running mean '3' equals the bias '2', so the BatchNormalization
    reads '2' twice) and drops the initializer but not the input, which then became an input
    the compiled program took and nobody gave ("Invalid input name: 3", then a KeyError). And,
    in an IR-3 model, the initializers the optimiser made (``ConvBnFusion_W_...``) listed as
    graph inputs, as IR 3 requires: the ONNX checker had refused every ``light_*`` zoo model
    ("in initializer but not in graph input")."""
    g = optimised.graph
    given = {i.name for i in source.graph.input} - {t.name for t in source.graph.initializer}
    kept = {t.name for t in g.initializer}
    read = {name for node, _ in _all_nodes(g, "") for name in node.input}
    read |= {o.name for o in g.output}
    stale = [i for i in g.input if i.name not in given | kept | read]
    for i in stale:
        g.input.remove(i)
    if optimised.ir_version < 4:
        g.input.extend(_unlisted_initializers(optimised))
    return optimised


def prepare_model(
    model: onnx.ModelProto, input_shapes: Mapping[str, Sequence[int]] | None = None
) -> onnx.ModelProto:
    """Bind input shapes, check and shape-infer ``model`` (a copy); errors are :class:`RamielError`.

    Raises :class:`DynamicShapeError` when a graph input keeps a symbolic or unknown dimension, and
    :class:`UnsupportedOpError` listing every node whose operator Ramiel does not know.
    """
    m = onnx.ModelProto()
    m.CopyFrom(model)
    _check_unique_names(m.graph)
    init_names = {t.name for t in m.graph.initializer}
    inputs = [i for i in m.graph.input if i.name not in init_names]
    shapes = dict(input_shapes or {})
    unknown = set(shapes) - {i.name for i in inputs}
    if unknown:
        raise ImportError_(
            f"--input-shape names unknown input(s) {sorted(unknown)}; "
            f"the graph inputs are {[i.name for i in inputs]} (input_shapes= from Python)"
        )
    _bind_symbols(inputs, shapes)
    zero_unknown = False  # a 0 dimension was bound: the model writes 0 for "unknown"
    for inp in inputs:
        tt = inp.type.tensor_type
        if not inp.type.HasField("tensor_type"):
            raise UnsupportedOpError(
                [("<graph input>", inp.name, _default_opset(m), "non-tensor input")]
            )
        if inp.name in shapes:
            want = shapes[inp.name]
            bad = [d for d in want if not isinstance(d, int | np.integer) or d < 0]
            if bad:
                raise DynamicShapeError(
                    f"--input-shape {inp.name}: {bad[0]!r} is not a size (sizes are integers >= 0)"
                )
            if tt.HasField("shape") and len(tt.shape.dim) != len(want):
                raise DynamicShapeError(
                    f"--input-shape {inp.name}: rank {len(want)} given, the model says "
                    f"rank {len(tt.shape.dim)}"
                )
            for d, dim in enumerate(tt.shape.dim if tt.HasField("shape") else []):
                zero_unknown |= dim.HasField("dim_value") and dim.dim_value == 0 and want[d] != 0
                if _is_fixed(dim) and dim.dim_value != want[d] and dim.dim_value != 0:
                    raise DynamicShapeError(
                        f"--input-shape {inp.name}: dimension {d} is fixed to {dim.dim_value} "
                        f"in the model, {want[d]} given"
                    )
            tt.shape.Clear()
            for v in want:
                tt.shape.dim.add().dim_value = v
        if not tt.HasField("shape"):
            raise DynamicShapeError(
                f"graph input '{inp.name}' has no shape: bind it with --input-shape "
                f"{shell_quote(inp.name + '=D0,D1,...')} (from Python: "
                f"input_shapes={{{inp.name!r}: [D0, D1, ...]}})"
            )
        for d, dim in enumerate(tt.shape.dim):
            if not _is_fixed(dim):
                raise DynamicShapeError(_unbound_message(inp.name, tt.shape.dim, d))
    # Symbolic or unknown (negative) output and value_info dimensions ('N', -1; 0 too when a 0
    # input dimension was bound) would survive shape inference even when the bound input shapes
    # determine them: forget them, so inference fills in what it can.
    for vi in [*m.graph.output, *m.graph.value_info]:
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape"):
            for dim in vi.type.tensor_type.shape.dim:
                if not _is_fixed(dim) or (zero_unknown and dim.dim_value == 0):
                    dim.Clear()
    m = upgraded(m)
    opset = _default_opset(m)
    _check_supported(m, opset)
    skeleton, big = _skeleton(m)
    try:
        onnx.checker.check_model(skeleton)
        for t in big:
            onnx.checker.check_tensor(t)
    except onnx.checker.ValidationError as e:
        raise ImportError_(f"the ONNX checker rejects the model: {_first_line(e)}") from None
    try:
        inferred = onnx.shape_inference.infer_shapes(
            skeleton, check_type=True, strict_mode=True, data_prop=True
        )
    except Exception as e:
        # onnx's own known shape bugs (ceil_mode pooling before opset 22) make strict inference
        # fail on models that declare the correct shapes, and strict inference of some function
        # bodies fails (MeanVarianceNormalization-13's Constant: 'One and only one of the
        # attributes'); infer leniently, and let _correct_inferred_shapes fix those ops.
        # Anything else is a real error.
        failing = re.search(r"\(op_type:(\w+)\)", str(e))
        known = failing is not None and failing.group(1) in SHAPE_RULE_OPS
        if not known and ("differ in dimension" not in str(e) or not _has_shape_rule_ops(m)):
            raise ImportError_(f"ONNX shape inference failed: {_first_line(e)}") from None
        try:
            inferred = onnx.shape_inference.infer_shapes(
                skeleton, check_type=True, strict_mode=False, data_prop=True
            )
        except Exception as e2:  # noqa: BLE001 - onnx's InferenceError and friends
            # still inconsistent (a declared shape contradicts what inference derives)
            raise ImportError_(f"ONNX shape inference failed: {_first_line(e2)}") from None
    for field in ("node", "value_info", "output"):  # what inference adds to (subgraphs: nodes)
        target = getattr(m.graph, field)
        del target[:]
        target.extend(getattr(inferred.graph, field))
    return m


def _copy_fields(src: Any, dst: Any, skip: str) -> None:
    """Copy every set field of protobuf message ``src`` but ``skip`` into ``dst``."""
    for fd, value in src.ListFields():
        if fd.name == skip:
            continue
        if isinstance(value, Message):
            getattr(dst, fd.name).CopyFrom(value)
        elif isinstance(value, str | bytes | int | float | bool):
            setattr(dst, fd.name, value)
        else:  # a repeated field
            getattr(dst, fd.name).extend(value)


SKELETON_ELEMENTS = 1024
"""Initializers with more elements are left out of the model the ONNX checker and shape
inference see (:func:`_skeleton`)."""


def _skeleton(m: onnx.ModelProto) -> tuple[onnx.ModelProto, list[onnx.TensorProto]]:
    """``m`` without the data of its initializers of more than :data:`SKELETON_ELEMENTS`
    elements, which become graph inputs of their type and shape; and those initializers.

    The ONNX checker and shape inference serialize the whole model (both
    ``check_model`` and ``infer_shapes`` take its bytes): on BERT-base (440 MB) 1.1 s and 1.5 s
    per import, 0.01 s on the skeleton, with the same inferred shapes (data propagation needs
    only the small constants: shapes, axes, indices). The large initializers are checked one by
    one (``onnx.checker.check_tensor``: 0.24 s)."""
    big = [t for t in m.graph.initializer if math.prod(t.dims) > SKELETON_ELEMENTS]
    if not big:
        return m, []
    names = {t.name for t in big}
    declared = {i.name for i in m.graph.input}  # IR version < 4 lists initializers as inputs
    sk = onnx.ModelProto()
    _copy_fields(m, sk, skip="graph")
    g = sk.graph
    _copy_fields(m.graph, g, skip="initializer")
    g.initializer.extend(t for t in m.graph.initializer if t.name not in names)
    g.input.extend(
        onnx.helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
        for t in big
        if t.name not in declared
    )
    return sk, big


def _is_fixed(dim: onnx.TensorShapeProto.Dimension) -> bool:
    """Is ``dim`` a known size? A ``dim_param`` (``'N'``), no value at all, or a negative
    ``dim_value`` (``-1``: paddle2onnx's and others' way of writing "dynamic") is not."""
    return dim.HasField("dim_value") and dim.dim_value >= 0


def _bind_symbols(
    inputs: Sequence[onnx.ValueInfoProto], shapes: Mapping[str, Sequence[int]]
) -> None:
    """Give every graph input's symbolic dimension (``dim_param``) the size that ``shapes``
    binds the same symbol to in another input (in place): ``--input-shape x=2,5,4`` binds
    ``batch`` and ``seq`` of ``x['batch', 'seq', 4]``, and so ``h0[1, 'batch', 6]`` becomes
    ``[1, 2, 6]``, as ONNX says one symbol is one size in the graph (the hint had suggested
    ``h0=1,1,6``, and the LSTM then ran an initial state of batch 1 beside an input of batch 2).

    Raises:
        DynamicShapeError: ``shapes`` binds one symbol to two sizes (in two inputs, or twice in
            one)."""
    bound: dict[str, tuple[int, str]] = {}  # symbol -> (size, the input that bound it)
    for inp in inputs:
        want = shapes.get(inp.name)
        tt = inp.type.tensor_type
        if want is None or not tt.HasField("shape") or len(tt.shape.dim) != len(want):
            continue  # (an unknown rank, sizes that are no sizes: prepare_model's errors)
        for dim, size in zip(tt.shape.dim, want, strict=True):
            if not dim.dim_param or not isinstance(size, int | np.integer) or size < 0:
                continue
            first = bound.setdefault(dim.dim_param, (int(size), inp.name))
            if first[0] != size:
                where = "" if first[1] == inp.name else f" of '{first[1]}'"
                raise DynamicShapeError(
                    f"--input-shape {inp.name}: dimension '{dim.dim_param}' is {first[0]} in "
                    f"the shape{where} and {size} here; the model names one size by it"
                )
    for inp in inputs:
        tt = inp.type.tensor_type
        if inp.name in shapes or not tt.HasField("shape"):
            continue
        for dim in tt.shape.dim:
            if dim.dim_param in bound:
                dim.dim_value = bound[dim.dim_param][0]  # (clears dim_param: one of the two)


def _unbound_message(name: str, dims: Sequence[onnx.TensorShapeProto.Dimension], d: int) -> str:
    """The error for graph input ``name`` whose dimension ``d`` is dynamic and unbound: names
    the input, the dimension (its symbol or value) and suggests a binding that parses (the
    model's fixed dimensions, 1 for every dynamic one)."""
    dim = dims[d]
    if dim.dim_param:
        what = f" ('{dim.dim_param}')"
    elif dim.HasField("dim_value"):
        what = f" (dim_value {dim.dim_value})"
    else:
        what = ""
    example = ",".join(str(x.dim_value) if _is_fixed(x) else "1" for x in dims)
    unknown = [str(i) for i, x in enumerate(dims) if not _is_fixed(x)]
    which = "dimension" + ("s " if len(unknown) > 1 else " ") + ", ".join(unknown)
    return (
        f"graph input '{name}' has a dynamic dimension {d}{what}: bind it with --input-shape "
        f"{shell_quote(f'{name}={example}')} (the size of {which} you run with in place of 1; "
        f"from Python: input_shapes={{{name!r}: [{example.replace(',', ', ')}]}})"
    )


#: Ops whose onnx-inferred output shapes the lowering's shape rules correct (the keys of
#: ``ramiel.lowering.api.SHAPE_RULES``, listed here so that importing needs no torch; a test keeps
#: them equal).
SHAPE_RULE_OPS = frozenset(
    {
        "MaxPool",
        "AveragePool",
        "LpPool",
        "ConvTranspose",
        "GroupNormalization",
        "MeanVarianceNormalization",
        "Resize",
        "Upsample",
    }
)


#: Ops with a lowering rule (the keys of ``ramiel.lowering.api.RULES``, listed here so that
#: importing needs no torch; a test keeps them equal), plus If, Loop and Scan.
# fmt: off
LOWERED_OPS = frozenset(
    {
        'Abs', 'Acos', 'AffineGrid', 'Acosh', 'Add', 'And', 'ArgMax', 'ArgMin', 'Asin', 'Asinh', 'Atan',
        'Attention',
        'Atanh', 'AveragePool', 'BatchNormalization', 'BitShift', 'BitwiseAnd',
        'BitwiseNot', 'BitwiseOr', 'BitwiseXor', 'BlackmanWindow', 'Cast', 'CastLike',
        'Ceil', 'Celu', 'CenterCropPad', 'Clip', 'Compress', 'Concat', 'Constant',
        'ConstantOfShape', 'Conv', 'ConvTranspose', 'Cos', 'Cosh', 'CumProd', 'CumSum',
        'DepthToSpace', 'Det', 'Div', 'Dropout', 'Einsum', 'Elu', 'Equal', 'Erf', 'Exp',
        'Expand', 'EyeLike', 'Flatten', 'Floor', 'GRU', 'Gather', 'GatherElements',
        'GatherND', 'Gelu', 'Gemm', 'GlobalAveragePool', 'GlobalLpPool', 'GlobalMaxPool',
        'Greater', 'GreaterOrEqual', 'GridSample', 'GroupNormalization', 'HammingWindow',
        'HannWindow', 'HardSigmoid', 'HardSwish', 'Hardmax', 'Identity',
        'InstanceNormalization', 'IsInf', 'IsNaN', 'LRN', 'LSTM', 'LayerNormalization',
        'LeakyRelu', 'Less', 'LessOrEqual', 'Log', 'LogSoftmax', 'LpNormalization',
        'LpPool', 'MatMul', 'Max', 'MaxPool', 'Mean', 'MeanVarianceNormalization', 'Min',
        'Mish', 'Mod', 'Mul', 'Neg', 'NonZero', 'Not', 'OneHot', 'Or', 'PRelu', 'Pad',
        'Pow', 'RMSNormalization', 'RNN', 'Range', 'Reciprocal', 'ReduceL1', 'ReduceL2',
        'ReduceLogSum', 'ReduceLogSumExp', 'ReduceMax', 'ReduceMean', 'ReduceMin',
        'ReduceProd', 'ReduceSum', 'ReduceSumSquare', 'Relu', 'Reshape', 'Resize',
        'ReverseSequence', 'Round', 'Scatter', 'ScatterElements', 'ScatterND', 'Selu',
        'Shape', 'Shrink', 'Sigmoid', 'Sign', 'Sin', 'Sinh', 'Size', 'Slice', 'Softmax',
        'Softplus', 'Softsign', 'SpaceToDepth', 'Split', 'Sqrt', 'Squeeze', 'Sub', 'Sum',
        'Swish', 'Tan', 'Tanh', 'ThresholdedRelu', 'Tile', 'TopK', 'Transpose', 'Trilu',
        'Unsqueeze', 'Upsample', 'Where', 'Xor',
    }
) | frozenset(onnx_d.REGION_ATTRS)
# fmt: on

#: Ops whose value is not a function of their inputs (never computed at compile time).
_RANDOM_OPS = frozenset(
    {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial",
     "Bernoulli"}
)  # fmt: skip


def upgraded(m: onnx.ModelProto) -> onnx.ModelProto:
    """``m`` where it imports a default-domain opset Ramiel supports; one of opset 1 to 6 (the
    112 ``pytorch-converted`` and ``pytorch-operator`` test models inside the onnx wheel, older
    model-zoo files), converted to opset :data:`UPGRADE_OPSET` by onnx's version converter
    (``onnx.version_converter.convert_version``), which rewrites the ops whose signature changed
    (opset 7's broadcasting ``Add``, ``BatchNormalization`` without ``spatial``, ...), and whose
    PRelu slopes :func:`_per_channel_prelu_slopes` mends. Other models are returned as they
    are.

    Raises :class:`ImportError_` where the converter cannot convert the model, with its reason.
    """
    default = [o.version for o in m.opset_import if o.domain in ("", "ai.onnx")]
    if not default or not 1 <= default[0] < onnx_d.MIN_OPSET:
        return m
    from onnx import version_converter  # lazy: onnx

    m = _suffix_broadcasts(m)
    unlisted = _unlisted_initializers(m)
    if unlisted:  # the converter takes an initializer for a value only where it is an input
        m = _copy_model(m)
        m.graph.input.extend(unlisted)
    try:
        up = version_converter.convert_version(m, UPGRADE_OPSET)
    except Exception as e:  # noqa: BLE001 - the converter's RuntimeError and ValidationError
        raise ImportError_(
            f"the model imports ONNX opset {default[0]}; Ramiel supports opsets "
            f"{onnx_d.MIN_OPSET}..{onnx_d.LATEST_OPSET} of the default domain, and onnx's version "
            f"converter cannot convert it to opset {UPGRADE_OPSET}: {_first_line(e)}"
        ) from None
    # the converter writes value_info entries of no element type for values it adds (a Mul-6
    # with axis broadcasting), which onnxruntime refuses ("Invalid tensor data type 0"): shape
    # inference gives them again
    keep = [vi for vi in up.graph.value_info if vi.type.tensor_type.elem_type]
    del up.graph.value_info[:]
    up.graph.value_info.extend(keep)
    if unlisted and up.ir_version >= 4:  # as the model had them: initializers, not inputs
        names = {vi.name for vi in unlisted}
        inputs = [i for i in up.graph.input if i.name not in names]
        del up.graph.input[:]
        up.graph.input.extend(inputs)
    _per_channel_prelu_slopes(up)
    for node in up.graph.node:  # Upsample-1's "bilinear" is Upsample-7's "linear"
        for a in node.attribute:
            if node.op_type == "Upsample" and a.name == "mode" and a.s == b"bilinear":
                a.s = b"linear"
    return up


def _unlisted_initializers(m: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    """Graph inputs (name, element type, dimensions) for the initializers of ``m`` that no
    graph input lists: what an IR-3 model must list, and onnx's version converter needs."""
    listed = {i.name for i in m.graph.input}
    return [
        onnx.helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
        for t in m.graph.initializer
        if t.name not in listed
    ]


def _copy_model(m: onnx.ModelProto) -> onnx.ModelProto:
    out = onnx.ModelProto()
    out.CopyFrom(m)
    return out


def _suffix_broadcasts(m: onnx.ModelProto) -> onnx.ModelProto:
    """``m`` with every legacy axis broadcast (opset 1-6 binary ops with ``broadcast=1`` and
    ``axis``: B's dimensions match A's from ``axis`` on, Caffe2's per-channel bias ``Add(x, b,
    axis=1)``) written as a trailing one, which onnx's version converter takes (its adapter
    refuses the axis form with an assertion of its own, onnx 1.23): B gets trailing dimensions
    of 1 (a constant B is reshaped, another goes through an ``Unsqueeze``) and the ``axis``
    attribute goes. A copy where it changes anything; ``m`` itself otherwise."""
    ops = {"Add", "Sub", "Mul", "Div", "Pow", "And", "Or", "Xor", "Equal", "Greater", "Less"}

    def legacy(n: onnx.NodeProto) -> bool:
        attrs = {a.name: a for a in n.attribute}
        return n.op_type in ops and "axis" in attrs and attrs.get("broadcast") is not None

    if not any(legacy(n) for n in m.graph.node):
        return m
    out = _copy_model(m)
    dims = _inferred_dims(out)
    if dims is None:  # then the converter's own error says what is wrong
        return m
    inits = {t.name for t in out.graph.initializer}
    readers = Counter(i for n in out.graph.node for i in n.input)
    nodes: list[onnx.NodeProto] = []
    for n in out.graph.node:
        if legacy(n) and len(n.input) == 2 and n.input[0] in dims and n.input[1] in dims:
            axis = next(a.i for a in n.attribute if a.name == "axis")
            rank_a, b_dims = len(dims[n.input[0]]), dims[n.input[1]]
            axis = axis + rank_a if axis < 0 else axis
            ones = rank_a - axis - len(b_dims)
            if ones > 0 and n.input[1] in inits:
                _reshape_constant(out, n, 1, readers, ones)
            elif ones > 0:
                wide = f"{n.input[1]}_suffix_broadcast_{len(nodes)}"
                axes = list(range(len(b_dims), len(b_dims) + ones))
                nodes.append(onnx.helper.make_node("Unsqueeze", [n.input[1]], [wide], axes=axes))
                n.input[1] = wide
            kept = [a for a in n.attribute if a.name != "axis"]
            del n.attribute[:]
            n.attribute.extend(kept)
        nodes.append(n)
    del out.graph.node[:]
    out.graph.node.extend(nodes)
    return out


def _inferred_dims(m: onnx.ModelProto) -> dict[str, list[int | None]] | None:
    """Value name -> dimensions (``None`` for one of no fixed size) of ``m``'s initializers,
    graph inputs and the values onnx's shape inference (lenient) gives; ``None`` where the
    inference fails."""
    try:
        inferred = onnx.shape_inference.infer_shapes(m, strict_mode=False)
    except Exception:  # noqa: BLE001 - onnx's InferenceError and friends
        return None
    dims: dict[str, list[int | None]] = {t.name: list(t.dims) for t in m.graph.initializer}
    for vi in [*inferred.graph.input, *inferred.graph.value_info]:
        if vi.type.tensor_type.HasField("shape"):
            dims.setdefault(
                vi.name,
                [
                    d.dim_value if d.HasField("dim_value") else None
                    for d in vi.type.tensor_type.shape.dim
                ],
            )
    return dims


def _reshape_constant(
    m: onnx.ModelProto,
    node: onnx.NodeProto,
    index: int,
    readers: Counter[str],
    ones: int,
) -> None:
    """Input ``index`` of ``node``, an initializer of ``m``, given ``ones`` trailing dimensions
    of size 1: in place where ``node`` alone reads it (``readers``: name -> how many inputs of
    the graph's nodes read it), with the graph input that lists it (IR 3 lists initializers
    there too); else as a new initializer that ``node`` reads (listed among the inputs too
    where the model is IR 3)."""
    name = node.input[index]
    t = next(t for t in m.graph.initializer if t.name == name)
    value = onnx.numpy_helper.to_array(t)
    value = value.reshape(value.shape + (1,) * ones)
    if readers[name] == 1:
        t.CopyFrom(onnx.numpy_helper.from_array(value, name))
        for vi in m.graph.input:
            if vi.name == name:
                vi.CopyFrom(onnx.helper.make_tensor_value_info(name, t.data_type, value.shape))
        return
    fresh = f"{name}_reshaped_{len(m.graph.initializer)}"
    m.graph.initializer.append(onnx.numpy_helper.from_array(value, fresh))
    if m.ir_version < 4:
        m.graph.input.append(onnx.helper.make_tensor_value_info(fresh, t.data_type, value.shape))
    node.input[index] = fresh


#: The opset :func:`upgraded` converts opset 1-6 models to: 9, not 7, because the converter
#: adds int64 ``Constant`` ops (Reshape-1's ``shape`` attribute becomes one), which Constant-1
#: does not allow and Constant-9 does.
UPGRADE_OPSET = 9


def _per_channel_prelu_slopes(m: onnx.ModelProto) -> None:
    """PRelu before opset 7 applies a slope of shape (C,) along the channel axis (PyTorch's old
    exporter writes ``nn.PReLU(C)`` so; the onnx wheel's ``test_PReLU_*_multiparam`` data), opset
    7's by numpy broadcasting (along the last axis), and the version converter keeps the slope
    as it is: reshape such a constant slope to (C, 1, ..., 1) for an input of rank 3 or more whose
    axis 1 has C elements (in place; a slope another node also reads is copied)."""
    slopes = {t.name: t for t in m.graph.initializer}
    prelus = [n for n in m.graph.node if n.op_type == "PRelu" and n.input[1] in slopes]
    dims = _inferred_dims(m) if prelus else None
    if dims is None:  # (no PRelu, or no shapes: then the verifier names the PRelu)
        return
    readers = Counter(i for n in m.graph.node for i in n.input)
    for node in prelus:
        x = dims.get(node.input[0])
        if (
            x is None
            or len(x) < 3
            or list(slopes[node.input[1]].dims) != [x[1]]
            or x[1] in (None, 1)
        ):
            continue
        _reshape_constant(m, node, 1, readers, len(x) - 2)


def _has_shape_rule_ops(m: onnx.ModelProto) -> bool:
    return any(n.op_type in SHAPE_RULE_OPS for n in m.graph.node)


def _first_line(e: Exception) -> str:
    text = str(e).strip()
    return " ".join(text.splitlines()[:3])


def _check_supported(m: onnx.ModelProto, opset: int) -> None:
    domain_opsets = {o.domain: o.version for o in m.opset_import}
    foreign = [
        (f"{node.domain}.{node.op_type}", name, domain_opsets.get(node.domain, 0))
        for node, name in _all_nodes(m.graph, "")
        if node.domain not in ("", "ai.onnx")
    ]
    default = [o.version for o in m.opset_import if o.domain in ("", "ai.onnx")]
    if not default or opset < onnx_d.MIN_OPSET or opset > onnx_d.LATEST_OPSET:
        if foreign:  # what a model of ai.onnx.ml alone is refused for: its ops, not "opset 1"
            raise UnsupportedOpError([(*f, "operator domain not supported") for f in foreign])
        imports = ", ".join(f"{o.domain} {o.version}" for o in m.opset_import) or "nothing"
        what = f"ONNX opset {opset}" if default else f"no ONNX opset (it imports {imports})"
        raise ImportError_(
            f"the model imports {what}; Ramiel supports opsets "
            f"{onnx_d.MIN_OPSET}..{onnx_d.LATEST_OPSET} of the default domain"
        )
    bad: list[tuple[str, str, int, str]] = []
    constant = _constant_names(m.graph)
    for node, name in _all_nodes(m.graph, ""):
        if node.domain not in ("", "ai.onnx"):
            version = domain_opsets.get(node.domain, 0)
            bad.append(
                (f"{node.domain}.{node.op_type}", name, version, "operator domain not supported")
            )
            continue
        why = onnx_d.unrepresentable_reason(node.op_type, opset)
        if why:
            bad.append((node.op_type, name, opset, why))
        elif node.op_type not in LOWERED_OPS and not all(i in constant for i in node.output if i):
            # no lowering rule, and not computed at compile time by --constant-fold
            bad.append((node.op_type, name, opset, "no lowering rule for this operator"))
    if bad:
        raise UnsupportedOpError(bad)


def _constant_names(g: onnx.GraphProto) -> set[str]:
    """The tensors of ``g`` (not of its subgraphs) that ``--constant-fold`` can compute at
    compile time: initializers, Constant outputs, Shape/Size of anything (the input shapes are
    static), and the outputs of deterministic nodes whose inputs all are such tensors."""
    constant = {t.name for t in g.initializer}
    for node in g.node:
        if node.op_type in _RANDOM_OPS or any(
            a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
            for a in node.attribute
        ):
            continue
        if node.op_type in ("Constant", "Shape", "Size") or all(
            i in constant for i in node.input if i
        ):
            constant.update(o for o in node.output if o)
    return constant


def _all_nodes(g: onnx.GraphProto, path: str) -> Iterator[tuple[onnx.NodeProto, str]]:
    """Every node of ``g`` and of its subgraphs (If/Loop/Scan bodies), with the name the import
    gives it (``<If node>/then_branch/<OpType>_<index>`` for an unnamed subgraph node)."""
    for i, node in enumerate(g.node):
        name = node.name or f"{path}{node.op_type}_{i}"
        yield node, name
        for a in node.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                yield from _all_nodes(a.g, f"{name}/{a.name}/")
            elif a.type == onnx.AttributeProto.GRAPHS:
                for k, sub in enumerate(a.graphs):
                    yield from _all_nodes(sub, f"{name}/{a.name}{k}/")


def import_onnx(
    path_or_model: str | os.PathLike[str] | onnx.ModelProto,
    options: ImportOptions | None = None,
    verifier: IncrementalVerifier | None = None,
) -> ModuleOp:
    """Import an ONNX model as a module holding ``func.func @main`` in the ``onnx`` dialect.

    Raises :class:`~ramiel.errors.RamielError` subclasses for every kind of bad input. Large
    initializers are written to ``options.weights_path`` (safetensors) if given, else kept inline.
    The module is verified, with ``verifier`` if given (which then remembers what it checked, so
    that :func:`ramiel.pipeline.run_passes` with it checks only what the first pass changes).
    """
    options = options or ImportOptions()
    model = load_model(path_or_model)
    if options.ort_optimize:  # (onnxruntime has no kernels for some ops of opset 6 and older)
        model = _ort_optimize(upgraded(model))
    model = prepare_model(model, options.input_shapes)
    opset = _default_opset(model)
    g = model.graph

    types: dict[str, onnx.TypeProto] = {}
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        types[vi.name] = vi.type
    _correct_inferred_shapes(model, types, opset)

    # a fresh store, not one on the file: an import replaces what an earlier one wrote there
    store = WeightStore(None) if options.weights_path else None
    gi = _GraphImporter(opset, store)
    init_names = {t.name for t in g.initializer}
    graph_inputs = [i for i in g.input if i.name not in init_names]
    arg_types = [gi.ir_type(i.name, types) for i in graph_inputs]

    block = Block(arg_types=arg_types)
    env: dict[str, SSAValue] = {}
    for inp, arg in zip(graph_inputs, block.args, strict=True):
        arg.name_hint = name_hint(inp.name)
        env[inp.name] = arg
    b = Builder(InsertPoint.at_end(block))
    gi.none_builder = b
    outs = gi.emit_graph(g, b, ChainMap(env), ChainMap(types), "", skip=set())
    out_types = [v.type for v in outs]  # the If/Loop results the regions made static
    b.insert(func.ReturnOp(*outs))
    fn = func.FuncOp(
        "main",
        (arg_types, out_types),
        Region(block),
        arg_attrs=io_name_attrs([i.name for i in graph_inputs]),
        res_attrs=io_name_attrs([o.name for o in g.output]),
    )
    module = ModuleOp([fn])
    set_int(module, OPSET_ATTR, opset)
    limits = index_limits(model)
    if limits:
        set_str(module, INDEX_LIMITS_ATTR, json.dumps(limits, ensure_ascii=False))
    if store is not None and store._pending:
        assert options.weights_path is not None
        store.save(options.weights_path)
        set_str(module, WEIGHTS_ATTR, options.weights_ref or options.weights_path or "")
    try:  # the model as the dialects see it (a Reshape that cannot hold its input, ...)
        (verifier or IncrementalVerifier()).verify_all(module)
    except LocatedVerifyError as e:
        raise ImportError_(f"the model is invalid: {e.reason}") from None
    return module


_PASS_THROUGH = frozenset(
    {
        "Cast",
        "Reshape",
        "Unsqueeze",
        "Squeeze",
        "Flatten",
        "Identity",
        "Transpose",
        "Expand",
        "Tile",
        "Slice",
        "Split",
        "Concat",
        "TopK",
    }
)
"""Ops whose outputs hold values of their (first, or any for Concat) input: the same indices,
reshaped, cast, moved, repeated, cut or sorted (TopK's values: ``pack_padded_sequence``'s
lengths)."""

_INDEXING = frozenset({"Gather", "GatherElements", "GatherND", "ScatterElements", "ScatterND"})
"""Ops whose input 1 holds indices into their input 0 (the table)."""


def index_limits(model: onnx.ModelProto) -> dict[str, int]:
    """Integer graph input name -> the size of the smallest table it indexes, so that random
    inputs (``python model.py``, ``ramiel run``) stay inside it. A table is input 0 of a Gather,
    GatherElements, GatherND, ScatterElements or ScatterND whose indices (input 1) are the
    input's values, directly or through :data:`_PASS_THROUGH` ops (or as the data of a Gather);
    its size is the ``axis`` dimension (Gather, GatherElements, ScatterElements), or the
    smallest dimension from ``batch_dims`` on (GatherND, ScatterND). An embedding lookup: BERT's
    ``token_type_ids`` index a table of 2. Sequence lengths (``sequence_lens`` of RNN, GRU,
    LSTM and ReverseSequence) count as a table of one more than the steps
    (:func:`_length_limit`). Inputs that index no table of known size are not listed. The
    top-level graph only.

    A table's dimensions come from the constant itself (initializer or ``Constant``), a graph
    input's declared shape, or the shape inference of the model (``value_info``: a table
    reached through a Transpose, a Slice, ...). Random indices had run out of a 4-wide data
    input (a fresh-user check). The sizes are those of the model as imported: the sequential
    module of a dynamic batch, imported at sample batch sizes
    (:data:`ramiel.dynamic_batch.SAMPLE_BATCHES`), takes the limits of the bound batch's import
    (:func:`ramiel.compiler.compile_model`), at which random inputs come."""
    g = model.graph
    tables: dict[str, list[int]] = {}
    for vi in list(g.value_info) + list(g.output) + list(g.input):
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape"):
            tables[vi.name] = [
                d.dim_value if d.HasField("dim_value") else 0 for d in vi.type.tensor_type.shape.dim
            ]
    constants = {t.name for t in g.initializer}
    tables.update({t.name: list(t.dims) for t in g.initializer})
    for n in g.node:
        if n.op_type == "Constant" and n.output:
            for a in n.attribute:
                if a.name == "value" and a.HasField("t"):
                    tables[n.output[0]] = list(a.t.dims)
    readers: dict[str, list[onnx.NodeProto]] = {}
    for n in g.node:
        for i in n.input:
            readers.setdefault(i, []).append(n)
    limits: dict[str, int] = {}
    for inp in g.input:
        element = ELEMENT_TYPES.get(inp.type.tensor_type.elem_type)
        integer = isinstance(element, IntegerType) and element.width.data > 1  # not bool
        if inp.name in constants or not integer:
            continue
        names, seen, sizes = [inp.name], {inp.name}, []
        while names:
            v = names.pop()
            for n in readers.get(v, []):
                if n.op_type in _INDEXING and len(n.input) > 1 and n.input[1] == v:
                    sizes += _table_sizes(n, tables.get(n.input[0]))
                elif n.op_type in _LENGTHS and v in n.input[_LENGTHS[n.op_type] :][:1]:
                    sizes += _length_limit(n, tables.get(n.input[0]))
                passes = n.op_type in _PASS_THROUGH and (n.op_type == "Concat" or n.input[0] == v)
                if passes or (n.op_type == "Gather" and n.input[0] == v):
                    for o in n.output if n.op_type == "Split" else n.output[:1]:
                        if o and o not in seen:
                            seen.add(o)
                            names.append(o)
        if sizes:
            limits[inp.name] = min(sizes)
    return limits


_LENGTHS = {"RNN": 4, "GRU": 4, "LSTM": 4, "ReverseSequence": 1}
"""Ops whose input at that index holds sequence lengths (``sequence_lens``), at most the length
of their input 0's time axis."""


def _length_limit(node: onnx.NodeProto, dims: list[int] | None) -> list[int]:
    """[the time axis of ``node``'s input 0 (of dimensions ``dims``) + 1]: its sequence lengths
    are 0 to that length (random lengths from 0 to 9 had run past a GRU's 6 steps, which
    onnxruntime refuses: ``ramiel run`` could not check a model exported from
    ``pack_padded_sequence``; a fresh-user check); empty where the length is unknown."""
    attrs = {a.name: a.i for a in node.attribute if a.type == onnx.AttributeProto.INT}
    if node.op_type == "ReverseSequence":
        axis = attrs.get("time_axis", 0)
    else:
        axis = 1 if attrs.get("layout", 0) else 0
    if not dims or not 0 <= axis < len(dims) or dims[axis] <= 0:
        return []
    return [int(dims[axis]) + 1]


def _table_sizes(node: onnx.NodeProto, dims: list[int] | None) -> list[int]:
    """The sizes of ``node``'s table (its input 0, of dimensions ``dims``; 0: unknown) that its
    indices (input 1) count along (see :func:`index_limits`); empty where none is known."""
    if not dims:
        return []
    attrs = {a.name: a.i for a in node.attribute if a.type == onnx.AttributeProto.INT}
    if node.op_type in ("GatherND", "ScatterND"):
        along = dims[attrs.get("batch_dims", 0) :]
    else:
        axis = attrs.get("axis", 0)
        along = [dims[axis]] if -len(dims) <= axis < len(dims) else []
    return [int(d) for d in along if d > 0]


def _check_unique_names(g: onnx.GraphProto) -> None:
    """Graph inputs and outputs are named once each (the ONNX checker lets a repeated graph
    output through; Ramiel's program would send one value twice under one name)."""
    for what, items in (("input", g.input), ("output", g.output), ("initializer", g.initializer)):
        seen: set[str] = set()
        for item in items:
            if item.name in seen:
                raise ImportError_(f"graph {what} '{item.name}' is listed twice")
            seen.add(item.name)


class _GraphImporter:
    """Emits the ops of an ONNX graph and, recursively, of the subgraphs of its If, Loop and
    Scan nodes (each a region of the op; names resolve through the enclosing graphs' scopes,
    so a subgraph reads outer values directly, as ONNX says)."""

    def __init__(self, opset: int, store: WeightStore | None):
        self.opset = opset
        self.store = store
        self.keys: set[str] = set()
        # values (of the graph and its subgraphs: ONNX names are unique across them) whose IR
        # type the import made more static than onnx's inference (see reinfer)
        self.refined: set[str] = set()
        self.none_builder: Builder | None = None
        self._none: SSAValue | None = None

    def ir_type(self, name: str, types: Mapping[str, onnx.TypeProto]) -> Attribute:
        t = types.get(name)
        if t is None or not t.HasField("tensor_type"):
            kind = "" if t is None else f" ({t.WhichOneof('value') or 'no type'})"
            if t is not None and t.WhichOneof("value") in ("sequence_type", "optional_type"):
                raise UnsupportedOpError(
                    [(TENSOR, name, self.opset, f"{t.WhichOneof('value')} values")]
                )
            raise ImportError_(f"tensor '{name}': shape inference found no tensor type{kind}")
        return self.type_of(name, t)

    def type_of(self, name: str, t: onnx.TypeProto) -> Attribute:
        tt = t.tensor_type
        if tt.elem_type not in ELEMENT_TYPES:
            dt = onnx.TensorProto.DataType.Name(tt.elem_type)
            raise UnsupportedOpError([(TENSOR, name, self.opset, f"element type {dt}")])
        shape = None
        if tt.HasField("shape"):
            shape = [d.dim_value if _is_fixed(d) else -1 for d in tt.shape.dim]
        return onnx_d.tensor_type(tt.elem_type, shape)

    def none(self) -> SSAValue:
        if self._none is None:
            assert self.none_builder is not None
            self._none = self.none_builder.insert(onnx_d.NoValueOp()).result
        return self._none

    def constant(self, b: Builder, name: str, arr: np.ndarray, node_name: str | None = None):
        attr = value_attr(arr, resource_key(name, self.keys), self.store)
        op = onnx_d.create("Constant", [], [attr.get_type()], {"value": attr}, node_name)
        b.insert(op)
        op.results[0].name_hint = name_hint(name)
        return op.results[0]

    def emit_graph(
        self,
        g: onnx.GraphProto,
        b: Builder,
        env: ChainMap[str, SSAValue],
        types: ChainMap[str, onnx.TypeProto],
        path: str,
        skip: set[str],
    ) -> list[SSAValue]:
        """Emit ``g``'s initializers and nodes with ``b``; returns the values of its outputs.
        ``env``/``types`` hold the enclosing scopes; ``path`` prefixes unnamed nodes' names."""
        for init in g.initializer:
            if init.name in skip:
                continue
            try:
                arr = onnx.numpy_helper.to_array(init)
            except Exception as e:
                raise ImportError_(f"initializer '{init.name}' cannot be read: {e}") from None
            if arr.dtype == object:
                raise UnsupportedOpError(
                    [("<initializer>", init.name, self.opset, "string tensor")]
                )
            env[init.name] = self.constant(b, init.name, arr)
        for idx, node in enumerate(g.node):
            node_name = node.name or f"{path}{node.op_type}_{idx}"
            if self.refined & set(node.input):
                self.reinfer(node, types, env)
            if node.op_type == "Constant":
                value = constant_node_value(node)
                env[node.output[0]] = self.constant(b, node.output[0], value, node_name)
                continue
            operands: list[SSAValue] = []
            for name in node.input:
                if name == "":
                    operands.append(self.none())
                elif name in env:
                    operands.append(env[name])
                else:
                    raise ImportError_(f"node '{node_name}' reads undefined tensor '{name}'")
            result_types: list[Attribute] = []
            for name in node.output:
                result_types.append(self.ir_type(name, types) if name else _none_type())
            attrs = _attributes(node, node_name, self.opset, self.store, self.keys)
            regions: list[Region] = []
            if node.op_type in onnx_d.REGION_ATTRS:
                graphs = {a.name: a.g for a in node.attribute if a.type == a.GRAPH}
                for rname in onnx_d.REGION_ATTRS[node.op_type]:
                    if rname not in graphs:
                        raise ImportError_(f"node '{node_name}' ({node.op_type}): no {rname}")
                    regions.append(
                        self.emit_region(
                            node, node_name, rname, graphs[rname], operands, env, types
                        )
                    )
                result_types = _region_result_types(node, node_name, result_types, regions)
                for name, t in zip(node.output, result_types, strict=False):
                    if name and _set_static_type(types, name, t):
                        self.refined.add(name)
            op = onnx_d.create(node.op_type, operands, result_types, attrs, node_name, regions)
            b.insert(op)
            for name, res in zip(node.output, op.results, strict=True):
                if name:
                    res.name_hint = name_hint(name)
                    env[name] = res
        outs: list[SSAValue] = []
        for o in g.output:
            if o.name not in env:
                raise ImportError_(f"graph output '{o.name}' is never produced")
            outs.append(env[o.name])
        return outs

    def reinfer(
        self,
        node: onnx.NodeProto,
        types: ChainMap[str, onnx.TypeProto],
        env: Mapping[str, SSAValue],
    ) -> None:
        """Infer ``node``'s output types again (``onnx.shape_inference.infer_node_outputs``)
        from inputs whose types the import made static after onnx's inference left them
        dynamic (the results of an If or Loop: :func:`_region_result_types`), and mark the
        outputs that became static too. Without it a Loop's result was static and the ops
        after it were not (a ReduceSum of it unranked, an If on that refused)."""
        if node.domain not in ("", "ai.onnx") or node.op_type in onnx_d.REGION_ATTRS:
            return
        inputs: dict[str, onnx.TypeProto] = {}
        for n in node.input:
            if n in types:
                inputs[n] = types[n]
            elif n in env:  # an initializer or a constant: its IR type
                t = env[n].type
                shape = onnx_d.static_shape(t)
                if shape is not None and isinstance(t, TensorType):
                    inputs[n] = onnx.helper.make_tensor_type_proto(
                        onnx_dtype_of(t.element_type), shape
                    )
        out = _infer_node(node, self.opset, inputs, [onnx.helper.make_opsetid("", self.opset)])
        for name, t in out.items():
            if name in types and _static_dims(t) is not None and _static_dims(types[name]) is None:
                types[name] = t
                self.refined.add(name)

    def emit_region(
        self,
        node: onnx.NodeProto,
        node_name: str,
        rname: str,
        g: onnx.GraphProto,
        operands: Sequence[SSAValue],
        env: ChainMap[str, SSAValue],
        types: ChainMap[str, onnx.TypeProto],
    ) -> Region:
        """The region of subgraph ``g`` (attribute ``rname`` of ``node``): block arguments for
        its inputs (typed from the subgraph, else from the node's operands), its nodes, and an
        ``onnx.Yield`` of its outputs."""
        implied = _body_argument_types(node, operands, len(g.input), self.opset)
        local: dict[str, onnx.TypeProto] = {}
        for vi in [*g.input, *g.value_info, *g.output]:
            if vi.type.WhichOneof("value") is not None:
                local[vi.name] = vi.type
        arg_types: list[Attribute] = []
        for k, vi in enumerate(g.input):
            declared = local.get(vi.name)
            received = implied[k]
            if received is None:
                arg_types.append(self.ir_type(vi.name, types.new_child(local)))
                continue
            if declared is not None and declared.HasField("tensor_type"):
                d = self.type_of(vi.name, declared)
                if not onnx_d.fits(received, d):
                    raise ImportError_(
                        f"{node.op_type} node '{node_name}': {rname} input {k} ('{vi.name}') "
                        f"is declared {d} but receives {received}"
                    )
            arg_types.append(received)
        if any(a is not None for a in implied):
            # the body sees the types of the values it receives (the subgraph may declare less):
            # infer its shapes again from those
            named = dict(zip([i.name for i in g.input], arg_types, strict=True))
            local.update(_infer_subgraph(g, named, types, self.opset))
        inner_types = types.new_child(local)
        block = Block(arg_types=arg_types)
        inner_env = env.new_child()
        for vi, arg in zip(g.input, block.args, strict=True):
            arg.name_hint = name_hint(vi.name)
            inner_env[vi.name] = arg
        b = Builder(InsertPoint.at_end(block))
        outs = self.emit_graph(g, b, inner_env, inner_types, f"{node_name}/{rname}/", skip=set())
        b.insert(onnx_d.YieldOp(outs))
        return Region(block)


def _body_argument_types(
    node: onnx.NodeProto, operands: Sequence[SSAValue], n_args: int, opset: int
) -> list[Attribute | None]:
    """Types of a Loop or Scan body's arguments implied by the node's operands (``None`` where
    the subgraph must say): Loop's ``(iteration_num, cond, carried...)``; Scan's states and one
    slice of each scanned input (its scan axis removed; opset 8: the batch axis too)."""
    out: list[Attribute | None] = [None] * n_args
    if node.op_type == "Loop":
        if n_args >= 2:
            out[0] = onnx_d.tensor_type(onnx.TensorProto.INT64, ())
            out[1] = onnx_d.tensor_type(onnx.TensorProto.BOOL, ())
        for k, v in enumerate(operands[2:]):
            if 2 + k < n_args:
                out[2 + k] = v.type
    elif node.op_type == "Scan":
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        m = int(attrs.get("num_scan_inputs", 0))
        batched = opset < 9  # Scan-8: sequence_lens first, a batch axis on every value
        values = list(operands[1:]) if batched else list(operands)
        n = len(values) - m
        axes = list(attrs.get("scan_input_axes", [0] * m))
        for k, v in enumerate(values[: min(len(values), n_args)]):
            t = v.type
            if not isinstance(t, TensorType):
                continue
            shape = list(t.get_shape())
            if k >= n:  # a scanned input: drop the scan axis (and opset 8's batch axis)
                drop = [0, 1] if batched else [axes[k - n] % max(len(shape), 1)]
                shape = [d for i, d in enumerate(shape) if i not in drop]
            elif batched:
                shape = shape[1:]
            out[k] = TensorType(t.element_type, shape)
    return out


def _free_names(g: onnx.GraphProto) -> list[str]:
    """Names ``g`` (and its subgraphs) read without defining them: its outer-scope values."""
    defined = {i.name for i in g.input} | {t.name for t in g.initializer}
    free: dict[str, None] = {}
    for node in g.node:
        for name in node.input:
            if name and name not in defined:
                free.setdefault(name, None)
        for a in node.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                for name in _free_names(a.g):
                    if name not in defined:
                        free.setdefault(name, None)
        defined.update(o for o in node.output if o)
    return list(free)


def _type_proto(t: Attribute) -> onnx.TypeProto:
    assert isinstance(t, TensorType)
    dims = [d if d >= 0 else None for d in t.get_shape()]
    return onnx.helper.make_tensor_type_proto(onnx_dtype_of(t.element_type), dims)


def _infer_subgraph(
    g: onnx.GraphProto,
    arg_types: Mapping[str, Attribute],
    outer: Mapping[str, onnx.TypeProto],
    opset: int,
) -> dict[str, onnx.TypeProto]:
    """ONNX shape inference of subgraph ``g`` as a model of its own, its inputs of
    ``arg_types`` and its outer-scope values of their types in ``outer``: the types of its
    values (``value_info`` and outputs), or ``{}`` if inference fails."""
    sub = onnx.GraphProto()
    sub.CopyFrom(g)
    del sub.input[:]
    del sub.value_info[:]
    for name, t in arg_types.items():
        sub.input.append(onnx.helper.make_value_info(name, _type_proto(t)))
    for name in _free_names(g):
        if name in outer:
            sub.input.append(onnx.helper.make_value_info(name, outer[name]))
    model = onnx.helper.make_model(
        sub, opset_imports=[onnx.helper.make_opsetid("", opset)], ir_version=8
    )
    try:
        inferred = onnx.shape_inference.infer_shapes(model, data_prop=True)
    except Exception:  # noqa: BLE001 - keep the graph-level inference
        return {}
    return {
        vi.name: vi.type
        for vi in [*inferred.graph.value_info, *inferred.graph.output]
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape")
    }


def _static_dims(t: onnx.TypeProto) -> tuple[int, ...] | None:
    """The dimensions of a tensor type whose shape onnx knows entirely, else None."""
    if not t.HasField("tensor_type") or not t.tensor_type.HasField("shape"):
        return None
    dims = t.tensor_type.shape.dim
    return tuple(d.dim_value for d in dims) if all(d.HasField("dim_value") for d in dims) else None


def _with_shape(t: onnx.TypeProto, shape: Sequence[int]) -> onnx.TypeProto:
    """A copy of the tensor type ``t`` with the static ``shape``."""
    new = onnx.TypeProto()
    new.CopyFrom(t)
    new.tensor_type.shape.Clear()
    for d in shape:
        new.tensor_type.shape.dim.add().dim_value = d
    return new


def _infer_node(
    node: onnx.NodeProto,
    opset: int,
    inputs: Mapping[str, onnx.TypeProto],
    opset_imports: Sequence[onnx.OperatorSetIdProto],
) -> dict[str, onnx.TypeProto]:
    """``node``'s output types as onnx's shape inference gives them from ``inputs``; empty
    where it cannot (the graph-level inference then stands for this node)."""
    try:
        schema = onnx.defs.get_schema(node.op_type, opset, "")
        return dict(
            onnx.shape_inference.infer_node_outputs(
                schema, node, dict(inputs), opset_imports=list(opset_imports)
            )
        )
    except Exception:  # noqa: BLE001 - onnx's inference raises its own and others' types
        return {}


def _set_static_type(types: ChainMap[str, onnx.TypeProto], name: str, t: Attribute) -> bool:
    """Record in ``types`` the static shape of the IR type ``t`` of ``name`` where onnx's
    inference left it dynamic or unknown; returns whether it did."""
    shape = onnx_d.static_shape(t)
    old = types.get(name)
    if shape is None or old is None or not old.HasField("tensor_type"):
        return False
    if _static_dims(old) is not None:
        return False
    types[name] = _with_shape(old, shape)
    return True


def _region_result_types(
    node: onnx.NodeProto, node_name: str, types: list[Attribute], regions: Sequence[Region]
) -> list[Attribute]:
    """The result types of an If or Loop from its regions where shape inference left them
    dynamic (If branches of the same static shape), and a clear error for a loop-carried value
    whose shape the body changes."""
    types = list(types)
    if node.op_type == "If":
        then_v = [v.type for v in onnx_d.region_yield(regions[0]).values]
        else_v = [v.type for v in onnx_d.region_yield(regions[1]).values]
        for i, (a, b) in enumerate(zip(then_v, else_v, strict=False)):
            sa, sb = onnx_d.static_shape(a), onnx_d.static_shape(b)
            if sa != sb:
                continue  # the shape depends on the condition: constant folding may pick the
                # branch, else the lowering says so (ramiel.lowering.control_flow)
            if i < len(types) and onnx_d.static_shape(types[i]) is None and sa is not None:
                types[i] = a
    elif node.op_type == "Loop":
        body = regions[0].block
        values = onnx_d.region_yield(regions[0]).values
        n = len(body.args) - 2
        for k in range(min(n, len(values) - 1)):
            before, after = body.args[2 + k].type, values[1 + k].type
            sa, sb = onnx_d.static_shape(before), onnx_d.static_shape(after)
            if sa is not None and sb is not None and sa != sb:
                raise ImportError_(
                    f"Loop node '{node_name}': loop-carried value {k} ('{node.input[2 + k]}') "
                    f"has shape {list(sa)} before the loop and {list(sb)} after an iteration; "
                    "its shape would change from iteration to iteration, and Ramiel compiles "
                    "static shapes"
                )
            if k < len(types) and onnx_d.static_shape(types[k]) is None and sa is not None:
                types[k] = before
    return types


def _correct_inferred_shapes(
    model: onnx.ModelProto, types: dict[str, onnx.TypeProto], opset: int
) -> None:
    """Fix the output shapes onnx shape inference gets wrong, and propagate the fix downstream.

    onnx shape inference before opset 22 counts a pooling window that starts in the end padding
    with ``ceil_mode=1`` (runtimes return the smaller, correct shape), and onnx 1.23 drops
    ``output_shape`` entries equal to 1 of ConvTranspose. The lowering's shape rules
    (:func:`ramiel.lowering.refine_output_shapes`) give the spec's shapes; when one differs, the
    nodes downstream are re-inferred one by one (``onnx.shape_inference.infer_node_outputs``) from
    the corrected types, so that buffers are never sized from a wrong shape.
    """
    if not any(n.op_type in SHAPE_RULE_OPS for n in model.graph.node):
        return
    import ramiel.lowering  # noqa: F401 - registers the shape rules (imports torch: only now)
    from ramiel.lowering.api import (  # lazy: torch
        SHAPE_RULES,
        NodeView,
        TensorInfo,
        attribute_value,
        refine_output_shapes,
    )

    consts = {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer}

    def _unknown(name: str, t: onnx.TypeProto) -> TensorInfo:
        """An output of unknown shape, for the rule to give one."""
        elem = onnx.helper.tensor_dtype_to_np_dtype(t.tensor_type.elem_type).name
        return TensorInfo(name, None, elem, None)

    def info(name: str) -> TensorInfo | None:
        t = types.get(name)
        if not name or t is None or not t.tensor_type.HasField("shape"):
            return None
        shape = _static_dims(t)
        dtype = onnx.helper.tensor_dtype_to_np_dtype(t.tensor_type.elem_type).name
        return TensorInfo(name, shape, dtype, consts.get(name))

    changed: set[str] = set()
    for node in model.graph.node:
        if node.domain not in ("", "ai.onnx"):
            continue
        if changed & set(node.input):
            inputs = {n: types[n] for n in node.input if n in types}
            out = _infer_node(node, opset, inputs, model.opset_import)
            for name, t in out.items():
                if t.tensor_type.HasField("shape"):
                    types[name] = t
                    changed.add(name)
        rule = SHAPE_RULES.get(node.op_type)
        if rule is None:
            continue
        first = types.get(node.input[0]) if node.input else None
        # an output onnx gave no shape (GroupNormalization-21 and MeanVarianceNormalization,
        # whose function bodies it does not infer): the rule's shape, input 0's element type
        missing: dict[str, onnx.TypeProto] = {}
        for name in node.output:
            base = types.get(name) or first
            if not name or info(name) is not None or base is None:
                continue
            t = onnx.TypeProto()
            t.CopyFrom(base)
            if not t.tensor_type.elem_type and first is not None:
                t.tensor_type.elem_type = first.tensor_type.elem_type
            if t.tensor_type.elem_type:  # (no element type known: the output stays unknown)
                missing[name] = t
        view = NodeView(
            op_type=node.op_type,
            name=node.name,
            domain="",
            opset=opset,
            inputs=[info(n) for n in node.input],
            outputs=[info(n) if n not in missing else _unknown(n, missing[n]) for n in node.output],
            attrs={a.name: attribute_value(a) for a in node.attribute},
        )
        refined = refine_output_shapes(view)
        for name, new, old in zip(node.output, refined.outputs, view.outputs, strict=False):
            if new is None or old is None or new.shape is None or new.shape == old.shape:
                continue
            types[name] = _with_shape(missing[name] if name in missing else types[name], new.shape)
            changed.add(name)


def _none_type() -> Attribute:
    return NoneType()


def constant_node_value(node: onnx.NodeProto) -> np.ndarray:
    """The value of an ONNX ``Constant`` node whatever attribute holds it (the import's, and
    :func:`ramiel.dynamic_batch.saturation_constants`'). Raises :class:`UnsupportedOpError` for
    a string, sparse or other attribute kind."""
    a = node.attribute[0]
    kind = a.name
    if kind == "value":
        return onnx.numpy_helper.to_array(a.t)
    if kind == "value_float":
        return np.array(a.f, np.float32)
    if kind == "value_floats":
        return np.array(list(a.floats), np.float32)
    if kind == "value_int":
        return np.array(a.i, np.int64)
    if kind == "value_ints":
        return np.array(list(a.ints), np.int64)
    raise UnsupportedOpError([("Constant", node.name, 0, f"attribute '{kind}'")])


def _attributes(
    node: onnx.NodeProto, node_name: str, opset: int, store: WeightStore | None, keys: set[str]
) -> dict[str, Attribute]:
    info = onnx_d.schema_info(node.op_type, opset)
    assert info is not None
    out: dict[str, Attribute] = {}
    for a in node.attribute:
        spec = info.attributes.get(a.name)
        if spec is None:
            raise ImportError_(
                f"node '{node_name}' ({node.op_type}, opset {opset}): unknown attribute '{a.name}'"
            )
        kind = spec[0]
        if kind == onnx.defs.OpSchema.AttrType.GRAPH:
            continue  # a region of the op (onnx_d.REGION_ATTRS)
        value = onnx.helper.get_attribute_value(a)
        if kind == onnx.defs.OpSchema.AttrType.TENSOR:
            arr = onnx.numpy_helper.to_array(value)
            value = value_attr(arr, resource_key(f"{node_name}.{a.name}", keys), store)
        try:
            out[a.name] = onnx_d.attr_from_python(kind, value)
        except ValueError as e:
            raise UnsupportedOpError(
                [(node.op_type, node_name, opset, f"attribute {a.name}: {e}")]
            ) from None
    return out
