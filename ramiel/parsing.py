"""Parsing and verifying Ramiel IR text with source locations.

xDSL's parser does not attach source locations to the ops it builds, so a verifier error cannot
say where the bad op is. :class:`LocatedParser` records where each op starts and gives it a
``loc("file":line:col)`` location (``FileLineColLoc``, the MLIR convention; an explicit ``loc(...)``
in the text wins). :func:`verify_located` verifies a module op by op and turns the first failure
into a :class:`LocatedVerifyError` that reads ``file:line:col: error: reason``.

The parser also fixes six things of xDSL 0.74's parser that Ramiel's IR runs into:

* a string literal that does not end (a backslash before a newline) hung the lexer, whose
  pattern backtracks exponentially: Ramiel's fails in linear time with xDSL's error;
* IR nested deeper than Python's recursion limit (thousands of brackets) raised
  ``RecursionError``: it is a ``ParseError`` at the position reached;

* a splat literal (``dense<2.0e-02> : tensor<4096x25088xf32>``, a folded ConstantOfShape weight)
  keeps one stored element, as :func:`ramiel.weights.dense_from_numpy` builds it; xDSL expands
  it to every element (hundreds of megabytes for a VGG weight);
* a hexadecimal element of a floating-point ``dense`` literal (``dense<0xFF800000> :
  tensor<4xf32>``, how xDSL prints -inf, NaN and floats such as 1000001.0) is the element's bit
  pattern, as in MLIR; xDSL reads it as an integer value (-inf became 4286578688.0);
* ``dense_resource<key>`` handles stay as written: they name tensors of the module's external
  weights file (:mod:`ramiel.weights`); xDSL renames a key its context has seen before
  (``conv1_w`` -> ``conv1_w_0``), which breaks the second parse of a file in one process;
* the type constraint xDSL rebuilds for every ``dense<...>`` literal is built once (it was half
  of the parse time of a model with a thousand constants).
"""

from __future__ import annotations

import bisect
import io
import math
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    BytesAttr,
    ComplexType,
    DenseIntOrFPElementsAttr,
    FileLineColLoc,
    IndexType,
    IntAttr,
    IntegerType,
    ModuleOp,
    RankedStructure,
    StringAttr,
    UnknownLoc,
)
from xdsl.ir import Block, Operation
from xdsl.irdl import base
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import ParseError, VerifyException
from xdsl.utils.lexer import Span
from xdsl.utils.mlir_lexer import MLIRTokenKind

from ramiel.errors import RamielError
from ramiel.files import shell_quote

__all__ = [
    "IncrementalVerifier",
    "LocatedOpError",
    "LocatedParser",
    "LocatedVerifyError",
    "location_of",
    "parse_module",
    "verify_located",
]


class _HexFloatElement(Parser._TensorLiteralElement):
    """A hexadecimal tensor-literal element: for a float type, the bits of the value."""

    def to_type(self, parser, type):  # type: ignore[no-untyped-def]
        if isinstance(type, AnyFloat) and isinstance(self.value, int):
            size = type.compile_time_size
            return type.unpack(self.value.to_bytes(size, "little"), 1)[0]
        return super().to_type(parser, type)


_DENSE_LITERAL_TYPE = base(RankedStructure[IntegerType | IndexType | AnyFloat | ComplexType])

#: xDSL's string-literal pattern with possessive quantifiers: the same language, but a string
#: that does not end (``"abc`` followed by a backslash and a newline) fails in linear time;
#: xDSL's ``(?:[^"\\]+|...)*`` backtracks exponentially and hung on it.
_STRING_LITERAL = re.compile(r'"(?:[^"\\\n\v\f]++|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*+"')


