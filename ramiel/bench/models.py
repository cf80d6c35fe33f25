"""The models ``ramiel bench`` times: the ONNX zoo models of the onnx wheel, the project's
models (:mod:`ramiel.models`) and the HuggingFace ones (:mod:`ramiel.hf_models`), and the targets."""

from __future__ import annotations

import glob
import os
from collections.abc import Sequence
from dataclasses import dataclass

import onnx

PROJECT_MODELS = ("inception", "transformer")
"""The project's own models (:mod:`ramiel.models`) that ``ramiel bench`` runs by default."""


TARGET_MODELS = ("light_inception_v1", "light_inception_v2", "ramiel_inception")
"""Models with an efficiency target (>= 80 % of min(P, W/CP) with P 1-thread workers)."""


TARGET_EFFICIENCY = 0.8


TARGET_COMPILE_S = 2.0


TARGET_BUSY_RATIO = 1.5
"""The default program's median under one busy background core, at most this times its quiet
median (issue #12)."""


QUICK_MODEL = "light_squeezenet"
"""The model of ``ramiel bench --quick`` without model arguments (a smoke test of a minute)."""


def zoo_dir() -> str:
    """``onnx/backend/test/data/light`` of the installed onnx wheel."""
    return os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")


def zoo_models() -> dict[str, str]:
    """Zoo model name (``light_inception_v1``) -> path, sorted by name."""
    paths = sorted(glob.glob(os.path.join(zoo_dir(), "light_*.onnx")))
    return {os.path.basename(p)[: -len(".onnx")]: p for p in paths}


@dataclass(frozen=True)
class ModelSpec:
    """A model to benchmark: a display name and an ONNX path (or a project model to export)."""

    name: str
    path: str | None = None
    project: str | None = None

    def resolve(self) -> str:
        """The ONNX file (exports a project model into the model cache on first use)."""
        if self.path is not None:
            return self.path
        from ramiel.models import export_model  # lazy: torch

        assert self.project is not None
        return export_model(self.project)


def default_models() -> list[ModelSpec]:
    """The zoo models of the onnx wheel, then the project's inception CNN and transformer."""
    out = [ModelSpec(n, p) for n, p in zoo_models().items()]
    return out + [ModelSpec(f"ramiel_{m}", project=m) for m in PROJECT_MODELS]


def resolve_models(args: Sequence[str]) -> list[ModelSpec]:
    """Model arguments -> specs: an ``.onnx`` path, a zoo name (``light_vgg19`` or ``vgg19``), or
    a project model (``inception``, ``transformer``, ``transformer_torch``, optionally with the
    ``ramiel_`` prefix), or a model built with ``transformers`` (``hf_bert``, ``hf_resnet50``...,
    :mod:`ramiel.hf_models`). No arguments: :func:`default_models`.

    Raises:
        ValueError: an argument that is none of these.
    """
    if not args:
        return default_models()
    from ramiel.hf_models import HF_MODELS  # lazy: torch
    from ramiel.models import MODELS  # lazy: torch

    zoo = zoo_models()
    out = []
    for a in args:
        if a.endswith(".onnx") or os.path.sep in a:
            if not os.path.isfile(a):
                raise ValueError(f"no such model file: {a}")
            out.append(ModelSpec(os.path.basename(a).removesuffix(".onnx"), a))
        elif a in zoo or f"light_{a}" in zoo:
            name = a if a in zoo else f"light_{a}"
            out.append(ModelSpec(name, zoo[name]))
        elif a in HF_MODELS:
            out.append(ModelSpec(a, project=a))
        elif a.removeprefix("ramiel_") in MODELS:
            m = a.removeprefix("ramiel_")
            out.append(ModelSpec(f"ramiel_{m}", project=m))
        else:
            known = ", ".join([*zoo, *MODELS, *HF_MODELS])
            raise ValueError(f"unknown model {a!r}: not an .onnx file; known names: {known}")
    return out
