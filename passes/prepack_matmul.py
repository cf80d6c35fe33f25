"""``--prepack-matmul``: run the matrix products with a constant weight with the weight packed once
into oneDNN's blocked format.

What it does
    Marks every ``onnx.MatMul`` whose second operand is a constant (an ``onnx.Constant``: a
    weight) 2-D float32 matrix (K, N) of at least :data:`MIN_WEIGHTS` elements and whose first
    is a float32 tensor (..., K) of static shape, at least :data:`MIN_MACS` multiply-accumulates
    in all, with ``ramiel.prepack = "none"``;
    ``--lower-to-torchpy`` then prints it as ``ops.matmul_prepacked(x, w)`` instead of
    ``torch.matmul(x, w)``. That helper reorders the weight once per process
    (``torch.ops.mkldnn._reorder_linear_weight``, what inductor's freezing emits for a frozen
    linear layer) and runs ``torch.ops.mkldnn._linear_pointwise``; under tracing or compiling
    it is the plain ``torch.matmul`` (see :func:`ramiel.runtime.ops.matmul_prepacked`).

    A marked MatMul whose product alone an ``onnx.Add`` of a constant bias reads (shape
    ``(N,)``, leading 1s allowed; same block: the product is no graph output and crosses no
    channel) runs that Add fused, and the ``onnx.Relu`` that alone reads the sum too:
    ``ramiel.prepack`` is then ``"bias"`` or ``"bias+relu"``
    (:func:`ramiel.layout.matmul_epilogue`), and the lowering prints the ops as one
    ``ops.matmul_prepacked(x, w, b)`` (``activation='relu'``) named after the last (oneDNN adds
    the bias in the product's call, as onnxruntime's ``MatMulAddFusion`` fuses them into one
    Gemm; the Relu is ``torch.relu_`` on its result: oneDNN's Relu post-op turns NaN into 0). The Add and the Relu stay in the IR,
    which stays valid ONNX. A Gelu after the bias stays ``F.gelu``: oneDNN's GELU post-op is
    slower than torch's kernel here (see *Measured*).

    ``ramiel compile`` runs it after clustering, beside ``--prepack-conv``, and
    ``--no-prepack-matmul`` / ``CompileOptions(disable=["prepack-matmul"])`` switch it off;
    ``trainable=True`` leaves it out (the oneDNN op has no backward).

Options
    None.

Measured: see :data:`MIN_WEIGHTS` and docs/benchmarks.md (*Prepacked matrix products*). The
epilogue (2026-12-02, AMD EPYC, AVX2, 1 thread, load 0.9-1.1, median µs of hot interleaved
calls): the bias in the call against ``add_`` after it 836 vs 943 (32 x 768 @ 768 x 768), 4511
vs 4816 (32 x 768 @ 768 x 3072), 14076 vs 14650 (197 x 768 @ 768 x 3072); the Relu post-op
against ``torch.relu_`` after it 3974 vs 3943, 568 vs 572 (64 x 256 @ 256 x 1024), 14873 vs
15336; the GELU post-op against ``F.gelu`` after it 4325 vs 4261, 703 vs 656, 18367 vs 16216.
Whole sequential modules against the ones without the epilogue (``bench/seq_vs_ort.py``,
interleaved, 1 thread, load 0.9): hf_bert 166.9 [164.3, 172.9] vs 172.3 [168.7, 175.1] ms,
hf_vit 617 [597, 632] vs 614 [594, 632] ms; with the GELU post-op too hf_vit took 648 [619,
659].

Source: PyTorch inductor's freezing passes (``torch/_inductor/fx_passes/mkldnn_fusion.py``:
``_register_weight_pack_pass`` reorders a frozen linear layer's weight for
``mkldnn._linear_pointwise``); onnxruntime prepacks constant MatMul weights the same way (MLAS
``MlasGemmPackB``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import Float32Type, ModuleOp, TensorType
from xdsl.passes import ModulePass

from ramiel.attrs import set_str
from ramiel.dialects.onnx import OnnxOp
from ramiel.layout import PREPACK_ATTR, matmul_epilogue, static_shape_of

__all__ = ["MIN_MACS", "MIN_WEIGHTS", "PrepackMatmul", "prepack_matmuls"]

#: Multiply-accumulates below which a product stays ``torch.matmul``: the oneDNN op makes its
#: primitive on every call (about 30 µs here, ``bench/matmul_prepack.py``, 1 thread, two runs:
#: 16 x 256 @ 256 x 256 took 67-75 µs packed against 43 µs plain, 1 x 768 @ 768 x 768 84-90
#: against 62-68).
MIN_MACS = 4_000_000

#: Weight elements below which a product stays ``torch.matmul``: what packing saves is the
#: per-call copy of the weight into MKL's panels, small for a small weight (64 x 256 @ 256 x 256
#: 156-162 against 118-167 µs; at this threshold 64 x 256 @ 256 x 1024 562-597 against 545-582:
#: a tie; 32 x 768 @ 768 x 3072 3627-3961 against 5000-5172).
MIN_WEIGHTS = 262144


def _f32(t: object) -> bool:
    return isinstance(t, TensorType) and isinstance(t.element_type, Float32Type)


def _packable(op: OnnxOp) -> bool:
    """Whether the MatMul ``op`` runs prepacked (see the module doc)."""
    if op.op_type != "MatMul" or len(op.operands) != 2:
        return False
    x, w = op.operands
    if not (_f32(x.type) and _f32(w.type)):
        return False
    xs, ws = static_shape_of(x), static_shape_of(w)
    if xs is None or ws is None or len(xs) < 2 or len(ws) != 2 or xs[-1] != ws[0]:
        return False
    owner = w.owner
    if not isinstance(owner, OnnxOp) or owner.op_type != "Constant":
        return False
    rows = math.prod(xs[:-1])
    return ws[0] * ws[1] >= MIN_WEIGHTS and rows * ws[0] * ws[1] >= MIN_MACS


def prepack_matmuls(module: ModuleOp) -> int:
    """Run the pass on ``module``; returns the number of products marked."""
    n = 0
    for op in [o for o in module.walk() if isinstance(o, OnnxOp) and o.op_type == "MatMul"]:
        if _packable(op):
            set_str(op, PREPACK_ATTR, matmul_epilogue(op)[0])
            n += 1
    return n


@dataclass(frozen=True)
class PrepackMatmul(ModulePass):
    """Mark the matrix products with a constant weight to run prepacked (see the module doc)."""

    name = "prepack-matmul"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        prepack_matmuls(op)
