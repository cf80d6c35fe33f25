"""Test and benchmark models that Ramiel builds and exports itself (random weights, no downloads).

Every model here is a plain :class:`torch.nn.Module` with deterministic random weights
(``torch.manual_seed``), exported to ONNX by PyTorch's legacy TorchScript exporter
(``torch.onnx.export(..., dynamo=False)``) with fixed input shapes:

- ``"inception"`` — :class:`InceptionNet`, a GoogLeNet-style CNN (Szegedy et al., *Going Deeper with
  Convolutions*, CVPR 2015) whose inception blocks have four branches of comparable cost, so the
  task graph has real parallelism (W/CP around 2). Input ``image``: ``float32[1, 3, 224, 224]``;
  output ``logits``: ``float32[1, 1000]``.
- ``"transformer"`` — :class:`TransformerEncoder`, a small BERT-like encoder (Devlin et al., *BERT*,
  NAACL 2019; attention from Vaswani et al., *Attention Is All You Need*, NeurIPS 2017) written
  with explicit ops, so the Q/K/V projections are three independent branches. Input
  ``input_ids``: ``int64[1, 64]``; output ``hidden``: ``float32[1, 64, 256]``.
- ``"transformer_torch"`` — :class:`TorchTransformerEncoder`, the same sizes built from
  :class:`torch.nn.TransformerEncoderLayer` (the export PyTorch users get from the stock layer).
- ``"streaming_detector"`` — :class:`StreamingDetector`, a voice-activity-style detector run
  chunk by chunk: a convolutional front end, a 2-layer LSTM whose state is an input and an output
  (``h0``/``c0`` -> ``hn``/``cn``), and a data-dependent ``if`` (silence gate) that the exporter
  turns into an ONNX ``If`` (the module is scripted before export). Inputs ``audio``
  ``float32[1, 1, 512]``, ``h0``/``c0`` ``float32[2, 1, 64]``; outputs ``speech``
  ``float32[1, 1]``, ``hn``/``cn``.
- ``"gru_tagger"`` — :class:`GRUTagger`, a bidirectional-GRU sequence tagger: ``tokens``
  ``int64[1, 32]`` -> ``tags`` ``float32[1, 32, 12]`` (logits).
- ``"refiner"`` — :class:`IterativeRefiner`, a fixed-count refinement loop (``while i < steps``;
  the exporter turns it into an ONNX ``Loop``): ``x`` ``float32[1, 16]`` -> ``y``
  ``float32[1, 8]``.

:func:`export_model` writes the ONNX file into a cache directory (``$RAMIEL_MODEL_CACHE``, else
``~/.cache/ramiel/models``) keyed by name, opset and :data:`MODELS_VERSION`, and returns its path;
:func:`example_inputs` gives the matching deterministic inputs.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import numpy_helper
from torch import nn

from ramiel.files import make_readable
from ramiel.hf_models import HF_MODELS
from ramiel.model_entry import ModelEntry, randomise_norms

MODELS_VERSION = 1
"""Bumped whenever a model's definition or export changes, so cached ONNX files are rebuilt."""

SEED = 0
"""``torch.manual_seed`` used for every model's weights."""

# --------------------------------------------------------------------------------------------
# InceptionNet
# --------------------------------------------------------------------------------------------


