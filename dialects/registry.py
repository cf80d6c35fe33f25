"""The dialects Ramiel's tools load: builtin, func, and Ramiel's own (onnx, cluster, torchpy).

The context the tools make (with the weight stores) is :func:`ramiel.context.make_context`.
"""

from __future__ import annotations

import functools
import importlib

from xdsl.context import Context
from xdsl.dialects.builtin import Builtin
from xdsl.dialects.func import Func

#: dialect name -> (module, attribute) of Ramiel's own dialects, loaded lazily.
RAMIEL_DIALECTS: dict[str, tuple[str, str]] = {
    "onnx": ("ramiel.dialects.onnx", "ONNX"),
    "cluster": ("ramiel.dialects.cluster", "Cluster"),
    "torchpy": ("ramiel.dialects.torchpy", "Torchpy"),
}


def register_dialects(ctx: Context) -> Context:
    """Register builtin, func and every Ramiel dialect that exists in ``ctx``."""
    for d in (Builtin, Func):
        if d.name not in ctx.registered_dialect_names:
            ctx.load_dialect(d)
    for name, (mod, attr) in RAMIEL_DIALECTS.items():
        if name in ctx.registered_dialect_names:
            continue
        try:
            m = importlib.import_module(mod)
        except ModuleNotFoundError as e:
            if e.name == mod:  # dialect not written yet
                continue
            raise
        ctx.register_dialect(name, functools.partial(getattr, m, attr))
    return ctx
