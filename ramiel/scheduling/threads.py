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
2. *Limits.* By default (``overlap="dependences"``) an op may take ``cores // conc(x)`` threads,
   where ``conc(x)`` counts the clusters that *may* run while ``x`` runs whatever the op times
   (:func:`concurrent_clusters`: those with a copy that is neither an ancestor nor a descendant
   of ``x`` once cluster order is added to the dataflow), and each op takes the fastest count
   within its limit; steps 2'-3 are then not needed. The estimated schedule's own overlaps trust
   its timing, and that is fragile: an OpenMP region waits for its slowest thread, so a 2-thread
   op that meets a busy cluster on 2 cores runs no faster than with 1 thread (measured: such
   plans on 2 cores lost 5-25 % against one thread per cluster). ``overlap="schedule"`` uses
   them anyway:
2'. *Promotion* (at most ``rounds`` times, until nothing changes): give every copy the count
   ``t <= cores // active(x)`` of the current schedule with the lowest cost (more threads are not
   always faster: a small convolution slows down with two), then simulate again. Shorter ops move
   later ops earlier, so ``active`` changes between rounds.
3. *Repair* (counts only go down, so it ends): while some copy has more threads than
   ``cores // active(x)`` allows in the current schedule, lower it to its best allowed count and
   simulate again. The result never oversubscribes the cores in the estimate.
4. *OpenMP pools* (``pools=True``): each cluster's worker thread that runs an op with ``t > 1``
   threads owns an OpenMP pool of ``t - 1`` extra threads for as long as it lives, and GNU
   OpenMP (PyTorch's intra-op backend on Linux, Ramiel's default wait policy since 2026-12-05,
   :mod:`ramiel.omp`) keeps those helpers spinning about 10 ms after every parallel region. A
   cluster that drops to fewer threads while another cluster computes leaves its helpers
   spinning on that cluster's cores: light_shufflenet in 2 clusters on 2 cores, one of them at
   2 threads while the other waited, took 600 ms per inference (threads backend; 624 ms with
   processes) against 7.7 ms for its 1-thread sequential module (2026-12-06, ``ramiel run
   light_shufflenet --clusters 2 --cores 2``). So every cluster's widest pool must have cores of
   its own: ``sum over clusters of (widest count) <= cores`` (the rule was ``1 + sum(widest -
   1)``, which kept libgomp spinning, ``gomp_managed_threads <= gomp_available_cpus``, but let
   the pools of 2 clusters take 3 threads on 2 cores). While they do not fit and some cluster is
   wider than 1, the cluster whose width costs least to lower gets a cap one lower, and steps
   1-3 run again under the caps: on 2 cores a program of 2 clusters keeps one thread per op.
5. Keep the result only if its estimated makespan beats one thread everywhere.

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
from ramiel.scheduling.simulate import Schedule, _Copies, estimate_makespan

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


def concurrent_clusters(g: TaskGraph, clusters: Sequence[Sequence[int]]) -> list[list[int]]:
    """``conc[c][i]``: 1 + the number of other clusters that *may* run while the ``i``-th copy of
    cluster ``c`` runs, whatever the op times: those holding a copy that is neither an ancestor
    nor a descendant of it in the happens-before graph (dataflow edges between copies, with the
    provider rule of :mod:`ramiel.scheduling.simulate`, plus "next in the same cluster" edges).
    A comparable copy finished before this one started or starts after it finished, so a cluster
    whose copies are all comparable is idle (finished, or blocked on a get) meanwhile.
    ``conc >= active_clusters(any schedule)``. O((n + e) · n / 64 + n · k) word operations with
    bitsets, for n copies, e edges and k clusters.

    Raises:
        SchedulingError: an invalid clustering or orders that deadlock.
    """
    cp = _Copies(g, clusters)
    size = cp.size
    succ: list[list[int]] = [list(cp.out[x]) for x in range(size)]
    for m in cp.members:
        ms = list(m)
        for a, b in zip(ms, ms[1:], strict=False):
            succ[a].append(b)
    indeg = [0] * size
    for x in range(size):
        for y in succ[x]:
            indeg[y] += 1
    order = [x for x in range(size) if indeg[x] == 0]
    for x in order:  # Kahn; ``order`` grows while it is walked
        for y in succ[x]:
            indeg[y] -= 1
            if indeg[y] == 0:
                order.append(y)
    if len(order) != size:
        estimate_makespan(g, clusters)  # raises the deadlock error with its explanation
        raise SchedulingError("the cluster orders deadlock")  # pragma: no cover
    anc = [0] * size
    for x in order:
        bit = anc[x] | (1 << x)
        for y in succ[x]:
            anc[y] |= bit
    desc = [0] * size
    for x in reversed(order):
        d = 0
        for y in succ[x]:
            d |= desc[y] | (1 << y)
        desc[x] = d
    masks = []
    for m in cp.members:
        mask = 0
        for x in m:
            mask |= 1 << x
        masks.append(mask)
    out: list[list[int]] = []
    for c, m in enumerate(cp.members):
        row = []
        for x in m:
            comparable = anc[x] | desc[x] | (1 << x)
            row.append(1 + sum(1 for d, mask in enumerate(masks) if d != c and mask & ~comparable))
        out.append(row)
    return out


