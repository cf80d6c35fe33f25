"""A Chrome trace of one parallel inference with the threads backend (:func:`trace_inference`,
opens in https://ui.perfetto.dev): one row per cluster, a box per generated statement labelled
with its ONNX node, get/put boxes for channel waits and hand-offs, flow arrows from put to get."""

from __future__ import annotations

import dataclasses
import functools
import json
import linecache
import os
import re
import sys
import tempfile
import threading
from collections.abc import Callable, Mapping
from typing import Any

_NODE_COMMENT = re.compile(r"#\s*(\S+)\s+\((\w+)\)\s*$")


_tids: dict[int, str] = {}  # native thread id -> cluster, filled by traced clusters


def trace_inference(
    program: Any,
    weights: Any,
    feeds: Mapping[str, Any],
    path: str,
    threads_per_worker: int = 1,
    warmup: int = 2,
) -> dict[str, Any]:
    """Run one inference of ``program`` with the threads backend under ``torch.profiler`` and write
    a Chrome trace (JSON) to ``path``; returns a summary (events per cluster, transfers).

    Each cluster function runs with a channel wrapper that labels every ``get``/``put`` with
    ``torch.profiler.record_function`` and a :class:`torch.overrides.TorchFunctionMode` that wraps
    every torch call of the generated code in a ``record_function`` named after the ONNX node of
    its line (the ``# n12 (Conv)`` comment), so the trace has a box per generated statement (with
    the ATen ops inside it). The labelling adds a few µs per op: the trace shows the schedule, the
    table the latency. After export, rows are renamed ``cluster <name>`` and a flow arrow is added
    from each ``put`` to the matching ``get``.
    """
    # libkineto prints "USDT: ... profiler_start" and "... profiler_stop" on stderr for every
    # trace, whatever the log level below 6 (read when the profiler first starts); a level the
    # user set is kept
    os.environ.setdefault("KINETO_LOG_LEVEL", "6")
    import torch  # lazy: torch
    from torch.profiler import ProfilerActivity, profile  # lazy: torch

    from ramiel.runtime import start  # lazy: torch

    traced = dataclasses.replace(
        program,
        clusters={
            c: _traced_cluster(c, fn, program.module_path) for c, fn in program.clusters.items()
        },
    )
    cfg = torch._C._profiler._ExperimentalConfig(profile_all_threads=True)
    with start(traced, weights, backend="threads", threads_per_worker=threads_per_worker) as run:
        for _ in range(warmup):
            run.run(dict(feeds))
        _tids.clear()
        with (
            profile(activities=[ProfilerActivity.CPU], experimental_config=cfg) as prof,
            torch.profiler.record_function("inference (caller)"),
        ):
            run.run(dict(feeds))
        tids = dict(_tids)
    with tempfile.TemporaryDirectory() as d:
        raw = os.path.join(d, "trace.json")
        prof.export_chrome_trace(raw)
        with open(raw) as f:
            data = json.load(f)
    summary = _decorate_trace(data, tids, program)
    with open(path, "w") as f:
        json.dump(data, f)
    return summary


class _TracingChannel:
    """Wraps a channel endpoint: ``get``/``put`` inside ``record_function`` boxes (the torch calls
    the endpoint itself makes are not labelled as statements)."""

    def __init__(self, ch: Any, state: Any):
        self._ch = ch
        self._state = state

    def get(self, name: str) -> Any:
        from torch.profiler import record_function  # lazy: torch

        self._state.in_channel = True
        try:
            with record_function(_profiler_name(f"get {name}")):
                return self._ch.get(name)
        finally:
            self._state.in_channel = False

    def put(self, name: str, tensor: Any) -> None:
        from torch.profiler import record_function  # lazy: torch

        self._state.in_channel = True
        try:
            with record_function(_profiler_name(f"put {name}")):
                self._ch.put(name, tensor)
        finally:
            self._state.in_channel = False


