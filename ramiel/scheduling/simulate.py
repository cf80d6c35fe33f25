"""Makespan estimation, cluster ordering and the transfers a clustering implies.

Execution model (the one the generated program follows): every cluster runs its nodes one after
another in its listed order. A node starts when its cluster is free and every input has arrived. An
input produced in the same cluster arrives when its producer finishes; one produced in another
cluster arrives at the producer's finish plus the edge's transfer cost.

Clones: a node may appear in several clusters. A consumer reads the copy in its own cluster if there
is one, otherwise the **home copy**: the copy in the lowest-numbered cluster that holds the node. The
same rule decides the sender of every transfer (:func:`transfers`), so the estimate and the generated
sends/receives agree.

Deadlock freedom: the clusters can run without deadlock iff the graph made of the dataflow edges
between copies plus the "next in the same cluster" edges is acyclic, i.e. iff every cluster's order is
a subsequence of one global topological order of the copies. :func:`order_clusters` produces such
orders; :func:`estimate_makespan` raises on orders that deadlock.
"""

from __future__ import annotations

import heapq
import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass

import networkx as nx  # type: ignore[import-untyped]

from ramiel.errors import SchedulingError
from ramiel.scheduling.graph import Clustering, TaskGraph


@dataclass(frozen=True)
class Transfer:
    """One value sent from one cluster to another.

    Attributes:
        node: the producing node.
        port: the producer's output index (see :meth:`TaskGraph.from_edges`).
        src: the sending cluster (the consumer's cluster never holds ``node``; ``src`` holds the
            home copy).
        dst: the receiving cluster.
        comm_us: the transfer cost in µs.
        nbytes: the size of the value in bytes.
    """

    node: int
    port: int
    src: int
    dst: int
    comm_us: float
    nbytes: int


@dataclass
class Schedule:
    """A simulated execution of a clustering (all times in µs from the start of the run).

    Attributes:
        clusters: the clustering that was simulated, in execution order.
        start: ``start[c][i]`` is the start time of ``clusters[c][i]``.
        finish: ``finish[c][i]`` is its finish time.
        makespan: the latest finish time (0 for an empty graph).
    """

    clusters: Clustering
    start: list[list[float]]
    finish: list[list[float]]
    makespan: float


class _Copies:
    """A clustering as a DAG of copies: copy ``x`` is node ``node[x]`` run by cluster ``ccl[x]``.

    ``out[x]`` lists the copies that read copy ``x`` and ``out_comm[x]`` the transfer cost of each
    such edge (paid only when the two copies are in different clusters); ``indeg[x]`` counts the
    copies ``x`` reads; ``members[c]`` lists cluster ``c``'s copies in listed order.

    For a plain partition (no clones; the common case) copies are the nodes themselves and the
    graph's own adjacency lists are used, so building this costs O(n). Otherwise copies are
    numbered cluster by cluster and every consumer copy reads its own cluster's copy of each input,
    else the home copy (lowest-numbered cluster), O(n + e).
    """

    __slots__ = (
        "k",
        "size",
        "node",
        "ccl",
        "out",
        "out_comm",
        "indeg",
        "members",
        "home",
        "where",
    )

    def __init__(self, g: TaskGraph, clusters: Sequence[Sequence[int]]):
        n = g.n
        self.k = len(clusters)
        cl = [-1] * n
        total = 0
        partition = True
        for c, members in enumerate(clusters):
            total += len(members)
            for v in members:
                if type(v) is not int or not 0 <= v < n or cl[v] != -1:
                    partition = False
                    break
                cl[v] = c
            if not partition:
                break
        if partition and total == n:
            self.size = n
            self.node: Sequence[int] = range(n)
            self.ccl = cl
            self.out: list[list[int]] = g.succs
            self.out_comm: list[list[float]] = g.succ_comm
            self.indeg = [len(p) for p in g.preds]
            self.members: list[Sequence[int]] = [list(m) for m in clusters]
            self.home = cl
            self.where: list[set[int]] | None = None
            return
        self._general(g, clusters)

    def _general(self, g: TaskGraph, clusters: Sequence[Sequence[int]]) -> None:
        n = g.n
        node: list[int] = []
        ccl: list[int] = []
        offset: list[int] = []
        for c, members in enumerate(clusters):
            offset.append(len(node))
            node.extend(members)
            ccl.extend([c] * (len(node) - offset[-1]))
        offset.append(len(node))
        for x, v in enumerate(node):
            if type(v) is not int:
                try:
                    node[x] = operator.index(v)
                except TypeError:
                    raise SchedulingError(
                        f"cluster {ccl[x]}: node id {v!r} is not an integer"
                    ) from None
        if node and (min(node) < 0 or max(node) >= n):
            x = next(x for x, v in enumerate(node) if not 0 <= v < n)
            raise SchedulingError(f"cluster {ccl[x]}: node id {node[x]} out of range 0..{n - 1}")
        copies_of: list[list[int]] = [[] for _ in range(n)]
        for x, v in enumerate(node):
            cps = copies_of[v]
            if cps and ccl[cps[-1]] == ccl[x]:
                raise SchedulingError(f"cluster {ccl[x]}: node {g.names[v]} listed twice")
            cps.append(x)
        missing = [v for v in range(n) if not copies_of[v]]
        if missing:
            shown = ", ".join(g.names[v] for v in missing[:10])
            more = f" (and {len(missing) - 10} more)" if len(missing) > 10 else ""
            raise SchedulingError(f"node(s) in no cluster: {shown}{more}")
        size = len(node)
        out: list[list[int]] = [[] for _ in range(size)]
        out_comm: list[list[float]] = [[] for _ in range(size)]
        indeg = [0] * size
        preds, pcomm = g.preds, g.pred_comm
        for x, v in enumerate(node):
            c = ccl[x]
            for u, cm in zip(preds[v], pcomm[v], strict=True):
                cps = copies_of[u]
                s = cps[0]  # home copy: copies are numbered in cluster order
                if len(cps) > 1:
                    for y in cps:
                        if ccl[y] == c:
                            s = y
                            break
                out[s].append(x)
                out_comm[s].append(cm)
            indeg[x] = len(preds[v])
        self.size = size
        self.node = node
        self.ccl = ccl
        self.out, self.out_comm, self.indeg = out, out_comm, indeg
        self.members = [range(offset[c], offset[c + 1]) for c in range(self.k)]
        self.home = [ccl[cps[0]] for cps in copies_of]
        self.where = [{ccl[y] for y in cps} for cps in copies_of]


