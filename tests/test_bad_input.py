"""Bad command-line values, bad files and invalid models: one ``error:`` line each, in bounded
time and memory, before any work (issue #13, classes 3 and 6).

* a bad value (``--input-shape x=1,,16``, ``--repeat 0``, ``--workers 0``, ``-o ''``...) is
  argparse's error, exit status 2, naming the argument and what is wrong;
* a bad file (a directory, a FIFO with no writer, ``/dev/zero``, an output under a file or where
  nothing may be written, IR nested 20,000 deep or with a string that never ends) is one line
  naming the file, exit status 1;
* ONNX that must be rejected (duplicate graph names, a Reshape that cannot hold its input, a
  shape only the data decide through ``ramiel-translate``) is one line naming the node;
* ``ramiel run`` on a model onnxruntime cannot load says so;
* generated files are readable as the umask allows.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys

import numpy as np
import onnx
import pytest
from conftest import ZOO_MODELS, one_error_line, tool_status
from onnx import TensorProto, helper, numpy_helper

import ramiel
from ramiel.tools import driver, opt, translate

SQUEEZENET = ZOO_MODELS["light_squeezenet"]
ENV = dict(os.environ, ORT_DISABLE_TELEMETRY="1")
ENV.pop("RAMIEL_DEBUG", None)


def _error(tool, argv, capsys, status: int) -> str:
    rc = tool_status(tool.main, argv)
    err = capsys.readouterr().err
    assert rc == status, err
    return one_error_line(err)


def _shell(cmd: list[str], timeout: float = 120) -> str:
    """Run an installed tool; it must end (``timeout``) with status 1 and one error line."""
    tool = os.path.join(os.path.dirname(sys.executable), cmd[0])
    p = subprocess.run(
        [tool, *cmd[1:]],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    assert p.returncode == 1, p.stderr
    return one_error_line(p.stderr)


def _model(nodes, inputs, outputs, inits=(), opset=17) -> onnx.ModelProto:
    m = helper.make_model(
        helper.make_graph(nodes, "g", inputs, outputs, list(inits)),
        opset_imports=[helper.make_opsetid("", opset)],
    )
    m.ir_version = 8
    return m


def _vi(name: str, shape, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


# ----------------------------------------------------------------------------- bad values

BAD_VALUES = [
    # (argv after the command, the argument named, what the message says)
    (["--input-shape", "foo"], "--input-shape", "expects NAME=D0,D1,..., got 'foo'"),
    (["--input-shape", "=1,16"], "--input-shape", "expects NAME=D0,D1,..., got '=1,16'"),
    (["--input-shape", "x=a,b"], "--input-shape", "dimensions must be integers, got 'a'"),
    (["--input-shape", "x=1.5"], "--input-shape", "dimensions must be integers, got '1.5'"),
    (["--input-shape", "x=1,,16"], "--input-shape", "an empty dimension"),
    (["--input-shape", "x=1,16,"], "--input-shape", "an empty dimension"),
    (["--input-shape", "x=99999999999999999999"], "--input-shape", "more than any machine"),
    (["--input-shape", "x=0"], "--input-shape", "dimensions must be positive"),
    (["--threads-per-worker", "0"], "--threads-per-worker", "must be from 1 to 1024, got 0"),
    (["--clusters", "100000"], "--clusters", "must be from 1 to 1024, got 100000"),
    (["--clusters", "two"], "--clusters", "expected an integer, got 'two'"),
    (["--batch", "0"], "--batch", "must be from 1 to 1024, got 0"),
    (["--cores", "1.5"], "--cores", "expected an integer, got '1.5'"),
    (["--profile", ""], "--profile", "the path is empty"),
]


@pytest.mark.parametrize("command", ["compile", "run"])
@pytest.mark.parametrize(("extra", "argument", "message"), BAD_VALUES, ids=lambda v: str(v))
def test_bad_values(command, extra, argument, message, tmp_path, capsys):
    out = tmp_path / "out"
    argv = [command, SQUEEZENET, "-o", str(out), *extra]
    line = _error(driver, argv, capsys, 2)
    assert line.startswith(f"error: argument {argument}: "), line
    assert message in line and f"(see 'ramiel {command} --help')" in line
    assert not out.exists()  # nothing was done


@pytest.mark.parametrize(
    ("argv", "argument", "message"),
    [
        (["compile", SQUEEZENET, "-o", ""], "-o/--output", "the path is empty"),
        (["compile", "", "-o", "out"], "model", "the path is empty"),
        (["run", SQUEEZENET, "--repeat", "0"], "--repeat", "must be from 1 to 1000000, got 0"),
        # checked at the end of the run (found by a fresh-user check)
        (["run", SQUEEZENET, "--steps", "2", "--state", "h0"], "--state", "expected IN=OUT"),
        # a usage error like --repeat 0 (it was status 1; found by a fresh-user check)
        (["run", SQUEEZENET, "--steps", "0"], "--steps", "must be from 1 to 1000000, got 0"),
        (["profile", SQUEEZENET, "-o", "p.json", "--threads", "0,1"], "--threads", "got 0"),
        (["profile", SQUEEZENET, "-o", "p.json", "--threads", "1,,2"], "--threads", "commas"),
        (["profile", SQUEEZENET, "-o", "p.json", "--repeat", "-1"], "--repeat", "got -1"),
        (["tune", SQUEEZENET, "-o", "t", "--budget", "0"], "--budget", "more than 0"),
        (["tune", SQUEEZENET, "-o", "t", "--budget", "nan"], "--budget", "more than 0"),
        (["tune", SQUEEZENET, "-o", "t", "--budget", "inf"], "--budget", "more than 0"),
        (["tune", SQUEEZENET, "-o", "t", "--budget", "soon"], "--budget", "seconds"),
        (["tune", SQUEEZENET, "-o", "t", "--cores", "0"], "--cores", "got 0"),
        (["bench", "--workers", "0", "light_squeezenet"], "--workers", "got 0"),
        (["bench", "--out", "", "light_squeezenet"], "--out", "the path is empty"),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else str(v),
)
def test_bad_values_of_every_command(argv, argument, message, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    line = _error(driver, argv, capsys, 2)
    assert line.startswith(f"error: argument {argument}: ") and message in line, line
    assert os.listdir(tmp_path) == []


def test_translate_bad_values(tmp_path, capsys):
    line = _error(translate, ["--import-onnx", SQUEEZENET, "--input-shape", "x=1,,2"], capsys, 2)
    assert line.startswith("error: argument --input-shape: 'x=1,,2': an empty dimension")
    line = _error(translate, ["--import-onnx", SQUEEZENET, "-o", ""], capsys, 2)
    assert line.startswith("error: argument -o/--output: the path is empty")


def test_input_shape_binds_once(tmp_path, capsys):
    argv = ["compile", SQUEEZENET, "-o", str(tmp_path / "o")]
    argv += ["--input-shape", "data_0=1,3,224,224", "--input-shape", "data_0=2,3,224,224"]
    line = _error(driver, argv, capsys, 1)
    assert "binds 'data_0' twice" in line


# ------------------------------------------------------------------------------ bad files


def test_model_that_is_a_directory(tmp_path, capsys):
    line = _error(driver, ["compile", str(tmp_path), "-o", str(tmp_path / "o")], capsys, 1)
    assert line == f"error: ONNX model {tmp_path}: is a directory, not a file"


def test_fifo_without_a_writer_does_not_hang(tmp_path):
    fifo = tmp_path / "model.onnx"
    os.mkfifo(fifo)
    line = _shell(["ramiel", "compile", str(fifo), "-o", str(tmp_path / "o")], timeout=120)
    assert line == f"error: ONNX model {fifo}: is a FIFO (named pipe), not a regular file"
    line = _shell(["ramiel-opt", str(fifo)], timeout=120)
    assert "is a FIFO (named pipe), not a regular file" in line


@pytest.mark.parametrize(
    ("tool", "argv", "what"),
    [
        (
            driver,
            ["compile", SQUEEZENET, "-o", "{tmp}/o", "--profile", "/dev/zero"],
            "profile database",
        ),
        (driver, ["compile", "/dev/zero", "-o", "{tmp}/o"], "ONNX model"),
        (opt, ["/dev/zero"], "IR file"),
        (translate, ["--to-python", "/dev/zero"], "IR file"),
        (translate, ["--import-onnx", "/dev/zero"], "ONNX model"),
    ],
    ids=["profile", "model", "opt", "to-python", "import-onnx"],
)
def test_devices_are_not_read(tool, argv, what, tmp_path, capsys):
    """/dev/zero never ends: reading it would exhaust the memory."""
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    line = _error(tool, argv, capsys, 1)
    assert line == f"error: {what} /dev/zero: is a character device, not a regular file"
    assert not (tmp_path / "o").exists()  # the profile is checked before any work


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"times_us": {"Relu(x)": -1000000.0}}', "must be a number of µs from 0"),
        ('{"times_us": {"Relu(x)": NaN}}', "got nan"),
        ('{"times_us": {"Relu(x)": 1e300}}', "got 1e+300"),
        ('{"times_us": {"Relu(x)": "fast"}}', "got 'fast'"),
        ('{"times_us": [1]}', "not an object with 'times_us'"),
        ("[1, 2]", "not an object with 'times_us'"),
    ],
)
def test_profile_database_of_the_wrong_shape_is_refused(text, why, tmp_path, capsys):
    """A profile database with a negative, NaN, huge or non-number time, or of another shape:
    one error naming the file before any work (found by a fresh-user check: 'node 0: cost must
    be ...', or Python's "'list' object has no attribute 'get'")."""
    db = tmp_path / "p.json"
    db.write_text(text)
    line = _error(driver, ["compile", SQUEEZENET, "-o", str(tmp_path / "o"), "--profile", str(db)],
                  capsys, 1)  # fmt: skip
    assert line.startswith(f"error: profile database {db} is not valid:") and why in line
    assert not (tmp_path / "o").exists()


def test_outputs_that_cannot_be_written(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("")
    cases = [
        (driver, ["compile", SQUEEZENET, "-o", str(afile / "sub")], f"{afile} is not a directory"),
        (driver, ["compile", SQUEEZENET, "-o", "/sys/ramiel-out"], "cannot be created"),
        (driver, ["profile", SQUEEZENET, "-o", str(tmp_path)], "is a directory, not a file"),
        (driver, ["profile", SQUEEZENET, "-o", str(afile / "p.json")], "is not a directory"),
        (opt, [SQUEEZENET.replace(".onnx", ".x"), "-o", str(tmp_path)], "no such file"),
        (translate, ["--import-onnx", SQUEEZENET, "-o", str(tmp_path)], "is a directory"),
        (translate, ["--import-onnx", SQUEEZENET, "-o", "/sys/x.mlir"], "cannot write in /sys"),
        (
            translate,
            ["--import-onnx", SQUEEZENET, "-o", str(tmp_path / "none" / "x.mlir")],
            "does not exist",
        ),
    ]
    for tool, argv, message in cases:
        line = _error(tool, argv, capsys, 1)
        assert message in line, (argv, line)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_read_only_output_directory(tmp_path, capsys):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        line = _error(driver, ["compile", SQUEEZENET, "-o", str(ro)], capsys, 1)
        assert f"output directory {ro}: cannot write in {ro}" in line
    finally:
        ro.chmod(0o755)


def test_deeply_nested_ir(tmp_path, capsys):
    f = tmp_path / "deep.mlir"
    f.write_text("builtin.module attributes {x = " + "[" * 20000 + "]" * 20000 + "} {}\n")
    rc = tool_status(opt.main, [str(f)])
    err = capsys.readouterr().err
    assert rc == 1
    line = one_error_line(err)
    assert line.startswith(f"{f}:1:") and "nests too deeply to parse" in line
    # the 40,000-character line is cut (the error line also names the file, whose temporary
    # path is longer under pytest-xdist)
    assert max(len(ln.replace(str(f), "")) for ln in err.splitlines()) < 200
    line = _error(translate, ["--to-python", str(f)], capsys, 1)
    assert "nests too deeply to parse" in line


def test_string_that_never_ends(tmp_path):
    """xDSL's lexer backtracked exponentially on it (a hang); now a located syntax error."""
    f = tmp_path / "unterminated.mlir"
    name = "a" * 60
    f.write_text(f'builtin.module attributes {{key = "{name}\\\n"}} {{}}\n')
    line = _shell(["ramiel-opt", str(f)], timeout=60)
    assert line.startswith(f"{f}:1:") and "string literal" in line


