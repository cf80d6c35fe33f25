"""Conversion of ``onnx`` + ``cluster`` IR to the ``torchpy`` dialect: the emitter, literal
rendering, the checks that a module can be lowered, and the weight keys, behind
``--lower-to-torchpy`` (:mod:`ramiel.passes.lower_to_torchpy`, whose docstring says what the
lowering produces). :func:`lower_to_torchpy` runs it on a module.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    IntegerAttr,
    ModuleOp,
    NoneType,
    StringAttr,
    TensorType,
    UnrankedTensorType,
    UnregisteredOp,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue
from xdsl.rewriter import Rewriter

from ramiel.attrs import (
    CONVERSION_ATTR,
    COST_ATTR,
    INPLACE_ATTR,
    NODE_NAME_ATTR,
    NUM_OPS_ATTR,
    THREADS_ATTR,
    get_int,
    io_names,
    remove,
    set_float,
    set_int,
    set_str,
)
from ramiel.clustering import (
    decluster,
    is_ambient,
    main_func,
    op_cost,
)
from ramiel.dialects import torchpy as tp
from ramiel.dialects.cluster import ClusterOp, RecvOp, SendOp, YieldOp, clusters_of
from ramiel.dialects.onnx import (
    OnnxOp,
    opset_of,
    python_from_attr,
    schema_info,
)
from ramiel.dialects.onnx import YieldOp as OnnxYieldOp
from ramiel.dtypes import numpy_dtype_of
from ramiel.errors import (
    DataDependentShapeError,
    DynamicShapeError,
    RamielError,
    UnsupportedOpError,
)
from ramiel.layout import (
    CHANNELS_LAST,
    CONTIGUOUS,
    MATMUL_EPILOGUES,
    has_format,
    layout_of,
    matmul_epilogue,
    prepack_of,
    static_shape_of,
    value_format,
)

# (importing ramiel.lowering.api runs ramiel/lowering/__init__.py, which imports every rule
# module: RULES is complete)
from ramiel.lowering.api import (
    Dtype,
    MemoryFormat,
    NodeView,
    TensorInfo,
    check_supported,
    lower_node,
)
from ramiel.lowering.control_flow import check_region_op, lower_region_op
from ramiel.lowering.outputs import own_outputs
from ramiel.naming import name_hint, sanitize, unique
from ramiel.parsing import LocatedOpError
from ramiel.weights import WeightStore, constant_value, value_attr

#: The name a TorchScript export gives a Constant node's output (``/Constant_3_output_0``):
#: such weights are named after their first user instead, like anonymous initializers.
_GENERIC_CONSTANT = re.compile(r"Constant(_\d+)?")


def _is_static(t: Attribute) -> bool:
    """Whether a value of type ``t`` has a static shape (non-tensor types count as static)."""
    if isinstance(t, TensorType):
        return all(d >= 0 for d in t.get_shape())
    return not isinstance(t, UnrankedTensorType)


def check_static_inputs(fn: func.FuncOp) -> None:
    """Raise :class:`~ramiel.errors.DynamicShapeError` if a graph input of ``fn`` (``@main``) has
    a dimension that is not a size (``?``: the importer binds them with ``--input-shape``; IR
    written by hand may still have them)."""
    in_names, _ = io_names(fn)
    for name, arg in zip(in_names, fn.body.block.args, strict=True):
        if _is_static(arg.type):
            continue
        shape = list(arg.type.get_shape()) if isinstance(arg.type, TensorType) else []
        d = next((i for i, x in enumerate(shape) if x < 0), None)
        where = f" dimension {d}" if d is not None else " shape"
        example = ",".join(str(x) if x >= 0 else "1" for x in shape)
        raise DynamicShapeError(
            f"graph input '{name}' has a dynamic{where}: import the model with --input-shape "
            f"{name}={example or 'D0,D1,...'} (the size you run with in place of 1)"
        )


def check_static_shapes(ops: list[Operation]) -> None:
    """Raise :class:`~ramiel.errors.DataDependentShapeError` if an ``onnx`` op among ``ops``
    (clusters are looked into) computes a used result whose shape is not static.

    Only the ops where a shape stops being static are reported (static operands, a non-static
    result: NonZero, a Reshape whose shape operand is a run-time value), not the ops computing
    from their results. Unused results (an optional output nobody reads) are not checked.
    """
    items: list[tuple[str, str, int, str, str]] = []
    for outer in ops:
        for op in outer.walk():
            if not isinstance(op, OnnxOp) or is_ambient(op) or op is not outer:
                continue  # inside a Loop body a shape may change per iteration: the region
                # op's results are checked (the rules check what they need)
            if not all(_is_static(v.type) for v in op.operands):
                continue  # computed from a non-static value: its origin is reported
            for i, r in enumerate(op.results):
                if r.uses and not _is_static(r.type):
                    t = r.type
                    shape = "*"
                    if isinstance(t, TensorType):
                        shape = "x".join("?" if d < 0 else str(d) for d in t.get_shape())
                    what = f"result '{r.name_hint}'" if r.name_hint else f"result {i}"
                    items.append((op.op_type, op.node_name, opset_of(op), what, shape))
    if items:
        raise DataDependentShapeError(items)


# ---------------------------------------------------------------------------------------------
# Literals and the IR emitter
# ---------------------------------------------------------------------------------------------


def render_literal(v: Any, operand_index: Any, subscript: bool = False) -> str:
    """Python source of a rule argument; ``operand_index(value) -> int`` registers SSA operands.

    Strings are rendered with ``repr`` and ``$`` escaped, so no ONNX-provided text can reach the
    generated code outside a string literal.
    """
    if isinstance(v, SSAValue | _Lazy):
        return f"${operand_index(v)}"
    if v is None or isinstance(v, bool):
        return repr(v)
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, int):
        return repr(int(v))
    if isinstance(v, float):
        if v != v:
            return "math.nan"
        if v in (float("inf"), float("-inf")):
            return "math.inf" if v > 0 else "-math.inf"
        return repr(v)
    if isinstance(v, str):
        return repr(v).replace("$", "\\x24")
    if isinstance(v, Dtype | MemoryFormat):
        return f"torch.{sanitize(v.name)}"
    if isinstance(v, slice):
        parts = [
            "" if x is None else render_literal(x, operand_index) for x in (v.start, v.stop, v.step)
        ]
        if subscript:
            text = f"{parts[0]}:{parts[1]}"
            return text + (f":{parts[2]}" if parts[2] else "")
        return f"slice({', '.join(p or 'None' for p in parts)})"
    if v is Ellipsis:
        return "..."
    if isinstance(v, tuple):
        items = [render_literal(x, operand_index, subscript) for x in v]
        if subscript:
            return ", ".join(items) if len(items) != 1 else items[0] + ","
        return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
    if isinstance(v, list):
        return f"[{', '.join(render_literal(x, operand_index) for x in v)}]"
    if isinstance(v, np.ndarray) and v.size <= 64:
        return render_literal(v.tolist(), operand_index)
    raise RamielError(f"cannot render {type(v).__name__} as a Python literal in generated code")


@dataclass
class _Lazy:
    """A constant operand: materialised as a ``torchpy.weight`` only if the code uses it."""

    const: Operation


@dataclass
class _FuncBuilder:
    """Builds one ``torchpy.func`` body."""

    lowering: Lowering
    block: Block
    weights: dict[Operation, SSAValue] = field(default_factory=dict)
    node_ops: list[Operation] = field(default_factory=list)
    track_threads: bool = False  # cluster functions: turn ramiel.threads into set_threads
    threads: int | None = None  # the count the last set_threads set
    top: Block | None = None  # the function's block (weights go there), if not ``block``

    derived: dict[str, SSAValue] = field(default_factory=dict)  # constant(): key -> weight
    converted: dict[tuple[int, str], SSAValue] = field(default_factory=dict)  # convert()

    def child(self, block: Block) -> _FuncBuilder:
        """A builder for the block of a region op in this one (same weights, one thread
        count: a region op is one task; conversions made before the region op are visible in
        its block, those made inside stay there)."""
        return _FuncBuilder(
            self.lowering,
            block,
            self.weights,
            top=self.top or self.block,
            derived=self.derived,
            converted=dict(self.converted),
        )

    def constant(self, value: Any, source: Any, tag: str) -> SSAValue:
        """A weight computed at compile time from the constant ``source`` (Emitter.constant)."""
        if not isinstance(source, _Lazy):
            raise RamielError(f"a derived constant ({tag}) needs a constant source")
        key = f"{self.lowering.weight_key(source.const)}__{sanitize(tag)}"
        if key not in self.derived:
            arr = np.ascontiguousarray(value)
            self.lowering.taken.add(key)
            attr = value_attr(arr, key, self.lowering.store)
            w = tp.WeightOp(key, attr, attr.get_type())  # type: ignore[attr-defined]
            w.result.name_hint = key
            top = self.top or self.block
            if top.first_op is None:
                top.add_op(w)
            else:
                top.insert_op_before(w, top.first_op)
            self.derived[key] = w.result
        return self.derived[key]

    def materialize(self, v: Any) -> SSAValue:
        if isinstance(v, _Lazy):
            if v.const not in self.weights:
                key = self.lowering.weight_key(v.const)
                attr = v.const.properties["value"]
                fmt = self.lowering.weight_format(v.const)
                w = tp.WeightOp(key, attr, v.const.results[0].type, fmt)
                w.result.name_hint = key
                top = self.top or self.block
                first = top.first_op
                if first is None:
                    top.add_op(w)
                else:
                    top.insert_op_before(w, first)
                self.weights[v.const] = w.result
            return self.weights[v.const]
        return v

    def _emit(self, make: Any, args: tuple, kwargs: dict, receiver: Any = None) -> SSAValue:
        operands: list[SSAValue] = []
        index: dict[int, int] = {}

        def operand_index(v: Any) -> int:
            sv = self.materialize(v)
            if id(sv) not in index:
                index[id(sv)] = len(operands)
                operands.append(sv)
            return index[id(sv)]

        if receiver is not None:
            operand_index(receiver)
        subscript = False
        rendered_args: list[int | str] = []
        for i, a in enumerate(args):
            subscript = make == "operator.getitem" and i == 1
            if isinstance(a, SSAValue | _Lazy):
                rendered_args.append(operand_index(a))
            else:
                rendered_args.append(render_literal(a, operand_index, subscript))
        rendered_kwargs: dict[str, int | str] = {}
        for k, a in kwargs.items():
            if isinstance(a, SSAValue | _Lazy):
                rendered_kwargs[k] = operand_index(a)
            else:
                rendered_kwargs[k] = render_literal(a, operand_index)
        if receiver is not None:
            op: Operation = tp.MethodOp(
                make, operands, rendered_args, rendered_kwargs, [tp.ObjectType()]
            )
        else:
            op = tp.CallOp(make, operands, rendered_args, rendered_kwargs, [tp.ObjectType()])
        self.block.add_op(op)
        self.node_ops.append(op)
        return op.results[0]

    def convert(self, v: Any, onnx_value: SSAValue, fmt: str, reader: str) -> SSAValue:
        """``v`` (the lowered ``onnx_value``) in memory format ``fmt``: one
        ``v.contiguous(memory_format=...)`` per value, format and function, before its first
        reader (``reader``: that op's name for the comment)."""
        key = (id(v), fmt)
        if key not in self.converted:
            if fmt == CONTIGUOUS:
                op = tp.MethodOp("contiguous", [self.materialize(v)], [], None, [onnx_value.type])
            else:
                kwargs = {"memory_format": render_literal(MemoryFormat(fmt), lambda _: 0)}
                op = tp.MethodOp("contiguous", [self.materialize(v)], [], kwargs, [onnx_value.type])
            suffix = "cl" if fmt == CHANNELS_LAST else "nchw"
            hint = onnx_value.name_hint
            op.results[0].name_hint = f"{hint}_{suffix}" if hint else suffix
            what = "channels-last" if fmt == CHANNELS_LAST else "contiguous"
            set_str(op, NODE_NAME_ATTR, f"to {what} for {reader}")
            set_str(op, CONVERSION_ATTR, fmt)
            self.block.add_op(op)
            self.converted[key] = op.results[0]
        return self.converted[key]

    def in_format(self, v: Any, onnx_value: SSAValue, fmt: str, reader: str) -> Any:
        """``v`` as ``fmt`` wants it: converted only if ``onnx_value`` :func:`has_format` and
        its producer computes it in another format."""
        if v is None or isinstance(v, _Lazy) or not has_format(static_shape_of(onnx_value)):
            return v
        if value_format(onnx_value, self.lowering.sends) == fmt:
            return v
        return self.convert(v, onnx_value, fmt, reader)

    # Emitter protocol (ramiel.lowering.api.Emitter)
    def call(self, callee: str, *args: Any, **kwargs: Any) -> SSAValue:
        return self._emit(callee, args, kwargs)

    def method(self, obj: Any, name: str, *args: Any, **kwargs: Any) -> SSAValue:
        return self._emit(name, args, kwargs, receiver=obj)


def check_lowerable(module: ModuleOp, store: WeightStore | None) -> None:
    """What :class:`LowerToTorchpy` checks before it lowers ``module``'s ``@main``, in the same
    order: static graph inputs (:class:`~ramiel.errors.DynamicShapeError`), every op supported
    (:class:`~ramiel.errors.UnsupportedOpError`, all at once), static shapes
    (:class:`~ramiel.errors.DataDependentShapeError`). ``ramiel compile`` runs it before
    clustering, which would size channels with the shapes. ``store``: the module's weights
    (``None`` if it names no weights file), which the checks read constant operands from."""
    fn = main_func(module)
    check_static_inputs(fn)
    Lowering(module, store).check(list(fn.body.block.ops))


class Lowering:
    """The lowering of one module to ``torchpy``: the module's weight keys, the formats of its
    channels, the ONNX ops' node views (:meth:`node_view`, what a lowering rule of
    :mod:`ramiel.lowering` reads) and the lowerability checks (:meth:`check`).
    :func:`lower_to_torchpy` runs it; the profiler and ``--assign-layout``'s cost probe make one
    to read node views (``Lowering(module, store).node_view(op)``). ``store``: the module's
    weights (:meth:`ramiel.weights.WeightStores.of`, ``None`` if it names no weights file).
    """

    def __init__(self, module: ModuleOp, store: WeightStore | None):
        self.module = module
        self.store = store
        self.keys: dict[Operation, str] = {}
        # keys become attribute names of the generated nn.Module classes (self.<key>)
        self.taken: set[str] = set(tp.MODULE_ATTRIBUTES)
        self.unsupported: list[tuple[str, str, int, str]] = []
        #: the ops lowered as part of an earlier op (a prepacked MatMul's fused epilogue)
        self.fused: set[Operation] = set()
        #: channel -> the value sent on it (formats of received values)
        self.sends: dict[str, SSAValue] = {
            o.channel.data: o.value for o in module.walk() if isinstance(o, SendOp)
        }

    def weight_format(self, const: Operation) -> str | None:
        """The memory format ``const`` is read in: channels-last for a weight that
        :func:`~ramiel.layout.has_format` (a conv kernel) and that an op computing in
        channels-last reads; ``None`` (contiguous) otherwise."""
        r = const.results[0]
        if not has_format(static_shape_of(r)):
            return None
        for use in r.uses:
            if isinstance(use.operation, OnnxOp) and layout_of(use.operation) == CHANNELS_LAST:
                return CHANNELS_LAST
        return None

    def assign_weight_keys(self, fn: func.FuncOp) -> None:
        """Give every constant of ``fn`` its key up front, in IR order.

        Keys are then the same in the parallel and the sequential lowering of one module.
        Anonymous PyTorch initializers (``onnx::Conv_123``) and the outputs of exported Constant
        nodes (``/Constant_3_output_0``) are named after their first user and its operand
        instead (``branch1_0_Conv_W``, ``LSTM_W``). A key is a sanitised name that starts with a
        letter and is no attribute of the generated module classes
        (:data:`~ramiel.dialects.torchpy.MODULE_ATTRIBUTES`: ``training`` becomes ``training_1``),
        since it names a buffer of them and a tensor of the weights file.
        """
        for const in fn.body.walk():
            if (
                is_ambient(const)
                and const.results
                and not isinstance(const.results[0].type, NoneType)
            ):
                self.weight_key(const)

    def weight_key(self, const: Operation) -> str:
        if const not in self.keys:
            hint = const.results[0].name_hint or ""
            if not hint or hint.startswith("onnx__") or _GENERIC_CONSTANT.fullmatch(hint):
                hint = _user_based_name(const) or hint or "const"
            self.keys[const] = unique(sanitize(hint, "w"), self.taken)
        return self.keys[const]

    def tensor_info(self, v: SSAValue) -> TensorInfo | None:
        t = v.type
        if isinstance(t, NoneType):
            return None
        shape = None
        dtype = "float32"
        if isinstance(t, TensorType):
            s = tuple(t.get_shape())
            shape = s if all(d >= 0 for d in s) else None
            dtype = numpy_dtype_of(t.element_type).name
        elif hasattr(t, "element_type"):
            dtype = numpy_dtype_of(t.element_type).name  # type: ignore[attr-defined]
        const = None
        owner = v.owner
        if isinstance(owner, OnnxOp) and owner.op_type == "Constant":
            const = constant_value(owner.properties["value"], self.store)
        return TensorInfo(v.name_hint or "", shape, dtype, const)

    def node_view(self, op: OnnxOp) -> NodeView:
        attrs: dict[str, Any] = {}
        for k, a in op.properties.items():
            val = python_from_attr(a)
            if isinstance(val, Attribute):
                val = constant_value(val, self.store)
            attrs[k] = val
        return NodeView(
            op_type=op.op_type,
            name=op.node_name or op.op_type,
            domain="",
            opset=opset_of(op),
            inputs=[self.tensor_info(v) for v in op.operands],
            outputs=[
                self.tensor_info(r) if not isinstance(r.type, NoneType) else None
                for r in op.results
            ],
            attrs=attrs,
            in_loop=_in_loop(op),
            inplace=_inplace_operand(op),
            layout=layout_of(op),
            prepack=prepack_of(op),
        )

    def epilogue(self, op: OnnxOp) -> tuple[list[OnnxOp], SSAValue | None]:
        """The ops a MatMul runs fused (its ``ramiel.prepack`` epilogue, see
        :func:`~ramiel.layout.matmul_epilogue`) and the bias they add; ``([], None)`` for any
        other op. Raises :class:`~ramiel.parsing.LocatedOpError` where the IR around ``op`` no
        longer has the epilogue its attribute names (an edited or hand-written module)."""
        marker = prepack_of(op)
        if op.op_type != "MatMul" or marker is None or marker == "none":
            return [], None
        found, ops, bias = matmul_epilogue(op)
        if marker not in MATMUL_EPILOGUES or not (
            found == marker or (marker == "bias" and found.startswith("bias"))
        ):
            raise LocatedOpError(
                f"ramiel.prepack = {marker!r}: the product is not read alone by the bias Add "
                f"and activation that value names (found {found!r}; values: 'none', "
                + ", ".join(repr(m) for m in MATMUL_EPILOGUES)
                + ")",
                op,
            )
        return ops[: marker.count("+") + 1], bias

    def check(self, ops: list[Operation]) -> None:
        for op in (inner for outer in ops for inner in outer.walk()):
            if isinstance(op, UnregisteredOp):  # parsed with --allow-unregistered-dialect
                raise LocatedOpError(
                    f"{op.op_name.data}: an op of an unregistered dialect has no lowering to "
                    "torchpy (only onnx, cluster and func ops lower)",
                    op,
                )
            if isinstance(op, OnnxOp) and not is_ambient(op):
                if op.regions:
                    why = check_region_op(self, op)
                else:
                    why = check_supported(self.node_view(op))
                if why is not None:
                    self.unsupported.append((op.op_type, op.node_name, opset_of(op), why))
        if self.unsupported:
            raise UnsupportedOpError(self.unsupported)
        check_static_shapes(ops)

    @staticmethod
    def set_threads(fb: _FuncBuilder, op: Operation) -> None:
        """A ``torchpy.set_threads`` before ``op`` where its ``ramiel.threads`` count differs
        from the last one set (cluster functions only)."""
        t = get_int(op, THREADS_ATTR)
        if fb.track_threads and t is not None and t != fb.threads:
            if fb.threads is None:
                why = "this cluster's intra-op threads (--intra-op-threads)"
            elif t > fb.threads:
                why = "other clusters idle: more intra-op threads"
            else:
                why = "other clusters busy again"
            fb.block.add_op(tp.SetThreadsOp(t, why))
            fb.threads = t

    @staticmethod
    def region_inputs(op: OnnxOp, fb: _FuncBuilder, value: Any) -> dict[SSAValue, SSAValue]:
        """A region op is a layout boundary (its bodies compute in contiguous format: no op in
        them gets a ``ramiel.layout``): its operands and the values its bodies capture that are
        channels-last are converted to contiguous once, before the compound statement (not per
        iteration); returns onnx value -> converted value."""
        reader = f"{op.node_name} ({op.op_type})" if op.node_name else op.op_type
        outer: dict[SSAValue, SSAValue] = {}
        for inner in op.walk():
            for v in inner.operands:
                owner = v.owner
                if v in outer or op.is_ancestor(owner):  # defined in a body
                    continue
                if isinstance(owner, Operation) and is_ambient(owner):
                    continue
                if value_format(v, fb.lowering.sends) == CHANNELS_LAST:
                    outer[v] = fb.convert(value(v), v, CONTIGUOUS, reader)
        return outer

    def lower_ops(
        self,
        ops: list[Operation],
        fb: _FuncBuilder,
        env: dict[SSAValue, Any],
        on_input: Any,
    ) -> None:
        """Lower ``ops`` into ``fb``; ``env`` maps onnx values to torchpy values."""

        def value(v: SSAValue) -> Any:
            if v in env:
                return env[v]
            owner = v.owner
            if isinstance(owner, Operation) and is_ambient(owner):
                if isinstance(v.type, NoneType):
                    return None
                return _Lazy(owner)
            if isinstance(v, BlockArgument):
                env[v] = on_input(v)
                return env[v]
            raise RamielError(f"value {v.name_hint or v} is used before it is defined")

        for op in ops:
            if isinstance(op, RecvOp):
                fmt = value_format(op.result, self.sends)
                g = tp.GetOp(op.channel.data, op.result.type, fmt)
                g.result.name_hint = op.result.name_hint
                fb.block.add_op(g)
                env[op.result] = g.result
            elif isinstance(op, SendOp):
                fmt = value_format(op.value, self.sends)
                fb.block.add_op(tp.PutOp(op.channel.data, fb.materialize(value(op.value)), fmt))
            elif isinstance(op, YieldOp | func.ReturnOp | OnnxYieldOp):
                continue
            elif isinstance(op, OnnxOp) and op.regions:  # If, Loop, Scan: one compound statement
                self.set_threads(fb, op)
                outer = self.region_inputs(op, fb, value)
                region_outs = lower_region_op(
                    self,
                    op,
                    fb,
                    functools.partial(_outer_or, outer, value),
                    env,
                    lambda inner, child: self.lower_ops(
                        [o for o in inner if not is_ambient(o)], child, env, on_input
                    ),
                )
                for r, o in zip(op.results, region_outs, strict=True):
                    if isinstance(o.type, tp.ObjectType):
                        # the stacked scan output's type
                        o = Rewriter.replace_value_with_new_type(o, r.type)
                    env[r] = o
            elif isinstance(op, OnnxOp):
                if op in self.fused:
                    continue
                fused, bias = self.epilogue(op)
                operands = [*op.operands, bias] if bias is not None else list(op.operands)
                args: list[Any] = [
                    value(v) if not isinstance(v.type, NoneType) else None for v in operands
                ]
                self.set_threads(fb, op)
                node = self.node_view(op)
                if bias is not None:
                    node = replace(node, inputs=[*node.inputs, self.tensor_info(bias)])
                    self.fused.update(fused)
                reader = f"{op.node_name} ({op.op_type})" if op.node_name else op.op_type
                args = [
                    fb.in_format(a, v, node.layout, reader) if a is not None else None
                    for a, v in zip(args, operands, strict=True)
                ]
                fb.node_ops = []
                outs = lower_node(node, args, fb)
                results = fused[-1].results if fused else op.results
                for r, out in zip(results, outs, strict=False):
                    if out is None:
                        continue
                    o = fb.materialize(out)
                    if isinstance(o.owner, tp.CallOp | tp.MethodOp) and o.owner in fb.node_ops:
                        if isinstance(o.type, tp.ObjectType):
                            # the node's result type is now known
                            o = Rewriter.replace_value_with_new_type(o, r.type)
                        o.name_hint = r.name_hint
                    env[r] = o
                for emitted in fb.node_ops:
                    set_str(
                        emitted,
                        NODE_NAME_ATTR,
                        f"{op.node_name} ({op.op_type})" if op.node_name else op.op_type,
                    )
                for emitted in fb.node_ops[:-1]:
                    remove(emitted, NODE_NAME_ATTR)
            else:
                raise RamielError(f"cannot lower {op.name} to torchpy")


def _in_loop(op: Operation) -> bool:
    """Is ``op`` inside the body of an ``onnx.Loop`` or ``onnx.Scan``?"""
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, OnnxOp) and parent.op_type in ("Loop", "Scan"):
            return True
        parent = parent.parent_op()
    return False


