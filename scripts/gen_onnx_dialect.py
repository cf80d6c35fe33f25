"""Generate ``dialects/onnx_ops.py``: one xDSL op class per ONNX operator, from ``onnx.defs``.

The ``onnx`` dialect has one op per operator of the default ONNX domain that Ramiel can represent
(:func:`ramiel.dialects.onnx_base.representable` in some opset), named as in onnx-mlir
(``onnx.Conv``). onnx-mlir generates its ``ONNXOps.td.inc`` from the same schemas
(``utils/gen_onnx_mlir.py``); this script writes the Python equivalent, checked in so that no
interpreter start pays for building 186 classes from the schemas, and so that an IDE or mypy sees
each op's named accessors. Each class has, as xDSL dialects are written by hand:

* ``name = "onnx.<OpType>"``, the traits (``Pure``, ``ConstantLike`` for ``onnx.Constant``;
  ``RecursiveMemoryEffect`` and ``RecursivelySpeculatable`` for the region ops; then the op's
  categories from :data:`ramiel.dialects.onnx_traits.ONNX_OP_TRAITS`, ``Elementwise()``, ...),
  one ``region_def`` per GRAPH attribute of If/Loop/Scan;
* the operands and results as one ``var_operand_def``/``var_result_def`` each: an operator's
  formal inputs change with the opset (Clip's ``min``/``max`` are attributes before opset 11 and
  inputs after, Resize gains ``roi`` at 11), and a missing optional input in the middle is a
  ``none`` operand, so one class per operator cannot fix them as IRDL definitions without
  printing an ``operandSegmentSizes`` property that ONNX IR does not have (onnx-mlir's generic
  form). The verifier (:meth:`OnnxOp.verify_`) checks them against the schema of the op's opset;
* one ``opt_prop_def(Attribute)`` per attribute name of any version of the operator (which are
  allowed, required and of which kind at the op's opset is the verifier's job);
* named accessors: a property per formal input (``op.X``, ``op.B``: the operand, ``None`` for an
  absent optional one, a tuple for a variadic one) and per formal output, resolved by name in the
  schema of the op's opset, so they are right at every opset.

A Python name that is a keyword, a member of :class:`OnnxOp` or already taken in the class gets a
trailing ``_`` (``op.input_``; Clip's attribute ``min_`` beside its input ``min``): inputs are
named first, then outputs, then attributes.

Usage::

    python scripts/gen_onnx_dialect.py            # rewrite dialects/onnx_ops.py
    python scripts/gen_onnx_dialect.py --check    # exit 1 if the checked-in module is stale

Source: ONNX operator schemas (``onnx.defs.get_all_schemas_with_history``); onnx-mlir's
``utils/gen_onnx_mlir.py`` for the approach.
"""

from __future__ import annotations

import argparse
import keyword
import os
import re
import sys
import textwrap

import onnx
import onnx.defs
from onnx.defs import OpSchema

from ramiel.dialects.onnx_base import REGION_ATTRS, OnnxOp, representable
from ramiel.dialects.onnx_traits import CATEGORIES, traits_of

TARGET = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "dialects", "onnx_ops.py"
)
"""The generated module (``ramiel.dialects.onnx_ops``)."""

_RESERVED = frozenset(dir(OnnxOp)) | {"name", "traits", "inputs_", "outputs_"}

LINE_LENGTH = 100
"""ruff's line length (pyproject.toml): the generated module is formatted as ``ruff format`` would."""


def _identifier(name: str) -> str:
    """A Python identifier for a schema name (``outputs...`` -> ``outputs``)."""
    ident = re.sub(r"\W", "_", name).strip("_") or "value"
    return f"_{ident}" if ident[0].isdigit() else ident


