"""Cloning cheap producers and the schedule report."""

from __future__ import annotations

import json
import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sched_testlib import assert_deadlock_free, dags, graph, simulate

from ramiel.errors import SchedulingError
from ramiel.scheduling import (
    ScheduleReport,
    TaskGraph,
    clone_producers,
    estimate_makespan,
    linear_clustering,
    merge_clusters,
    transfers,
)


def makespan(g, clusters):
    return estimate_makespan(g, clusters).makespan


def shared_constant():
    # 0 x(1), 1 const(0.1); 2 a = f(x, const) (10); 3 b = g(x, const) (10); 4 out(a, b) (1)
    # every edge costs 2
    edges = [(0, 2, 2), (0, 3, 2), (1, 2, 2), (1, 3, 2), (2, 4, 2), (3, 4, 2)]
    return graph([1, 0.1, 10, 10, 1], edges, ["x", "const", "a", "b", "out"])


def test_clone_constant_into_consumer_cluster():
    g = shared_constant()
    clusters = [[0, 1, 2, 4], [3]]
    # before: x 0-1, const 1-1.1, a 1.1-11.1; b waits for const: 1.1+2 = 3.1, ends 13.1 (+2);
    # out 15.1-16.1.
    assert math.isclose(makespan(g, clusters), 16.1)
    out = clone_producers(g, clusters, {1})
    # const copied next to b; still needed by a, so the original stays.
    assert sorted(map(sorted, out)) == [[0, 1, 2, 4], [1, 3]]
    # b now waits only for x: 1 + 2 = 3, ends 13, arrives 15; out 15-16.
    assert math.isclose(makespan(g, out), 16.0)
    assert_deadlock_free(g, out)
    assert len(transfers(g, out)) == len(transfers(g, clusters)) - 1


def test_clone_removes_unneeded_original():
    # a constant alone in its own cluster feeding two clusters is moved into both
    g = shared_constant()
    clusters = [[0, 2, 4], [3], [1]]
    out = clone_producers(g, clusters, {1})
    assert sorted(map(sorted, out)) == [[0, 1, 2, 4], [1, 3]]
    assert makespan(g, out) <= makespan(g, clusters)


def test_clone_needs_inputs_available():
    # c0 (const) -> r (reshape) -> consumer in another cluster: r can only be cloned with c0.
    g = graph([0.1, 0.1, 5, 5], [(0, 1, 3), (1, 2, 3), (1, 3, 3)], ["c0", "r", "p", "q"])
    clusters = [[0, 1, 2], [3]]
    assert clone_producers(g, clusters, {1}) == clusters  # c0 would need a new transfer
    out = clone_producers(g, clusters, {0, 1})
    assert sorted(map(sorted, out)) == [[0, 1, 2], [0, 1, 3]]
    assert makespan(g, out) < makespan(g, clusters)


def test_clone_not_when_expensive():
    # the producer costs more than the transfer it would save
    g = graph([1, 10, 10, 10], [(0, 1, 1), (1, 2, 1), (1, 3, 1)])
    clusters = [[0, 1, 2], [3]]
    assert clone_producers(g, clusters, {1}) == clusters


def test_clone_input_with_deadlock_or_bad_ids():
    g = shared_constant()
    with pytest.raises(SchedulingError):
        clone_producers(g, [[0, 1, 2, 4], [3]], {99})
    with pytest.raises(SchedulingError, match="deadlock"):
        clone_producers(g, [[4, 0, 1, 2], [3]], {1})


