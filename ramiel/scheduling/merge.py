"""Cluster merging: map many clusters onto at most ``n`` workers with a low estimated makespan.

Linear clustering assumes one processor per cluster; Ramiel runs one worker per cluster, so the
clusters must be merged down to the number of workers. This is the second phase of the two-phase
approach of V. Sarkar, *Partitioning and Scheduling Parallel Programs for Multiprocessors* (MIT
Press, 1989) and of T. Yang and A. Gerasoulis' PYRROS ("PYRROS: static task scheduling and code
generation for message passing multiprocessors", ICS 1992; "DSC: scheduling parallel tasks on an
unbounded number of processors", IEEE TPDS 5(9), 1994). Clusters are never split; the steps are:

1. **Absorb**: a cluster whose work is smaller than the transfer cost it causes (values it receives
   plus values it sends) is merged into the neighbour it exchanges the most transfer cost with,
   smallest cluster first, until no such cluster is left. Tiny clusters (constants, reshapes, a lone
   activation) never pay for their messages. In the cost model a transfer is a delay, not work of
   the cluster, so on graphs whose transfers cost as much as their ops this rule can swallow
   useful parallelism; step 2 is therefore also run on the clusters as given. The two results are
   compared by estimated makespan plus, per transfer, the smallest positive edge cost (an estimate
   of the per-message latency, as transfer cost = latency + bytes / bandwidth) divided by the
   number of workers: the model charges a transfer as a delay only, but each one also costs both
   workers a channel operation, and hundreds of transfers for a 1 % gain are a loss in practice.
   The absorbed version also wins ties within 1 %.
2. **Map** the ``K`` clusters onto ``P = min(n, K)`` workers. Four cheap mappings are built and each
   is scored by simulating it (:func:`~ramiel.scheduling.order_and_estimate`):

   * GLB, guided load balancing (Yang & Gerasoulis, PYRROS): clusters in order of their start time
     in the unmerged schedule, each to the least loaded worker;
   * communication-aware greedy: clusters by start time, each to the worker minimising
     ``load - transfer cost to clusters already there`` (keeps heavy talkers together);
   * two LLB-style list schedules (A. Radulescu and A. J. C. van Gemund, "LLB: a fast and effective
     scheduling algorithm for distributed-memory systems", IPPS/SPDP 1999): nodes are scheduled in
     order of their start time in the unmerged schedule, and a cluster is mapped when its first
     node comes up, to the worker where that node finishes first, or where the whole cluster would
     finish first counting the work already promised to each worker. Unlike the load-balancing
     mappings these see *when* the workers are busy, and they give the best start on most graphs
     measured (Inception, SqueezeNet, ResNet, random layered DAGs); LPT (Graham 1969) was tried
     too and never won alone, so it was dropped.

   The best mapping of each set of clusters is then improved by hill climbing: single-cluster moves
   ranked by the transfer cost and load balance they gain (positive or not), each checked by
   simulation and kept if it lowers the makespan, within a budget of simulations inversely
   proportional to the graph size (about ``120_000 / (2n + e)``), so the step stays near-linear.
   Sarkar's own merging simulates every (cluster, worker) choice, O(K * P) simulations: too slow for
   the thousands of clusters of a 10k-node graph; the cheap mappings plus a bounded number of
   checked moves get much of its benefit.
3. **Guard**: the estimated makespan must not exceed the sequential time ``W`` (sum of costs). If the
   best mapping onto ``P`` workers does, ``P - 1`` is tried, down to one worker (the sequential
   program, makespan exactly ``W``).

4. **Fewest workers**: a worker that the schedule barely uses is not free. Its channel operations
   cost both sides time the model does not charge, and the runtime gives the cores of clusters
   not made to the others as intra-op threads (``CompiledModel``: ``n // made`` threads per
   worker, within the machine's cores), where they speed up every op. So the smallest ``d``
   with ``2 <= d < P`` and ``d <= n / 2`` (each worker then gets at least two of the ``n``
   cores) whose best mapping scores within ``tolerance`` (default
   :data:`FEWER_WORKERS_TOLERANCE`, 5 %) of the mapping onto ``P`` workers is taken instead,
   found by bisection (the score falls as ``d`` grows, but for plateaus), so at most
   ``log2(n)`` more mappings. Measured on 16 cores (Intel Xeon, ``python
   bench/scaling.py``, docs/benchmarks.md): the project's inception CNN, whose estimated
   makespan is 13.94 ms on 4 to 16 workers, ran 18.8 ms as 16 clusters of one thread and 11.7
   ms as 4 clusters of 4 threads (clusters from profiled costs); light_inception_v2 (2 workers
   within 3.5 % of 3 to 16) 32.2 ms as 16 x 1 and 16.2 ms as 2 x 8. With ``n <= 3`` nothing
   changes; one worker is never chosen this way (only by the guard of step 3).

The merged clusters are ordered by :func:`~ramiel.scheduling.order_clusters` (deadlock-free) and
listed by the start time of their first node.
"""

