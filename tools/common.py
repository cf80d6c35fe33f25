"""What the command-line tools share: one-line errors, and argument values checked when parsed.

Every tool ends the same way (:func:`run_command`): a :class:`~ramiel.errors.RamielError` is one
``error: <message>`` line and exit status 1; an operating-system error (a file that cannot be
read or written) is one ``error:`` line naming the file; running out of memory is one line;
Ctrl-C is ``error: interrupted`` and status 130; a reader of stdout that went away
(``ramiel-opt big.mlir | head``) ends the command quietly, status 141
(:data:`ramiel.files.BROKEN_PIPE_STATUS`); anything else is a bug in Ramiel, reported as
``error: internal error: <type>: <message> (set RAMIEL_DEBUG=1 for the traceback)``.

Argument values are checked by argparse ``type=`` functions (:func:`count`, :func:`seconds`,
:func:`input_shape`, :func:`counts`, :func:`path`), so a bad value is one line, ``error: argument
--repeat: ...``, exit status 2, before any work (:class:`ArgumentParser`).
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import re
import sys
from collections.abc import Callable, Iterator
from importlib.metadata import PackageNotFoundError, version
from typing import Any, NoReturn

from ramiel.envflags import check_switches
from ramiel.errors import InputShapeError, RamielError, internal_error_message
from ramiel.files import one_line, stdout_reader_gone
from ramiel.interrupts import keyboard_interrupts
from ramiel.omp import MAX_COUNT

__all__ = [
    "ArgumentParser",
    "HelpFormatter",
    "MAX_COUNT",
    "add_input_shape",
    "count",
    "counts",
    "input_shape",
    "one_line",
    "path",
    "plain",
    "progress_bar",
    "report",
    "run_command",
    "seconds",
    "versions",
    "add_version",
]


class HelpFormatter(argparse.HelpFormatter):
    """argparse's help, with ``(default: X)`` after every option that has a default.

    An option whose default is ``None``, ``False`` or empty (a flag, a value computed at run
    time) shows none; one whose help already says ``default`` keeps its own words.
    """

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if "default" in text or action.help == argparse.SUPPRESS:
            return text
        if (
            default is None
            or default is False
            or default in ([], "")
            or default == argparse.SUPPRESS
        ):
            return text
        if action.option_strings or action.nargs in (argparse.OPTIONAL, argparse.ZERO_OR_MORE):
            text += " (default: %(default)s)"
        return text


GIVEN_ONCE = "_given_once"
"""The namespace attribute where :class:`StoreOnce` keeps the options given so far."""


class StoreOnce(argparse._StoreAction):
    """argparse's ``store``, refusing a second occurrence of the option in one command line
    (``--inputs a.npz --inputs b.npz`` had silently taken b.npz; LLVM's ``cl::opt``, which
    mlir-opt's options are, refuses it the same way). The options seen so far live on the
    namespace being filled (``_given_once``; :class:`ArgumentParser` removes it afterwards)."""

    def __call__(self, parser, namespace, values, option_string=None):  # type: ignore[no-untyped-def]
        seen = vars(namespace).setdefault(GIVEN_ONCE, {})
        if self.dest in seen:
            first, before = seen[self.dest]
            parser.error(
                f"{option_string} given twice ({first} {before!r} and {option_string} "
                f"{values!r}); give it once"
            )
        seen[self.dest] = (option_string, values)
        super().__call__(parser, namespace, values, option_string)


def store_once(parser: argparse.ArgumentParser) -> None:
    """Make ``store`` (argparse's default action) :class:`StoreOnce` for the options
    ``parser`` gets from now on."""
    parser.register("action", None, StoreOnce)
    parser.register("action", "store", StoreOnce)


class ArgumentParser(argparse.ArgumentParser):
    """argparse with a one-line error: ``error: <message> (see 'ramiel run --help')``, status 2,
    defaults shown in ``--help`` (:class:`HelpFormatter`) and ``--version``
    (:func:`add_version`) on request. An option that takes one value (argparse's ``store``)
    may be given once: a second occurrence is an error (``append`` options repeat)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)
        store_once(self)

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[no-untyped-def, override]
        parsed, extra = super().parse_known_args(args, namespace)
        vars(parsed).pop(GIVEN_ONCE, None)
        return parsed, extra

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"error: {one_line(message)} (see '{self.prog} --help')\n")
        sys.exit(2)


def versions(tool: str) -> str:
    """``--version`` text: ``tool`` and Ramiel's version, then xDSL's, onnx's, onnxruntime's and
    torch's (from the installed distributions' metadata: nothing is imported)."""

    def of(dist: str) -> str:
        try:
            return version(dist)
        except PackageNotFoundError:
            return "not installed"

    lines = [f"{tool} (Ramiel) {of('ramiel')}"]
    lines += [f"{dist} {of(dist)}" for dist in ("xdsl", "onnx", "onnxruntime", "torch")]
    return "\n".join(lines)


class _VersionAction(argparse.Action):
    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):  # type: ignore[no-untyped-def]
        print(versions(parser.prog.split()[0]))
        parser.exit()


