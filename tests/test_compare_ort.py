"""``ramiel profile --compare-ort``: per op type, the generated code's time next to onnxruntime's.

The mapping of onnxruntime's profiler events back to ONNX op types is checked on synthetic
events (its fused and NCHWc kernels are named after outputs, not nodes); the whole comparison
runs on a small CNN (two runs: timings are not asserted, only that every node is accounted for
on both sides and the table says so) and through the driver.
"""

from __future__ import annotations

import json
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from ramiel.compare_ort import (
    CONVERSION,
    Comparison,
    OpTypeRow,
    compare_with_ort,
    ort_node_times,
    ort_op_type,
)
from ramiel.tools import driver

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")


def test_ort_events_map_to_onnx_op_types():
    nodes = {"n3": "LRN", "fc": "Gemm"}
    assert ort_op_type("n3_kernel_time", "LRN", nodes) == "LRN"
    assert ort_op_type("fc_kernel_time", "FusedGemm", nodes) == "Gemm"  # the node's own name
    assert ort_op_type("r1_nchwc_kernel_time", "Conv", nodes) == "Conv"  # NCHWc, named by output
    assert ort_op_type("x_fused_kernel_time", "FusedConv", nodes) == "Conv"
    assert ort_op_type("ReorderInput_token_8_kernel_time", "ReorderInput", nodes) == CONVERSION
    assert ort_op_type("ReorderOutput_kernel_time", "ReorderOutput", nodes) == CONVERSION
    assert ort_op_type("odd_kernel_time", "SomeContribOp", nodes) == "SomeContribOp"


def test_ort_node_times_skips_warmup_runs(tmp_path):
    events = [{"cat": "Session", "name": "model_run", "ts": 0, "dur": 100}]
    for run in range(3):
        for i, (name, op) in enumerate([("n0_kernel_time", "Conv"), ("n1_kernel_time", "Relu")]):
            ts = run * 1000 + i * 10
            dur = 1000 * (run + 1) + i
            events.append(
                {"cat": "Node", "name": name, "ts": ts, "dur": dur, "args": {"op_name": op}}
            )
            events.append({"cat": "Node", "name": name.replace("kernel", "fence_before"), "ts": ts})
    path = tmp_path / "p.json"
    path.write_text(json.dumps(events))
    got = ort_node_times(str(path), {"n0": "Conv", "n1": "Relu"}, skip=1)
    assert got == {
        ("Conv", "n0_kernel_time"): [2.0, 3.0],
        ("Relu", "n1_kernel_time"): [2.001, 3.001],
    }


def test_table_is_sorted_by_gap_and_totals_add_up():
    rows = [OpTypeRow("Conv", 10.0, 8.0, 3, 3), OpTypeRow("Relu", 1.0, 0.0, 3, 0)]
    c = Comparison("m.onnx", 1, "auto", 5, rows, 12.5, 8.5, (0.5, 0.6))
    assert c.ramiel_sum_ms == 11.0 and c.ort_sum_ms == 8.0
    text = c.to_text()
    assert text.splitlines()[3].startswith("Conv") and "1.25x" in text.splitlines()[3]
    assert "end to end (no probes)" in text and "12.500" in text
    assert json.loads(c.to_json())["ramiel_sum_ms"] == 11.0


def _model(path: str) -> str:
    rng = np.random.default_rng(0)
    w1 = numpy_helper.from_array(rng.standard_normal((16, 3, 3, 3)).astype(np.float32), "w1")
    w2 = numpy_helper.from_array(rng.standard_normal((10, 16)).astype(np.float32), "w2")
    n = helper.make_node
    nodes = [
        n("Conv", ["x", "w1"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        n("Relu", ["c"], ["r"], name="relu"),
        n("MaxPool", ["r"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
        n("GlobalAveragePool", ["p"], ["g"], name="gap"),
        n("Flatten", ["g"], ["f"], name="flat"),
        n("Gemm", ["f", "w2"], ["y"], name="fc", transB=1),
    ]
    graph = helper.make_graph(
        nodes,
        "cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 32, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        [w1, w2],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


@pytest.mark.parametrize("layout", ["channels-last", "nchw"])
def test_compare_with_ort_accounts_for_every_node(layout, tmp_path):
    path = _model(str(tmp_path / "cnn.onnx"))
    c = compare_with_ort(path, threads=1, layout=layout, repeat=2, warmup=1)
    rows = {r.op_type: r for r in c.rows}
    for op in ("Conv", "MaxPool", "GlobalAveragePool", "Flatten", "Gemm"):
        assert rows[op].ramiel_nodes == 1 and rows[op].ramiel_ms > 0, op
    if layout == "channels-last":  # the prepacked Conv runs its Relu (as onnxruntime's does)
        assert "Relu" not in rows
    else:
        assert rows["Relu"].ramiel_nodes == 1 and rows["Relu"].ramiel_ms > 0
    assert rows["Conv"].ort_nodes == 1 and rows["Conv"].ort_ms > 0
    if layout == "channels-last":  # the input before the conv, the pooled map before the
        # global pooling (it reads contiguous tensors, see ramiel.layout); (1, 16, 1, 1) needs none
        assert rows[CONVERSION].ramiel_nodes == 2
    else:  # the pooling's conversions are statements of the MaxPool node
        assert CONVERSION not in rows or rows[CONVERSION].ramiel_nodes == 0
    gaps = [r.gap_ms for r in c.rows]
    assert gaps == sorted(gaps, reverse=True)
    assert c.ramiel_latency_ms > 0 and c.ort_latency_ms > 0
    assert f"layout {layout}" in c.to_text()


def test_driver_compare_ort(tmp_path, capsys):
    path = _model(str(tmp_path / "cnn.onnx"))
    out = tmp_path / "cmp.json"
    rc = driver.main(["profile", path, "--compare-ort", "--repeat", "2", "--json", str(out)])
    text = capsys.readouterr().out
    assert rc == 0
    assert "sum of the ops" in text and "Conv" in text
    (data,) = json.loads(out.read_text())
    assert data["threads"] == 1 and {r["op_type"] for r in data["rows"]} >= {"Conv", "Gemm"}


def test_driver_profile_needs_an_output_or_compare_ort(tmp_path, capsys):
    path = _model(str(tmp_path / "cnn.onnx"))
    assert driver.main(["profile", path]) == 2
    assert "needs -o FILE (or --compare-ort)" in capsys.readouterr().err
    assert driver.main(["profile", path, "--json", "t.json", "-o", str(tmp_path / "p.json")]) == 2
    assert "--json is an option of --compare-ort" in capsys.readouterr().err
