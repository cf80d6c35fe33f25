"""On/off switches read from the environment (``RAMIEL_BIND``, ``RAMIEL_COMPILE``, ...).

Every switch of Ramiel is on by default and read the same way: ``0``, ``false``, ``no`` or
``off`` (any case, surrounding blanks ignored) turn it off; ``1``, ``true``, ``yes``, ``on`` or an
empty or unset variable leave it on. Any other value (``RAMIEL_BIND=maybe``) also leaves it on,
with one ``RuntimeWarning`` per variable and value naming both, so a typo is seen instead of
silently taken as a choice. Imports nothing heavy: :mod:`ramiel.omp` reads its switch before
torch starts.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping

__all__ = ["OFF", "ON", "switch_on"]

OFF = ("0", "false", "no", "off")
"""Values (lower case, stripped) that turn a switch off."""

ON = ("", "1", "true", "yes", "on")
"""Values (lower case, stripped) that leave a switch on without a warning."""

_warned: set[tuple[str, str]] = set()


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
        warnings.warn(
            f"{name}={raw!r} is none of 0/1, false/true, no/yes, off/on: taken as on "
            f"(the default); set {name}=0 to turn it off",
            RuntimeWarning,
            stacklevel=2,
        )
    return True