def _transfers(g: TaskGraph, cp: _Copies) -> list[Transfer]:
    seen: dict[tuple[int, int, int, int], Transfer] = {}
    node, ccl, values = cp.node, cp.ccl, g.values
    for x, ys in enumerate(cp.out):
        c = ccl[x]
        u = node[x]
        for y in ys:
            d = ccl[y]
            if d == c:
                continue
            for port, cm, nb in values[(u, node[y])]:
                key = (u, port, c, d)
                if key not in seen:
                    seen[key] = Transfer(u, port, c, d, cm, nb)
    return sorted(seen.values(), key=lambda t: (t.src, t.dst, t.node, t.port))


def transfers(g: TaskGraph, clusters: Sequence[Sequence[int]]) -> list[Transfer]:
    """The values that cross clusters: one :class:`Transfer` per (value, receiving cluster).

    A value read by several nodes of one cluster is sent there once. Sorted by (src, dst, node,
    port). O(n + e).

    Raises:
        SchedulingError: an invalid clustering (node out of range, listed twice in a cluster, or in
            no cluster).
    """
    return _transfers(g, _Copies(g, clusters))


def _per_cluster(cp: _Copies, per_copy: list[float]) -> list[list[float]]:
    return [[per_copy[x] for x in m] for m in cp.members]


def estimate_makespan(
    g: TaskGraph,
    clusters: Sequence[Sequence[int]],
    costs: Sequence[Sequence[float]] | None = None,
) -> Schedule:
    """Simulate ``clusters`` executing in their listed orders; see the module docstring. O(n + e).

    ``costs[c][i]``, when given, replaces the cost of the ``i``-th node of cluster ``c`` (µs), e.g.
    its time with more intra-op threads (:mod:`ramiel.scheduling.threads`); by default every copy
    costs its node's ``g.cost``. Returns a :class:`Schedule` with per-node start and finish times
    (µs) and the makespan.

    Raises:
        SchedulingError: an invalid clustering, or orders that deadlock (a cluster waits for a value
            that another cluster only produces after something the first one has not run yet); the
            message names the copies on the waiting cycle; ``costs`` with another shape than
            ``clusters`` or a cost that is negative or not finite.
    """
    cp = _Copies(g, clusters)
    size = cp.size
    node, ccl, out, out_comm = cp.node, cp.ccl, cp.out, cp.out_comm
    if costs is None:
        cost = g.cost if cp.where is None else [g.cost[v] for v in node]
    else:
        if len(costs) != len(cp.members):
            raise SchedulingError(
                f"costs given for {len(costs)} cluster(s), the clustering has {len(cp.members)}"
            )
        cost = [0.0] * size
        for c, m in enumerate(cp.members):
            if len(costs[c]) != len(m):
                raise SchedulingError(
                    f"cluster {c}: {len(costs[c])} costs given for {len(m)} nodes"
                )
            for i, (x, us) in enumerate(zip(m, costs[c], strict=True)):
                if not math.isfinite(us) or us < 0:
                    raise SchedulingError(
                        f"cluster {c}, position {i}: cost must be a finite number >= 0, got {us!r}"
                    )
                cost[x] = us
    indeg = list(cp.indeg)
    nxt = [-1] * size
    for m in cp.members:
        for a, b in zip(m, m[1:], strict=False):
            nxt[a] = b
            indeg[b] += 1
    ready = [0.0] * size
    start = [0.0] * size
    finish = [0.0] * size
    stack = [x for x in range(size) if indeg[x] == 0]
    done = 0
    while stack:
        x = stack.pop()
        done += 1
        t0 = ready[x]
        f = t0 + cost[x]
        start[x] = t0
        finish[x] = f
        c = ccl[x]
        for y, cm in zip(out[x], out_comm[x], strict=True):
            t = f if ccl[y] == c else f + cm
            if t > ready[y]:
                ready[y] = t
            indeg[y] -= 1
            if indeg[y] == 0:
                stack.append(y)
        y = nxt[x]
        if y >= 0:
            if f > ready[y]:
                ready[y] = f
            indeg[y] -= 1
            if indeg[y] == 0:
                stack.append(y)
    if done < size:
        raise SchedulingError(_deadlock_message(g, cp, nxt, indeg))
    return Schedule(
        [list(c) for c in clusters],
        _per_cluster(cp, start),
        _per_cluster(cp, finish),
        max(finish, default=0.0),
    )


