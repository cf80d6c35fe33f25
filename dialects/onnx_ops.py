"""The ``onnx`` dialect's 189 op classes, one per ONNX operator (generated: do not edit).

Written by ``scripts/gen_onnx_dialect.py`` from the operator schemas of onnx 1.23.2
(``onnx.defs``); ``tests/test_dialect_onnx.py`` checks that it is current. Import the dialect
from :mod:`ramiel.dialects.onnx`; see :class:`~ramiel.dialects.onnx_base.OnnxOp` for the
verifier and the accessors' helpers.
"""

from __future__ import annotations

from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    opt_prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import ConstantLike, Pure, RecursivelySpeculatable, RecursiveMemoryEffect

from ramiel.dialects.onnx_base import OnnxOp
from ramiel.dialects.onnx_traits import (
    Broadcasting,
    Cheap,
    DataMovement,
    DenseCompute,
    Elementwise,
    GlobalPooling,
    LayoutAnchor,
    LayoutTransparent,
    Pooling,
)


@irdl_op_definition
class AbsOp(OnnxOp):
    """``onnx.Abs``: the ONNX Abs operator (see onnx.defs schema).

    Versions (since opset): 1, 6, 13. Inputs: ``X``. Outputs: ``Y``. Attributes:
    ``consumed_inputs``.
    """

    name = "onnx.Abs"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    consumed_inputs = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Elementwise(), LayoutTransparent())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class AcosOp(OnnxOp):
    """``onnx.Acos``: the ONNX Acos operator (see onnx.defs schema).

    Versions (since opset): 7, 22. Inputs: ``input``. Outputs: ``output``. Attributes: none.
    """

    name = "onnx.Acos"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()

    traits = traits_def(Pure(), Elementwise())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class AcoshOp(OnnxOp):
    """``onnx.Acosh``: the ONNX Acosh operator (see onnx.defs schema).

    Versions (since opset): 9, 22. Inputs: ``input``. Outputs: ``output``. Attributes: none.
    """

    name = "onnx.Acosh"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()

    traits = traits_def(Pure(), Elementwise())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class AddOp(OnnxOp):
    """``onnx.Add``: the ONNX Add operator (see onnx.defs schema).

    Versions (since opset): 1, 6, 7, 13, 14. Inputs: ``A``, ``B``. Outputs: ``C``. Attributes:
    ``axis``, ``broadcast``, ``consumed_inputs``.
    """

    name = "onnx.Add"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axis = opt_prop_def(Attribute)
    broadcast = opt_prop_def(Attribute)
    consumed_inputs = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Elementwise(), Broadcasting(), LayoutTransparent())

    @property
    def A(self) -> SSAValue:
        """The operand of the ONNX input ``A``."""
        return self.required_input("A")

    @property
    def B(self) -> SSAValue:
        """The operand of the ONNX input ``B``."""
        return self.required_input("B")

    @property
    def C(self) -> SSAValue | None:
        """The result of the ONNX output ``C`` (``None`` if not produced)."""
        return self.output("C")


@irdl_op_definition
class AffineGridOp(OnnxOp):
    """``onnx.AffineGrid``: the ONNX AffineGrid operator (see onnx.defs schema).

    Versions (since opset): 20. Inputs: ``theta``, ``size``. Outputs: ``grid``. Attributes:
    ``align_corners``.
    """

    name = "onnx.AffineGrid"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    align_corners = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def theta(self) -> SSAValue:
        """The operand of the ONNX input ``theta``."""
        return self.required_input("theta")

    @property
    def size(self) -> SSAValue:
        """The operand of the ONNX input ``size``."""
        return self.required_input("size")

    @property
    def grid(self) -> SSAValue | None:
        """The result of the ONNX output ``grid`` (``None`` if not produced)."""
        return self.output("grid")


@irdl_op_definition
class AndOp(OnnxOp):
    """``onnx.And``: the ONNX And operator (see onnx.defs schema).

    Versions (since opset): 1, 7. Inputs: ``A``, ``B``. Outputs: ``C``. Attributes: ``axis``,
    ``broadcast``.
    """

    name = "onnx.And"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axis = opt_prop_def(Attribute)
    broadcast = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Elementwise(), Broadcasting(), LayoutTransparent())

    @property
    def A(self) -> SSAValue:
        """The operand of the ONNX input ``A``."""
        return self.required_input("A")

    @property
    def B(self) -> SSAValue:
        """The operand of the ONNX input ``B``."""
        return self.required_input("B")

    @property
    def C(self) -> SSAValue | None:
        """The result of the ONNX output ``C`` (``None`` if not produced)."""
        return self.output("C")


@irdl_op_definition
class ArgMaxOp(OnnxOp):
    """``onnx.ArgMax``: the ONNX ArgMax operator (see onnx.defs schema).

    Versions (since opset): 1, 11, 12, 13. Inputs: ``data``. Outputs: ``reduced``. Attributes:
    ``axis``, ``keepdims``, ``select_last_index``.
    """

    name = "onnx.ArgMax"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axis = opt_prop_def(Attribute)
    keepdims = opt_prop_def(Attribute)
    select_last_index = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def data(self) -> SSAValue:
        """The operand of the ONNX input ``data``."""
        return self.required_input("data")

    @property
    def reduced(self) -> SSAValue | None:
        """The result of the ONNX output ``reduced`` (``None`` if not produced)."""
        return self.output("reduced")


@irdl_op_definition
class ArgMinOp(OnnxOp):
    """``onnx.ArgMin``: the ONNX ArgMin operator (see onnx.defs schema).

    Versions (since opset): 1, 11, 12, 13. Inputs: ``data``. Outputs: ``reduced``. Attributes:
    ``axis``, ``keepdims``, ``select_last_index``.
    """

    name = "onnx.ArgMin"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axis = opt_prop_def(Attribute)
    keepdims = opt_prop_def(Attribute)
    select_last_index = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def data(self) -> SSAValue:
        """The operand of the ONNX input ``data``."""
        return self.required_input("data")

    @property
    def reduced(self) -> SSAValue | None:
        """The result of the ONNX output ``reduced`` (``None`` if not produced)."""
        return self.output("reduced")


@irdl_op_definition
class AsinOp(OnnxOp):
    """``onnx.Asin``: the ONNX Asin operator (see onnx.defs schema).

    Versions (since opset): 7, 22. Inputs: ``input``. Outputs: ``output``. Attributes: none.
    """

    name = "onnx.Asin"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()

    traits = traits_def(Pure(), Elementwise())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class AsinhOp(OnnxOp):
    """``onnx.Asinh``: the ONNX Asinh operator (see onnx.defs schema).

    Versions (since opset): 9, 22. Inputs: ``input``. Outputs: ``output``. Attributes: none.
    """

    name = "onnx.Asinh"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()

    traits = traits_def(Pure(), Elementwise())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class AtanOp(OnnxOp):
    """``onnx.Atan``: the ONNX Atan operator (see onnx.defs schema).

    Versions (since opset): 7, 22. Inputs: ``input``. Outputs: ``output``. Attributes: none.
    """

    name = "onnx.Atan"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()

    traits = traits_def(Pure(), Elementwise())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class AtanhOp(OnnxOp):
    """``onnx.Atanh``: the ONNX Atanh operator (see onnx.defs schema).

    Versions (since opset): 9, 22. Inputs: ``input``. Outputs: ``output``. Attributes: none.
    """

    name = "onnx.Atanh"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()

    traits = traits_def(Pure(), Elementwise())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class AttentionOp(OnnxOp):
    """``onnx.Attention``: the ONNX Attention operator (see onnx.defs schema).

    Versions (since opset): 23, 24, 25. Inputs: ``Q``, ``K``, ``V``, ``attn_mask`` (optional),
    ``past_key`` (optional), ``past_value`` (optional), ``nonpad_kv_seqlen`` (optional).
    Outputs: ``Y``, ``present_key`` (optional), ``present_value`` (optional),
    ``qk_matmul_output`` (optional). Attributes: ``is_causal``, ``kv_num_heads``,
    ``left_window_size``, ``q_num_heads``, ``qk_matmul_output_mode``, ``right_window_size``,
    ``scale``, ``softcap``, ``softmax_precision``.
    """

    name = "onnx.Attention"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    is_causal = opt_prop_def(Attribute)
    kv_num_heads = opt_prop_def(Attribute)
    left_window_size = opt_prop_def(Attribute)
    q_num_heads = opt_prop_def(Attribute)
    qk_matmul_output_mode = opt_prop_def(Attribute)
    right_window_size = opt_prop_def(Attribute)
    scale = opt_prop_def(Attribute)
    softcap = opt_prop_def(Attribute)
    softmax_precision = opt_prop_def(Attribute)

    traits = traits_def(Pure(), DenseCompute())

    @property
    def Q(self) -> SSAValue:
        """The operand of the ONNX input ``Q``."""
        return self.required_input("Q")

    @property
    def K(self) -> SSAValue:
        """The operand of the ONNX input ``K``."""
        return self.required_input("K")

    @property
    def V(self) -> SSAValue:
        """The operand of the ONNX input ``V``."""
        return self.required_input("V")

    @property
    def attn_mask(self) -> SSAValue | None:
        """The operand of the ONNX input ``attn_mask`` (``None`` if absent or ``none``)."""
        return self.input("attn_mask")

    @property
    def past_key(self) -> SSAValue | None:
        """The operand of the ONNX input ``past_key`` (``None`` if absent or ``none``)."""
        return self.input("past_key")

    @property
    def past_value(self) -> SSAValue | None:
        """The operand of the ONNX input ``past_value`` (``None`` if absent or ``none``)."""
        return self.input("past_value")

    @property
    def nonpad_kv_seqlen(self) -> SSAValue | None:
        """The operand of the ONNX input ``nonpad_kv_seqlen`` (``None`` if absent or ``none``)."""
        return self.input("nonpad_kv_seqlen")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")

    @property
    def present_key(self) -> SSAValue | None:
        """The result of the ONNX output ``present_key`` (``None`` if not produced)."""
        return self.output("present_key")

    @property
    def present_value(self) -> SSAValue | None:
        """The result of the ONNX output ``present_value`` (``None`` if not produced)."""
        return self.output("present_value")

    @property
    def qk_matmul_output(self) -> SSAValue | None:
        """The result of the ONNX output ``qk_matmul_output`` (``None`` if not produced)."""
        return self.output("qk_matmul_output")


@irdl_op_definition
class AveragePoolOp(OnnxOp):
    """``onnx.AveragePool``: the ONNX AveragePool operator (see onnx.defs schema).

    Versions (since opset): 1, 7, 10, 11, 19, 22. Inputs: ``X``. Outputs: ``Y``. Attributes:
    ``auto_pad``, ``ceil_mode``, ``count_include_pad``, ``dilations``, ``kernel_shape``,
    ``pads``, ``strides``.
    """

    name = "onnx.AveragePool"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    auto_pad = opt_prop_def(Attribute)
    ceil_mode = opt_prop_def(Attribute)
    count_include_pad = opt_prop_def(Attribute)
    dilations = opt_prop_def(Attribute)
    kernel_shape = opt_prop_def(Attribute)
    pads = opt_prop_def(Attribute)
    strides = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Pooling(), LayoutAnchor())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class BatchNormalizationOp(OnnxOp):
    """``onnx.BatchNormalization``: the ONNX BatchNormalization operator (see onnx.defs schema).

    Versions (since opset): 1, 6, 7, 9, 14, 15. Inputs: ``X``, ``scale``, ``B``, ``input_mean``,
    ``input_var``, ``mean``, ``var``. Outputs: ``Y``, ``running_mean`` (optional),
    ``running_var`` (optional), ``mean`` (optional), ``var`` (optional), ``saved_mean``
    (optional), ``saved_var`` (optional). Attributes: ``consumed_inputs``, ``epsilon``,
    ``is_test``, ``momentum``, ``spatial``, ``training_mode``.
    """

    name = "onnx.BatchNormalization"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    consumed_inputs = opt_prop_def(Attribute)
    epsilon = opt_prop_def(Attribute)
    is_test = opt_prop_def(Attribute)
    momentum = opt_prop_def(Attribute)
    spatial = opt_prop_def(Attribute)
    training_mode = opt_prop_def(Attribute)

    traits = traits_def(Pure(), LayoutTransparent())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def scale(self) -> SSAValue:
        """The operand of the ONNX input ``scale``."""
        return self.required_input("scale")

    @property
    def B(self) -> SSAValue:
        """The operand of the ONNX input ``B``."""
        return self.required_input("B")

    @property
    def input_mean(self) -> SSAValue:
        """The operand of the ONNX input ``input_mean``."""
        return self.required_input("input_mean")

    @property
    def input_var(self) -> SSAValue:
        """The operand of the ONNX input ``input_var``."""
        return self.required_input("input_var")

    @property
    def mean(self) -> SSAValue:
        """The operand of the ONNX input ``mean``."""
        return self.required_input("mean")

    @property
    def var(self) -> SSAValue:
        """The operand of the ONNX input ``var``."""
        return self.required_input("var")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")

    @property
    def running_mean(self) -> SSAValue | None:
        """The result of the ONNX output ``running_mean`` (``None`` if not produced)."""
        return self.output("running_mean")

    @property
    def running_var(self) -> SSAValue | None:
        """The result of the ONNX output ``running_var`` (``None`` if not produced)."""
        return self.output("running_var")

    @property
    def mean_(self) -> SSAValue | None:
        """The result of the ONNX output ``mean`` (``None`` if not produced)."""
        return self.output("mean")

    @property
    def var_(self) -> SSAValue | None:
        """The result of the ONNX output ``var`` (``None`` if not produced)."""
        return self.output("var")

    @property
    def saved_mean(self) -> SSAValue | None:
        """The result of the ONNX output ``saved_mean`` (``None`` if not produced)."""
        return self.output("saved_mean")

    @property
    def saved_var(self) -> SSAValue | None:
        """The result of the ONNX output ``saved_var`` (``None`` if not produced)."""
        return self.output("saved_var")


@irdl_op_definition
class BernoulliOp(OnnxOp):
    """``onnx.Bernoulli``: the ONNX Bernoulli operator (see onnx.defs schema).

    Versions (since opset): 15, 22. Inputs: ``input``. Outputs: ``output``. Attributes:
    ``dtype``, ``seed``.
    """

    name = "onnx.Bernoulli"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    dtype = opt_prop_def(Attribute)
    seed = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class BitCastOp(OnnxOp):
    """``onnx.BitCast``: the ONNX BitCast operator (see onnx.defs schema).

    Versions (since opset): 26. Inputs: ``input``. Outputs: ``output``. Attributes: ``to``.
    """

    name = "onnx.BitCast"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    to = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class BitShiftOp(OnnxOp):
    """``onnx.BitShift``: the ONNX BitShift operator (see onnx.defs schema).

    Versions (since opset): 11, 28. Inputs: ``X``, ``Y``. Outputs: ``Z``. Attributes:
    ``direction``.
    """

    name = "onnx.BitShift"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    direction = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Elementwise(), Broadcasting())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def Y(self) -> SSAValue:
        """The operand of the ONNX input ``Y``."""
        return self.required_input("Y")

    @property
    def Z(self) -> SSAValue | None:
        """The result of the ONNX output ``Z`` (``None`` if not produced)."""
        return self.output("Z")


@irdl_op_definition
class BitwiseAndOp(OnnxOp):
    """``onnx.BitwiseAnd``: the ONNX BitwiseAnd operator (see onnx.defs schema).

    Versions (since opset): 18. Inputs: ``A``, ``B``. Outputs: ``C``. Attributes: none.
    """

    name = "onnx.BitwiseAnd"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()

    traits = traits_def(Pure(), Elementwise(), Broadcasting())

    @property
    def A(self) -> SSAValue:
        """The operand of the ONNX input ``A``."""
        return self.required_input("A")

    @property
    def B(self) -> SSAValue:
        """The operand of the ONNX input ``B``."""
        return self.required_input("B")

    @property
    def C(self) -> SSAValue | None:
        """The result of the ONNX output ``C`` (``None`` if not produced)."""
        return self.output("C")


@irdl_op_definition
class BitwiseNotOp(OnnxOp):
    """``onnx.BitwiseNot``: the ONNX BitwiseNot operator (see onnx.defs schema).

    Versions (since opset): 18. Inputs: ``X``. Outputs: ``Y``. Attributes: none.
    """

    name = "onnx.BitwiseNot"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()

    traits = traits_def(Pure(), Elementwise())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class BitwiseOrOp(OnnxOp):
    """``onnx.BitwiseOr``: the ONNX BitwiseOr operator (see onnx.defs schema).

    Versions (since opset): 18. Inputs: ``A``, ``B``. Outputs: ``C``. Attributes: none.
    """

    name = "onnx.BitwiseOr"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()

    traits = traits_def(Pure(), Elementwise(), Broadcasting())

    @property
    def A(self) -> SSAValue:
        """The operand of the ONNX input ``A``."""
        return self.required_input("A")

    @property
    def B(self) -> SSAValue:
        """The operand of the ONNX input ``B``."""
        return self.required_input("B")

    @property
    def C(self) -> SSAValue | None:
        """The result of the ONNX output ``C`` (``None`` if not produced)."""
        return self.output("C")


@irdl_op_definition
class BitwiseXorOp(OnnxOp):
    """``onnx.BitwiseXor``: the ONNX BitwiseXor operator (see onnx.defs schema).

    Versions (since opset): 18. Inputs: ``A``, ``B``. Outputs: ``C``. Attributes: none.
    """

    name = "onnx.BitwiseXor"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()

    traits = traits_def(Pure(), Elementwise(), Broadcasting())

    @property
    def A(self) -> SSAValue:
        """The operand of the ONNX input ``A``."""
        return self.required_input("A")

    @property
    def B(self) -> SSAValue:
        """The operand of the ONNX input ``B``."""
        return self.required_input("B")

    @property
    def C(self) -> SSAValue | None:
        """The result of the ONNX output ``C`` (``None`` if not produced)."""
        return self.output("C")


