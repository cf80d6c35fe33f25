"""Intra-op thread assignment (:mod:`ramiel.scheduling.threads`) and per-copy costs in
:func:`~ramiel.scheduling.estimate_makespan`.

Hand-made cases pin the rule (more threads only where fewer clusters are busy, only where they are
faster); property tests on random DAGs, clusterings and clones check the guarantees against
checkers written independently of the library: the estimate never gets worse, no op oversubscribes
the cores in the returned schedule (per op and at every instant), counts stay in range and costs are
the ones given.
"""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sched_testlib import assert_deadlock_free, dags, graph, simulate

from ramiel.errors import SchedulingError
from ramiel.scheduling import (
    Schedule,
    clone_producers,
    estimate_makespan,
    linear_clustering,
    merge_clusters,
    order_clusters,
)
from ramiel.scheduling.threads import active_clusters, assign_threads, concurrent_clusters

EPS = 1e-9


# ------------------------------------------------------------------ independent checkers
def simulate_costs(g, clusters, costs) -> float:
    """Reference makespan with per-copy costs ``costs[c][i]`` (fixed-point iteration, like
    ``sched_testlib.simulate``; a consumer reads its own cluster's copy, else the lowest
    cluster's)."""
    where: dict[int, dict[int, int]] = {}
    for c, members in enumerate(clusters):
        for i, v in enumerate(members):
            where.setdefault(v, {})[c] = i
    start = {(c, i): 0.0 for c, m in enumerate(clusters) for i in range(len(m))}
    for _ in range(sum(len(m) for m in clusters) + 1):
        changed = False
        for c, members in enumerate(clusters):
            for i, v in enumerate(members):
                t = start[(c, i - 1)] + costs[c][i - 1] if i else 0.0
                for u in g.preds[v]:
                    src = c if c in where[u] else min(where[u])
                    j = where[u][src]
                    t = max(
                        t, start[(src, j)] + costs[src][j] + (0.0 if src == c else g.comm(u, v))
                    )
                if t > start[(c, i)]:
                    start[(c, i)] = t
                    changed = True
        if not changed:
            break
    return max(
        (start[(c, i)] + costs[c][i] for c, m in enumerate(clusters) for i in range(len(m))),
        default=0.0,
    )


def busy_others(s: Schedule, c: int, i: int) -> int:
    """1 + the clusters other than ``c`` running an op of positive length that overlaps op ``i``
    of cluster ``c`` for a positive time (quadratic; independent of ``active_clusters``)."""
    a, b = s.start[c][i], s.finish[c][i]
    if b - a <= EPS:
        return 1
    n = 1
    for d in range(len(s.start)):
        if d != c and any(
            f - st > EPS and min(b, f) - max(a, st) > EPS
            for st, f in zip(s.start[d], s.finish[d], strict=True)
        ):
            n += 1
    return n


def oversubscribed(s: Schedule, threads, cores: int) -> list[tuple[float, int]]:
    """The instants (just after an op starts) where the running ops hold more intra-op threads
    than ``cores`` -- or than the clusters running then, when those alone exceed ``cores`` (more
    clusters than cores is the clustering's choice, not the threads'): ``(time, threads)``."""
    bad = []
    for c, row in enumerate(s.start):
        for i, t0 in enumerate(row):
            if s.finish[c][i] - t0 <= EPS:
                continue
            t = t0 + EPS
            running = [
                threads[d][j]
                for d in range(len(s.start))
                for j in range(len(s.start[d]))
                if s.start[d][j] <= t < s.finish[d][j] - EPS
            ]
            if sum(running) > max(cores, len(running)):
                bad.append((t0, sum(running)))
    return bad


# ------------------------------------------------------------------ active_clusters
def test_active_clusters_counts_overlaps():
    # c0: [0, 10] then [10, 20]; c1: [5, 15]; c2: [20, 30] (touches c0's end: no overlap)
    s = Schedule(
        clusters=[[0, 1], [2], [3]],
        start=[[0.0, 10.0], [5.0], [20.0]],
        finish=[[10.0, 20.0], [15.0], [30.0]],
        makespan=30.0,
    )
    assert active_clusters(s) == [[2, 2], [2], [1]]


