"""What a measured configuration runs, in its own process (:class:`~ramiel.measure.Isolated`): the
sequential module at a thread count, the parallel module, or an onnxruntime session
(:func:`ort_session`); :class:`Recipe` is the picklable description it is built from.

Shared by ``ramiel bench`` (:mod:`ramiel.bench`, which times every configuration) and ``ramiel
tune`` (:mod:`ramiel.tune`, which times its candidates), below both: neither imports the other to
build a program it measures."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import onnx

from ramiel.errors import RamielError
from ramiel.importer import load_model, prepare_model, upgraded

if TYPE_CHECKING:
    from ramiel.measure import Isolated, Plan, Timing

COMPILE_TIMEOUT_S = 1800.0
"""Seconds a configuration process with compiled segments may take to compile before it answers."""


def output_error(out: Any, ref: Any) -> tuple[float, float]:
    """(the largest ``|out - ref|`` relative to the largest finite ``|ref|``, that scale) of one
    output (array or tensor; any dtype, booleans and integers compared as float64, so one
    differing boolean is an error of 1). The scale is 1 where ``ref`` has no finite non-zero
    element; an empty output is ``(0, 1)``.

    A NaN where ``ref`` has a NaN, and an infinity where ``ref`` has the same one, agree (error
    0); a NaN or an infinity against anything else is an error of ``inf``. (A NaN had made the
    error NaN, which every ``<=`` tolerance test and ``max`` passed over: ``ramiel run`` said OK
    for a model whose output was NaN.) Shapes must be equal (another shape is an error of
    ``inf``, not a broadcast); complex values compare as complex numbers; bfloat16 tensors as
    float32."""
    o, r = _comparable(out), _comparable(ref)
    if o.shape != r.shape:
        return float("inf"), 1.0
    if r.size == 0:
        return 0.0, 1.0
    wide = np.complex128 if np.iscomplexobj(o) or np.iscomplexobj(r) else np.float64
    o, r = o.astype(wide), r.astype(wide)  # (np.abs of a complex number: its magnitude)
    scale = float(np.max(np.abs(r[np.isfinite(r)]), initial=0.0)) or 1.0
    with np.errstate(invalid="ignore"):  # inf - inf
        diff = np.abs(o - r)
    agree = (np.isnan(o) & np.isnan(r)) | (np.isinf(o) & (o == r))
    diff = np.where(agree, 0.0, np.where(np.isnan(diff), np.inf, diff))
    return float(np.max(diff)) / scale, scale


def _comparable(value: Any) -> np.ndarray:
    """``value`` (array, tensor, number) as a numpy array; a bfloat16 tensor as float32 (numpy
    has no bfloat16)."""
    if hasattr(value, "detach"):  # a torch tensor
        value = value.detach().cpu()
        if str(value.dtype) == "torch.bfloat16":
            value = value.float()
        return value.numpy()
    return np.asarray(value)


def rel_error(out: Sequence[Any], ref: Sequence[Any]) -> float:
    """The largest error of the outputs ``out`` against ``ref``, each relative to the largest
    magnitude of its reference output (:func:`output_error`; 0 for empty outputs)."""
    return max((output_error(o, r)[0] for o, r in zip(out, ref, strict=True)), default=0.0)


def check_and_time(
    procs: Mapping[str, Isolated], plan: Plan, ref: str, timed: Sequence[str] | None = None
) -> tuple[dict[str, Timing], dict[str, float]]:
    """The configurations of one model, each an :class:`~ramiel.measure.Isolated` process:
    wait until all are ready, check every one's outputs against those of ``ref``
    (:func:`rel_error`; ``ref``'s own is 0), then time the ones in ``timed`` (default: all)
    interleaved (:func:`~ramiel.measure.measure_interleaved` with ``plan``). The others are
    closed before the timing, so that they hold no core meanwhile, and every process is closed
    at the end, also on a failure. Returns the timings and the errors, both by key."""
    from ramiel.measure import measure_interleaved  # lazy: torch

    try:
        for p in procs.values():
            p.wait_ready()
        want = procs[ref].outputs()
        errs = {k: rel_error(p.outputs(), want) for k, p in procs.items()}
        keep = set(procs if timed is None else timed)
        for k, p in procs.items():
            if k not in keep:
                p.close()
        return measure_interleaved({k: p for k, p in procs.items() if k in keep}, plan), errs
    finally:
        for p in procs.values():
            p.close()


def _as_tuple(x: Any) -> tuple[Any, ...]:
    return x if isinstance(x, tuple) else (x,)


_ORT_PREFIX = re.compile(r"\[ONNXRuntimeError\] : \d+ : (\w+) : ")
_ORT_SOURCE = re.compile(r"\S+\.(?:cc|cpp|h):\d+ ")


def ort_error_text(e: BaseException, limit: int = 400) -> str:
    """onnxruntime's error ``e`` as one line for a message: whitespace collapsed, and without
    the source location and C++ signature that onnxruntime puts before the reason
    (``[ONNXRuntimeError] : 1 : FAIL : /onnxruntime_src/.../model.cc:256
    onnxruntime::Model::Model(onnx::ModelProto&&, ...) Unsupported model IR version: 14, max
    supported IR version: 13`` becomes ``FAIL: Unsupported model IR version: 14, max supported IR
    version: 13``; cut at 300 characters, the reason had been lost behind the signature: a
    fresh-user check); at most ``limit`` characters, the end kept."""
    text = " ".join(str(e).split())
    m = _ORT_PREFIX.match(text)
    if m is not None:
        code, rest = m.group(1), text[m.end() :]
        src = _ORT_SOURCE.match(rest)
        if src is not None:
            rest = _after_signature(rest[src.end() :])
        text = f"{code}: {rest}"
    return text if len(text) <= limit else "..." + text[-(limit - 3) :]


def _after_signature(text: str) -> str:
    """``text`` after a leading C++ signature (``[type] ns::f(args) [const]``, the arguments
    holding parentheses, templates and spaces), where it starts with one; else ``text``."""
    open_at = text.find("(")
    if open_at <= 0 or "::" not in text[:open_at]:  # (a return type may come first: "void ns::f(")
        return text
    depth = 0
    for i in range(open_at, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            rest = text[i + 1 :].lstrip()
            return rest.removeprefix("const ").lstrip() or text
    return text


def ort_session(
    path: str | bytes,
    *,
    threads: int = 1,
    inter_op: int = 0,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    profile_prefix: str | None = None,
    spinning: bool = False,
):
    """An onnxruntime session (CPU) on the model at ``path`` (or its serialized bytes).

    ``threads``: intra-op threads of the sequential executor; ``inter_op`` > 0: onnxruntime's
    ``ORT_PARALLEL`` executor with that many inter-op threads and one intra-op thread instead;
    ``input_shapes``: graph input shapes bound first (:func:`ramiel.importer.prepare_model`);
    ``profile_prefix``: with onnxruntime's profiler on, its JSON written there. Pool threads do
    not spin between runs unless ``spinning`` (onnxruntime's own default: faster with 2+ threads
    on a machine it has to itself, as Ramiel's OpenMP threads spin too). A model of an IR
    version newer than onnxruntime takes is given to it with the newest one it takes (its
    error names it)."""
    import onnxruntime as ort  # lazy: onnxruntime

    so = ort.SessionOptions()
    so.log_severity_level = 3
    if profile_prefix is not None:
        so.enable_profiling = True
        so.profile_file_prefix = profile_prefix
    # onnxruntime's pool threads spin after a run (measured: one core kept busy for the next
    # 50 ms and more), which would slow down whichever configuration is timed next.
    if not spinning:
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        so.add_session_config_entry("session.inter_op.allow_spinning", "0")
    if inter_op > 0:
        so.execution_mode = ort.ExecutionMode.ORT_PARALLEL
        so.inter_op_num_threads = inter_op
        so.intra_op_num_threads = 1
    else:
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.intra_op_num_threads = threads
    model: str | bytes = path
    if input_shapes:
        proto = onnx.load_from_string(path) if isinstance(path, bytes) else load_model(path)
        model = prepare_model(proto, input_shapes).SerializeToString()
    try:
        return ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    except Exception as e:  # onnxruntime's own error types
        proto = onnx.load_from_string(model) if isinstance(model, bytes) else load_model(model)
        # onnx.helper.make_model writes the newest IR version (14 with onnx 1.23), which this
        # onnxruntime refuses (at most 13) although it runs every op of such a model: the
        # session gets the model with the IR version it takes (Ramiel reads both)
        m = _ORT_IR_VERSION.search(str(e))
        if m is not None:
            proto.ir_version = int(m.group(1))
            return ort.InferenceSession(
                proto.SerializeToString(), so, providers=["CPUExecutionProvider"]
            )
        return _upgraded_session(proto, so, e)


def _upgraded_session(proto: onnx.ModelProto, so: Any, error: Exception) -> Any:
    """For a model of opset 1 to 6 that onnxruntime cannot load (no kernel for Gemm-6,
    BatchNormalization-6, AveragePool-1, ...): a session on the model of opset
    ``ramiel.importer.UPGRADE_OPSET`` that onnx's version converter makes of it, as Ramiel
    compiles it (:func:`ramiel.importer.upgraded`), with
    ``ramiel_note`` saying so (``ramiel run`` prints it). Raises ``error`` for another model or
    where the converter fails, and a ``RuntimeError`` with both reasons where onnxruntime cannot
    load the converted model either."""
    import onnxruntime as ort  # lazy: onnxruntime

    try:
        up = upgraded(proto)
    except RamielError:
        raise error from None
    if up is proto:
        raise error
    opset = next(o.version for o in up.opset_import if o.domain in ("", "ai.onnx"))
    try:
        session = ort.InferenceSession(
            up.SerializeToString(), so, providers=["CPUExecutionProvider"]
        )
    except Exception as e2:  # noqa: BLE001 - onnxruntime's own error types
        raise RuntimeError(
            f"{ort_error_text(error)}; and the opset-{opset} version onnx's version converter "
            f"made of it: {ort_error_text(e2)}"
        ) from None
    session.ramiel_note = (
        f"onnxruntime cannot load the model as it is ({ort_error_text(error)}); it runs the "
        f"opset-{opset} version of it that onnx's version converter made, as Ramiel compiles it"
    )
    return session


_ORT_IR_VERSION = re.compile(r"Unsupported model IR version: \d+, max supported IR version: (\d+)")


@dataclass
class Recipe:
    """What a configuration's own process needs to build its callable (picklable).

    ``kind``: ``seq`` (the sequential module of ``result`` at ``threads`` intra-op threads),
    ``par`` (the parallel module of ``result`` run with ``options``; workers started before the
    first timed call) or ``ort`` (onnxruntime on ``path`` with ``threads`` intra-op threads, or
    ``inter_op`` > 0 inter-op threads of its parallel executor: :func:`ort_session`, its pool
    threads spinning with ``ort_spinning``);
    ``feeds``: the graph inputs; ``out_names``: the output order; ``malloc_tuning``: call
    :func:`~ramiel.measure.tune_malloc` first."""

    kind: Literal["seq", "par", "ort"]
    feeds: dict[str, np.ndarray]
    out_names: list[str]
    result: Any = None
    options: Any = None
    threads: int = 1
    path: str | None = None
    inter_op: int = 0
    malloc_tuning: bool = True
    ort_spinning: bool = False

    def build(self) -> tuple[Callable[[], tuple[Any, ...]], Any]:
        """The callable and the object to close, built in the configuration's own process."""
        return _build(self)


def _build(recipe: Recipe) -> tuple[Callable[[], tuple[Any, ...]], Any]:
    """The callable of ``recipe`` and the object to ``close()`` afterwards (or ``None``)."""
    import torch  # lazy: torch

    from ramiel.compiler import CompiledModel, CompileOptions  # lazy: onnx.reference,torch

    feeds = {k: torch.from_numpy(v) for k, v in recipe.feeds.items()}
    if recipe.kind == "seq":
        m = CompiledModel(recipe.result, CompileOptions())
        runner = _SeqRunner(m, recipe.threads, feeds)
        if m.compiled:
            runner()  # compiles the segments, at this configuration's thread count
        return runner, m
    if recipe.kind == "par":
        m = CompiledModel(recipe.result, recipe.options)
        m.run(feeds)  # starts the workers (process workers fork before any torch compute here)
        return _par_fn(m, feeds, recipe.out_names), m
    if recipe.kind != "ort":
        raise ValueError(f"Recipe: kind {recipe.kind!r} is none of 'seq', 'par', 'ort'")
    if recipe.path is None:
        raise ValueError("Recipe: kind 'ort' needs the model's path")
    sess = ort_session(
        recipe.path, threads=recipe.threads, inter_op=recipe.inter_op, spinning=recipe.ort_spinning
    )
    return _ort_fn(sess, recipe.feeds), None


class _SeqRunner:
    """The sequential module at a fixed intra-op thread count (set before every call)."""

    def __init__(self, model: Any, threads: int, feeds: Mapping[str, Any]):
        self.model = model.sequential
        self.threads = threads
        self.args = list(feeds.values())

    def __call__(self) -> tuple[Any, ...]:
        import torch  # lazy: torch

        torch.set_num_threads(self.threads)
        with torch.inference_mode():  # forward, not __call__: no ThreadAdapter lowers the count
            return _as_tuple(self.model.forward(*self.args))


def _par_fn(model: Any, feeds: Mapping[str, Any], out_names: Sequence[str]) -> Callable[[], Any]:
    feeds = dict(feeds)

    def run() -> tuple[Any, ...]:
        out = model.run(feeds)
        return tuple(out[n] for n in out_names)

    return run


def _ort_fn(sess: Any, feeds: Mapping[str, Any]) -> Callable[[], Any]:
    feeds = dict(feeds)
    return lambda: tuple(sess.run(None, feeds))
