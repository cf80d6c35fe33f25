"""``python model.py`` / ``python model_seq.py`` and the runtime's entry points at their edges:
every mistake a user can make is one ``error:`` line (or a usage error), never a traceback.

Found by a fresh-user check: unwritable ``--outputs``, a damaged weights file, wrong input shapes
to the sequential module (also in ``--serve``), stdout or stdin closed or full, non-finite
``--timeout``, ``threads_per_worker`` of the wrong type, a ``cores`` that is not an int.
"""

from __future__ import annotations

import io
import os
import shutil
import stat
import sys
from pathlib import Path

import pytest
import torch
from conftest import gather_model
from onnx import TensorProto, helper
from safetensors.torch import load_file, save_file

from ramiel.compiler import CompileOptions, compile_model, generated_class
from ramiel.errors import RamielError
from ramiel.runtime import entry, start
from ramiel.runtime.program import ProgramError, import_from_path

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")


@pytest.fixture(scope="module")
def out(tmp_path_factory):  # type: ignore[no-untyped-def]
    """A small model compiled once for 2 clusters: its result, parallel and sequential class."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    nodes = [
        helper.make_node("Relu", ["x"], ["a"]),
        helper.make_node("Sigmoid", ["x"], ["b"]),
        helper.make_node("Add", ["a", "b"], ["y"]),
    ]
    model = helper.make_model(
        helper.make_graph(nodes, "g", [x], [y]), opset_imports=[helper.make_opsetid("", 17)]
    )
    d = tmp_path_factory.mktemp("edges")
    res = compile_model(model, str(d / "out"), CompileOptions(clusters=2))
    par = generated_class(import_from_path("edges_par", res.parallel_path))
    seq = generated_class(import_from_path("edges_seq", res.sequential_path))
    return res, par, seq


def _run(fn, capsys) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    try:
        fn()
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    cap = capsys.readouterr()
    assert "Traceback" not in cap.err, cap.err
    return code, cap.out, cap.err


def _main(kind, res, par, seq, argv):  # type: ignore[no-untyped-def]
    if kind == "parallel":
        return lambda: entry.main(par, res.parallel_path, argv=argv)
    return lambda: entry.main_sequential(seq, res.sequential_path, argv=argv)


@pytest.mark.parametrize("kind", ["parallel", "sequential"])
@pytest.mark.parametrize("where", ["/sys/x.safetensors", "/nonexistent/dir/x.safetensors"])
def test_unwritable_outputs_is_one_line(kind, where, out, capsys):
    code, _, err = _run(_main(kind, *out, ["--outputs", where]), capsys)
    assert code == 1 and err.startswith("error: ") and err.count("\n") == 1, err
    assert where in err


@pytest.mark.parametrize("kind", ["parallel", "sequential"])
def test_damaged_weights_file_is_one_line(kind, out, tmp_path, capsys):
    res, par, seq = out
    d = tmp_path / "copy"
    shutil.copytree(res.out_dir, d)
    with open(d / os.path.basename(res.weights_path), "wb") as f:
        f.write(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json")  # a header that does not parse
    name = "model.py" if kind == "parallel" else "model_seq.py"
    cls = generated_class(import_from_path(f"edges_damaged_{kind}", str(d / name)))
    if kind == "parallel":
        fn = lambda: entry.main(cls, str(d / name), argv=[])  # noqa: E731
    else:
        fn = lambda: entry.main_sequential(cls, str(d / name), argv=[])  # noqa: E731
    code, _, err = _run(fn, capsys)
    assert code == 1 and err.startswith("error: ") and err.count("\n") == 1, err


def test_sequential_module_checks_its_inputs(out, tmp_path, capsys):
    res, _, seq = out
    bad = tmp_path / "bad.safetensors"
    save_file({"x": torch.zeros(3, 2)}, str(bad))
    code, _, err = _run(_main("sequential", *out, ["--inputs", str(bad)]), capsys)
    assert code == 1
    assert err == "error: input 'x': expected (2, 3) float32, got (3, 2) float32\n"
    # --serve answers the bad request and goes on with the next one
    good = tmp_path / "good.safetensors"
    save_file({"x": torch.ones(2, 3)}, str(good))
    f64 = tmp_path / "f64.safetensors"
    save_file({"x": torch.ones(2, 3, dtype=torch.float64)}, str(f64))
    requests = f"{bad}\n{f64}\n{good} {tmp_path / 'o.safetensors'}\n"
    import io

    answers = io.StringIO()
    infer_status = entry.serve(
        lambda feeds: _seq_infer(seq, res, feeds), seq.INPUTS, io.StringIO(requests), answers
    )
    lines = answers.getvalue().splitlines()
    assert infer_status == 0
    assert lines[0].startswith("error: input 'x': expected (2, 3) float32, got (3, 2)")
    assert lines[1].startswith("error: input 'x': expected (2, 3) float32, got (2, 3) float64")
    assert lines[2].startswith("ok ")


def _seq_infer(seq, res, feeds):  # type: ignore[no-untyped-def]
    entry.check_sequential_inputs(feeds, seq.INPUTS)
    m = seq.from_safetensors(res.weights_path)
    return {"y": m(feeds["x"])}


def test_serve_answers_an_unwritable_output(out, tmp_path):
    import io

    _, _, seq = out
    good = tmp_path / "good.safetensors"
    save_file({"x": torch.ones(2, 3)}, str(good))
    answers = io.StringIO()
    status = entry.serve(
        lambda feeds: {"y": feeds["x"]},
        seq.INPUTS,
        io.StringIO(f"{good} /sys/o.safetensors\n{good} {tmp_path / 'o.safetensors'}\n"),
        answers,
    )
    first, second = answers.getvalue().splitlines()
    assert status == 0 and first.startswith("error: outputs file /sys/o.safetensors")
    assert second.startswith("ok ")


@pytest.mark.parametrize("kind", ["parallel", "sequential"])
def test_stdout_or_stdin_closed(kind, out, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdout", None)
    code, _, err = _run(_main(kind, *out, []), capsys)
    assert code == 0 and err == ""
    monkeypatch.setattr(sys, "stdin", None)
    code, _, err = _run(_main(kind, *out, ["--serve"]), capsys)
    assert code == 0 and err == ""


class _FullFile:
    """A stdout on a full disk (``> /dev/full``): every write fails with ENOSPC."""

    def write(self, text: str) -> int:
        raise OSError(28, "No space left on device")

    def flush(self) -> None:
        raise OSError(28, "No space left on device")


@pytest.mark.parametrize("kind", ["parallel", "sequential"])
def test_stdout_full_is_one_line(kind, out, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdout", _FullFile())
    code, _, err = _run(_main(kind, *out, []), capsys)
    assert code == 1 and err == "error: cannot write to stdout: No space left on device\n", err


@pytest.mark.parametrize("value", ["inf", "nan", "0", "-1"])
def test_timeout_must_be_finite_and_positive(value, out, capsys):
    code, _, err = _run(_main("parallel", *out, ["--timeout", value]), capsys)
    assert code == 2 and "argument --timeout: must be a positive number" in err


@pytest.mark.parametrize("bad", [True, 2.5, "2", 0])
def test_threads_per_worker_of_the_wrong_type(bad, out):
    res, par, _ = out
    with pytest.raises(ProgramError, match="threads_per_worker must be an int from 1 to 1024"):
        par.from_safetensors(threads_per_worker=bad)
    with pytest.raises(RamielError, match="threads_per_worker must be an int from 1 to 1024"):
        start(par.PROGRAM, res.weights_path, threads_per_worker=bad)
    with pytest.raises(RamielError, match="must be an int from 1 to 1024"):
        CompileOptions(threads_per_worker=bad).check()


def test_a_cores_that_is_not_an_int_is_reported_at_start(out):
    """``cores="8"`` hand-edited into model.py: repr and planning fall back to 1 thread, and the
    first call says what is wrong (Program.validate), not a TypeError."""
    res, par, _ = out
    par.PROGRAM.cores, saved = "8", par.PROGRAM.cores
    try:
        assert par.PROGRAM.planned_threads() == 1
        m = par.from_safetensors()
        assert "threads_per_worker=1" in repr(m)
        with pytest.raises(ProgramError, match="cores must be a positive int or None, got '8'"):
            m(torch.ones(2, 3))
    finally:
        par.PROGRAM.cores = saved


def test_compile_says_threads_per_worker_is_a_run_setting(out, tmp_path, capsys):
    """``ramiel compile --threads-per-worker N`` changes no file: it says how to run with N."""
    import onnx

    from ramiel.tools import driver

    res, _, _ = out
    model = tmp_path / "m.onnx"
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(model))
    argv = ["compile", str(model), "-o", str(tmp_path / "o"), "--threads-per-worker", "3"]
    assert driver.main(argv) == 0
    text = capsys.readouterr().out
    assert "model.py --threads 3" in text and "a setting of the run" in text


def test_a_module_compiled_for_processes_runs_on_processes(tmp_path, capsys):
    """``ramiel compile --backend processes``: the generated class (``BACKEND``), its
    ``from_safetensors()`` and ``python model.py`` use that backend unless told otherwise."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    res = compile_model(model, str(tmp_path / "o"), CompileOptions(backend="processes"))
    cls = generated_class(import_from_path("edges_processes", res.parallel_path))
    assert cls.BACKEND == "processes"
    with cls.from_safetensors() as m:
        assert m.backend == "processes"
        torch.testing.assert_close(m(torch.full((2, 3), -1.0)), torch.zeros(2, 3))
        assert len(m.runner.pids) == 1
    with cls.from_safetensors(backend="threads") as m:
        assert m.backend == "threads"
    code, text, _ = _run(lambda: entry.main(cls, res.parallel_path, argv=[]), capsys)
    assert code == 0 and "1 cluster, backend processes: one inference" in text


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--device", "cuda"], "argument --device: only with --backend distributed"),
        (["--ranks", "2"], "argument --ranks: only with --backend distributed"),
        (["--placement", "p.json"], "argument --placement: only with --backend distributed"),
        (["--backend", "distributed", "--ranks", "0"], "argument --ranks: must be at least 1"),
    ],
)
def test_distributed_options_on_another_backend_are_argument_errors(argv, message, out, capsys):
    """Options only the distributed backend reads are not accepted silently elsewhere (found
    by a fresh-user check), and a bad rank count is argparse's error (status 2)."""
    code, _, err = _run(_main("parallel", *out, argv), capsys)
    assert code == 2 and message in err, err


