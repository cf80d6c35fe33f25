"""ONNX names are untrusted text: hostile tensor and node names must give safe, valid code.

The model below names its tensors, initializers and nodes with quotes, newlines, ``#``,
backslashes, triple quotes, Python keywords and builtins, the generated code's own names
(``torch``, ``F``, ``w``, ``ch``), non-ASCII text, names that clash after sanitising (``a-b`` and
``a_b``), names starting with digits, ``$0`` placeholders, and whole Python statements. The
generated parallel and sequential modules must

* compile (``compile()``) and have only the expected top-level statements;
* contain none of the hostile text in code: every token outside string literals and comments is
  one the code generator itself writes (ASCII identifiers, no ``os``/``__import__``/``lambda``);
* compute the model: equal onnxruntime on both backends.
"""

from __future__ import annotations

import ast
import io
import keyword
import os
import tokenize

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper

from ramiel.compiler import CompiledModel, CompileOptions, compile_model

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

INJECT = 'x\ny = __import__("os").system("echo pwned")  #'
C, HW = 32, 16

#: name -> role, for reading the test
HOSTILE_INPUTS = ["a-b", "a_b", "print"]
HOSTILE_OUTPUTS = ['"""', INJECT, "import os", "\\", "o-1", "o_1", "名前 é"]


def hostile_model() -> onnx.ModelProto:
    rng = np.random.default_rng(0)

    def w(name: str, *shape: int, scale: float = 0.1) -> onnx.TensorProto:
        return numpy_helper.from_array(
            (rng.standard_normal(shape) * scale).astype(np.float32), name
        )

    inits = [
        w("w", C, C, 3, 3),
        w("torch", C),
        w("F", C, C, 3, 3),
        w("ch", C),
        numpy_helper.from_array(np.array([C, HW, HW], dtype=np.int64), "$1"),
        numpy_helper.from_array(np.array([0], dtype=np.int64), "def"),
    ]
    conv = {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}
    nodes = [
        helper.make_node("Conv", ["a-b", "w", "torch"], ["class"], name='conv "1"\n# evil', **conv),
        helper.make_node("Conv", ["a_b", "F", "ch"], ["lambda"], name='node\'"""\\', **conv),
        helper.make_node("Add", ["class", "lambda"], ["None"], name="é名\r\n"),
        helper.make_node("Relu", ["None"], ['"""'], name="$0"),
        helper.make_node("Mul", ["print", "None"], [INJECT], name=INJECT),
        helper.make_node("Sigmoid", ["class"], ["0start"], name="0"),
        helper.make_node("Reshape", ["0start", "$1"], ["r'''"], name="\u2028"),
        helper.make_node("Unsqueeze", ["r'''", "def"], ["import os"], name="import os"),
        helper.make_node("Sub", ["a-b", "a_b"], ["\\"], name="\\"),
        helper.make_node("Tanh", ["lambda"], ["o-1"], name="o-1"),
        helper.make_node("Neg", ["lambda"], ["o_1"], name="o_1"),
        helper.make_node("Abs", ["class"], ["名前 é"], name="名前 é"),
    ]
    shape = [1, C, HW, HW]
    graph = helper.make_graph(
        nodes,
        'hostile"""\n\'',
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, shape) for n in HOSTILE_INPUTS],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, shape) for n in HOSTILE_OUTPUTS],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    model = hostile_model()
    out = str(tmp_path_factory.mktemp("hostile"))
    result = compile_model(model, out, CompileOptions(clusters=2))
    return model, result


def _code_tokens(source: str) -> list[tokenize.TokenInfo]:
    """Tokens outside string literals and comments."""
    skip = {tokenize.STRING, tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT}
    skip |= {tokenize.DEDENT, tokenize.ENCODING, tokenize.ENDMARKER}
    return [t for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type not in skip]


