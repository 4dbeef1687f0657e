"""The static checks CI runs: ruff, mypy on auditor/ and import-linter's contracts pass, no
module of auditor/ grows past 400 lines, and no function of auditor/ is over 60 lines or over a
cyclomatic complexity of 25 (ruff's C901, its threshold in pyproject.toml). The tools are configured in
pyproject.toml and pinned in the `test` extra; each runs here as a subprocess of this venv, so README's test
command (and .ci/run) runs them, and a failure shows the tool's own output. The command line uses argparse's public
API only."""
import ast
import hashlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.slow   # ruff, mypy and import-linter over the code

MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60


def _run(*command: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *command], cwd=REPO, capture_output=True, text=True, timeout=900,
                          check=False)


def _output(proc: subprocess.CompletedProcess) -> str:
    return f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"


def test_ruff_finds_nothing():
    """With C901: no function over a cyclomatic complexity of 25 (pyproject.toml, [tool.ruff.lint.mccabe])."""
    proc = _run("-m", "ruff", "check", "--no-cache", "--output-format", "concise", ".")
    assert proc.returncode == 0, _output(proc)


def _functions_over(max_lines: int) -> dict[str, int]:
    over = {}
    for path in (REPO / "auditor").rglob("*.py"):
        module = path.relative_to(REPO).as_posix()
        if "example" in path.relative_to(REPO).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = node.end_lineno - node.lineno + 1   # from `def` to its last line, decorators apart
                if lines > max_lines:
                    over[f"{module}:{node.name}"] = lines
    return over


def test_no_function_is_over_60_lines():
    over = _functions_over(MAX_FUNCTION_LINES)
    assert not over, f"over {MAX_FUNCTION_LINES} lines (split by concept: each step a function named for it): {over}"


def test_mypy_finds_no_type_error_in_auditor():
    # the cache makes a re-run take seconds; it lives in the temporary directory, never in the checkout
    # keyed by the checkout too: two checkouts of different commits sharing one cache get each other's types
    checkout = hashlib.blake2b(str(REPO).encode(), digest_size=6).hexdigest()
    cache = Path(tempfile.gettempdir()) / f"rocm-audit-mypy-cache-{os.getuid()}-{checkout}"
    proc = _run("-m", "mypy", "--cache-dir", str(cache))
    assert proc.returncode == 0, _output(proc)
    assert "Success: no issues found" in proc.stdout, _output(proc)


def test_import_contracts_are_kept():
    """Stage layers, no import cycle, and who may import tree-sitter, rich and jinja2 (pyproject.toml)."""
    lint_imports = Path(sys.executable).parent / "lint-imports"
    proc = subprocess.run([str(lint_imports), "--no-cache"], cwd=REPO, capture_output=True, text=True,
                          timeout=900, check=False)
    assert proc.returncode == 0, _output(proc)
    import tomllib

    contracts = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    assert f"Contracts: {len(contracts)} kept, 0 broken." in proc.stdout, _output(proc)


def test_no_module_is_over_400_lines():
    lines = {path.relative_to(REPO).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
             for path in (REPO / "auditor").rglob("*.py") if "example" not in path.relative_to(REPO).parts}
    over = {path: n for path, n in lines.items() if n > MAX_MODULE_LINES}
    assert not over, f"over {MAX_MODULE_LINES} lines: {over}"


MAX_TOP_LEVEL_MODULES = 10
MAX_STAGE_FOLDERS = 11   # the analysis flow, cli -> ... -> util (docs/architecture.md)
MAX_STAGE_LAYERS = 11    # the stage contract's layers below `__main__`
DATA_FOLDERS = {"example", "__pycache__"}   # shipped data (the bundled example repository), not a stage


def test_the_folders_are_the_stages():
    """auditor/ holds stage packages and a few shared modules; every stage folder is one layer (or one side of a
    layer) of import-linter's stage contract, so the picture in pyproject.toml is the tree on disk."""
    import tomllib

    top = REPO / "auditor"
    modules = sorted(p.name for p in top.glob("*.py"))
    assert len(modules) <= MAX_TOP_LEVEL_MODULES, modules
    folders = {p.name for p in top.iterdir() if p.is_dir() and p.name not in DATA_FOLDERS}
    assert all((top / name / "__init__.py").is_file() for name in folders), folders
    contracts = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    layers = next(c["layers"] for c in contracts if c["id"] == "stages")
    named = {part.strip() for layer in layers for part in layer.replace("|", ":").split(":")}
    assert folders <= named, f"stage folders missing from the layers: {sorted(folders - named)}"
    assert named <= folders | {p.removesuffix(".py") for p in modules}, sorted(named - folders)
    assert len(folders) <= MAX_STAGE_FOLDERS, sorted(folders)
    assert len([layer for layer in layers if layer != "__main__"]) <= MAX_STAGE_LAYERS, layers


def _argparse_private_names() -> frozenset[str]:
    """The names argparse keeps private: its module-level `_X` and every `_x` attribute or method of its classes."""
    import argparse
    import inspect

    names = {name for name in vars(argparse) if name.startswith("_") and not name.startswith("__")}
    tree = ast.parse(inspect.getsource(argparse))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            names.add(node.attr)
        elif isinstance(node, ast.FunctionDef):
            names.add(node.name)
    return frozenset(n for n in names if n.startswith("_") and not n.startswith("__"))


def test_no_private_argparse_name_is_used():
    """The command line is built on argparse's public API only: no `argparse._X` class and no `_x` attribute or
    method of a parser, group or action (`parser._actions`, `_SubParsersAction`), which can change in any release."""
    private = _argparse_private_names()
    used = []
    for path in sorted((REPO / "auditor").rglob("*.py")):
        if "example" in path.relative_to(REPO).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in private:
                used.append(f"{path.relative_to(REPO).as_posix()}:{node.lineno} .{node.attr}")
            elif isinstance(node, ast.ImportFrom) and node.module == "argparse":
                used += [f"{path.relative_to(REPO).as_posix()}:{node.lineno} {a.name}" for a in node.names
                         if a.name in private]
    assert not used, used
