"""Linear clustering (Kim & Browne 1988).

S. J. Kim and J. C. Browne, "A general approach to mapping of parallel computations upon
multiprocessor architectures", Proc. ICPP 1988, vol. 3, pp. 1-8; described as "linear clustering"
in A. Gerasoulis and T. Yang, "A comparison of clustering heuristics for scheduling DAGs on
multiprocessors", JPDC 16(4), 1992.

The critical path (node costs plus transfer costs) of the still-unclustered subgraph becomes one
cluster; repeat until every node is clustered. Each cluster is a path of the DAG, so it is a chain
of dependent nodes and its order is forced.

Recomputing every b-level after each peel costs O(n + e) per cluster, which is quadratic on wide
graphs (thousands of small clusters). Here b-levels are updated incrementally: removing a path can
only lower the b-levels of the path's unclustered ancestors, so only those are revisited, in reverse
topological order, and the propagation stops at every node whose b-level does not change. The
largest b-level is kept in a lazy max-heap. Total cost O((n + e + u) log n) where ``u`` counts the
b-level changes; ``u`` is a few times ``n`` on the CNN-shaped graphs measured in
``bench/compile_speed.py``.
"""

from __future__ import annotations

import heapq

from ramiel.scheduling.graph import Clustering, TaskGraph, b_levels


def linear_clustering(g: TaskGraph) -> Clustering:
    """Cluster ``g`` by repeatedly peeling the critical path of the unclustered subgraph.

    Returns the clusters in the order they were peeled (cluster 0 is the critical path of the whole
    graph), each a path of the DAG listed from entry to exit. Every node is in exactly one cluster;
    an empty graph gives ``[]``. Ties between equally long paths go to the node earliest in
    :meth:`TaskGraph.topo_order`, so the result is deterministic.

    Complexity: O((n + e + u) log n), ``u`` = number of b-level updates (see module docstring).

    Raises:
        SchedulingError: the graph has a cycle (the message names the nodes on it).
    """
    n = g.n
    if n == 0:
        return []
    order = g.topo_order()
    pos = g.positions()
    b = b_levels(g)
    succs, scomm, preds, cost = g.succs, g.succ_comm, g.preds, g.cost
    done = [False] * n
    mark = [0] * n  # peel number that queued the node for an update
    heap = [(-b[v], pos[v], v) for v in range(n)]
    heapq.heapify(heap)
    heappush, heappop = heapq.heappush, heapq.heappop
    clusters: Clustering = []
    remaining = n
    stamp = 0
    while remaining:
        while True:  # lazy deletion: skip clustered nodes and outdated b-levels
            nb, _, v = heap[0]
            if done[v] or -nb != b[v]:
                heappop(heap)
                continue
            break
        heappop(heap)
        path = [v]
        done[v] = True
        while True:
            best = -1
            bx = 0.0
            for s, c in zip(succs[v], scomm[v], strict=True):
                if done[s]:
                    continue
                x = c + b[s]
                if best < 0 or x > bx or (x == bx and pos[s] < pos[best]):
                    best, bx = s, x
            if best < 0:
                break
            v = best
            path.append(v)
            done[v] = True
        clusters.append(path)
        remaining -= len(path)
        if not remaining:
            break

        # Incremental b-level update of the unclustered ancestors of the path.
        stamp += 1
        work: list[int] = []  # max-heap of topological positions (stored negated)
        for v in path:
            for p in preds[v]:
                if not done[p] and mark[p] != stamp:
                    mark[p] = stamp
                    heappush(work, -pos[p])
        while work:
            p = order[-heappop(work)]
            best_x = 0.0
            for s, c in zip(succs[p], scomm[p], strict=True):
                if not done[s]:
                    x = c + b[s]
                    if x > best_x:
                        best_x = x
            nb = cost[p] + best_x
            if nb != b[p]:
                b[p] = nb
                heappush(heap, (-nb, pos[p], p))
                for q in preds[p]:
                    if not done[q] and mark[q] != stamp:
                        mark[q] = stamp
                        heappush(work, -pos[q])
    return clusters
