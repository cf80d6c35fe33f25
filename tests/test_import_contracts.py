"""The package's import contracts (pyproject.toml [tool.importlinter]) hold: the layers of the
pipeline, a runtime without xDSL/onnx, plain-PyTorch test models and no import cycle
(scripts/lint_imports.sh, which CI also runs)."""

from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_import_contracts_are_kept() -> None:
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    r = subprocess.run(
        ["bash", os.path.join(ROOT, "scripts", "lint_imports.sh")],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "0 broken" in r.stdout


#: Modules whose imports inside functions are not yet sorted out (this set only shrinks).
UNSORTED: set[str] = set()


def _nested_imports(path: str) -> list[tuple[int, str]]:
    import ast

    with open(path) as f:
        src = f.read()
    lines = src.splitlines()
    out: list[tuple[int, str]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            if in_function and isinstance(child, ast.Import | ast.ImportFrom):
                out.append((child.lineno, lines[child.lineno - 1]))
            visit(child, inner)

    visit(ast.parse(src), False)
    return out


def test_imports_inside_functions_only_keep_a_heavy_dependency_lazy() -> None:
    """An import inside a function says which heavy dependency it keeps lazy (``# lazy: torch``);
    every other import is at the top of its module (a hidden import cycle cannot hide there)."""
    bad = []
    for top in ("ramiel", "dialects", "passes", "tools"):
        for dirpath, _, names in os.walk(os.path.join(ROOT, top)):
            for name in names:
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, ROOT)
                if not name.endswith(".py") or rel in UNSORTED:
                    continue
                for lineno, line in _nested_imports(path):
                    if "# lazy:" not in line and "imports torch" not in line:
                        bad.append(f"{rel}:{lineno}: {line.strip()}")
    assert not bad, "imports inside functions without '# lazy: <dependency>':\n" + "\n".join(bad)
