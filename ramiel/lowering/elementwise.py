"""Element-wise ONNX operators: arithmetic, comparisons, logic, activations, Cast, Clip, Where.

Binary operators use numpy-style multidirectional broadcasting (ONNX opset >= 7), exactly torch's
broadcasting; before opset 7 the ``broadcast``/``axis`` attributes align the second operand at
``axis`` (https://onnx.ai/onnx/operators/onnx__Add.html#add-6), which is lowered to a reshape.
"""

from __future__ import annotations

from ramiel.lowering.api import (
    FLOAT8_DTYPES,
    SUPPORTED_DTYPES,
    NodeView,
    Value,
    is_float,
    is_int,
    rule,
)
from ramiel.lowering.common import (
    const,
    dtype,
    elem_type_name,
    has_input,
    in_dtype,
    out_dtype,
    rank,
    scalar_literal,
    shape,
    short_float,
)

# -- unary ---------------------------------------------------------------------------------------

_UNARY = {
    "Abs": "torch.abs",
    "Neg": "torch.neg",
    "Exp": "torch.exp",
    "Log": "torch.log",
    "Sqrt": "torch.sqrt",
    "Reciprocal": "torch.reciprocal",
    "Floor": "torch.floor",
    "Ceil": "torch.ceil",
    "Sin": "torch.sin",
    "Cos": "torch.cos",
    "Tan": "torch.tan",
    "Asin": "torch.asin",
    "Acos": "torch.acos",
    "Atan": "torch.atan",
    "Sinh": "torch.sinh",
    "Cosh": "torch.cosh",
    "Asinh": "torch.asinh",
    "Acosh": "torch.acosh",
    "Atanh": "torch.atanh",
    "Erf": "torch.erf",
    "Sign": "torch.sign",
    # Round: ONNX rounds half to even, as torch.round does.
    "Round": "torch.round",
    "Relu": "torch.relu",
    "Sigmoid": "torch.sigmoid",
    "Tanh": "torch.tanh",
    "Not": "torch.logical_not",
    "BitwiseNot": "torch.bitwise_not",
    "IsNaN": "torch.isnan",
    "Softsign": "F.softsign",
    "Mish": "F.mish",
}


#: In-place forms of unary ops (for ``NodeView.inplace``, set by ``--inplace``).
_UNARY_INPLACE = {"Relu": "torch.relu_", "Sigmoid": "torch.sigmoid_", "Tanh": "torch.tanh_"}


def _unary(node: NodeView, args: list[Value], em) -> list[Value]:
    x = args[0]
    op = node.op_type
    if op in ("Floor", "Ceil", "Round") and not is_float(in_dtype(node)):
        return [x]  # integers are already integral
    if node.inplace == 0 and op in _UNARY_INPLACE:
        return [em.call(_UNARY_INPLACE[op], x)]
    if op == "Sign" and is_float(in_dtype(node)):
        # torch.sign(NaN) is 0; onnxruntime and onnx.reference (numpy) give NaN
        sign = em.call("torch.sign", x)
        return [em.call("torch.where", em.call("torch.isnan", x), x, sign)]
    return [em.call(_UNARY[op], x)]


rule(*_UNARY)(_unary)


@rule("Identity")
def _identity(node: NodeView, args, em):
    """Identity: the output is the input Value itself (no statement)."""
    return [args[0]]


@rule("IsInf")
def _isinf(node: NodeView, args, em):
    """IsInf(detect_negative=1, detect_positive=1)."""
    neg, pos = node.attrs["detect_negative"], node.attrs["detect_positive"]
    if neg and pos:
        return [em.call("torch.isinf", args[0])]
    if pos:
        return [em.call("torch.isposinf", args[0])]
    if neg:
        return [em.call("torch.isneginf", args[0])]
    return [em.call("torch.zeros_like", args[0], dtype=dtype("bool"))]


# -- activations with attributes ------------------------------------------------------------------


@rule("LeakyRelu")
def _leaky_relu(node: NodeView, args, em):
    """LeakyRelu: y = x if x >= 0 else alpha * x (``F.leaky_relu_`` in place)."""
    fn = "F.leaky_relu_" if node.inplace == 0 else "F.leaky_relu"
    return [em.call(fn, args[0], node.attrs["alpha"])]


@rule("Elu")
def _elu(node: NodeView, args, em):
    """Elu: y = x if x > 0 else alpha * (exp(x) - 1) (``F.elu_`` in place)."""
    fn = "F.elu_" if node.inplace == 0 else "F.elu"
    return [em.call(fn, args[0], alpha=node.attrs["alpha"])]


