"""``python -m ramiel.tools.conformance``: Ramiel against the ONNX backend test suite, and the table.

What it does
    1. Regenerates the ONNX *node* test data offline (the data is not in the onnx wheel, its
       generators are: ``onnx.backend.test.case.node``) into a cache directory, in the layout of
       ``onnx/backend/test/data/node`` (``<case>/model.onnx``, ``test_data_set_0/{input,output}_N.pb``)
       plus an ``index.json`` (op type, expanded or not, opset of every case). Seconds, once per
       onnx version; later runs reuse it.
    2. Runs ``onnx.backend.test.BackendTest`` with :mod:`ramiel.backend` over the node cases of the
       selected op types (:data:`SELECTED_OPS`, the CNN + transformer + recurrent set) — every case, including
       the ``*_expanded`` ones (the op's function body as a multi-node graph, which is where
       clustering into two workers happens) — and the nine zoo model tests (``light_*``, whose data
       ships in the wheel).
    3. Prints the Markdown table (``--markdown FILE`` writes it to FILE instead, e.g.
       ``docs/conformance.md``): per op type the cases, passed, failed and unsupported, the
       reason of each non-passing case (from :mod:`ramiel.tools.conformance_expected` and the
       error raised), the zoo models, the date and the versions.

The pytest suite ``tests/conformance`` runs the same tests (same :class:`ConformanceTest`), with the
expected failures as strict xfails.

Usage::

    python -m ramiel.tools.conformance --markdown docs/conformance.md   # run everything, the table
    python -m ramiel.tools.conformance --ops Conv Relu # a subset, table to stdout
    python -m ramiel.tools.conformance --generate-only # just (re)build the data cache
    python -m ramiel.tools.conformance --all-ops       # every op type with node tests (informative)

The cache directory is ``$RAMIEL_ONNX_TEST_DATA`` or ``~/.cache/ramiel/onnx-backend-data``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import sys
import tempfile
import time
import traceback
import unittest
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ramiel
from ramiel.errors import UnsupportedOpError
from ramiel.tools import conformance_expected
from ramiel.tools.common import HelpFormatter, progress_bar

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

#: The op types of the ``onnx`` dialect's CNN + transformer + recurrent set whose node tests are
#: run.
SELECTED_OPS: tuple[str, ...] = (
    # CNN
    "AveragePool",
    "BatchNormalization",
    "Concat",
    "ConstantOfShape",
    "Conv",
    "ConvTranspose",
    "Dropout",
    "Flatten",
    "Gemm",
    "GlobalAveragePool",
    "LRN",
    "MaxPool",
    "Pad",
    "Resize",
    "Relu",
    "LeakyRelu",
    "HardSigmoid",
    "HardSwish",
    "Clip",
    "Softmax",
    "Sum",
    # transformer
    "Add",
    "Sub",
    "Mul",
    "Div",
    "Pow",
    "Sqrt",
    "Erf",
    "Tanh",
    "Sigmoid",
    "Gelu",
    "Exp",
    "Log",
    "Neg",
    "Max",
    "Min",
    "MatMul",
    "ReduceMean",
    "LayerNormalization",
    # shapes and data movement
    "Cast",
    "Constant",
    "Equal",
    "Expand",
    "Gather",
    "Identity",
    "Reshape",
    "Shape",
    "Slice",
    "Split",
    "Squeeze",
    "Transpose",
    "Unsqueeze",
    "Where",
    # control flow, recurrent layers and the sequence ops around them
    "If",
    "Loop",
    "Scan",
    "LSTM",
    "GRU",
    "RNN",
    "Range",
    "ReverseSequence",
    "CumSum",
    "ArgMax",
)

#: The nine zoo model tests whose data ships in the onnx wheel (``onnx/backend/test/data/light``).
ZOO_MODELS: tuple[str, ...] = (
    "bvlc_alexnet",
    "densenet121",
    "inception_v1",
    "inception_v2",
    "resnet50",
    "shufflenet",
    "squeezenet",
    "vgg19",
    "zfnet512",
)


# -- the node test data cache -------------------------------------------------------------------


@dataclass(frozen=True)
class NodeCase:
    """One node test case of the cache: its name, op type and facts for the table."""

    name: str
    op_type: str
    expanded: bool
    opset: int
    nodes: int
    dir: str


def default_cache_dir() -> Path:
    env = os.environ.get("RAMIEL_ONNX_TEST_DATA")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ramiel" / "onnx-backend-data"


#: Layout version of the cache (bump when :func:`_generate` changes what it writes).
CACHE_FORMAT = 1


def data_root(cache: Path | None = None) -> Path:
    """The directory of this onnx version's data inside the cache."""
    import onnx  # lazy: onnx

    return (cache or default_cache_dir()) / f"onnx-{onnx.__version__}-v{CACHE_FORMAT}"