def _inplace_operand(op: OnnxOp) -> int | None:
    """The operand ``op`` may overwrite (its verified ``ramiel.inplace``), or None."""
    return get_int(op, INPLACE_ATTR)


#: Calls that make a tensor from nothing but literals: in the sequential module they get
#: ``device=<first input>.device``, so that the module runs wherever ``.to(device)`` moved it.
FACTORIES = frozenset({"torch.tensor", "torch.zeros", "torch.ones", "torch.full", "torch.eye",
                       "torch.arange", "torch.empty"})  # fmt: skip


def _factories_on_device(block: Block, anchor: SSAValue) -> None:
    for op in list(block.walk()):  # the blocks of if/for statements too
        if not isinstance(op, tp.CallOp) or op.callee.data not in FACTORIES:
            continue
        kwargs = dict(op.kwargs.data) if op.kwargs is not None else {}
        if "device" in kwargs:
            continue
        kwargs["device"] = StringAttr(f"${len(op.operands)}.device")
        rebuild_call(op, [*op.operands, anchor], list(op.args.data), kwargs)


def _outer_or(outer: Mapping[SSAValue, Any], value: Any, v: SSAValue) -> Any:
    """A region op's value ``v``: what the enclosing statement passes in, else ``value(v)``."""
    return outer[v] if v in outer else value(v)


