"""What ``ramiel-opt --help`` and ``--help-pass NAME`` say about each pass, from the pass itself.

One source of truth: a pass's summary is the first sentence of its module docstring (without
the leading ``--flag``), its options are the fields of its dataclass (name, type, default), its
full help the module docstring. Nothing here is written twice; a new pass registered in
:data:`ramiel.passes.PASSES` shows up with its summary and options.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import sys
import textwrap

from xdsl.passes import ModulePass

from ramiel.errors import RamielError
from ramiel.passes import literal_options
from ramiel.tools.common import plain

__all__ = ["pass_help", "pass_options", "pass_summary", "passes_help"]

_FLAG = re.compile(r"^``--[a-z0-9-]+(?:\{[^`]*\})?``:\s*")


def _doc(cls: type[ModulePass]) -> str:
    module = sys.modules.get(cls.__module__)
    doc = inspect.getdoc(module) if module is not None else None
    if not doc or doc.startswith("See the"):
        doc = inspect.getdoc(cls) or ""
    return doc


def pass_summary(cls: type[ModulePass]) -> str:
    """The first sentence of the pass's module docstring, without its ``--flag:`` lead."""
    first = _doc(cls).split("\n\n", 1)[0]
    first = " ".join(_FLAG.sub("", first.strip()).split())
    m = re.search(r"(?<!e\.g)(?<!i\.e)\.(\s|$)", first)
    sentence = first[: m.start() + 1] if m else first
    return plain(sentence) or "(no description)"


def pass_options(cls: type[ModulePass]) -> list[tuple[str, str, str]]:
    """``(name, type, default)`` of every option of the pass (its dataclass fields), in order;
    ``default`` is ``required`` for an option without one."""
    options = []
    choices = literal_options(cls) if dataclasses.is_dataclass(cls) else {}
    for f in dataclasses.fields(cls) if dataclasses.is_dataclass(cls) else ():
        if f.name.startswith("_") or not f.init:
            continue
        kind = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
        if f.name in choices:  # Literal["a", "b"]: the values a user may give
            kind = "|".join(map(str, choices[f.name]))
        if f.default is not dataclasses.MISSING:
            default = _show(f.default)
        elif f.default_factory is not dataclasses.MISSING:
            default = _show(f.default_factory())
        else:
            default = "required"
        options.append((f.name, kind, default))
    return options


def _show(value: object) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


def _load(name: str, factory) -> type[ModulePass]:  # type: ignore[no-untyped-def]
    try:
        return factory()
    except Exception as e:  # a registered pass that fails to import: say which
        raise RamielError(f"pass '{name}' cannot be loaded: {type(e).__name__}: {e}") from None


def passes_help(passes: dict) -> str:  # type: ignore[type-arg]
    """The ``--help`` section: every pass flag with its summary, then its options."""
    lines = ["passes (run in command-line order; options as --pass{k=v k2=v2} or -p 'pass{k=v}'):"]
    for name in sorted(passes):
        cls = _load(name, passes[name])
        lines.append(f"  --{name}")
        lines += textwrap.wrap(
            pass_summary(cls), 100, initial_indent=" " * 6, subsequent_indent=" " * 6
        )
        for opt, kind, default in pass_options(cls):
            lines.append(f"      {opt}: {kind} (default: {default})")
    lines.append("see 'ramiel-opt --help-pass NAME' for a pass's whole description")
    return "\n".join(lines)


def pass_help(name: str, passes: dict) -> str:  # type: ignore[type-arg]
    """``--help-pass NAME``: the pass's flag, options and whole module docstring."""
    if name not in passes:
        raise RamielError(f"unknown pass '{name}' (available: {', '.join(sorted(passes))})")
    cls = _load(name, passes[name])
    lines = [plain(_doc(cls))]
    options = pass_options(cls)
    lines += ["", "options:" if options else "options: none"]
    lines += [f"  {opt}: {kind} (default: {default})" for opt, kind, default in options]
    return "\n".join(lines)
