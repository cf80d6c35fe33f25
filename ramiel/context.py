"""The xDSL context Ramiel's tools and passes run with: the dialects and the session's weights.

:class:`RamielContext` is xDSL's :class:`~xdsl.context.Context` (every dialect of
:func:`ramiel.dialects.registry.register_dialects`) that also owns the
:class:`~ramiel.weights.WeightStores` of the session: the directory a relative ``ramiel.weights``
path is resolved against (the IR file's) and the open weight stores, with the tensors passes add
before the IR is written. It plays the part of MLIR's ``MLIRContext``, which owns the resource
blobs that ``dense_resource`` attributes name; a pass reads them through its ``ctx``
(:func:`module_store`), the printer and the compiler take the :class:`WeightStores` as an
argument. Whoever reads IR makes the context: ``ramiel-opt`` and ``ramiel-translate`` for the
input file's directory, ``ramiel compile`` for its output directory
(:func:`make_context` with ``weights_dir``).
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from ramiel.attrs import WEIGHTS_ATTR, get_str
from ramiel.dialects.registry import register_dialects
from ramiel.errors import RamielError

if TYPE_CHECKING:
    from ramiel.weights import WeightStore, WeightStores

__all__ = ["RamielContext", "make_context", "module_store", "weight_stores"]


@dataclass
class RamielContext(Context):
    """xDSL's context with the session's weight stores (see the module docstring).

    ``weights_dir``: the directory a relative ``ramiel.weights`` path is resolved against (the
    IR file's; default: the current directory when the context is made). :attr:`weights` is made
    on first use (so that a tool that never reads a weight does not import numpy and onnx).
    :meth:`clone` (xDSL's ``apply_to_clone``) copies the registrations and shares the stores: a
    clone reads the same files and sees the same new tensors.
    """

    weights_dir: str = field(default_factory=os.getcwd)
    _weights: WeightStores | None = field(default=None, repr=False, compare=False)

    @property
    def weights(self) -> WeightStores:
        """The session's weight stores, resolving relative paths against ``weights_dir``."""
        if self._weights is None:
            from ramiel.weights import WeightStores  # lazy: numpy,onnx (ramiel-translate's start)

            self._weights = WeightStores(self.weights_dir)
        return self._weights

    def clone(self) -> RamielContext:
        base = super().clone()
        fields = {f.name: getattr(base, f.name) for f in dataclasses.fields(Context)}
        return RamielContext(**fields, weights_dir=self.weights_dir, _weights=self.weights)


def make_context(weights_dir: str | None = None) -> RamielContext:
    """A fresh context with all of Ramiel's dialects registered and weight stores of its own,
    resolving a relative ``ramiel.weights`` path against ``weights_dir`` (the IR file's
    directory; default: the current directory)."""
    ctx = RamielContext(weights_dir=os.path.abspath(weights_dir or os.getcwd()))
    register_dialects(ctx)
    return ctx


def weight_stores(ctx: Context) -> WeightStores:
    """The weight stores ``ctx`` owns. Raises :class:`RamielError` for a plain xDSL context
    (which owns none)."""
    if isinstance(ctx, RamielContext):
        return ctx.weights
    raise RamielError(
        "this IR names a weights file (module attribute ramiel.weights); run Ramiel's passes "
        "with a context that owns the weight stores: ramiel.context.make_context(weights_dir)"
    )


def module_store(ctx: Context, module: ModuleOp) -> WeightStore | None:
    """The store of ``module``'s weights file in ``ctx``, ``None`` if it names none (then the
    pass keeps new tensors inline and a plain xDSL context will do)."""
    if get_str(module, WEIGHTS_ATTR) is None:
        return None
    return weight_stores(ctx).of(module)
