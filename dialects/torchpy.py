"""The ``torchpy`` dialect: ops that are each one Python statement of the generated code.

A ``torchpy`` module is what :mod:`ramiel.printer` prints as Python source, with a per-op table:

==================  =======================================================================
op                  Python
==================  =======================================================================
``torchpy.func``    ``def cluster_c0(ch, w):`` (kind ``cluster``), ``def forward(self, x):`` of
                    the module class (kind ``sequential``; block arguments are the graph inputs)
                    or ``@segment def c0_seg0(w, x):`` (kind ``segment``: statements compiled
                    together with ``torch.compile``, see ``--compile-segments``)
``torchpy.call_segment`` ``a, b = c0_seg0(w, x)`` -- call a segment function (``self`` for ``w``
                    in ``forward``)
``torchpy.get``     ``x = ch.get("x__c0")`` -- receive a tensor from a channel
``torchpy.put``     ``ch.put("y__c0_c1", y)`` -- send a tensor on a channel
``torchpy.call``    ``y = F.conv2d(x, w.conv1_w, stride=(2, 2))`` -- one PyTorch/Python call
``torchpy.method``  ``y = x.reshape(1, -1)`` -- one method call on operand 0
``torchpy.set_threads`` ``ops.set_threads(2)`` -- intra-op threads of the calling worker
``torchpy.return``  ``return y``
``torchpy.weight``  ``self.conv1_w`` (sequential) or ``w.conv1_w`` (cluster) -- a weight: a
                    buffer (or parameter) of the module named by its key, printed where it is used
``torchpy.program`` the ``PROGRAM = Program(...)`` table: graph inputs/outputs and channels
``torchpy.if``      ``if bool(c):`` / ``else:`` -- two indented blocks (``onnx.If``)
``torchpy.for``     ``for i in range(n):`` -- an indented block with carried values (Loop, Scan)
``torchpy.while``   ``while keep and i < n:`` -- the same, for a loop that may stop early
``torchpy.yield``   the end of a block: assigns the values it carries to the op's results
==================  =======================================================================

The region ops are compound statements; their blocks print indented and may use any value of an
enclosing block (Python's scoping). A result of a region op is one Python name that each block
assigns at its end (``torchpy.yield``); for a loop that name is also the carried value inside the
body (the block argument), so ``r = r0`` before the loop, ``r = <next r>`` at the end of each
iteration, and ``r`` after it are the same variable. Names are unique across nested blocks.

Call arguments follow EmitC's ``call_opaque``: ``args`` is an array whose items are either an
``index`` integer (the position of an SSA operand) or a string holding a Python literal rendered
by Ramiel itself (``"(2, 2)"``, ``"'constant'"``, ``"torch.float32"``); ``kwargs`` is a dictionary
of the same items. Names in the printed code come from SSA name hints (ONNX tensor names), the
ONNX node name is kept in ``onnx_node_name`` for a comment.

Values that are not tensors (tuples, Python scalars) have type ``!torchpy.object``.

Each op has a custom assembly format (the generic form parses too; some types abbreviated as
``...`` here)::

    torchpy.func cluster @cluster_c0() attributes {ramiel.cost_us = 2.0e+01 : f64} {
      torchpy.set_threads 2 reason "conv-heavy"
      %w = torchpy.weight "conv_w" = dense<5.0e-01> : tensor<3x2x3x3xf32>
      %x = torchpy.get from "x__c0" : tensor<1x2x4x4xf32>
      %c = torchpy.call F.conv2d(%x, %w) kwargs {stride = "(2, 2)"} : (...) -> tensor<1x3x2x2xf32>
      %t = torchpy.call torch.split(%c) [0, "[1, 2]"] kwargs {dim = "1"} : (...) -> !torchpy.object
      %r = torchpy.method reshape(%c) ["1", "12"] : (tensor<1x3x2x2xf32>) -> tensor<1x12xf32>
      torchpy.put %r to "y__out" : tensor<1x12xf32>
      torchpy.return
    }
    torchpy.program @main inputs [["x__c0"]] outputs ["y__out"] input_order ["x"] output_order ["y"]

A call or method prints its operands in parentheses; ``[...]`` follows only when ``args`` is not
the operands in order (a method's from operand 1): a bare integer is an operand index, a string
a literal. ``kwargs {k = item}`` holds the keyword arguments. A weight's result type is its
value's type unless ``-> type`` follows. ``torchpy.if %c : type [-> types] {...} else {...}``,
``torchpy.for [count N] %inputs : (types) -> types {^bb0(%i, ...): ...}``, ``torchpy.while
[bounded] ...`` likewise; ``torchpy.yield``/``torchpy.return [%v, ... : types]``;
``torchpy.call_segment @seg(%a, ...) : (types) -> types``; ``torchpy.get``/``put`` take
``memory_format "channels_last"`` before the type.
"""

from __future__ import annotations

import builtins
import keyword
from collections.abc import Mapping, Sequence
from typing import Any

from xdsl.dialects.builtin import (
    I64,
    ArrayAttr,
    DictionaryAttr,
    IndexType,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    SymbolNameConstraint,
    SymbolRefAttr,
    TensorType,
    UnitAttr,
)
from xdsl.ir import (
    Attribute,
    Block,
    Dialect,
    Operation,
    ParametrizedAttribute,
    Region,
    SSAValue,
    TypeAttribute,
    TypedAttribute,
)
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsolatedFromAbove, IsTerminator, SymbolOpInterface
from xdsl.utils.exceptions import VerifyException

