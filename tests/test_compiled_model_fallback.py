"""CompiledModel's fall-back: cores the merge leaves free go to intra-op threads.

A chain (no task parallelism) compiled for 2 clusters becomes one cluster; it must run in the
caller's thread with 2 intra-op threads (plain intra-op parallelism, not one worker thread with one
intra-op thread), restore the caller's thread count, and compute what the sequential module does.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper

import ramiel
from ramiel.runtime import program


def _chain() -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    w1 = rng.standard_normal((16, 8, 3, 3)).astype(np.float32)
    w2 = rng.standard_normal((16, 16, 3, 3)).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["a"], pads=[1, 1, 1, 1], name="conv1"),
        helper.make_node("Relu", ["a"], ["b"], name="relu1"),
        helper.make_node("Conv", ["b", "w2"], ["c"], pads=[1, 1, 1, 1], name="conv2"),
        helper.make_node("Relu", ["c"], ["y"], name="relu2"),
    ]
    g = helper.make_graph(
        nodes,
        "chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 16, 16])],
        [onnx.numpy_helper.from_array(w1, "w1"), onnx.numpy_helper.from_array(w2, "w2")],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("asked", [2, 3])
def test_one_cluster_runs_inline_with_the_free_cores(asked: int, monkeypatch) -> None:
    monkeypatch.setattr(program, "usable_cores", lambda: 3)
    with ramiel.compile(_chain(), clusters=asked) as model:
        assert len(model.program.clusters) == 1
        assert model.runtime_config() == ("inline", asked)
        x = torch.randn(1, 8, 16, 16)
        torch.set_num_threads(1)
        y = model(x)
        assert torch.get_num_threads() == 1  # the caller's count is restored
        torch.testing.assert_close(y, model.sequential(x), rtol=1e-5, atol=1e-5)


def test_no_more_threads_than_the_machine_has(monkeypatch) -> None:
    """16 clusters asked on 2 cores: the one cluster made gets the 2 cores, not 16 threads."""
    monkeypatch.setattr(program, "usable_cores", lambda: 2)
    with ramiel.compile(_chain(), clusters=16) as model:
        assert len(model.program.clusters) == 1
        assert model.runtime_config() == ("inline", 2)


def test_processes_backend_and_explicit_threads_are_kept(monkeypatch) -> None:
    monkeypatch.setattr(program, "usable_cores", lambda: 2)
    with ramiel.compile(_chain(), clusters=2, backend="processes") as model:
        assert model.runtime_config() == ("processes", 2)
    with ramiel.compile(_chain(), clusters=1, threads_per_worker=3) as model:
        assert model.runtime_config() == ("inline", 3)
    # an explicit count is used as it is (as by the generated class), not multiplied by the
    # cores merging left free: 2 clusters asked, 1 made, 2 threads asked -> 2, not 4
    with ramiel.compile(_chain(), clusters=2, threads_per_worker=2) as model:
        assert model.runtime_config() == ("inline", 2)