@pytest.mark.skipif(torch.cuda.device_count() > 0, reason="needs a machine without CUDA")
def test_cuda_without_a_cuda_device_says_so(out, capsys):
    """Not a complaint about the weights file (pin_memory needs CUDA) as before."""
    code, _, err = _run(_main("parallel", *out, ["--backend", "distributed", "--device", "cuda"]),
                        capsys)  # fmt: skip
    assert code == 2 and "sees no CUDA device" in err and "safetensors" not in err, err


def test_inputs_file_that_is_a_directory(out, tmp_path, capsys):
    code, _, err = _run(_main("parallel", *out, ["--inputs", str(tmp_path)]), capsys)
    assert code == 1 and f"inputs file {tmp_path}: is a directory, not a file" in err, err


class _CtrlC:
    """A stdin at which the user presses Ctrl-C while ``--serve`` waits for a request."""

    def __iter__(self):
        raise KeyboardInterrupt


@pytest.mark.parametrize("kind", ["parallel", "sequential"])
def test_ctrl_c_while_serving_is_one_line(kind, out, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", _CtrlC())
    code, _, err = _run(_main(kind, *out, ["--serve"]), capsys)
    assert code == 130 and err == "error: interrupted\n", err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--threads", "0"], "argument --threads: must be from 1 to 1024, got 0"),
        (["--threads", "100000"], "argument --threads: must be from 1 to 1024, got 100000"),
        (["--serve", "--inputs", "x.safetensors"], "argument --inputs: not with --serve"),
        (["--serve", "--outputs", "y.safetensors"], "argument --outputs: not with --serve"),
    ],
)
@pytest.mark.parametrize("kind", ["parallel", "sequential"])
def test_threads_and_serve_arguments(kind, argv, message, out, capsys):
    """A thread count out of range, and files --serve would ignore (each request names its
    own): argparse's error, status 2 (found by a fresh-user check)."""
    code, _, err = _run(_main(kind, *out, argv), capsys)
    assert code == 2 and message in err, err