class _Names:
    """Python names of one class, unique and never reserved or a keyword."""

    def __init__(self, taken: set[str]) -> None:
        self.taken = set(taken)

    def get(self, schema_name: str) -> str:
        ident = _identifier(schema_name)
        while ident in self.taken or ident in _RESERVED or keyword.iskeyword(ident):
            ident += "_"
        self.taken.add(ident)
        return ident


def _formals(schemas: list[OpSchema], kind: str) -> list[tuple[str, str]]:
    """(schema name, option) of each formal input or output of any version, the newest version's
    first, then older versions' own names, newest first; the option is that of the newest
    version that has the name."""
    out: dict[str, str] = {}
    for s in sorted(schemas, key=lambda s: -s.since_version):
        for p in s.inputs if kind == "input" else s.outputs:
            if p.name not in out:
                out[p.name] = {
                    OpSchema.FormalParameterOption.Single: "single",
                    OpSchema.FormalParameterOption.Optional: "optional",
                    OpSchema.FormalParameterOption.Variadic: "variadic",
                }[p.option]
    return list(out.items())


def _accessor(kind: str, ident: str, schema_name: str, option: str) -> list[str]:
    what = "operand" if kind == "input" else "result"
    if option == "variadic":
        ret, call = "tuple[SSAValue, ...]", f'self.variadic_{kind}("{schema_name}")'
        doc = f"The {what}s of the variadic ONNX {kind} ``{schema_name}``."
    elif option == "optional" or kind == "output":
        ret, call = "SSAValue | None", f'self.{kind}("{schema_name}")'
        absent = "absent or ``none``" if kind == "input" else "not produced"
        doc = f"The {what} of the ONNX {kind} ``{schema_name}`` (``None`` if {absent})."
    else:
        ret, call = "SSAValue", f'self.required_input("{schema_name}")'
        doc = f"The {what} of the ONNX {kind} ``{schema_name}``."
    return [
        "",
        "    @property",
        f"    def {ident}(self) -> {ret}:",
        f'        """{doc}"""',
        f"        return {call}",
    ]


def _call(head: str, args: list[str], tail: str) -> list[str]:
    """``head + args + tail`` as ``ruff format`` writes it: one line if it fits, else the
    arguments on one indented line, else one per line with a trailing comma."""
    one = f"{head}{', '.join(args)}{tail}"
    if len(one) <= LINE_LENGTH:
        return [one]
    indent = " " * (len(head) - len(head.lstrip()) + 4)
    inner = f"{indent}{', '.join(args)}"
    if len(inner) <= LINE_LENGTH:
        return [head, inner, indent[4:] + tail]
    return [head, *(f"{indent}{a}," for a in args), indent[4:] + tail]


