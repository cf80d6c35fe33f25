"""``--constant-fold``: evaluate ONNX ops whose inputs are known at compile time.

What it does
    Replaces an ``onnx`` op by ``onnx.Constant`` ops holding its results when

    * every operand (``none`` aside) is an ``onnx.Constant``: the ConstantOfShape weights of the
      ONNX zoo models, the Gather/Unsqueeze/Concat of shape values in PyTorch exports, or
    * the op reads only the *shape* of its operand and that shape is static: ``onnx.Shape`` and
      ``onnx.Size``, where the PyTorch-export chains Shape -> Gather -> Unsqueeze -> Concat ->
      Reshape start.

    The rewrite is one xDSL pattern (:class:`ramiel.folding.FoldConstantsPattern`) applied by
    ``PatternRewriteWalker`` in one forward sweep in program order, which folds whole chains:
    the folded op is replaced through the ``PatternRewriter`` by its constants; the constants it
    read are left in place, for ``--dce`` to remove when nothing else reads them. Ops that are
    not folded get their result types refined (``PatternRewriter.replace_value_with_new_type``):
    a result type that is unranked or has dynamic dimensions is re-inferred with ONNX shape
    inference (``onnx.shape_inference.infer_node_outputs``, given the operand types and the
    values of the constant operands) and replaced when the inferred type is more static; then a
    function's result types follow its ``func.return`` (``FuncOp.update_function_type``, by
    :class:`ramiel.folding.SyncFunctionTypePattern`). So a Reshape whose shape operand just became a
    constant gets a static type, and the passes after this one see static shapes.

Which results become constants (the size policy)
    * Splats of any size (all elements equal): stored as one element,
      ``dense<2.000000e-02> : tensor<4096x25088xf32>``. When the operands are splats the value is
      computed from one element and never materialised (ConstantOfShape; element-wise ops and
      data-movement ops such as Unsqueeze, Reshape, Transpose of splats).
    * Results with at most :data:`ramiel.weights.INLINE_LIMIT` (16) elements: inline ``dense``.
    * Larger non-splat results (a Transpose or Reshape of a real weight, the Gather of position
      embeddings at constant positions, the Unsqueeze of batch-norm scales): folded when they
      take no more bytes than the op's constant operands (:func:`fits_budget`; a splat operand
      counts one element), so folding never makes the weights much larger than the model's
      own: a Transpose, Reshape, Gather or Mul of a weight folds, an Expand or Tile of a
      non-splat weight does not (it stays an op, computed at every inference). The result becomes
      a new ``dense_resource`` tensor of the module's weight store (the ``ramiel.weights``
      file, read through the context's :class:`~ramiel.weights.WeightStores`), held in memory until the IR is written: ``ramiel
      compile`` saves it into its one ``weights.safetensors`` (which ``model.mlir`` refers to)
      like any other weight; ``ramiel-opt`` writes the module's weights beside its output (see
      :mod:`ramiel.tools.opt`). The input weights file is never modified. A module without a
      weights file keeps every constant inline, and so do its folded results. Compared with
      leaving such constant subgraphs to the generated code, no inference recomputes them.

How ops are evaluated
    With ``onnx.reference.ReferenceEvaluator`` on a one-node model at the module's opset
    (``onnx.opset``), one evaluator cached per node signature. Not folded, and left to the
    runtime:

    * nondeterministic ops (RandomNormal, RandomUniform, their ``Like`` forms, Multinomial,
      Bernoulli);
    * ops the reference evaluator of onnx 1.23 gets wrong: Softmax, LogSoftmax and Hardmax before
      opset 13 (it applies the opset-13 rule, without the flatten to 2-D), LRN (it sums over the
      wrong axis), Pad with negative pads (it rejects them);
    * results whose element type or shape differ from the op's static result type (an evaluator
      or shape-inference disagreement, such as pooling with ``ceil_mode=1`` before opset 22);
    * ops whose operands or results exceed :data:`MAX_EVAL_ELEMENTS` elements;
    * large non-splat results over the size budget above;
    * ops the evaluator fails on.

Options
    None.

Source: MLIR's constant folding (``OpFoldResult``, dialect ``materializeConstant``) and
onnx-mlir's ``--constprop-onnx``; values from the ONNX reference implementation
(https://onnx.ai/onnx/api/reference.html).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ramiel.context import module_store
from ramiel.folding import fold_constants

__all__ = ["ConstantFold"]


@dataclass(frozen=True)
class ConstantFold(ModulePass):
    """Fold ``onnx`` ops whose inputs are constants (see the module doc for the policy)."""

    name = "constant-fold"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        fold_constants(op, module_store(ctx, op))
