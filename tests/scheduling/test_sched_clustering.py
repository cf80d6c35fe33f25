"""Linear clustering, ordering, makespan estimation and merging: hand cases and properties.

Every hand-case number below is worked out in the comments (all times in µs).
"""

from __future__ import annotations

import itertools
import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sched_testlib import (
    assert_deadlock_free,
    assert_partition,
    dags,
    graph,
    random_dag,
    simulate,
)

from ramiel.errors import SchedulingError
from ramiel.scheduling import (
    TaskGraph,
    critical_path,
    estimate_makespan,
    linear_clustering,
    merge_clusters,
    order_and_estimate,
    order_clusters,
    transfers,
)


def makespan(g, clusters):
    return estimate_makespan(g, clusters).makespan


# ------------------------------------------------------------------ hand cases
def test_chain_is_one_cluster():
    g = graph([1, 2, 3], [(0, 1, 10), (1, 2, 10)])
    assert linear_clustering(g) == [[0, 1, 2]]
    assert makespan(g, [[0, 1, 2]]) == 6.0
    assert merge_clusters(g, [[0, 1, 2]], 4) == [[0, 1, 2]]


def test_diamond():
    # a(1) -> b(5), c(3) -> d(1), edges cost 2. CP a-b-d; c alone.
    g = graph([1, 5, 3, 1], [(0, 1, 2), (0, 2, 2), (1, 3, 2), (2, 3, 2)])
    lc = linear_clustering(g)
    assert lc == [[0, 1, 3], [2]]
    # a 0-1, b 1-6; c starts 1+2=3, ends 6; d waits for c: 6+2=8, ends 9.
    s = estimate_makespan(g, lc)
    assert s.makespan == 9.0
    assert s.start == [[0.0, 1.0, 8.0], [3.0]] and s.finish == [[1.0, 6.0, 9.0], [6.0]]
    # c's work (3) is below its transfers (2 + 2), so it is absorbed: one cluster, 10. The
    # unabsorbed pair (9) is charged 2 transfers x 2 us (smallest edge cost) / 2 workers = 11.
    assert merge_clusters(g, lc, 2) in ([[0, 1, 2, 3]], [[0, 2, 1, 3]])
    assert makespan(g, merge_clusters(g, lc, 2)) == 10.0
    assert makespan(g, merge_clusters(g, lc, 1)) == 10.0


def test_unabsorbed_clusters_kept_when_clearly_faster():
    # as the diamond, but b costs 10: absorbed 15; unabsorbed: b 1-11, c 3-6 (+2), d 11-12,
    # scored 12 + 2 x 2 / 2 = 14 < 15 * 0.99.
    g = graph([1, 10, 3, 1], [(0, 1, 2), (0, 2, 2), (1, 3, 2), (2, 3, 2)])
    m = merge_clusters(g, linear_clustering(g), 2)
    assert m == [[0, 1, 3], [2]] and makespan(g, m) == 12.0


def fork_join():
    # s(1) -> x(10), y(6), z(3) -> j(1); every edge costs 1.
    return graph(
        [1, 10, 6, 3, 1], [(0, 1, 1), (0, 2, 1), (0, 3, 1), (1, 4, 1), (2, 4, 1), (3, 4, 1)]
    )


def test_fork_join_three_unequal_branches():
    g = fork_join()
    lc = linear_clustering(g)
    assert lc == [[0, 1, 4], [2], [3]]
    # unbounded: x 1-11, y 2-8 (+1), z 2-5 (+1): j at 11, ends 12 = computation CP.
    assert makespan(g, lc) == 12.0
    # two workers: {s,x,j} and {y,z}: y 2-8, z 8-11, arrives 12, j 12-13.  (Putting z with x
    # gives 15, y with x gives 19.)
    m2 = merge_clusters(g, lc, 2)
    assert sorted(map(sorted, m2)) == [[0, 1, 4], [2, 3]]
    assert makespan(g, m2) == 13.0
    assert makespan(g, merge_clusters(g, lc, 3)) == 12.0
    assert merge_clusters(g, lc, 1)[0][0] == 0 and makespan(g, merge_clusters(g, lc, 1)) == 21.0


def test_fewest_workers_within_the_tolerance():
    g = fork_join()
    lc = linear_clustering(g)
    # Scored as makespan + transfers x 1 us (the smallest edge cost) / workers: three workers
    # 12 + 4/3 = 13.33, two 13 + 3/2 = 14.5, i.e. 8.8 % more: not within the default 5 %.
    assert len(merge_clusters(g, lc, 4)) == 3
    m = merge_clusters(g, lc, 4, tolerance=0.1)  # two workers of 2 threads each
    assert sorted(map(sorted, m)) == [[0, 1, 4], [2, 3]] and makespan(g, m) == 13.0
    assert len(merge_clusters(g, lc, 5, tolerance=0.1)) == 2  # 2 x 2 threads, one core idle
    # 2 workers of 3 cores would get one thread each (3 // 2): no gain; 0 turns the choice off
    assert len(merge_clusters(g, lc, 3, tolerance=0.1)) == 3
    assert len(merge_clusters(g, lc, 4, tolerance=0.0)) == 3
    with pytest.raises(SchedulingError, match="tolerance must be at least 0"):
        merge_clusters(g, lc, 4, tolerance=-0.1)