ALLOWED_KEYWORDS = {"def", "return", "import", "from", "as", "if", "None", "True", "False"}
# the printer's own template: the module class and its loader
ALLOWED_KEYWORDS |= {"class", "with", "is", "or"}
FORBIDDEN_NAMES = {"os", "__import__", "system", "eval", "exec", "open", "subprocess", "pwned"}


@pytest.mark.parametrize("which", ["parallel", "sequential"])
def test_generated_code_is_safe(compiled, which):
    _, result = compiled
    path = result.parallel_path if which == "parallel" else result.sequential_path
    with open(path, encoding="utf-8") as f:
        source = f.read()
    compile(source, path, "exec")  # valid Python
    tree = ast.parse(source)

    # Only the statements the printer writes, at top level: the cluster functions, PROGRAM and
    # one module class (its table, __init__, from_safetensors and forward).
    classes = []
    for node in tree.body:
        if isinstance(node, ast.Expr):
            assert node is tree.body[0] and isinstance(node.value, ast.Constant)  # docstring
        elif isinstance(node, ast.Import | ast.ImportFrom):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
            assert set(mods) <= {
                "math",
                "operator",
                "pathlib",
                "torch",
                "torch.nn.functional",
                "ramiel.runtime",
                "ramiel.runtime.contention",  # the sequential module's adapt_threads
                "ramiel.omp",  # OpenMP's wait policy, set before torch loads
            }
        elif isinstance(node, ast.FunctionDef):
            assert node.name.startswith("cluster_c"), node.name
            assert not node.decorator_list
        elif isinstance(node, ast.Assign):
            targets = [t.id for t in node.targets if isinstance(t, ast.Name)]
            assert targets == ["PROGRAM"], targets
        elif isinstance(node, ast.ClassDef):
            classes.append(node)
            base = ast.unparse(node.bases[0])
            assert base == ("ParallelModel" if which == "parallel" else "torch.nn.Module")
            for item in node.body[1:]:  # after the docstring
                if isinstance(item, ast.Assign):
                    targets = [t.id for t in item.targets if isinstance(t, ast.Name)]
                    assert targets[0] in (
                        "INPUTS",
                        "OUTPUTS",
                        "WEIGHTS_FILE",
                        "PROGRAM",
                        "ARG_NAMES",
                    )
                else:
                    assert isinstance(item, ast.FunctionDef), ast.unparse(item)[:80]
                    assert item.name in ("__init__", "from_safetensors", "forward"), item.name
        elif isinstance(node, ast.If):
            assert ast.unparse(node.test) == "__name__ == '__main__'"
        else:
            pytest.fail(f"unexpected top-level statement: {ast.unparse(node)[:80]}")
    assert len(classes) == 1
    # Function bodies: assignments of calls/subscripts/operators, channel puts, a return.
    methods = [m for m in classes[0].body if isinstance(m, ast.FunctionDef)]
    generated = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    generated += [m for m in methods if m.name in ("forward", "__init__")]
    for fn in generated:
        for stmt in fn.body:
            assert isinstance(stmt, ast.Assign | ast.Expr | ast.Return), ast.unparse(stmt)
            for sub in ast.walk(stmt):
                assert not isinstance(sub, ast.Lambda | ast.FunctionDef | ast.ClassDef | ast.Import)

    # No hostile text outside string literals and comments.
    for tok in _code_tokens(source):
        if tok.type == tokenize.NAME:
            assert tok.string.isascii(), (
                f"non-ASCII identifier {tok.string!r} (line {tok.start[0]})"
            )
            assert tok.string not in FORBIDDEN_NAMES, f"{tok.string!r} in code, line {tok.start[0]}"
            if keyword.iskeyword(tok.string):
                assert tok.string in ALLOWED_KEYWORDS, (
                    f"keyword {tok.string!r}, line {tok.start[0]}"
                )
        else:
            assert tok.type in (tokenize.OP, tokenize.NUMBER), tok
    # Names from the model appear sanitised, and the clashing pairs stay distinct.
    assert "lambda_" in source and "class_" in source
    assert "a_b" in source and "a_b_1" in source
    if which == "parallel":
        # The ONNX names are kept, as string literals, in the PROGRAM table.
        program = next(n for n in tree.body if isinstance(n, ast.Assign))
        keys = {
            k.value
            for call in ast.walk(program)
            if isinstance(call, ast.Dict)
            for k in call.keys
            if isinstance(k, ast.Constant)
        }
        assert set(HOSTILE_INPUTS) <= keys and set(HOSTILE_OUTPUTS) <= keys


