"""The project's recurrent and control-flow models (``ramiel.models``), exported by PyTorch, against
onnxruntime: the streaming detector (conv front end, 2-layer LSTM with state in and out, a
data-dependent ``if`` exported as ``If``), the bidirectional GRU tagger and the refinement loop
(``Loop``), on both runtime backends and sequentially; the detector streamed chunk by chunk with
its state fed back; ``ramiel run --steps``.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
import torch
from conftest import one_error_line

import ramiel
from ramiel import models
from ramiel.tools import driver

NAMES = ["streaming_detector", "gru_tagger", "refiner"]
EXPECTED_OPS = {
    "streaming_detector": {"LSTM", "If", "Conv"},
    "gru_tagger": {"GRU"},
    "refiner": {"Loop"},
}


@pytest.fixture(scope="module")
def exported() -> dict[str, str]:
    return {n: models.export_model(n) for n in NAMES}


@pytest.mark.parametrize("name", NAMES)
def test_export_has_the_control_flow_and_recurrent_ops(exported, name):
    """PyTorch's exporter (TorchScript, the module scripted where it has control flow) writes
    the ops the model is about: the data-dependent if as If, the while loop as Loop."""
    ops = {n.op_type for n in onnx.load(exported[name]).graph.node}
    assert EXPECTED_OPS[name] <= ops, ops


@pytest.mark.parametrize("backend", ["threads", "processes"])
@pytest.mark.parametrize("name", NAMES)
def test_matches_onnxruntime(exported, name, backend, pipeline_helpers):
    inputs = models.example_inputs(name)
    feeds = {n: t.numpy() for n, t in zip(models.input_names(name), inputs, strict=True)}
    refs = pipeline_helpers.ort_run(onnx.load(exported[name]), feeds)
    with ramiel.compile(exported[name], clusters=2, backend=backend) as m:
        outs = m(*inputs)
        outs = outs if isinstance(outs, tuple) else (outs,)
        seq = m.sequential(*inputs)
        seq = seq if isinstance(seq, tuple) else (seq,)
        for out_name, p, s, r in zip(m.output_names, outs, seq, refs, strict=True):
            pipeline_helpers.assert_close(p, r, 1e-3, f"{name} parallel {out_name}")
            pipeline_helpers.assert_close(s, r, 1e-3, f"{name} sequential {out_name}")


def test_generated_code_reads_like_pytorch(exported, tmp_path):
    with ramiel.compile(exported["streaming_detector"], clusters=2, out_dir=str(tmp_path / "d")):
        code = (tmp_path / "d" / "model_seq.py").read_text()
    assert code.count("torch.lstm(") == 2 and "self.LSTM_W__torch" in code
    assert "    if bool(Less):  # /If (If)\n" in code
    with ramiel.compile(exported["refiner"], clusters=1, out_dir=str(tmp_path / "r")):
        code = (tmp_path / "r" / "model_seq.py").read_text()
    # the exporter's `while i < 4` is a counter the compiler recognises: a for loop over 4 trips
    assert "    for i_1 in range(4):  # /Loop (Loop)\n" in code
    assert "        y, i = Add, Add_1\n" in code and "Less" not in code
    with ramiel.compile(exported["gru_tagger"], clusters=1, out_dir=str(tmp_path / "g")):
        code = (tmp_path / "g" / "model_seq.py").read_text()
    assert "torch.gru(" in code and "bidirectional=True" in code and "ops.recurrent" not in code


def _chunks(n: int) -> list[torch.Tensor]:
    """``n`` audio chunks: noise of varying loudness, every third one silent (the If's other
    branch: speech 0)."""
    g = torch.Generator().manual_seed(7)
    out = []
    for k in range(n):
        chunk = torch.randn(1, 1, 512, generator=g) * (0.05 + 0.1 * (k % 4))
        out.append(torch.zeros(1, 1, 512) if k % 3 == 2 else chunk)
    return out


@pytest.mark.parametrize("backend", ["threads", "processes"])
def test_streaming_ten_chunks_state_against_onnxruntime(exported, backend, pipeline_helpers):
    """Ten chunks through the compiled detector, its state (hn, cn) fed back as (h0, c0) each
    time, checked step by step (speech and state) against onnxruntime fed the same way."""
    import onnxruntime as ort

    sess = ort.InferenceSession(exported["streaming_detector"])
    pairs = models.state_pairs("streaming_detector")
    assert pairs == (("h0", "hn"), ("c0", "cn"))
    h = c = torch.zeros(2, 1, 64)
    h_ref = c_ref = np.zeros((2, 1, 64), np.float32)
    h_seq = c_seq = h
    silent = 0
    with ramiel.compile(exported["streaming_detector"], clusters=2, backend=backend) as m:
        for k, chunk in enumerate(_chunks(10)):
            speech, h, c = m(chunk, h, c)
            speech_s, h_seq, c_seq = m.sequential(chunk, h_seq, c_seq)
            ref = sess.run(None, {"audio": chunk.numpy(), "h0": h_ref, "c0": c_ref})
            for what, got, got_s, r in zip(("speech", "hn", "cn"), (speech, h, c),
                                           (speech_s, h_seq, c_seq), ref, strict=True):  # fmt: skip
                pipeline_helpers.assert_close(got, r, 1e-3, f"step {k} parallel {what}")
                pipeline_helpers.assert_close(got_s, r, 1e-3, f"step {k} sequential {what}")
            _, h_ref, c_ref = ref
            silent += float(ref[0].reshape(())) == 0.0
    assert silent == 3  # the silent chunks took the If's gate
    assert float(np.abs(h_ref).max()) > 0.01  # the state moved


def test_ramiel_run_steps(exported, capsys):
    rc = driver.main(["run", exported["streaming_detector"], "--steps", "4", "--repeat", "2"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "stateful run of 4 steps, state fed back: hn -> h0, cn -> c0" in out
    assert out.count("  step ") == 4 and "check against onnxruntime: OK" in out


def test_ramiel_run_state_errors(exported, capsys):
    rc = driver.main(
        ["run", exported["streaming_detector"], "--steps", "2", "--state", "h0=speech"]
    )
    err = capsys.readouterr().err
    assert rc == 1 and "input h0 is [2, 1, 64]" in one_error_line(err)
    rc = driver.main(["run", exported["refiner"], "--steps", "2"])
    err = capsys.readouterr().err
    assert rc == 1 and "no state to feed back" in one_error_line(err)


@pytest.mark.parametrize("lens", [[7, 3], [-1, 2], [2]])
def test_sequence_lengths_outside_the_steps_are_an_error(lens):
    """Lengths past the steps, negative ones, or not one per batch entry: a ValueError, as
    onnxruntime refuses them (they had been cut to the steps or run as empty sequences, and
    the generated module returned numbers; a fresh-user check)."""
    from ramiel.runtime import ops

    x = torch.randn(6, 2, 3)
    w, r = torch.randn(1, 15, 3), torch.randn(1, 15, 5)
    with pytest.raises(ValueError, match=r"GRU: sequence_lens .* must hold 2 lengths from 0 to 6"):
        ops.recurrent("GRU", x, w, r, None, torch.tensor(lens), None, hidden_size=5)
    y, y_h, _ = ops.recurrent("GRU", x, w, r, None, torch.tensor([6, 0]), None, hidden_size=5)
    assert y.shape == (6, 1, 2, 5) and not y[:, :, 1].any()  # a length of 0: no step
