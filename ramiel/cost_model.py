"""Cost model: estimated execution time of ``onnx`` ops and transfer time of tensors, in µs.

Analytic model (the default, deterministic so lit tests can check it)::

    cost_us = OP_OVERHEAD_US + max(flops / flop_rate(op), bytes_moved / MEM_BW)

* ``flops``: 2·MACs for Conv/ConvTranspose/Gemm/MatMul/Einsum/Attention; window size × output elements for
  pooling and LRN; a few per element for element-wise and normalisation ops; 0 for pure data
  movement (Reshape, Transpose, Concat, ...).
* ``bytes_moved``: bytes of all tensor operands and results.
* Rates are per op class (the categories of :mod:`ramiel.dialects.onnx_traits`:
  ``DenseCompute``, ``Pooling``, ``GlobalPooling``, ``DataMovement``; the rest element-wise),
  calibrated with PyTorch 2.13 eager on this project's 2-core machine,
  one intra-op thread (2026-11-29, by hand: no script was kept; ``ramiel profile MODEL -o
  profile.json`` measures each op, against which these rates can be checked): dense conv/GEMM
  ~75 GFLOP/s, memory-bound element-wise ~20 GB/s, ~5 µs of framework overhead per op; 2-D
  max/average pooling ~3.5 G window-elements/s on channels-last tensors plus, outside a
  channels-last region, the two conversions around it, LRN ~1.4 G window-elements/s
  (2026-12-01, ``python bench/layout_ops.py``).

Control flow: an ``onnx.If`` costs its dearer branch, an ``onnx.Loop``/``onnx.Scan`` its body
times its trip count (:func:`region_cost_us`), from the costs of the ops in the regions.

Profiled model: a profile database (JSON written by ``ramiel profile``) maps a key made of op type,
operand shapes/dtypes and attributes to a measured median time in µs; ops missing from it fall back
to the analytic estimate (counted and reported).

Transfer cost of a tensor between clusters (edge weight) = per-message latency + bytes ×
µs-per-byte of the runtime backend (see :mod:`ramiel.runtime.calibrate` for the measurement).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, NoneType, TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from ramiel.dialects.cluster import is_ambient
from ramiel.dialects.onnx import OnnxOp, opset_of, static_shape
from ramiel.dialects.onnx_traits import (
    DataMovement,
    DenseCompute,
    GlobalPooling,
    Pooling,
    has_trait,
)
from ramiel.dtypes import numpy_dtype_of
from ramiel.errors import RamielError
from ramiel.files import input_file, read_json_file
from ramiel.layout import (
    CHANNELS_LAST,
    CONTIGUOUS,
    CONVERT_BW,
    THROUGH_CL_MIN_ELEMENTS,
    has_format,
    layout_of,
    static_shape_of,
    value_format,
)
from ramiel.omp import usable_cores as usable_cores  # re-exported for the compiler's stages

OP_OVERHEAD_US = 5.0
"""Framework overhead per op (Python dispatch + ATen), µs."""

PARALLEL_START_US = 150.0
"""Fixed cost per inference of a program of two or more clusters over one cluster, µs: the
runner hands the inputs to the workers, wakes them and waits for the last. Measured with
``python bench/start_cost.py`` (docs/benchmarks.md, "What starting the workers costs"): two
clusters of one tiny op each on the threads backend against one cluster run inline, 2 cores, AMD
EPYC Zen 4, load 0.88: 143 µs more per call back to back, 176 µs after 5 ms idle pauses. The merge's default choice between one cluster and several
(``--merge{intra-op=true}``) charges it to the clusters, so that a model of a few hundred µs (a
small BERT) is not split: its 2 clusters took 0.52 ms against 0.34 ms for the one."""

MEM_BW = 20e3
"""Sustained memory bandwidth, bytes/µs (20 GB/s)."""

DENSE_RATE = 75e3
"""Conv/GEMM throughput, FLOP/µs (75 GFLOP/s, one thread)."""

POOL_RATE = 300.0
"""LpPool window elements per µs (a padded window sum by convolution)."""

POOL_CL_RATE = 3500.0
"""2-D max/average pooling window elements per µs, on a channels-last tensor (where the lowering
always runs them, see :func:`ramiel.lowering.nn.through_channels_last`): 3x3 max pooling of
(1, 64, 112, 112) and (1, 256, 28, 28), 1.8 M window elements each, measured 0.51 ms (1 thread,
``python bench/layout_ops.py maxpool``)."""

LRN_RATE = 1400.0
"""LRN window elements (outputs x size) per µs, ``ops.lrn``: size 5 on (1, 64, 56, 56) and
(1, 192, 56, 56) measured 0.68 and 2.2 ms (1 thread, ``python bench/layout_ops.py lrn``)."""

ELEMENTWISE_RATE = 2e4
"""Vectorised element-wise arithmetic, FLOP/µs (20 GFLOP/s)."""

Backend = Literal["threads", "processes", "distributed"]
"""The runtime backends (``--estimate-cost{backend=...}``, ``ramiel compile --backend``); the
keys of :data:`TRANSFER_COST`."""

#: (latency µs, µs per byte) per runtime backend: the values of
#: ``ramiel.runtime.calibrate.DEFAULT_TRANSFER_COST`` (measured with ``python
#: bench/transfer_cost.py``), copied here so that the IR passes need not import torch; a test
#: keeps the two equal.
TRANSFER_COST: dict[str, tuple[float, float]] = {
    "threads": (14.2, 1.3e-07),
    "processes": (7.9, 5.9e-05),
    "distributed": (108.7, 4.39e-04),
}


def tensor_bytes(t: Attribute) -> int:
    """Size in bytes of a statically shaped tensor type (0 for ``none`` or dynamic shapes)."""
    if isinstance(t, NoneType) or not isinstance(t, TensorType):
        return 0
    shape = static_shape(t)
    if shape is None:
        return 0
    return math.prod(shape) * numpy_dtype_of(t.element_type).itemsize


def _numel(t: Attribute) -> int:
    s = static_shape(t) if isinstance(t, TensorType) else None
    return math.prod(s) if s is not None else 0


def flops(op: Operation) -> float:
    """Estimated floating-point operations of ``op`` (see the module docstring)."""
    if not isinstance(op, OnnxOp) or not op.results:
        return 0.0
    kind = op.op_type
    out = _numel(op.results[0].type)
    ins = [v.type for v in op.operands]
    if kind in ("Conv", "ConvInteger") and len(ins) >= 2:
        w = static_shape(ins[1]) if isinstance(ins[1], TensorType) else None
        if w is not None:
            return 2.0 * out * math.prod(w[1:])
    if kind == "ConvTranspose" and len(ins) >= 2:
        w = static_shape(ins[1]) if isinstance(ins[1], TensorType) else None
        x = _numel(ins[0])
        if w is not None:
            return 2.0 * x * math.prod(w[1:])
    if kind in ("Gemm", "MatMul", "MatMulInteger", "Einsum") and len(ins) >= 2:
        a = static_shape(ins[0]) if isinstance(ins[0], TensorType) else None
        if a is not None and a:
            k = a[-1]
            if kind == "Gemm" and op.attr("transA", 0):
                k = a[0]
            return 2.0 * out * k
    if kind == "Attention" and len(ins) >= 3:
        q, ks, v = (static_shape(t) if isinstance(t, TensorType) else None for t in ins[:3])
        if q is not None and ks is not None and v is not None and len(q) == 4:
            scores = math.prod(q[:-1]) * ks[-2]  # B * H * S * L
            return 2.0 * scores * (q[-1] + v[-1]) + 8.0 * scores
    if has_trait(kind, Pooling):
        window = op.attr("kernel_shape") or [op.attr("size", 1)]
        return float(out * math.prod(window))
    if has_trait(kind, GlobalPooling):
        return float(_numel(ins[0]))
    if has_trait(kind, DataMovement):
        return 0.0
    if kind in ("Softmax", "LogSoftmax", "LayerNormalization", "BatchNormalization", "Erf", "Gelu"):
        return 8.0 * out
    return float(max(out, _numel(ins[0]) if ins else 0))


def bytes_moved(op: Operation) -> int:
    """Bytes of all tensor operands and results of ``op``."""
    return sum(tensor_bytes(v.type) for v in op.operands) + sum(
        tensor_bytes(r.type) for r in op.results
    )


def trip_count(op: OnnxOp) -> int | None:
    """How many times the body of a Loop or Scan runs, when the IR says: a Scan's scanned
    length; a Loop's static scan-output length, else its constant ``M`` (an upper bound: the
    loop may stop early); ``None`` when unknown."""
    if op.op_type == "Scan":
        m = op.attr("num_scan_inputs", 0)
        scanned = list(op.operands)[len(op.operands) - m :]
        if not scanned:
            return None
        shape = static_shape(scanned[0].type)
        if shape is None:
            return None
        if opset_of(op) < 9:
            return shape[1] if len(shape) > 1 else None  # Scan-8: [batch, sequence, ...]
        axes = op.attr("scan_input_axes") or [0]
        return shape[axes[0] % len(shape)] if shape else None
    if op.op_type != "Loop":
        return None
    n = len(op.operands) - 2
    for r in list(op.results)[n:]:
        shape = static_shape(r.type)
        if shape:
            return shape[0]
    owner = op.operands[0].owner
    if isinstance(owner, OnnxOp) and owner.op_type == "Constant":
        value = owner.properties.get("value")
        if isinstance(value, DenseIntOrFPElementsAttr):
            m = int(value.get_values()[0])
            return m if 0 <= m < 2**31 else None
    return None


def region_cost_us(op: OnnxOp, cost_of: Callable[[Operation], float]) -> float:
    """Estimated µs of a control-flow op from the costs ``cost_of`` gives the ops of its
    regions: the dearer branch of an If; the body times the trip count of a Loop or Scan (once
    when the trip count is unknown), plus the per-op overhead."""
    bodies = [
        sum(
            cost_of(o)
            for o in region.block.ops
            if isinstance(o, OnnxOp) and o.op_type != "Constant"
        )
        for region in op.regions
    ]
    if op.op_type == "If":
        return round(OP_OVERHEAD_US + max(bodies, default=0.0), 3)
    trips = trip_count(op)
    return round(OP_OVERHEAD_US + (1 if trips is None else trips) * sum(bodies), 3)


def analytic_cost_us(op: Operation) -> float:
    """Analytic estimate of ``op``'s execution time in µs (module docstring)."""
    if op.regions and isinstance(op, OnnxOp):
        return region_cost_us(op, analytic_cost_us)
    kind = op.op_type if isinstance(op, OnnxOp) else ""
    f = flops(op)
    extra = 0.0
    if has_trait(kind, DenseCompute):
        rate = DENSE_RATE
    elif kind in ("MaxPool", "AveragePool") and _pools_channels_last(op):
        rate = POOL_CL_RATE
        extra = _pool_conversions_us(op)
    elif kind == "LRN":
        rate = LRN_RATE
    elif has_trait(kind, Pooling):
        rate = POOL_RATE
    else:
        rate = ELEMENTWISE_RATE
    compute = f / rate
    return round(OP_OVERHEAD_US + max(compute, bytes_moved(op) / MEM_BW) + extra, 3)