def _deadlock_message(g: TaskGraph, cp: _Copies, nxt: list[int], indeg: list[int]) -> str:
    stuck = {x for x in range(cp.size) if indeg[x] > 0}
    dg = nx.DiGraph()
    dg.add_edges_from((x, y) for x in stuck for y in [*cp.out[x], nxt[x]] if y in stuck)
    cyc = nx.find_cycle(dg)
    path = [cyc[0][0]] + [e[1] for e in cyc]
    text = " -> ".join(f"{g.names[cp.node[x]]}@cluster{cp.ccl[x]}" for x in path)
    return (
        "cluster orders deadlock (not consistent with one topological order); "
        f"waiting cycle: {text}"
    )


def _priorities(g: TaskGraph, cp: _Copies) -> list[float]:
    """b-levels of the clustered graph: an edge costs nothing if its ends share a cluster."""
    b = [0.0] * g.n
    cost, succs, scomm = g.cost, g.succs, g.succ_comm
    home, where = cp.home, cp.where
    if where is None:  # no clones
        for v in reversed(g.topo_order()):
            best = 0.0
            hv = home[v]
            for s, c in zip(succs[v], scomm[v], strict=True):
                x = b[s] if home[s] == hv else b[s] + c
                if x > best:
                    best = x
            b[v] = cost[v] + best
        return b
    for v in reversed(g.topo_order()):
        best = 0.0
        for s, c in zip(succs[v], scomm[v], strict=True):
            x = b[s] if where[v] & where[s] else b[s] + c
            if x > best:
                best = x
        b[v] = cost[v] + best
    return b


