"""ramiel.pipeline.run_passes verifies the IR after every pass and names the pass that broke it
(as ramiel-opt does), on the compiler's own path; after the first pass it checks what a pass
changed and the ops whose verifiers read that (ramiel.parsing.IncrementalVerifier)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from ramiel import parsing
from ramiel.attrs import INPLACE_ATTR, set_int
from ramiel.context import make_context
from ramiel.dialects import onnx as onnx_d
from ramiel.importer import import_onnx
from ramiel.parsing import IncrementalVerifier, LocatedVerifyError
from ramiel.passes import PASSES
from ramiel.pipeline import clean_up_passes, run_passes


@dataclass(frozen=True)
class _DropOperand(ModulePass):
    """Breaks the IR: the first Relu loses its operand (the verifier wants exactly one)."""

    name = "drop-operand"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        relu = next(o for o in op.walk() if isinstance(o, onnx_d.OnnxOp) and o.op_type == "Relu")
        relu.operands = ()


def _model() -> ModuleOp:
    from onnx import TensorProto, helper

    g = helper.make_graph(
        [
            helper.make_node("Relu", ["x"], ["y"], name="relu0"),
            helper.make_node("Neg", ["y"], ["z"]),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 4])],
    )
    return import_onnx(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))


def test_the_pass_that_breaks_the_ir_is_named() -> None:
    module = _model()
    with pytest.raises(LocatedVerifyError) as e:
        run_passes(
            module, [*clean_up_passes([]), _DropOperand(), *clean_up_passes([])], make_context()
        )
    assert str(e.value.reason).startswith("IR invalid after pass 'drop-operand': ")
    assert "IR invalid after pass 'drop-operand'" in str(e.value)


def test_valid_passes_leave_a_verified_module() -> None:
    module = _model()
    run_passes(module, clean_up_passes(["fuse-gelu"]), make_context())
    module.verify()
    assert [o.op_type for o in module.walk() if isinstance(o, onnx_d.OnnxOp)] == ["Relu", "Neg"]


@dataclass(frozen=True)
class _ReadAgain(ModulePass):
    """Leaves every op as it is but gives the Relu's operand a second reader (a new Neg), which
    makes the untouched Relu's in-place claim on it invalid."""

    name = "read-again"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        relu = next(o for o in op.walk() if isinstance(o, onnx_d.OnnxOp) and o.op_type == "Relu")
        neg = onnx_d.create("Neg", [relu.operands[0]], [relu.operands[0].type])
        assert relu.parent is not None
        relu.parent.insert_op_before(neg, relu)


def _claimed_model(claim: bool = True) -> ModuleOp:
    """x + x -> Relu (in place on the Add's result unless not ``claim``) -> Neg."""
    from onnx import TensorProto, helper

    g = helper.make_graph(
        [
            helper.make_node("Add", ["x", "x"], ["n"]),
            helper.make_node("Relu", ["n"], ["y"]),
            helper.make_node("Neg", ["y"], ["z"]),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 4])],
    )
    module = import_onnx(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))
    relu = next(o for o in module.walk() if isinstance(o, onnx_d.OnnxOp) and o.op_type == "Relu")
    if claim:
        set_int(relu, INPLACE_ATTR, 0)  # what --inplace writes there
    parsing.verify_located(module)
    return module


def test_an_untouched_op_that_a_pass_made_invalid_is_found_after_that_pass() -> None:
    """The check after a pass covers more than the ops it changed: the Relu is the same op with
    the same operands and attributes, but its claim no longer holds."""
    module = _claimed_model()
    with pytest.raises(LocatedVerifyError) as e:
        run_passes(module, [PASSES["dce"]()(), _ReadAgain()], make_context())
    assert str(e.value.reason).startswith("IR invalid after pass 'read-again': ")
    assert "other uses" in e.value.reason
    assert isinstance(e.value.op, onnx_d.OnnxOp) and e.value.op.op_type == "Relu"


def test_after_the_first_pass_only_what_changed_is_checked(monkeypatch) -> None:
    """A pass that changes nothing costs no op verification; one that adds an op costs that op
    and its neighbours, not the module."""
    checked: list[Operation] = []
    real = parsing._verify_op
    monkeypatch.setattr(parsing, "_verify_op", lambda op: (checked.append(op), real(op)))
    module = _claimed_model(claim=False)
    checked.clear()
    verifier = IncrementalVerifier()
    assert verifier.verify(module) is True
    everything = len(checked)
    assert everything == len(list(module.walk()))
    checked.clear()
    assert verifier.verify(module) is False
    assert checked == []
    _ReadAgain().apply(make_context(), module)
    verifier.verify(module)
    names = sorted(o.name for o in checked)
    # the new Neg, the Relu (it reads the same value), the Add that defines that value, and the
    # enclosing function and module; not the last Neg
    assert names == ["builtin.module", "func.func", "onnx.Add", "onnx.Neg", "onnx.Relu"]


def test_what_the_check_after_each_pass_misses_the_final_check_finds(monkeypatch) -> None:
    """Every op is checked again after the last pass: with a change detection that sees nothing
    (a stand-in for a rule that reads further than an op's neighbours), the broken IR is still
    reported, naming the passes that ran."""
    monkeypatch.setattr(parsing, "_fingerprint", lambda op: ())
    module = _model()
    with pytest.raises(LocatedVerifyError) as e:
        run_passes(module, [PASSES["dce"]()(), _DropOperand()], make_context())
    assert str(e.value.reason).startswith("IR invalid after the passes 'dce', 'drop-operand': ")