class LocatedParser(Parser):
    """An xDSL :class:`~xdsl.parser.Parser` that gives every op its ``file:line:col``.

    ``line_offset`` is added to line numbers (the first line of a ``--split-input-file`` chunk).
    Locations are attached when :meth:`parse_module` returns.
    """

    def __init__(self, ctx: Context, input: str | bytes, name: str = "<unknown>", line_offset=0):
        super().__init__(ctx, input, name)
        self._name = name
        self._line_offset = line_offset
        self._starts: list[tuple[Operation, int]] = []
        self._first_use: dict[str, Span] = {}  # a value used before (or without) its definition
        self.lexer._unescaped_characters_regex = _STRING_LITERAL  # type: ignore[attr-defined]

    def resolve_operand(self, operand, type):  # type: ignore[no-untyped-def]
        name = operand.operand_name
        if name not in self.ssa_values:
            self._first_use.setdefault(name, operand.span)
        return super().resolve_operand(operand, type)

    def parse_operation(self) -> Operation:
        start = self._current_token.span.start
        op = super().parse_operation()
        self._starts.append((op, start))
        return op

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        try:
            module = super().parse_module(allow_implicit_module)
        except RecursionError:
            token = self._current_token.span
            raise ParseError(
                Span(token.start, token.end, token.input),
                "the IR nests too deeply to parse (more levels of brackets or regions than "
                f"Python's recursion limit of {sys.getrecursionlimit()} frames allows)",
            ) from None
        except ParseError as e:
            # xDSL reports values used but never defined at the end of the input: at the
            # first such use instead
            undefined = [n for n in self.forward_ssa_references if n in self._first_use]
            if not undefined or "values used but not defined" not in str(e):
                raise
            names = ", ".join(f"%{n}" for n in undefined)
            first = min((self._first_use[n] for n in undefined), key=lambda sp: sp.start)
            raise ParseError(
                first,
                f"value(s) used but never defined: {names} (in this region or one that "
                "encloses it)",
            ) from None
        except (ValueError, VerifyException) as e:
            # xDSL's attribute constructors reject values that parse but do not fit (an
            # integer out of its type's range...) with ValueError or VerifyException while
            # parsing: a syntax error located at the last token read
            token = self._current_token.span
            reason = str(e.args[0] if e.args else e)
            raise ParseError(Span(token.start, token.end, token.input), reason) from None
        self._attach_locations()
        return module

    def _attach_locations(self) -> None:
        text = self.lexer.input.content
        line_starts = [0]
        pos = text.find("\n")
        while pos >= 0:
            line_starts.append(pos + 1)
            pos = text.find("\n", pos + 1)
        filename = StringAttr(self._name)
        for op, start in self._starts:
            if not isinstance(op.location, UnknownLoc):
                continue
            line = bisect.bisect_right(line_starts, start) - 1
            col = start - line_starts[line] + 1
            op.location = FileLineColLoc(
                filename, IntAttr(line + 1 + self._line_offset), IntAttr(col)
            )
        self._starts.clear()

    def parse_dense_int_or_fp_elements_attr(self, type):  # type: ignore[no-untyped-def]
        start = self._current_token.span.start
        try:
            return self._parse_dense(type, start)
        except ValueError as e:  # an element out of its type's range: xDSL raises ValueError
            end = self._current_token.span.start
            raise ParseError(Span(start, end, self.lexer.input), str(e)) from None

    def _parse_dense(self, type, start: int):  # type: ignore[no-untyped-def]
        # A splat `dense<scalar> : type` keeps one stored element; other forms go to xDSL.
        self.parse_punctuation("<", " in dense attribute")
        if self._current_token.kind in (
            MLIRTokenKind.L_SQUARE,
            MLIRTokenKind.GREATER,
            MLIRTokenKind.STRING_LIT,
        ):
            self._resume_from(start)
            return super().parse_dense_int_or_fp_elements_attr(type)
        element = self._parse_tensor_literal_element()
        self.parse_punctuation(">", " in dense attribute")
        if type is None:
            self.parse_punctuation(":", " in dense attribute")
            type = self._parse_dense_literal_type()
        el = type.element_type
        value = element.to_type(self, el)
        if isinstance(el, IntegerType):
            value = el.get_normalized_value(value)
        data = el.pack([value]) if math.prod(type.get_shape()) != 0 else b""
        return DenseIntOrFPElementsAttr(type, BytesAttr(data))

    def _parse_tensor_literal_element(self):  # type: ignore[no-untyped-def]
        el = super()._parse_tensor_literal_element()
        if type(el.value) is int and not el.is_negative and el.span.text.lower().startswith("0x"):
            return _HexFloatElement(el.is_negative, el.value, el.span)
        return el

    def _parse_dialect_resource_handle(self, dialect_name, interface):  # type: ignore[no-untyped-def]
        key = self.parse_identifier(" for resource handle")
        interface._blob_storage.setdefault(key, "")  # declared, for a {-# dialect_resources #-}
        self.dialect_resources.add((dialect_name, key))
        return key

    def _parse_dense_literal_type(self):  # type: ignore[no-untyped-def]
        # Same checks as xDSL's, with the type constraint built once instead of per literal.
        type = self.expect(self.parse_optional_type, "Dense attribute must be typed!")
        if not _DENSE_LITERAL_TYPE.verifies(type):
            self.raise_error(
                "Expected memref, vector or tensor type of integer, index, float, or complex type"
            )
        if any(dim == DYNAMIC_INDEX for dim in type.get_shape()):  # type: ignore[attr-defined]
            self.raise_error("Dense literal attribute should have a static shape.")
        return type


def parse_module(ctx: Context, text: str | bytes, name: str = "<unknown>") -> ModuleOp:
    """Parse Ramiel IR text into a module whose ops carry ``file:line:col`` locations.

    Raises :class:`xdsl.utils.exceptions.ParseError` (its ``str`` shows file:line:col and the
    offending line) on a syntax error. Does not verify: see :func:`verify_located`.
    """
    return LocatedParser(ctx, text, name).parse_module()


