"""``__main__`` of generated modules: ``python model.py`` runs one inference on random inputs.

``python model.py [--backend threads|processes|distributed] [--threads N] [--seed S]`` loads the
module's class with the weights of ``weights.safetensors`` beside the file
(``from_safetensors``), makes deterministic random inputs of the declared shapes and dtypes, runs
one inference and prints each output's shape, dtype and a few values. ``--inputs FILE`` reads
the inputs from a ``.safetensors`` file instead (tensors named after the graph inputs),
``--outputs FILE`` writes the outputs to one. ``--threads`` (intra-op threads per worker)
defaults to the program's :meth:`~ramiel.runtime.Program.planned_threads`: the cores it was
compiled for that merging left without a cluster are shared among the workers.

``--serve`` answers many inferences with the same workers (see :func:`serve`): one request per
line on stdin, ``IN.safetensors [OUT.safetensors]``, one answer per line on stdout.

Under ``torchrun`` (``RANK``, ``WORLD_SIZE``, ``MASTER_ADDR`` and ``MASTER_PORT`` set) a module
compiled for the distributed backend joins the process group
(:func:`ramiel.runtime.distributed.join_group`): rank 0 reads the inputs, prints (or writes) the
outputs and serves requests; the other ranks run their clusters and print nothing.

A module with compiled segments (``ramiel compile --compile``) is compiled first (a warm-up
inference; inductor's on-disk cache makes a second start faster) and says how long that took.
"""

from __future__ import annotations

import argparse
import functools
import math
import os
import shlex
import sys
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, TextIO

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from ramiel.envflags import check_switches
from ramiel.errors import RamielError, RuntimeFailure
from ramiel.files import (
    is_safetensors,
    make_readable,
    one_line,
    output_file,
    printable,
    same_file,
    stdout_reader_gone,
)
from ramiel.interrupts import keyboard_interrupts
from ramiel.omp import MAX_COUNT
from ramiel.runtime import Weights, start
from ramiel.runtime.compiled import segments_in, summary, take_events
from ramiel.runtime.distributed import in_torchrun, join_group
from ramiel.runtime.program import InputMismatch, Program, describe
from ramiel.runtime.runner import Runner


def random_inputs(
    specs: Mapping[str, tuple[Sequence[int], torch.dtype]],
    seed: int = 0,
    limits: Mapping[str, int] | None = None,
) -> dict[str, torch.Tensor]:
    """Deterministic inputs: standard normal floats, integers in [0, 10) (in [0, n) for an input
    that ``limits`` says indexes a table of n rows: the generated classes' ``INDEX_LIMITS``,
    BERT's ``token_type_ids`` index 2), random booleans."""
    gen = torch.Generator().manual_seed(seed)
    out: dict[str, torch.Tensor] = {}
    for name, (shape, dtype) in specs.items():
        if dtype.is_floating_point:
            out[name] = torch.randn(tuple(shape), generator=gen).to(dtype)
        elif dtype == torch.bool:
            out[name] = torch.randint(0, 2, tuple(shape), generator=gen).bool()
        else:
            high = max(1, min(10, int((limits or {}).get(name, 10))))
            out[name] = torch.randint(0, high, tuple(shape), generator=gen).to(dtype)
    return out


def _describe(name: str, t: torch.Tensor) -> str:
    flat = t.reshape(-1)
    head = ", ".join(f"{v:.6g}" for v in flat[:5].tolist())
    return f"{printable(name)}: shape={tuple(t.shape)} dtype={t.dtype} first=[{head}{', ...' if flat.numel() > 5 else ''}]"


