"""The printer's torch dtype table (ramiel.pysource.TORCH_DTYPE_NAMES) against torch itself."""

from __future__ import annotations

import numpy as np
import torch
from xdsl.dialects.builtin import TensorType

from ramiel.dtypes import ELEMENT_TYPES, numpy_dtype_of
from ramiel.pysource import TORCH_DTYPE_NAMES, tensor_type_problem


def test_every_name_is_a_torch_dtype_of_the_numpy_element_size():
    for name in sorted(TORCH_DTYPE_NAMES):
        dtype = getattr(torch, name, None)
        assert isinstance(dtype, torch.dtype), name
        assert dtype.itemsize == numpy_dtype_of_name(name).itemsize, name


def test_every_onnx_element_type_with_a_torch_dtype_is_in_the_table():
    for onnx_dtype, el in ELEMENT_TYPES.items():
        name = numpy_dtype_of(el).name
        has_torch = isinstance(getattr(torch, name, None), torch.dtype)
        assert (name in TORCH_DTYPE_NAMES) == has_torch, (onnx_dtype, name)


def test_tensor_type_problem_sizes_by_the_element_type():
    f32, i64 = ELEMENT_TYPES[1], ELEMENT_TYPES[7]
    assert tensor_type_problem(TensorType(f32, [2, 3])) is None
    # 2**59 int64 elements are 2**62 bytes: more than MAX_TENSOR_BYTES; as float32 half that
    big = tensor_type_problem(TensorType(i64, [2**30, 2**29]))
    assert big is not None and str(2**62) in big


def numpy_dtype_of_name(name: str) -> np.dtype:
    for el in ELEMENT_TYPES.values():
        if numpy_dtype_of(el).name == name:
            return numpy_dtype_of(el)
    raise AssertionError(f"no onnx element type has the numpy dtype {name}")


# ---------------------------------------------------------------------------------------------
# The table of torch's names (ramiel/torch_names.py, scripts/gen_torch_names.py)
# ---------------------------------------------------------------------------------------------


def test_generated_torch_names_are_current():
    """``ramiel/torch_names.py`` is what ``scripts/gen_torch_names.py`` writes from the installed
    torch and ``ramiel.runtime.ops`` now (regenerate it after a torch upgrade or a new op)."""
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    script = os.path.join(root, "scripts", "gen_torch_names.py")
    done = subprocess.run(
        [sys.executable, script, "--check"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr


_NO_TORCH = """
import sys
from ramiel.pysource import callee_problem, literal_problem, method_problem
assert callee_problem("F.conv2d") is None
assert callee_problem("torch.linalg.vector_norm") is None
assert callee_problem("ops.conv2d_prepacked") is None
assert method_problem("reshape") is None and method_problem("add_") is None
assert literal_problem("torch.float32", 0) is None
assert literal_problem("torch.channels_last", 0) is None
assert "torch" not in sys.modules, "checking the names imported torch"
print(callee_problem("torch.float32"))
print(callee_problem("F.conv9d"))
print(method_problem("reshapee"))
print(literal_problem("torch.no_such_dtype", 0))
"""


def test_names_in_the_table_are_checked_without_importing_torch():
    """The verifier answers the names generated code uses from the table (no torch import, the
    2-3 s an interpreter start paid); names the table lacks fall back to torch itself, with the
    same messages as before."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _NO_TORCH], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines == [
        "'torch.float32' is not callable",
        "'F.conv9d' does not exist (F has no attribute 'conv9d')",
        "torch.Tensor has no method 'reshapee'",
        "literal argument 'torch.no_such_dtype': 'torch.no_such_dtype' does not exist (torch has "
        "no attribute 'no_such_dtype')",
    ]


def test_the_table_agrees_with_torch():
    """Every listed name resolves in torch as the table says (callable or not), so answering from
    the table accepts exactly what importing torch would."""
    import operator

    import torch.nn.functional

    from ramiel import torch_names
    from ramiel.pysource import MODULE_NAMESPACE
    from ramiel.runtime import ops

    assert torch.__version__ == torch_names.TORCH_VERSION
    roots = {"torch": torch, "F": torch.nn.functional, "ops": ops}
    assert set(MODULE_NAMESPACE) == set(roots) | {"math", "operator"}
    for names, want in ((torch_names.CALLABLE, True), (torch_names.NOT_CALLABLE, False)):
        for dotted in names:
            head, *rest = dotted.split(".")
            obj = roots[head]
            for part in rest:
                obj = getattr(obj, part)
            assert callable(obj) == want, dotted
    for method in torch_names.TENSOR_METHODS:
        assert callable(operator.attrgetter(method)(torch.Tensor)), method
