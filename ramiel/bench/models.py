"""The models ``ramiel bench`` times and its targets. The model names (the ONNX zoo models of the
onnx wheel, the project's models of :mod:`ramiel.models`, the HuggingFace ones of
:mod:`ramiel.hf_models`) are :mod:`ramiel.model_names`', re-exported here."""

from __future__ import annotations

from ramiel.model_names import (
    PROJECT_MODELS,
    ModelSpec,
    default_models,
    resolve_models,
    zoo_dir,
    zoo_models,
)

__all__ = [
    "PROJECT_MODELS",
    "QUICK_MODEL",
    "TARGET_BUSY_RATIO",
    "TARGET_COMPILE_S",
    "TARGET_EFFICIENCY",
    "TARGET_MODELS",
    "ModelSpec",
    "default_models",
    "resolve_models",
    "zoo_dir",
    "zoo_models",
]


TARGET_MODELS = ("light_inception_v1", "light_inception_v2", "ramiel_inception")
"""Models with an efficiency target (>= 80 % of min(P, W/CP) with P 1-thread workers)."""


TARGET_EFFICIENCY = 0.8


TARGET_COMPILE_S = 2.0


TARGET_BUSY_RATIO = 1.5
"""The default program's median under one busy background core, at most this times its quiet
median (issue #12)."""


QUICK_MODEL = "light_squeezenet"
"""The model of ``ramiel bench --quick`` without model arguments (a smoke test of a minute)."""
