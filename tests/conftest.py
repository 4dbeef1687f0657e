import atexit
import itertools
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

# The suite keeps compiled bytecode even where PYTHONDONTWRITEBYTECODE is set: else each worker, and each Python
# process a test starts, compiles the same modules (and pytest rewrites the same test modules) again.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

from auditor.cli.app import main  # noqa: E402 - after the bytecode switch above, so its modules are kept compiled

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"

# The tests never write to the user's cache directory: each test caches into a directory of its own (below), and
# processes started with the environment captured at import time (tests/gitrepo.py) into one for the session.
SESSION_CACHE = tempfile.mkdtemp(prefix="rocm-audit-test-cache-")
os.environ["ROCM_AUDIT_CACHE_DIR"] = SESSION_CACHE
os.environ["XDG_CACHE_HOME"] = SESSION_CACHE + "-home"   # the user cache directory (HTML reports)
os.environ["XDG_STATE_HOME"] = SESSION_CACHE + "-state"   # the cache key (auditor/run/runner/cachetrust) is made there
atexit.register(shutil.rmtree, SESSION_CACHE + "-state", True)
atexit.register(shutil.rmtree, SESSION_CACHE + "-home", True)
atexit.register(shutil.rmtree, SESSION_CACHE, True)


_TESTS = itertools.count()


@pytest.fixture(autouse=True)
def _cache_of_this_test(tmp_path_factory, monkeypatch):
    # a path of its own that the run makes when it first caches (mktemp lists every directory made so far: quadratic)
    monkeypatch.setenv("ROCM_AUDIT_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "caches" / str(next(_TESTS))))


def write_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


@pytest.fixture
def run_json(capsys):
    """Run the CLI with --format json; return (exit code, parsed report)."""

    def run(*args: str) -> tuple[int, dict]:
        code = main([*map(str, args), "--format", "json", "--no-progress", "-j", "1"])
        out = capsys.readouterr().out
        return code, json.loads(out) if out.strip() else {}

    return run


def run_in_repo(capfd, repo, *args):
    """The CLI in the repository, as CI runs it; (exit code, stdout, stderr), with no traceback anywhere
    (capfd also catches what forked children write)."""
    cwd = os.getcwd()
    os.chdir(repo.root)
    try:
        code = main(list(args))
    finally:
        os.chdir(cwd)
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err, out + err
    return code, out, err


def fast_diagonal(rows, columns) -> list:
    """The cases of a rows × columns matrix of end-to-end runs (a mechanism × a way of running it), each marked
    `slow` but a diagonal that holds every row and every column at least once: `pytest -m "not slow"` keeps each
    mechanism and each way of running it, the full run every pair."""
    cases = []
    for i, row in enumerate(rows):
        for j, column in enumerate(columns):
            fast = i % len(columns) == j or j % len(rows) == i
            cases.append(pytest.param(row, column, marks=() if fast else pytest.mark.slow, id=f"{row}-{column}"))
    return cases


def fast_first(values, fast: int = 1) -> list:
    """One-axis variants of one mechanism: the first `fast` stay in `pytest -m "not slow"`, the rest are slow. A
    tuple is the values of several argument names."""
    return [pytest.param(*(v if isinstance(v, tuple) else (v,)), marks=() if i < fast else pytest.mark.slow)
            for i, v in enumerate(values)]
