r"""Python printer: ``torchpy`` IR -> readable PyTorch + Python source (``--to-python``).

A per-op table (see :mod:`ramiel.dialects.torchpy`): each op prints one statement. Names come from
SSA name hints (ONNX tensor names) made into valid, non-clashing ASCII identifiers -- never pasted
raw into the source; ONNX node names appear only in comments, escaped with ``ascii()`` so that no
character can end the comment; channel names and literals are ``repr``-quoted.

Both modules define a ``torch.nn.Module`` class (named by ``class_name``, e.g. from the ONNX graph
name) whose weights are registered buffers named by their ``torchpy.weight`` keys -- the tensor
names of the weights file (``weights.safetensors`` beside the module, written by
:func:`write_weights`), so ``load_state_dict(safetensors.torch.load_file(...))`` loads them;
``from_safetensors(path=None)`` does that with the file beside the module:

* a module with ``torchpy.func`` ops of kind ``sequential`` prints the sequential module: class
  ``<Name>(torch.nn.Module)`` with ``forward(self, <graph inputs>)`` holding the straight-line code
  (weights read as ``self.<key>``); with ``trainable`` the floating-point weights are
  ``torch.nn.Parameter``\ s instead of buffers;
* one with ``torchpy.func`` ops of kind ``cluster`` prints the parallel module: one function
  ``cluster_<c>(ch, w)`` per cluster (weights read as ``w.<key>``, a namespace of the module's
  buffers), the ``PROGRAM`` table for :mod:`ramiel.runtime`, and class
  ``<Name>Parallel(ramiel.runtime.ParallelModel)`` whose ``forward`` runs ``PROGRAM`` on workers.

Functions of kind ``segment`` (from ``--compile-segments``) print as ``@segment``-decorated
functions ``c0_seg0(w, *inputs)`` at module level (:func:`ramiel.runtime.compiled.segment`:
compiled with ``torch.compile`` on their first call), before the function that calls them; the
module's ``forward`` passes ``self`` as their ``w``.

Both end with a ``__main__`` block that runs one inference on random inputs.
"""

from __future__ import annotations

