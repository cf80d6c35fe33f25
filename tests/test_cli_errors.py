"""Bad inputs through ``ramiel compile``/``ramiel run`` and ``ramiel-translate --to-python``.

Every user error is exactly one ``error: ...`` line on stderr and exit status 1: no traceback,
no internal-error line. Most cases call the tools' ``main`` in-process (fast); two run the installed
entry points in a subprocess to show the same from a shell.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import ZOO_DIR, one_error_line, tool_status
from onnx import TensorProto, helper, numpy_helper

from ramiel.tools import driver, opt, translate

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

SQUEEZENET = os.path.join(ZOO_DIR, "light_squeezenet.onnx")


_one_error = one_error_line


def _run(tool, argv, capsys, status: int = 1) -> str:
    rc = tool_status(tool.main, argv)
    err = capsys.readouterr().err
    assert rc == status, err
    return _one_error(err)


@pytest.fixture(scope="module")
def unsupported_model(tmp_path_factory) -> str:
    """Two unsupported op types (three nodes, one with a newline in its name) after a Relu."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("Bernoulli", ["r"], ["b1"], name="coin\n1"),
        helper.make_node("Bernoulli", ["b1"], ["b2"], name="coin2"),
        helper.make_node("RandomNormalLike", ["b2"], ["y"], name="noise"),
    ]
    model = helper.make_model(
        helper.make_graph(nodes, "g", [x], [y]), opset_imports=[helper.make_opsetid("", 17)]
    )
    model.ir_version = 8
    path = str(tmp_path_factory.mktemp("unsupported") / "unsupported.onnx")
    onnx.save(model, path)
    return path


def test_not_onnx(tmp_path, capsys):
    bad = tmp_path / "model.onnx"
    bad.write_text("this is not a protobuf\n")
    line = _run(driver, ["compile", str(bad), "-o", str(tmp_path / "out")], capsys)
    assert "not a valid ONNX" in line


def test_missing_file(tmp_path, capsys):
    line = _run(driver, ["compile", str(tmp_path / "nope.onnx"), "-o", str(tmp_path)], capsys)
    assert "no such file" in line
    line = _run(driver, ["run", str(tmp_path / "nope.onnx")], capsys)
    assert "no such file" in line


def test_unsupported_ops_listed_at_once(unsupported_model, tmp_path, capsys):
    line = _run(driver, ["compile", unsupported_model, "-o", str(tmp_path / "out")], capsys)
    assert line.startswith("error: unsupported ONNX operator(s):")
    assert "Bernoulli (2 nodes 'coin\\n1', 'coin2'; opset 17)" in line
    assert "RandomNormalLike (node 'noise'; opset 17)" in line
    assert "Relu" not in line


@pytest.mark.parametrize(
    "flag", [["--clusters", "0"], ["--clusters", "-2"], ["--batch", "0"], ["--cores", "0"]]
)
def test_bad_counts(flag, tmp_path, capsys):
    """A bad value is argparse's error (status 2), before any work."""
    line = _run(driver, ["compile", SQUEEZENET, "-o", str(tmp_path / "out"), *flag], capsys, 2)
    assert f"argument {flag[0]}: must be from 1 to 1024" in line
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("torch", "is taken"),
        ("ParallelModel", "is taken"),
        ("F", "is taken"),
        ("1bad", "not a Python identifier"),
        ("a b", "not a Python identifier"),
        ("class", "is a Python keyword"),
        ("\uff54orch", "(Python reads it as 'torch')"),  # a full-width t: NFKC gives torch
        ("\uff4fps", "is taken"),
        ("adapt_threads", "is taken"),  # model_seq.py imports it (helper-30)
        ("ramiel", "is taken"),  # import ramiel.omp
    ],
)
def test_bad_class_name_is_an_argument_error_and_keeps_the_output(name, why, tmp_path, capsys):
    """A class name the generated code cannot use: argparse's error before any work, and an
    earlier compilation's files stay as they were (found by a fresh-user check: an internal
    error after model.py had been opened for writing, which left it empty)."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "model.py").write_text("# an earlier compilation\n")
    line = _run(driver, ["compile", SQUEEZENET, "-o", str(out), "--class-name", name], capsys, 2)
    assert "argument --class-name:" in line and why in line
    assert (out / "model.py").read_text() == "# an earlier compilation\n"
    import ramiel
    from ramiel.errors import RamielError

    with pytest.raises(RamielError, match="class_name"):
        ramiel.compile(SQUEEZENET, out_dir=str(tmp_path / "api"), class_name=name)


def test_run_bad_clusters(capsys):
    line = _run(driver, ["run", SQUEEZENET, "--clusters", "0"], capsys, 2)
    assert "argument --clusters: must be from 1 to 1024, got 0" in line


def test_dynamic_shape_without_binding(tmp_path, capsys):
    """A symbolic dimension other than the batch (dimension 0, which the compiler binds to 1
    for the parallel program and leaves free in the sequential module) must be bound."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "seq"])
    model = helper.make_model(
        helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y]),
        opset_imports=[helper.make_opsetid("", 17)],
    )
    path = str(tmp_path / "dyn.onnx")
    onnx.save(model, path)
    line = _run(driver, ["compile", path, "-o", str(tmp_path / "out")], capsys)
    assert "'seq'" in line and "--input-shape" in line
    rc = driver.main(["compile", path, "-o", str(tmp_path / "out"), "--input-shape", "x=1,3"])
    out = capsys.readouterr().out
    assert rc == 0 and "any batch size: x" in out and "note: batch dimension 'batch'" not in out


