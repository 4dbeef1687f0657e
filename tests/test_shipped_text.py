"""What ships speaks to its user, not to the project's work log: no issue numbers, work-log references (a work
session, a review round, a blind-set branch) or commit hashes in the code, rules, docs and README."""
import re
import subprocess

import pytest

from tests.conftest import REPO

SHIPPED = ("auditor/", "rules/", "docs/", "scripts/", "README.md")
NOT_PROSE = ("auditor/example/", "rules/hipify/api_table.tsv")   # a scanned stand-in; a generated table of sources

WORK_LOG = re.compile(
    r"\b[Ii]ssues? #?\d+"                              # issue 25, issues 13 and 25, issue #7
    r"|(?<![\w&/#])#\d{1,4}\b(?!\w|\.\d)"                # #35 (not &#39;, not a URL fragment)
    r"|\b(?:[Ss]ession|[Rr]ound) \d+\b|\b(?:this|previous|last|first) session\b"
    r"|\breview round\b|\bblind\d+\b|\bset\dfix\b")
URL = re.compile(r"https?://\S+")
# 7 to 40 hex digits with at least one digit and one letter, standing alone (not in a word, a path or a colour)
HASH = re.compile(r"(?<![\w/.#@\-])(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![\w/\-])")


def _shipped_files() -> list[str]:
    tracked = subprocess.run(["git", "ls-files", "-z", "--", *SHIPPED], cwd=REPO, capture_output=True,
                             check=True).stdout.decode().split("\0")
    return [name for name in tracked if name and not name.startswith(NOT_PROSE) and (REPO / name).is_file()
            and name.endswith((".py", ".md", ".toml", ".json", ".html", ".j2", ".js", ".yaml", ".scm"))]


def _hits(pattern: re.Pattern[str], text: str) -> list[int]:
    return [text.count("\n", 0, m.start()) + 1 for m in pattern.finditer(text)]


@pytest.mark.slow
def test_no_shipped_file_cites_an_issue_or_the_work_log():
    found = []
    for name in _shipped_files():
        text = URL.sub("", (REPO / name).read_text(encoding="utf-8", errors="replace"))
        found += [f"{name}:{line}" for line in _hits(WORK_LOG, text)]
    assert not found


def test_no_shipped_file_names_a_commit_hash():
    found = []
    for name in _shipped_files():
        text = URL.sub("", (REPO / name).read_text(encoding="utf-8", errors="replace"))
        found += [f"{name}:{line}" for line in _hits(HASH, text)]
    assert not found


def test_the_patterns_find_what_they_are_for():
    assert _hits(WORK_LOG, "as issue 25 asks\nsee #35.\nthis session's code\nbranch blind11") == [1, 2, 3, 4]
    assert not _hits(WORK_LOG, "&#39; and https://x/y#12 and RA100 and 0x1f and round after round")
    assert _hits(HASH, "main at 7e3305f\n(49c3492)") == [1, 2]
    assert not _hits(HASH, "0xffffffff deadbeef-like color #a1b2c3d and abcdefab and 12345678 x_1234abc")
