"""``--hypercluster{batch=B}``: the program for B samples, for task + data parallelism at once.

At batch size 1 a model only has the task parallelism of its branches; B independent samples add
data parallelism. This pass builds, from the batch-1 ``@main``, the program that computes B
samples: the per-sample graph is replicated B times, sharing the read-only constants (weights and
``onnx.NoValue``). Sample ``k``'s graph inputs and outputs are named ``<name>__s<k>`` (arguments and
results sample-major: all of sample 0, then all of sample 1, ...), its ops' node names get
``@s<k>`` and their SSA names ``_s<k>``; the module gets ``ramiel.batch = B``. The per-sample graph
is never changed, so models exported with a fixed batch of 1 (whose Reshapes name a batch of 1)
work: the generated code takes B inputs and returns B outputs.

The clustering passes then run on the B-sample graph (``--hypercluster{batch=4} --estimate-cost
--linear-cluster --merge{clusters=P}``, as ``ramiel compile --batch B`` does). The samples are
disconnected copies, so linear clustering peels the critical path of every sample first, then
their side branches, and merging maps those paths onto the P workers with the same cost model as
at batch 1: the parallel paths of one sample and the independent samples are scheduled together.
What it finds, on ``light_inception_v1/v2`` and ``light_squeezenet`` with P = 2: for B a multiple
of P, whole samples per worker with no transfer (estimated makespan W/P, the same as plain data
parallelism); for other B, mixed schedules that split some samples' branches over the workers
and interleave them with other samples (B = 3 on inception_v1: estimated about 140 ms against
183 ms for whole samples; see ``lit_tests/passes/hypercluster.mlir`` for a small case). Measured
(``bench/results/hypercluster.txt``): at even B about as fast as data parallelism (inception_v2
3-6 % slower: the merge kept an equal-estimate schedule with some transfers), at B = 3 16-26 %
faster on the inception models, except where its schedule has many transfers on the processes
backend, which the cost model prices too low.

We run the ordinary algorithms on the replicated graph rather than a specialised hypercluster
heuristic (map whole samples to workers, then balance the remainder) because it needs no new
scheduling code, finds those mixed schedules by itself, and stays cheap: linear clustering and
merging are near-linear in the graph size (see ``ramiel.scheduling``); hypercluster + clustering
of inception_v2 (about 500 compute ops per sample) took 0.4 s at B = 1, 1.6 s at B = 4 and 4.7 s
at B = 8 on this 2-core machine (busy).

A clustered input is flattened first (the clustering is recomputed for B samples), and costs
already estimated stay on every copy. Hyperclustering a module twice is an error (it already
holds ``ramiel.batch`` samples; start from the batch-1 module).

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
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Attribute, Block, SSAValue
from xdsl.passes import ModulePass

from ramiel.attrs import (
    BATCH_ATTR,
    NODE_NAME_ATTR,
    get_attr,
    has,
    io_names,
    set_int,
    set_str,
    with_onnx_name,
)
from ramiel.clustering import decluster, is_ambient, main_func
from ramiel.errors import RamielError
from ramiel.omp import MAX_COUNT


def sample_name(name: str, k: int) -> str:
    """The graph input/output name of sample ``k``: ``<name>__s<k>``."""
    return f"{name}__s{k}"


@dataclass(frozen=True)
class Hypercluster(ModulePass):
    """See the module docstring."""

    name = "hypercluster"

    batch: int = 1

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not 1 <= self.batch <= MAX_COUNT:
            raise RamielError(
                f"hypercluster: batch must be from 1 to {MAX_COUNT}, got {self.batch}"
            )
        if self.batch == 1:
            return
        if has(op, BATCH_ATTR):
            raise RamielError(
                f"hypercluster: the module is already the program for "
                f"{_int_attr(get_attr(op, BATCH_ATTR))} samples ({BATCH_ATTR}); "
                "hypercluster the batch-1 module instead"
            )
        fn = main_func(op)
        decluster(fn)
        replicate(fn, self.batch)
        set_int(op, BATCH_ATTR, self.batch)


def _int_attr(a: Attribute | None) -> str:
    return str(a.value.data) if isinstance(a, IntegerAttr) else str(a)


def replicate(fn: func.FuncOp, batch: int) -> None:
    """Rewrite the flat function ``fn`` in place into the program for ``batch`` samples.

    Arguments and results become ``batch`` groups (sample-major: all inputs of sample 0, then of
    sample 1, ...), each op of the body is cloned once per sample (``@s<k>`` appended to its
    ``onnx_node_name``, ``_s<k>`` to its SSA name hints), and constants and ``onnx.NoValue`` stay
    single, shared by every sample. Other argument/result attributes and the function's own
    attributes are kept.
    """
    block = fn.body.block
    ret = block.last_op
    if not isinstance(ret, func.ReturnOp):
        raise RamielError(f"hypercluster: @{fn.sym_name.data} does not end with func.return")
    in_names, out_names = io_names(fn)
    arg_types = [a.type for a in block.args]
    new_block = Block(arg_types=arg_types * batch)
    ambient = [o for o in block.ops if is_ambient(o)]
    compute = [o for o in block.ops if not is_ambient(o) and o is not ret]
    for o in ambient:
        o.detach()
        new_block.add_op(o)
    outputs: list[SSAValue] = []
    for k in range(batch):
        mapping: dict[SSAValue, SSAValue] = {}
        for i, a in enumerate(block.args):
            new_arg = new_block.args[k * len(block.args) + i]
            new_arg.name_hint = f"{a.name_hint}_s{k}" if a.name_hint else None
            mapping[a] = new_arg
        for o in compute:
            c = o.clone(value_mapper=mapping)
            name = get_attr(o, NODE_NAME_ATTR)
            if isinstance(name, StringAttr):
                set_str(c, NODE_NAME_ATTR, f"{name.data}@s{k}")
            for r_old, r_new in zip(o.results, c.results, strict=True):
                r_new.name_hint = f"{r_old.name_hint}_s{k}" if r_old.name_hint else None
                mapping[r_old] = r_new
            new_block.add_op(c)
        outputs += [mapping.get(v, v) for v in ret.operands]
    new_block.add_op(func.ReturnOp(*outputs))

    def sample_attrs(attrs: ArrayAttr | None, names: list[str]) -> ArrayAttr[DictionaryAttr]:
        dicts = []
        for k in range(batch):
            for i, n in enumerate(names):
                old = attrs.data[i] if attrs is not None and i < len(attrs.data) else None
                dicts.append(with_onnx_name(old, sample_name(n, k)))
        return ArrayAttr(dicts)

    arg_attrs = sample_attrs(fn.arg_attrs, in_names)
    res_attrs = sample_attrs(fn.res_attrs, out_names)
    for o in reversed(list(block.ops)):
        block.erase_op(o, safe_erase=False)
    fn.body.detach_block(block)
    fn.body.add_block(new_block)
    fn.update_function_type()  # the arguments and the results of new_block
    fn.arg_attrs = arg_attrs
    fn.res_attrs = res_attrs
