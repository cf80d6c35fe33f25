"""Fuzz suite (issue #13): mutated ONNX files, mutated IR at every stage and hostile command-line
values, each case through the command-line tools as a user runs them.

Stages and what each case runs (in a process of its own, :mod:`fuzz_harness`):

==========  ======================================================================================
onnx file   ``ramiel compile m.onnx -o out --clusters 2`` on a mutated protobuf of two small
            models and of the zoo's SqueezeNet (structural edits: op types, dropped nodes,
            rewired inputs, hostile tensor names, dimensions, element types, attributes,
            opsets, initializers, outputs; and byte edits of the file), then
            the compiled model on seeded inputs against onnxruntime (where it loads and runs the
            mutated file) and the generated ``model.py``/``model_seq.py`` as scripts
onnx IR     ``ramiel-opt`` (clean-up, costs, clustering, lowering) and ``ramiel-translate
            --to-python`` on a mutated ``onnx`` dialect module, then the generated ``model.py``
cluster IR  ``ramiel-opt --lower-to-torchpy`` and ``ramiel-translate --to-python`` on a mutated
            ``cluster`` module, then ``model.py``
torchpy IR  ``ramiel-translate --to-python`` on a mutated ``torchpy`` module, then ``model.py``
CLI values  ``ramiel compile``/``run``/``profile``, ``ramiel-opt -p`` and ``ramiel-translate`` with
            values drawn from hostile text, edge numbers and bad paths
==========  ======================================================================================

IR mutations are textual: lines deleted, duplicated or swapped; integers, SSA names, strings,
element types, op names and tensor shapes replaced; a character inserted; the text truncated.

Every case must end in one of two ways: every command and the check succeed (exit status 0,
the generated code runs, outputs match onnxruntime), or a command ends with status 1 or 2 and
exactly one ``error:`` line (:func:`conftest.one_error_line`: no traceback, no ``internal
error``). Never a timeout (a hang), a crash, a leaked process, ``out of memory`` (the inputs
are tiny: running out means an unbounded allocation), a file written outside the case's working
directory, nor, where generated code fails at run time, a Python error the verifiers exist to
prevent (``NameError``, ``SyntaxError``, ``UnboundLocalError``, a missing attribute).

Bounded: a fixed seed and ``RAMIEL_FUZZ_EXAMPLES`` cases per stage (default 10, about a minute
for the suite on a loaded 2-core machine), ``RAMIEL_FUZZ_TIMEOUT`` seconds per case (default
90), ``RAMIEL_FUZZ_MEMORY`` bytes of address space per case beyond the harness's own (default
6 GiB). A campaign: ``RAMIEL_FUZZ_EXAMPLES=200 RAMIEL_FUZZ_SEED=7 python -m pytest
tests/test_fuzz.py``; failing examples are not shrunk unless ``RAMIEL_FUZZ_SHRINK=1``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import onnx
import pytest
from conftest import ZOO_MODELS, one_error_line
from hypothesis import HealthCheck, Phase, event, given, seed, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

EXAMPLES = int(os.environ.get("RAMIEL_FUZZ_EXAMPLES", "10"))
SEED = int(os.environ.get("RAMIEL_FUZZ_SEED", "0"))
TIMEOUT_S = float(os.environ.get("RAMIEL_FUZZ_TIMEOUT", "90"))
MEMORY = int(os.environ.get("RAMIEL_FUZZ_MEMORY", str(6 << 30)))
PHASES = [Phase.explicit, Phase.generate] + (
    [Phase.shrink] if os.environ.get("RAMIEL_FUZZ_SHRINK") == "1" else []
)

FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    phases=PHASES,
    suppress_health_check=list(HealthCheck),
    print_blob=True,
)

#: What generated code failing at run time must never say: the verifiers promise that what they
#: accept prints to Python that runs (issue #13, class 3).
VERIFIER_ESCAPES = ("NameError", "SyntaxError", "UnboundLocalError", "has no attribute")

PIPELINE = "constant-fold,dce,estimate-cost,linear-cluster,merge{clusters=2},dce,lower-to-torchpy"


# ---------------------------------------------------------------------------------- seed models


def _tiny() -> onnx.ModelProto:
    """Conv -> (Relu, Sigmoid) -> Add -> Reshape."""
    rng = np.random.RandomState(0)
    inits = [
        numpy_helper.from_array(rng.randn(4, 3, 3, 3).astype(np.float32), "W"),
        numpy_helper.from_array(rng.randn(4).astype(np.float32), "B"),
        numpy_helper.from_array(np.array([1, -1], dtype=np.int64), "shape"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "W", "B"], ["c"], pads=[1, 1, 1, 1], name="conv"),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("Sigmoid", ["c"], ["s"], name="sigmoid"),
        helper.make_node("Add", ["r", "s"], ["a"], name="add"),
        helper.make_node("Reshape", ["a", "shape"], ["y"], name="reshape"),
    ]
    g = helper.make_graph(
        nodes,
        "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 256])],
        inits,
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def _branches() -> onnx.ModelProto:
    """Two heavy branches (Conv chains) joined by Concat, then MatMul and Softmax: two clusters."""
    rng = np.random.RandomState(1)
    inits = [
        numpy_helper.from_array(rng.randn(16, 8, 3, 3).astype(np.float32) * 0.2, "W1"),
        numpy_helper.from_array(rng.randn(16, 16, 3, 3).astype(np.float32) * 0.1, "W2"),
        numpy_helper.from_array(rng.randn(16, 8, 3, 3).astype(np.float32) * 0.2, "V1"),
        numpy_helper.from_array(rng.randn(16, 16, 3, 3).astype(np.float32) * 0.1, "V2"),
        numpy_helper.from_array(rng.randn(32, 10).astype(np.float32) * 0.1, "M"),
        numpy_helper.from_array(np.array([0, 2, 3, 1], dtype=np.int64), "perm_unused"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "W1"], ["a1"], pads=[1, 1, 1, 1], name="a_conv1"),
        helper.make_node("Relu", ["a1"], ["a2"], name="a_relu"),
        helper.make_node("Conv", ["a2", "W2"], ["a3"], pads=[1, 1, 1, 1], name="a_conv2"),
        helper.make_node("Conv", ["x", "V1"], ["b1"], pads=[1, 1, 1, 1], name="b_conv1"),
        helper.make_node("Tanh", ["b1"], ["b2"], name="b_tanh"),
        helper.make_node("Conv", ["b2", "V2"], ["b3"], pads=[1, 1, 1, 1], name="b_conv2"),
        helper.make_node("Concat", ["a3", "b3"], ["cat"], axis=1, name="concat"),
        helper.make_node("GlobalAveragePool", ["cat"], ["pool"], name="pool"),
        helper.make_node("Flatten", ["pool"], ["flat"], axis=1, name="flatten"),
        helper.make_node("MatMul", ["flat", "M"], ["logits"], name="matmul"),
        helper.make_node("Softmax", ["logits"], ["probs"], axis=-1, name="softmax"),
    ]
    g = helper.make_graph(
        nodes,
        "branches",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 16, 16])],
        [
            helper.make_tensor_value_info("probs", TensorProto.FLOAT, [1, 10]),
            helper.make_tensor_value_info("b2", TensorProto.FLOAT, [1, 16, 16, 16]),
        ],
        inits,
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


SEEDS = {"tiny": _tiny, "branches": _branches}


# --------------------------------------------------------------------------------- the harness


class Harness:
    """The case server (:mod:`fuzz_harness`), one per test module."""

    def __init__(self, root: str):
        self.root = root
        env = dict(os.environ, ORT_DISABLE_TELEMETRY="1", OMP_NUM_THREADS="1")
        env.pop("RAMIEL_DEBUG", None)
        here = os.path.dirname(os.path.abspath(__file__))
        self.proc = subprocess.Popen(
            [sys.executable, os.path.join(here, "fuzz_harness.py")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=root,
        )
        ready = self.proc.stdout.readline()  # type: ignore[union-attr]
        assert json.loads(ready) == {"ready": True}, ready
        self.n = 0

    def __repr__(self) -> str:
        return f"<fuzz harness in {self.root}>"

    def case(self) -> str:
        """A fresh case directory (``CASE/work`` is the working directory of the commands)."""
        self.n += 1
        case = os.path.join(self.root, f"case{self.n:05d}")
        os.makedirs(os.path.join(case, "work"))
        return case

    def run(self, case: str, steps: list, check: dict | None, timeout: float = TIMEOUT_S) -> dict:
        req = {"dir": case, "steps": steps, "check": check, "timeout": timeout, "mem": MEMORY}
        self.proc.stdin.write(json.dumps(req) + "\n")  # type: ignore[union-attr]
        self.proc.stdin.flush()  # type: ignore[union-attr]
        answer = self.proc.stdout.readline()  # type: ignore[union-attr]
        assert answer, "the fuzz harness died"
        result = json.loads(answer)
        with open(os.path.join(case, "stderr.txt"), errors="replace") as f:
            result["stderr"] = f.read()
        return result

    def close(self) -> None:
        self.proc.stdin.close()  # type: ignore[union-attr]
        self.proc.wait(timeout=30)


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    h = Harness(str(tmp_path_factory.mktemp("fuzz")))
    yield h
    h.close()


class _Seeds(dict):
    """The seed models (a short repr: hypothesis prints the arguments of a failing case)."""

    def __repr__(self) -> str:
        return f"<seed models {sorted(self)}>"


@pytest.fixture(scope="module")
def seeds(tmp_path_factory):
    """Each seed model as ONNX bytes and as IR at each stage (from the tools themselves)."""
    from conftest import tool_status

    from ramiel.tools import opt, translate

    out = _Seeds()
    for name, make in SEEDS.items():
        d = tmp_path_factory.mktemp(f"seed_{name}")
        onnx_path = str(d / "m.onnx")
        onnx.save(make(), onnx_path)
        ir = {}
        assert (
            tool_status(translate.main, ["--import-onnx", onnx_path, "-o", str(d / "onnx.mlir")])
            == 0
        )
        passes = "constant-fold,dce,estimate-cost,linear-cluster,merge{clusters=2},dce"
        assert (
            tool_status(
                opt.main, [str(d / "onnx.mlir"), "-p", passes, "-o", str(d / "cluster.mlir")]
            )
            == 0
        )
        assert (
            tool_status(
                opt.main,
                [str(d / "cluster.mlir"), "-p", "lower-to-torchpy", "-o", str(d / "torchpy.mlir")],
            )
            == 0
        )
        for stage in ("onnx", "cluster", "torchpy"):
            ir[stage] = (d / f"{stage}.mlir").read_text()
        weights = [str(p) for p in d.iterdir() if p.suffix == ".safetensors"]
        with open(onnx_path, "rb") as f:
            out[name] = {"onnx": f.read(), "ir": ir, "weights": weights}
    assert "cluster.send" in out["branches"]["ir"]["cluster"], "the branches seed has 2 clusters"
    return out


def _tree(root: str) -> set[str]:
    return {
        os.path.relpath(os.path.join(d, f), root)
        for d, dirs, files in os.walk(root)
        for f in files + dirs
    }


def assert_defined(result: dict, case: str, before: set[str], what: str) -> None:
    """The case ended in one of the two defined ways, wrote nothing outside ``CASE/work``, left
    no process behind (module docstring)."""
    why = (
        f"{what}\n{json.dumps({k: v for k, v in result.items() if k != 'stderr'})}\n"
        + result["stderr"][-4000:]
    )
    status = result["status"]
    event(f"{status} at step {result.get('step')}" if status == "error" else status)
    assert status not in ("timeout", "crash"), why
    assert not result["leaked"], why
    assert status in ("ok", "error"), why + result.get("detail", "")
    if status == "error":
        assert result["rc"] in (1, 2), why
        line = one_error_line(result["stderr"])
        assert "out of memory" not in line, why
        if result["step"] == "check":  # the generated code ran and failed
            assert not any(s in line for s in VERIFIER_ESCAPES), why
    added = _tree(case) - before
    outside = sorted(
        p for p in added if not p.startswith("work") and p not in ("stdout.txt", "stderr.txt")
    )
    assert not outside, f"{why}\nfiles written outside the working directory: {outside}"
    siblings = {p for p in os.listdir(os.path.dirname(case)) if not p.startswith("case")}
    assert not siblings, f"{why}\nfiles written beside the case: {sorted(siblings)}"


def _prepare(harness: Harness, seed_data: dict) -> tuple[str, str]:
    case = harness.case()
    work = os.path.join(case, "work")
    for w in seed_data["weights"]:
        shutil.copy(w, work)
    return case, work


# -------------------------------------------------------------------------- ONNX file mutations

#: Replacement op types by the node's number of inputs (a mutation keeps the arity, so that it
#: reaches past the ONNX checker), and ops that do not exist.
UNARY = ["Relu", "Tanh", "Exp", "Log", "Sqrt", "Neg", "Abs", "Identity", "Softmax", "Sigmoid",
         "Flatten", "Shape", "Size", "NonZero", "Transpose", "Floor", "Reciprocal", "HardSwish",
         "Erf", "GlobalAveragePool", "Squeeze", "Cast"]  # fmt: skip
BINARY = ["Add", "Sub", "Mul", "Div", "Pow", "MatMul", "Max", "Min", "Equal", "PRelu", "Reshape",
          "Expand", "Gather", "Tile", "Concat"]  # fmt: skip
ANY_ARITY = ["Conv", "Gemm", "Foo", ""]
HOSTILE_NAMES = ["$x", ".lead", "../evil", "../../evil", "/abs/path", "a b", "x\ny", "__class__",
                 "w", "torch", "ch", "def", "0", "ü", "a" * 300, "'", '"""', "%", "#", "}", "c0",
                 "x__c0", "forward", "PROGRAM", "", "__import__('os')"]  # fmt: skip
