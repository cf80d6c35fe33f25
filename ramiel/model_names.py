"""Model names: what ``ramiel.compile``, the ``ramiel`` commands and ``ramiel bench`` take besides
an ONNX file.

A name is a zoo model of the onnx wheel (``light_vgg19`` or ``vgg19``: the files in
``onnx/backend/test/data/light``), one of the project's models (``inception``, ``transformer``,
..., optionally with the ``ramiel_`` prefix: :data:`ramiel.models.MODELS`, exported to ONNX on
first use into the model cache) or a model built with ``transformers`` from a config with random
weights (``hf_bert``, ``hf_resnet50``, ...: :data:`ramiel.hf_models.HF_MODELS`). Nothing is
downloaded.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Sequence
from dataclasses import dataclass

import onnx

from ramiel.errors import RamielError

__all__ = [
    "PROJECT_MODELS",
    "ModelSpec",
    "default_models",
    "model_path",
    "resolve_models",
    "zoo_dir",
    "zoo_models",
]

PROJECT_MODELS = ("inception", "transformer")
"""The project's own models (:mod:`ramiel.models`) that ``ramiel bench`` runs by default."""


def _is_path(name: str) -> bool:
    """Whether a model argument is a file's path, whether or not it exists: it ends in
    ``.onnx`` or holds a path separator (a model name does neither)."""
    return name.endswith(".onnx") or os.sep in name


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
        if _is_path(a):
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


def model_path(model: str) -> str:
    """The ONNX file that ``model`` names: ``model`` itself where it is a file or looks like one
    (ends in ``.onnx`` or has a path separator), else the file of the model of that name (see the
    module docstring; a project or ``transformers`` model is exported on first use, seconds).

    Raises:
        RamielError: neither a file nor a known name (the message lists the names), or empty.
    """
    if not model.strip():
        raise RamielError("the model is an empty string: give an ONNX file or a model name")
    if os.path.isfile(model) or _is_path(model):
        return model
    try:
        (spec,) = resolve_models([model])
    except ValueError as e:
        if os.path.isdir(model):
            raise RamielError(
                f"{model}: a directory, not an ONNX file; nor a model name: {e}"
            ) from None
        raise RamielError(f"{model}: no such file; {e}") from None
    return spec.resolve()