@irdl_op_definition
class BlackmanWindowOp(OnnxOp):
    """``onnx.BlackmanWindow``: the ONNX BlackmanWindow operator (see onnx.defs schema).

    Versions (since opset): 17. Inputs: ``size``. Outputs: ``output``. Attributes:
    ``output_datatype``, ``periodic``.
    """

    name = "onnx.BlackmanWindow"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    output_datatype = opt_prop_def(Attribute)
    periodic = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def size(self) -> SSAValue:
        """The operand of the ONNX input ``size``."""
        return self.required_input("size")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class CastOp(OnnxOp):
    """``onnx.Cast``: the ONNX Cast operator (see onnx.defs schema).

    Versions (since opset): 1, 6, 9, 13, 19, 21, 23, 24, 25, 28. Inputs: ``input``. Outputs:
    ``output``. Attributes: ``round_mode``, ``saturate``, ``to``.
    """

    name = "onnx.Cast"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    round_mode = opt_prop_def(Attribute)
    saturate = opt_prop_def(Attribute)
    to = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Elementwise(), DataMovement(), LayoutTransparent(), Cheap())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class CastLikeOp(OnnxOp):
    """``onnx.CastLike``: the ONNX CastLike operator (see onnx.defs schema).

    Versions (since opset): 15, 19, 21, 23, 24, 25. Inputs: ``input``, ``target_type``. Outputs:
    ``output``. Attributes: ``round_mode``, ``saturate``.
    """

    name = "onnx.CastLike"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    round_mode = opt_prop_def(Attribute)
    saturate = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Elementwise())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def target_type(self) -> SSAValue:
        """The operand of the ONNX input ``target_type``."""
        return self.required_input("target_type")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class CausalConvWithStateOp(OnnxOp):
    """``onnx.CausalConvWithState``: the ONNX CausalConvWithState operator (see onnx.defs schema).

    Versions (since opset): 27. Inputs: ``input``, ``weight``, ``bias`` (optional),
    ``past_state`` (optional). Outputs: ``output``, ``present_state``. Attributes:
    ``activation``.
    """

    name = "onnx.CausalConvWithState"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    activation = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def weight(self) -> SSAValue:
        """The operand of the ONNX input ``weight``."""
        return self.required_input("weight")

    @property
    def bias(self) -> SSAValue | None:
        """The operand of the ONNX input ``bias`` (``None`` if absent or ``none``)."""
        return self.input("bias")

    @property
    def past_state(self) -> SSAValue | None:
        """The operand of the ONNX input ``past_state`` (``None`` if absent or ``none``)."""
        return self.input("past_state")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")

    @property
    def present_state(self) -> SSAValue | None:
        """The result of the ONNX output ``present_state`` (``None`` if not produced)."""
        return self.output("present_state")


@irdl_op_definition
class CeilOp(OnnxOp):
    """``onnx.Ceil``: the ONNX Ceil operator (see onnx.defs schema).

    Versions (since opset): 1, 6, 13. Inputs: ``X``. Outputs: ``Y``. Attributes:
    ``consumed_inputs``.
    """

    name = "onnx.Ceil"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    consumed_inputs = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Elementwise(), LayoutTransparent())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class CeluOp(OnnxOp):
    """``onnx.Celu``: the ONNX Celu operator (see onnx.defs schema).

    Versions (since opset): 12, 28. Inputs: ``X``. Outputs: ``Y``. Attributes: ``alpha``.
    """

    name = "onnx.Celu"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    alpha = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Elementwise(), LayoutTransparent())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class CenterCropPadOp(OnnxOp):
    """``onnx.CenterCropPad``: the ONNX CenterCropPad operator (see onnx.defs schema).

    Versions (since opset): 18. Inputs: ``input_data``, ``shape``. Outputs: ``output_data``.
    Attributes: ``axes``.
    """

    name = "onnx.CenterCropPad"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axes = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def input_data(self) -> SSAValue:
        """The operand of the ONNX input ``input_data``."""
        return self.required_input("input_data")

    @property
    def shape(self) -> SSAValue:
        """The operand of the ONNX input ``shape``."""
        return self.required_input("shape")

    @property
    def output_data(self) -> SSAValue | None:
        """The result of the ONNX output ``output_data`` (``None`` if not produced)."""
        return self.output("output_data")


@irdl_op_definition
class ClipOp(OnnxOp):
    """``onnx.Clip``: the ONNX Clip operator (see onnx.defs schema).

    Versions (since opset): 1, 6, 11, 12, 13. Inputs: ``input``, ``min`` (optional), ``max``
    (optional). Outputs: ``output``. Attributes: ``consumed_inputs``, ``max``, ``min``.
    """

    name = "onnx.Clip"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    consumed_inputs = opt_prop_def(Attribute)
    max_ = opt_prop_def(Attribute, prop_name="max")
    min_ = opt_prop_def(Attribute, prop_name="min")

    traits = traits_def(Pure(), Elementwise(), LayoutTransparent())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def min(self) -> SSAValue | None:
        """The operand of the ONNX input ``min`` (``None`` if absent or ``none``)."""
        return self.input("min")

    @property
    def max(self) -> SSAValue | None:
        """The operand of the ONNX input ``max`` (``None`` if absent or ``none``)."""
        return self.input("max")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class Col2ImOp(OnnxOp):
    """``onnx.Col2Im``: the ONNX Col2Im operator (see onnx.defs schema).

    Versions (since opset): 18. Inputs: ``input``, ``image_shape``, ``block_shape``. Outputs:
    ``output``. Attributes: ``dilations``, ``pads``, ``strides``.
    """

    name = "onnx.Col2Im"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    dilations = opt_prop_def(Attribute)
    pads = opt_prop_def(Attribute)
    strides = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def image_shape(self) -> SSAValue:
        """The operand of the ONNX input ``image_shape``."""
        return self.required_input("image_shape")

    @property
    def block_shape(self) -> SSAValue:
        """The operand of the ONNX input ``block_shape``."""
        return self.required_input("block_shape")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class CompressOp(OnnxOp):
    """``onnx.Compress``: the ONNX Compress operator (see onnx.defs schema).

    Versions (since opset): 9, 11, 28. Inputs: ``input``, ``condition``. Outputs: ``output``.
    Attributes: ``axis``.
    """

    name = "onnx.Compress"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axis = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def condition(self) -> SSAValue:
        """The operand of the ONNX input ``condition``."""
        return self.required_input("condition")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class ConcatOp(OnnxOp):
    """``onnx.Concat``: the ONNX Concat operator (see onnx.defs schema).

    Versions (since opset): 1, 4, 11, 13. Inputs: ``inputs`` (variadic). Outputs:
    ``concat_result``. Attributes: ``axis``.
    """

    name = "onnx.Concat"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axis = opt_prop_def(Attribute)

    traits = traits_def(Pure(), DataMovement(), LayoutTransparent(), Cheap())

    @property
    def inputs(self) -> tuple[SSAValue, ...]:
        """The operands of the variadic ONNX input ``inputs``."""
        return self.variadic_input("inputs")

    @property
    def concat_result(self) -> SSAValue | None:
        """The result of the ONNX output ``concat_result`` (``None`` if not produced)."""
        return self.output("concat_result")


@irdl_op_definition
class ConstantOp(OnnxOp):
    """``onnx.Constant``: the ONNX Constant operator (see onnx.defs schema).

    Versions (since opset): 1, 9. Inputs: none. Outputs: ``output``. Attributes: ``value``.
    """

    name = "onnx.Constant"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    value = opt_prop_def(Attribute)

    traits = traits_def(Pure(), ConstantLike(), DataMovement())

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class ConstantOfShapeOp(OnnxOp):
    """``onnx.ConstantOfShape``: the ONNX ConstantOfShape operator (see onnx.defs schema).

    Versions (since opset): 9, 20, 21, 23, 24, 25. Inputs: ``input``. Outputs: ``output``.
    Attributes: ``value``.
    """

    name = "onnx.ConstantOfShape"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    value = opt_prop_def(Attribute)

    traits = traits_def(Pure(), DataMovement(), Cheap())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class ConvOp(OnnxOp):
    """``onnx.Conv``: the ONNX Conv operator (see onnx.defs schema).

    Versions (since opset): 1, 11, 22. Inputs: ``X``, ``W``, ``B`` (optional). Outputs: ``Y``.
    Attributes: ``auto_pad``, ``dilations``, ``group``, ``kernel_shape``, ``pads``, ``strides``.
    """

    name = "onnx.Conv"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    auto_pad = opt_prop_def(Attribute)
    dilations = opt_prop_def(Attribute)
    group = opt_prop_def(Attribute)
    kernel_shape = opt_prop_def(Attribute)
    pads = opt_prop_def(Attribute)
    strides = opt_prop_def(Attribute)

    traits = traits_def(Pure(), DenseCompute(), LayoutAnchor())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def W(self) -> SSAValue:
        """The operand of the ONNX input ``W``."""
        return self.required_input("W")

    @property
    def B(self) -> SSAValue | None:
        """The operand of the ONNX input ``B`` (``None`` if absent or ``none``)."""
        return self.input("B")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class ConvIntegerOp(OnnxOp):
    """``onnx.ConvInteger``: the ONNX ConvInteger operator (see onnx.defs schema).

    Versions (since opset): 10. Inputs: ``x``, ``w``, ``x_zero_point`` (optional),
    ``w_zero_point`` (optional). Outputs: ``y``. Attributes: ``auto_pad``, ``dilations``,
    ``group``, ``kernel_shape``, ``pads``, ``strides``.
    """

    name = "onnx.ConvInteger"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    auto_pad = opt_prop_def(Attribute)
    dilations = opt_prop_def(Attribute)
    group = opt_prop_def(Attribute)
    kernel_shape = opt_prop_def(Attribute)
    pads = opt_prop_def(Attribute)
    strides = opt_prop_def(Attribute)

    traits = traits_def(Pure(), DenseCompute())

    @property
    def x(self) -> SSAValue:
        """The operand of the ONNX input ``x``."""
        return self.required_input("x")

    @property
    def w(self) -> SSAValue:
        """The operand of the ONNX input ``w``."""
        return self.required_input("w")

    @property
    def x_zero_point(self) -> SSAValue | None:
        """The operand of the ONNX input ``x_zero_point`` (``None`` if absent or ``none``)."""
        return self.input("x_zero_point")

    @property
    def w_zero_point(self) -> SSAValue | None:
        """The operand of the ONNX input ``w_zero_point`` (``None`` if absent or ``none``)."""
        return self.input("w_zero_point")

    @property
    def y(self) -> SSAValue | None:
        """The result of the ONNX output ``y`` (``None`` if not produced)."""
        return self.output("y")


@irdl_op_definition
class ConvTransposeOp(OnnxOp):
    """``onnx.ConvTranspose``: the ONNX ConvTranspose operator (see onnx.defs schema).

    Versions (since opset): 1, 11, 22. Inputs: ``X``, ``W``, ``B`` (optional). Outputs: ``Y``.
    Attributes: ``auto_pad``, ``dilations``, ``group``, ``kernel_shape``, ``output_padding``,
    ``output_shape``, ``pads``, ``strides``.
    """

    name = "onnx.ConvTranspose"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    auto_pad = opt_prop_def(Attribute)
    dilations = opt_prop_def(Attribute)
    group = opt_prop_def(Attribute)
    kernel_shape = opt_prop_def(Attribute)
    output_padding = opt_prop_def(Attribute)
    output_shape = opt_prop_def(Attribute)
    pads = opt_prop_def(Attribute)
    strides = opt_prop_def(Attribute)

    traits = traits_def(Pure(), DenseCompute())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def W(self) -> SSAValue:
        """The operand of the ONNX input ``W``."""
        return self.required_input("W")

    @property
    def B(self) -> SSAValue | None:
        """The operand of the ONNX input ``B`` (``None`` if absent or ``none``)."""
        return self.input("B")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class CosOp(OnnxOp):
    """``onnx.Cos``: the ONNX Cos operator (see onnx.defs schema).

    Versions (since opset): 7, 22. Inputs: ``input``. Outputs: ``output``. Attributes: none.
    """

    name = "onnx.Cos"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()

    traits = traits_def(Pure(), Elementwise())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class CoshOp(OnnxOp):
    """``onnx.Cosh``: the ONNX Cosh operator (see onnx.defs schema).

    Versions (since opset): 9, 22. Inputs: ``input``. Outputs: ``output``. Attributes: none.
    """

    name = "onnx.Cosh"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()

    traits = traits_def(Pure(), Elementwise())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class CumProdOp(OnnxOp):
    """``onnx.CumProd``: the ONNX CumProd operator (see onnx.defs schema).

    Versions (since opset): 26. Inputs: ``x``, ``axis``. Outputs: ``y``. Attributes:
    ``exclusive``, ``reverse``.
    """

    name = "onnx.CumProd"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    exclusive = opt_prop_def(Attribute)
    reverse = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def x(self) -> SSAValue:
        """The operand of the ONNX input ``x``."""
        return self.required_input("x")

    @property
    def axis(self) -> SSAValue:
        """The operand of the ONNX input ``axis``."""
        return self.required_input("axis")

    @property
    def y(self) -> SSAValue | None:
        """The result of the ONNX output ``y`` (``None`` if not produced)."""
        return self.output("y")


@irdl_op_definition
class CumSumOp(OnnxOp):
    """``onnx.CumSum``: the ONNX CumSum operator (see onnx.defs schema).

    Versions (since opset): 11, 14. Inputs: ``x``, ``axis``. Outputs: ``y``. Attributes:
    ``exclusive``, ``reverse``.
    """

    name = "onnx.CumSum"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    exclusive = opt_prop_def(Attribute)
    reverse = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def x(self) -> SSAValue:
        """The operand of the ONNX input ``x``."""
        return self.required_input("x")

    @property
    def axis(self) -> SSAValue:
        """The operand of the ONNX input ``axis``."""
        return self.required_input("axis")

    @property
    def y(self) -> SSAValue | None:
        """The result of the ONNX output ``y`` (``None`` if not produced)."""
        return self.output("y")


@irdl_op_definition
class DFTOp(OnnxOp):
    """``onnx.DFT``: the ONNX DFT operator (see onnx.defs schema).

    Versions (since opset): 17, 20. Inputs: ``input``, ``dft_length`` (optional), ``axis``
    (optional). Outputs: ``output``. Attributes: ``axis``, ``inverse``, ``onesided``.
    """

    name = "onnx.DFT"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axis_ = opt_prop_def(Attribute, prop_name="axis")
    inverse = opt_prop_def(Attribute)
    onesided = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def dft_length(self) -> SSAValue | None:
        """The operand of the ONNX input ``dft_length`` (``None`` if absent or ``none``)."""
        return self.input("dft_length")

    @property
    def axis(self) -> SSAValue | None:
        """The operand of the ONNX input ``axis`` (``None`` if absent or ``none``)."""
        return self.input("axis")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class DeformConvOp(OnnxOp):
    """``onnx.DeformConv``: the ONNX DeformConv operator (see onnx.defs schema).

    Versions (since opset): 19, 22. Inputs: ``X``, ``W``, ``offset``, ``B`` (optional), ``mask``
    (optional). Outputs: ``Y``. Attributes: ``dilations``, ``group``, ``kernel_shape``,
    ``offset_group``, ``pads``, ``strides``.
    """

    name = "onnx.DeformConv"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    dilations = opt_prop_def(Attribute)
    group = opt_prop_def(Attribute)
    kernel_shape = opt_prop_def(Attribute)
    offset_group = opt_prop_def(Attribute)
    pads = opt_prop_def(Attribute)
    strides = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def W(self) -> SSAValue:
        """The operand of the ONNX input ``W``."""
        return self.required_input("W")

    @property
    def offset(self) -> SSAValue:
        """The operand of the ONNX input ``offset``."""
        return self.required_input("offset")

    @property
    def B(self) -> SSAValue | None:
        """The operand of the ONNX input ``B`` (``None`` if absent or ``none``)."""
        return self.input("B")

    @property
    def mask(self) -> SSAValue | None:
        """The operand of the ONNX input ``mask`` (``None`` if absent or ``none``)."""
        return self.input("mask")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class DepthToSpaceOp(OnnxOp):
    """``onnx.DepthToSpace``: the ONNX DepthToSpace operator (see onnx.defs schema).

    Versions (since opset): 1, 11, 13, 28. Inputs: ``input``. Outputs: ``output``. Attributes:
    ``blocksize``, ``mode``.
    """

    name = "onnx.DepthToSpace"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    blocksize = opt_prop_def(Attribute)
    mode = opt_prop_def(Attribute)

    traits = traits_def(Pure(), DataMovement())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class DequantizeLinearOp(OnnxOp):
    """``onnx.DequantizeLinear``: the ONNX DequantizeLinear operator (see onnx.defs schema).

    Versions (since opset): 10, 13, 19, 21, 23, 24, 25, 28. Inputs: ``x``, ``x_scale``,
    ``x_zero_point`` (optional). Outputs: ``y``. Attributes: ``axis``, ``block_size``,
    ``output_dtype``.
    """

    name = "onnx.DequantizeLinear"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axis = opt_prop_def(Attribute)
    block_size = opt_prop_def(Attribute)
    output_dtype = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def x(self) -> SSAValue:
        """The operand of the ONNX input ``x``."""
        return self.required_input("x")

    @property
    def x_scale(self) -> SSAValue:
        """The operand of the ONNX input ``x_scale``."""
        return self.required_input("x_scale")

    @property
    def x_zero_point(self) -> SSAValue | None:
        """The operand of the ONNX input ``x_zero_point`` (``None`` if absent or ``none``)."""
        return self.input("x_zero_point")

    @property
    def y(self) -> SSAValue | None:
        """The result of the ONNX output ``y`` (``None`` if not produced)."""
        return self.output("y")


@irdl_op_definition
class DetOp(OnnxOp):
    """``onnx.Det``: the ONNX Det operator (see onnx.defs schema).

    Versions (since opset): 11, 22. Inputs: ``X``. Outputs: ``Y``. Attributes: none.
    """

    name = "onnx.Det"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()

    traits = traits_def(Pure())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class DivOp(OnnxOp):
    """``onnx.Div``: the ONNX Div operator (see onnx.defs schema).

    Versions (since opset): 1, 6, 7, 13, 14. Inputs: ``A``, ``B``. Outputs: ``C``. Attributes:
    ``axis``, ``broadcast``, ``consumed_inputs``.
    """

    name = "onnx.Div"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axis = opt_prop_def(Attribute)
    broadcast = opt_prop_def(Attribute)
    consumed_inputs = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Elementwise(), Broadcasting(), LayoutTransparent())

    @property
    def A(self) -> SSAValue:
        """The operand of the ONNX input ``A``."""
        return self.required_input("A")

    @property
    def B(self) -> SSAValue:
        """The operand of the ONNX input ``B``."""
        return self.required_input("B")

    @property
    def C(self) -> SSAValue | None:
        """The result of the ONNX output ``C`` (``None`` if not produced)."""
        return self.output("C")


@irdl_op_definition
class DropoutOp(OnnxOp):
    """``onnx.Dropout``: the ONNX Dropout operator (see onnx.defs schema).

    Versions (since opset): 1, 6, 7, 10, 12, 13, 22. Inputs: ``data``, ``ratio`` (optional),
    ``training_mode`` (optional). Outputs: ``output``, ``mask`` (optional). Attributes:
    ``consumed_inputs``, ``is_test``, ``ratio``, ``seed``.
    """

    name = "onnx.Dropout"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    consumed_inputs = opt_prop_def(Attribute)
    is_test = opt_prop_def(Attribute)
    ratio_ = opt_prop_def(Attribute, prop_name="ratio")
    seed = opt_prop_def(Attribute)

    traits = traits_def(Pure(), DataMovement(), LayoutTransparent())

    @property
    def data(self) -> SSAValue:
        """The operand of the ONNX input ``data``."""
        return self.required_input("data")

    @property
    def ratio(self) -> SSAValue | None:
        """The operand of the ONNX input ``ratio`` (``None`` if absent or ``none``)."""
        return self.input("ratio")

    @property
    def training_mode(self) -> SSAValue | None:
        """The operand of the ONNX input ``training_mode`` (``None`` if absent or ``none``)."""
        return self.input("training_mode")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")

    @property
    def mask(self) -> SSAValue | None:
        """The result of the ONNX output ``mask`` (``None`` if not produced)."""
        return self.output("mask")