def add_version(parser: argparse.ArgumentParser) -> None:
    """Add ``--version`` (:func:`versions`) to ``parser``."""
    parser.add_argument(
        "--version",
        action=_VersionAction,
        help="print the versions of Ramiel, xDSL, onnx, onnxruntime and torch, and exit",
    )


_RST = [
    (re.compile(r":[a-z]+:`~?(?:[\w.]*\.)?([^`<]+?)`"), r"\1"),  # :class:`~a.b.C` -> C
    (re.compile(r"``([^`]+)``"), r"\1"),
    (re.compile(r"`([^`]+)`"), r"\1"),
]


def plain(text: str) -> str:
    """Docstring text without reStructuredText markup (for ``--help``)."""
    for pattern, repl in _RST:
        text = pattern.sub(repl, text)
    return text


@contextlib.contextmanager
def progress_bar(description: str, console: Any = None) -> Iterator[Callable[[int, int], None]]:
    """A rich progress bar on stderr (bar, done/total, elapsed time, ETA) for a long step;
    yields ``update(done, total)``. Drawn only on a terminal; gone when the step ends.
    ``console``: the rich ``Console`` the step's log lines go to (they then print above the
    bar instead of through it; default: a new one on stderr)."""
    # rich takes ~50 ms to import, paid by every ramiel-opt / ramiel-translate start (each lit
    # RUN line) that draws no bar
    from rich.console import Console  # lazy: rich
    from rich.progress import (  # lazy: rich
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
    )
    console = console if console is not None else Console(stderr=True)
    if not console.is_terminal:  # (rich's Live wrote an empty line when it stopped)
        yield lambda done, total: None
        return
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task(description, total=None)
        yield lambda done, total: bar.update(task, completed=done, total=total)


_INT = re.compile(r"^\s*[+-]?\d+\s*$")


def count(lo: int = 1, hi: int = MAX_COUNT) -> Callable[[str], int]:
    """An argparse type: a decimal integer in ``[lo, hi]``."""

    def parse(text: str) -> int:
        if not _INT.match(text):
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}")
        value = int(text)
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"must be from {lo} to {hi}, got {value}")
        return value

    parse.__name__ = "count"  # argparse names the type in its 'invalid <type> value' messages
    return parse


def counts(lo: int = 1, hi: int = MAX_COUNT) -> Callable[[str], list[int]]:
    """An argparse type: comma-separated integers in ``[lo, hi]`` (``1,2``)."""
    one = count(lo, hi)

    def parse(text: str) -> list[int]:
        items = text.split(",")
        if not text.strip() or any(not i.strip() for i in items):
            raise argparse.ArgumentTypeError(f"expected integers separated by commas, got {text!r}")
        return [one(i) for i in items]

    parse.__name__ = "counts"
    return parse


