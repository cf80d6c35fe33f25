"""``--intra-op-threads{cores=N}``: give ops more intra-op threads where cores would idle.

Hybrid inter-/intra-op parallelism. The clusters of ``@main`` run concurrently on N cores, one
worker each; while fewer clusters than cores are busy (before the first fork, after the last join,
while a cluster waits for a transfer, or always in a one-cluster program) an op can use the idle
cores through PyTorch's intra-op threads. This pass chooses, for every op of every cluster, the
fastest thread count up to N // (clusters that may run meanwhile, by dependences: whatever the op
times), gives every cluster's OpenMP pool cores of its own (the sum over clusters of their widest
count <= N: a pool's helpers spin after each parallel region, and would take another cluster's
core), and keeps the result only if it beats one thread everywhere in the estimate
(:func:`ramiel.scheduling.threads.assign_threads`). On 2 cores, so, only a one-cluster program
gets per-op counts.

Sets on every compute op ``ramiel.threads`` (i64, at least 1) and ``ramiel.threaded_cost_us``
(f64, its estimated cost with that many threads), and the module attribute ``ramiel.cores``.
``--lower-to-torchpy`` turns a change of count into a ``torchpy.set_threads`` statement
(``ops.set_threads(n)``: ``torch.set_num_threads`` in the worker's own thread, capped at run
time to the cores its cluster may use, :meth:`ramiel.runtime.Program.thread_caps`). A flat ``@main`` is treated as one
cluster. Run it after the clustering passes: they drop these attributes, since the counts belong to
one schedule.

Costs with t threads: from the profile database (``profile=FILE``, entries ``<key>@t<t>`` written by
``ramiel profile --threads 1,t``), else the analytic model
:func:`ramiel.cost_model.intra_op_cost_us` applied to ``ramiel.cost_us``.

Options: ``cores=N`` (default: the cores this process may run on), ``profile=FILE``. Raises
:class:`~ramiel.errors.SchedulingError` for N < 1 or a missing profile database.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ramiel.attrs import CORES_ATTR, set_float, set_int
from ramiel.clustering import (
    THREADED_COST_ATTR,
    THREADS_ATTR,
    cluster_compute_ops,
    current_clustering,
)
from ramiel.cost_model import (
    ProfileDB,
    intra_op_cost_us,
    profile_key,
    threads_key,
    usable_cores,
)
from ramiel.errors import SchedulingError
from ramiel.omp import MAX_COUNT
from ramiel.scheduling.threads import assign_threads


@dataclass(frozen=True)
class IntraOpThreads(ModulePass):
    """See the module docstring."""

    name = "intra-op-threads"

    cores: int | None = None
    profile: str | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        cores = self.cores if self.cores is not None else usable_cores()
        if cores < 1 or (self.cores is not None and cores > MAX_COUNT):
            raise SchedulingError(
                f"intra-op-threads: cores must be from 1 to {MAX_COUNT}, got {cores}"
            )
        db = ProfileDB.load(self.profile) if self.profile else None
        gv, clusters = current_clustering(op)
        per_cluster = cluster_compute_ops(op)
        if not gv.ops:
            return
        cost_at = [list(gv.graph.cost)]
        for t in range(2, cores + 1):
            row = []
            for v, node_op in enumerate(gv.ops):
                us = db.times.get(threads_key(profile_key(node_op), t)) if db else None
                row.append(us if us is not None else intra_op_cost_us(node_op, cost_at[0][v], t))
            cost_at.append(row)
        result = assign_threads(gv.graph, clusters, cores, cost_at)
        for ops, ts, cs in zip(per_cluster, result.threads, result.costs, strict=True):
            for o, t, c in zip(ops, ts, cs, strict=True):
                set_int(o, THREADS_ATTR, t)
                set_float(o, THREADED_COST_ATTR, round(c, 3))
        set_int(op, CORES_ATTR, cores)