def _args(
    argv: Sequence[str] | None, parallel: bool, backend: str | None = None
) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="Run one inference of this Ramiel-generated module.")
    if parallel:
        default = "distributed" if in_torchrun() else (backend or "threads")
        p.add_argument(
            "--backend", default=default, choices=["threads", "processes", "distributed"]
        )
        p.add_argument(
            "--threads",
            type=int,
            help="intra-op threads per worker (default: the cores the program was compiled "
            "for, at most those usable here, shared among its clusters; 1 under torchrun)",
        )
        p.add_argument(
            "--timeout", type=float, default=60.0, help="limit of one inference, seconds"
        )
        p.add_argument("--ranks", type=int, help="distributed, without torchrun: ranks to start")
        p.add_argument("--placement", help="distributed: placement file (clusters to ranks)")
        p.add_argument(
            "--device",
            default="cpu",
            choices=["cpu", "cuda"],
            help="distributed: cpu or cuda (one per rank)",
        )
    else:
        p.add_argument("--threads", type=int, default=1, help="intra-op threads")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    p.add_argument("--inputs", metavar="FILE", help="read the inputs from a .safetensors file")
    p.add_argument("--outputs", metavar="FILE", help="write the outputs to a .safetensors file")
    p.add_argument(
        "--serve",
        action="store_true",
        help="answer requests from stdin: one 'IN.safetensors [OUT.safetensors]' per line",
    )
    args = p.parse_args(argv)
    if args.threads is not None and not 1 <= args.threads <= MAX_COUNT:
        p.error(f"argument --threads: must be from 1 to {MAX_COUNT}, got {args.threads}")
    if not -(2**63) <= args.seed < 2**64:  # what torch.Generator.manual_seed takes
        p.error(f"argument --seed: must be from -2**63 to 2**64 - 1, got {args.seed}")
    if args.inputs and args.outputs and same_file(args.inputs, args.outputs):
        p.error(
            f"argument --outputs: {args.outputs} is the inputs file; writing the outputs there "
            "would replace the inputs"
        )
    if args.serve and (args.inputs is not None or args.outputs is not None):
        flag = "--inputs" if args.inputs is not None else "--outputs"
        p.error(f"argument {flag}: not with --serve (each request names its own files)")
    if parallel and not (math.isfinite(args.timeout) and args.timeout > 0):
        p.error(f"argument --timeout: must be a positive number of seconds, got {args.timeout:g}")
    if parallel and args.backend != "distributed":
        for flag, given in (
            ("--device", args.device != "cpu"),
            ("--ranks", args.ranks is not None),
            ("--placement", args.placement is not None),
        ):
            if given:
                p.error(f"argument {flag}: only with --backend distributed, not {args.backend}")
    if parallel and args.ranks is not None and args.ranks < 1:
        p.error(f"argument --ranks: must be at least 1, got {args.ranks}")
    if parallel and args.device == "cuda" and torch.cuda.device_count() == 0:
        p.error(
            "argument --device: cuda was asked for, but this process sees no CUDA device "
            "(torch.cuda.device_count() == 0; check CUDA_VISIBLE_DEVICES and the torch build)"
        )
    return args


def load_inputs(
    path: str, specs: Mapping[str, tuple[Sequence[int], torch.dtype]]
) -> dict[str, torch.Tensor]:
    """The graph inputs from a ``.safetensors`` file (one tensor per input name).

    A tensor that is no graph input is ignored, with a note on stderr.

    Raises:
        RamielError: the file cannot be read, or lacks an input.
    """
    shown = printable(path)  # names and paths on one line (a --serve answer is one line)
    if os.path.isdir(path):
        raise RamielError(f"inputs file {shown}: is a directory, not a file")
    try:
        tensors = load_file(path, device="cpu")
    except FileNotFoundError:
        raise RamielError(f"inputs file {shown}: no such file") from None
    except Exception as e:  # noqa: BLE001 - safetensors raises several types for a bad file
        raise RamielError(
            f"inputs file {shown}: not a safetensors file ({e}); this module's --inputs takes "
            "a .safetensors file of tensors named after the inputs ('ramiel run --inputs' also "
            "takes .npz, ONNX TensorProto files and test data sets)"
        ) from None
    missing = [n for n in specs if n not in tensors]
    if missing:
        have = ", ".join(map(printable, sorted(tensors))) or "none"
        raise RamielError(
            f"inputs file {shown}: no tensor for input(s) {', '.join(map(printable, missing))} (it has {have})"
        )
    extra = sorted(n for n in tensors if n not in specs)
    if extra:  # a misspelt input would otherwise pass unnoticed next to a right one
        print(
            f"note: inputs file {shown}: tensor(s) {', '.join(map(printable, extra))} are no graph input "
            f"(ignored; the inputs are {', '.join(map(printable, specs))})",
            file=sys.stderr,
        )
    return {n: tensors[n] for n in specs}


