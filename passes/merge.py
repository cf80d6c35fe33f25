"""``--merge{clusters=N tolerance=F}``: merge the clusters of ``@main`` down to at most N.

Runs :func:`ramiel.scheduling.merge_clusters`: clusters whose work is smaller than the transfers
they cause are absorbed into their heaviest-communicating neighbour, then the rest are mapped onto
N workers (guided load balancing, LPT and a communication-aware greedy mapping, each scored by
simulating the schedule with transfer costs, then improved by checked single-cluster moves;
Sarkar 1989, Yang & Gerasoulis 1992/1994). The estimated makespan never exceeds the sequential
time: if it would, fewer clusters are used. The fewest clusters d (2 <= d <= N / 2) whose
schedule is estimated within ``tolerance`` of the best one are used instead where there are
such: the runtime gives the cores of the clusters not made to the others as intra-op threads
(:func:`ramiel.scheduling.merge_clusters`, step 4). ``clusters=1`` gives the sequential program.
Sets the module attribute ``ramiel.cores`` to N, which the printer writes into the program
(``Program(cores=N)``) so that the generated module gives each worker
:meth:`~ramiel.runtime.Program.planned_threads` intra-op threads by default.

Options: ``clusters=N`` (default: the number of CPU cores), ``tolerance=F`` (default 0.05: 5 %;
0 turns the fewest-clusters choice off). A flat (unclustered) ``@main`` is linearly clustered first.
Raises :class:`~ramiel.errors.SchedulingError` for N < 1 or a negative tolerance.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ramiel.attrs import CORES_ATTR, set_int
from ramiel.clustering import recluster
from ramiel.errors import SchedulingError
from ramiel.scheduling import linear_clustering, merge_clusters
from ramiel.scheduling.merge import FEWER_WORKERS_TOLERANCE


@dataclass(frozen=True)
class Merge(ModulePass):
    """See the module docstring."""

    name = "merge"

    clusters: int | None = None
    tolerance: float | int = FEWER_WORKERS_TOLERANCE

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        n = self.clusters if self.clusters is not None else (os.cpu_count() or 1)
        if n < 1:
            raise SchedulingError(f"merge: clusters must be at least 1, got {n}")
        if not self.tolerance >= 0:
            raise SchedulingError(f"merge: tolerance must be at least 0, got {self.tolerance}")

        def algorithm(gv, current):  # type: ignore[no-untyped-def]
            start = current or linear_clustering(gv.graph)
            return merge_clusters(gv.graph, start, n, self.tolerance)

        recluster(op, algorithm)
        set_int(op, CORES_ATTR, n)