@pytest.fixture(scope="module")
def data_dependent_model(tmp_path_factory) -> str:
    """NonZero (then a Cast of its result) and a Reshape to a shape given as a graph input: the
    shapes of 'nz' and 'z' depend on the input data."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])
    s = helper.make_tensor_value_info("s", TensorProto.INT64, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, "n"])
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, ["a", "b"])
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("NonZero", ["r"], ["nz"], name="where nonzero"),
        helper.make_node("Cast", ["nz"], ["y"], to=TensorProto.FLOAT, name="to float"),
        helper.make_node("Reshape", ["r", "s"], ["z"], name="reshape"),
    ]
    model = helper.make_model(
        helper.make_graph(nodes, "g", [x, s], [y, z]), opset_imports=[helper.make_opsetid("", 17)]
    )
    path = str(tmp_path_factory.mktemp("data_dependent") / "data_dependent.onnx")
    onnx.save(model, path)
    return path


def _assert_data_dependent_message(message: str) -> None:
    assert "shape not static: it depends on the input data" in message
    assert "NonZero node 'where nonzero' (opset 17): result 'nz' has shape 2x?" in message
    assert "Reshape node 'reshape' (opset 17): result 'z' has shape ?x?" in message
    assert "Cast" not in message and "Relu" not in message  # only where static shapes end


def test_data_dependent_shape_cli(data_dependent_model, tmp_path, capsys):
    """A compile-time error naming op, node, opset and value, not a failure of the runner."""
    out = tmp_path / "out"
    line = _run(driver, ["compile", data_dependent_model, "-o", str(out)], capsys)
    _assert_data_dependent_message(line)
    assert not (out / "model.py").exists()
    line = _run(driver, ["run", data_dependent_model], capsys)
    _assert_data_dependent_message(line)


def test_data_dependent_shape_api(data_dependent_model):
    import ramiel
    from ramiel.errors import DataDependentShapeError

    with pytest.raises(DataDependentShapeError) as info:
        ramiel.compile(data_dependent_model, clusters=2)
    _assert_data_dependent_message(str(info.value))
    assert [item[:3] for item in info.value.items] == [
        ("NonZero", "where nonzero", 17),
        ("Reshape", "reshape", 17),
    ]


# ---------------------------------------------------------------------------------------------
# ramiel-translate --to-python
# ---------------------------------------------------------------------------------------------

TORCHPY_SYNTAX_ERROR = """builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
    "torchpy.return"() : () -> (
  }) : () -> ()
}
"""

TORCHPY_INVALID = """builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%x: tensor<2xf32>):
    %y = "torchpy.call"(%x) <{callee = "torch.relu", args = [0 : index, "1)\\nimport os\\n("]}> : (tensor<2xf32>) -> tensor<2xf32>
    "torchpy.return"(%y) : (tensor<2xf32>) -> ()
  }) : () -> ()
}
"""

ONNX_DIALECT = """builtin.module attributes {onnx.opset = 17 : i64} {
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = "onnx.Relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
}
"""


@pytest.mark.parametrize(
    ("text", "where"),
    [
        # a name defined nowhere
        (ONNX_DIALECT.replace('"onnx.Relu"(%x)', '"onnx.Relu"(%nope)'), "3:20"),
        # a value of an If's branch read after the If: not in scope there
        (
            """builtin.module attributes {onnx.opset = 17 : i64} {
func.func @main(%c: tensor<i1>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %y = "onnx.If"(%c) ({
    %nope = "onnx.Relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
    "onnx.Yield"(%nope) : (tensor<2xf32>) -> ()
  }, {
    "onnx.Yield"(%x) : (tensor<2xf32>) -> ()
  }) : (tensor<i1>) -> tensor<2xf32>
  %z = "onnx.Add"(%y, %nope) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %z : tensor<2xf32>
}
}
""",
            "9:23",
        ),
    ],
    ids=["nowhere", "out-of-scope"],
)
def test_opt_value_never_defined_is_located_at_its_use(text, where, tmp_path, capsys):
    """xDSL reports such values at the end of the file; ramiel-opt at the first use."""
    f = tmp_path / "undef.mlir"
    f.write_text(text)
    line = _run(opt, [str(f)], capsys)
    assert line == (
        f"{f}:{where}: error: value(s) used but never defined: %nope (in this region or one "
        "that encloses it)"
    )


def test_translate_syntax_error(tmp_path, capsys):
    f = tmp_path / "bad.mlir"
    f.write_text(TORCHPY_SYNTAX_ERROR)
    line = _run(translate, ["--to-python", str(f)], capsys)
    assert line.startswith(f"{f}:4:3: error: ")  # MLIR's form, as ramiel-opt prints it


def test_translate_invalid_ir(tmp_path, capsys):
    f = tmp_path / "invalid.mlir"
    f.write_text(TORCHPY_INVALID)
    line = _run(translate, ["--to-python", str(f)], capsys)
    assert line.startswith(f"{f}:4:5: error: torchpy.call: literal argument")
    assert "is not a Python expression" in line


def test_translate_not_torchpy(tmp_path, capsys):
    f = tmp_path / "onnx.mlir"
    f.write_text(ONNX_DIALECT)
    line = _run(translate, ["--to-python", str(f)], capsys)
    assert "no torchpy.func (run --lower-to-torchpy first)" in line


def test_translate_missing_file(tmp_path, capsys):
    line = _run(translate, ["--to-python", str(tmp_path / "nope.mlir")], capsys)
    assert line == f"error: {tmp_path / 'nope.mlir'}: no such file"


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        # xDSL's pipeline lexer knows no '.': the value must be quoted (the flag form
        # --estimate-cost{profile=a.json} quotes it itself)
        ("estimate-cost{profile=a.json}", "unknown token at column 24 (quote option values"),
        ("dce,,", "expected pass name here at column 5"),
        ("dce{", "expected argument name here at column 5"),
        # the nested MLIR form belongs to --pass-pipeline (the quoting hint was no help here)
        ("builtin.module(func.func(dce)", "unknown token at column 8 (-p takes a flat list"),
    ],
)
def test_opt_malformed_pipeline(spec, reason, tmp_path, capsys):
    """xDSL raises ArgSpecParseError, a BaseException: still one line, exit status 1."""
    f = tmp_path / "onnx.mlir"
    f.write_text(ONNX_DIALECT)
    line = _run(opt, ["-p", spec, str(f)], capsys)
    assert line.startswith(f"error: bad pass pipeline '{spec}': {reason}")


# ---------------------------------------------------------------------------------------------
# The installed entry points, in a shell
# ---------------------------------------------------------------------------------------------


def _tool(name: str) -> str:
    return os.path.join(os.path.dirname(sys.executable), name)


def test_entry_points_in_subprocess(tmp_path, unsupported_model):
    f = tmp_path / "bad.mlir"
    f.write_text(TORCHPY_SYNTAX_ERROR)
    env = dict(os.environ, ORT_DISABLE_TELEMETRY="1")
    env.pop("RAMIEL_DEBUG", None)
    for cmd in (
        [_tool("ramiel-translate"), "--to-python", str(f)],
        [_tool("ramiel"), "compile", unsupported_model, "-o", str(tmp_path / "out")],
    ):
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
        assert p.returncode == 1, p.stderr
        assert p.stdout == ""
        _one_error(p.stderr)


def test_generated_modules_end_quietly_when_stdout_closes(tmp_path):
    """``python model.py | head -1``: once the reader of stdout is gone, the generated modules
    (parallel and sequential) end with status 141 and print no ``BrokenPipeError`` traceback."""
    from ramiel.compiler import CompileOptions, compile_model

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    nodes = [helper.make_node("Relu", ["x"], ["y"])]
    model = helper.make_model(
        helper.make_graph(nodes, "g", [x], [y]), opset_imports=[helper.make_opsetid("", 17)]
    )
    res = compile_model(model, str(tmp_path / "out"), CompileOptions(clusters=2))
    env = dict(os.environ, ORT_DISABLE_TELEMETRY="1")
    for path in (res.parallel_path, res.sequential_path):
        r, w = os.pipe()
        os.close(r)  # the reader is gone before the module writes anything
        try:
            p = subprocess.run(
                [sys.executable, path],
                stdout=w,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
                timeout=120,
            )
        finally:
            os.close(w)
        assert p.returncode == 141, p.stderr
        assert p.stderr == "", p.stderr


def test_to_python_refuses_to_overwrite_the_weights_the_ir_reads(tmp_path, capsys):
    """The front-end recipe in one directory: ``--import-onnx model.onnx -o model.mlir`` writes
    model.safetensors, which the IR reads; ``--to-python ... -o model.py`` would write the
    module's weights to the same file under other names and break the IR. It refuses, in one
    line; another name works."""
    import numpy as np

    w = numpy_helper.from_array(np.arange(64, dtype=np.float32).reshape(8, 8), "w")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g", [x], [y], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, str(tmp_path / "model.onnx"))
    d = str(tmp_path)
    assert (
        tool_status(translate.main, ["--import-onnx", f"{d}/model.onnx", "-o", f"{d}/model.mlir"])
        == 0
    )
    assert (
        tool_status(opt.main, [f"{d}/model.mlir", "--lower-to-torchpy", "-o", f"{d}/tp.mlir"]) == 0
    )
    capsys.readouterr()
    rc = tool_status(translate.main, ["--to-python", f"{d}/tp.mlir", "-o", f"{d}/model.py"])
    err = capsys.readouterr().err
    assert rc == 1
    assert _one_error(err).startswith(f"error: the weights file {d}/model.safetensors is the one")
    assert not os.path.exists(f"{d}/model.py")
    os.makedirs(f"{d}/out")
    assert (
        tool_status(translate.main, ["--to-python", f"{d}/tp.mlir", "-o", f"{d}/out/model.py"]) == 0
    )
    assert os.path.exists(f"{d}/out/model.safetensors")


@pytest.mark.parametrize("tool", ["translate", "opt"])
def test_python_output_named_like_its_weights_is_refused(tool, tmp_path, capsys):
    """``--to-python tp.mlir -o out.safetensors`` (and ``ramiel-opt -t python``): the weights go
    beside -o, named after it, so to -o itself; the source was written over them, exit 0 (a
    fresh-user check). One error line, nothing written; ``--weights`` elsewhere works."""
    w = numpy_helper.from_array(np.arange(64, dtype=np.float32).reshape(8, 8), "w")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g", [x], [y], [w])
    onnx.save(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), tmp_path / "m.onnx"
    )
    d = str(tmp_path)
    assert tool_status(translate.main, ["--import-onnx", f"{d}/m.onnx", "-o", f"{d}/m.mlir"]) == 0
    assert tool_status(opt.main, [f"{d}/m.mlir", "--lower-to-torchpy", "-o", f"{d}/tp.mlir"]) == 0
    capsys.readouterr()
    out = f"{d}/out.safetensors"
    if tool == "translate":
        main, argv = translate.main, ["--to-python", f"{d}/tp.mlir", "-o", out]
    else:
        main, argv = opt.main, [f"{d}/tp.mlir", "-t", "python", "-o", out]
    assert tool_status(main, argv) == 1
    line = _one_error(capsys.readouterr().err)
    assert line.startswith(f"error: -o {out} is where the module's weights go"), line
    assert not os.path.exists(out)
    assert tool_status(main, [*argv, "--weights", f"{d}/w.safetensors"]) == 0
    with open(out, encoding="utf-8") as f:
        assert f.read().startswith('"""')


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"a": 1}', "is not a ramiel bench results file"),
        ("[1, 2]", "is not a ramiel bench results file"),
        ("nope", "is not JSON"),
    ],
)
def test_bench_render_of_another_file_names_it(text, why, tmp_path, capsys):
    """``ramiel bench --render`` of a JSON that is not a bench results file: one error naming
    the file (found by a fresh-user check: an internal error, KeyError 'environment')."""
    path = tmp_path / "other.json"
    path.write_text(text)
    line = _run(driver, ["bench", "--render", str(path), "--out", str(tmp_path / "b")], capsys)
    assert f"{path} {why}" in line and "internal error" not in line


