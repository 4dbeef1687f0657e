"""Every line rocm-audit prints is safe in a CI log: a file named like a GitHub workflow command
(`::error file=README.md,line=1::approve.cu`) never starts a line of any text output (`-q`, the terminal report,
"could not scan", the `fix` summary, `baseline`, `config`), `##[` never appears, and control characters in names
stay visible. The outputs are the real CLI's, in a child process writing to a pipe as in CI."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from auditor.util.escape import log_line, log_lines
from tests.conftest import write_tree

pytestmark = pytest.mark.slow   # every output format over hostile file names

COMMAND_NAME = "::error file=README.md,line=1::approve.cu"
LOGGING_NAME = "##[error]x.py"


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "auditor", *args, "--no-progress", "--no-cache"], cwd=cwd,
                          capture_output=True, text=True, timeout=120, env={"PATH": "/usr/bin:/bin",
                                                                             "COLUMNS": "60"})


ANNOTATION = re.compile(r"::(?:error|warning|notice) (?:file=[^:]*|title=rocm-audit)::")   # --format github's own, names encoded


def _assert_safe(done: subprocess.CompletedProcess) -> None:
    for stream in (done.stdout, done.stderr):
        assert "Traceback" not in stream
        for line in stream.splitlines():
            assert not line.lstrip().startswith("::") or ANNOTATION.match(line), line
            assert "##[" not in line, line
            assert "\x1b" not in line, line


@pytest.fixture
def hostile_tree(tmp_path):
    repo = write_tree(tmp_path / "repo", {
        COMMAND_NAME: "__device__ float f(float v) { return __shfl_xor_sync(0xffffffff, v, 1); }\n",
        LOGGING_NAME: "import pynvml  # ##[warning]from a comment\n",
        "esc\x1b[31mred.py": "import pynvml\n",
        ".rocm-audit.toml": 'exclude = ["::warning::from-config", "##[error]cfg"]\n',
    })
    write_tree(repo, {"::warning file=a,line=1::deep.cmake": "if(X)\n" * 70})   # "could not scan": too deep
    return repo


@pytest.mark.parametrize("args", [
    ["check", ".", "-q"],
    ["check", "."],
    ["check", ".", "--format", "github"],
    ["fix", "."],
    ["fix", ".", "--diff"],
    ["baseline", "."],
    ["config", "."],
])
def test_no_output_line_starts_a_workflow_command(hostile_tree, args):
    done = _run(*args, cwd=hostile_tree)
    assert done.returncode in (0, 1), done.stderr
    _assert_safe(done)


def test_the_names_stay_readable(hostile_tree):
    quiet = _run("check", ".", "-q", cwd=hostile_tree)
    assert "error file=README.md,line=1::approve.cu" in quiet.stdout    # the finding's file, shown
    assert "::deep.cmake: not scanned completely (conditional blocks nested over 64" in quiet.stdout
    assert "esc\\x1b[31mred.py" in quiet.stdout                          # the escape sequence, visible
    fixed = _run("fix", ".", cwd=hostile_tree)
    assert "error file=README.md,line=1::approve.cu: " in fixed.stdout


def test_log_line_is_the_one_rule():
    assert log_line("::error::x") == "\u200b::error::x"
    assert log_line("a  ::b") == "a  \u200b::b"             # where a wrapped line would start
    assert log_line("std::vector<int>") == "std::vector<int>"
    assert "##[" not in log_line("x ##[error]y ##VSO[task]")
    assert log_line("\x1b[2J\r") == "\\x1b[2J\\x0d"
    assert log_line(log_line("::a ##[b \x07")) == log_line("::a ##[b \x07")
    assert log_lines("ok\n  ::set-output::x") == "ok\n  \u200b::set-output::x"
