"""CompileOptions are checked before any work: one clear error naming the option, and nothing
written (the output directory is not created)."""

from __future__ import annotations

import os

import pytest
from conftest import ZOO_MODELS

from ramiel.compiler import CompileOptions, compile_model
from ramiel.errors import RamielError


@pytest.mark.parametrize(
    "options, message",
    [
        (CompileOptions(backend="foo"), r"CompileOptions\.backend must be one of threads, "),
        (CompileOptions(backend="inline"), r"backend must be one of .*not 'inline'"),
        (CompileOptions(layout="nhwc"), r"CompileOptions\.layout must be one of auto, "),
        (
            CompileOptions(clusters=0),
            r"CompileOptions\.clusters must be an int from 1 to 1024 \(as on the command line\), not 0",
        ),
        (CompileOptions(threads_per_worker=0), r"threads_per_worker must be an int from 1 to 1024"),
        (CompileOptions(batch=-2), r"CompileOptions\.batch must be an int from 1 to 1024 .*not -2"),
        (CompileOptions(cores=0), r"CompileOptions\.cores must be an int from 1 to 1024"),
        # the API took what the command line refuses: a million threads crashed libgomp, a
        # batch of a million ran for minutes into 18 GB (found by a fresh-user check)
        (CompileOptions(threads_per_worker=10**6), r"threads_per_worker .* not 1000000"),
        (CompileOptions(cores=10**6), r"CompileOptions\.cores must be an int from 1 to 1024"),
        (CompileOptions(batch=10**6), r"CompileOptions\.batch must be an int from 1 to 1024"),
        (CompileOptions(disable="all"), r"disable must be a list .* not the string 'all'"),
        (CompileOptions(clusters=True), r"CompileOptions\.clusters must be an int .*, not True"),
        (CompileOptions(disable=["no-such-pass"]), r"unknown rewrite\(s\) to disable: no-such"),
        # the generated functions' names (an internal error; found by a fresh-user check)
        (CompileOptions(class_name="cluster_c0"), r"class name 'cluster_c0' is taken by the"),
        (CompileOptions(class_name="c0_seg0"), r"class name 'c0_seg0' is taken by the"),
        # input_shapes: a ValueError, a TypeError, an AttributeError, a float or a bool taken
        (CompileOptions(input_shapes={"x": "1,4"}), r"input_shapes: 'x': '1,4' is not a shape"),
        (CompileOptions(input_shapes={"x": None}), r"input_shapes: 'x': None is not a shape"),
        (CompileOptions(input_shapes=[("x", [1, 4])]), r"input_shapes must be a dict of input"),  # type: ignore[arg-type]
        (CompileOptions(input_shapes={"x": [1.5, 4]}), r"'x': \[1\.5, 4\] is not a shape"),  # type: ignore[list-item]
        (CompileOptions(input_shapes={"x": [True, 4]}), r"'x': \[True, 4\] is not a shape"),
        (
            CompileOptions(input_shapes={"x": [-1, 4]}),
            r"input_shapes: .x.: \[-1, 4\] has a negative",
        ),
    ],
)
def test_bad_option_is_one_error_before_any_work(tmp_path, options, message):
    out = tmp_path / "out"
    with pytest.raises(RamielError, match=message):
        compile_model(ZOO_MODELS["light_squeezenet"], str(out), options)
    assert not os.path.exists(out)


def test_good_options_pass_the_check():
    for backend in ("threads", "processes", "distributed"):
        for layout in ("auto", "channels-last", "nchw"):
            CompileOptions(backend=backend, layout=layout, clusters=2, cores=2).check()
    CompileOptions().check()


def test_a_model_as_bytes_compiles_and_other_values_are_one_error(tmp_path):
    """ramiel.compile(<bytes>) put the whole model into a 'no such file' message (13 million
    characters for a 4.7 MB model), None a bare TypeError (found by a fresh-user check)."""
    with open(ZOO_MODELS["light_squeezenet"], "rb") as f:
        data = f.read()
    res = compile_model(data, str(tmp_path / "ok"), CompileOptions(clusters=1))
    assert os.path.isfile(res.sequential_path)
    for bad, message in [
        (data[:100], r"^the 100 bytes given are not an ONNX model"),
        (bytearray(b"xx"), r"^the 2 bytes given are not an ONNX model"),
        (None, r"^expected an ONNX model as a path, an onnx.ModelProto or its bytes, not NoneType"),
    ]:
        with pytest.raises(RamielError, match=message) as info:
            compile_model(bad, str(tmp_path / "bad"), CompileOptions())  # type: ignore[arg-type]
        assert len(str(info.value)) < 200


def test_a_graph_input_with_an_initializer_is_noted(tmp_path):
    """An input with a default value (an initializer of the same name) is compiled as that
    constant; it was silent, and feeding it then failed as an unknown input (found by a
    fresh-user check)."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    vi = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 3]) for n in "xby"]
    g = helper.make_graph(
        [helper.make_node("Add", ["x", "b"], ["y"])],
        "g",
        vi[:2],
        vi[2:],
        [numpy_helper.from_array(np.full((2, 3), 100, np.float32), "b")],
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    res = compile_model(model, str(tmp_path), CompileOptions(clusters=1))
    assert any("input(s) 'b' also have an initializer" in n for n in res.notes), res.notes
