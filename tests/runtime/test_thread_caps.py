"""Per-op thread counts capped at run time (``ops.set_threads``, ``Program.thread_caps``): a
program compiled with ``--cores N`` sets its intra-op threads itself, planned for N cores; where
the process may use fewer, the counts as planned had run more spinning OpenMP threads than cores
(light_shufflenet in 2 clusters planned for 3 cores: 600 ms per inference on 2 cores against 5 ms
for its sequential module; light_squeezenet planned for 1000 cores: 685 ms against 8; a
fresh-user check). Every backend runs each cluster under the cap its program gives it."""

from __future__ import annotations

import pytest
import torch

from ramiel.omp import usable_cores
from ramiel.runtime import ChannelSpec, Program, ops, start


def _wide(ch, w):
    ops.set_threads(8)  # as --intra-op-threads{cores=9} would plan it
    ch.put("n__out", torch.tensor(torch.get_num_threads()))


def _narrow(ch, w):
    ops.set_threads(1)
    ch.put("m__out", torch.tensor(torch.get_num_threads()))


WIDE = Program(
    name="wide",
    clusters={"c0": _wide, "c1": _narrow},
    channels={
        "n__out": ChannelSpec("c0", None, (), torch.int64),
        "m__out": ChannelSpec("c1", None, (), torch.int64),
    },
    inputs={},
    outputs={"n": "n__out", "m": "m__out"},
    max_threads=8,
    threads={"c0": 8},
    cores=9,
)


@pytest.mark.parametrize(
    ("usable", "together", "want"),
    [
        (16, True, {"c0": 8, "c1": 1}),  # 8 + 1 threads fit: as planned
        (9, True, {"c0": 8, "c1": 1}),
        (4, True, {"c0": 3, "c1": 1}),  # scaled down in proportion: 8 * 4 // 9, at least 1
        (2, True, {"c0": 1, "c1": 1}),
        (2, False, {"c0": 2, "c1": 1}),  # one cluster at a time (inline): each alone
        (1, False, {"c0": 1, "c1": 1}),
    ],
)
def test_thread_caps(usable, together, want):
    assert WIDE.thread_caps(usable, together=together) == want


def test_set_threads_is_capped():
    prev = torch.get_num_threads()
    try:
        with ops.thread_cap(1):
            ops.set_threads(4)
            assert torch.get_num_threads() == 1
            with ops.thread_cap(3):  # nested: the inner cap, then the outer one again
                ops.set_threads(4)
                assert torch.get_num_threads() == 3
            ops.set_threads(4)
            assert torch.get_num_threads() == 1
        ops.set_threads(10_000)  # outside the runtime: the cores this process may use
        assert torch.get_num_threads() == usable_cores()
        ops.set_threads(0)  # never fewer than 1
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(prev)


@pytest.mark.parametrize("backend", ["inline", "threads", "processes"])
def test_every_backend_runs_each_cluster_under_its_cap(backend):
    want = WIDE.thread_caps(together=backend != "inline")
    caller = torch.get_num_threads()
    with start(WIDE, None, backend=backend, threads_per_worker=1, timeout_s=120) as r:
        got = r()
    assert [t.item() for t in got] == [want["c0"], want["c1"]]
    assert want["c0"] <= usable_cores()
    assert torch.get_num_threads() == caller  # the caller's own count is left as it was