@irdl_op_definition
class DynamicQuantizeLinearOp(OnnxOp):
    """``onnx.DynamicQuantizeLinear``: the ONNX DynamicQuantizeLinear operator (see onnx.defs schema).

    Versions (since opset): 11. Inputs: ``x``. Outputs: ``y``, ``y_scale``, ``y_zero_point``.
    Attributes: none.
    """

    name = "onnx.DynamicQuantizeLinear"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()

    traits = traits_def(Pure())

    @property
    def x(self) -> SSAValue:
        """The operand of the ONNX input ``x``."""
        return self.required_input("x")

    @property
    def y(self) -> SSAValue | None:
        """The result of the ONNX output ``y`` (``None`` if not produced)."""
        return self.output("y")

    @property
    def y_scale(self) -> SSAValue | None:
        """The result of the ONNX output ``y_scale`` (``None`` if not produced)."""
        return self.output("y_scale")

    @property
    def y_zero_point(self) -> SSAValue | None:
        """The result of the ONNX output ``y_zero_point`` (``None`` if not produced)."""
        return self.output("y_zero_point")


@irdl_op_definition
class EinsumOp(OnnxOp):
    """``onnx.Einsum``: the ONNX Einsum operator (see onnx.defs schema).

    Versions (since opset): 12, 28. Inputs: ``Inputs`` (variadic). Outputs: ``Output``.
    Attributes: ``equation``.
    """

    name = "onnx.Einsum"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    equation = opt_prop_def(Attribute)

    traits = traits_def(Pure(), DenseCompute())

    @property
    def Inputs(self) -> tuple[SSAValue, ...]:
        """The operands of the variadic ONNX input ``Inputs``."""
        return self.variadic_input("Inputs")

    @property
    def Output(self) -> SSAValue | None:
        """The result of the ONNX output ``Output`` (``None`` if not produced)."""
        return self.output("Output")


@irdl_op_definition
class EluOp(OnnxOp):
    """``onnx.Elu``: the ONNX Elu operator (see onnx.defs schema).

    Versions (since opset): 1, 6, 22. Inputs: ``X``. Outputs: ``Y``. Attributes: ``alpha``,
    ``consumed_inputs``.
    """

    name = "onnx.Elu"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    alpha = opt_prop_def(Attribute)
    consumed_inputs = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Elementwise(), LayoutTransparent())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class EqualOp(OnnxOp):
    """``onnx.Equal``: the ONNX Equal operator (see onnx.defs schema).

    Versions (since opset): 1, 7, 11, 13, 19. Inputs: ``A``, ``B``. Outputs: ``C``. Attributes:
    ``axis``, ``broadcast``.
    """

    name = "onnx.Equal"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axis = opt_prop_def(Attribute)
    broadcast = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Elementwise(), Broadcasting(), LayoutTransparent())

    @property
    def A(self) -> SSAValue:
        """The operand of the ONNX input ``A``."""
        return self.required_input("A")

    @property
    def B(self) -> SSAValue:
        """The operand of the ONNX input ``B``."""
        return self.required_input("B")

    @property
    def C(self) -> SSAValue | None:
        """The result of the ONNX output ``C`` (``None`` if not produced)."""
        return self.output("C")


@irdl_op_definition
class ErfOp(OnnxOp):
    """``onnx.Erf``: the ONNX Erf operator (see onnx.defs schema).

    Versions (since opset): 9, 13. Inputs: ``input``. Outputs: ``output``. Attributes: none.
    """

    name = "onnx.Erf"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()

    traits = traits_def(Pure(), Elementwise(), LayoutTransparent())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class ExpOp(OnnxOp):
    """``onnx.Exp``: the ONNX Exp operator (see onnx.defs schema).

    Versions (since opset): 1, 6, 13. Inputs: ``input``. Outputs: ``output``. Attributes:
    ``consumed_inputs``.
    """

    name = "onnx.Exp"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    consumed_inputs = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Elementwise(), LayoutTransparent())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class ExpandOp(OnnxOp):
    """``onnx.Expand``: the ONNX Expand operator (see onnx.defs schema).

    Versions (since opset): 8, 13. Inputs: ``input``, ``shape``. Outputs: ``output``.
    Attributes: none.
    """

    name = "onnx.Expand"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()

    traits = traits_def(Pure(), DataMovement(), Cheap())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def shape(self) -> SSAValue:
        """The operand of the ONNX input ``shape``."""
        return self.required_input("shape")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class EyeLikeOp(OnnxOp):
    """``onnx.EyeLike``: the ONNX EyeLike operator (see onnx.defs schema).

    Versions (since opset): 9, 22. Inputs: ``input``. Outputs: ``output``. Attributes:
    ``dtype``, ``k``.
    """

    name = "onnx.EyeLike"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    dtype = opt_prop_def(Attribute)
    k = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class FlattenOp(OnnxOp):
    """``onnx.Flatten``: the ONNX Flatten operator (see onnx.defs schema).

    Versions (since opset): 1, 9, 11, 13, 21, 23, 24, 25. Inputs: ``input``. Outputs:
    ``output``. Attributes: ``axis``.
    """

    name = "onnx.Flatten"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axis = opt_prop_def(Attribute)

    traits = traits_def(Pure(), DataMovement(), Cheap())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class FloorOp(OnnxOp):
    """``onnx.Floor``: the ONNX Floor operator (see onnx.defs schema).

    Versions (since opset): 1, 6, 13. Inputs: ``X``. Outputs: ``Y``. Attributes:
    ``consumed_inputs``.
    """

    name = "onnx.Floor"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    consumed_inputs = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Elementwise(), LayoutTransparent())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class GRUOp(OnnxOp):
    """``onnx.GRU``: the ONNX GRU operator (see onnx.defs schema).

    Versions (since opset): 1, 3, 7, 14, 22. Inputs: ``X``, ``W``, ``R``, ``B`` (optional),
    ``sequence_lens`` (optional), ``initial_h`` (optional). Outputs: ``Y`` (optional), ``Y_h``
    (optional). Attributes: ``activation_alpha``, ``activation_beta``, ``activations``,
    ``clip``, ``direction``, ``hidden_size``, ``layout``, ``linear_before_reset``,
    ``output_sequence``.
    """

    name = "onnx.GRU"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    activation_alpha = opt_prop_def(Attribute)
    activation_beta = opt_prop_def(Attribute)
    activations = opt_prop_def(Attribute)
    clip = opt_prop_def(Attribute)
    direction = opt_prop_def(Attribute)
    hidden_size = opt_prop_def(Attribute)
    layout = opt_prop_def(Attribute)
    linear_before_reset = opt_prop_def(Attribute)
    output_sequence = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def W(self) -> SSAValue:
        """The operand of the ONNX input ``W``."""
        return self.required_input("W")

    @property
    def R(self) -> SSAValue:
        """The operand of the ONNX input ``R``."""
        return self.required_input("R")

    @property
    def B(self) -> SSAValue | None:
        """The operand of the ONNX input ``B`` (``None`` if absent or ``none``)."""
        return self.input("B")

    @property
    def sequence_lens(self) -> SSAValue | None:
        """The operand of the ONNX input ``sequence_lens`` (``None`` if absent or ``none``)."""
        return self.input("sequence_lens")

    @property
    def initial_h(self) -> SSAValue | None:
        """The operand of the ONNX input ``initial_h`` (``None`` if absent or ``none``)."""
        return self.input("initial_h")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")

    @property
    def Y_h(self) -> SSAValue | None:
        """The result of the ONNX output ``Y_h`` (``None`` if not produced)."""
        return self.output("Y_h")


@irdl_op_definition
class GatherOp(OnnxOp):
    """``onnx.Gather``: the ONNX Gather operator (see onnx.defs schema).

    Versions (since opset): 1, 11, 13. Inputs: ``data``, ``indices``. Outputs: ``output``.
    Attributes: ``axis``.
    """

    name = "onnx.Gather"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axis = opt_prop_def(Attribute)

    traits = traits_def(Pure(), DataMovement(), Cheap())

    @property
    def data(self) -> SSAValue:
        """The operand of the ONNX input ``data``."""
        return self.required_input("data")

    @property
    def indices(self) -> SSAValue:
        """The operand of the ONNX input ``indices``."""
        return self.required_input("indices")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class GatherElementsOp(OnnxOp):
    """``onnx.GatherElements``: the ONNX GatherElements operator (see onnx.defs schema).

    Versions (since opset): 11, 13. Inputs: ``data``, ``indices``. Outputs: ``output``.
    Attributes: ``axis``.
    """

    name = "onnx.GatherElements"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axis = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def data(self) -> SSAValue:
        """The operand of the ONNX input ``data``."""
        return self.required_input("data")

    @property
    def indices(self) -> SSAValue:
        """The operand of the ONNX input ``indices``."""
        return self.required_input("indices")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class GatherNDOp(OnnxOp):
    """``onnx.GatherND``: the ONNX GatherND operator (see onnx.defs schema).

    Versions (since opset): 11, 12, 13. Inputs: ``data``, ``indices``. Outputs: ``output``.
    Attributes: ``batch_dims``.
    """

    name = "onnx.GatherND"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    batch_dims = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def data(self) -> SSAValue:
        """The operand of the ONNX input ``data``."""
        return self.required_input("data")

    @property
    def indices(self) -> SSAValue:
        """The operand of the ONNX input ``indices``."""
        return self.required_input("indices")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class GeluOp(OnnxOp):
    """``onnx.Gelu``: the ONNX Gelu operator (see onnx.defs schema).

    Versions (since opset): 20. Inputs: ``X``. Outputs: ``Y``. Attributes: ``approximate``.
    """

    name = "onnx.Gelu"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    approximate = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Elementwise(), LayoutTransparent())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class GemmOp(OnnxOp):
    """``onnx.Gemm``: the ONNX Gemm operator (see onnx.defs schema).

    Versions (since opset): 1, 6, 7, 9, 11, 13. Inputs: ``A``, ``B``, ``C`` (optional). Outputs:
    ``Y``. Attributes: ``alpha``, ``beta``, ``broadcast``, ``transA``, ``transB``.
    """

    name = "onnx.Gemm"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    alpha = opt_prop_def(Attribute)
    beta = opt_prop_def(Attribute)
    broadcast = opt_prop_def(Attribute)
    transA = opt_prop_def(Attribute)
    transB = opt_prop_def(Attribute)

    traits = traits_def(Pure(), DenseCompute())

    @property
    def A(self) -> SSAValue:
        """The operand of the ONNX input ``A``."""
        return self.required_input("A")

    @property
    def B(self) -> SSAValue:
        """The operand of the ONNX input ``B``."""
        return self.required_input("B")

    @property
    def C(self) -> SSAValue | None:
        """The operand of the ONNX input ``C`` (``None`` if absent or ``none``)."""
        return self.input("C")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class GlobalAveragePoolOp(OnnxOp):
    """``onnx.GlobalAveragePool``: the ONNX GlobalAveragePool operator (see onnx.defs schema).

    Versions (since opset): 1, 22. Inputs: ``X``. Outputs: ``Y``. Attributes: none.
    """

    name = "onnx.GlobalAveragePool"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()

    traits = traits_def(Pure(), GlobalPooling())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class GlobalLpPoolOp(OnnxOp):
    """``onnx.GlobalLpPool``: the ONNX GlobalLpPool operator (see onnx.defs schema).

    Versions (since opset): 1, 2, 22. Inputs: ``X``. Outputs: ``Y``. Attributes: ``p``.
    """

    name = "onnx.GlobalLpPool"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    p = opt_prop_def(Attribute)

    traits = traits_def(Pure(), GlobalPooling())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class GlobalMaxPoolOp(OnnxOp):
    """``onnx.GlobalMaxPool``: the ONNX GlobalMaxPool operator (see onnx.defs schema).

    Versions (since opset): 1, 22. Inputs: ``X``. Outputs: ``Y``. Attributes: none.
    """

    name = "onnx.GlobalMaxPool"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()

    traits = traits_def(Pure(), GlobalPooling())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class GreaterOp(OnnxOp):
    """``onnx.Greater``: the ONNX Greater operator (see onnx.defs schema).

    Versions (since opset): 1, 7, 9, 13. Inputs: ``A``, ``B``. Outputs: ``C``. Attributes:
    ``axis``, ``broadcast``.
    """

    name = "onnx.Greater"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axis = opt_prop_def(Attribute)
    broadcast = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Elementwise(), Broadcasting(), LayoutTransparent())

    @property
    def A(self) -> SSAValue:
        """The operand of the ONNX input ``A``."""
        return self.required_input("A")

    @property
    def B(self) -> SSAValue:
        """The operand of the ONNX input ``B``."""
        return self.required_input("B")

    @property
    def C(self) -> SSAValue | None:
        """The result of the ONNX output ``C`` (``None`` if not produced)."""
        return self.output("C")


@irdl_op_definition
class GreaterOrEqualOp(OnnxOp):
    """``onnx.GreaterOrEqual``: the ONNX GreaterOrEqual operator (see onnx.defs schema).

    Versions (since opset): 12, 16. Inputs: ``A``, ``B``. Outputs: ``C``. Attributes: none.
    """

    name = "onnx.GreaterOrEqual"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()

    traits = traits_def(Pure(), Elementwise(), Broadcasting(), LayoutTransparent())

    @property
    def A(self) -> SSAValue:
        """The operand of the ONNX input ``A``."""
        return self.required_input("A")

    @property
    def B(self) -> SSAValue:
        """The operand of the ONNX input ``B``."""
        return self.required_input("B")

    @property
    def C(self) -> SSAValue | None:
        """The result of the ONNX output ``C`` (``None`` if not produced)."""
        return self.output("C")


@irdl_op_definition
class GridSampleOp(OnnxOp):
    """``onnx.GridSample``: the ONNX GridSample operator (see onnx.defs schema).

    Versions (since opset): 16, 20, 22. Inputs: ``X``, ``grid``. Outputs: ``Y``. Attributes:
    ``align_corners``, ``mode``, ``padding_mode``.
    """

    name = "onnx.GridSample"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    align_corners = opt_prop_def(Attribute)
    mode = opt_prop_def(Attribute)
    padding_mode = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def grid(self) -> SSAValue:
        """The operand of the ONNX input ``grid``."""
        return self.required_input("grid")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class GroupNormalizationOp(OnnxOp):
    """``onnx.GroupNormalization``: the ONNX GroupNormalization operator (see onnx.defs schema).

    Versions (since opset): 21. Inputs: ``X``, ``scale``, ``bias``. Outputs: ``Y``. Attributes:
    ``epsilon``, ``num_groups``, ``stash_type``.
    """

    name = "onnx.GroupNormalization"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    epsilon = opt_prop_def(Attribute)
    num_groups = opt_prop_def(Attribute)
    stash_type = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def scale(self) -> SSAValue:
        """The operand of the ONNX input ``scale``."""
        return self.required_input("scale")

    @property
    def bias(self) -> SSAValue:
        """The operand of the ONNX input ``bias``."""
        return self.required_input("bias")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class HammingWindowOp(OnnxOp):
    """``onnx.HammingWindow``: the ONNX HammingWindow operator (see onnx.defs schema).

    Versions (since opset): 17. Inputs: ``size``. Outputs: ``output``. Attributes:
    ``output_datatype``, ``periodic``.
    """

    name = "onnx.HammingWindow"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    output_datatype = opt_prop_def(Attribute)
    periodic = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def size(self) -> SSAValue:
        """The operand of the ONNX input ``size``."""
        return self.required_input("size")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class HannWindowOp(OnnxOp):
    """``onnx.HannWindow``: the ONNX HannWindow operator (see onnx.defs schema).

    Versions (since opset): 17. Inputs: ``size``. Outputs: ``output``. Attributes:
    ``output_datatype``, ``periodic``.
    """

    name = "onnx.HannWindow"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    output_datatype = opt_prop_def(Attribute)
    periodic = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def size(self) -> SSAValue:
        """The operand of the ONNX input ``size``."""
        return self.required_input("size")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class HardSigmoidOp(OnnxOp):
    """``onnx.HardSigmoid``: the ONNX HardSigmoid operator (see onnx.defs schema).

    Versions (since opset): 1, 6, 22. Inputs: ``X``. Outputs: ``Y``. Attributes: ``alpha``,
    ``beta``, ``consumed_inputs``.
    """

    name = "onnx.HardSigmoid"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    alpha = opt_prop_def(Attribute)
    beta = opt_prop_def(Attribute)
    consumed_inputs = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Elementwise(), LayoutTransparent())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class HardSwishOp(OnnxOp):
    """``onnx.HardSwish``: the ONNX HardSwish operator (see onnx.defs schema).

    Versions (since opset): 14, 22. Inputs: ``X``. Outputs: ``Y``. Attributes: none.
    """

    name = "onnx.HardSwish"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()

    traits = traits_def(Pure(), Elementwise(), LayoutTransparent())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class HardmaxOp(OnnxOp):
    """``onnx.Hardmax``: the ONNX Hardmax operator (see onnx.defs schema).

    Versions (since opset): 1, 11, 13. Inputs: ``input``. Outputs: ``output``. Attributes:
    ``axis``.
    """

    name = "onnx.Hardmax"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axis = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class IdentityOp(OnnxOp):
    """``onnx.Identity``: the ONNX Identity operator (see onnx.defs schema).

    Versions (since opset): 1, 13, 14, 16, 19, 21, 23, 24, 25. Inputs: ``input``. Outputs:
    ``output``. Attributes: none.
    """

    name = "onnx.Identity"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()

    traits = traits_def(Pure(), DataMovement(), LayoutTransparent(), Cheap())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class IfOp(OnnxOp):
    """``onnx.If``: the ONNX If operator; its graph attributes (then_branch, else_branch) are regions ending in ``onnx.Yield`` (see verify_regions).

    Versions (since opset): 1, 11, 13, 16, 19, 21, 23, 24, 25. Inputs: ``cond``. Outputs:
    ``outputs`` (variadic). Attributes: none.
    """

    name = "onnx.If"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    then_branch = region_def("single_block")
    else_branch = region_def("single_block")

    traits = traits_def(RecursiveMemoryEffect(), RecursivelySpeculatable())

    @property
    def cond(self) -> SSAValue:
        """The operand of the ONNX input ``cond``."""
        return self.required_input("cond")

    @property
    def outputs(self) -> tuple[SSAValue, ...]:
        """The results of the variadic ONNX output ``outputs``."""
        return self.variadic_output("outputs")


@irdl_op_definition
class ImageDecoderOp(OnnxOp):
    """``onnx.ImageDecoder``: the ONNX ImageDecoder operator (see onnx.defs schema).

    Versions (since opset): 20. Inputs: ``encoded_stream``. Outputs: ``image``. Attributes:
    ``pixel_format``.
    """

    name = "onnx.ImageDecoder"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    pixel_format = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def encoded_stream(self) -> SSAValue:
        """The operand of the ONNX input ``encoded_stream``."""
        return self.required_input("encoded_stream")

    @property
    def image(self) -> SSAValue | None:
        """The result of the ONNX output ``image`` (``None`` if not produced)."""
        return self.output("image")