from __future__ import annotations

import heapq
import math
import operator
from collections.abc import Sequence

from ramiel.errors import SchedulingError
from ramiel.scheduling.graph import Clustering, TaskGraph
from ramiel.scheduling.simulate import Schedule, _Copies, order_and_estimate, transfers

# Simulations cost O(n + e) each; the checked-move phase may spend this many node+edge visits.
_SIM_BUDGET_VISITS = 120_000
_MAX_MOVES_PER_ROUND = 16
# The unabsorbed clusters must beat the absorbed ones by this fraction of the makespan to be kept.
_PREFER_ABSORBED = 0.01

FEWER_WORKERS_TOLERANCE = 0.05
"""Step 4 of the merge: the fewest workers (at most ``n / 2``) whose score is within this
fraction of the best mapping's onto ``n`` (see the module docstring)."""


def _tolerance(x: float) -> float:
    return x * (1 + 1e-9) + 1e-9


def _traffic(g: TaskGraph, units: Sequence[Sequence[int]]) -> list[dict[int, float]]:
    """Symmetric transfer cost (µs) between units, counting each transferred value once."""
    traffic: list[dict[int, float]] = [{} for _ in units]
    for t in transfers(g, units):
        a, b = t.src, t.dst
        traffic[a][b] = traffic[a].get(b, 0.0) + t.comm_us
        traffic[b][a] = traffic[b].get(a, 0.0) + t.comm_us
    return traffic


def _absorb(g: TaskGraph, units: list[list[int]]) -> list[list[int]]:
    """Step 1: merge every cluster whose work is below its transfer cost into its main partner.

    O((K + T) log K) with T the number of inter-cluster links; merged traffic is summed (a value
    sent to both merged clusters then counts twice, a harmless overestimate).
    """
    k = len(units)
    cost = g.cost
    work = [math.fsum(cost[v] for v in u) for u in units]
    traffic = _traffic(g, units)
    total = [math.fsum(t.values()) for t in traffic]
    members = [list(u) for u in units]
    alive = [True] * k
    heap = [(work[c], c) for c in range(k)]
    heapq.heapify(heap)
    while heap:
        w, a = heapq.heappop(heap)
        if not alive[a] or w != work[a] or not traffic[a] or work[a] >= total[a]:
            continue
        ta = traffic[a]
        b = max(ta, key=lambda x: (ta[x], -x))
        t_ab = ta.pop(b)
        tb = traffic[b]
        del tb[a]
        for x, wx in ta.items():
            tb[x] = tb.get(x, 0.0) + wx
            tx = traffic[x]
            del tx[a]
            tx[b] = tx.get(b, 0.0) + wx
        traffic[a] = {}
        total[b] = max(0.0, total[a] + total[b] - 2 * t_ab)
        work[b] += work[a]
        members[b].extend(members[a])
        alive[a] = False
        heapq.heappush(heap, (work[b], b))
    return [list(dict.fromkeys(members[c])) for c in range(k) if alive[c]]


class _Budget:
    """Simulations left for the checked moves (shared by both sets of clusters)."""

    def __init__(self, left: int):
        self.left = left


