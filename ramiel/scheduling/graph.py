"""Task graphs and their levels (b-level, t-level, critical path).

A :class:`TaskGraph` is the plain DAG the scheduling algorithms work on: node ``i`` (``0 <= i < n``) is
one operation with an estimated cost in µs, and an edge ``u -> v`` means ``v`` consumes a value that
``u`` produces. Every edge carries the transfer cost in µs that is paid when its two ends run in
different clusters (0 when they share one) and the size in bytes of what travels.

Node ids need not be in topological order; :meth:`TaskGraph.topo_order` computes one (and reports a
dependency cycle as a :class:`~ramiel.errors.SchedulingError` naming the nodes on it).

Levels follow the usual definitions of the static-scheduling literature (e.g. Kwok & Ahmad, "Static
scheduling algorithms for allocating directed task graphs to multiprocessors", ACM Computing Surveys
31(4), 1999):

* the **b-level** (bottom level) of a node is the length of the longest path from the node to an exit
  node, counting the node's own cost, every node cost on the path and (unless ``with_comm=False``)
  every edge's transfer cost;
* the **t-level** (top level) is the length of the longest path from an entry node to the node, not
  counting the node's own cost;
* the **critical path** (CP) is a path of maximal length; its length is the largest b-level. The
  computation-only CP (``with_comm=False``) is the bound used for the parallelism ``W / CP``.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import networkx as nx  # type: ignore[import-untyped]

from ramiel.errors import SchedulingError

Clustering = list[list[int]]
"""A clustering: one list per cluster, holding node ids in the order the cluster executes them.