from ramiel.attrs import attr_text
from ramiel.parsing import LocatedVerifyError
from ramiel.pysource import (
    GENERATED_NAMES,
    callee_problem,
    literal_problem,
    method_problem,
    tensor_type_problem,
)


def is_python_name(name: str) -> bool:
    """``name`` can be printed as a Python identifier: an identifier that is not a keyword."""
    return name.isidentifier() and not keyword.iskeyword(name)


def _verify_literal(op: Operation, text: str, n_operands: int, subscript: bool = False) -> None:
    """A literal argument is one Python expression (or, ``subscript``, one subscript) whose
    ``$N`` are operands and whose names exist (:func:`ramiel.pysource.literal_problem`)."""
    problem = literal_problem(text, n_operands, subscript)
    if problem is not None:
        raise VerifyException(f"{op.name}: {problem}")


#: Attribute names a weight key must not take: the generated classes register every weight as a
#: buffer or parameter under its key (``self.<key>``), so a key may be neither a public attribute
#: of ``torch.nn.Module`` (torch 2.13; a test keeps the list complete) nor one of the classes
#: Ramiel builds on it (the generated sequential class, :class:`ramiel.runtime.ParallelModel`,
#: :class:`ramiel.compiler.CompiledModel`). Keys never start with ``_`` (see
#: :func:`is_weight_key`), so private names cannot clash.
MODULE_ATTRIBUTES = frozenset(
    {
        # torch.nn.Module
        "T_destination", "add_module", "apply", "bfloat16", "buffers", "call_super_init",
        "children", "compile", "cpu", "cuda", "double", "dump_patches", "eval", "extra_repr",
        "float", "forward", "get_buffer", "get_extra_state", "get_parameter", "get_submodule",
        "half", "ipu", "load_state_dict", "modules", "mtia", "named_buffers", "named_children",
        "named_modules", "named_parameters", "parameters", "register_backward_hook",
        "register_buffer", "register_forward_hook", "register_forward_pre_hook",
        "register_full_backward_hook", "register_full_backward_pre_hook",
        "register_load_state_dict_post_hook", "register_load_state_dict_pre_hook",
        "register_module", "register_parameter", "register_state_dict_post_hook",
        "register_state_dict_pre_hook", "requires_grad_", "set_extra_state", "set_submodule",
        "share_memory", "smart_apply", "state_dict", "to", "to_empty", "train", "training",
        "type", "xpu", "zero_grad",
        # the generated classes, ParallelModel and CompiledModel
        "INPUTS", "OUTPUTS", "DYNAMIC_BATCH", "PROGRAM", "BACKEND", "WEIGHTS_FILE", "WEIGHT_FORMATS",
        "ARG_NAMES",
        "from_safetensors",
        "run", "close", "closed", "runner", "backend", "threads_per_worker", "timeout_s",
        "options", "runtime_options", "program", "sequential", "result", "report",
        "runtime_config", "input_names", "output_names", "input_specs", "save_safetensors",
        "weights_namespace", "start", "compile_report", "compiled", "output_specs",
    }
)  # fmt: skip


def is_weight_key(name: str) -> bool:
    """``name`` can be a weight key: a Python name that starts with a letter (so it is never a
    dunder or a private attribute) and is not in :data:`MODULE_ATTRIBUTES`."""
    return is_python_name(name) and name[0].isalpha() and name not in MODULE_ATTRIBUTES


def _verify_function_name(f: FuncOp) -> None:
    """A function's name is printed as a module-level ``def``: it must not shadow a name the
    generated code uses (``torch``, ``ops``, a builtin such as ``len``) nor be a dunder
    (``__getattr__`` would become the module's attribute hook, ``__name__`` break the main guard)."""
    name = f.sym_name.data
    if name.startswith("__") and name.endswith("__"):
        raise VerifyException(f"torchpy.func @{name}: a dunder name is not a function name")
    clash = name in GENERATED_NAMES or hasattr(builtins, name)
    if clash and not (name == "forward" and f.kind.data == "sequential"):
        raise VerifyException(
            f"torchpy.func @{name}: the name clashes with a name the generated module uses"
        )