def order_and_estimate(g: TaskGraph, clusters: Sequence[Sequence[int]]) -> Schedule:
    """Order each cluster's nodes by list scheduling and return the simulated :class:`Schedule`.

    Algorithm: RCP ("ready critical path", T. Yang and A. Gerasoulis, "List scheduling with and
    without communication delays", Parallel Computing 19(12), 1993) on fixed clusters. An
    event-driven simulation runs every cluster; whenever a cluster is free it starts, among its nodes
    whose inputs have all arrived, the one with the largest b-level of the clustered graph (edges
    inside a cluster cost nothing); if none has arrived it waits for the earliest arrival. Nodes are
    committed in order of start time, so the commit sequence is one global topological order of the
    copies and every cluster's order is a subsequence of it: the result is deadlock-free. The
    listed order of the input clusters is ignored; cluster indices are kept.

    Complexity: O((n + e) log n). Raises :class:`SchedulingError` on an invalid clustering or a
    cyclic graph.
    """
    cp = _Copies(g, clusters)
    size, k = cp.size, cp.k
    node, ccl, out, out_comm = cp.node, cp.ccl, cp.out, cp.out_comm
    nprio = _priorities(g, cp)
    npos = g.positions()
    if cp.where is None:
        cost, prio, pos = g.cost, nprio, npos
    else:
        cost = [g.cost[v] for v in node]
        prio = [nprio[v] for v in node]
        pos = [npos[v] for v in node]
    cnt = list(cp.indeg)
    arrival = [0.0] * size
    start = [0.0] * size
    finish = [0.0] * size
    # pending[c]: inputs complete, ordered by arrival; ready[c]: arrived, ordered by priority.
    pending: list[list[tuple[float, float, int, int]]] = [[] for _ in range(k)]
    ready: list[list[tuple[float, int, int]]] = [[] for _ in range(k)]
    free = [0.0] * k
    inf = math.inf
    cand = [inf] * k  # when cluster c starts its next node (a valid gheap entry matches it)
    seq: list[list[int]] = [[] for _ in range(k)]
    heappush, heappop = heapq.heappush, heapq.heappop
    for x in range(size):
        if cnt[x] == 0:
            heappush(pending[ccl[x]], (0.0, -prio[x], pos[x], x))
    gheap: list[tuple[float, int]] = []
    for c in range(k):
        if pending[c]:
            cand[c] = 0.0
            gheap.append((0.0, c))
    heapq.heapify(gheap)
    while gheap:
        t0, c = heappop(gheap)
        if t0 != cand[c]:
            continue
        pend, rd = pending[c], ready[c]
        while pend and pend[0][0] <= t0:
            _, np_, p, y = heappop(pend)
            heappush(rd, (np_, p, y))
        x = heappop(rd)[2]
        f = t0 + cost[x]
        start[x] = t0
        finish[x] = f
        free[c] = f
        seq[c].append(x)
        for y, cm in zip(out[x], out_comm[x], strict=True):
            cy = ccl[y]
            t = f if cy == c else f + cm
            if t > arrival[y]:
                arrival[y] = t
            cnt[y] -= 1
            if cnt[y] == 0:
                a = arrival[y]
                heappush(pending[cy], (a, -prio[y], pos[y], y))
                if cy != c:
                    # another cluster's next start can only move earlier, and only if idle
                    fc = free[cy]
                    nc = a if a > fc else fc
                    if nc < cand[cy]:
                        cand[cy] = nc
                        heappush(gheap, (nc, cy))
        while pend and pend[0][0] <= f:
            _, np_, p, y = heappop(pend)
            heappush(rd, (np_, p, y))
        nc = f if rd else (pend[0][0] if pend else inf)
        cand[c] = nc
        if nc != inf:
            heappush(gheap, (nc, c))
    return Schedule(
        [[node[x] for x in sq] for sq in seq],
        [[start[x] for x in sq] for sq in seq],
        [[finish[x] for x in sq] for sq in seq],
        max(finish, default=0.0),
    )


def order_clusters(g: TaskGraph, clusters: Sequence[Sequence[int]]) -> Clustering:
    """Reorder every cluster consistently with one global topological order (deadlock-free).

    The same clusters (same indices, same members) with each cluster's nodes in the order chosen by
    the RCP list scheduler of :func:`order_and_estimate`. O((n + e) log n).

    Raises:
        SchedulingError: an invalid clustering or a cyclic graph.
    """
    return order_and_estimate(g, clusters).clusters


def critical_transfer_us(g: TaskGraph, sched: Schedule) -> float:
    """Transfer time (µs) on the schedule's critical path: the waits for values from other
    clusters that the last-finishing copy depends on, chained back to the start.

    Walks back from the copy that finishes last: at each copy, the input that arrived last
    decides its start (ties: the cluster's previous copy first, as waiting for it costs no
    transfer); a value from another cluster adds its transfer cost. So ``result / makespan`` is
    the share of the estimated latency spent moving tensors: what a faster network would save.
    O(n + e).
    """
    cp = _Copies(g, sched.clusters)
    size = cp.size
    start = [0.0] * size
    finish = [0.0] * size
    for c, m in enumerate(cp.members):
        for i, x in enumerate(m):
            start[x] = sched.start[c][i]
            finish[x] = sched.finish[c][i]
    if not size:
        return 0.0
    preds: list[list[tuple[int, float]]] = [[] for _ in range(size)]
    for x, ys in enumerate(cp.out):
        for y, cm in zip(ys, cp.out_comm[x], strict=True):
            preds[y].append((x, cm if cp.ccl[y] != cp.ccl[x] else 0.0))
    prev = [-1] * size
    for m in cp.members:
        for a, b in zip(m, m[1:], strict=False):
            prev[b] = a
    x = max(range(size), key=lambda i: finish[i])
    total = 0.0
    eps = 1e-6
    while start[x] > eps:
        t = start[x]
        p = prev[x]
        if p >= 0 and abs(finish[p] - t) <= eps * max(1.0, t):
            x = p
            continue
        best = max(preds[x], key=lambda pc: finish[pc[0]] + pc[1], default=None)
        if best is None or finish[best[0]] + best[1] < t - eps * max(1.0, t):
            break  # the start is not explained (costs changed after the simulation)
        total += best[1]
        x = best[0]
    return total
