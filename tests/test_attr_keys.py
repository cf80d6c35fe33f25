"""IR attribute keys are read and written only through :mod:`ramiel.attrs` (issue #16): no module
of the package spells a key as a literal, and none indexes, gets, pops or tests an op's
``attributes`` with one of the keys; they call ``get_*``/``set_*``/``has``/``remove`` instead."""

from __future__ import annotations

import ast
import os

from xdsl.dialects.builtin import TensorType, f32

import ramiel.attrs as attrs
from ramiel.dialects.onnx import create

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: Key constant name -> key, as ramiel.attrs defines them (``*_ATTR`` and ``ONNX_NAME``).
KEYS: dict[str, str] = {
    name: value
    for name, value in vars(attrs).items()
    if isinstance(value, str) and (name.endswith("_ATTR") or name == "ONNX_NAME")
}


def _is_key(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return node.value in KEYS.values()
    if isinstance(node, ast.Name):
        return node.id in KEYS
    if isinstance(node, ast.Attribute):  # attrs.COST_ATTR, onnx_d.OPSET_ATTR
        return node.attr in KEYS
    return False


def _is_attributes(node: ast.AST) -> bool:
    """``<expr>.attributes`` (an op's discardable attribute dictionary)."""
    return isinstance(node, ast.Attribute) and node.attr == "attributes"


def violations(source: str) -> list[tuple[int, str]]:
    """``(line, what)`` for every literal key and every direct key access of ``attributes`` in
    ``source``."""
    out: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and node.value in KEYS.values():
            out.append((node.lineno, f"the literal key {node.value!r}"))
        elif isinstance(node, ast.Subscript) and _is_attributes(node.value) and _is_key(node.slice):
            out.append((node.lineno, "attributes[<key>]"))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and _is_attributes(node.func.value)
            and node.args
            and _is_key(node.args[0])
        ):
            out.append((node.lineno, f"attributes.{node.func.attr}(<key>)"))
        elif (
            isinstance(node, ast.Compare)
            and _is_key(node.left)
            and any(isinstance(o, ast.In | ast.NotIn) for o in node.ops)
            and any(_is_attributes(c) for c in node.comparators)
        ):
            out.append((node.lineno, "<key> in attributes"))
        elif isinstance(node, ast.Dict) and any(
            k is not None and _is_key(k) for k in node.keys
        ):  # attributes={NODE_NAME_ATTR: ...}, a dictionary attribute built by hand
            out.append((node.lineno, "a dictionary keyed by an attribute key"))
    return sorted(out)


def _package_files() -> list[str]:
    out = []
    for top in ("ramiel", "dialects", "passes", "tools"):
        for dirpath, _, names in os.walk(os.path.join(ROOT, top)):
            out += [os.path.join(dirpath, n) for n in names if n.endswith(".py")]
    return sorted(out)


def test_attribute_keys_only_through_ramiel_attrs() -> None:
    bad = []
    own = os.path.join(ROOT, "ramiel", "attrs.py")
    files = _package_files()
    assert own in files and len(files) > 50
    for path in files:
        if path == own:
            continue
        with open(path) as f:
            found = violations(f.read())
        bad += [f"{os.path.relpath(path, ROOT)}:{line}: {what}" for line, what in found]
    assert not bad, "use the getters/setters of ramiel.attrs:\n" + "\n".join(bad)


def test_the_check_finds_each_kind_of_direct_access() -> None:
    """The check above is not vacuous: each way of reaching past ramiel.attrs is reported."""
    source = """
op.attributes["ramiel.threads"] = x
a = op.attributes.get(COST_ATTR)
op.attributes.pop(attrs.THREADS_ATTR, None)
if WEIGHTS_ATTR in module.attributes: pass
if OPSET_ATTR not in o.attributes: pass
del op.attributes[INPLACE_ATTR]
d = {NODE_NAME_ATTR: name}
ok = info.attributes.get(name)  # an ONNX schema's attributes, keyed by ONNX attribute names
set_int(op, THREADS_ATTR, 2)
"""
    found = violations(source)
    assert [line for line, _ in found] == [2, 2, 3, 4, 5, 6, 7, 8], found
    assert set(found[:2]) == {(2, "attributes[<key>]"), (2, "the literal key 'ramiel.threads'")}


def test_the_getters_and_setters_round_trip() -> None:
    """Each typed setter writes what its getter reads back; a missing key or another type reads
    as ``None``."""
    op = create("Relu", [], [TensorType(f32, [1])], {}, None)
    attrs.set_int(op, attrs.THREADS_ATTR, 3)
    attrs.set_float(op, attrs.COST_ATTR, 1.5)
    attrs.set_str(op, attrs.LAYOUT_ATTR, "channels_last")
    attrs.set_ints(op, attrs.BYTES_ATTR, [4, 8])
    attrs.set_floats(op, attrs.TRANSFER_COST_ATTR, [100.0, 0.25])
    assert attrs.get_int(op, attrs.THREADS_ATTR) == 3
    assert attrs.get_float(op, attrs.COST_ATTR) == 1.5
    assert attrs.get_str(op, attrs.LAYOUT_ATTR) == "channels_last"
    assert attrs.get_ints(op, attrs.BYTES_ATTR) == [4, 8]
    assert attrs.get_floats(op, attrs.TRANSFER_COST_ATTR) == [100.0, 0.25]
    assert attrs.get_int(op, attrs.COST_ATTR) is None  # a float is not an integer
    assert attrs.get_floats(op, attrs.BYTES_ATTR) is None  # integers are not floats
    assert attrs.has(op, attrs.THREADS_ATTR)
    attrs.remove(op, attrs.THREADS_ATTR)
    attrs.remove(op, attrs.THREADS_ATTR)  # removing a missing key is no error
    assert not attrs.has(op, attrs.THREADS_ATTR) and attrs.get_int(op, attrs.THREADS_ATTR) is None
    assert attrs.get_str(op, attrs.NODE_NAME_ATTR) is None
    create_named = create("Relu", [], [TensorType(f32, [1])], {}, "n1")
    assert attrs.get_str(create_named, attrs.NODE_NAME_ATTR) == "n1"