@pytest.mark.parametrize(
    "attribute",
    [
        "value = dense<[1, 100000000000000000000]> : tensor<2xi64>",
        "value = dense<300> : tensor<2xi8>",
        "value = dense<[1, 2]> : tensor<2xi64>, pads = [100000000000000000000 : si64]",
    ],
)
def test_integer_out_of_range(attribute, tmp_path, capsys):
    """An integer that does not fit its type, in a tensor literal or an attribute (found by
    tests/test_fuzz.py: xDSL's ValueError was an internal error, its VerifyException an error
    without a location): a located syntax error, by both tools."""
    f = tmp_path / "big.mlir"
    f.write_text(
        "func.func @main() -> tensor<2xi64> {\n"
        f'  %c = "onnx.Constant"() <{{{attribute}}}> : () -> tensor<2xi64>\n'
        "  func.return %c : tensor<2xi64>\n}\n"
    )
    for tool, argv in ((opt, [str(f)]), (translate, ["--to-python", str(f)])):
        line = _error(tool, argv, capsys, 1)
        assert f"{f}:2:" in line and "is out of range for type " in line, line


def test_binary_ir(tmp_path, capsys):
    line = _error(opt, [SQUEEZENET], capsys, 1)
    assert "an ONNX model, not IR" in line
    f = tmp_path / "binary.mlir"
    f.write_bytes(bytes(range(256)) * 4)
    line = _error(opt, [str(f)], capsys, 1)
    assert "not IR text (not UTF-8" in line
    renamed = tmp_path / "model.mlir"  # an ONNX model is told by its bytes, not its name
    shutil.copy(SQUEEZENET, renamed)
    for tool, argv in ((opt, [str(renamed)]), (translate, ["--to-python", str(renamed)])):
        line = _error(tool, argv, capsys, 1)
        assert "an ONNX model, not IR; import it first: ramiel-translate --import-onnx" in line


