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

``intra-op=true``: where N > 1 and the merge kept several clusters, also estimate the program as
one cluster whose ops run with N intra-op threads (each op's cost through
:func:`ramiel.cost_model.intra_op_cost_us`), and the clusters kept with N // C threads each (the
same scaling, then the schedule's makespan, plus the fixed cost of starting the workers,
:data:`ramiel.cost_model.PARALLEL_START_US`), and take one cluster where its estimate is lower.
The runtime's helpers spin and are bound to cores of their own (:mod:`ramiel.runtime.binding`),
so 2 intra-op threads pay at batch size 1: measured on 2 cores (``python
bench/split_vs_threads.py``, docs/benchmarks.md), one cluster with 2 threads was 1.16-1.57x
faster than the 2 clusters of 1 thread the merge kept, on all 7 models where it kept 2
(light_squeezenet, light_shufflenet, light_inception_v1/v2, light_resnet50, the project's
inception CNN and transformer). ``ramiel.compile``/``ramiel compile`` turn it on when the
number of clusters was not given (clusters = cores); an explicit ``clusters=N`` keeps the
clusters as asked. ``max-threads=T`` caps both estimates' threads per cluster at T (a user's
``OMP_NUM_THREADS``, which the runtime keeps to: :func:`ramiel.omp.thread_limit`): with
``max-threads=1`` one cluster gains nothing from the cores, and the clusters stay.

``onednn-graph=true`` (with ``intra-op=true``): the program will run its compute as
``onednn-graph`` segments (``--compile-segments{backend=onednn-graph}``, which the default
``compile="auto"`` prints where :func:`~ramiel.passes.compile_segments.onednn_graph_pays` says
so). The one-cluster program's forward is then one traced segment, which saves the eager call
overhead of every Conv, Gemm and MatMul
(:func:`~ramiel.passes.compile_segments.traced_saving_us`, µs, not divided by the threads: the
overhead is serial); the one-cluster estimate is lowered by that saving. The clusters'
estimate is not: their compute is cut into a segment at every channel operation, and
segments of a few ops gained nothing measured. On the project's inception CNN (2 cores, each
program in its own process, interleaved, 2026-12-06, ``python bench/fusion_vs_split.py``,
docs/benchmarks.md): 2 clusters of 1 thread 18.6 ms eagerly and 19.2 ms traced (41 segments),
one cluster of 2 threads 16.9 ms eagerly and 13.4 ms traced; with this option the merge takes
the one cluster there.

Options: ``clusters=N`` (default: the number of CPU cores), ``tolerance=F`` (default 0.05: 5 %;
0 turns the fewest-clusters choice off), ``intra-op=true|false`` (default false),
``max-threads=T`` (default: none), ``onednn-graph=true|false`` (default false). A flat
(unclustered) ``@main`` is linearly clustered first.
Raises :class:`~ramiel.errors.SchedulingError` for N < 1, a negative tolerance or T < 1.
"""

from __future__ import annotations

import dataclasses
import math
import os
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ramiel.attrs import CORES_ATTR, set_int
from ramiel.clustering import GraphView, recluster
from ramiel.cost_model import PARALLEL_START_US, intra_op_cost_us
from ramiel.errors import SchedulingError
from ramiel.omp import MAX_COUNT
from ramiel.passes.compile_segments import traced_saving_us
from ramiel.scheduling import estimate_makespan, linear_clustering, merge_clusters
from ramiel.scheduling.merge import FEWER_WORKERS_TOLERANCE


@dataclass(frozen=True)
class Merge(ModulePass):
    """See the module docstring."""

    name = "merge"

    clusters: int | None = None
    tolerance: float | int = FEWER_WORKERS_TOLERANCE
    intra_op: bool = False
    max_threads: int | None = None
    onednn_graph: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        n = self.clusters if self.clusters is not None else (os.cpu_count() or 1)
        if n < 1 or (self.clusters is not None and n > MAX_COUNT):
            raise SchedulingError(f"merge: clusters must be from 1 to {MAX_COUNT}, got {n}")
        if not self.tolerance >= 0:
            raise SchedulingError(f"merge: tolerance must be at least 0, got {self.tolerance}")
        cap = self.max_threads
        if cap is not None and not 1 <= cap <= MAX_COUNT:
            raise SchedulingError(f"merge: max-threads must be from 1 to {MAX_COUNT}, got {cap}")

        def algorithm(gv, current):  # type: ignore[no-untyped-def]
            start = current or linear_clustering(gv.graph)
            result = merge_clusters(gv.graph, start, n, self.tolerance)
            if self.intra_op and n > 1 and len(result) > 1:
                one, kept = intra_op_estimates(gv, result, n, cap)
                if self.onednn_graph:
                    one -= traced_saving_us(gv.ops)
                # one cluster also wins where its ops alone, on one thread, beat the clusters
                # (a model of a few hundred µs: too small for threads or workers)
                alone = gv.graph.total_work()
                if min(one, alone) < kept + PARALLEL_START_US:
                    return [gv.graph.topo_order()]
            return result

        recluster(op, algorithm)
        set_int(op, CORES_ATTR, n)


def intra_op_estimates(
    gv: GraphView, clustering: list[list[int]], cores: int, max_threads: int | None = None
) -> tuple[float, float]:
    """(one cluster with ``cores`` intra-op threads, ``clustering`` with ``cores // C`` threads
    per cluster; both at most ``max_threads``): estimated times in µs, each op's cost scaled by
    :func:`~ramiel.cost_model.intra_op_cost_us`; the second is the schedule's makespan."""
    g = gv.graph
    cap = max_threads or cores
    one = math.fsum(intra_op_cost_us(gv.ops[v], g.cost[v], min(cores, cap)) for v in range(g.n))
    per = min(cap, cores // max(1, len(clustering)))
    if per > 1:
        g = dataclasses.replace(
            g, cost=[intra_op_cost_us(gv.ops[v], g.cost[v], per) for v in range(g.n)]
        )
    return one, estimate_makespan(g, clustering).makespan
