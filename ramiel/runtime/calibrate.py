"""Measure what a channel transfer costs on each backend: a per-message latency and a per-byte cost.

The scheduler weighs a cross-cluster edge of ``n`` bytes as
``TransferCost.cost_us(n) = latency_us + us_per_byte * n``.

Method (:func:`measure_transfer_cost`): a two-cluster program ping-pongs inside the workers. ``c1``
first signals that it is running; ``c0`` then starts a clock, puts an ``n``-byte tensor to ``c1``,
waits for a 4-byte answer, and stops the clock, so the time is two messages (one of ``n`` bytes, one
of 4) plus nothing of the caller's dispatch. Each size is run ``repeats`` times after a warm-up and
the median is kept. ``latency_us`` is half the median round trip of the small sizes (up to
64 KiB); ``us_per_byte`` is the least-squares slope of the larger sizes' round trips (see
:func:`fit`). What is measured is the sender's ``put`` plus the wake-up of the receiver: on the
processes backend that includes the copy into the shared buffer; on the threads backend no copy
happens, so the slope is about 0. The receiver then reads the data as part of its next op, whose
cost is not a transfer cost.

:func:`measure_run_overhead` measures the fixed cost of one ``Runner.run`` (dispatch to every
worker and collection of their answers) with clusters that do nothing but one tiny put.

Defaults: measured on this machine (2 cores, shared and noisy, torch 2.13.0 CPU, Python 3.11.7,
fork), 2026-11-29, with ``python bench/transfer_cost.py --repeats 50`` run three times; each value is
the median of the three runs (full output in ``bench/results/transfer_cost.txt``):

=========================  ==========  ===========  ===========  ===============
backend                    latency µs  µs per MiB   ≈ GB/s       run overhead µs
=========================  ==========  ===========  ===========  ===============
threads                    14.2        0.1          (no copy)    39
threads ``copy_on_put``    11.2        61.6         17           43
processes                  7.9         61.7         17           78
processes ``copy_on_get``  11.7        119.2        8.8          77
=========================  ==========  ===========  ===========  ===============

So a message costs ~10-15 µs on either local backend (threads pay a GIL hand-off, processes a semaphore wake-up);
bytes are free on threads and cost one memcpy (~17 GB/s, ~1 ms for 16 MiB) on processes; copying
out at ``get`` as well would double that (the clone also allocates and faults fresh pages), which is
why the processes backend hands out the shared buffer zero-copy.

The distributed backend (gloo over loopback, one rank per cluster; ``ramiel calibrate``'s
:func:`sweep_program`, 2026-12-01, ``ramiel calibrate --repeats 100 --quantile 0.1`` three times,
median of the fits; the runs in ``bench/results/transfer_cost_distributed.json``): **108.7 µs per
message** and 460 µs per MiB (2.3 GB/s). The machine was shared then (load average 11-15 from
other users' test suites), and most round trips took a scheduler tick (~4 ms) more: the medians
per size were 0.3-3.9 ms. The fit therefore uses the 10th percentile, the cost of a message
when the ranks have their cores, which is what the schedule should plan for; under load every
message pays the tick again. A gloo message costs about ten times a shared-memory hand-off.
"""

from __future__ import annotations

import datetime
import json
import os
import socket
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from ramiel.errors import RamielError
from ramiel.runtime.distributed import in_torchrun, join_group
from ramiel.runtime.launch import start
from ramiel.runtime.program import ChannelSpec, Program
from ramiel.runtime.runner import Runner
from ramiel.runtime.weights import Weights


@dataclass(frozen=True)
class TransferCost:
    """Cost model of one channel message: ``latency_us + us_per_byte * nbytes`` microseconds."""

    latency_us: float
    us_per_byte: float

    def cost_us(self, nbytes: int) -> float:
        """Estimated µs to send one tensor of ``nbytes`` bytes over a channel."""
        return self.latency_us + self.us_per_byte * nbytes