@irdl_op_definition
class InstanceNormalizationOp(OnnxOp):
    """``onnx.InstanceNormalization``: the ONNX InstanceNormalization operator (see onnx.defs schema).

    Versions (since opset): 1, 6, 22. Inputs: ``input``, ``scale``, ``B``. Outputs: ``output``.
    Attributes: ``consumed_inputs``, ``epsilon``.
    """

    name = "onnx.InstanceNormalization"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    consumed_inputs = opt_prop_def(Attribute)
    epsilon = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def scale(self) -> SSAValue:
        """The operand of the ONNX input ``scale``."""
        return self.required_input("scale")

    @property
    def B(self) -> SSAValue:
        """The operand of the ONNX input ``B``."""
        return self.required_input("B")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class IsInfOp(OnnxOp):
    """``onnx.IsInf``: the ONNX IsInf operator (see onnx.defs schema).

    Versions (since opset): 10, 20. Inputs: ``X``. Outputs: ``Y``. Attributes:
    ``detect_negative``, ``detect_positive``.
    """

    name = "onnx.IsInf"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    detect_negative = opt_prop_def(Attribute)
    detect_positive = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Elementwise(), LayoutTransparent())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class IsNaNOp(OnnxOp):
    """``onnx.IsNaN``: the ONNX IsNaN operator (see onnx.defs schema).

    Versions (since opset): 9, 13, 20. Inputs: ``X``. Outputs: ``Y``. Attributes: none.
    """

    name = "onnx.IsNaN"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()

    traits = traits_def(Pure(), Elementwise(), LayoutTransparent())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class LRNOp(OnnxOp):
    """``onnx.LRN``: the ONNX LRN operator (see onnx.defs schema).

    Versions (since opset): 1, 13. Inputs: ``X``. Outputs: ``Y``. Attributes: ``alpha``,
    ``beta``, ``bias``, ``size``.
    """

    name = "onnx.LRN"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    alpha = opt_prop_def(Attribute)
    beta = opt_prop_def(Attribute)
    bias = opt_prop_def(Attribute)
    size = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Pooling(), LayoutTransparent())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class LSTMOp(OnnxOp):
    """``onnx.LSTM``: the ONNX LSTM operator (see onnx.defs schema).

    Versions (since opset): 1, 7, 14, 22. Inputs: ``X``, ``W``, ``R``, ``B`` (optional),
    ``sequence_lens`` (optional), ``initial_h`` (optional), ``initial_c`` (optional), ``P``
    (optional). Outputs: ``Y`` (optional), ``Y_h`` (optional), ``Y_c`` (optional). Attributes:
    ``activation_alpha``, ``activation_beta``, ``activations``, ``clip``, ``direction``,
    ``hidden_size``, ``input_forget``, ``layout``, ``output_sequence``.
    """

    name = "onnx.LSTM"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    activation_alpha = opt_prop_def(Attribute)
    activation_beta = opt_prop_def(Attribute)
    activations = opt_prop_def(Attribute)
    clip = opt_prop_def(Attribute)
    direction = opt_prop_def(Attribute)
    hidden_size = opt_prop_def(Attribute)
    input_forget = opt_prop_def(Attribute)
    layout = opt_prop_def(Attribute)
    output_sequence = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def W(self) -> SSAValue:
        """The operand of the ONNX input ``W``."""
        return self.required_input("W")

    @property
    def R(self) -> SSAValue:
        """The operand of the ONNX input ``R``."""
        return self.required_input("R")

    @property
    def B(self) -> SSAValue | None:
        """The operand of the ONNX input ``B`` (``None`` if absent or ``none``)."""
        return self.input("B")

    @property
    def sequence_lens(self) -> SSAValue | None:
        """The operand of the ONNX input ``sequence_lens`` (``None`` if absent or ``none``)."""
        return self.input("sequence_lens")

    @property
    def initial_h(self) -> SSAValue | None:
        """The operand of the ONNX input ``initial_h`` (``None`` if absent or ``none``)."""
        return self.input("initial_h")

    @property
    def initial_c(self) -> SSAValue | None:
        """The operand of the ONNX input ``initial_c`` (``None`` if absent or ``none``)."""
        return self.input("initial_c")

    @property
    def P(self) -> SSAValue | None:
        """The operand of the ONNX input ``P`` (``None`` if absent or ``none``)."""
        return self.input("P")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")

    @property
    def Y_h(self) -> SSAValue | None:
        """The result of the ONNX output ``Y_h`` (``None`` if not produced)."""
        return self.output("Y_h")

    @property
    def Y_c(self) -> SSAValue | None:
        """The result of the ONNX output ``Y_c`` (``None`` if not produced)."""
        return self.output("Y_c")


@irdl_op_definition
class LayerNormalizationOp(OnnxOp):
    """``onnx.LayerNormalization``: the ONNX LayerNormalization operator (see onnx.defs schema).

    Versions (since opset): 17. Inputs: ``X``, ``Scale``, ``B`` (optional). Outputs: ``Y``,
    ``Mean`` (optional), ``InvStdDev`` (optional). Attributes: ``axis``, ``epsilon``,
    ``stash_type``.
    """

    name = "onnx.LayerNormalization"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axis = opt_prop_def(Attribute)
    epsilon = opt_prop_def(Attribute)
    stash_type = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def Scale(self) -> SSAValue:
        """The operand of the ONNX input ``Scale``."""
        return self.required_input("Scale")

    @property
    def B(self) -> SSAValue | None:
        """The operand of the ONNX input ``B`` (``None`` if absent or ``none``)."""
        return self.input("B")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")

    @property
    def Mean(self) -> SSAValue | None:
        """The result of the ONNX output ``Mean`` (``None`` if not produced)."""
        return self.output("Mean")

    @property
    def InvStdDev(self) -> SSAValue | None:
        """The result of the ONNX output ``InvStdDev`` (``None`` if not produced)."""
        return self.output("InvStdDev")


@irdl_op_definition
class LeakyReluOp(OnnxOp):
    """``onnx.LeakyRelu``: the ONNX LeakyRelu operator (see onnx.defs schema).

    Versions (since opset): 1, 6, 16. Inputs: ``X``. Outputs: ``Y``. Attributes: ``alpha``,
    ``consumed_inputs``.
    """

    name = "onnx.LeakyRelu"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    alpha = opt_prop_def(Attribute)
    consumed_inputs = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Elementwise(), LayoutTransparent())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class LessOp(OnnxOp):
    """``onnx.Less``: the ONNX Less operator (see onnx.defs schema).

    Versions (since opset): 1, 7, 9, 13. Inputs: ``A``, ``B``. Outputs: ``C``. Attributes:
    ``axis``, ``broadcast``.
    """

    name = "onnx.Less"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axis = opt_prop_def(Attribute)
    broadcast = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Elementwise(), Broadcasting(), LayoutTransparent())

    @property
    def A(self) -> SSAValue:
        """The operand of the ONNX input ``A``."""
        return self.required_input("A")

    @property
    def B(self) -> SSAValue:
        """The operand of the ONNX input ``B``."""
        return self.required_input("B")

    @property
    def C(self) -> SSAValue | None:
        """The result of the ONNX output ``C`` (``None`` if not produced)."""
        return self.output("C")


@irdl_op_definition
class LessOrEqualOp(OnnxOp):
    """``onnx.LessOrEqual``: the ONNX LessOrEqual operator (see onnx.defs schema).

    Versions (since opset): 12, 16. Inputs: ``A``, ``B``. Outputs: ``C``. Attributes: none.
    """

    name = "onnx.LessOrEqual"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()

    traits = traits_def(Pure(), Elementwise(), Broadcasting(), LayoutTransparent())

    @property
    def A(self) -> SSAValue:
        """The operand of the ONNX input ``A``."""
        return self.required_input("A")

    @property
    def B(self) -> SSAValue:
        """The operand of the ONNX input ``B``."""
        return self.required_input("B")

    @property
    def C(self) -> SSAValue | None:
        """The result of the ONNX output ``C`` (``None`` if not produced)."""
        return self.output("C")


@irdl_op_definition
class LinearAttentionOp(OnnxOp):
    """``onnx.LinearAttention``: the ONNX LinearAttention operator (see onnx.defs schema).

    Versions (since opset): 27. Inputs: ``query``, ``key``, ``value``, ``past_state``
    (optional), ``decay`` (optional), ``beta`` (optional). Outputs: ``output``,
    ``present_state``. Attributes: ``chunk_size``, ``kv_num_heads``, ``q_num_heads``, ``scale``,
    ``update_rule``.
    """

    name = "onnx.LinearAttention"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    chunk_size = opt_prop_def(Attribute)
    kv_num_heads = opt_prop_def(Attribute)
    q_num_heads = opt_prop_def(Attribute)
    scale = opt_prop_def(Attribute)
    update_rule = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def query(self) -> SSAValue:
        """The operand of the ONNX input ``query``."""
        return self.required_input("query")

    @property
    def key(self) -> SSAValue:
        """The operand of the ONNX input ``key``."""
        return self.required_input("key")

    @property
    def value(self) -> SSAValue:
        """The operand of the ONNX input ``value``."""
        return self.required_input("value")

    @property
    def past_state(self) -> SSAValue | None:
        """The operand of the ONNX input ``past_state`` (``None`` if absent or ``none``)."""
        return self.input("past_state")

    @property
    def decay(self) -> SSAValue | None:
        """The operand of the ONNX input ``decay`` (``None`` if absent or ``none``)."""
        return self.input("decay")

    @property
    def beta(self) -> SSAValue | None:
        """The operand of the ONNX input ``beta`` (``None`` if absent or ``none``)."""
        return self.input("beta")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")

    @property
    def present_state(self) -> SSAValue | None:
        """The result of the ONNX output ``present_state`` (``None`` if not produced)."""
        return self.output("present_state")


@irdl_op_definition
class LogOp(OnnxOp):
    """``onnx.Log``: the ONNX Log operator (see onnx.defs schema).

    Versions (since opset): 1, 6, 13. Inputs: ``input``. Outputs: ``output``. Attributes:
    ``consumed_inputs``.
    """

    name = "onnx.Log"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    consumed_inputs = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Elementwise(), LayoutTransparent())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class LogSoftmaxOp(OnnxOp):
    """``onnx.LogSoftmax``: the ONNX LogSoftmax operator (see onnx.defs schema).

    Versions (since opset): 1, 11, 13. Inputs: ``input``. Outputs: ``output``. Attributes:
    ``axis``.
    """

    name = "onnx.LogSoftmax"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axis = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class LoopOp(OnnxOp):
    """``onnx.Loop``: the ONNX Loop operator; its graph attributes (body) are regions ending in ``onnx.Yield`` (see verify_regions).

    Versions (since opset): 1, 11, 13, 16, 19, 21, 23, 24, 25. Inputs: ``M`` (optional),
    ``cond`` (optional), ``v_initial`` (variadic). Outputs: ``v_final_and_scan_outputs``
    (variadic). Attributes: none.
    """

    name = "onnx.Loop"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    body = region_def("single_block")

    traits = traits_def(RecursiveMemoryEffect(), RecursivelySpeculatable())

    @property
    def M(self) -> SSAValue | None:
        """The operand of the ONNX input ``M`` (``None`` if absent or ``none``)."""
        return self.input("M")

    @property
    def cond(self) -> SSAValue | None:
        """The operand of the ONNX input ``cond`` (``None`` if absent or ``none``)."""
        return self.input("cond")

    @property
    def v_initial(self) -> tuple[SSAValue, ...]:
        """The operands of the variadic ONNX input ``v_initial``."""
        return self.variadic_input("v_initial")

    @property
    def v_final_and_scan_outputs(self) -> tuple[SSAValue, ...]:
        """The results of the variadic ONNX output ``v_final_and_scan_outputs``."""
        return self.variadic_output("v_final_and_scan_outputs")


@irdl_op_definition
class LpNormalizationOp(OnnxOp):
    """``onnx.LpNormalization``: the ONNX LpNormalization operator (see onnx.defs schema).

    Versions (since opset): 1, 22. Inputs: ``input``. Outputs: ``output``. Attributes: ``axis``,
    ``p``.
    """

    name = "onnx.LpNormalization"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axis = opt_prop_def(Attribute)
    p = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class LpPoolOp(OnnxOp):
    """``onnx.LpPool``: the ONNX LpPool operator (see onnx.defs schema).

    Versions (since opset): 1, 2, 11, 18, 22. Inputs: ``X``. Outputs: ``Y``. Attributes:
    ``auto_pad``, ``ceil_mode``, ``dilations``, ``kernel_shape``, ``p``, ``pads``, ``strides``.
    """

    name = "onnx.LpPool"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    auto_pad = opt_prop_def(Attribute)
    ceil_mode = opt_prop_def(Attribute)
    dilations = opt_prop_def(Attribute)
    kernel_shape = opt_prop_def(Attribute)
    p = opt_prop_def(Attribute)
    pads = opt_prop_def(Attribute)
    strides = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Pooling())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class MatMulOp(OnnxOp):
    """``onnx.MatMul``: the ONNX MatMul operator (see onnx.defs schema).

    Versions (since opset): 1, 9, 13. Inputs: ``A``, ``B``. Outputs: ``Y``. Attributes: none.
    """

    name = "onnx.MatMul"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()

    traits = traits_def(Pure(), DenseCompute())

    @property
    def A(self) -> SSAValue:
        """The operand of the ONNX input ``A``."""
        return self.required_input("A")

    @property
    def B(self) -> SSAValue:
        """The operand of the ONNX input ``B``."""
        return self.required_input("B")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class MatMulIntegerOp(OnnxOp):
    """``onnx.MatMulInteger``: the ONNX MatMulInteger operator (see onnx.defs schema).

    Versions (since opset): 10. Inputs: ``A``, ``B``, ``a_zero_point`` (optional),
    ``b_zero_point`` (optional). Outputs: ``Y``. Attributes: none.
    """

    name = "onnx.MatMulInteger"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()

    traits = traits_def(Pure(), DenseCompute())

    @property
    def A(self) -> SSAValue:
        """The operand of the ONNX input ``A``."""
        return self.required_input("A")

    @property
    def B(self) -> SSAValue:
        """The operand of the ONNX input ``B``."""
        return self.required_input("B")

    @property
    def a_zero_point(self) -> SSAValue | None:
        """The operand of the ONNX input ``a_zero_point`` (``None`` if absent or ``none``)."""
        return self.input("a_zero_point")

    @property
    def b_zero_point(self) -> SSAValue | None:
        """The operand of the ONNX input ``b_zero_point`` (``None`` if absent or ``none``)."""
        return self.input("b_zero_point")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class MaxOp(OnnxOp):
    """``onnx.Max``: the ONNX Max operator (see onnx.defs schema).

    Versions (since opset): 1, 6, 8, 12, 13. Inputs: ``data_0`` (variadic). Outputs: ``max``.
    Attributes: ``consumed_inputs``.
    """

    name = "onnx.Max"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    consumed_inputs = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Elementwise(), Broadcasting(), LayoutTransparent())

    @property
    def data_0(self) -> tuple[SSAValue, ...]:
        """The operands of the variadic ONNX input ``data_0``."""
        return self.variadic_input("data_0")

    @property
    def max(self) -> SSAValue | None:
        """The result of the ONNX output ``max`` (``None`` if not produced)."""
        return self.output("max")


@irdl_op_definition
class MaxPoolOp(OnnxOp):
    """``onnx.MaxPool``: the ONNX MaxPool operator (see onnx.defs schema).

    Versions (since opset): 1, 8, 10, 11, 12, 22. Inputs: ``X``. Outputs: ``Y``, ``Indices``
    (optional). Attributes: ``auto_pad``, ``ceil_mode``, ``dilations``, ``kernel_shape``,
    ``pads``, ``storage_order``, ``strides``.
    """

    name = "onnx.MaxPool"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    auto_pad = opt_prop_def(Attribute)
    ceil_mode = opt_prop_def(Attribute)
    dilations = opt_prop_def(Attribute)
    kernel_shape = opt_prop_def(Attribute)
    pads = opt_prop_def(Attribute)
    storage_order = opt_prop_def(Attribute)
    strides = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Pooling(), LayoutAnchor())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")

    @property
    def Indices(self) -> SSAValue | None:
        """The result of the ONNX output ``Indices`` (``None`` if not produced)."""
        return self.output("Indices")


@irdl_op_definition
class MaxRoiPoolOp(OnnxOp):
    """``onnx.MaxRoiPool``: the ONNX MaxRoiPool operator (see onnx.defs schema).

    Versions (since opset): 1, 22. Inputs: ``X``, ``rois``. Outputs: ``Y``. Attributes:
    ``pooled_shape``, ``spatial_scale``.
    """

    name = "onnx.MaxRoiPool"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    pooled_shape = opt_prop_def(Attribute)
    spatial_scale = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def rois(self) -> SSAValue:
        """The operand of the ONNX input ``rois``."""
        return self.required_input("rois")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class MaxUnpoolOp(OnnxOp):
    """``onnx.MaxUnpool``: the ONNX MaxUnpool operator (see onnx.defs schema).

    Versions (since opset): 9, 11, 22. Inputs: ``X``, ``I``, ``output_shape`` (optional).
    Outputs: ``output``. Attributes: ``kernel_shape``, ``pads``, ``strides``.
    """

    name = "onnx.MaxUnpool"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    kernel_shape = opt_prop_def(Attribute)
    pads = opt_prop_def(Attribute)
    strides = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def I(self) -> SSAValue:
        """The operand of the ONNX input ``I``."""
        return self.required_input("I")

    @property
    def output_shape(self) -> SSAValue | None:
        """The operand of the ONNX input ``output_shape`` (``None`` if absent or ``none``)."""
        return self.input("output_shape")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class MeanOp(OnnxOp):
    """``onnx.Mean``: the ONNX Mean operator (see onnx.defs schema).

    Versions (since opset): 1, 6, 8, 13. Inputs: ``data_0`` (variadic). Outputs: ``mean``.
    Attributes: ``consumed_inputs``.
    """

    name = "onnx.Mean"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    consumed_inputs = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Elementwise(), Broadcasting(), LayoutTransparent())

    @property
    def data_0(self) -> tuple[SSAValue, ...]:
        """The operands of the variadic ONNX input ``data_0``."""
        return self.variadic_input("data_0")

    @property
    def mean(self) -> SSAValue | None:
        """The result of the ONNX output ``mean`` (``None`` if not produced)."""
        return self.output("mean")