@rule("Celu")
def _celu(node: NodeView, args, em):
    """Celu: y = max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    return [em.call("F.celu", args[0], alpha=node.attrs["alpha"])]


_SELU_ALPHA = 1.6732632
_SELU_GAMMA = 1.050701


@rule("Selu")
def _selu(node: NodeView, args, em):
    """Selu: y = gamma * (x if x > 0 else alpha * (exp(x) - 1)); F.selu when the attributes are
    ONNX's defaults (torch's constants agree to float32 precision)."""
    a, g = node.attrs["alpha"], node.attrs["gamma"]
    if a == _SELU_ALPHA and g == _SELU_GAMMA:
        return [em.call("F.selu", args[0])]
    y = em.call("F.elu", args[0], alpha=a)
    return [em.call("operator.mul", y, g)]


@rule("HardSigmoid")
def _hard_sigmoid(node: NodeView, args, em):
    """HardSigmoid: y = max(0, min(1, alpha * x + beta)); F.hardsigmoid for alpha=1/6, beta=0.5."""
    a, b = node.attrs["alpha"], node.attrs["beta"]
    if short_float(1 / 6) == a and b == 0.5:
        if node.inplace == 0:
            return [em.call("F.hardsigmoid", args[0], inplace=True)]
        return [em.call("F.hardsigmoid", args[0])]
    y = em.call("operator.mul", args[0], a)
    y = em.call("operator.add", y, b)
    return [em.call("torch.clamp", y, 0.0, 1.0)]


@rule("HardSwish")
def _hard_swish(node: NodeView, args, em):
    """HardSwish: y = x * max(0, min(1, x / 6 + 0.5)) = F.hardswish."""
    if node.inplace == 0:
        return [em.call("F.hardswish", args[0], inplace=True)]
    return [em.call("F.hardswish", args[0])]


@rule("Softplus")
def _softplus(node: NodeView, args, em):
    """Softplus: y = log(exp(x) + 1) (F.softplus switches to y = x above 20, where they agree to
    float precision)."""
    return [em.call("F.softplus", args[0])]


@rule("ThresholdedRelu")
def _thresholded_relu(node: NodeView, args, em):
    """ThresholdedRelu: y = x if x > alpha else 0 = F.threshold(x, alpha, 0)."""
    return [em.call("F.threshold", args[0], node.attrs["alpha"], 0.0)]


def _check_gelu(node: NodeView) -> str | None:
    if node.attrs["approximate"] not in ("none", "tanh"):
        return f"approximate='{node.attrs['approximate']}'"
    return None


@rule("Gelu", check=_check_gelu)
def _gelu(node: NodeView, args, em):
    """Gelu (opset 20): approximate 'none' (erf) or 'tanh'."""
    if node.attrs["approximate"] == "tanh":
        return [em.call("F.gelu", args[0], approximate="tanh")]
    return [em.call("F.gelu", args[0])]


@rule("Swish")
def _swish(node: NodeView, args, em):
    """Swish (opset 24): y = x * sigmoid(alpha * x); F.silu for alpha = 1."""
    alpha = node.attrs.get("alpha", 1.0)
    if alpha == 1.0:
        return [em.call("F.silu", args[0])]
    s = em.call("operator.mul", args[0], alpha)
    s = em.call("torch.sigmoid", s)
    return [em.call("operator.mul", args[0], s)]


@rule("Shrink")
def _shrink(node: NodeView, args, em):
    """Shrink: y = x + bias if x < -lambd, x - bias if x > lambd, else 0."""
    lambd, bias = node.attrs["lambd"], node.attrs["bias"]
    if is_float(in_dtype(node)):
        if bias == 0.0:
            return [em.call("F.hardshrink", args[0], lambd)]
        if bias == lambd:
            return [em.call("F.softshrink", args[0], lambd)]
    return [em.call("ops.shrink", args[0], lambd, bias)]


@rule("PRelu")
def _prelu(node: NodeView, args, em):
    """PRelu: y = x if x >= 0 else slope * x, slope broadcast (unidirectionally) to x.

    F.prelu when the slope is one value or one per channel (dim 1), else ``torch.where``.
    """
    xs, ss = shape(node, 0), shape(node, 1)
    if xs is not None and ss is not None and len(xs) >= 2 and len(ss) <= len(xs):
        full = (1,) * (len(xs) - len(ss)) + tuple(ss)
        n = 1
        for d in ss:
            n *= d
        per_channel = full[1] == xs[1] and all(d == 1 for i, d in enumerate(full) if i != 1)
        if n == 1 or per_channel:
            w = args[1] if len(ss) == 1 else em.method(args[1], "reshape", -1)
            return [em.call("F.prelu", args[0], w)]
    neg = em.call("operator.mul", args[0], args[1])
    cond = em.call("operator.lt", args[0], 0)
    return [em.call("torch.where", cond, neg, args[0])]


# -- binary --------------------------------------------------------------------------------------


def _legacy_broadcast(node: NodeView, args: list[Value], em) -> Value:
    """Before opset 7, ``broadcast=1`` aligns B with A starting at ``axis`` (default: suffix)."""
    b = args[1]
    axis = node.attrs.get("axis")
    if node.opset < 7 and node.attrs.get("broadcast") and axis is not None:
        ra, bs = rank(node, 0), shape(node, 1)
        if ra is not None and bs is not None:
            axis = axis + ra if axis < 0 else axis
            trailing = ra - axis - len(bs)
            if trailing > 0:
                b = em.method(b, "reshape", *bs, *([1] * trailing))
    return b


def _check_legacy_broadcast(node: NodeView) -> str | None:
    legacy = node.opset < 7 and node.attrs.get("broadcast") and node.attrs.get("axis") is not None
    if legacy and (rank(node, 0) is None or shape(node, 1) is None):
        return "legacy broadcast with axis needs static shapes"
    return None


_BINARY = {
    "Add": "operator.add",
    "Sub": "operator.sub",
    "Mul": "operator.mul",
    "Equal": "operator.eq",
    "Less": "operator.lt",
    "Greater": "operator.gt",
    "LessOrEqual": "operator.le",
    "GreaterOrEqual": "operator.ge",
    "And": "torch.logical_and",
    "Or": "torch.logical_or",
    "Xor": "torch.logical_xor",
    "BitwiseAnd": "torch.bitwise_and",
    "BitwiseOr": "torch.bitwise_or",
    "BitwiseXor": "torch.bitwise_xor",
}


#: In-place forms of binary ops (for ``NodeView.inplace``): a tensor method on the overwritten
#: operand, whose type the verifier guarantees is the result's.
_BINARY_INPLACE = {"Add": "add_", "Sub": "sub_", "Mul": "mul_", "Div": "div_"}


def _binary_inplace(node: NodeView, args: list[Value], em) -> list[Value] | None:
    """``x.add_(y)`` (or ``y.add_(x)`` for a commutative op overwriting operand 1) when
    ``node.inplace`` says so and no legacy broadcast is involved, else None."""
    if node.inplace is None or node.op_type not in _BINARY_INPLACE:
        return None
    if node.opset < 7 and node.attrs.get("broadcast"):
        return None
    i = node.inplace
    return [em.method(args[i], _BINARY_INPLACE[node.op_type], args[1 - i])]


def _binary(node: NodeView, args: list[Value], em) -> list[Value]:
    inplace = _binary_inplace(node, args, em)
    if inplace is not None:
        return inplace
    b = _legacy_broadcast(node, args, em)
    return [em.call(_BINARY[node.op_type], args[0], b)]


rule(*_BINARY, check=_check_legacy_broadcast)(_binary)


@rule("Div", check=_check_legacy_broadcast)
def _div(node: NodeView, args, em):
    """Div: true division for floats; integers truncate toward zero (C semantics, as the ONNX
    reference and onnxruntime do); uint64, which torch cannot divide, by ``ops.div_uint64``."""
    b = _legacy_broadcast(node, args, em)
    if in_dtype(node) == "uint64":
        return [em.call("ops.div_uint64", args[0], b)]
    if is_int(in_dtype(node)):
        return [em.call("torch.div", args[0], b, rounding_mode="trunc")]
    inplace = _binary_inplace(node, args, em)
    if inplace is not None:
        return inplace
    return [em.call("operator.truediv", args[0], b)]


@rule("Mod")
def _mod(node: NodeView, args, em):
    """Mod: fmod=0 takes the sign of the divisor (Python %, torch.remainder); fmod=1 the sign of
    the dividend (C fmod, torch.fmod)."""
    if node.attrs["fmod"]:
        return [em.call("torch.fmod", args[0], args[1])]
    return [em.call("torch.remainder", args[0], args[1])]


@rule("Pow", check=_check_legacy_broadcast)
def _pow(node: NodeView, args, em):
    """Pow: the output has the base's type (opset >= 12 allows another exponent type; a uint64
    exponent, which torch does not promote with other types, is taken by torch.pow as it is when
    the base is a float, the only case :func:`~ramiel.lowering.api.check_supported` lets
    through)."""
    b = _legacy_broadcast(node, args, em)
    y = em.call("torch.pow", args[0], b)
    ta, tb = in_dtype(node, 0), in_dtype(node, 1)
    if ta == tb or tb == "uint64":
        return [y]
    import torch  # lazy: torch (only here, for torch's promotion of two dtypes)

    if torch.promote_types(getattr(torch, ta), getattr(torch, tb)) != getattr(torch, ta):
        y = em.method(y, "to", dtype(ta))
    return [y]


def _check_bitshift(node: NodeView) -> str | None:
    if node.attrs["direction"] not in ("LEFT", "RIGHT"):
        return f"direction='{node.attrs['direction']}'"
    return None


@rule("BitShift", check=_check_bitshift)
def _bitshift(node: NodeView, args, em):
    """BitShift(direction=LEFT|RIGHT) on unsigned integers."""
    fn = "operator.lshift" if node.attrs["direction"] == "LEFT" else "operator.rshift"
    return [em.call(fn, args[0], args[1])]


# -- variadic ------------------------------------------------------------------------------------


def _fold(args: list[Value], fn: str, em) -> Value:
    y = args[0]
    for a in args[1:]:
        y = em.call(fn, y, a)
    return y


@rule("Sum")
def _sum(node: NodeView, args, em):
    """Sum of 1..N inputs with broadcasting; in place (``node.inplace = i``, set by ``--inplace``
    where input ``i`` is a fresh tensor of the result's shape nobody else reads):
    ``x_i.add_(x_j)`` for every other input in order, no new tensor (a residual block's
    ``conv.add_(identity)``)."""
    xs = [a for a in args if a is not None]
    i = node.inplace
    if i is not None and len(xs) >= 2 and i < len(xs) and None not in args[: len(xs)]:
        y = xs[i]
        for j, a in enumerate(xs):
            if j != i:
                y = em.method(y, "add_", a)
        return [y]
    return [_fold(xs, "operator.add", em)]


@rule("Mean")
def _mean(node: NodeView, args, em):
    """Mean of 1..N inputs with broadcasting: their sum divided by N."""
    xs = [a for a in args if a is not None]
    if len(xs) == 1:
        return [xs[0]]
    return [em.call("operator.truediv", _fold(xs, "operator.add", em), len(xs))]


@rule("Max")
def _max(node: NodeView, args, em):
    """Max of 1..N inputs with broadcasting (NaN propagates)."""
    return [_fold([a for a in args if a is not None], "torch.maximum", em)]


@rule("Min")
def _min(node: NodeView, args, em):
    """Min of 1..N inputs with broadcasting (NaN propagates)."""
    return [_fold([a for a in args if a is not None], "torch.minimum", em)]


# -- selection, clipping, casting ----------------------------------------------------------------


@rule("Where")
def _where(node: NodeView, args, em):
    """Where(condition, X, Y) with broadcasting."""
    return [em.call("torch.where", args[0], args[1], args[2])]


@rule("Clip")
def _clip(node: NodeView, args, em):
    """Clip: min/max are attributes before opset 11 and optional scalar inputs from opset 11.

    Constant bounds become literals; if min > max every element becomes max (as np.clip and
    torch.clamp do).
    """
    dt = in_dtype(node)
    if node.opset < 11:
        lo, hi = node.attrs.get("min"), node.attrs.get("max")
        lo = None if lo is None or lo <= -3.4028234e38 else scalar_literal(lo, dt)
        hi = None if hi is None or hi >= 3.4028234e38 else scalar_literal(hi, dt)
        if lo is None and hi is None:
            return [args[0]]
        return [em.call("torch.clamp_" if node.inplace == 0 else "torch.clamp", args[0], lo, hi)]
    bounds: list = []
    for i in (1, 2):
        if not has_input(node, i):
            bounds.append(None)
        elif const(node, i) is not None:
            bounds.append(scalar_literal(const(node, i), dt))
        else:
            bounds.append(args[i])
    if bounds == [None, None]:
        return [args[0]]
    return [em.call("torch.clamp_" if node.inplace == 0 else "torch.clamp", args[0], *bounds)]


def _cast_target(node: NodeView) -> str:
    if node.op_type == "CastLike":
        return in_dtype(node, 1)
    to = node.attrs.get("to")
    if to is None:
        return out_dtype(node)
    return elem_type_name(to)


def _check_cast(node: NodeView) -> str | None:
    target = _cast_target(node)
    if target not in SUPPORTED_DTYPES | FLOAT8_DTYPES | {"uint16", "uint32", "uint64"}:
        return f"cast to {target}"
    if target == "float8_e8m0fnu" and node.attrs.get("round_mode") not in (None, *_E8M0_ROUNDING):
        return f"round_mode '{node.attrs['round_mode']}' (the spec's are up, down and nearest)"
    return None


#: Largest finite value of each float8 type that has a sign (the Cast spec's FLT_MAX).
_F8_MAX = {
    "float8_e4m3fn": 448.0,
    "float8_e4m3fnuz": 240.0,
    "float8_e5m2": 57344.0,
    "float8_e5m2fnuz": 57344.0,
}
#: float8_e4m3fn rounds |x| above 464 = 448 + half its last step of 32 past FLT_MAX: NaN by the
#: spec's saturate=0 table, where torch's cast gives 448. (Where torch rounds past FLT_MAX for the
#: other types it gives the spec's value: NaN for the fnuz types, +-inf for e5m2.)
_E4M3FN_ROUNDS_PAST_MAX = 464.0
_E8M0_ROUNDING = ("up", "down", "nearest")


@rule("Cast", "CastLike", check=_check_cast)
def _cast(node: NodeView, args, em):
    """Cast(to) / CastLike(target): ``x.to(dtype)``; float → int truncates toward zero, nonzero →
    True for bool. A cast to the input's own type is the input itself.

    float8 targets follow the spec's tables (Cast-19/21/23/24/25): torch's cast rounds to
    nearest even as ONNX does but does not saturate, so ``saturate=1`` (the default) clamps to
    ±FLT_MAX first (±inf too; NaN stays NaN); with ``saturate=0`` out-of-range values become NaN
    (the fn/fnuz types) or ±inf (e5m2), which torch's cast gives except for float8_e4m3fn (it
    saturates: the values that round past FLT_MAX are set to NaN first). The fnuz types have no
    -0 and one NaN (0x80), as torch's types. Non-float sources are cast to float32 first (exact
    wherever float8 is not out of range). FLOAT8E8M0 targets take ``ops.cast_e8m0`` (the spec's
    round_mode, which torch's cast does not offer). float8 sources are widened to float32 first
    (exact) when the target is another type. A float64 source reaches float8 through
    ``ops.to_float32_round_to_odd``: torch's cast goes through float32 and would round twice.
    """
    target = _cast_target(node)
    source = in_dtype(node)
    x = args[0]
    if target == source:
        return [x]
    if source in FLOAT8_DTYPES and target != "float32":
        x, source = em.method(x, "to", dtype("float32")), "float32"
    saturate = node.attrs.get("saturate") != 0  # from opset 19, default 1
    if target == "float8_e8m0fnu":
        mode = node.attrs.get("round_mode") or "up"
        return [em.call("ops.cast_e8m0", x, saturate=saturate, round_mode=mode)]
    if target in _F8_MAX:
        if not is_float(source):
            x = em.method(x, "to", dtype("float32"))
        fmax = _F8_MAX[target]
        if saturate:
            x = em.call("torch.clamp", x, -fmax, fmax)
        elif target == "float8_e4m3fn":
            past = em.call("operator.gt", em.call("torch.abs", x), _E4M3FN_ROUNDS_PAST_MAX)
            x = em.method(x, "masked_fill", past, float("nan"))
        if source == "float64":  # torch's cast rounds twice, through float32
            x = em.call("ops.to_float32_round_to_odd", x)
    return [em.method(x, "to", dtype(target))]


def _check_dropout(node: NodeView) -> str | None:
    tm = const(node, 2)
    if node.input(2) is not None and tm is None:
        return "training_mode must be a constant"
    ratio = const(node, 1)
    if node.input(1) is not None and ratio is None and tm is not None and bool(tm):
        return "ratio must be a constant in training mode"
    if tm is not None and bool(tm) and float(ratio if ratio is not None else 0.5) != 0.0:
        return "training mode draws random masks"
    return None


@rule("Dropout", check=_check_dropout)
def _dropout(node: NodeView, args, em):
    """Dropout in inference (or with ratio 0): the output is the input; the optional mask output
    is all true (bool from opset 10, the input's type before). Before opset 7 the ``is_test``
    attribute is ignored, as onnxruntime does: Ramiel compiles for inference."""
    outs: list = [args[0]]
    if node.output(1) is not None:
        mask_dt = out_dtype(node, 1)
        if mask_dt == "undefined":
            mask_dt = "bool" if node.opset >= 10 else in_dtype(node)
        outs.append(em.call("torch.ones_like", args[0], dtype=dtype(mask_dt)))
    return outs
