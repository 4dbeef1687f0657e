"""The static checks CI runs (issue 16, item 5): ruff, mypy on auditor/ and import-linter's contracts pass, and
no module of auditor/ grows past 400 lines. The tools are configured in pyproject.toml and pinned in the `test`
extra; each runs here as a subprocess of this venv, so README's test command (and .ci/run) runs them, and a
failure shows the tool's own output."""
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.conftest import REPO

MAX_MODULE_LINES = 400


def _run(*command: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *command], cwd=REPO, capture_output=True, text=True, timeout=900,
                          check=False)


def _output(proc: subprocess.CompletedProcess) -> str:
    return f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"


def test_ruff_finds_nothing():
    proc = _run("-m", "ruff", "check", "--no-cache", "--output-format", "concise", ".")
    assert proc.returncode == 0, _output(proc)


def test_mypy_finds_no_type_error_in_auditor():
    # the cache makes a re-run take seconds; it lives in the temporary directory, never in the checkout
    cache = Path(tempfile.gettempdir()) / f"rocm-audit-mypy-cache-{os.getuid()}"
    proc = _run("-m", "mypy", "--cache-dir", str(cache))
    assert proc.returncode == 0, _output(proc)
    assert "Success: no issues found" in proc.stdout, _output(proc)


def test_import_contracts_are_kept():
    """Stage layers, no import cycle, and who may import tree-sitter, rich and jinja2 (pyproject.toml)."""
    lint_imports = Path(sys.executable).parent / "lint-imports"
    proc = subprocess.run([str(lint_imports), "--no-cache"], cwd=REPO, capture_output=True, text=True,
                          timeout=900, check=False)
    assert proc.returncode == 0, _output(proc)
    assert "Contracts: 5 kept, 0 broken." in proc.stdout, _output(proc)


def test_no_module_is_over_400_lines():
    lines = {path.relative_to(REPO).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
             for path in (REPO / "auditor").rglob("*.py") if "example" not in path.relative_to(REPO).parts}
    over = {path: n for path, n in lines.items() if n > MAX_MODULE_LINES}
    assert not over, f"over {MAX_MODULE_LINES} lines: {over}"