@irdl_op_definition
class MeanVarianceNormalizationOp(OnnxOp):
    """``onnx.MeanVarianceNormalization``: the ONNX MeanVarianceNormalization operator (see onnx.defs schema).

    Versions (since opset): 9, 13. Inputs: ``X``. Outputs: ``Y``. Attributes: ``axes``.
    """

    name = "onnx.MeanVarianceNormalization"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axes = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class MelWeightMatrixOp(OnnxOp):
    """``onnx.MelWeightMatrix``: the ONNX MelWeightMatrix operator (see onnx.defs schema).

    Versions (since opset): 17. Inputs: ``num_mel_bins``, ``dft_length``, ``sample_rate``,
    ``lower_edge_hertz``, ``upper_edge_hertz``. Outputs: ``output``. Attributes:
    ``output_datatype``.
    """

    name = "onnx.MelWeightMatrix"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    output_datatype = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def num_mel_bins(self) -> SSAValue:
        """The operand of the ONNX input ``num_mel_bins``."""
        return self.required_input("num_mel_bins")

    @property
    def dft_length(self) -> SSAValue:
        """The operand of the ONNX input ``dft_length``."""
        return self.required_input("dft_length")

    @property
    def sample_rate(self) -> SSAValue:
        """The operand of the ONNX input ``sample_rate``."""
        return self.required_input("sample_rate")

    @property
    def lower_edge_hertz(self) -> SSAValue:
        """The operand of the ONNX input ``lower_edge_hertz``."""
        return self.required_input("lower_edge_hertz")

    @property
    def upper_edge_hertz(self) -> SSAValue:
        """The operand of the ONNX input ``upper_edge_hertz``."""
        return self.required_input("upper_edge_hertz")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class MinOp(OnnxOp):
    """``onnx.Min``: the ONNX Min operator (see onnx.defs schema).

    Versions (since opset): 1, 6, 8, 12, 13. Inputs: ``data_0`` (variadic). Outputs: ``min``.
    Attributes: ``consumed_inputs``.
    """

    name = "onnx.Min"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    consumed_inputs = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Elementwise(), Broadcasting(), LayoutTransparent())

    @property
    def data_0(self) -> tuple[SSAValue, ...]:
        """The operands of the variadic ONNX input ``data_0``."""
        return self.variadic_input("data_0")

    @property
    def min(self) -> SSAValue | None:
        """The result of the ONNX output ``min`` (``None`` if not produced)."""
        return self.output("min")


@irdl_op_definition
class MishOp(OnnxOp):
    """``onnx.Mish``: the ONNX Mish operator (see onnx.defs schema).

    Versions (since opset): 18, 22. Inputs: ``X``. Outputs: ``Y``. Attributes: none.
    """

    name = "onnx.Mish"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()

    traits = traits_def(Pure(), Elementwise(), LayoutTransparent())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class ModOp(OnnxOp):
    """``onnx.Mod``: the ONNX Mod operator (see onnx.defs schema).

    Versions (since opset): 10, 13, 28. Inputs: ``A``, ``B``. Outputs: ``C``. Attributes:
    ``fmod``.
    """

    name = "onnx.Mod"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    fmod = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Elementwise(), Broadcasting())

    @property
    def A(self) -> SSAValue:
        """The operand of the ONNX input ``A``."""
        return self.required_input("A")

    @property
    def B(self) -> SSAValue:
        """The operand of the ONNX input ``B``."""
        return self.required_input("B")

    @property
    def C(self) -> SSAValue | None:
        """The result of the ONNX output ``C`` (``None`` if not produced)."""
        return self.output("C")


@irdl_op_definition
class MulOp(OnnxOp):
    """``onnx.Mul``: the ONNX Mul operator (see onnx.defs schema).

    Versions (since opset): 1, 6, 7, 13, 14. Inputs: ``A``, ``B``. Outputs: ``C``. Attributes:
    ``axis``, ``broadcast``, ``consumed_inputs``.
    """

    name = "onnx.Mul"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axis = opt_prop_def(Attribute)
    broadcast = opt_prop_def(Attribute)
    consumed_inputs = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Elementwise(), Broadcasting(), LayoutTransparent())

    @property
    def A(self) -> SSAValue:
        """The operand of the ONNX input ``A``."""
        return self.required_input("A")

    @property
    def B(self) -> SSAValue:
        """The operand of the ONNX input ``B``."""
        return self.required_input("B")

    @property
    def C(self) -> SSAValue | None:
        """The result of the ONNX output ``C`` (``None`` if not produced)."""
        return self.output("C")


@irdl_op_definition
class MultinomialOp(OnnxOp):
    """``onnx.Multinomial``: the ONNX Multinomial operator (see onnx.defs schema).

    Versions (since opset): 7, 22. Inputs: ``input``. Outputs: ``output``. Attributes:
    ``dtype``, ``sample_size``, ``seed``.
    """

    name = "onnx.Multinomial"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    dtype = opt_prop_def(Attribute)
    sample_size = opt_prop_def(Attribute)
    seed = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class NegOp(OnnxOp):
    """``onnx.Neg``: the ONNX Neg operator (see onnx.defs schema).

    Versions (since opset): 1, 6, 13. Inputs: ``X``. Outputs: ``Y``. Attributes:
    ``consumed_inputs``.
    """

    name = "onnx.Neg"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    consumed_inputs = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Elementwise(), LayoutTransparent())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class NegativeLogLikelihoodLossOp(OnnxOp):
    """``onnx.NegativeLogLikelihoodLoss``: the ONNX NegativeLogLikelihoodLoss operator (see onnx.defs schema).

    Versions (since opset): 12, 13, 22. Inputs: ``input``, ``target``, ``weight`` (optional).
    Outputs: ``loss``. Attributes: ``ignore_index``, ``reduction``.
    """

    name = "onnx.NegativeLogLikelihoodLoss"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    ignore_index = opt_prop_def(Attribute)
    reduction = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def target(self) -> SSAValue:
        """The operand of the ONNX input ``target``."""
        return self.required_input("target")

    @property
    def weight(self) -> SSAValue | None:
        """The operand of the ONNX input ``weight`` (``None`` if absent or ``none``)."""
        return self.input("weight")

    @property
    def loss(self) -> SSAValue | None:
        """The result of the ONNX output ``loss`` (``None`` if not produced)."""
        return self.output("loss")


@irdl_op_definition
class NonMaxSuppressionOp(OnnxOp):
    """``onnx.NonMaxSuppression``: the ONNX NonMaxSuppression operator (see onnx.defs schema).

    Versions (since opset): 10, 11. Inputs: ``boxes``, ``scores``,
    ``max_output_boxes_per_class`` (optional), ``iou_threshold`` (optional), ``score_threshold``
    (optional). Outputs: ``selected_indices``. Attributes: ``center_point_box``.
    """

    name = "onnx.NonMaxSuppression"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    center_point_box = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def boxes(self) -> SSAValue:
        """The operand of the ONNX input ``boxes``."""
        return self.required_input("boxes")

    @property
    def scores(self) -> SSAValue:
        """The operand of the ONNX input ``scores``."""
        return self.required_input("scores")

    @property
    def max_output_boxes_per_class(self) -> SSAValue | None:
        """The operand of the ONNX input ``max_output_boxes_per_class`` (``None`` if absent or ``none``)."""
        return self.input("max_output_boxes_per_class")

    @property
    def iou_threshold(self) -> SSAValue | None:
        """The operand of the ONNX input ``iou_threshold`` (``None`` if absent or ``none``)."""
        return self.input("iou_threshold")

    @property
    def score_threshold(self) -> SSAValue | None:
        """The operand of the ONNX input ``score_threshold`` (``None`` if absent or ``none``)."""
        return self.input("score_threshold")

    @property
    def selected_indices(self) -> SSAValue | None:
        """The result of the ONNX output ``selected_indices`` (``None`` if not produced)."""
        return self.output("selected_indices")


@irdl_op_definition
class NonZeroOp(OnnxOp):
    """``onnx.NonZero``: the ONNX NonZero operator (see onnx.defs schema).

    Versions (since opset): 9, 13. Inputs: ``X``. Outputs: ``Y``. Attributes: none.
    """

    name = "onnx.NonZero"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()

    traits = traits_def(Pure())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class NotOp(OnnxOp):
    """``onnx.Not``: the ONNX Not operator (see onnx.defs schema).

    Versions (since opset): 1. Inputs: ``X``. Outputs: ``Y``. Attributes: none.
    """

    name = "onnx.Not"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()

    traits = traits_def(Pure(), Elementwise(), LayoutTransparent())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class OneHotOp(OnnxOp):
    """``onnx.OneHot``: the ONNX OneHot operator (see onnx.defs schema).

    Versions (since opset): 9, 11, 28. Inputs: ``indices``, ``depth``, ``values``. Outputs:
    ``output``. Attributes: ``axis``.
    """

    name = "onnx.OneHot"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axis = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def indices(self) -> SSAValue:
        """The operand of the ONNX input ``indices``."""
        return self.required_input("indices")

    @property
    def depth(self) -> SSAValue:
        """The operand of the ONNX input ``depth``."""
        return self.required_input("depth")

    @property
    def values(self) -> SSAValue:
        """The operand of the ONNX input ``values``."""
        return self.required_input("values")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class OptionalGetElementOp(OnnxOp):
    """``onnx.OptionalGetElement``: the ONNX OptionalGetElement operator (see onnx.defs schema).

    Versions (since opset): 18, 28. Inputs: ``input``. Outputs: ``output``. Attributes: none.
    """

    name = "onnx.OptionalGetElement"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()

    traits = traits_def(Pure())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class OptionalHasElementOp(OnnxOp):
    """``onnx.OptionalHasElement``: the ONNX OptionalHasElement operator (see onnx.defs schema).

    Versions (since opset): 18, 28. Inputs: ``input`` (optional). Outputs: ``output``.
    Attributes: none.
    """

    name = "onnx.OptionalHasElement"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()

    traits = traits_def(Pure())

    @property
    def input_(self) -> SSAValue | None:
        """The operand of the ONNX input ``input`` (``None`` if absent or ``none``)."""
        return self.input("input")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class OrOp(OnnxOp):
    """``onnx.Or``: the ONNX Or operator (see onnx.defs schema).

    Versions (since opset): 1, 7. Inputs: ``A``, ``B``. Outputs: ``C``. Attributes: ``axis``,
    ``broadcast``.
    """

    name = "onnx.Or"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axis = opt_prop_def(Attribute)
    broadcast = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Elementwise(), Broadcasting(), LayoutTransparent())

    @property
    def A(self) -> SSAValue:
        """The operand of the ONNX input ``A``."""
        return self.required_input("A")

    @property
    def B(self) -> SSAValue:
        """The operand of the ONNX input ``B``."""
        return self.required_input("B")

    @property
    def C(self) -> SSAValue | None:
        """The result of the ONNX output ``C`` (``None`` if not produced)."""
        return self.output("C")


@irdl_op_definition
class PReluOp(OnnxOp):
    """``onnx.PRelu``: the ONNX PRelu operator (see onnx.defs schema).

    Versions (since opset): 1, 6, 7, 9, 16. Inputs: ``X``, ``slope``. Outputs: ``Y``.
    Attributes: ``consumed_inputs``.
    """

    name = "onnx.PRelu"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    consumed_inputs = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Elementwise(), Broadcasting(), LayoutTransparent())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def slope(self) -> SSAValue:
        """The operand of the ONNX input ``slope``."""
        return self.required_input("slope")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class PadOp(OnnxOp):
    """``onnx.Pad``: the ONNX Pad operator (see onnx.defs schema).

    Versions (since opset): 1, 2, 11, 13, 18, 19, 21, 23, 24, 25. Inputs: ``data``, ``pads``,
    ``constant_value`` (optional), ``axes`` (optional). Outputs: ``output``. Attributes:
    ``mode``, ``paddings``, ``pads``, ``value``.
    """

    name = "onnx.Pad"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    mode = opt_prop_def(Attribute)
    paddings = opt_prop_def(Attribute)
    pads_ = opt_prop_def(Attribute, prop_name="pads")
    value = opt_prop_def(Attribute)

    traits = traits_def(Pure(), DataMovement(), LayoutTransparent())

    @property
    def data(self) -> SSAValue:
        """The operand of the ONNX input ``data``."""
        return self.required_input("data")

    @property
    def pads(self) -> SSAValue:
        """The operand of the ONNX input ``pads``."""
        return self.required_input("pads")

    @property
    def constant_value(self) -> SSAValue | None:
        """The operand of the ONNX input ``constant_value`` (``None`` if absent or ``none``)."""
        return self.input("constant_value")

    @property
    def axes(self) -> SSAValue | None:
        """The operand of the ONNX input ``axes`` (``None`` if absent or ``none``)."""
        return self.input("axes")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class PowOp(OnnxOp):
    """``onnx.Pow``: the ONNX Pow operator (see onnx.defs schema).

    Versions (since opset): 1, 7, 12, 13, 15. Inputs: ``X``, ``Y``. Outputs: ``Z``. Attributes:
    ``axis``, ``broadcast``.
    """

    name = "onnx.Pow"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axis = opt_prop_def(Attribute)
    broadcast = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Elementwise(), Broadcasting(), LayoutTransparent())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def Y(self) -> SSAValue:
        """The operand of the ONNX input ``Y``."""
        return self.required_input("Y")

    @property
    def Z(self) -> SSAValue | None:
        """The result of the ONNX output ``Z`` (``None`` if not produced)."""
        return self.output("Z")


@irdl_op_definition
class QLinearConvOp(OnnxOp):
    """``onnx.QLinearConv``: the ONNX QLinearConv operator (see onnx.defs schema).

    Versions (since opset): 10. Inputs: ``x``, ``x_scale``, ``x_zero_point``, ``w``,
    ``w_scale``, ``w_zero_point``, ``y_scale``, ``y_zero_point``, ``B`` (optional). Outputs:
    ``y``. Attributes: ``auto_pad``, ``dilations``, ``group``, ``kernel_shape``, ``pads``,
    ``strides``.
    """

    name = "onnx.QLinearConv"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    auto_pad = opt_prop_def(Attribute)
    dilations = opt_prop_def(Attribute)
    group = opt_prop_def(Attribute)
    kernel_shape = opt_prop_def(Attribute)
    pads = opt_prop_def(Attribute)
    strides = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def x(self) -> SSAValue:
        """The operand of the ONNX input ``x``."""
        return self.required_input("x")

    @property
    def x_scale(self) -> SSAValue:
        """The operand of the ONNX input ``x_scale``."""
        return self.required_input("x_scale")

    @property
    def x_zero_point(self) -> SSAValue:
        """The operand of the ONNX input ``x_zero_point``."""
        return self.required_input("x_zero_point")

    @property
    def w(self) -> SSAValue:
        """The operand of the ONNX input ``w``."""
        return self.required_input("w")

    @property
    def w_scale(self) -> SSAValue:
        """The operand of the ONNX input ``w_scale``."""
        return self.required_input("w_scale")

    @property
    def w_zero_point(self) -> SSAValue:
        """The operand of the ONNX input ``w_zero_point``."""
        return self.required_input("w_zero_point")

    @property
    def y_scale(self) -> SSAValue:
        """The operand of the ONNX input ``y_scale``."""
        return self.required_input("y_scale")

    @property
    def y_zero_point(self) -> SSAValue:
        """The operand of the ONNX input ``y_zero_point``."""
        return self.required_input("y_zero_point")

    @property
    def B(self) -> SSAValue | None:
        """The operand of the ONNX input ``B`` (``None`` if absent or ``none``)."""
        return self.input("B")

    @property
    def y(self) -> SSAValue | None:
        """The result of the ONNX output ``y`` (``None`` if not produced)."""
        return self.output("y")


@irdl_op_definition
class QLinearMatMulOp(OnnxOp):
    """``onnx.QLinearMatMul``: the ONNX QLinearMatMul operator (see onnx.defs schema).

    Versions (since opset): 10, 21. Inputs: ``a``, ``a_scale``, ``a_zero_point``, ``b``,
    ``b_scale``, ``b_zero_point``, ``y_scale``, ``y_zero_point``. Outputs: ``y``. Attributes:
    none.
    """

    name = "onnx.QLinearMatMul"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()

    traits = traits_def(Pure())

    @property
    def a(self) -> SSAValue:
        """The operand of the ONNX input ``a``."""
        return self.required_input("a")

    @property
    def a_scale(self) -> SSAValue:
        """The operand of the ONNX input ``a_scale``."""
        return self.required_input("a_scale")

    @property
    def a_zero_point(self) -> SSAValue:
        """The operand of the ONNX input ``a_zero_point``."""
        return self.required_input("a_zero_point")

    @property
    def b(self) -> SSAValue:
        """The operand of the ONNX input ``b``."""
        return self.required_input("b")

    @property
    def b_scale(self) -> SSAValue:
        """The operand of the ONNX input ``b_scale``."""
        return self.required_input("b_scale")

    @property
    def b_zero_point(self) -> SSAValue:
        """The operand of the ONNX input ``b_zero_point``."""
        return self.required_input("b_zero_point")

    @property
    def y_scale(self) -> SSAValue:
        """The operand of the ONNX input ``y_scale``."""
        return self.required_input("y_scale")

    @property
    def y_zero_point(self) -> SSAValue:
        """The operand of the ONNX input ``y_zero_point``."""
        return self.required_input("y_zero_point")

    @property
    def y(self) -> SSAValue | None:
        """The result of the ONNX output ``y`` (``None`` if not produced)."""
        return self.output("y")


@irdl_op_definition
class QuantizeLinearOp(OnnxOp):
    """``onnx.QuantizeLinear``: the ONNX QuantizeLinear operator (see onnx.defs schema).

    Versions (since opset): 10, 13, 19, 21, 23, 24, 25, 28. Inputs: ``x``, ``y_scale``,
    ``y_zero_point`` (optional). Outputs: ``y``. Attributes: ``axis``, ``block_size``,
    ``output_dtype``, ``precision``, ``saturate``.
    """

    name = "onnx.QuantizeLinear"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axis = opt_prop_def(Attribute)
    block_size = opt_prop_def(Attribute)
    output_dtype = opt_prop_def(Attribute)
    precision = opt_prop_def(Attribute)
    saturate = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def x(self) -> SSAValue:
        """The operand of the ONNX input ``x``."""
        return self.required_input("x")

    @property
    def y_scale(self) -> SSAValue:
        """The operand of the ONNX input ``y_scale``."""
        return self.required_input("y_scale")

    @property
    def y_zero_point(self) -> SSAValue | None:
        """The operand of the ONNX input ``y_zero_point`` (``None`` if absent or ``none``)."""
        return self.input("y_zero_point")

    @property
    def y(self) -> SSAValue | None:
        """The result of the ONNX output ``y`` (``None`` if not produced)."""
        return self.output("y")


