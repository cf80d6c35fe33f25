"""``--help`` and ``--version`` of every command: ``ramiel`` and each of its subcommands,
``ramiel-opt`` and ``ramiel-translate``.

Each prints and exits 0; ``--version`` names Ramiel's version, then xDSL's, onnx's, onnxruntime's
and torch's (as installed); every argument has a help text, and one with a default shows it.
The tools run in-process (their ``main``), so this is fast.
"""

from __future__ import annotations

import argparse
from importlib.metadata import version

import pytest
from conftest import tool_status

from ramiel.passes import PASSES
from ramiel.tools import driver, opt, translate
from ramiel.tools.pass_help import pass_options, pass_summary

SUBCOMMANDS = sorted(driver._parser()._subparsers._group_actions[0].choices)  # type: ignore[union-attr]

COMMANDS = [
    ("ramiel", driver.main, []),
    *[("ramiel", driver.main, [cmd]) for cmd in SUBCOMMANDS],
    ("ramiel-opt", opt.main, []),
    ("ramiel-translate", translate.main, []),
]
IDS = [" ".join([tool, *sub]) for tool, _, sub in COMMANDS]


def test_every_subcommand_is_listed():
    assert {"compile", "run", "profile", "tune", "bench", "calibrate"} <= set(SUBCOMMANDS)


@pytest.mark.parametrize(("tool", "main", "sub"), COMMANDS, ids=IDS)
def test_help(tool, main, sub, capsys):
    assert tool_status(main, [*sub, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: {' '.join([tool, *sub])} ")
    assert "``" not in out and ":class:" not in out  # no reStructuredText markup


@pytest.mark.parametrize(("tool", "main", "sub"), COMMANDS, ids=IDS)
def test_version(tool, main, sub, capsys):
    assert tool_status(main, [*sub, "--version"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        f"{tool} (Ramiel) {version('ramiel')}",
        f"xdsl {version('xdsl')}",
        f"onnx {version('onnx')}",
        f"onnxruntime {version('onnxruntime')}",
        f"torch {version('torch')}",
    ]


def _opt_parser() -> argparse.ArgumentParser:
    tool = opt.RamielOptMain(args=[])
    parser = argparse.ArgumentParser()
    tool.register_all_arguments(parser)
    return parser


def _parsers() -> list[tuple[str, argparse.ArgumentParser]]:
    root = driver._parser()
    subs = root._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    return [
        ("ramiel", root),
        *[(f"ramiel {name}", p) for name, p in subs.items()],
        ("ramiel-translate", translate._parser()),
        ("ramiel-opt", _opt_parser()),
    ]


@pytest.mark.parametrize(
    ("name", "parser"), _parsers(), ids=lambda x: x if isinstance(x, str) else ""
)
def test_every_argument_has_help_and_shows_its_default(name, parser):
    help_text = parser.format_help()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            continue
        what = f"{name} {'/'.join(action.option_strings) or action.dest}"
        assert action.help and action.help.strip(), f"{what} has no help text"
        default = action.default
        if default in (None, False, [], "", argparse.SUPPRESS):
            continue
        shown = parser.formatter_class(parser.prog)._get_help_string(action) % {
            **vars(action),
            "default": default,
            "prog": parser.prog,
        }
        assert "default" in shown, f"{what}: the help does not show its default {default!r}"
    assert "(default:" in help_text or name == "ramiel"


def test_opt_help_lists_every_pass_with_summary_and_options(capsys):
    assert tool_status(opt.main, ["--help"]) == 0
    out = capsys.readouterr().out
    for name, factory in PASSES.items():
        cls = factory()
        block = out.split(f"\n  --{name}\n", 1)
        assert len(block) == 2, f"--{name} is not listed"
        summary = pass_summary(cls)
        assert summary != "(no description)", f"--{name} has no docstring summary"
        assert " ".join(block[1].split())[: len(summary)] == summary
        for option, kind, default in pass_options(cls):
            assert f"      {option}: {kind} (default: {default})" in block[1].split("\n  --")[0]


def test_opt_help_pass(capsys):
    assert tool_status(opt.main, ["--help-pass", "merge"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("--merge{clusters=N tolerance=F}: merge the clusters")
    assert "options:\n  clusters: int | None (default: none)" in out
    assert tool_status(opt.main, ["--help-pass", "nope"]) == 1
    assert "unknown pass 'nope'" in capsys.readouterr().err


MY_PASS = '''"""``--my-pass{limit=N}``: mark the first N Relus as in place, a README example.

Options: ``limit`` (default 3). It marks a Relu of a graph input too, which the onnx verifier
rejects: the error is reported at the op's file:line:col.
"""

from dataclasses import dataclass

from xdsl.dialects.builtin import IntegerAttr, IntegerType
from xdsl.passes import ModulePass


@dataclass(frozen=True)
class MyPass(ModulePass):
    """See the module docstring."""

    name = "my-pass"

    limit: int = 3

    def apply(self, ctx, op):
        relus = [o for o in op.walk() if o.name == "onnx.Relu"]
        for o in relus[: self.limit]:
            o.attributes["ramiel.inplace"] = IntegerAttr(0, IntegerType(64))
'''


def test_readme_adding_a_pass(tmp_path, monkeypatch, capsys):
    """The README's "Adding a pass": a new pass module, registered, shows in --help with its
    summary and option, runs as a flag, and an invalid result is reported at the op's line."""
    from ramiel import passes

    (tmp_path / "my_pass.py").write_text(MY_PASS)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(passes._MODULES, "my-pass", ("my_pass", "MyPass"))
    monkeypatch.setitem(passes.PASSES, "my-pass", passes._factory("my_pass", "MyPass"))

    assert tool_status(opt.main, ["--help"]) == 0
    out = capsys.readouterr().out
    assert "\n  --my-pass\n      mark the first N Relus as in place, a README example.\n" in out
    assert "\n      limit: int (default: 3)\n" in out
    assert tool_status(opt.main, ["--help-pass", "my-pass"]) == 0
    assert "options:\n  limit: int (default: 3)" in capsys.readouterr().out

    ir = tmp_path / "m.mlir"
    ir.write_text(
        "builtin.module attributes {onnx.opset = 17 : i64} {\n"
        "func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
        '  %y = "onnx.Relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>\n'
        "  func.return %y : tensor<2xf32>\n"
        "}\n"
        "}\n"
    )
    assert tool_status(opt.main, ["--my-pass{limit=1}", str(ir)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(
        f"{ir}:3:3: error: IR invalid after pass 'my-pass': onnx.Relu: ramiel.inplace: operand 0"
    ), err
    assert "Traceback" not in err
