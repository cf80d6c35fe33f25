"""``ramiel-translate``: translations in and out of Ramiel IR (like ``mlir-translate``).

* ``--import-onnx model.onnx [-o out.mlir]``: ONNX -> ``onnx`` dialect IR (see
  :mod:`ramiel.importer`). Large initializers go to a safetensors file next to the output
  (``out.safetensors``; ``--weights FILE`` to choose), referenced by the module attribute
  ``ramiel.weights``; with the IR on stdout, a model with large initializers needs
  ``--weights FILE`` (no file is written where the user did not ask). ``--input-shape NAME=1,3,224,224`` (repeatable) binds dynamic input
  dimensions; ``--ort-optimize`` runs onnxruntime's basic graph optimiser first.
* ``--to-python in.mlir [-o model.py]``: ``torchpy`` IR -> Python source (see
  :mod:`ramiel.printer`): a ``torch.nn.Module`` class (``--class-name``, default from the input
  file's name; ``--trainable``: floating-point weights as parameters); with ``-o model.py``, the
  weights the module uses are written beside it, named after it (``model.safetensors``, its
  buffers' names; ``--weights FILE`` to choose), and the classes load that file (their
  ``WEIGHTS_FILE``); with the source on stdout no weights file is written unless ``--weights``
  names one (a note on stderr says so).

Errors are printed as one ``error: ...`` line on stderr with exit status 1; an error in the input
IR is located as ramiel-opt and MLIR's tools print it, ``file:line:col: error: reason``, followed by
the offending line.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import tempfile
from collections.abc import Sequence

from xdsl.dialects.builtin import TensorType
from xdsl.printer import Printer
from xdsl.utils.exceptions import ParseError, VerifyException

from ramiel.attrs import WEIGHTS_ATTR, get_str
from ramiel.context import make_context
from ramiel.errors import RamielError
from ramiel.files import output_file, same_file, write_text
from ramiel.parsing import LocatedVerifyError
from ramiel.tools.common import (
    ArgumentParser,
    add_input_shape,
    add_version,
    input_shape_bindings,
    path,
    plain,
    run_command,
)


def _parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog="ramiel-translate", description=plain(__doc__.splitlines()[0]))
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--import-onnx", action="store_true", help="ONNX model -> onnx dialect IR")
    mode.add_argument("--to-python", action="store_true", help="torchpy IR -> Python source")
    p.add_argument("input", type=path, help="input file ('-' for stdin with --to-python)")
    p.add_argument("-o", "--output", type=path, help="output file (default: stdout)")
    add_input_shape(p)
    p.add_argument(
        "--weights",
        type=path,
        help="the safetensors weights file: --import-onnx's large initializers (required for "
        "such a model when the IR goes to stdout), --to-python's module weights (none written "
        "when the source goes to stdout); default: beside -o's file, named after it",
    )
    p.add_argument("--ort-optimize", action="store_true", help="run ORT's basic optimiser first")
    p.add_argument("--class-name", help="--to-python: the module class (default: from the file)")
    p.add_argument(
        "--trainable",
        action="store_true",
        help="--to-python: floating-point weights as nn.Parameters (else buffers)",
    )
    add_version(p)
    return p


def _import_onnx(args: argparse.Namespace) -> str:
    from ramiel.importer import ImportOptions, import_onnx  # lazy: numpy,onnx

    shapes = input_shape_bindings(args.input_shape)
    scratch = None
    if args.weights:
        weights_path = args.weights
    elif args.output:
        weights_path = os.path.splitext(args.output)[0] + ".safetensors"
    else:  # IR on stdout: no weights file unless the user names one (checked below)
        scratch = tempfile.TemporaryDirectory(prefix="ramiel-import-")
        weights_path = os.path.join(scratch.name, "weights.safetensors")
    if scratch is None:
        output_file(weights_path, "weights file")
        if args.output and same_file(args.output, weights_path):
            raise RamielError(
                f"-o {args.output} is where the weights go ({weights_path}): the IR and its "
                "weights would be one file; write the IR to FILE.mlir, or name the weights "
                "with --weights"
            )
    out_dir = os.path.dirname(os.path.abspath(args.output)) if args.output else os.getcwd()
    ref = os.path.relpath(os.path.abspath(weights_path), out_dir)
    try:
        module = import_onnx(
            args.input,
            ImportOptions(
                input_shapes=shapes,
                weights_path=weights_path,
                weights_ref=ref,
                ort_optimize=args.ort_optimize,
            ),
        )
    finally:
        if scratch is not None:
            scratch.cleanup()
    if scratch is not None and os.path.basename(weights_path) in (
        get_str(module, WEIGHTS_ATTR) or ""
    ):
        raise RamielError(
            f"{args.input}: the model has large initializers, which Ramiel keeps in a weights "
            "file beside the IR; with the IR on stdout, name that file: --weights FILE "
            "(or write the IR with -o FILE.mlir: the weights go to FILE.safetensors)"
        )
    module.verify()
    _reject_data_dependent_shapes(module, out_dir)

    buf = io.StringIO()
    Printer(stream=buf).print_op(module)
    buf.write("\n")
    return buf.getvalue()


def _reject_data_dependent_shapes(module, ir_dir: str) -> None:  # type: ignore[no-untyped-def]
    """Raise :class:`~ramiel.errors.DataDependentShapeError` for a shape that only the input data
    decide (NonZero of an input): what ``ramiel compile`` rejects, so this after constant folding
    (a NonZero of a constant folds away) on a copy of ``module``; the IR printed is not folded."""

    def static(t) -> bool:  # type: ignore[no-untyped-def]
        return isinstance(t, TensorType) and all(d >= 0 for d in t.get_shape())

    onnx_values = [r for op in module.walk() if op.name.startswith("onnx.") for r in op.results]
    if all(static(r.type) or not isinstance(r.type, TensorType) for r in onnx_values):
        return
    from ramiel.clustering import main_func  # lazy: numpy,onnx
    from ramiel.lowering.to_torchpy import check_static_shapes  # lazy: numpy,onnx,torch
    from ramiel.passes.constant_fold import ConstantFold  # lazy: numpy,onnx
    from ramiel.passes.dce import DeadCodeElimination  # lazy: numpy,onnx

    folded = module.clone()
    ctx = make_context(ir_dir)  # the module's ramiel.weights is relative to the IR's directory
    for p in (ConstantFold(), DeadCodeElimination()):
        p.apply(ctx, folded)
    check_static_shapes(list(main_func(folded).body.block.ops))


def _to_python(args: argparse.Namespace) -> str:
    from ramiel.printer import (  # lazy: numpy,onnx
        NO_WEIGHTS_NOTE,
        module_weights_path,
        print_python_file,
    )

    # the classes load the weights file's name from their own directory
    weights = module_weights_path(args.weights, args.output)
    if weights is not None:
        output_file(weights, "weights file")
    if args.class_name is not None and not args.class_name.isidentifier():
        raise RamielError(f"--class-name {args.class_name!r} is not a Python identifier")
    source = print_python_file(
        args.input, weights_out=weights, class_name=args.class_name, trainable=args.trainable
    )
    if weights is None and _has_weights(source):
        print(NO_WEIGHTS_NOTE, file=sys.stderr)
    return source


def _has_weights(source: str) -> bool:
    """The generated classes register at least one weight (a buffer or parameter)."""
    return "self.register_buffer(" in source or "torch.nn.Parameter(" in source


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``ramiel-translate``; returns the exit status."""
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    return run_command(_translate, argv)


