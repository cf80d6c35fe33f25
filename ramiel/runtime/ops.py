"""Runtime helpers for ONNX semantics that have no one-line PyTorch equivalent.

Generated modules import this as ``from ramiel.runtime import ops`` and call e.g.
``ops.avg_pool(x, (3, 3), (2, 2), (0, 0, 1, 1), ceil_mode=True)``. Every helper takes tensors plus
*static* Python parameters decided at compile time, computes exactly what the ONNX operator
specification (https://onnx.ai/onnx/operators/) says, and does not modify its inputs.

Layouts follow ONNX: tensors are (N, C, D1, ..., Dn) for pooling/normalisation, and ``pads`` lists
are ``[x1_begin, ..., xn_begin, x1_end, ..., xn_end]`` over the spatial (or all, for Pad) dims.

This module is the one piece of Ramiel a generated sequential module needs at run time, so it
imports torch alone (neither xDSL nor onnx: ``tests/test_module.py`` runs generated modules with
those imports blocked) and stays a module rather than being printed into every file: its
helpers are shared, tested once against the ONNX reference, and many (Resize, the pooling
geometry) are longer than the statements that call them. Tensors a helper makes are made on its
input's device; ``torch.fx.symbolic_trace`` records each helper call as one node (a leaf).
"""

from __future__ import annotations

import contextlib
import functools
import math
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch
import torch.nn.functional as F

from ramiel.omp import usable_cores
from ramiel.shapes import pool_output_size

Tensor = torch.Tensor


# -- element-wise ---------------------------------------------------------------------------------


_THREAD_CAP = threading.local()  # .value: the most threads set_threads may set in this thread


def set_threads(n: int) -> None:
    """``torch.set_num_threads(n)`` for the calling worker's following ops, at most the count the
    runtime allows its cluster (:func:`thread_cap`; outside one, the cores this process may use,
    :func:`ramiel.omp.usable_cores`), and at least 1. The cluster functions of a program
    compiled with ``--cores N`` (``--intra-op-threads``) call it where an op's thread count
    changes. The counts are planned for N cores, and a program run where fewer are usable had
    set them as planned: light_shufflenet in 2 clusters planned for 3 cores took 600 ms per
    inference on 2 cores, against 5 ms for its 1-thread sequential module, and light_squeezenet
    planned for 1000 cores 685 ms against 8 (OpenMP helpers that spin after each parallel
    region, more of them than cores; a fresh-user check, 2026-12-06)."""
    cap = getattr(_THREAD_CAP, "value", None)
    torch.set_num_threads(max(1, min(int(n), usable_cores() if cap is None else cap)))


def thread_cap(cap: int | None) -> contextlib.AbstractContextManager[None]:
    """The most intra-op threads :func:`set_threads` may set in this thread while the block runs
    (``None``: the cores this process may use); the runtime's workers run their cluster
    function under the cap :meth:`ramiel.runtime.Program.thread_caps` gives it."""
    return _ThreadSetting(_THREAD_CAP, "value", cap)


class _ThreadSetting(contextlib.AbstractContextManager[None]):
    """``local.<name>`` set to ``value`` while the block runs (in this thread), then what it was
    (``None`` where it was unset). A class, not a ``contextlib.contextmanager`` generator: the
    runtime enters one per cluster and inference (a generator's set-up and tear-down cost
    25-33 µs per call after a model's inference, measured on light_squeezenet)."""

    __slots__ = ("_local", "_name", "_value", "_outer")

    def __init__(self, local: threading.local, name: str, value: Any):
        self._local, self._name, self._value = local, name, value

    def __enter__(self) -> None:
        self._outer = getattr(self._local, self._name, None)
        setattr(self._local, self._name, self._value)

    def __exit__(self, *exc: object) -> None:
        setattr(self._local, self._name, self._outer)


def shrink(x: Tensor, lambd: float, bias: float) -> Tensor:
    """Shrink: ``x + bias`` where ``x < -lambd``, ``x - bias`` where ``x > lambd``, else 0."""
    zero = torch.zeros((), dtype=x.dtype, device=x.device)
    return torch.where(x < -lambd, x + bias, torch.where(x > lambd, x - bias, zero))


def div_uint64(a: Tensor, b: Tensor) -> Tensor:
    """Unsigned 64-bit division ``a // b`` of uint64 tensors (broadcasting), which torch lacks.

    Computed on the int64 reinterpretation of the bits (Hacker's Delight, 2nd ed., 9-3): a divisor
    of 2**63 or more gives 0 or 1 (``a >= b`` unsigned, comparing with the sign bits flipped);
    otherwise ``q = ((a >> 1) // b) << 1`` (``a >> 1`` logical, so both are non-negative) is the
    quotient or one less, and one more when the remainder ``a - q * b`` (exact modulo 2**64: torch's
    int64 arithmetic wraps) is still ``>= b``. Division by zero raises, as for other integers.
    """
    x, y = torch.broadcast_tensors(a.view(torch.int64), b.view(torch.int64))
    sign = -(2**63)
    big = y < 0
    divisor = torch.where(big, 1, y)
    q = torch.div((x >> 1) & (2**63 - 1), divisor, rounding_mode="floor") << 1
    r = x - q * divisor
    q = q + ((r ^ sign) >= (divisor ^ sign)).to(torch.int64)
    q = torch.where(big, ((x ^ sign) >= (y ^ sign)).to(torch.int64), q)
    return q.view(torch.uint64)


def cast_e8m0(x: Tensor, saturate: bool = True, round_mode: str = "up") -> Tensor:
    """Cast to FLOAT8E8M0 (``torch.float8_e8m0fnu``: a biased power-of-two exponent, 0xFF NaN).

    The value's float32 exponent field, rounded by ``round_mode`` by its 23 fraction bits: ``up``
    adds one when any is set, ``down`` truncates, ``nearest`` adds one when the first is set and
    any other is, or the exponent field is nonzero (the rule of the ONNX reference,
    ``onnx.numpy_helper.to_float8e8m0``). A rounding that would pass E8M0_MAX (2**127, 0xFE) stays
    there with ``saturate``, else becomes NaN. NaN stays NaN; ±inf is E8M0_MAX with ``saturate``,
    else NaN (the Cast spec's table; onnx's reference gives NaN for both). The sign is ignored
    (negative inputs are unspecified by the spec); 0 and values below 2**-127 give 0x00
    (2**-127, E8M0_MIN). torch's own cast rounds differently, hence this helper.
    """
    bits = x.to(torch.float32).view(torch.int32)
    exponent = (bits >> 23) & 0xFF
    fraction = bits & 0x7FFFFF
    special = exponent == 0xFF
    if round_mode == "up":
        carry = fraction != 0
    elif round_mode == "nearest":
        first = (fraction & 0x400000) != 0
        carry = first & (((fraction & 0x3FFFFF) != 0) | (exponent > 0))
    elif round_mode == "down":
        carry = torch.zeros_like(special)
    else:
        raise ValueError(f"round_mode {round_mode!r}: expected 'up', 'down' or 'nearest'")
    carry = carry & ~special
    if saturate:
        carry = carry & (exponent != 0xFE)
    out = exponent + carry.to(torch.int32)
    if saturate:
        out = torch.where(special & (fraction == 0), 0xFE, out)
    return out.to(torch.uint8).view(torch.float8_e8m0fnu)


# -- convolution ------------------------------------------------------------------------------------

#: The packed copies :func:`conv2d_prepacked` and :func:`matmul_prepacked` keep of each weight
#: tensor (weight -> {key: packed copy}; per process: each process has its own tensor objects).
#: Not an attribute of the weight: ``copy.deepcopy``, pickle and ``torch.save`` of a module copy a
#: tensor's ``__dict__``, and a packed copy (an mkldnn ``OpaqueTensorImpl``) has no storage to
#: copy, so a module could not be copied after its first call.
#: Keyed by ``id(weight)`` with a weak reference to check it (a ``WeakKeyDictionary`` compares
#: two references to one tensor with the tensor's ``==``); an entry goes when its weight does.
_PACKED: dict[int, tuple[weakref.ref[Tensor], dict[Any, Tensor]]] = {}


def packed_copies(weight: Tensor) -> dict[Any, Tensor]:
    """The packed copies of ``weight`` made so far in this process (empty: none), keyed as
    :func:`_packed` keys them."""
    return dict(_packed_cache(weight) or {})


