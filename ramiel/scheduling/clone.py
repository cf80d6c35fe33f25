"""Cloning cheap producers into the clusters that consume them.

Task duplication removes a transfer by recomputing its value where it is needed (the idea behind
DSH, B. Kruatrachue and T. Lewis, "Grain size determination for parallel processing", IEEE Software
5(1), 1988, and CPFD, I. Ahmad and Y.-K. Kwok, "On exploiting task duplication in parallel program
scheduling", IEEE TPDS 9(9), 1998). Ramiel applies it after merging, to a set of nodes the caller
marks as cloneable (typically constants, shape arithmetic and cheap reshapes).

For every value of a cloneable node ``u`` that is sent to a cluster ``C``, the candidate clone set is
``u`` plus the cloneable ancestors needed so that all inputs are available in ``C`` without a new
transfer: an input is available when its producer is in ``C`` (or is being cloned into it) or when
that value is already received by ``C``. A candidate whose clone set costs less than the transfer it
removes is tried: the copies are added to ``C``, copies left without any use are removed (a copy is
dropped from a cluster that holds none of its consumers once every consuming cluster holds its own
copy), the clusters are reordered (:func:`~ramiel.scheduling.order_clusters`) and the result is kept
only if the estimated makespan does not grow. A producer sent to several clusters is first tried
in all of them at once (that is what lets its original copy go), then cluster by cluster, by
decreasing saving; a second pass retries what an accepted clone may have unblocked. With more trials
than the simulation budget (scaled to the graph size), all candidates are first tried at once and
kept if that does not lengthen the makespan, otherwise trials run until the budget is spent.

Which copy a consumer reads (its own cluster's, else the lowest-numbered cluster's) is fixed by
:mod:`ramiel.scheduling.simulate`; a clone into a lower-numbered cluster can therefore change the
sender for other clusters, which the makespan check accounts for.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable, Sequence

from ramiel.errors import SchedulingError
from ramiel.scheduling.graph import Clustering, TaskGraph
from ramiel.scheduling.simulate import estimate_makespan, order_and_estimate, transfers

_SIM_BUDGET_VISITS = 120_000  # node+edge visits for all trial simulations


def _received(g: TaskGraph, clusters: Sequence[Sequence[int]]) -> tuple[list[set], dict]:
    """Per cluster the (node, port) values it receives; and saved cost per (node, dst cluster)."""
    recv: list[set[tuple[int, int]]] = [set() for _ in clusters]
    into: dict[tuple[int, int], float] = {}
    for t in transfers(g, clusters):
        recv[t.dst].add((t.node, t.port))
        into[(t.node, t.dst)] = into.get((t.node, t.dst), 0.0) + t.comm_us
    return recv, into


def _closure(
    g: TaskGraph, u: int, members: set[int], recv: set[tuple[int, int]], cloneable: set[int]
) -> list[int] | None:
    """Nodes to copy into a cluster so that ``u`` can run there without new transfers."""
    seen = {u}
    stack = [u]
    while stack:
        x = stack.pop()
        for w in g.preds[x]:
            if w in members or w in seen:
                continue
            if all((w, port) in recv for port, _, _ in g.values[(w, x)]):
                continue
            if w not in cloneable:
                return None
            seen.add(w)
            stack.append(w)
    pos = g.positions()
    return sorted(seen, key=pos.__getitem__)


def _prune(g: TaskGraph, clusters: list[list[int]]) -> list[list[int]]:
    """Drop copies nobody reads: a copy in a cluster without consumers, once every consuming cluster
    has its own copy. At least one copy of every node stays. Cluster indices are kept (a cluster
    may become empty)."""
    sets = [set(c) for c in clusters]
    where: dict[int, list[int]] = {}
    for c, members in enumerate(clusters):
        for v in members:
            where.setdefault(v, []).append(c)
    multi = [v for v, cs in where.items() if len(cs) > 1]
    if multi:
        pos = g.positions()
        changed = True
        while changed:
            changed = False
            for v in sorted(multi, key=pos.__getitem__, reverse=True):
                cs = where[v]
                if len(cs) < 2:
                    continue
                consumers = {c for s in g.succs[v] for c in where[s]}
                if not consumers <= set(cs):
                    continue
                for c in list(cs):
                    if c not in consumers and len(cs) > 1:
                        cs.remove(c)
                        sets[c].discard(v)
                        changed = True
    return [[v for v in members if v in sets[c]] for c, members in enumerate(clusters)]


def clone_producers(
    g: TaskGraph, clusters: Sequence[Sequence[int]], cloneable: Iterable[int]
) -> Clustering:
    """Duplicate cheap ``cloneable`` producers into consuming clusters when that removes a transfer.

    See the module docstring for the rules. The estimated makespan
    (:func:`~ramiel.scheduling.estimate_makespan`) of the result never exceeds that of the input
    clustering in its given order; if no clone helps, the input is returned unchanged (copied).
    Otherwise the clusters are reordered by :func:`order_clusters` and clusters left empty are
    dropped. Every node keeps at least one copy, so every consumer can read every input (its own
    cluster's copy, else the home copy, see :mod:`ramiel.scheduling.simulate`).

    Complexity: O(n + e) to find candidates, plus one O((n + e) log n) simulation per trial, at
    most about ``120_000 / (2n + e)`` trials (at least 8).

    Raises:
        SchedulingError: an invalid clustering, a cloneable id out of range, a cyclic graph, or
            input orders that deadlock.
    """
    clone_set: set[int] = set()
    for v in cloneable:
        v = operator.index(v)
        if not 0 <= v < g.n:
            raise SchedulingError(f"cloneable node id {v} out of range 0..{g.n - 1}")
        clone_set.add(v)
    current = [list(c) for c in clusters]
    base = estimate_makespan(g, current)
    if not clone_set:
        return current
    cur_ms = base.makespan
    cost, pos = g.cost, g.positions()
    recv, into = _received(g, current)
    members = [set(c) for c in current]

    candidates: list[tuple[float, int, int, int]] = []
    for (u, c), saved in into.items():
        if u not in clone_set:
            continue
        cl = _closure(g, u, members[c], recv[c], clone_set)
        if cl is None:
            continue
        extra = math.fsum(cost[w] for w in cl)
        if extra < saved:
            candidates.append((extra - saved, pos[u], c, u))
    if not candidates:
        return current
    candidates.sort()

    def with_clones(base_clusters: list[list[int]], picks: list[tuple[int, int]]) -> Clustering:
        new = [list(x) for x in base_clusters]
        sets = [set(x) for x in new]
        rcv, _ = _received(g, new)
        for c, u in picks:
            if u in sets[c]:
                continue
            cl = _closure(g, u, sets[c], rcv[c], clone_set)
            if cl is None:
                continue
            for w in cl:
                if w not in sets[c]:
                    sets[c].add(w)
                    new[c].append(w)
        return _prune(g, new)

    def tolerable(ms: float, ref: float) -> bool:
        return ms <= ref * (1 + 1e-12) + 1e-12

    visits = g.n + g.num_edges + sum(len(c) for c in current)
    budget = max(8, _SIM_BUDGET_VISITS // max(1, visits))
    # Trials: for a producer sent to several clusters, first all of them at once (which is what
    # lets its original copy go), then each cluster alone.
    by_node: dict[int, list[int]] = {}
    for _, _, c, u in candidates:
        by_node.setdefault(u, []).append(c)
    trials: list[list[tuple[int, int]]] = []
    for u, cs in by_node.items():
        if len(cs) > 1:
            trials.append([(c, u) for c in cs])
        trials += [[(c, u)] for c in cs]
    if len(trials) > budget:
        trial = with_clones(current, [(c, u) for _, _, c, u in candidates])
        sched = order_and_estimate(g, trial)
        budget -= 1
        if tolerable(sched.makespan, cur_ms):
            return [c for c in sched.clusters if c]
    changed = False
    for _ in range(2):  # a second pass retries what an accepted clone may have unblocked
        accepted = False
        for picks in trials:
            if budget <= 0:
                break
            if all(u in members[c] for c, u in picks):
                continue
            trial = with_clones(current, picks)
            if trial == current:
                continue
            budget -= 1
            sched = order_and_estimate(g, trial)
            if tolerable(sched.makespan, cur_ms):
                current, cur_ms = sched.clusters, sched.makespan
                members = [set(x) for x in current]
                changed = accepted = True
        if not accepted:
            break
    return [c for c in current if c] if changed else [list(c) for c in clusters]