@irdl_op_definition
class RMSNormalizationOp(OnnxOp):
    """``onnx.RMSNormalization``: the ONNX RMSNormalization operator (see onnx.defs schema).

    Versions (since opset): 23. Inputs: ``X``, ``scale``. Outputs: ``Y``. Attributes: ``axis``,
    ``epsilon``, ``stash_type``.
    """

    name = "onnx.RMSNormalization"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axis = opt_prop_def(Attribute)
    epsilon = opt_prop_def(Attribute)
    stash_type = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def scale(self) -> SSAValue:
        """The operand of the ONNX input ``scale``."""
        return self.required_input("scale")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class RNNOp(OnnxOp):
    """``onnx.RNN``: the ONNX RNN operator (see onnx.defs schema).

    Versions (since opset): 1, 7, 14, 22. Inputs: ``X``, ``W``, ``R``, ``B`` (optional),
    ``sequence_lens`` (optional), ``initial_h`` (optional). Outputs: ``Y`` (optional), ``Y_h``
    (optional). Attributes: ``activation_alpha``, ``activation_beta``, ``activations``,
    ``clip``, ``direction``, ``hidden_size``, ``layout``, ``output_sequence``.
    """

    name = "onnx.RNN"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    activation_alpha = opt_prop_def(Attribute)
    activation_beta = opt_prop_def(Attribute)
    activations = opt_prop_def(Attribute)
    clip = opt_prop_def(Attribute)
    direction = opt_prop_def(Attribute)
    hidden_size = opt_prop_def(Attribute)
    layout = opt_prop_def(Attribute)
    output_sequence = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def W(self) -> SSAValue:
        """The operand of the ONNX input ``W``."""
        return self.required_input("W")

    @property
    def R(self) -> SSAValue:
        """The operand of the ONNX input ``R``."""
        return self.required_input("R")

    @property
    def B(self) -> SSAValue | None:
        """The operand of the ONNX input ``B`` (``None`` if absent or ``none``)."""
        return self.input("B")

    @property
    def sequence_lens(self) -> SSAValue | None:
        """The operand of the ONNX input ``sequence_lens`` (``None`` if absent or ``none``)."""
        return self.input("sequence_lens")

    @property
    def initial_h(self) -> SSAValue | None:
        """The operand of the ONNX input ``initial_h`` (``None`` if absent or ``none``)."""
        return self.input("initial_h")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")

    @property
    def Y_h(self) -> SSAValue | None:
        """The result of the ONNX output ``Y_h`` (``None`` if not produced)."""
        return self.output("Y_h")


@irdl_op_definition
class RandomNormalOp(OnnxOp):
    """``onnx.RandomNormal``: the ONNX RandomNormal operator (see onnx.defs schema).

    Versions (since opset): 1, 22. Inputs: none. Outputs: ``output``. Attributes: ``dtype``,
    ``mean``, ``scale``, ``seed``, ``shape``.
    """

    name = "onnx.RandomNormal"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    dtype = opt_prop_def(Attribute)
    mean = opt_prop_def(Attribute)
    scale = opt_prop_def(Attribute)
    seed = opt_prop_def(Attribute)
    shape = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class RandomNormalLikeOp(OnnxOp):
    """``onnx.RandomNormalLike``: the ONNX RandomNormalLike operator (see onnx.defs schema).

    Versions (since opset): 1, 22. Inputs: ``input``. Outputs: ``output``. Attributes:
    ``dtype``, ``mean``, ``scale``, ``seed``.
    """

    name = "onnx.RandomNormalLike"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    dtype = opt_prop_def(Attribute)
    mean = opt_prop_def(Attribute)
    scale = opt_prop_def(Attribute)
    seed = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class RandomUniformOp(OnnxOp):
    """``onnx.RandomUniform``: the ONNX RandomUniform operator (see onnx.defs schema).

    Versions (since opset): 1, 22. Inputs: none. Outputs: ``output``. Attributes: ``dtype``,
    ``high``, ``low``, ``seed``, ``shape``.
    """

    name = "onnx.RandomUniform"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    dtype = opt_prop_def(Attribute)
    high = opt_prop_def(Attribute)
    low = opt_prop_def(Attribute)
    seed = opt_prop_def(Attribute)
    shape = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class RandomUniformLikeOp(OnnxOp):
    """``onnx.RandomUniformLike``: the ONNX RandomUniformLike operator (see onnx.defs schema).

    Versions (since opset): 1, 22. Inputs: ``input``. Outputs: ``output``. Attributes:
    ``dtype``, ``high``, ``low``, ``seed``.
    """

    name = "onnx.RandomUniformLike"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    dtype = opt_prop_def(Attribute)
    high = opt_prop_def(Attribute)
    low = opt_prop_def(Attribute)
    seed = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class RangeOp(OnnxOp):
    """``onnx.Range``: the ONNX Range operator (see onnx.defs schema).

    Versions (since opset): 11, 27. Inputs: ``start``, ``limit``, ``delta``. Outputs:
    ``output``. Attributes: ``stash_type``.
    """

    name = "onnx.Range"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    stash_type = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Cheap())

    @property
    def start(self) -> SSAValue:
        """The operand of the ONNX input ``start``."""
        return self.required_input("start")

    @property
    def limit(self) -> SSAValue:
        """The operand of the ONNX input ``limit``."""
        return self.required_input("limit")

    @property
    def delta(self) -> SSAValue:
        """The operand of the ONNX input ``delta``."""
        return self.required_input("delta")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class ReciprocalOp(OnnxOp):
    """``onnx.Reciprocal``: the ONNX Reciprocal operator (see onnx.defs schema).

    Versions (since opset): 1, 6, 13. Inputs: ``X``. Outputs: ``Y``. Attributes:
    ``consumed_inputs``.
    """

    name = "onnx.Reciprocal"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    consumed_inputs = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Elementwise(), LayoutTransparent())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class ReduceL1Op(OnnxOp):
    """``onnx.ReduceL1``: the ONNX ReduceL1 operator (see onnx.defs schema).

    Versions (since opset): 1, 11, 13, 18. Inputs: ``data``, ``axes`` (optional). Outputs:
    ``reduced``. Attributes: ``axes``, ``keepdims``, ``noop_with_empty_axes``.
    """

    name = "onnx.ReduceL1"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axes_ = opt_prop_def(Attribute, prop_name="axes")
    keepdims = opt_prop_def(Attribute)
    noop_with_empty_axes = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def data(self) -> SSAValue:
        """The operand of the ONNX input ``data``."""
        return self.required_input("data")

    @property
    def axes(self) -> SSAValue | None:
        """The operand of the ONNX input ``axes`` (``None`` if absent or ``none``)."""
        return self.input("axes")

    @property
    def reduced(self) -> SSAValue | None:
        """The result of the ONNX output ``reduced`` (``None`` if not produced)."""
        return self.output("reduced")


@irdl_op_definition
class ReduceL2Op(OnnxOp):
    """``onnx.ReduceL2``: the ONNX ReduceL2 operator (see onnx.defs schema).

    Versions (since opset): 1, 11, 13, 18. Inputs: ``data``, ``axes`` (optional). Outputs:
    ``reduced``. Attributes: ``axes``, ``keepdims``, ``noop_with_empty_axes``.
    """

    name = "onnx.ReduceL2"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axes_ = opt_prop_def(Attribute, prop_name="axes")
    keepdims = opt_prop_def(Attribute)
    noop_with_empty_axes = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def data(self) -> SSAValue:
        """The operand of the ONNX input ``data``."""
        return self.required_input("data")

    @property
    def axes(self) -> SSAValue | None:
        """The operand of the ONNX input ``axes`` (``None`` if absent or ``none``)."""
        return self.input("axes")

    @property
    def reduced(self) -> SSAValue | None:
        """The result of the ONNX output ``reduced`` (``None`` if not produced)."""
        return self.output("reduced")


@irdl_op_definition
class ReduceLogSumOp(OnnxOp):
    """``onnx.ReduceLogSum``: the ONNX ReduceLogSum operator (see onnx.defs schema).

    Versions (since opset): 1, 11, 13, 18, 28. Inputs: ``data``, ``axes`` (optional). Outputs:
    ``reduced``. Attributes: ``axes``, ``keepdims``, ``noop_with_empty_axes``.
    """

    name = "onnx.ReduceLogSum"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axes_ = opt_prop_def(Attribute, prop_name="axes")
    keepdims = opt_prop_def(Attribute)
    noop_with_empty_axes = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def data(self) -> SSAValue:
        """The operand of the ONNX input ``data``."""
        return self.required_input("data")

    @property
    def axes(self) -> SSAValue | None:
        """The operand of the ONNX input ``axes`` (``None`` if absent or ``none``)."""
        return self.input("axes")

    @property
    def reduced(self) -> SSAValue | None:
        """The result of the ONNX output ``reduced`` (``None`` if not produced)."""
        return self.output("reduced")


@irdl_op_definition
class ReduceLogSumExpOp(OnnxOp):
    """``onnx.ReduceLogSumExp``: the ONNX ReduceLogSumExp operator (see onnx.defs schema).

    Versions (since opset): 1, 11, 13, 18, 28. Inputs: ``data``, ``axes`` (optional). Outputs:
    ``reduced``. Attributes: ``axes``, ``keepdims``, ``noop_with_empty_axes``.
    """

    name = "onnx.ReduceLogSumExp"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axes_ = opt_prop_def(Attribute, prop_name="axes")
    keepdims = opt_prop_def(Attribute)
    noop_with_empty_axes = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def data(self) -> SSAValue:
        """The operand of the ONNX input ``data``."""
        return self.required_input("data")

    @property
    def axes(self) -> SSAValue | None:
        """The operand of the ONNX input ``axes`` (``None`` if absent or ``none``)."""
        return self.input("axes")

    @property
    def reduced(self) -> SSAValue | None:
        """The result of the ONNX output ``reduced`` (``None`` if not produced)."""
        return self.output("reduced")


@irdl_op_definition
class ReduceMaxOp(OnnxOp):
    """``onnx.ReduceMax``: the ONNX ReduceMax operator (see onnx.defs schema).

    Versions (since opset): 1, 11, 12, 13, 18, 20. Inputs: ``data``, ``axes`` (optional).
    Outputs: ``reduced``. Attributes: ``axes``, ``keepdims``, ``noop_with_empty_axes``.
    """

    name = "onnx.ReduceMax"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axes_ = opt_prop_def(Attribute, prop_name="axes")
    keepdims = opt_prop_def(Attribute)
    noop_with_empty_axes = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def data(self) -> SSAValue:
        """The operand of the ONNX input ``data``."""
        return self.required_input("data")

    @property
    def axes(self) -> SSAValue | None:
        """The operand of the ONNX input ``axes`` (``None`` if absent or ``none``)."""
        return self.input("axes")

    @property
    def reduced(self) -> SSAValue | None:
        """The result of the ONNX output ``reduced`` (``None`` if not produced)."""
        return self.output("reduced")


@irdl_op_definition
class ReduceMeanOp(OnnxOp):
    """``onnx.ReduceMean``: the ONNX ReduceMean operator (see onnx.defs schema).

    Versions (since opset): 1, 11, 13, 18. Inputs: ``data``, ``axes`` (optional). Outputs:
    ``reduced``. Attributes: ``axes``, ``keepdims``, ``noop_with_empty_axes``.
    """

    name = "onnx.ReduceMean"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axes_ = opt_prop_def(Attribute, prop_name="axes")
    keepdims = opt_prop_def(Attribute)
    noop_with_empty_axes = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def data(self) -> SSAValue:
        """The operand of the ONNX input ``data``."""
        return self.required_input("data")

    @property
    def axes(self) -> SSAValue | None:
        """The operand of the ONNX input ``axes`` (``None`` if absent or ``none``)."""
        return self.input("axes")

    @property
    def reduced(self) -> SSAValue | None:
        """The result of the ONNX output ``reduced`` (``None`` if not produced)."""
        return self.output("reduced")


@irdl_op_definition
class ReduceMinOp(OnnxOp):
    """``onnx.ReduceMin``: the ONNX ReduceMin operator (see onnx.defs schema).

    Versions (since opset): 1, 11, 12, 13, 18, 20. Inputs: ``data``, ``axes`` (optional).
    Outputs: ``reduced``. Attributes: ``axes``, ``keepdims``, ``noop_with_empty_axes``.
    """

    name = "onnx.ReduceMin"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axes_ = opt_prop_def(Attribute, prop_name="axes")
    keepdims = opt_prop_def(Attribute)
    noop_with_empty_axes = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def data(self) -> SSAValue:
        """The operand of the ONNX input ``data``."""
        return self.required_input("data")

    @property
    def axes(self) -> SSAValue | None:
        """The operand of the ONNX input ``axes`` (``None`` if absent or ``none``)."""
        return self.input("axes")

    @property
    def reduced(self) -> SSAValue | None:
        """The result of the ONNX output ``reduced`` (``None`` if not produced)."""
        return self.output("reduced")


@irdl_op_definition
class ReduceProdOp(OnnxOp):
    """``onnx.ReduceProd``: the ONNX ReduceProd operator (see onnx.defs schema).

    Versions (since opset): 1, 11, 13, 18. Inputs: ``data``, ``axes`` (optional). Outputs:
    ``reduced``. Attributes: ``axes``, ``keepdims``, ``noop_with_empty_axes``.
    """

    name = "onnx.ReduceProd"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axes_ = opt_prop_def(Attribute, prop_name="axes")
    keepdims = opt_prop_def(Attribute)
    noop_with_empty_axes = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def data(self) -> SSAValue:
        """The operand of the ONNX input ``data``."""
        return self.required_input("data")

    @property
    def axes(self) -> SSAValue | None:
        """The operand of the ONNX input ``axes`` (``None`` if absent or ``none``)."""
        return self.input("axes")

    @property
    def reduced(self) -> SSAValue | None:
        """The result of the ONNX output ``reduced`` (``None`` if not produced)."""
        return self.output("reduced")


@irdl_op_definition
class ReduceSumOp(OnnxOp):
    """``onnx.ReduceSum``: the ONNX ReduceSum operator (see onnx.defs schema).

    Versions (since opset): 1, 11, 13. Inputs: ``data``, ``axes`` (optional). Outputs:
    ``reduced``. Attributes: ``axes``, ``keepdims``, ``noop_with_empty_axes``.
    """

    name = "onnx.ReduceSum"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axes_ = opt_prop_def(Attribute, prop_name="axes")
    keepdims = opt_prop_def(Attribute)
    noop_with_empty_axes = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def data(self) -> SSAValue:
        """The operand of the ONNX input ``data``."""
        return self.required_input("data")

    @property
    def axes(self) -> SSAValue | None:
        """The operand of the ONNX input ``axes`` (``None`` if absent or ``none``)."""
        return self.input("axes")

    @property
    def reduced(self) -> SSAValue | None:
        """The result of the ONNX output ``reduced`` (``None`` if not produced)."""
        return self.output("reduced")


@irdl_op_definition
class ReduceSumSquareOp(OnnxOp):
    """``onnx.ReduceSumSquare``: the ONNX ReduceSumSquare operator (see onnx.defs schema).

    Versions (since opset): 1, 11, 13, 18. Inputs: ``data``, ``axes`` (optional). Outputs:
    ``reduced``. Attributes: ``axes``, ``keepdims``, ``noop_with_empty_axes``.
    """

    name = "onnx.ReduceSumSquare"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axes_ = opt_prop_def(Attribute, prop_name="axes")
    keepdims = opt_prop_def(Attribute)
    noop_with_empty_axes = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def data(self) -> SSAValue:
        """The operand of the ONNX input ``data``."""
        return self.required_input("data")

    @property
    def axes(self) -> SSAValue | None:
        """The operand of the ONNX input ``axes`` (``None`` if absent or ``none``)."""
        return self.input("axes")

    @property
    def reduced(self) -> SSAValue | None:
        """The result of the ONNX output ``reduced`` (``None`` if not produced)."""
        return self.output("reduced")


@irdl_op_definition
class ReluOp(OnnxOp):
    """``onnx.Relu``: the ONNX Relu operator (see onnx.defs schema).

    Versions (since opset): 1, 6, 13, 14. Inputs: ``X``. Outputs: ``Y``. Attributes:
    ``consumed_inputs``.
    """

    name = "onnx.Relu"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    consumed_inputs = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Elementwise(), LayoutTransparent())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class ReshapeOp(OnnxOp):
    """``onnx.Reshape``: the ONNX Reshape operator (see onnx.defs schema).

    Versions (since opset): 1, 5, 13, 14, 19, 21, 23, 24, 25. Inputs: ``data``, ``shape``.
    Outputs: ``reshaped``. Attributes: ``allowzero``, ``consumed_inputs``, ``shape``.
    """

    name = "onnx.Reshape"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    allowzero = opt_prop_def(Attribute)
    consumed_inputs = opt_prop_def(Attribute)
    shape_ = opt_prop_def(Attribute, prop_name="shape")

    traits = traits_def(Pure(), DataMovement(), Cheap())

    @property
    def data(self) -> SSAValue:
        """The operand of the ONNX input ``data``."""
        return self.required_input("data")

    @property
    def shape(self) -> SSAValue:
        """The operand of the ONNX input ``shape``."""
        return self.required_input("shape")

    @property
    def reshaped(self) -> SSAValue | None:
        """The result of the ONNX output ``reshaped`` (``None`` if not produced)."""
        return self.output("reshaped")