class _Evaluator:
    """Scores mappings of units to workers by simulation, with memoisation."""

    def __init__(self, g: TaskGraph, units: list[list[int]], budget: _Budget):
        self.g = g
        self.units = units
        self.cache: dict[tuple[int, ...], float] = {}
        self.budget = budget
        self.best: tuple[tuple[int, ...], Schedule] | None = None  # fastest schedule seen

    @staticmethod
    def canonical(mapping: Sequence[int]) -> tuple[int, ...]:
        relabel: dict[int, int] = {}
        return tuple(relabel.setdefault(p, len(relabel)) for p in mapping)

    def schedule(self, mapping: Sequence[int]) -> Schedule:
        key = self.canonical(mapping)
        if self.best is not None and self.best[0] == key:
            return self.best[1]
        groups: list[list[int]] = [[] for _ in range(max(key, default=-1) + 1)]
        for u, p in enumerate(key):
            groups[p].extend(self.units[u])
        sched = order_and_estimate(self.g, [list(dict.fromkeys(gr)) for gr in groups])
        self.cache[key] = sched.makespan
        if self.best is None or sched.makespan < self.best[1].makespan:
            self.best = (key, sched)
        return sched

    def __call__(self, mapping: Sequence[int]) -> float:
        hit = self.cache.get(self.canonical(mapping))
        return hit if hit is not None else self.schedule(mapping).makespan


def _least_loaded(order: list[int], work: list[float], p: int) -> list[int]:
    mapping = [0] * len(work)
    heap = [(0.0, q) for q in range(p)]
    for u in order:
        load, q = heapq.heappop(heap)
        mapping[u] = q
        heapq.heappush(heap, (load + work[u], q))
    return mapping


def _comm_aware(
    order: list[int], work: list[float], traffic: list[dict[int, float]], p: int
) -> list[int]:
    mapping = [-1] * len(work)
    load = [0.0] * p
    for u in order:
        near = [0.0] * p
        for x, t in traffic[u].items():
            if mapping[x] >= 0:
                near[mapping[x]] += t
        q = min(range(p), key=lambda q: (load[q] - near[q], load[q], q))
        mapping[u] = q
        load[q] += work[u]
    return mapping


def _llb(
    g: TaskGraph,
    unit_of: list[int],
    node_order: list[int],
    work: list[float],
    p: int,
    whole_unit: bool,
) -> list[int]:
    """LLB-style mapping: list-schedule the nodes, map a unit when its first node comes up.

    O(n + e + K * p). ``whole_unit`` picks the worker where the whole unit would finish first
    (counting work already promised to each worker) instead of where its first node finishes first.
    """
    cost, preds, pcomm = g.cost, g.preds, g.pred_comm
    mapping = [-1] * len(work)
    proc = [-1] * g.n
    fin = [0.0] * g.n
    free = [0.0] * p
    promised = [0.0] * p
    for v in node_order:
        u = unit_of[v]
        q = mapping[u]
        pv, pc = preds[v], pcomm[v]
        if q < 0:
            remote = 0.0  # arrival if every input comes from another worker
            local: dict[int, float] = {}
            for x, c in zip(pv, pc, strict=True):
                t = fin[x] + c
                if t > remote:
                    remote = t
                local[proc[x]] = max(local.get(proc[x], 0.0), fin[x])
            best_key: tuple[float, float, int] | None = None
            for r in range(p):
                if r in local:
                    arr = local[r]
                    for x, c in zip(pv, pc, strict=True):
                        t = fin[x] if proc[x] == r else fin[x] + c
                        if t > arr:
                            arr = t
                else:
                    arr = remote
                if whole_unit:
                    key = (max(free[r] + promised[r], arr) + work[u], free[r], r)
                else:
                    key = (max(free[r], arr) + cost[v], free[r], r)
                if best_key is None or key < best_key:
                    best_key = key
            assert best_key is not None
            q = mapping[u] = best_key[2]
            promised[q] += work[u]
        arr = 0.0
        for x, c in zip(pv, pc, strict=True):
            t = fin[x] if proc[x] == q else fin[x] + c
            if t > arr:
                arr = t
        f = max(free[q], arr) + cost[v]
        fin[v] = f
        free[q] = f
        proc[v] = q
        promised[q] -= cost[v]
    return mapping