def rebuild_call(
    op: tp.CallOp | tp.MethodOp,
    operands: list[SSAValue],
    args: list[Attribute | int | str],
    kwargs: Mapping[str, Attribute | int | str],
) -> tp.CallOp | tp.MethodOp:
    """Replace ``op`` by the same call with other operands and argument items (operand indices
    or literals, as attributes or plain values); results, names and attributes are kept."""

    def item(v: Attribute | int | str) -> int | str:
        if isinstance(v, int | str):
            return v
        if isinstance(v, IntegerAttr):
            return int(v.value.data)
        text = tp.attr_text(v)
        assert text is not None
        return text

    types = [r.type for r in op.results]
    arg_items = [item(a) for a in args]
    kw_items = {k: item(v) for k, v in kwargs.items()} or None
    if isinstance(op, tp.CallOp):
        new: tp.CallOp | tp.MethodOp = tp.CallOp(
            op.callee.data, operands, arg_items, kw_items, types
        )
    else:
        new = tp.MethodOp(op.method.data, operands, arg_items, kw_items, types)
    new.attributes.update(op.attributes)
    block = op.parent_block()
    assert block is not None
    block.insert_op_before(new, op)
    for old, res in zip(op.results, new.results, strict=True):
        res.name_hint = old.name_hint
        old.replace_all_uses_with(res)
    op.detach()
    op.erase()
    return new