@irdl_op_definition
class ResizeOp(OnnxOp):
    """``onnx.Resize``: the ONNX Resize operator (see onnx.defs schema).

    Versions (since opset): 10, 11, 13, 18, 19. Inputs: ``X``, ``roi`` (optional), ``scales``
    (optional), ``sizes`` (optional). Outputs: ``Y``. Attributes: ``antialias``, ``axes``,
    ``coordinate_transformation_mode``, ``cubic_coeff_a``, ``exclude_outside``,
    ``extrapolation_value``, ``keep_aspect_ratio_policy``, ``mode``, ``nearest_mode``.
    """

    name = "onnx.Resize"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    antialias = opt_prop_def(Attribute)
    axes = opt_prop_def(Attribute)
    coordinate_transformation_mode = opt_prop_def(Attribute)
    cubic_coeff_a = opt_prop_def(Attribute)
    exclude_outside = opt_prop_def(Attribute)
    extrapolation_value = opt_prop_def(Attribute)
    keep_aspect_ratio_policy = opt_prop_def(Attribute)
    mode = opt_prop_def(Attribute)
    nearest_mode = opt_prop_def(Attribute)

    traits = traits_def(Pure(), LayoutAnchor())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def roi(self) -> SSAValue | None:
        """The operand of the ONNX input ``roi`` (``None`` if absent or ``none``)."""
        return self.input("roi")

    @property
    def scales(self) -> SSAValue | None:
        """The operand of the ONNX input ``scales`` (``None`` if absent or ``none``)."""
        return self.input("scales")

    @property
    def sizes(self) -> SSAValue | None:
        """The operand of the ONNX input ``sizes`` (``None`` if absent or ``none``)."""
        return self.input("sizes")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class ReverseSequenceOp(OnnxOp):
    """``onnx.ReverseSequence``: the ONNX ReverseSequence operator (see onnx.defs schema).

    Versions (since opset): 10, 28. Inputs: ``input``, ``sequence_lens``. Outputs: ``Y``.
    Attributes: ``batch_axis``, ``time_axis``.
    """

    name = "onnx.ReverseSequence"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    batch_axis = opt_prop_def(Attribute)
    time_axis = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def sequence_lens(self) -> SSAValue:
        """The operand of the ONNX input ``sequence_lens``."""
        return self.required_input("sequence_lens")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class RoiAlignOp(OnnxOp):
    """``onnx.RoiAlign``: the ONNX RoiAlign operator (see onnx.defs schema).

    Versions (since opset): 10, 16, 22. Inputs: ``X``, ``rois``, ``batch_indices``. Outputs:
    ``Y``. Attributes: ``coordinate_transformation_mode``, ``mode``, ``output_height``,
    ``output_width``, ``sampling_ratio``, ``spatial_scale``.
    """

    name = "onnx.RoiAlign"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    coordinate_transformation_mode = opt_prop_def(Attribute)
    mode = opt_prop_def(Attribute)
    output_height = opt_prop_def(Attribute)
    output_width = opt_prop_def(Attribute)
    sampling_ratio = opt_prop_def(Attribute)
    spatial_scale = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def rois(self) -> SSAValue:
        """The operand of the ONNX input ``rois``."""
        return self.required_input("rois")

    @property
    def batch_indices(self) -> SSAValue:
        """The operand of the ONNX input ``batch_indices``."""
        return self.required_input("batch_indices")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class RotaryEmbeddingOp(OnnxOp):
    """``onnx.RotaryEmbedding``: the ONNX RotaryEmbedding operator (see onnx.defs schema).

    Versions (since opset): 23. Inputs: ``X``, ``cos_cache``, ``sin_cache``, ``position_ids``
    (optional). Outputs: ``Y``. Attributes: ``interleaved``, ``num_heads``,
    ``rotary_embedding_dim``.
    """

    name = "onnx.RotaryEmbedding"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    interleaved = opt_prop_def(Attribute)
    num_heads = opt_prop_def(Attribute)
    rotary_embedding_dim = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def cos_cache(self) -> SSAValue:
        """The operand of the ONNX input ``cos_cache``."""
        return self.required_input("cos_cache")

    @property
    def sin_cache(self) -> SSAValue:
        """The operand of the ONNX input ``sin_cache``."""
        return self.required_input("sin_cache")

    @property
    def position_ids(self) -> SSAValue | None:
        """The operand of the ONNX input ``position_ids`` (``None`` if absent or ``none``)."""
        return self.input("position_ids")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class RoundOp(OnnxOp):
    """``onnx.Round``: the ONNX Round operator (see onnx.defs schema).

    Versions (since opset): 11, 22. Inputs: ``X``. Outputs: ``Y``. Attributes: none.
    """

    name = "onnx.Round"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()

    traits = traits_def(Pure(), Elementwise(), LayoutTransparent())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class STFTOp(OnnxOp):
    """``onnx.STFT``: the ONNX STFT operator (see onnx.defs schema).

    Versions (since opset): 17. Inputs: ``signal``, ``frame_step``, ``window`` (optional),
    ``frame_length`` (optional). Outputs: ``output``. Attributes: ``onesided``.
    """

    name = "onnx.STFT"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    onesided = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def signal(self) -> SSAValue:
        """The operand of the ONNX input ``signal``."""
        return self.required_input("signal")

    @property
    def frame_step(self) -> SSAValue:
        """The operand of the ONNX input ``frame_step``."""
        return self.required_input("frame_step")

    @property
    def window(self) -> SSAValue | None:
        """The operand of the ONNX input ``window`` (``None`` if absent or ``none``)."""
        return self.input("window")

    @property
    def frame_length(self) -> SSAValue | None:
        """The operand of the ONNX input ``frame_length`` (``None`` if absent or ``none``)."""
        return self.input("frame_length")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class ScanOp(OnnxOp):
    """``onnx.Scan``: the ONNX Scan operator; its graph attributes (body) are regions ending in ``onnx.Yield`` (see verify_regions).

    Versions (since opset): 8, 9, 11, 16, 19, 21, 23, 24, 25. Inputs:
    ``initial_state_and_scan_inputs`` (variadic), ``sequence_lens`` (optional). Outputs:
    ``final_state_and_scan_outputs`` (variadic). Attributes: ``directions``,
    ``num_scan_inputs``, ``scan_input_axes``, ``scan_input_directions``, ``scan_output_axes``,
    ``scan_output_directions``.
    """

    name = "onnx.Scan"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    body = region_def("single_block")
    directions = opt_prop_def(Attribute)
    num_scan_inputs = opt_prop_def(Attribute)
    scan_input_axes = opt_prop_def(Attribute)
    scan_input_directions = opt_prop_def(Attribute)
    scan_output_axes = opt_prop_def(Attribute)
    scan_output_directions = opt_prop_def(Attribute)

    traits = traits_def(RecursiveMemoryEffect(), RecursivelySpeculatable())

    @property
    def initial_state_and_scan_inputs(self) -> tuple[SSAValue, ...]:
        """The operands of the variadic ONNX input ``initial_state_and_scan_inputs``."""
        return self.variadic_input("initial_state_and_scan_inputs")

    @property
    def sequence_lens(self) -> SSAValue | None:
        """The operand of the ONNX input ``sequence_lens`` (``None`` if absent or ``none``)."""
        return self.input("sequence_lens")

    @property
    def final_state_and_scan_outputs(self) -> tuple[SSAValue, ...]:
        """The results of the variadic ONNX output ``final_state_and_scan_outputs``."""
        return self.variadic_output("final_state_and_scan_outputs")


@irdl_op_definition
class ScatterOp(OnnxOp):
    """``onnx.Scatter``: the ONNX Scatter operator (see onnx.defs schema).

    Versions (since opset): 9. Inputs: ``data``, ``indices``, ``updates``. Outputs: ``output``.
    Attributes: ``axis``.
    """

    name = "onnx.Scatter"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axis = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def data(self) -> SSAValue:
        """The operand of the ONNX input ``data``."""
        return self.required_input("data")

    @property
    def indices(self) -> SSAValue:
        """The operand of the ONNX input ``indices``."""
        return self.required_input("indices")

    @property
    def updates(self) -> SSAValue:
        """The operand of the ONNX input ``updates``."""
        return self.required_input("updates")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class ScatterElementsOp(OnnxOp):
    """``onnx.ScatterElements``: the ONNX ScatterElements operator (see onnx.defs schema).

    Versions (since opset): 11, 13, 16, 18. Inputs: ``data``, ``indices``, ``updates``. Outputs:
    ``output``. Attributes: ``axis``, ``reduction``.
    """

    name = "onnx.ScatterElements"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axis = opt_prop_def(Attribute)
    reduction = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def data(self) -> SSAValue:
        """The operand of the ONNX input ``data``."""
        return self.required_input("data")

    @property
    def indices(self) -> SSAValue:
        """The operand of the ONNX input ``indices``."""
        return self.required_input("indices")

    @property
    def updates(self) -> SSAValue:
        """The operand of the ONNX input ``updates``."""
        return self.required_input("updates")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class ScatterNDOp(OnnxOp):
    """``onnx.ScatterND``: the ONNX ScatterND operator (see onnx.defs schema).

    Versions (since opset): 11, 13, 16, 18. Inputs: ``data``, ``indices``, ``updates``. Outputs:
    ``output``. Attributes: ``reduction``.
    """

    name = "onnx.ScatterND"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    reduction = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def data(self) -> SSAValue:
        """The operand of the ONNX input ``data``."""
        return self.required_input("data")

    @property
    def indices(self) -> SSAValue:
        """The operand of the ONNX input ``indices``."""
        return self.required_input("indices")

    @property
    def updates(self) -> SSAValue:
        """The operand of the ONNX input ``updates``."""
        return self.required_input("updates")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class SeluOp(OnnxOp):
    """``onnx.Selu``: the ONNX Selu operator (see onnx.defs schema).

    Versions (since opset): 1, 6, 22. Inputs: ``X``. Outputs: ``Y``. Attributes: ``alpha``,
    ``consumed_inputs``, ``gamma``.
    """

    name = "onnx.Selu"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    alpha = opt_prop_def(Attribute)
    consumed_inputs = opt_prop_def(Attribute)
    gamma = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Elementwise(), LayoutTransparent())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class ShapeOp(OnnxOp):
    """``onnx.Shape``: the ONNX Shape operator (see onnx.defs schema).

    Versions (since opset): 1, 13, 15, 19, 21, 23, 24, 25. Inputs: ``data``. Outputs: ``shape``.
    Attributes: ``end``, ``start``.
    """

    name = "onnx.Shape"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    end = opt_prop_def(Attribute)
    start = opt_prop_def(Attribute)

    traits = traits_def(Pure(), DataMovement(), Cheap())

    @property
    def data(self) -> SSAValue:
        """The operand of the ONNX input ``data``."""
        return self.required_input("data")

    @property
    def shape(self) -> SSAValue | None:
        """The result of the ONNX output ``shape`` (``None`` if not produced)."""
        return self.output("shape")


@irdl_op_definition
class ShrinkOp(OnnxOp):
    """``onnx.Shrink``: the ONNX Shrink operator (see onnx.defs schema).

    Versions (since opset): 9. Inputs: ``input``. Outputs: ``output``. Attributes: ``bias``,
    ``lambd``.
    """

    name = "onnx.Shrink"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    bias = opt_prop_def(Attribute)
    lambd = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Elementwise())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class SigmoidOp(OnnxOp):
    """``onnx.Sigmoid``: the ONNX Sigmoid operator (see onnx.defs schema).

    Versions (since opset): 1, 6, 13. Inputs: ``X``. Outputs: ``Y``. Attributes:
    ``consumed_inputs``.
    """

    name = "onnx.Sigmoid"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    consumed_inputs = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Elementwise(), LayoutTransparent())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class SignOp(OnnxOp):
    """``onnx.Sign``: the ONNX Sign operator (see onnx.defs schema).

    Versions (since opset): 9, 13. Inputs: ``input``. Outputs: ``output``. Attributes: none.
    """

    name = "onnx.Sign"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()

    traits = traits_def(Pure(), Elementwise(), LayoutTransparent())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class SinOp(OnnxOp):
    """``onnx.Sin``: the ONNX Sin operator (see onnx.defs schema).

    Versions (since opset): 7, 22. Inputs: ``input``. Outputs: ``output``. Attributes: none.
    """

    name = "onnx.Sin"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()

    traits = traits_def(Pure(), Elementwise())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class SinhOp(OnnxOp):
    """``onnx.Sinh``: the ONNX Sinh operator (see onnx.defs schema).

    Versions (since opset): 9, 22. Inputs: ``input``. Outputs: ``output``. Attributes: none.
    """

    name = "onnx.Sinh"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()

    traits = traits_def(Pure(), Elementwise())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class SizeOp(OnnxOp):
    """``onnx.Size``: the ONNX Size operator (see onnx.defs schema).

    Versions (since opset): 1, 13, 19, 21, 23, 24, 25. Inputs: ``data``. Outputs: ``size``.
    Attributes: none.
    """

    name = "onnx.Size"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()

    traits = traits_def(Pure(), DataMovement(), Cheap())

    @property
    def data(self) -> SSAValue:
        """The operand of the ONNX input ``data``."""
        return self.required_input("data")

    @property
    def size(self) -> SSAValue | None:
        """The result of the ONNX output ``size`` (``None`` if not produced)."""
        return self.output("size")


@irdl_op_definition
class SliceOp(OnnxOp):
    """``onnx.Slice``: the ONNX Slice operator (see onnx.defs schema).

    Versions (since opset): 1, 10, 11, 13. Inputs: ``data``, ``starts``, ``ends``, ``axes``
    (optional), ``steps`` (optional). Outputs: ``output``. Attributes: ``axes``, ``ends``,
    ``starts``.
    """

    name = "onnx.Slice"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axes_ = opt_prop_def(Attribute, prop_name="axes")
    ends_ = opt_prop_def(Attribute, prop_name="ends")
    starts_ = opt_prop_def(Attribute, prop_name="starts")

    traits = traits_def(Pure(), DataMovement(), Cheap())

    @property
    def data(self) -> SSAValue:
        """The operand of the ONNX input ``data``."""
        return self.required_input("data")

    @property
    def starts(self) -> SSAValue:
        """The operand of the ONNX input ``starts``."""
        return self.required_input("starts")

    @property
    def ends(self) -> SSAValue:
        """The operand of the ONNX input ``ends``."""
        return self.required_input("ends")

    @property
    def axes(self) -> SSAValue | None:
        """The operand of the ONNX input ``axes`` (``None`` if absent or ``none``)."""
        return self.input("axes")

    @property
    def steps(self) -> SSAValue | None:
        """The operand of the ONNX input ``steps`` (``None`` if absent or ``none``)."""
        return self.input("steps")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class SoftmaxOp(OnnxOp):
    """``onnx.Softmax``: the ONNX Softmax operator (see onnx.defs schema).

    Versions (since opset): 1, 11, 13. Inputs: ``input``. Outputs: ``output``. Attributes:
    ``axis``.
    """

    name = "onnx.Softmax"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axis = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class SoftmaxCrossEntropyLossOp(OnnxOp):
    """``onnx.SoftmaxCrossEntropyLoss``: the ONNX SoftmaxCrossEntropyLoss operator (see onnx.defs schema).

    Versions (since opset): 12, 13. Inputs: ``scores``, ``labels``, ``weights`` (optional).
    Outputs: ``output``, ``log_prob`` (optional). Attributes: ``ignore_index``, ``reduction``.
    """

    name = "onnx.SoftmaxCrossEntropyLoss"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    ignore_index = opt_prop_def(Attribute)
    reduction = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def scores(self) -> SSAValue:
        """The operand of the ONNX input ``scores``."""
        return self.required_input("scores")

    @property
    def labels(self) -> SSAValue:
        """The operand of the ONNX input ``labels``."""
        return self.required_input("labels")

    @property
    def weights(self) -> SSAValue | None:
        """The operand of the ONNX input ``weights`` (``None`` if absent or ``none``)."""
        return self.input("weights")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")

    @property
    def log_prob(self) -> SSAValue | None:
        """The result of the ONNX output ``log_prob`` (``None`` if not produced)."""
        return self.output("log_prob")


@irdl_op_definition
class SoftplusOp(OnnxOp):
    """``onnx.Softplus``: the ONNX Softplus operator (see onnx.defs schema).

    Versions (since opset): 1, 22. Inputs: ``X``. Outputs: ``Y``. Attributes: none.
    """

    name = "onnx.Softplus"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()

    traits = traits_def(Pure(), Elementwise(), LayoutTransparent())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class SoftsignOp(OnnxOp):
    """``onnx.Softsign``: the ONNX Softsign operator (see onnx.defs schema).

    Versions (since opset): 1, 22. Inputs: ``input``. Outputs: ``output``. Attributes: none.
    """

    name = "onnx.Softsign"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()

    traits = traits_def(Pure(), Elementwise(), LayoutTransparent())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class SpaceToDepthOp(OnnxOp):
    """``onnx.SpaceToDepth``: the ONNX SpaceToDepth operator (see onnx.defs schema).

    Versions (since opset): 1, 13, 28. Inputs: ``input``. Outputs: ``output``. Attributes:
    ``blocksize``, ``mode``.
    """

    name = "onnx.SpaceToDepth"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    blocksize = opt_prop_def(Attribute)
    mode = opt_prop_def(Attribute)

    traits = traits_def(Pure(), DataMovement())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class SplitOp(OnnxOp):
    """``onnx.Split``: the ONNX Split operator (see onnx.defs schema).

    Versions (since opset): 1, 2, 11, 13, 18. Inputs: ``input``, ``split`` (optional). Outputs:
    ``outputs`` (variadic), ``outputs...`` (variadic). Attributes: ``axis``, ``num_outputs``,
    ``split``.
    """

    name = "onnx.Split"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axis = opt_prop_def(Attribute)
    num_outputs = opt_prop_def(Attribute)
    split_ = opt_prop_def(Attribute, prop_name="split")

    traits = traits_def(Pure(), DataMovement())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def split(self) -> SSAValue | None:
        """The operand of the ONNX input ``split`` (``None`` if absent or ``none``)."""
        return self.input("split")

    @property
    def outputs(self) -> tuple[SSAValue, ...]:
        """The results of the variadic ONNX output ``outputs``."""
        return self.variadic_output("outputs")

    @property
    def outputs__(self) -> tuple[SSAValue, ...]:
        """The results of the variadic ONNX output ``outputs...``."""
        return self.variadic_output("outputs...")


@irdl_op_definition
class SqrtOp(OnnxOp):
    """``onnx.Sqrt``: the ONNX Sqrt operator (see onnx.defs schema).

    Versions (since opset): 1, 6, 13. Inputs: ``X``. Outputs: ``Y``. Attributes:
    ``consumed_inputs``.
    """

    name = "onnx.Sqrt"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    consumed_inputs = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Elementwise(), LayoutTransparent())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class SqueezeOp(OnnxOp):
    """``onnx.Squeeze``: the ONNX Squeeze operator (see onnx.defs schema).

    Versions (since opset): 1, 11, 13, 21, 23, 24, 25. Inputs: ``data``, ``axes`` (optional).
    Outputs: ``squeezed``. Attributes: ``axes``.
    """

    name = "onnx.Squeeze"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axes_ = opt_prop_def(Attribute, prop_name="axes")

    traits = traits_def(Pure(), DataMovement(), Cheap())

    @property
    def data(self) -> SSAValue:
        """The operand of the ONNX input ``data``."""
        return self.required_input("data")

    @property
    def axes(self) -> SSAValue | None:
        """The operand of the ONNX input ``axes`` (``None`` if absent or ``none``)."""
        return self.input("axes")

    @property
    def squeezed(self) -> SSAValue | None:
        """The result of the ONNX output ``squeezed`` (``None`` if not produced)."""
        return self.output("squeezed")


@irdl_op_definition
class SubOp(OnnxOp):
    """``onnx.Sub``: the ONNX Sub operator (see onnx.defs schema).

    Versions (since opset): 1, 6, 7, 13, 14. Inputs: ``A``, ``B``. Outputs: ``C``. Attributes:
    ``axis``, ``broadcast``, ``consumed_inputs``.
    """

    name = "onnx.Sub"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axis = opt_prop_def(Attribute)
    broadcast = opt_prop_def(Attribute)
    consumed_inputs = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Elementwise(), Broadcasting(), LayoutTransparent())

    @property
    def A(self) -> SSAValue:
        """The operand of the ONNX input ``A``."""
        return self.required_input("A")

    @property
    def B(self) -> SSAValue:
        """The operand of the ONNX input ``B``."""
        return self.required_input("B")

    @property
    def C(self) -> SSAValue | None:
        """The result of the ONNX output ``C`` (``None`` if not produced)."""
        return self.output("C")


@irdl_op_definition
class SumOp(OnnxOp):
    """``onnx.Sum``: the ONNX Sum operator (see onnx.defs schema).

    Versions (since opset): 1, 6, 8, 13. Inputs: ``data_0`` (variadic). Outputs: ``sum``.
    Attributes: ``consumed_inputs``.
    """

    name = "onnx.Sum"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    consumed_inputs = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Elementwise(), Broadcasting(), LayoutTransparent())

    @property
    def data_0(self) -> tuple[SSAValue, ...]:
        """The operands of the variadic ONNX input ``data_0``."""
        return self.variadic_input("data_0")

    @property
    def sum(self) -> SSAValue | None:
        """The result of the ONNX output ``sum`` (``None`` if not produced)."""
        return self.output("sum")


