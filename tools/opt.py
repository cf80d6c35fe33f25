"""``ramiel-opt``: parse Ramiel IR, run passes, print the result (like ``mlir-opt``/``xdsl-opt``).

Passes run in command-line order; each registered pass has its own flag, with options in braces or
after ``=``::

    ramiel-opt --constant-fold --dce model.mlir
    ramiel-opt --linear-cluster --merge{clusters=2} model.mlir -o clustered.mlir
    ramiel-opt -p 'constant-fold,dce,merge{clusters=2}' -        # read stdin

Other flags: ``-o FILE``, ``--print-ir-after-all`` (IR after every pass, on stderr),
``--verify-diagnostics``, ``--split-input-file`` and the rest of xDSL's ``xdsl-opt`` flags.
Errors (syntax errors with file:line:col, verifier failures, pass failures) are printed as
``error: ...`` on stderr with exit status 1, never as a traceback.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Sequence

from ramiel.dialects.registry import register_dialects
from ramiel.passes import PASSES
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException
from xdsl.xdsl_opt_main import xDSLOptMain

from ramiel.errors import RamielError
from ramiel.weights import set_ir_base_dir

_PASS_FLAG = re.compile(r"^--([a-z][a-z0-9-]*)(?:\{(.*)\}|=(.*))?$")


def split_pass_flags(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """Separate per-pass flags (``--dce``, ``--merge{clusters=2}``, ``--merge=clusters=2``).

    Returns ``(pipeline elements in order, remaining argv)``; ``-p`` pipelines are appended to the
    elements where they appear.
    """
    elements: list[str] = []
    rest: list[str] = []
    it = iter(range(len(argv)))
    for i in it:
        arg = argv[i]
        m = _PASS_FLAG.match(arg)
        if m and m.group(1) in PASSES:
            opts = m.group(2) if m.group(2) is not None else m.group(3)
            elements.append(m.group(1) + (f"{{{opts.replace(',', ' ')}}}" if opts else ""))
        elif arg in ("-p", "--passes") and i + 1 < len(argv):
            elements.append(argv[i + 1])
            next(it, None)
        elif arg.startswith("--passes="):
            elements.append(arg.split("=", 1)[1])
        else:
            rest.append(arg)
    return [e for e in elements if e], rest


class RamielOptMain(xDSLOptMain):
    """xDSL's optimiser driver with Ramiel's dialects and passes only."""

    def register_all_dialects(self) -> None:
        register_dialects(self.ctx)

    def register_all_passes(self) -> None:
        for name, factory in PASSES.items():
            self.register_pass(name, factory)

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument(
            "--print-ir-after-all",
            action="store_true",
            help="print the IR after every pass (to stderr)",
        )

    def setup_pipeline(self) -> None:
        def callback(prev: ModulePass | None, module: ModuleOp, nxt: ModulePass | None) -> None:
            if prev is None:
                return
            try:
                module.verify()
            except VerifyException as e:
                raise VerifyException(f"IR invalid after pass '{prev.name}': {e}") from e
            if self.args.print_ir_after_all:
                print(f"// -----// IR Dump After {prev.name} //----- //", file=sys.stderr)
                Printer(stream=sys.stderr).print_op(module)
                print(file=sys.stderr)

        self.pipeline = PassPipeline.parse_spec(self.available_passes, self.args.passes, callback)

    def parse_chunk(self, chunk, file_extension, start_offset=0):  # type: ignore[no-untyped-def]
        module = super().parse_chunk(chunk, file_extension, start_offset)
        if module is not None and not self.args.verify_diagnostics:
            module.verify()
        return module


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``ramiel-opt``; returns the exit status."""
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    argv = list(sys.argv[1:] if argv is None else argv)
    elements, rest = split_pass_flags(argv)
    if elements:
        rest = ["-p", ",".join(elements), *rest]
    rest = [a for a in rest if a != "-"]  # '-' means stdin, xDSL's default
    try:
        tool = RamielOptMain(description="Ramiel optimiser: run passes on Ramiel IR", args=rest)
        if tool.args.input_file:
            set_ir_base_dir(os.path.dirname(os.path.abspath(tool.args.input_file)))
            if not os.path.exists(tool.args.input_file):
                raise RamielError(f"{tool.args.input_file}: no such file")
        tool.run()
    except ParseError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except (VerifyException, DiagnosticException, RamielError) as e:
        print(f"error: {_one_line(e)}", file=sys.stderr)
        return 1
    except ValueError as e:  # unknown pass names, bad options
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


def _one_line(e: Exception) -> str:
    text = str(e).strip()
    return text


if __name__ == "__main__":
    sys.exit(main())