def seconds(hi: float = 7 * 24 * 3600.0) -> Callable[[str], float]:
    """An argparse type: a finite number of seconds, more than 0 and at most ``hi``."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected a number of seconds, got {text!r}"
            ) from None
        if not math.isfinite(value) or not 0 < value <= hi:
            raise argparse.ArgumentTypeError(f"must be more than 0 and at most {hi:g}, got {text}")
        return value

    parse.__name__ = "seconds"
    return parse


def input_shape(text: str) -> tuple[str, tuple[int, ...]]:
    """An argparse type: ``NAME=D0,D1,...`` (see :func:`ramiel.importer.parse_input_shape`)."""
    from ramiel.importer import parse_input_shape  # lazy: numpy,onnx,xdsl

    try:
        return parse_input_shape(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e).removeprefix("--input-shape ")) from None


def input_shape_bindings(pairs: Any) -> dict[str, tuple[int, ...]]:
    """The ``--input-shape`` bindings (``args.input_shape``: (name, dims) pairs) as a dict;
    raises :class:`~ramiel.errors.InputShapeError` for a name bound to two shapes."""
    shapes: dict[str, tuple[int, ...]] = {}
    for name, dims in pairs:
        if name in shapes and shapes[name] != dims:
            raise InputShapeError(f"--input-shape binds '{name}' twice ({shapes[name]} and {dims})")
        shapes[name] = dims
    return shapes


def add_input_shape(p: argparse.ArgumentParser) -> None:
    """The ``--input-shape NAME=D0,D1,...`` option (repeatable; :func:`input_shape` values in
    ``args.input_shape``) of ``ramiel-translate --import-onnx`` and the ``ramiel`` subcommands."""
    p.add_argument(
        "--input-shape",
        action="append",
        default=[],
        type=input_shape,
        metavar="NAME=D0,D1,...",
        help="bind the shape of a graph input (repeatable; NAME= for a scalar)",
    )


def path(text: str) -> str:
    """An argparse type: a non-empty path (``-o ''`` is an error, not the current directory)."""
    if text == "":
        raise argparse.ArgumentTypeError("the path is empty")
    return text


def report(e: BaseException) -> tuple[str, int]:
    """The ``error:`` line and the exit status for an exception that ended a command."""
    if isinstance(e, RamielError):
        return f"error: {one_line(str(e))}", 1
    if isinstance(e, KeyboardInterrupt):
        return "error: interrupted", 130
    if isinstance(e, OSError) and e.strerror:
        where = f"{e.filename}: " if e.filename is not None else ""
        return f"error: {one_line(where + e.strerror)}", 1
    if isinstance(e, MemoryError):
        return "error: out of memory (the model or a file given is too large for this machine)", 1
    return f"error: {one_line(internal_error_message(e))}", 1


def run_command(fn: Callable[..., int], *args: Any) -> int:
    """Run one command of a tool; every exception becomes one ``error:`` line (module docstring).

    ``RAMIEL_DEBUG=1`` re-raises an internal error, to show its traceback.
    """
    with keyboard_interrupts():  # before and after: Ctrl-C exits at once (ramiel.interrupts)
        check_switches()  # an odd RAMIEL_* value: one warning, not one per process it starts
        return _run_command(fn, *args)


def _run_command(fn: Callable[..., int], *args: Any) -> int:
    try:
        status = fn(*args)
        if sys.stdout is not None:  # None: started with stdout closed (>&-)
            sys.stdout.flush()  # here, so that a reader that went away is a broken pipe below
        return status
    except BrokenPipeError:
        return stdout_reader_gone()
    except SystemExit:  # argparse's --help, --version and usage errors
        try:
            if sys.stdout is not None:
                sys.stdout.flush()
        except BrokenPipeError:
            return stdout_reader_gone()
        raise
    except (Exception, KeyboardInterrupt) as e:
        line, status = report(e)
        internal = not isinstance(e, RamielError | KeyboardInterrupt | OSError | MemoryError)
        if internal and os.environ.get("RAMIEL_DEBUG"):
            raise
        print(line, file=sys.stderr)
        return status