def _traced_cluster(cluster: str, fn: Callable[..., Any], module_path: str | None):
    from torch.overrides import TorchFunctionMode  # lazy: torch
    from torch.profiler import record_function  # lazy: torch

    source = os.path.realpath(module_path) if module_path else fn.__code__.co_filename
    state = threading.local()

    class _Label(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            if getattr(state, "in_channel", False):
                return func(*args, **(kwargs or {}))
            with record_function(_profiler_name(_statement_label(source))):
                return func(*args, **(kwargs or {}))

    def run(ch: Any, w: Any) -> None:
        _tids[threading.get_native_id()] = cluster
        with record_function(_profiler_name(f"cluster {cluster}")), _Label():
            fn(_TracingChannel(ch, state), w)

    run.__name__ = run.__qualname__ = getattr(fn, "__name__", cluster)
    return run


@functools.lru_cache(maxsize=4096)
def _profiler_name(text: str) -> str:
    """``text`` as a ``record_function`` name: torch 2.13's ``export_chrome_trace`` writes names
    into its JSON unescaped, so a ``"``, a backslash or a control character in an ONNX name made
    the trace unreadable (found by a fresh-user check: ``ramiel bench`` of a node named
    ``a"b``): ``'``, ``/`` and a space stand for them."""
    return _UNSAFE_IN_TRACE.sub(lambda m: _TRACE_SUBSTITUTES.get(m.group(), " "), text)


_UNSAFE_IN_TRACE = re.compile(r'["\\\x00-\x1f\x7f]')
_TRACE_SUBSTITUTES = {'"': "'", "\\": "/"}


def _realpath(filename: str) -> str:
    return os.path.realpath(filename)


@functools.lru_cache(maxsize=65536)
def _line_label(filename: str, lineno: int) -> str:
    line = linecache.getline(filename, lineno)
    m = _NODE_COMMENT.search(line)
    target = line.split("=", 1)[0].strip() if "=" in line else ""
    if m:
        return f"{m.group(1)} {m.group(2)}" + (f" -> {target}" if target else "")
    return line.strip()[:60] or "torch op"


def _statement_label(source: str) -> str:
    """The label of the generated statement (in file ``source``) that made the current call."""
    f = sys._getframe(2)
    while f is not None and _realpath(f.f_code.co_filename) != source:
        f = f.f_back  # type: ignore[assignment]
    if f is None:
        return "torch op"
    return _line_label(f.f_code.co_filename, f.f_lineno)


def _decorate_trace(data: Any, tids: Mapping[int, str], program: Any) -> dict[str, Any]:
    """Rename cluster rows, add put->get flow arrows; return a summary: the inference's wall time
    and, per cluster, its span and the time in statements (``busy``), waiting in ``get``, in
    ``put``, and the rest (Python glue and the labelling itself), all in ms."""
    events = data["traceEvents"] if isinstance(data, dict) else data
    pid = None
    puts: dict[str, dict[str, Any]] = {}
    gets: dict[str, dict[str, Any]] = {}
    stats: dict[str, dict[str, float]] = {}
    wall = 0.0
    for e in events:
        if e.get("ph") != "X":
            continue
        name = str(e.get("name", ""))
        dur = float(e.get("dur", 0.0)) / 1e3
        if name == "inference (caller)":
            wall = dur
        tid = e.get("tid")
        c = tids.get(tid) if isinstance(tid, int) else None
        if c is None:
            continue
        pid = e.get("pid")
        st = stats.setdefault(c, {"span": 0.0, "busy": 0.0, "get": 0.0, "put": 0.0, "ops": 0})
        if name.startswith("put "):
            puts[name[4:]] = e
            st["put"] += dur
        elif name.startswith("get "):
            gets[name[4:]] = e
            st["get"] += dur
        elif name.startswith("cluster "):
            st["span"] += dur
        elif not name.startswith(("aten::", "mkldnn::")):
            st["busy"] += dur
            st["ops"] += 1
    for st in stats.values():
        st["other"] = st["span"] - st["busy"] - st["get"] - st["put"]
        for k in st:
            st[k] = round(st[k], 3)
    flow = 0
    for ch, p in puts.items():
        g = gets.get(ch)
        if g is None:
            continue
        flow += 1
        common = {"name": ch, "cat": "transfer", "id": flow}
        events.append({**common, "ph": "s", "pid": p["pid"], "tid": p["tid"], "ts": p["ts"]})
        end = g["ts"] + max(g.get("dur", 0) - 0.001, 0)
        events.append({**common, "ph": "f", "bp": "e", "pid": g["pid"], "tid": g["tid"], "ts": end})
    order = list(program.clusters)
    for tid, c in tids.items():
        if pid is None:
            break
        events.append(
            {
                "ph": "M",
                "name": "thread_name",
                "pid": pid,
                "tid": tid,
                "args": {"name": f"cluster {c}"},
            }
        )
        events.append(
            {
                "ph": "M",
                "name": "thread_sort_index",
                "pid": pid,
                "tid": tid,
                "args": {"sort_index": order.index(c) if c in order else 99},
            }
        )
    return {
        "wall_ms": round(wall, 3),
        "clusters": {c: stats[c] for c in order if c in stats},
        "transfers": flow,
    }