def location_of(op: Operation) -> str | None:
    """``file:line:col`` of ``op`` if it has a file location (ops built by passes have none)."""
    loc = op.location
    if isinstance(loc, FileLineColLoc):
        return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}"
    return None


@dataclass
class LocatedVerifyError(VerifyException):
    """A verifier failure at ``op``.

    ``str()`` is the MLIR-style diagnostic line ``file:line:col: error: reason`` (``error:
    reason`` when the op has no file location); :meth:`diagnostic` adds the op's text.
    """

    reason: str
    op: Operation | None = None

    def __post_init__(self) -> None:
        super().__init__(self.reason)

    @property
    def location(self) -> str | None:
        return location_of(self.op) if self.op is not None else None

    def __str__(self) -> str:
        where = self.location
        return f"{where}: error: {self.reason}" if where else f"error: {self.reason}"

    def diagnostic(self) -> str:
        """The error line, then the first line of the failing op's text (indented)."""
        if self.op is None:
            return str(self)
        try:
            buf = io.StringIO()
            Printer(stream=buf).print_op(self.op)
            text = buf.getvalue().splitlines()[0].strip()
        except Exception:  # an op too broken to print: the error line alone says enough
            return str(self)
        if len(text) > 200:
            text = text[:197] + "..."
        return f"{self}\n    {text}"


class LocatedOpError(LocatedVerifyError, RamielError):
    """An error a pass finds at ``op`` (not a verifier failure): ``ramiel-opt`` reports it at the
    op's ``file:line:col`` like an invalid op; elsewhere it is a :class:`RamielError`."""


_PREFIX = "Operation does not verify: "


def _enclosing_blocks(op: Operation) -> set[Block]:
    blocks: set[Block] = set()
    block = op.parent_block()
    while block is not None:
        blocks.add(block)
        parent = block.parent_op()
        block = parent.parent_block() if parent is not None else None
    return blocks


def _verify_defined_before(op: Operation, order: dict[Operation, int]) -> None:
    if not op.operands:
        return
    enclosing: set[Block] | None = None
    for v in op.operands:
        owner = v.owner
        block = owner if isinstance(owner, Block) else owner.parent_block()
        if enclosing is None:
            enclosing = _enclosing_blocks(op)
        name = f"%{v.name_hint}" if v.name_hint else "a value"
        if block not in enclosing:
            raise LocatedVerifyError(
                f"{op.name} uses {name}, which is defined in a region that does not enclose it",
                op,
            )
        if isinstance(owner, Operation) and order.get(owner, -1) >= order[op]:
            raise LocatedVerifyError(f"{op.name} uses {name} before the op that defines it", op)


def verify_located(module: Operation) -> None:
    """Verify ``module`` and every op inside it, in textual order (an op before the ops nested in
    it); raise :class:`LocatedVerifyError` on the first failure, located at the failing op.

    Besides each op's own verifier, every operand must be defined before its use, in the same
    block or an enclosing one (MLIR's dominance rule for single-block regions, which xDSL does
    not check: swapping two ops in the text gave Python that reads a name before assigning it).
    """
    IncrementalVerifier().verify(module)


def _verify_op(op: Operation) -> None:
    try:
        op.verify(verify_nested_ops=False)
    except LocatedVerifyError as e:  # a module-level rule that names the op at fault
        raise LocatedVerifyError(e.reason, e.op or op) from None
    except VerifyException as e:
        reason = str(e.args[0] if e.args else e)
        reason = reason.removeprefix(_PREFIX)
        raise LocatedVerifyError(reason, op) from None


def _fingerprint(op: Operation) -> tuple[object, ...]:
    """What an op's own verifier reads of it, by identity: where it sits, its operands, result
    types, attributes and properties, successors, and for an op with regions the ops and
    argument types of its blocks. Attributes are immutable in xDSL, so an op whose fingerprint
    holds the same objects has not changed; the tuple keeps them alive (no reused ``id``)."""
    parts: list[object] = [op.parent, len(op.operands), *op.operands, len(op.results)]
    parts += [r.type for r in op.results]
    parts += op.attributes.keys()
    parts += op.attributes.values()
    parts.append(len(op.properties))
    parts += op.properties.keys()
    parts += op.properties.values()
    parts.append(len(op.successors))
    parts += op.successors
    for region in op.regions:
        for block in region.blocks:
            parts.append(block)
            parts += [a.type for a in block.args]
            parts += block.ops
        parts.append(None)
    return tuple(parts)


