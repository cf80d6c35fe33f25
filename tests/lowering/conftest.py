"""Fixtures for the lowering tests."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")


@pytest.fixture(scope="session")
def ort_session_options():
    """onnxruntime session options: one thread, no spinning (so torch keeps the cores), quiet."""
    ort = pytest.importorskip("onnxruntime")
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    # no constant folding: the light models would materialise all ConstantOfShape weights
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return so
