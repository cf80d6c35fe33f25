"""The weight stores are explicit (:class:`ramiel.weights.WeightStores`, owned by
:class:`ramiel.context.RamielContext`): what a module's ``dense_resource`` constants hold depends
on the IR and the context it is read with, never on an earlier module of the process."""

from __future__ import annotations
import __future__

import os
import re
import types

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.context import Context
from xdsl.dialects.builtin import DenseResourceAttr, ModuleOp

import ramiel.weights
from ramiel.context import RamielContext, make_context, module_store
from ramiel.dialects.onnx import OnnxOp
from ramiel.errors import RamielError
from ramiel.importer import ImportOptions, import_onnx
from ramiel.parsing import parse_module
from ramiel.passes.constant_fold import ConstantFold
from ramiel.weights import WeightStores, constant_value


def _model(w: np.ndarray) -> onnx.ModelProto:
    """``y = x @ transpose(w)``: ``w`` (8x6) is an initializer, its Transpose folds into a new
    weight."""
    graph = helper.make_graph(
        [
            helper.make_node("Transpose", ["w"], ["wt"], perm=[1, 0]),
            helper.make_node("MatMul", ["x", "wt"], ["y"]),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 6])],
        [numpy_helper.from_array(w, "w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    return onnx.shape_inference.infer_shapes(model)


def _weights(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((6, 8)).astype(np.float32)


def _write_ir(d, w: np.ndarray) -> str:
    """``d/model.mlir`` naming ``w.safetensors`` relative to ``d``; returns the IR's path."""
    module = import_onnx(
        _model(w), ImportOptions(weights_path=str(d / "w.safetensors"), weights_ref="w.safetensors")
    )
    path = d / "model.mlir"
    path.write_text(str(module) + "\n")
    return str(path)


def _read(path: str) -> tuple[ModuleOp, RamielContext]:
    ctx = make_context(os.path.dirname(path))  # the IR names its weights relative to itself
    with open(path) as f:
        return parse_module(ctx, f.read(), path), ctx


def _constant(module: ModuleOp, user: str = "Transpose") -> DenseResourceAttr:
    """The ``dense_resource`` value that the first ``user`` op reads (Transpose: ``w``; MatMul
    after ``--constant-fold``: the folded transpose)."""
    op = next(o for o in module.walk() if isinstance(o, OnnxOp) and o.op_type == user)
    operand = op.operands[0 if user == "Transpose" else 1]
    attr = operand.owner.properties["value"]  # type: ignore[union-attr]
    assert isinstance(attr, DenseResourceAttr)
    return attr


def test_modules_beside_different_weights_files_see_their_own_tensors(tmp_path):
    """Two IR files that both name ``w.safetensors`` (relative, each beside its own), read in one
    process in either order, resolve to their own tensors; the tensors a pass adds to one
    module's store are not in the other's."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    wa, wb = _weights(0), _weights(1)
    pa, pb = _write_ir(tmp_path / "a", wa), _write_ir(tmp_path / "b", wb)
    for first, second in ((pa, pb), (pb, pa)):
        ma, ctx_a = _read(first)
        mb, ctx_b = _read(second)
        want = {pa: wa, pb: wb}
        np.testing.assert_array_equal(
            constant_value(_constant(ma), ctx_a.weights.of(ma)), want[first]
        )
        np.testing.assert_array_equal(
            constant_value(_constant(mb), ctx_b.weights.of(mb)), want[second]
        )
    # --constant-fold adds the transposed weight to a's store only
    ConstantFold().apply(ctx_a, ma)
    new = ctx_a.weights.of(ma)
    assert new is not None and len(new.new_keys()) == 1
    np.testing.assert_array_equal(constant_value(_constant(ma, "MatMul"), new), want[first].T)
    other = ctx_b.weights.of(mb)
    assert other is not None and other.new_keys() == []
    assert set(other.keys()) == {"w"}
    # one context per session: a fresh one for a's file does not see the unsaved tensor either
    again, ctx = _read(first)
    store = ctx.weights.of(again)
    assert store is not None and store.new_keys() == [] and set(store.keys()) == {"w"}


def test_the_base_directory_is_the_stores_not_the_processes(tmp_path):
    """The same module read through stores of two base directories names two files."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    _write_ir(tmp_path / "a", _weights(0))
    module, _ = _read(_write_ir(tmp_path / "b", _weights(1)))
    sa, sb = WeightStores(str(tmp_path / "a")), WeightStores(str(tmp_path / "b"))
    assert sa.path_of(module) == str(tmp_path / "a" / "w.safetensors")
    np.testing.assert_array_equal(constant_value(_constant(module), sa.of(module)), _weights(0))
    np.testing.assert_array_equal(constant_value(_constant(module), sb.of(module)), _weights(1))
    with pytest.raises(RamielError, match="not found"):
        constant_value(_constant(module), WeightStores(str(tmp_path)).of(module))


def test_a_rewritten_weights_file_is_read_again(tmp_path):
    """Within one session, a store whose file was rewritten since (the model imported again into
    the same path) is opened again; one holding unsaved tensors is kept."""
    path = _write_ir(tmp_path, _weights(0))
    module, ctx = _read(path)
    store = ctx.weights.of(module)
    np.testing.assert_array_equal(constant_value(_constant(module), store), _weights(0))
    _write_ir(tmp_path, _weights(1))
    fresh = ctx.weights.of(module)
    assert fresh is not store
    np.testing.assert_array_equal(constant_value(_constant(module), fresh), _weights(1))
    assert ctx.weights.of(module) is fresh
    fresh.add("extra", np.zeros(3, np.float32))
    _write_ir(tmp_path, _weights(2))
    assert ctx.weights.of(module) is fresh  # its unsaved tensor is not dropped


def test_the_context_owns_the_stores(tmp_path):
    """A pass reads the weights of its ``ctx``: a clone shares them, a plain xDSL context has
    none (one clear error), and a module without a weights file needs none."""
    module, ctx = _read(_write_ir(tmp_path, _weights(0)))
    assert ctx.clone().weights is ctx.weights
    assert module_store(ctx, module) is ctx.weights.of(module)
    with pytest.raises(RamielError, match="make_context"):
        ConstantFold().apply(Context(), module)
    inline = import_onnx(_model(_weights(0)))  # no weights file: everything inline
    assert module_store(Context(), inline) is None
    ConstantFold().apply(Context(), inline)
    with pytest.raises(RamielError, match="names no weights file"):
        constant_value(_constant(module), None)


def test_no_module_level_mutable_state_in_weights():
    """ramiel/weights.py holds functions, classes, imported modules and immutable values only
    (the dtype tables are read-only mappings): nothing a module's compilation could leave for
    the next one."""
    immutable = (int, float, str, bytes, bool, type(None), tuple, frozenset)
    read_only = (types.MappingProxyType, re.Pattern, __future__._Feature)
    mutable = []
    for name, value in vars(ramiel.weights).items():
        if name.startswith("__") or isinstance(value, types.ModuleType | type):
            continue
        if isinstance(value, immutable + read_only):
            continue
        if isinstance(value, types.FunctionType | types.BuiltinFunctionType):
            continue
        mutable.append(f"{name}: {type(value).__name__}")
    assert not mutable, mutable
    assert isinstance(ramiel.weights.SAFETENSORS_TAGS, types.MappingProxyType)


def test_an_import_replaces_the_weights_file_it_writes(tmp_path):
    """Importing into the path of an earlier weights file writes the new model's tensors only
    (an earlier import's, or a folded tensor an in-place ramiel-opt added, were kept: the file
    grew with every import of a model into the same place)."""
    from safetensors.numpy import load_file, save_file

    save_file({"stale": np.zeros(3, np.float32), "w": np.ones((6, 8), np.float32)}, str(tmp_path / "w.safetensors"))  # fmt: skip
    w = _weights(7)
    _write_ir(tmp_path, w)
    got = load_file(str(tmp_path / "w.safetensors"))
    assert sorted(got) == ["w"]
    np.testing.assert_array_equal(got["w"], w)


def test_ramiel_opt_writes_the_tensors_its_ir_reads(tmp_path, capsys):
    """``--constant-fold --dce -o out.mlir``: out.safetensors holds the folded kernel alone (the
    original, no longer read, is left out); in place the input's file gains the folded kernel
    and keeps the original, which another IR file beside it may still read."""
    from safetensors.numpy import load_file

    from ramiel.tools import opt

    ir = _write_ir(tmp_path, _weights(8))
    assert opt.main([ir, "--constant-fold", "--dce", "-o", str(tmp_path / "out.mlir")]) == 0
    assert sorted(load_file(str(tmp_path / "out.safetensors"))) == ["wt_folded"]
    assert sorted(load_file(str(tmp_path / "w.safetensors"))) == ["w"]
    m = import_onnx(
        _model(_weights(9)),
        ImportOptions(weights_path=str(tmp_path / "m.safetensors"), weights_ref="m.safetensors"),
    )
    (tmp_path / "m.mlir").write_text(str(m) + "\n")
    ir = str(tmp_path / "m.mlir")
    assert opt.main([ir, "--constant-fold", "--dce", "-o", ir]) == 0
    assert sorted(load_file(str(tmp_path / "m.safetensors"))) == ["w", "wt_folded"]
    capsys.readouterr()