def verify_module(block: Block) -> None:
    """Module-level rules of a ``torchpy`` module (run once, from its last op):

    * function names are unique, and cluster functions name distinct clusters (``cluster_c0``
      and ``c0`` are both cluster ``c0``);
    * a module with cluster functions has exactly one ``torchpy.program``;
    * every channel is put by at most one function and got by at most one other, with the same
      type; a channel only put is a graph output listed by the program, one only got a graph
      input listed by it; every channel the program lists exists;
    * every channel's tensor type is static (its buffer is allocated at start-up); every tensor
      type is of an element type torch has and fits in memory
      (:func:`ramiel.pysource.tensor_type_problem`); a value computed inside a function may have
      a dynamic dimension (a Loop's carried value that grows).
    """
    funcs = [op for op in block.ops if isinstance(op, FuncOp)]
    programs = [op for op in block.ops if isinstance(op, ProgramOp)]
    names: set[str] = set()
    clusters: dict[str, str] = {}
    for f in funcs:
        name = f.sym_name.data
        if name in names:
            raise LocatedVerifyError(f"torchpy.func @{name} is defined twice", f)
        names.add(name)
        if f.kind.data == "cluster":
            key = name.removeprefix("cluster_")
            if key in clusters:
                raise LocatedVerifyError(
                    f"torchpy.func @{name} and @{clusters[key]} are both cluster '{key}'", f
                )
            clusters[key] = name
    if len(programs) > 1:
        raise LocatedVerifyError("a module holds at most one torchpy.program", programs[1])
    if clusters and not programs:
        first = next(f for f in funcs if f.kind.data == "cluster")
        raise LocatedVerifyError(
            "a module with cluster functions needs a torchpy.program (its graph inputs and "
            "outputs)",
            first,
        )
    puts: dict[str, tuple[FuncOp, PutOp]] = {}
    gets: dict[str, tuple[FuncOp, GetOp]] = {}
    for f in funcs:
        for op in f.walk():
            for t in [r.type for r in op.results] + [
                a.type for region in op.regions for b in region.blocks for a in b.args
            ]:
                problem = tensor_type_problem(t, dynamic_ok=True)  # channels: below
                if problem is not None:
                    raise LocatedVerifyError(f"{op.name} in @{f.sym_name.data}: {problem}", op)
            if isinstance(op, PutOp | GetOp):
                table: dict[str, Any] = puts if isinstance(op, PutOp) else gets
                ch = op.channel.data
                if ch in table:
                    verb = "put" if isinstance(op, PutOp) else "got"
                    raise LocatedVerifyError(f"channel '{ch}' is {verb} twice", op)
                table[ch] = (f, op)
                t = op.value.type if isinstance(op, PutOp) else op.result.type
                problem = tensor_type_problem(t)
                if problem is None and not isinstance(t, TensorType):
                    problem = f"a channel carries a tensor, not {t}"
                if problem is not None:
                    raise LocatedVerifyError(f"channel '{ch}': {problem}", op)
    for ch, (f, put) in puts.items():
        if ch in gets:
            g, get = gets[ch]
            if g is f:
                raise LocatedVerifyError(
                    f"channel '{ch}' is put and got in @{f.sym_name.data}", get
                )
            if get.result.type != put.value.type:
                raise LocatedVerifyError(
                    f"channel '{ch}': got as {get.result.type} in @{g.sym_name.data} but put as "
                    f"{put.value.type} in @{f.sym_name.data}",
                    get,
                )
    if not programs:
        return
    prog = programs[0]
    listed_in = [attr_text(c) or "" for chs in prog.inputs.data for c in getattr(chs, "data", [])]
    listed_out = [attr_text(c) or "" for c in prog.outputs.data]
    for ch in listed_in:
        if ch not in gets or ch in puts:
            raise LocatedVerifyError(
                f"torchpy.program: input channel '{ch}' is not one a cluster only gets", prog
            )
    for ch in listed_out:
        if ch and (ch not in puts or ch in gets):
            raise LocatedVerifyError(
                f"torchpy.program: output channel '{ch}' is not one a cluster only puts", prog
            )
    for which, listed in (("input", listed_in), ("output", [c for c in listed_out if c])):
        dup = {c for c in listed if listed.count(c) > 1}
        if dup:
            raise LocatedVerifyError(
                f"torchpy.program lists the {which} channel '{min(dup)}' twice", prog
            )
    for ch in gets:
        if ch not in puts and ch not in listed_in:
            raise LocatedVerifyError(
                f"channel '{ch}' is got but no cluster puts it, nor is it an input", gets[ch][1]
            )
    for ch in puts:
        if ch not in gets and ch not in listed_out:
            raise LocatedVerifyError(
                f"channel '{ch}' is put but no cluster gets it, nor is it an output", puts[ch][1]
            )


@irdl_attr_definition
class ObjectType(ParametrizedAttribute, TypeAttribute):
    """``!torchpy.object``: a Python value that is not a tensor of known type."""

    name = "torchpy.object"


@irdl_op_definition
class FuncOp(IRDLOperation):
    """``torchpy.func``: one Python function; ``kind`` is ``cluster``, ``sequential`` or
    ``segment`` (block arguments are its inputs; only calls, methods and weights, no channel op
    nor thread count: one graph for ``torch.compile``)."""

    name = "torchpy.func"
    sym_name = prop_def(StringAttr)
    kind = prop_def(StringAttr)
    body = region_def("single_block")
    traits = traits_def(IsolatedFromAbove(), SymbolOpInterface())

    # torchpy.func <kind> @<name>(%arg: type, ...) attributes {...} { body }  (like func.func)
    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_identifier_or_string_literal(self.kind.data)
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        args = self.body.blocks.first.args if self.body.blocks.first else ()
        printer.print_string("(")
        printer.print_list(args, printer.print_block_argument)
        printer.print_string(")")
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)

    @classmethod
    def parse(cls, parser: Parser) -> FuncOp:
        kind = _parse_word(parser, "the function kind (cluster, sequential or segment)")
        name = parser.parse_symbol_name()
        args = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_argument)
        attrs = parser.parse_optional_attr_dict_with_keyword()
        region = parser.parse_region(args)
        op = cls.create(properties={"sym_name": name, "kind": StringAttr(kind)}, regions=[region])
        if attrs is not None:
            op.attributes |= attrs.data
        return op

    def __init__(self, name: str, kind: str, block: Block):
        super().__init__(
            properties={"sym_name": StringAttr(name), "kind": StringAttr(kind)},
            regions=[Region(block)],
        )

    def verify_(self) -> None:
        if not is_python_name(self.sym_name.data):
            raise VerifyException(
                f"torchpy.func name {self.sym_name.data!r} is not a Python identifier"
            )
        _verify_function_name(self)
        if self.kind.data not in FUNC_KINDS:
            raise VerifyException(f"torchpy.func @{self.sym_name.data}: unknown kind {self.kind}")
        if self.kind.data == "cluster" and self.body.block.args:
            raise VerifyException(
                f"torchpy.func @{self.sym_name.data}: a cluster function takes no arguments "
                "(its inputs arrive through torchpy.get)"
            )
        if not isinstance(self.body.block.last_op, ReturnOp):
            raise VerifyException(f"torchpy.func @{self.sym_name.data} must end with return")
        if self.kind.data == "segment":
            for op in self.body.block.ops:
                if not isinstance(op, CallOp | MethodOp | WeightOp | ReturnOp):
                    raise VerifyException(
                        f"torchpy.func @{self.sym_name.data}: a segment holds only calls, "
                        f"methods and weights (one graph for torch.compile), not {op.name}"
                    )


