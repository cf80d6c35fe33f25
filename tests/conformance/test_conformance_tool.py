"""``python -m ramiel.tools.conformance``: its data is part of the package, and it writes the
Markdown table only where asked (stdout by default, ``--markdown FILE``)."""

from __future__ import annotations

import os
import sys

from ramiel.tools import conformance as conf


def test_expected_failures_are_package_data():
    xf = conf.load_expected_failures()
    assert xf.__name__ == "ramiel.tools.conformance_expected"
    assert os.path.dirname(xf.__file__) == os.path.dirname(conf.__file__)  # installed beside it
    assert xf.UNSUPPORTED and all(len(v) == 2 for v in xf.UNSUPPORTED.values())


def test_table_goes_to_stdout_or_markdown_file_only(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    docs = os.path.join(os.path.dirname(conf.__file__), os.pardir, "docs", "conformance.md")
    before = os.stat(docs).st_mtime_ns if os.path.exists(docs) else None
    assert conf.main(["--ops", "Relu", "--no-zoo"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# ONNX backend conformance")
    assert "| Relu |" in out
    assert os.listdir(tmp_path) == []  # nothing written where the user did not ask
    target = tmp_path / "table.md"
    assert conf.main(["--ops", "Relu", "--no-zoo", "--markdown", str(target)]) == 0
    assert capsys.readouterr().out == ""
    assert "| Relu |" in target.read_text()
    after = os.stat(docs).st_mtime_ns if os.path.exists(docs) else None
    assert before == after  # the tracked docs/conformance.md is left alone
    assert sys.modules["ramiel.tools.conformance_expected"] is conf.load_expected_failures()


def test_run_suite_reports_progress_per_test():
    index = conf.load_index(conf.ensure_node_data(None))
    cases = conf.select_cases(index, ["Relu"])
    calls: list[tuple[int, int]] = []
    outcomes = conf.run_suite(cases, (), progress=lambda d, t: calls.append((d, t)))
    total = len(outcomes)
    assert total >= 1
    # (0, total) first, then one call per test, ending at (total, total)
    assert calls == [(i, total) for i in range(total + 1)]
