"""Paths Ramiel reads and writes: one clear error before any work, files readable as the umask
allows.

Every file a user names (a model, an IR file, a profile database) goes through
:func:`input_file` and every output through :func:`output_dir` / :func:`output_file` before the
work starts, so a bad path is one :class:`~ramiel.errors.RamielError` naming the path and what is
wrong, in bounded time: an empty path, a missing file, a directory where a file is wanted, a
FIFO, device or socket (reading ``/dev/zero`` would never end, a FIFO without a writer blocks
forever), a file too large for what it is, an output under a regular file, in a directory that
cannot be written (read-only, ``/sys``), or a directory where a file is wanted.

Generated files are readable by other users as the umask allows (:func:`make_readable`): some
writers, such as safetensors, create their files with mode ``0600`` whatever the umask, so a
module compiled for another account could not load its weights.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import stat
import sys
import tempfile
from collections.abc import Iterator

from ramiel.errors import RamielError

__all__ = [
    "BROKEN_PIPE_STATUS",
    "input_file",
    "is_safetensors",
    "make_readable",
    "output_dir",
    "output_file",
    "shell_quote",
    "stdout_reader_gone",
    "umask",
]

_KINDS = {
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


#: Exit status after the reader of stdout went away (``ramiel-opt ... | head``, ``python model.py
#: | head -1``): the status of a program that SIGPIPE ended (128 + 13), with nothing printed.
BROKEN_PIPE_STATUS = 141


def stdout_reader_gone() -> int:
    """After a ``BrokenPipeError`` on stdout: point stdout at ``/dev/null`` (Python's documented
    recipe, so that the interpreter's last flush does not fail again) and return
    :data:`BROKEN_PIPE_STATUS`, the status to exit with quietly."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return BROKEN_PIPE_STATUS


def umask() -> int:
    """The process's umask (from ``/proc/self/status``, else by setting and restoring it)."""
    with contextlib.suppress(OSError, ValueError), open("/proc/self/status") as f:
        for line in f:
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def make_readable(path: str | os.PathLike[str]) -> None:
    """Give ``path`` the permissions a newly created file gets under the umask (``0666 & ~umask``,
    ``0644`` with the usual ``022``)."""
    os.chmod(path, 0o666 & ~umask())


def input_file(
    path: str | os.PathLike[str], what: str = "file", max_bytes: int | None = None
) -> str:
    """Check that ``path`` is a regular, readable file (of at most ``max_bytes``); returns it.

    Raises:
        RamielError: ``"<what> <path>: <reason>"`` for an empty path, a missing file, a
            directory, a FIFO/device/socket, an unreadable or a too large file.
    """
    p = os.fspath(path)
    if p == "":
        raise RamielError(f"{what}: the path is empty")
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise RamielError(f"{what} {p}: no such file") from None
    except OSError as e:
        raise RamielError(f"{what} {p}: {e.strerror or e}") from None
    if stat.S_ISDIR(st.st_mode):
        raise RamielError(f"{what} {p}: is a directory, not a file")
    if not stat.S_ISREG(st.st_mode):
        kind = _KINDS.get(stat.S_IFMT(st.st_mode), "not a regular file")
        raise RamielError(f"{what} {p}: is {kind}, not a regular file")
    if max_bytes is not None and st.st_size > max_bytes:
        raise RamielError(
            f"{what} {p}: {st.st_size} bytes, more than the {max_bytes} such a file can have"
        )
    try:
        with open(p, "rb"):
            pass
    except OSError as e:
        raise RamielError(f"{what} {p}: cannot be read ({e.strerror or e})") from None
    return p


def _check_parent(p: str, what: str) -> None:
    """Every existing ancestor of ``p`` is a directory."""
    parent = os.path.dirname(os.path.abspath(p))
    while parent and not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if parent and not os.path.isdir(parent):
        raise RamielError(f"{what} {p}: {parent} is not a directory")


def _check_writable_dir(d: str, p: str, what: str) -> None:
    """Create and remove a file in directory ``d`` (the only exact test: root may write where
    ``os.access`` says no, and nobody may write in ``/sys`` or a read-only mount)."""
    try:
        fd, probe = tempfile.mkstemp(prefix=".ramiel-probe-", dir=d)
    except OSError as e:
        raise RamielError(f"{what} {p}: cannot write in {d} ({e.strerror or e})") from None
    os.close(fd)
    with contextlib.suppress(OSError):
        os.remove(probe)


def output_dir(path: str | os.PathLike[str], what: str = "output directory") -> str:
    """Create directory ``path`` if needed and check that files can be written in it.

    Raises:
        RamielError: an empty path, a path that is a file or lies under a file, a directory that
            cannot be created or written.
    """
    p = os.fspath(path)
    if p == "":
        raise RamielError(f"{what}: the path is empty")
    if os.path.exists(p) and not os.path.isdir(p):
        raise RamielError(f"{what} {p}: exists and is not a directory")
    _check_parent(p, what)
    try:
        os.makedirs(p, exist_ok=True)
    except OSError as e:
        raise RamielError(f"{what} {p}: cannot be created ({e.strerror or e})") from None
    _check_writable_dir(p, p, what)
    return p


def output_file(
    path: str | os.PathLike[str], what: str = "output file", make_dirs: bool = False
) -> str:
    """Check that file ``path`` can be written (its directory exists and is writable, the path
    is not a directory; a device such as ``/dev/null`` is fine); nothing is created.
    ``make_dirs``: the writer makes missing directories (a report written at the end of a
    benchmark), so a missing directory is fine where the nearest existing one is writable.

    Raises:
        RamielError: an empty path, a directory, a missing (unless ``make_dirs``) or unwritable
            parent directory.
    """
    p = os.fspath(path)
    if p == "":
        raise RamielError(f"{what}: the path is empty")
    if os.path.isdir(p):
        raise RamielError(f"{what} {p}: is a directory, not a file")
    if os.path.exists(p) and not os.path.isfile(p):  # /dev/null, /dev/stdout: fine if writable
        if not os.access(p, os.W_OK):
            raise RamielError(f"{what} {p}: cannot be written")
        return p
    _check_parent(p, what)
    d = os.path.dirname(os.path.abspath(p))
    while make_dirs and not os.path.exists(d):
        d = os.path.dirname(d)
    if not os.path.isdir(d):
        raise RamielError(f"{what} {p}: the directory {d} does not exist")
    _check_writable_dir(d, p, what)
    return p


def read_json_file(path: str | os.PathLike[str], what: str) -> object:
    """The JSON value in the file ``path``; ``what`` names the file in errors.

    Raises:
        RamielError: ``"<what> <path>: cannot read it: ..."`` or ``"...: not JSON: ..."``.
    """
    where = f"{what} {os.fspath(path)}"
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        raise RamielError(f"{where}: cannot read it: {e.strerror or e}") from None
    except json.JSONDecodeError as e:
        raise RamielError(f"{where}: not JSON: {e}") from None
    except UnicodeDecodeError as e:  # found by a fresh-user check (an internal error)
        raise RamielError(f"{where}: not JSON: not UTF-8 text (byte {e.start})") from None


def write_text(path: str | os.PathLike[str], text: str, what: str = "output file") -> None:
    """Write ``text`` to ``path``, replacing the file only once all of it is written: a regular
    (or new) file gets a temporary sibling renamed over it, so that a failure leaves the old
    file as it was; a device (``/dev/null``, ``/dev/stdout``) is written directly.

    Raises:
        RamielError: the file cannot be written (naming ``what`` and the reason).
    """
    p = os.fspath(path)
    try:
        if os.path.exists(p) and not os.path.isfile(p):
            with open(p, "w", encoding="utf-8") as f:
                f.write(text)
            return
        tmp = f"{p}.tmp{os.getpid()}"
        try:
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, p)
        finally:
            with contextlib.suppress(OSError):
                os.remove(tmp)
    except OSError as e:
        raise RamielError(f"cannot write {what} {p}: {e.strerror or e}") from None


