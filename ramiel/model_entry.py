"""The entry of a model registry (:class:`ModelEntry`) and what the registries' builders share.

:data:`ramiel.models.MODELS` (the project's own models) and :data:`ramiel.hf_models.HF_MODELS`
(``transformers`` models) are both made of these entries; :func:`ramiel.models.all_models` joins
them. This module sits below both so that neither imports the other's internals.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn


@dataclass(frozen=True)
class ModelEntry:
    """How to build one registered model and its example input."""

    build: Callable[[], nn.Module]
    input_names: tuple[str, ...]
    output_names: tuple[str, ...]
    make_inputs: Callable[[], tuple[torch.Tensor, ...]]
    description: str
    min_opset: int = 11
    #: export the :func:`torch.jit.script`-ed module, so data-dependent ``if``/``while`` become
    #: ONNX ``If``/``Loop`` (tracing would freeze the path the example input takes)
    script: bool = False
    #: ``(input, output)`` pairs of a stateful model: the output is fed back as that input on
    #: the next call (a streaming model's recurrent state)
    state: tuple[tuple[str, str], ...] = ()


def randomise_norms(module: nn.Module) -> None:
    """Give normalisation layers non-trivial statistics and affine parameters.

    Fresh BatchNorm is the identity in eval mode and fresh LayerNorm has unit scale and zero
    shift (identical initializers, which the exporter merges into ``Identity`` nodes); random
    values make a wrong folding or a swapped scale/shift visible in numeric tests.
    """
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, nn.BatchNorm2d):
                assert m.running_mean is not None and m.running_var is not None
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
            if isinstance(m, nn.BatchNorm2d | nn.LayerNorm):
                m.weight.uniform_(0.8, 1.2)
                m.bias.uniform_(-0.1, 0.1)
