"""Case server of the fuzz suite (``tests/test_fuzz.py``): runs each case in a process of its own,
bounded in time and memory, and says how it ended.

Started once per test session as ``python tests/fuzz_harness.py``; it imports Ramiel, torch,
onnx and onnxruntime once (never running torch compute itself, so forking it is safe: design.md
§8, fork after OpenMP), then reads one JSON request per line on stdin and answers one JSON line
on stdout. A request::

    {"dir": CASE, "steps": [[TOOL, ARGV], ...], "check": null | {...}, "timeout": S, "mem": B}

runs in a child forked for it, in a process group of its own, with ``CASE/work`` as its current
directory, its address space limited to what it had plus ``B`` bytes (``RLIMIT_AS``) and its file
descriptors 1 and 2 sent to ``CASE/stdout.txt``/``CASE/stderr.txt``. Each step is a command-line
tool (``ramiel``, ``ramiel-opt``, ``ramiel-translate``) run in-process, as its console script
would run it (argparse's ``SystemExit`` is its status); the steps stop at the first non-zero
status. When every step succeeded, ``check`` runs what they produced:

* ``{"kind": "module", "path": P}``: the generated Python ``P`` must parse, and running it as
  ``python P`` (one inference on random inputs) must end with status 0 or one ``error:`` line;
* ``{"kind": "onnx", "model": M, "out": D}``: ``ramiel.compile(M, clusters=2)`` (threads) runs on
  seeded random inputs; both its modules' outputs must match onnxruntime's on the same inputs
  where onnxruntime loads and runs ``M`` (NaN where onnxruntime has NaN); ``D/model_seq.py`` and
  ``D/model.py`` must run as scripts.

The answer: ``status`` is ``ok`` (every step and the check succeeded), ``error`` (step ``step``
ended with status ``rc``, or ``"check"``: the generated code; the test checks that stderr
is one ``error:`` line), ``fail`` (the check
found a wrong result or a traceback: ``detail``), ``timeout`` (killed after ``timeout`` s: a
hang) or ``crash`` (the child died without an answer: a signal, ``os._exit``); ``leaked`` is true
when a process of the case's group outlived it (it is killed); ``seconds`` is the wall time.
"""

from __future__ import annotations

import contextlib
import faulthandler
import json
import os
import resource
import signal
import sys
import time
import traceback

TOOLS = ("ramiel", "ramiel-opt", "ramiel-translate")


def _tool_main(name: str):  # type: ignore[no-untyped-def]
    from ramiel.tools import driver, opt, translate

    return {"ramiel": driver.main, "ramiel-opt": opt.main, "ramiel-translate": translate.main}[name]


def _status(main, argv: list[str]) -> int:  # type: ignore[no-untyped-def]
    sys.argv = ["tool", *argv]
    try:
        return int(main(argv) or 0)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)


def _run_script(path: str) -> tuple[int, str]:
    """Run the generated ``path`` as ``python path`` would: (status, what went wrong or '')."""
    import runpy

    with open(path, encoding="utf-8") as f:
        source = f.read()
    try:
        compile(source, path, "exec")
    except SyntaxError as e:
        return 1, f"generated {path} does not parse: {e}"
    sys.argv = [path]
    try:
        runpy.run_path(path, run_name="__main__")
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        return code, ""
    except BaseException:  # noqa: BLE001 - a traceback is what the suite looks for
        return 1, f"running {path} raised:\n{traceback.format_exc()}"
    return 0, ""


def _compare(name: str, got, ref) -> str:  # type: ignore[no-untyped-def]
    import numpy as np

    g = np.asarray(got.detach().cpu().numpy() if hasattr(got, "detach") else got)
    r = np.asarray(ref)
    if g.shape != r.shape:
        return f"{name}: shape {g.shape} != onnxruntime's {r.shape}"
    if r.dtype.kind in "fc" or g.dtype.kind in "fc":
        g64, r64 = g.astype(np.complex128), r.astype(np.complex128)
        nan_r, nan_g = np.isnan(r64), np.isnan(g64)
        if not np.array_equal(nan_r, nan_g):
            return f"{name}: NaN where onnxruntime has none (or the reverse)"
        finite = np.isfinite(r64) & ~nan_r
        if not np.array_equal(g64[~finite & ~nan_r], r64[~finite & ~nan_r]):
            return f"{name}: infinities differ from onnxruntime's"
        if finite.any():
            scale = max(float(np.max(np.abs(r64[finite]))), 1.0)
            err = float(np.max(np.abs(g64[finite] - r64[finite]))) / scale
            if not np.isfinite(err) or err > 1e-3:
                return f"{name}: max error {err:.3g} (relative to max |output|) vs onnxruntime"
        return ""
    if not np.array_equal(g, r):
        return f"{name}: differs from onnxruntime's"
    return ""


