"""Resize (opsets 10-19) and Upsample (opsets 7-9).

The output size and the coordinate scales are decided at compile time from the constant
``scales``/``sizes`` (with ``axes`` and ``keep_aspect_ratio_policy`` from opset 18), as the ONNX
reference does: with scales, ``out = floor(in * scale)`` and coordinates use the given scale; with
sizes, ``scale = out / in``. The code is the plain ``F.interpolate``/``repeat_interleave`` call
where it computes exactly the spec's value:

- nearest with an integer upscale factor k and (asymmetric + floor) or (half_pixel /
  pytorch_half_pixel + round_prefer_floor/ceil): every output copies input ``j // k``
  (``F.interpolate(mode="nearest")`` for powers of two, whose reciprocals are exact,
  ``repeat_interleave`` otherwise);
- linear/cubic with half_pixel (pytorch_half_pixel when no output length is 1) or
  align_corners, no antialias, A = -0.75 and no
  exclude_outside for cubic, on the spatial dims of a 3-D to 5-D (cubic: 4-D) float tensor —
  PyTorch's ``align_corners=False`` coordinates are ONNX's half_pixel ones, clamped to the edge
  like the spec's edge padding;

and ``ops.resize`` (exact separable interpolation, any rank and mode) otherwise. A 4-D
``F.interpolate`` runs on a channels-last tensor (``through_channels_last``): measured
(``python bench/layout_ops.py resize``, 1 thread, load 13.5) nearest x2 on (1, 256, 28, 28)
10.4 ms contiguous, 0.20 ms channels-last; bilinear x2 on (1, 64, 56, 56) 4.9 ms, 0.31 ms. Resize-10 and
Upsample use asymmetric coordinates and onnxruntime's nearest rule (floor when upsampling, ceil
when downsampling), the only oracle for these deprecated versions.
"""

from __future__ import annotations

import math

import numpy as np

from ramiel.errors import UnsupportedOpError
from ramiel.lowering.api import SHAPE_RULES, NodeView, is_float, rule, with_defaults
from ramiel.lowering.common import const, has_input, in_dtype, shape
from ramiel.lowering.nn import through_channels_last


def _resize_plan(node: NodeView) -> dict | str:
    """Static parameters of a Resize/Upsample node, or a reason it cannot be lowered."""
    xs = shape(node, 0)
    if xs is None:
        return "needs a static input shape"
    r = len(xs)
    a = node.attrs
    legacy = node.op_type == "Upsample" or node.opset < 11
    plan = {
        "mode": a.get("mode") or "nearest",
        "coord": "asymmetric" if legacy else a.get("coordinate_transformation_mode"),
        "nearest_mode": "simple" if legacy else a.get("nearest_mode"),
        "cubic_a": a.get("cubic_coeff_a", -0.75),
        "exclude_outside": bool(a.get("exclude_outside", 0) or 0),
        "extrapolation_value": a.get("extrapolation_value", 0.0),
        "antialias": bool(a.get("antialias", 0) or 0),
        "roi": None,
    }
    if plan["mode"] == "bilinear":  # Upsample-7 accepted this spelling
        plan["mode"] = "linear"
    if plan["mode"] not in ("nearest", "linear", "cubic"):
        return f"mode='{plan['mode']}'"
    if node.op_type == "Upsample" and node.opset < 9:
        scales, sizes = a.get("scales"), None
    elif legacy:
        scales, sizes = const(node, 1), None
        if scales is None:
            return "scales must be a compile-time constant"
    else:
        sc, sz = const(node, 2), const(node, 3)
        if has_input(node, 3) and sz is None:
            return "sizes must be a compile-time constant"
        if has_input(node, 2) and sc is None and not has_input(node, 3):
            return "scales must be a compile-time constant"
        scales = sc if sc is not None and np.size(sc) > 0 else None
        sizes = sz if sz is not None and np.size(sz) > 0 else None
        if plan["coord"] == "tf_crop_and_resize":
            roi = const(node, 1)
            if has_input(node, 1) and roi is None:
                return "roi must be a compile-time constant"
            if roi is not None and np.size(roi) > 0:
                plan["roi"] = [float(v) for v in np.asarray(roi, dtype=np.float64).reshape(-1)]
    if scales is None and sizes is None:
        return "neither scales nor sizes is given"
    axes = a.get("axes") if not legacy else None
    axes = list(range(r)) if axes is None else [ax + r if ax < 0 else ax for ax in axes]
    if plan["roi"] is not None and len(plan["roi"]) == 2 * len(axes) and len(axes) != r:
        full = [0.0] * r + [1.0] * r
        for i, ax in enumerate(axes):
            full[ax], full[r + ax] = plan["roi"][i], plan["roi"][len(axes) + i]
        plan["roi"] = full
    out = list(xs)
    scl = [1.0] * r
    if sizes is not None:
        targets = [int(v) for v in np.asarray(sizes).reshape(-1)]
        ratios = {ax: targets[i] / xs[ax] for i, ax in enumerate(axes)}
        policy = a.get("keep_aspect_ratio_policy") or "stretch"
        if policy == "stretch":
            for ax, s in ratios.items():
                scl[ax] = s
                out[ax] = targets[axes.index(ax)]
        elif policy in ("not_larger", "not_smaller"):
            s = min(ratios.values()) if policy == "not_larger" else max(ratios.values())
            for ax in axes:
                scl[ax] = s
                out[ax] = int(s * xs[ax] + 0.5)
        else:
            return f"keep_aspect_ratio_policy='{policy}'"
    else:
        vals = [float(np.float32(v)) for v in np.asarray(scales).reshape(-1)]
        if len(vals) != len(axes):
            return f"{len(vals)} scales for {len(axes)} axes"
        for i, ax in enumerate(axes):
            scl[ax] = vals[i]
            # in float32, as onnxruntime (7 * 1.8571428f: 13, where the double product is
            # 12.9999996: the size PyTorch's exporter declares too)
            out[ax] = int(math.floor(np.float32(xs[ax]) * np.float32(vals[i])))
    plan["sizes"], plan["scales"], plan["in"] = out, scl, list(xs)
    return plan


