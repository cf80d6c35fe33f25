"""``--schedule-report``: print the schedule estimate of ``@main``'s clustering (IR unchanged).

Prints to stderr, as an aligned text table: per-cluster work (µs), op count, transfers in/out and
bytes; total work W, computation-only critical path CP, W/CP (the most a task-parallel schedule can
gain), the estimated makespan (simulated with transfer costs) and the estimated speed-up over the
sequential program (W / makespan; with ``--intra-op-threads`` the makespan counts each op's
time with its threads, and the ops with more than one are counted), and the transfer share: the
transfer time on the schedule's critical path as a share of the makespan (what faster messages
would save; large on a slow network). A flat ``@main`` is reported as one cluster. See
:class:`ramiel.scheduling.ScheduleReport`.

Options: ``json=FILE`` also writes the report as JSON; ``quiet=true`` skips the text.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ramiel.clustering import current_clustering, intra_op_threads
from ramiel.scheduling import ScheduleReport as Report


def schedule_report(module: ModuleOp) -> Report:
    """The :class:`~ramiel.scheduling.ScheduleReport` of ``module``'s current clustering."""
    gv, clusters = current_clustering(module)
    threaded = intra_op_threads(module)
    if threaded is None:
        return Report.from_clustering(gv.graph, clusters)
    return Report.from_clustering(gv.graph, clusters, threaded[0], threaded[1])


@dataclass(frozen=True)
class ScheduleReport(ModulePass):
    """See the module docstring."""

    name = "schedule-report"

    json: str | None = None
    quiet: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        report = schedule_report(op)
        if not self.quiet:
            print(report.to_text(), file=sys.stderr)
        if self.json:
            with open(self.json, "w") as f:
                f.write(report.to_json())