def test_active_clusters_zero_length_ops_overlap_nothing():
    # c0's op 1 lasts 0 µs at t = 5, inside c1's op; c1's first op lasts 0 µs inside c0's op 0
    s = Schedule(
        clusters=[[0, 1], [2, 3]],
        start=[[0.0, 5.0], [2.0, 4.0]],
        finish=[[5.0, 5.0], [2.0, 9.0]],
        makespan=9.0,
    )
    assert active_clusters(s) == [[2, 1], [1, 2]]
    assert active_clusters(Schedule([[], [0]], [[], [0.0]], [[], [3.0]], 3.0)) == [[], [1]]


# ------------------------------------------------------------------ hand-made cases
def test_chain_on_one_cluster_takes_threads_where_faster():
    # one cluster, nothing else busy: each op takes 2 threads exactly where that is faster
    g = graph([100, 50, 200, 10], [(0, 1, 5), (1, 2, 5), (2, 3, 5)], ["a", "b", "c", "d"])
    cost_at = [list(g.cost), [60.0, 70.0, 120.0, 12.0]]
    r = assign_threads(g, [[0, 1, 2, 3]], 2, cost_at)
    assert r.threads == [[2, 1, 2, 1]]
    assert r.costs == [[60.0, 50.0, 120.0, 10.0]]
    assert r.single_thread_makespan == 360.0
    assert r.makespan == 60 + 50 + 120 + 10


def test_ties_keep_the_previous_count():
    # b costs the same on 1 and 2 threads: it keeps the count of the op before it (no switch in
    # the generated code), and one thread when that one has one
    g = graph([100, 50, 100], [(0, 1, 0), (1, 2, 0)])
    r = assign_threads(g, [[0, 1, 2]], 2, [list(g.cost), [60.0, 50.0, 60.0]])
    assert r.threads == [[2, 2, 2]]
    g = graph([50, 100, 100], [(0, 1, 0), (1, 2, 0)])
    r = assign_threads(g, [[0, 1, 2]], 2, [list(g.cost), [50.0, 60.0, 60.0]])
    assert r.threads == [[1, 2, 2]]


def fork_join():
    # s (100) -> b1 (300), b2 (300) -> j (100); transfers 10 µs
    edges = [(0, 1, 10), (0, 2, 10), (1, 3, 10), (2, 3, 10)]
    return graph([100, 300, 300, 100], edges, ["s", "b1", "b2", "j"])


def test_fork_join_threads_only_outside_the_branches():
    g = fork_join()
    clusters = [[0, 1, 3], [2]]
    cost_at = [list(g.cost), [60.0, 180.0, 180.0, 60.0]]
    # without the pool constraint: stem and head run alone: 2 threads; the branches run side by
    # side: 1 each
    r = assign_threads(g, clusters, 2, cost_at, pools=False)
    assert r.threads == [[2, 1, 2], [1]]
    # one thread: s 0-100, b1 100-400, b2 110-410, j 420-520
    assert r.single_thread_makespan == 520.0
    # threaded: s 0-60, b1 60-360, b2 70-370, j 380-440
    assert r.makespan == 440.0
    assert r.schedule.start == [[0.0, 60.0, 380.0], [70.0]]
    assert active_clusters(r.schedule) == [[1, 2, 1], [2]]
    # with it, c0's 2-thread pool and c1's thread need 3 cores: c0's helper would spin on c1's
    # core after the stem (light_shufflenet so planned: 600 ms against 7.7), so one thread
    r = assign_threads(g, clusters, 2, cost_at)
    assert r.threads == [[1, 1, 1], [1]] and r.makespan == r.single_thread_makespan