DIMS = [0, -1, -7, 1, 2, 3, 17, 1 << 40, (1 << 62), "N", "clear"]
ELEM_TYPES = [TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.INT64, TensorProto.INT32,
              TensorProto.BOOL, TensorProto.UINT8, TensorProto.STRING, TensorProto.BFLOAT16,
              TensorProto.COMPLEX64, 0, 99]  # fmt: skip
INT_VALUES = [-(1 << 40), -2, -1, 0, 1, 2, 5, 1 << 40]
OPSETS = [1, 6, 7, 11, 13, 18, 21, 22, 99]

_index = st.integers(0, 1 << 16)
onnx_mutation = st.one_of(
    st.tuples(st.just("op_type"), _index, _index),
    st.tuples(st.just("drop_node"), _index),
    st.tuples(st.just("input"), _index, _index, _index),
    st.tuples(st.just("rename"), _index, st.sampled_from(HOSTILE_NAMES)),
    st.tuples(st.just("dim"), _index, _index, st.sampled_from(DIMS)),
    st.tuples(st.just("dtype"), _index, st.sampled_from(ELEM_TYPES)),
    st.tuples(st.just("attr"), _index, _index, st.sampled_from(INT_VALUES)),
    st.tuples(st.just("opset"), st.sampled_from(OPSETS)),
    st.tuples(st.just("drop_init"), _index),
    st.tuples(st.just("init_dims"), _index, st.sampled_from([[], [0], [1], [3, 5], [1 << 40]])),
    st.tuples(st.just("output"), _index, _index),
    st.tuples(st.just("bytes"), st.sampled_from(["flip", "truncate", "insert"]), _index, _index),
)