@pytest.mark.parametrize("flag", ["--json", "--markdown"])
def test_bench_report_paths_are_checked_before_measuring(flag, tmp_path, capsys):
    """A directory, or a path under a file, for --json or --markdown: an argument error at once,
    not after the whole benchmark (found by a fresh-user check)."""
    afile = tmp_path / "afile"
    afile.write_text("")
    for where, why in ((tmp_path, "is a directory"), (afile / "x", "is not a directory")):
        line = _run(driver, ["bench", "--quick", flag, str(where), "--out", str(tmp_path / "b")],
                    capsys, 2)  # fmt: skip
        assert f"argument {flag}:" in line and why in line
    assert not (tmp_path / "b").exists()  # nothing measured


def test_bench_bad_variants_and_out_file_are_argument_errors(tmp_path, capsys):
    line = _run(driver, ["bench", "--quick", "--variants", "bogus"], capsys, 2)
    assert "argument --variants: unknown variant(s) bogus; known:" in line
    # 'none' is known, but alone (the message had called it unknown; a fresh-user check)
    line = _run(driver, ["bench", "--quick", "--variants", "none,nofold"], capsys, 2)
    assert (
        line == "error: argument --variants: 'none' (no variant) goes alone, not with other "
        "variants"
    )
    afile = tmp_path / "afile"
    afile.write_text("")
    line = _run(driver, ["bench", "--quick", "--out", str(afile)], capsys, 2)
    assert f"argument --out: {afile} is a file, not a directory" in line