def test_comments_keep_node_names_escaped(compiled):
    """Node names appear in comments, escaped: a newline cannot end a comment."""
    _, result = compiled
    with open(result.sequential_path, encoding="utf-8") as f:
        source = f.read()
    comments = [
        t.string
        for t in tokenize.generate_tokens(io.StringIO(source).readline)
        if t.type == tokenize.COMMENT
    ]
    assert any('conv "1"\\n# evil' in c for c in comments), comments
    assert any("\\xe9\\u540d\\r\\n" in c for c in comments), comments
    assert source.isascii() or all(ord(ch) < 128 for ch in source.split("INPUTS = {")[0])


@pytest.mark.parametrize("mode", ["sequential", "threads", "processes"])
def test_hostile_model_computes_the_model(compiled, mode, pipeline_helpers):
    model, result = compiled
    rng = np.random.default_rng(1)
    feeds = {n: rng.standard_normal((1, C, HW, HW)).astype(np.float32) for n in HOSTILE_INPUTS}
    ref = pipeline_helpers.ort_run(model, feeds)
    backend = "threads" if mode == "sequential" else mode
    with CompiledModel(result, CompileOptions(clusters=2, backend=backend)) as m:
        assert list(m.input_specs) == HOSTILE_INPUTS
        assert m.output_names == HOSTILE_OUTPUTS
        tf = {k: torch.from_numpy(v) for k, v in feeds.items()}
        if mode == "sequential":
            outs = list(m.sequential(*[tf[k] for k in m.input_specs]))
        else:
            got = m.run(tf)
            outs = [got[n] for n in HOSTILE_OUTPUTS]
    for name, o, r in zip(HOSTILE_OUTPUTS, outs, ref, strict=True):
        pipeline_helpers.assert_close(o, r, 1e-4, f"output {name!r} ({mode})")


def test_keywords_work_on_both_modules(compiled):
    """Keyword arguments written for the sequential module (its parameter names, sanitised
    from the ONNX names) work on the parallel one, which also takes the ONNX names; the parallel
    class prints the correspondence (ARG_NAMES). The two modules took different keywords."""
    import inspect

    _, result = compiled
    with open(result.parallel_path) as f:
        assert "ARG_NAMES = {" in f.read()
    rng = np.random.default_rng(2)
    feeds = {n: torch.from_numpy(rng.standard_normal((1, C, HW, HW)).astype(np.float32))
             for n in HOSTILE_INPUTS}  # fmt: skip
    with CompiledModel(result, CompileOptions(clusters=2)) as m:
        params = list(inspect.signature(m.sequential.forward).parameters)
        assert len(params) == 3 and params != HOSTILE_INPUTS  # 'a-b' is no Python name
        by_param = dict(zip(params, feeds.values(), strict=True))
        seq = m.sequential(**by_param)
        par_params = m(**by_param)
        par_onnx = m(**feeds)
        for a, b, c in zip(seq, par_params, par_onnx, strict=True):
            torch.testing.assert_close(b, c)
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)
        # run() too takes either set of names (it had taken the ONNX names only: helper-22)
        by_onnx, by_python = m.run(feeds), m.run(by_param)
        for name in m.output_names:
            torch.testing.assert_close(by_onnx[name], by_python[name])


def test_hostile_model_is_parallel(compiled):
    """The two heavy convolutions really run in two clusters (the channels carry hostile names)."""
    _, result = compiled
    assert result.clusters == 2