def fire_module():
    # squeeze(10) -> expand1x1(20) || expand3x3(60) -> concat(5); edges cost 5 and carry 100/50 B
    return TaskGraph.from_edges(
        [10, 20, 60, 5],
        [(0, 1, 5, 100), (0, 2, 5, 100), (1, 3, 5, 50), (2, 3, 5, 50)],
        ["squeeze", "expand1x1", "expand3x3", "concat"],
    )


def test_squeezenet_fire_module():
    g = fire_module()
    lc = linear_clustering(g)
    assert lc == [[0, 2, 3], [1]]
    # squeeze 0-10, expand3x3 10-70, expand1x1 15-35 (+5 = 40), concat 70-75.
    assert makespan(g, lc) == 75.0
    assert critical_path(g, with_comm=False) == (75.0, [0, 2, 3])
    assert makespan(g, merge_clusters(g, lc, 2)) == 75.0
    ts = transfers(g, lc)
    assert [(t.node, t.src, t.dst, t.nbytes) for t in ts] == [(0, 0, 1, 100), (1, 1, 0, 50)]


def inception():
    # 0 x(1) -> b1: 1 conv1x1(10); b2: 2 1x1(5) -> 3 3x3(20); b3: 4 1x1(4) -> 5 5x5(15);
    # b4: 6 pool(3) -> 7 1x1(6); all -> 8 concat(2). Every edge costs 1.
    costs = [1, 10, 5, 20, 4, 15, 3, 6, 2]
    edges = [(0, 1, 1), (0, 2, 1), (2, 3, 1), (0, 4, 1), (4, 5, 1), (0, 6, 1), (6, 7, 1)]
    edges += [(v, 8, 1) for v in (1, 3, 5, 7)]
    return graph(costs, edges)


def test_inception_block():
    g = inception()
    lc = linear_clustering(g)
    # b-levels: b2 29, b3 23, b1 13, b4 13 (tie -> earlier node 1)
    assert lc == [[0, 2, 3, 8], [4, 5], [1], [6, 7]]
    # x 0-1, b2 1-26, b3 2-21 (+1), b1 2-12, b4 2-11; concat 26-28 = computation CP.
    assert makespan(g, lc) == 28.0
    assert g.total_work() == 66.0
    m2 = merge_clusters(g, lc, 2)
    assert len(m2) == 2
    # best mapping of the four linear clusters onto two workers, by brute force
    best = math.inf
    for bits in itertools.product([0, 1], repeat=len(lc)):
        groups = [
            [v for c, bit in zip(lc, bits, strict=True) for v in c if bit == w] for w in (0, 1)
        ]
        best = min(best, order_and_estimate(g, [x for x in groups if x]).makespan)
    assert best == 37.0
    assert makespan(g, m2) == best


def test_disconnected_components():
    # two independent chains and an isolated node
    g = graph([5, 5, 3, 3, 1], [(0, 1, 1), (2, 3, 1)])
    lc = linear_clustering(g)
    assert lc == [[0, 1], [2, 3], [4]]
    assert makespan(g, lc) == 10.0
    m2 = merge_clusters(g, lc, 2)
    assert len(m2) == 2 and makespan(g, m2) == 10.0


def test_empty_and_single_node():
    g = TaskGraph.from_edges([], [])
    assert linear_clustering(g) == []
    assert merge_clusters(g, [], 3) == []
    assert order_clusters(g, []) == []
    assert makespan(g, []) == 0.0
    g1 = TaskGraph.from_edges([2.5], [])
    assert linear_clustering(g1) == [[0]]
    assert merge_clusters(g1, [[0]], 8) == [[0]]
    assert makespan(g1, [[0]]) == 2.5


def test_more_clusters_than_nodes():
    g = fork_join()
    m = merge_clusters(g, linear_clustering(g), 100)
    assert len(m) <= g.n
    assert_partition(g, m)


@pytest.mark.parametrize("n", [0, -1])
def test_merge_needs_a_positive_count(n):
    g = fork_join()
    with pytest.raises(SchedulingError, match="at least 1"):
        merge_clusters(g, linear_clustering(g), n)


def test_merge_rejects_non_integer_count():
    g = fork_join()
    with pytest.raises(SchedulingError):
        merge_clusters(g, linear_clustering(g), 1.5)


def test_cycle_reported_by_every_entry_point():
    g = graph([1, 1, 1], [(0, 1, 1), (1, 2, 1), (2, 0, 1)], ["p", "q", "r"])
    for call in (
        lambda: linear_clustering(g),
        lambda: merge_clusters(g, [[0], [1], [2]], 2),
        lambda: order_clusters(g, [[0, 1, 2]]),
    ):
        with pytest.raises(
            SchedulingError, match="cycle: .*p.*q.*r|cycle: .*q.*r.*p|cycle: .*r.*p.*q"
        ):
            call()


