"""Intra-op thread assignment: hybrid inter-/intra-op parallelism for a fixed clustering.

A clustering runs its clusters concurrently, one worker each, on ``cores`` cores. Wherever fewer
clusters than cores are busy -- the stem of a CNN before its first branch, the head after the last
join, a cluster waiting for a transfer, or a whole program of one cluster -- cores idle. An op can
use them through PyTorch's intra-op parallelism (``torch.set_num_threads`` per worker thread), so
the generated code gives each op a thread count: ``threads(x) <= cores // active(x)``, where
``active(x)`` counts the clusters busy at some time while ``x`` runs (its own included).

Algorithm (:func:`assign_threads`), on the execution model of
:mod:`ramiel.scheduling.simulate` with per-copy costs ``cost_at[t - 1][v]`` (node ``v`` run with
``t`` intra-op threads; from a profile database measured per thread count, or the analytic model):

1. Start with one thread everywhere and simulate.
2. *Promotion* (at most ``rounds`` times, until nothing changes): give every copy the count
   ``t <= cores // active(x)`` of the current schedule with the lowest cost (more threads are not
   always faster: a small convolution slows down with two), then simulate again. Shorter ops move
   later ops earlier, so ``active`` changes between rounds.
3. *Repair* (counts only go down, so it ends): while some copy has more threads than
   ``cores // active(x)`` allows in the current schedule, lower it to its best allowed count and
   simulate again. The result never oversubscribes the cores in the estimate.
4. Keep the result only if its estimated makespan beats one thread everywhere.

Cost: O(rounds · (n + e + n·k·log n)) for n copies and k clusters. The related classic problem is
scheduling *malleable* (moldable) tasks (Turek, Wolf & Yu 1992; Ludwig & Tiwari 1994); here the
clustering and the order are fixed and only the widths are chosen, greedily.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from ramiel.errors import SchedulingError
from ramiel.scheduling.graph import TaskGraph
from ramiel.scheduling.simulate import Schedule, estimate_makespan

_EPS = 1e-9


@dataclass
class ThreadAssignment:
    """Intra-op threads per copy of a clustering, and the schedule they give.

    Attributes:
        threads: ``threads[c][i]``: intra-op threads of the ``i``-th node of cluster ``c``.
        costs: ``costs[c][i]``: that copy's estimated cost with those threads (µs).
        schedule: the simulated schedule with those costs (µs).
        single_thread_makespan: the estimated makespan with one thread everywhere (µs).
    """

    threads: list[list[int]]
    costs: list[list[float]]
    schedule: Schedule
    single_thread_makespan: float

    @property
    def makespan(self) -> float:
        return self.schedule.makespan


def active_clusters(schedule: Schedule) -> list[list[int]]:
    """``active[c][i]``: 1 + the number of other clusters busy at some time while the ``i``-th op
    of cluster ``c`` runs (an op of zero duration overlaps nothing). O(n·k·log n)."""
    starts, finishes = schedule.start, schedule.finish
    k = len(starts)
    out: list[list[int]] = []
    for c in range(k):
        row = []
        for s, f in zip(starts[c], finishes[c], strict=True):
            n = 1
            if f - s > _EPS:
                for d in range(k):
                    if d == c or not finishes[d]:
                        continue
                    # the first op of d that finishes after s; it overlaps iff it starts before f
                    j = bisect_right(finishes[d], s + _EPS)
                    while j < len(starts[d]) and finishes[d][j] - starts[d][j] <= _EPS:
                        j += 1  # skip zero-length ops
                    if j < len(starts[d]) and starts[d][j] < f - _EPS:
                        n += 1
            row.append(n)
        out.append(row)
    return out


def assign_threads(
    g: TaskGraph,
    clusters: Sequence[Sequence[int]],
    cores: int,
    cost_at: Sequence[Sequence[float]],
    rounds: int = 8,
) -> ThreadAssignment:
    """Choose intra-op threads per op of ``clusters`` on ``cores`` cores (module docstring).

    Args:
        g: the task graph (``g.cost`` is not used; ``cost_at[0]`` is the one-thread cost).
        clusters: the clustering, each cluster in execution order (clones allowed).
        cores: the number of cores the program may use, at least 1.
        cost_at: ``cost_at[t - 1][v]``: cost of node ``v`` with ``t`` threads, µs, for
            ``t = 1 .. len(cost_at)``; counts above ``len(cost_at)`` are not considered.
        rounds: at most this many promotion rounds.

    Returns:
        A :class:`ThreadAssignment`; one thread everywhere when nothing beats it.

    Raises:
        SchedulingError: ``cores < 1``, a ``cost_at`` row of the wrong length, an invalid
            clustering or orders that deadlock.
    """
    if cores < 1:
        raise SchedulingError(f"intra-op threads: cores must be at least 1, got {cores}")
    if not cost_at:
        raise SchedulingError("intra-op threads: no costs given")
    for t, row in enumerate(cost_at, 1):
        if len(row) != g.n:
            raise SchedulingError(
                f"intra-op threads: {len(row)} costs for {t} threads, {g.n} nodes"
            )
    widest = min(cores, len(cost_at))
    members = [list(c) for c in clusters]

    def costs_of(threads: list[list[int]]) -> list[list[float]]:
        return [
            [cost_at[t - 1][v] for v, t in zip(m, ts, strict=True)]
            for m, ts in zip(members, threads, strict=True)
        ]

    def best_within(v: int, limit: int, prefer: int) -> int:
        """The fastest count up to ``limit``; ties go to ``prefer`` (the previous op's count, so
        that ops that do not care, like a Concat, do not make the code switch back and forth),
        then to fewer threads."""
        top = min(limit, widest)
        best_t, best_c = 1, cost_at[0][v]
        for t in range(2, top + 1):
            if cost_at[t - 1][v] < best_c - _EPS:
                best_t, best_c = t, cost_at[t - 1][v]
        if prefer != best_t and 1 <= prefer <= top and cost_at[prefer - 1][v] <= best_c + _EPS:
            return prefer
        return best_t

    def choose(limits: list[list[int]]) -> list[list[int]]:
        out = []
        for m, lims in zip(members, limits, strict=True):
            row: list[int] = []
            for v, lim in zip(m, lims, strict=True):
                row.append(best_within(v, lim, row[-1] if row else 1))
            out.append(row)
        return out

    ones = [[1] * len(m) for m in members]
    base_costs = costs_of(ones)
    base = estimate_makespan(g, members, base_costs)
    threads, sched = ones, base
    if widest > 1:
        for _ in range(rounds):  # promotion
            active = active_clusters(sched)
            new = choose([[max(1, cores // a) for a in act] for act in active])
            if new == threads:
                break
            threads = new
            sched = estimate_makespan(g, members, costs_of(threads))
        while True:  # repair: only lower counts
            active = active_clusters(sched)
            changed = False
            for c, m in enumerate(members):
                for i, v in enumerate(m):
                    limit = max(1, cores // active[c][i])
                    if threads[c][i] > limit:
                        threads[c][i] = best_within(v, limit, 1)
                        changed = True
            if not changed:
                break
            sched = estimate_makespan(g, members, costs_of(threads))
    if sched.makespan < base.makespan - _EPS:
        return ThreadAssignment(threads, costs_of(threads), sched, base.makespan)
    return ThreadAssignment(ones, base_costs, base, base.makespan)
