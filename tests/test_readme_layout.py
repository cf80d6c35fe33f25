"""The README's layout table matches the tree (issue #16): every module of the package is named in
the row of its directory, every module a row names exists, and each pass is found by its flag
name in one step (``passes/<flag>.py``, ``lit_tests/passes/<flag>.mlir``)."""

from __future__ import annotations

import os
import re

from ramiel.passes import _MODULES

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE_DIRS = ("ramiel", "dialects", "passes", "tools")


def _layout_rows() -> dict[str, str]:
    """Directory (``ramiel/runtime/``) -> the text of its rows in the README's Layout table."""
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    section = readme.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, str] = {}
    for line in section.splitlines():
        m = re.match(r"\| `([^`]+/)`[^|]*\| (.*) \|$", line)
        if m:
            rows[m.group(1)] = rows.get(m.group(1), "") + " " + m.group(2)
    return rows


def _modules() -> list[tuple[str, str]]:
    """``(directory/, module file)`` of every module of the package (``__init__.py`` aside)."""
    out = []
    for top in PACKAGE_DIRS:
        for dirpath, dirnames, names in os.walk(os.path.join(ROOT, top)):
            dirnames[:] = [d for d in dirnames if d != "__pycache__"]
            rel = os.path.relpath(dirpath, ROOT).replace(os.sep, "/") + "/"
            out += [(rel, n) for n in names if n.endswith(".py") and n != "__init__.py"]
    return sorted(out)


def test_every_package_module_is_in_its_directory_row() -> None:
    rows = _layout_rows()
    modules = _modules()
    assert len(modules) > 80
    missing = [d + n for d, n in modules if f"`{n}`" not in rows.get(d, "")]
    assert not missing, f"modules the README's layout table does not name: {missing}"


def test_every_module_the_table_names_exists() -> None:
    stale = []
    for d, text in _layout_rows().items():
        assert os.path.isdir(os.path.join(ROOT, d)), f"the layout table names {d}, not in the tree"
        if d.split("/")[0] not in PACKAGE_DIRS:
            continue
        for name in re.findall(r"`([a-z0-9_]+\.py)`", text):
            if not os.path.exists(os.path.join(ROOT, d, name)):
                stale.append(d + name)
    assert not stale, f"the layout table names modules that do not exist: {stale}"


def test_each_pass_is_found_by_its_flag() -> None:
    for flag, (module, _cls) in _MODULES.items():
        stem = flag.replace("-", "_")
        assert module == f"ramiel.passes.{stem}", f"--{flag} is implemented in {module}"
        assert os.path.exists(os.path.join(ROOT, "passes", f"{stem}.py")), flag
        assert os.path.exists(os.path.join(ROOT, "lit_tests", "passes", f"{flag}.mlir")), flag