def weight_keys(module: ModuleOp) -> dict[Operation, str]:
    """The weight key every constant of ``@main`` gets when ``module`` is lowered (either mode):
    constant op -> key (the buffer name of the generated classes and of the weights file)."""
    lowering = Lowering(module, None)  # keys come from names and uses, never from values
    lowering.assign_weight_keys(main_func(module))
    return dict(lowering.keys)


def _user_based_name(const: Operation) -> str | None:
    """``<user node>_<operand name>`` for a constant, from its first ``onnx`` user."""
    for use in const.results[0].uses:
        user = use.operation
        if isinstance(user, OnnxOp) and user.node_name:
            info = schema_info(user.op_type, opset_of(user))
            slot = ""
            if info is not None and info.inputs:
                slot = info.inputs[min(use.index, len(info.inputs) - 1)][0]
            return f"{name_hint(user.node_name) or user.op_type}_{slot}".strip("_")
    return None


def lower_to_torchpy(op: ModuleOp, mode: str, store: WeightStore | None) -> None:
    """Lower ``onnx`` + ``cluster`` IR in ``op`` to the ``torchpy`` dialect in place (see
    :mod:`ramiel.passes.lower_to_torchpy`); ``mode="sequential"`` declusters first (``"auto"``:
    as the IR is); ``store``: the module's weights (``None`` if it names no weights file), which
    the weights computed at compile time are added to."""
    fn = main_func(op)
    if mode == "sequential":
        decluster(fn)
    lowering = Lowering(op, store)
    lowering.assign_weight_keys(fn)
    block = fn.body.block
    clusters = clusters_of(block)
    in_names, out_names = io_names(fn)
    all_ops: list[Operation] = [o for c in clusters for o in c.body.block.ops] or list(block.ops)
    check_static_inputs(fn)
    lowering.check(all_ops)
    new_ops: list[Operation] = []
    inputs: dict[str, list[str]] = {n: [] for n in in_names}
    outputs: dict[str, str] = {}
    ret = block.last_op
    assert isinstance(ret, func.ReturnOp)
    if clusters:
        # Channel names are readable (sanitised tensor names) and unique: names that clash
        # after sanitising ('a-b', 'a_b') get a numbered suffix.
        taken = {
            o.channel.data
            for c in clusters
            for o in c.body.block.ops
            if isinstance(o, SendOp | RecvOp)
        }
        for name in out_names:
            outputs[name] = unique(f"{sanitize(name)}__out", taken)
        # Graph outputs that no cluster computes (a graph input or a constant returned as
        # is) are put on their output channel by the first cluster.
        direct = [
            (out_names[i], v)
            for i, v in enumerate(ret.operands)
            if not isinstance(v.owner, ClusterOp)
        ]
        for k, c in enumerate(clusters):
            new_ops.append(
                _lower_cluster(
                    lowering, fn, c, in_names, inputs, outputs, taken, direct if k == 0 else []
                )
            )
    else:
        new_ops.append(_lower_sequential(lowering, fn, block, in_names))
    prog = tp.ProgramOp.create(
        properties={
            "sym_name": StringAttr("main"),
            "inputs": ArrayAttr([ArrayAttr([StringAttr(c) for c in inputs[n]]) for n in in_names]),
            "outputs": ArrayAttr([StringAttr(outputs.get(n, "")) for n in out_names]),
            "input_order": ArrayAttr([StringAttr(n) for n in in_names]),
            "output_order": ArrayAttr([StringAttr(n) for n in out_names]),
        }
    )
    fn.detach()
    fn.erase(safe_erase=False)
    op.body.block.add_ops([*new_ops, prog])


