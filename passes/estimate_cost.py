"""``--estimate-cost``: annotate every op with its estimated cost (µs) and result sizes (bytes).

Sets, on every compute op of ``@main`` (``onnx`` ops inside or outside clusters):

* ``ramiel.cost_us`` (f64): the estimated execution time, from the analytic model of
  :mod:`ramiel.cost_model` (FLOPs and bytes with constants calibrated on this machine; the
  default, deterministic) or, with ``profile=FILE``, from a profile database of measured per-op
  times written by ``ramiel profile`` (ops missing from it fall back to the analytic model, with a
  warning giving their count), plus the memory-format conversions the lowering places before the
  op (``--assign-layout``: :func:`ramiel.cost_model.conversions_us`);
* ``ramiel.result_bytes`` (array of i64): the size in bytes of each result;

(also on the ops inside the regions of ``onnx.If``/``Loop``/``Scan``, whose own cost is then the
dearer branch, or the body times the trip count: :func:`ramiel.cost_model.region_cost_us`),
and the module attribute ``ramiel.backend`` (``threads``, ``processes`` or ``distributed``,
option ``backend``), which selects the per-message latency and bandwidth used for transfer costs
(edge weights) by the clustering passes: the defaults measured on this machine
(:data:`ramiel.cost_model.TRANSFER_COST`; for ``distributed``, gloo over loopback). With
``transfer-cost=FILE`` (a JSON file written by ``ramiel calibrate -o FILE``, e.g. measured between
two machines with ``torchrun``) the module attribute ``ramiel.transfer_cost = [latency_us,
us_per_byte]`` replaces the backend's default.

Options: ``profile=FILE``, ``backend=threads|processes|distributed``, ``transfer-cost=FILE``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import (
    ModuleOp,
)

from ramiel.attrs import (
    BACKEND_ATTR,
    BYTES_ATTR,
    TRANSFER_COST_ATTR,
    remove,
    set_floats,
    set_ints,
    set_str,
)
from ramiel.clustering import (
    is_ambient,
    main_func,
    op_cost,
    set_cost,
)
from ramiel.cost_model import (
    Backend,
    ProfileDB,
    analytic_cost_us,
    conversions_us,
    load_transfer_cost,
    profile_key,
    region_cost_us,
    tensor_bytes,
)
from ramiel.dialects.cluster import RecvOp, SendOp, YieldOp
from ramiel.dialects.onnx import OnnxOp
from ramiel.passes import TypedOptions


@dataclass(frozen=True)
class EstimateCost(TypedOptions):
    """See the module docstring."""

    name = "estimate-cost"

    profile: str | None = None
    backend: Backend = "threads"
    transfer_cost: str | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        model = load_transfer_cost(self.transfer_cost) if self.transfer_cost else None
        db = ProfileDB.load(self.profile) if self.profile else None
        fn = main_func(op)
        sends = {s.channel.data: s.value for s in fn.body.walk() if isinstance(s, SendOp)}
        missing = 0
        for o in fn.body.walk(region_first=True):  # the ops of a region before their op
            if (
                not isinstance(o, OnnxOp)
                or is_ambient(o)
                or isinstance(o, SendOp | RecvOp | YieldOp)
            ):
                continue
            if o.regions:  # If, Loop, Scan: from the costs just set on their regions' ops
                set_cost(o, region_cost_us(o, lambda x: op_cost(x, warn=False)))
                set_ints(o, BYTES_ATTR, [tensor_bytes(r.type) for r in o.results])
                continue
            us = db.times.get(profile_key(o)) if db is not None else None
            if us is None:
                missing += db is not None
                us = analytic_cost_us(o)
            set_cost(o, round(us + conversions_us(o, sends), 3))
            set_ints(o, BYTES_ATTR, [tensor_bytes(r.type) for r in o.results])
        if missing:
            print(
                f"warning: {missing} op(s) are not in the profile database {self.profile}; "
                "their cost is the analytic estimate",
                file=sys.stderr,
            )
        set_str(op, BACKEND_ATTR, self.backend)
        if model is not None:
            set_floats(op, TRANSFER_COST_ATTR, model)
        else:
            remove(op, TRANSFER_COST_ATTR)