@pytest.mark.parametrize("kind", ["parallel", "sequential"])
def test_an_extra_tensor_in_the_inputs_file_is_noted(kind, out, tmp_path, capsys):
    """A tensor that is no graph input (a misspelt name beside the right one) is ignored with a
    note, not silently (found by a fresh-user check)."""
    f = tmp_path / "in.safetensors"
    save_file({"x": torch.ones(2, 3), "x_typo": torch.ones(1)}, str(f))
    code, _, err = _run(_main(kind, *out, ["--inputs", str(f)]), capsys)
    assert code == 0, err
    assert f"note: inputs file {f}: tensor(s) x_typo are no graph input (ignored" in err


@pytest.fixture(scope="module")
def embedding(tmp_path_factory):  # type: ignore[no-untyped-def]
    """A lookup of ids (through an Unsqueeze) in a table of 2 rows, as BERT's token_type_ids,
    beside a float input: compiled for 2 clusters."""
    ids = helper.make_tensor_value_info("ids", TensorProto.INT64, [2, 5])
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5, 3])
    table = helper.make_tensor("table", TensorProto.FLOAT, [2, 3], [0.5, 1, 2, -1, 3, 4])
    nodes = [
        helper.make_node("Unsqueeze", ["ids", "zero"], ["ids1"]),
        helper.make_node("Gather", ["table", "ids1"], ["e1"]),
        helper.make_node("Squeeze", ["e1", "zero"], ["e"]),
        helper.make_node("Add", ["e", "x"], ["y"]),
    ]
    zero = helper.make_tensor("zero", TensorProto.INT64, [1], [0])
    model = helper.make_model(
        helper.make_graph(nodes, "g", [ids, x], [y], [table, zero]),
        opset_imports=[helper.make_opsetid("", 17)],
    )
    d = tmp_path_factory.mktemp("embedding")
    res = compile_model(model, str(d / "out"), CompileOptions(clusters=2))
    par = generated_class(import_from_path("embedding_par", res.parallel_path))
    seq = generated_class(import_from_path("embedding_seq", res.sequential_path))
    return res, par, seq