def conversion_cost_us(shape: tuple[int, ...], itemsize: int = 4) -> float:
    """Estimated µs of one format conversion (a strided copy) of a tensor of ``shape``:
    :data:`OP_OVERHEAD_US` + bytes / :data:`ramiel.layout.CONVERT_BW`."""
    return OP_OVERHEAD_US + math.prod(shape) * itemsize / CONVERT_BW


def conversions_us(op: Operation, sends: dict[str, SSAValue] | None = None) -> float:
    """Estimated µs of the format conversions the lowering places before ``op``: one
    :func:`conversion_cost_us` per run-time operand that :func:`has_format` and whose producer
    computes it in another format than ``op`` (``--estimate-cost`` adds them to the op's cost;
    ``sends``: channel -> sent value, see :func:`ramiel.layout.source_value`)."""
    fmt = layout_of(op)
    total = 0.0
    seen: set[SSAValue] = set()
    for v in op.operands:
        owner = v.owner
        if v in seen or (isinstance(owner, Operation) and is_ambient(owner)):
            continue
        seen.add(v)
        shape = static_shape_of(v)
        if has_format(shape) and value_format(v, sends) != fmt:
            assert shape is not None
            total += conversion_cost_us(shape, _itemsize(v))
    return total


def _itemsize(v: SSAValue) -> int:
    t = v.type
    return numpy_dtype_of(t.element_type).itemsize if isinstance(t, TensorType) else 4