@pytest.mark.parametrize("name", ["model.mlir", "weights.safetensors", "model.py"])
def test_the_model_is_never_overwritten_by_the_output(name, tmp_path, capsys):
    """A model inside the output directory under a name the compiler writes: an error, and the
    model stays as it was (found by a fresh-user check: it was overwritten)."""
    model = tmp_path / name
    with open(SQUEEZENET, "rb") as f:
        data = f.read()
    model.write_bytes(data)
    line = _run(driver, ["compile", str(model), "-o", str(tmp_path)], capsys)
    assert f"is where the compiler writes its {name}" in line
    assert model.read_bytes() == data


@pytest.mark.parametrize(
    "files",
    [
        {"model.py": "print('my own script')\n"},
        {"model_seq.py": "x = 1\n", "schedule.txt": "my notes\n"},
        {"weights.safetensors": "not Ramiel's"},
        {"model.mlir": "builtin.module {\n}\n"},
    ],
    ids=["model.py", "model_seq.py+schedule", "weights-alone", "hand-written-ir"],
)
def test_files_ramiel_did_not_write_are_never_replaced(files, tmp_path, capsys):
    """An output directory holding a user's own file under a name the compiler writes: one
    error naming it, and nothing in the directory changes (found by a fresh-user check: 'ramiel
    compile -o DIR' replaced a model.py of the user's). An earlier output is replaced as
    before."""
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    line = _run(driver, ["compile", SQUEEZENET, "-o", str(tmp_path)], capsys)
    assert f"output directory {tmp_path} holds " in line
    assert all(name in line for name in files), line
    assert "which Ramiel did not write" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(files)
    for name, text in files.items():
        assert (tmp_path / name).read_text() == text