def test_random_ids_stay_inside_the_table_they_index(embedding, capsys):
    """python model.py / model_seq.py drew integers in [0, 10): a BERT export failed on its own
    random token_type_ids (a table of 2). The importer finds the table (INDEX_LIMITS)."""
    res, par, seq = embedding
    from ramiel.importer import index_limits

    assert par.INDEX_LIMITS == seq.INDEX_LIMITS == {"ids": 2}
    for kind in ("parallel", "sequential"):
        for seed in ("0", "1", "2"):
            code, stdout, err = _run(_main(kind, *embedding, ["--seed", seed]), capsys)
            assert code == 0 and "y: shape=(2, 5, 3)" in stdout, err
    feeds = entry.random_inputs(seq.INPUTS, 3, seq.INDEX_LIMITS)
    assert int(feeds["ids"].max()) <= 1 and feeds["x"].dtype == torch.float32
    assert index_limits(helper.make_model(helper.make_graph([], "g", [], []))) == {}


def test_an_error_of_the_sequential_forward_is_one_line(embedding, tmp_path, capsys):
    """An id outside the table, from an inputs file: model.py said one line, model_seq.py printed
    a traceback (found by a fresh-user check)."""
    res, par, seq = embedding
    f = tmp_path / "in.safetensors"
    save_file({"ids": torch.full((2, 5), 7, dtype=torch.int64), "x": torch.zeros(2, 5, 3)}, str(f))
    for kind in ("parallel", "sequential"):
        code, _, err = _run(_main(kind, *embedding, ["--inputs", str(f)]), capsys)
        assert code == 1 and err.startswith("error: ") and err.count("\n") == 1, err
        assert "IndexError" in err or "index" in err, err