def _pools_channels_last(op: Operation) -> bool:
    """A 2-D pooling of a float tensor (run on channels-last by the lowering)."""
    t = op.operands[0].type if op.operands else None
    if not isinstance(t, TensorType) or len(t.get_shape()) != 4:
        return False
    return numpy_dtype_of(t.element_type).kind == "f"


def _pool_conversions_us(op: Operation) -> float:
    """The conversions to channels-last and back the lowering places around a contiguous
    pooling (see :data:`ramiel.layout.THROUGH_CL_MIN_ELEMENTS`); 0 in a channels-last region."""
    x, y = static_shape(op.operands[0].type), static_shape(op.results[0].type)
    if layout_of(op) == CHANNELS_LAST or x is None or math.prod(x) < THROUGH_CL_MIN_ELEMENTS:
        return 0.0
    return sum(conversion_cost_us(s) for s in (x, y) if s is not None and has_format(s))


#: Intra-op scaling per op class: (parallel efficiency of each extra thread, fixed cost of
#: starting the threads in µs). Fitted to ``ramiel profile --threads 1,2`` of light_inception_v1
#: and light_inception_v2 on this project's 2-core machine (PyTorch 2.13, OpenMP; 2026-11-29):
#: a 6 ms convolution runs 1.7x faster on 2 threads, a 0.1 ms one slower; max pooling 1.9x;
#: element-wise ops 1.5x from ~100 µs; LRN 1.1x; Concat, Reshape and friends not at all.
INTRA_OP_SCALING: dict[str, tuple[float, float]] = {
    "dense": (0.75, 35.0),
    "pool": (0.8, 20.0),
    "lrn": (0.1, 20.0),
    "elementwise": (0.6, 3.0),
    "move": (0.0, 0.0),
}


