"""Rank 0's naming of a lost follower when a gloo operation raised outside a classified wait.

A send to a rank that was just killed can raise gloo's ``Connection closed by peer`` at once,
before any wait; the follower's status listener then reports the loss a moment later. The
caller must see the same error as for a failed wait ("rank 1 (cluster 'c1') was lost ..."), not
a generic ``distributed inference failed: RuntimeError``. (The end-to-end case:
``tests/test_distributed_models.py::test_torchrun_serve_with_a_killed_rank``; this is the race
it lost once in CI.)
"""

from __future__ import annotations

import queue
import threading

import pytest

from ramiel.errors import RamielError, RuntimeFailure
from ramiel.runtime import distributed
from ramiel.runtime.distributed import GroupDriver

GLOO = RuntimeError(
    "[/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] Connection closed by "
    "peer [127.0.0.1]:7574. This is typically caused by a remote worker crashing."
)


def _driver() -> GroupDriver:
    d = object.__new__(GroupDriver)  # only what _resolve reads: no group, no ranks
    d._status_q = queue.SimpleQueue()
    d._lost = {}
    d.cause_of_loss = lambda peer, detail="": RamielError(f"rank {peer} was lost ({detail})")
    return d


def test_a_loss_reported_after_the_error_names_the_rank():
    d = _driver()
    threading.Timer(0.2, d._status_q.put, (("lost", 1, "connection closed by peer"),)).start()
    err = d._resolve(GLOO, epoch=3, pending={1}, timeout_s=20.0)
    assert str(err) == "rank 1 was lost (connection closed by peer)"
    assert d._lost == {1: "connection closed by peer"}


def test_statuses_before_the_loss_are_skipped():
    d = _driver()
    d._status_q.put(("status", 1, [3, 0, 0, 0]))
    d._status_q.put(("lost", 2, "connection reset by peer"))
    assert str(d._resolve(GLOO, 3, {1, 2}, 20.0)) == "rank 2 was lost (connection reset by peer)"


def test_without_a_reported_loss_the_error_stays_generic(monkeypatch):
    monkeypatch.setattr(distributed, "LOST_GRACE_S", 0.05)
    err = _driver()._resolve(GLOO, 3, {1}, 20.0)
    assert isinstance(err, RuntimeFailure)
    assert str(err).startswith("distributed inference failed: RuntimeError: [")


@pytest.mark.parametrize("exc", [RuntimeError("CUDA out of memory"), ValueError("gloo")])
def test_other_errors_do_not_wait_for_a_loss(exc):
    d = _driver()
    d._status_q.put(("lost", 1, "connection closed by peer"))
    err = d._resolve(exc, 3, {1}, 20.0)
    assert isinstance(err, RuntimeFailure) and "distributed inference failed" in str(err)
    assert d._lost == {}