@pytest.mark.parametrize("kind", ["parallel", "sequential"])
def test_a_seed_out_of_range_and_outputs_over_the_inputs_are_argument_errors(
    kind, out, tmp_path, capsys
):
    """--seed 10**23 ended in a traceback (OverflowError in manual_seed); --outputs naming the
    --inputs file replaced the inputs (found by a fresh-user check)."""
    res, par, seq = out
    code, _, err = _run(_main(kind, *out, ["--seed", str(10**23)]), capsys)
    assert code == 2 and "argument --seed: must be from -2**63 to 2**64 - 1" in err, err
    f = tmp_path / "in.safetensors"
    save_file({"x": torch.zeros(2, 3)}, str(f))
    before = f.read_bytes()
    code, _, err = _run(_main(kind, *out, ["--inputs", str(f), "--outputs", str(f)]), capsys)
    assert code == 2 and "is the inputs file" in err, err
    assert f.read_bytes() == before


@pytest.mark.parametrize("kind", ["parallel", "sequential"])
@pytest.mark.parametrize(
    "target", ["weights.safetensors", "model.py", "model_seq.py", "model.mlir"]
)
def test_outputs_never_replace_the_programs_own_files(kind, target, out, capsys):
    """--outputs (and a --serve request) naming the program's weights, source, the other module
    or the IR: one error, the file unchanged (a fresh-user check destroyed the weights with
    --outputs weights.safetensors, and the next run failed)."""
    res = out[0]
    path = os.path.join(res.out_dir, target)
    before = Path(path).read_bytes()
    code, _, err = _run(_main(kind, *out, ["--outputs", path]), capsys)
    assert code == 1 and "writing the outputs there would destroy it" in err, err
    assert Path(path).read_bytes() == before
    inputs = os.path.join(os.path.dirname(res.out_dir), "in.safetensors")
    save_file({"x": torch.zeros(2, 3)}, inputs)
    answers = io.StringIO()
    entry.serve(
        lambda feeds: {"y": feeds["x"]},
        {"x": ((2, 3), torch.float32)},
        stdin=io.StringIO(f"{inputs} {path}\nquit\n"),
        stdout=answers,
        protected=entry.program_files(res.sequential_path, res.weights_path),
    )
    assert answers.getvalue().startswith("error: outputs file "), answers.getvalue()
    assert Path(path).read_bytes() == before


@pytest.mark.parametrize("kind", ["parallel", "sequential"])
def test_outputs_replace_only_an_earlier_outputs_file(kind, out, tmp_path, capsys):
    """--outputs over an existing file that is not a safetensors file (a tune.json, a schedule
    report, a source) is refused; an earlier run's outputs file is replaced, and the new file is
    readable as the umask allows (safetensors writes 0600; found by a fresh-user check)."""
    report = tmp_path / "tune.json"
    report.write_text('{"choice": "1x1"}\n')
    code, _, err = _run(_main(kind, *out, ["--outputs", str(report)]), capsys)
    assert code == 1 and "exists and is not a safetensors file" in err, err
    assert report.read_text() == '{"choice": "1x1"}\n'
    outs = tmp_path / "outs.safetensors"
    for _ in range(2):
        code, _, err = _run(_main(kind, *out, ["--outputs", str(outs)]), capsys)
        assert code == 0, err
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(outs.stat().st_mode) == 0o666 & ~mask


