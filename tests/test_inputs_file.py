"""``ramiel run --inputs FILE``: the check against onnxruntime on the user's inputs
(``ramiel.input_files``), where Ramiel's random ones do not fit the model (ids shifted into a
table; a fresh-user check found no way to check such a model)."""

from __future__ import annotations

import os
import re

import numpy as np
import onnx
import pytest
import torch
from conftest import one_error_line, tool_status
from onnx import TensorProto, helper, numpy_helper
from safetensors.numpy import save_file

from ramiel.errors import RamielError
from ramiel.input_files import declared_bindings, read_inputs
from ramiel.tools import driver

IDS = np.array([0, 4, 2, 1, 3], np.int64)
X = np.arange(10, dtype=np.float32).reshape(5, 2) / 7


@pytest.fixture(scope="module")
def shifted(tmp_path_factory) -> str:
    """``table[ids + 1] * x``: ids of a dynamic length ``n``, x of shape (n, 2); the table has 6
    rows, so ids must lie in 0..4 (Ramiel's random ids go up to 9)."""
    vi = helper.make_tensor_value_info
    inits = [
        numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(6, 2), "table"),
        numpy_helper.from_array(np.array(1, np.int64), "one"),
    ]
    nodes = [
        helper.make_node("Add", ["ids", "one"], ["shifted"]),
        helper.make_node("Gather", ["table", "shifted"], ["rows"]),
        helper.make_node("Mul", ["rows", "x"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [vi("ids", TensorProto.INT64, ["n"]), vi("x", TensorProto.FLOAT, ["n", 2])],
        [vi("y", TensorProto.FLOAT, ["n", 2])],
        inits,
    )
    path = tmp_path_factory.mktemp("shifted") / "shifted.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return str(path)


def _run(argv: list[str], capsys) -> tuple[int, str, str]:
    rc = tool_status(driver.main, argv)
    got = capsys.readouterr()
    return rc, got.out, got.err


def test_run_checks_the_model_on_the_users_inputs(shifted, tmp_path, capsys):
    """Random ids fail in onnxruntime and the error points at --inputs; the user's ids check,
    and the file's shapes bind the dynamic length (no --input-shape needed)."""
    rc, _, err = _run(["run", shifted, "--input-shape", "ids=5", "--input-shape", "x=5,2"], capsys)
    assert rc == 1
    line = one_error_line(err)
    assert "on Ramiel's random inputs" in line and "--inputs FILE" in line, line
    np.savez(tmp_path / "in.npz", ids=IDS, x=X)
    rc, out, err = _run(
        ["run", shifted, "--inputs", str(tmp_path / "in.npz"), "--repeat", "2"], capsys
    )
    assert rc == 0, err
    assert "ids compiled for (5,); x compiled for (5, 2)" in out, out
    assert "check against onnxruntime: OK" in out, out
    assert "output y: max error vs onnxruntime" in out, out


def test_a_file_that_does_not_fit_is_one_error_before_the_compile(shifted, tmp_path, capsys):
    """A wrong type, rank or missing input: one error naming the input and both sides, before
    anything compiles (no generated files)."""
    cases = {
        "type.npz": ({"ids": IDS.astype(np.int32), "x": X}, "input 'ids' is int32 there; the model declares int64"),
        "rank.npz": ({"ids": IDS[None], "x": X}, "input 'ids' has shape (1, 5) there; the model declares (?) ('?': any size)"),
        "fixed.npz": ({"ids": IDS, "x": np.zeros((5, 3), np.float32)}, "input 'x' has shape (5, 3) there; the model declares (?, 2) ('?': any size)"),
        "missing.npz": ({"idz": IDS, "x": X}, "no tensor for input(s) ids (it has x; left over: idz)"),
    }  # fmt: skip
    for name, (arrays, want) in cases.items():
        np.savez(tmp_path / name, **arrays)
        out_dir = tmp_path / f"out_{name}"
        rc, _, err = _run(
            ["run", shifted, "--inputs", str(tmp_path / name), "-o", str(out_dir)], capsys
        )
        assert rc == 1
        line = one_error_line(err)
        assert line == f"error: inputs file {tmp_path / name}: {want}", line
        assert not (out_dir / "model.py").exists()
    rc, _, err = _run(
        ["run", shifted, "--inputs", str(tmp_path / "in.npz"), "--batch", "2"], capsys
    )
    assert rc == 1 and "--inputs gives the inputs of one sample" in one_error_line(err)


def test_every_format_gives_the_same_tensors(tmp_path):
    """.npz, .safetensors, an ONNX test data set (a named TensorProto, then an unnamed one taken
    by its position; a stray file ignored) and a single .pb for a one-input model."""
    names = ["ids", "x"]
    np.savez(tmp_path / "a.npz", ids=IDS, x=X, extra=X)
    save_file({"ids": IDS, "x": X}, str(tmp_path / "a.safetensors"))
    data_set = tmp_path / "test_data_set_0"
    data_set.mkdir()
    onnx.save_tensor(numpy_helper.from_array(IDS, "ids"), str(data_set / "input_0.pb"))
    onnx.save_tensor(numpy_helper.from_array(X, ""), str(data_set / "input_1.pb"))
    onnx.save_tensor(numpy_helper.from_array(X, ""), str(data_set / "output_0.pb"))
    for path in ("a.npz", "a.safetensors", "test_data_set_0"):
        got = read_inputs(str(tmp_path / path), names)
        assert list(got.tensors) == names, path
        torch.testing.assert_close(got.tensors["ids"], torch.from_numpy(IDS))
        torch.testing.assert_close(got.tensors["x"], torch.from_numpy(X))
        assert got.ignored == (["extra"] if path == "a.npz" else []), path
    onnx.save_tensor(numpy_helper.from_array(X, ""), str(tmp_path / "x.pb"))
    torch.testing.assert_close(
        read_inputs(str(tmp_path / "x.pb"), ["x"]).tensors["x"], torch.from_numpy(X)
    )
    with pytest.raises(
        RamielError, match=r"one unnamed tensor, and the model has 2 inputs \(ids, x\)"
    ):
        read_inputs(str(tmp_path / "x.pb"), names)


@pytest.mark.parametrize("dtype", ["bfloat16", "float8_e4m3fn", "float8_e5m2"])
def test_tensors_of_types_numpy_has_only_through_ml_dtypes(dtype, tmp_path):
    """onnx reads a bfloat16 or float8 TensorProto as an ml_dtypes array, which torch cannot take
    from numpy (ONNX's test_attention_3d_causal_bf16_expanded data set had been "no torch
    type"): it crosses as its bits, values unchanged."""
    want = torch.tensor([[1.5, -2.0], [0.25, 0.0]]).to(getattr(torch, dtype))
    proto = helper.make_tensor(
        "q", getattr(TensorProto, dtype.replace("_", "").upper()), [2, 2], want.float().tolist()
    )
    onnx.save_tensor(proto, str(tmp_path / "q.pb"))
    got = read_inputs(str(tmp_path / "q.pb"), ["q"]).tensors["q"]
    assert got.dtype == want.dtype
    torch.testing.assert_close(got.float(), want.float(), rtol=0, atol=0)


def test_unreadable_files_are_one_clear_error(tmp_path):
    (tmp_path / "model.txt").write_text("hello")
    (tmp_path / "bad.npz").write_bytes(b"PK\x03\x04 not a zip")
    (tmp_path / "bad.pb").write_bytes(b"\xff\xff\xff\xff")
    (tmp_path / "empty").mkdir()
    cases = {
        "model.txt": "not a .safetensors, .npz or ONNX TensorProto (.pb) file",
        "bad.npz": "not a readable .npz file",
        "bad.pb": "not a readable ONNX TensorProto",
        "empty": "no input_0.pb, input_1.pb, ... in it",
        "nothing.npz": "no such file",
    }
    for name, want in cases.items():
        with pytest.raises(RamielError, match=re.escape(want)):
            read_inputs(os.path.join(tmp_path, name), ["x"])


def test_bindings_only_for_dimensions_of_no_fixed_size():
    """The file's shape binds an input with a dimension of no fixed size, or of no declared
    shape; not a fully static one, and not one the user bound; the compiled program's own
    shapes are checked again after the compile."""
    np_ids = {"ids": torch.from_numpy(IDS), "x": torch.from_numpy(X), "s": torch.ones(3)}
    inputs = type("F", (), {"tensors": np_ids, "path": "f"})()
    declared = {"ids": [None], "x": [5, 2], "s": None}
    assert declared_bindings(declared, inputs, {}) == {"ids": (5,), "s": (3,)}
    assert declared_bindings(declared, inputs, {"ids": (5,)}) == {"s": (3,)}
    from ramiel.input_files import InputsFile

    f = InputsFile("f", np_ids, [])
    f.check({"ids": ((5,), torch.int64), "x": ((5, 2), torch.float32), "s": ((3,), torch.float32)})
    with pytest.raises(
        RamielError,
        match=r"input 's' is float32 of shape \(3,\) there; the compiled program takes float32 of shape \(4,\)",
    ):
        f.check({"s": ((4,), torch.float32)})


def test_steps_start_from_the_files_state(tmp_path, capsys):
    """``--steps`` with ``--inputs``: the state starts at the file's, the other inputs are the
    file's at every step, and every step is checked."""
    from ramiel.models import export_model

    path = export_model("streaming_detector")
    rs = np.random.RandomState(1)
    arrays = {
        "audio": rs.randn(1, 1, 512).astype(np.float32),
        "h0": (rs.randn(2, 1, 64) * 0.5).astype(np.float32),
        "c0": (rs.randn(2, 1, 64) * 0.5).astype(np.float32),
    }
    np.savez(tmp_path / "state.npz", **arrays)
    argv = ["run", str(path), "--steps", "2", "--inputs", str(tmp_path / "state.npz")]
    rc, out, err = _run([*argv, "--repeat", "1"], capsys)
    assert rc == 0, err
    assert "inputs: " in out and "step 2: max error vs onnxruntime" in out, out
    assert "check against onnxruntime: OK" in out, out


def test_output_error_counts_a_nan_or_infinity_that_onnxruntime_has_not():
    """A NaN where the reference has none had made the error NaN, which ``max`` and ``<=``
    passed over: ``ramiel run`` said OK. NaN against NaN and an infinity against the same one
    agree; the scale is the largest finite magnitude."""
    from ramiel.engines import output_error

    nan, inf = float("nan"), float("inf")
    assert output_error([1.0, nan, inf, -inf], [1.0, nan, inf, -inf]) == (0.0, 1.0)
    assert output_error([1.0, nan], [1.0, 2.0]) == (inf, 2.0)
    assert output_error([1.0, 2.0], [1.0, nan]) == (inf, 1.0)
    assert output_error([inf, 2.0], [-inf, 2.0]) == (inf, 2.0)
    err, scale = output_error([4.002, nan], [4.0, nan])
    assert scale == 4.0 and err == pytest.approx(0.0005)


def _run_data_set(kind: str, case: str, capsys, *flags: str) -> tuple[int, str, str]:
    """``ramiel run`` on a test model inside the onnx wheel with its test_data_set_0."""
    case = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", kind, case)
    model, data = os.path.join(case, "model.onnx"), os.path.join(case, "test_data_set_0")
    return _run(["run", model, "--inputs", data, "--repeat", "1", *flags], capsys)


def test_ort_optimize_on_an_ir3_model_with_merged_initializers(capsys):
    """onnxruntime's optimiser merges test_BatchNorm2d_eval's equal bias and mean and drops the
    mean, but the IR-3 model listed it as a graph input: that had become an input of the
    program, which the data set has no tensor for (an internal KeyError, found by a fresh-user
    check)."""
    rc, out, err = _run_data_set(
        "pytorch-converted", "test_BatchNorm2d_eval", capsys, "--ort-optimize"
    )
    assert rc == 0, err
    assert "check against onnxruntime: OK" in out, out


def test_a_program_input_the_file_has_no_tensor_for_is_one_error(tmp_path):
    path = tmp_path / "in.npz"
    np.savez(path, x=np.zeros((2,), np.float32))
    given = read_inputs(str(path), ["x"])
    with pytest.raises(
        RamielError, match=r"takes an input 'y' that the file has no tensor for \(it has x\)"
    ):
        given.check({"x": ((2,), torch.float32), "y": ((1,), torch.float32)})


def test_a_model_of_opset_6_runs_converted_and_is_checked(capsys):
    """The pytorch-converted test models inside the onnx wheel are opset 6, which Ramiel had
    refused: onnx's version converter brings them to opset 9. Where onnxruntime cannot load the
    opset-6 file (Gemm-6), it checks the converted model, and says so."""
    rc, out, err = _run_data_set("pytorch-converted", "test_Linear", capsys)
    assert rc == 0, err
    assert "note: onnxruntime cannot load the model as it is (NOT_IMPLEMENTED" in out, out
    assert "it runs the opset-9 version of it that onnx's version converter made" in out, out
    assert "check against onnxruntime: OK" in out, out
    # NaNs where onnxruntime has them
    rc, out, err = _run_data_set("pytorch-operator", "test_operator_pow", capsys)
    assert rc == 0 and "check against onnxruntime: OK" in out and " nan" not in out, out


def test_an_opset_the_converter_cannot_convert_is_one_error():
    """The converter's own refusal, with its reason, as the one error."""
    from ramiel.errors import ImportError_
    from ramiel.importer import prepare_model

    vi = helper.make_tensor_value_info
    graph = helper.make_graph(
        [helper.make_node("Upsample", ["x"], ["y"], scales=[1.0, 1.0, 2.0, 2.0])],
        "g",
        [vi("x", TensorProto.FLOAT, [1, 1, 2, 2])],
        [vi("y", TensorProto.FLOAT, [1, 1, 4, 4])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 1)])
    model.ir_version = 3
    with pytest.raises(
        ImportError_,
        match=r"imports ONNX opset 1; .*version converter cannot convert it to opset 9: ",
    ):
        prepare_model(model)


def test_files_as_users_write_them(tmp_path):
    """Found by a fresh-user check of --inputs: a big-endian .npz had been an internal error;
    a data set's unnamed tensor fills the input its named neighbour left free (it had been
    dropped), as do tensors numbered past the inputs (input_10.pb), the rest noted; a lone .pb
    named otherwise is the one input of a one-input model, as in a data set."""
    np.savez(tmp_path / "be.npz", ids=IDS.astype(">i8"), x=X.astype(">f4"))
    got = read_inputs(str(tmp_path / "be.npz"), ["ids", "x"])
    torch.testing.assert_close(got.tensors["x"], torch.from_numpy(X))
    assert got.tensors["ids"].dtype == torch.int64
    swapped = tmp_path / "swapped"
    swapped.mkdir()
    onnx.save_tensor(numpy_helper.from_array(X, "x"), str(swapped / "input_0.pb"))
    onnx.save_tensor(numpy_helper.from_array(IDS, ""), str(swapped / "input_1.pb"))
    got = read_inputs(str(swapped), ["ids", "x"])
    torch.testing.assert_close(got.tensors["ids"], torch.from_numpy(IDS))
    far = tmp_path / "far"
    far.mkdir()
    for i in (2, 10, 11):
        onnx.save_tensor(numpy_helper.from_array(X * i, ""), str(far / f"input_{i}.pb"))
    got = read_inputs(str(far), ["ids", "x"])  # the free inputs in order, one left over
    torch.testing.assert_close(got.tensors["x"], torch.from_numpy(X * 10))
    assert got.ignored == ["input_11.pb"]
    onnx.save_tensor(numpy_helper.from_array(X, "other"), str(tmp_path / "other.pb"))
    torch.testing.assert_close(
        read_inputs(str(tmp_path / "other.pb"), ["x"]).tensors["x"], torch.from_numpy(X)
    )


def test_bindings_that_contradict_the_file_are_errors_before_the_compile():
    """An --input-shape other than the file's shape, and one symbol of two sizes in the file:
    errors naming the file (the second had blamed an --input-shape the user never gave)."""
    from ramiel.input_files import InputsFile

    f = InputsFile("f.npz", {"x": torch.ones(2, 3), "y": torch.ones(4, 5)}, [])
    declared = {"x": ["M", "K"], "y": ["K", "N"]}
    with pytest.raises(
        RamielError,
        match=re.escape("input 'x' has shape (2, 3) there; --input-shape binds it to (5, 3)"),
    ):
        declared_bindings(declared, f, {"x": (5, 3)})
    with pytest.raises(
        RamielError,
        match=re.escape("inputs file f.npz: dimension 'K' is 3 in input 'x' and 4 in input 'y'"),
    ):
        declared_bindings(declared, f, {})
    g = InputsFile("g.npz", {"x": torch.ones(2, 3), "y": torch.ones(3, 5)}, [])
    assert declared_bindings(declared, g, {}) == {"x": (2, 3), "y": (3, 5)}


def test_output_error_compares_shapes_complex_and_bfloat16():
    from ramiel.engines import output_error

    assert output_error([1.0], [1.0, 2.0])[0] == float("inf")  # (had broadcast: 0.5)
    assert output_error(np.ones(1), np.ones(3))[0] == float("inf")  # (had been 0)
    err, scale = output_error(np.array([1 + 1j]), np.array([1 - 1j]))  # (had been 0)
    assert err == pytest.approx(2 / np.sqrt(2)) and scale == pytest.approx(np.sqrt(2))
    assert output_error(torch.ones(3, dtype=torch.bfloat16), np.ones(3, np.float32)) == (0.0, 1.0)


def test_sign_of_nan_is_nan():
    """torch.sign(NaN) is 0; ONNX's Sign (onnxruntime, onnx.reference) gives NaN."""
    import ramiel

    vi = helper.make_tensor_value_info
    graph = helper.make_graph(
        [helper.make_node("Sign", ["x"], ["y"])],
        "g",
        [vi("x", TensorProto.FLOAT, [5])],
        [vi("y", TensorProto.FLOAT, [5])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = np.array([np.nan, -2, 0, 3, -np.inf], np.float32)
    with ramiel.compile(model) as compiled:
        got = compiled.run({"x": x})["y"].numpy()
    np.testing.assert_array_equal(got, np.sign(x))


def _old_model(nodes, inputs, outputs, inits=(), opset=6):
    vi = helper.make_tensor_value_info
    graph = helper.make_graph(
        nodes,
        "old",
        [vi(n, TensorProto.FLOAT, s) for n, s in inputs]
        + [vi(t.name, TensorProto.FLOAT, list(t.dims)) for t in inits],  # IR 3: listed too
        [vi(n, TensorProto.FLOAT, s) for n, s in outputs],
        list(inits),
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 3
    return model


def test_old_opsets_the_converter_gets_wrong_are_mended(tmp_path, capsys):
    """PRelu-6's per-channel slope of shape (C,) (PyTorch's old nn.PReLU(C) export) is
    reshaped to (C, 1, 1): the converter kept it, and opset 7 broadcasts it along the last axis
    ("the model is invalid"). Upsample-1's "bilinear" becomes "linear". A Mul-6 with axis
    broadcasting: the converter's value_info of no element type is dropped (onnxruntime had
    refused the converted model). Reshape-1's shape attribute becomes an int64 Constant, which
    needs Constant-9. Each runs and checks against onnxruntime on the converted model; the
    PRelu also against the per-channel reference."""
    from ramiel.importer import upgraded

    slope = numpy_helper.from_array(np.array([0.1, 0.2, 0.3], np.float32), "slope")
    cases = {
        "prelu": _old_model([helper.make_node("PRelu", ["x", "slope"], ["y"])], [("x", [2, 3, 4])], [("y", [2, 3, 4])], [slope]),
        "upsample": _old_model([helper.make_node("Upsample", ["x"], ["y"], height_scale=2.0, width_scale=2.0, mode="bilinear")], [("x", [1, 1, 2, 2])], [("y", [1, 1, 4, 4])], opset=1),
        "mul_axis0": _old_model([helper.make_node("Mul", ["x", "b"], ["y"], broadcast=1, axis=0)], [("x", [2, 3, 4]), ("b", [2, 3])], [("y", [2, 3, 4])]),
        "reshape": _old_model([helper.make_node("Reshape", ["x"], ["y"], shape=[4, -1])], [("x", [2, 3, 2])], [("y", [4, 3])], opset=1),
    }  # fmt: skip
    for name, model in cases.items():
        path = tmp_path / f"{name}.onnx"
        onnx.save(model, path)
        rc, out, err = _run(["run", str(path), "--repeat", "1"], capsys)
        assert rc == 0 and "check against onnxruntime: OK" in out, (name, out, err)
    x = np.random.RandomState(0).randn(2, 3, 4).astype(np.float32)
    import onnxruntime as ort

    sess = ort.InferenceSession(upgraded(cases["prelu"]).SerializeToString())
    want = np.where(x >= 0, x, x * np.array([0.1, 0.2, 0.3], np.float32)[None, :, None])
    np.testing.assert_allclose(sess.run(None, {"x": x})[0], want, rtol=1e-6)


def test_onnxruntime_on_an_old_opset_model_everywhere(tmp_path, capsys):
    """``ramiel profile --compare-ort`` on an opset-6 model onnxruntime has no kernel for
    (Gemm-6) had been an internal error: every onnxruntime session takes the converted model."""
    w = numpy_helper.from_array(np.ones((4, 5), np.float32), "w")
    c = numpy_helper.from_array(np.ones(5, np.float32), "c")
    model = _old_model(
        [helper.make_node("Gemm", ["x", "w", "c"], ["y"], broadcast=1)],
        [("x", [3, 4])],
        [("y", [3, 5])],
        [w, c],
    )
    path = tmp_path / "gemm6.onnx"
    onnx.save(model, path)
    rc, out, err = _run(["profile", str(path), "--compare-ort", "--repeat", "2"], capsys)
    assert rc == 0, err
    assert "Gemm" in out, out


def _data_set_of(tmp_path, model_path: str, y: np.ndarray) -> str:
    """A test data set for the ``shifted`` model: IDS and X in, ``y`` as output_0.pb."""
    d = tmp_path / "test_data_set_0"
    d.mkdir()
    onnx.save_tensor(numpy_helper.from_array(IDS, "ids"), str(d / "input_0.pb"))
    onnx.save_tensor(numpy_helper.from_array(X, "x"), str(d / "input_1.pb"))
    onnx.save_tensor(numpy_helper.from_array(y, "y"), str(d / "output_0.pb"))
    return str(d)


def test_a_data_set_s_outputs_are_checked_too(shifted, tmp_path, capsys):
    """An ONNX test data set holds the reference outputs (output_0.pb, ...): ``ramiel run``
    checks against them as well as against onnxruntime, and a wrong one is a MISMATCH (status
    2)."""
    table = np.arange(12, dtype=np.float32).reshape(6, 2)
    right = table[IDS + 1] * X
    rc, out, err = _run(
        ["run", shifted, "--inputs", _data_set_of(tmp_path, shifted, right)], capsys
    )
    assert rc == 0, err
    assert "check against onnxruntime: OK" in out, out
    assert "check against the data set's outputs (test_data_set_0: y): OK" in out, out
    wrong = tmp_path / "wrong"
    wrong.mkdir()
    rc, out, err = _run(
        ["run", shifted, "--inputs", _data_set_of(wrong, shifted, right * 1.01)], capsys
    )
    assert rc == 2, err
    assert "check against onnxruntime: OK" in out, out
    assert "data set's output, relative to max |output| 11.7: parallel 9.90e-03" in out, out
    assert "check against the data set's outputs (test_data_set_0: y): MISMATCH" in out, out


def test_a_model_onnxruntime_cannot_load_is_checked_against_its_data_set(tmp_path, capsys):
    """A model of an opset onnxruntime does not load yet (ONNX's newest node tests): with a
    data set of outputs, the check is against those, and says so; without, it is an error."""
    vi = helper.make_tensor_value_info
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "g",
        [vi("x", TensorProto.FLOAT, [5, 2])],
        [vi("y", TensorProto.FLOAT, [5, 2])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 99)])
    model.opset_import[0].version = onnx.defs.onnx_opset_version()
    path = tmp_path / "new.onnx"
    onnx.save(model, path)
    d = tmp_path / "test_data_set_0"
    d.mkdir()
    x = X - 0.5
    onnx.save_tensor(numpy_helper.from_array(x, "x"), str(d / "input_0.pb"))
    onnx.save_tensor(numpy_helper.from_array(np.maximum(x, 0), "y"), str(d / "output_0.pb"))
    rc, out, err = _run(["run", str(path), "--inputs", str(d), "--repeat", "1"], capsys)
    if "note: onnxruntime cannot load the model" not in out:
        pytest.skip("this onnxruntime loads the newest opset: nothing to fall back from")
    assert rc == 0, err
    assert "checked against the outputs of" in out and "check against onnxruntime" not in out
    assert "check against the data set's outputs (test_data_set_0: y): OK" in out, out
    assert "onnxruntime (1 thread)" not in out
    (d / "output_0.pb").unlink()
    rc, out, err = _run(["run", str(path), "--inputs", str(d), "--repeat", "1"], capsys)
    assert rc == 1 and "error: onnxruntime cannot load the model" in err, err
