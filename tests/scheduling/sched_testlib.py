"""Shared helpers for the ramiel.scheduling tests: graph builders and independent checkers."""

from __future__ import annotations

import random

import networkx as nx
from hypothesis import strategies as st

from ramiel.scheduling import TaskGraph


def graph(costs, edges, names=None) -> TaskGraph:
    """Edges as (u, v, comm) or (u, v, comm, bytes)."""
    full = [e if len(e) >= 4 else (e[0], e[1], e[2], 100) for e in edges]
    return TaskGraph.from_edges(costs, full, names)


def random_dag(n: int, density: float, seed: int, max_preds: int = 3) -> TaskGraph:
    """A random DAG whose node ids are shuffled (so ids are not a topological order)."""
    rng = random.Random(seed)
    perm = list(range(n))
    rng.shuffle(perm)
    costs = [0.0] * n
    for i in range(n):
        costs[perm[i]] = rng.choice([0.0, rng.uniform(0, 5), rng.uniform(1, 100)])
    edges = []
    for v in range(1, n):
        k = min(v, max_preds)
        for u in rng.sample(range(v), k):
            if rng.random() < density:
                b = rng.randint(0, 1 << 20)
                comm = rng.choice([0.0, rng.uniform(0, 10), rng.uniform(0, 80)])
                edges.append((perm[u], perm[v], comm, b))
    return TaskGraph.from_edges(costs, edges)


@st.composite
def dags(draw, max_n: int = 32):
    n = draw(st.integers(0, max_n))
    density = draw(st.sampled_from([0.0, 0.3, 0.6, 1.0]))
    seed = draw(st.integers(0, 2**32 - 1))
    return random_dag(n, density, seed)


def combined_graph(g: TaskGraph, clusters) -> nx.DiGraph:
    """Copies (c, i) with "next in cluster" edges plus dataflow edges from the copy each consumer
    reads (its own cluster's copy, else the copy in the lowest-numbered cluster)."""
    dg = nx.DiGraph()
    where: dict[int, dict[int, int]] = {}
    for c, members in enumerate(clusters):
        for i, v in enumerate(members):
            where.setdefault(v, {})[c] = i
            dg.add_node((c, i))
            if i:
                dg.add_edge((c, i - 1), (c, i))
    for c, members in enumerate(clusters):
        for i, v in enumerate(members):
            for u in g.preds[v]:
                assert u in where, f"input {u} of {v} is in no cluster"
                src = c if c in where[u] else min(where[u])
                dg.add_edge((src, where[u][src]), (c, i))
    return dg


def assert_deadlock_free(g: TaskGraph, clusters) -> None:
    assert nx.is_directed_acyclic_graph(combined_graph(g, clusters))


def assert_partition(g: TaskGraph, clusters) -> None:
    flat = [v for c in clusters for v in c]
    assert sorted(flat) == list(range(g.n))


def simulate(g: TaskGraph, clusters) -> float:
    """Reference makespan by fixed-point iteration (independent of the library's Kahn sweep)."""
    where: dict[int, dict[int, int]] = {}
    for c, members in enumerate(clusters):
        for i, v in enumerate(members):
            where.setdefault(v, {})[c] = i
    start = {(c, i): 0.0 for c, m in enumerate(clusters) for i in range(len(m))}
    for _ in range(sum(len(m) for m in clusters) + 1):
        changed = False
        for c, members in enumerate(clusters):
            for i, v in enumerate(members):
                t = start[(c, i - 1)] + g.cost[members[i - 1]] if i else 0.0
                for u in g.preds[v]:
                    src = c if c in where[u] else min(where[u])
                    f = start[(src, where[u][src])] + g.cost[u]
                    t = max(t, f + (0.0 if src == c else g.comm(u, v)))
                if t > start[(c, i)]:
                    start[(c, i)] = t
                    changed = True
        if not changed:
            break
    return max(
        (start[(c, i)] + g.cost[v] for c, m in enumerate(clusters) for i, v in enumerate(m)),
        default=0.0,
    )
