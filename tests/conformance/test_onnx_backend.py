"""Ramiel against the ONNX backend test suite (``onnx.backend.test.BackendTest``).

Every node test case of the CNN, transformer and recurrent op types (``SELECTED_OPS``, with the
``*_expanded`` cases) and the nine zoo model tests run through :mod:`ramiel.backend`: compiled by the whole
pipeline and run by the generated parallel module. The cases listed in ``ramiel.tools.conformance_expected``
are strict xfails: an ``UNSUPPORTED`` case must raise :class:`~ramiel.errors.UnsupportedOpError`,
a ``WRONG`` case must fail the output comparison, and either one passing fails the run until the
list is updated. ``python -m ramiel.tools.conformance --markdown docs/conformance.md`` runs the same tests and
writes the table.
"""

from __future__ import annotations

import pytest

import ramiel.backend
from ramiel.errors import UnsupportedOpError
from ramiel.tools import conformance as conf
from ramiel.tools import conformance_expected as xf

DATA = conf.ensure_node_data()
CASES = conf.select_cases(conf.load_index(DATA))
CASE_NAMES = {c.name for c in CASES}

#: the backend module, closing each test's prepared model when the next one is prepared
BACKEND = conf.ClosingBackend(ramiel.backend)


def _marks(case: str) -> list[pytest.MarkDecorator]:
    if case in xf.UNSUPPORTED:
        reason = xf.UNSUPPORTED[case][0]
        return [pytest.mark.xfail(reason=reason, raises=UnsupportedOpError, strict=True)]
    if case in xf.WRONG:
        reason = xf.WRONG[case][0]
        return [pytest.mark.xfail(reason=reason, raises=AssertionError, strict=True)]
    if case.removeprefix("test_") in conf.ZOO_MODELS:
        return [pytest.mark.zoo]
    return []


def _test_classes() -> dict[str, type]:
    classes = conf.make_backend_test(BACKEND, __name__, CASES).test_cases
    for cls in classes.values():
        for name in [n for n in vars(cls) if n.startswith("test_")]:
            fn = getattr(cls, name)
            for mark in _marks(name.removesuffix("_cpu")):
                fn = mark(fn)
            setattr(cls, name, fn)
    return classes


globals().update(_test_classes())


@pytest.fixture(autouse=True)
def _close_prepared_models():
    yield
    BACKEND.close_last()


def test_expected_failure_list_names_real_cases():
    """Every listed case exists among the selected node cases (a rename in onnx is noticed)."""
    listed = set(xf.UNSUPPORTED) | set(xf.WRONG)
    assert not listed - CASE_NAMES, sorted(listed - CASE_NAMES)


def test_suite_covers_every_selected_op():
    """Each op type of the selected set has node cases, and the suite is not silently empty."""
    ops = {c.op_type for c in CASES}
    assert set(conf.SELECTED_OPS) <= ops, sorted(set(conf.SELECTED_OPS) - ops)
    assert len(CASES) >= 500


def _nested_ops(g) -> set[str]:
    """The op types inside the subgraphs of ``g``'s nodes (an If branch's SequenceConstruct)."""
    out: set[str] = set()
    for n in g.node:
        for a in n.attribute:
            if a.g.node:
                out |= {m.op_type for m in a.g.node} | _nested_ops(a.g)
    return out


@pytest.mark.parametrize("case", sorted(xf.UNSUPPORTED))
def test_unsupported_case_is_reported_clearly(case: str):
    """A rejected case fails in ``prepare`` or the first ``run`` (before any generated code
    runs) with an UnsupportedOpError naming the op or tensor, the opset and what is missing."""
    import glob
    import os

    import onnx
    from onnx import numpy_helper

    c = next(c for c in CASES if c.name == case)
    model = onnx.load(os.path.join(c.dir, "model.onnx"))
    with pytest.raises(UnsupportedOpError) as info:
        rep = ramiel.backend.prepare(model)
        try:
            files = sorted(glob.glob(os.path.join(c.dir, "test_data_set_0", "input_*.pb")))
            rep.run([numpy_helper.to_array(onnx.load_tensor(f)) for f in files])
        finally:
            rep.close()
    what = xf.UNSUPPORTED[case][1]
    op, node, opset, why = info.value.items[0]
    assert op and node and opset == c.opset
    assert op in (c.op_type, "<tensor>", "<graph input>", *_nested_ops(model.graph))
    msg = str(info.value)
    assert what in msg and f"opset {c.opset}" in msg and f"'{node}'" in msg