def save_outputs(path: str, outputs: Mapping[str, torch.Tensor]) -> None:
    """Write the outputs to a ``.safetensors`` file (``RamielError`` when it cannot), readable
    as the umask allows (safetensors alone writes mode 0600)."""
    try:
        save_file({k: v.detach().contiguous() for k, v in outputs.items()}, path)
        if os.path.isfile(path):
            make_readable(path)
    except OSError as e:
        raise RamielError(f"outputs file {path}: cannot write it: {e.strerror or e}") from None
    except SafetensorError as e:  # safetensors reports an I/O error as its own type
        raise RamielError(f"outputs file {path}: cannot write it: {e}") from None


def program_files(module_file: str, weights_file: str) -> dict[str, str]:
    """The files an outputs file must not replace: what -> path of the generated module run
    (``module_file``), its weights file and the other files ``ramiel compile`` wrote beside it
    (the other module, the IR). Overwriting one destroyed the program (a fresh-user check wrote
    ``--outputs weights.safetensors``)."""
    here = os.path.dirname(os.path.abspath(module_file))
    files = {"source": module_file, "weights file": weights_file}
    for name in ("model.py", "model_seq.py", "model.mlir"):
        files.setdefault(name, os.path.join(here, name))
    return files


def check_outputs_file(path: str, protected: Mapping[str, str]) -> None:
    """Raise :class:`~ramiel.errors.RamielError` when ``path`` is one of the program's own
    files (:func:`program_files`), or an existing file that is not a safetensors file (an
    earlier run's outputs may be replaced; a report, a source or a ``tune.json`` may not)."""
    for what, other in protected.items():
        if os.path.exists(other) and same_file(path, other):
            raise RamielError(
                f"outputs file {path}: is this program's {what}; writing the outputs there "
                "would destroy it (choose another file)"
            )
    if os.path.isfile(path) and not is_safetensors(path):
        raise RamielError(
            f"outputs file {path}: exists and is not a safetensors file; writing the outputs "
            "there would replace it (choose another file, or remove it)"
        )


def serve(
    infer: Callable[[dict[str, torch.Tensor]], Mapping[str, torch.Tensor]],
    specs: Mapping[str, tuple[Sequence[int], torch.dtype]],
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    protected: Mapping[str, str] | None = None,
    restarts: bool = False,
) -> int:
    """Answer inference requests, one per line, until ``quit`` or the end of ``stdin``.

    A request is ``IN.safetensors [OUT.safetensors]`` (shell quoting; the output defaults to
    ``IN.out.safetensors``): the inputs are read from ``IN``, the outputs written to ``OUT``, and
    the answer is one line, ``ok OUT <ms> ms`` or ``error: <message>``. A bad request (a missing
    file, wrong shapes, an output file that is one of ``protected``, the program's own files:
    :func:`program_files`) is answered with an error and the loop goes on. A failure of the
    workers (:class:`~ramiel.runtime.RuntimeFailure`: a worker raised on the request's data, died
    or timed out) is answered the same way where ``restarts`` is true, i.e. where ``infer``
    starts new workers on its next call (:meth:`ParallelModel.run
    <ramiel.runtime.ParallelModel.run>`); otherwise it ends the loop. ``python model.py
    --serve`` passes the module's ``run`` through :func:`_reviving`: a worker that died while
    the loop waited for a request costs no request.

    Returns:
        The exit status: 0 after ``quit``/end of input, 1 after a failure of the workers that
        ends the loop.
    """

    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    if stdin is None:  # started with stdin closed (<&-): no request will come
        return 0
    for line in stdin:
        try:
            words = shlex.split(line)
        except ValueError as e:
            print(f"error: bad request {line.strip()!r}: {e}", file=stdout, flush=True)
            continue
        if not words:
            continue
        if words == ["quit"]:
            return 0
        if len(words) > 2:
            print(
                f"error: a request is 'IN.safetensors [OUT.safetensors]', got {len(words)} words",
                file=stdout,
                flush=True,
            )
            continue
        src = words[0]
        dst = words[1] if len(words) == 2 else os.path.splitext(src)[0] + ".out.safetensors"
        try:
            output_file(dst, "outputs file")
            if os.path.exists(src) and same_file(src, dst):
                raise RamielError(
                    f"outputs file {dst}: is the request's inputs file; writing the outputs "
                    "there would replace the inputs"
                )
            check_outputs_file(dst, protected or {})
            feeds = load_inputs(src, specs)
            t0 = time.perf_counter()
            outs = infer(feeds)
            ms = (time.perf_counter() - t0) * 1e3
            save_outputs(dst, outs)
        except InputMismatch as e:
            print(f"error: {one_line(str(e))}", file=stdout, flush=True)
            continue
        except RamielError as e:
            print(f"error: {one_line(str(e))}", file=stdout, flush=True)
            if _is_runtime_failure(e) and not restarts:
                return 1
            continue
        print(f"ok {shlex.quote(dst)} {ms:.3f} ms", file=stdout, flush=True)
    return 0


