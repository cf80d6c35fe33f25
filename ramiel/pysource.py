"""What the ``torchpy`` verifier proves about the Python the printer will write.

The printer pastes three kinds of text from the IR into Python source: literal arguments
(``"(2, 2)"``, ``"..., ::-1"``, ``"torch.float32"``), dotted callee names (``F.conv2d``) and
method names (``x.reshape``). The rule is that what the verifiers accept prints to Python that
parses *and runs*, so each piece is checked where the printer will put it:

* :func:`literal_problem`: a literal is exactly one expression in argument position
  (``f(<literal>)`` parses as a call with one positional argument: no stray comma, bracket,
  keyword or starred argument), or, for the index of a subscript, exactly one subscript
  (``x[<literal>]``); it yields nothing, awaits nothing and binds no name (``yield`` would turn the
  function into a generator, ``:=`` could clobber a local); every name it uses is one the
  generated module defines (``torch``, ``F``, ``ops``, ``operator``, ``math``, Python's builtins,
  the ``$N`` operands), and every ``torch.x.y`` chain in it exists.
* :func:`callee_problem`: a callee resolves in the generated module's namespace (the same
  namespace as :data:`ramiel.lowering.eval_emitter.NAMESPACE`).
* :func:`tensor_type_problem`: a tensor type the generated code sizes or allocates is static,
  non-negative, of an element type torch has, and at most :data:`~ramiel.errors.MAX_TENSOR_BYTES`.

Names are answered from :mod:`ramiel.torch_names` (generated from the installed torch by
``scripts/gen_torch_names.py``) while the installed torch is the version that table was written
for: checking IR does not import torch, which costs an interpreter start 2-3 s. A name outside
the table, or another torch, is resolved by importing torch (once, lazily).
"""

from __future__ import annotations

import ast
import builtins
import functools
import importlib
import importlib.util
import os
import re
from typing import Any

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute

from ramiel import torch_names
from ramiel.dtypes import numpy_dtype_of
from ramiel.errors import MAX_TENSOR_BYTES

__all__ = [
    "GENERATED_NAMES",
    "MODULE_NAMESPACE",
    "callee_problem",
    "literal_problem",
    "tensor_type_problem",
]

#: Module-level names of the generated code (import aliases, runtime classes, tables); a
#: generated function must not take one of them (nor a builtin's name, nor a dunder), nor the
#: class (``--class-name adapt_threads`` had replaced model_seq.py's import of that name, and
#: the module failed on its first line: a fresh-user check).
GENERATED_NAMES = frozenset(
    {"torch", "F", "ops", "operator", "math", "Path", "ch", "w", "self", "Program", "ChannelSpec",
     "ParallelModel", "INPUTS", "OUTPUTS", "PROGRAM", "WEIGHT_FORMATS", "forward", "np", "segment",
     "adapt_threads", "ramiel"}
)  # fmt: skip

#: What a dotted name of generated code starts with -> the module it names.
MODULE_NAMESPACE = {
    "torch": "torch",
    "F": "torch.nn.functional",
    "ops": "ramiel.runtime.ops",
    "operator": "operator",
    "math": "math",
}

_PLACEHOLDER = re.compile(r"\$(\d+)")
_FORBIDDEN = (ast.Yield, ast.YieldFrom, ast.Await, ast.NamedExpr)


def _substituted(text: str) -> str:
    return _PLACEHOLDER.sub(lambda m: f"_{m.group(1)}", text)


def literal_problem(text: str, n_operands: int, subscript: bool = False) -> str | None:
    """Why ``text`` cannot be printed as an argument (or, with ``subscript``, as the index of a
    subscript), or ``None`` when it can (see the module docstring)."""
    for m in _PLACEHOLDER.finditer(text):
        if int(m.group(1)) >= n_operands:
            return f"placeholder ${m.group(1)} out of range in {text!r}"
    code = _substituted(text)
    try:
        tree = ast.parse(f"_t[{code}]" if subscript else f"_f({code})", mode="eval")
    except SyntaxError:
        return f"literal argument {text!r} is not a Python expression"
    body = tree.body
    if subscript:
        if not (isinstance(body, ast.Subscript) and isinstance(body.value, ast.Name)):
            return f"literal index {text!r} is not one subscript"
        parts = [body.slice]
    else:
        if not (
            isinstance(body, ast.Call)
            and isinstance(body.func, ast.Name)
            and body.func.id == "_f"
            and len(body.args) == 1
            and not body.keywords
            and not isinstance(body.args[0], ast.Starred)
        ):
            return f"literal argument {text!r} is not exactly one expression"
        parts = [body.args[0]]
    placeholders = {f"_{i}" for i in range(n_operands)}
    for part in parts:
        for node in ast.walk(part):
            if isinstance(node, _FORBIDDEN):
                return f"literal argument {text!r} may not use {type(node).__name__}"
            if isinstance(node, ast.Name) and not _defined(node.id, placeholders):
                return (
                    f"literal argument {text!r} uses {node.id!r}, which the generated module "
                    "does not define"
                )
            if isinstance(node, ast.Attribute):
                dotted = _dotted(node)
                if dotted is not None and dotted.split(".")[0] in MODULE_NAMESPACE:
                    problem = _resolve(dotted)
                    if problem:
                        return f"literal argument {text!r}: {problem}"
    return None