@irdl_op_definition
class SwiGLUOp(OnnxOp):
    """``onnx.SwiGLU``: the ONNX SwiGLU operator (see onnx.defs schema).

    Versions (since opset): 28. Inputs: ``A``, ``B``. Outputs: ``Y``. Attributes: ``alpha``.
    """

    name = "onnx.SwiGLU"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    alpha = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def A(self) -> SSAValue:
        """The operand of the ONNX input ``A``."""
        return self.required_input("A")

    @property
    def B(self) -> SSAValue:
        """The operand of the ONNX input ``B``."""
        return self.required_input("B")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class SwishOp(OnnxOp):
    """``onnx.Swish``: the ONNX Swish operator (see onnx.defs schema).

    Versions (since opset): 24. Inputs: ``X``. Outputs: ``Y``. Attributes: ``alpha``.
    """

    name = "onnx.Swish"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    alpha = opt_prop_def(Attribute)

    traits = traits_def(Pure(), LayoutTransparent())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class TanOp(OnnxOp):
    """``onnx.Tan``: the ONNX Tan operator (see onnx.defs schema).

    Versions (since opset): 7, 22. Inputs: ``input``. Outputs: ``output``. Attributes: none.
    """

    name = "onnx.Tan"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()

    traits = traits_def(Pure(), Elementwise())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class TanhOp(OnnxOp):
    """``onnx.Tanh``: the ONNX Tanh operator (see onnx.defs schema).

    Versions (since opset): 1, 6, 13. Inputs: ``input``. Outputs: ``output``. Attributes:
    ``consumed_inputs``.
    """

    name = "onnx.Tanh"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    consumed_inputs = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Elementwise(), LayoutTransparent())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class TensorScatterOp(OnnxOp):
    """``onnx.TensorScatter``: the ONNX TensorScatter operator (see onnx.defs schema).

    Versions (since opset): 24. Inputs: ``past_cache``, ``update``, ``write_indices``
    (optional). Outputs: ``present_cache``. Attributes: ``axis``, ``mode``.
    """

    name = "onnx.TensorScatter"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axis = opt_prop_def(Attribute)
    mode = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def past_cache(self) -> SSAValue:
        """The operand of the ONNX input ``past_cache``."""
        return self.required_input("past_cache")

    @property
    def update(self) -> SSAValue:
        """The operand of the ONNX input ``update``."""
        return self.required_input("update")

    @property
    def write_indices(self) -> SSAValue | None:
        """The operand of the ONNX input ``write_indices`` (``None`` if absent or ``none``)."""
        return self.input("write_indices")

    @property
    def present_cache(self) -> SSAValue | None:
        """The result of the ONNX output ``present_cache`` (``None`` if not produced)."""
        return self.output("present_cache")


@irdl_op_definition
class TfIdfVectorizerOp(OnnxOp):
    """``onnx.TfIdfVectorizer``: the ONNX TfIdfVectorizer operator (see onnx.defs schema).

    Versions (since opset): 9. Inputs: ``X``. Outputs: ``Y``. Attributes: ``max_gram_length``,
    ``max_skip_count``, ``min_gram_length``, ``mode``, ``ngram_counts``, ``ngram_indexes``,
    ``pool_int64s``, ``pool_strings``, ``weights``.
    """

    name = "onnx.TfIdfVectorizer"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    max_gram_length = opt_prop_def(Attribute)
    max_skip_count = opt_prop_def(Attribute)
    min_gram_length = opt_prop_def(Attribute)
    mode = opt_prop_def(Attribute)
    ngram_counts = opt_prop_def(Attribute)
    ngram_indexes = opt_prop_def(Attribute)
    pool_int64s = opt_prop_def(Attribute)
    pool_strings = opt_prop_def(Attribute)
    weights = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class ThresholdedReluOp(OnnxOp):
    """``onnx.ThresholdedRelu``: the ONNX ThresholdedRelu operator (see onnx.defs schema).

    Versions (since opset): 10, 22. Inputs: ``X``. Outputs: ``Y``. Attributes: ``alpha``.
    """

    name = "onnx.ThresholdedRelu"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    alpha = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Elementwise(), LayoutTransparent())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class TileOp(OnnxOp):
    """``onnx.Tile``: the ONNX Tile operator (see onnx.defs schema).

    Versions (since opset): 1, 6, 13. Inputs: ``input``, ``repeats``, ``tiles``, ``axis``.
    Outputs: ``output``. Attributes: none.
    """

    name = "onnx.Tile"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()

    traits = traits_def(Pure(), DataMovement())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def repeats(self) -> SSAValue:
        """The operand of the ONNX input ``repeats``."""
        return self.required_input("repeats")

    @property
    def tiles(self) -> SSAValue:
        """The operand of the ONNX input ``tiles``."""
        return self.required_input("tiles")

    @property
    def axis(self) -> SSAValue:
        """The operand of the ONNX input ``axis``."""
        return self.required_input("axis")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class TopKOp(OnnxOp):
    """``onnx.TopK``: the ONNX TopK operator (see onnx.defs schema).

    Versions (since opset): 1, 10, 11, 24. Inputs: ``X``, ``K``. Outputs: ``Values``,
    ``Indices``. Attributes: ``axis``, ``k``, ``largest``, ``sorted``.
    """

    name = "onnx.TopK"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axis = opt_prop_def(Attribute)
    k = opt_prop_def(Attribute)
    largest = opt_prop_def(Attribute)
    sorted = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def K(self) -> SSAValue:
        """The operand of the ONNX input ``K``."""
        return self.required_input("K")

    @property
    def Values(self) -> SSAValue | None:
        """The result of the ONNX output ``Values`` (``None`` if not produced)."""
        return self.output("Values")

    @property
    def Indices(self) -> SSAValue | None:
        """The result of the ONNX output ``Indices`` (``None`` if not produced)."""
        return self.output("Indices")


@irdl_op_definition
class TransposeOp(OnnxOp):
    """``onnx.Transpose``: the ONNX Transpose operator (see onnx.defs schema).

    Versions (since opset): 1, 13, 21, 23, 24, 25. Inputs: ``data``. Outputs: ``transposed``.
    Attributes: ``perm``.
    """

    name = "onnx.Transpose"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    perm = opt_prop_def(Attribute)

    traits = traits_def(Pure(), DataMovement(), Cheap())

    @property
    def data(self) -> SSAValue:
        """The operand of the ONNX input ``data``."""
        return self.required_input("data")

    @property
    def transposed(self) -> SSAValue | None:
        """The result of the ONNX output ``transposed`` (``None`` if not produced)."""
        return self.output("transposed")


@irdl_op_definition
class TriluOp(OnnxOp):
    """``onnx.Trilu``: the ONNX Trilu operator (see onnx.defs schema).

    Versions (since opset): 14. Inputs: ``input``, ``k`` (optional). Outputs: ``output``.
    Attributes: ``upper``.
    """

    name = "onnx.Trilu"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    upper = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def input_(self) -> SSAValue:
        """The operand of the ONNX input ``input``."""
        return self.required_input("input")

    @property
    def k(self) -> SSAValue | None:
        """The operand of the ONNX input ``k`` (``None`` if absent or ``none``)."""
        return self.input("k")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class UniqueOp(OnnxOp):
    """``onnx.Unique``: the ONNX Unique operator (see onnx.defs schema).

    Versions (since opset): 11, 28. Inputs: ``X``. Outputs: ``Y``, ``indices`` (optional),
    ``inverse_indices`` (optional), ``counts`` (optional). Attributes: ``axis``, ``sorted``.
    """

    name = "onnx.Unique"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axis = opt_prop_def(Attribute)
    sorted = opt_prop_def(Attribute)

    traits = traits_def(Pure())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")

    @property
    def indices(self) -> SSAValue | None:
        """The result of the ONNX output ``indices`` (``None`` if not produced)."""
        return self.output("indices")

    @property
    def inverse_indices(self) -> SSAValue | None:
        """The result of the ONNX output ``inverse_indices`` (``None`` if not produced)."""
        return self.output("inverse_indices")

    @property
    def counts(self) -> SSAValue | None:
        """The result of the ONNX output ``counts`` (``None`` if not produced)."""
        return self.output("counts")


@irdl_op_definition
class UnsqueezeOp(OnnxOp):
    """``onnx.Unsqueeze``: the ONNX Unsqueeze operator (see onnx.defs schema).

    Versions (since opset): 1, 11, 13, 21, 23, 24, 25. Inputs: ``data``, ``axes``. Outputs:
    ``expanded``. Attributes: ``axes``.
    """

    name = "onnx.Unsqueeze"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axes_ = opt_prop_def(Attribute, prop_name="axes")

    traits = traits_def(Pure(), DataMovement(), Cheap())

    @property
    def data(self) -> SSAValue:
        """The operand of the ONNX input ``data``."""
        return self.required_input("data")

    @property
    def axes(self) -> SSAValue:
        """The operand of the ONNX input ``axes``."""
        return self.required_input("axes")

    @property
    def expanded(self) -> SSAValue | None:
        """The result of the ONNX output ``expanded`` (``None`` if not produced)."""
        return self.output("expanded")


@irdl_op_definition
class UpsampleOp(OnnxOp):
    """``onnx.Upsample``: the ONNX Upsample operator (see onnx.defs schema).

    Versions (since opset): 1, 7, 9. Inputs: ``X``, ``scales``. Outputs: ``Y``. Attributes:
    ``height_scale``, ``mode``, ``scales``, ``width_scale``.
    """

    name = "onnx.Upsample"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    height_scale = opt_prop_def(Attribute)
    mode = opt_prop_def(Attribute)
    scales_ = opt_prop_def(Attribute, prop_name="scales")
    width_scale = opt_prop_def(Attribute)

    traits = traits_def(Pure(), LayoutAnchor())

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def scales(self) -> SSAValue:
        """The operand of the ONNX input ``scales``."""
        return self.required_input("scales")

    @property
    def Y(self) -> SSAValue | None:
        """The result of the ONNX output ``Y`` (``None`` if not produced)."""
        return self.output("Y")


@irdl_op_definition
class WhereOp(OnnxOp):
    """``onnx.Where``: the ONNX Where operator (see onnx.defs schema).

    Versions (since opset): 9, 16. Inputs: ``condition``, ``X``, ``Y``. Outputs: ``output``.
    Attributes: none.
    """

    name = "onnx.Where"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()

    traits = traits_def(Pure(), Elementwise(), Broadcasting(), LayoutTransparent())

    @property
    def condition(self) -> SSAValue:
        """The operand of the ONNX input ``condition``."""
        return self.required_input("condition")

    @property
    def X(self) -> SSAValue:
        """The operand of the ONNX input ``X``."""
        return self.required_input("X")

    @property
    def Y(self) -> SSAValue:
        """The operand of the ONNX input ``Y``."""
        return self.required_input("Y")

    @property
    def output_(self) -> SSAValue | None:
        """The result of the ONNX output ``output`` (``None`` if not produced)."""
        return self.output("output")


@irdl_op_definition
class XorOp(OnnxOp):
    """``onnx.Xor``: the ONNX Xor operator (see onnx.defs schema).

    Versions (since opset): 1, 7. Inputs: ``A``, ``B``. Outputs: ``C``. Attributes: ``axis``,
    ``broadcast``.
    """

    name = "onnx.Xor"

    inputs_ = var_operand_def()
    outputs_ = var_result_def()
    axis = opt_prop_def(Attribute)
    broadcast = opt_prop_def(Attribute)

    traits = traits_def(Pure(), Elementwise(), Broadcasting(), LayoutTransparent())

    @property
    def A(self) -> SSAValue:
        """The operand of the ONNX input ``A``."""
        return self.required_input("A")

    @property
    def B(self) -> SSAValue:
        """The operand of the ONNX input ``B``."""
        return self.required_input("B")

    @property
    def C(self) -> SSAValue | None:
        """The result of the ONNX output ``C`` (``None`` if not produced)."""
        return self.output("C")


OPS: dict[str, type[OnnxOp]] = {
    "Abs": AbsOp,
    "Acos": AcosOp,
    "Acosh": AcoshOp,
    "Add": AddOp,
    "AffineGrid": AffineGridOp,
    "And": AndOp,
    "ArgMax": ArgMaxOp,
    "ArgMin": ArgMinOp,
    "Asin": AsinOp,
    "Asinh": AsinhOp,
    "Atan": AtanOp,
    "Atanh": AtanhOp,
    "Attention": AttentionOp,
    "AveragePool": AveragePoolOp,
    "BatchNormalization": BatchNormalizationOp,
    "Bernoulli": BernoulliOp,
    "BitCast": BitCastOp,
    "BitShift": BitShiftOp,
    "BitwiseAnd": BitwiseAndOp,
    "BitwiseNot": BitwiseNotOp,
    "BitwiseOr": BitwiseOrOp,
    "BitwiseXor": BitwiseXorOp,
    "BlackmanWindow": BlackmanWindowOp,
    "Cast": CastOp,
    "CastLike": CastLikeOp,
    "CausalConvWithState": CausalConvWithStateOp,
    "Ceil": CeilOp,
    "Celu": CeluOp,
    "CenterCropPad": CenterCropPadOp,
    "Clip": ClipOp,
    "Col2Im": Col2ImOp,
    "Compress": CompressOp,
    "Concat": ConcatOp,
    "Constant": ConstantOp,
    "ConstantOfShape": ConstantOfShapeOp,
    "Conv": ConvOp,
    "ConvInteger": ConvIntegerOp,
    "ConvTranspose": ConvTransposeOp,
    "Cos": CosOp,
    "Cosh": CoshOp,
    "CumProd": CumProdOp,
    "CumSum": CumSumOp,
    "DFT": DFTOp,
    "DeformConv": DeformConvOp,
    "DepthToSpace": DepthToSpaceOp,
    "DequantizeLinear": DequantizeLinearOp,
    "Det": DetOp,
    "Div": DivOp,
    "Dropout": DropoutOp,
    "DynamicQuantizeLinear": DynamicQuantizeLinearOp,
    "Einsum": EinsumOp,
    "Elu": EluOp,
    "Equal": EqualOp,
    "Erf": ErfOp,
    "Exp": ExpOp,
    "Expand": ExpandOp,
    "EyeLike": EyeLikeOp,
    "Flatten": FlattenOp,
    "Floor": FloorOp,
    "GRU": GRUOp,
    "Gather": GatherOp,
    "GatherElements": GatherElementsOp,
    "GatherND": GatherNDOp,
    "Gelu": GeluOp,
    "Gemm": GemmOp,
    "GlobalAveragePool": GlobalAveragePoolOp,
    "GlobalLpPool": GlobalLpPoolOp,
    "GlobalMaxPool": GlobalMaxPoolOp,
    "Greater": GreaterOp,
    "GreaterOrEqual": GreaterOrEqualOp,
    "GridSample": GridSampleOp,
    "GroupNormalization": GroupNormalizationOp,
    "HammingWindow": HammingWindowOp,
    "HannWindow": HannWindowOp,
    "HardSigmoid": HardSigmoidOp,
    "HardSwish": HardSwishOp,
    "Hardmax": HardmaxOp,
    "Identity": IdentityOp,
    "If": IfOp,
    "ImageDecoder": ImageDecoderOp,
    "InstanceNormalization": InstanceNormalizationOp,
    "IsInf": IsInfOp,
    "IsNaN": IsNaNOp,
    "LRN": LRNOp,
    "LSTM": LSTMOp,
    "LayerNormalization": LayerNormalizationOp,
    "LeakyRelu": LeakyReluOp,
    "Less": LessOp,
    "LessOrEqual": LessOrEqualOp,
    "LinearAttention": LinearAttentionOp,
    "Log": LogOp,
    "LogSoftmax": LogSoftmaxOp,
    "Loop": LoopOp,
    "LpNormalization": LpNormalizationOp,
    "LpPool": LpPoolOp,
    "MatMul": MatMulOp,
    "MatMulInteger": MatMulIntegerOp,
    "Max": MaxOp,
    "MaxPool": MaxPoolOp,
    "MaxRoiPool": MaxRoiPoolOp,
    "MaxUnpool": MaxUnpoolOp,
    "Mean": MeanOp,
    "MeanVarianceNormalization": MeanVarianceNormalizationOp,
    "MelWeightMatrix": MelWeightMatrixOp,
    "Min": MinOp,
    "Mish": MishOp,
    "Mod": ModOp,
    "Mul": MulOp,
    "Multinomial": MultinomialOp,
    "Neg": NegOp,
    "NegativeLogLikelihoodLoss": NegativeLogLikelihoodLossOp,
    "NonMaxSuppression": NonMaxSuppressionOp,
    "NonZero": NonZeroOp,
    "Not": NotOp,
    "OneHot": OneHotOp,
    "OptionalGetElement": OptionalGetElementOp,
    "OptionalHasElement": OptionalHasElementOp,
    "Or": OrOp,
    "PRelu": PReluOp,
    "Pad": PadOp,
    "Pow": PowOp,
    "QLinearConv": QLinearConvOp,
    "QLinearMatMul": QLinearMatMulOp,
    "QuantizeLinear": QuantizeLinearOp,
    "RMSNormalization": RMSNormalizationOp,
    "RNN": RNNOp,
    "RandomNormal": RandomNormalOp,
    "RandomNormalLike": RandomNormalLikeOp,
    "RandomUniform": RandomUniformOp,
    "RandomUniformLike": RandomUniformLikeOp,
    "Range": RangeOp,
    "Reciprocal": ReciprocalOp,
    "ReduceL1": ReduceL1Op,
    "ReduceL2": ReduceL2Op,
    "ReduceLogSum": ReduceLogSumOp,
    "ReduceLogSumExp": ReduceLogSumExpOp,
    "ReduceMax": ReduceMaxOp,
    "ReduceMean": ReduceMeanOp,
    "ReduceMin": ReduceMinOp,
    "ReduceProd": ReduceProdOp,
    "ReduceSum": ReduceSumOp,
    "ReduceSumSquare": ReduceSumSquareOp,
    "Relu": ReluOp,
    "Reshape": ReshapeOp,
    "Resize": ResizeOp,
    "ReverseSequence": ReverseSequenceOp,
    "RoiAlign": RoiAlignOp,
    "RotaryEmbedding": RotaryEmbeddingOp,
    "Round": RoundOp,
    "STFT": STFTOp,
    "Scan": ScanOp,
    "Scatter": ScatterOp,
    "ScatterElements": ScatterElementsOp,
    "ScatterND": ScatterNDOp,
    "Selu": SeluOp,
    "Shape": ShapeOp,
    "Shrink": ShrinkOp,
    "Sigmoid": SigmoidOp,
    "Sign": SignOp,
    "Sin": SinOp,
    "Sinh": SinhOp,
    "Size": SizeOp,
    "Slice": SliceOp,
    "Softmax": SoftmaxOp,
    "SoftmaxCrossEntropyLoss": SoftmaxCrossEntropyLossOp,
    "Softplus": SoftplusOp,
    "Softsign": SoftsignOp,
    "SpaceToDepth": SpaceToDepthOp,
    "Split": SplitOp,
    "Sqrt": SqrtOp,
    "Squeeze": SqueezeOp,
    "Sub": SubOp,
    "Sum": SumOp,
    "SwiGLU": SwiGLUOp,
    "Swish": SwishOp,
    "Tan": TanOp,
    "Tanh": TanhOp,
    "TensorScatter": TensorScatterOp,
    "TfIdfVectorizer": TfIdfVectorizerOp,
    "ThresholdedRelu": ThresholdedReluOp,
    "Tile": TileOp,
    "TopK": TopKOp,
    "Transpose": TransposeOp,
    "Trilu": TriluOp,
    "Unique": UniqueOp,
    "Unsqueeze": UnsqueezeOp,
    "Upsample": UpsampleOp,
    "Where": WhereOp,
    "Xor": XorOp,
}
"""``op_type`` -> op class, for every representable default-domain ONNX operator."""