def _same(a: tuple[object, ...], b: tuple[object, ...]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


class IncrementalVerifier:
    """:func:`verify_located` for a module that passes rewrite one after another: the first
    :meth:`verify` checks every op; each later one checks the ops that are new or changed since
    (:func:`_fingerprint`) and those whose verifier may read them: the ops that enclose them,
    define their operands, or use the same values or their results (an in-place claim, for one,
    holds only while its operand has no other use). The defined-before rule is checked for every
    op each time (it is cheap). On light_densenet121 (1,500 ops after the clean-up) checking
    every op after each of the compile's 22 passes was 0.97 s of its 2.08 s compile; most
    clean-up passes change none or a few ops (the clustering passes move them all), and the
    compile took 1.72 s with this.

    :meth:`verify_all` checks every op again (the end of a pipeline), so that a rule reading
    further than that is still enforced, only less precisely located to a pass."""

    def __init__(self) -> None:
        self._seen: dict[Operation, tuple[object, ...]] = {}
        self._full = True  # whether the last check covered every op

    def after_pass(self, module: Operation, name: str) -> None:
        """:meth:`verify` after the pass ``name``; a failure's reason starts ``IR invalid after
        pass '<name>'``."""
        try:
            self._full = self.verify(module)
        except LocatedVerifyError as e:
            e.reason = f"IR invalid after pass '{name}': {e.reason}"
            e.args = (e.reason,)
            raise

    def after_pipeline(self, module: Operation, names: Sequence[str]) -> None:
        """After the last of the passes ``names``: every op again, unless the last check
        covered them all; a failure's reason starts ``IR invalid after the passes '<a>', ...``
        (a rule that reads further than an op's neighbours, found only now)."""
        if self._full:
            return
        try:
            self.verify_all(module)
        except LocatedVerifyError as e:
            listed = ", ".join(f"'{n}'" for n in names)
            e.reason = f"IR invalid after the passes {listed}: {e.reason}"
            e.args = (e.reason,)
            raise

    def verify(self, module: Operation) -> bool:
        """Verify ``module`` as :func:`verify_located` does, skipping the ops no pass touched
        since the last call. Returns whether every op was checked. Raises
        :class:`LocatedVerifyError` at the first invalid op in textual order."""
        ops = list(module.walk())
        order = {op: i for i, op in enumerate(ops)}
        fresh: dict[Operation, tuple[object, ...]] = {}
        dirty: set[Operation] = set()
        for op in ops:
            fp = _fingerprint(op)
            fresh[op] = fp
            old = self._seen.get(op)
            if old is not None and _same(old, fp):
                continue
            dirty.add(op)
            parent = op.parent_op()
            while parent is not None:
                dirty.add(parent)
                parent = parent.parent_op()
            for v in (*op.operands, *op.results):
                if isinstance(v.owner, Operation):
                    dirty.add(v.owner)
                dirty.update(use.operation for use in v.uses)
        full = len(dirty) >= len(ops)
        for op in ops:
            _verify_defined_before(op, order)
            if op in dirty:
                _verify_op(op)
        self._seen = fresh  # only once all of it verified: a failed op stays to be checked
        return full

    def verify_all(self, module: Operation) -> None:
        """Verify every op of ``module`` (:func:`verify_located`), and remember them."""
        self._seen = {}
        self._full = self.verify(module)


_COMMENT = re.compile(r"//[^\n]*")


def ir_text(data: bytes, name: str) -> str:
    """The IR text of an input file's bytes (``name``: the file, for messages). Text with
    nothing but blanks and ``//`` comments is an empty module, as for mlir-opt. Raises
    :class:`~ramiel.errors.RamielError` for bytes that are no UTF-8 text, naming an ONNX model
    as one (judged by the content, not the file name: ``x.onnx`` holding IR text is IR)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    # a small model's protobuf can be valid UTF-8 (a Relu of three ASCII names: found by a
    # fresh-user check, "Unexpected character"), but IR text has no control characters
    if (text is None or _CONTROL.search(text)) and _is_onnx_model(data):
        raise RamielError(
            f"{name}: an ONNX model, not IR; import it first: "
            f"ramiel-translate --import-onnx {shell_quote(name)}"
        ) from None
    if text is None:
        raise RamielError(
            f"{name}: not IR text (not UTF-8; an ONNX model must be imported "
            "with ramiel-translate --import-onnx)"
        ) from None
    if not _COMMENT.sub("", text).strip():
        return "builtin.module {\n}\n"
    return text


_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f]")


def _is_onnx_model(data: bytes) -> bool:
    """Whether ``data`` is a serialized ONNX ``ModelProto`` with a graph."""
    import onnx  # lazy: onnx (only to name a binary input)
    from google.protobuf.message import DecodeError  # lazy: protobuf, with onnx

    try:
        model = onnx.ModelProto.FromString(data)
    except (DecodeError, ValueError, RuntimeError):
        return False
    return model.HasField("graph") and model.ir_version > 0