def test_a_serve_request_never_writes_over_its_inputs(tmp_path):
    inputs = tmp_path / "in.safetensors"
    save_file({"x": torch.zeros(2, 3)}, str(inputs))
    before = inputs.read_bytes()
    answers = io.StringIO()
    entry.serve(
        lambda feeds: {"y": feeds["x"] + 1},
        {"x": ((2, 3), torch.float32)},
        stdin=io.StringIO(f"{inputs} {inputs}\nquit\n"),
        stdout=answers,
    )
    assert "is the request's inputs file" in answers.getvalue(), answers.getvalue()
    assert inputs.read_bytes() == before


def _gather_program(tmp_path: Path, name: str):  # type: ignore[no-untyped-def]
    """A model whose cluster raises on its data (a Gather index out of range), compiled for 2
    clusters with the 'hostile' output name ``g\\nfirst=[0]`` (a newline): its parallel class."""
    model = gather_model("g\nfirst=[0]")
    res = compile_model(model, str(tmp_path / "out"), CompileOptions(clusters=2))
    return res, generated_class(import_from_path(name, res.parallel_path))


def test_serve_goes_on_after_a_request_that_makes_a_worker_raise(tmp_path, monkeypatch, capsys):
    """``python model.py --serve``: a request whose data makes a cluster raise (an index out of
    range) is answered with its error, and the next request runs on new workers (it had ended
    the service with status 1; a fresh-user check)."""
    res, par = _gather_program(tmp_path, "edges_serve_gather")
    a = torch.randn(3, 4)
    bad, good = tmp_path / "bad.safetensors", tmp_path / "good.safetensors"
    save_file({"a": a, "idx": torch.tensor([0, 9])}, str(bad))
    save_file({"a": a, "idx": torch.tensor([3, 1])}, str(good))
    o1, o2 = tmp_path / "o1.safetensors", tmp_path / "o2.safetensors"
    monkeypatch.setattr(sys, "stdin", io.StringIO(f"{bad} {o1}\n{good} {o2}\n"))
    code, answers, err = _run(lambda: entry.main(par, res.parallel_path, argv=["--serve"]), capsys)
    first, second = answers.splitlines()
    assert code == 0 and err == "", err
    assert first.startswith("error: ") and "index 9 is out of bounds" in first, first
    assert second.startswith(f"ok {o2} ") and not o1.exists()
    torch.testing.assert_close(load_file(str(o2))["g\nfirst=[0]"], a[:, [3, 1]])


def test_output_names_with_control_characters_print_on_one_line(tmp_path, capsys):
    """``python model.py`` prints each output on one line, a name with a newline quoted (the raw
    newline had split the line, and its second half read as another output); its random
    indices stay inside the 4-wide data input they index (they had run out of it)."""
    res, par = _gather_program(tmp_path, "edges_print_gather")
    assert par.INDEX_LIMITS == {"idx": 4}  # the data input's axis 1: random indices stay inside
    code, printed, err = _run(lambda: entry.main(par, res.parallel_path, argv=[]), capsys)
    assert code == 0 and err == "", err
    lines = printed.splitlines()
    assert any(
        line.startswith("'g\\nfirst=[0]': shape=(3, 2) dtype=torch.float32") for line in lines
    )
    assert not any(line.startswith("first=") for line in lines), printed


def test_serve_answers_stay_one_line_for_hostile_names_and_paths(tmp_path, capsys):
    """A --serve answer is one line: a request path with an escape sequence, and an input name
    with a newline that the request's file lacks, come back escaped (they had been written raw
    into the answer and the stderr note; a fresh-user check). printable() quotes any character
    that is not printable, U+2028 and U+202E included."""
    from ramiel.files import printable

    specs = {"in\nput": ((2,), torch.float32)}
    other = tmp_path / "other.safetensors"
    save_file({"ex\x1btra": torch.ones(2)}, str(other))
    requests = f"no\x1b[31mpe.safetensors\n{other}\n"
    answers = io.StringIO()
    status = entry.serve(lambda feeds: feeds, specs, io.StringIO(requests), answers)
    lines = answers.getvalue().splitlines()
    assert status == 0 and len(lines) == 2, lines
    assert lines[0] == "error: inputs file 'no\\x1b[31mpe.safetensors': no such file"
    assert lines[1].startswith("error: inputs file ") and "'in\\nput'" in lines[1], lines[1]
    assert "'ex\\x1btra'" in lines[1] and "\x1b" not in answers.getvalue()
    assert printable("bidi\u202egnp.exe") == "'bidi\\u202egnp.exe'"
    assert printable("x\u2028y") == "'x\\u2028y'" and printable("ünïcode 名") == "ünïcode 名"