def test_invalid_clusterings():
    g = fork_join()
    for bad in ([[0, 1, 2, 3]], [[0, 1, 1, 2, 3, 4]], [[0, 1, 2, 3, 9]], [[0, 1, 2, 3, "x"]]):
        with pytest.raises(SchedulingError):
            estimate_makespan(g, bad)


def test_deadlocking_order_is_reported():
    # a -> b and c -> d; cluster 0 runs d before a, cluster 1 runs b before c.
    g = graph([1, 1, 1, 1], [(0, 1, 1), (2, 3, 1)], ["a", "b", "c", "d"])
    with pytest.raises(SchedulingError, match="deadlock"):
        estimate_makespan(g, [[3, 0], [1, 2]])
    fixed = order_clusters(g, [[3, 0], [1, 2]])
    assert sorted(map(sorted, fixed)) == [[0, 3], [1, 2]]
    assert_deadlock_free(g, fixed)
    assert makespan(g, fixed) == simulate(g, fixed)


def test_order_clusters_prefers_ready_critical_work():
    # cluster 1 holds y (6) and z (3) of the fork-join: y has the larger b-level, runs first.
    g = fork_join()
    assert order_clusters(g, [[4, 1, 0], [3, 2]]) == [[0, 1, 4], [2, 3]]


def test_merge_absorbs_constants():
    # zero-cost constants feeding each op: their transfers cost more than their work, so they
    # join the cluster of their consumer.
    costs = [0.0, 0.0, 0.0, 50.0, 40.0, 30.0, 5.0]
    edges = [(0, 3, 4), (1, 4, 4), (2, 5, 4), (3, 4, 10), (3, 5, 10), (4, 6, 10), (5, 6, 10)]
    g = graph(costs, edges)
    lc = linear_clustering(g)
    assert lc == [[0, 3, 4, 6], [2, 5], [1]]  # constant 1 is left alone
    m = merge_clusters(g, lc, 4)
    assert len(m) == 2
    for c in m:
        for const, op in ((0, 3), (1, 4), (2, 5)):
            assert (const in c) == (op in c)


# ------------------------------------------------------------------ properties
@settings(max_examples=300, deadline=None)
@given(dags())
def test_linear_clustering_properties(g):
    lc = linear_clustering(g)
    assert_partition(g, lc)
    for c in lc:  # each cluster is a path of the DAG
        for u, v in itertools.pairwise(c):
            assert v in g.succs[u]
    assert_deadlock_free(g, lc)
    if g.n:
        assert lc[0] == critical_path(g)[1]


@settings(max_examples=300, deadline=None)
@given(dags(), st.integers(0, 2**32 - 1))
def test_order_and_estimate_properties(g, seed):
    # arbitrary partitions in arbitrary orders
    rng = random.Random(seed)
    k = rng.randint(1, 5)
    clusters = [[] for _ in range(k)]
    for v in range(g.n):
        clusters[rng.randrange(k)].append(v)
    for c in clusters:
        rng.shuffle(c)
    ordered = order_clusters(g, clusters)
    assert [sorted(c) for c in ordered] == [sorted(c) for c in clusters]
    assert_deadlock_free(g, ordered)
    s = estimate_makespan(g, ordered)
    assert math.isclose(s.makespan, simulate(g, ordered), rel_tol=1e-9, abs_tol=1e-9)
    assert math.isclose(s.makespan, order_and_estimate(g, clusters).makespan, rel_tol=1e-9)
    assert s.makespan >= critical_path(g, with_comm=False)[0] - 1e-9
    assert s.makespan >= max((sum(g.cost[v] for v in c) for c in clusters), default=0) - 1e-9
    # each node starts after its inputs are ready
    fin = {v: s.finish[c][i] for c, m in enumerate(ordered) for i, v in enumerate(m)}
    cl = {v: c for c, m in enumerate(ordered) for v in m}
    for c, m in enumerate(ordered):
        for i, v in enumerate(m):
            for u in g.preds[v]:
                delay = 0.0 if cl[u] == c else g.comm(u, v)
                assert s.start[c][i] >= fin[u] + delay - 1e-9


@settings(max_examples=300, deadline=None)
@given(dags(), st.integers(1, 6))
def test_merge_properties(g, n):
    lc = linear_clustering(g)
    m = merge_clusters(g, lc, n)
    assert len(m) <= n
    assert_partition(g, m)
    assert_deadlock_free(g, m)
    ms = makespan(g, m)
    assert ms <= g.total_work() * (1 + 1e-9) + 1e-9
    assert math.isclose(ms, simulate(g, m), rel_tol=1e-9, abs_tol=1e-9)
    if n == 1 and g.n:
        assert len(m) == 1


def test_merge_on_a_larger_graph_is_fast_and_valid():
    import time

    g = random_dag(2000, 0.6, 7)
    t0 = time.perf_counter()
    lc = linear_clustering(g)
    m = merge_clusters(g, lc, 2)
    elapsed = time.perf_counter() - t0
    assert len(m) <= 2
    assert_partition(g, m)
    assert makespan(g, m) <= g.total_work()
    assert elapsed < 10.0  # ~0.2 s here; generous for a noisy machine