def _defined(name: str, placeholders: set[str]) -> bool:
    return name in placeholders or name in MODULE_NAMESPACE or hasattr(builtins, name)


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def callee_problem(callee: str) -> str | None:
    """Why the dotted ``callee`` does not name something callable in the generated module's
    namespace, or ``None``."""
    head = callee.split(".")[0]
    if head not in MODULE_NAMESPACE:
        if "." not in callee and callable(getattr(builtins, callee, None)):
            return None
        return (
            f"callee {callee!r} is not in the generated module's namespace "
            f"({', '.join(MODULE_NAMESPACE)} or a builtin)"
        )
    return _resolve(callee, callable_=True)


@functools.lru_cache(maxsize=4096)
def _resolve(dotted: str, callable_: bool = False) -> str | None:
    head, *rest = dotted.split(".")
    if head in torch_names.HEADS and _table_applies():
        if dotted in torch_names.CALLABLE:
            return None
        if dotted in torch_names.NOT_CALLABLE:
            return f"{dotted!r} is not callable" if callable_ else None
    try:
        obj: Any = importlib.import_module(MODULE_NAMESPACE[head])
    except ImportError as e:  # pragma: no cover - torch is a dependency
        return f"cannot import {MODULE_NAMESPACE[head]} ({e})"
    for i, part in enumerate(rest):
        if not hasattr(obj, part):
            where = ".".join([head, *rest[:i]])
            return f"{dotted!r} does not exist ({where} has no attribute {part!r})"
        obj = getattr(obj, part)
    if callable_ and not callable(obj):
        return f"{dotted!r} is not callable"
    return None


@functools.lru_cache(maxsize=1024)
def method_problem(method: str) -> str | None:
    """Why ``method`` is not a method of ``torch.Tensor``, or ``None``."""
    if _table_applies() and method in torch_names.TENSOR_METHODS:
        return None
    import torch  # lazy: torch

    if not callable(getattr(torch.Tensor, method, None)):
        return f"torch.Tensor has no method {method!r}"
    return None


_TORCH_VERSION = re.compile(r"""^__version__\s*(?::\s*str\s*)?=\s*['"]([^'"]+)['"]""", re.M)


@functools.lru_cache(maxsize=1)
def _table_applies() -> bool:
    """The installed torch is the one :mod:`ramiel.torch_names` was generated from, read from
    ``torch/version.py`` without importing torch (the point of the table); if that cannot be
    read, names are resolved by importing torch."""
    try:
        spec = importlib.util.find_spec("torch")
        if spec is None or spec.origin is None:
            return False
        with open(os.path.join(os.path.dirname(spec.origin), "version.py")) as f:
            m = _TORCH_VERSION.search(f.read())
    except (OSError, ImportError, ValueError):
        return False
    return m is not None and m.group(1) == torch_names.TORCH_VERSION


def tensor_type_problem(t: Attribute, *, dynamic_ok: bool = False) -> str | None:
    """Why the generated code cannot hold a tensor of type ``t`` (a dynamic or negative
    dimension, an element type torch lacks, more than MAX_TENSOR_BYTES), or ``None``; types
    that are not tensor types are not checked.

    ``dynamic_ok``: a dynamic dimension is allowed (a value the code computes but never sizes
    a buffer by, e.g. inside a loop body whose carried value grows); the element type and the
    size of the static dimensions are still checked. Channel types are never ``dynamic_ok``:
    their buffers are allocated at start-up."""
    if not isinstance(t, TensorType):
        return None

    shape = list(t.get_shape())
    if dynamic_ok:
        shape = [d for d in shape if d >= 0]
    if any(d < 0 for d in shape):
        dims = "x".join("?" if d < 0 else str(d) for d in shape)
        return (
            f"the tensor type {t} has a dynamic or negative dimension ({dims}): shapes are static"
        )
    size = _element_size(t.element_type)
    if size is None:
        return f"the element type {t.element_type} of {t} has no torch dtype"
    numel = 1
    for d in shape:
        numel *= d
    if numel * size > MAX_TENSOR_BYTES:
        return (
            f"the tensor type {t} takes {numel * size} bytes, more than any machine can hold "
            f"({MAX_TENSOR_BYTES})"
        )
    return None


TORCH_DTYPE_NAMES = frozenset(
    {
        "float16",
        "bfloat16",
        "float32",
        "float64",
        "bool",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "float8_e4m3fn",
        "float8_e4m3fnuz",
        "float8_e5m2",
        "float8_e5m2fnuz",
        "float8_e8m0fnu",
    }
)
"""Names of the torch dtypes (``torch.<name>``) the printer writes for tensor element types,
spelled as numpy (and ml_dtypes) spell them; a torch dtype's element size equals the numpy
dtype's of the same name. Written out rather than read from torch so that checking IR does not
import torch (``tests/test_pysource.py`` compares the table with torch)."""


@functools.lru_cache(maxsize=256)
def _element_size(el: Attribute) -> int | None:
    """Bytes of one element of the torch dtype the printer writes for ``el`` (``None``: none)."""
    try:
        dtype = numpy_dtype_of(el)
    except Exception:  # noqa: BLE001 - an element type the onnx dialect has no dtype for
        return None
    return dtype.itemsize if dtype.name in TORCH_DTYPE_NAMES else None