def test_textual_route(compiled, tmp_path):
    """``ramiel-opt --lower-to-torchpy`` then ``ramiel-translate --to-python`` on the IR the
    compiler wrote (``model.mlir``): the printed-and-parsed names survive."""
    from ramiel.tools import opt, translate

    _, result = compiled
    tp = str(tmp_path / "model.tp.mlir")
    py = str(tmp_path / "model.py")
    assert opt.main([result.ir_path, "--lower-to-torchpy", "-o", tp]) == 0
    assert translate.main(["--to-python", tp, "-o", py]) == 0
    with open(py, encoding="utf-8") as f:
        source = f.read()
    tree = ast.parse(source)
    program = next(n for n in tree.body if isinstance(n, ast.Assign))
    keys = {
        k.value
        for d in ast.walk(program)
        if isinstance(d, ast.Dict)
        for k in d.keys
        if isinstance(k, ast.Constant)
    }
    assert set(HOSTILE_INPUTS) <= keys and set(HOSTILE_OUTPUTS) <= keys
    for tok in _code_tokens(source):
        if tok.type == tokenize.NAME:
            assert tok.string.isascii() and tok.string not in FORBIDDEN_NAMES


def test_hostile_file_name(tmp_path):
    """The model's file name is quoted in the generated module's docstring: a name holding
    triple quotes, a backslash or a newline cannot end the docstring."""
    path = tmp_path / 'm"""\\\nimport os #é.onnx'
    model = hostile_model()
    onnx.save(model, str(path))
    result = compile_model(str(path), str(tmp_path / "out"), CompileOptions(clusters=2))
    for p in (result.parallel_path, result.sequential_path):
        with open(p, encoding="utf-8") as f:
            tree = ast.parse(f.read())
        doc = ast.get_docstring(tree)
        assert doc is not None and path.name in doc
        assert not any(isinstance(n, ast.Import) and n.names[0].name == "os" for n in tree.body)


@pytest.mark.parametrize("order", [["x_1", "x"], ["x", "x_0", "x_1"]])
def test_a_keyword_means_one_input_on_both_modules(order, tmp_path):
    """Inputs named ``x_1`` and ``x``: the sequential module had named them ``x`` and ``x_1``
    (xDSL drops a name hint's trailing ``_<number>``), so ``model(x=a, x_1=b)`` (ONNX names)
    and ``model.sequential(x=a, x_1=b)`` (Python names) swapped them and computed ``a - b``
    against ``b - a``, silently (helper-22). A stripped name never takes another input's ONNX
    name: every ONNX name that is an identifier is its own parameter's name."""
    nodes = [helper.make_node("Sub", [order[0], order[1]], ["d"])]
    for i, name in enumerate(order[2:]):
        nodes.append(helper.make_node("Mul", ["d" if i == 0 else f"m{i}", name], [f"m{i + 1}"]))
    out = nodes[-1].output[0]
    vi = helper.make_tensor_value_info
    graph = helper.make_graph(
        nodes,
        "amb",
        [vi(n, TensorProto.FLOAT, [2]) for n in order],
        [vi(out, TensorProto.FLOAT, [2])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    res = compile_model(model, str(tmp_path), CompileOptions(clusters=1))
    feeds = {n: torch.tensor([float(3 + 7 * i), 1.0]) for i, n in enumerate(order)}
    want = feeds[order[0]] - feeds[order[1]]
    for name in order[2:]:
        want = want * feeds[name]
    with CompiledModel(res, CompileOptions(clusters=1)) as m:
        assert set(m.ARG_NAMES) <= set(order), m.ARG_NAMES  # each keyword is its ONNX name
        torch.testing.assert_close(m(**feeds), want)
        torch.testing.assert_close(m.sequential(**feeds), want)
        torch.testing.assert_close(m.run(feeds)[out], want)