FUNC_KINDS = ("cluster", "sequential", "segment")


@irdl_op_definition
class ReturnOp(IRDLOperation):
    """``torchpy.return``: ``return a, b``."""

    name = "torchpy.return"
    values = var_operand_def()
    traits = traits_def(IsTerminator(), HasParent(FuncOp))

    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, values: Sequence[SSAValue] = ()):
        super().__init__(operands=[list(values)])

    def verify_(self) -> None:
        _verify_module_if_last(self)


def _verify_module_if_last(op: Operation) -> None:
    """Run :func:`verify_module` when ``op`` is the last op of its module in textual order (the
    program table, or the return of the last function): every op has been verified on its own
    by then (a verifier walks in textual order), so a local error is reported where it is."""
    func_op = op.parent_op()
    block = func_op.parent_block() if isinstance(op, ReturnOp) and func_op else op.parent_block()
    if block is None or not isinstance(block.parent_op(), ModuleOp):
        return
    last = block.last_op
    while last is not None and last.regions and last.regions[-1].blocks:
        last = last.regions[-1].blocks[-1].last_op
    if last is op:
        verify_module(block)


MEMORY_FORMATS = ("contiguous_format", "channels_last")
"""Values of the ``memory_format`` properties (the names of ``torch.memory_format`` objects)."""


def _verify_memory_format(op: Operation, fmt: StringAttr | None, rank: int | None) -> None:
    if fmt is None:
        return
    if fmt.data not in MEMORY_FORMATS:
        raise VerifyException(
            f"{op.name}: memory_format must be one of {', '.join(MEMORY_FORMATS)}, not {fmt.data!r}"
        )
    if fmt.data == "channels_last" and rank is not None and rank != 4:
        raise VerifyException(f"{op.name}: channels_last needs a 4-D tensor, got rank {rank}")


def _rank(t: Attribute) -> int | None:
    return len(t.get_shape()) if isinstance(t, TensorType) else None


def _format_props(memory_format: str | None) -> dict[str, Attribute]:
    if memory_format is None or memory_format == "contiguous_format":
        return {}
    return {"memory_format": StringAttr(memory_format)}


@irdl_op_definition
class IfOp(IRDLOperation):
    """``torchpy.if``: ``if bool(cond):`` then-block ``else:`` else-block; each block ends in a
    ``torchpy.yield`` of one value per result."""

    name = "torchpy.if"
    cond = operand_def()
    outs = var_result_def()
    then_region = region_def("single_block")
    else_region = region_def("single_block")

    assembly_format = (
        "$cond `:` type($cond) (`->` type($outs)^)? attr-dict-with-keyword $then_region `else` "
        "$else_region"
    )

    def __init__(self, cond: SSAValue, result_types: Sequence[Attribute], then_block: Block,
                 else_block: Block):  # fmt: skip
        super().__init__(
            operands=[cond],
            result_types=[list(result_types)],
            regions=[Region(then_block), Region(else_block)],
        )

    def verify_(self) -> None:
        for name, region in (("then", self.then_region), ("else", self.else_region)):
            if region.block.args:
                raise VerifyException(f"torchpy.if: the {name} block takes no arguments")
            _verify_yield(self, region.block, len(self.outs), f"the {name} block")


@irdl_op_definition
class ForOp(IRDLOperation):
    """``torchpy.for``: ``for i in range(n):`` with carried values.

    Operands: the trip count (unless ``count`` holds it as a literal), then the initial carried
    values; the body's arguments are ``(i, carried...)`` (``i`` a Python int) and it ends in a
    ``torchpy.yield`` of the next carried values; the results are the final ones."""

    name = "torchpy.for"
    count = opt_prop_def(IntegerAttr[I64])
    inputs = var_operand_def()
    outs = var_result_def()
    body = region_def("single_block")

    assembly_format = (
        "(`count` $count^)? $inputs attr-dict-with-keyword `:` functional-type($inputs, $outs) "
        "$body"
    )

    @property
    def inits(self) -> Sequence[SSAValue]:
        return self.inputs if self.count is not None else self.inputs[1:]

    def verify_(self) -> None:
        if self.count is None and not self.inputs:
            raise VerifyException("torchpy.for needs a trip count (operand 0 or count)")
        _verify_loop_body(self, self.body.block, len(self.inits), 0)


