"""``--clone``: duplicate cheap producers into the clusters that consume them.

Task duplication (as in DSH/CPFD, Kruatrachue & Lewis 1988; Ahmad & Kwok 1998), restricted to
cheap ops: a *cloneable* op (one of the ``Cheap`` category of :mod:`ramiel.dialects.onnx_traits`,
pure data movement such as Reshape, Unsqueeze, Squeeze, Flatten, Shape, Cast, Identity, Gather on
shapes, estimated at most 50 µs; or any op whose estimated cost is at most ``max_cost_us``) is
copied into a consuming cluster when that removes a transfer (its own inputs must be available
there without new transfers) and does not lengthen the estimated makespan; see
:func:`ramiel.scheduling.clone_producers`. A copy left without users is dropped; run ``--dce``
afterwards to clean up anything else.

Options: ``max_cost_us=F`` (default 10). Requires a clustered ``@main`` (a flat one is unchanged).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ramiel.clustering import main_func, recluster
from ramiel.dialects.cluster import clusters_of
from ramiel.dialects.onnx_traits import Cheap
from ramiel.scheduling import clone_producers


@dataclass(frozen=True)
class Clone(ModulePass):
    """See the module docstring."""

    name = "clone"

    max_cost_us: int | float = 10.0

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not clusters_of(main_func(op).body.block):
            return  # a flat function has nothing to clone into

        def algorithm(gv, current):  # type: ignore[no-untyped-def]
            if len(current) < 2:
                return current or [list(range(len(gv.ops)))]
            cheap = {
                i
                for i, o in enumerate(gv.ops)
                if gv.graph.cost[i] <= self.max_cost_us
                or (o.has_trait(Cheap) and gv.graph.cost[i] <= 50)
            }
            return clone_producers(gv.graph, current, cheap)

        recluster(op, algorithm)