def _ranked_moves(
    mapping: list[int], work: list[float], traffic: list[dict[int, float]], p: int
) -> list[tuple[int, int]]:
    """The most promising single-unit moves by transfer cost saved plus load balance gained."""
    load = [0.0] * p
    for u, q in enumerate(mapping):
        load[q] += work[u]
    scored: list[tuple[float, int, int]] = []
    for u, a in enumerate(mapping):
        near = [0.0] * p
        for x, t in traffic[u].items():
            near[mapping[x]] += t
        w = work[u]
        for q in range(p):
            if q != a:
                balance = max(load[a], load[q]) - max(load[a] - w, load[q] + w)
                scored.append((near[a] - near[q] - balance, u, q))
    return [(u, q) for _, u, q in heapq.nsmallest(_MAX_MOVES_PER_ROUND, scored)]


class _Pipeline:
    """Mapping of one set of units (clusters that are never split) onto workers."""

    def __init__(self, g: TaskGraph, units: list[list[int]], budget: _Budget):
        self.g = g
        self.units = units
        self.ev = _Evaluator(g, units, budget)
        self.work = [math.fsum(g.cost[v] for v in u) for u in units]
        self.traffic = _traffic(g, units)
        base = order_and_estimate(g, units)
        self.first_start = [s[0] if s else 0.0 for s in base.start]
        # LLB needs one unit per node; skip it when the input holds clones.
        self.unit_of: list[int] | None = [-1] * g.n
        for i, u in enumerate(units):
            for v in u:
                if self.unit_of[v] >= 0:
                    self.unit_of = None
                    break
                self.unit_of[v] = i
            if self.unit_of is None:
                break
        if self.unit_of is not None:
            start = [0.0] * g.n
            for c, nodes in enumerate(base.clusters):
                for i, v in enumerate(nodes):
                    start[v] = base.start[c][i]
            pos = g.positions()
            self.node_order = sorted(range(g.n), key=lambda v: (start[v], pos[v]))

    def initial(self, p: int) -> tuple[float, list[int]]:
        """Best of the cheap mappings onto ``p`` workers: ``(makespan_us, mapping)``."""
        k = len(self.units)
        work, first = self.work, self.first_start
        if k <= p:
            candidates = [list(range(k))]
        else:
            by_start = sorted(range(k), key=lambda u: (first[u], -work[u], u))
            candidates = [
                _least_loaded(by_start, work, p),
                _comm_aware(by_start, work, self.traffic, p),
            ]
            if self.unit_of is not None:
                for whole in (False, True):
                    candidates.append(_llb(self.g, self.unit_of, self.node_order, work, p, whole))
        best: tuple[float, list[int]] | None = None
        for m in candidates:
            ms = self.ev(m)
            if best is None or ms < best[0]:
                best = (ms, m)
        assert best is not None
        return best

    def refine(self, ms: float, mapping: list[int], p: int) -> tuple[float, list[int]]:
        """Hill climbing over single-unit moves, each checked by simulation, within the budget."""
        ev, budget = self.ev, self.ev.budget
        while budget.left > 0:
            improved = False
            for u, q in _ranked_moves(mapping, self.work, self.traffic, p):
                if budget.left <= 0:
                    break
                trial = list(mapping)
                trial[u] = q
                if ev.canonical(trial) in ev.cache:
                    continue
                budget.left -= 1
                t_ms = ev(trial)
                if t_ms < ms * (1 - 1e-12) - 1e-12:
                    ms, mapping = t_ms, trial
                    improved = True
                    break
            if not improved:
                break
        return ms, mapping


