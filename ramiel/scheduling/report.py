"""A printable summary of a clustering: work per cluster, transfers, W/CP, estimated makespan.

The numbers are the static estimates Ramiel schedules with, so that predicted and measured schedules
can be compared (``W / CP`` is the most any task-parallel schedule can gain on unlimited workers;
``speed-up = W / makespan`` is what this clustering is predicted to gain).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from ramiel.scheduling.graph import TaskGraph, critical_path
from ramiel.scheduling.simulate import critical_transfer_us, estimate_makespan, transfers


@dataclass
class ClusterStats:
    """Per-cluster numbers of a :class:`ScheduleReport` (times in µs, sizes in bytes)."""

    index: int
    ops: int
    work_us: float
    start_us: float
    finish_us: float
    transfers_in: int
    bytes_in: int
    transfers_out: int
    bytes_out: int


@dataclass
class ScheduleReport:
    """Static estimates for a clustering of a task graph (times in µs, sizes in bytes).

    Attributes:
        clusters: one :class:`ClusterStats` per cluster, in cluster index order.
        nodes: number of nodes of the graph.
        copies: number of node copies over all clusters (``> nodes`` when there are clones).
        work_us: W, the sum of the node costs: the estimated sequential time.
        cloned_work_us: extra work done by clones (total work of all copies minus W).
        critical_path_us: CP, the computation-only critical path (transfer costs ignored).
        parallelism: W / CP (1.0 for a graph without work).
        makespan_us: estimated makespan of the clustering in its given order.
        speedup: W / makespan (1.0 for a graph without work).
        transfers: number of values sent between clusters.
        transfer_bytes: bytes sent between clusters.
        transfer_us: summed transfer cost of those values.
        critical_transfer_us: transfer time on the schedule's critical path (see
            :func:`~ramiel.scheduling.simulate.critical_transfer_us`); ``transfer_share`` is its
            fraction of the makespan.
        threaded_ops: op copies that run with more than one intra-op thread
            (``--intra-op-threads``); the makespan counts their shorter times.
        max_threads: the most intra-op threads any op runs with.
    """

    clusters: list[ClusterStats]
    nodes: int
    copies: int
    work_us: float
    cloned_work_us: float
    critical_path_us: float
    parallelism: float
    makespan_us: float
    speedup: float
    transfers: int
    transfer_bytes: int
    transfer_us: float
    threaded_ops: int = 0
    max_threads: int = 1
    critical_transfer_us: float = 0.0

    @property
    def transfer_share(self) -> float:
        """The share of the estimated makespan spent waiting for transfers (0 to 1)."""
        return self.critical_transfer_us / self.makespan_us if self.makespan_us > 0 else 0.0

    @classmethod
    def from_clustering(
        cls,
        g: TaskGraph,
        clusters: Sequence[Sequence[int]],
        threads: Sequence[Sequence[int]] | None = None,
        costs: Sequence[Sequence[float]] | None = None,
    ) -> ScheduleReport:
        """Compute the report of ``clusters`` (simulated in their given order). O(n + e).

        ``threads``/``costs`` (per cluster and position, from ``--intra-op-threads``): each copy's
        intra-op threads and its cost with them (µs); the makespan is simulated with those costs,
        while W, CP and the per-cluster work stay one-thread figures.

        Raises:
            SchedulingError: an invalid clustering, a cyclic graph or orders that deadlock.
        """
        sched = estimate_makespan(g, clusters, costs)
        trs = transfers(g, clusters)
        k = len(clusters)
        t_in = [0] * k
        t_out = [0] * k
        b_in = [0] * k
        b_out = [0] * k
        for t in trs:
            t_in[t.dst] += 1
            b_in[t.dst] += t.nbytes
            t_out[t.src] += 1
            b_out[t.src] += t.nbytes
        stats = []
        for c, members in enumerate(clusters):
            stats.append(
                ClusterStats(
                    index=c,
                    ops=len(members),
                    work_us=math.fsum(g.cost[v] for v in members),
                    start_us=sched.start[c][0] if members else 0.0,
                    finish_us=sched.finish[c][-1] if members else 0.0,
                    transfers_in=t_in[c],
                    bytes_in=b_in[c],
                    transfers_out=t_out[c],
                    bytes_out=b_out[c],
                )
            )
        w = g.total_work()
        cp, _ = critical_path(g, with_comm=False)
        all_work = math.fsum(s.work_us for s in stats)
        return cls(
            clusters=stats,
            nodes=g.n,
            copies=sum(len(c) for c in clusters),
            work_us=w,
            cloned_work_us=max(0.0, all_work - w),
            critical_path_us=cp,
            parallelism=w / cp if cp > 0 else 1.0,
            makespan_us=sched.makespan,
            speedup=w / sched.makespan if sched.makespan > 0 else 1.0,
            transfers=len(trs),
            transfer_bytes=sum(t.nbytes for t in trs),
            transfer_us=math.fsum(t.comm_us for t in trs),
            threaded_ops=sum(t > 1 for ts in threads for t in ts) if threads else 0,
            max_threads=max((t for ts in threads for t in ts), default=1) if threads else 1,
            critical_transfer_us=critical_transfer_us(g, sched),
        )

    def to_dict(self) -> dict:
        """Plain dict (JSON-serialisable), ``clusters`` as a list of dicts, with
        ``transfer_share``."""
        return dict(asdict(self), transfer_share=self.transfer_share)

    def to_json(self, indent: int | None = 2) -> str:
        """The :meth:`to_dict` form as JSON text."""
        return json.dumps(self.to_dict(), indent=indent)

    def to_text(self) -> str:
        """An aligned table: one row per cluster, then the totals."""
        head = (
            "cluster",
            "ops",
            "work_us",
            "start_us",
            "finish_us",
            "xfer_in",
            "bytes_in",
            "xfer_out",
            "bytes_out",
        )
        rows = [
            (
                str(s.index),
                str(s.ops),
                f"{s.work_us:.1f}",
                f"{s.start_us:.1f}",
                f"{s.finish_us:.1f}",
                str(s.transfers_in),
                str(s.bytes_in),
                str(s.transfers_out),
                str(s.bytes_out),
            )
            for s in self.clusters
        ]
        widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]

        def line(r: Sequence[str]) -> str:
            return "  ".join(
                x.ljust(w) if i == 0 else x.rjust(w)
                for i, (x, w) in enumerate(zip(r, widths, strict=True))
            ).rstrip()

        out = [line(head), line(["-" * w for w in widths])]
        out += [line(r) for r in rows]
        summary = [
            ("nodes", f"{self.nodes} ({self.copies} copies)"),
            ("clusters", str(len(self.clusters))),
            ("work W", f"{self.work_us:.1f} us (+{self.cloned_work_us:.1f} us cloned)"),
            ("critical path CP", f"{self.critical_path_us:.1f} us (computation only)"),
            ("W/CP", f"{self.parallelism:.2f}"),
            ("est. makespan", f"{self.makespan_us:.1f} us"),
            ("est. speed-up", f"{self.speedup:.2f}x over sequential"),
            (
                "transfers",
                f"{self.transfers} ({self.transfer_bytes} bytes, {self.transfer_us:.1f} us)",
            ),
            (
                "transfer share",
                f"{100 * self.transfer_share:.1f} % of the makespan "
                f"({self.critical_transfer_us:.1f} us of transfers on the critical path)",
            ),
        ]
        if self.threaded_ops:
            summary.insert(
                5,
                (
                    "intra-op threads",
                    f"{self.threaded_ops} op(s) with up to {self.max_threads} threads",
                ),
            )
        kw = max(len(k) for k, _ in summary)
        out.append("")
        out += [f"{k.ljust(kw)}  {v}" for k, v in summary]
        return "\n".join(out)
