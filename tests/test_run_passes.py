"""ramiel.pipeline.run_passes verifies the IR after every pass and names the pass that broke it
(as ramiel-opt does), on the compiler's own path."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ramiel.context import make_context
from ramiel.dialects import onnx as onnx_d
from ramiel.importer import import_onnx
from ramiel.parsing import LocatedVerifyError
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
