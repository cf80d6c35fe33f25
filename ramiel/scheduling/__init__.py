"""Static scheduling of task graphs: levels, linear clustering, merging, cloning, estimates.

Pure algorithms on a plain DAG (:class:`TaskGraph`: node costs in µs, edge transfer costs in µs and
sizes in bytes); no IR or ONNX here. The IR passes build a ``TaskGraph`` from IR, call these
functions and rewrite the IR from the resulting :data:`Clustering` (a list of clusters, each the
node ids it runs, in order)::

    g = TaskGraph.from_edges(costs, [(src, dst, comm_us, nbytes), ...], names)
    clusters = linear_clustering(g)                   # Kim & Browne 1988
    clusters = merge_clusters(g, clusters, workers)   # absorb + GLB/LLB mapping + checked moves
    clusters = clone_producers(g, clusters, cheap)    # task duplication of cheap producers
    print(ScheduleReport.from_clustering(g, clusters).to_text())

Every function raises :class:`ramiel.errors.SchedulingError` for a cyclic graph (naming the nodes
on a cycle) or an invalid clustering. Units: node and edge costs, levels, start/finish times and
makespans are µs; sizes are bytes. Results are deterministic (ties go to the earlier node in
:meth:`TaskGraph.topo_order`).

Modules: :mod:`~ramiel.scheduling.graph` (TaskGraph, levels, critical path),
:mod:`~ramiel.scheduling.linear` (linear clustering), :mod:`~ramiel.scheduling.simulate`
(execution model, makespan, ordering, transfers), :mod:`~ramiel.scheduling.merge`,
:mod:`~ramiel.scheduling.clone`, :mod:`~ramiel.scheduling.report`.
"""

from ramiel.scheduling.clone import clone_producers
from ramiel.scheduling.graph import Clustering, TaskGraph, b_levels, critical_path, t_levels
from ramiel.scheduling.linear import linear_clustering
from ramiel.scheduling.merge import merge_clusters
from ramiel.scheduling.report import ClusterStats, ScheduleReport
from ramiel.scheduling.simulate import (
    Schedule,
    Transfer,
    estimate_makespan,
    order_and_estimate,
    order_clusters,
    transfers,
)

__all__ = [
    "ClusterStats",
    "Clustering",
    "Schedule",
    "ScheduleReport",
    "TaskGraph",
    "Transfer",
    "b_levels",
    "clone_producers",
    "critical_path",
    "estimate_makespan",
    "linear_clustering",
    "merge_clusters",
    "order_and_estimate",
    "order_clusters",
    "t_levels",
    "transfers",
]
