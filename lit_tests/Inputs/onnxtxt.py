"""Convert an ONNX model in ONNX's textual syntax to a binary ``.onnx`` file (lit helper).

    python onnxtxt.py IN.onnxtxt OUT.onnx [--initializers-as-inputs] [--name-nodes] [--no-check]
                                         [--drop-input-shape NAME] [--dim NAME:D=VALUE]

``#`` lines (lit's RUN/CHECK lines) are comments in the text syntax. ``--initializers-as-inputs``
also lists every initializer as a graph input (the pre-IR-4 convention of the ONNX zoo files);
``--name-nodes`` names unnamed nodes ``<OpType>_<index>`` (the text syntax has no node names);
``--no-check`` skips ``onnx.checker`` (to write deliberately unsupported models);
``--drop-input-shape NAME`` removes the shape of graph input NAME (the text syntax cannot say "no
shape", only "rank 0"); ``--dim NAME:D=VALUE`` sets dimension D of graph input or output NAME to
``dim_value: VALUE`` (the text syntax has no negative sizes, which some exporters write for
"unknown").
"""

import argparse

import onnx
import onnx.parser
from onnx import helper

p = argparse.ArgumentParser()
p.add_argument("input")
p.add_argument("output")
p.add_argument("--initializers-as-inputs", action="store_true")
p.add_argument("--name-nodes", action="store_true")
p.add_argument("--no-check", action="store_true")
p.add_argument("--drop-input-shape", action="append", default=[])
p.add_argument("--dim", action="append", default=[])
args = p.parse_args()

with open(args.input) as f:
    model = onnx.parser.parse_model(f.read())
if args.initializers_as_inputs:
    for init in model.graph.initializer:
        model.graph.input.append(
            helper.make_tensor_value_info(init.name, init.data_type, init.dims)
        )
for inp in model.graph.input:
    if inp.name in args.drop_input_shape:
        inp.type.tensor_type.ClearField("shape")
for spec in args.dim:
    name, rest = spec.split(":")
    d, value = rest.split("=")
    for vi in [*model.graph.input, *model.graph.output]:
        if vi.name == name:
            vi.type.tensor_type.shape.dim[int(d)].dim_value = int(value)
if args.name_nodes:
    for i, node in enumerate(model.graph.node):
        node.name = node.name or f"{node.op_type}_{i}"
if not args.no_check:
    onnx.checker.check_model(model)
onnx.save(model, args.output)
