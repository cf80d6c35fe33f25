"""Outputs never alias the model's state, the caller's inputs or each other, and are not copied
where nothing is shared (issue #13, class 1).

Every backend and the sequential module: an output that is a weight (``Identity(W)``), an input
(``Identity(x)``), a view of one (a Reshape of the input) or the same tensor as another output
comes back as a tensor no one else holds; writing into it changes nothing later calls return.
Outputs computed by the model come back as computed (same memory as inside the cluster, no
``clone`` in the generated sequential code, ``Runner.copied_outputs`` empty). The lists of ops
the sequential analysis trusts to allocate are checked against torch on every ONNX node case.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper

import ramiel
from ramiel.runtime import ChannelSpec, Program, start
from ramiel.runtime.ownership import HeldMemory, own_outputs

F32 = torch.float32
W_VALUE = np.arange(6, dtype=np.float32).reshape(2, 3) * 1.5


# ------------------------------------------------------------------------------ the runner alone

_SEEN: dict[str, int] = {}


def _outputs_of_all_kinds(ch, w):
    x = ch.get("x__c0")
    fresh = x + 1
    _SEEN["fresh"] = fresh.data_ptr()
    ch.put("fresh__out", fresh)
    ch.put("weight__out", w.W)
    ch.put("input__out", x)
    ch.put("view__out", x.reshape(3, 2))
    ch.put("twice_a__out", fresh * 2)
    ch.put("twice_b__out", fresh.reshape(3, 2))  # a view of the output 'fresh'


def _program() -> Program:
    outs = {
        "fresh": (2, 3),
        "weight": (2, 3),
        "input": (2, 3),
        "view": (3, 2),
        "twice_a": (2, 3),
        "twice_b": (3, 2),
    }
    channels = {"x__c0": ChannelSpec(None, "c0", (2, 3), F32)}
    channels.update({f"{n}__out": ChannelSpec("c0", None, s, F32) for n, s in outs.items()})
    return Program(
        name="kinds",
        clusters={"c0": _outputs_of_all_kinds},
        channels=channels,
        inputs={"x": ["x__c0"]},
        outputs={n: f"{n}__out" for n in outs},
    )


@pytest.mark.parametrize("backend", ["threads", "inline", "processes"])
def test_runner_copies_exactly_the_shared_outputs(backend):
    w = {"W": torch.from_numpy(W_VALUE.copy())}
    x = torch.ones(2, 3)
    with start(_program(), w, backend=backend) as run:
        out = run.run({"x": x})
        if backend != "processes":
            # fresh and twice_a were computed by the cluster: returned as computed
            assert out["fresh"].data_ptr() == _SEEN["fresh"]
            assert sorted(run.copied_outputs) == ["input", "twice_b", "view", "weight"]
        ptrs = [t.untyped_storage().data_ptr() for t in out.values()]
        assert len(set(ptrs)) == len(ptrs), "two outputs share memory"
        for t in out.values():
            t.fill_(-7.0)  # the caller writes into every output
        again = run.run({"x": x})
    assert torch.equal(x, torch.ones(2, 3))
    assert torch.equal(w["W"], torch.from_numpy(W_VALUE))
    assert torch.equal(again["weight"], torch.from_numpy(W_VALUE))
    assert torch.equal(again["input"], torch.ones(2, 3))
    assert torch.equal(again["twice_b"], torch.full((3, 2), 2.0))


def test_numpy_inputs_are_not_returned():
    """An input given as a numpy array is wrapped without a copy; the output that is that input
    must not share the caller's array."""
    arr = np.ones((2, 3), np.float32)
    with start(_program(), {"W": torch.from_numpy(W_VALUE.copy())}, backend="threads") as run:
        out = run.run({"x": arr})
        out["input"].fill_(5.0)
        out["view"].fill_(5.0)
    assert (arr == 1.0).all()


def test_held_memory_ranges():
    base = torch.zeros(100)
    held = HeldMemory([base[10:20]])  # a view: its whole storage counts
    assert held.overlaps(base) and held.overlaps(base[90:])
    assert not held.overlaps(torch.zeros(3))
    a, b, c = torch.zeros(4), torch.zeros(4), torch.zeros(4)
    held = HeldMemory([c, a, b])
    assert all(held.overlaps(t) for t in (a, b, c))
    empty = torch.zeros(0)
    assert HeldMemory([empty]).overlaps(empty)  # no memory: the object itself is held
    assert not HeldMemory([torch.zeros(0)]).overlaps(torch.zeros(0))
    # two storages over one memory range (numpy memory wrapped twice)
    arr = np.zeros(5, np.float32)
    assert HeldMemory([torch.from_numpy(arr)]).overlaps(torch.from_numpy(arr))
    out, copied = own_outputs({"y": a, "z": a}, HeldMemory())
    assert copied == ["z"] and out["y"] is a and out["z"] is not a


# ------------------------------------------------------------------------ compiled ONNX models


