"""``--verify-diagnostics``: check the diagnostics of a chunk against its ``expected-*`` comments.

The semantics are MLIR's (``mlir/lib/IR/Diagnostics.cpp``, ``SourceMgrDiagnosticVerifierHandler``;
https://mlir.llvm.org/docs/Diagnostics/#sourcemgr-diagnostic-verifier-handler)::

    %y = "onnx.Relu"(%x, %x) : ... // expected-error {{expects 1 operands}}
    // expected-error @+1 {{expects 1 operands}}          the next line (@-N: N lines above)
    // expected-error @below {{...}}                      the next line without an expected-*
    // expected-error @above {{...}}                      the last line without an expected-*
    // expected-error @unknown {{...}}                    a diagnostic without a location
    // expected-error-re {{operand {{[0-9]+}} is none}}   {{...}} inside the text: a regex

Kinds are ``error``, ``warning``, ``note`` and ``remark`` (MLIR's); Ramiel emits errors and
notes at the IR level, no warnings or remarks (the warnings ``--linear-cluster`` and
``--estimate-cost`` print are about the whole run and carry no location), so an
``expected-warning`` is always reported as not produced. The text between the outer ``{{`` and
the last ``}}`` of the line must be a substring of the diagnostic's message (no regex unless
``-re``). Every expectation must be matched by exactly one diagnostic on its line, of its kind,
and every diagnostic must be expected: otherwise the check fails, with one located line per
problem (:func:`check`), as MLIR writes them::

    invalid.mlir:8:4: error: expected error "expects 2 operands" was not produced
    invalid.mlir:11:3: error: unexpected error: onnx.Relu expects 1 operands at opset 17 ...

With ``--split-input-file`` every ``// -----`` chunk is checked alone (an expectation only
matches a diagnostic of its own chunk). A malformed ``expected-*`` comment (no ``{{...}}``, a
designator that is not ``@+N``, ``@-N``, ``@above``, ``@below`` or ``@unknown``, a bad regex) is
itself an error, never silently ignored; a comment that only mentions ``expected-error`` in its
text (not at its start, without ``{{...}}``) is not a directive.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = [
    "KINDS",
    "Diagnostic",
    "Expectation",
    "check",
    "parse_expectations",
]

#: Diagnostic kinds, as MLIR names them.
KINDS = ("error", "warning", "note", "remark")

_DIRECTIVE = re.compile(r"expected-(?P<kind>error|warning|note|remark)(?P<re>-re)?(?![\w-])")
_DESIGNATOR = re.compile(r"\s*(?:@(?P<at>[+-]\d+|above|below|unknown|\S*))?\s*")
_TEXT = re.compile(r"\{\{(?P<text>.*)\}\}")


def _designator_end(line: str, pos: int) -> int:
    """Where the (optional) ``@...`` designator after a directive at ``pos`` ends."""
    d = _DESIGNATOR.match(line, pos)  # it matches the empty string too
    return d.end() if d is not None else pos


@dataclass
class Diagnostic:
    """A diagnostic a chunk produced: ``kind`` (:data:`KINDS`), ``message``, and its location
    (``line``/``col`` one-based in the whole input; ``None`` for a diagnostic without one)."""

    kind: str
    message: str
    file: str | None = None
    line: int | None = None
    col: int | None = None

    def location(self) -> str | None:
        if self.line is None:
            return None
        return f"{self.file}:{self.line}:{self.col or 1}"


@dataclass
class Expectation:
    """One ``expected-<kind>`` comment: the diagnostic it asks for and where it was written.

    ``line`` is the line the diagnostic must be located on (``None``: ``@unknown``);
    ``at_line``/``at_col`` the position of the comment itself, for messages about it.
    """

    kind: str
    text: str
    pattern: re.Pattern[str] | None
    line: int | None
    at_line: int
    at_col: int
    matched: bool = field(default=False, compare=False)

    def matches(self, diag: Diagnostic) -> bool:
        if self.pattern is not None:
            return self.pattern.search(diag.message) is not None
        return self.text in diag.message


def _regex(text: str) -> re.Pattern[str]:
    """MLIR's ``-re`` text: literal, except ``{{regex}}`` pieces."""
    parts = re.split(r"\{\{(.*?)\}\}", text)
    source = "".join(re.escape(p) if i % 2 == 0 else f"(?:{p})" for i, p in enumerate(parts))
    return re.compile(source)


