"""``ramiel``: the driver for the whole job.

* ``ramiel compile model.onnx -o DIR [--clusters N] [--backend threads|processes]`` writes the
  parallel module, the sequential module, the weights and the schedule report (see
  :mod:`ramiel.compiler`).
* ``ramiel run [model.onnx]`` compiles (default model: ``light_inception_v1`` from the onnx wheel),
  runs once on deterministic inputs, compares the parallel and sequential modules with onnxruntime
  (largest error relative to the largest output magnitude) and prints the median latency of each.
  With ``--batch B`` the program takes B samples (inputs/outputs ``<name>__s<k>``): each sample's
  outputs are checked against onnxruntime run on the original model with that sample's inputs,
  and onnxruntime's latency is that of B runs one after another.
* ``ramiel profile model.onnx -o profile.json`` times every op in PyTorch on this machine (the
  profile database used by ``--profile``/``--estimate-cost{profile=FILE}``);
  ``ramiel profile model.onnx --compare-ort [--threads N]`` prints per ONNX op type the
  generated code's time next to onnxruntime's profiler time, sorted by the gap
  (:mod:`ramiel.compare_ort`).
* ``ramiel calibrate [-o cost.json] [--backend distributed]`` measures a backend's transfer cost
  (per-message latency and per-byte cost, :mod:`ramiel.runtime.calibrate`); under ``torchrun``
  between rank 0 and rank 1, e.g. two machines; ``--transfer-cost cost.json`` compiles with it.

Errors are one ``error: ...`` line and exit status 1 (2 for a bad command-line value, checked
before any work); never a traceback (set ``RAMIEL_DEBUG=1`` to see one for an internal error).
See :mod:`ramiel.tools.common`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import sys
import tempfile
import time
from collections.abc import Sequence
from typing import Any

from rich.console import Console

from ramiel.compare_ort import compare_with_ort  # lazy: numpy,onnx,xdsl
from ramiel.engines import output_error
from ramiel.errors import RamielError
from ramiel.files import input_file, output_file, printable, shell_quote
from ramiel.omp import usable_cores
from ramiel.tools.common import (
    ArgumentParser,
    add_input_shape,
    add_version,
    count,
    counts,
    input_shape_bindings,
    path,
    progress_bar,
    run_command,
    seconds,
)

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

MAX_PAYLOAD = 1 << 30
"""The largest payload `ramiel calibrate --sizes` takes, bytes (1 GiB: each size is allocated
per worker; 10**14 ended in an internal error of the allocator)."""


def default_model() -> str:
    """``light_inception_v1.onnx`` inside the installed onnx wheel (a real zoo model)."""
    import onnx  # lazy: onnx

    return os.path.join(
        os.path.dirname(onnx.__file__),
        "backend",
        "test",
        "data",
        "light",
        "light_inception_v1.onnx",
    )


def _rewrite_flags(p: argparse.ArgumentParser) -> None:
    """``--no-<rewrite>`` for each graph rewrite and ``--no-rewrites`` (into ``args.disable``)."""
    from ramiel.passes import REWRITE_PASSES  # lazy: xdsl

    for name in REWRITE_PASSES:
        p.add_argument(
            f"--no-{name}",
            dest="disable",
            action="append_const",
            const=name,
            help=f"do not run the graph rewrite --{name}",
        )
    p.add_argument(
        "--no-rewrites",
        dest="disable",
        action="append_const",
        const="all",
        help="run none of the graph rewrites (" + ", ".join(REWRITE_PASSES) + ")",
    )


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--clusters", type=count(), default=None, help="clusters/workers (default: cores)"
    )
    p.add_argument(
        "--backend",
        default="threads",
        choices=["threads", "processes", "distributed"],
        help="runtime the parallel module runs on: threads in one process, worker processes "
        "with shared memory, or torch.distributed ranks",
    )
    p.add_argument(
        "--transfer-cost",
        type=path,
        metavar="FILE",
        help="measured transfer costs (from 'ramiel calibrate -o FILE') instead of the backend's",
    )
    p.add_argument(
        "--threads-per-worker",
        type=count(),
        help="intra-op threads per worker when ramiel runs the program (ramiel run; the "
        "generated model.py takes --threads) (default: the cores the clusters were planned "
        "for, shared among the clusters made)",
    )
    add_input_shape(p)
    p.add_argument(
        "--profile", type=path, help="profile database (from 'ramiel profile') for op costs"
    )
    p.add_argument("--no-clone", action="store_true", help="do not duplicate cheap producers")
    p.add_argument("--ort-optimize", action="store_true", help="run ORT's basic optimiser first")
    p.add_argument(
        "--batch", type=count(), default=1, help="compile for B samples (hyperclustering)"
    )
    p.add_argument(
        "--cores",
        type=count(),
        default=None,
        help="give ops more intra-op threads while other clusters idle, planned for N cores "
        "(--intra-op-threads)",
    )
    _rewrite_flags(p)
    p.add_argument(
        "--compile",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="compile the compute between channel operations with torch.compile (inductor, "
        "frozen weights) when the program loads (--compile-segments); --no-compile: eager "
        "(default: onednn-graph segments where the cost model says they pay, as a compile "
        "note says; else eager)",
    )
    p.add_argument(
        "--compile-backend",
        choices=("inductor", "onednn-graph"),
        help="compile the segments with this backend (implies --compile): inductor "
        "(torch.compile, tens of seconds, cached on disk) or onednn-graph (traced and fused "
        "by TorchScript with oneDNN Graph on the first call: 0.1-3 s)",
    )
    p.add_argument(
        "--trainable",
        action="store_true",
        help="the sequential module's floating-point weights are nn.Parameters (not buffers)",
    )
    p.add_argument(
        "--dynamic-batch",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="let the sequential module take any batch size (dimension 0 of the inputs; by "
        "default where the model makes it symbolic); the parallel program keeps the bound size",
    )
    p.add_argument(
        "--class-name",
        type=_class_name,
        help="name of the generated module class (default: the graph's)",
    )
    _layout_arg(p)


def _compile_option(args: argparse.Namespace) -> bool | str:
    """``CompileOptions.compile`` from ``--compile``/``--no-compile`` and ``--compile-backend``:
    the backend named, else ``True`` (inductor) or ``False`` (eager), else ``"auto"``."""
    if args.compile_backend:
        return str(args.compile_backend)
    return "auto" if args.compile is None else bool(args.compile)


def _class_name(text: str) -> str:
    from ramiel.printer import class_name_problem  # lazy: numpy,onnx,xdsl

    problem = class_name_problem(text)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return text


def _layout_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--layout",
        default="auto",
        choices=["auto", "channels-last", "nchw"],
        help="memory format of 4-D activations (--assign-layout): channels-last through "
        "conv/pool regions where the cost model says faster (auto, the default), always, or "
        "never (nchw)",
    )


_MODEL_HELP = (
    "ONNX model file, or a model name as 'ramiel bench' takes it (light_squeezenet, inception, "
    "hf_bert, ...)"
)
"""The help of the model argument of the commands that take one (:func:`_run_model_path`)."""


def _parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog="ramiel", description="Ramiel: ONNX to task-parallel PyTorch")
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("compile", help="compile an ONNX model to Python modules")
    c.add_argument(
        "model",
        type=path,
        help=_MODEL_HELP,
    )
    c.add_argument("-o", "--output", type=path, required=True, help="output directory")
    _common(c)
    r = sub.add_parser("run", help="compile, run and check against onnxruntime")
    r.add_argument(
        "model",
        nargs="?",
        type=path,
        help=_MODEL_HELP.removesuffix(")") + "; default: light_inception_v1)",
    )
    r.add_argument("-o", "--output", type=path, help="keep the generated files in this directory")
    r.add_argument(
        "--repeat", type=count(1, 10**6), default=20, help="timed runs per configuration"
    )
    r.add_argument(
        "--random-weights",
        action="store_true",
        help="replace the weights with seeded random values first (the zoo test models' "
        "constant weights make every output equal, which checks little)",
    )
    r.add_argument(
        "--inputs",
        metavar="FILE",
        type=path,
        help="check on these inputs instead of random ones: a .safetensors or .npz file of "
        "tensors named after the graph inputs, an ONNX TensorProto (.pb), or an ONNX test data "
        "set directory (input_0.pb, ...); inputs of dynamic shape compile for the file's shapes",
    )
    r.add_argument(
        "--steps",
        type=count(1, 10**6),
        default=1,
        help="run N steps of a stateful model, feeding each step's state outputs back as its "
        "state inputs (a streaming model), and check every step against onnxruntime",
    )
    r.add_argument(
        "--state",
        action="append",
        default=[],
        type=_state_spec,
        metavar="IN=OUT",
        help="with --steps: the output fed back as input IN (default: inputs and outputs of the "
        "same shape and type, paired in order)",
    )
    _common(r)
    pr = sub.add_parser(
        "profile",
        help="measure per-op times into a profile database, or compare them with onnxruntime",
        description="Time every op of the model as 'ramiel compile' gives it (after the graph "
        "rewrites, in its memory format) into a profile database for 'ramiel compile --profile', "
        "or compare the generated code's per-op times with onnxruntime's (--compare-ort). Give "
        "the --layout and --no-<rewrite> options you compile with: an op a rewrite changes (a "
        "Conv that took a BatchNormalization has a bias) has another key in the database.",
    )
    pr.add_argument(
        "model",
        type=path,
        help=_MODEL_HELP,
    )
    pr.add_argument(
        "-o", "--output", type=path, help="profile database (JSON); needed without --compare-ort"
    )
    pr.add_argument(
        "--repeat",
        type=count(1, 10**6),
        default=None,
        help="timed runs of each op, the median (default 10; --compare-ort: 20)",
    )
    pr.add_argument(
        "--threads",
        type=counts(),
        default=None,
        metavar="N,M,...",
        help="intra-op thread counts to time each op with (default: 1 and the number of cores; "
        "--compare-ort: 1)",
    )
    add_input_shape(pr)
    pr.add_argument(
        "--compare-ort",
        action="store_true",
        help="print per ONNX op type the generated sequential module's time next to "
        "onnxruntime's profiler time (same model and threads), sorted by the gap",
    )
    pr.add_argument(
        "--json", type=path, metavar="FILE", help="--compare-ort: also write the table as JSON"
    )
    pr.add_argument(
        "--nodes",
        type=count(),
        metavar="N",
        help="--compare-ort: also print the N nodes with the largest gaps (name, op type, "
        "Ramiel's and onnxruntime's time of the node of the same name)",
    )
    _layout_arg(pr)
    # the ops are timed as a compile with the same options gives them (a Conv that took a
    # BatchNormalization has a bias): profile with the layout and rewrite options you compile with
    _rewrite_flags(pr)
    cal = sub.add_parser(
        "calibrate",
        help="measure the transfer cost of a backend (per-message latency, bytes per second)",
    )
    cal.add_argument(
        "-o", "--output", type=path, help="write the cost model here (JSON, for --transfer-cost)"
    )
    cal.add_argument(
        "--backend",
        default="distributed",
        choices=["threads", "processes", "distributed"],
        help="backend whose channels to time",
    )
    cal.add_argument(
        "--repeats", type=count(1, 10**6), default=30, help="timed round trips per size"
    )
    cal.add_argument(
        "--quantile",
        type=float,
        default=0.5,
        help="which round trip per size to fit (0.5: the median; 0.1 on a busy shared machine "
        "estimates the cost when the ranks have their cores)",
    )
    cal.add_argument(
        "--sizes",
        type=counts(1, MAX_PAYLOAD),
        default=None,
        metavar="N,M,...",
        help="payload sizes in bytes, at least two, each at most 1 GiB (default: 4 B to 16 MiB)",
    )
    t = sub.add_parser(
        "tune",
        help="compile the few programs Ramiel can make of a model, time them, keep the fastest",
    )
    t.add_argument(
        "model",
        type=path,
        help=_MODEL_HELP,
    )
    t.add_argument("-o", "--output", type=path, required=True, help="output directory")
    t.add_argument("--cores", type=count(), default=None, help="cores to plan for (default: all)")
    t.add_argument(
        "--profile",
        type=path,
        default=None,
        help="profile database with 1 and N threads (default: made first, into the output)",
    )
    t.add_argument(
        "--budget",
        type=seconds(),
        default=20.0,
        help="seconds for timing the candidates against each other (at least 5 rounds each); "
        "profiling the model, compiling the candidates and starting their processes come on "
        "top of it (a whole tune of a zoo model with no options takes about a minute on 2 cores)",
    )
    add_input_shape(t)
    _layout_arg(t)
    t.add_argument(
        "--compile",
        action="store_true",
        help="also consider the candidates with compiled segments (torch.compile) and report "
        "their compile time",
    )
    t.add_argument(
        "--no-onednn-graph",
        action="store_true",
        help="leave out the candidates with onednn-graph segments (traced, run by TorchScript "
        "with oneDNN Graph fusion), considered by default",
    )
    b = sub.add_parser(
        "bench", help="latency of the generated code vs intra-op threads and onnxruntime"
    )
    b.add_argument(
        "models",
        nargs="*",
        metavar="MODEL",
        help="ONNX files, zoo names (light_vgg19) or project models (inception, transformer); "
        "default: the onnx wheel's zoo models and the project's inception CNN and transformer",
    )
    b.add_argument("--json", type=path, metavar="FILE", help="also write the results as JSON here")
    b.add_argument("--workers", type=count(), default=None, help="cores to use, P (default: all)")
    b.add_argument(
        "--out", type=path, default="bench/results", metavar="DIR", help="report directory"
    )
    b.add_argument(
        "--markdown", type=path, metavar="FILE", help="also write the markdown report here"
    )
    b.add_argument("--quick", action="store_true", help="few repetitions (a smoke test)")
    b.add_argument("--no-trace", action="store_true", help="skip the Chrome traces")
    b.add_argument(
        "--render",
        metavar="JSON",
        help="measure nothing: write the markdown and the plot again from a saved JSON file",
    )
    _layout_arg(b)
    b.add_argument(
        "--compile",
        action="store_true",
        help="also time the configurations with compiled segments (torch.compile: minutes of "
        "compilation per model) and let ramiel tune consider compiled programs",
    )
    b.add_argument(
        "--variants",
        default=None,
        metavar="V,W,...",
        help="compile-option variants to time beside the defaults, each without and with task "
        "parallelism (onednn-graph, nofold, nchw where the compiler has a layout option, "
        "compiled; 'none' for none; default: onednn-graph, nofold and nchw)",
    )
    b.add_argument(
        "--no-busy-core",
        action="store_true",
        help="skip timing the default program under one busy background core",
    )
    b.add_argument(
        "--no-malloc-tuning",
        action="store_true",
        help="keep glibc malloc's defaults (by default freed memory is kept for reuse, so that "
        "no configuration page-faults its tensors in on every inference)",
    )
    add_version(p)
    for command in sub.choices.values():
        add_version(command)
    return p


def _options(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    from ramiel.compiler import CompileOptions  # lazy: numpy,onnx,torch,xdsl

    return CompileOptions(
        clusters=args.clusters,
        backend=args.backend,
        threads_per_worker=args.threads_per_worker,
        clone=not args.no_clone,
        profile=args.profile,
        input_shapes=_shapes(args),
        ort_optimize=args.ort_optimize,
        batch=args.batch,
        cores=args.cores,
        disable=tuple(args.disable or ()),
        transfer_cost=args.transfer_cost,
        compile=_compile_option(args),
        layout=args.layout,
        trainable=args.trainable,
        dynamic_batch=args.dynamic_batch,
        class_name=args.class_name,
    )


def _progress():  # type: ignore[no-untyped-def]

    console = Console(stderr=True, log_path=False)  # a log line ends without driver.py:157
    if not console.is_terminal:  # a file or a pipe: plain lines (rich padded them to 80 columns)
        return console, (lambda msg: print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr))
    return console, (lambda msg: console.log(f"[bold]{msg}[/bold]"))


def cmd_compile(args: argparse.Namespace) -> int:
    from ramiel.compiler import compile_model  # lazy: numpy,onnx,torch,xdsl

    model = _run_model_path(args.model)  # a name too, checked before any work
    console, say = _progress()
    with console.status("compiling"):
        res = compile_model(model, args.output, _options(args), progress=say)
    total = sum(res.timings.values())
    stages = ", ".join(f"{k} {v:.2f}s" for k, v in res.timings.items())
    print(f"compiled {args.model} in {total:.2f} s ({stages})")
    n = res.clusters
    print(f"  {res.parallel_path}  ({n} cluster{'s' * (n != 1)}, class {res.class_name}Parallel)")
    batch = f", any batch size: {', '.join(res.dynamic_batch)}" if res.dynamic_batch else ""
    print(f"  {res.sequential_path}  (class {res.class_name}{batch})")
    print(f"  {res.weights_path}  ({os.path.getsize(res.weights_path):,} bytes)")
    print(f"  {os.path.join(res.out_dir, 'schedule.txt')}")
    r = res.report
    print(
        f"estimated: W/CP {r.parallelism:.2f}, makespan {r.makespan_us / 1e3:.2f} ms, "
        f"speed-up {r.speedup:.2f}x over sequential"
    )
    _print_notes(res, args)
    if args.threads_per_worker is not None:
        print(
            "note: --threads-per-worker is a setting of the run, not of the files: run the "
            f"module with it as python {shell_quote(res.parallel_path)} --threads "
            f"{args.threads_per_worker}"
        )
    return 0


def _median_ms(fn, repeat: int) -> float:  # type: ignore[no-untyped-def]
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    times.sort()
    return times[len(times) // 2]


def _state_spec(text: str) -> str:
    """An argparse type: ``IN=OUT``, two non-empty names (which ones the model has is checked
    once it is compiled, before it runs)."""
    name, sep, out = text.partition("=")
    if not sep or not name or not out:
        raise argparse.ArgumentTypeError(
            f"expected IN=OUT (an input and an output name), not {text!r}"
        )
    return text


def _print_notes(res: Any, args: argparse.Namespace) -> None:
    """The notes of ``res`` (a :class:`~ramiel.compiler.CompileResult`); and a warning (stderr)
    where ``--dynamic-batch`` was asked for and the sequential module keeps a fixed batch size
    (only a note had said so; found by a fresh-user check on BERT)."""
    for note in res.notes:
        print(f"note: {note}")
    if getattr(args, "dynamic_batch", None) is True and not res.dynamic_batch:
        print(
            "warning: --dynamic-batch was asked for, but the sequential module takes only the "
            "compiled batch size (the note above says why)",
            file=sys.stderr,
        )


def _run_model_path(model: str | None) -> str:
    """The ONNX file ``ramiel run`` (``compile``, ``profile``, ``tune``) takes: ``model`` where
    it is a file (or looks like one), else the model of that name (``light_squeezenet``,
    ``inception``, ``hf_bert``: :func:`ramiel.model_names.model_path`); none: the default."""
    if model is None:
        return default_model()
    from ramiel.model_names import model_path  # lazy: onnx

    return model_path(model)


def _inputs_file(
    path: str, model: Any, bound: dict[str, tuple[int, ...]]
) -> tuple[Any, dict[str, tuple[int, ...]]]:
    """The inputs file of ``ramiel run --inputs`` for the ONNX ``model``: its tensors by graph
    input (``ramiel.input_files.read_inputs``, an ``InputsFile``), and ``--input-shape``
    bindings for the inputs whose declared shape has a dimension of no fixed size (the file's
    shape, unless ``bound``, the user's ``--input-shape``, binds the input). A tensor the file
    has that is no graph input is one note on stderr."""
    import numpy as np  # lazy: numpy
    import torch  # lazy: torch
    from onnx.helper import tensor_dtype_to_np_dtype  # lazy: onnx

    from ramiel.input_files import declared_bindings, read_inputs  # lazy: numpy,torch

    init = {t.name for t in model.graph.initializer}
    declared: dict[str, list[int | str | None] | None] = {}
    dtypes = {}
    for vi in model.graph.input:
        if vi.name in init:
            continue
        tt = vi.type.tensor_type
        with contextlib.suppress(KeyError, TypeError):  # no type, or one numpy has not
            dtypes[vi.name] = torch.from_numpy(
                np.empty(0, tensor_dtype_to_np_dtype(tt.elem_type))
            ).dtype
        declared[vi.name] = (
            [
                d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else d.dim_param or None
                for d in tt.shape.dim
            ]
            if tt.HasField("shape")
            else None
        )
    inputs = read_inputs(path, list(declared))
    if inputs.ignored:
        print(
            f"note: inputs file {printable(path)}: tensor(s) "
            f"{', '.join(map(printable, inputs.ignored))} are no graph input (ignored; the "
            f"inputs are {', '.join(map(printable, declared))})",
            file=sys.stderr,
        )
    return inputs, declared_bindings(declared, inputs, bound, dtypes)


def cmd_run(args: argparse.Namespace) -> int:
    import torch  # lazy: torch

    from ramiel.compiler import CompiledModel, compile_model  # lazy: numpy,onnx,torch,xdsl
    from ramiel.engines import ort_error_text, ort_session  # lazy: numpy,onnx,onnxruntime
    from ramiel.importer import load_model  # lazy: numpy,onnx,xdsl
    from ramiel.input_files import expected_outputs  # lazy: numpy,torch
    from ramiel.models import randomize_weights  # lazy: numpy,onnx,torch
    from ramiel.runtime.entry import random_inputs  # lazy: numpy,torch
    from ramiel.weights import numpy_from_torch  # lazy: numpy

    if args.state and args.steps < 2:
        print("error: --state is an option of --steps N (N >= 2)", file=sys.stderr)
        return 2
    model_path = _run_model_path(args.model)
    opts = _options(args)
    if args.steps > 1 and opts.batch > 1:
        raise RamielError("--steps runs a stateful model at batch 1; drop --batch")
    if args.inputs is not None and opts.batch > 1:
        raise RamielError(
            "--inputs gives the inputs of one sample; --batch compiles for several: drop one"
        )
    source = load_model(model_path)
    given = None
    bindings: dict[str, tuple[int, ...]] = {}
    if args.inputs is not None:  # before the compile: the file's shapes bind dynamic dims
        given, bindings = _inputs_file(args.inputs, source, _shapes(args))
        args.input_shape = list(args.input_shape) + list(bindings.items())
        opts = _options(args)
    console, say = _progress()
    tmp = None
    out_dir = args.output
    if out_dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="ramiel-run-")
        out_dir = tmp.name
    if args.random_weights:
        source = randomize_weights(source, seed=0)
    with console.status("compiling"):  # the file where it is one: the code names it
        res = compile_model(
            model_path if not args.random_weights else source, out_dir, opts, progress=say
        )
    _print_notes(res, args)  # before the run: a note may explain an error of it
    model = CompiledModel(res, opts)
    try:
        if args.steps > 1:  # the state's names, before any work runs
            state_pairs(model, args.state)
        expected: dict[str, Any] = {}  # a test data set's output_<i>.pb, by output name
        if given is not None:
            given.check(model.input_specs)
            feeds = {n: given.tensors[n] for n in model.input_specs}
            on_what = f"the inputs of {printable(args.inputs)}"
            expected = expected_outputs(args.inputs, model.output_names)
        else:
            feeds = random_inputs(model.input_specs, 0, model.index_limits)
            on_what = (
                "Ramiel's random inputs (integers from 0 to 9 where they index no table of "
                "known size; --inputs FILE gives your own)"
            )
        ort_model = _ort_model(source, opts)
        noted: list[str] = []

        def session(threads: int, optional: bool = False):  # type: ignore[no-untyped-def]
            """onnxruntime's session; ``None`` where it cannot load the model and
            ``optional`` (the data set's outputs are the check then)."""
            try:  # onnxruntime's own default: its pool threads spin
                sess = ort_session(ort_model, threads=threads, spinning=True)
            except Exception as e:  # onnxruntime's own error types
                where = f" (the generated code is in {out_dir})" if args.output else ""
                reason = ort_error_text(e)
                if optional:
                    print(
                        f"note: onnxruntime cannot load the model ({reason}); Ramiel's result "
                        f"is checked against the outputs of {printable(args.inputs)} only"
                    )
                    return None
                raise RamielError(
                    f"onnxruntime cannot load the model, so 'ramiel run' cannot check Ramiel's "
                    f"result against it{where}: {reason}"
                ) from None
            note = getattr(sess, "ramiel_note", None)  # an opset-6 model it runs converted
            if note is not None and not noted:
                noted.append(note)
                print(f"note: {note}")
            return sess

        # (a stateful model's steps need onnxruntime: the data set holds one step's outputs)
        sess = session(1, optional=bool(expected) and args.steps == 1)
        in_names = _sample_names(list(model.input_specs), opts.batch)
        out_names = _sample_names(model.output_names, opts.batch)
        base_outs = list(out_names[0])
        ort_feeds = [
            {base: numpy_from_torch(feeds[name]) for base, name in sample.items()}
            for sample in in_names
        ]
        try:
            refs = [sess.run(base_outs, f) for f in ort_feeds] if sess is not None else []
        except Exception as e:  # onnxruntime's own error types
            # (random integers that a model turns into indices or divisors, ids + 1 into a table
            # of 6 rows, can fail there: say they are ours; a fresh-user check)
            raise RamielError(
                f"onnxruntime fails to run the model on {on_what}, so 'ramiel run' cannot "
                f"check Ramiel's result against it: {ort_error_text(e)}"
            ) from None
        segmented = model.compiled  # --compile, or the default's onednn-graph segments
        if segmented:
            with console.status("compiling the segments of the parallel module"):
                model.start()
        par = model.run(feeds)
        torch.set_num_threads(1)
        sequential = model.sequential
        with torch.inference_mode():
            if segmented:
                with console.status("compiling the sequential module's segments"):
                    seq_outs = sequential(*feeds.values())
            else:
                seq_outs = sequential(*feeds.values())
        seq_outs = seq_outs if isinstance(seq_outs, tuple) else (seq_outs,)
        seq = dict(zip(model.output_names, seq_outs, strict=True))
        print(f"model: {printable(str(model_path))}")
        if given is not None:
            bound = "".join(
                f"; {printable(n)} compiled for {tuple(shape)}" for n, shape in bindings.items()
            )
            print(f"inputs: {printable(args.inputs)}{bound}")
        batch_note = f", batch {opts.batch} (hyperclustered)" if opts.batch > 1 else ""
        print(
            f"compiled in {sum(res.timings.values()):.2f} s; {res.clusters} "
            f"cluster{'s' * (res.clusters != 1)}, backend "
            f"{opts.backend}{batch_note}; estimated speed-up {res.report.speedup:.2f}x (W/CP "
            f"{res.report.parallelism:.2f})"
        )
        if segmented:
            _print_compile_report(model.compile_report())
        worst = 0.0
        for k, (ref, names) in enumerate(zip(refs, out_names[: len(refs)], strict=True)):
            for base, r in zip(base_outs, ref, strict=True):
                name = names[base]
                e_par, scale = output_error(par[name], r)
                e_seq, _ = output_error(seq[name], r)
                worst = max(worst, e_par, e_seq)
                what = f"{printable(base)} (sample {k})" if opts.batch > 1 else printable(base)
                print(
                    f"output {what}: max error vs onnxruntime, relative to max |output| "
                    f"{scale:.3g}: parallel {e_par:.2e}, sequential {e_seq:.2e}"
                )
        # against the data set's outputs: the error over its tolerance (1e-3, or twice the
        # machine epsilon of a coarser float type: bfloat16's results differ from a reference
        # rounded from float32 by about its epsilon, 2**-7)
        worst_data, loosened = 0.0, False
        for name, want in expected.items():
            e_par, scale = output_error(par[name], want)
            e_seq, _ = output_error(seq[name], want)
            tol = max(1e-3, 2 * torch.finfo(want.dtype).eps) if want.is_floating_point() else 1e-3
            worst_data = max(worst_data, e_par / tol * 1e-3, e_seq / tol * 1e-3)
            within = f" (tolerance {tol:.2g}: {want.dtype})" if tol > 1e-3 else ""
            loosened |= tol > 1e-3
            print(
                f"output {printable(name)}: max error vs the data set's output, relative to max "
                f"|output| {scale:.3g}: parallel {e_par:.2e}, sequential {e_seq:.2e}{within}"
            )
        shown = refs[0] if refs else [numpy_from_torch(t) for t in expected.values()]
        if not args.random_weights and _says_little(source, shown):
            print(
                "note: every output element is equal (constant weights, as in the zoo test "
                "models): the check says little; rerun with --random-weights"
            )
        if args.steps > 1:
            pairs = state_pairs(model, args.state)
            worst = max(
                worst,
                _check_steps(model, sess, pairs, args.steps, feeds if given is not None else None),
            )
        ok = worst <= 1e-3 and worst_data <= 1e-3
        per_sample = (
            f"; each of the {opts.batch} samples against onnxruntime on its own inputs"
            if opts.batch > 1
            else ""
        )
        verdict = "OK" if worst <= 1e-3 else "MISMATCH"
        if not ok and any(
            t.is_floating_point() and not bool(torch.isfinite(t).all()) for t in feeds.values()
        ):
            print(
                "note: the inputs hold NaN or infinity, on which PyTorch and onnxruntime differ "
                "in some ops (PyTorch's MaxPool, ReduceMin/Max and ArgMax propagate NaN, "
                "onnxruntime's skip it; an LSTM state of NaN): an error of inf is a NaN or "
                "infinity on one side only"
            )
        if sess is not None:
            print(f"check against onnxruntime: {verdict} (tolerance 1e-3{per_sample})")
        if expected:
            data_set = printable(os.path.basename(os.path.normpath(args.inputs)))
            compared = ", ".join(map(printable, expected))
            print(
                f"check against the data set's outputs ({data_set}: {compared}): "
                f"{'OK' if worst_data <= 1e-3 else 'MISMATCH'} (tolerance 1e-3"
                f"{', or as noted above' if loosened else ''})"
            )
        n = args.repeat

        def run_ort(s=sess) -> None:  # type: ignore[no-untyped-def]
            for f in ort_feeds:
                s.run(base_outs, f)

        lat_par = _median_ms(lambda: model.run(feeds), n)

        def run_seq() -> None:
            with torch.inference_mode():
                sequential(*feeds.values())

        lat_seq = _median_ms(run_seq, n)
        lat_ort = _median_ms(run_ort, n) if sess is not None else None
        samples = f", {opts.batch} samples" if opts.batch > 1 else ""
        backend, threads = model.runtime_config()
        # the cores the parallel program computes on: onnxruntime gets as many, side by side
        cores = min(usable_cores(), opts.cores or res.clusters * threads)
        if opts.cores is not None:
            how = f"intra-op threads per op, planned for {opts.cores} core{'s' * (opts.cores != 1)}"
        elif backend == "inline":
            how = f"one cluster, run in the caller's thread with {threads} intra-op thread(s)"
        else:
            how = f"{threads} intra-op thread(s) per worker"
        lat_ort_n = None
        if cores > 1 and sess is not None:
            sess_n = session(cores)
            lat_ort_n = _median_ms(lambda: run_ort(sess_n), n)
        clusters = f"{res.clusters} cluster{'s' * (res.clusters != 1)}"
        runs = f", {opts.batch} runs" if opts.batch > 1 else ""
        rows = [
            (f"ramiel parallel ({clusters}, {backend}, {cores} core(s))", lat_par),
            ("ramiel sequential (1 thread)", lat_seq),
        ]
        if lat_ort is not None:
            rows.append((f"onnxruntime (1 thread{runs})", lat_ort))
        if lat_ort_n is not None:
            rows.append((f"onnxruntime ({cores} threads{runs})", lat_ort_n))
        width = max(len(label) for label, _ in rows) + 2
        print(f"median latency over {n} runs ({how}{samples}):")
        for label, ms in rows:
            print(f"  {label + ':':<{width}}{ms:8.2f} ms")
        return 0 if ok else 2
    finally:
        model.close()
        if tmp is not None:
            tmp.cleanup()


def state_pairs(model, specs: Sequence[str]) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    """The (input, output) pairs of a stateful compiled ``model``: ``IN=OUT`` of ``specs``, or,
    without them, the inputs and outputs of equal shape and element type, paired in order.
    Raises :class:`RamielError` for an unknown name, a shape or type mismatch, or no pair."""
    ins = dict(model.input_specs)
    outs = {n: (tuple(shape), dtype) for n, (shape, dtype) in model.output_specs().items()}
    pairs: list[tuple[str, str]] = []
    for spec in specs:
        # the split at an '=' that leaves an input and an output (names may hold '=' too)
        splits = [(spec[:i], spec[i + 1 :]) for i, c in enumerate(spec) if c == "="]
        name, out = next(
            ((a, b) for a, b in splits if a in ins and b in outs), splits[0] if splits else ("", "")
        )
        if name not in ins or out not in outs:
            raise RamielError(
                f"--state {spec!r}: expected IN=OUT with an input of {sorted(ins)} and an "
                f"output of {sorted(outs)}"
            )
        if (tuple(ins[name][0]), ins[name][1]) != outs[out]:
            raise RamielError(
                f"--state {spec!r}: input {name} is {list(ins[name][0])} {ins[name][1]}, "
                f"output {out} is {list(outs[out][0])} {outs[out][1]}"
            )
        pairs.append((name, out))
    if not specs:
        for key in dict.fromkeys((tuple(s), d) for s, d in ins.values()):
            group_in = [n for n, (s, d) in ins.items() if (tuple(s), d) == key]
            group_out = [n for n, v in outs.items() if v == key]
            if len(group_in) == len(group_out):
                pairs += list(zip(group_in, group_out, strict=True))
    if not pairs:
        raise RamielError(
            "--steps: no state to feed back (no input and output of equal shape and type); "
            "name them with --state IN=OUT"
        )
    return pairs


def _check_steps(model, sess, pairs: list[tuple[str, str]], steps: int, given=None) -> float:  # type: ignore[no-untyped-def]
    """Run ``steps`` steps of the stateful ``model`` (state inputs start at zero, the other
    inputs are random per step, each runtime feeds back its own state outputs; with ``given``,
    the tensors of ``--inputs``, the state starts at the file's and the other inputs are the
    file's at every step) in the parallel and the sequential module and in onnxruntime; prints
    each step's largest error against onnxruntime (relative to the largest output) and returns
    the largest of all."""
    import torch  # lazy: torch

    from ramiel.runtime.entry import random_inputs  # lazy: numpy,torch

    print(
        f"stateful run of {steps} steps, state fed back: "
        + ", ".join(f"{printable(o)} -> {printable(i)}" for i, o in pairs)
    )
    state_in = {i for i, _ in pairs}
    zeros = {
        i: torch.zeros(*model.input_specs[i][0], dtype=model.input_specs[i][1]) for i in state_in
    }
    if given is not None:
        zeros = {i: given[i] for i in state_in}
    par_state, seq_state, ort_state = (
        dict(zeros),
        dict(zeros),
        {k: v.numpy() for k, v in zeros.items()},
    )
    worst = 0.0
    for step in range(steps):
        fresh = (
            random_inputs(model.input_specs, 1000 + step, model.index_limits)
            if given is None
            else {n: t for n, t in given.items() if n not in state_in}
        )
        par = model.run({**fresh, **par_state})
        seq_feeds = {**fresh, **seq_state}
        seq_outs = model.sequential(*(seq_feeds[n] for n in model.input_specs))
        seq_outs = seq_outs if isinstance(seq_outs, tuple) else (seq_outs,)
        seq = dict(zip(model.output_names, seq_outs, strict=True))
        ref = dict(
            zip(
                model.output_names,
                sess.run(
                    model.output_names, {**{k: v.numpy() for k, v in fresh.items()}, **ort_state}
                ),
                strict=True,
            )
        )
        e_par = max(output_error(par[n], ref[n])[0] for n in model.output_names)
        e_seq = max(output_error(seq[n], ref[n])[0] for n in model.output_names)
        worst = max(worst, e_par, e_seq)
        print(
            f"  step {step + 1}: max error vs onnxruntime: parallel {e_par:.2e}, sequential {e_seq:.2e}"
        )
        par_state = {i: par[o] for i, o in pairs}
        seq_state = {i: seq[o] for i, o in pairs}
        ort_state = {i: ref[o] for i, o in pairs}
    return worst


_BACKEND_TITLES = {"inductor": "torch.compile", "onednn-graph": "oneDNN Graph (TorchScript)"}


def _print_compile_report(events, most: int = 6) -> None:  # type: ignore[no-untyped-def]
    """Per module, the segments' compile times (torch.compile or oneDNN Graph), the slowest
    ``most`` by name, and the segments not compiled or compiled in a lesser way."""
    from ramiel.runtime.compiled import cache_dir, threads_label  # lazy: numpy,torch

    groups: dict[str, list] = {}  # type: ignore[type-arg]
    for e in events:
        kind = "sequential module" if e.segment.startswith("forward_seg") else "parallel module"
        groups.setdefault(kind, []).append(e)
    for kind, evs in groups.items():
        total = sum(e.seconds for e in evs)
        slow = sorted(evs, key=lambda e: -e.seconds)
        several = len({e.threads for e in evs}) > 1  # compiled once per thread count
        items = ", ".join(
            f"{e.segment}{f' ({threads_label(e.threads)})' if several else ''} {e.seconds:.1f} s"
            for e in slow[:most]
        )
        more = f", {len(evs) - most} more" if len(evs) > most else ""
        title = " / ".join(sorted({_BACKEND_TITLES.get(e.backend, e.backend) for e in evs}))
        count = f"{len({e.segment for e in evs})} segment(s)"
        if several or len(evs) > len({e.segment for e in evs}):
            count += f", {len(evs)} compilations"
        print(f"{title}, {kind}: {count} in {total:.1f} s ({items}{more})")
        for e in evs:
            if e.error:
                print(f"  {e.segment} not compiled, runs eagerly: {e.error}")
            elif e.note:
                print(f"  {e.segment}: {e.note}")
    if any(e.backend == "inductor" for e in events):
        print(f"  inductor cache: {os.environ.get('TORCHINDUCTOR_CACHE_DIR') or cache_dir()}")


def _sample_names(names: Sequence[str], batch: int) -> list[dict[str, str]]:
    """Per sample, the compiled program's input/output names keyed by the ONNX graph's names.

    ``names``: the compiled program's inputs or outputs in order; for ``batch`` B > 1 they are
    sample-major ``<name>__s<k>`` (:func:`ramiel.passes.hypercluster.sample_name`), so the
    first ``len(names) / B`` are sample 0's. Returns B dicts ``{onnx name: program name}``.
    """
    if batch == 1:
        return [{n: n for n in names}]
    from ramiel.passes.hypercluster import sample_name  # lazy: numpy,onnx,xdsl

    per = len(names) // batch
    suffix = sample_name("", 0)
    bases = [n[: -len(suffix)] for n in names[:per]]
    out = [{b: sample_name(b, k) for b in bases} for k in range(batch)]
    expected = [n for sample in out for n in sample.values()]
    assert expected == list(names), f"not a {batch}-sample program: {list(names)}"
    return out


def _says_little(model, refs) -> bool:  # type: ignore[no-untyped-def]
    """Whether every element of every output ``refs`` (onnxruntime's) is equal, in outputs of
    more than one element, for an ONNX ``model`` with weights (initializers of more than one
    element, or Constant nodes) that ``--random-weights`` would change: the zoo models'
    constant weights. (Not for a model without weights, nor a one-element output: a fresh-user
    check saw the note there.)"""
    import numpy as np  # lazy: numpy

    g = model.graph
    weights = any(int(np.prod(t.dims)) > 1 for t in g.initializer) or any(
        n.op_type == "Constant" for n in g.node
    )
    sized = any(np.asarray(r).size > 1 for r in refs)
    return weights and sized and all(_all_equal(r) for r in refs)


def _all_equal(ref) -> bool:  # type: ignore[no-untyped-def]
    """Every element of the array ``ref`` is the same (any dtype, bool included)."""
    import numpy as np  # lazy: numpy

    r = np.asarray(ref).reshape(-1)
    return bool(r.size == 0 or np.all(r == r[0]))


def _ort_model(model, opts) -> bytes:  # type: ignore[no-untyped-def]
    """The model as onnxruntime should see it: input shapes bound like Ramiel's."""
    from ramiel.importer import prepare_model  # lazy: numpy,onnx,xdsl

    if opts.input_shapes:
        model = prepare_model(model, opts.input_shapes)
    return model.SerializeToString()


def cmd_profile(args: argparse.Namespace) -> int:
    from ramiel.profiler import ProfileNoise, profile_model  # lazy: numpy,onnx,torch,xdsl

    args.model = _run_model_path(args.model)  # a name too
    input_file(args.model, "ONNX model")
    if args.compare_ort:
        if args.json:
            output_file(args.json, "--json file")
        return _compare_ort(args, _shapes(args), args.threads or [1])
    if args.output is None:
        print("error: ramiel profile needs -o FILE (or --compare-ort)", file=sys.stderr)
        return 2
    for opt, given in (("--json", args.json), ("--nodes", args.nodes)):
        if given:
            print(f"error: {opt} is an option of --compare-ort", file=sys.stderr)
            return 2
    output_file(args.output, "profile database")
    from ramiel.compiler import CompileOptions  # lazy: numpy,onnx,torch,xdsl

    rewrites = CompileOptions(disable=tuple(args.disable or ())).rewrites()
    noise = ProfileNoise()
    with progress_bar("profiling ops") as update:
        n = profile_model(
            args.model,
            args.output,
            repeat=args.repeat or 10,
            input_shapes=_shapes(args),
            threads=args.threads,
            progress=update,
            noise=noise,
            layout=args.layout,
            rewrites=rewrites,
        )
    print(f"profiled {n} ops of {args.model} into {args.output}")
    warning = noise.warning()
    if warning:
        print(f"warning: {warning}", file=sys.stderr)
    return 0


def _compare_ort(args: argparse.Namespace, shapes, threads: list[int]) -> int:  # type: ignore[no-untyped-def]

    console, say = _progress()
    tables = []
    with console.status("comparing with onnxruntime"):
        for n in threads:
            cmp = compare_with_ort(
                args.model,
                threads=n,
                layout=args.layout,
                repeat=args.repeat or 20,
                input_shapes=shapes or None,
                say=say,
                disable=tuple(args.disable or ()),
            )
            tables.append(cmp)
            print(cmp.to_text(nodes=args.nodes or 0))
            print()
    if args.output:
        print("note: -o is not written with --compare-ort (use --json FILE)", file=sys.stderr)
    if args.json:
        with open(args.json, "w") as f:
            json.dump([json.loads(t.to_json()) for t in tables], f, indent=1)
    return 0


def cmd_tune(args: argparse.Namespace) -> int:
    from ramiel.compiler import CompileOptions  # lazy: numpy,onnx,torch,xdsl
    from ramiel.tune import tune  # lazy: numpy,onnx,torch,xdsl

    if args.cores is not None and args.cores > usable_cores():
        print(
            f"warning: --cores {args.cores} is more than the {usable_cores()} core(s) this "
            "process may use: the candidates will oversubscribe them",
            file=sys.stderr,
        )
    base = CompileOptions(input_shapes=_shapes(args), layout=args.layout)
    model = _run_model_path(args.model)  # a name too, checked before any work
    console, say = _progress()
    with progress_bar("tuning", console) as update:
        res = tune(
            model,
            args.output,
            args.cores,
            args.profile,
            base,
            args.budget,
            say=say,
            compile=args.compile,
            progress=update,
            onednn_graph=not args.no_onednn_graph,
        )
    print(f"tuned {args.model} for {res.cores} core(s): {res.choice}")
    best = min(c.median_ms for c in res.candidates if c.median_ms is not None)
    width = max(len(c.key) for c in res.candidates)
    for c in res.candidates:
        if c.median_ms is None:
            print(f"  {c.key:{width}s} failed: {c.error}")
            continue
        mark = "  <- chosen" if c.key == res.choice else ""
        compiled = f"  compiled in {c.compile_s:.1f} s" if c.compile_s is not None else ""
        print(
            f"  {c.key:{width}s} {c.clusters} cluster(s)  median {c.median_ms:8.2f} ms  "
            f"min {c.min_ms:8.2f} ms  n={c.n:3d}  {c.median_ms / best:5.2f}x{compiled}{mark}"
        )
    print(f"  program: {res.result.parallel_path} (settings in {res.result.out_dir}/tune.json)")
    print(f"  run it:  {res.run_command()}")
    return 0


def cmd_calibrate(args: argparse.Namespace) -> int:
    from ramiel.runtime.calibrate import DEFAULT_SIZES, calibrate  # lazy: numpy,torch

    sizes = list(args.sizes) if args.sizes else list(DEFAULT_SIZES)
    if len(set(sizes)) < 2:
        print(
            f"error: argument --sizes: at least two different sizes (a line through the times), "
            f"got {','.join(map(str, sizes))}",
            file=sys.stderr,
        )
        return 2
    if args.repeats < 1:
        print(f"error: --repeats must be at least 1, got {args.repeats}", file=sys.stderr)
        return 2
    command = shlex.join(["ramiel", *sys.argv[1:]]) if sys.argv[1:] else None
    if not 0.0 <= args.quantile <= 1.0:
        print(f"error: --quantile must be between 0 and 1, got {args.quantile:g}", file=sys.stderr)
        return 2
    res = calibrate(args.backend, sizes, args.repeats, args.output, command, args.quantile)
    if res is None:  # a torchrun rank other than 0
        return 0
    cost, rec = res
    hosts = " <-> ".join(rec["hosts"]) if len(rec["hosts"]) > 1 else rec["hosts"][0]
    print(f"transfer cost of backend {args.backend} ({hosts}, load {rec['load']}):")
    q = f"quantile {args.quantile:g}" if args.quantile != 0.5 else "median"
    for n, us in rec["round_trips_us"].items():
        med = rec["median_round_trips_us"][n]
        extra = f"   (median {med:.1f} us)" if args.quantile != 0.5 else ""
        print(f"  round trip {int(n):>10d} B  {us:10.1f} us {q}{extra}")
    gbps = f"{1e-3 / cost.us_per_byte:.3g} GB/s" if cost.us_per_byte > 0 else "no per-byte cost"
    print(
        f"  latency {cost.latency_us:.1f} us per message, {cost.us_per_byte * (1 << 20):.1f} us "
        f"per MiB ({gbps})"
    )
    if args.output:
        print(
            f"  written to {args.output} (use it with --transfer-cost {shell_quote(args.output)})"
        )
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from ramiel.bench import run_bench  # lazy: numpy
    from ramiel.bench.configs import check_variants  # lazy: numpy

    for flag, where in (("--json", args.json), ("--markdown", args.markdown)):
        try:  # before minutes of measuring, not after
            if where:
                output_file(where, "file", make_dirs=True)
        except RamielError as e:
            print(f"error: argument {flag}: {e}", file=sys.stderr)
            return 2
    if args.out and os.path.exists(args.out) and not os.path.isdir(args.out):
        print(f"error: argument --out: {args.out} is a file, not a directory", file=sys.stderr)
        return 2
    names = _variant_list(args.variants) or []
    if "none" in names:  # with others (alone it is the empty list)
        print(
            "error: argument --variants: 'none' (no variant) goes alone, not with other variants",
            file=sys.stderr,
        )
        return 2
    try:
        check_variants(names)
    except ValueError as e:
        print(f"error: argument --variants: {e}, none", file=sys.stderr)
        return 2
    console, say = _progress()
    argv = sys.argv[1:] if sys.argv and sys.argv[0].endswith("ramiel") else None
    command = shlex.join(["ramiel", *argv]) if argv else None
    try:
        with progress_bar("benchmarking (models)", console) as update:
            results, _env, md = run_bench(
                args.models,
                workers=args.workers,
                out_dir=args.out,
                json_path=args.json,
                quick=args.quick,
                markdown_path=args.markdown,
                trace=not args.no_trace,
                command=command,
                say=say,
                malloc_tuning=not args.no_malloc_tuning,
                render_from=args.render,
                compile=args.compile,
                variant_names=_variant_list(args.variants),
                busy_core=not args.no_busy_core,
                layout=args.layout,
                progress=update,
            )
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(md)
    written = "report and plot" if args.render else "report, JSON, plot"
    traced = any(getattr(r, "trace_path", None) for r in results) and not args.render
    print(f"{written}{' and traces' if traced else ''} in {args.out}", file=sys.stderr)
    return 1 if any(r.error for r in results) else 0


def _shapes(args: argparse.Namespace) -> dict[str, tuple[int, ...]]:
    """The ``--input-shape`` bindings (parsed by argparse); a name given twice is an error."""
    return input_shape_bindings(args.input_shape)


def _variant_list(text: str | None) -> list[str] | None:
    """``--variants`` as a list (``None``: the default; ``none``: no variant)."""
    if text is None:
        return None
    items = [v.strip() for v in text.split(",") if v.strip()]
    return [] if items == ["none"] else items


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``ramiel``; returns the exit status (errors: :mod:`ramiel.tools.common`)."""
    return run_command(_main, argv)


def _main(argv: Sequence[str] | None) -> int:
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    # the command's own parser reports what belongs to the command, so the hint names its help
    # ('see ramiel compile --help', not 'ramiel --help')
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    command_parser = commands.choices[args.cmd]
    if extra:
        # a flag before the command is the main parser's ('ramiel --bogus compile ...')
        given = list(argv if argv is not None else sys.argv[1:])
        before = given.index(args.cmd) > given.index(extra[0]) if extra[0] in given else False
        (parser if before else command_parser).error(f"unrecognized arguments: {' '.join(extra)}")
    if getattr(args, "compile_backend", None) and getattr(args, "compile", None) is False:
        command_parser.error("argument --compile-backend: not allowed with --no-compile (eager)")
    command = {
        "compile": cmd_compile,
        "run": cmd_run,
        "profile": cmd_profile,
        "bench": cmd_bench,
        "tune": cmd_tune,
        "calibrate": cmd_calibrate,
    }[args.cmd]
    return command(args)


if __name__ == "__main__":
    sys.exit(main())