def test_a_small_onnx_model_that_is_valid_utf8_is_named(tmp_path, capsys):
    """A one-Relu model whose protobuf bytes happen to be valid UTF-8 is still told apart
    from IR text (found by a fresh-user check: a parse error, "Unexpected character")."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="r")], "g", [x], [y])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    data = model.SerializeToString()
    data.decode("utf-8")  # the premise
    f = tmp_path / "q.onnx"
    f.write_bytes(data)
    line = _error(opt, [str(f)], capsys, 1)
    assert "an ONNX model, not IR; import it first: ramiel-translate --import-onnx" in line


def test_ir_text_in_a_file_named_onnx_and_empty_input(tmp_path, capsys):
    """IR text is IR whatever the file is called, and a file with nothing but blanks and
    comments is an empty module (as for mlir-opt), not a syntax error at 1:1."""
    named = tmp_path / "x.onnx"
    named.write_text('"onnx.Relu"(%a) : (tensor<2xf32>) -> tensor<2xf32>\n')
    line = _error(opt, [str(named)], capsys, 1)
    assert line.startswith(f"{named}:") and "an ONNX model" not in line, line
    for text in ("", "\n  \n", "// nothing here\n"):
        empty = tmp_path / "empty.mlir"
        empty.write_text(text)
        assert opt.main([str(empty)]) == 0
        assert capsys.readouterr().out.split() == ["builtin.module", "{", "}"]


# -------------------------------------------------------------------- models to reject


def test_declared_shape_that_inference_contradicts(tmp_path, capsys):
    """A Conv bias declared with 1 element where the graph needs 64 (found by
    tests/test_fuzz.py): strict shape inference fails, and so does the lenient retry Ramiel
    makes for onnx's ceil_mode bug; one line, not onnx's InferenceError as an internal error."""
    m = onnx.load(SQUEEZENET)
    bias = next(i for i in m.graph.initializer if i.name == "fire9/squeeze1x1_b_0")
    bias.dims[:] = [1]
    path = tmp_path / "bias.onnx"
    onnx.save(m, path)
    line = _error(driver, ["compile", str(path), "-o", str(tmp_path / "out")], capsys, 1)
    assert line.startswith("error: ONNX shape inference failed: ") and "(1) vs (64)" in line


def test_weight_shape_from_a_graph_input(tmp_path, capsys):
    """SqueezeNet whose ConstantOfShape weight takes its shape from a graph input (the
    initializer removed; found by tests/test_fuzz.py): the data decide a weight's shape, the
    lowering's one-line error naming the node, found before the clustering sizes a channel with
    it (the cluster verifier's rejection of the dynamic channel was an internal error)."""
    m = onnx.load(SQUEEZENET)
    m.graph.initializer.remove(
        next(i for i in m.graph.initializer if i.name == "fire8/squeeze1x1_w_0__SHAPE")
    )
    path = tmp_path / "shape_input.onnx"
    onnx.save(m, path)
    line = _error(driver, ["compile", str(path), "-o", str(tmp_path / "out")], capsys, 1)
    assert line == (
        "error: unsupported ONNX operator(s): ConstantOfShape (node 'ConstantOfShape_33'; "
        "opset 9): the shape input must be constant (or the output shape static)"
    )


def test_weights_file_that_disagrees_with_the_ir(tmp_path, capsys):
    """dense_resource<W> declared with another shape than the weights file holds (IR edited by
    hand; found by tests/test_fuzz.py): one line naming the resource, was numpy's reshape
    error as an internal error."""
    model = _model(
        [helper.make_node("Relu", ["W"], ["y"])],
        [],
        [_vi("y", [64])],
        [numpy_helper.from_array(np.arange(64, dtype=np.float32), "W")],
    )
    onnx.save(model, tmp_path / "w.onnx")
    ir = tmp_path / "w.mlir"
    assert (
        tool_status(translate.main, ["--import-onnx", str(tmp_path / "w.onnx"), "-o", str(ir)]) == 0
    )
    text = ir.read_text()
    assert "dense_resource<W> : tensor<64xf32>" in text
    ir.write_text(
        text.replace("dense_resource<W> : tensor<64xf32>", "dense_resource<W> : tensor<f32>")
    )
    capsys.readouterr()
    line = _error(opt, [str(ir), "-p", "constant-fold,lower-to-torchpy"], capsys, 1)
    assert "dense_resource<W>: the IR declares tensor<f32> but the weights file holds 64" in line


def test_duplicate_graph_names(tmp_path, capsys):
    x, y = _vi("x", [2, 3]), _vi("y", [2, 3])
    cases = {
        "output": _model([helper.make_node("Relu", ["x"], ["y"])], [x], [y, y]),
        "input": _model([helper.make_node("Relu", ["x"], ["y"])], [x, x], [y]),
    }
    for what, model in cases.items():
        path = str(tmp_path / f"dup_{what}.onnx")
        onnx.save(model, path)
        for tool, argv in (
            (driver, ["compile", path, "-o", str(tmp_path / what)]),
            (translate, ["--import-onnx", path, "-o", str(tmp_path / f"{what}.mlir")]),
        ):
            line = _error(tool, argv, capsys, 1)
            assert f"graph {what} '{'y' if what == 'output' else 'x'}' is listed twice" in line


def test_reshape_that_cannot_hold_its_input(tmp_path, capsys):
    shape = numpy_helper.from_array(np.array([4, 2], np.int64), "shape")
    model = _model(
        [helper.make_node("Reshape", ["x", "shape"], ["y"], name="bad reshape")],
        [_vi("x", [2, 3])],
        [_vi("y", [4, 2])],
        [shape],
    )
    path = str(tmp_path / "reshape.onnx")
    onnx.save(model, path)
    expected = (
        "onnx.Reshape (node 'bad reshape'): cannot reshape 6 elements [2, 3] into the shape "
        "[4, 2] (8 elements)"
    )
    line = _error(driver, ["compile", path, "-o", str(tmp_path / "o")], capsys, 1)
    assert expected in line
    line = _error(translate, ["--import-onnx", path], capsys, 1)
    assert expected in line
    ir = tmp_path / "reshape.mlir"
    ir.write_text(
        "builtin.module attributes {onnx.opset = 17 : i64} {\n"
        "func.func @main(%x: tensor<2x3xf32>) -> tensor<4x2xf32> {\n"
        '  %s = "onnx.Constant"() <{value = dense<[4, 2]> : tensor<2xi64>}> : () -> tensor<2xi64>\n'
        '  %y = "onnx.Reshape"(%x, %s) : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<4x2xf32>\n'
        "  func.return %y : tensor<4x2xf32>\n}\n}\n"
    )
    rc = tool_status(opt.main, [str(ir)])
    assert rc == 1
    line = one_error_line(capsys.readouterr().err)
    assert line.startswith(f"{ir}:4:3: error: onnx.Reshape: cannot reshape 6 elements"), line


def test_data_dependent_shape_through_translate(tmp_path, capsys):
    model = _model(
        [helper.make_node("NonZero", ["x"], ["y"], name="nz")],
        [_vi("x", [2, 3])],
        [_vi("y", [2, "n"], TensorProto.INT64)],
    )
    path = str(tmp_path / "nonzero.onnx")
    onnx.save(model, path)
    line = _error(translate, ["--import-onnx", path, "-o", str(tmp_path / "nz.mlir")], capsys, 1)
    assert "NonZero node 'nz' (opset 17): result 'y' has shape 2x?" in line
    # a NonZero of a constant folds away: ramiel compile takes it, so translate does too
    const = numpy_helper.from_array(np.array([[0, 1], [2, 0]], np.float32), "c")
    folded = _model(
        [helper.make_node("NonZero", ["c"], ["y"], name="nz")],
        [],
        [_vi("y", [2, "n"], TensorProto.INT64)],
        [const],
    )
    path = str(tmp_path / "nonzero_const.onnx")
    onnx.save(folded, path)
    assert tool_status(translate.main, ["--import-onnx", path, "-o", str(tmp_path / "c.mlir")]) == 0


def test_run_on_a_model_onnxruntime_rejects(tmp_path, capsys):
    """onnxruntime has no Relu kernel for int16; Ramiel compiles it, but cannot check it."""
    model = _model(
        [helper.make_node("Relu", ["x"], ["y"])],
        [_vi("x", [2, 3], TensorProto.INT16)],
        [_vi("y", [2, 3], TensorProto.INT16)],
    )
    path = str(tmp_path / "relu16.onnx")
    onnx.save(model, path)
    line = _error(driver, ["run", path, "-o", str(tmp_path / "o"), "--repeat", "1"], capsys, 1)
    assert line.startswith("error: onnxruntime cannot load the model, so 'ramiel run' cannot check")
    assert "NOT_IMPLEMENTED" in line
    assert (tmp_path / "o" / "model.py").exists()  # the compiled program is kept


# ------------------------------------------------------------------------ file permissions


@pytest.mark.parametrize("mask", [0o022, 0o027])
def test_generated_files_follow_the_umask(mask, tmp_path):
    import ramiel

    old = os.umask(mask)
    try:
        ramiel.compile_model(SQUEEZENET, str(tmp_path / "o"))
    finally:
        os.umask(old)
    modes = {
        p.name: stat.S_IMODE(p.stat().st_mode) for p in (tmp_path / "o").iterdir() if p.is_file()
    }
    assert "weights.safetensors" in modes and "model.mlir" in modes
    assert modes == dict.fromkeys(modes, 0o666 & ~mask), modes


def test_output_file_with_directories_the_writer_makes(tmp_path):
    """``output_file(..., make_dirs=True)``: a missing directory is fine (a report's writer makes
    it), nothing is created by the check; without it, a missing directory is an error."""
    from ramiel.errors import RamielError
    from ramiel.files import output_file

    deep = tmp_path / "a" / "b" / "x.json"
    assert output_file(deep, "file", make_dirs=True) == str(deep)
    assert not (tmp_path / "a").exists()
    with pytest.raises(RamielError, match="does not exist"):
        output_file(deep, "file")
    afile = tmp_path / "afile"
    afile.write_text("")
    with pytest.raises(RamielError, match="is not a directory"):
        output_file(afile / "x.json", "file", make_dirs=True)


def test_state_without_steps_is_a_usage_error(tmp_path, capsys, monkeypatch):
    """--state without --steps had been ignored (status 0; found by a fresh-user check)."""
    monkeypatch.chdir(tmp_path)
    line = _error(driver, ["run", SQUEEZENET, "--state", "x=out"], capsys, 2)
    assert line == "error: --state is an option of --steps N (N >= 2)"
    assert os.listdir(tmp_path) == []


def test_run_takes_the_model_names_bench_takes(capsys):
    """'ramiel run light_squeezenet' compiles the zoo model, as 'ramiel bench light_squeezenet'
    does; an unknown name is one error listing the known ones (it was 'no such file')."""
    from ramiel.errors import RamielError
    from ramiel.tools.driver import _run_model_path

    assert _run_model_path("light_squeezenet") == SQUEEZENET
    assert _run_model_path("squeezenet") == SQUEEZENET
    with pytest.raises(RamielError, match=r"nosuch: no such file; unknown model 'nosuch'.*light_"):
        _run_model_path("nosuch")
    line = _error(driver, ["run", "nosuch"], capsys, 1)
    assert line.startswith("error: nosuch: no such file; unknown model 'nosuch'")


@pytest.mark.parametrize("cmd", ["compile", "profile"])
def test_compile_and_profile_take_the_model_names_run_takes(cmd, tmp_path, capsys):
    """'ramiel run light_squeezenet' worked but 'ramiel compile light_squeezenet' said 'no such
    file' (found this session): every command that takes one model takes its name too."""
    out = str(tmp_path / "out")
    line = _error(driver, [cmd, "nosuch", "-o", out], capsys, 1)
    assert line.startswith("error: nosuch: no such file; unknown model 'nosuch'")
    assert not os.path.exists(out)
    assert driver.main([cmd, "squeezenet", "-o", out]) == 0
    assert os.path.exists(os.path.join(out, "model.py") if cmd == "compile" else out)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["compile", "squeezenet", "-o", "out", "--bogus"], "unrecognized arguments: --bogus"),
        (
            ["run", "squeezenet", "--compile-backend", "inductor", "--no-compile"],
            "argument --compile-backend: not allowed with --no-compile (eager)",
        ),
    ],
)
def test_a_command_s_usage_error_points_to_its_own_help(
    argv, message, tmp_path, monkeypatch, capsys
):
    """An unknown flag after a command had said "see 'ramiel --help'", whose text does not list
    the command's flags (helper-21)."""
    monkeypatch.chdir(tmp_path)
    line = _error(driver, argv, capsys, 2)
    assert line == f"error: {message} (see 'ramiel {argv[0]} --help')"
    assert os.listdir(tmp_path) == []