def _packed_cache(weight: Tensor) -> dict[Any, Tensor] | None:
    entry = _PACKED.get(id(weight))
    return entry[1] if entry is not None and entry[0]() is weight else None


def _keep_packed(weight: Tensor, cache: dict[Any, Tensor]) -> None:
    key = id(weight)
    entry = _PACKED.get(key)
    if entry is None or entry[0]() is not weight:
        weakref.finalize(weight, _PACKED.pop, key, None)
    _PACKED[key] = (weakref.ref(weight), cache)


_ONEDNN = torch.backends.mkldnn.is_available()
"""Whether this PyTorch build has oneDNN (fixed at build time; asking costs 0.5 µs a call)."""

_is_functional = torch._C._functorch.is_functionaltensor


def _eager_onednn(x: Tensor, weight: Tensor) -> bool:
    """Whether a prepacked helper may run its oneDNN op on ``x`` and the constant ``weight``: not
    under tracing or compiling (dynamo, ``torch.export``, ``torch.jit.trace``, ``torch.fx``: they
    see the readable op and plain weights; inductor's freezing packs on its own), plain tensors
    (not a Parameter, a fake or functional tensor, an fx Proxy), on the CPU, float32, no autograd
    recording (the oneDNN ops have no backward), oneDNN available, and a ``weight`` that is not
    an inference tensor (made under ``torch.inference_mode``: it has no version counter, so an
    in-place write to it could not repack; the generated loaders make plain tensors even under
    inference mode)."""
    return not (  # every call of a prepacked op asks: the cheap tests (0.1 µs each) only
        torch.compiler.is_compiling()
        or torch.jit.is_tracing()
        or type(x) is not torch.Tensor
        or type(weight) is not torch.Tensor
        or not x.is_cpu
        or x.dtype != torch.float32
        or weight.dtype != torch.float32
        or (torch.is_grad_enabled() and (x.requires_grad or weight.requires_grad))
        or not _ONEDNN
        or weight.is_inference()
        or _is_functional(x)  # under records_autograd's functionalize: autograd records above
    )


def records_autograd(*inputs: object) -> bool:
    """Whether autograd records a call of a generated module on ``inputs`` (its graph inputs):
    grad mode is on and one of them is a plain tensor that requires grad, outside tracing and
    compiling (``torch.compile`` and ``torch.export`` functionalize on their own; ``torch.fx``
    passes Proxies) and outside :func:`torch.func.functionalize`.

    A sequential module whose ``forward`` writes intermediate results in place (``--inplace``:
    ``x.add_(y)``, ``torch.relu_(x)``) starts with ``if ops.records_autograd(<inputs>): return
    torch.func.functionalize(type(self).forward)(self, <inputs>)``: the in-place statements then
    run as copies, because autograd's saved results (a Sigmoid's output, which a later
    ``add_`` overwrote) would fail ``backward()``. Without autograd the module runs in place as
    printed. Not a ``torch.fx`` leaf: it is plain Python, false on a Proxy, so that
    ``symbolic_trace`` follows the straight-line code."""
    if not torch.is_grad_enabled() or torch.compiler.is_compiling() or torch.jit.is_tracing():
        return False
    return any(
        type(t) is torch.Tensor and t.requires_grad and not _is_functional(t) for t in inputs
    )


def _packed(weight: Tensor, shape_key: object, make: Callable[[], Tensor]) -> Tensor:
    """The packed copy of ``weight`` for ``shape_key`` (an input shape, a row count), made by
    ``make`` on first use and kept for ``weight`` (in :data:`_PACKED`), keyed also by
    the calling thread's intra-op thread count (``torch.get_num_threads()``), its version counter
    and storage, so that an in-place write or another tensor repacks; the copies of an older
    version are dropped.

    Why the thread count: oneDNN chooses the blocked kernel layout for the thread count it is
    created with, and a kernel packed at one count ran 1.6-2.4x slower at another. Measured
    (``python bench/thread_count_order.py ramiel_inception --order 2,1,2,1`` and ``--order
    1,2,1,2``, 2026-12-03, AMD EPYC, 2 cores; the table in ``docs/benchmarks.md``, "Packed kernels
    per thread count"): keyed without the count, 1 thread took 87-90 ms after 2 threads had
    packed, 37 ms when it ran first; 2 threads 58-69 ms after 1, 27-33 ms first; without
    ``--prepack-conv`` the order does not matter. A process that runs a model at two counts (the threads backend's 1-thread
    workers and ``model.sequential`` at 2, or ``torch.set_num_threads`` between calls) packs once
    per count."""
    key = (shape_key, torch.get_num_threads(), weight._version, weight.data_ptr())
    cache = _packed_cache(weight)
    packed = None if cache is None else cache.get(key)
    if packed is None:
        with torch.no_grad():
            packed = make()
        cache = {k: v for k, v in (cache or {}).items() if k[2:] == key[2:]}
        cache[key] = packed
        _keep_packed(weight, cache)
    return packed


def _channel_slice(x: Tensor) -> bool:
    """Whether ``x`` is a channels-last view that is not dense: a part of a channels-last tensor
    split along the channels (``--combine-parallel-convs``), strides ``(H*W*C, 1, W*C, C)`` with
    ``C`` larger than its channel count. oneDNN copies such an input itself; copying it first
    measured 5.8 µs against 20 µs more inside (64 of 192 channels at 28x28, 1 thread)."""
    if x.dim() != 4 or x.stride(1) != 1 or x.is_contiguous(memory_format=torch.channels_last):
        return False
    n, c, h, w = x.shape
    s0, _, s2, s3 = x.stride()
    return s3 >= c and s2 >= s3 * w and s0 >= s2 * h


def conv2d_prepacked(
    x: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Sequence[int] = (1, 1),
    padding: Sequence[int] = (0, 0),
    dilation: Sequence[int] = (1, 1),
    groups: int = 1,
    activation: str = "none",
) -> Tensor:
    """``F.conv2d(x, weight, bias, stride, padding, dilation, groups)``, then ``torch.relu`` when
    ``activation`` is ``"relu"`` (``"none"``: nothing), run by oneDNN with the kernel reordered
    once into its blocked format.

    x: (N, C, H, W) float32, channels-last; weight: (O, C / groups, kH, kW); bias: (O,) or None;
    returns (N, O, H', W') in x's memory format. The reordered kernel
    (``torch.ops.mkldnn._reorder_convolution_weight``, what inductor's freezing emits for a
    frozen convolution) is an opaque mkldnn tensor that cannot be a buffer or live in a weights
    file, so it is made on the first call for an input shape and kept on ``weight`` itself
    (in :data:`_PACKED`, not on the tensor: the module stays copyable): once per process and
    kernel, redone when the kernel is written in place (its version counter) or replaced
    (another tensor); each worker process of the processes backend packs its own. A write that
    bypasses the version counter (through ``weight.numpy()`` or ``weight.data``) is not seen:
    the old packed kernel stays in use until the next in-place torch op on ``weight``
    (``load_state_dict`` copies in place, and repacks).
    The convolution and its bias are one ``torch.ops.mkldnn._convolution_pointwise`` call, and
    the Relu is ``torch.relu_`` on its result, not oneDNN's post-op: that one turns NaN into 0,
    where ONNX's Relu, eager PyTorch and onnxruntime keep NaN (found by a fresh-user check);
    apart, the Relu cost 0.3-1.2 % of light_inception_v2's, light_squeezenet's and
    light_resnet50's inference at 1 thread (in-model, interleaved, load 1.7-1.9). Under
    tracing or compiling, for Parameters, autograd, other devices or dtypes and contiguous
    inputs it is the plain ``F.conv2d`` (see :func:`_eager_onednn`), so ``torch.fx``,
    ``torch.export`` and ``torch.compile`` see the readable op.

    ``--prepack-conv`` (:mod:`ramiel.passes.prepack_conv`, with the measurements) prints it
    for every channels-last convolution with a constant kernel on a map of more than one
    position, grouped and depthwise ones included: all kinds measured 0.46-1.00x the time of
    ``F.conv2d`` on the same channels-last input.

    Raises ``ValueError`` for an ``activation`` other than ``"none"`` or ``"relu"``.
    """
    if activation not in ("none", "relu"):
        raise ValueError(
            f"conv2d_prepacked: activation must be 'none' or 'relu', not {activation!r}"
        )
    # The plain F.conv2d where _eager_onednn says no, or on an input that is not 4-D
    # channels-last (where the packed kernel was measured slower). Each test runs on every call
    # (this wrapper cost 7.6 µs before its tests were made cheap, against 24 µs for oneDNN's
    # whole call on a tiny convolution).
    dense = x.is_contiguous(memory_format=torch.channels_last)
    if not dense and not torch.jit.is_tracing() and _channel_slice(x):  # (traced: F.conv2d)
        x = x.contiguous(memory_format=torch.channels_last)  # a Split part: 5 µs, not 20 inside
        dense = True
    if not dense or x.dim() != 4 or not _eager_onednn(x, weight):
        y = F.conv2d(x, weight, bias, stride, padding, dilation, groups)
        return torch.relu_(y) if activation == "relu" else y
    shape = x.shape
    packed = _packed(
        weight,
        shape,
        lambda: torch.ops.mkldnn._reorder_convolution_weight(
            weight.contiguous(), padding, stride, dilation, groups, shape
        ),
    )
    y = torch.ops.mkldnn._convolution_pointwise(
        x, packed, bias, padding, stride, dilation, groups, "none", (), ""
    )
    return torch.relu_(y) if activation == "relu" else y  # NaN stays NaN (see the docstring)


