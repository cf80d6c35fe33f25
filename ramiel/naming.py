"""Python names from ONNX names: the one home of sanitising, uniquing and SSA name hints.

* :func:`name_hint`: a readable SSA name hint for an ONNX tensor name (the importer);
* :func:`sanitize`: an ASCII Python identifier, not a keyword (may still clash);
* :func:`unique`: ``base``, or ``base_1``, ``base_2``...: the first name not taken (the printer's
  local names, weight keys, channel names, ``dense_resource`` handles).

Names are never pasted raw into generated source (design notes, section 5).
"""

from __future__ import annotations

import keyword
import re

_IDENT = re.compile(r"[^A-Za-z0-9_]")
_HINT_BAD = re.compile(r"[^A-Za-z0-9_]+")
_OUTPUT_SUFFIX = re.compile(r"_output_\d+$")


def name_hint(name: str) -> str | None:
    """A readable SSA name hint for an ONNX tensor name (``None`` if nothing is left).

    PyTorch exports name tensors by module path (``/layer1/layer1.0/conv1/Conv_output_0``): the
    hint keeps the innermost scope and the op (``layer1_0_conv1_Conv``), since the full path
    mostly repeats itself. Other names are kept, with invalid characters replaced by ``_``.
    Uniqueness is the printer's job.
    """
    if "/" in name:
        parts = [p for p in name.split("/") if p]
        if parts:
            last = _OUTPUT_SUFFIX.sub("", parts[-1])
            scope = parts[-2] if len(parts) >= 2 else ""
            name = f"{scope}_{last}" if scope else last
    h = _HINT_BAD.sub("_", name).strip("_")
    if not h:
        return None
    if h[0].isdigit():
        h = "v" + h
    return h


def sanitize(name: str, fallback: str = "t") -> str:
    """An ASCII Python identifier made from ``name``: every other character becomes ``_``,
    ``fallback`` when nothing is left, ``<fallback>_`` before a leading digit, ``_`` after a
    keyword or soft keyword. Not a keyword; may still clash (see :func:`unique`)."""
    s = _IDENT.sub("_", name).strip("_") or fallback
    if s[0].isdigit():
        s = f"{fallback}_{s}"
    if keyword.iskeyword(s) or keyword.issoftkeyword(s):
        s += "_"
    return s


def unique(base: str, taken: set[str]) -> str:
    """``base``, or ``base_1``, ``base_2``...: the first name not in ``taken``, which is added
    to ``taken``."""
    name, i = base, 1
    while name in taken:
        name = f"{base}_{i}"
        i += 1
    taken.add(name)
    return name