def test_fork_join_on_four_cores_splits_them():
    g = fork_join()
    cost_at = [
        list(g.cost),
        [60.0, 180.0, 180.0, 60.0],
        [50.0, 140.0, 140.0, 50.0],
        [45.0, 120.0, 120.0, 45.0],
    ]
    # without the pool constraint: 4 threads for the stem and head, 2 + 2 for the branches...
    r = assign_threads(g, [[0, 1, 3], [2]], 4, cost_at, pools=False)
    assert r.threads == [[4, 2, 4], [2]]
    # ...but the pools then need 4 + 2 = 6 threads on 4 cores: lowering c0 costs least, first to
    # 3 (still 5 threads), then to 2; lowering c1 to 1 would cost b2 120 µs
    r = assign_threads(g, [[0, 1, 3], [2]], 4, cost_at)
    assert r.threads == [[2, 2, 2], [2]]
    # s (2 threads), transfer, b1 and b2 (2 threads each), transfer, j (2 threads)
    assert r.makespan == 60.0 + 10.0 + 180.0 + 10.0 + 60.0


def test_every_cluster_pool_needs_cores_of_its_own():
    # a chain s -> b -> j split as c0 = [s, j], c1 = [b]: every op runs alone, so without the
    # pool constraint both clusters take 2 threads: pools of 2 + 2 threads
    g = graph([100, 400, 100], [(0, 1, 0), (1, 2, 0)], ["s", "b", "j"])
    cost_at = [list(g.cost), [50.0, 220.0, 50.0]]
    free = assign_threads(g, [[0, 2], [1]], 2, cost_at, pools=False)
    assert free.threads == [[2, 2], [2]] and free.makespan == 320.0
    # on 3 cores they must fit in 3 threads: lowering c0 costs 100 µs, lowering c1 180 µs, so c0
    # gives up its pool
    r = assign_threads(g, [[0, 2], [1]], 3, cost_at)
    assert r.threads == [[1, 1], [2]]
    assert r.makespan == 100.0 + 220.0 + 100.0
    # on 2 cores no cluster of two may own one: 1 + 2 threads would not fit
    r = assign_threads(g, [[0, 2], [1]], 2, cost_at)
    assert r.threads == [[1, 1], [1]] and r.makespan == r.single_thread_makespan
    # more clusters than cores, each of one thread: nothing to lower, one thread everywhere
    r = assign_threads(g, [[0], [1], [2]], 2, cost_at)
    assert r.threads == [[1], [1], [1]]


def test_more_cores_than_cost_rows():
    # counts above len(cost_at) are never chosen
    g = fork_join()
    r = assign_threads(g, [[0, 1, 3], [2]], 8, [list(g.cost), [60.0, 180.0, 180.0, 60.0]])
    assert r.threads == [[2, 2, 2], [2]]  # 8 // 2 = 4 allowed, only 2 measured


def test_slower_with_threads_stays_at_one():
    g = fork_join()
    r = assign_threads(
        g, [[0, 1, 3], [2]], 2, [list(g.cost), [120.0, 180.0, 180.0, 60.0]], pools=False
    )
    assert r.threads == [[1, 1, 2], [1]]


def test_nothing_gains_gives_one_thread_everywhere():
    g = fork_join()
    clusters = [[0, 1, 3], [2]]
    r = assign_threads(g, clusters, 2, [list(g.cost), [c * 1.5 for c in g.cost]])
    assert r.threads == [[1, 1, 1], [1]]
    assert r.costs == [[100.0, 300.0, 100.0], [300.0]]
    assert r.makespan == r.single_thread_makespan == estimate_makespan(g, clusters).makespan


def repair_case():
    # c0: p (10) then z (200); c1: q (10), y (100), w (10).
    # y reads p at once (transfer 0), z reads y (50), w reads p (100) and q.
    edges = [(0, 2, 0), (2, 3, 50), (0, 4, 100), (1, 4, 50)]
    g = graph([10, 10, 100, 200, 10], edges, ["p", "q", "y", "z", "w"])
    return g, [[0, 3], [1, 2, 4]], [list(g.cost), [6.0, 12.0, 50.0, 120.0, 12.0]]


@pytest.mark.parametrize("rounds", [1, 8])
def test_promotion_that_would_oversubscribe_is_undone(rounds):
    # One thread everywhere: y 10-110, w 110-120, z 160-360, alone: y and z may take 2 threads.
    # With both, y ends at 60 and z runs 110-230 -- now overlapping w (110-120), so z may not keep
    # 2 threads: the repair (rounds=1) or the next promotion round lowers it again.
    g, clusters, cost_at = repair_case()
    r = assign_threads(g, clusters, 2, cost_at, rounds=rounds, overlap="schedule", pools=False)
    assert r.threads == [[1, 1], [1, 2, 1]]
    assert r.makespan == 310.0 < r.single_thread_makespan == 360.0
    act = active_clusters(r.schedule)
    assert all(
        t * a <= 2
        for ts, acts in zip(r.threads, act, strict=True)
        for t, a in zip(ts, acts, strict=True)
    )