def _plain_matmul(x: Tensor, weight: Tensor) -> bool:
    """Whether :func:`matmul_prepacked` must run the plain ``torch.matmul``: where
    :func:`_eager_onednn` says no, or for operands that are not (..., K) @ (K, N)."""
    return (
        not _eager_onednn(x, weight)
        or x.dim() < 2
        or weight.dim() != 2
        or x.shape[-1] != weight.shape[0]
    )


def matmul_prepacked(
    x: Tensor, weight: Tensor, bias: Tensor | None = None, activation: str = "none"
) -> Tensor:
    """``torch.matmul(x, weight)`` for a constant ``weight``, plus ``bias`` when given, then
    ``torch.relu`` when ``activation`` is ``"relu"`` (``"none"``: nothing), run by oneDNN with
    ``weight`` reordered once into its blocked format.

    x: (..., K) float32; weight: (K, N) float32; bias: (N,) (leading 1s allowed: (1, N),
    (1, 1, N)) or None; returns (..., N), contiguous, a new tensor. The plain product (MKL's
    ``cblas_sgemm``) copies the weight into its packed panels on every call, which costs about
    as much as the product itself when x has few rows (a batch-1 transformer's 32 tokens
    against a 768x3072 weight). The reordered weight
    (``torch.ops.mkldnn._reorder_linear_weight`` of the (N, K) transpose, what inductor's
    freezing emits for a frozen linear layer; an opaque mkldnn tensor that cannot be a buffer or
    live in a weights file) is made on the first call for a row count and kept on ``weight``
    itself, as :func:`conv2d_prepacked` keeps its kernel: once per process and weight, redone
    when the weight is written in place or replaced (not through ``weight.numpy()`` or
    ``weight.data``, as there); each worker process of the processes backend packs its own. The
    product and the bias are one ``torch.ops.mkldnn._linear_pointwise`` call, the Relu
    ``torch.relu_`` on its result (oneDNN's Relu post-op turns NaN into 0: see
    :func:`conv2d_prepacked`). Under tracing or
    compiling, for Parameters, autograd, other devices or dtypes it is the plain
    ``torch.matmul`` then ``add_`` and ``torch.relu_`` (see :func:`_plain_matmul`), so
    ``torch.fx``, ``torch.export`` and ``torch.compile`` see the readable ops.

    ``--prepack-matmul`` (:mod:`ramiel.passes.prepack_matmul`, with the measurements) prints it
    for the large products with a constant 2-D weight, with the bias Add and Relu that alone
    read the product: the oneDNN op makes its primitive on every call (about 30 µs), which
    small products do not amortise.

    Raises ``ValueError`` for an ``activation`` other than ``"none"`` or ``"relu"``.
    """
    if activation not in ("none", "relu"):
        raise ValueError(
            f"matmul_prepacked: activation must be 'none' or 'relu', not {activation!r}"
        )
    if _plain_matmul(x, weight) or (
        bias is not None and (bias.dtype != torch.float32 or bias.numel() != weight.shape[1])
    ):
        y = torch.matmul(x, weight)
        if bias is not None:
            y = y + bias if y.requires_grad or bias.requires_grad else y.add_(bias)
        if activation == "relu":
            return torch.relu(y) if y.requires_grad else torch.relu_(y)
        return y
    rows = x.numel() // x.shape[-1]
    packed = _packed(
        weight, rows, lambda: torch.ops.mkldnn._reorder_linear_weight(weight.t().contiguous(), rows)
    )
    if bias is not None:
        bias = bias.reshape(-1)
    y = torch.ops.mkldnn._linear_pointwise(x.contiguous(), packed, bias, "none", [], "")
    return torch.relu_(y) if activation == "relu" else y  # NaN stays NaN (as conv2d_prepacked)


def conv1x1_grouped(x: Tensor, weight: Tensor, bias: Tensor | None, groups: int) -> Tensor:
    """``F.conv2d(x, weight, bias, groups=groups)`` for a 1x1 kernel, stride 1 and no padding,
    as one batched matrix product per group: ``y[g] = weight[g] @ x[g]`` over the pixels.

    x: (N, C, H, W); weight: (O, C / groups, 1, 1); bias: (O,) or None; returns (N, O, H, W)
    contiguous. For N = 1 every reshape is a view and the bias is added by ``torch.baddbmm``
    (no copy); for N > 1 the pixels of the batch are gathered per group first.

    Measured (1 thread, thread CPU time, light_shufflenet's grouped 1x1 convolutions, groups=4,
    contiguous input; 2026-12-01, load 6): (1, 272, 14, 14) -> 272 channels 121 µs against 159 µs
    for ``F.conv2d``, (1, 24, 56, 56) -> 112: 155 vs 265 µs, (1, 544, 7, 7) -> 544: 129 vs 163 µs;
    all 32 of light_shufflenet's: 3.5 ms against 6.1 ms (``F.conv2d`` on a channels-last input:
    6.9 ms).
    """
    n, c, h, w = x.shape
    o = weight.shape[0]
    cg, og = c // groups, o // groups
    xg = x.reshape(n, groups, cg, h * w).permute(1, 2, 0, 3).reshape(groups, cg, n * h * w)
    wg = weight.reshape(groups, og, cg)
    y = torch.bmm(wg, xg) if bias is None else torch.baddbmm(bias.reshape(groups, og, 1), wg, xg)
    return y.reshape(groups, og, n, h, w).permute(2, 0, 1, 3, 4).reshape(n, o, h, w).contiguous()


# -- pooling ----------------------------------------------------------------------------------------


def to_float32_round_to_odd(x: Tensor) -> Tensor:
    """float64 -> float32 rounded to odd: truncated toward zero, the last fraction bit set when
    the value was not exact (Boldo and Melquiond, "When double rounding is odd", 2005).

    A float64 cast to float8 goes through float32 in torch's cast (and numpy's): rounding twice
    to nearest can miss the nearest float8 value (x = 400 * (1 + 2**-40) gave 384, not 416, in
    float8_e4m3fn). Rounded to odd first, the second rounding (to <= 10 fraction bits, far below
    float32's 23 - 1) is the correct one. NaN and ±inf pass through; values beyond float32's range
    become ±FLT_MAX (then the float8 cast saturates or overflows by its own rule).
    """
    y = x.to(torch.float32)
    back = y.to(torch.float64)
    y = torch.where(back.abs() > x.abs(), torch.nextafter(y, torch.zeros_like(y)), y)
    inexact = (y.to(torch.float64) != x) & ~torch.isnan(x)
    return (y.view(torch.int32) | inexact.to(torch.int32)).view(torch.float32)


def _pad_list(begin: Sequence[int], end: Sequence[int]) -> list[int]:
    out: list[int] = []
    for b, e in zip(reversed(begin), reversed(end), strict=True):
        out += [int(b), int(e)]
    return out


def _window_sum(
    x: Tensor, kernel: Sequence[int], strides: Sequence[int], dil: Sequence[int]
) -> Tensor:
    """Sum over every (dilated) pooling window of ``x`` (N, C, *spatial), no padding."""
    n = len(kernel)
    lead = x.shape[:2]
    flat = x.reshape(-1, 1, *x.shape[2:])
    ones = torch.ones((1, 1, *kernel), dtype=x.dtype, device=x.device)
    conv = (F.conv1d, F.conv2d, F.conv3d)[n - 1]
    y = conv(flat, ones, stride=tuple(strides), dilation=tuple(dil))
    return y.reshape(*lead, *y.shape[2:])