def _check_onnx(model_path: str, out_dir: str) -> tuple[int, str]:
    """Compile and run the (mutated) ONNX file; compare with onnxruntime where it runs."""
    import onnxruntime as ort

    import ramiel
    from ramiel.errors import RamielError
    from ramiel.runtime.entry import random_inputs

    try:
        model = ramiel.compile(model_path, clusters=2, backend="threads")
    except RamielError as e:  # the CLI accepted it: a second compile must too
        return 1, f"ramiel compile accepted the model but ramiel.compile raised: {e}"
    try:
        feeds = random_inputs(model.input_specs, seed=0)
        par = model.run(feeds)
        seq = model.sequential(*feeds.values())
        seq = seq if isinstance(seq, tuple) else (seq,)
        seq_d = dict(zip(model.output_names, seq, strict=True))
    except RamielError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1, ""
    finally:
        model.close()
    refs = None
    try:
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        so.log_severity_level = 4
        sess = ort.InferenceSession(model_path, so, providers=["CPUExecutionProvider"])
        names = [o.name for o in sess.get_outputs()]
        if names == list(model.output_names):
            refs = sess.run(names, {k: v.numpy() for k, v in feeds.items()})
    except Exception:  # noqa: BLE001 - onnxruntime rejects it: nothing to compare with
        refs = None
    if refs is not None:
        for name, r in zip(model.output_names, refs, strict=True):
            for what, got in (("parallel", par[name]), ("sequential", seq_d[name])):
                problem = _compare(f"{what} output {name!r}", got, r)
                if problem:
                    return 1, problem
    for script in ("model_seq.py", "model.py"):
        path = os.path.join(out_dir, script)
        if os.path.exists(path):
            rc, problem = _run_script(path)
            if problem or rc:
                return rc or 1, problem
    return 0, ""


def _child(req: dict) -> None:
    case = req["dir"]
    os.setpgid(0, 0)
    faulthandler.disable()  # pytest's, when the suite forks a case itself
    os.chdir(os.path.join(case, "work"))
    with open("/proc/self/status") as f:
        vm = next(int(ln.split()[1]) * 1024 for ln in f if ln.startswith("VmSize:"))
    limit = vm + int(req.get("mem", 6 << 30))
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    for fd, name in ((1, "stdout.txt"), (2, "stderr.txt")):
        target = os.open(os.path.join(case, name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(target, fd)
        os.close(target)
    result: dict = {"status": "ok"}
    try:
        for i, (tool, argv) in enumerate(req["steps"]):
            rc = _status(_tool_main(tool), argv)
            sys.stdout.flush()
            sys.stderr.flush()
            if rc != 0:
                result = {"status": "error", "step": i, "rc": rc}
                break
        else:
            check = req.get("check")
            if check:
                if check["kind"] == "module":
                    rc, problem = _run_script(check["path"])
                else:
                    rc, problem = _check_onnx(check["model"], check["out"])
                sys.stdout.flush()
                sys.stderr.flush()
                if problem:
                    result = {"status": "fail", "detail": problem}
                elif rc:
                    result = {"status": "error", "step": "check", "rc": rc}
    except BaseException:  # noqa: BLE001 - reported, never raised
        result = {"status": "fail", "detail": "the harness caught:\n" + traceback.format_exc()}
    with open(os.path.join(case, "result.json"), "w") as f:
        json.dump(result, f)
    os._exit(0)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def serve_one(req: dict) -> dict:
    case = req["dir"]
    result_file = os.path.join(case, "result.json")
    if os.path.exists(result_file):
        os.unlink(result_file)
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        try:
            _child(req)
        finally:
            os._exit(70)
    deadline = t0 + float(req.get("timeout", 60))
    status = None
    while status is None:
        done, st = os.waitpid(pid, os.WNOHANG)
        if done:
            status = st
            break
        if time.monotonic() > deadline:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return {"status": "timeout", "seconds": time.monotonic() - t0, "leaked": False}
        time.sleep(0.02)
    seconds = time.monotonic() - t0
    leaked = False
    end = time.monotonic() + 5
    while _group_alive(pid):  # workers of the case outliving it (orphans are reaped by init)
        if time.monotonic() > end:
            leaked = True
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            break
        time.sleep(0.05)
    try:
        with open(result_file) as f:
            result = json.load(f)
    except (OSError, ValueError):
        how = (
            f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else
            f"exit status {os.WEXITSTATUS(status)}"
        )  # fmt: skip
        result = {"status": "crash", "detail": f"the case's process ended by {how}"}
    else:
        os.unlink(result_file)
    result.update(seconds=seconds, leaked=leaked)
    return result


def main() -> None:
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    import numpy  # noqa: F401
    import onnx  # noqa: F401
    import onnxruntime  # noqa: F401
    import torch  # noqa: F401

    import ramiel.compiler  # noqa: F401
    import ramiel.runtime.entry  # noqa: F401

    for name in TOOLS:
        _tool_main(name)
    out = sys.stdout
    out.write(json.dumps({"ready": True}) + "\n")
    out.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        out.write(json.dumps(serve_one(json.loads(line))) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
