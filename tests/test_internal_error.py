"""The internal-error path: the one place a test expects the words of an unexpected exception.

A bug in Ramiel (an exception that is neither a user error nor an operating-system error) is
still one line, ``error: internal error: <type>: <message> (set RAMIEL_DEBUG=1 for the
traceback)``, exit status 1, from every tool; ``RAMIEL_DEBUG=1`` lets the traceback through.
Every other test asserts that this line never appears (``conftest.one_error_line``).
"""

from __future__ import annotations

import pytest
from conftest import ZOO_MODELS

from ramiel.tools import driver, opt, translate

EXPECTED = "error: internal error: RuntimeError: a bug on two lines (set RAMIEL_DEBUG=1 for the traceback)\n"


def _bug(*_args, **_kwargs):
    raise RuntimeError("a bug\non two lines")


@pytest.mark.parametrize(
    ("tool", "target", "argv"),
    [
        (
            driver,
            "ramiel.compiler.compile_model",
            ["compile", ZOO_MODELS["light_squeezenet"], "-o", "{tmp}"],
        ),
        (
            translate,
            "ramiel.importer.import_onnx",
            ["--import-onnx", ZOO_MODELS["light_squeezenet"]],
        ),
        (opt, "ramiel.tools.opt.RamielOptMain.run", ["{tmp}/in.mlir"]),
    ],
    ids=["ramiel", "ramiel-translate", "ramiel-opt"],
)
def test_internal_error_is_one_line(tool, target, argv, tmp_path, capsys, monkeypatch):
    (tmp_path / "in.mlir").write_text("builtin.module {}\n")
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    monkeypatch.setattr(target, _bug)
    monkeypatch.delenv("RAMIEL_DEBUG", raising=False)
    assert tool.main(argv) == 1
    assert capsys.readouterr().err.splitlines()[-1] + "\n" == EXPECTED
    monkeypatch.setenv("RAMIEL_DEBUG", "1")
    with pytest.raises(RuntimeError, match="a bug"):
        tool.main(argv)