def _reviving(model: Any) -> Callable[[dict[str, torch.Tensor]], Mapping[str, torch.Tensor]]:
    """``model.run`` for ``--serve``, where a worker that died while the service waited for a
    request (killed, e.g. by the kernel's out-of-memory killer) costs no request: the request
    runs on new workers, and one line on stderr says what happened (the request had been
    answered with the death, and only the next one ran; a fresh-user check). A worker that
    dies during a request is still that request's error (:func:`serve`)."""

    def infer(feeds: dict[str, torch.Tensor]) -> Mapping[str, torch.Tensor]:
        runner = model.runner
        if runner is not None and not runner.closed and runner.dead_workers():
            try:  # raises the death before it sends anything, and closes those workers
                return model.run(feeds)
            except RuntimeFailure as e:
                print(
                    f"note: {one_line(str(e))}, while the service waited for a request; new "
                    "workers run this one",
                    file=sys.stderr,
                    flush=True,
                )
        return model.run(feeds)

    return infer


def check_sequential_inputs(
    feeds: Mapping[str, torch.Tensor],
    specs: Mapping[str, tuple[Sequence[int], torch.dtype]],
    dynamic: Collection[str] = (),
) -> None:
    """Check the inputs of a sequential module against its ``INPUTS`` (shape and dtype; dimension
    0 of the inputs in ``dynamic``, its ``DYNAMIC_BATCH``, may have any size), as the parallel
    program's runtime checks its channels.

    Raises:
        InputMismatch: a tensor of another shape or dtype (no implicit cast or broadcast).
    """
    for name, (shape, dtype) in specs.items():
        t = feeds[name]
        want, got = tuple(shape), tuple(t.shape)
        same = got == want or (
            name in dynamic and len(got) == len(want) and got[1:] == want[1:] and len(got) > 0
        )
        if not same or t.dtype != dtype:
            batch = " (any size in dimension 0)" if name in dynamic else ""
            raise InputMismatch(
                f"input '{name}': expected {describe(want, dtype)}{batch}, "
                f"got {describe(got, t.dtype)}"
            )


def _is_runtime_failure(e: BaseException) -> bool:
    return isinstance(e, RuntimeFailure)