def _pool_pads(
    spatial: Sequence[int],
    kernel: Sequence[int],
    strides: Sequence[int],
    pads: Sequence[int],
    dil: Sequence[int],
    ceil_mode: bool,
) -> tuple[list[int], list[int], list[int]]:
    """(begin pads, given end pads, end pads the windows actually need — may be smaller: a crop)."""
    n = len(kernel)
    begin, end = list(pads[:n]), list(pads[n:])
    need = []
    for i in range(n):
        o = pool_output_size(spatial[i], kernel[i], strides[i], dil[i], begin[i], end[i], ceil_mode)
        need.append((o - 1) * strides[i] + (kernel[i] - 1) * dil[i] + 1 - spatial[i] - begin[i])
    return begin, end, need


def avg_pool(
    x: Tensor,
    kernel: Sequence[int],
    strides: Sequence[int],
    pads: Sequence[int],
    dilations: Sequence[int] | None = None,
    ceil_mode: bool = False,
    count_include_pad: bool = False,
) -> Tensor:
    """AveragePool with any pads, dilations and ceil_mode (ONNX AveragePool-19).

    Each output is the mean of its window's elements that lie inside the input (and inside the
    pads when ``count_include_pad``); elements of a ceil-mode window beyond the end pad never count.
    """
    n = len(kernel)
    dil = list(dilations or [1] * n)
    begin, end, need = _pool_pads(x.shape[2:], kernel, strides, pads, dil, ceil_mode)
    xp = F.pad(x, _pad_list(begin, need))
    ones = torch.ones((1, 1, *x.shape[2:]), dtype=x.dtype, device=x.device)
    mask = F.pad(ones, _pad_list(begin, end), value=1.0 if count_include_pad else 0.0)
    mask = F.pad(mask, _pad_list([0] * n, [q - e for q, e in zip(need, end, strict=True)]))
    return _window_sum(xp, kernel, strides, dil) / _window_sum(mask, kernel, strides, dil)


def lp_pool(
    x: Tensor,
    kernel: Sequence[int],
    strides: Sequence[int],
    pads: Sequence[int],
    p: int = 2,
    dilations: Sequence[int] | None = None,
    ceil_mode: bool = False,
) -> Tensor:
    """LpPool: ``(sum over the window of |x|^p)^(1/p)``, pads adding zeros (ONNX LpPool-18)."""
    n = len(kernel)
    dil = list(dilations or [1] * n)
    begin, _, need = _pool_pads(x.shape[2:], kernel, strides, pads, dil, ceil_mode)
    xp = F.pad(x.abs().pow(p), _pad_list(begin, need))
    return _window_sum(xp, kernel, strides, dil).pow(1.0 / p)


def max_pool_indices(indices: Tensor, input_shape: Sequence[int], storage_order: int = 0) -> Tensor:
    """Turn torch's per-plane max-pool indices into ONNX MaxPool's Indices output.

    torch numbers the elements of each (n, c) plane; ONNX numbers the whole input tensor,
    row-major (``storage_order=0``) or, for 2-D pooling, column-major within the plane
    (``storage_order=1``: ``h + w * H``).
    """
    plane = math.prod(input_shape[2:])
    nc = input_shape[0] * input_shape[1]
    offset = torch.arange(0, nc * plane, plane, dtype=torch.int64, device=indices.device)
    offset = offset.reshape(*input_shape[:2], *([1] * (len(input_shape) - 2)))
    if storage_order == 1:
        height, width = input_shape[2], input_shape[3]
        indices = (indices % width) * height + indices // width
    return indices + offset


# -- normalisation ------------------------------------------------------------------------------


_OPAQUE = threading.local()  # .on: a trace for oneDNN Graph is being made in this thread
# The torch.library.Library that defines ramiel::lrn, kept alive (its collection would remove
# the op under the traces that call it: a segfault). Taken over by importlib.reload, which runs
# this module again in the same namespace (found by a fresh-user check).
_OPAQUE_LIB: list[Any] = globals().get("_OPAQUE_LIB", [])


@contextlib.contextmanager
def opaque_to_fusion() -> Iterator[None]:
    """While a compiled segment is traced for oneDNN Graph fusion
    (:mod:`ramiel.runtime.compiled`), :func:`lrn` is recorded as one opaque op,
    ``ramiel::lrn`` (a ``torch.library`` op that runs :func:`lrn`'s statements), instead of its
    statements: fused, they ran 4-5x slower than eager (the channel-window sum of slices on the
    NHWC view), so they stay outside the fusion's partitions. Measured in-model, 1 thread,
    fused against eager (both under load): light_inception_v1 103.7 against 117.7 ms,
    light_bvlc_alexnet 42.2 against 48.0 ms, light_zfnet512 80.8 against 85.5 ms."""
    with _ThreadSetting(_OPAQUE, "on", True):
        yield


def _lrn_op() -> Callable[..., Tensor]:
    """``torch.ops.ramiel.lrn``, defined on first use (see :func:`opaque_to_fusion`)."""
    if not _OPAQUE_LIB and not hasattr(torch.ops.ramiel, "lrn"):  # (else: another copy's)
        lib = torch.library.Library("ramiel", "FRAGMENT")
        lib.define("lrn(Tensor x, int size, float alpha, float beta, float bias) -> Tensor")
        lib.impl("lrn", _lrn, "CPU")
        _OPAQUE_LIB.append(lib)
    return torch.ops.ramiel.lrn


def lrn(x: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, bias: float = 1.0) -> Tensor:
    """LRN (ONNX LRN-13): ``x / (bias + alpha / size * square_sum) ** beta`` where ``square_sum``
    adds x² over channels ``[c - floor((size - 1) / 2), c + ceil((size - 1) / 2)]``.

    The window sum is ``size - 1`` additions of shifted slices of the zero-padded squares along
    the channel dim (on the NHWC view of a channels-last tensor, whose channels are innermost),
    into one fresh buffer; ``** -0.75`` (the usual beta) is ``rsqrt(t) * sqrt(rsqrt(t))``. The
    result has the memory format of ``x``. Measured against ``F.local_response_norm`` (a
    ``(size, 1, 1)`` ``avg_pool3d`` of the squares, then ``pow``) with ``python
    bench/layout_ops.py lrn`` (``bench/results/layout_ops.txt``). Traced for oneDNN Graph
    fusion, one opaque op (:func:`opaque_to_fusion`).
    """
    if getattr(_OPAQUE, "on", False) and torch.jit.is_tracing() and x.device.type == "cpu":
        return _lrn_op()(x, size, float(alpha), float(beta), float(bias))
    return _lrn(x, size, alpha, beta, bias)


def _lrn(x: Tensor, size: int, alpha: float, beta: float, bias: float) -> Tensor:
    """:func:`lrn`'s statements."""
    front, back = (size - 1) // 2, size - 1 - (size - 1) // 2
    c = x.shape[1]
    v, dim = x, 1
    if (
        x.dim() == 4
        and not x.is_contiguous()
        and x.is_contiguous(memory_format=torch.channels_last)
    ):
        v, dim = x.permute(0, 2, 3, 1), 3
    sq = v * v
    sqp = F.pad(sq, [0, 0] * (v.dim() - 1 - dim) + [front, back]) if size > 1 else sq
    total = (
        sqp.narrow(dim, 0, c).clone()
        if size == 1
        else sqp.narrow(dim, 0, c) + sqp.narrow(dim, 1, c)
    )
    for i in range(2, size):
        total.add_(sqp.narrow(dim, i, c))
    t = total.mul_(alpha / size).add_(bias)
    if beta == 0.75:
        r = t.rsqrt_()
        # in place only where autograd does not record: sqrt saves r for its backward
        y = v * (r * r.sqrt() if r.requires_grad else r.mul_(r.sqrt()))
    elif beta == 0.5:
        y = v * t.rsqrt_()
    else:
        y = v / t.pow_(beta)
    return y.permute(0, 3, 1, 2) if dim == 3 else y


