"""Between IR and scheduling: task graphs from ``onnx`` IR, and ``cluster`` IR from clusterings.

The clustering passes (``--linear-cluster``, ``--merge``, ``--clone``, ``--schedule-report``) all
follow the same three steps:

1. :func:`decluster` flattens a clustered ``func.func @main`` back to one sequential op list (receives
   are replaced by the sent values; clones of one op are merged back); :func:`current_clustering`
   reads the same flat graph and clustering without rewriting anything (the schedule report and
   ``--intra-op-threads`` ask it);
2. :func:`task_graph` builds a :class:`~ramiel.scheduling.graph.TaskGraph` whose nodes are the
   compute ops (constants and graph inputs are read-only and shared by all clusters) weighted by
   ``ramiel.cost_us`` and whose edges are weighted by the transfer cost of the tensor;
3. a scheduling algorithm returns a clustering and :func:`build_clusters` rewrites the function into
   ``cluster`` dialect form with one ``cluster.send``/``cluster.recv`` pair per (tensor, consuming
   cluster).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ModuleOp,
)
from xdsl.ir import Block, Operation, SSAValue

from ramiel.attrs import (
    BACKEND_ATTR,
    COST_ATTR,
    NODE_NAME_ATTR,
    THREADED_COST_ATTR,
    THREADS_ATTR,
    TRANSFER_COST_ATTR,
    get_attr,
    get_float,
    get_floats,
    get_int,
    get_str,
    remove,
    set_float,
)
from ramiel.cost_model import analytic_cost_us, tensor_bytes, transfer_cost_us
from ramiel.dialects.cluster import (
    ClusterOp,
    RecvOp,
    SendOp,
    YieldOp,
    clusters_of,
    is_ambient,
    program_order,
)
from ramiel.dialects.onnx import captured_values, dependences, drop_invalid_inplace
from ramiel.errors import RamielError, SchedulingError
from ramiel.naming import unique
from ramiel.scheduling import estimate_makespan, order_clusters
from ramiel.scheduling.graph import TaskGraph


def main_func(module: ModuleOp) -> func.FuncOp:
    """The ``func.func @main`` of ``module`` (the importer's entry point)."""
    funcs = [op for op in module.ops if isinstance(op, func.FuncOp)]
    for f in funcs:
        if f.sym_name.data == "main":
            return f
    if len(funcs) == 1:
        return funcs[0]
    raise RamielError("the module has no func.func @main to cluster")


def compute_ops(block: Block) -> list[Operation]:
    """The compute ops of a *flat* function body, in order (no constants, no terminator)."""
    return [
        op
        for op in block.ops
        if not is_ambient(op) and not isinstance(op, func.ReturnOp | ClusterOp)
    ]


def op_cost(op: Operation, warn: bool = True) -> float:
    """``ramiel.cost_us`` of ``op``; without it, the analytic estimate (with a warning once)."""
    us = get_float(op, COST_ATTR)
    if us is not None:
        return us
    if warn and not _warned:
        _warned.append(True)
        print(
            "warning: ops carry no ramiel.cost_us (run --estimate-cost first); "
            "using the analytic cost model",
            file=sys.stderr,
        )
    return analytic_cost_us(op)


_warned: list[bool] = []


def set_cost(op: Operation, us: float) -> None:
    set_float(op, COST_ATTR, us)


def backend_of(module: ModuleOp | None) -> str:
    backend = get_str(module, BACKEND_ATTR) if module is not None else None
    return backend if backend is not None else "threads"


def transfer_model_of(module: ModuleOp | None) -> str | tuple[float, float]:
    """The transfer cost model of ``module``: its ``ramiel.transfer_cost`` ``(latency µs, µs per
    byte)`` if set, else the name of its backend (whose default costs apply)."""
    model = get_floats(module, TRANSFER_COST_ATTR) if module is not None else None
    if model is not None and len(model) == 2:
        return (model[0], model[1])
    return backend_of(module)


@dataclass
class GraphView:
    """A task graph together with the ops its nodes stand for."""

    graph: TaskGraph
    ops: list[Operation]
    index: dict[Operation, int]


def task_graph(
    ops: Sequence[Operation],
    backend: str | tuple[float, float] = "threads",
    resolve: Callable[[SSAValue], SSAValue] | None = None,
) -> GraphView:
    """The task graph of the compute ops ``ops`` (a flat function body in order).

    Node weight: :func:`op_cost` (µs). Edge ``u -> v`` for every tensor ``u`` produces and ``v``
    reads, weighted by :func:`~ramiel.cost_model.transfer_cost_us` of its bytes (``backend``: a
    backend name or a ``(latency µs, µs per byte)`` model, see :func:`transfer_model_of`). A
    region op (``onnx.If``/``Loop``/``Scan``) is one node; it reads its operands and the values
    its regions capture (:func:`~ramiel.dialects.onnx.dependences`). ``resolve`` maps a value an
    op reads to the value it stands for (a received tensor to the sent one, see
    :func:`current_clustering`); by default every value stands for itself.
    """
    index = {op: i for i, op in enumerate(ops)}
    costs = [op_cost(op) for op in ops]
    edges: dict[tuple[int, int], tuple[float, int]] = {}
    for v, op in enumerate(ops):
        deps = dependences(op)
        if resolve is not None:
            deps = list(dict.fromkeys(resolve(d) for d in deps))
        for operand in deps:
            owner = operand.owner
            u = index.get(owner) if isinstance(owner, Operation) else None
            if u is None or u == v:
                continue
            nbytes = tensor_bytes(operand.type)
            prev = edges.get((u, v))
            total = nbytes + (prev[1] if prev else 0)
            edges[(u, v)] = (transfer_cost_us(total, backend), total)
    names = [_op_label(op, i) for i, op in enumerate(ops)]
    g = TaskGraph.from_edges(costs, [(u, v, c, b) for (u, v), (c, b) in edges.items()], names)
    return GraphView(g, list(ops), index)


def _op_label(op: Operation, i: int) -> str:
    name = get_str(op, NODE_NAME_ATTR)
    return name if name is not None else f"{op.name}#{i}"


# ---------------------------------------------------------------------------------------------
# decluster
# ---------------------------------------------------------------------------------------------


def _clone_key(op: Operation, resolve: Callable[[SSAValue], SSAValue] = lambda v: v) -> tuple:
    return (
        op.name,
        tuple(id(resolve(v)) for v in op.operands),
        tuple(sorted((k, str(v)) for k, v in op.properties.items())),
        str(get_attr(op, NODE_NAME_ATTR)),
    )


def decluster(fn: func.FuncOp) -> list[list[Operation]]:
    """Flatten a clustered function in place into one sequential op list.

    The order interleaves the clusters along one global topological order (each cluster's order is
    kept). Clones (the same op, same operands, in several clusters) are merged into one op.
    Returns the clustering the function had, as lists of the surviving compute ops (a cloned op is
    listed in every cluster that had a copy); ``[]`` if the function was not clustered.
    """
    block = fn.body.block
    clusters = clusters_of(block)
    if not clusters:
        return []
    anchor = clusters[0]
    program = _read_program(block, clusters, "flatten")
    for v in program.alias:
        v.replace_all_uses_with(program.resolve(v))
    for op in program.flat:
        op.detach()
        block.insert_op_before(op, anchor)
    for c in clusters:
        inner = c.body.block
        for op in reversed(list(inner.ops)):
            inner.erase_op(op, safe_erase=False)
        block.erase_op(c, safe_erase=False)
    drop_invalid_inplace(fn)  # merged clones may give an overwritten operand a second reader
    return program.previous


@dataclass
class _Program:
    """A clustered program read along :func:`~ramiel.dialects.cluster.program_order`."""

    flat: list[Operation]
    """The ops of the clusters in that order, a cloned op once (its first copy)."""
    previous: list[list[Operation]]
    """Per cluster, its ops among ``flat`` (a cloned op in every cluster holding a copy)."""
    alias: dict[SSAValue, SSAValue]
    """A received tensor -> the sent one, a cluster's result -> the yielded value, a copy's
    result -> its first copy's (:meth:`resolve` follows them)."""

    def resolve(self, v: SSAValue) -> SSAValue:
        while v in self.alias:
            v = self.alias[v]
        return v


def _read_program(block: Block, clusters: Sequence[ClusterOp], what: str) -> _Program:
    """Read the clustered program of ``block`` without changing it; raises :class:`RamielError`
    (``cannot <what> the clustered program``) if it deadlocks."""
    order, stuck = program_order(clusters)
    if stuck:
        raise RamielError(f"cannot {what} the clustered program: it deadlocks")
    program = _Program([], [[] for _ in clusters], {})
    sent: dict[str, SSAValue] = {}
    seen: dict[tuple, Operation] = {}
    for i, op in order:
        if isinstance(op, RecvOp):
            program.alias[op.result] = sent[op.channel.data]
        elif isinstance(op, SendOp):
            sent[op.channel.data] = program.resolve(op.value)
        elif isinstance(op, YieldOp):
            for res, val in zip(clusters[i].outs, op.values, strict=True):
                program.alias[res] = program.resolve(val)
        else:
            key = _clone_key(op, program.resolve)
            twin = seen.get(key)
            if twin is not None:
                for a, b in zip(op.results, twin.results, strict=True):
                    program.alias[a] = b
                program.previous[i].append(twin)
            else:
                seen[key] = op
                program.flat.append(op)
                program.previous[i].append(op)
    return program


# ---------------------------------------------------------------------------------------------
# build_clusters
# ---------------------------------------------------------------------------------------------

_NAME_RE = re.compile(r"[^A-Za-z0-9_]")


def _value_label(v: SSAValue, fallback: str) -> str:
    h = v.name_hint or fallback
    return _NAME_RE.sub("_", h)


def build_clusters(
    fn: func.FuncOp,
    clustering: Sequence[Sequence[Operation]],
    names: Sequence[str] | None = None,
) -> list[ClusterOp]:
    """Rewrite the flat function ``fn`` into ``cluster`` form following ``clustering``.

    ``clustering[k]`` lists the compute ops of cluster ``k`` in execution order; an op may appear in
    several clusters (it is cloned). Every compute op must appear at least once. Each cluster's
    order must be consistent with one global topological order (else the verifier reports a
    possible deadlock). Raises :class:`SchedulingError` on an invalid clustering.
    """
    block = fn.body.block
    ret = block.last_op
    assert isinstance(ret, func.ReturnOp)
    flat = compute_ops(block)
    placed = {op for ops in clustering for op in ops}
    missing = [op for op in flat if op not in placed]
    if missing:
        raise SchedulingError(f"{len(missing)} op(s) are in no cluster, e.g. {missing[0].name}")
    names = list(names) if names is not None else [f"c{k}" for k in range(len(clustering))]

    home: dict[Operation, int] = {}
    for k, ops in enumerate(clustering):
        for op in ops:
            home.setdefault(op, k)

    # local[k][value] = the value's version inside cluster k
    local: list[dict[SSAValue, SSAValue]] = [{} for _ in clustering]
    copies: list[dict[Operation, Operation]] = [{} for _ in clustering]
    blocks = [Block() for _ in clustering]
    channel_names: set[str] = set()
    label_of: dict[SSAValue, str] = {}
    last_send: dict[Operation, Operation] = {}

    def label(v: SSAValue) -> str:
        if v not in label_of:
            label_of[v] = _value_label(v, f"t{len(label_of)}")
        return label_of[v]

    def channel(v: SSAValue, src: int, dst: int) -> str:
        return unique(f"{label(v)}__{names[src]}_{names[dst]}", channel_names)

    def local_value(v: SSAValue, k: int, before: Operation | None) -> SSAValue:
        owner = v.owner
        if isinstance(owner, Block) or is_ambient(owner):
            return v
        if v in local[k]:
            return local[k][v]
        src_op = owner
        j = home.get(src_op)
        if j is None:
            raise SchedulingError(f"value produced by {src_op.name} is in no cluster")
        src_copy = copies[j][src_op]
        src_val = src_copy.results[next(i for i, r in enumerate(src_op.results) if r is v)]
        ch = channel(v, j, k)
        send = SendOp(src_val, ch)
        # Sends follow their producer in the order they are created (consumer cluster order).
        blocks[j].insert_op_after(send, last_send.get(src_copy, src_copy))
        last_send[src_copy] = send
        recv = RecvOp(ch, v.type)
        recv.result.name_hint = v.name_hint
        if before is None:
            blocks[k].add_op(recv)
        else:
            blocks[k].insert_op_before(recv, before)
        local[k][v] = recv.result
        return recv.result

    # First place every op copy (so that sends can be inserted after producers), then wire
    # operands cluster by cluster in each cluster's own order, so that a value a cluster receives
    # is received right before the first op *of that cluster* that uses it.
    operands_of = {op: list(op.operands) for op in flat}
    captures_of = {op: captured_values(op) for op in flat if op.regions}
    for k, ops in enumerate(clustering):
        for op in ops:
            if op in copies[k]:
                raise SchedulingError(f"{op.name} appears twice in cluster {names[k]}")
            new = op if home[op] == k else op.clone()
            if new is op:
                op.detach()
            copies[k][op] = new
            blocks[k].add_op(new)
            for r_old, r_new in zip(op.results, new.results, strict=True):
                local[k][r_old] = r_new
    for k, op in ((k, op) for k, ops in enumerate(clustering) for op in ops):
        new = copies[k][op]
        for i, v in enumerate(operands_of[op]):
            nv = local_value(v, k, new)
            if nv is not new.operands[i]:
                new.operands[i] = nv
        if op in captures_of:  # values the regions capture arrive before the region op too
            local_of = {v: local_value(v, k, new) for v in captures_of[op]}
            for inner in new.walk():
                if inner is new:
                    continue
                for i, v in enumerate(inner.operands):
                    lv = local_of.get(v)
                    if lv is not None and lv is not v:
                        inner.operands[i] = lv
    # Graph outputs: yielded by the cluster that owns the producer.
    outputs = list(ret.operands)
    yields: list[list[SSAValue]] = [[] for _ in clustering]
    out_slot: dict[int, tuple[int, int]] = {}
    for oi, v in enumerate(outputs):
        owner = v.owner
        if isinstance(owner, Block) or is_ambient(owner):
            continue
        k = home[owner]
        out_slot[oi] = (k, len(yields[k]))
        yields[k].append(local[k][v])
    result_ops: list[ClusterOp] = []
    for k, b in enumerate(blocks):
        b.add_op(YieldOp(yields[k]))
        c = ClusterOp(names[k], b, [v.type for v in yields[k]])
        block.insert_op_before(c, ret)
        result_ops.append(c)
    for oi, (k, slot) in out_slot.items():
        ret.operands[oi] = result_ops[k].outs[slot]
    drop_invalid_inplace(fn)  # an overwritten operand that now crosses a channel stays intact
    return result_ops


# ---------------------------------------------------------------------------------------------
# recluster: the common driver of the clustering passes
# ---------------------------------------------------------------------------------------------


def recluster(
    module: ModuleOp,
    algorithm: Callable[[GraphView, list[list[int]]], Sequence[Sequence[int]]],
) -> list[ClusterOp]:
    """Flatten ``@main``, run ``algorithm(graph_view, current_clustering)``, rebuild clusters.

    ``current_clustering`` is the clustering ``@main`` had, as node ids (``[]`` when flat). The
    algorithm's result is put in one global topological order (deadlock-free) by
    :func:`~ramiel.scheduling.order_clusters` before the IR is rebuilt.
    """
    fn = main_func(module)
    previous = decluster(fn)
    ops = compute_ops(fn.body.block)
    if not ops:  # nothing to compute (outputs are inputs or constants, or there are none):
        return build_clusters(fn, [[]])  # one cluster that puts them, so the program runs
    for op in ops:  # thread counts belong to the old clustering's schedule
        remove(op, THREADS_ATTR)
        remove(op, THREADED_COST_ATTR)
    gv = task_graph(ops, transfer_model_of(module))
    current = [[gv.index[op] for op in c] for c in previous if c]
    result = [list(c) for c in algorithm(gv, current) if c]
    result = _best_order(gv.graph, result)
    return build_clusters(fn, [[gv.ops[i] for i in c] for c in result])


def _best_order(g: TaskGraph, clusters: list[list[int]]) -> list[list[int]]:
    """``clusters`` in the orders of :func:`~ramiel.scheduling.order_clusters` (list scheduling),
    unless the orders they come in are deadlock-free and give an estimated makespan at least as
    short (list scheduling by b-level can delay a cheap producer whose consumer waits in another
    cluster; a clustering pass must not lengthen a schedule it was given)."""
    ordered = order_clusters(g, clusters)
    try:
        given = estimate_makespan(g, clusters).makespan
    except SchedulingError:
        return ordered
    return clusters if given <= estimate_makespan(g, ordered).makespan else ordered


def cluster_compute_ops(module: ModuleOp) -> list[list[Operation]]:
    """The compute ops of every cluster of ``@main``, in order (one list for a flat ``@main``).

    Position ``i`` of cluster ``c`` is the node ``clusters[c][i]`` of :func:`current_clustering`
    (sends, receives and yields are not compute ops; a cloned op is listed in every cluster
    holding a copy, as that copy). Like there, a cluster without compute ops is left out, so
    ``c`` counts only the clusters that compute something.
    """
    block = main_func(module).body.block
    clusters = clusters_of(block)
    if not clusters:
        return [compute_ops(block)]
    per_cluster = [
        [op for op in c.body.block.ops if not isinstance(op, RecvOp | SendOp | YieldOp)]
        for c in clusters
    ]
    return [ops for ops in per_cluster if ops]


def intra_op_threads(module: ModuleOp) -> tuple[list[list[int]], list[list[float]]] | None:
    """``(threads, costs)`` per cluster and position (as :func:`cluster_compute_ops`) from the
    ``ramiel.threads``/``ramiel.threaded_cost_us`` attributes of ``--intra-op-threads``; ``None``
    when no op carries them. An op without them runs with one thread at its ``ramiel.cost_us``."""
    per_cluster = cluster_compute_ops(module)
    found = False
    threads: list[list[int]] = []
    costs: list[list[float]] = []
    for ops in per_cluster:
        ts, cs = [], []
        for op in ops:
            t = get_int(op, THREADS_ATTR)
            c = get_float(op, THREADED_COST_ATTR)
            if t is not None and c is not None:
                found = True
                ts.append(t)
                cs.append(c)
            else:
                ts.append(1)
                cs.append(op_cost(op, warn=False))
        threads.append(ts)
        costs.append(cs)
    return (threads, costs) if found else None


def current_clustering(module: ModuleOp) -> tuple[GraphView, list[list[int]]]:
    """The task graph of ``@main`` and its clustering (one cluster if flat), read from the IR as it
    is (nothing is rewritten or cloned).

    The graph is the one :func:`decluster` would leave (same nodes in the same order, same costs,
    edges and names): its nodes are ``@main``'s compute ops, the ops of the clusters in
    :func:`~ramiel.dialects.cluster.program_order` in place of the first cluster, a cloned op
    once (its first copy in that order); a received tensor stands for the sent one and a
    cluster's result for the value it yields. ``clusters[c]`` lists the nodes of the ``c``-th cluster that computes something, in
    its order (a cloned op's node in every cluster holding a copy). Raises :class:`RamielError`
    if the clustered program deadlocks.
    """
    block = main_func(module).body.block
    clusters = clusters_of(block)
    program = _read_program(block, clusters, "read")
    ops: list[Operation] = []
    for op in block.ops:
        if clusters and op is clusters[0]:
            ops += [o for o in program.flat if not is_ambient(o)]
        elif not is_ambient(op) and not isinstance(op, func.ReturnOp | ClusterOp):
            ops.append(op)
    gv = task_graph(ops, transfer_model_of(module), program.resolve)
    result = [[gv.index[op] for op in c] for c in program.previous if c]
    return gv, result or [list(range(len(ops)))]
