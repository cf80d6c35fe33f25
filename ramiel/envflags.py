"""On/off switches read from the environment (``RAMIEL_BIND``, ``RAMIEL_COMPILE``, ...).

Every switch of Ramiel is on by default and read the same way: ``0``, ``false``, ``no`` or
``off`` (any case, surrounding blanks ignored) turn it off; ``1``, ``true``, ``yes``, ``on`` or an
empty or unset variable leave it on. Any other value (``RAMIEL_BIND=maybe``) also leaves it on,
with one ``RuntimeWarning`` per variable and value naming both, so a typo is seen instead of
silently taken as a choice; in the program's own process only, not again in each worker process
of the processes backend (which inherit the variable). Imports nothing heavy: :mod:`ramiel.omp` reads its switch before
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

SWITCHES = ("RAMIEL_ADAPT_THREADS", "RAMIEL_BIND", "RAMIEL_COMPILE", "RAMIEL_MALLOC", "RAMIEL_OMP")
"""Every switch (the ``ENV_DISABLE`` of :mod:`ramiel.runtime.contention`, :mod:`~ramiel.runtime.binding`,
:mod:`~ramiel.runtime.compiled`, :mod:`~ramiel.runtime.memory` and :mod:`ramiel.omp`), which
:func:`check_switches` reads."""

_warned: set[tuple[str, str]] = set()


def check_switches(environ: Mapping[str, str] | None = None) -> None:
    """Read every switch of :data:`SWITCHES` once, so that an odd value warns here, in the
    program's own process (``ramiel.runtime.start`` calls it), whichever of them its workers
    read."""
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
        if _in_worker_process():
            return True  # the program's own process warns: once, not once per worker
        warnings.warn(
            f"{name}={raw!r} is none of 0/1, false/true, no/yes, off/on: taken as on "
            f"(the default); set {name}=0 to turn it off",
            RuntimeWarning,
            stacklevel=2,
        )
    return True


def _in_worker_process() -> bool:
    """Whether this process was started by :mod:`multiprocessing` (a worker of the processes
    backend, or a rank the distributed backend started itself; ``multiprocessing.parent_process``
    is None in a program started otherwise, e.g. by ``torchrun``)."""
    from multiprocessing import parent_process  # lazy: only for an odd value

    return parent_process() is not None