def test_serve_runs_a_request_after_a_worker_died_while_it_waited(tmp_path, capsys):
    """``--serve`` on the processes backend: a worker killed between two requests (the
    out-of-memory killer, say) costs no request. The next one runs on new workers, and stderr
    says what happened in one line (that request had been answered with the death; a
    fresh-user check). A request whose own run fails is still answered with its error."""
    import signal
    import time

    res, par = _gather_program(tmp_path, "edges_serve_revive")
    model = par.from_safetensors(res.weights_path, backend="processes")
    a = torch.randn(3, 4)
    good = tmp_path / "good.safetensors"
    save_file({"a": a, "idx": torch.tensor([3, 1])}, str(good))
    answers = io.StringIO()

    def requests():  # the second request comes after a worker was killed
        yield f"{good} {tmp_path / 'o1.safetensors'}\n"
        pid = next(iter(model.runner.pids.values()))
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while not model.runner.dead_workers() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert model.runner.dead_workers()
        yield f"{good} {tmp_path / 'o2.safetensors'}\n"

    try:
        specs = {"a": ((3, 4), torch.float32), "idx": ((2,), torch.int64)}
        status = entry.serve(entry._reviving(model), specs, requests(), answers, restarts=True)
    finally:
        model.close()
    lines = answers.getvalue().splitlines()
    assert status == 0 and len(lines) == 2, lines
    assert all(line.startswith("ok ") for line in lines), lines
    got = load_file(str(tmp_path / "o2.safetensors"))["g\nfirst=[0]"]
    torch.testing.assert_close(got, a[:, [3, 1]])
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("note: ") and "died" in err[0], err
    assert "while the service waited for a request; new workers run this one" in err[0]