def _op_class(op_type: str, schemas: list[OpSchema]) -> list[str]:
    regions = REGION_ATTRS.get(op_type, ())
    attr_names = sorted({a for s in schemas for a in s.attributes} - set(regions))
    inputs, outputs = _formals(schemas, "input"), _formals(schemas, "output")
    names = _Names(set(regions))
    in_names = [(names.get(n), n, o) for n, o in inputs]
    out_names = [(names.get(n), n, o) for n, o in outputs]
    attr_idents = [(names.get(a), a) for a in attr_names]
    if regions:
        first = (
            f"``onnx.{op_type}``: the ONNX {op_type} operator; its graph attributes "
            f"({', '.join(regions)}) are regions ending in ``onnx.Yield`` (see verify_regions)."
        )
        traits = ["RecursiveMemoryEffect()", "RecursivelySpeculatable()"]
    else:
        first = f"``onnx.{op_type}``: the ONNX {op_type} operator (see onnx.defs schema)."
        traits = ["Pure()", "ConstantLike()"] if op_type == "Constant" else ["Pure()"]
    traits += [f"{t.__name__}()" for t in traits_of(op_type)]
    versions = ", ".join(str(v) for v in sorted({s.since_version for s in schemas}))

    def listed(items: list[tuple[str, str, str]]) -> str:
        return (
            ", ".join(f"``{n}``" + ("" if o == "single" else f" ({o})") for _, n, o in items)
            or "none"
        )

    attrs = ", ".join(f"``{a}``" for a in attr_names) or "none"
    text = (
        f"Versions (since opset): {versions}. Inputs: {listed(in_names)}. "
        f"Outputs: {listed(out_names)}. Attributes: {attrs}."
    )
    doc = [
        f'    """{first}',
        "",
        *textwrap.wrap(text, 96, initial_indent="    ", subsequent_indent="    "),
        '    """',
    ]
    lines = [
        "",
        "",
        "@irdl_op_definition",
        f"class {op_type}Op(OnnxOp):",
        *doc,
        "",
        f'    name = "onnx.{op_type}"',
        "",
    ]
    lines += ["    inputs_ = var_operand_def()", "    outputs_ = var_result_def()"]
    # in the order of REGION_ATTRS: then_branch before else_branch
    lines += [f'    {r} = region_def("single_block")' for r in regions]
    for ident, a in attr_idents:
        prop = "" if ident == a else f', prop_name="{a}"'
        lines.append(f"    {ident} = opt_prop_def(Attribute{prop})")
    lines += ["", *_call("    traits = traits_def(", traits, ")")]
    for ident, n, o in in_names:
        lines += _accessor("input", ident, n, o)
    for ident, n, o in out_names:
        lines += _accessor("output", ident, n, o)
    return lines


def generate() -> str:
    """The text of ``dialects/onnx_ops.py`` for the installed ``onnx`` package."""
    schemas: dict[str, list[OpSchema]] = {}
    for s in onnx.defs.get_all_schemas_with_history():
        if representable(s):
            schemas.setdefault(s.name, []).append(s)
    ops = sorted(schemas)
    lines = [
        f'"""The ``onnx`` dialect\'s {len(ops)} op classes, one per ONNX operator (generated: do not edit).',
        "",
        f"Written by ``scripts/gen_onnx_dialect.py`` from the operator schemas of onnx {onnx.__version__}",
        "(``onnx.defs``); ``tests/test_dialect_onnx.py`` checks that it is current. Import the dialect",
        "from :mod:`ramiel.dialects.onnx`; see :class:`~ramiel.dialects.onnx_base.OnnxOp` for the",
        "verifier and the accessors' helpers.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from xdsl.ir import Attribute, SSAValue",
        "from xdsl.irdl import (",
        "    irdl_op_definition,",
        "    opt_prop_def,",
        "    region_def,",
        "    traits_def,",
        "    var_operand_def,",
        "    var_result_def,",
        ")",
        "from xdsl.traits import ConstantLike, Pure, RecursivelySpeculatable, RecursiveMemoryEffect",
        "",
        "from ramiel.dialects.onnx_base import OnnxOp",
        *_call(
            "from ramiel.dialects.onnx_traits import (",
            sorted(t.__name__ for t in CATEGORIES),
            ")",
        ),
    ]
    for op_type in ops:
        lines += _op_class(op_type, schemas[op_type])
    lines += [
        "",
        "",
        "OPS: dict[str, type[OnnxOp]] = {",
        *(f'    "{op_type}": {op_type}Op,' for op_type in ops),
        "}",
        '"""``op_type`` -> op class, for every representable default-domain ONNX operator."""',
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the checked-in module differs")
    ap.add_argument(
        "-o", "--output", default=TARGET, help="the module to write (default: %(default)s)"
    )
    args = ap.parse_args(argv)
    text = generate()
    if args.check:
        try:
            with open(args.output, encoding="utf-8") as f:
                current = f.read()
        except FileNotFoundError:
            current = None
        if current != text:
            print(
                f"{args.output} is not what scripts/gen_onnx_dialect.py generates from onnx "
                f"{onnx.__version__}: run python scripts/gen_onnx_dialect.py",
                file=sys.stderr,
            )
            return 1
        return 0
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
