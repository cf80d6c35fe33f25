"""An :class:`~ramiel.lowering.api.Emitter` that runs every call eagerly with torch.

It lets lowering rules be tested without the rest of the compiler: each ``call``/``method`` is
resolved in the namespace of a generated module (``torch``, ``F``, ``ops``, ``operator``, ``math``)
and executed at once. Values are wrapped in :class:`EvalValue`, so a rule that tries to look at a
runtime value (``args[0].shape``) fails loudly instead of silently generating dynamic code. Every
call is also recorded as one line of pseudo-Python in :attr:`EvalEmitter.lines`, which tests use
to check that simple attribute combinations produce the simple torch form.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from ramiel.lowering.api import Dtype, MemoryFormat
from ramiel.runtime import ops
from ramiel.weights import torch_from_numpy

NAMESPACE: dict[str, Any] = {"torch": torch, "F": F, "ops": ops, "operator": operator, "math": math}


class EvalValue:
    """An opaque runtime value produced by :class:`EvalEmitter` (``.obj`` holds the tensor)."""

    __slots__ = ("obj", "name")

    def __init__(self, obj: Any, name: str):
        self.obj = obj
        self.name = name

    def __repr__(self) -> str:
        return self.name


def torch_dtype(d: Dtype) -> torch.dtype:
    """The torch dtype of a :class:`Dtype` literal."""
    return getattr(torch, d.name)


def resolve(callee: str) -> Any:
    """Resolve a dotted callee name (``"F.conv2d"``) in the generated module's namespace."""
    head, *rest = callee.split(".")
    if head not in NAMESPACE:
        raise ValueError(f"callee {callee!r} is not in the generated module's namespace")
    obj = NAMESPACE[head]
    for part in rest:
        obj = getattr(obj, part)
    return obj


def _unwrap(a: Any) -> Any:
    if isinstance(a, EvalValue):
        return a.obj
    if isinstance(a, Dtype):
        return torch_dtype(a)
    if isinstance(a, MemoryFormat):
        return getattr(torch, a.name)
    if isinstance(a, tuple):
        return tuple(_unwrap(x) for x in a)
    if isinstance(a, list):
        return [_unwrap(x) for x in a]
    if isinstance(a, slice):
        return slice(_unwrap(a.start), _unwrap(a.stop), _unwrap(a.step))
    if a is None or isinstance(a, bool | int | float | str):
        return a
    raise TypeError(f"argument {a!r} of type {type(a).__name__} is not a Value or literal")


def _show(a: Any) -> str:
    if isinstance(a, Dtype | MemoryFormat):
        return f"torch.{a.name}"
    if isinstance(a, tuple):
        return "(" + ", ".join(_show(x) for x in a) + ("," if len(a) == 1 else "") + ")"
    if isinstance(a, list):
        return "[" + ", ".join(_show(x) for x in a) + "]"
    if isinstance(a, slice):
        parts = ["" if v is None else _show(v) for v in (a.start, a.stop)]
        s = ":".join(parts)
        return s + (f":{_show(a.step)}" if a.step is not None else "")
    return repr(a)


@dataclass
class EvalEmitter:
    """Runs each emitted call eagerly; ``lines`` records them as pseudo-Python."""

    lines: list[str] = field(default_factory=list)
    counter: int = 0

    def wrap(self, obj: Any, name: str | None = None) -> EvalValue:
        """Wrap a runtime object (a graph input, say) as a Value."""
        if name is None:
            self.counter += 1
            name = f"t{self.counter}"
        return EvalValue(obj, name)

    def _record(self, target: str, args: tuple, kwargs: dict) -> EvalValue:
        self.counter += 1
        name = f"t{self.counter}"
        shown = [_show(a) for a in args] + [f"{k}={_show(v)}" for k, v in kwargs.items()]
        self.lines.append(f"{name} = {target}({', '.join(shown)})")
        return EvalValue(None, name)

    def call(self, callee: str, *args: Any, **kwargs: Any) -> EvalValue:
        fn = resolve(callee)
        out = self._record(callee, args, kwargs)
        out.obj = fn(*_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()})
        return out

    def constant(self, value: Any, source: Any, tag: str) -> EvalValue:
        """A compile-time constant derived from ``source`` (see ``Emitter.constant``)."""
        name = f"{getattr(source, 'name', 'w')}__{tag}"
        self.lines.append(f"{name} = <constant {tuple(np.shape(value))}>")
        return EvalValue(torch_from_numpy(np.array(value, order="C", copy=True)), name)

    def method(self, obj: Any, name: str, *args: Any, **kwargs: Any) -> EvalValue:
        if not isinstance(obj, EvalValue):
            raise TypeError(f"method {name!r} called on {obj!r}, which is not a Value")
        out = self._record(f"{obj.name}.{name}", args, kwargs)
        out.obj = getattr(obj.obj, name)(
            *_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()}
        )
        return out