def _scaling_class(op: Operation) -> str:
    kind = op.op_type if isinstance(op, OnnxOp) else ""
    if has_trait(kind, DenseCompute):
        return "dense"
    if kind == "LRN":
        return "lrn"
    if has_trait(kind, Pooling) or has_trait(kind, GlobalPooling):
        return "pool"
    if has_trait(kind, DataMovement) or not kind:
        return "move"
    return "elementwise"


def intra_op_cost_us(op: Operation, cost_us: float, threads: int) -> float:
    """Analytic estimate of ``op``'s time with ``threads`` intra-op threads, µs, given its
    one-thread cost ``cost_us``: the per-op overhead stays, the rest is divided by
    ``1 + (threads - 1) * efficiency`` and the class's thread start-up cost is added
    (:data:`INTRA_OP_SCALING`). ``threads = 1`` returns ``cost_us``. Ops of the ``move`` class
    never gain."""
    if threads <= 1:
        return cost_us
    eff, start_us = INTRA_OP_SCALING[_scaling_class(op)]
    if eff <= 0.0:
        return cost_us
    fixed = min(OP_OVERHEAD_US, cost_us)
    return round(fixed + (cost_us - fixed) / (1.0 + (threads - 1) * eff) + start_us, 3)


def transfer_cost_us(nbytes: int, backend: str | tuple[float, float] = "threads") -> float:
    """Estimated µs to move a tensor of ``nbytes`` between two clusters on ``backend`` (a
    backend name, or a measured ``(latency µs, µs per byte)`` model)."""
    latency, per_byte = TRANSFER_COST[backend] if isinstance(backend, str) else backend
    return round(latency + nbytes * per_byte, 3)