def ensure_node_data(cache: Path | None = None, force: bool = False) -> Path:
    """Generate the node test data into the cache unless it is there; returns its root.

    Safe with concurrent runs (several pytest sessions on one machine): generation holds a lock
    file, writes to a temporary sibling and renames it into place, so a reader never sees a
    half-written cache and a complete one is never deleted under a reader (only ``force``
    replaces it).
    """
    root = data_root(cache)
    if _complete(root) and not force:
        return root
    root.parent.mkdir(parents=True, exist_ok=True)
    with _locked(root.parent / (root.name + ".lock")):
        if _complete(root) and not force:  # another process generated it meanwhile
            return root
        tmp = Path(tempfile.mkdtemp(prefix=root.name + ".tmp-", dir=root.parent))
        try:
            _generate(tmp)
            if root.exists():  # forced, or a broken leftover: move it aside, then delete it
                trash = Path(tempfile.mkdtemp(prefix=root.name + ".old-", dir=root.parent))
                os.replace(root, trash / "data")
                shutil.rmtree(trash, ignore_errors=True)
            os.replace(tmp, root)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return root


def _complete(root: Path) -> bool:
    return (root / "index.json").is_file()


class _locked:
    """An exclusive ``flock`` on ``path`` (a no-op where fcntl is missing)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._f: Any = None

    def __enter__(self) -> None:
        try:
            import fcntl  # lazy: optional, POSIX only
        except ImportError:  # not POSIX
            return
        self._f = open(self.path, "a")  # noqa: SIM115 - held until __exit__
        fcntl.flock(self._f, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        if self._f is not None:
            self._f.close()  # releases the lock


def _generate(out: Path) -> None:
    import numpy as np  # lazy: numpy
    import onnx  # lazy: onnx
    from onnx.backend.test.case.node import collect_testcases  # lazy: onnx

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        cases = list(collect_testcases())
    op_of: dict[str, str] = {}
    for c in cases:
        assert c.model is not None
        if len(c.model.graph.node) == 1 and not c.name.endswith("_expanded"):
            op_of[c.name] = c.model.graph.node[0].op_type
    index: dict[str, dict[str, Any]] = {}
    for c in cases:
        assert c.model is not None
        expanded = "_expanded" in c.name
        base = c.name.split("_expanded")[0] if expanded else c.name
        op_type = op_of.get(base)
        if op_type is None:  # a multi-node case of its own (no base): the first node's op
            op_type = c.model.graph.node[0].op_type if c.model.graph.node else "?"
        opset = next((o.version for o in c.model.opset_import if o.domain in ("", "ai.onnx")), 0)
        d = out / "node" / c.name
        _write_case(c, d)
        index[c.name] = {
            "op_type": op_type,
            "expanded": expanded,
            "opset": opset,
            "nodes": len(c.model.graph.node),
        }
    meta = {"onnx": onnx.__version__, "generated": _now(), "cases": index}
    (out / "index.json").write_text(json.dumps(meta, indent=0, sort_keys=True))


def _write_case(case: Any, d: Path) -> None:
    """Write one case like ``onnx/backend/test/cmd_tools.py`` writes model tests."""
    from onnx import TensorProto, numpy_helper  # lazy: onnx

    data = d / "test_data_set_0"
    data.mkdir(parents=True)
    (d / "model.onnx").write_bytes(case.model.SerializeToString())
    (inputs, outputs) = case.data_sets[0]
    for kind, values, infos in (
        ("input", inputs, case.model.graph.input),
        ("output", outputs, case.model.graph.output),
    ):
        for j, v in enumerate(values):
            tp = infos[j].type
            if isinstance(v, TensorProto):
                proto = v
            elif tp.HasField("sequence_type"):
                proto = numpy_helper.from_list(v, infos[j].name)
            elif tp.HasField("optional_type"):
                proto = numpy_helper.from_optional(v, infos[j].name)
            elif tp.HasField("map_type"):
                proto = numpy_helper.from_dict(v, infos[j].name)
            else:
                proto = numpy_helper.from_array(v, infos[j].name)
            (data / f"{kind}_{j}.pb").write_bytes(proto.SerializeToString())


def load_index(root: Path) -> dict[str, NodeCase]:
    meta = json.loads((root / "index.json").read_text())
    return {
        name: NodeCase(
            name, v["op_type"], v["expanded"], v["opset"], v["nodes"], str(root / "node" / name)
        )
        for name, v in meta["cases"].items()
    }


def select_cases(
    index: dict[str, NodeCase], ops: Iterable[str] = SELECTED_OPS, expanded: bool = True
) -> list[NodeCase]:
    """The cases of ``ops`` (sorted by name), with or without the ``_expanded`` ones."""
    wanted = set(ops)
    return sorted(
        (c for c in index.values() if c.op_type in wanted and (expanded or not c.expanded)),
        key=lambda c: c.name,
    )


# -- the test runner ----------------------------------------------------------------------------


def _backend_test_class() -> type:
    from onnx.backend.test import BackendTest  # lazy: onnx

    class ConformanceTest(BackendTest):
        """``onnx.backend.test.BackendTest`` over chosen cases of the regenerated node data and the
        zoo model tests, CPU only.

        ``BackendTest.__init__`` would regenerate all ~1900 node cases in memory (about 10 s per
        run) and list the wheel's other data kinds; this loads only the given cases from the cache.
        Each test still runs through BackendTest's own code: ``prepare`` + ``run`` + its
        ``assert_similar_outputs`` (rtol 1e-3, atol 1e-7 for node tests; per model for the zoo).
        """

        def __init__(
            self,
            backend: Any,
            parent_module: str | None,
            cases: Sequence[NodeCase],
            zoo: Sequence[str] = ZOO_MODELS,
        ) -> None:
            from onnx.backend.test.case.test_case import TestCase  # lazy: onnx
            from onnx.backend.test.loader import load_model_tests  # lazy: onnx

            self.backend = backend
            self._parent_module = parent_module
            self._include_patterns = set()
            self._exclude_patterns = set()
            self._xfail_patterns = set()
            self._test_kwargs = {}
            self._test_items = defaultdict(dict)
            for c in cases:
                tc = TestCase(
                    name=c.name,
                    model_name=c.name,
                    url=None,
                    model_dir=c.dir,
                    model=None,
                    data_sets=None,
                    kind="node",
                    rtol=1e-3,
                    atol=1e-7,
                )
                self._add_model_test(tc, "Node")
            for rt in load_model_tests(kind="real"):
                if rt.model_name in zoo:
                    self._add_model_test(rt, "Real")
            for items in self._test_items.values():
                for name in [n for n in items if not n.endswith("_cpu")]:
                    del items[name]

    return ConformanceTest


def make_backend_test(
    backend: Any,
    parent_module: str | None,
    cases: Sequence[NodeCase],
    zoo: Sequence[str] = ZOO_MODELS,
) -> Any:
    """A :class:`ConformanceTest` (an ``onnx.backend.test.BackendTest``) for these cases."""
    os.environ.setdefault(
        "ONNX_HOME", str(default_cache_dir() / "onnx-home")
    )  # where BackendTest writes the zoo models' input data
    return _backend_test_class()(backend, parent_module, cases, zoo)


def load_expected_failures() -> Any:
    """The expected failures with their reasons (:mod:`ramiel.tools.conformance_expected`,
    installed with the package, so the tool runs from a non-editable install)."""
    return conformance_expected


# -- running everything and the table -----------------------------------------------------------


@dataclass
class Outcome:
    test: str  # BackendTest name, e.g. test_relu_cpu
    case: str  # case name, e.g. test_relu
    status: str  # passed | failed | unsupported | error
    message: str
    seconds: float
    stats: list[dict[str, Any]] | None = None  # RamielRep.stats() of the test's model


class _Recorder(unittest.TestResult):
    def __init__(
        self, progress: Callable[[int, int], None] | None, total: int, backend: ClosingBackend
    ) -> None:
        super().__init__()
        self._total = total
        self.outcomes: list[Outcome] = []
        self._backend = backend
        self._t0 = 0.0
        self._progress = progress

    def startTest(self, test: unittest.TestCase) -> None:  # noqa: N802 - unittest API
        super().startTest(test)
        self._t0 = time.perf_counter()

    def _add(self, test: unittest.TestCase, status: str, message: str) -> None:
        name = test.id().rsplit(".", 1)[-1]
        case = name[: -len("_cpu")] if name.endswith("_cpu") else name
        dt = time.perf_counter() - self._t0
        stats = self._backend.close_last()
        self.outcomes.append(Outcome(name, case, status, message, dt, stats))
        if self._progress is not None:
            self._progress(len(self.outcomes), self._total)

    def addSuccess(self, test: unittest.TestCase) -> None:  # noqa: N802
        self._add(test, "passed", "")

    def addFailure(self, test: unittest.TestCase, err: Any) -> None:  # noqa: N802
        self._add(test, "failed", _short(err[1]))

    def addError(self, test: unittest.TestCase, err: Any) -> None:  # noqa: N802

        status = "unsupported" if isinstance(err[1], UnsupportedOpError) else "error"
        msg = _short(err[1])
        if status == "error":
            tb = traceback.extract_tb(err[2])
            if tb:
                f = tb[-1]
                msg += f" [{os.path.basename(f.filename)}:{f.lineno}]"
        self._add(test, status, msg)

    def addSkip(self, test: unittest.TestCase, reason: str) -> None:  # noqa: N802
        self._add(test, "skipped", reason)


def _short(e: BaseException, limit: int = 300) -> str:
    text = " ".join(str(e).split())
    if not isinstance(e, AssertionError):
        text = f"{type(e).__name__}: {text}"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def run_suite(
    cases: Sequence[NodeCase],
    zoo: Sequence[str] = ZOO_MODELS,
    progress: Callable[[int, int], None] | None = None,
) -> list[Outcome]:
    """Run the BackendTest tests of ``cases`` and ``zoo`` through :mod:`ramiel.backend`.
    ``progress``: called with ``(tests done, tests)`` after each test (e.g. the ``update`` of
    :func:`ramiel.tools.common.progress_bar`)."""
    import ramiel.backend as backend  # lazy: numpy,onnx,torch,xdsl

    wrapper = ClosingBackend(backend)
    bt = make_backend_test(wrapper, None, cases, zoo)
    suite = unittest.TestSuite()
    for cls in bt.test_cases.values():
        suite.addTests(unittest.defaultTestLoader.loadTestsFromTestCase(cls))
    rec = _Recorder(progress, suite.countTestCases(), wrapper)
    if progress is not None:
        progress(0, rec._total)
    suite.run(rec)
    return rec.outcomes


class ClosingBackend:
    """The backend module, closing the previous test's prepared model before preparing the next
    (BackendTest drops its reps without closing them; their workers would pile up).
    :meth:`close_last` closes the last one and returns its statistics."""

    def __init__(self, backend: Any) -> None:
        self._b = backend
        self._last: Any = None

    def prepare(self, model: Any, device: str = "CPU", **kw: Any) -> Any:
        self.close_last()
        self._last = self._b.prepare(model, device, **kw)
        return self._last

    def close_last(self) -> list[dict[str, Any]] | None:
        rep, self._last = self._last, None
        if rep is None:
            return None
        stats = rep.stats()
        rep.close()
        return stats

    def __getattr__(self, name: str) -> Any:
        return getattr(self._b, name)


def classify(outcomes: Sequence[Outcome], expected: Any) -> dict[str, str]:
    """For each non-passing case, the reason shown in the table: the list's reason if the case is
    listed, else the error itself (marked as unexpected)."""
    out = {}
    for o in outcomes:
        listed = expected.reason(o.case)
        if o.status == "passed":
            if listed is not None:
                out[o.case] = (
                    "passes, but is listed in ramiel.tools.conformance_expected: remove it"
                )
            continue
        if listed is not None:
            out[o.case] = listed
        else:
            out[o.case] = f"NOT IN THE EXPECTED-FAILURE LIST: {o.message}"
    return out


def versions() -> dict[str, str]:
    import numpy  # lazy: numpy
    import onnx  # lazy: onnx
    import onnxruntime  # lazy: onnxruntime
    import torch  # lazy: torch
    import xdsl  # lazy: xdsl

    return {
        "ramiel": ramiel.__version__,
        "onnx": onnx.__version__,
        "torch": torch.__version__,
        "xdsl": getattr(xdsl, "__version__", "?"),
        "onnxruntime": onnxruntime.__version__,
        "numpy": numpy.__version__,
        "python": platform.python_version(),
    }


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")


def write_table(
    outcomes: Sequence[Outcome],
    cases: Sequence[NodeCase],
    expected: Any,
    ops: Sequence[str],
    wall_s: float,
) -> str:
    """The Markdown table (docs/conformance.md)."""
    by_case = {c.name: c for c in cases}
    reasons = classify(outcomes, expected)
    node = [o for o in outcomes if o.case in by_case]
    zoo = [o for o in outcomes if o.case not in by_case]
    per_op: dict[str, list[Outcome]] = defaultdict(list)
    for o in node:
        per_op[by_case[o.case].op_type].append(o)

    def count(os_: Sequence[Outcome], status: str) -> int:
        return sum(1 for o in os_ if o.status == status)

    def pct(a: int, b: int) -> str:
        return f"{100 * a / b:.1f} %" if b else "–"

    n_pass = count(node, "passed")
    n_unsup = count(node, "unsupported")
    n_fail = len(node) - n_pass - n_unsup
    single = [o for o in node if not by_case[o.case].expanded]
    outside: frozenset[str] = getattr(expected, "OUTSIDE_PYTORCH", frozenset())
    lacking = [o for o in node if o.status != "passed" and reasons.get(o.case) in outside]
    lines = [
        "# ONNX backend conformance",
        "",
        "Ramiel as an ONNX backend (`ramiel.backend`: every case compiled through the whole",
        "pipeline — import, constant folding, clustering with `clusters=2` requested (the merge",
        "pass keeps two clusters only where it estimates a gain, see *How the node cases ran*),",
        "lowering, printing — and run by the generated parallel module on the threads runtime) against",
        "`onnx.backend.test.BackendTest`: every node test case of the CNN, transformer and recurrent op types",
        "(`SELECTED_OPS` in `tools/conformance.py`, including the `*_expanded` cases, the op's",
        "function body as a multi-node graph) and the nine zoo model tests (`light_*`). Outputs are",
        "compared by BackendTest itself (rtol 1e-3, atol 1e-7 for node cases; per model for the zoo).",
        "",
        "Regenerate with `python -m ramiel.tools.conformance` (the run took "
        f"{wall_s:.0f} s here). The pytest suite `tests/conformance` runs the same tests, with the "
        "expected failures of `ramiel.tools.conformance_expected` as strict xfails.",
        "",
        f"Generated {_now()} with "
        + ", ".join(f"{k} {v}" for k, v in versions().items())
        + f", on {platform.machine()} ({os.cpu_count()} cores).",
        "",
        "## Summary",
        "",
        f"- Node cases: **{n_pass} / {len(node)} passed ({pct(n_pass, len(node))})**, "
        f"{n_fail} failed, {n_unsup} rejected with a clear `UnsupportedOpError`.",
        f"- Without the {len(lacking)} cases whose element types PyTorch cannot compute with "
        "(4- and 2-bit integers, float4, strings): "
        f"{n_pass} / {len(node) - len(lacking)} passed ({pct(n_pass, len(node) - len(lacking))}).",
        f"- Single-node cases: {count(single, 'passed')} / {len(single)} passed; expanded cases: "
        f"{n_pass - count(single, 'passed')} / {len(node) - len(single)} passed.",
        f"- Zoo models: {count(zoo, 'passed')} / {len(zoo)} passed.",
        "",
        "## Per op type",
        "",
        "| op type | cases | passed | failed | unsupported | pass rate |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for op in sorted(ops):
        os_ = per_op.get(op, [])
        p, u = count(os_, "passed"), count(os_, "unsupported")
        rate = f"{100 * p / len(os_):.0f} %" if os_ else "–"
        lines.append(f"| {op} | {len(os_)} | {p} | {len(os_) - p - u} | {u} | {rate} |")
    lines.append(
        f"| **total** | **{len(node)}** | **{n_pass}** | **{n_fail}** | **{n_unsup}** | "
        f"**{pct(n_pass, len(node))}** |"
    )
    lines += [
        "",
        "## Zoo models",
        "",
        "| model | result | clusters | compile s | run s | test s |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for o in sorted(zoo, key=lambda o: o.case):
        res = o.status if o.status == "passed" else f"{o.status}: {reasons.get(o.case, o.message)}"
        st = (o.stats or [{}])[0]
        tm = st.get("timings", {})
        comp = sum(v for k, v in tm.items() if k != "first_run")
        lines.append(
            f"| {o.case} | {_md(res)} | {st.get('clusters', '–')} | {comp:.1f} | "
            f"{tm.get('first_run', 0.0):.2f} | {o.seconds:.1f} |"
        )
    lines += ["", "## How the node cases ran", ""] + _pipeline_lines(node)
    lines += [
        "## Cases that do not pass",
        "",
        "Grouped by reason (the reasons of `ramiel.tools.conformance_expected`; a case missing",
        "from that list shows its error instead).",
        "",
    ]
    for op in sorted(ops):
        bad = [o for o in per_op.get(op, []) if o.status != "passed"]
        if not bad:
            continue
        lines += [f"### {op}", ""]
        groups: dict[tuple[str, str], list[str]] = defaultdict(list)
        for o in sorted(bad, key=lambda o: o.case):
            kind = "unsupported" if o.status == "unsupported" else "failed"
            groups[(kind, reasons.get(o.case, o.message))].append(o.case)
        for (kind, why), names in groups.items():
            shown = ", ".join(f"`{n}`" for n in names)
            lines.append(f"- {kind} ({len(names)}): {shown}. *{_md(why)}*")
        lines.append("")
    stale = [c for c, r in reasons.items() if r.startswith("passes, but")]
    if stale:
        lines += ["## Listed but passing (update the list)", ""]
        lines += [f"- `{c}`" for c in sorted(stale)]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _pipeline_lines(node: Sequence[Outcome]) -> list[str]:
    """Clusters used, inputs bound at the first run, and the mean per-case cost by stage."""
    comps = [st for o in node for st in (o.stats or [])]
    if not comps:
        return ["(no case compiled)"]
    by_clusters: dict[int, int] = defaultdict(int)
    for st in comps:
        by_clusters[st["clusters"]] += 1
    bound = sum(1 for o in node if o.stats and o.stats[0]["bound_inputs"])
    stages = ["import", "passes", "lower", "print", "load", "start", "first_run"]
    mean = {k: 1000 * sum(st["timings"].get(k, 0.0) for st in comps) / len(comps) for k in stages}
    test_mean = 1000 * sum(o.seconds for o in node) / len(node)
    shown = ", ".join(
        f"{n} with {k} cluster{'s' if k != 1 else ''}" if k else f"{n} sequential"
        for k, n in sorted(by_clusters.items(), reverse=True)
    )
    folded = sorted(o.case for o in node if o.stats and o.stats[0]["clusters"] == 0)
    return [
        f"- Compilations: {len(comps)} ({shown}; *sequential*: every output was computed at "
        "compile time, so the compiler printed no parallel program and its sequential module ran"
        + (": " + ", ".join(f"`{c}`" for c in folded) if folded else "")
        + ").",
        f"- Cases whose shape/axes/pads/scales inputs were bound from the first run's values "
        f"(they are graph inputs in the node tests, compile-time constants for Ramiel): {bound}.",
        "- Mean cost per compilation (ms): "
        + ", ".join(f"{k} {mean[k]:.1f}" for k in stages)
        + f"; mean wall time per test {test_mean:.0f} ms.",
        "",
    ]


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m ramiel.tools.conformance",
        description="Run Ramiel against the ONNX backend tests and print the Markdown table "
        "(docs/conformance.md is written with --markdown docs/conformance.md).",
        formatter_class=HelpFormatter,
    )
    ap.add_argument("--cache", type=Path, default=None, help="node test data cache directory")
    ap.add_argument("--generate-only", action="store_true", help="only (re)build the data cache")
    ap.add_argument("--regenerate", action="store_true", help="rebuild the data cache first")
    ap.add_argument("--ops", nargs="+", help="only these op types (table to stdout)")
    ap.add_argument("--all-ops", action="store_true", help="every op type with node tests")
    ap.add_argument("--no-zoo", action="store_true", help="skip the nine zoo model tests")
    ap.add_argument(
        "--markdown",
        "-o",
        type=Path,
        default=None,
        metavar="FILE",
        help="write the Markdown table to FILE (default: stdout)",
    )
    ap.add_argument("--json", type=Path, default=None, help="also write every outcome as JSON")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    root = ensure_node_data(args.cache, force=args.regenerate)
    print(f"node test data: {root} ({time.perf_counter() - t0:.1f} s)", file=sys.stderr)
    if args.generate_only:
        return 0
    index = load_index(root)
    if args.all_ops:
        ops: Sequence[str] = sorted({c.op_type for c in index.values()})
    else:
        ops = args.ops or SELECTED_OPS
    cases = select_cases(index, ops)
    zoo = () if args.no_zoo else ZOO_MODELS
    print(f"running {len(cases)} node cases and {len(zoo)} zoo models", file=sys.stderr)
    t1 = time.perf_counter()
    with progress_bar("conformance tests") as update:
        outcomes = run_suite(cases, zoo, progress=update)
    wall = time.perf_counter() - t1
    table = write_table(outcomes, cases, load_expected_failures(), ops, wall)
    out = args.markdown
    if out is None:
        sys.stdout.write(table)
    else:
        out.write_text(table)
        print(f"wrote {out}", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps([o.__dict__ for o in outcomes], indent=1))
    print(f"{wall:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