def _indexing_model(op: str, attrs: dict, through: str | None = None):  # type: ignore[no-untyped-def]
    """data (3, 4) float and idx (3, 2) int64 graph inputs; ``op`` reads data with idx (through a
    Transpose of a (4, 5) constant table for ``through='Transpose'``)."""
    import numpy as np
    from onnx import numpy_helper

    data = helper.make_tensor_value_info("data", TensorProto.FLOAT, [3, 4])
    idx = helper.make_tensor_value_info("idx", TensorProto.INT64, [3, 2])
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    inits, nodes, table = [], [], "data"
    if through == "Transpose":
        inits.append(numpy_helper.from_array(np.ones((4, 5), np.float32), "tab"))
        nodes.append(helper.make_node("Transpose", ["tab"], ["tabT"], perm=[1, 0]))
        table = "tabT"  # (5, 4): axis 0 has 5 rows
    nodes.append(helper.make_node(op, [table, "idx"], ["y"], **attrs))
    graph = helper.make_graph(nodes, "g", [data, idx], [out], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize(
    ("op", "attrs", "through", "limit"),
    [
        ("GatherElements", {"axis": 1}, None, 4),  # torch.gather(x, 1, idx)
        ("GatherElements", {"axis": 0}, None, 3),
        ("GatherND", {}, None, 3),  # the smallest of the dims from batch_dims on: 3 and 4
        ("GatherND", {"batch_dims": 1}, None, 4),
        ("Gather", {"axis": 0}, "Transpose", 5),  # a constant table reached through a Transpose
    ],
)
def test_random_indices_stay_inside_tables_of_every_indexing_op(op, attrs, through, limit):
    """``index_limits`` covers GatherElements and GatherND and tables known from shape inference
    (random indices had run out of them, so ``python model.py`` and ``ramiel run`` failed on
    their own inputs; a fresh-user check); and such a model then runs on its random inputs."""
    import onnx

    from ramiel.importer import index_limits

    model = onnx.shape_inference.infer_shapes(_indexing_model(op, attrs, through))
    got = index_limits(model)
    assert got == {"idx": limit}


def test_random_indices_of_a_dynamic_batch_model_follow_the_bound_batch(tmp_path, capsys):
    """Indices into the batch axis of a dynamic-batch input: both modules' INDEX_LIMITS are the
    bound batch's rows (3), at which random inputs come; the sequential module, compiled at
    sample batch sizes, had said 17 (its random inputs then failed), and before that axis 0 was
    no table size at all. GatherElements along axis 1 of the same input: 4."""
    vi = helper.make_tensor_value_info
    nodes = [
        helper.make_node("Gather", ["a", "rows"], ["g"], axis=0),
        helper.make_node("GatherElements", ["a", "cols"], ["e"], axis=1),
    ]
    graph = helper.make_graph(
        nodes,
        "rows",
        [
            vi("a", TensorProto.FLOAT, ["N", 4]),
            vi("rows", TensorProto.INT64, [5]),
            vi("cols", TensorProto.INT64, ["N", 6]),
        ],
        [vi("g", TensorProto.FLOAT, [5, 4]), vi("e", TensorProto.FLOAT, ["N", 6])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    res = compile_model(
        model, str(tmp_path / "out"), CompileOptions(input_shapes={"a": [3, 4], "cols": [3, 6]})
    )
    par = generated_class(import_from_path("edges_rows_par", res.parallel_path))
    seq = generated_class(import_from_path("edges_rows_seq", res.sequential_path))
    assert getattr(seq, "DYNAMIC_BATCH", None), "the sequential module takes any batch"
    assert par.INDEX_LIMITS == seq.INDEX_LIMITS == {"rows": 3, "cols": 4}
    for kind in ("parallel", "sequential"):
        for seed in ("0", "1"):
            code, stdout, err = _run(_main(kind, res, par, seq, ["--seed", seed]), capsys)
            assert code == 0 and "g: shape=(5, 4)" in stdout, err


def test_random_sequence_lengths_stay_within_the_steps():
    """``sequence_lens`` of a GRU (through a TopK, as ``pack_padded_sequence`` exports sort
    them) and of a ReverseSequence: random lengths from 0 to the steps (0 to 9 had run past 6
    steps, which onnxruntime refuses, so ``ramiel run`` could not check such a model; a
    fresh-user check)."""
    import numpy as np
    import onnx
    from onnx import numpy_helper

    from ramiel.importer import index_limits

    vi = helper.make_tensor_value_info
    rng = np.random.default_rng(0)
    inits = [
        numpy_helper.from_array(rng.standard_normal((1, 15, 3), np.float32), "W"),
        numpy_helper.from_array(rng.standard_normal((1, 15, 5), np.float32), "R"),
        numpy_helper.from_array(np.array([2], np.int64), "k"),
    ]
    nodes = [
        helper.make_node("TopK", ["lens", "k"], ["sorted", "order"]),
        helper.make_node("Cast", ["sorted"], ["lens32"], to=TensorProto.INT32),
        helper.make_node("GRU", ["x", "W", "R", "", "lens32"], ["y", "h"], hidden_size=5),
        helper.make_node("ReverseSequence", ["z", "rev"], ["r"], time_axis=1, batch_axis=0),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [
            vi("x", TensorProto.FLOAT, [6, 2, 3]),
            vi("lens", TensorProto.INT64, [2]),
            vi("z", TensorProto.FLOAT, [2, 7, 3]),
            vi("rev", TensorProto.INT64, [2]),
        ],
        [vi("h", TensorProto.FLOAT, [1, 2, 5]), vi("r", TensorProto.FLOAT, [2, 7, 3])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    model = onnx.shape_inference.infer_shapes(model)
    assert index_limits(model) == {"lens": 7, "rev": 8}