def assign_threads(
    g: TaskGraph,
    clusters: Sequence[Sequence[int]],
    cores: int,
    cost_at: Sequence[Sequence[float]],
    rounds: int = 8,
    pools: bool = True,
    overlap: str = "dependences",
) -> ThreadAssignment:
    """Choose intra-op threads per op of ``clusters`` on ``cores`` cores (module docstring).

    Args:
        g: the task graph (``g.cost`` is not used; ``cost_at[0]`` is the one-thread cost).
        clusters: the clustering, each cluster in execution order (clones allowed).
        cores: the number of cores the program may use, at least 1.
        cost_at: ``cost_at[t - 1][v]``: cost of node ``v`` with ``t`` threads, µs, for
            ``t = 1 .. len(cost_at)``; counts above ``len(cost_at)`` are not considered.
        rounds: at most this many promotion rounds.
        pools: keep the OpenMP pools within ``cores`` (step 4 of the module docstring).
        overlap: ``"dependences"`` (default): an op's limit is ``cores // conc`` with ``conc``
            from :func:`concurrent_clusters` (the clusters that *may* run meanwhile, whatever the
            op times; steps 2-3 reduce to one choice); ``"schedule"``: ``cores // active`` from
            the estimated schedule (promotion and repair, steps 2-3), which trusts the estimate's
            timing.

    Returns:
        A :class:`ThreadAssignment`; one thread everywhere when nothing beats it.

    Raises:
        SchedulingError: ``cores < 1``, a ``cost_at`` row of the wrong length, an invalid
            clustering or orders that deadlock.
    """
    if cores < 1:
        raise SchedulingError(f"intra-op threads: cores must be at least 1, got {cores}")
    if overlap not in ("dependences", "schedule"):
        raise SchedulingError(
            f"intra-op threads: overlap must be 'dependences' or 'schedule', got {overlap!r}"
        )
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

    static = concurrent_clusters(g, members) if overlap == "dependences" else None

    def plan(caps: list[int]) -> tuple[list[list[int]], Schedule]:
        """Promotion and repair with the width of cluster ``c`` at most ``caps[c]``."""
        threads, sched = ones, base
        if max(caps, default=1) <= 1:
            return threads, sched
        if static is not None:  # limits that hold whatever the op times
            threads = choose(
                [
                    [min(cap, max(1, cores // a)) for a in row]
                    for row, cap in zip(static, caps, strict=True)
                ]
            )
            return threads, estimate_makespan(g, members, costs_of(threads))
        for _ in range(rounds):  # promotion
            active = active_clusters(sched)
            new = choose(
                [
                    [min(cap, max(1, cores // a)) for a in act]
                    for act, cap in zip(active, caps, strict=True)
                ]
            )
            if new == threads:
                break
            threads = new
            sched = estimate_makespan(g, members, costs_of(threads))
        threads = [list(r) for r in threads]
        while True:  # repair: only lower counts
            active = active_clusters(sched)
            changed = False
            for c, m in enumerate(members):
                for i, v in enumerate(m):
                    limit = min(caps[c], max(1, cores // active[c][i]))
                    if threads[c][i] > limit:
                        threads[c][i] = best_within(v, limit, 1)
                        changed = True
            if not changed:
                break
            sched = estimate_makespan(g, members, costs_of(threads))
        return threads, sched

    threads, sched = ones, base
    if widest > 1:
        caps = [widest] * len(members)
        threads, sched = plan(caps)
        while pools and _pools_oversubscribe(threads, cores):
            # lower the cap of the cluster where that costs least (ties: the later cluster)
            best: tuple[float, int, list[list[int]], Schedule] | None = None
            for c, row in enumerate(threads):
                width = max(row, default=1)
                if width <= 1:
                    continue
                trial = list(caps)
                trial[c] = width - 1
                t2, s2 = plan(trial)
                if best is None or s2.makespan <= best[0] + _EPS:
                    best = (s2.makespan, c, t2, s2)
            assert best is not None  # some width > 1 (pools_fit)
            caps[best[1]] = max(threads[best[1]], default=1) - 1
            threads, sched = best[2], best[3]
    if sched.makespan < base.makespan - _EPS:
        return ThreadAssignment(threads, costs_of(threads), sched, base.makespan)
    return ThreadAssignment(ones, base_costs, base, base.makespan)


def _pools_oversubscribe(threads: Sequence[Sequence[int]], cores: int) -> bool:
    """Whether the clusters' widest counts (``threads[c]``: per op of cluster ``c``) break
    :func:`pools_fit`."""
    return not pools_fit([max(row, default=1) for row in threads], cores)


def pools_fit(widths: Sequence[int], cores: int) -> bool:
    """Whether clusters whose widest intra-op thread counts are ``widths`` give every cluster's
    OpenMP pool cores of its own on ``cores`` cores: the counts add up to at most ``cores``, or
    no cluster runs more than one thread (a clustering of more clusters than cores, each of one
    thread, is the caller's choice). Step 4 of the module docstring."""
    return all(w <= 1 for w in widths) or sum(widths) <= cores
