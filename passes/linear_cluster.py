"""``--linear-cluster``: linear clustering of ``@main`` along critical paths.

Kim & Browne's linear clustering (S. J. Kim and J. C. Browne, "A general approach to mapping of
parallel computation upon multiprocessor architectures", ICPP 1988): repeatedly take the critical
path (the path of largest b-level, node costs ``ramiel.cost_us`` plus edge transfer costs) of the
still-unclustered subgraph as one cluster, until every compute op is clustered; see
:func:`ramiel.scheduling.linear_clustering`. Edges inside a cluster are zeroed (no transfer).

The result is in ``cluster`` dialect form: one ``cluster.cluster`` per path, explicit
``cluster.send``/``cluster.recv`` for every tensor that crosses clusters, each cluster's ops in an
order consistent with one global topological order (deadlock-free). A clustered input is
flattened first. Ops without ``ramiel.cost_us`` use the analytic cost model (with a warning).

Raises :class:`~ramiel.errors.SchedulingError` for a cyclic graph. No options.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ramiel.clustering import recluster
from ramiel.scheduling import linear_clustering


@dataclass(frozen=True)
class LinearCluster(ModulePass):
    """See the module docstring."""

    name = "linear-cluster"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        recluster(op, lambda gv, _current: linear_clustering(gv.graph))
