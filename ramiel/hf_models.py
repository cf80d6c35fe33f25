"""Models from the ``transformers`` library, built offline from a config with random weights.

Each entry builds a ``transformers`` model from a configuration object (no download, no hub
access: ``from_config``-style construction, weights from ``torch.manual_seed``), wraps it so that
``forward`` returns plain tensors, and is exported by :func:`ramiel.models.export_model` like the
project's own models (the legacy TorchScript exporter, ``dynamo=False``, eval mode, fixed input
shapes, constant folding on; the exporter's eval-mode peephole already folds a BatchNorm that
directly follows a Conv). Names:

========================  ===============================================================
``hf_bert``               BERT-base (12 layers, hidden 768, 12 heads), sequence 32
``hf_vit``                ViT-Base/16 at 224x224 (12 layers, hidden 768), 1000 classes
``hf_resnet50``           ResNet-50 (bottleneck, depths 3-4-6-3), 224x224, 1000 classes
``hf_resnet18``           ResNet-18 (basic blocks, depths 2-2-2-2), 224x224, 1000 classes
``hf_mobilenet_v2``       MobileNetV2 1.0 at 224x224 (TensorFlow-style padding), 1001 classes
``hf_efficientnet_b0``    EfficientNet-B0 (width 1.0, depth 1.0) at 224x224, 1000 classes
``hf_convnext``           ConvNeXt-T (depths 3-3-9-3, hidden 96..768) at 224x224, 1000 classes
========================  ===============================================================

The same architectures in small configurations (a few layers and channels, 32x32 images or
16 tokens) are registered with the suffix ``_test`` (``hf_bert_test``, ``hf_resnet_test``...), so tests stay fast.
BERT's inputs are ``input_ids`` and ``attention_mask`` (``int64[1, S]``, the mask all ones) and
its output ``last_hidden_state``; the vision models take ``pixel_values`` (``float32[1, 3, H,
W]``) and return ``logits``. Attention uses the library's default implementation
(``scaled_dot_product_attention``, which the exporter writes out as MatMul, Softmax and a NaN
guard).

Needs the ``transformers`` package (in the ``dev`` extra's install, see ``scripts/setup.sh``);
importing this module does not import it, building a model does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from ramiel.model_entry import ModelEntry, randomise_norms

__all__ = ["HF_MODELS", "OutputOf"]


class OutputOf(nn.Module):
    """``model(*inputs).<field>``: a ``transformers`` model whose output is one plain tensor."""

    def __init__(self, model: nn.Module, field: str) -> None:
        super().__init__()
        self.model = model
        self.field = field

    def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
        return getattr(self.model(*inputs), self.field)


def _vision(cls_name: str, config_name: str, **config: Any) -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        import transformers  # lazy: transformers

        cfg = getattr(transformers, config_name)(**config)
        model = getattr(transformers, cls_name)(cfg)
        randomise_norms(model)
        return OutputOf(model, "logits")

    return build


def _bert(**config: Any) -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        import transformers  # lazy: transformers

        model = transformers.BertModel(transformers.BertConfig(**config), add_pooling_layer=False)
        randomise_norms(model)
        return OutputOf(model, "last_hidden_state")

    return build


def _pixels(size: int) -> Callable[[], tuple[torch.Tensor, ...]]:
    def make() -> tuple[torch.Tensor, ...]:
        g = torch.Generator().manual_seed(1234)
        return (torch.randn(1, 3, size, size, generator=g),)

    return make


def _tokens(seq: int, vocab: int) -> Callable[[], tuple[torch.Tensor, ...]]:
    def make() -> tuple[torch.Tensor, ...]:
        g = torch.Generator().manual_seed(1234)
        ids = torch.randint(0, vocab, (1, seq), generator=g, dtype=torch.int64)
        return ids, torch.ones(1, seq, dtype=torch.int64)

    return make


_IMAGE = (("pixel_values",), ("logits",))
_TEXT = (("input_ids", "attention_mask"), ("last_hidden_state",))


def _entry(
    build: Callable[[], nn.Module],
    io: tuple[tuple[str, ...], tuple[str, ...]],
    make: Callable[[], tuple[torch.Tensor, ...]],
    description: str,
) -> ModelEntry:
    return ModelEntry(build, io[0], io[1], make, description, min_opset=14)


_EFFICIENTNET_B0 = {"width_coefficient": 1.0, "depth_coefficient": 1.0, "image_size": 224}

HF_MODELS: dict[str, ModelEntry] = {
    # -- standard sizes (benchmarks) ------------------------------------------------------------
    "hf_bert": _entry(
        _bert(),
        _TEXT,
        _tokens(32, 30522),
        "transformers BERT-base, int64[1,32] x2 -> float32[1,32,768]",
    ),
    "hf_vit": _entry(
        _vision("ViTForImageClassification", "ViTConfig", num_labels=1000),
        _IMAGE,
        _pixels(224),
        "transformers ViT-Base/16, float32[1,3,224,224] -> float32[1,1000]",
    ),
    "hf_resnet50": _entry(
        _vision("ResNetForImageClassification", "ResNetConfig", num_labels=1000),
        _IMAGE,
        _pixels(224),
        "transformers ResNet-50, float32[1,3,224,224] -> float32[1,1000]",
    ),
    "hf_resnet18": _entry(
        _vision(
            "ResNetForImageClassification",
            "ResNetConfig",
            layer_type="basic",
            depths=[2, 2, 2, 2],
            hidden_sizes=[64, 128, 256, 512],
            num_labels=1000,
        ),
        _IMAGE,
        _pixels(224),
        "transformers ResNet-18, float32[1,3,224,224] -> float32[1,1000]",
    ),
    "hf_mobilenet_v2": _entry(
        _vision("MobileNetV2ForImageClassification", "MobileNetV2Config", num_labels=1001),
        _IMAGE,
        _pixels(224),
        "transformers MobileNetV2 1.0, float32[1,3,224,224] -> float32[1,1001]",
    ),
    "hf_efficientnet_b0": _entry(
        _vision(
            "EfficientNetForImageClassification",
            "EfficientNetConfig",
            hidden_dim=1280,
            num_labels=1000,
            **_EFFICIENTNET_B0,
        ),
        _IMAGE,
        _pixels(224),
        "transformers EfficientNet-B0, float32[1,3,224,224] -> float32[1,1000]",
    ),
    "hf_convnext": _entry(
        _vision("ConvNextForImageClassification", "ConvNextConfig", num_labels=1000),
        _IMAGE,
        _pixels(224),
        "transformers ConvNeXt-T, float32[1,3,224,224] -> float32[1,1000]",
    ),
    # -- small configurations (tests) -----------------------------------------------------------
    "hf_bert_test": _entry(
        _bert(
            vocab_size=100,
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=4,
            intermediate_size=64,
            max_position_embeddings=64,
        ),
        _TEXT,
        _tokens(16, 100),
        "transformers BERT, 2 layers, hidden 32, int64[1,16] x2 -> float32[1,16,32]",
    ),
    "hf_vit_test": _entry(
        _vision(
            "ViTForImageClassification",
            "ViTConfig",
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=4,
            intermediate_size=64,
            image_size=32,
            patch_size=8,
            num_labels=10,
        ),
        _IMAGE,
        _pixels(32),
        "transformers ViT, 2 layers, hidden 32, patch 8, float32[1,3,32,32] -> float32[1,10]",
    ),
    "hf_resnet_test": _entry(
        _vision(
            "ResNetForImageClassification",
            "ResNetConfig",
            embedding_size=16,
            hidden_sizes=[16, 32],
            depths=[1, 1],
            layer_type="bottleneck",
            num_labels=10,
        ),
        _IMAGE,
        _pixels(32),
        "transformers ResNet, 2 bottleneck stages, float32[1,3,32,32] -> float32[1,10]",
    ),
    "hf_mobilenet_v2_test": _entry(
        _vision(
            "MobileNetV2ForImageClassification",
            "MobileNetV2Config",
            depth_multiplier=0.35,
            image_size=32,
            num_labels=10,
        ),
        _IMAGE,
        _pixels(32),
        "transformers MobileNetV2 0.35, float32[1,3,32,32] -> float32[1,10]",
    ),
    "hf_efficientnet_test": _entry(
        _vision(
            "EfficientNetForImageClassification",
            "EfficientNetConfig",
            width_coefficient=0.25,
            depth_coefficient=0.25,
            image_size=32,
            hidden_dim=320,
            num_labels=10,
        ),
        _IMAGE,
        _pixels(32),
        "transformers EfficientNet (width 0.25, depth 0.25), float32[1,3,32,32] -> float32[1,10]",
    ),
    "hf_convnext_test": _entry(
        _vision(
            "ConvNextForImageClassification",
            "ConvNextConfig",
            hidden_sizes=[16, 32],
            depths=[1, 1],
            num_stages=2,
            num_labels=10,
        ),
        _IMAGE,
        _pixels(32),
        "transformers ConvNeXt, 2 stages, float32[1,3,32,32] -> float32[1,10]",
    ),
}
"""The ``transformers`` models by name (see the module docstring)."""