#: Measured defaults per backend (see the module docstring for when and how).
DEFAULT_TRANSFER_COST: dict[str, TransferCost] = {
    "threads": TransferCost(latency_us=14.2, us_per_byte=1.3e-07),
    "processes": TransferCost(latency_us=7.9, us_per_byte=5.9e-05),
    "distributed": TransferCost(latency_us=108.7, us_per_byte=4.39e-04),
}

#: Measured fixed cost of one ``Runner.run`` with two clusters, µs (see the module docstring).
DEFAULT_RUN_OVERHEAD_US: dict[str, float] = {"threads": 39.0, "processes": 78.0}

DEFAULT_SIZES = (4, 4096, 65536, 1 << 20, 4 << 20, 16 << 20)


def _pp_c0(ch, w):
    ch.get("ready__c1_c0")
    payload = w.payload
    t0 = time.perf_counter()
    ch.put("ping__c0_c1", payload)
    ch.get("pong__c1_c0")
    dt = time.perf_counter() - t0
    ch.put("dt__out", torch.tensor(dt, dtype=torch.float64))


def _pp_c1(ch, w):
    ch.put("ready__c1_c0", w.tiny)
    ch.get("ping__c0_c1")
    ch.put("pong__c1_c0", w.tiny)


def ping_pong_program(nbytes: int) -> tuple[Program, Weights]:
    """The two-cluster ping-pong program for ``nbytes`` (rounded up to float32 elements)."""
    n = max(1, (nbytes + 3) // 4)
    f32 = torch.float32
    program = Program(
        name=f"ping_pong_{nbytes}",
        clusters={"c0": _pp_c0, "c1": _pp_c1},
        channels={
            "ready__c1_c0": ChannelSpec("c1", "c0", (1,), f32),
            "ping__c0_c1": ChannelSpec("c0", "c1", (n,), f32),
            "pong__c1_c0": ChannelSpec("c1", "c0", (1,), f32),
            "dt__out": ChannelSpec("c0", None, (), torch.float64),
        },
        inputs={},
        outputs={"dt": "dt__out"},
    )
    weights = Weights({"payload": torch.randn(n), "tiny": torch.zeros(1)})
    return program, weights


def round_trips(
    backend: str,
    sizes: Sequence[int] = DEFAULT_SIZES,
    repeats: int = 30,
    warmup: int = 5,
    **options: Any,
) -> dict[int, float]:
    """Median ping-pong round trip in µs per payload size in bytes (see the module docstring).

    ``options`` go to :func:`~ramiel.runtime.launch.start` (e.g. ``copy_on_put=True``).
    """
    out: dict[int, float] = {}
    for nbytes in sizes:
        program, weights = ping_pong_program(nbytes)
        with start(program, weights, backend=backend, **options) as r:
            for _ in range(warmup):
                r()
            samples = [r()[0].item() * 1e6 for _ in range(repeats)]
        out[nbytes] = statistics.median(samples)
    return out


def fit(rtts: dict[int, float], small_bytes: int = 65536) -> TransferCost:
    """Fit a :class:`TransferCost` to round trips from :func:`round_trips` (two messages each).

    ``latency_us`` is half the median round trip over the sizes up to ``small_bytes`` (where the
    copy costs a few µs at most; one size alone is too noisy on a shared machine); ``us_per_byte``
    is the least-squares slope, through that point at size 0, of the larger sizes.
    """
    sizes = sorted(rtts)
    small = [s for s in sizes if s <= small_bytes] or sizes[:1]
    large = [s for s in sizes if s not in small]
    r0 = statistics.median(rtts[s] for s in small)
    den = sum(s * s for s in large)
    slope = sum(s * (rtts[s] - r0) for s in large) / den if den else 0.0
    return TransferCost(latency_us=max(r0 / 2, 0.0), us_per_byte=max(slope, 0.0))


def measure_transfer_cost(
    backend: str,
    sizes: Sequence[int] = DEFAULT_SIZES,
    repeats: int = 30,
    **options: Any,
) -> TransferCost:
    """Measure the channel cost model of ``backend`` on this machine.

    Args:
        backend: ``"threads"`` or ``"processes"``.
        sizes: payload sizes in bytes; at least two, the smallest sets the latency.
        repeats: measured round trips per size (median kept).
        **options: passed to :func:`~ramiel.runtime.launch.start`.

    Returns:
        The fitted :class:`TransferCost` (µs, µs/byte).
    """
    if len(sizes) < 2:
        raise ValueError("need at least two sizes to fit a latency and a per-byte cost")
    return fit(round_trips(backend, sizes, repeats, **options))


def _noop(ch, w):
    ch.put(f"y{ch.cluster[1:]}__out", w.tiny)


def measure_run_overhead(
    backend: str, n_clusters: int = 2, repeats: int = 200, **options: Any
) -> float:
    """Median µs of one ``Runner.run`` of ``n_clusters`` clusters that each put one tiny output."""
    clusters = {f"c{i}": _noop for i in range(n_clusters)}
    program = Program(
        name="noop",
        clusters=clusters,
        channels={
            f"y{i}__out": ChannelSpec(f"c{i}", None, (1,), torch.float32) for i in range(n_clusters)
        },
        inputs={},
        outputs={f"y{i}": f"y{i}__out" for i in range(n_clusters)},
    )
    with start(program, {"tiny": torch.zeros(1)}, backend=backend, **options) as r:
        for _ in range(10):
            r()
        samples = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            r()
            samples.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(samples)


# ------------------------------------------------------------------ one program for all sizes


def _sweep_c0(ch, w):
    ch.get("ready__c1_c0")
    k = int(w.sizes.numel())
    dt = torch.empty(k, dtype=torch.float64)
    for i in range(k):
        payload = w[f"payload{i}"]
        t0 = time.perf_counter()
        ch.put(f"ping{i}__c0_c1", payload)
        ch.get(f"pong{i}__c1_c0")
        dt[i] = time.perf_counter() - t0
    ch.put("dt__out", dt)


def _sweep_c1(ch, w):
    ch.put("ready__c1_c0", w.tiny)
    for i in range(int(w.sizes.numel())):
        ch.get(f"ping{i}__c0_c1")
        ch.put(f"pong{i}__c1_c0", w.tiny)


def sweep_program(sizes: Sequence[int]) -> tuple[Program, Weights]:
    """One two-cluster program that ping-pongs every size of ``sizes`` once per inference.

    The same method as :func:`ping_pong_program` (``c1`` signals that it runs, then ``c0`` times
    ``put(size)`` + ``get(4 B)`` per size), in one program, so that one group of ranks measures
    every size: what ``ramiel calibrate`` runs, also under ``torchrun`` across machines.
    """
    f32 = torch.float32
    counts = [max(1, (n + 3) // 4) for n in sizes]
    channels = {"ready__c1_c0": ChannelSpec("c1", "c0", (1,), f32)}
    for i, n in enumerate(counts):
        channels[f"ping{i}__c0_c1"] = ChannelSpec("c0", "c1", (n,), f32)
        channels[f"pong{i}__c1_c0"] = ChannelSpec("c1", "c0", (1,), f32)
    channels["dt__out"] = ChannelSpec("c0", None, (len(counts),), torch.float64)
    program = Program(
        name="transfer_sweep",
        clusters={"c0": _sweep_c0, "c1": _sweep_c1},
        channels=channels,
        inputs={},
        outputs={"dt": "dt__out"},
    )
    weights = {f"payload{i}": torch.randn(n) for i, n in enumerate(counts)}
    weights["tiny"] = torch.zeros(1)
    weights["sizes"] = torch.tensor(list(sizes), dtype=torch.int64)
    return program, Weights(weights)


def sweep_samples(
    runner: Any, sizes: Sequence[int], repeats: int = 30, warmup: int = 5
) -> dict[int, list[float]]:
    """Every timed round trip in µs per size, from a started runner of :func:`sweep_program`."""
    for _ in range(warmup):
        runner()
    samples = [runner()[0].tolist() for _ in range(repeats)]
    return {n: [s[i] * 1e6 for s in samples] for i, n in enumerate(sizes)}


def _quantile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0 to 1) of ``values``, linear between order statistics."""
    v = sorted(values)
    x = q * (len(v) - 1)
    lo = int(x)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (x - lo)


def calibrate(
    backend: str = "distributed",
    sizes: Sequence[int] = DEFAULT_SIZES,
    repeats: int = 30,
    out: str | None = None,
    command: str | None = None,
    quantile: float = 0.5,
    **options: Any,
) -> tuple[TransferCost, dict[str, Any]] | None:
    """Measure the transfer cost model of ``backend`` and optionally write it to ``out``.

    ``quantile``: which round trip of the ``repeats`` per size the fit uses (0.5: the median;
    a low one, e.g. 0.1, estimates the cost on a machine whose cores the ranks have to
    themselves, where a busy shared machine delays many messages by a scheduler tick).

    Runs :func:`sweep_program` on ``backend``: for ``distributed`` inside the ``torchrun`` group
    this process belongs to (``c0`` on rank 0, ``c1`` on rank 1, e.g. two machines), else on
    ranks (or workers) started here. The file is what ``--transfer-cost FILE`` reads: JSON with
    ``latency_us`` and ``us_per_byte`` plus notes (round trips per size, hosts, load, date).

    Returns:
        ``(cost, record)`` on the process that measured (rank 0), ``None`` on other ranks.

    Raises:
        RamielError: fewer than two sizes, or a ``torchrun`` group of one rank.
    """

    if len(sizes) < 2:
        raise RamielError("calibrate needs at least two payload sizes")
    program, weights = sweep_program(sizes)
    hosts = [socket.gethostname()]

    if backend == "distributed" and in_torchrun():
        if int(os.environ["WORLD_SIZE"]) < 2:
            raise RamielError(
                "calibrate under torchrun needs at least 2 ranks (c0 on rank 0, c1 on 1)"
            )
        joined = join_group(program, weights, **options)
        if joined is None:
            return None
        runner: Runner = joined
        g = joined.group
        hosts = [json.loads(g.store.get(g.key("fp", r))).get("host", "?") for r in (0, 1)]
    else:
        runner = start(program, weights, backend=backend, **options)
    if not 0.0 <= quantile <= 1.0:
        raise RamielError(f"the quantile must be between 0 and 1, got {quantile:g}")
    with runner:
        per_size = sweep_samples(runner, sizes, repeats)
    rtts = {n: _quantile(v, quantile) for n, v in per_size.items()}
    cost = fit(rtts)
    record: dict[str, Any] = {
        "latency_us": round(cost.latency_us, 3),
        "us_per_byte": cost.us_per_byte,
        "backend": backend,
        "bytes_per_s": (1.0 / cost.us_per_byte * 1e6) if cost.us_per_byte > 0 else None,
        "round_trips_us": {str(n): round(v, 2) for n, v in rtts.items()},
        "quantile": quantile,
        "median_round_trips_us": {str(n): round(_quantile(v, 0.5), 2) for n, v in per_size.items()},
        "repeats": repeats,
        "hosts": hosts,
        "measured": datetime.datetime.now().isoformat(timespec="seconds"),
        "load": _loadavg(),
        "torch": torch.__version__,
    }
    if command:
        record["command"] = command
    if out:
        with open(out, "w") as f:
            f.write(json.dumps(record, indent=2) + "\n")
    return cost, record


def _loadavg() -> str | None:
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return None