def test_links_in_the_output_directory_are_not_written_through(tmp_path, capsys):
    """A symbolic link under an output name (here to another directory's output) is refused:
    writing through it replaced the other directory's files (found by a fresh-user check)."""
    other = tmp_path / "other"
    assert driver.main(["compile", SQUEEZENET, "-o", str(other)]) == 0
    before = {p.name: p.read_bytes() for p in other.iterdir()}
    out = tmp_path / "out"
    out.mkdir()
    (out / "model.py").symlink_to(other / "model.py")
    line = _run(driver, ["compile", SQUEEZENET, "-o", str(out)], capsys)
    assert "model.py (a symbolic link)" in line
    assert {p.name: p.read_bytes() for p in other.iterdir()} == before


def test_the_import_scratch_file_never_takes_a_users_name(tmp_path, capsys):
    """The compiler's scratch file has a name of its own each time: a file of the user's named
    like an older one stays (it was read as weights, an internal error, then deleted)."""
    (tmp_path / ".ramiel-import.safetensors").write_text("data")
    assert driver.main(["compile", SQUEEZENET, "-o", str(tmp_path)]) == 0
    capsys.readouterr()
    assert (tmp_path / ".ramiel-import.safetensors").read_text() == "data"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".ramiel-import-")]


def test_an_earlier_output_is_replaced(tmp_path, capsys):
    out = tmp_path / "out"
    for _ in range(2):
        assert driver.main(["compile", SQUEEZENET, "-o", str(out)]) == 0
    capsys.readouterr()
    assert "generated by Ramiel" in (out / "model.py").read_text()


SMALL_IR = os.path.join(
    os.path.dirname(__file__), "..", "lit_tests", "tools", "Inputs", "small.mlir"
)


def test_ramiel_opt_writes_its_output_only_once_it_succeeded(tmp_path, capsys):
    """-o FILE was opened (emptied) before the input was read: 'ramiel-opt a.mlir -o a.mlir'
    destroyed a.mlir and any failed run emptied an existing output (found by a fresh-user
    check). In place now works as with mlir-opt, and a failure leaves the output as it was."""
    a = tmp_path / "a.mlir"
    shutil.copy(SMALL_IR, a)
    assert opt.main([str(a), "--dce"]) == 0
    expected = capsys.readouterr().out
    assert opt.main([str(a), "--dce", "-o", str(a)]) == 0
    assert a.read_text() == expected
    keep = tmp_path / "keep.mlir"
    keep.write_text("// mine\n")
    bad = tmp_path / "bad.mlir"
    bad.write_text("garbage\n")
    assert tool_status(opt.main, [str(bad), "-o", str(keep)]) == 1
    capsys.readouterr()
    assert keep.read_text() == "// mine\n"
    assert [p.name for p in tmp_path.iterdir() if ".tmp" in p.name] == []
    assert tool_status(opt.main, [str(a), "-o", ""]) == 1
    assert "argument -o: the path is empty" in one_error_line(capsys.readouterr().err)


def test_ramiel_translate_refuses_to_write_over_its_input_or_one_output_over_another(
    tmp_path, capsys
):
    """--import-onnx m.onnx -o m.onnx replaced the model by IR text, -o a.mlir --weights a.mlir
    wrote the IR over its own weights; both exited 0 (found by a fresh-user check)."""
    model = tmp_path / "m.onnx"
    shutil.copy(os.path.join(ZOO_DIR, "light_squeezenet.onnx"), model)
    before = model.read_bytes()
    cases = [
        (["--import-onnx", str(model), "-o", str(model)], "the input and -o are the same file"),
        (
            ["--import-onnx", str(model), "-o", str(tmp_path / "a.mlir"), "--weights",
             str(tmp_path / "a.mlir")],
            "-o and --weights are the same file",
        ),
    ]  # fmt: skip
    for argv, message in cases:
        assert tool_status(translate.main, argv) == 1
        assert message in one_error_line(capsys.readouterr().err)
    assert model.read_bytes() == before and not (tmp_path / "a.mlir").exists()