def _names(g: onnx.GraphProto) -> list[str]:
    names = [v.name for v in g.input] + [i.name for i in g.initializer]
    for n in g.node:
        names += list(n.input) + list(n.output)
    return sorted(set(names))


def _rename(g: onnx.GraphProto, old: str, new: str) -> None:
    for coll in (g.input, g.output, g.value_info, g.initializer):
        for v in coll:
            if v.name == old:
                v.name = new
    for n in g.node:
        n.input[:] = [new if x == old else x for x in n.input]
        n.output[:] = [new if x == old else x for x in n.output]


def mutate_onnx(data: bytes, mutations: list[tuple]) -> bytes:
    """Apply ``mutations`` (drawn from :data:`onnx_mutation`) to the serialised model ``data``."""
    m = onnx.ModelProto()
    m.ParseFromString(data)
    g = m.graph
    byte_edits = []
    for mut in mutations:
        kind, *a = mut
        nodes = list(g.node)
        if kind == "op_type" and nodes:
            node = nodes[a[0] % len(nodes)]
            choices = {1: UNARY, 2: BINARY}.get(len(node.input), [])
            choices = choices + ANY_ARITY if a[1] % 8 == 0 or not choices else choices
            node.op_type = choices[a[1] % len(choices)]
        elif kind == "drop_node" and nodes:
            g.node.remove(nodes[a[0] % len(nodes)])
        elif kind == "input" and nodes:
            node = nodes[a[0] % len(nodes)]
            names = [*_names(g), "", "nowhere"]
            if node.input:
                node.input[a[1] % len(node.input)] = names[a[2] % len(names)]
        elif kind == "rename":
            names = _names(g)
            if names:
                _rename(g, names[a[0] % len(names)], a[1])
        elif kind == "dim":
            vis = list(g.input) + list(g.output)
            vi = vis[a[0] % len(vis)]
            shape = vi.type.tensor_type.shape
            value = a[2]
            if value == "clear":
                vi.type.tensor_type.ClearField("shape")
            elif shape.dim:
                d = shape.dim[a[1] % len(shape.dim)]
                if value == "N":
                    d.dim_param = "N"
                else:
                    d.dim_value = value
        elif kind == "dtype":
            typed = [v.type.tensor_type for v in list(g.input) + list(g.output)]
            slots = typed + list(g.initializer)
            slot = slots[a[0] % len(slots)]
            if isinstance(slot, onnx.TensorProto):
                slot.data_type = a[1]
            else:
                slot.elem_type = a[1]
        elif kind == "attr" and nodes:
            node = nodes[a[0] % len(nodes)]
            ints = [x for x in node.attribute if x.type in (onnx.AttributeProto.INT,
                                                            onnx.AttributeProto.INTS)]  # fmt: skip
            if ints:
                at = ints[a[1] % len(ints)]
                if at.type == onnx.AttributeProto.INT:
                    at.i = a[2]
                elif at.ints:
                    at.ints[a[1] % len(at.ints)] = a[2]
            else:
                node.attribute.append(
                    helper.make_attribute(["axis", "pads", "perm"][a[1] % 3], a[2])
                )
        elif kind == "opset":
            m.opset_import[0].version = a[0]
        elif kind == "drop_init" and g.initializer:
            g.initializer.remove(g.initializer[a[0] % len(g.initializer)])
        elif kind == "init_dims" and g.initializer:
            init = g.initializer[a[0] % len(g.initializer)]
            init.dims[:] = a[1]
        elif kind == "output":  # a graph output more: a duplicate, an input, an intermediate
            names = _names(g)
            typed = list(g.input) + list(g.output)
            vi = onnx.ValueInfoProto()
            vi.CopyFrom(typed[a[1] % len(typed)])
            vi.name = names[a[0] % len(names)]
            g.output.append(vi)
        elif kind == "bytes":
            byte_edits.append(a)
    out = bytearray(m.SerializeToString())
    for how, pos, value in byte_edits:
        if not out:
            break
        i = pos % len(out)
        if how == "flip":
            out[i] ^= 1 << (value % 8)
        elif how == "truncate":
            del out[i:]
        else:
            out[i:i] = bytes([value % 256]) * (1 + value % 7)
    return bytes(out)


