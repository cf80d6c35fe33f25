"""What the command-line tools share: one-line errors, and argument values checked when parsed.

Every tool ends the same way (:func:`run_command`): a :class:`~ramiel.errors.RamielError` is one
``error: <message>`` line and exit status 1; an operating-system error (a file that cannot be
read or written) is one ``error:`` line naming the file; running out of memory is one line;
Ctrl-C is ``error: interrupted`` and status 130; anything else is a bug in Ramiel, reported as
``error: internal error: <type>: <message> (set RAMIEL_DEBUG=1 for the traceback)``.

Argument values are checked by argparse ``type=`` functions (:func:`count`, :func:`seconds`,
:func:`input_shape`, :func:`counts`, :func:`path`), so a bad value is one line, ``error: argument
--repeat: ...``, exit status 2, before any work (:class:`ArgumentParser`).
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
from collections.abc import Callable
from typing import Any, NoReturn

from ramiel.errors import RamielError, internal_error_message

__all__ = [
    "ArgumentParser",
    "MAX_COUNT",
    "count",
    "counts",
    "input_shape",
    "one_line",
    "path",
    "report",
    "run_command",
    "seconds",
]

#: The largest count any option takes (clusters, workers, threads, cores, samples): more would
#: start that many threads or processes, or replicate the graph that many times.
MAX_COUNT = 1024


def one_line(message: str) -> str:
    """``message`` on one line: messages quote ONNX names and paths, which may hold newlines."""
    return message.replace("\r", "\\r").replace("\n", "\\n")


class ArgumentParser(argparse.ArgumentParser):
    """argparse with a one-line error: ``error: <message> (see 'ramiel run --help')``, status 2."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"error: {one_line(message)} (see '{self.prog} --help')\n")
        sys.exit(2)


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
    from ramiel.importer import parse_input_shape

    try:
        return parse_input_shape(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e).removeprefix("--input-shape ")) from None


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
    try:
        return fn(*args)
    except (Exception, KeyboardInterrupt) as e:
        line, status = report(e)
        internal = not isinstance(e, RamielError | KeyboardInterrupt | OSError | MemoryError)
        if internal and os.environ.get("RAMIEL_DEBUG"):
            raise
        print(line, file=sys.stderr)
        return status