@irdl_op_definition
class WhileOp(IRDLOperation):
    """``torchpy.while``: ``while keep and i < n:`` with carried values (a loop that may stop
    early). Operands: the initial condition, the bound ``n`` if ``bounded``, then the initial
    carried values; the body takes ``(i, carried...)`` and yields ``(condition, carried...)``."""

    name = "torchpy.while"
    bounded = opt_prop_def(UnitAttr)
    inputs = var_operand_def()
    outs = var_result_def()
    body = region_def("single_block")

    assembly_format = (
        "(`bounded` $bounded^)? $inputs attr-dict-with-keyword `:` "
        "functional-type($inputs, $outs) $body"
    )

    @property
    def inits(self) -> Sequence[SSAValue]:
        return self.inputs[2 if self.bounded is not None else 1 :]

    def verify_(self) -> None:
        if len(self.inputs) < (2 if self.bounded is not None else 1):
            raise VerifyException("torchpy.while needs its condition (and bound) as operands")
        _verify_loop_body(self, self.body.block, len(self.inits), 1)


@irdl_op_definition
class YieldOp(IRDLOperation):
    """``torchpy.yield``: ends a block of ``torchpy.if``/``for``/``while``; prints as the
    assignment of its values to the parent's result names (and a loop's condition)."""

    name = "torchpy.yield"
    values = var_operand_def()
    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(IfOp, ForOp, WhileOp)))

    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, values: Sequence[SSAValue] = ()):
        super().__init__(operands=[list(values)])


def _verify_yield(op: Operation, block: Block, n: int, what: str) -> None:
    term = block.last_op
    if not isinstance(term, YieldOp):
        raise VerifyException(f"{op.name}: {what} must end with torchpy.yield")
    if len(term.values) != n:
        raise VerifyException(f"{op.name}: {what} yields {len(term.values)} value(s), expected {n}")


def _verify_loop_body(op: ForOp | WhileOp, block: Block, n: int, extra: int) -> None:
    if len(block.args) != 1 + n:
        raise VerifyException(
            f"{op.name}: the body takes {len(block.args)} argument(s), expected 1 + {n} "
            "(the iteration index, the carried values)"
        )
    if len(op.outs) != n:
        raise VerifyException(f"{op.name}: {len(op.outs)} result(s) for {n} carried value(s)")
    _verify_yield(op, block, n + extra, "the body")


REGION_OPS = (IfOp, ForOp, WhileOp)
"""The compound-statement ops (printed as indented blocks)."""


@irdl_op_definition
class GetOp(IRDLOperation):
    """``torchpy.get``: ``x = ch.get("channel")``; ``memory_format`` (default contiguous) is the
    format the channel carries its tensor in (``ChannelSpec(memory_format=...)``)."""

    name = "torchpy.get"
    channel = prop_def(StringAttr)
    memory_format = opt_prop_def(StringAttr)
    result = result_def()

    assembly_format = (
        "`from` $channel (`memory_format` $memory_format^)? attr-dict `:` type($result)"
    )

    def __init__(self, channel: str, result_type: Attribute, memory_format: str | None = None):
        super().__init__(
            properties={"channel": StringAttr(channel), **_format_props(memory_format)},
            result_types=[result_type],
        )

    def verify_(self) -> None:
        _verify_memory_format(self, self.memory_format, _rank(self.result.type))


@irdl_op_definition
class PutOp(IRDLOperation):
    """``torchpy.put``: ``ch.put("channel", x)``; ``memory_format`` as for ``torchpy.get``."""

    name = "torchpy.put"
    channel = prop_def(StringAttr)
    memory_format = opt_prop_def(StringAttr)
    value = operand_def()

    assembly_format = (
        "$value `to` $channel (`memory_format` $memory_format^)? attr-dict `:` type($value)"
    )

    def __init__(self, channel: str, value: SSAValue, memory_format: str | None = None):
        super().__init__(
            properties={"channel": StringAttr(channel), **_format_props(memory_format)},
            operands=[value],
        )

    def verify_(self) -> None:
        _verify_memory_format(self, self.memory_format, _rank(self.value.type))


@irdl_op_definition
class SetThreadsOp(IRDLOperation):
    """``torchpy.set_threads``: ``ops.set_threads(count)  # reason`` (``torch.set_num_threads``,
    capped at run time: :func:`ramiel.runtime.ops.set_threads`).

    With PyTorch's OpenMP backend the count applies to the calling thread only (the worker of the
    cluster), so each cluster sets its own; ``--intra-op-threads`` decides the counts."""

    name = "torchpy.set_threads"
    count = prop_def(IntegerAttr[IndexType])
    reason = opt_prop_def(StringAttr)
    traits = traits_def(HasParent(FuncOp))

    assembly_format = "$count (`reason` $reason^)? attr-dict"

    def __init__(self, count: int, reason: str | None = None):
        props: dict[str, Attribute] = {"count": IntegerAttr(count, IndexType())}
        if reason:
            props["reason"] = StringAttr(reason)
        super().__init__(properties=props)

    def verify_(self) -> None:
        if self.count.value.data < 1:
            raise VerifyException(
                f"torchpy.set_threads: count must be at least 1, got {self.count.value.data}"
            )
        parent = self.parent_op()
        if isinstance(parent, FuncOp) and parent.kind.data != "cluster":
            raise VerifyException(
                "torchpy.set_threads is only allowed in a cluster function (in a sequential "
                "function it would change the caller's thread count)"
            )