def test_a_compiled_model_mlir_prints_back_byte_for_byte(tmp_path):
    """ramiel-opt printed a blank line after the module, the compiler's model.mlir one newline:
    the first print -> parse -> print of a model.mlir was not byte-identical (found by a
    fresh-user check)."""
    from ramiel.compiler import CompileOptions, compile_model

    res = compile_model(
        os.path.join(ZOO_DIR, "light_squeezenet.onnx"), str(tmp_path), CompileOptions(clusters=2)
    )
    again = tmp_path / "again.mlir"
    assert opt.main([res.ir_path, "-o", str(again)]) == 0
    assert again.read_bytes() == open(res.ir_path, "rb").read()  # noqa: SIM115


def test_the_ir_is_never_written_over_its_weights_file(tmp_path, capsys):
    """'ramiel-opt m.mlir -o m.safetensors' replaced the weights the IR reads by the IR, and
    'ramiel-translate --import-onnx m.onnx -o x.safetensors' wrote the IR where its weights were
    to go; both exited 0 and the weights were gone (found by a fresh-user check)."""
    ir, weights = tmp_path / "m.mlir", tmp_path / "m.safetensors"
    model = os.path.join(ZOO_DIR, "light_squeezenet.onnx")
    assert translate.main(["--import-onnx", model, "-o", str(ir)]) == 0
    before = weights.read_bytes()
    assert tool_status(opt.main, [str(ir), "--dce", "-o", str(weights)]) == 1
    assert "is the weights file the IR reads" in one_error_line(capsys.readouterr().err)
    assert weights.read_bytes() == before
    x = tmp_path / "x.safetensors"
    assert tool_status(translate.main, ["--import-onnx", model, "-o", str(x)]) == 1
    assert "the IR and its weights would be one file" in one_error_line(capsys.readouterr().err)
    assert not x.exists()


