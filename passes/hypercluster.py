"""``--hypercluster{batch=B}``: the program for B samples, for task + data parallelism at once.

At batch size 1 a model only has the task parallelism of its branches; B independent samples add
data parallelism. This pass builds, from the batch-1 ``@main``, the program that computes B
samples: the per-sample graph is replicated B times (sample ``k``'s graph inputs and outputs are
``<name>__s<k>``, its ops' node names get ``@s<k>``), sharing the read-only constants (weights).
The per-sample graph is never changed, so models exported with a fixed batch of 1 (whose Reshapes
name a batch of 1) work: the generated code takes B inputs and returns B outputs.

The clustering passes then run on the B-sample graph (``--hypercluster{batch=4} --estimate-cost
--linear-cluster --merge{clusters=P}``): linear clustering peels the critical path of one sample,
then of the next, and merging interleaves the operations of different samples in the same worker,
so the parallel paths of one sample and the independent samples are scheduled together by one cost
model. We run the ordinary algorithms on the replicated graph rather than a specialised
"hyper-cluster" heuristic (map whole samples to workers, then balance) because linear clustering and
merging are near-linear in the graph size (B·n nodes stay cheap for B <= 16), and because the
replicated graph lets the merge step find mixed schedules (one sample's big branch next to another
sample's tail) that per-sample heuristics miss. A clustered input is flattened first.

Options: ``batch=B`` (B >= 1; B = 1 leaves the program unchanged).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Block, Region, SSAValue
from xdsl.passes import ModulePass

from ramiel.clustering import decluster, is_ambient, main_func
from ramiel.dialects.onnx import NODE_NAME_ATTR
from ramiel.errors import RamielError
from ramiel.passes.lower_to_torchpy import ONNX_NAME, io_names

BATCH_ATTR = "ramiel.batch"


def sample_name(name: str, k: int) -> str:
    """The graph input/output name of sample ``k``: ``<name>__s<k>``."""
    return f"{name}__s{k}"


@dataclass(frozen=True)
class Hypercluster(ModulePass):
    """See the module docstring."""

    name = "hypercluster"

    batch: int = 1

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.batch < 1:
            raise RamielError(f"hypercluster: batch must be at least 1, got {self.batch}")
        if self.batch == 1:
            return
        fn = main_func(op)
        decluster(fn)
        block = fn.body.block
        ret = block.last_op
        assert isinstance(ret, func.ReturnOp)
        in_names, out_names = io_names(fn)
        arg_types = [a.type for a in block.args]
        new_block = Block(arg_types=arg_types * self.batch)
        ambient = [o for o in block.ops if is_ambient(o)]
        compute = [o for o in block.ops if not is_ambient(o) and o is not ret]
        for o in ambient:
            o.detach()
            new_block.add_op(o)
        outputs: list[SSAValue] = []
        for k in range(self.batch):
            mapping: dict[SSAValue, SSAValue] = {}
            for i, a in enumerate(block.args):
                new_arg = new_block.args[k * len(block.args) + i]
                new_arg.name_hint = f"{a.name_hint}_s{k}" if a.name_hint else None
                mapping[a] = new_arg
            for o in compute:
                c = o.clone(value_mapper=mapping)
                name = o.attributes.get(NODE_NAME_ATTR)
                if isinstance(name, StringAttr):
                    c.attributes[NODE_NAME_ATTR] = StringAttr(f"{name.data}@s{k}")
                for r_old, r_new in zip(o.results, c.results, strict=True):
                    r_new.name_hint = f"{r_old.name_hint}_s{k}" if r_old.name_hint else None
                    mapping[r_old] = r_new
                new_block.add_op(c)
            outputs += [mapping.get(v, v) for v in ret.operands]
        new_block.add_op(func.ReturnOp(*outputs))
        out_types = [v.type for v in ret.operands] * self.batch

        def names_attr(names: list[str]) -> ArrayAttr[DictionaryAttr]:
            return ArrayAttr(
                [
                    DictionaryAttr({ONNX_NAME: StringAttr(sample_name(n, k))})
                    for k in range(self.batch)
                    for n in names
                ]
            )

        new_fn = func.FuncOp(
            fn.sym_name.data,
            (arg_types * self.batch, out_types),
            Region(new_block),
            arg_attrs=names_attr(in_names),
            res_attrs=names_attr(out_names),
        )
        parent = fn.parent_block()
        assert parent is not None
        parent.insert_op_before(new_fn, fn)
        for o in reversed(list(block.ops)):
            block.erase_op(o, safe_erase=False)
        parent.erase_op(fn, safe_erase=False)
        op.attributes[BATCH_ATTR] = IntegerAttr(self.batch, IntegerType(64))