def batch_norm_training(
    x: Tensor,
    scale: Tensor,
    bias: Tensor,
    running_mean: Tensor,
    running_var: Tensor,
    eps: float,
    momentum: float,
) -> tuple[Tensor, Tensor, Tensor]:
    """BatchNormalization-15 with ``training_mode=1``: normalise with the batch statistics over
    all dims but 1 (population variance) and return ``(Y, running_mean', running_var')`` with
    ``running' = running * momentum + batch * (1 - momentum)``."""
    dims = [0, *range(2, x.dim())]
    mean = x.mean(dim=dims)
    var = x.var(dim=dims, unbiased=False)
    y = F.batch_norm(x, mean, var, scale, bias, training=False, eps=eps)
    new_mean = running_mean * momentum + mean * (1 - momentum)
    new_var = running_var * momentum + var * (1 - momentum)
    return y, new_mean, new_var


def _stash(x: Tensor) -> Tensor:
    return x.float() if x.dtype in (torch.float16, torch.bfloat16) else x


def layer_norm(
    x: Tensor, scale: Tensor, bias: Tensor | None, axis: int, eps: float
) -> tuple[Tensor, Tensor, Tensor]:
    """LayerNormalization-17 with broadcasting scale/bias: returns ``(Y, Mean, InvStdDev)``, the
    statistics over dims ``axis..`` kept as size 1 (computed in float32 for 16-bit inputs)."""
    dims = tuple(range(axis if axis >= 0 else axis + x.dim(), x.dim()))
    xs = _stash(x)
    mean = xs.mean(dim=dims, keepdim=True)
    diff = xs - mean
    inv_std = torch.rsqrt((diff * diff).mean(dim=dims, keepdim=True) + eps)
    y = (diff * inv_std).to(x.dtype) * scale
    if bias is not None:
        y = y + bias
    return y, mean, inv_std


def rms_norm(x: Tensor, scale: Tensor, axis: int, eps: float) -> Tensor:
    """RMSNormalization-23 with a broadcasting scale: ``x / sqrt(mean(x², dims axis..) + eps) *
    scale`` (statistics in float32 for 16-bit inputs)."""
    dims = tuple(range(axis if axis >= 0 else axis + x.dim(), x.dim()))
    xs = _stash(x)
    y = xs * torch.rsqrt((xs * xs).mean(dim=dims, keepdim=True) + eps)
    return y.to(x.dtype) * scale


def mean_variance_normalization(x: Tensor, axes: Sequence[int]) -> Tensor:
    """MeanVarianceNormalization-13: ``(x - E[x]) / (sqrt(E[x²] - E[x]²) + 1e-9)`` over ``axes``."""
    dims = tuple(axes)
    mean = x.mean(dim=dims, keepdim=True)
    std = ((x * x).mean(dim=dims, keepdim=True) - mean * mean).sqrt()
    return (x - mean) / (std + 1e-9)


def hardmax(x: Tensor, dim: int) -> Tensor:
    """Hardmax along ``dim``: 1 at the first maximum, 0 elsewhere."""
    idx = torch.argmax(x, dim=dim, keepdim=True)
    return torch.zeros_like(x).scatter_(dim, idx, 1)


# -- Resize -----------------------------------------------------------------------------------------


def _source_coords(
    mode: str, out_len: int, in_len: int, scale: float, roi: tuple[float, float] | None
) -> tuple[list[float], list[bool]]:
    """Input coordinate of every output index (ONNX Resize ``coordinate_transformation_mode``)
    and whether it lies outside the input (tf_crop_and_resize only), in float64.

    As the spec defines them, ``length_resized`` (align_corners, pytorch_half_pixel,
    tf_crop_and_resize) is the integer output length and ``output_width`` (half_pixel_symmetric)
    the fractional ``in_len * scale``; the ONNX reference implementation uses the fractional one
    everywhere (onnxruntime follows the spec).
    """
    out_w = scale * in_len
    xs, outside = [], []
    for y in range(out_len):
        if mode == "align_corners":
            x = 0.0 if out_len == 1 else y * (in_len - 1) / (out_len - 1)
        elif mode == "asymmetric":
            x = y / scale
        elif mode == "tf_crop_and_resize":
            lo, hi = roi if roi is not None else (0.0, 1.0)
            if out_len == 1:
                x = (hi - lo) * (in_len - 1) / 2
            else:
                x = y * (hi - lo) * (in_len - 1) / (out_len - 1)
            x += lo * (in_len - 1)
        elif mode == "pytorch_half_pixel":
            x = 0.0 if out_len == 1 else (y + 0.5) / scale - 0.5
        elif mode == "half_pixel":
            x = (y + 0.5) / scale - 0.5
        elif mode == "half_pixel_symmetric":
            offset = in_len / 2 * (1 - out_len / out_w)
            x = offset + (y + 0.5) / scale - 0.5
        else:
            raise ValueError(f"coordinate_transformation_mode={mode!r}")
        xs.append(x)
        outside.append(mode == "tf_crop_and_resize" and (x < 0 or x > in_len - 1))
    return xs, outside


def _nearest_index(x: float, mode: str, scale: float) -> int:
    if mode == "round_prefer_floor":
        return math.ceil(x - 0.5)
    if mode == "round_prefer_ceil":
        return math.floor(x + 0.5)
    if mode == "floor":
        return math.floor(x)
    if mode == "ceil":
        return math.ceil(x)
    if mode == "simple":  # onnxruntime's rule for Resize-10 / Upsample: floor up, ceil down
        return math.ceil(x) if scale < 1 else math.floor(x)
    raise ValueError(f"nearest_mode={mode!r}")


def _cubic_kernel(d: float, a: float) -> float:
    d = abs(d)
    if d <= 1:
        return ((a + 2) * d - (a + 3)) * d * d + 1
    if d < 2:
        return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    return 0.0


@functools.lru_cache(maxsize=256)
def _axis_weights(
    in_len: int,
    out_len: int,
    scale: float,
    mode: str,
    coord_mode: str,
    nearest_mode: str,
    cubic_a: float,
    exclude_outside: bool,
    antialias: bool,
    roi: tuple[float, float] | None,
) -> tuple[Tensor, Tensor, Tensor]:
    """(indices (out, n) int64, weights (out, n) float64, outside (out,) bool) for one axis."""
    xs, outside = _source_coords(coord_mode, out_len, in_len, scale, roi)
    rows_i, rows_w = [], []
    for x in xs:
        if mode == "nearest":
            rows_i.append([min(max(_nearest_index(x, nearest_mode, scale), 0), in_len - 1)])
            rows_w.append([1.0])
            continue
        base = math.floor(x)
        if base == x:  # ratio in (0, 1]: an integer coordinate takes the left neighbour's slot
            base -= 1
        ratio = x - base
        s = min(scale, 1.0) if antialias else 1.0
        if mode == "linear":
            start = math.floor(-1 / s) + 1
            offsets = range(start, 2 - start)
            w = [max(0.0, 1 - abs((i - ratio) * s)) for i in offsets]
        elif mode == "cubic":
            start = math.floor(-2 / s) + 1
            offsets = range(start, 2 - start)
            w = [_cubic_kernel((i - ratio) * s, cubic_a) for i in offsets]
        else:
            raise ValueError(f"mode={mode!r}")
        idx = [base + i for i in offsets]
        if exclude_outside:
            w = [0.0 if j < 0 or j >= in_len else v for j, v in zip(idx, w, strict=True)]
        total = sum(w)
        if (antialias or exclude_outside) and total != 0:
            w = [v / total for v in w]
        rows_i.append([min(max(j, 0), in_len - 1) for j in idx])
        rows_w.append(w)
    # on the CPU whatever the default device: the cache outlives a call under ``torch.device``
    # (the compiler's batch-size check runs the module on the meta device)
    return (
        torch.tensor(rows_i, dtype=torch.int64, device="cpu"),
        torch.tensor(rows_w, dtype=torch.float64, device="cpu"),
        torch.tensor(outside, dtype=torch.bool, device="cpu"),
    )