def test_a_flag_before_the_command_points_to_the_main_help(tmp_path, monkeypatch, capsys):
    """'ramiel --bogus compile ...': the flag is the main parser's (helper-23)."""
    monkeypatch.chdir(tmp_path)
    line = _error(driver, ["--bogus", "compile", "squeezenet", "-o", "out"], capsys, 2)
    assert line == "error: unrecognized arguments: --bogus (see 'ramiel --help')"


def test_progress_lines_off_a_terminal_are_plain(tmp_path, capsys):
    """Stage lines on a redirected stderr: '[HH:MM:SS] import', not rich's lines padded to 80
    columns (helper-23)."""
    assert driver.main(["compile", "squeezenet", "-o", str(tmp_path / "out")]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err and all(ln == ln.rstrip() for ln in err), err
    assert any(ln.endswith("] import") and ln.startswith("[") for ln in err), err


def test_an_empty_model_name_is_one_clear_error():
    from ramiel.errors import RamielError

    with pytest.raises(RamielError, match="^the model is an empty string"):
        ramiel.compile("")


def test_profile_prints_only_its_result_off_a_terminal(tmp_path, capsys):
    """Off a terminal the progress bar draws nothing (rich had left an empty line on stderr)."""
    db = tmp_path / "p.json"
    assert driver.main(["profile", "squeezenet", "-o", str(db), "--repeat", "1"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("profiled 66 ops of ") and out.endswith(
        f"light_squeezenet.onnx into {db}\n"
    )
    assert not err.startswith("\n"), repr(err)


def test_a_directory_named_like_a_model_does_not_hide_it(tmp_path, monkeypatch, capsys):
    """A directory 'squeezenet' in the working directory had won over the model of that name
    (and then failed as no ONNX file; helper-21); a directory that is no model name is named as
    a directory."""
    from ramiel.errors import RamielError
    from ramiel.tools.driver import _run_model_path

    monkeypatch.chdir(tmp_path)
    (tmp_path / "squeezenet").mkdir()
    (tmp_path / "results").mkdir()
    assert _run_model_path("squeezenet") == SQUEEZENET
    with pytest.raises(RamielError, match=r"^results: a directory, not an ONNX file; nor a model"):
        _run_model_path("results")


def test_ramiel_compile_takes_model_names_and_leaves_no_directory(tmp_path, monkeypatch):
    """ramiel.compile("light_squeezenet") compiles the zoo model as 'ramiel compile' does (it
    had said 'no such file'; helper-21); an unknown name is one error, and the temporary
    directory it made is removed at once (it had been left to a ResourceWarning)."""
    import tempfile

    from ramiel.errors import RamielError

    with ramiel.compile("squeezenet", clusters=1) as m:
        assert m.result.class_name == "SqueezenetOld"
        assert os.path.isdir(m.result.out_dir)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with pytest.raises(RamielError, match=r"^nosuch: no such file; unknown model 'nosuch'"):
        ramiel.compile("nosuch")
    with pytest.raises(RamielError, match="nosuch.onnx"):
        ramiel.compile(str(tmp_path / "nosuch.onnx"))
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize(
    "content",
    [
        '{"latency_us": 1e308, "us_per_byte": 1e308}',  # overflowed into "edge (0, 1): ..."
        '{"latency_us": -1, "us_per_byte": 0.001}',
        '{"latency_us": 30, "us_per_byte": "fast"}',
        '{"latency_us": 30}',
    ],
)
def test_transfer_cost_file_values_name_the_file(content, tmp_path, capsys):
    """A transfer cost file with a value out of range is one error naming the file and the key
    (1e308 had passed the check and overflowed into an error about an edge of the graph; found
    by a fresh-user check)."""
    cal = tmp_path / "cal.json"
    cal.write_text(content)
    argv = ["compile", SQUEEZENET, "-o", str(tmp_path / "out"), "--transfer-cost", str(cal)]
    line = _error(driver, argv, capsys, 1)
    assert line.startswith(f"error: transfer cost file {cal}: '"), line
    assert "must be a number from 0 to" in line


def test_dynamic_batch_asked_for_and_not_given_is_a_warning(tmp_path, capsys):
    """--dynamic-batch on a model whose folded shapes fix the batch (a Reshape to the constant
    (1, 4)): the module keeps batch 1, and besides the note that says why, a warning on stderr
    says that what was asked for is not what was made (BERT's and ViT's exports had gone by
    with a note; found by a fresh-user check)."""
    g = helper.make_graph(
        [
            helper.make_node("Reshape", ["x", "shape"], ["r"]),
            helper.make_node("Relu", ["r"], ["y"]),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
        [numpy_helper.from_array(np.array([1, 4], np.int64), "shape")],
    )
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    out = tmp_path / "out"
    assert tool_status(driver.main, ["compile", str(path), "-o", str(out), "--dynamic-batch"]) == 0
    cap = capsys.readouterr()
    assert "note: the sequential module keeps batch size 1" in cap.out
    assert "warning: --dynamic-batch was asked for" in cap.err
    # by default (no --dynamic-batch) the fixed batch is only a note
    assert tool_status(driver.main, ["compile", str(path), "-o", str(tmp_path / "o2")]) == 0
    assert "warning" not in capsys.readouterr().err


def test_transfer_cost_file_of_another_backend_is_noted(tmp_path, capsys):
    """A transfer cost file 'ramiel calibrate' measured on the threads backend, given to a
    processes compile: a note says so (there was none; found by a fresh-user check)."""
    cal = tmp_path / "cal.json"
    cal.write_text('{"latency_us": 30, "us_per_byte": 0.001, "backend": "threads"}')
    argv = ["compile", SQUEEZENET, "-o", str(tmp_path / "out"), "--transfer-cost", str(cal)]
    assert tool_status(driver.main, [*argv, "--backend", "processes"]) == 0
    assert "was measured on the threads backend, this program runs on processes" in (
        capsys.readouterr().out
    )
    argv[3] = str(tmp_path / "out2")
    assert tool_status(driver.main, [*argv, "--backend", "threads"]) == 0
    assert "was measured on" not in capsys.readouterr().out
