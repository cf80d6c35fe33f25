"""Trial runs in a forked child process: where a run might crash the process (a segmentation
fault inside TorchScript's oneDNN Graph fusion, found once on EfficientNet-B0 with torch 2.13),
it runs first in a child, and only what survived there runs in the caller.

:func:`run_in_child` forks, gives the child one intra-op thread before it runs anything (a child
forked after the parent used its OpenMP thread pool hangs in the pool's next parallel region;
with one thread, PyTorch and oneDNN run inline and never enter one: ``shared/design.md`` §8),
sends the child's stdout and stderr to ``/dev/null`` and turns ``faulthandler`` off there (its
output would repeat the parent's warnings, or report the crash the trial is for), and returns
the short text the child's function returns. A child killed by a signal, one that exits without
a result, and one still running after ``timeout_s`` seconds (killed then) raise
:class:`TrialCrash`; a child stopped by a signal its whole process group got (SIGTERM from
torchrun stopping a rank, SIGINT from Ctrl-C, SIGHUP) raises :class:`TrialStopped`: the
process itself is being stopped, the trial did not fail. The child takes those signals' default
action (it had inherited the parent's Python handlers, and exited 1 through a rank's SIGTERM
handler: a failed trial, and a warning, while torchrun stopped the rank; seen in CI). The child
inherits the parent's memory copy-on-write: the trial sees the caller's tensors without copying
them, and whatever it writes stays in the child.

Source: ``fork(2)``, ``waitpid(2)``; Linux only (:func:`available`): elsewhere ``fork`` is
missing or unsafe with the frameworks loaded, and callers run without a trial.
"""

from __future__ import annotations

import faulthandler
import os
import signal
import sys
import time
from collections.abc import Callable

import torch

from ramiel.errors import RuntimeFailure

__all__ = [
    "MAX_RESULT_BYTES",
    "STOP_SIGNALS",
    "TrialCrash",
    "TrialStopped",
    "available",
    "run_in_child",
]

MAX_RESULT_BYTES = 4096
"""The most bytes of the child's result that reach the caller (it must fit a pipe's buffer,
which the child fills before it exits)."""


class TrialCrash(RuntimeError):
    """The trial's child died (a signal), exited without a result, or ran past its time."""


class TrialStopped(RuntimeFailure):
    """The trial's child was killed by one of :data:`STOP_SIGNALS`, which a launcher or a
    terminal sends to the whole process group: the caller is being stopped too. A runtime
    failure, not the trial's: callers let it through rather than fall back."""


STOP_SIGNALS = frozenset({signal.SIGTERM, signal.SIGINT, signal.SIGHUP})
"""The signals that stop a process from outside (torchrun's, the terminal's): blocked in the
forking thread across ``fork``; where the parent has a Python handler for one, the child sets
it to its default action before it unblocks them, so a child never runs the parent's handler."""


def available() -> bool:
    """Whether trial runs are possible here: Linux, with ``os.fork``."""
    return sys.platform.startswith("linux") and hasattr(os, "fork")


def run_in_child(fn: Callable[[], str], timeout_s: float, what: str = "trial") -> str:
    """``fn()``'s text (at most :data:`MAX_RESULT_BYTES` bytes of its UTF-8), run in a forked
    child with one intra-op thread (see the module docstring); ``what`` names the trial in
    errors. ``fn`` must catch its own exceptions and say what happened in its result.

    Raises :class:`TrialCrash` where the child died by a signal (``killed by signal SIGSEGV``),
    exited without a result (an exception escaped ``fn``), or ran longer than ``timeout_s``
    seconds (killed); :class:`TrialStopped` where one of :data:`STOP_SIGNALS` killed it; and
    ``RuntimeError`` where :func:`available` is false. An exception in the caller while it
    waits (``KeyboardInterrupt``) kills the child first."""
    if not available():
        raise RuntimeError(f"{what}: no fork on this platform")
    sys.stdout.flush()
    sys.stderr.flush()
    read_end, write_end = os.pipe()
    pid = -1
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        pid = os.fork()
    finally:
        if pid != 0:  # the parent (or no child): its signals as they were
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    if pid == 0:  # the child: never returns
        status = 1
        try:
            for number in STOP_SIGNALS:  # a Python handler's: the default action instead
                if callable(signal.getsignal(number)):  # (an ignored one stays ignored)
                    signal.signal(number, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
            os.close(read_end)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            faulthandler.disable()  # its report of the child's crash (python -X faulthandler)
            torch.set_num_threads(1)
            out = fn().encode("utf-8", "replace")[:MAX_RESULT_BYTES]
            os.write(write_end, out)
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    try:
        code = _wait(pid, timeout_s, what)
        with os.fdopen(read_end, "rb") as f:
            read_end = -1
            out = f.read()
    finally:
        if read_end >= 0:
            os.close(read_end)
    if -code in STOP_SIGNALS:
        raise TrialStopped(f"{what} stopped by signal {_signal_name(-code)}")
    if code < 0:
        raise TrialCrash(f"{what} killed by signal {_signal_name(-code)}")
    if code != 0:
        raise TrialCrash(f"{what} exited with status {code} without a result")
    return out.decode("utf-8", "replace")


def _wait(pid: int, timeout_s: float, what: str) -> int:
    """The exit code of child ``pid`` (``os.waitstatus_to_exitcode``: minus the signal that
    killed it), killed after ``timeout_s`` seconds (``TrialCrash``) or when the wait is
    interrupted."""
    deadline = time.monotonic() + timeout_s
    pause = 0.001
    done = False
    try:
        while True:
            got, status = os.waitpid(pid, os.WNOHANG)
            if got:
                done = True
                return os.waitstatus_to_exitcode(status)
            if time.monotonic() > deadline:
                raise TrialCrash(f"{what} still running after {timeout_s:.0f} s (killed)")
            time.sleep(pause)
            pause = min(pause * 2, 0.02)
    finally:
        if not done:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)


def _signal_name(number: int) -> str:
    """``SIGSEGV`` for 11; the number where the platform has no name for it."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)
