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
    NodeRow,
    OpTypeRow,
    _ort_node_name,
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


def test_nodes_onnxruntime_named_after_the_node_they_fused_count_as_that_node():
    """onnxruntime names the Gemm that computes an exported MatMul and its bias Add
    ``<MatMul's name>/MatMulAddFusion`` (the project transformer, onnxruntime 1.31): it counts
    as a MatMul, not as a Gemm, which had shown the transformer's MatMul row at 15x onnxruntime's
    time (its 24 projections against onnxruntime's 8 unfused attention MatMuls)."""
    nodes = {
        "/layers.0/fc1/MatMul": "MatMul",
        "/layers.0/attention/MatMul": "MatMul",
        "/layers.0": "Identity",  # a node named like a module path: not a fusion's origin
    }
    fused = "/layers.0/fc1/MatMul/MatMulAddFusion_kernel_time"
    assert ort_op_type(fused, "Gemm", nodes) == "MatMul"
    scaled = "/layers.0/attention/MatMul/MatMulScaleFusion/_kernel_time"
    assert ort_op_type(scaled, "FusedMatMul", nodes) == "MatMul"
    assert ort_op_type("/layers.0/fc1/Gemm_kernel_time", "Gemm", nodes) == "Gemm"
    assert ort_op_type("/layers.0/other/MatMulAddFusion_kernel_time", "Gemm", nodes) == "Gemm"
    assert ort_op_type("gemm_input_reshape_token_47_kernel_time", "Reshape", nodes) == "Reshape"
    model = helper.make_model(
        helper.make_graph(
            [helper.make_node("MatMul", ["x", "w"], ["y"], name="/layers.0/fc1/MatMul")],
            "g",
            [],
            [],
        )
    )
    assert _ort_node_name("/layers.0/fc1/MatMul/MatMulAddFusion", "MatMul", model) == (
        "/layers.0/fc1/MatMul"
    )
    assert _ort_node_name("/layers.0/fc1/MatMul/Other", "MatMul", model) == (
        "/layers.0/fc1/MatMul/Other"
    )


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


def test_nchwc_nodes_map_back_to_the_node_their_chain_starts_from():
    """onnxruntime names an NCHWc convolution after the last output of what it fused (Conv,
    BatchNormalization, Relu -> ``r2_nchwc``): the per-node view finds the Conv again."""
    n = helper.make_node
    graph = helper.make_graph(
        [
            n("Conv", ["x", "w"], ["r0"], name="n0"),
            n("BatchNormalization", ["r0", "s", "b", "m", "v"], ["r1"], name="n1"),
            n("Relu", ["r1"], ["r2"], name="n2"),
            n("Conv", ["r2", "w2"], ["r3"], name="n3"),
        ],
        "g",
        [],
        [],
    )
    model = helper.make_model(graph)
    assert _ort_node_name("r2_nchwc", "Conv", model) == "n0"
    assert _ort_node_name("r3_nchwc", "Conv", model) == "n3"
    assert _ort_node_name("n2", "Relu", model) == "n2"  # a node's own name
    assert _ort_node_name("zz_nchwc", "Conv", model) == "zz_nchwc"  # no such output
    assert _ort_node_name("r2_nchwc", "MaxPool", model) == "r2_nchwc"  # no MaxPool on the chain


def test_table_lists_the_nodes_with_the_largest_gaps():
    nodes = [
        NodeRow("conv_a", "Conv", 3.0, 1.0),
        NodeRow("fused_relu", "Relu", 0.5, None),
        NodeRow("x" * 70, "Gemm", 0.2, 0.4),
    ]
    c = Comparison(
        "m.onnx", 1, "auto", 5, [OpTypeRow("Conv", 3.0, 1.0, 1, 1)], 4.0, 2.0, nodes=nodes
    )
    assert "largest gaps" not in c.to_text()  # not asked for
    lines = c.to_text(nodes=2).splitlines()
    at = next(i for i, line in enumerate(lines) if "the 2 of 3 nodes" in line)
    assert lines[at + 2].split() == ["conv_a", "Conv", "3.000", "1.000", "3.00x", "+2.000"]
    assert lines[at + 3].split() == ["fused_relu", "Relu", "0.500", "-", "-", "+0.500"]
    assert len(lines) == at + 4
    long = c.to_text(nodes=3).splitlines()[-1]
    assert long.startswith("x" * 45 + "...") and "-0.200" in long


def test_node_names_are_escaped_in_the_table():
    """A node name with a newline (or other non-ascii text) stays on its row, escaped as the
    generated code's comments write it (found by a fresh-user check: the table broke)."""
    nodes = [NodeRow("conv\n1 \u540d", "Conv", 3.0, 1.0)]
    c = Comparison(
        "m.onnx", 1, "auto", 5, [OpTypeRow("Conv", 3.0, 1.0, 1, 1)], 4.0, 2.0, nodes=nodes
    )
    lines = c.to_text(nodes=1).splitlines()
    assert lines[-1].split() == ["conv\\n1", "\\u540d", "Conv", "3.000", "1.000", "3.00x", "+2.000"]


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
    if layout == "channels-last":  # the input before the conv; the global pooling reads the
        # pooled map as it comes (see ramiel.layout), and (1, 16, 1, 1) needs none
        assert rows[CONVERSION].ramiel_nodes == 1
    else:  # the pooling's conversions are statements of the MaxPool node
        assert CONVERSION not in rows or rows[CONVERSION].ramiel_nodes == 0
    gaps = [r.gap_ms for r in c.rows]
    assert gaps == sorted(gaps, reverse=True)
    # per node: every node Ramiel runs, onnxruntime's time beside those it runs under that name
    by_name = {(n.op_type, n.name): n for n in c.nodes}
    assert by_name["Conv", "conv"].ort_ms is not None and by_name["Conv", "conv"].ort_ms > 0
    assert by_name["Gemm", "fc"].ort_ms is not None
    assert sum(n.ramiel_ms for n in c.nodes) == pytest.approx(c.ramiel_sum_ms)
    node_gaps = [n.gap_ms for n in c.nodes]
    assert node_gaps == sorted(node_gaps, reverse=True)
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
    assert {n["name"] for n in data["nodes"]} >= {"conv", "fc"}
    assert "largest gaps" not in text
    rc = driver.main(["profile", path, "--compare-ort", "--repeat", "2", "--nodes", "3"])
    assert rc == 0
    assert "the 3 of " in capsys.readouterr().out


def test_driver_profile_needs_an_output_or_compare_ort(tmp_path, capsys):
    path = _model(str(tmp_path / "cnn.onnx"))
    assert driver.main(["profile", path]) == 2
    assert "needs -o FILE (or --compare-ort)" in capsys.readouterr().err
    assert driver.main(["profile", path, "--json", "t.json", "-o", str(tmp_path / "p.json")]) == 2
    assert "--json is an option of --compare-ort" in capsys.readouterr().err
    assert driver.main(["profile", path, "--nodes", "3", "-o", str(tmp_path / "p.json")]) == 2
    assert "--nodes is an option of --compare-ort" in capsys.readouterr().err