A node normally appears in exactly one cluster. After :func:`~ramiel.scheduling.clone_producers` a
node may appear in several clusters (clones); see :mod:`ramiel.scheduling.simulate` for which copy a
consumer reads.
"""

EdgeSpec = tuple[int, int, float, int] | tuple[int, int, float, int, int]
"""``(src, dst, comm_us, nbytes)`` or ``(src, dst, comm_us, nbytes, port)``; see :meth:`TaskGraph.from_edges`."""


@dataclass(eq=False)
class TaskGraph:
    """A DAG of tasks with node costs (µs) and edge transfer costs (µs) and sizes (bytes).

    Build one with :meth:`from_edges`. The fields are plain lists so that algorithms can walk them
    quickly; treat a graph as immutable once built (the topological order is cached).

    Attributes:
        names: one display name per node (used in error messages and reports).
        cost: estimated execution time of each node in µs (finite, ``>= 0``).
        succs: ``succs[u]`` lists the distinct successors of ``u``.
        succ_comm: ``succ_comm[u][i]`` is the transfer cost (µs) of edge ``u -> succs[u][i]``.
        preds: ``preds[v]`` lists the distinct predecessors of ``v``.
        pred_comm: ``pred_comm[v][i]`` is the transfer cost (µs) of edge ``preds[v][i] -> v``.
        values: ``values[(u, v)]`` is a tuple of ``(port, comm_us, nbytes)``, one per distinct
            output ``port`` of ``u`` that ``v`` reads. Transfers are counted per value (a value sent
            once to a cluster serves every consumer there), see
            :func:`~ramiel.scheduling.transfers`.
    """

    names: list[str]
    cost: list[float]
    succs: list[list[int]]
    succ_comm: list[list[float]]
    preds: list[list[int]]
    pred_comm: list[list[float]]
    values: dict[tuple[int, int], tuple[tuple[int, float, int], ...]]
    _topo: list[int] | None = field(default=None, init=False, repr=False)
    _pos: list[int] | None = field(default=None, init=False, repr=False)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_edges(
        cls,
        costs: Sequence[float],
        edges: Iterable[EdgeSpec],
        names: Sequence[str] | None = None,
    ) -> TaskGraph:
        """Build a graph from node costs and an edge list. O(n + e).

        Args:
            costs: ``costs[i]`` is the estimated cost of node ``i`` in µs (finite, ``>= 0``).
            edges: tuples ``(src, dst, comm_us, nbytes)`` or ``(src, dst, comm_us, nbytes, port)``.
                ``comm_us`` is the transfer cost in µs paid when ``src`` and ``dst`` run in different
                clusters, ``nbytes`` the size of the transferred value, ``port`` the output index of
                ``src`` that ``dst`` reads (default 0; a multi-output op such as Split gives one edge
                per output it feeds). Repeated ``(src, dst, port)`` triples are one value (the
                largest cost is kept); distinct ports on the same ``(src, dst)`` pair add up.
            names: node names (default ``"n0"``, ``"n1"``, ...).

        Raises:
            SchedulingError: a bad cost, an edge naming a node out of range, a self-loop, a
                negative or non-finite transfer cost or size, or a ``names`` list of the wrong
                length. Cycles are reported lazily by :meth:`topo_order`.
        """
        n = len(costs)
        cost = [float(c) for c in costs]
        for i, c in enumerate(cost):
            if not math.isfinite(c) or c < 0:
                raise SchedulingError(f"node {i}: cost must be a finite number >= 0, got {c!r}")
        if names is None:
            name_list = [f"n{i}" for i in range(n)]
        else:
            name_list = [str(x) for x in names]
            if len(name_list) != n:
                raise SchedulingError(f"{len(name_list)} names given for {n} nodes")

        # (u, v) -> {port: (comm, bytes)}
        pairs: dict[tuple[int, int], dict[int, tuple[float, int]]] = {}
        for e in edges:
            if len(e) == 4:
                u, v, c, b = e  # type: ignore[misc]
                port = 0
            elif len(e) == 5:
                u, v, c, b, port = e  # type: ignore[misc]
            else:
                raise SchedulingError(f"edge {e!r}: expected (src, dst, comm_us, nbytes[, port])")
            u, v, port = int(u), int(v), int(port)
            c = float(c)
            b = int(b)
            if not (0 <= u < n and 0 <= v < n):
                raise SchedulingError(f"edge ({u}, {v}): node id out of range 0..{n - 1}")
            if u == v:
                raise SchedulingError(
                    f"task graph has a dependency cycle: {name_list[u]} -> {name_list[u]}"
                )
            if not math.isfinite(c) or c < 0:
                raise SchedulingError(f"edge ({u}, {v}): transfer cost must be finite >= 0")
            if b < 0:
                raise SchedulingError(f"edge ({u}, {v}): byte count must be >= 0")
            ports = pairs.setdefault((u, v), {})
            old = ports.get(port)
            ports[port] = (c, b) if old is None else (max(old[0], c), max(old[1], b))

        succs: list[list[int]] = [[] for _ in range(n)]
        succ_comm: list[list[float]] = [[] for _ in range(n)]
        preds: list[list[int]] = [[] for _ in range(n)]
        pred_comm: list[list[float]] = [[] for _ in range(n)]
        values: dict[tuple[int, int], tuple[tuple[int, float, int], ...]] = {}
        for (u, v), ports in pairs.items():
            vals = tuple((p, cb[0], cb[1]) for p, cb in sorted(ports.items()))
            values[(u, v)] = vals
            c = math.fsum(x[1] for x in vals)
            succs[u].append(v)
            succ_comm[u].append(c)
            preds[v].append(u)
            pred_comm[v].append(c)
        return cls(name_list, cost, succs, succ_comm, preds, pred_comm, values)

    # ------------------------------------------------------------------ queries
    @property
    def n(self) -> int:
        """Number of nodes."""
        return len(self.cost)

    @property
    def num_edges(self) -> int:
        """Number of distinct ``(src, dst)`` edges."""
        return len(self.values)

    def comm(self, u: int, v: int) -> float:
        """Transfer cost in µs of edge ``u -> v`` (all values ``v`` reads from ``u``). KeyError if none."""
        return math.fsum(x[1] for x in self.values[(u, v)])

    def nbytes(self, u: int, v: int) -> int:
        """Bytes ``v`` reads from ``u`` (all values). KeyError if there is no such edge."""
        return sum(x[2] for x in self.values[(u, v)])

    def edges(self) -> Iterator[tuple[int, int, float, int]]:
        """Yield ``(src, dst, comm_us, nbytes)`` for every distinct edge."""
        for (u, v), vals in self.values.items():
            yield u, v, math.fsum(x[1] for x in vals), sum(x[2] for x in vals)

    def total_work(self) -> float:
        """W: the sum of all node costs in µs, i.e. the estimated sequential time."""
        return math.fsum(self.cost)

    def topo_order(self) -> list[int]:
        """A topological order of the nodes (cached). O(n + e), O(n log n) if ids are unordered.

        When every edge goes from a smaller to a larger id, the order is ``0..n-1``; otherwise it is
        Kahn's algorithm taking the smallest ready id first, so it is deterministic.

        Raises:
            SchedulingError: the graph has a cycle; the message names the nodes on one cycle.
        """
        if self._topo is not None:
            return self._topo
        n = self.n
        if all(u < v for (u, v) in self.values):
            order = list(range(n))
        else:
            indeg = [len(p) for p in self.preds]
            heap = [v for v in range(n) if indeg[v] == 0]
            heapq.heapify(heap)
            order = []
            succs = self.succs
            while heap:
                u = heapq.heappop(heap)
                order.append(u)
                for v in succs[u]:
                    indeg[v] -= 1
                    if indeg[v] == 0:
                        heapq.heappush(heap, v)
            if len(order) < n:
                raise SchedulingError(self._cycle_message(set(range(n)) - set(order)))
        self._topo = order
        return order

    def positions(self) -> list[int]:
        """``positions()[v]`` is the index of ``v`` in :meth:`topo_order` (cached)."""
        if self._pos is None:
            pos = [0] * self.n
            for i, v in enumerate(self.topo_order()):
                pos[v] = i
            self._pos = pos
        return self._pos

    def _cycle_message(self, nodes: set[int]) -> str:
        dg = nx.DiGraph()
        dg.add_edges_from((u, v) for (u, v) in self.values if u in nodes and v in nodes)
        cyc = nx.find_cycle(dg)
        path = [cyc[0][0]] + [e[1] for e in cyc]
        return "task graph has a dependency cycle: " + " -> ".join(self.names[v] for v in path)


# ---------------------------------------------------------------------- levels
def b_levels(g: TaskGraph, *, with_comm: bool = True) -> list[float]:
    """Bottom levels, in µs: ``b[v] = cost[v] + max over successors s of (comm(v, s) + b[s])``.

    ``b[v]`` is the longest path from ``v`` to an exit node, counting node costs (``v``'s own
    included) and, if ``with_comm``, edge transfer costs. O(n + e).

    Raises:
        SchedulingError: the graph has a cycle.
    """
    b = [0.0] * g.n
    cost, succs, scomm = g.cost, g.succs, g.succ_comm
    for v in reversed(g.topo_order()):
        best = 0.0
        if with_comm:
            for s, c in zip(succs[v], scomm[v], strict=True):
                x = b[s] + c
                if x > best:
                    best = x
        else:
            for s in succs[v]:
                x = b[s]
                if x > best:
                    best = x
        b[v] = cost[v] + best
    return b


def t_levels(g: TaskGraph, *, with_comm: bool = True) -> list[float]:
    """Top levels, in µs: ``t[v] = max over predecessors p of (t[p] + cost[p] + comm(p, v))``.

    ``t[v]`` is the earliest time ``v`` can start on an unbounded number of processors with every
    edge paying its transfer cost (or none if ``with_comm=False``); 0 for entry nodes. O(n + e).

    Raises:
        SchedulingError: the graph has a cycle.
    """
    t = [0.0] * g.n
    cost, preds, pcomm = g.cost, g.preds, g.pred_comm
    for v in g.topo_order():
        best = 0.0
        for p, c in zip(preds[v], pcomm[v], strict=True):
            x = t[p] + cost[p] + (c if with_comm else 0.0)
            if x > best:
                best = x
        t[v] = best
    return t


def critical_path(g: TaskGraph, *, with_comm: bool = True) -> tuple[float, list[int]]:
    """The critical path: ``(length_us, nodes from entry to exit)``. O(n + e).

    The length is the largest b-level (with transfer costs unless ``with_comm=False``; the
    computation-only CP is the bound for ``W / CP``). Ties are broken towards the node that comes
    first in :meth:`TaskGraph.topo_order`, so the result is deterministic. Returns ``(0.0, [])``
    for an empty graph.

    Raises:
        SchedulingError: the graph has a cycle.
    """
    if g.n == 0:
        return 0.0, []
    b = b_levels(g, with_comm=with_comm)
    pos = g.positions()
    v = min(range(g.n), key=lambda x: (-b[x], pos[x]))
    length = b[v]
    path = [v]
    while g.succs[v]:
        best = -1
        bx = 0.0
        for s, c in zip(g.succs[v], g.succ_comm[v], strict=True):
            x = b[s] + (c if with_comm else 0.0)
            if best < 0 or x > bx or (x == bx and pos[s] < pos[best]):
                best, bx = s, x
        v = best
        path.append(v)
    return length, path
