"""Git for `--diff-base`: the merge-base with a ref, what changed since (renames followed, lines added), and
the merge-base checked out in a temporary worktree. Every failure is a GitError with one line and a hint."""
from __future__ import annotations

import re
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

FETCH_HINT = ("this is a shallow clone: fetch the history first (git fetch --unshallow, or `fetch-depth: 0` "
              "with actions/checkout)")
HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


class GitError(Exception):
    """git is missing, the path is not in a repository, or the base cannot be found: exit 2."""


def git(top: Path, *args: str, check: bool = True) -> str:
    try:
        done = subprocess.run(["git", "-C", str(top), *args], capture_output=True, text=True, check=False,
                              encoding="utf-8", errors="surrogateescape")
    except FileNotFoundError:
        raise GitError("--diff-base needs git, and git is not installed") from None
    if check and done.returncode != 0:
        message = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        raise GitError(f"git {args[0]}: {message}")
    return done.stdout if done.returncode == 0 else ""


def toplevel(path: Path) -> Path:
    directory = path if path.is_dir() else path.parent
    out = git(directory, "rev-parse", "--show-toplevel", check=False).strip()
    if not out:
        raise GitError(f"--diff-base needs a git repository, and {path} is not in one")
    return Path(out)


def merge_base(top: Path, ref: str) -> str:
    shallow = git(top, "rev-parse", "--is-shallow-repository", check=False).strip() == "true"
    if not git(top, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}", check=False).strip():
        hint = FETCH_HINT if shallow else f"fetch it first (git fetch origin {ref.removeprefix('origin/')})"
        raise GitError(f"--diff-base {ref}: no such commit here; {hint}")
    base = git(top, "merge-base", "--end-of-options", ref, "HEAD", check=False).strip()
    if not base:
        if shallow:
            raise GitError(f"--diff-base {ref}: its merge-base with HEAD is not in this clone; {FETCH_HINT}")
        raise GitError(f"--diff-base {ref}: it shares no history with HEAD")
    return base


@dataclass(frozen=True, slots=True)
class Changes:
    """Files of the working tree that differ from the base, by path from the repository root."""

    old_path: dict[str, str | None]          # changed or added file -> its path at the base (None: added)
    added_lines: dict[str, frozenset[int]]   # changed file -> lines it added (absent for whole new files)


def changes(top: Path, base: str) -> Changes:
    fields = git(top, "-c", "core.quotePath=false", "diff", "--name-status", "-z", "-M", "--no-ext-diff",
                 base, "--").split("\0")
    old_path: dict[str, str | None] = {}
    i = 0
    while i < len(fields) - 1:
        status = fields[i]
        if status.startswith(("R", "C")):
            old, new = fields[i + 1], fields[i + 2]
            old_path[new] = old if status.startswith("R") else None   # a copy is new code
            i += 3
            continue
        if status != "D":
            old_path[fields[i + 1]] = None if status == "A" else fields[i + 1]
        i += 2
    for untracked in git(top, "ls-files", "-z", "--others", "--exclude-standard").split("\0"):
        if untracked:
            old_path[untracked] = None
    return Changes(old_path, _added_lines(top, base))


def _added_lines(top: Path, base: str) -> dict[str, frozenset[int]]:
    patch = git(top, "-c", "core.quotePath=false", "diff", "-U0", "-M", "--no-color", "--no-ext-diff",
                "--no-textconv", "--src-prefix=a/", "--dst-prefix=b/", base, "--")
    added: dict[str, set[int]] = {}
    current: set[int] | None = None
    for line in patch.splitlines():
        if line.startswith("+++ "):
            target = line[4:]
            current = added.setdefault(target[2:], set()) if target.startswith("b/") else None
        elif current is not None and (hunk := HUNK.match(line)):
            start, length = int(hunk.group(1)), int(hunk.group(2) or 1)
            current.update(range(start, start + length))
    return {path: frozenset(lines) for path, lines in added.items()}


@contextmanager
def worktree(top: Path, commit: str) -> Iterator[Path]:
    """The commit checked out, detached, in a temporary directory that is removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="rocm-audit-base-") as tmp:
        where = Path(tmp) / "base"
        git(top, "-c", "core.hooksPath=/dev/null", "worktree", "add", "--detach", "--quiet", str(where), commit)
        try:
            yield where
        finally:
            git(top, "worktree", "remove", "--force", str(where), check=False)