@irdl_op_definition
class WeightOp(IRDLOperation):
    """``torchpy.weight``: the weight ``w.<key>``; ``value`` is its ``dense``/``dense_resource``;
    ``memory_format`` (default contiguous): the format the code reads it in, into which it is
    converted once when the weights are loaded (a conv kernel of a channels-last conv)."""

    name = "torchpy.weight"
    key = prop_def(StringAttr)
    value = prop_def(Attribute)
    memory_format = opt_prop_def(StringAttr)
    result = result_def()

    # %w = torchpy.weight "key" = <value> [-> type] [memory_format "f"] attr-dict: the result
    # type is the value's own type unless ``->`` says otherwise
    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.key.data)
        printer.print_string(" = ")
        printer.print_attribute(self.value)
        own = self.value.get_type() if isinstance(self.value, TypedAttribute) else None
        if own != self.result.type:
            printer.print_string(" -> ")
            printer.print_attribute(self.result.type)
        if self.memory_format is not None:
            printer.print_string(" memory_format ")
            printer.print_string_literal(self.memory_format.data)
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> WeightOp:
        key = parser.parse_str_literal("the weight's key")
        parser.parse_punctuation("=")
        pos = parser.pos
        value = parser.parse_attribute()
        if parser.parse_optional_punctuation("->") is not None:
            result_type = parser.parse_type()
        elif isinstance(value, TypedAttribute):
            result_type = value.get_type()
        else:
            parser.raise_error(
                "a weight's value without a type needs its result type after '->'", pos, parser.pos
            )
        props: dict[str, Attribute] = {"key": StringAttr(key), "value": value}
        if parser.parse_optional_keyword("memory_format") is not None:
            props["memory_format"] = StringAttr(parser.parse_str_literal("the memory format"))
        attrs = parser.parse_optional_attr_dict()
        return cls.create(properties=props, attributes=attrs, result_types=[result_type])

    def __init__(
        self, key: str, value: Attribute, result_type: Attribute, memory_format: str | None = None
    ):
        super().__init__(
            properties={"key": StringAttr(key), "value": value, **_format_props(memory_format)},
            result_types=[result_type],
        )

    def verify_(self) -> None:
        key = self.key.data
        if not is_python_name(key):
            raise VerifyException(f"torchpy.weight key {key!r} is not an identifier")
        if not is_weight_key(key):
            raise VerifyException(
                f"torchpy.weight key {key!r} cannot name a module buffer: it starts with '_' or "
                "is an attribute of torch.nn.Module or of the generated classes"
            )
        _verify_memory_format(self, self.memory_format, _rank(self.result.type))


def _verify_args(
    op: IRDLOperation, args: ArrayAttr, kwargs: DictionaryAttr | None, subscript: int = -1
) -> None:
    """Operand indices in range, literals printable (``subscript``: the position of the index
    of a subscript, printed as ``x[<literal>]``)."""
    items = list(args.data) + (list(kwargs.data.values()) if kwargs else [])
    n = len(op.operands)
    for pos, item in enumerate(items):
        if isinstance(item, IntegerAttr):
            if not 0 <= item.value.data < n:
                raise VerifyException(f"{op.name}: argument index {item.value.data} out of range")
        elif isinstance(item, StringAttr):
            _verify_literal(op, item.data, n, subscript=pos == subscript)
        else:
            raise VerifyException(f"{op.name}: arguments must be operand indices or literals")
    if kwargs:
        for k in kwargs.data:
            if not is_python_name(k):
                raise VerifyException(f"{op.name}: keyword {k!r} is not an identifier")


def _parse_word(parser: Parser, what: str) -> str:
    """A bare identifier or a string literal (what ``print_identifier_or_string_literal`` wrote)."""
    word = parser.parse_optional_identifier()
    return word if word is not None else parser.parse_str_literal(what)


def _print_arg_item(printer: Printer, item: Attribute) -> None:
    """An argument item: an operand index as a bare integer, a literal as a string."""
    if isinstance(item, IntegerAttr) and isinstance(item.type, IndexType):
        printer.print_int(item.value.data)
    else:
        printer.print_attribute(item)


def _parse_arg_item(parser: Parser) -> Attribute:
    value = parser.parse_optional_integer()
    if value is None:
        return parser.parse_attribute()
    if parser.parse_optional_punctuation(":") is not None:
        return IntegerAttr(value, parser.parse_type())
    return IntegerAttr(value, IndexType())


def _default_args(n_operands: int, first: int) -> ArrayAttr:
    """The argument list a call prints without: its operands in order (a method's from 1)."""
    return arg_array(list(range(first, n_operands)))