def resize(
    x: Tensor,
    sizes: Sequence[int],
    scales: Sequence[float],
    mode: str = "nearest",
    coordinate_transformation_mode: str = "half_pixel",
    nearest_mode: str = "round_prefer_floor",
    cubic_coeff_a: float = -0.75,
    exclude_outside: bool = False,
    extrapolation_value: float = 0.0,
    antialias: bool = False,
    roi: Sequence[float] | None = None,
) -> Tensor:
    """ONNX Resize-19 (and Resize-10/11/13/18, Upsample with the matching modes), any rank.

    ``sizes`` is the full output shape, ``scales`` the per-axis scale that maps coordinates (the
    given scales, or output/input length when sizes were given; ``keep_aspect_ratio_policy`` is
    resolved by the caller); ``roi`` the full ``[starts..., ends...]`` list for tf_crop_and_resize.
    Interpolation is separable: each resized axis is interpolated in turn with weights computed in
    float64 exactly as the spec's formulas (``nearest_mode="simple"`` is onnxruntime's Resize-10
    rule: floor when upsampling, ceil when downsampling). Integer outputs are rounded half to even
    and saturated, as the ONNX reference does.
    """
    r = x.dim()
    nearest = mode == "nearest"
    y = x if nearest or x.dtype in (torch.float32, torch.float64) else x.float()
    for axis in range(r):
        in_len, out_len, scale = x.shape[axis], int(sizes[axis]), float(scales[axis])
        axis_roi = None if roi is None else (float(roi[axis]), float(roi[axis + r]))
        identity_roi = axis_roi is None or axis_roi == (0.0, 1.0)
        if out_len == in_len and scale == 1.0 and identity_roi:
            continue
        if coordinate_transformation_mode != "tf_crop_and_resize":
            axis_roi = None
        idx, w, outside = _axis_weights(
            in_len,
            out_len,
            scale,
            mode,
            coordinate_transformation_mode,
            nearest_mode,
            float(cubic_coeff_a),
            bool(exclude_outside),
            bool(antialias),
            axis_roi,
        )
        n = idx.shape[1]
        any_outside = bool(outside.any())  # on the CPU: the weights are computed there
        idx, w, outside = idx.to(x.device), w.to(x.device), outside.to(x.device)
        gathered = torch.index_select(y, axis, idx.reshape(-1))
        if n > 1 or not nearest:
            shp = list(y.shape)
            shp[axis : axis + 1] = [out_len, n]
            gathered = gathered.reshape(shp)
            wshape = [1] * (r + 1)
            wshape[axis], wshape[axis + 1] = out_len, n
            gathered = (gathered * w.to(gathered.dtype).reshape(wshape)).sum(dim=axis + 1)
        if any_outside:
            mshape = [1] * r
            mshape[axis] = out_len
            fill = torch.tensor(extrapolation_value, dtype=gathered.dtype, device=x.device)
            gathered = torch.where(outside.reshape(mshape), fill, gathered)
        y = gathered
    if y.dtype == x.dtype:
        return y
    if not x.is_floating_point() and x.dtype != torch.bool:
        info = torch.iinfo(x.dtype)
        y = torch.round(y).clamp(info.min, info.max)
    return y.to(x.dtype)


# -- shapes and constants (dynamic fallbacks; static shapes are folded at compile time) -------------


def shape(x: Tensor, start: int = 0, end: int | None = None) -> Tensor:
    """ONNX Shape: the (sliced) shape of ``x`` as an int64 vector."""
    return torch.tensor(list(x.shape)[slice(start, end)], dtype=torch.int64, device=x.device)


def size(x: Tensor) -> Tensor:
    """ONNX Size: the number of elements as an int64 scalar."""
    return torch.tensor(x.numel(), dtype=torch.int64, device=x.device)


def reshape(
    x: Tensor, target: Tensor, allowzero: int = 0, expect: Sequence[int] | None = None
) -> Tensor:
    """ONNX Reshape with a runtime shape tensor: 0 copies the input dim unless ``allowzero``.

    ``expect``: the result shape the program is compiled for (the model declares it, while the
    shape is a run-time value); another result raises ``ValueError`` saying so (the compiled
    ``x.reshape(3, 4)`` had ignored the shape input: another value gave a (3, 4) result without
    an error, where onnxruntime follows the value; a fresh-user check)."""
    dims = _shape_values(target)
    if not allowzero:
        dims = [x.shape[i] if d == 0 else d for i, d in enumerate(dims)]
    y = x.reshape(dims)
    _check_expected("Reshape", dims, tuple(y.shape), expect)
    return y


def slice_(
    x: Tensor,
    starts: Tensor,
    ends: Tensor,
    axes: Sequence[int] | None = None,
    steps: Sequence[int] | None = None,
) -> Tensor:
    """ONNX Slice (opset 10+) with run-time ``starts``/``ends`` (a Slice at a Loop's iteration
    number): negative values count from the end; starts/ends are clamped to ``[0, dim]`` for a
    positive step and to ``[0, dim - 1]`` / ``[-1, dim - 1]`` for a negative one."""
    begin = [int(v) for v in starts.reshape(-1).tolist()]
    stop = [int(v) for v in ends.reshape(-1).tolist()]
    axes = list(range(len(begin))) if axes is None else list(axes)
    steps = [1] * len(begin) if steps is None else list(steps)
    for s, e, a, st in zip(begin, stop, axes, steps, strict=True):
        dim = x.shape[a]
        s = s + dim if s < 0 else s
        e = e + dim if e < 0 else e
        if st > 0:
            s, e = min(max(s, 0), dim), min(max(e, 0), dim)
            x = x.narrow(a, s, max(e, s) - s)[(slice(None),) * a + (slice(None, None, st),)]
        else:
            s, e = min(max(s, 0), dim - 1), min(max(e, -1), dim - 1)
            x = x.index_select(a, torch.arange(s, e, st, dtype=torch.int64, device=x.device))
    return x


def range_(start: Tensor, limit: Tensor, delta: Tensor) -> Tensor:
    """ONNX Range with runtime scalars: ``max(ceil((limit - start) / delta), 0)`` elements."""
    n = max(math.ceil((limit.item() - start.item()) / delta.item()), 0)
    return start + torch.arange(n, dtype=start.dtype, device=start.device) * delta


def eye_like(x: Tensor, k: int = 0, dtype: torch.dtype | None = None) -> Tensor:
    """ONNX EyeLike: ones on diagonal ``k`` of a 2-D tensor shaped like ``x``."""
    rows, cols = x.shape
    eye = torch.ones((rows, cols), dtype=dtype or x.dtype, device=x.device)
    return torch.triu(eye, k) - torch.triu(eye, k + 1)


def _shape_values(target: Tensor) -> list[int]:
    """A shape operand's values (any rank, read from its tensor: a host sync)."""
    return [int(v) for v in target.reshape(-1).tolist()]


def _check_expected(op: str, dims: list[int], got: tuple[int, ...], expect) -> None:
    if expect is not None and got != tuple(expect):
        raise ValueError(
            f"{op} to a run-time shape: the shape operand {dims} gives {got}, and the program "
            f"is compiled for {tuple(expect)} (the shape the model declares); compile it for "
            "this shape (the shape operand as a constant)"
        )


def expand(x: Tensor, target: Tensor, expect: Sequence[int] | None = None) -> Tensor:
    """ONNX Expand with a run-time shape tensor: ``x`` broadcast bidirectionally with ``target``
    (numpy rules; a target dim 1 keeps ``x``'s dim), as a view.

    ``expect``: the result shape the program is compiled for (the model declares it); another
    result raises ``ValueError`` (the compiled ``x.expand(...)`` had ignored the shape operand)."""
    dims = _shape_values(target)
    out = tuple(torch.broadcast_shapes(tuple(x.shape), tuple(dims)))
    _check_expected("Expand", dims, out, expect)
    return x.expand(out)


def constant_of_shape(
    target: Tensor,
    value: bool | int | float = 0,
    dtype: torch.dtype = torch.float32,
    expect: Sequence[int] | None = None,
) -> Tensor:
    """ONNX ConstantOfShape with a run-time shape tensor (1-D int64): a new tensor of that
    shape filled with ``value``. ``expect`` as in :func:`expand`."""
    dims = _shape_values(target)
    _check_expected("ConstantOfShape", dims, tuple(dims), expect)
    return torch.full(dims, value, dtype=dtype, device=target.device)


def tile(x: Tensor, repeats: Tensor) -> Tensor:
    """ONNX Tile with a runtime ``repeats`` tensor."""
    return x.repeat(*[int(r) for r in repeats.tolist()])


def trilu(x: Tensor, k: Tensor, upper: bool) -> Tensor:
    """ONNX Trilu with a runtime ``k``."""
    kk = int(k.item())
    return torch.triu(x, kk) if upper else torch.tril(x, kk)


# -- indexing ---------------------------------------------------------------------------------------


def _wrap(indices: Tensor, size: int) -> Tensor:
    indices = indices.to(torch.int64)
    return torch.where(indices < 0, indices + size, indices)


def gather_elements(x: Tensor, indices: Tensor, axis: int) -> Tensor:
    """ONNX GatherElements: ``torch.gather`` with negative indices wrapped."""
    return torch.gather(x, axis, _wrap(indices, x.shape[axis]))