def _lower_cluster(
    lowering: Lowering,
    fn: func.FuncOp,
    c: ClusterOp,
    in_names: list[str],
    inputs: dict[str, list[str]],
    outputs: dict[str, str],
    taken: set[str],
    direct: list[tuple[str, SSAValue]],
) -> tp.FuncOp:
    block = Block()
    fb = _FuncBuilder(lowering, block)
    fb.track_threads = True
    env: dict[SSAValue, Any] = {}
    args = list(fn.body.block.args)
    _, out_names = io_names(fn)
    ret = fn.body.block.last_op
    assert isinstance(ret, func.ReturnOp)

    def on_input(v: BlockArgument) -> SSAValue:
        name = in_names[args.index(v)]
        ch = unique(f"{sanitize(name)}__{c.cluster_name}", taken)
        g = tp.GetOp(ch, v.type)
        g.result.name_hint = v.name_hint
        block.add_op(g)
        inputs[name].append(ch)
        return g.result

    lowering.lower_ops(list(c.body.block.ops), fb, env, on_input)
    term = c.body.block.last_op
    assert isinstance(term, YieldOp)
    for res, val in zip(c.outs, term.values, strict=True):
        for use in list(res.uses):
            if use.operation is ret:
                name = out_names[use.index]
                out = fb.in_format(env[val], val, CONTIGUOUS, f"graph output {name!r}")
                block.add_op(tp.PutOp(outputs[name], fb.materialize(out)))
    for name, v in direct:
        if isinstance(v, BlockArgument):
            tv = env[v] if v in env else on_input(v)
            env[v] = tv
        else:
            tv = fb.materialize(_Lazy(v.owner))  # type: ignore[arg-type]
        block.add_op(tp.PutOp(outputs[name], tv))
    block.add_op(tp.ReturnOp())
    f = tp.FuncOp(f"cluster_{sanitize(c.cluster_name)}", "cluster", block)
    cost = sum(op_cost(o, warn=False) for o in c.body.block.ops if isinstance(o, OnnxOp))
    set_float(f, COST_ATTR, round(cost, 3))
    set_int(f, NUM_OPS_ATTR, sum(isinstance(o, OnnxOp) for o in c.body.block.ops))
    return f


