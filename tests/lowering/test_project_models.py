"""The project's PyTorch-exported test models (:mod:`ramiel.models`: an inception-style CNN and two
transformer encoders) run node by node through the lowering rules, against the PyTorch modules
they were exported from. The transformer exports exercise the Shape → Gather → Concat → Reshape
chains that must fold to constants for the generated code to be static."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
import torch
from _lowering_cases import assert_close

from ramiel import models
from ramiel.lowering.node_view import Mismatch, run_graph_eagerly

#: The models without control flow: the node-by-node harness runs a graph's own nodes, not the
#: subgraphs of If/Loop (those models run through the compiler in tests/test_recurrent_models.py).
NAMES = sorted(n for n, e in models.MODELS.items() if not e.script)


@pytest.mark.parametrize("name", NAMES)
def test_project_model_matches_torch(name):
    model = onnx.load(models.export_model(name))
    inputs = models.example_inputs(name)
    feeds = {n: t.numpy() for n, t in zip(models.input_names(name), inputs, strict=True)}
    mismatches: list[Mismatch] = []
    got = run_graph_eagerly(model, feeds, mismatches)
    with torch.no_grad():
        expected = models.build_model(name)(*inputs).numpy()
    assert_close(got[models.output_names(name)[0]], expected, rtol=1e-4)
    assert len(models.output_names(name)) == 1
    assert not mismatches, mismatches
    assert np.isfinite(expected).all()