def _print_call_like(op: CallOp | MethodOp, printer: Printer, name: str, first: int) -> None:
    """``name(%a, %b) [args] kwargs {k = item} attr-dict : (types) -> types``; ``[args]`` only
    when they are not the operands in order (from ``first``): a bare integer is an operand
    index, a string a Python literal."""
    printer.print_string(" ")
    printer.print_identifier_or_string_literal(name)
    printer.print_operands(op.inputs)
    if op.args != _default_args(len(op.inputs), first):
        printer.print_string(" ")
        with printer.in_square_brackets():
            printer.print_list(op.args.data, lambda a: _print_arg_item(printer, a))
    if op.kwargs is not None:
        printer.print_string(" kwargs ")

        def entry(item: tuple[str, Attribute]) -> None:
            printer.print_identifier_or_string_literal(item[0])
            printer.print_string(" = ")
            _print_arg_item(printer, item[1])

        with printer.in_braces():
            printer.print_list(op.kwargs.data.items(), entry)
    printer.print_op_attributes(op.attributes)
    printer.print_string(" : ")
    printer.print_function_type([v.type for v in op.inputs], [r.type for r in op.outs])


def _parse_call_like(
    cls: type[CallOp] | type[MethodOp], parser: Parser, name_key: str, first: int
) -> Any:
    name = _parse_word(parser, f"the {name_key}")
    operands = parser.parse_comma_separated_list(
        parser.Delimiter.PAREN, parser.parse_unresolved_operand
    )
    args = parser.parse_optional_comma_separated_list(
        parser.Delimiter.SQUARE, lambda: _parse_arg_item(parser)
    )
    props: dict[str, Attribute] = {
        name_key: StringAttr(name),
        "args": ArrayAttr(args) if args is not None else _default_args(len(operands), first),
    }
    if parser.parse_optional_keyword("kwargs") is not None:

        def entry() -> tuple[str, Attribute]:
            key = _parse_word(parser, "a keyword argument's name")
            parser.parse_punctuation("=")
            return key, _parse_arg_item(parser)

        props["kwargs"] = DictionaryAttr(
            dict(parser.parse_comma_separated_list(parser.Delimiter.BRACES, entry))
        )
    attrs = parser.parse_optional_attr_dict()
    parser.parse_punctuation(":")
    pos = parser.pos
    ftype = parser.parse_function_type()
    inputs = parser.resolve_operands(operands, ftype.inputs.data, pos)
    return cls.create(
        operands=inputs, properties=props, attributes=attrs, result_types=ftype.outputs.data
    )


def _call_properties(
    name_key: str, name: str, args: Sequence[int | str], kwargs: Mapping[str, int | str] | None
) -> dict[str, Attribute]:
    """The properties of a ``torchpy.call``/``torchpy.method``: its name, ``args``, ``kwargs``."""
    props: dict[str, Attribute] = {name_key: StringAttr(name), "args": arg_array(args)}
    if kwargs:
        props["kwargs"] = DictionaryAttr({k: arg_item(v) for k, v in kwargs.items()})
    return props


@irdl_op_definition
class CallOp(IRDLOperation):
    """``torchpy.call``: ``r = callee(args..., k=v...)`` with EmitC-style argument lists."""

    name = "torchpy.call"
    callee = prop_def(StringAttr)
    args = prop_def(ArrayAttr)
    kwargs = opt_prop_def(DictionaryAttr)
    inputs = var_operand_def()
    outs = var_result_def()

    def print(self, printer: Printer) -> None:
        _print_call_like(self, printer, self.callee.data, 0)

    @classmethod
    def parse(cls, parser: Parser) -> CallOp:
        return _parse_call_like(cls, parser, "callee", 0)

    def __init__(
        self,
        callee: str,
        operands: Sequence[SSAValue],
        args: Sequence[int | str],
        kwargs: Mapping[str, int | str] | None,
        result_types: Sequence[Attribute],
    ):
        super().__init__(
            operands=[list(operands)],
            properties=_call_properties("callee", callee, args, kwargs),
            result_types=[list(result_types)],
        )

    def verify_(self) -> None:
        if not all(is_python_name(p) for p in self.callee.data.split(".")):
            raise VerifyException(f"torchpy.call: callee {self.callee.data!r} is not a dotted name")
        problem = callee_problem(self.callee.data)
        if problem is not None:
            raise VerifyException(f"torchpy.call: {problem}")
        # the printer writes operator.getitem(a, b) as a[b] (ramiel.printer._call_text)
        infix_index = self.callee.data == "operator.getitem" and len(self.args) == 2
        subscript = 1 if infix_index and not self.kwargs else -1
        _verify_args(self, self.args, self.kwargs, subscript)


@irdl_op_definition
class MethodOp(IRDLOperation):
    """``torchpy.method``: ``r = self.method(args..., k=v...)``; operand 0 is ``self``."""

    name = "torchpy.method"
    method = prop_def(StringAttr)
    args = prop_def(ArrayAttr)
    kwargs = opt_prop_def(DictionaryAttr)
    inputs = var_operand_def()
    outs = var_result_def()

    def print(self, printer: Printer) -> None:
        _print_call_like(self, printer, self.method.data, 1)

    @classmethod
    def parse(cls, parser: Parser) -> MethodOp:
        return _parse_call_like(cls, parser, "method", 1)

    def __init__(
        self,
        method: str,
        operands: Sequence[SSAValue],
        args: Sequence[int | str],
        kwargs: Mapping[str, int | str] | None,
        result_types: Sequence[Attribute],
    ):
        super().__init__(
            operands=[list(operands)],
            properties=_call_properties("method", method, args, kwargs),
            result_types=[list(result_types)],
        )

    def verify_(self) -> None:
        if not is_python_name(self.method.data):
            raise VerifyException(f"torchpy.method: {self.method.data!r} is not an identifier")
        if not self.inputs:
            raise VerifyException("torchpy.method needs its object as operand 0")
        if isinstance(self.inputs[0].type, TensorType):
            problem = method_problem(self.method.data)
            if problem is not None:
                raise VerifyException(f"torchpy.method: {problem}")
        _verify_args(self, self.args, self.kwargs)