def _resize_output_shapes(node: NodeView) -> list[tuple[int, ...] | None]:
    """The output shape as :func:`_resize_plan` computes it (onnxruntime's: input size times
    scale in float32): ONNX shape inference computed 12 for an Upsample of 7 rows by the
    float32 scale 1.8571428 (13/7 rounded down), where onnxruntime and PyTorch's exporter have
    13, and the model was refused (opset 9 and 10 exports of ``F.interpolate(size=...)``; a
    fresh-user check)."""
    p = _resize_plan(node)
    return [None if isinstance(p, str) else tuple(p["sizes"])]


SHAPE_RULES["Resize"] = SHAPE_RULES["Upsample"] = _resize_output_shapes


def _check_resize(node: NodeView) -> str | None:
    p = _resize_plan(node)
    if isinstance(p, str):
        return p
    if p["coord"] not in (
        "half_pixel",
        "half_pixel_symmetric",
        "pytorch_half_pixel",
        "align_corners",
        "asymmetric",
        "tf_crop_and_resize",
    ):
        return f"coordinate_transformation_mode='{p['coord']}'"
    if p["mode"] == "nearest" and p["nearest_mode"] not in (
        "round_prefer_floor",
        "round_prefer_ceil",
        "floor",
        "ceil",
        "simple",
    ):
        return f"nearest_mode='{p['nearest_mode']}'"
    return None


def _resized_axes(p: dict) -> list[int]:
    return [
        i
        for i, (a, b, s) in enumerate(zip(p["in"], p["sizes"], p["scales"], strict=True))
        if a != b or s != 1.0
    ]


def _nearest_integer_factors(p: dict) -> dict[int, int] | None:
    """{axis: k} if nearest resizing is an exact integer upscale copying input j // k."""
    if p["mode"] != "nearest":
        return None
    ok_floor = p["coord"] == "asymmetric" and p["nearest_mode"] in ("floor", "simple")
    ok_round = p["coord"] in ("half_pixel", "pytorch_half_pixel", "half_pixel_symmetric") and p[
        "nearest_mode"
    ] in ("round_prefer_floor", "round_prefer_ceil")
    if not (ok_floor or ok_round):
        return None
    factors = {}
    for ax in _resized_axes(p):
        s, a, b = p["scales"], p["in"], p["sizes"]
        k = s[ax]
        if k != int(k) or k < 1 or b[ax] != a[ax] * int(k):
            return None
        if p["coord"] == "pytorch_half_pixel" and b[ax] == 1:
            return None
        factors[ax] = int(k)
    return factors