def _lower_sequential(
    lowering: Lowering, fn: func.FuncOp, block: Block, in_names: list[str]
) -> tp.FuncOp:
    body = Block(arg_types=[a.type for a in block.args])
    env: dict[SSAValue, Any] = {}
    for old, new in zip(block.args, body.args, strict=True):
        new.name_hint = old.name_hint
        env[old] = new
    fb = _FuncBuilder(lowering, body)

    def on_input(v: BlockArgument) -> SSAValue:
        raise AssertionError("sequential inputs are block arguments")

    ops = [o for o in block.ops if not is_ambient(o)]
    lowering.lower_ops(ops, fb, env, on_input)
    _, out_names = io_names(fn)
    ret = block.last_op
    assert isinstance(ret, func.ReturnOp)
    outs = []
    for v in ret.operands:
        owner = v.owner
        if isinstance(owner, Operation) and is_ambient(owner):
            outs.append(fb.materialize(_Lazy(owner)))
        else:
            name = f"graph output {out_names[len(outs)]!r}"
            outs.append(fb.materialize(fb.in_format(env[v], v, CONTIGUOUS, name)))
    body.add_op(tp.ReturnOp(outs))
    if body.args:
        _factories_on_device(body, body.args[0])
    f = tp.FuncOp("forward", "sequential", body)
    own_outputs(f)  # an output that shares a weight's, an input's or another's memory: a copy
    return f
