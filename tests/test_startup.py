"""What a run loads: `--version` and a hook run on Python files stay clear of the heavy libraries."""
import json
import subprocess
import sys

import pytest

from tests.conftest import FIXTURES

HEAVY = ("tree_sitter", "jinja2", "pygments", "rich", "packaging")


def loaded_after(*args: str) -> set[str]:
    # files are scanned in forked children (the per-file budget); scanning in this process instead shows here
    # what the scan itself imports
    code = ("import sys\nfrom auditor.cli.app import main\nimport auditor.run.runner.workers\n"
            "auditor.run.runner.workers.fork_available = lambda: False\n"
            f"try:\n    main({list(args)!r})\nexcept SystemExit:\n    pass\n"
            f"print(__import__('json').dumps([m for m in {HEAVY!r} if m in sys.modules]), file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


def test_version_loads_nothing_heavy():
    assert loaded_after("--version") == set()


@pytest.mark.slow
def test_a_hook_run_on_python_files_loads_neither_tree_sitter_nor_the_html_report(tmp_path):
    files = [str(FIXTURES / "llm_serving" / "llmserve" / name) for name in ("engine.py", "fp8.py", "server.py")]
    hook = ("check", "--force-exclude", "--quiet", "--no-progress", "--no-html", "--cache-dir", str(tmp_path))
    loaded_after("rules", "--cache-dir", str(tmp_path))     # the rulebook cached, as after any earlier run
    loaded = loaded_after(*hook, *files)
    assert not loaded & {"tree_sitter", "jinja2", "pygments", "packaging"}, loaded
    # the detection works (files are scanned in a forked child, so tree-sitter shows in the parent no more;
    # the HTML report is rendered here)
    assert "jinja2" in loaded_after("check", "--no-progress", "--cache-dir", str(tmp_path), "--format", "html",
                                    "-o", str(tmp_path / "r.html"), *files)
