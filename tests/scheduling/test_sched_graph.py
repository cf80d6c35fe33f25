"""TaskGraph construction, topological order, b-/t-levels and the critical path."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from sched_testlib import dags, graph

from ramiel.errors import SchedulingError
from ramiel.scheduling import TaskGraph, b_levels, critical_path, t_levels


def test_chain_levels():
    g = graph([1, 2, 3], [(0, 1, 10), (1, 2, 10)], ["a", "b", "c"])
    assert b_levels(g) == [26.0, 15.0, 3.0]
    assert b_levels(g, with_comm=False) == [6.0, 5.0, 3.0]
    assert t_levels(g) == [0.0, 11.0, 23.0]
    assert critical_path(g) == (26.0, [0, 1, 2])
    assert critical_path(g, with_comm=False) == (6.0, [0, 1, 2])


def test_diamond_levels():
    # a(1) -> b(5), c(3) -> d(1), every edge costs 2
    g = graph([1, 5, 3, 1], [(0, 1, 2), (0, 2, 2), (1, 3, 2), (2, 3, 2)])
    assert b_levels(g) == [11.0, 8.0, 6.0, 1.0]
    assert t_levels(g) == [0.0, 3.0, 3.0, 10.0]
    assert critical_path(g) == (11.0, [0, 1, 3])
    assert critical_path(g, with_comm=False) == (7.0, [0, 1, 3])


def test_node_ids_not_in_topological_order():
    # 2 -> 0 -> 1
    g = graph([1, 1, 1], [(2, 0, 1), (0, 1, 1)])
    assert g.topo_order() == [2, 0, 1]
    assert critical_path(g) == (5.0, [2, 0, 1])


def test_empty_and_single():
    g = TaskGraph.from_edges([], [])
    assert g.topo_order() == [] and b_levels(g) == [] and critical_path(g) == (0.0, [])
    g1 = TaskGraph.from_edges([4.0], [])
    assert critical_path(g1) == (4.0, [0])


def test_cycle_names_nodes():
    g = graph([1, 1, 1, 1], [(0, 1, 1), (1, 2, 1), (2, 3, 1), (3, 1, 1)], ["in", "x", "y", "z"])
    with pytest.raises(SchedulingError, match="cycle") as err:
        g.topo_order()
    msg = str(err.value)
    assert all(name in msg for name in ("x", "y", "z")) and "in ->" not in msg
    for fn in (b_levels, t_levels, critical_path):
        with pytest.raises(SchedulingError):
            fn(g)


def test_self_loop_is_a_cycle():
    with pytest.raises(SchedulingError, match="cycle: a -> a"):
        graph([1], [(0, 0, 1)], ["a"])


@pytest.mark.parametrize(
    "costs, edges, names",
    [
        ([-1.0], [], None),
        ([math.nan], [], None),
        ([1.0], [(0, 1, 1.0, 1)], None),
        ([1.0, 1.0], [(0, 1, -1.0, 1)], None),
        ([1.0, 1.0], [(0, 1, 1.0, -5)], None),
        ([1.0, 1.0], [(0, 1)], None),
        ([1.0], [], ["a", "b"]),
    ],
)
def test_invalid_graphs(costs, edges, names):
    with pytest.raises(SchedulingError):
        TaskGraph.from_edges(costs, edges, names)


def test_ports_and_parallel_edges():
    # Split-like node 0 feeds two outputs to node 1; port 0 is given twice (same value).
    g = TaskGraph.from_edges([1, 1], [(0, 1, 3.0, 10, 0), (0, 1, 3.0, 10, 0), (0, 1, 4.0, 20, 1)])
    assert g.num_edges == 1
    assert g.comm(0, 1) == 7.0 and g.nbytes(0, 1) == 30
    assert list(g.edges()) == [(0, 1, 7.0, 30)]
    assert g.values[(0, 1)] == ((0, 3.0, 10), (1, 4.0, 20))


@settings(max_examples=300, deadline=None)
@given(dags())
def test_levels_properties(g):
    b = b_levels(g)
    t = t_levels(g)
    length, path = critical_path(g)
    if g.n == 0:
        assert path == []
        return
    # b-level of the entry of the CP is the CP length, and the largest b-level
    assert math.isclose(b[path[0]], length) and math.isclose(max(b), length)
    assert not g.preds[path[0]] and not g.succs[path[-1]]
    # the path is a real path whose cost is its length
    total = g.cost[path[0]]
    for u, v in itertools.pairwise(path):
        assert v in g.succs[u]
        total += g.comm(u, v) + g.cost[v]
    assert math.isclose(total, length, rel_tol=1e-9, abs_tol=1e-9)
    # t + b bounds every node by the CP and is tight on it
    for v in range(g.n):
        assert t[v] + b[v] <= length * (1 + 1e-9) + 1e-9
    for v in path:
        assert math.isclose(t[v] + b[v], length, rel_tol=1e-9, abs_tol=1e-9)
    # the computation-only CP is never longer
    assert critical_path(g, with_comm=False)[0] <= length + 1e-9