def test_dependences_do_not_trust_the_estimated_timing():
    # c0 = s -> a (long) -> b -> j, c1 = c (short) with s -> c -> j. In the estimate c has long
    # finished when b runs, so the schedule lets b take 2 threads; but c may run late (a slow
    # transfer, a busy core), and a 2-thread region that meets a busy cluster waits for its
    # slowest thread, so by dependences b keeps 1. s and j run alone either way.
    edges = [(0, 1, 0), (1, 2, 0), (2, 3, 0), (0, 4, 0), (4, 3, 0)]
    g = graph([100, 300, 100, 100, 50], edges, ["s", "a", "b", "j", "c"])
    clusters = [[0, 1, 2, 3], [4]]
    cost_at = [list(g.cost), [60.0, 180.0, 60.0, 60.0, 30.0]]
    assert concurrent_clusters(g, clusters) == [[1, 2, 2, 1], [2]]
    by_schedule = assign_threads(g, clusters, 2, cost_at, overlap="schedule", pools=False)
    assert by_schedule.threads == [[2, 1, 2, 2], [1]]
    r = assign_threads(g, clusters, 2, cost_at, pools=False)
    assert r.threads == [[2, 1, 1, 2], [1]]
    assert by_schedule.makespan < r.makespan < r.single_thread_makespan
    with pytest.raises(SchedulingError, match="overlap must be"):
        assign_threads(g, clusters, 2, cost_at, overlap="timing")


def test_concurrent_clusters_bounds_every_schedule():
    # comparable copies never overlap, so conc >= the overlaps of the estimated schedule
    g, clusters, cost_at = repair_case()
    conc = concurrent_clusters(g, clusters)
    assert conc == [[2, 2], [2, 1, 2]]
    for costs in (cost_at[0], cost_at[1]):
        act = active_clusters(
            estimate_makespan(g, clusters, [[costs[v] for v in m] for m in clusters])
        )
        assert all(
            a <= c for ra, rc in zip(act, conc, strict=True) for a, c in zip(ra, rc, strict=True)
        )


def test_no_promotion_rounds_gives_one_thread():
    g = fork_join()
    r = assign_threads(
        g, [[0, 1, 3], [2]], 2, [list(g.cost), [1.0] * 4], rounds=0, overlap="schedule"
    )
    assert r.threads == [[1, 1, 1], [1]]


def test_one_core_gives_one_thread():
    g = fork_join()
    r = assign_threads(g, [[0, 1, 2, 3]], 1, [list(g.cost), [1.0] * 4])
    assert r.threads == [[1, 1, 1, 1]]
    assert r.makespan == 800.0


def test_clones_get_counts_per_copy():
    # const (0 µs: it overlaps nothing) cloned into both clusters; each copy has its own count
    edges = [(0, 2, 5), (1, 2, 5), (1, 3, 5), (0, 3, 5), (2, 4, 5), (3, 4, 5)]
    g = graph([100, 0, 300, 300, 100], edges, ["x", "const", "a", "b", "out"])
    clusters = [[0, 1, 2, 4], [1, 3]]
    cost_at = [list(g.cost), [60.0, 0.0, 180.0, 180.0, 60.0]]
    r = assign_threads(g, clusters, 2, cost_at, overlap="schedule", pools=False)
    assert r.threads == [[2, 2, 1, 2], [1, 1]]  # x and out run alone, a and b side by side
    # a 1 µs constant in cluster 1 at time 0 overlaps x: x may then not take 2 threads
    cost_1 = [[100, 1, 300, 300, 100], [60.0, 1.0, 180.0, 180.0, 60.0]]
    r = assign_threads(g, clusters, 2, cost_1, overlap="schedule", pools=False)
    assert r.threads[0][0] == 1
    # by dependences, cluster 1's copy of const may run while x does, whatever its cost
    for costs in (cost_at, cost_1):
        r = assign_threads(g, clusters, 2, costs, pools=False)
        assert r.threads == [[1, 1, 1, 2], [1, 1]]
        assert concurrent_clusters(g, clusters) == [[2, 2, 2, 1], [2, 2]]
    assert math.isclose(r.makespan, simulate_costs(g, clusters, r.costs))


