"""``ramiel-opt``: parse Ramiel IR, run passes, print the result (like ``mlir-opt``/``xdsl-opt``).

Passes run in command-line order; each registered pass has its own flag, with options in braces or
after ``=``::

    ramiel-opt --constant-fold --dce model.mlir
    ramiel-opt --linear-cluster --merge{clusters=2} model.mlir -o clustered.mlir
    ramiel-opt -p 'constant-fold,dce,merge{clusters=2}' -        # read stdin

Other flags: ``-o FILE``, ``--print-ir-after-all`` (IR after every pass, on stderr),
``--split-input-file`` (process each ``// -----`` chunk alone), ``--verify-diagnostics`` (check
the diagnostics against the input's ``// expected-error {{...}}`` comments with MLIR's semantics,
:mod:`ramiel.tools.verify_diagnostics`: exit status 1 on a missing, extra or different one) and
the rest of xDSL's ``xdsl-opt`` flags.

Weights a pass adds (``--constant-fold`` folds large constant results into new weights) are
written beside the output with the module's other weights, or to ``--weights FILE``
(:func:`save_new_weights`; with the IR on stdout ``--weights`` is required for them); the input
weights file is never modified.

Errors are one line on stderr and exit status 1, never a traceback. An IR syntax error or an op
that fails verification is reported at its position, MLIR-style, with the offending line::

    model.mlir:3:5: error: onnx.Relu expects 1 operands at opset 17 (since version 14), got 2
        %y = "onnx.Relu"(%x, %x) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
        ^

Other errors (unknown pass or option, missing file, a pass that fails) read ``error: <reason>``.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import math
import os
import re
import sys
import time
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import IO, NoReturn

from xdsl.dialects.builtin import DenseResourceAttr, FileLineColLoc, ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.printer import Printer
from xdsl.utils.arg_spec import ArgSpec, parse_pipeline
from xdsl.utils.exceptions import (
    ArgSpecParseError,
    DiagnosticException,
    MultipleSpansParseError,
    ParseError,
)
from xdsl.xdsl_opt_main import xDSLOptMain

from ramiel.attrs import WEIGHTS_ATTR, get_str, set_str
from ramiel.context import RamielContext
from ramiel.dialects.registry import register_dialects
from ramiel.errors import RamielError
from ramiel.files import input_file, output_file, same_file, write_text
from ramiel.parsing import (
    IncrementalVerifier,
    LocatedParser,
    LocatedVerifyError,
    ir_text,
)
from ramiel.passes import PASSES
from ramiel.pipeline import DEFAULT_PIPELINE
from ramiel.printer import (
    NO_WEIGHTS_NOTE,
    module_weights,
    module_weights_path,
    print_module_python,
)
from ramiel.tools.common import (
    GIVEN_ONCE,
    HelpFormatter,
    add_version,
    one_line,
    run_command,
    store_once,
)
from ramiel.tools.pass_help import pass_help, passes_help
from ramiel.tools.verify_diagnostics import Diagnostic, check, parse_expectations
from ramiel.weights import WeightStore

__all__ = ["RamielOptMain", "format_parse_error", "main", "split_pass_flags"]

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
            quoted = _quote_options(opts, f"--{m.group(1)}") if opts else ""
            elements.append(m.group(1) + (f"{{{quoted}}}" if quoted else ""))
        elif arg in ("-p", "--passes") and i + 1 < len(argv):
            elements.append(_bare_booleans(argv[i + 1]))
            next(it, None)
        elif arg.startswith("--passes="):
            elements.append(_bare_booleans(arg.split("=", 1)[1]))
        elif arg == "--pass-pipeline" and i + 1 < len(argv):
            elements.append(_bare_booleans(flatten_pipeline(argv[i + 1], argv[i + 1])))
            next(it, None)
        elif arg.startswith("--pass-pipeline="):
            flat = flatten_pipeline(arg.split("=", 1)[1], arg.split("=", 1)[1])
            elements.append(_bare_booleans(flat))
        else:
            rest.append(arg)
    return [e for e in elements if e], rest


#: Op anchors of a textual MLIR pipeline that Ramiel accepts: its passes run on the whole module.
PIPELINE_ANCHORS = ("builtin.module", "func.func")


def flatten_pipeline(spec: str, whole: str | None = None) -> str:
    """A pipeline as MLIR writes it (``builtin.module(func.func(dce),merge{clusters=2})``) as
    Ramiel's flat ``-p`` list (``dce,merge{clusters=2}``).

    Ramiel's passes are module passes that work on ``@main`` whatever they are nested in, so a
    ``builtin.module(...)`` or ``func.func(...)`` anchor only groups them; passes run in textual
    order. Raises :class:`RamielError` for another anchor or unbalanced brackets.
    """
    whole = spec if whole is None else whole
    out: list[str] = []
    for item in _split_top(spec, whole):
        m = re.fullmatch(r"\s*([A-Za-z_][\w$.]*)\s*\((.*)\)\s*", item, re.S)
        if m:
            if m.group(1) not in PIPELINE_ANCHORS:
                raise _UsageError(
                    f"bad pass pipeline '{whole}': anchor '{m.group(1)}' "
                    f"(Ramiel's passes nest in {' or '.join(PIPELINE_ANCHORS)})"
                )
            inner = flatten_pipeline(m.group(2), whole)
            if inner:
                out.append(inner)
        elif item.strip():
            out.append(item.strip())
    return ",".join(out)


def _split_top(text: str, spec: str) -> list[str]:
    """``text`` split at the commas outside brackets and quotes."""
    items, depth, start, quote = [], 0, 0, False
    for i, c in enumerate(text):
        if quote:
            quote = c != '"'
        elif c == '"':
            quote = True
        elif c in "({":
            depth += 1
        elif c in ")}":
            depth -= 1
            if depth < 0:
                break
        elif c == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    if depth != 0 or quote:
        raise _UsageError(f"bad pass pipeline '{spec}': unbalanced brackets or quotes")
    items.append(text[start:])
    return items


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_OPTION = re.compile(rf"({_IDENT.pattern})(?:=(\"[^\"]*\"|[^\s,]*))?")
# what xDSL's lexer reads bare; any other number (1e-2, -1e-2, .5, +2) is quoted and read back as
# a number for a number option (_numbers_from_text)
_BARE = re.compile(r"^(-?\d+(\.\d*)?|-?\d+\.\d*[eE][-+]?\d+|true|false|[A-Za-z_][A-Za-z0-9_]*)$")
_TOKEN = re.compile(r'(?:[^\s,"]|"[^"]*")+')


_WORD = re.compile(r'(?:[^\s"]|"[^"]*")+')


def _bare_word(word: str) -> str:
    """One option of a pass's braces in ``-p``: a bare name is ``name=true``; a number xDSL's
    lexer does not read (``-1e-2``: "malformed pass arguments"; ``.5``: "unknown token") is
    quoted, and read back as a number for a number option (:func:`_numbers_from_text`)."""
    if _IDENT.fullmatch(word):
        return word + "=true"
    key, eq, value = word.partition("=")
    if eq and _NUMBER_TEXT.fullmatch(value) and not _BARE.match(value):
        return f'{key}="{value}"'
    return word


def _bare_booleans(pipeline: str) -> str:
    """``pipeline`` (xDSL's syntax, ``-p``) with every bare option name inside a pass's braces
    written ``name=true`` (``merge{clusters=2 intra-op}``: MLIR's convention, as the per-pass
    flags take it; xDSL's parser had said ``Incompatible types: given (), expected <class
    'bool'>``). Options are separated by spaces there; a comma inside braces separates the
    items of a list value, as in MLIR, and is left as it is."""

    def fix(m: re.Match[str]) -> str:
        # 'clusters = 2' is one option (it had become 'clusters=true =2'; helper-23)
        words = _WORD.findall(re.sub(r'\s*=\s*(?=(?:[^"]*"[^"]*")*[^"]*$)', "=", m.group(1)))
        return "{" + " ".join(_bare_word(w) for w in words) + "}"

    return re.sub(r"\{([^{}]*)\}", fix, pipeline)


def _quote_options(opts: str, flag: str = "") -> str:
    """The pass options of a flag (``k=v`` or a bare ``k``, separated by spaces or commas) in
    xDSL's pipeline syntax, path-like values quoted, a bare option name ``k=true``.

    ``--estimate-cost{profile=db.json}`` becomes ``estimate-cost{profile="db.json"}``: xDSL's
    pipeline syntax only takes numbers, booleans, identifiers and quoted strings bare. A bare
    name is a boolean option set (``--merge{intra-op}``: MLIR's convention); it had been
    dropped, so the option kept its default without a word. An option the pass does not have
    is the pass's error, and a token that is no option at all is a usage error here.
    """
    items = []
    for token in _TOKEN.findall(opts):
        m = _OPTION.fullmatch(token)
        if m is None:
            raise _UsageError(
                f"bad option '{token}' in {flag or 'the pass'}{{{opts}}}: expected name=value "
                "or the name of a boolean option"
            )
        key, value = m.group(1), m.group(2)
        if value is None:
            value = "true"
        elif value and not value.startswith('"') and not _BARE.match(value):
            value = '"' + value + '"'
        items.append(f"{key}={value}")
    return " ".join(items)


class _UsageError(RamielError):
    """A command-line error (unknown flag, bad pipeline)."""


def _pipeline_syntax_error(spec: str, e: ArgSpecParseError) -> _UsageError:
    """One line for xDSL's multi-line ArgSpecParseError (a BaseException, so it escapes
    ``except Exception``): the column and the reason, plus a hint for unquoted option values."""
    lines = [ln for ln in str(e).splitlines() if ln.strip()]
    reason = lines[-1].strip() if lines else "syntax error"
    col = re.search(r":\d+:(\d+)$", lines[1].strip()) if len(lines) > 1 else None
    where = f" at column {col.group(1)}" if col else ""
    hint = ""
    if reason == "Unknown token" and "(" in spec:
        hint = (
            " (-p takes a flat list such as 'constant-fold,dce'; the nested MLIR form "
            "'builtin.module(...)' is --pass-pipeline's)"
        )
    elif reason == "Unknown token" and "{" in spec:
        hint = ' (quote option values that hold characters such as . or /: profile="a.json")'
    return _UsageError(f"bad pass pipeline '{spec}': {reason[:1].lower()}{reason[1:]}{where}{hint}")


_TYPE_NAMES = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}


def _fits(value: object, kind: type) -> bool:
    """Whether an option value as xDSL parsed it is of ``kind``: a boolean only of ``bool``,
    an integer, and a finite number written as xDSL does not read it (``1e-2``, ``.5``:
    :func:`_numbers_from_text`), also of ``float``."""
    if isinstance(value, bool):
        return kind is bool
    if kind is float and isinstance(value, str):  # 1e-2, read as a string by xDSL
        return _NUMBER_TEXT.fullmatch(value) is not None and math.isfinite(float(value))
    if kind is float and isinstance(value, float):
        return math.isfinite(value)  # 1.0e400 is inf
    return isinstance(value, kind) or (kind is float and isinstance(value, int))


def _option_type_error(available: Mapping[str, Callable[[], type]], spec: str) -> str | None:
    """Which pass option of ``spec`` has a value of the wrong type, as ``merge: option
    'onednn-graph' takes true or false, not maybe`` (xDSL says only ``Incompatible types: given
    ('maybe',), expected <class 'bool'>``); ``None`` where no option's value is of the wrong
    type (the error is another one)."""
    for item in parse_pipeline(spec):
        if item.name not in available:
            continue
        cls = available[item.name]()
        hints = typing.get_type_hints(cls)
        for name, given in item.normalize_parameter_names().parameters.items():
            types = typing.get_args(hints.get(name)) or (hints.get(name),)
            wanted = [t for t in types if t in _TYPE_NAMES]
            if float in wanted:  # a number: an integer is one too
                wanted = [t for t in wanted if t is not int]
            if not wanted or len(given) != 1:
                continue
            value = given[0]
            if not any(_fits(value, t) for t in wanted):
                kinds = " or ".join(_TYPE_NAMES[t] for t in wanted)
                shown = str(value).lower() if isinstance(value, bool) else value
                if isinstance(value, str) and re.fullmatch(r"-?[\d.eE+-]+|true|false", value):
                    shown = f'"{value}"'  # a quoted number is a string ('not 2' read oddly)
                if float in wanted and (
                    _NUMBER_TEXT.fullmatch(str(value)) or isinstance(value, float)
                ):
                    kinds, shown = "a finite number", value  # 1e400, 1.0e400: inf
                return f"{item.name}: option '{name.replace('_', '-')}' takes {kinds}, not {shown}"
    return None


_I64 = (-(1 << 63), (1 << 63) - 1)
_NUMBER_TEXT = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


def _numbers_from_text(
    available: Mapping[str, Callable[[], type]], specs: Iterable[ArgSpec]
) -> list[ArgSpec]:
    """``specs`` with a number that xDSL's lexer does not read as one, given to a number
    option, as that number: ``1e-2`` (xDSL: the string ``"1e-2"``; ``1.0e-2`` is a number),
    ``-1e-2`` (xDSL: a syntax error; the per-pass flags quote it), ``.5``, ``+2``. MLIR's
    options (``llvm::cl::opt<double>``) take them all (a user's ``1e-2`` had been refused:
    "takes a number, not "1e-2"", and ``-1e-2`` had been "malformed pass arguments").
    :func:`_option_type_error` has refused a value that is not a finite number before."""
    out = []
    for item in specs:
        if item.name not in available:
            out.append(item)
            continue
        hints = typing.get_type_hints(available[item.name]())
        params = dict(item.normalize_parameter_names().parameters)
        for name, given in params.items():
            types = typing.get_args(hints.get(name)) or (hints.get(name),)
            value = given[0] if len(given) == 1 else None
            if float in types and isinstance(value, str) and _NUMBER_TEXT.fullmatch(value):
                params[name] = (float(value),)
        out.append(ArgSpec(item.name, params))
    return out


def _option_problem(available: Mapping[str, Callable[[], type]], spec: str) -> str | None:
    """What is wrong with the pass options of ``spec`` (xDSL's flat syntax) that xDSL would
    report in its own words or not at all, as one phrase naming the pass and the option:

    - an option the pass does not have: ``merge: no option 'bogus'; its options are clusters,
      tolerance, ...`` (xDSL: ``Provided arguments ["bogus"] not found in expected arguments``,
      with the options' Python names);
    - an option given twice, ``merge{clusters=2 clusters=3}`` (xDSL kept the last silently);
    - an option without a value, ``clusters=`` (xDSL: ``unknown argument value, wrap argument
      in quotes``);
    - an integer out of the range of a 64-bit integer (xDSL's message named neither the pass nor
      the option);
    - a value of the wrong type (:func:`_option_type_error`; ``true`` for an integer option had
      been taken as 1).

    ``None``: nothing of these (a syntax error or an unknown pass is reported elsewhere).
    """
    try:
        items = _split_top(spec, spec)
    except RamielError:
        return None
    for item in items:
        m = re.fullmatch(r"\s*([A-Za-z_][\w.-]*)\s*(?:\{(.*)\})?\s*", item, re.S)
        if m is None or m.group(1) not in available or m.group(2) is None:
            continue
        name = m.group(1)
        cls = available[name]()
        fields = [f.name for f in dataclasses.fields(cls)] if dataclasses.is_dataclass(cls) else []
        seen: set[str] = set()
        for word in _WORD.findall(m.group(2)):
            key, eq, value = word.partition("=")
            norm = key.replace("-", "_")
            shown = key.replace("_", "-")
            if dataclasses.is_dataclass(cls) and norm not in fields:
                options = ", ".join(f.replace("_", "-") for f in fields)
                its = f"its options are {options}" if fields else "it takes none"
                return f"{name}: no option '{key}'; {its}"
            if norm in seen:
                return f"{name}: option '{shown}' given twice"
            seen.add(norm)
            if eq and not value:
                return f"{name}: option '{shown}' has no value"
            if re.fullmatch(r"-?\d+", value) and not _I64[0] <= int(value) <= _I64[1]:
                return f"{name}: option '{shown}' takes a 64-bit integer, not {value}"
    try:
        return _option_type_error(available, spec)
    except (ArgSpecParseError, ValueError, TypeError):
        return None


def _usage_error(message: str) -> NoReturn:
    flag = re.search(r"unrecognized arguments: (--[a-z][a-z0-9-]*)", message)
    if flag:
        message += f" (not an option nor a pass; passes: {', '.join(sorted(PASSES))})"
    raise _UsageError(message)


class RamielOptMain(xDSLOptMain):
    """xDSL's optimiser driver with Ramiel's dialects, passes, located errors and fast parser."""

    ctx: RamielContext

    def register_all_dialects(self) -> None:
        # xDSL's __init__ has just made a plain Context: Ramiel's owns the weight stores too
        # (its weights_dir is set from the input file in _opt, before anything is read)
        self.ctx = RamielContext()
        register_dialects(self.ctx)

    def register_all_passes(self) -> None:
        for name, factory in PASSES.items():
            self.register_pass(name, factory)

    def register_all_targets(self) -> None:
        # Only the targets that work on Ramiel IR: xDSL's others (llvm, riscv-asm, wgsl, ...)
        # expect their own dialects and end in an internal error or print nothing.
        super().register_all_targets()
        self.available_targets = {
            "mlir": self.available_targets["mlir"],
            "python": self._emit_python,
        }

    def _emit_python(self, module: ModuleOp, output: IO[str]) -> None:
        """``-t python``: torchpy IR as Python source, as ``ramiel-translate --to-python``: the
        module's weights go to ``--weights FILE``, else beside ``-o``'s file and named after it
        (``gen/seq.py``: ``gen/seq.safetensors``), the name the classes load from their own
        directory (``WEIGHTS_FILE``); on stdout a note says none was written."""
        if not any(op.name.startswith("torchpy.") for op in module.walk()):
            raise RamielError(
                "-t python prints torchpy IR; this module holds none (run --lower-to-torchpy)"
            )
        if self.args.split_input_file:
            raise RamielError(
                "-t python writes one Python module (and its weights file); with "
                "--split-input-file the chunks' modules would be joined by '// -----' lines, "
                "which is not Python: run each chunk alone"
            )
        weights = module_weights_path(self.args.weights, self.args.output_file)
        if weights is not None:
            output_file(weights, "weights file")
        source = print_module_python(
            module,
            self.ctx.weights.of(module),
            os.path.basename(self.get_input_name()),
            weights,
            class_name="Model",
        )
        if weights is None and module_weights(module):
            print(NO_WEIGHTS_NOTE, file=sys.stderr)
        output.write(source)

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        # Ramiel's own list (not xdsl-opt's): only what Ramiel supports, each with its help.
        p = arg_parser
        # '-o a -o b' is an error, as in mlir-opt (-p pipelines add up: split_pass_flags)
        store_once(p)
        p.prog = "ramiel-opt"
        p.formatter_class = _Formatter
        p.epilog = _EPILOG
        p.add_argument(
            "input_file",
            nargs="?",
            help="IR file to read ('-' or none: stdin)",
        )
        p.add_argument("-o", "--output-file", help="write the result here (default: stdout)")
        p.add_argument(
            "-p",
            "--passes",
            default="",
            metavar="PIPELINE",
            help="comma-separated passes to run, e.g. 'constant-fold,dce,merge{clusters=2}' "
            "(mixes with the per-pass flags, in command-line order)",
        )
        p.add_argument(
            "--pass-pipeline",
            metavar="PIPELINE",
            help="the pipeline as MLIR writes it, e.g. 'builtin.module(func.func(dce),"
            "merge{clusters=2})': the same as -p (Ramiel's passes run on the whole module)",
        )
        p.add_argument(
            "--weights",
            metavar="FILE",
            help="where the weights go when a pass adds some (--constant-fold): default beside "
            "-o's file, named after it (out.mlir: out.safetensors); required for that with the "
            "IR on stdout",
        )
        p.add_argument(
            "-t",
            "--target",
            default="mlir",
            choices=list(self.available_targets),
            help="output format: mlir (the IR) or python (torchpy IR as Python source, as "
            "ramiel-translate --to-python)",
        )
        p.add_argument(
            "--split-input-file",
            action="store_true",
            help="process each chunk between '// -----' lines alone (errors keep the line "
            "numbers of the whole file)",
        )
        p.add_argument(
            "--verify-diagnostics",
            action="store_true",
            help="check the diagnostics against the input's '// expected-error {{...}}' "
            "comments (MLIR's rules); exit status 1 on a missing, extra or different one",
        )
        p.add_argument(
            "--print-ir-before",
            metavar="PASS[,PASS...]",
            type=_pass_list,
            default=[],
            help="print the IR before these passes (to stderr)",
        )
        p.add_argument(
            "--print-ir-after",
            metavar="PASS[,PASS...]",
            type=_pass_list,
            default=[],
            help="print the IR after these passes (to stderr)",
        )
        p.add_argument(
            "--print-ir-before-all",
            action="store_true",
            help="print the IR before every pass (to stderr)",
        )
        p.add_argument(
            "--print-ir-after-all",
            action="store_true",
            help="print the IR after every pass (to stderr)",
        )
        p.add_argument(
            "--print-ir-after-change",
            action="store_true",
            help="with --print-ir-after(-all): print only after a pass that changed the IR",
        )
        p.add_argument(
            "--time-passes",
            action="store_true",
            help="print a table of the wall time of parsing, each pass, verification and "
            "output (to stderr)",
        )
        p.add_argument(
            "--show-dialects",
            action="store_true",
            help="list the registered dialects and their operations, and exit",
        )
        p.add_argument(
            "--help-pass",
            metavar="NAME",
            help="print a pass's description and options, and exit",
        )
        p.add_argument(
            "--disable-verify",
            action="store_true",
            help="do not verify the IR after parsing and after each pass",
        )
        p.add_argument(
            "--allow-unregistered-dialect",
            action="store_true",
            help="parse ops of unknown dialects (as generic ops; no pass lowers them)",
        )
        p.add_argument(
            "--no-implicit-module",
            action="store_true",
            help="require an explicit builtin.module around the input",
        )
        p.add_argument(
            "--print-op-generic",
            action="store_true",
            help="print every op in the generic form",
        )
        p.add_argument(
            "--print-debuginfo",
            action="store_true",
            help="print each op's location (loc(...))",
        )
        add_version(p)
        # What xDSLOptMain reads but Ramiel does not offer.
        p.set_defaults(
            frontend=None,
            syntax_highlight=False,
            shrink=False,
            parsing_diagnostics=False,
            print_no_properties=False,
            print_between_passes=False,
        )
        p.error = _usage_error  # type: ignore[method-assign]
        base_help = p.format_help
        p.format_help = lambda: base_help() + "\n" + passes_help(self.available_passes) + "\n"  # type: ignore[method-assign]

    def get_input_name(self) -> str:
        return self.args.input_file or "<stdin>"

    def get_input_stream(self) -> tuple[IO[bytes], str]:
        path = self.args.input_file
        if path is not None:
            input_file(path, "IR file")  # not a directory, FIFO or device such as /dev/zero
        f, _ = super().get_input_stream()
        return f, "mlir"  # every input is IR text, whatever its file name ends with

    def setup_pipeline(self) -> None:
        spec = self.args.passes
        problem = _option_problem(self.available_passes, spec)
        if problem is not None:
            raise _UsageError(f"bad pass pipeline '{spec}': {problem}")
        try:
            names = [p.name for p in parse_pipeline(spec)]
        except ArgSpecParseError as e:
            raise _pipeline_syntax_error(spec, e) from None
        except Exception as e:
            raise _UsageError(f"bad pass pipeline '{spec}': {e}") from None
        unknown = [n for n in names if n not in self.available_passes]
        if unknown:
            raise _UsageError(
                f"unknown pass{'es' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}"
                f" (available: {', '.join(sorted(self.available_passes))})"
            )

        args = self.args
        self.timings: dict[str, float] = {}
        self._weights_written: set[str] = set()  # (--split-input-file: one file per chunk)
        #: with -o: the weights files to write once every chunk succeeded (path -> tensors)
        self._pending_weights: dict[str, WeightStore] = {}
        self._verifier = IncrementalVerifier()
        clock = [time.perf_counter()]
        position = [0]  # the pass's place in the pipeline: a pass that runs twice is two rows
        before: list[str | None] = [None]  # the IR before the pass (for --print-ir-after-change)
        after_all = args.print_ir_after_all or (
            args.print_ir_after_change and not args.print_ir_after
        )

        def callback(prev: ModulePass | None, module: ModuleOp, nxt: ModulePass | None) -> None:
            now = time.perf_counter()
            if prev is None:
                position[0] = 0
            else:
                position[0] += 1
                self._time(f"{prev.name}" + _nth(position[0], self.pipeline), now - clock[0])
                if not args.disable_verify:
                    try:  # what the pass changed (every op after the last pass)
                        self._verifier.after_pass(module, prev.name)
                        if nxt is None:
                            names = [p.name for p in self.pipeline.passes]
                            self._verifier.after_pipeline(module, names)
                    finally:
                        self._time("(verification)", time.perf_counter() - now)
                text = None
                if args.print_ir_after_change:
                    text = _ir_text(module)
                wanted = after_all or prev.name in args.print_ir_after
                if wanted and (text is None or text != before[0]):
                    _dump("After", prev.name, module, text)
                before[0] = text
            if nxt is not None:
                if args.print_ir_before_all or nxt.name in args.print_ir_before:
                    _dump("Before", nxt.name, module)
                if args.print_ir_after_change and before[0] is None:
                    before[0] = _ir_text(module)
            clock[0] = time.perf_counter()

        try:
            # xDSL's PassPipeline.parse_spec, with the numbers it reads as strings mended
            items = _numbers_from_text(self.available_passes, parse_pipeline(spec))
            unknown = [p.name for p in items if p.name not in self.available_passes]
            if unknown:
                raise ValueError(f"Unrecognized passes: {unknown}")
            passes = (self.available_passes[p.name]().from_pass_spec(p) for p in items)
            self.pipeline = PassPipeline(tuple(passes), callback)
        except ArgSpecParseError as e:
            raise _pipeline_syntax_error(spec, e) from None
        except (ValueError, TypeError) as e:  # bad or missing pass options
            raise _UsageError(
                f"bad pass pipeline '{spec}': {_option_type_error(self.available_passes, spec) or e}"
            ) from None

    def run(self) -> None:  # type: ignore[override]
        """Parse, transform and print every chunk of the input; sets :attr:`status`.

        With ``--verify-diagnostics`` a chunk's diagnostics (a syntax error, an op that fails
        verification, an error a pass raises) are checked against its ``expected-*`` comments
        (:mod:`ramiel.tools.verify_diagnostics`) instead of ending the run; a chunk that produced
        none prints its output. Every mismatch is one located line on stderr, status 1.
        """
        self.status = 0
        chunks, _ = self.prepare_input()
        # the output file is written once everything succeeded (it may be the input itself,
        # as with mlir-opt -o in place; a failure leaves it as it was)
        output: IO[str] = io.StringIO() if self.args.output_file is not None else sys.stdout
        name = self.get_input_name()
        mismatches: list[str] = []
        failed = False
        try:
            for i, (chunk, offset) in enumerate(chunks):
                try:
                    data = chunk.read()
                finally:
                    chunk.close()
                if i > 0:
                    output.write("// -----\n")
                if not self.args.verify_diagnostics:
                    # as mlir-opt: a chunk's error is reported and the next chunks run (the
                    # run had ended at the first failing chunk); the status says one failed
                    try:
                        output.write(self._process_chunk(data, offset))
                    except (ParseError, LocatedVerifyError, RamielError, DiagnosticException) as e:
                        print(_chunk_error(e), file=sys.stderr, flush=True)
                        failed = True
                    output.flush()
                    continue
                text = self._decode(data)
                expected, malformed = parse_expectations(text, name, offset + 1)
                mismatches += malformed
                try:
                    result = self._process_chunk(data, offset)
                    produced: list[Diagnostic] = []
                except (ParseError, LocatedVerifyError, RamielError, DiagnosticException) as e:
                    result, produced = "", diagnostics_of(e, name)
                mismatches += check(expected, produced, name)
                output.write(result)
                output.flush()
        finally:
            for chunk, _ in chunks:
                chunk.close()
        if failed or mismatches:  # -o (and its weights) written when every chunk succeeded,
            self.status = 1  # as mlir-opt keeps its output file only then
        elif isinstance(output, io.StringIO):
            for path, tensors in self._pending_weights.items():
                tensors.save(path)
            write_text(self.args.output_file, output.getvalue())
        if self.args.time_passes:
            print(self.time_report(), file=sys.stderr)
        for line in mismatches:
            print(line, file=sys.stderr)
        if mismatches:
            self.status = 1

    def _process_chunk(self, data: bytes, offset: int) -> str:
        """One chunk: parsed (a syntax error located in the whole input), transformed, printed."""
        start = time.perf_counter()
        try:
            module = self.parse_chunk(io.BytesIO(data), "mlir", offset)
        except ParseError as e:
            e.span = dataclasses.replace(e.span, line_offset=offset)
            if isinstance(e, MultipleSpansParseError):
                e.refs = [(dataclasses.replace(sp, line_offset=offset), m) for sp, m in e.refs]
            raise
        finally:
            self._time("(parse and verify)", time.perf_counter() - start)
        self.apply_passes(module)
        start = time.perf_counter()
        try:
            return self.output_resulting_program(module)
        finally:
            self._time("(output)", time.perf_counter() - start)

    def _time(self, row: str, seconds: float) -> None:
        self.timings[row] = self.timings.get(row, 0.0) + seconds

    def time_report(self) -> str:
        """``--time-passes``: MLIR's execution time report, one row per pass (in pipeline
        order, summed over the chunks), wall seconds and share of the total."""
        rule = "===" + "-" * 73 + "==="
        total = sum(self.timings.values())
        lines = [
            rule,
            "... Execution time report ...".center(len(rule)).rstrip(),
            rule,
            f"  Total Execution Time: {total:.4f} seconds",
            "",
            "  ----Wall Time----  ----Name----",
        ]
        for row, seconds in [*self.timings.items(), ("Total", total)]:
            share = 100.0 * seconds / total if total > 0 else 0.0
            lines.append(f"  {seconds:8.4f} ({share:5.1f}%)  {row}")
        return "\n".join(lines)

    def _decode(self, data: bytes) -> str:
        return ir_text(data, self.get_input_name())

    def parse_chunk(self, chunk, file_extension, start_offset=0):  # type: ignore[no-untyped-def]
        text = self._decode(chunk.read())
        parser = LocatedParser(self.ctx, text, self.get_input_name(), start_offset)
        module = parser.parse_module(not self.args.no_implicit_module)
        self._verifier = IncrementalVerifier()  # then each pass's check covers what it changed
        if not self.args.disable_verify:
            self._verifier.verify_all(module)
        return module

    def output_resulting_program(self, prog):  # type: ignore[no-untyped-def]
        if self.args.target == "python":  # its own weights file (_emit_python), not the IR's
            return super().output_resulting_program(prog)
        out = self.args.output_file
        taken = self._weights_written
        saved = save_new_weights(
            prog,
            self.ctx.weights.of(prog),
            self.args.input_file,
            self.args.output_file,
            self.args.weights,
            taken=taken,
            pending=self._pending_weights if self.args.output_file else None,
        )
        if saved is not None:
            taken.add(os.path.realpath(saved))
        if saved is None:
            rebase_weights_ref(prog, self.args.input_file, self.args.output_file)
        ref = get_str(prog, WEIGHTS_ATTR)
        if out and ref:
            weights = os.path.join(os.path.dirname(os.path.abspath(out)), ref)
            if same_file(out, weights):
                raise RamielError(
                    f'-o {out} is the weights file the IR reads (ramiel.weights = "{ref}"): '
                    "writing the IR there would destroy the weights; write it to another file"
                )
        # one newline at the end, as mlir-opt and the compiler's model.mlir (xDSL adds a blank
        # line: the first print -> parse -> print of a model.mlir was not byte-identical)
        return super().output_resulting_program(prog).rstrip("\n") + "\n"


def diagnostics_of(e: Exception, name: str) -> list[Diagnostic]:
    """The diagnostics an exception that ended a chunk stands for (``--verify-diagnostics``).

    A syntax error is an error at its position (the other positions xDSL names, such as a
    value's first definition, are notes there); an op that fails verification an error at the
    op; any other :class:`~ramiel.errors.RamielError` or xDSL diagnostic an error without a
    location (``expected-error @unknown``).
    """
    if isinstance(e, ParseError):
        loc = e.span.get_location()
        diags = [Diagnostic("error", " ".join(e.msg.split()), loc.file, loc.line, loc.col)]
        if isinstance(e, MultipleSpansParseError):
            for span, msg in e.refs:
                ref = span.get_location()
                diags.append(
                    Diagnostic("note", " ".join((msg or "").split()), ref.file, ref.line, ref.col)
                )
        return diags
    if isinstance(e, LocatedVerifyError):
        op_loc = e.op.location if e.op is not None else None
        if isinstance(op_loc, FileLineColLoc):
            return [
                Diagnostic(
                    "error", e.reason, op_loc.filename.data, op_loc.line.data, op_loc.column.data
                )
            ]
        return [Diagnostic("error", e.reason)]
    return [Diagnostic("error", " ".join(str(e).split()))]


def show_dialects(ctx) -> str:  # type: ignore[no-untyped-def]
    """``--show-dialects``: every registered dialect with its operations (as MLIR's)."""
    lines = ["Available Dialects:"]
    for name in sorted(ctx.registered_dialect_names):
        dialect = ctx.get_optional_dialect(name)
        ops = sorted(op.name for op in dialect.operations) if dialect is not None else []
        lines.append(f"  {name} ({len(ops)} ops): {', '.join(ops)}")
    return "\n".join(lines)


def _nth(position: int, pipeline: PassPipeline) -> str:
    """`` #2`` for the second run of a pass the pipeline runs more than once."""
    passes = pipeline.passes
    name = passes[position - 1].name
    if sum(p.name == name for p in passes) < 2:
        return ""
    return f" #{sum(p.name == name for p in passes[:position])}"


def _ir_text(module: ModuleOp) -> str:
    buf = io.StringIO()
    Printer(stream=buf).print_op(module)
    return buf.getvalue()


def _dump(when: str, name: str, module: ModuleOp, text: str | None = None) -> None:
    """``--print-ir-before/after``: the IR on stderr under MLIR's dump header."""
    print(f"// -----// IR Dump {when} {name} //----- //", file=sys.stderr)
    print(text if text is not None else _ir_text(module), file=sys.stderr)
    print(file=sys.stderr)


def _pass_list(text: str) -> list[str]:
    """An argparse type: comma-separated pass names (``--print-ir-after=dce,merge``)."""
    names = [n.strip() for n in text.split(",")]
    unknown = [n for n in names if n not in PASSES]
    if not text.strip() or unknown:
        raise argparse.ArgumentTypeError(
            f"unknown pass {', '.join(map(repr, unknown)) or repr(text)} "
            f"(available: {', '.join(sorted(PASSES))})"
        )
    return names


class _Formatter(HelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Defaults shown; the description and epilog as written."""


_EPILOG = f"""\
Every pass also has a flag of its own, with options in braces or after '=':
  ramiel-opt --constant-fold --dce --merge{{clusters=2}} model.mlir -o out.mlir
  ramiel-opt --merge=clusters=2 -              (read stdin)
Passes run in command-line order; the IR is verified after each (errors at file:line:col).
ramiel compile's default pipeline (ramiel.pipeline.DEFAULT_PIPELINE), on the imported IR:
  ramiel-opt -p '{DEFAULT_PIPELINE}' model.mlir"""


def save_new_weights(  # type: ignore[no-untyped-def]
    module,
    store: WeightStore | None,
    input_file: str | None,
    output_file: str | None,
    weights: str | None = None,
    taken: set[str] | None = None,
    pending: dict[str, WeightStore] | None = None,
) -> str | None:
    """Write the module's weights beside the output if a pass added some; returns the file's path.

    ``--constant-fold`` turns large constant results into new ``dense_resource`` tensors of the
    module's weight store, held in memory (:mod:`ramiel.passes.constant_fold`). The module's
    weights, old and new, go to ``weights`` if given, else to ``<output>.safetensors`` beside
    ``-o FILE``; with the IR on stdout and no ``weights`` it is an error (no file is written
    where the user did not ask). ``ramiel.weights`` names that file, which holds the tensors the
    module reads (not the ones a pass such as ``--dce`` left unread). The input weights file is
    left as it is, unless it is that very file (``-o`` overwriting the IR it was imported with):
    then it gains the new tensors and keeps the others, which another IR file may read. ``store``: the module's weights in the run's context (``None`` when the module
    names no weights file). ``None`` when no pass added a tensor. ``taken``: the real paths of
    the weights files earlier chunks of this run wrote (``--split-input-file``). Raises
    :class:`RamielError` if the file cannot be written, is the output IR file itself (``-o
    FILE.safetensors``), or is in ``taken`` (the chunk would overwrite another chunk's weights,
    which that chunk's IR reads under the same keys; a fresh-user check). ``pending``: where
    given, the file's tensors go there (path -> tensors) for the caller to write with the IR,
    instead of being written now (``ramiel-opt -o`` writes nothing where a chunk fails).
    """
    if store is None or not store.new_keys():
        return None
    added = len(set(store.new_keys()) & _resource_keys(module)) or len(store.new_keys())
    if weights:
        path = os.path.abspath(weights)
    elif output_file:
        path = os.path.splitext(os.path.abspath(output_file))[0] + ".safetensors"
    else:
        raise RamielError(
            f"the passes added {added} weight tensor(s), which go to a weights "
            "file beside the IR; with the IR on stdout, name that file: --weights FILE (or "
            "write the IR with -o FILE.mlir: the weights go to FILE.safetensors)"
        )
    if output_file and same_file(output_file, path):
        raise RamielError(
            f"-o {output_file} is where the new weights go: the IR and its weights would be "
            "one file; write the IR to FILE.mlir, or name the weights with --weights"
        )
    if taken is not None and os.path.realpath(path) in taken:
        raise RamielError(
            f"--split-input-file: this chunk's passes added weight tensors, which go to {path}, "
            "where an earlier chunk's weights went (its IR reads them under the same keys); "
            "run the chunks one at a time, each with its own -o or --weights"
        )
    # not store.save(path): the input file's store stays as it is. A new file gets the tensors
    # the IR reads; the input's own file (in place) keeps the others too, which other IR files
    # beside it may read
    in_place = store.path is not None and same_file(store.path, path)
    used = None if in_place else _resource_keys(module)
    copy = WeightStore(None)
    for key in store.keys():  # noqa: SIM118 - a WeightStore is not a dict
        if used is None or key in used:
            copy.add(key, store.get(key))
    if pending is None:
        copy.save(path)
    else:
        pending[path] = copy
    out_dir = os.path.dirname(os.path.abspath(output_file)) if output_file else os.getcwd()
    set_str(module, WEIGHTS_ATTR, os.path.relpath(path, out_dir))
    return path


def _resource_keys(module) -> set[str]:  # type: ignore[no-untyped-def]
    """The weight keys the ``dense_resource`` constants of ``module`` name."""
    return {
        v.resource_handle.data
        for op in module.walk()
        for v in op.properties.values()
        if isinstance(v, DenseResourceAttr)
    }


def rebase_weights_ref(module, input_file: str | None, output_file: str | None) -> None:  # type: ignore[no-untyped-def]
    """Keep a relative ``ramiel.weights`` path valid when the IR is written to another directory.

    The path is relative to the IR file's directory; ``-o`` elsewhere re-expresses it relative to
    the output's directory (stdout counts as the current directory).
    """
    ref = get_str(module, WEIGHTS_ATTR)
    if ref is None or os.path.isabs(ref):
        return
    src_dir = os.path.dirname(os.path.abspath(input_file)) if input_file else os.getcwd()
    dst_dir = os.path.dirname(os.path.abspath(output_file)) if output_file else os.getcwd()
    if src_dir != dst_dir:
        target = os.path.normpath(os.path.join(src_dir, ref))
        set_str(module, WEIGHTS_ATTR, os.path.relpath(target, dst_dir))


#: Characters of the offending line shown under a syntax error (a window around the column).
CONTEXT_CHARS = 120


def format_parse_error(e: ParseError) -> str:
    """``file:line:col: error: reason`` (one line) followed by the offending line and a caret;
    a long line is shown as the :data:`CONTEXT_CHARS` around the column."""
    loc = e.span.get_location()
    context = [c for c in e.span.print_with_context("").splitlines()[1:] if c.strip()]
    reason = " ".join(e.msg.split())
    if len(context) == 2 and len(context[0]) > CONTEXT_CHARS:
        line, marks = context
        col = len(marks) - len(marks.lstrip())
        start = max(0, col - CONTEXT_CHARS // 2)
        cut = line[start : start + CONTEXT_CHARS]
        lead = "..." if start else ""
        tail = "..." if start + CONTEXT_CHARS < len(line) else ""
        context = [
            lead + cut + tail,
            " " * (len(lead) + col - start) + marks.strip()[:CONTEXT_CHARS],
        ]
    return "\n".join([f"{loc}: error: {reason}", *context])


def _chunk_error(e: Exception) -> str:
    """The message of an error that ended one chunk (or, from :func:`main`, the run): a located
    parse or verifier diagnostic, else one ``error:`` line."""
    if isinstance(e, ParseError):
        return format_parse_error(e)
    if isinstance(e, LocatedVerifyError):
        return e.diagnostic()
    return f"error: {one_line(str(e))}"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``ramiel-opt``; returns the exit status."""
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    argv = list(sys.argv[1:] if argv is None else argv)
    return run_command(_opt, argv)


def _opt(argv: list[str]) -> int:
    elements, rest = split_pass_flags(argv)
    if elements:
        rest = ["-p", ",".join(elements), *rest]
    rest = [a for a in rest if a != "-"]  # '-' means stdin, xDSL's default
    try:
        tool = RamielOptMain(description="Ramiel optimiser: run passes on Ramiel IR", args=rest)
        vars(tool.args).pop(GIVEN_ONCE, None)
        if tool.args.help_pass is not None:
            print(pass_help(tool.args.help_pass, tool.available_passes))
            return 0
        if tool.args.show_dialects:
            print(show_dialects(tool.ctx))
            return 0
        if tool.args.input_file:
            # a relative ramiel.weights path is relative to the IR file's directory
            tool.ctx.weights_dir = os.path.dirname(os.path.abspath(tool.args.input_file))
            if not os.path.exists(tool.args.input_file):
                raise RamielError(f"{tool.args.input_file}: no such file")
        if tool.args.output_file == "":
            raise _UsageError("argument -o: the path is empty")
        if tool.args.output_file is not None:
            output_file(tool.args.output_file)
        tool.run()
        return tool.status
    except (ParseError, LocatedVerifyError) as e:
        print(_chunk_error(e), file=sys.stderr)
        return 1
    except DiagnosticException as e:
        raise RamielError(str(e)) from None
    return 0


if __name__ == "__main__":
    sys.exit(main())