def parse_expectations(
    text: str, file: str, first_line: int = 1
) -> tuple[list[Expectation], list[str]]:
    """The ``expected-*`` comments of ``text`` (one chunk; its first line is ``first_line`` of
    ``file``). Returns ``(expectations, errors)``: ``errors`` are located lines for malformed
    comments."""
    expectations: list[Expectation] = []
    errors: list[str] = []
    below: list[Expectation] = []
    last_plain: int | None = None
    for index, line in enumerate(text.split("\n")):
        lineno = first_line + index
        found = False
        for m in _DIRECTIVE.finditer(line):
            if not _in_comment(line, m.start()):
                continue
            if not _TEXT.match(line, _designator_end(line, m.end())) and not re.search(
                r"//\s*$", line[: m.start()]
            ):
                continue  # prose that mentions expected-error, not a directive
            found = True
            col = m.start() + 1
            where = f"{file}:{lineno}:{col}"
            kind = m.group("kind")
            rest = line[m.end() :]
            d = _DESIGNATOR.match(rest)
            at = d.group("at") if d else None
            body = _TEXT.match(rest, d.end() if d else 0)
            if body is None:
                errors.append(f"{where}: error: expected-{kind} without its {{{{message}}}}")
                continue
            target: int | None = lineno
            if at is not None:
                if re.fullmatch(r"[+-]\d+", at):
                    target = lineno + int(at)
                elif at == "above":
                    if last_plain is None:
                        errors.append(f"{where}: error: @above but no line above to apply to")
                        continue
                    target = last_plain
                elif at == "unknown":
                    target = None
                elif at != "below":
                    errors.append(
                        f"{where}: error: unknown designator '@{at}' "
                        "(@+N, @-N, @above, @below, @unknown)"
                    )
                    continue
            raw = body.group("text")
            try:
                pattern = _regex(raw) if m.group("re") else None
            except re.error as e:
                errors.append(f"{where}: error: bad regex in expected-{kind}-re: {e}")
                continue
            exp = Expectation(kind, raw, pattern, target, lineno, col)
            expectations.append(exp)
            if at == "below":
                below.append(exp)
        if not found:
            last_plain = lineno
            for exp in below:
                exp.line = lineno
            below.clear()
    for exp in below:
        errors.append(
            f"{file}:{exp.at_line}:{exp.at_col}: error: @below but no line below to apply to"
        )
        expectations.remove(exp)
    return expectations, errors


def _in_comment(line: str, pos: int) -> bool:
    """Whether ``pos`` of ``line`` is inside a ``//`` comment (not in a string before it)."""
    in_string = False
    i = 0
    while i < pos:
        c = line[i]
        if in_string:
            if c == "\\":
                i += 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif line.startswith("//", i):
            return True
        i += 1
    return False


def check(expectations: list[Expectation], produced: list[Diagnostic], file: str) -> list[str]:
    """Match ``produced`` diagnostics against ``expectations`` (MLIR's rules, module docstring).

    Returns the located error lines of every mismatch, diagnostics first, in order: an
    unexpected diagnostic, one of another kind than expected on its line, an expectation that
    no diagnostic met. Empty when everything matched.
    """
    errors: list[str] = []
    for diag in produced:
        candidates = [
            e for e in expectations if not e.matched and e.line == diag.line and e.matches(diag)
        ]
        same_kind = [e for e in candidates if e.kind == diag.kind]
        where = diag.location() or file
        if same_kind:
            same_kind[0].matched = True
        elif candidates:
            candidates[0].matched = True
            errors.append(
                f"{where}: error: '{diag.kind}' diagnostic emitted when expecting a "
                f"'{candidates[0].kind}'"
            )
        else:
            errors.append(f"{where}: error: unexpected {diag.kind}: {diag.message}")
    for e in expectations:
        if not e.matched:
            errors.append(
                f'{file}:{e.at_line}:{e.at_col}: error: expected {e.kind} "{e.text}" was not '
                "produced"
            )
    return errors