@seed(SEED)
@FUZZ
@given(
    which=st.sampled_from(sorted(SEEDS)),
    mutations=st.lists(onnx_mutation, min_size=1, max_size=2),
)
def test_mutated_onnx_files(harness, seeds, which, mutations):
    case, work = _prepare(harness, {"weights": []})
    with open(os.path.join(work, "m.onnx"), "wb") as f:
        f.write(mutate_onnx(seeds[which]["onnx"], mutations))
    before = _tree(case)
    steps = [["ramiel", ["compile", "m.onnx", "-o", "out", "--clusters", "2"]]]
    result = harness.run(case, steps, {"kind": "onnx", "model": "m.onnx", "out": "out"})
    assert_defined(result, case, before, f"{which} {mutations}")


@seed(SEED)
@settings(FUZZ, max_examples=max(2, EXAMPLES // 5))
@given(mutations=st.lists(onnx_mutation, min_size=1, max_size=2))
def test_mutated_zoo_model(harness, mutations):
    """The same on a real model, the zoo's SqueezeNet (fewer cases: each takes seconds)."""
    case, work = _prepare(harness, {"weights": []})
    with open(ZOO_MODELS["light_squeezenet"], "rb") as f:
        data = f.read()
    with open(os.path.join(work, "m.onnx"), "wb") as f:
        f.write(mutate_onnx(data, mutations))
    before = _tree(case)
    steps = [["ramiel", ["compile", "m.onnx", "-o", "out", "--clusters", "2"]]]
    result = harness.run(case, steps, {"kind": "onnx", "model": "m.onnx", "out": "out"})
    assert_defined(result, case, before, f"light_squeezenet {mutations}")


# ---------------------------------------------------------------------------- IR text mutations

HOSTILE_STRINGS = ["a[", "1, 2", "x=1", "__class__", '__import__(\\"os\\").system(\\"touch PWNED\\")',
                   "yield 1", "(y := 1)", "torch.nope", "$7", "os", "'", "\\\"", "", "..",
                   "../../x", "F.conv2d", "ch", "w", "1)#", "(2, 2)", "-1", "torch.float64",
                   "lambda: 0", "*x", "**k", "\\n", "c0", "x__c0"]  # fmt: skip
INTS = ["-1", "0", "1", "3", "1099511627776", "100000000000000000000"]
ELTYPES = ["f32", "f16", "f64", "bf16", "i64", "i32", "i1", "i8", "ui8", "index", "complex<f32>",
           "!torchpy.object", "none"]  # fmt: skip
SHAPES = ["?x3", "0x3", "1099511627776x1099511627776x4", "", "1x1", "2x?", "*"]
OP_NAMES = ["onnx.Relu", "onnx.Foo", "onnx.Conv", "onnx.Constant", "cluster.send", "cluster.recv",
            "cluster.cluster", "cluster.yield", "torchpy.call", "torchpy.method", "torchpy.get",
            "torchpy.put", "torchpy.weight", "torchpy.return", "torchpy.func", "func.return"]  # fmt: skip
CHARS = list('[](){}<>"%@$#:,=\\\n ')

TOKENS = {
    "int": re.compile(r"(?<![\w%#.])-?\d+(?![\w.])"),
    "ssa": re.compile(r"%[\w$.-]+"),
    "string": re.compile(r'"(?:[^"\\\n]|\\.)*"'),
    "eltype": re.compile(r"\b(?:f32|f16|f64|bf16|i64|i32|i1|i8|ui8)\b"),
    "opname": re.compile(r'"(?:onnx|torchpy|cluster|func)\.\w+"'),
    "shape": re.compile(r"(?<=tensor<)[\dx?]*(?=x?[a-z])"),
}

#: Edits that keep the text parsable more often than not come first and weigh more (hypothesis
#: draws each branch of ``one_of`` alike): they reach the verifiers and the printer; the others
#: mostly test the parser's errors.
_reaches_verifiers = st.one_of(
    st.tuples(st.sampled_from(["swap_lines", "dup_line", "del_line"]), _index),
    st.tuples(st.just("int"), _index, st.sampled_from(INTS)),
    st.tuples(st.just("string"), _index, st.sampled_from(HOSTILE_STRINGS)),
    st.tuples(st.just("ssa"), _index, _index),
)
_breaks_syntax = st.one_of(
    st.tuples(st.just("eltype"), _index, st.sampled_from(ELTYPES)),
    st.tuples(st.just("opname"), _index, st.sampled_from(OP_NAMES)),
    st.tuples(st.just("shape"), _index, st.sampled_from(SHAPES)),
    st.tuples(st.just("insert_char"), _index, st.sampled_from(CHARS)),
    st.tuples(st.just("truncate"), _index),
)
ir_mutation = st.one_of(_reaches_verifiers, _reaches_verifiers, _breaks_syntax)


def mutate_ir(text: str, mutations: list[tuple]) -> str:
    """Apply ``mutations`` (drawn from :data:`ir_mutation`) to the IR ``text``."""
    for kind, *a in mutations:
        lines = text.split("\n")
        if kind in ("del_line", "dup_line", "swap_lines"):
            if len(lines) < 3:
                continue
            i = 1 + a[0] % (len(lines) - 2)
            if kind == "del_line":
                del lines[i]
            elif kind == "dup_line":
                lines.insert(i, lines[i])
            elif i + 1 < len(lines) - 1:
                lines[i], lines[i + 1] = lines[i + 1], lines[i]
            text = "\n".join(lines)
        elif kind in TOKENS:
            matches = list(TOKENS[kind].finditer(text))
            if not matches:
                continue
            m = matches[a[0] % len(matches)]
            if kind == "ssa":
                names = sorted({x.group(0) for x in matches}) + ["%nope"]
                new = names[a[1] % len(names)]
            elif kind in ("string", "opname"):
                new = f'"{a[1]}"'
            else:
                new = a[1]
            text = text[: m.start()] + new + text[m.end() :]
        elif kind == "insert_char":
            i = a[0] % (len(text) + 1)
            text = text[:i] + a[1] + text[i:]
        elif kind == "truncate":
            text = text[: a[0] % (len(text) + 1)]
    return text


_STAGE_STEPS = {
    "onnx": [
        ["ramiel-opt", ["in.mlir", "-p", PIPELINE, "-o", "torchpy.mlir"]],
        ["ramiel-translate", ["--to-python", "torchpy.mlir", "-o", "model.py"]],
    ],
    "cluster": [
        ["ramiel-opt", ["in.mlir", "-p", "lower-to-torchpy", "-o", "torchpy.mlir"]],
        ["ramiel-translate", ["--to-python", "torchpy.mlir", "-o", "model.py"]],
    ],
    "torchpy": [["ramiel-translate", ["--to-python", "in.mlir", "-o", "model.py"]]],
}


def _ir_case(harness, seeds, stage: str, which: str, mutations: list[tuple]) -> None:
    case, work = _prepare(harness, seeds[which])
    with open(os.path.join(work, "in.mlir"), "w", encoding="utf-8") as f:
        f.write(mutate_ir(seeds[which]["ir"][stage], mutations))
    before = _tree(case)
    result = harness.run(case, _STAGE_STEPS[stage], {"kind": "module", "path": "model.py"})
    assert_defined(result, case, before, f"{stage} IR of {which}: {mutations}")


@seed(SEED)
@FUZZ
@given(
    which=st.sampled_from(sorted(SEEDS)), mutations=st.lists(ir_mutation, min_size=1, max_size=2)
)
def test_mutated_onnx_ir(harness, seeds, which, mutations):
    _ir_case(harness, seeds, "onnx", which, mutations)


@seed(SEED)
@FUZZ
@given(mutations=st.lists(ir_mutation, min_size=1, max_size=2))
def test_mutated_cluster_ir(harness, seeds, mutations):
    _ir_case(harness, seeds, "cluster", "branches", mutations)


@seed(SEED)
@FUZZ
@given(mutations=st.lists(ir_mutation, min_size=1, max_size=2))
def test_mutated_torchpy_ir(harness, seeds, mutations):
    _ir_case(harness, seeds, "torchpy", "branches", mutations)


# ---------------------------------------------------------------------------- command-line values

SPECIAL_VALUES = ["0", "-1", "1", "2", "1.5", "1e9", "99999999999999999999", "", " ", "nan",
                  "inf", "x", "x=1,8,16,16", "x=", "=1", "x=1,,2", "x=-1,8", "x=0,8,16,16",
                  "y=1", "x=1,8,16,16,1", "x=a", "threads", "processes", "foo", "--help", "-",
                  "1,2", "1,,2", "\n", "'; touch PWNED #"]  # fmt: skip
PATHS = ["", "nope.json", "/dev/zero", ".", "garbage.json", "out", "m.onnx", "m.onnx/sub",
         "/sys/ramiel", "o'ut; touch PWNED", "a\nb"]  # fmt: skip
_value = st.one_of(
    st.sampled_from(SPECIAL_VALUES),
    st.integers(-3, 5).map(str),
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=8),
)
_path = st.sampled_from(PATHS)
_COUNT_OPTIONS = ["--clusters", "--threads-per-worker", "--batch", "--cores"]


@st.composite
def cli_case(draw) -> list:
    tool = draw(st.sampled_from(["compile", "run", "profile", "opt", "translate"]))
    if tool in ("compile", "run"):
        argv = [tool, "m.onnx"]
        argv += ["-o", draw(st.sampled_from(["out", "out", *PATHS]))] if tool == "compile" else []
        for _ in range(draw(st.integers(1, 3))):
            opt = draw(st.sampled_from([*_COUNT_OPTIONS, "--input-shape", "--backend", "--profile",
                                        "--transfer-cost", "--repeat", "--steps", "--state"]))  # fmt: skip
            if tool == "compile" and opt in ("--repeat", "--steps", "--state"):
                continue
            value = draw(_path if opt in ("--profile", "--transfer-cost") else _value)
            if tool == "run" and opt == "--backend" and value not in ("threads", "foo", ""):
                continue  # 'ramiel run' starts processes or ranks: the fault suite's business
            if opt in _COUNT_OPTIONS and value.strip().lstrip("+").isdigit() and int(value) > 4:
                continue  # a valid but large count only makes the case slow
            argv += [opt, value]
        if tool == "run":
            argv += ["--repeat", "1"]
        return [["ramiel", argv]]
    if tool == "profile":
        return [["ramiel", ["profile", "m.onnx", "-o", draw(_path), "--threads", draw(_value)]]]
    if tool == "opt":
        passes = draw(st.one_of(st.sampled_from(
            ["merge{clusters=-1}", "foo", "dce{x=1}", "merge{clusters=2", "merge{clusters=99999999999999999999}",
             "linear-cluster,,dce", "", "constant-fold{", "inplace", "hypercluster{batch=0}",
             "intra-op-threads{cores=abc}", "lower-to-torchpy{mode=nope}"]), _value))  # fmt: skip
        return [
            [
                "ramiel-opt",
                ["in.mlir", "-p", passes, "-o", draw(st.sampled_from(["o.mlir", *PATHS]))],
            ]
        ]
    return [["ramiel-translate", ["--import-onnx", "m.onnx", "--input-shape", draw(_value),
                                  "-o", draw(st.sampled_from(["o.mlir", *PATHS]))]]]  # fmt: skip


@seed(SEED)
@FUZZ
@given(steps=cli_case())
def test_command_line_values(harness, seeds, steps):
    case, work = _prepare(harness, seeds["tiny"])
    with open(os.path.join(work, "m.onnx"), "wb") as f:
        f.write(seeds["tiny"]["onnx"])
    with open(os.path.join(work, "in.mlir"), "w") as f:
        f.write(seeds["tiny"]["ir"]["onnx"])
    with open(os.path.join(work, "garbage.json"), "w") as f:
        f.write('{"ops": [1, 2')
    before = _tree(case)
    result = harness.run(case, steps, None)
    assert_defined(result, case, before, f"{steps}")
    assert not os.path.exists(os.path.join(work, "PWNED")), "a value ran as a shell command"


# ------------------------------------------------------------------------- the oracle's own test


def test_harness_reports_each_way_a_case_can_end(harness, seeds):
    """The oracle itself: a good model is ok, a bad one one error line, generated code that
    does not parse a failure, a hang a timeout, a crash a crash, an orphan process a leak."""
    case, work = _prepare(harness, seeds["tiny"])
    with open(os.path.join(work, "m.onnx"), "wb") as f:
        f.write(seeds["tiny"]["onnx"])
    ok = harness.run(case, [["ramiel", ["compile", "m.onnx", "-o", "out"]]],
                     {"kind": "onnx", "model": "m.onnx", "out": "out"})  # fmt: skip
    assert ok["status"] == "ok" and not ok["leaked"], ok
    bad = harness.run(case, [["ramiel", ["compile", "nope.onnx", "-o", "out"]]], None)
    assert bad["status"] == "error" and bad["rc"] == 1, bad
    assert "nope.onnx" in one_error_line(bad["stderr"])
    scripts = {
        "broken.py": "def f(:\n",
        "hang.py": "import time\ntime.sleep(60)\n",
        "crash.py": "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n",
        "orphan.py": "import subprocess\nsubprocess.Popen(['sleep', '30'])\n",
    }
    for name, text in scripts.items():
        with open(os.path.join(work, name), "w") as f:
            f.write(text)
    broken = harness.run(case, [], {"kind": "module", "path": "broken.py"})
    assert broken["status"] == "fail" and "does not parse" in broken["detail"], broken
    assert harness.run(case, [], {"kind": "module", "path": "hang.py"}, timeout=2)["status"] == (
        "timeout"
    )
    assert harness.run(case, [], {"kind": "module", "path": "crash.py"})["status"] == "crash"
    assert harness.run(case, [], {"kind": "module", "path": "orphan.py"})["leaked"]