def merge_clusters(
    g: TaskGraph,
    clusters: Sequence[Sequence[int]],
    n: int,
    tolerance: float = FEWER_WORKERS_TOLERANCE,
) -> Clustering:
    """Merge ``clusters`` into at most ``n`` clusters with a low estimated makespan.

    See the module docstring for the algorithm (absorb small clusters; GLB, LPT,
    communication-aware and LLB mappings checked by simulation; bounded hill climbing;
    sequential-time guard; the fewest workers within ``tolerance``, step 4). Clusters are never
    split. The estimated makespan
    (:func:`~ramiel.scheduling.estimate_makespan`) of the result never exceeds
    ``g.total_work()``; ``n = 1`` gives the sequential program. Asking for more clusters than
    there are nodes is fine. Clones in the input are kept (deduplicated when two copies land in one
    cluster). The result is ordered by :func:`~ramiel.scheduling.order_clusters` and its clusters
    are listed by the start time of their first node. Deterministic.

    Complexity: O((n + e) log n) per simulation; about 10 simulations per worker count tried plus
    a budget of about ``120_000 / (2n + e)`` (at least 2) for the checked moves; the absorb step is
    O((K + T) log K) for K clusters with T links between them.

    Raises:
        SchedulingError: ``n < 1`` or not an integer, ``tolerance < 0``, an invalid clustering,
            or a cyclic graph.
    """
    if not tolerance >= 0:
        raise SchedulingError(f"merge tolerance must be at least 0, got {tolerance!r}")
    try:
        n = operator.index(n)
    except TypeError:
        raise SchedulingError(f"number of clusters must be an integer, got {n!r}") from None
    if n < 1:
        raise SchedulingError(f"cannot merge into {n} clusters: need at least 1")
    _Copies(g, clusters)  # validate
    units = [list(c) for c in clusters if len(c)]
    g.topo_order()  # report cycles before doing any work
    if g.n == 0:
        return []
    limit = _tolerance(g.total_work())
    visits = g.n + g.num_edges + sum(len(u) for u in units)
    budget = _Budget(max(2, _SIM_BUDGET_VISITS // max(1, visits)))
    absorbed = _absorb(g, units)
    pipelines = [_Pipeline(g, absorbed, budget)]
    if len(absorbed) < len(units):
        pipelines.append(_Pipeline(g, units, budget))
    p = min(n, max(len(pl.units) for pl in pipelines))
    latency = min((c for cs in g.succ_comm for c in cs if c > 0), default=0.0)

    def score(ms: float, i: int, sched: Schedule | None = None) -> float:
        # Transfers are modelled as latency only; charge each one its share of a message latency
        # (the smallest positive edge cost) spread over the workers, and let the absorbed
        # clusters (pipeline 0) win unless the others are clearly faster.
        if sched is not None and latency > 0:
            workers = max(1, sum(1 for c in sched.clusters if c))
            ms += latency * len(transfers(g, sched.clusters)) / workers
        return ms / (1 - _PREFER_ABSORBED) if i else ms

    def best_for(p: int) -> tuple[float, float, int, Schedule]:
        """(score, makespan, pipeline, schedule) of the best mapping onto ``p`` workers."""
        starts = []
        for i, pl in enumerate(pipelines):
            pp = min(p, len(pl.units))
            ms, mapping = pl.initial(pp)
            starts.append((score(ms, i), i, pp, mapping))
        best: tuple[float, float, int, Schedule] | None = None
        for _, i, pp, mapping in sorted(starts, key=lambda t: (t[0], t[1])):
            # the most promising start is refined first and may use the whole budget
            ms, mapping = pipelines[i].refine(pipelines[i].ev(mapping), mapping, pp)
            sched = pipelines[i].ev.schedule(mapping)
            sc = score(ms, i, sched)
            if best is None or (sc, i) < (best[0], best[2]):
                best = (sc, ms, i, sched)
        assert best is not None
        return best

    best = best_for(p)
    while best[1] > limit and p > 1:
        p -= 1
        best = best_for(p)
    if tolerance > 0:
        # the fewest workers d (each of them then gets n // d >= 2 of the n cores) whose
        # schedule scores within the tolerance of the best: bisection, the score falling as d grows
        target = best[0] * (1 + tolerance)
        lo, hi = 2, min(p - 1, n // 2)
        while lo <= hi:
            d = (lo + hi) // 2
            cand = best_for(d)
            if cand[0] <= target and cand[1] <= limit:
                best, hi = cand, d - 1
            else:
                lo = d + 1
    sched = best[3]
    keyed = sorted(
        range(len(sched.clusters)),
        key=lambda c: (sched.start[c][0] if sched.start[c] else math.inf, c),
    )
    return [sched.clusters[c] for c in keyed if sched.clusters[c]]