def is_safetensors(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` starts as a safetensors file does: an 8-byte little-endian header
    length, then a JSON object, within the file's size."""
    head = file_head(path, 9)
    if head is None or len(head) < 9 or head[8:9] != b"{":
        return False
    try:
        return 8 + int.from_bytes(head[:8], "little") <= os.path.getsize(path)
    except OSError:
        return False


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Whether paths ``a`` and ``b`` name one file (the same path once resolved, or the same
    existing file through links)."""
    pa, pb = os.fspath(a), os.fspath(b)
    if os.path.realpath(pa) == os.path.realpath(pb):
        return True
    try:
        return os.path.samefile(pa, pb)
    except OSError:
        return False


def file_head(path: str | os.PathLike[str], n: int) -> bytes | None:
    """The first ``n`` bytes of the regular file ``path`` (through links), or ``None`` where it
    is not one or cannot be read: what recognises a file by its content (a generated module, a
    ``tune.json``, a safetensors header) before a command replaces it."""
    try:
        if not os.path.isfile(path):
            return None
        with open(path, "rb") as f:
            return f.read(n)
    except OSError:
        return None


@contextlib.contextmanager
def removed_if_left_empty(path: str | os.PathLike[str]) -> Iterator[None]:
    """Around a command that makes the output directory ``path``: when it fails (any exception,
    Ctrl-C too), the directory is removed if this command made it and it is still empty; one
    that was there before stays."""
    created = not os.path.lexists(path)
    try:
        yield
    except BaseException:
        if created:
            with contextlib.suppress(OSError):
                os.rmdir(path)
        raise


def shell_quote(text: str) -> str:
    """``text`` as one shell word a user can paste: :func:`shlex.quote`, or, where ``text``
    holds a control character (a newline in an ONNX name), bash's ``$'...'`` quoting with
    escapes (``shlex.quote`` keeps a newline raw inside single quotes, and a pasted ``\\n``
    stays two characters; a fresh-user check).

    >>> shell_quote("x=1,3"), shell_quote("a b"), shell_quote("a\\nb'c")
    ('x=1,3', "'a b'", "$'a\\\\nb\\\\'c'")
    """
    if not any(ord(c) < 32 or ord(c) == 127 for c in text):
        return shlex.quote(text)
    named = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\t": "\\t", "\r": "\\r"}
    body = "".join(
        named.get(c) or (f"\\x{ord(c):02x}" if ord(c) < 32 or ord(c) == 127 else c) for c in text
    )
    return f"$'{body}'"


def printable(text: str) -> str:
    """``text`` as it can be shown on one terminal line: unchanged, or, where it holds a character
    that is not printable (``str.isprintable``: a newline or an escape sequence in an ONNX name,
    U+2028 LINE SEPARATOR, U+202E which reverses the text after it), Python's quoted ``repr``
    with those characters escaped (a raw newline in a printed output name had split the line,
    and an escape sequence reached the terminal; fresh-user checks).

    >>> printable("logits"), printable("a\\nb")
    ('logits', "'a\\\\nb'")
    """
    if text.isprintable():
        return text
    return repr(text)


def one_line(message: str) -> str:
    """``message`` on one line: every character that is not printable escaped as Python writes
    it (a newline as ``\\n``, an escape sequence as ``\\x1b``, U+2028 as ``\\u2028``). Error
    messages quote ONNX names and paths, which may hold them, and an answer of ``--serve`` is
    one line (a path or name in it had carried them raw; a fresh-user check).

    >>> one_line("input 'a\\nb': bad"), one_line("plain")
    ("input 'a\\\\nb': bad", 'plain')
    """
    if message.isprintable():
        return message
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in message)