def _quiet_when_stdout_closes(fn: Callable[..., None]) -> Callable[..., None]:
    """``python model.py | head -1``: when the reader of stdout goes away, end with status 141
    and nothing more printed (no ``BrokenPipeError`` traceback); the workers are closed by then
    (the outputs are printed after the runner's ``with``). Stdout closed (``>&-``): nothing is
    printed; stdout full (``> /dev/full``): one ``error:`` line on stderr, status 1. Ctrl-C
    (also while ``--serve`` waits for a request): ``error: interrupted``, status 130, as the
    ``ramiel`` tools; the workers are stopped by then (the runner's ``with``). Ctrl-C while the
    script loads torch, or after this returns, ends the process at once with the same line and
    status (:mod:`ramiel.interrupts`)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        with keyboard_interrupts():  # before and after: Ctrl-C exits at once (ramiel.interrupts)
            try:
                fn(*args, **kwargs)
                if sys.stdout is not None:  # None: started with stdout closed (>&-)
                    sys.stdout.flush()
            except KeyboardInterrupt:
                print("error: interrupted", file=sys.stderr)
                sys.exit(130)
            except BrokenPipeError:
                sys.exit(stdout_reader_gone())
            except OSError as e:  # writing the report failed (> /dev/full): files are RamielErrors
                print(f"error: cannot write to stdout: {e.strerror or e}", file=sys.stderr)
                sys.exit(1)

    return wrapper


@_quiet_when_stdout_closes
def main(
    cls: Any, module_file: str, argv: Sequence[str] | None = None, backend: str | None = None
) -> None:
    """Run a parallel module class (``<Name>Parallel`` of ``model.py``; or a bare
    :class:`~ramiel.runtime.Program`, whose weights are all the tensors of the file) once and
    print its outputs, or serve.

    ``backend``: the default of ``--backend`` (default: the class's ``BACKEND``, the backend it
    was compiled for; ``threads`` for a bare program); under ``torchrun`` the default is
    ``distributed``.
    """

    bare = isinstance(cls, Program)
    if backend is None and not bare:  # the backend the class was compiled for
        backend = getattr(cls, "BACKEND", None)
    args = _args(argv, parallel=True, backend=backend)
    program = cls if bare else cls.PROGRAM
    name = "weights.safetensors" if bare else cls.WEIGHTS_FILE
    weights_file = os.path.join(os.path.dirname(os.path.abspath(module_file)), name)
    specs = {
        name: (program.channels[chs[0]].shape, program.channels[chs[0]].dtype)
        for name, chs in program.inputs.items()
        if chs
    }
    rank = int(os.environ.get("RANK", "0")) if args.backend == "distributed" else 0
    check_switches(warn=rank == 0 or not in_torchrun())  # an odd RAMIEL_* value: one warning
    protected = program_files(module_file, weights_file)
    try:
        if args.outputs is not None:
            output_file(args.outputs, "outputs file")  # before the work, not after it
            check_outputs_file(args.outputs, protected)
        inputs = (
            load_inputs(args.inputs, specs)
            if args.inputs
            else random_inputs(specs, args.seed, getattr(cls, "INDEX_LIMITS", None))
        )
        runner: Runner
        model = None  # the module, where one runs the workers (it restarts them)
        if args.backend == "distributed" and in_torchrun():
            driver = join_group(
                program,
                module_file=module_file,
                weights_file=weights_file,
                timeout_s=args.timeout,
                threads_per_worker=args.threads or 1,
                placement=args.placement,
                device=args.device,
            )
            if driver is None:  # a follower rank: served until rank 0 closed the group
                return
            runner = driver
        else:
            options = {}
            if args.backend == "distributed":
                options = {"ranks": args.ranks, "placement": args.placement, "device": args.device}
            if bare:
                try:
                    weights = Weights.from_safetensors(weights_file)
                except (OSError, SafetensorError) as e:  # a missing or damaged weights file
                    raise RamielError(f"{weights_file}: {e}") from None
                runner = start(
                    program,
                    weights,
                    backend=args.backend,
                    threads_per_worker=args.threads,
                    timeout_s=args.timeout,
                    **options,
                )
            else:
                try:
                    model = cls.from_safetensors(
                        weights_file,
                        backend=args.backend,
                        threads_per_worker=args.threads,
                        timeout_s=args.timeout,
                        **options,
                    )
                except (OSError, RuntimeError, SafetensorError) as e:  # missing, mismatched,
                    raise RamielError(f"{weights_file}: {e}") from None  # damaged weights file
                runner = model.start()
        with runner:
            events = runner.compile_report()
            if args.serve:
                # the module starts new workers after a failure, so a request whose data makes
                # a worker raise does not end the service (it had; a fresh-user check)
                try:
                    status = serve(
                        _reviving(model) if model is not None else runner.run,
                        specs,
                        protected=protected,
                        restarts=model is not None,
                    )
                finally:
                    if model is not None:
                        model.close()
                if status:
                    sys.exit(status)
                return
            t0 = time.perf_counter()
            outs = runner.run(inputs)
            ms = (time.perf_counter() - t0) * 1e3
        if args.outputs:
            save_outputs(args.outputs, outs)
    except RamielError as e:
        where = f"rank {rank}: " if rank else ""
        print(f"error: {where}{one_line(str(e))}", file=sys.stderr)
        if in_torchrun():
            # a send or receive the error cut short may still hold one of gloo's C++ threads:
            # the interpreter's shutdown then aborted (SIGABRT, 'terminate called without an
            # active exception'; found by a fresh-user check with --timeout 0.001)
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(1)
        sys.exit(1)
    if events:
        print(f"compiled: {summary(events)}")
    how = args.backend
    if args.backend == "distributed":
        how += f" ({runner.placement.world_size} ranks)"  # type: ignore[attr-defined]
    n = len(program.clusters)
    print(
        f"{n} cluster{'' if n == 1 else 's'}, backend {how}: one inference in {ms:.2f} ms "
        f"({runner.threads_per_worker} intra-op thread(s) per worker)"
    )
    for name, t in outs.items():
        print(_describe(name, t))


@_quiet_when_stdout_closes
def main_sequential(cls: Any, module_file: str, argv: Sequence[str] | None = None) -> None:
    """Run a sequential module class (``<Name>`` of ``model_seq.py``) once on random inputs and
    print its outputs, or serve."""
    args = _args(argv, parallel=False)
    check_switches()  # an odd RAMIEL_* value warns here, whichever the module reads
    torch.set_num_threads(args.threads)
    inputs, outputs = cls.INPUTS, cls.OUTPUTS
    path = os.path.join(os.path.dirname(os.path.abspath(module_file)), cls.WEIGHTS_FILE)

    try:
        model = cls.from_safetensors(path)
    except (OSError, RuntimeError, RamielError, SafetensorError) as e:  # missing, mismatched,
        print(f"error: {path}: {one_line(str(e))}", file=sys.stderr)  # damaged weights file
        sys.exit(1)
    dynamic = set(getattr(cls, "DYNAMIC_BATCH", ()))

    def infer(feeds: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        check_sequential_inputs(feeds, inputs, dynamic)
        with torch.inference_mode():
            try:
                result = model(*(feeds[n] for n in inputs))
            except Exception as e:  # noqa: BLE001 - the module's own error (an index out of a
                # table, ...), one line as from model.py; RAMIEL_DEBUG=1 shows the traceback
                if os.environ.get("RAMIEL_DEBUG"):
                    raise
                raise RamielError(f"forward raised {type(e).__name__}: {one_line(str(e))}") from e
        results = result if isinstance(result, tuple) else (result,)
        return dict(zip(outputs, results, strict=False))  # type: ignore[arg-type]

    protected = program_files(module_file, path)
    try:
        if args.serve:
            sys.exit(serve(infer, inputs, protected=protected))
        if args.outputs is not None:
            output_file(args.outputs, "outputs file")  # before the work, not after it
            check_outputs_file(args.outputs, protected)
        feeds = (
            load_inputs(args.inputs, inputs)
            if args.inputs
            else random_inputs(inputs, args.seed, getattr(cls, "INDEX_LIMITS", None))
        )

        segments = segments_in(vars(sys.modules[cls.__module__])).values()
        if segments:  # compile before the timed inference
            infer({n: torch.zeros_like(t) for n, t in feeds.items()})
            print(f"compiled: {summary(take_events(segments))}")
        t0 = time.perf_counter()
        outs = infer(feeds)
        ms = (time.perf_counter() - t0) * 1e3
        if args.outputs:
            save_outputs(args.outputs, outs)
    except RamielError as e:
        print(f"error: {one_line(str(e))}", file=sys.stderr)
        sys.exit(1)
    print(f"sequential, {args.threads} thread(s): one inference in {ms:.2f} ms")
    for name, t in outs.items():
        print(_describe(name, t))