def _torch_interp_mode(p: dict, dt: str) -> str | None:
    """The F.interpolate mode computing exactly this linear/cubic resize, or None."""
    r = len(p["in"])
    axes = _resized_axes(p)
    if p["mode"] == "nearest" or not is_float(dt) or p["antialias"] or not axes:
        return None
    if min(axes) < 2 or r not in (3, 4, 5):
        return None
    if p["coord"] == "pytorch_half_pixel" and any(p["sizes"][ax] == 1 for ax in axes):
        return None
    if p["coord"] not in ("half_pixel", "pytorch_half_pixel", "align_corners"):
        return None
    if p["mode"] == "cubic":
        if r != 4 or p["cubic_a"] != -0.75 or p["exclude_outside"]:
            return None
        return "bicubic"
    return {3: "linear", 4: "bilinear", 5: "trilinear"}[r]


def _nearest_interpolates(node: NodeView, p: dict, factors: dict[int, int]) -> bool:
    """Whether an integer nearest upscale is ``F.interpolate(mode="nearest")``: factors of
    powers of two on the spatial axes of a 3-D to 5-D float (or uint8) tensor."""
    r = len(p["in"])
    ks = [factors.get(ax, 1) for ax in range(2, r)]
    pow2 = all(k & (k - 1) == 0 for k in ks)
    dt = in_dtype(node)
    interp_ok = is_float(dt) or dt == "uint8"  # torch's nearest kernels: no int32/int64
    return bool(factors) and min(factors) >= 2 and 3 <= r <= 5 and pow2 and interp_ok


def interpolates(node: NodeView) -> bool:
    """Whether the Resize/Upsample ``node`` is lowered to one ``F.interpolate`` call (the form
    that runs 10-40x faster on a channels-last tensor, see :mod:`ramiel.layout`)."""
    node = with_defaults(node)
    p = _resize_plan(node)
    if isinstance(p, str) or _check_resize(node) is not None or not _resized_axes(p):
        return False
    factors = _nearest_integer_factors(p)
    if factors is not None:
        return _nearest_interpolates(node, p, factors)
    return _torch_interp_mode(p, in_dtype(node)) is not None


@rule("Resize", "Upsample", check=_check_resize)
def _resize(node: NodeView, args, em):
    """Resize / Upsample: see the module docstring for the forms chosen."""
    p = _resize_plan(node)
    if isinstance(p, str):  # what _check_resize reports; a caller that skipped the check
        raise UnsupportedOpError([(node.op_type, node.name, node.opset, p)])
    x = args[0]
    if not _resized_axes(p):
        return [x]
    r = len(p["in"])
    factors = _nearest_integer_factors(p)
    if factors is not None:
        ks = [factors.get(ax, 1) for ax in range(2, r)]
        if _nearest_interpolates(node, p, factors):
            sf = float(ks[0]) if len(set(ks)) == 1 else tuple(float(k) for k in ks)

            def nearest(t):
                return em.call("F.interpolate", t, scale_factor=sf, mode="nearest")

            return [through_channels_last(node, em, x, nearest)]
        for ax, k in sorted(factors.items()):
            x = em.method(x, "repeat_interleave", k, dim=ax)
        return [x]
    tmode = _torch_interp_mode(p, in_dtype(node))
    if tmode is not None:
        kwargs: dict = {"mode": tmode, "align_corners": p["coord"] == "align_corners"}
        sizes = tuple(p["sizes"][2:])
        given = const(node, 3)
        by_sizes = node.opset >= 11 and given is not None and np.size(given) > 0
        if by_sizes or p["coord"] == "align_corners":
            how = {"size": sizes}
        else:
            how = {"scale_factor": tuple(p["scales"][2:])}

        def interpolate(t):
            return em.call("F.interpolate", t, **how, **kwargs)

        return [through_channels_last(node, em, x, interpolate)]
    kwargs = {"mode": p["mode"]}
    if p["coord"] != "half_pixel":
        kwargs["coordinate_transformation_mode"] = p["coord"]
    if p["mode"] == "nearest" and p["nearest_mode"] != "round_prefer_floor":
        kwargs["nearest_mode"] = p["nearest_mode"]
    if p["mode"] == "cubic" and p["cubic_a"] != -0.75:
        kwargs["cubic_coeff_a"] = p["cubic_a"]
    if p["exclude_outside"]:
        kwargs["exclude_outside"] = True
    if p["coord"] == "tf_crop_and_resize":
        kwargs["extrapolation_value"] = p["extrapolation_value"]
        if p["roi"] is not None:
            kwargs["roi"] = tuple(p["roi"])
    if p["antialias"]:
        kwargs["antialias"] = True
    return [em.call("ops.resize", x, tuple(p["sizes"]), tuple(p["scales"]), **kwargs)]
