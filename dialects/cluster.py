"""The ``cluster`` dialect: a dataflow program split into clusters that talk over channels.

A clustered ``func.func`` holds, in order: the read-only values every cluster may use directly
(``onnx.Constant`` weights, ``onnx.NoValue``; the function's arguments, i.e. the graph inputs),
then one ``cluster.cluster`` op per cluster, then ``func.return`` of the clusters' results::

    %out = cluster.cluster @c1 -> tensor<1x64x56x56xf32> {
      %a = cluster.recv from "r3__c0_c1" : tensor<1x64x56x56xf32>
      %b = "onnx.Relu"(%a) : (tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
      cluster.send %b to "b__c1_c2" : tensor<1x64x56x56xf32>
      cluster.yield %b : tensor<1x64x56x56xf32>
    }

A cluster runs its ops sequentially in block order; clusters run concurrently. Every tensor that
crosses clusters travels through an explicit ``cluster.send`` / ``cluster.recv`` pair on a named
channel; the values a cluster yields are graph outputs. Sends never block (each channel carries one
tensor per inference), receives block until the matching send.

Verifier (run once per function, from its first cluster): cluster names are unique; each cluster
only uses values it defines, graph inputs and read-only constants (also inside the regions of
its ``onnx.If``/``Loop``/``Scan`` ops, each one op of the cluster); every channel has exactly one
send and exactly one receive of the same type in *different* clusters, a static tensor type that
fits in memory (no dynamic or negative dimension: channel buffers are sized at compile time); and
the program is
deadlock-free: the graph whose edges are each cluster's program order plus send -> recv is acyclic,
i.e. every cluster's op order is consistent with one global topological order.

Ops carry estimated costs from ``--estimate-cost`` as the discardable attribute ``ramiel.cost_us``.

Assembly formats (custom, like ``func``/``scf``; the generic form ``"cluster.send"(%b) <{channel =
"..."}> : (...) -> ()`` parses too): ``cluster.cluster @name [-> types] [attributes {...}] {...}``,
``cluster.send %v to "channel" : type``, ``%v = cluster.recv from "channel" : type``,
``cluster.yield [%v, ... : types]``.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import StringAttr, SymbolNameConstraint, TensorType
from xdsl.ir import Attribute, Block, Dialect, Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import ConstantLike, HasParent, IsTerminator
from xdsl.utils.exceptions import VerifyException

from ramiel.dialects.onnx import dependences
from ramiel.parsing import LocatedVerifyError
from ramiel.pysource import tensor_type_problem


@irdl_op_definition
class ClusterOp(IRDLOperation):
    """``cluster.cluster``: one cluster, its ops in execution order in a single block.

    Results are the graph outputs the cluster produces, yielded by its ``cluster.yield``.
    """

    name = "cluster.cluster"
    sym_name = prop_def(SymbolNameConstraint())
    body = region_def("single_block")
    outs = var_result_def()

    assembly_format = "$sym_name (`->` type($outs)^)? attr-dict-with-keyword $body"

    def __init__(
        self, name: str, body: Block | Sequence[Operation], result_types: Sequence[Attribute]
    ):
        block = body if isinstance(body, Block) else Block(body)
        super().__init__(
            properties={"sym_name": StringAttr(name)},
            regions=[Region(block)],
            result_types=[list(result_types)],
        )

    @property
    def cluster_name(self) -> str:
        return self.sym_name.data

    def verify_(self) -> None:
        block = self.body.block
        term = block.last_op
        if not isinstance(term, YieldOp):
            raise VerifyException(f"cluster @{self.cluster_name} must end with cluster.yield")
        if [v.type for v in term.values] != [r.type for r in self.outs]:
            raise VerifyException(
                f"cluster @{self.cluster_name}: yielded types differ from the cluster's results"
            )
        parent = self.parent_block()
        if parent is not None and _first_cluster(parent) is self:
            verify_program(parent)


@irdl_op_definition
class YieldOp(IRDLOperation):
    """``cluster.yield``: terminates a cluster, yielding the graph outputs it produces."""

    name = "cluster.yield"
    values = var_operand_def()
    traits = traits_def(IsTerminator(), HasParent(ClusterOp))

    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, values: Sequence[SSAValue]):
        super().__init__(operands=[list(values)])


@irdl_op_definition
class SendOp(IRDLOperation):
    """``cluster.send``: send ``value`` on ``channel`` to the cluster that receives it."""

    name = "cluster.send"
    value = operand_def()
    channel = prop_def(StringAttr)
    traits = traits_def(HasParent(ClusterOp))

    assembly_format = "$value `to` $channel attr-dict `:` type($value)"

    def __init__(self, value: SSAValue, channel: str):
        super().__init__(operands=[value], properties={"channel": StringAttr(channel)})


@irdl_op_definition
class RecvOp(IRDLOperation):
    """``cluster.recv``: receive the tensor sent on ``channel`` (blocks until it is sent)."""

    name = "cluster.recv"
    result = result_def()
    channel = prop_def(StringAttr)
    traits = traits_def(HasParent(ClusterOp))

    assembly_format = "`from` $channel attr-dict `:` type($result)"

    def __init__(self, channel: str, result_type: Attribute):
        super().__init__(result_types=[result_type], properties={"channel": StringAttr(channel)})


def _first_cluster(block: Block) -> ClusterOp | None:
    for op in block.ops:
        if isinstance(op, ClusterOp):
            return op
    return None


def clusters_of(block: Block) -> list[ClusterOp]:
    """The ``cluster.cluster`` ops of a function body, in order."""
    return [op for op in block.ops if isinstance(op, ClusterOp)]


def is_ambient(op: Operation) -> bool:
    """Read-only values every cluster may use: constants (``ConstantLike``) and ``onnx.NoValue``."""
    return op.has_trait(ConstantLike) or op.name == "onnx.NoValue"


def _is_ambient(value: SSAValue, block: Block) -> bool:
    """Graph inputs and read-only constants of the function body may be used by every cluster."""
    owner = value.owner
    if isinstance(owner, Block):
        return owner is block
    return owner.parent is block and is_ambient(owner)


def verify_program(block: Block) -> None:
    """Check the clustered program in ``block`` (see the module docstring); raises
    :class:`~ramiel.parsing.LocatedVerifyError` at the op at fault (an op outside the clusters,
    a use before its definition, a channel's send or recv), not at the first cluster."""
    clusters = clusters_of(block)
    for op in block.ops:
        if not isinstance(op, ClusterOp | YieldOp) and not (
            op.has_trait(IsTerminator) or is_ambient(op)
        ):
            raise LocatedVerifyError(
                f"{op.name} is outside every cluster; in a clustered function every compute "
                "op belongs to a cluster.cluster",
                op,
            )
    names: set[str] = set()
    sends: dict[str, tuple[SendOp, ClusterOp]] = {}
    recvs: dict[str, tuple[RecvOp, ClusterOp]] = {}
    for c in clusters:
        if c.cluster_name in names:
            raise LocatedVerifyError(f"duplicate cluster name @{c.cluster_name}", c)
        names.add(c.cluster_name)
        inner = c.body.block
        defined: set[Operation] = set()
        for op in inner.ops:
            for v in dependences(op):  # operands, and the values a region op's regions capture
                owner = v.owner
                local = (owner is inner) if isinstance(owner, Block) else owner.parent is inner
                if not local and not _is_ambient(v, block):
                    raise LocatedVerifyError(
                        f"cluster @{c.cluster_name}: {op.name} uses a value defined in another "
                        f"cluster; it must arrive through cluster.recv",
                        op,
                    )
                if local and isinstance(owner, Operation) and owner not in defined:
                    raise LocatedVerifyError(
                        f"cluster @{c.cluster_name}: {op.name} uses a value before the op that "
                        "defines it",
                        op,
                    )
            defined.add(op)
            if isinstance(op, SendOp | RecvOp):
                # its own verifier has not run yet (this runs from the first cluster): its
                # channel property and operand must exist before they are read
                try:
                    op.verify(verify_nested_ops=False)
                except VerifyException as e:
                    reason = str(e.args[0] if e.args else e)
                    raise LocatedVerifyError(
                        reason.removeprefix("Operation does not verify: "), op
                    ) from None
                t = op.value.type if isinstance(op, SendOp) else op.result.type
                problem = tensor_type_problem(t)
                if problem is None and not isinstance(t, TensorType):
                    problem = f"a channel carries a tensor, not {t}"
                if problem is not None:
                    raise LocatedVerifyError(f"channel '{op.channel.data}': {problem}", op)
            if isinstance(op, SendOp):
                ch = op.channel.data
                if ch in sends:
                    raise LocatedVerifyError(f"channel '{ch}' has more than one cluster.send", op)
                sends[ch] = (op, c)
            elif isinstance(op, RecvOp):
                ch = op.channel.data
                if ch in recvs:
                    raise LocatedVerifyError(f"channel '{ch}' has more than one cluster.recv", op)
                recvs[ch] = (op, c)
    for ch, (s, sc) in sends.items():
        if ch not in recvs:
            raise LocatedVerifyError(
                f"channel '{ch}' is sent by @{sc.cluster_name} but never received", s
            )
        r, rc = recvs[ch]
        if rc is sc:
            raise LocatedVerifyError(f"channel '{ch}' is sent and received in the same cluster", r)
        if r.result.type != s.value.type:
            raise LocatedVerifyError(
                f"channel '{ch}': received type {r.result.type} differs from sent {s.value.type}",
                r,
            )
    for ch, (r, rc) in recvs.items():
        if ch not in sends:
            raise LocatedVerifyError(
                f"channel '{ch}' is received by @{rc.cluster_name} but never sent", r
            )
    _check_deadlock_free(clusters)


def program_order(
    clusters: Sequence[ClusterOp],
) -> tuple[list[tuple[int, Operation]], list[tuple[int, RecvOp]]]:
    """The clusters' ops in one global order, by their "program counters".

    Kahn's algorithm on the graph whose nodes are (cluster, position) and whose edges are each
    cluster's program order and every send -> recv of a channel: in turn, each cluster advances
    until it reaches a recv whose channel no cluster has sent yet, until none can advance.

    Args:
        clusters: the program's clusters (their index in this sequence names them below).

    Returns:
        ``(order, stuck)``: ``order`` lists every op passed as ``(cluster index, op)``, in an order
        that keeps each cluster's order and passes a channel's send before its recv; ``stuck``
        lists, for each cluster that could not finish, ``(cluster index, the recv it waits at)``:
        empty exactly when the program is deadlock-free.
    """
    seqs = [list(c.body.block.ops) for c in clusters]
    pos = [0] * len(seqs)
    sent: set[str] = set()
    order: list[tuple[int, Operation]] = []
    progress = True
    while progress:
        progress = False
        for i, seq in enumerate(seqs):
            while pos[i] < len(seq):
                op = seq[pos[i]]
                if isinstance(op, RecvOp) and op.channel.data not in sent:
                    break
                if isinstance(op, SendOp):
                    sent.add(op.channel.data)
                order.append((i, op))
                pos[i] += 1
                progress = True
    stuck: list[tuple[int, RecvOp]] = []
    for i, seq in enumerate(seqs):
        if pos[i] < len(seq):
            waits = seq[pos[i]]
            assert isinstance(waits, RecvOp)  # a cluster stops only at a recv
            stuck.append((i, waits))
    return order, stuck


def _check_deadlock_free(clusters: list[ClusterOp]) -> None:
    _, stuck = program_order(clusters)
    if stuck:
        desc = ", ".join(
            f"@{clusters[i].cluster_name} waits on channel '{op.channel.data}'" for i, op in stuck
        )
        raise VerifyException(f"the clustered program can deadlock: {desc}")


Cluster = Dialect("cluster", [ClusterOp, YieldOp, SendOp, RecvOp], [])
"""The ``cluster`` dialect."""