class ConvBNReLU(nn.Sequential):
    """``Conv2d`` (no bias) → ``BatchNorm2d`` → ``ReLU``; 'same' padding for odd kernels."""

    def __init__(self, cin: int, cout: int, kernel: int, stride: int = 1) -> None:
        super().__init__(
            nn.Conv2d(cin, cout, kernel, stride=stride, padding=kernel // 2, bias=False),
            nn.BatchNorm2d(cout),
            nn.ReLU(inplace=False),
        )


@dataclass(frozen=True)
class InceptionSpec:
    """Channel counts of one inception block (GoogLeNet's table 1 naming).

    ``b1``: 1x1 branch; ``r3``/``b3``: 1x1 reduce → 3x3; ``r5``/``b5``: 1x1 reduce → two 3x3
    (the factorised 5x5 of Inception-v2); ``pool``: 3x3 max-pool → 1x1 projection.
    """

    b1: int
    r3: int
    b3: int
    r5: int
    b5: int
    pool: int

    @property
    def out(self) -> int:
        return self.b1 + self.b3 + self.b5 + self.pool


class InceptionBlock(nn.Module):
    """Four parallel branches concatenated on channels: ``[1, C, H, W] → [1, spec.out, H, W]``."""

    def __init__(self, cin: int, spec: InceptionSpec) -> None:
        super().__init__()
        self.branch1 = ConvBNReLU(cin, spec.b1, 1)
        self.branch2 = nn.Sequential(ConvBNReLU(cin, spec.r3, 1), ConvBNReLU(spec.r3, spec.b3, 3))
        self.branch3 = nn.Sequential(
            ConvBNReLU(cin, spec.r5, 1),
            ConvBNReLU(spec.r5, spec.b5, 3),
            ConvBNReLU(spec.b5, spec.b5, 3),
        )
        self.branch4 = nn.Sequential(
            nn.MaxPool2d(3, stride=1, padding=1), ConvBNReLU(cin, spec.pool, 1)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([self.branch1(x), self.branch2(x), self.branch3(x), self.branch4(x)], 1)


# Branch widths chosen so that the four branches of a block cost about the same multiply-adds
# (within 25%; the 1x1 branches are wide, the 3x3 branches narrow), which onnxruntime's
# single-thread per-node times confirm. ~0.94 GMAC in all, 0.18 of it in the serial stem;
# measured W/CP ~2.2 (onnxruntime 1 thread, basic graph optimisation, per-node kernel times).
INCEPTION_GROUPS: tuple[tuple[InceptionSpec, ...], ...] = (
    # 28x28
    (
        InceptionSpec(b1=112, r3=24, b3=64, r5=16, b5=32, pool=112),
        InceptionSpec(b1=160, r3=48, b3=88, r5=40, b5=48, pool=160),
    ),
    # 14x14
    (
        InceptionSpec(b1=200, r3=64, b3=112, r5=64, b5=56, pool=200),
        InceptionSpec(b1=224, r3=72, b3=128, r5=80, b5=64, pool=224),
        InceptionSpec(b1=248, r3=80, b3=144, r5=88, b5=72, pool=248),
        InceptionSpec(b1=248, r3=88, b3=144, r5=96, b5=72, pool=248),
    ),
    # 7x7
    (
        InceptionSpec(b1=336, r3=96, b3=192, r5=96, b5=96, pool=336),
        InceptionSpec(b1=360, r3=120, b3=208, r5=128, b5=104, pool=360),
    ),
)


class InceptionNet(nn.Module):
    """GoogLeNet-style CNN with four-branch inception blocks (Szegedy et al., CVPR 2015).

    Stem: conv 7x7/2 → maxpool 3x3/2 → conv 1x1 → conv 3x3 → maxpool 3x3/2 (224 → 28), then
    groups of :class:`InceptionBlock` at 28x28, 14x14 and 7x7 with a maxpool 3x3/2 between
    groups, global average pool, flatten and a linear classifier. Every conv is followed by
    BatchNorm and ReLU (the exporter folds the BatchNorm into the conv in eval mode).

    Shapes: ``image`` ``float32[1, 3, 224, 224]`` → ``logits`` ``float32[1, num_classes]``.
    """

    def __init__(self, num_classes: int = 1000) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            ConvBNReLU(3, 32, 7, stride=2),
            nn.MaxPool2d(3, stride=2, padding=1),
            ConvBNReLU(32, 32, 1),
            ConvBNReLU(32, 128, 3),
            nn.MaxPool2d(3, stride=2, padding=1),
        )
        groups: list[nn.Module] = []
        cin = 128
        for gi, specs in enumerate(INCEPTION_GROUPS):
            layers: list[nn.Module] = []
            if gi > 0:
                layers.append(nn.MaxPool2d(3, stride=2, padding=1))
            for spec in specs:
                layers.append(InceptionBlock(cin, spec))
                cin = spec.out
            groups.append(nn.Sequential(*layers))
        self.groups = nn.Sequential(*groups)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(cin, num_classes)
        randomise_norms(self)

    def forward(self, image: torch.Tensor) -> torch.Tensor:
        x = self.groups(self.stem(image))
        return self.fc(torch.flatten(self.pool(x), 1))


# --------------------------------------------------------------------------------------------
# Transformer encoders
# --------------------------------------------------------------------------------------------


class SelfAttention(nn.Module):
    """Multi-head self-attention written out op by op (Vaswani et al., NeurIPS 2017, §3.2).

    ``[B, S, H] → [B, S, H]``: Q/K/V linear, reshape to ``[B, S, heads, d]``, transpose to
    ``[B, heads, S, d]``, ``Q·Kᵀ / √d``, softmax, ``·V``, merge heads, output linear. The three
    projections read the same tensor and are independent of each other.
    """

    def __init__(self, hidden: int, heads: int) -> None:
        super().__init__()
        assert hidden % heads == 0
        self.heads = heads
        self.head_dim = hidden // heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, hidden)

    def _split(self, x: torch.Tensor) -> torch.Tensor:
        b, s, _ = x.shape
        return x.reshape(b, s, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, h = x.shape
        q = self._split(self.query(x))
        k = self._split(self.key(x))
        v = self._split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        probs = torch.softmax(scores, dim=-1)
        ctx = torch.matmul(probs, v).transpose(1, 2).reshape(b, s, h)
        return self.out(ctx)


class EncoderLayer(nn.Module):
    """Post-norm BERT layer: ``x = LN(x + Attn(x)); x = LN(x + W₂·GELU(W₁·x))``; ``[B, S, H]``."""

    def __init__(self, hidden: int, heads: int, ffn: int) -> None:
        super().__init__()
        self.attention = SelfAttention(hidden, heads)
        self.norm1 = nn.LayerNorm(hidden)
        self.fc1 = nn.Linear(hidden, ffn)
        self.fc2 = nn.Linear(ffn, hidden)
        self.norm2 = nn.LayerNorm(hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.norm1(x + self.attention(x))
        return self.norm2(x + self.fc2(F.gelu(self.fc1(x))))


class TransformerEncoder(nn.Module):
    """Small BERT-like encoder with explicit attention (Devlin et al., NAACL 2019).

    Token embedding (a Gather on ``input_ids``) plus learned position embedding, then ``layers``
    :class:`EncoderLayer` s (exact erf GELU, post-LayerNorm), no attention mask.

    Shapes: ``input_ids`` ``int64[1, seq_len]`` (values in ``[0, vocab)``) → ``hidden``
    ``float32[1, seq_len, hidden]``.
    """

    def __init__(
        self,
        vocab: int = 1000,
        hidden: int = 256,
        heads: int = 4,
        layers: int = 4,
        ffn: int = 1024,
        seq_len: int = 64,
    ) -> None:
        super().__init__()
        self.vocab = vocab
        self.seq_len = seq_len
        self.token_embedding = nn.Embedding(vocab, hidden)
        self.position_embedding = nn.Embedding(seq_len, hidden)
        self.register_buffer("position_ids", torch.arange(seq_len).unsqueeze(0), persistent=False)
        self.norm = nn.LayerNorm(hidden)
        self.layers = nn.ModuleList(EncoderLayer(hidden, heads, ffn) for _ in range(layers))
        randomise_norms(self)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        x = self.token_embedding(input_ids) + self.position_embedding(self.position_ids)
        x = self.norm(x)
        for layer in self.layers:
            x = layer(x)
        return x


class TorchTransformerEncoder(nn.Module):
    """The :class:`TransformerEncoder` sizes built from :class:`torch.nn.TransformerEncoderLayer`.

    Post-norm, exact GELU, ``batch_first``; dropout is inactive in eval mode. Attention goes
    through ``nn.MultiheadAttention`` (one fused in-projection, split into Q/K/V afterwards).

    Shapes: ``input_ids`` ``int64[1, seq_len]`` → ``hidden`` ``float32[1, seq_len, hidden]``.
    """

    def __init__(
        self,
        vocab: int = 1000,
        hidden: int = 256,
        heads: int = 4,
        layers: int = 4,
        ffn: int = 1024,
        seq_len: int = 64,
    ) -> None:
        super().__init__()
        self.vocab = vocab
        self.seq_len = seq_len
        self.token_embedding = nn.Embedding(vocab, hidden)
        self.position_embedding = nn.Parameter(torch.randn(1, seq_len, hidden) * 0.02)
        layer = nn.TransformerEncoderLayer(
            hidden, heads, ffn, dropout=0.0, activation="gelu", batch_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        # nn.TransformerEncoder deep-copies ``layer``: give every copy its own weights (and
        # non-zero attention biases) so that layers differ and no initializer is shared.
        with torch.no_grad():
            for m in self.encoder.modules():
                if isinstance(m, nn.Linear):
                    m.reset_parameters()
                elif isinstance(m, nn.MultiheadAttention):
                    nn.init.xavier_uniform_(m.in_proj_weight)
                    nn.init.uniform_(m.in_proj_bias, -0.1, 0.1)
        randomise_norms(self)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.encoder(self.token_embedding(input_ids) + self.position_embedding)


# --------------------------------------------------------------------------------------------
# Recurrent models and control flow
# --------------------------------------------------------------------------------------------


class StreamingDetector(nn.Module):
    """A voice-activity-style streaming detector: one chunk of audio in, a speech probability
    and the recurrent state out, the state fed back with the next chunk.

    ``audio`` ``[1, 1, 512]`` -> Conv1d(1, 32, 5, /2) -> ReLU -> Conv1d(32, 64, 3, /2) -> ReLU
    (``[1, 64, 128]``) -> 2-layer LSTM(64, 64) over the 128 frames from state ``(h0, c0)``
    ``[2, 1, 64]`` each -> Linear(64, 1) on the last frame -> sigmoid: ``speech`` ``[1, 1]``, and
    the new state ``(hn, cn)``. A silent chunk (mean square below 1e-6) gives ``speech = 0``:
    that ``if`` depends on the input data, so the scripted module exports it as an ONNX ``If``.
    """

    def __init__(self, hidden: int = 64, layers: int = 2) -> None:
        super().__init__()
        self.frontend = nn.Sequential(
            nn.Conv1d(1, 32, 5, stride=2, padding=2),
            nn.ReLU(),
            nn.Conv1d(32, hidden, 3, stride=2, padding=1),
            nn.ReLU(),
        )
        self.lstm = nn.LSTM(hidden, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(
        self, audio: torch.Tensor, h0: torch.Tensor, c0: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        feats = self.frontend(audio).transpose(1, 2)
        out, (hn, cn) = self.lstm(feats, (h0, c0))
        speech = torch.sigmoid(self.head(out[:, -1]))
        if bool(audio.pow(2).mean() < 1e-6):
            speech = speech * 0.0
        return speech, hn, cn


class GRUTagger(nn.Module):
    """A sequence tagger: token embedding -> bidirectional GRU -> per-token linear classifier.

    ``tokens`` ``int64[1, seq_len]`` (values in ``[0, vocab)``) -> ``tags``
    ``float32[1, seq_len, num_tags]`` (logits).
    """

    def __init__(self, vocab: int = 1000, dim: int = 64, hidden: int = 64, num_tags: int = 12):
        super().__init__()
        self.embedding = nn.Embedding(vocab, dim)
        self.gru = nn.GRU(dim, hidden, bidirectional=True, batch_first=True)
        self.classifier = nn.Linear(2 * hidden, num_tags)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        out, _ = self.gru(self.embedding(tokens))
        return self.classifier(out)


class IterativeRefiner(nn.Module):
    """A fixed-count refinement loop: ``y`` starts at 0 and is refined ``steps`` times by
    ``y = y + 0.5 * tanh(W [y, f])`` from the encoded input ``f``, then projected.

    ``x`` ``float32[1, 16]`` -> ``y`` ``float32[1, 8]``. The loop is written as ``while i <
    steps`` because the TorchScript exporter unrolls a ``for`` over a constant range; scripted,
    it exports as an ONNX ``Loop`` whose condition the body computes.
    """

    def __init__(self, steps: int = 4, dim: int = 16, hidden: int = 32, out: int = 8) -> None:
        super().__init__()
        self.steps = steps
        self.encode = nn.Linear(dim, hidden)
        self.update = nn.Linear(2 * hidden, hidden)
        self.project = nn.Linear(hidden, out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        feat = torch.relu(self.encode(x))
        y = torch.zeros_like(feat)
        i = 0
        while i < self.steps:
            y = y + 0.5 * torch.tanh(self.update(torch.cat([y, feat], dim=1)))
            i += 1
        return self.project(y)


# --------------------------------------------------------------------------------------------
# Registry and export
# --------------------------------------------------------------------------------------------


def _image() -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(1234)
    return (torch.randn(1, 3, 224, 224, generator=g),)


def _token_ids() -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(1234)
    return (torch.randint(0, 1000, (1, 64), generator=g, dtype=torch.int64),)


def _audio() -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(1234)
    return (torch.randn(1, 1, 512, generator=g) * 0.1, torch.zeros(2, 1, 64), torch.zeros(2, 1, 64))


def _tags() -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(1234)
    return (torch.randint(0, 1000, (1, 32), generator=g, dtype=torch.int64),)


def _features() -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(1234)
    return (torch.randn(1, 16, generator=g),)


MODELS: dict[str, ModelEntry] = {
    "inception": ModelEntry(
        InceptionNet,
        ("image",),
        ("logits",),
        _image,
        "inception-style CNN, float32[1,3,224,224] -> float32[1,1000]",
    ),
    "transformer": ModelEntry(
        TransformerEncoder,
        ("input_ids",),
        ("hidden",),
        _token_ids,
        "BERT-like encoder, explicit attention, int64[1,64] -> float32[1,64,256]",
    ),
    "transformer_torch": ModelEntry(
        TorchTransformerEncoder,
        ("input_ids",),
        ("hidden",),
        _token_ids,
        "nn.TransformerEncoderLayer encoder, int64[1,64] -> float32[1,64,256]",
        min_opset=14,  # scaled_dot_product_attention has no export before opset 14
    ),
    "streaming_detector": ModelEntry(
        StreamingDetector,
        ("audio", "h0", "c0"),
        ("speech", "hn", "cn"),
        _audio,
        "streaming detector: conv front end, 2-layer LSTM with state in/out, If (silence gate)",
        script=True,
        state=(("h0", "hn"), ("c0", "cn")),
    ),
    "gru_tagger": ModelEntry(
        GRUTagger,
        ("tokens",),
        ("tags",),
        _tags,
        "bidirectional GRU tagger, int64[1,32] -> float32[1,32,12]",
    ),
    "refiner": ModelEntry(
        IterativeRefiner,
        ("x",),
        ("y",),
        _features,
        "fixed-count refinement loop (ONNX Loop), float32[1,16] -> float32[1,8]",
        script=True,
    ),
}
"""Registered models by name."""


def all_models() -> dict[str, ModelEntry]:
    """Every model by name: the project's own (:data:`MODELS`) and those built with the
    ``transformers`` library (:data:`ramiel.hf_models.HF_MODELS`, ``hf_*``)."""
    return {**MODELS, **HF_MODELS}


def _entry(name: str) -> ModelEntry:
    known = all_models()
    try:
        return known[name]
    except KeyError:
        raise KeyError(f"unknown model {name!r}; known: {', '.join(sorted(known))}") from None


def _cache_tag(name: str) -> str:
    """What a cached export depends on besides the name and opset: :data:`MODELS_VERSION`, and
    for a ``transformers`` model the library's version (its modelling code changes exports)."""
    if name in MODELS:
        return f"v{MODELS_VERSION}"
    import transformers  # lazy: transformers

    return f"v{MODELS_VERSION}-transformers{transformers.__version__}"


def build_model(name: str) -> nn.Module:
    """The registered model ``name`` in eval mode, with weights from ``torch.manual_seed(SEED)``."""
    entry = _entry(name)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        model = entry.build()
    return model.eval()


def example_inputs(name: str) -> tuple[torch.Tensor, ...]:
    """Deterministic example inputs of model ``name`` (the shapes its export is fixed to)."""
    return _entry(name).make_inputs()


def input_names(name: str) -> tuple[str, ...]:
    """ONNX graph input names of model ``name``, in the order of :func:`example_inputs`."""
    return _entry(name).input_names


def output_names(name: str) -> tuple[str, ...]:
    """ONNX graph output names of model ``name``."""
    return _entry(name).output_names


def state_pairs(name: str) -> tuple[tuple[str, str], ...]:
    """``(input, output)`` pairs of model ``name``'s recurrent state (empty if stateless)."""
    return _entry(name).state


def cache_dir() -> Path:
    """``$RAMIEL_MODEL_CACHE`` if set, else ``~/.cache/ramiel/models``."""
    env = os.environ.get("RAMIEL_MODEL_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "ramiel" / "models"


def export_model(
    name: str,
    path: str | os.PathLike[str] | None = None,
    opset: int = 17,
    dynamic_batch: bool = False,
) -> str:
    """Export model ``name`` to ONNX and return the file's path.

    ``name`` is a model of :func:`all_models` (the project's own, or a ``transformers`` model
    ``hf_*``). Without ``path`` the file is
    ``<cache_dir()>/<name>-opset<opset>-v<MODELS_VERSION>[-transformers<version>][-batch].onnx``
    (``-batch`` with ``dynamic_batch``) and an existing one is reused; with ``path`` the model is
    always exported there. The export uses the legacy TorchScript exporter (``dynamo=False``; of
    the :func:`torch.jit.script`-ed module for the models with control flow) in eval mode with
    fixed input shapes (with ``dynamic_batch``, dimension 0 of every input and output is the
    symbolic ``batch``: PyTorch then exports the shape computations, ``Shape -> Gather -> Concat
    -> Reshape``, instead of constants) and constant folding, then runs
    ``onnx.checker.check_model`` (full check, with shape inference).
    Raises ``KeyError`` for an unknown name and ``ValueError`` for an opset below the model's
    ``min_opset`` (11; 14 for ``"transformer_torch"``). The file is written to a temporary
    name and renamed, so concurrent callers never see a partial file.
    """
    entry = _entry(name)
    if opset < entry.min_opset:
        raise ValueError(f"model {name!r} needs opset >= {entry.min_opset}, got {opset}")
    if path is None:
        tail = "-batch" if dynamic_batch else ""
        target = cache_dir() / f"{name}-opset{opset}-{_cache_tag(name)}{tail}.onnx"
        if target.is_file():
            return str(target)
    else:
        target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)

    model = build_model(name)
    inputs = entry.make_inputs()
    fd, tmp = tempfile.mkstemp(suffix=".onnx.tmp", dir=target.parent)
    os.close(fd)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            torch.onnx.export(
                torch.jit.script(model) if entry.script else model,
                inputs,
                tmp,
                dynamo=False,
                opset_version=opset,
                input_names=list(entry.input_names),
                output_names=list(entry.output_names),
                dynamic_axes=(
                    {n: {0: "batch"} for n in (*entry.input_names, *entry.output_names)}
                    if dynamic_batch
                    else None
                ),
                do_constant_folding=True,
                training=torch.onnx.TrainingMode.EVAL,
            )
        onnx.checker.check_model(tmp, full_check=True)

        make_readable(tmp)  # mkstemp makes it 0600
        os.replace(tmp, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    return str(target)


__all__ = [
    "MODELS",
    "MODELS_VERSION",
    "SEED",
    "EncoderLayer",
    "GRUTagger",
    "InceptionBlock",
    "InceptionNet",
    "InceptionSpec",
    "IterativeRefiner",
    "ModelEntry",
    "SelfAttention",
    "StreamingDetector",
    "TorchTransformerEncoder",
    "TransformerEncoder",
    "all_models",
    "build_model",
    "cache_dir",
    "example_inputs",
    "export_model",
    "input_names",
    "onnx_weight_bytes",
    "output_names",
    "randomize_weights",
    "state_pairs",
]


def randomize_weights(
    model: onnx.ModelProto, seed: int = 0, max_elements: int | None = None
) -> onnx.ModelProto:
    """A copy of ``model`` whose float weights are seeded random values of the same shapes.

    The zoo models build every weight with ``ConstantOfShape`` (one repeated value), which gives
    nearly uniform, degenerate outputs; numerics tests and ``ramiel run --random-weights`` use
    this to tell samples and wrong values apart. Every float32 ``ConstantOfShape`` whose shape is
    a constant (initializer or ``Constant`` node) becomes an initializer, the initializers that
    only fed it are dropped, and every float32 initializer with more than one element is redrawn
    (except the ``scales``/``roi`` of Resize and Upsample); other types (shapes, indices) and
    single-element constants (epsilons, exponents) are kept. Initializers are also listed as
    graph inputs when the IR version requires it (< 4).

    ``max_elements``: tensors with more elements keep their values (the 16-100 M-element fully
    connected layers of AlexNet, VGG and ZFNet take seconds to draw and store, and stay cheap
    splats); ``None``: no limit.

    Values follow the first consumer so that deep networks keep moderate magnitudes:
    He-scaled uniform (variance 2 / fan-in) for Conv/ConvTranspose/Gemm/MatMul weights, uniform
    [0.5, 1.5) for BatchNormalization scales and variances and for the Mul/Unsqueeze form of
    batch norm, uniform (-0.17, 0.17) (standard deviation ~0.1) otherwise. Without batch
    statistics the magnitudes still grow with depth (ResNet-50's logits reach ~1e4), so Softmax
    outputs of deep models saturate; compare their logits as well.
    """
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    rng = np.random.default_rng(seed)
    inits = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    shapes = dict(inits)
    for n in g.node:
        if n.op_type == "Constant":
            for a in n.attribute:
                if a.name == "value":
                    shapes[n.output[0]] = numpy_helper.to_array(a.t)
    consumers: dict[str, tuple[str, int]] = {}
    for n in g.node:
        for i, name in enumerate(n.input):
            consumers.setdefault(name, (n.op_type, i))

    def uniform(shape: tuple[int, ...], lo: float, hi: float) -> np.ndarray:
        w = rng.random(shape, dtype=np.float32)  # float32 uniform: fast for 100M-weight layers
        w *= np.float32(hi - lo)
        w += np.float32(lo)
        return w

    def draw(name: str, shape: tuple[int, ...]) -> np.ndarray:
        op, idx = consumers.get(name, ("", 0))
        if op in ("Conv", "Gemm", "MatMul", "ConvTranspose") and idx == 1 and len(shape) >= 2:
            fan_in = int(np.prod(shape[1:])) if op != "MatMul" else shape[-2]
            if op == "Gemm":
                fan_in = shape[-1]
            a = float(np.sqrt(6.0 / max(fan_in, 1)))  # He: variance 2 / fan_in
            return uniform(shape, -a, a)
        if (op == "BatchNormalization" and idx in (1, 4)) or op in ("Mul", "Unsqueeze"):
            return uniform(shape, 0.5, 1.5)
        return uniform(shape, -0.17, 0.17)  # standard deviation ~0.1

    def redraw(name: str, shape: tuple[int, ...]) -> bool:
        op, idx = consumers.get(name, ("", 0))
        size = int(np.prod(shape))
        if op in ("Resize", "Upsample") and idx >= 1:
            return False
        return size > 1 and (max_elements is None or size <= max_elements)

    keep = []
    for n in g.node:
        value_type = next(
            (a.t.data_type for a in n.attribute if a.name == "value"), onnx.TensorProto.FLOAT
        )
        if (
            n.op_type == "ConstantOfShape"
            and n.input
            and n.input[0] in shapes
            and value_type == onnx.TensorProto.FLOAT
        ):
            shape = tuple(int(d) for d in shapes[n.input[0]])
            if redraw(n.output[0], shape):
                w = draw(n.output[0], shape)
                g.initializer.append(numpy_helper.from_array(w, n.output[0]))
                if m.ir_version < 4:
                    g.input.append(onnx.helper.make_tensor_value_info(n.output[0], 1, shape))
                continue
        keep.append(n)
    del g.node[:]
    g.node.extend(keep)
    used = {name for n in g.node for name in n.input} | {o.name for o in g.output}
    dropped = {t.name for t in g.initializer if t.name not in used}
    kept = [t for t in g.initializer if t.name not in dropped]
    del g.initializer[:]
    g.initializer.extend(kept)
    inputs = [x for x in g.input if x.name not in dropped]
    del g.input[:]
    g.input.extend(inputs)
    for t in g.initializer:
        if t.name in inits and t.data_type == onnx.TensorProto.FLOAT:
            shape = tuple(int(d) for d in t.dims)
            if redraw(t.name, shape):
                t.CopyFrom(numpy_helper.from_array(draw(t.name, shape), t.name))
    return m


def onnx_weight_bytes(model: onnx.ModelProto) -> int:
    """Bytes of the model's weights in their real shapes and dtypes: its initializers, its
    ``Constant`` nodes' tensors, and the outputs of ``ConstantOfShape`` nodes whose shape is a
    constant (how the zoo models store their weights)."""
    consts = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    total = sum(a.nbytes for a in consts.values())
    for n in model.graph.node:
        if n.op_type == "Constant":
            value = (
                numpy_helper.to_array(n.attribute[0].t) if n.attribute[0].name == "value" else None
            )
            if value is not None:
                consts[n.output[0]] = value
                total += value.nbytes
    for n in model.graph.node:
        if n.op_type == "ConstantOfShape" and n.input and n.input[0] in consts:
            value = next((a.t for a in n.attribute if a.name == "value"), None)
            itemsize = np.dtype(numpy_helper.to_array(value).dtype).itemsize if value else 4
            total += math.prod(int(d) for d in consts[n.input[0]]) * itemsize
    return total