def test_empty_graph():
    g = graph([], [])
    r = assign_threads(g, [], 4, [[], []])
    assert r.threads == [] and r.makespan == 0.0


# ------------------------------------------------------------------ errors
def test_errors():
    g = fork_join()
    clusters = [[0, 1, 3], [2]]
    with pytest.raises(SchedulingError, match="cores must be at least 1, got 0"):
        assign_threads(g, clusters, 0, [list(g.cost)])
    with pytest.raises(SchedulingError, match="cores must be at least 1"):
        assign_threads(g, clusters, -3, [list(g.cost)])
    with pytest.raises(SchedulingError, match="no costs"):
        assign_threads(g, clusters, 2, [])
    with pytest.raises(SchedulingError, match="3 costs for 2 threads, 4 nodes"):
        assign_threads(g, clusters, 2, [list(g.cost), [1.0, 2.0, 3.0]])
    with pytest.raises(SchedulingError, match="5 costs for 1 threads"):
        assign_threads(g, clusters, 2, [[1.0] * 5, [1.0] * 4])
    with pytest.raises(SchedulingError, match="deadlock"):
        assign_threads(g, [[3, 0, 1], [2]], 2, [list(g.cost)] * 2)
    with pytest.raises(SchedulingError, match="no cluster"):
        assign_threads(g, [[0, 1, 3]], 2, [list(g.cost)] * 2)


def test_estimate_makespan_costs_errors():
    g = fork_join()
    clusters = [[0, 1, 3], [2]]
    with pytest.raises(SchedulingError, match="cluster 1: 2 costs given for 1 nodes"):
        estimate_makespan(g, clusters, [[1.0, 1.0, 1.0], [1.0, 1.0]])
    with pytest.raises(SchedulingError, match="costs given for 1 cluster"):
        estimate_makespan(g, clusters, [[1.0, 1.0, 1.0]])
    with pytest.raises(SchedulingError, match="costs given for 3 cluster"):
        estimate_makespan(g, clusters, [[1.0, 1.0, 1.0], [1.0], []])
    for bad in (-1.0, math.nan, math.inf):
        with pytest.raises(SchedulingError, match="position 2: cost must be a finite number"):
            estimate_makespan(g, clusters, [[1.0, 1.0, bad], [1.0]])


def test_estimate_makespan_costs_replace_node_costs():
    g = fork_join()
    clusters = [[0, 1, 3], [2]]
    s = estimate_makespan(g, clusters, [[60.0, 180.0, 60.0], [180.0]])
    # s 0-60, b1 60-240, b2 70-250 (transfer 10), j 260-320
    assert s.makespan == 320.0
    assert s.finish == [[60.0, 240.0, 320.0], [250.0]]


# ------------------------------------------------------------------ properties
@st.composite
def problems(draw):
    """A random DAG, a valid clustering (random partition, or merged and with clones), cores and
    ``cost_at`` rows for 1..4 threads (each a random factor of the one-thread cost, some slower,
    plus sometimes a fixed start-up cost)."""
    g = draw(dags(max_n=24))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = random.Random(seed)
    if draw(st.booleans()):
        k = rng.randint(1, 4)
        clusters = [[] for _ in range(k)]
        for v in range(g.n):
            clusters[rng.randrange(k)].append(v)
        clusters = order_clusters(g, clusters)
    else:
        clusters = merge_clusters(g, linear_clustering(g), rng.randint(1, 4))
        clusters = clone_producers(g, clusters, {v for v in range(g.n) if rng.random() < 0.5})
    cores = draw(st.integers(1, 6))
    rows = draw(st.integers(1, 4))
    cost_at = [list(g.cost)]
    for _ in range(rows - 1):
        start_up = rng.choice([0.0, 0.0, rng.uniform(0, 20)])
        cost_at.append([c * rng.choice([0.4, 0.55, 0.7, 1.0, 1.3]) + start_up for c in g.cost])
    return g, clusters, cores, cost_at