@irdl_op_definition
class CallSegmentOp(IRDLOperation):
    """``torchpy.call_segment``: ``a, b = c0_seg0(w, x, y)`` -- run a segment function.

    ``callee`` names a ``torchpy.func`` of kind ``segment`` in the same module whose arguments
    and results match the operands and results (types included).
    """

    name = "torchpy.call_segment"
    callee = prop_def(SymbolRefAttr)
    inputs = var_operand_def()
    outs = var_result_def()

    assembly_format = "$callee `(` $inputs `)` attr-dict `:` functional-type($inputs, $outs)"

    def __init__(
        self, callee: str, operands: Sequence[SSAValue], result_types: Sequence[Attribute]
    ):
        super().__init__(
            operands=[list(operands)],
            properties={"callee": SymbolRefAttr(callee)},
            result_types=[list(result_types)],
        )

    def verify_(self) -> None:
        name = self.callee.root_reference.data
        if self.callee.nested_references.data or not is_python_name(name):
            raise VerifyException(
                f"torchpy.call_segment: callee {self.callee} is not a function name"
            )
        parent = self.parent_op()  # a segment cannot hold one: FuncOp.verify_ says so
        module = parent.parent_op() if parent is not None else None
        if module is None:
            return  # a detached op: checked once it is in a module
        callee = next(
            (
                o
                for o in module.regions[0].block.ops
                if isinstance(o, FuncOp) and o.sym_name.data == name
            ),
            None,
        )
        if callee is None or callee.kind.data != "segment":
            raise VerifyException(f"torchpy.call_segment: no segment function @{name}")
        ret = callee.body.block.last_op
        arg_types = [a.type for a in callee.body.block.args]
        res_types = [v.type for v in ret.operands] if isinstance(ret, ReturnOp) else []
        if [v.type for v in self.inputs] != arg_types or [r.type for r in self.outs] != res_types:
            raise VerifyException(
                f"torchpy.call_segment: operands or results do not match @{name}'s arguments "
                "and returned values"
            )


@irdl_op_definition
class ProgramOp(IRDLOperation):
    """``torchpy.program``: the parallel program's table (graph inputs/outputs -> channels).

    ``input_order``/``output_order``: the ONNX names of the graph inputs/outputs, in graph order;
    ``inputs``: for each graph input (same order) the channels the caller sends it on, one per
    cluster that reads it (``[["x__c0", "x__c1"], ...]``); ``outputs``: for each graph output the
    channel it arrives on (``["y__out", ...]``). ONNX names are only values, never attribute
    keys, so any name survives printing and parsing.
    """

    name = "torchpy.program"
    sym_name = prop_def(SymbolNameConstraint())
    inputs = prop_def(ArrayAttr)
    outputs = prop_def(ArrayAttr)
    input_order = prop_def(ArrayAttr)
    output_order = prop_def(ArrayAttr)

    assembly_format = (
        "$sym_name `inputs` $inputs `outputs` $outputs `input_order` $input_order "
        "`output_order` $output_order attr-dict"
    )

    def verify_(self) -> None:
        if len(self.inputs.data) != len(self.input_order.data):
            raise VerifyException("torchpy.program: inputs and input_order differ in length")
        if len(self.outputs.data) != len(self.output_order.data):
            raise VerifyException("torchpy.program: outputs and output_order differ in length")
        if not all(isinstance(a, ArrayAttr) for a in self.inputs.data):
            raise VerifyException("torchpy.program: each input has an array of channels")
        for what, order in (("input", self.input_order), ("output", self.output_order)):
            seen: set[str] = set()
            for a in order.data:
                name = attr_text(a)
                if not name:
                    raise VerifyException(f"torchpy.program: a graph {what} has an empty name")
                if name in seen:
                    raise VerifyException(
                        f"torchpy.program: graph {what} name {name!r} is listed twice (the "
                        f"module's {what}s are keyed by name)"
                    )
                seen.add(name)
        _verify_module_if_last(self)


def arg_item(v: int | str) -> Attribute:
    """An argument item: an operand index (``int``) or a Python literal's source text (``str``)."""
    if isinstance(v, int):
        return IntegerAttr(v, IndexType())
    return StringAttr(v)


def arg_array(items: Sequence[int | str]) -> ArrayAttr:
    return ArrayAttr([arg_item(v) for v in items])


Torchpy = Dialect(
    "torchpy",
    [
        FuncOp,
        ReturnOp,
        GetOp,
        PutOp,
        SetThreadsOp,
        WeightOp,
        CallOp,
        MethodOp,
        CallSegmentOp,
        ProgramOp,
        IfOp,
        ForOp,
        WhileOp,
        YieldOp,
    ],
    [ObjectType],
)
"""The ``torchpy`` dialect."""