@settings(max_examples=300, deadline=None)
@given(dags(), st.integers(1, 4), st.integers(0, 2**32 - 1))
def test_clone_properties(g, n, seed):
    rng = random.Random(seed)
    clusters = merge_clusters(g, linear_clustering(g), n)
    cheap = {v for v in range(g.n) if rng.random() < 0.5}
    out = clone_producers(g, clusters, cheap)
    # every node has a copy somewhere, so every consumer can read every input
    assert {v for c in out for v in c} == set(range(g.n))
    # only cloneable nodes are duplicated, never twice in one cluster
    counts = {}
    for c in out:
        assert len(c) == len(set(c))
        for v in c:
            counts[v] = counts.get(v, 0) + 1
    assert all(v in cheap for v, k in counts.items() if k > 1)
    assert_deadlock_free(g, out)
    before, after = makespan(g, clusters), makespan(g, out)
    assert after <= before * (1 + 1e-9) + 1e-9
    assert math.isclose(after, simulate(g, out), rel_tol=1e-9, abs_tol=1e-9)
    # merging a clustering that holds clones keeps every value available
    merged = merge_clusters(g, out, 2)
    assert len(merged) <= 2 and {v for c in merged for v in c} == set(range(g.n))
    assert_deadlock_free(g, merged)
    assert makespan(g, merged) <= g.total_work() * (1 + 1e-9) + 1e-9


# ------------------------------------------------------------------ report
def fire_module():
    return TaskGraph.from_edges(
        [10, 20, 60, 5],
        [(0, 1, 5, 100), (0, 2, 5, 100), (1, 3, 5, 50), (2, 3, 5, 50)],
        ["squeeze", "expand1x1", "expand3x3", "concat"],
    )


def test_report_fire_module():
    g = fire_module()
    r = ScheduleReport.from_clustering(g, [[0, 2, 3], [1]])
    assert r.work_us == 95.0 and r.critical_path_us == 75.0 and r.makespan_us == 75.0
    assert math.isclose(r.parallelism, 95 / 75) and math.isclose(r.speedup, 95 / 75)
    assert (r.transfers, r.transfer_bytes, r.transfer_us) == (2, 150, 10.0)
    c0, c1 = r.clusters
    assert (c0.ops, c0.work_us, c0.transfers_in, c0.bytes_in, c0.transfers_out, c0.bytes_out) == (
        3, 75.0, 1, 50, 1, 100,
    )  # fmt: skip
    assert (c1.ops, c1.work_us, c1.start_us, c1.finish_us) == (1, 20.0, 15.0, 35.0)
    d = json.loads(r.to_json())
    assert d["makespan_us"] == 75.0 and len(d["clusters"]) == 2 and d == r.to_dict()
    text = r.to_text()
    lines = text.splitlines()
    assert lines[0].split() == [
        "cluster", "ops", "work_us", "start_us", "finish_us",
        "xfer_in", "bytes_in", "xfer_out", "bytes_out",
    ]  # fmt: skip
    # aligned: every table row is as wide as the header
    assert len({len(x) for x in lines[:4]}) == 1
    assert "W/CP              1.27" in text and "1.27x" in text


def test_report_counts_a_value_once_per_receiving_cluster():
    # a feeds b and c, both in cluster 1: one transfer
    g = graph([1, 1, 1], [(0, 1, 3, 8), (0, 2, 3, 8)])
    r = ScheduleReport.from_clustering(g, [[0], [1, 2]])
    assert (r.transfers, r.transfer_bytes) == (1, 8)
    # two outputs (ports) of one producer are two values
    g2 = TaskGraph.from_edges([1, 1, 1], [(0, 1, 3, 8, 0), (0, 2, 3, 8, 1)])
    assert ScheduleReport.from_clustering(g2, [[0], [1, 2]]).transfers == 2


def test_report_with_clones_and_empty_graph():
    g = graph(
        [1, 0.1, 10, 10, 1], [(0, 2, 2), (0, 3, 2), (1, 2, 2), (1, 3, 2), (2, 4, 2), (3, 4, 2)]
    )
    r = ScheduleReport.from_clustering(g, [[0, 1, 2, 4], [1, 3]])
    assert r.copies == 6 and math.isclose(r.cloned_work_us, 0.1)
    e = ScheduleReport.from_clustering(TaskGraph.from_edges([], []), [])
    assert e.makespan_us == 0.0 and e.speedup == 1.0 and e.parallelism == 1.0
    assert "est. makespan" in e.to_text()