def gather_nd(x: Tensor, indices: Tensor, batch_dims: int = 0) -> Tensor:
    """ONNX GatherND: the last dim of ``indices`` indexes the leading dims of ``x`` after
    ``batch_dims`` shared batch dims; output shape ``indices.shape[:-1] + x.shape[b + k:]``."""
    b = batch_dims
    k = indices.shape[-1]
    batch = x.shape[:b]
    nb = math.prod(batch)
    xf = x.reshape(nb, *x.shape[b:])
    idx = indices.reshape(nb, -1, k).to(torch.int64)
    dims = torch.tensor(x.shape[b : b + k], dtype=torch.int64, device=x.device)
    idx = torch.where(idx < 0, idx + dims, idx)
    rows = torch.arange(nb, device=x.device).reshape(nb, 1)
    out = xf[(rows, *idx.unbind(-1))]
    return out.reshape(*indices.shape[:-1], *x.shape[b + k :])


_REDUCE = {"add": "sum", "mul": "prod", "max": "amax", "min": "amin"}


def scatter_elements(
    x: Tensor, indices: Tensor, updates: Tensor, axis: int = 0, reduction: str = "none"
) -> Tensor:
    """ONNX ScatterElements (and Scatter): a copy of ``x`` with ``updates`` written — or combined
    with ``reduction`` add/mul/max/min, the existing value included — at ``indices`` along
    ``axis`` (negative indices wrap)."""
    idx = _wrap(indices, x.shape[axis])
    if reduction == "none":
        return torch.scatter(x, axis, idx, updates)
    return torch.scatter_reduce(x, axis, idx, updates, _REDUCE[reduction], include_self=True)


def scatter_nd(x: Tensor, indices: Tensor, updates: Tensor, reduction: str = "none") -> Tensor:
    """ONNX ScatterND: a copy of ``x`` with ``updates`` written (or reduced with add/mul/max/min,
    duplicates combining) at the index tuples in the last dim of ``indices``; with no reduction,
    duplicate indices are undefined by the spec."""
    k = indices.shape[-1]
    idx = indices.reshape(-1, k).to(torch.int64)
    dims = torch.tensor(x.shape[:k], dtype=torch.int64, device=x.device)
    idx = torch.where(idx < 0, idx + dims, idx)
    flat_idx = torch.zeros(idx.shape[0], dtype=torch.int64, device=x.device)
    for d in range(k):
        flat_idx = flat_idx * x.shape[d] + idx[:, d]
    xf = x.reshape(math.prod(x.shape[:k]), *x.shape[k:])
    up = updates.reshape(-1, *x.shape[k:])
    if reduction == "none":
        xf = xf.index_put((flat_idx,), up)
    else:
        shp = [-1] + [1] * (xf.dim() - 1)
        full = flat_idx.reshape(shp).expand_as(up)
        xf = torch.scatter_reduce(xf, 0, full, up, _REDUCE[reduction], include_self=True)
    return xf.reshape(x.shape)


def one_hot(indices: Tensor, depth: int, values: Tensor, axis: int = -1) -> Tensor:
    """ONNX OneHot: ``values[1]`` where the (wrapped) index equals the position along the new
    ``axis``, ``values[0]`` elsewhere (indices outside [-depth, depth) give an all-off row)."""
    idx = indices.to(torch.int64)
    idx = torch.where(idx < 0, idx + depth, idx)
    r = idx.dim() + 1
    axis = axis + r if axis < 0 else axis
    positions = torch.arange(depth, device=idx.device).reshape([depth] + [1] * (r - 1 - axis))
    hit = idx.unsqueeze(axis) == positions
    return torch.where(hit, values[1], values[0])


def compress(x: Tensor, condition: Tensor, axis: int | None = None) -> Tensor:
    """ONNX Compress: the slices along ``axis`` (of the flattened ``x`` if None) whose condition
    is true; a shorter condition selects among the first elements only."""
    if axis is None:
        x = x.reshape(-1)
        axis = 0
    keep = torch.nonzero(condition.to(torch.bool)).reshape(-1)
    return torch.index_select(x, axis, keep)


def reverse_sequence(x: Tensor, lengths: Tensor, batch_axis: int = 1, time_axis: int = 0) -> Tensor:
    """ONNX ReverseSequence: reverse the first ``lengths[b]`` steps along ``time_axis`` of
    every batch entry b (along ``batch_axis``)."""
    t = x.shape[time_axis]
    steps = torch.arange(t, device=x.device).reshape(1, t)
    lens = lengths.to(torch.int64).reshape(-1, 1)
    src = torch.where(steps < lens, lens - 1 - steps, steps)  # (batch, time)
    shp = [1] * x.dim()
    shp[batch_axis], shp[time_axis] = src.shape[0], t
    if batch_axis > time_axis:
        src = src.t()
        shp[time_axis], shp[batch_axis] = t, lengths.shape[0]
    return torch.gather(x, time_axis, src.reshape(shp).expand_as(x))


# -- padding ----------------------------------------------------------------------------------------


def pad(x: Tensor, pads: Sequence[int], mode: str = "constant", value: float = 0.0) -> Tensor:
    """ONNX Pad over all dims (``pads = [b1, ..., bn, e1, ..., en]``; negative pads crop) with
    mode constant, reflect (mirror without the edge), edge (repeat the edge) or wrap
    (circular)."""
    r = x.dim()
    begin, end = list(pads[:r]), list(pads[r:])
    if mode == "constant":
        flat: list[int] = []
        for b, e in zip(reversed(begin), reversed(end), strict=True):
            flat += [b, e]
        return F.pad(x, flat, value=value)
    y = x
    for d in range(r):
        b, e = begin[d], end[d]
        if b == 0 and e == 0:
            continue
        n = y.shape[d]
        # crop first (negative pads), then index the remaining elements
        lo, hi = max(-b, 0), n - max(-e, 0)
        y = y.narrow(d, lo, hi - lo)
        n = hi - lo
        pos = torch.arange(-max(b, 0), n + max(e, 0), device=x.device)
        if mode == "edge":
            src = pos.clamp(0, n - 1)
        elif mode == "wrap":
            src = pos % n
        elif mode == "reflect":
            if n == 1:
                src = torch.zeros_like(pos)
            else:
                period = 2 * (n - 1)
                m = pos % period
                src = torch.where(m < n, m, period - m)
        else:
            raise ValueError(f"Pad mode={mode!r}")
        y = torch.index_select(y, d, src)
    return y


# -- sorting and scanning ----------------------------------------------------------------------------


def topk(x: Tensor, k: int, axis: int = -1, largest: bool = True) -> tuple[Tensor, Tensor]:
    """ONNX TopK: the k largest (smallest) values along ``axis`` in sorted order and their int64
    indices; equal values keep the lower index first (a stable sort)."""
    values, indices = torch.sort(x, dim=axis, descending=largest, stable=True)
    return values.narrow(axis, 0, k), indices.narrow(axis, 0, k)


def arg_last(x: Tensor, axis: int, keepdims: bool, largest: bool) -> Tensor:
    """ArgMax/ArgMin with ``select_last_index=1``: the index of the last extreme value."""
    n = x.shape[axis]
    fn = torch.argmax if largest else torch.argmin
    return (n - 1) - fn(torch.flip(x, (axis,)), dim=axis, keepdim=keepdims)


def cumulative(
    x: Tensor, axis: int, exclusive: bool, reverse: bool, product: bool = False
) -> Tensor:
    """ONNX CumSum/CumProd with ``exclusive`` (the j-th output excludes the j-th input) and
    ``reverse`` (accumulate from the end)."""
    y = torch.flip(x, (axis,)) if reverse else x
    if exclusive:
        n = y.shape[axis]
        ident = torch.ones_like if product else torch.zeros_like
        y = torch.cat([ident(y.narrow(axis, 0, 1)), y.narrow(axis, 0, n - 1)], dim=axis)
    y = torch.cumprod(y, axis, dtype=x.dtype) if product else torch.cumsum(y, axis, dtype=x.dtype)
    return torch.flip(y, (axis,)) if reverse else y


