"""On/off switches read from the environment (``RAMIEL_BIND``, ``RAMIEL_COMPILE``, ...).

Every switch of Ramiel is on by default and read the same way: ``0``, ``false``, ``no`` or
``off`` (any case, surrounding blanks ignored) turn it off; ``1``, ``true``, ``yes``, ``on`` or an
empty or unset variable leave it on. Any other value (``RAMIEL_BIND=maybe``) also leaves it on,
with one ``RuntimeWarning`` per variable and value naming both, so a typo is seen instead of
silently taken as a choice: once per program, in its own process, not again in each worker
process it starts (they inherit the variable, and :data:`WARNED_ENV`), and under ``torchrun`` on
rank 0 only. Imports nothing heavy: :mod:`ramiel.omp` reads its switch before
torch starts.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping

__all__ = ["OFF", "ON", "SWITCHES", "check_switches", "switch_on"]

OFF = ("0", "false", "no", "off")
"""Values (lower case, stripped) that turn a switch off."""

ON = ("", "1", "true", "yes", "on")
"""Values (lower case, stripped) that leave a switch on without a warning."""

SWITCHES = (
    "RAMIEL_ADAPT_THREADS",
    "RAMIEL_AUTO_SEGMENTS",
    "RAMIEL_BIND",
    "RAMIEL_COMPILE",
    "RAMIEL_MALLOC",
    "RAMIEL_OMP",
)
"""Every switch (the ``ENV_DISABLE`` of :mod:`ramiel.runtime.contention`,
:mod:`ramiel.passes.compile_segments` (read by the compiler), :mod:`~ramiel.runtime.binding`,
:mod:`~ramiel.runtime.compiled`, :mod:`~ramiel.runtime.memory` and :mod:`ramiel.omp`), which
:func:`check_switches` reads."""

_warned: set[tuple[str, str]] = set()

WARNED_ENV = "RAMIEL_WARNED"
"""Set by the process that warned, for the processes it starts later (the workers of the
processes backend inherit the switches too): ``NAME=value`` lines they do not warn about again."""


def check_switches(environ: Mapping[str, str] | None = None, warn: bool = True) -> None:
    """Read every switch of :data:`SWITCHES` once, so that an odd value warns here, in the
    program's own process (``ramiel.runtime.start`` and a generated module's command line call
    it), whichever of them its workers read; ``warn=False`` (a torchrun rank but rank 0) takes
    them as warned without a word."""
    if not warn:
        env = os.environ if environ is None else environ
        _warned.update((n, env[n]) for n in SWITCHES if n in env)
        return
    for name in SWITCHES:
        switch_on(name, environ)


def switch_on(name: str, environ: Mapping[str, str] | None = None) -> bool:
    """Whether the switch ``name`` (an environment variable, on by default) is on in
    ``environ`` (default ``os.environ``); see the module docstring for the values. Warns
    (``RuntimeWarning``, once per name and value) for a value that is neither on nor off."""
    env = os.environ if environ is None else environ
    raw = env.get(name)
    if raw is None:
        return True
    value = raw.strip().lower()
    if value in OFF:
        return False
    if value not in ON and (name, raw) not in _warned:
        _warned.add((name, raw))
        if environ is None or environ is os.environ:  # once per program (WARNED_ENV)
            seen = os.environ.get(WARNED_ENV, "").split("\n")
            if f"{name}={raw}" in seen:
                return True  # the process that started this one warned
            os.environ[WARNED_ENV] = "\n".join([*filter(None, seen), f"{name}={raw}"])
        warnings.warn(
            f"{name}={raw!r} is none of 0/1, false/true, no/yes, off/on: taken as on "
            f"(the default); set {name}=0 to turn it off",
            RuntimeWarning,
            stacklevel=2,
        )
    return True
