"""Graph outputs the caller owns: a copy (``.clone()``) of each output of a sequential ``torchpy``
function that may share memory with a weight, an input or another output, behind
``--own-outputs`` (:mod:`ramiel.passes.own_outputs`, whose docstring says which outputs and why)
and the end of the sequential lowering. :func:`own_outputs` rewrites one function.
"""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue

from ramiel.dialects import torchpy as tp

__all__ = ["FRESH_CALLEES", "FRESH_METHODS", "own_outputs"]

_ELEMENTWISE = (
    "abs acos acosh asin asinh atan atanh ceil cos cosh erf exp floor isinf isnan isneginf "
    "isposinf log logical_not neg reciprocal round rsqrt sigmoid sign sin sinh sqrt square tan "
    "tanh relu bitwise_not trunc"
)
_TORCH = (
    "addmm amax amin argmax argmin bitwise_and bitwise_left_shift bitwise_or bitwise_right_shift "
    "bitwise_xor bmm cat clamp cumsum cumprod div eq fmod gather ge gt le logical_and "
    "logical_or logical_xor logsumexp lt matmul maximum mean minimum mm mul ne pow prod "
    "remainder sub sum where stack linalg.det linalg.vector_norm arange eye full full_like "
    "ones ones_like tensor zeros zeros_like"
)
_F = (
    "avg_pool1d avg_pool2d avg_pool3d batch_norm celu conv1d conv2d conv3d conv_transpose1d "
    "conv_transpose2d conv_transpose3d elu gelu grid_sample group_norm hardshrink hardsigmoid "
    "hardswish instance_norm layer_norm leaky_relu linear local_response_norm log_softmax "
    "lp_pool1d lp_pool2d max_pool1d max_pool2d max_pool3d mish normalize prelu relu rms_norm selu silu softmax softplus softshrink softsign tanhshrink "
    "threshold"
)
_OPERATOR = "add and_ eq floordiv ge gt invert le lt matmul mod mul ne neg or_ pow sub truediv xor"
#: Ramiel's runtime helpers that return a new tensor (a oneDNN result, or the plain op's; never
#: an operand nor a view of one: ``tests/test_prepack_matmul.py`` checks it).
_OPS = "conv2d_prepacked matmul_prepacked"

#: Callees whose result never shares memory with an operand (a new tensor every call).
FRESH_CALLEES: frozenset[str] = frozenset(
    [f"torch.{n}" for n in (_ELEMENTWISE + " " + _TORCH).split()]
    + [f"F.{n}" for n in _F.split()]
    + [f"operator.{n}" for n in _OPERATOR.split()]
    + [f"ops.{n}" for n in _OPS.split()]
)

#: Tensor methods whose result never shares memory with the tensor or an operand.
_METHODS = "clone sum mean prod amax amin argmax argmin flip masked_fill repeat cumsum abs exp log"
FRESH_METHODS: frozenset[str] = frozenset(_METHODS.split() + ["sqrt", "neg"])


def _element_type(v: SSAValue) -> Attribute | None:
    return v.type.element_type if isinstance(v.type, TensorType) else None


def _is_fresh(op: Operation) -> bool:
    if isinstance(op, tp.CallOp):
        return op.callee.data in FRESH_CALLEES
    if isinstance(op, tp.MethodOp):
        if op.method.data == "to":  # a conversion to another element type allocates
            src, dst = _element_type(op.inputs[0]), _element_type(op.results[0])
            return src is not None and dst is not None and src != dst
        return op.method.data in FRESH_METHODS
    return False


def own_outputs(f: tp.FuncOp) -> int:
    """Make the outputs of the sequential function ``f`` owned (module docstring); returns the
    number of copies inserted."""
    block = f.body.block
    ret = block.last_op
    if not isinstance(ret, tp.ReturnOp):
        return 0
    held = object()  # the root of everything a caller or the weights hold
    roots: dict[SSAValue, frozenset[object]] = {}
    for arg in block.args:
        roots[arg] = frozenset([held])
    for op in block.ops:
        if isinstance(op, tp.WeightOp):
            roots[op.result] = frozenset([held])
            continue
        if _is_fresh(op):
            for r in op.results:
                roots[r] = frozenset([r])
            continue
        shared = frozenset().union(*(roots.get(v, frozenset([held])) for v in op.operands))
        for r in op.results:
            roots[r] = shared | {r}
    returned: set[object] = {held}
    new_values: list[SSAValue] = []
    copies = 0
    for v in ret.values:
        mine = roots.get(v, frozenset([held]))
        if isinstance(v.type, TensorType) and mine & returned:
            copy = tp.MethodOp("clone", [v], [], None, [v.type])
            hint = v.name_hint or ("input" if isinstance(v, BlockArgument) else "output")
            copy.results[0].name_hint = f"{hint}_copy"
            block.insert_op_before(copy, ret)
            v = copy.results[0]
            mine = frozenset([v])
            copies += 1
        returned |= mine
        new_values.append(v)
    if copies:
        ret.operands = new_values
    return copies