def _aliasing_model() -> onnx.ModelProto:
    """Outputs: a weight, the input, a Reshape (view) of the input, one value twice, and a
    computed value."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    outs = [
        helper.make_tensor_value_info("yw", TensorProto.FLOAT, [2, 3]),
        helper.make_tensor_value_info("yx", TensorProto.FLOAT, [2, 3]),
        helper.make_tensor_value_info("yv", TensorProto.FLOAT, [3, 2]),
        helper.make_tensor_value_info("ya", TensorProto.FLOAT, [2, 3]),
        helper.make_tensor_value_info("yb", TensorProto.FLOAT, [2, 3]),
        helper.make_tensor_value_info("yr", TensorProto.FLOAT, [2, 3]),
    ]
    nodes = [
        helper.make_node("Identity", ["W"], ["yw"], name="weight"),
        helper.make_node("Identity", ["x"], ["yx"], name="input"),
        helper.make_node("Reshape", ["x", "shape"], ["yv"], name="view"),
        helper.make_node("Sigmoid", ["x"], ["s"], name="sig"),
        helper.make_node("Identity", ["s"], ["ya"], name="twice_a"),
        helper.make_node("Identity", ["s"], ["yb"], name="twice_b"),
        helper.make_node("Relu", ["x"], ["yr"], name="computed"),
    ]
    inits = [
        numpy_helper.from_array(W_VALUE, "W"),
        numpy_helper.from_array(np.array([3, 2], np.int64), "shape"),
    ]
    model = helper.make_model(
        helper.make_graph(nodes, "aliasing", [x], outs, inits),
        opset_imports=[helper.make_opsetid("", 17)],
    )
    model.ir_version = 8
    return model


@pytest.mark.parametrize(
    "backend,clusters,mode",
    [
        ("threads", 1, "parallel"),
        ("threads", 2, "parallel"),
        ("processes", 2, "parallel"),
        ("threads", 2, "sequential"),
    ],
)
def test_compiled_outputs_are_owned(backend, clusters, mode, tmp_path):
    model = ramiel.compile(
        _aliasing_model(), clusters=clusters, backend=backend, out_dir=str(tmp_path)
    )
    x = torch.ones(2, 3)
    call = model if mode == "parallel" else model.sequential
    try:
        first = call(x)
        ptrs = [t.untyped_storage().data_ptr() for t in first]
        assert len(set(ptrs)) == len(ptrs), "two outputs share memory"
        with torch.inference_mode():  # the sequential module's outputs are inference tensors
            for t in first:
                t.fill_(-7.0)
        yw, yx, yv, ya, yb, yr = call(x)
    finally:
        model.close()
    assert torch.equal(x, torch.ones(2, 3))
    assert torch.equal(yw, torch.from_numpy(W_VALUE))
    assert torch.equal(yx, x) and torch.equal(yv, torch.ones(3, 2)) and torch.equal(yr, x)
    assert torch.equal(ya, torch.sigmoid(x)) and torch.equal(yb, torch.sigmoid(x))


def test_sequential_module_copies_only_what_is_shared(tmp_path):
    ramiel.compile_model(_aliasing_model(), str(tmp_path))
    text = (tmp_path / "model_seq.py").read_text()
    ret = [ln.strip() for ln in text.splitlines() if ln.strip().startswith("return (")]
    assert ret == ["return (yw_copy, x_copy, yv_copy, s, s_copy, yr)"], ret
    assert text.count(".clone()") == 4


def test_no_copy_in_a_real_model(zoo_models, tmp_path):
    """light_squeezenet: its output is computed, so neither the sequential module nor the
    runners copy anything."""
    model = ramiel.compile(zoo_models["light_squeezenet"], clusters=2, out_dir=str(tmp_path))
    try:
        assert ".clone()" not in (tmp_path / "model_seq.py").read_text()
        x = torch.randn(*model.input_specs["data_0"][0])
        model(x)
        assert model._runner.copied_outputs == []
        with ramiel.compile(zoo_models["light_squeezenet"], clusters=1) as one:
            one(x)
            assert one.runtime_config()[0] == "inline"
            assert one._runner.copied_outputs == []
    finally:
        model.close()


# -------------------------------------------------- the ops the sequential analysis trusts


def test_fresh_ops_never_alias_their_operands(monkeypatch):
    """Every call of a FRESH_CALLEES/FRESH_METHODS op, in every ONNX node conformance case the
    rules lower, returns memory that none of its operands has."""
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent / "lowering"))
    from _lowering_cases import frozen_model_and_feeds, supported_node_cases

    from ramiel.errors import RamielError
    from ramiel.lowering import eval_emitter, node_view
    from ramiel.lowering.outputs import FRESH_CALLEES, FRESH_METHODS

    violations: list[str] = []
    checked: set[str] = set()

    def tensors(a):
        if isinstance(a, eval_emitter.EvalValue):
            a = a.obj
        if isinstance(a, torch.Tensor):
            yield a
        elif isinstance(a, list | tuple):
            for x in a:
                yield from tensors(x)

    def check(what, operands, out):
        checked.add(what)
        held = HeldMemory(list(tensors(operands)))
        if any(held.overlaps(t) for t in tensors(out)):
            violations.append(f"{what} in {case_name[0]}")

    class Checking(eval_emitter.EvalEmitter):
        def call(self, callee, *args, **kwargs):
            out = super().call(callee, *args, **kwargs)
            if callee in FRESH_CALLEES:
                check(callee, [args, list(kwargs.values())], out)
            return out

        def method(self, obj, name, *args, **kwargs):
            out = super().method(obj, name, *args, **kwargs)
            if name in FRESH_METHODS:
                check(f".{name}", [obj, args, list(kwargs.values())], out)
            return out

    monkeypatch.setattr(node_view, "EvalEmitter", Checking)
    case_name = [""]
    for case in supported_node_cases():
        case_name[0] = case.name
        model, feeds = frozen_model_and_feeds(case)
        try:
            node_view.run_graph_eagerly(model, feeds)
        except (RamielError, RuntimeError, TypeError, ValueError):
            continue  # rejected cases (unsupported element types...) call nothing of interest
    assert not violations, violations
    assert len(checked) > 60, sorted(checked)  # the lists are exercised, not only declared