def _translate(argv: Sequence[str] | None) -> int:
    args = _parser().parse_args(argv)

    if args.output is not None:
        output_file(args.output)
    _check_distinct(args)
    try:
        text = _import_onnx(args) if args.import_onnx else _to_python(args)
    except ParseError as e:
        from ramiel.tools.opt import format_parse_error  # lazy: numpy,onnx

        print(format_parse_error(e), file=sys.stderr)
        return 1
    except LocatedVerifyError as e:  # file:line:col: error: reason, as ramiel-opt prints it
        print(e.diagnostic(), file=sys.stderr)
        return 1
    except VerifyException as e:
        raise RamielError(str(e)) from None
    if args.output:
        write_text(args.output, text)
    else:
        sys.stdout.write(text)
    return 0


def _check_distinct(args: argparse.Namespace) -> None:
    """The input, ``-o`` and ``--weights`` name three files: writing the IR over the ONNX model
    it comes from, or the module and its weights into one file, loses one of them.

    Raises:
        RamielError: two of them are one file.
    """
    named = [("the input", args.input), ("-o", args.output), ("--weights", args.weights)]
    paths = [(what, p) for what, p in named if p and p != "-"]
    for i, (wa, pa) in enumerate(paths):
        for wb, pb in paths[i + 1 :]:
            if same_file(pa, pb):
                raise RamielError(
                    f"{wa} and {wb} are the same file ({pb}): writing one would destroy the "
                    "other; name another"
                )


if __name__ == "__main__":
    sys.exit(main())