def load_transfer_cost(path: str) -> tuple[float, float]:
    """``(latency µs, µs per byte)`` from a transfer cost file (JSON written by ``ramiel
    calibrate -o FILE``: ``{"latency_us": L, "us_per_byte": B, ...}``; other keys are notes).

    Raises:
        RamielError: the file cannot be read, is not JSON, or lacks a ``latency_us`` from 0
            to 1e9 or a ``us_per_byte`` from 0 to 1e3.
    """
    data = read_json_file(path, "transfer cost file")
    out = []
    # upper bounds far beyond any machine (1000 s per message, 1 KB/s) that keep every edge's
    # cost finite: 1e308 had overflowed into an error naming an edge, not the file
    for key, most in (("latency_us", 1e9), ("us_per_byte", 1e3)):
        v = data.get(key) if isinstance(data, dict) else None
        if (
            isinstance(v, bool)
            or not isinstance(v, int | float)
            or not math.isfinite(v)
            or not 0 <= v <= most
        ):
            raise RamielError(
                f"transfer cost file {path}: '{key}' must be a number from 0 to {most:g}, got "
                f"{v!r} (write the file with 'ramiel calibrate -o FILE')"
            )
        out.append(float(v))
    return out[0], out[1]


# ---------------------------------------------------------------------------------------------
# Profile database
# ---------------------------------------------------------------------------------------------


def profile_key(op: Operation) -> str:
    """The profile-database key of ``op``: op type, operand types and attributes, as text, and
    ``|channels_last`` for an op that computes in channels-last (``ramiel.layout``)."""
    kind = op.op_type if isinstance(op, OnnxOp) else op.name
    types = ",".join(str(v.type) for v in op.operands)
    attrs = ",".join(f"{k}={v}" for k, v in sorted(op.properties.items()))
    fmt = layout_of(op)
    return f"{kind}({types}){{{attrs}}}" + ("" if fmt == CONTIGUOUS else f"|{fmt}")


def threads_key(key: str, threads: int) -> str:
    """The profile-database key of an op measured with ``threads`` intra-op threads: ``key``
    itself for one thread, ``key@t<threads>`` otherwise."""
    return key if threads == 1 else f"{key}@t{threads}"


#: The largest profile database read (a few hundred bytes per op and thread count).
PROFILE_MAX_BYTES = 1 << 30


PROFILE_MAX_TIME_US = 3.6e9
"""The longest time one op may have in a profile database: an hour, in µs (a larger one is a
broken file, and its makespan would print with hundreds of digits)."""


@dataclass
class ProfileDB:
    """Measured per-op times, µs, keyed by :func:`profile_key` (a JSON file on disk)."""

    path: str
    times: dict[str, float]

    @classmethod
    def load(cls, path: str) -> ProfileDB:
        """The database in ``path`` (JSON: ``{"meta": {...}, "times_us": {key: µs}}``, as
        ``ramiel profile -o`` writes it).

        Raises:
            RamielError: the file is missing or unreadable, not JSON, has no ``times_us``
                object, or a time that is not a number of µs from 0 to
                :data:`PROFILE_MAX_TIME_US`.
        """
        if not os.path.exists(path):
            raise RamielError(
                f"profile database {path} not found (create it with 'ramiel profile')"
            )
        input_file(path, "profile database", max_bytes=PROFILE_MAX_BYTES)
        try:
            with open(path) as f:
                data = json.load(f)
        except (OSError, ValueError) as e:
            raise RamielError(f"profile database {path} is not valid: {e}") from None
        raw = data.get("times_us") if isinstance(data, dict) else None
        if not isinstance(raw, dict):
            raise RamielError(
                f"profile database {path} is not valid: not an object with 'times_us', an object "
                "of per-op times (write it with 'ramiel profile MODEL -o FILE')"
            )
        times: dict[str, float] = {}
        for k, v in raw.items():
            ok = isinstance(v, int | float) and not isinstance(v, bool)
            if not ok or not math.isfinite(v) or not 0 <= v <= PROFILE_MAX_TIME_US:
                raise RamielError(
                    f"profile database {path} is not valid: the time of {k!r} must be a number of "
                    f"µs from 0 to {PROFILE_MAX_TIME_US:g}, got {v!r}"
                )
            times[str(k)] = float(v)
        return cls(path, times)

    def save(self, meta: dict | None = None) -> None:
        with open(self.path, "w") as f:
            json.dump({"meta": meta or {}, "times_us": self.times}, f, indent=1, sort_keys=True)
