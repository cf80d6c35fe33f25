"""The one weights file of a compile against the bytes of the model's weights (not a test).

For the nine ``light_*.onnx`` zoo models with seeded random weights
(:func:`ramiel.models.randomize_weights`; the FC-heavy AlexNet, VGG-19 and ZFNet-512 keep their
16-100 M-element fully connected layers as ConstantOfShape splats, as the tests do) and the
project's inception CNN and transformer (:mod:`ramiel.models`, random weights), ``ramiel
compile`` (2 clusters) writes one ``weights.safetensors``; the table compares its size with
:func:`ramiel.models.onnx_weight_bytes` (initializers, Constant tensors and constant-shape
ConstantOfShape outputs, all in their real shapes and dtypes), and lists every other file of the
output directory.

The table goes to stdout and, with the date and command, to ``--out`` (default
``bench/results/weights_size.txt``).

Usage: ``python bench/weights_size.py [--out FILE]``
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
import tempfile

import onnx

from ramiel import models
from ramiel.bench import zoo_models
from ramiel.compiler import CompileOptions, compile_model
from ramiel.models import onnx_weight_bytes, randomize_weights

ZOO = zoo_models()  # name -> path of the onnx wheel's light_*.onnx files
FC_HEAVY = ("light_bvlc_alexnet", "light_vgg19", "light_zfnet512")
MAX_RANDOM_ELEMENTS = 1 << 22


def _model(name: str) -> onnx.ModelProto:
    if name in models.MODELS:
        return onnx.load(models.export_model(name))
    limit = MAX_RANDOM_ELEMENTS if name in FC_HEAVY else None
    return randomize_weights(onnx.load(ZOO[name]), seed=1, max_elements=limit)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="bench/results/weights_size.txt")
    args = p.parse_args(argv)
    rows = [
        "| model | ONNX weights, real shapes (bytes) | weights.safetensors (bytes) | "
        "difference | other files |",
        "|---|--:|--:|--:|---|",
    ]
    worst = 0.0
    for name in [*ZOO, "inception", "transformer"]:
        model = _model(name)
        real = onnx_weight_bytes(model)
        with tempfile.TemporaryDirectory() as d:
            r = compile_model(model, d, CompileOptions(clusters=2))
            size = os.path.getsize(r.weights_path)
            others = sorted(f for f in os.listdir(d) if f != "weights.safetensors")
        diff = (size - real) / real
        worst = max(worst, abs(diff))
        rows.append(f"| {name} | {real:,} | {size:,} | {diff:+.2%} | {', '.join(others)} |")
        print(rows[-1], flush=True)
    text = "\n".join(
        [
            f"# weights.safetensors against the models' weights, {datetime.date.today()}",
            f"# command: python bench/weights_size.py {' '.join(argv or sys.argv[1:])}".rstrip(),
            "",
            *rows,
            "",
            f"Largest difference: {worst:.2%}. The file is larger by its header (names, shapes,",
            "dtypes); it is smaller where the graph rewrites fold a BatchNormalization into the",
            "convolution before it (its four statistics vectors become one bias) and where",
            "constant folding removes shape vectors the module does not read.",
        ]
    )
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as f:
        f.write(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