@settings(max_examples=300, deadline=None)
@given(problems(), st.integers(0, 8))
def test_assign_threads_properties(problem, rounds):
    g, clusters, cores, cost_at = problem
    r = assign_threads(g, clusters, cores, cost_at, rounds=rounds)
    single = estimate_makespan(g, clusters).makespan
    assert [len(t) for t in r.threads] == [len(c) for c in clusters]
    # (a) never worse than one thread everywhere
    assert math.isclose(r.single_thread_makespan, single, rel_tol=1e-9, abs_tol=1e-9)
    assert r.makespan <= single + 1e-9
    # (c) counts in 1..cores (and no count that has no cost row)
    assert all(1 <= t <= min(cores, len(cost_at)) for ts in r.threads for t in ts)
    # (d) costs are the given ones, and the schedule is the one they give
    for c, members in enumerate(clusters):
        for i, v in enumerate(members):
            assert r.costs[c][i] == cost_at[r.threads[c][i] - 1][v]
    assert r.schedule.clusters == [list(c) for c in clusters]
    again = estimate_makespan(g, clusters, r.costs)
    assert again.start == r.schedule.start and again.finish == r.schedule.finish
    assert math.isclose(
        r.makespan, simulate_costs(g, clusters, r.costs), rel_tol=1e-9, abs_tol=1e-9
    )
    # (b) no oversubscription in the returned schedule: per op, with ``active`` recomputed (an op
    # that overlaps more clusters than there are cores has one thread)...
    act = active_clusters(r.schedule)
    for c, members in enumerate(clusters):
        for i in range(len(members)):
            assert act[c][i] == busy_others(r.schedule, c, i)
            t = r.threads[c][i]
            assert t * act[c][i] <= cores or t == 1
    # ...and at every instant
    assert oversubscribed(r.schedule, r.threads, cores) == []
    # (f) by dependences: no count above cores // (clusters that may run meanwhile)
    conc = concurrent_clusters(g, clusters)
    for ts, cs, acts in zip(r.threads, conc, act, strict=True):
        for t, cc, a in zip(ts, cs, acts, strict=True):
            assert a <= cc and (t == 1 or t * cc <= cores)
    # (e) the OpenMP pools fit: every cluster's widest count, summed, <= cores (where some
    # cluster runs more than one thread)
    widths = [max(ts, default=1) for ts in r.threads]
    assert all(w == 1 for w in widths) or sum(widths) <= cores
    # a gain is reported only with threads that differ from one
    if r.makespan < single - 1e-9:
        assert any(t > 1 for ts in r.threads for t in ts)
    else:
        assert all(t == 1 for ts in r.threads for t in ts)
    assert_deadlock_free(g, clusters)


@settings(max_examples=100, deadline=None)
@given(problems())
def test_one_core_gives_all_ones(problem):
    g, clusters, _, cost_at = problem
    r = assign_threads(g, clusters, 1, cost_at)
    assert all(t == 1 for ts in r.threads for t in ts)
    assert r.makespan == r.single_thread_makespan
    assert r.costs == [[g.cost[v] for v in c] for c in clusters]


@settings(max_examples=200, deadline=None)
@given(problems())
def test_estimate_makespan_with_node_costs_is_the_default(problem):
    g, clusters, _, cost_at = problem
    default = estimate_makespan(g, clusters)
    given_costs = estimate_makespan(g, clusters, [[g.cost[v] for v in c] for c in clusters])
    assert given_costs.start == default.start and given_costs.finish == default.finish
    assert given_costs.makespan == default.makespan
    assert math.isclose(default.makespan, simulate(g, clusters), rel_tol=1e-9, abs_tol=1e-9)
    # any other per-copy costs: the reference simulation agrees
    other = [[cost_at[-1][v] for v in c] for c in clusters]
    assert math.isclose(
        estimate_makespan(g, clusters, other).makespan,
        simulate_costs(g, clusters, other),
        rel_tol=1e-9,
        abs_tol=1e-9,
    )