import builtins
import contextlib
import json
import keyword
import os
import re
import sys
import unicodedata
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
from xdsl.dialects.builtin import (
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

from ramiel.attrs import (
    BACKEND_ATTR,
    CORES_ATTR,
    COST_ATTR,
    INDEX_LIMITS_ATTR,
    NODE_NAME_ATTR,
    NUM_OPS_ATTR,
    SEGMENT_BACKEND_ATTR,
    SEGMENT_OF_ATTR,
    THREADS_ATTR,
    get_attr,
    get_float,
    get_int,
    get_str,
)
from ramiel.context import make_context
from ramiel.dialects import torchpy as tp
from ramiel.dtypes import numpy_dtype_of
from ramiel.errors import RamielError
from ramiel.files import input_file, same_file
from ramiel.naming import sanitize, unique
from ramiel.parsing import ir_text, parse_module, verify_located
from ramiel.pysource import GENERATED_NAMES
from ramiel.weights import WeightStore, constant_value, save_safetensors

#: Names generated code never gives a value or function: the module's own names and builtins
#: (the torchpy verifier rejects functions named so, :mod:`ramiel.pysource`).
RESERVED = GENERATED_NAMES | frozenset(dir(builtins))


def class_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a generated class's name (not a Python identifier, or a name the
    generated modules or Python's builtins already use), or ``None``. Python reads an identifier
    in its NFKC form (``ｔorch``, with a full-width t, is ``torch``: such a class rebound the
    module's ``torch``; a fresh-user check), so that form is checked."""
    if keyword.iskeyword(name):
        return f"class name {name!r} is a Python keyword"
    if not tp.is_python_name(name):
        return f"class name {name!r} is not a Python identifier"
    norm = unicodedata.normalize("NFKC", name)
    reads = "" if norm == name else f" (Python reads it as {norm!r})"
    if norm in RESERVED or f"{norm}Parallel" in RESERVED or _GENERATED_FUNCTION.fullmatch(norm):
        return f"class name {name!r} is taken by the generated code or Python's builtins{reads}"
    return None


#: The names of the generated functions (``cluster_c0``, ``c0_seg0``, ``forward_seg0``): a
#: class of such a name would clash with one (found by a fresh-user check: an internal error).
_GENERATED_FUNCTION = re.compile(r"cluster_\w+|\w+_seg\d+")


WEIGHTS_FILE = "weights.safetensors"
"""The weights file a generated module loads by default, from its own directory."""

#: Element types whose weights become ``torch.nn.Parameter``\ s with ``trainable``.
TRAINABLE_DTYPES = frozenset({"float16", "bfloat16", "float32", "float64"})

#: ``operator.*`` callees printed infix: name -> (format, precedence-safe)
_INFIX = {
    "operator.add": "{0} + {1}",
    "operator.sub": "{0} - {1}",
    "operator.mul": "{0} * {1}",
    "operator.truediv": "{0} / {1}",
    "operator.floordiv": "{0} // {1}",
    "operator.mod": "{0} % {1}",
    "operator.pow": "{0} ** {1}",
    "operator.matmul": "{0} @ {1}",
    "operator.and_": "{0} & {1}",
    "operator.or_": "{0} | {1}",
    "operator.xor": "{0} ^ {1}",
    "operator.eq": "{0} == {1}",
    "operator.ne": "{0} != {1}",
    "operator.lt": "{0} < {1}",
    "operator.le": "{0} <= {1}",
    "operator.gt": "{0} > {1}",
    "operator.ge": "{0} >= {1}",
    "operator.neg": "-{0}",
    "operator.invert": "~{0}",
    "operator.getitem": "{0}[{1}]",
}
_SIMPLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$|^-?\d+(\.\d*)?(e-?\d+)?$")
_PLACEHOLDER = re.compile(r"\$(\d+)")


class Names:
    """Valid, unique Python identifiers for SSA values within one function.

    ``weights``: how weights are read (``self`` in a method of the module class, ``w`` in a
    cluster function).
    """

    def __init__(self, taken: Iterable[str] = (), weights: str = "w"):
        self.taken = set(RESERVED) | set(taken)
        self.names: dict[SSAValue, str] = {}
        self.weights = weights

    def fresh(self, hint: str | None, fallback: str = "t") -> str:
        return unique(sanitize(hint or "", fallback), self.taken)

    def __getitem__(self, v: SSAValue) -> str:
        if v not in self.names:
            owner = v.owner
            if isinstance(owner, tp.WeightOp):
                self.names[v] = f"{self.weights}.{owner.key.data}"
            else:
                self.names[v] = self.fresh(v.name_hint, "tmp")
        return self.names[v]


def _item(item: Attribute, operands: list[str]) -> str:
    if isinstance(item, IntegerAttr):
        return operands[item.value.data]
    assert isinstance(item, StringAttr)
    return _PLACEHOLDER.sub(lambda m: operands[int(m.group(1))], item.data)


def _paren(text: str) -> str:
    return text if _SIMPLE.match(text) or text.startswith(("(", "[")) else f"({text})"


def _call_text(op: tp.CallOp | tp.MethodOp, names: Names) -> str:
    operands = [names[v] for v in op.inputs]
    args = [_item(a, operands) for a in op.args.data]
    kwargs = op.kwargs.data if op.kwargs is not None else {}
    kw = [f"{k}={_item(v, operands)}" for k, v in kwargs.items()]
    if isinstance(op, tp.MethodOp):
        return f"{_paren(operands[0])}.{op.method.data}({', '.join(args + kw)})"
    callee = op.callee.data
    if callee == "list" and not args and not kw:
        return "[]"
    if callee in _INFIX and not kw and len(args) == _INFIX[callee].count("{"):
        if callee == "operator.getitem":
            return f"{_paren(args[0])}[{args[1]}]"
        return _INFIX[callee].format(*(_paren(a) for a in args))
    return f"{callee}({', '.join(args + kw)})"


def _text(a: Attribute) -> str:
    text = tp.attr_text(a)
    if text is None:
        raise ValueError(f"expected a string attribute, got {a}")
    return text


def _comment(op: Operation) -> str:
    name = get_str(op, NODE_NAME_ATTR)
    if name is None:
        return ""
    text = ascii(name)[1:-1]  # escapes newlines and every non-ASCII character
    return f"  # {text}"


def _docstring_text(text: str) -> str:
    """``text`` escaped for a triple-quoted docstring: printable ASCII only, no quote/backslash."""
    out = []
    for c in text:
        if c == '"':
            out.append("\\x22")
        elif c == "\\":
            out.append("\\\\")
        elif c.isascii() and c.isprintable():
            out.append(c)
        else:
            out.append(ascii(c)[1:-1])
    return "".join(out)


def _targets(op: Operation, names: Names) -> str:
    res = [names[r] for r in op.results]
    if not res:
        return ""
    return (res[0] if len(res) == 1 else ", ".join(res)) + " = "


def statement(op: Operation, names: Names) -> str | None:
    """The Python statement of one torchpy op (``None`` for ops printed inline, like weights)."""
    if isinstance(op, tp.WeightOp):
        return None
    if isinstance(op, tp.GetOp):
        return f"{names[op.result]} = ch.get({op.channel.data!r})"
    if isinstance(op, tp.PutOp):
        return f"ch.put({op.channel.data!r}, {names[op.value]})"
    if isinstance(op, tp.SetThreadsOp):
        why = tp.attr_text(op.reason) if op.reason is not None else None
        note = f"  # {ascii(why)[1:-1]}" if why else ""
        return f"ops.set_threads({op.count.value.data}){note}"
    if isinstance(op, tp.CallOp | tp.MethodOp):
        return _targets(op, names) + _call_text(op, names) + _comment(op)
    if isinstance(op, tp.CallSegmentOp):
        args = ", ".join([names.weights, *(names[v] for v in op.inputs)])
        return _targets(op, names) + f"{op.callee.root_reference.data}({args})"
    if isinstance(op, tp.ReturnOp):
        vals = [names[v] for v in op.values]
        if not vals:  # a model without outputs: the sequential module returns an empty tuple
            parent = op.parent_op()
            sequential = isinstance(parent, tp.FuncOp) and parent.kind.data == "sequential"
            return "return ()" if sequential else "return"
        return "return " + (vals[0] if len(vals) == 1 else f"({', '.join(vals)})")
    raise ValueError(f"no Python form for {op.name}")


def _dtype_text(t: Attribute) -> str:
    if isinstance(t, TensorType):
        return f"torch.{numpy_dtype_of(t.element_type).name}"
    return "None"


def _shape_text(t: Attribute) -> str:
    if isinstance(t, TensorType):
        dims = list(t.get_shape())
        return "(" + ", ".join(str(d) for d in dims) + ("," if len(dims) == 1 else "") + ")"
    return "None"


def _format_of(op: tp.GetOp | tp.PutOp | tp.WeightOp) -> str:
    """The memory format name of a channel end or weight (``contiguous_format`` by default)."""
    return op.memory_format.data if op.memory_format is not None else "contiguous_format"


def _func_text(
    f: tp.FuncOp,
    indent: str = "",
    doc: str | None = None,
    names: Names | None = None,
    functions: Iterable[str] = (),
    segments_write: bool = False,
) -> tuple[str, dict[str, tuple[str, Attribute, str]]]:
    """Source of one function, and its channels: name -> ('get'|'put', type, memory format).

    A cluster function is ``def cluster_<c>(ch, w):`` and a segment ``@segment def
    <name>(w, <inputs>):`` at module level; the sequential function is the
    ``forward(self, <inputs>)`` method of the module class (``indent``: one level).
    ``functions``: the module's function names, which no local name may shadow;
    ``segments_write``: whether a segment the sequential function calls writes in place (its
    ``forward`` then starts with the autograd guard, as where it writes in place itself).
    """
    kind = f.kind.data
    names = names or Names(functions, weights="self" if kind == "sequential" else "w")
    block = f.body.block
    channels: dict[str, tuple[str, Attribute, str]] = {}
    if kind == "cluster":
        params = "ch, w"
    else:
        params = ", ".join([names.weights, *(names[a] for a in block.args)])
    lines = [f"{indent}{_segment_decorator(f)}"] if kind == "segment" else []
    lines.append(f"{indent}def {f.sym_name.data}({params}):")
    doc = doc if doc is not None else _func_doc(f)
    if doc:
        lines.append(f'{indent}    """{doc}"""')
    if kind == "sequential" and block.args and (segments_write or writes_in_place(f)):
        args = ", ".join(names[a] for a in block.args)
        lines += [
            f"{indent}    if ops.records_autograd({args}):  # backward(): the in-place"
            " statements below as copies",
            f"{indent}        return torch.func.functionalize(type(self).forward)(self, {args})",
        ]
    for op in block.ops:
        if isinstance(op, tp.GetOp):
            channels[op.channel.data] = ("get", op.result.type, _format_of(op))
        elif isinstance(op, tp.PutOp):
            channels[op.channel.data] = ("put", op.value.type, _format_of(op))
    lines += _block_lines(block, names, indent + "    ")
    return "\n".join(lines) + "\n", channels


def writes_in_place(f: Operation) -> bool:
    """Whether ``f`` has a statement that overwrites a tensor: a torch function or method
    whose name ends in ``_`` (``torch.relu_``, ``x.add_``; what ``--inplace`` prints), not a
    Ramiel helper (``ops.slice_`` is named for the keyword)."""
    for op in f.walk():
        if isinstance(op, tp.CallOp):
            name = op.callee.data
            if name.startswith("ops."):
                continue
        elif isinstance(op, tp.MethodOp):
            name = op.method.data
        else:
            continue
        last = name.rsplit(".", 1)[-1]
        if last.endswith("_") and not last.startswith("_"):
            return True
    return False


def _parameters(names: Names, args: Sequence[SSAValue], onnx_names: Sequence[str]) -> list[str]:
    """The sequential ``forward``'s parameter names for its block ``args`` (the graph inputs
    ``onnx_names``), assigned in ``names``: each input's name hint made a Python name (xDSL
    drops a trailing ``_<number>``: ``data_0`` becomes ``data``), but never another graph
    input's ONNX name, which a caller of the parallel module may pass as a keyword: that input
    keeps its full name instead (inputs ``x_1`` and ``x`` stay ``x_1`` and ``x``; the sequential
    module had named them ``x`` and ``x_1``, so that ``model(x=a, x_1=b)`` meant the opposite
    of ``model.sequential(x=a, x_1=b)``: helper-22)."""
    onnx_idents = {n for n in onnx_names if n.isidentifier() and not keyword.iskeyword(n)}
    out = []
    for i, arg in enumerate(args):
        onnx_name = onnx_names[i] if i < len(onnx_names) else ""
        base = sanitize(arg.name_hint or "", "tmp")
        if base in onnx_idents and base != onnx_name:
            base = sanitize(onnx_name, "tmp")
        avoid = names.taken | (onnx_idents - {onnx_name})
        name, n = base, 1
        while name in avoid:
            name, n = f"{base}_{n}", n + 1
        names.taken.add(name)
        names.names[arg] = name
        out.append(name)
    return out


def _block_lines(block: Block, names: Names, indent: str) -> list[str]:
    """The statements of ``block`` at ``indent`` (compound statements for region ops)."""
    lines: list[str] = []
    for op in block.ops:
        if isinstance(op, tp.REGION_OPS):
            lines += [indent + line for line in _compound(op, names)]
        elif isinstance(op, tp.YieldOp):
            continue  # printed by the region op
        else:
            s = statement(op, names)
            if s is not None:
                lines.append(indent + s)
    return lines


def _assign(targets: list[str], values: list[str]) -> list[str]:
    """``a, b = x, y`` (nothing where a target already holds its value)."""
    pairs = [(t, v) for t, v in zip(targets, values, strict=True) if t != v]
    if not pairs:
        return []
    return [f"{', '.join(t for t, _ in pairs)} = {', '.join(v for _, v in pairs)}"]


def _body(block: Block, names: Names, tail: list[str]) -> list[str]:
    """An indented block: its statements, then ``tail``; ``pass`` if both are empty."""
    lines = _block_lines(block, names, "    ") + ["    " + t for t in tail]
    return lines or ["    pass"]


def _compound(op: Operation, names: Names) -> list[str]:
    """The lines of a ``torchpy.if``/``for``/``while`` (unindented; blocks indented by 4)."""
    results = [names[r] for r in op.results]
    if isinstance(op, tp.IfOp):
        lines = [f"if bool({names[op.cond]}):{_comment(op)}"]
        then_y = op.then_region.block.last_op
        else_y = op.else_region.block.last_op
        assert isinstance(then_y, tp.YieldOp) and isinstance(else_y, tp.YieldOp)
        lines += _body(
            op.then_region.block, names, _assign(results, [names[v] for v in then_y.values])
        )
        lines.append("else:")
        lines += _body(
            op.else_region.block, names, _assign(results, [names[v] for v in else_y.values])
        )
        return lines
    assert isinstance(op, tp.ForOp | tp.WhileOp)
    block = op.body.block
    index, carried = block.args[0], block.args[1:]
    for arg, name in zip(carried, results, strict=True):
        names.names[arg] = name  # the carried value is the result's variable
    term = block.last_op
    assert isinstance(term, tp.YieldOp)
    nexts = [names[v] for v in term.values]
    lines = _assign(results, [names[v] for v in op.inits])
    i = names[index]
    if isinstance(op, tp.ForOp):
        count = str(op.count.value.data) if op.count is not None else _int_text(op.inputs[0], names)
        lines.append(f"for {i} in range({count}):{_comment(op)}")
        lines += _body(block, names, _assign(results, nexts))
        return lines
    keep = names.fresh("keep_going")
    lines.append(f"{keep} = bool({names[op.inputs[0]]})")
    counted = op.bounded is not None or bool(index.uses)  # else no iteration counter
    if counted:
        lines.append(f"{i} = 0")
    bound = f" and {i} < {_int_text(op.inputs[1], names)}" if op.bounded is not None else ""
    lines.append(f"while {keep}{bound}:{_comment(op)}")
    tail = _assign([keep, *results], [f"bool({nexts[0]})", *nexts[1:]])
    tail += [f"{i} += 1"] if counted else []
    lines += _body(block, names, tail)
    return lines


def _int_text(v: SSAValue, names: Names) -> str:
    """A trip count or bound as a Python int (``int(t)`` of a tensor)."""
    return f"int({names[v]})" if isinstance(v.type, TensorType) else names[v]


def _func_doc(f: tp.FuncOp) -> str:
    n_calls = sum(isinstance(o, tp.CallOp | tp.MethodOp) for o in f.body.block.ops)
    cost = get_float(f, COST_ATTR)
    n_ops = get_int(f, NUM_OPS_ATTR)
    if f.kind.data == "cluster":
        parts = [f"Cluster {f.sym_name.data.removeprefix('cluster_')}"]
        if n_ops is not None:
            parts.append(f"{n_ops} ONNX ops")
        if cost is not None:
            parts.append(f"estimated {cost / 1000:.3f} ms")
        return (
            ": ".join([parts[0], ", ".join(parts[1:])]) + "." if len(parts) > 1 else parts[0] + "."
        )
    if f.kind.data == "segment":
        owner = get_str(f, SEGMENT_OF_ATTR) or ""
        where = ""
        if owner.startswith("cluster_"):
            where = f" of cluster {owner.removeprefix('cluster_')}"
        elif owner:
            where = f" of {owner}"
        threads = get_int(f, THREADS_ATTR)
        with_threads = f", {threads} intra-op threads" if threads is not None else ""
        count = f"{n_calls} statement" + ("s" if n_calls != 1 else "")
        if get_str(f, SEGMENT_BACKEND_ATTR) == "onednn-graph":
            return (
                f"Compiled segment{where} ({count}{with_threads}): one TorchScript graph with "
                "oneDNN Graph fusion, traced on its first call."
            )
        return (
            f"Compiled segment{where} ({count}{with_threads}): one torch.compile graph, "
            "compiled at load time."
        )
    if any(isinstance(o, tp.CallSegmentOp) for o in f.body.block.ops):
        return "The whole model, sequentially, in compiled segments."
    return f"The whole model, sequentially ({n_calls} statements)."


def _segment_decorator(f: tp.FuncOp) -> str:
    """``@segment``, or ``@segment(backend='...')`` for a segment marked with another backend
    (``ramiel.segment_backend``, ``--compile-segments=backend=...``)."""
    backend = get_str(f, SEGMENT_BACKEND_ATTR)
    return f"@segment(backend={backend!r})" if backend else "@segment"


def make_class_name(text: str, default: str = "Model") -> str:
    """A CamelCase Python class name made from ``text`` (an ONNX graph name or a file stem):
    ``light_inception_v1`` -> ``LightInceptionV1``; ``default`` when nothing is left."""
    parts = [p for p in re.split(r"[^A-Za-z0-9]+", text) if p]
    name = "".join(p[0].upper() + p[1:] for p in parts)
    if not name or not name.isascii():
        return default
    if name[0].isdigit():
        name = default + name
    if keyword.iskeyword(name) or name in RESERVED:
        name += "Model"
    return name


def module_weights(module: ModuleOp) -> dict[str, tp.WeightOp]:
    """The weights the functions of a ``torchpy`` module read, in order of first use: key -> its
    first ``torchpy.weight``.

    Raises ``ValueError`` when one key names two different tensors (type or value).
    """
    out: dict[str, tp.WeightOp] = {}
    weight_ops = [op for op in module.walk() if isinstance(op, tp.WeightOp)]
    used = [
        v.owner for op in module.walk() for v in op.operands if isinstance(v.owner, tp.WeightOp)
    ]
    for op in [*used, *weight_ops]:
        key = op.key.data
        seen = out.get(key)
        if seen is None:
            out[key] = op
        elif seen is not op and (seen.result.type != op.result.type or seen.value != op.value):
            raise ValueError(f"torchpy.weight key {key!r} names two different tensors")
    return out


def _weight_decls(
    weights: dict[str, tp.WeightOp],
    trainable: bool,
    indent: str,
    formats: dict[str, str] | None = None,
) -> list[str]:
    """``__init__`` statements registering every weight (uninitialised: loaded afterwards), in
    its memory format of ``formats`` (:func:`weight_formats`) where it has one."""
    lines = []
    for key, op in weights.items():
        t = op.result.type
        fmt = (formats or {}).get(key)
        mf = f", memory_format=torch.{fmt}" if fmt else ""
        empty = f"torch.empty({_shape_text(t)}, dtype={_dtype_text(t)}{mf})"
        dt = numpy_dtype_of(t.element_type).name if isinstance(t, TensorType) else ""
        if trainable and dt in TRAINABLE_DTYPES:
            lines.append(f"{indent}self.{key} = torch.nn.Parameter({empty})")
        else:
            lines.append(f"{indent}self.register_buffer({key!r}, {empty})")
    return lines


def _arg_names_text(arg_names: Mapping[str, str] | None) -> str:
    """The parallel class's ``ARG_NAMES`` (the sequential module's parameter name -> ONNX
    name; '' where every one is its ONNX name)."""
    items = dict(arg_names or {})
    if all(k == v for k, v in items.items()):
        return ""
    body = "".join(f"        {k!r}: {v!r},\n" for k, v in items.items())
    return (
        "    ARG_NAMES = {  # forward's keywords as in the sequential module\n" + body + "    }\n"
    )


def _index_limits_text(module: ModuleOp) -> str:
    """The class attribute ``INDEX_LIMITS`` (integer input -> the size of the table it indexes,
    for random inputs that stay inside it; :data:`~ramiel.attrs.INDEX_LIMITS_ATTR`), or ''."""
    text = get_str(module, INDEX_LIMITS_ATTR)
    if not text:
        return ""
    try:
        limits = {str(k): int(v) for k, v in json.loads(text).items()}
    except (ValueError, AttributeError, TypeError):
        raise ValueError(
            f"module attribute {INDEX_LIMITS_ATTR}: not a JSON object of input sizes: {text!r}"
        ) from None
    return f"    INDEX_LIMITS = {limits!r}\n"


def _specs_text(names: list[str], types: list[Attribute], indent: str) -> str:
    items = [
        f"{indent}    {n!r}: ({_shape_text(t)}, {_dtype_text(t)}),"
        for n, t in zip(names, types, strict=False)
    ]
    return f"{indent}INPUTS = {{\n" + "\n".join(items) + ("\n" if items else "") + f"{indent}}}\n"


def _signature_doc(
    names: list[str], types: list[Attribute], params: Sequence[str] | None = None
) -> str:
    """``x: float32[1, 3, 224, 224]`` per value; ``params``: the Python names, when they differ
    from the ONNX ones (``x ('input'): ...``)."""
    items = []
    for i, (n, t) in enumerate(zip(names, types, strict=False)):
        shape = list(t.get_shape()) if isinstance(t, TensorType) else ""
        what = f"{_dtype_text(t).removeprefix('torch.')}{shape}"
        label = _docstring_text(n)
        if params is not None and params[i] != n:
            label = f"{params[i]} ('{label}')"
        items.append(f"{label}: {what}")
    return ", ".join(items)


_LOADER = """\
    @classmethod
    def from_safetensors(cls, path=None, device=None):
        \"\"\"An instance holding the weights of the safetensors file ``path`` (default:
        ``WEIGHTS_FILE`` beside this module), on ``device`` (default: the CPU){formats_doc}.

        A tensor of the file that is no buffer of this class (one only the parallel program
        reads) is skipped. Raises ``RuntimeError`` (``load_state_dict``) when the file lacks a
        weight or holds one of another shape.
        \"\"\"
        from safetensors.torch import load_file

        from ramiel.runtime.memory import reuse_freed_memory
        from ramiel.runtime.weights import own_tensors{formats_import}
        reuse_freed_memory()  # freed tensor memory kept for reuse (RAMIEL_MALLOC=0: off)
        if path is None:
            path = Path(__file__).resolve().with_name(cls.WEIGHTS_FILE)
        with torch.device("meta"):  # no memory for weights that are replaced at once
            model = cls()
        # plain tensors even under torch.inference_mode (the prepacked kernels need their
        # version counter to notice a write)
        with torch.inference_mode(False):
{load}        return model
"""


_ADAPT_THREADS = """\
        # fewer intra-op threads for a call while other processes keep this process's cores
        # busy, the caller's torch.get_num_threads() otherwise (RAMIEL_ADAPT_THREADS=0: off)
        adapt_threads(self)
"""


def _loader_text(formats: bool) -> str:
    """The sequential class's ``from_safetensors``; with ``formats``, converting the weights of
    its ``WEIGHT_FORMATS`` once (:func:`ramiel.runtime.weights.to_formats`)."""
    if not formats:
        return _LOADER.format(
            formats_doc="",
            formats_import="\n",
            load='            state = load_file(str(path), device=str(device or "cpu"))\n'
            "            model.load_state_dict(own_tensors(model, state), assign=True)\n",
        )
    return _LOADER.format(
        formats_doc="; the weights of\n        ``WEIGHT_FORMATS`` converted once into their memory format",
        formats_import=", to_formats\n",
        load='            state = own_tensors(model, load_file(str(path), device=str(device or "cpu")))\n'
        "            model.load_state_dict(to_formats(state, cls.WEIGHT_FORMATS), assign=True)\n",
    )


def forward_parameters(module: ModuleOp) -> dict[str, str]:
    """The ``forward`` parameter names :func:`print_python` gives the sequential ``torchpy``
    module ``module`` (sanitised ONNX names) -> the ONNX names of those graph inputs; empty for
    a module without a sequential function."""
    funcs = [op for op in module.ops if isinstance(op, tp.FuncOp)]
    seq = next((f for f in funcs if f.kind.data == "sequential"), None)
    prog = next((op for op in module.ops if isinstance(op, tp.ProgramOp)), None)
    if seq is None or prog is None:
        return {}
    names = Names({f.sym_name.data for f in funcs}, weights="self")
    onnx_names = [_text(a) for a in prog.input_order.data]
    params = _parameters(names, seq.body.block.args, onnx_names)
    return dict(zip(params, onnx_names, strict=False))


def print_python(
    module: ModuleOp,
    source: str = "",
    class_name: str = "Model",
    trainable: bool = False,
    dynamic_batch: Sequence[str] = (),
    weights_file: str = WEIGHTS_FILE,
    arg_names: Mapping[str, str] | None = None,
    output_types: Sequence[Attribute] | None = None,
) -> str:
    """Python source of a ``torchpy`` module (see the module docstring).

    ``class_name``: the module class (the parallel one gets ``Parallel`` appended); ``trainable``:
    floating-point weights of the sequential class are parameters; ``dynamic_batch``: the ONNX
    names of the graph inputs whose dimension 0 the sequential module takes at any size (listed
    in its ``DYNAMIC_BATCH``, for ``torch.export`` users); ``weights_file``: the name of the
    weights file the classes load from their module's directory (their ``WEIGHTS_FILE``);
    ``arg_names``: for a parallel module, the sequential module's :func:`forward_parameters`
    (its ``ARG_NAMES``, the keywords its ``forward`` takes besides the ONNX names);
    ``output_types``: the output types the sequential class's docstring gives (default: those
    ``forward`` returns; a dynamic-batch module's are of a sample batch, and the compiler gives
    the bound batch's, as its ``INPUTS`` table lists them).

    Raises ``ValueError`` for a module without ``torchpy.func``, a function name used twice or
    reserved, or a class name that is not a Python identifier.
    """
    funcs = [op for op in module.ops if isinstance(op, tp.FuncOp)]
    programs = [op for op in module.ops if isinstance(op, tp.ProgramOp)]
    if not funcs:
        raise ValueError("the module holds no torchpy.func (run --lower-to-torchpy first)")
    if class_name_problem(class_name) is not None:
        raise ValueError(f"class name {class_name!r} is not a usable Python identifier")
    seen: set[str] = set()
    for f in funcs:
        fname = f.sym_name.data
        if fname in seen or (fname in RESERVED and fname != "forward") or fname == class_name:
            raise ValueError(
                f"torchpy.func @{fname}: the name is used twice or clashes with a name of the "
                "generated module"
            )
        seen.add(fname)
    prog = programs[0] if programs else None
    parallel = any(f.kind.data == "cluster" for f in funcs)
    weights = module_weights(module)
    formats = weight_formats(module)
    segments = [f for f in funcs if f.kind.data == "segment"]
    in_order = [_text(a) for a in prog.input_order.data] if prog else []
    out_order = [_text(a) for a in prog.output_order.data] if prog else []
    out: list[str] = []
    name = class_name + "Parallel" if parallel else class_name
    src = f" from {_docstring_text(source)}" if source else ""
    if parallel:
        out.append(
            f'"""Parallel PyTorch module generated by Ramiel{src}.\n\n'
            "One function per cluster; the clusters run concurrently and exchange tensors\n"
            "through the named channels of PROGRAM (see ramiel.runtime). The class\n"
            f"{name} (a torch.nn.Module, ramiel.runtime.ParallelModel) runs PROGRAM\n"
            "on workers started once; the weights are its buffers, named as in\n"
            f"{weights_file}:\n\n"
            f'    with {name}.from_safetensors(backend="threads") as model:\n'
            "        outputs = model(*inputs)\n\n"
            "Run `python <this file>` for one inference on random inputs.\n"
            '"""\n'
        )
    else:
        out.append(
            f'"""Sequential PyTorch module generated by Ramiel{src}.\n\n'
            f"{name} is a torch.nn.Module: forward(...) computes the graph outputs from the\n"
            "graph inputs; the weights are its "
            + ("parameters and buffers" if trainable else "buffers")
            + f", named as in {weights_file}:\n\n"
            f"    model = {name}.from_safetensors()  # or {name}() + load_state_dict(...)\n"
            "    outputs = model(*inputs)\n\n"
            "Run `python <this file>` for one inference on random inputs.\n"
            '"""\n'
        )
    out.append("import math  # noqa: F401\nimport operator  # noqa: F401\n")
    if not parallel:
        out.append("from pathlib import Path\n")
    # before torch: GNU OpenMP reads its wait policy once, when torch loads it (ramiel.omp)
    out.append("\nimport ramiel.omp  # noqa: F401 - OpenMP settings, before torch starts\n")
    out.append("import torch\nimport torch.nn.functional as F  # noqa: F401\n")
    out.append("from ramiel.runtime import ops  # noqa: F401\n")
    if parallel:
        out.append("from ramiel.runtime import ChannelSpec, ParallelModel, Program\n")
    if segments:
        out.append("from ramiel.runtime.compiled import segment\n")
    if not parallel:
        out.append("from ramiel.runtime.contention import adapt_threads\n")
    if parallel:
        all_channels: dict[str, dict[str, tuple[str, Attribute, str]]] = {}
        bodies = []
        for f in funcs:
            text, chans = _func_text(f, functions=seen)
            bodies.append(text)
            all_channels[f.sym_name.data] = chans
        out.append("\n\n" + "\n\n".join(bodies))
        cores = _planned_cores(module)
        out.append("\n\n" + _program_text(funcs, all_channels, prog, in_order, out_order, cores))
        out.append(_weight_formats_text(formats))
        decls = _weight_decls(weights, False, " " * 8, formats)
        # a module compiled for another backend runs on it by default (from_safetensors(),
        # python model.py; the distributed one also under torchrun)
        backend = get_str(module, BACKEND_ATTR)
        backend_line = (
            f"    BACKEND = {backend!r}\n" if backend in ("processes", "distributed") else ""
        )
        out.append(
            f"\n\nclass {name}(ParallelModel):\n"
            '    """PROGRAM as a torch.nn.Module: forward(*inputs) runs it on the workers of\n'
            "    ParallelModel (backend, threads_per_worker, timeout_s: keyword arguments of the\n"
            "    constructor and of from_safetensors), compiled for the shapes of PROGRAM's input\n"
            '    channels. close() (or `with`) stops the workers."""\n\n'
            "    PROGRAM = PROGRAM\n"
            + backend_line
            + _index_limits_text(module)
            + ("    WEIGHT_FORMATS = WEIGHT_FORMATS\n" if formats else "")
            + _arg_names_text(arg_names)
            + f"    WEIGHTS_FILE = {weights_file!r}\n\n"
            "    def __init__(self, **runtime_options):\n"
            "        super().__init__(**runtime_options)\n" + "".join(d + "\n" for d in decls)
        )
        out.append(
            '\n\nif __name__ == "__main__":\n'
            "    from ramiel.runtime.entry import main\n\n"
            f"    main({name}, __file__)\n"
        )
        return "".join(out)
    seq = next(f for f in funcs if f.kind.data == "sequential")
    arg_types = [a.type for a in seq.body.block.args]
    ret = seq.body.block.last_op
    out_types = [v.type for v in ret.values] if isinstance(ret, tp.ReturnOp) else []
    if output_types is not None:
        out_types = list(output_types)
    doc = _func_doc(seq)
    names = Names(seen, weights="self")
    params = _parameters(names, seq.body.block.args, in_order)
    ins = _signature_doc(in_order, arg_types, params)
    outs = _signature_doc(out_order, out_types)
    returns = ", ".join(_docstring_text(n) for n in out_order) or "nothing"
    body, _ = _func_text(
        seq,
        indent="    ",
        doc=f"The graph outputs: {returns}.",
        names=names,
        segments_write=any(writes_in_place(f) for f in segments),
    )
    decls = _weight_decls(weights, trainable, " " * 8, formats)
    cls_doc = [f'    """{doc}', ""]
    cls_doc.append(f"    Inputs: {ins or 'none'}.")
    cls_doc.append(f"    Outputs: {outs or 'none'}.")
    if dynamic_batch:
        batched = ", ".join(_docstring_text(n) for n in dynamic_batch)
        cls_doc.append(f"    Dimension 0 of {batched} (the batch) may have any size.")
    cls_doc.append('    """')
    for f in segments:  # module-level functions the forward calls (with self as their w)
        out.append("\n\n" + _func_text(f, functions=seen)[0])
    out.append(_weight_formats_text(formats))
    out.append(f"\n\nclass {name}(torch.nn.Module):\n" + "\n".join(cls_doc) + "\n\n")
    out.append(_specs_text(in_order, arg_types, "    "))
    out.append(f"    OUTPUTS = {out_order!r}\n")
    if dynamic_batch:
        out.append(f"    DYNAMIC_BATCH = {tuple(dynamic_batch)!r}\n")
    out.append(_index_limits_text(module))
    if formats:
        out.append("    WEIGHT_FORMATS = WEIGHT_FORMATS\n")
    out.append(f"    WEIGHTS_FILE = {weights_file!r}\n\n")
    out.append("    def __init__(self):\n        super().__init__()\n")
    out.append("".join(d + "\n" for d in decls))
    out.append(_ADAPT_THREADS)
    out.append("\n" + _loader_text(bool(formats)) + "\n")
    out.append(body)
    out.append(
        '\n\nif __name__ == "__main__":\n'
        "    from ramiel.runtime.entry import main_sequential\n\n"
        f"    main_sequential({name}, __file__)\n"
    )
    return "".join(out)


def weight_formats(module: ModuleOp) -> dict[str, str]:
    """Key -> memory format name of the weights the code of ``module`` reads in a format other
    than contiguous (a ``torchpy.weight`` with ``memory_format``: the conv kernels of
    channels-last convolutions), sorted by key."""
    formats: dict[str, str] = {}
    for op in module.walk():
        if isinstance(op, tp.WeightOp) and op.memory_format is not None:
            formats.setdefault(op.key.data, _format_of(op))
    return dict(sorted(formats.items()))


def _planned_cores(module: ModuleOp) -> int | None:
    """The module attribute ``ramiel.cores`` (the cores the schedule was planned for), or
    ``None`` when it is absent.

    Raises :class:`~ramiel.errors.RamielError` for a value that is not a positive ``i64``: the
    program could not run with it (``Program.validate``)."""
    attr = get_attr(module, CORES_ATTR)
    if attr is None:
        return None
    value = attr.value.data if isinstance(attr, IntegerAttr) and attr.type == i64 else None
    if not isinstance(value, int) or value < 1:
        raise RamielError(
            f"module attribute {CORES_ATTR} must be a positive i64 (the cores the schedule was "
            f"planned for, e.g. {CORES_ATTR} = 4 : i64), got {attr}"
        )
    return value


def _weight_formats_text(formats: dict[str, str]) -> str:
    """The module-level ``WEIGHT_FORMATS`` table (empty text when there are none)."""
    if not formats:
        return ""
    items = "\n".join(f"    {k!r}: torch.{v}," for k, v in sorted(formats.items()))
    return (
        "\n\n#: Weights this code reads in a memory format other than contiguous (conv kernels\n"
        "#: of channels-last convolutions): the class's from_safetensors converts them once when\n"
        "#: it loads the weights file (whose metadata, ramiel.memory_formats, lists them too),\n"
        "#: and its buffers are made in that format, so load_state_dict keeps it; never per call.\n"
        f"WEIGHT_FORMATS = {{\n{items}\n}}\n"
    )


def _program_text(
    funcs: list[tp.FuncOp],
    chans: dict[str, dict[str, tuple[str, Attribute, str]]],
    prog: tp.ProgramOp | None,
    in_order: list[str],
    out_order: list[str],
    cores: int | None = None,
) -> str:
    funcs = [f for f in funcs if f.kind.data == "cluster"]
    cluster_names = {f.sym_name.data: f.sym_name.data.removeprefix("cluster_") for f in funcs}
    src: dict[str, str | None] = {}
    dst: dict[str, str | None] = {}
    types: dict[str, Attribute] = {}
    formats: dict[str, str] = {}
    for fname, cmap in chans.items():
        for ch, (kind, t, fmt) in cmap.items():
            (src if kind == "put" else dst)[ch] = cluster_names[fname]
            types.setdefault(ch, t)
            if fmt != "contiguous_format":
                formats[ch] = fmt
    lines = ["PROGRAM = Program(", '    name="main",', "    clusters={"]
    for f in funcs:
        lines.append(f"        {cluster_names[f.sym_name.data]!r}: {f.sym_name.data},")
    lines.append("    },")
    lines.append("    channels={")
    for ch in sorted(types, key=lambda c: (c not in dst or c not in src, c)):
        t = types[ch]
        fmt = f", memory_format=torch.{formats[ch]}" if ch in formats else ""
        lines.append(
            f"        {ch!r}: ChannelSpec(src={src.get(ch)!r}, dst={dst.get(ch)!r}, "
            f"shape={_shape_text(t)}, dtype={_dtype_text(t)}{fmt}),"
        )
    lines.append("    },")
    inputs = list(prog.inputs.data) if prog else []
    outputs = list(prog.outputs.data) if prog else []
    lines.append("    inputs={")
    for name, v in zip(in_order, inputs, strict=True):
        chs = [_text(c) for c in v.data]  # type: ignore[attr-defined]
        lines.append(f"        {name!r}: {chs!r},")
    lines.append("    },")
    lines.append("    outputs={")
    for name, v in zip(out_order, outputs, strict=True):
        lines.append(f"        {name!r}: {_text(v) or None!r},")
    lines.append("    },")
    widths = {}
    for f in funcs:
        counts = [op.count.value.data for op in f.walk() if isinstance(op, tp.SetThreadsOp)]
        if counts and max(counts) > 1:
            widths[cluster_names[f.sym_name.data]] = max(counts)
    if widths:  # the processes backend must not fork multi-threaded workers from a used parent
        lines.append(f"    max_threads={max(widths.values())},")
        # the threads backend runs the widest cluster in the caller's thread
        lines.append(f"    threads={widths!r},")
    if cores is not None:
        n = max(1, len(funcs))
        lines.append(
            f"    # planned for {cores} core(s): by default each of the {n} worker(s) runs "
            f"max(1, {cores} // {n}) = {max(1, cores // n)}"
        )
        lines.append(
            "    # intra-op thread(s) (Program.planned_threads; fewer where fewer cores are usable)"
        )
        lines.append(f"    cores={cores},")
    lines.append(")\n")
    return "\n".join(lines)


def write_weights(modules: Sequence[ModuleOp], store: WeightStore | None, path: str) -> list[str]:
    """Write every weight the ``torchpy`` modules read to one safetensors file; returns the keys.

    The tensor names are the weight keys (the buffer names of the generated classes); every tensor
    has its real shape and dtype (a splat, stored in the IR as one element, is written in full),
    so ``safetensors.torch.load_file`` gives exactly the module's ``state_dict()``. ``store``
    holds the ``dense_resource`` values (the weights of the module whose ``ramiel.weights`` file
    names them, :meth:`ramiel.weights.WeightStores.of`; ``None``: every value is inline).
    Tensors are stored contiguous; those the code reads in another memory format
    (:func:`weight_formats`) are listed in the file's metadata under
    :data:`~ramiel.runtime.weights.FORMATS_METADATA_KEY` (JSON ``{key: format}``), which
    :meth:`ramiel.runtime.Weights.from_safetensors` converts once when it loads them.

    Raises :class:`~ramiel.errors.RamielError` when the file cannot be written or a key names two
    different tensors.
    """
    from ramiel.runtime.weights import FORMATS_METADATA_KEY  # lazy: torch

    weights: dict[str, tp.WeightOp] = {}
    try:
        for m in modules:
            for key, op in module_weights(m).items():
                seen = weights.setdefault(key, op)
                if seen.result.type != op.result.type or seen.value != op.value:
                    raise ValueError(f"torchpy.weight key {key!r} names two different tensors")
    except ValueError as e:
        raise RamielError(str(e)) from None
    arrays: dict[str, np.ndarray] = {}
    for key, op in weights.items():
        arr = constant_value(op.value, store)
        if arr is None:
            raise RamielError(f"torchpy.weight {key!r}: its value is no dense or dense_resource")
        arrays[key] = arr  # a splat stays a broadcast view: written in full, never allocated
    formats: dict[str, str] = {}
    for m in modules:
        formats.update(weight_formats(m))
    meta = {FORMATS_METADATA_KEY: json.dumps(dict(sorted(formats.items())))} if formats else None
    tmp = path + ".tmp"
    try:
        save_safetensors(arrays, tmp, metadata=meta)
        os.replace(tmp, path)
    except (OSError, ValueError) as e:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise RamielError(f"cannot write weights file {path}: {e}") from None
    return list(arrays)


def print_python_file(
    path: str,
    weights_out: str | None = None,
    class_name: str | None = None,
    trainable: bool = False,
) -> str:
    """Parse the torchpy IR file ``path`` (``-`` for stdin) and print it as Python source.

    With ``weights_out``, also write the ``torchpy.weight`` values to that safetensors file; the
    generated classes load the file of that name from their own directory (``WEIGHTS_FILE``;
    without ``weights_out``: ``weights.safetensors``).
    ``class_name``: the module class (default: from the file's name, ``Model`` for stdin);
    ``trainable``: see :func:`print_python`.

    Raises :class:`~ramiel.errors.RamielError` with a one-line message for a missing file, IR
    that holds no torchpy, or a ``weights_out`` that is the file the IR reads its weights from;
    xDSL's ``ParseError`` for a syntax error and
    :class:`~ramiel.parsing.LocatedVerifyError` for IR that fails verification (both located).
    """

    name = "-" if path == "-" else os.path.basename(path)
    try:
        if path == "-":
            text = sys.stdin.read()
        else:
            if os.path.exists(path):
                input_file(path, "IR file")  # not a directory, FIFO or device like /dev/zero
            with open(path, "rb") as f:
                text = ir_text(f.read(), path)
    except FileNotFoundError:
        raise RamielError(f"{path}: no such file") from None
    except OSError as e:
        raise RamielError(f"{path}: cannot read the file ({e})") from None
    ctx = make_context(os.path.dirname(os.path.abspath(path)) if path != "-" else None)
    module = parse_module(ctx, text, path)  # ParseError, LocatedVerifyError: the
    verify_located(module)  # caller reports them at file:line:col as ramiel-opt does
    if class_name is None:
        class_name = make_class_name(os.path.splitext(name)[0] if path != "-" else "")
    return print_module_python(
        module, ctx.weights.of(module), name, weights_out, class_name, trainable
    )


def print_module_python(
    module: ModuleOp,
    store: WeightStore | None,
    source: str,
    weights_out: str | None,
    class_name: str,
    trainable: bool = False,
) -> str:
    """The Python source of the parsed ``torchpy`` module ``module`` (:func:`print_python`;
    ``source``: the IR file's name, for the docstring), and with ``weights_out`` its weights
    written there (:func:`write_weights`; ``store``: the module's weights); the classes load
    that file's name from their own directory. What ``ramiel-translate --to-python`` and
    ``ramiel-opt -t python`` print.

    Raises :class:`~ramiel.errors.RamielError` for a module that cannot be printed, or a
    ``weights_out`` that is the file the IR reads its weights from.
    """
    try:
        weights_file = os.path.basename(weights_out) if weights_out else WEIGHTS_FILE
        text = print_python(
            module, source, class_name=class_name, trainable=trainable, weights_file=weights_file
        )
    except ValueError as e:
        raise RamielError(str(e)) from None
    if weights_out is not None:
        read_from = getattr(store, "path", None)
        if read_from and os.path.realpath(read_from) == os.path.realpath(weights_out):
            raise RamielError(
                f"the weights file {weights_out} is the one the IR reads its weights from (module "
                "attribute ramiel.weights): writing the module's weights there would break the "
                "IR; name another with --weights FILE, or write the module under another name "
                "(-o NAME.py writes NAME.safetensors)"
            )
        write_weights([module], store, weights_out)
    return text


def module_weights_path(weights: str | None, output: str | None) -> str | None:
    """Where a printed module's weights go: ``weights`` (``--weights``), else beside the
    module's file ``output`` and named after it (``gen/seq.py``: ``gen/seq.safetensors``);
    ``None`` when the source goes to stdout without ``--weights``.

    Raises :class:`~ramiel.errors.RamielError` when that is ``output`` itself (``-o
    FILE.safetensors``: the source would be written over its weights; a fresh-user check)."""
    path = weights
    if weights is None and output:
        path = os.path.splitext(os.path.abspath(output))[0] + ".safetensors"
    if path is not None and output and same_file(output, path):
        raise RamielError(
            f"-o {output} is where the module's weights go ({path}): the Python source and its "
            "weights would be one file; write the source to FILE.py, or name the weights with "
            "--weights"
        )
    return path


NO_WEIGHTS_NOTE = (
    "note: no weights file written (the source went to stdout); name one with --weights FILE, "
    "or write the module with -o FILE.py (its weights: FILE.safetensors); the classes look for "
    f"{WEIGHTS_FILE} beside their module"
)
"""What the printing tools say when a module with weights went to stdout without a file."""


__all__ = [
    "WEIGHTS_FILE",
    "Names",
    "NO_WEIGHTS_NOTE",
    "make_class_name",
    "module_weights",
    "module_weights_path",
    "print_module_python",
    "print_python",
    "print_python_file",
    "statement",
    "weight_formats",
    "write_weights",
]