def stack_steps(
    steps: Sequence[Tensor], empty: Sequence[int], dtype: torch.dtype, dim: int = 0
) -> Tensor:
    """The scan outputs of a loop: ``torch.stack(steps, dim)``, or, where the loop ran no
    iteration, the empty tensor of shape ``empty`` (0 along ``dim``) and ``dtype``, as ONNX's Loop
    and Scan give it (``torch.stack`` of an empty list raises ``stack expects a non-empty
    TensorList``; a fresh-user check). Printed only where the compiler cannot tell that the loop
    runs at least once (a trip count known at run time, a condition computed in the body)."""
    if not steps:
        return torch.empty(tuple(empty), dtype=dtype)
    return torch.stack(list(steps), dim)


# -- recurrent layers ------------------------------------------------------------------------------

_ACTIVATIONS = {"Sigmoid": torch.sigmoid, "Tanh": torch.tanh, "Relu": torch.relu}


def rnn_params(kind: str, w: Tensor, r: Tensor, b: Tensor | None) -> list[Tensor]:
    """PyTorch's parameter list (``[w_ih, w_hh, b_ih, b_hh]`` per direction) of ONNX LSTM, GRU
    or RNN weights given at run time, gates reordered (LSTM i, o, f, c -> i, f, g, o; GRU
    z, r, h -> r, z, n). Constant weights are reordered at compile time instead."""
    order = {"LSTM": [0, 2, 3, 1], "GRU": [1, 0, 2], "RNN": [0]}[kind]
    gates = len(order)

    def reorder(m: Tensor) -> Tensor:
        return torch.cat([m.chunk(gates, 0)[k] for k in order], 0).contiguous()

    params: list[Tensor] = []
    for d in range(w.shape[0]):
        params += [reorder(w[d]), reorder(r[d])]
        if b is not None:
            b_ih, b_hh = b[d].chunk(2)
            params += [reorder(b_ih), reorder(b_hh)]
    return params


def _clip(v: Tensor, clip: float | None) -> Tensor:
    return v if clip is None else v.clamp(-clip, clip)


def recurrent(
    kind: str,
    x: Tensor,
    w: Tensor,
    r: Tensor,
    b: Tensor | None,
    sequence_lens: Tensor | None,
    initial_h: Tensor | None,
    initial_c: Tensor | None = None,
    p: Tensor | None = None,
    *,
    hidden_size: int,
    direction: str = "forward",
    activations: Sequence[str] = (),
    clip: float | None = None,
    layout: int = 0,
    input_forget: int = 0,
    linear_before_reset: int = 0,
) -> tuple[Tensor, Tensor, Tensor | None]:
    """ONNX LSTM, GRU or RNN (``kind``) by the operator's equations, one time step at a time.

    The general form (the code generator calls ``torch.lstm``/``torch.gru``/``torch.rnn_tanh``
    where they compute the same): peepholes ``p``, ``clip``, ``input_forget``, GRU's
    ``linear_before_reset = 0``, per-batch ``sequence_lens`` (a batch entry stops at its length:
    its ``Y`` is 0 from there and ``Y_h``/``Y_c`` are its last valid state; the reverse direction
    starts at its last valid step), ``layout`` 0 (``[seq, batch, ...]``) or 1
    (``[batch, seq, ...]``) and the activations Sigmoid, Tanh and Relu (``activations`` lists 3, 2
    or 1 per direction for LSTM, GRU and RNN). Weights in ONNX gate order: LSTM i, o, f, c; GRU
    z, r, h. Returns ``(Y, Y_h, Y_c)`` in ONNX layout (``Y_c`` ``None`` unless LSTM).

    Raises ``ValueError`` for ``sequence_lens`` that are not ``batch`` lengths from 0 to the
    steps of ``x``.
    """
    if layout:
        x = x.transpose(0, 1)
        initial_h = None if initial_h is None else initial_h.transpose(0, 1)
        initial_c = None if initial_c is None else initial_c.transpose(0, 1)
    steps, batch = x.shape[0], x.shape[1]
    dirs, hs = w.shape[0], hidden_size
    gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[kind]
    per_dir = len(activations) // dirs if activations else 0
    lens = [steps] * batch if sequence_lens is None else sequence_lens.reshape(-1).tolist()
    if len(lens) != batch or not all(0 <= int(n) <= steps for n in lens):
        # onnxruntime refuses them too (lengths past the steps had been cut to them, and
        # negative ones run as empty sequences; a fresh-user check)
        raise ValueError(
            f"{kind}: sequence_lens {lens} must hold {batch} lengths from 0 to {steps} "
            "(the batch size and the steps of X)"
        )
    lens = [int(n) for n in lens]
    rows = torch.arange(batch, device=x.device)
    ragged = any(n != steps for n in lens)  # some batch entry is shorter: mask per entry
    y = x.new_zeros((steps, dirs, batch, hs))
    y_h, y_c = [], []
    for d in range(dirs):
        reverse = direction == "reverse" or (direction == "bidirectional" and d == 1)
        acts = [_ACTIVATIONS[a] for a in activations[d * per_dir : (d + 1) * per_dir]]
        f, g, h_act = (acts + [torch.sigmoid, torch.tanh, torch.tanh][len(acts) :])[:3]
        if kind == "RNN" and not activations:
            f = torch.tanh
        bias = b[d] if b is not None else x.new_zeros(2 * gates * hs)
        wb, rb = bias[: gates * hs], bias[gates * hs :]
        xw = torch.matmul(x, w[d].t()) + wb  # every step's input projection at once
        h = initial_h[d] if initial_h is not None else x.new_zeros((batch, hs))
        c = initial_c[d] if initial_c is not None else x.new_zeros((batch, hs))
        for step in range(steps):
            if ragged:
                # each batch entry's time index at this step (reverse: from its last valid one)
                t = [(n - 1 - step) if reverse else step for n in lens]
                active = torch.tensor([step < n for n in lens], device=x.device).reshape(batch, 1)
                t_idx = torch.tensor([min(max(v, 0), steps - 1) for v in t], device=x.device)
                xt = xw[t_idx, rows]
            else:
                t0 = steps - 1 - step if reverse else step
                xt = xw[t0]
            if kind == "LSTM":
                pre = xt + torch.matmul(h, r[d].t()) + rb
                i, o, fg, cc = pre.split(hs, dim=-1)
                if p is not None:
                    pi, po, pf = p[d].split(hs)
                    i, fg = i + pi * c, fg + pf * c
                i, fg, cc = (_clip(v, clip) for v in (i, fg, cc))
                i, fg = f(i), f(fg)
                if input_forget:
                    fg = 1 - i
                c_new = fg * c + i * g(cc)
                if p is not None:
                    o = o + po * c_new
                h_new = f(_clip(o, clip)) * h_act(c_new)
                c = torch.where(active, c_new, c) if ragged else c_new
            elif kind == "GRU":
                rz, rr, rh = r[d].split(hs)
                bz, br, bh = rb.split(hs)
                xz, xr, xh = xt.split(hs, dim=-1)
                z = _clip(xz + torch.matmul(h, rz.t()) + bz, clip)
                rg = _clip(xr + torch.matmul(h, rr.t()) + br, clip)
                z, rg = f(z), f(rg)
                if linear_before_reset:
                    hh = xh + rg * (torch.matmul(h, rh.t()) + bh)
                else:
                    hh = xh + torch.matmul(rg * h, rh.t()) + bh
                h_new = (1 - z) * g(_clip(hh, clip)) + z * h
            else:
                h_new = f(_clip(xt + torch.matmul(h, r[d].t()) + rb, clip))
            if not ragged:
                h = h_new
                y[t0, d] = h_new
                continue
            h = torch.where(active, h_new, h)
            valid = [k for k in range(batch) if step < lens[k]]
            if valid:
                ks = torch.tensor(valid, device=x.device)
                y[t_idx[ks], d, ks] = h_new[ks]
        y_h.append(h)
        y_c.append(c)
    yh = torch.stack(y_h)
    yc: Tensor | None = torch.stack(y_c) if kind == "LSTM" else None
    if layout:
        return y.permute(2, 0, 1, 3), yh.transpose(0, 1), None if yc is None else yc.transpose(0, 1)
    return y, yh, yc


# torch.fx.symbolic_trace records a call of these helpers as one node (a leaf) instead of tracing
# into them: they compute geometry from static shapes with Python ints, which a traced Proxy is not.
for _name, _fn in list(globals().items()):
    if (
        callable(_fn)
        and getattr(_fn, "__module__", None) == __name__
        and _name[0] != "_"
        and _name != "records_autograd"  # plain Python for the tracer (see there)
    ):
        torch.fx.wrap(_name)
del _name, _fn