def test_ramiel_run_checks_a_bool_output(tmp_path, capsys):
    """A model with a bool output was an internal error in ramiel run (numpy cannot subtract
    booleans) after its float outputs were checked (found by a fresh-user check)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    b = helper.make_tensor_value_info("b", TensorProto.BOOL, [4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])
    nodes = [
        helper.make_node("Greater", ["x", "zero"], ["b"]),
        helper.make_node("Relu", ["x"], ["y"]),
    ]
    zero = numpy_helper.from_array(np.zeros((), np.float32), "zero")
    g = helper.make_graph(nodes, "g", [x], [b, y], [zero])
    path = tmp_path / "bool.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), path)
    assert driver.main(["run", str(path), "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "output b: max error vs onnxruntime" in out and "check against onnxruntime: OK" in out


def test_ramiel_run_names_the_model_file_in_the_code(tmp_path, capsys):
    """``ramiel run m.onnx -o DIR``: the generated modules say which file they come from (they
    said "an in-memory ONNX model"; found by a fresh-user check)."""
    out = tmp_path / "o"
    assert driver.main(["run", SQUEEZENET, "-o", str(out), "--repeat", "1"]) == 0
    capsys.readouterr()
    for name in ("model.py", "model_seq.py"):
        assert "generated by Ramiel from light_squeezenet.onnx" in (out / name).read_text()


@pytest.mark.parametrize("command", ["compile", "tune"])
def test_a_failed_command_leaves_no_directory_it_made(command, tmp_path, capsys):
    """An error after the output directory was made (here the ONNX checker's) removes the
    empty directory this command created, and keeps one that was there (a fresh-user check
    found empty directories left behind)."""
    bad = tmp_path / "bad.onnx"
    g = helper.make_graph(
        [helper.make_node("NonZero", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, None)],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, str(bad))
    new = tmp_path / "new"
    _run(driver, [command, str(bad), "-o", str(new)], capsys)
    assert not new.exists()
    kept = tmp_path / "kept"
    kept.mkdir()
    _run(driver, [command, str(bad), "-o", str(kept)], capsys)
    assert kept.is_dir()


def test_compiling_into_a_tune_directory_notes_its_files(tmp_path, capsys):
    """The tune.json, profile.json and candidates/ of an earlier ramiel tune stay, with a note
    that they describe another program (a fresh-user check found them silently kept)."""
    out = tmp_path / "t"
    assert driver.main(["compile", SQUEEZENET, "-o", str(out)]) == 0
    (out / "tune.json").write_text('{\n  "choice": "1x2"\n}\n')
    (out / "candidates").mkdir()
    capsys.readouterr()
    assert driver.main(["compile", SQUEEZENET, "-o", str(out)]) == 0
    text = capsys.readouterr()
    assert "tune.json, candidates in " in text.out + text.err
    assert "are from an earlier 'ramiel tune'" in text.out + text.err
    assert (out / "tune.json").exists()


@pytest.mark.parametrize("flag", ["--transfer-cost", "--profile"])
def test_a_json_option_file_that_is_not_text_is_one_error(flag, tmp_path, capsys):
    """A ``--transfer-cost`` (or ``--profile``) file that is not UTF-8 text: one error naming
    it (found by a fresh-user check: an internal error, UnicodeDecodeError)."""
    path = tmp_path / "g.json"
    path.write_bytes(b"garbage\x00\xff")
    line = _run(driver, ["compile", SQUEEZENET, "-o", str(tmp_path / "out"), flag, str(path)],
                capsys)  # fmt: skip
    assert str(path) in line and "internal error" not in line, line


@pytest.mark.parametrize(("weights", "shape", "noted"), [(True, [4], True), (False, [4], False),
                                                         (True, [1], False)])  # fmt: skip
def test_run_notes_constant_outputs_only_where_random_weights_would_help(
    weights, shape, noted, tmp_path, capsys
):
    """``ramiel run``'s note that every output element is equal (the zoo models' constant
    weights: rerun with --random-weights) is for a model with weights and outputs of more than
    one element (found by a fresh-user check: it came for a weightless model and a scalar)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)
    if weights:
        w = numpy_helper.from_array(np.zeros(shape, np.float32), "W")
        nodes, inits = [helper.make_node("Mul", ["x", "W"], ["y"])], [w]
    else:
        nodes, inits = [helper.make_node("Mul", ["x", "x"], ["m"]), helper.make_node(
            "Sub", ["m", "m"], ["y"])], []  # fmt: skip
    g = helper.make_graph(nodes, "g", [x], [y], inits)
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), path)
    rc = tool_status(driver.main, ["run", str(path), "--clusters", "1", "--repeat", "1"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert ("every output element is equal" in out) == noted, out


def _transpose_matmul(tmp_path, name: str, base: float) -> str:
    """IR of ``x @ W.T`` (``W`` a 4x8 initializer from ``base``), imported to ``<name>.mlir``."""
    w = numpy_helper.from_array((np.arange(32, dtype=np.float32) + base).reshape(4, 8), "W")
    graph = helper.make_graph(
        [
            helper.make_node("Transpose", ["W"], ["Wt"]),
            helper.make_node("MatMul", ["x", "Wt"], ["y"]),
        ],
        name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
        [w],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    onnx.save(model, tmp_path / f"{name}.onnx")
    out = str(tmp_path / f"{name}.mlir")
    assert (
        tool_status(translate.main, ["--import-onnx", str(tmp_path / f"{name}.onnx"), "-o", out])
        == 0
    )
    return out


def test_split_chunks_never_share_a_new_weights_file(tmp_path, capsys):
    """``--split-input-file --constant-fold -o out.mlir``, two chunks that each fold a weight
    under the same key: each chunk's weights went to out.safetensors, the last chunk's won, and
    the first chunk's IR read them, exit 0 (a fresh-user check). Now one error line naming the
    file; one chunk alone still works."""
    a, b = _transpose_matmul(tmp_path, "ta", 1.0), _transpose_matmul(tmp_path, "tb", 100.0)
    both = tmp_path / "ab.mlir"
    both.write_text(Path(a).read_text() + "// -----\n" + Path(b).read_text())
    capsys.readouterr()
    argv = ["--split-input-file", str(both), "--constant-fold", "--dce", "-o"]
    assert tool_status(opt.main, [*argv, str(tmp_path / "out.mlir")]) == 1
    line = _one_error(capsys.readouterr().err)
    assert line.startswith("error: --split-input-file: this chunk's passes added weight tensors")
    assert str(tmp_path / "out.safetensors") in line and not (tmp_path / "out.mlir").exists()
    one = ["--split-input-file", a, "--constant-fold", "--dce", "-o", str(tmp_path / "a.mlir")]
    assert tool_status(opt.main, one) == 0 and (tmp_path / "a.safetensors").exists()


def test_split_chunks_are_not_printed_as_one_python_file(tmp_path, capsys):
    """``--split-input-file -t python``: the chunks' modules joined by ``// -----`` were written
    as one .py that Python cannot read (a fresh-user check); one error line instead."""
    a = _transpose_matmul(tmp_path, "ta", 1.0)
    capsys.readouterr()
    argv = [a, "--split-input-file", "--lower-to-torchpy", "-t", "python"]
    assert tool_status(opt.main, [*argv, "-o", str(tmp_path / "m.py")]) == 1
    assert "with --split-input-file the chunks' modules would be joined" in _one_error(
        capsys.readouterr().err
    )
    assert not (tmp_path / "m.py").exists()


def test_state_names_may_hold_an_equals_sign():
    """``--state 'h=in=h=out'``: the split at the '=' that leaves an input and an output (it
    split at the first one, so no spelling named ``h=in`` and ``h=out``; a fresh-user check);
    a pair that fits no split is still one error naming the inputs and outputs."""
    import torch

    from ramiel.errors import RamielError
    from ramiel.tools.driver import state_pairs

    class Model:
        input_specs = {"h=in": ((1, 4), torch.float32), "x": ((1, 4), torch.float32)}

        def output_specs(self):
            return {"h=out": ((1, 4), torch.float32), "y": ((1, 2), torch.float32)}

    assert state_pairs(Model(), ["h=in=h=out"]) == [("h=in", "h=out")]
    assert state_pairs(Model(), ["x=h=out"]) == [("x", "h=out")]
    with pytest.raises(RamielError, match=r"--state 'h=in=y=z': expected IN=OUT"):
        state_pairs(Model(), ["h=in=y=z"])


def test_run_says_when_onnxruntime_fails_on_its_random_inputs(tmp_path, capsys):
    """``ids + 1`` indexes a table of 6 rows: random ids up to 9 run out of it in onnxruntime.
    The error says the inputs were Ramiel's random ones (it had blamed the model alone; a
    fresh-user check) and keeps onnxruntime's reason."""
    from onnx import numpy_helper

    vi = helper.make_tensor_value_info
    inits = [
        numpy_helper.from_array(np.ones((6, 2), np.float32), "table"),
        numpy_helper.from_array(np.array(1, np.int64), "one"),
    ]
    nodes = [
        helper.make_node("Add", ["ids", "one"], ["shifted"]),
        helper.make_node("Gather", ["table", "shifted"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "g", [vi("ids", TensorProto.INT64, [8])], [vi("y", TensorProto.FLOAT, [8, 2])], inits
    )
    path = tmp_path / "shifted.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    line = _run(driver, ["run", str(path)], capsys)
    assert "onnxruntime fails to run the model on Ramiel's random inputs" in line, line
    assert "out of" in line and "[ONNXRuntimeError]" not in line, line


@pytest.mark.parametrize(
    "tool, argv, status, first, second",
    [
        (
            driver,
            ["run", SQUEEZENET, "--inputs", "a.npz", "--inputs", "b.npz"],
            2,
            "a.npz",
            "b.npz",
        ),
        (driver, ["compile", SQUEEZENET, "-o", "a", "--output", "b"], 2, "a", "b"),
        (translate, ["--import-onnx", SQUEEZENET, "-o", "a.mlir", "-o", "b.mlir"], 2, "a", "b"),
        (opt, ["in.mlir", "--dce", "-o", "x.mlir", "-o", "y.mlir"], 1, "x.mlir", "y.mlir"),
    ],
)
def test_an_option_of_one_value_given_twice_is_an_error(
    tool, argv, status, first, second, tmp_path, capsys, monkeypatch
):
    """``--inputs a.npz --inputs b.npz`` had silently checked on b.npz only (argparse keeps the
    last); mlir-opt refuses a repeated option: so do Ramiel's tools, before any work."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "in.mlir").write_text("builtin.module {}\n")
    err = _run(tool, argv, capsys, status=status)
    assert "given twice" in err and first in err and second in err
    assert sorted(os.listdir(tmp_path)) == ["in.mlir"]  # nothing written


def test_options_that_add_up_may_repeat(tmp_path, capsys):
    """ramiel-opt's ``-p`` pipelines still repeat (they add up, in order: split_pass_flags)."""
    src = tmp_path / "in.mlir"
    translate_rc = tool_status(translate.main, ["--import-onnx", SQUEEZENET, "-o", str(src)])
    assert translate_rc == 0, capsys.readouterr().err
    out = tmp_path / "out.mlir"
    rc = tool_status(opt.main, [str(src), "-p", "dce", "-p", "constant-fold", "-o", str(out)])
    assert rc == 0, capsys.readouterr().err
    assert out.read_text().startswith("builtin.module")


def test_translate_refuses_one_input_bound_to_two_shapes(tmp_path, capsys):
    """``ramiel-translate --input-shape x=1,4 --input-shape x=2,4`` had silently taken (2, 4);
    the ``ramiel`` commands refused it (found by a fresh-user check)."""
    vi = helper.make_tensor_value_info
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "g",
        [vi("x", TensorProto.FLOAT, ["n", 4])],
        [vi("y", TensorProto.FLOAT, ["n", 4])],
    )
    path = tmp_path / "dyn.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    out = tmp_path / "a.mlir"
    argv = ["--import-onnx", str(path), "-o", str(out), "--input-shape", "x=1,4"]
    err = _run(translate, [*argv, "--input-shape", "x=2,4"], capsys)
    assert "--input-shape binds 'x' twice ((1, 4) and (2, 4))" in err and not out.exists()
    assert tool_status(translate.main, [*argv, "--input-shape", "x=1,4"]) == 0
    assert "tensor<1x4xf32>" in out.read_text()
