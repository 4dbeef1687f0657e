"""Git for `--diff-base` and for listing tracked files: the merge-base with a ref, what changed since (renames
followed, lines added), and blobs of the base read with `git cat-file` (never checked out). Every failure is a
GitError with one line and a hint.

The scanned repository's `.git/config` is not ours to obey: it can name programs git runs (core.fsmonitor,
filter drivers, textconv, external diff, hooks). Every call neutralises them (`_neutral_config`): fsmonitor
off, hooks looked up under /dev/null (none), every configured filter and diff driver blanked, no external diff and no
textconv, optional index writes off. The scanned tree is never written to.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path, PurePosixPath

from auditor.util.errors import ToolError

FETCH_HINT = ("this is a shallow clone: fetch the history first (git fetch --unshallow, or `fetch-depth: 0` "
              "with actions/checkout)")
HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")
DRIVER_KEY = re.compile(r"^(filter|diff|merge)\.(.+)\.([a-z]+)$")
BLANKED = {"filter": ("clean", "smudge", "process"), "diff": ("textconv", "command"), "merge": ("driver",)}
TEMP_PREFIX = "rocm-audit-base-"
# `git diff` as the bytes are stored, whatever the tree's .gitattributes say: `-diff` or `binary` would make a
# changed file add no lines, a textconv or external diff would show other text
AS_STORED = ("--text", "--no-ext-diff", "--no-textconv")
OUTPUT_CAP = 512 * 1024 * 1024     # git's answer is read whole; a repository cannot make it larger than this


class GitError(ToolError):
    """git is missing, the path is not in a repository, or the base cannot be found: exit 2."""


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env.update({
        "GIT_CONFIG_NOSYSTEM": "1",       # the machine's config is not the user's choice either
        "GIT_OPTIONAL_LOCKS": "0",        # no index refresh written into the scanned repository
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_PAGER": "cat", "PAGER": "cat",
        "LC_ALL": "C",                    # messages we recognise (dubious ownership)
        "GIT_ATTR_NOSYSTEM": "1",         # nor the machine's attributes
    })
    for name in ("GIT_EXTERNAL_DIFF", "GIT_DIFF_OPTS", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT"):
        env.pop(name, None)
    return env


def _empty_hooks() -> str:
    """A hooks directory that holds nothing and that nobody can fill (a temporary one would be left behind)."""
    return os.devnull


def _run(top: Path, args: Sequence[str], neutral: Sequence[str] = (),
         stdin: bytes | None = None, timeout: float | None = None) -> subprocess.CompletedProcess:
    base = ["git", "-c", "core.fsmonitor=false", "-c", f"core.hooksPath={_empty_hooks()}",
            "-c", "core.untrackedCache=false", "-c", "diff.external=", "-c", "core.quotePath=false",
            "-c", "protocol.allow=never",
            "-c", f"core.attributesFile={os.devnull}", *neutral, "-C", str(top)]
    try:
        return subprocess.run([*base, *args], capture_output=True, check=False, env=_environment(),
                              input=stdin if stdin is not None else b"", timeout=timeout)
    except FileNotFoundError:
        raise GitError("git is not installed (--diff-base and listing tracked files need it)") from None
    except subprocess.TimeoutExpired:   # subprocess.run has killed it
        raise GitError(f"git {args[0]}: no answer within {timeout:g} s") from None


@cache
def _neutral_config(top: str) -> tuple[str, ...]:
    """`-c` overrides blanking every filter, diff and merge driver the repository's config (with its includes)
    defines: they name programs git would run on the scanned files."""
    done = _run(Path(top), ["config", "--list", "--name-only", "-z"])
    names = done.stdout.decode("utf-8", "surrogateescape").split("\0") if done.returncode == 0 else []
    overrides: list[str] = []
    for name in sorted(set(names)):
        match = DRIVER_KEY.match(name.strip())
        if not match:
            continue
        section, driver = match.group(1), match.group(2)
        for key in BLANKED[section]:
            overrides += ["-c", f"{section}.{driver}.{key}="]
        if section == "filter":
            overrides += ["-c", f"filter.{driver}.required=false"]
    return tuple(overrides)


def git_bytes(top: Path, *args: str, check: bool = True, stdin: bytes | None = None,
              timeout: float | None = None) -> bytes:
    done = _run(top, args, _neutral_config(str(top)), stdin, timeout)
    if check and done.returncode != 0:
        raise GitError(f"git {args[0]}: {_cause(done.stderr, done.returncode)}")
    return done.stdout if done.returncode == 0 else b""


def git(top: Path, *args: str, check: bool = True, timeout: float | None = None, stdin: bytes | None = None) -> str:
    return git_bytes(top, *args, check=check, timeout=timeout, stdin=stdin).decode("utf-8", "surrogateescape")


def _cause(stderr: bytes, code: int) -> str:
    lines = stderr.decode("utf-8", "replace").strip().splitlines()
    text = " ".join(lines)
    if "dubious ownership" in text:
        owner = re.search(r"is owned by:\s*(\S+)", text)
        return ("the repository is owned by another user" + (f" ({owner.group(1)})" if owner else "")
                + "; git refuses it until you trust it: git config --global --add safe.directory PATH")
    return lines[-1] if lines else f"exit status {code}"


def toplevel(path: Path, needed_by: str = "--diff-base") -> Path:
    """The top of the repository holding `path`; `needed_by`: the option the error names, the one the user
    passed ("" names none)."""
    directory = path if path.is_dir() else path.parent
    done = _run(directory, ["rev-parse", "--show-toplevel"])
    out = done.stdout.decode("utf-8", "surrogateescape").strip()
    if done.returncode != 0 or not out:
        cause = _cause(done.stderr, done.returncode)
        if "not a git repository" in cause.lower() or not cause:
            raise GitError(f"{needed_by} needs a git repository, and {path} is not in one" if needed_by
                           else f"{path} is not in a git repository")
        raise GitError(f"{path}: git cannot use this repository: {cause}")
    return Path(out)


def tracked_files(top: Path) -> list[str] | None:
    """Every path git tracks under `top` (relative to it, posix), or None when `top` is in no repository or git
    is missing. Read from the index only (no filter runs, nothing is written)."""
    try:
        done = _run(top, ["ls-files", "-z", "--cached", "--", "."],
                    _neutral_config(str(top)))
    except GitError:
        return None
    if done.returncode != 0 or len(done.stdout) > OUTPUT_CAP:
        return None
    return [p for p in done.stdout.decode("utf-8", "surrogateescape").split("\0") if p]


def submodule_paths(top: Path) -> list[str] | None:
    """Paths of the submodules git records (gitlinks in the index), relative to `top`; None outside git."""
    try:
        done = _run(top, ["ls-files", "-z", "--stage", "--", "."], _neutral_config(str(top)))
    except GitError:
        return None
    if done.returncode != 0 or len(done.stdout) > OUTPUT_CAP:
        return None
    found = []
    for record in done.stdout.decode("utf-8", "surrogateescape").split("\0"):
        meta, _, path = record.partition("\t")
        if meta.startswith("160000 "):
            found.append(path)
    return found


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
    fields = git(top, "diff", "--name-status", "-z", "-M", *AS_STORED, base, "--").split("\0")
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
    patch = git(top, "diff", "-U0", "-M", "--no-color", *AS_STORED, "--src-prefix=a/", "--dst-prefix=b/", base, "--")
    added: dict[str, set[int]] = {}
    current: set[int] | None = None
    for line in patch.split("\n"):   # never str.splitlines: a CR or form feed inside a file's line is not a line end
        if line.startswith("+++ "):
            target = line[4:]
            current = added.setdefault(target[2:], set()) if target.startswith("b/") else None
        elif current is not None and (hunk := HUNK.match(line)):
            start, length = int(hunk.group(1)), int(hunk.group(2) or 1)
            current.update(range(start, start + length))
    return {path: frozenset(lines) for path, lines in added.items()}


def tree_paths(top: Path, commit: str) -> list[str]:
    """Every path of `commit`'s tree (from the repository root, raw)."""
    listing = git_bytes(top, "ls-tree", "-r", "-z", "--full-tree", "--name-only", "--end-of-options", commit)
    return [p.decode("utf-8", "surrogateescape") for p in listing.split(b"\0") if p]


def blobs(top: Path, commit: str, paths: Sequence[str], max_bytes: int) -> dict[str, bytes]:
    """The contents of `paths` (from the repository root) at `commit`, read with `git cat-file` as stored:
    no checkout, so no filter, hook or attribute of the repository runs. Links, submodules and blobs over
    `max_bytes` are left out."""
    wanted = set(paths)
    if not wanted:
        return {}
    listing = git_bytes(top, "ls-tree", "-r", "-z", "--full-tree", "--end-of-options", commit)
    ids: dict[str, str] = {}
    for record in listing.split(b"\0"):
        meta, _, raw = record.partition(b"\t")
        path = raw.decode("utf-8", "surrogateescape")
        parts = meta.split()
        if path in wanted and len(parts) == 3 and parts[0] in (b"100644", b"100755") and parts[1] == b"blob":
            ids[path] = parts[2].decode()
    if not ids:
        return {}
    request = "".join(f"{oid}\n" for oid in sorted(set(ids.values()))).encode()
    out = git_bytes(top, "cat-file", "--batch", stdin=request)
    contents: dict[str, bytes] = {}
    position = 0
    by_id: dict[str, list[str]] = {}
    for path, oid in ids.items():   # byte-identical files share a blob: each of their paths gets its bytes
        by_id.setdefault(oid, []).append(path)
    while position < len(out):
        end = out.index(b"\n", position)
        header = out[position:end].split()
        position = end + 1
        if len(header) != 3:
            continue
        oid, size = header[0].decode(), int(header[2])
        data = out[position:position + size]
        position += size + 1
        if size <= max_bytes:
            for path in by_id.get(oid, ()):
                contents[path] = data
    return contents


def existing(top: Path, commit: str, paths: Sequence[str]) -> set[str]:
    """Which of `paths` (from the repository root) exist at `commit`, as a directory, file or submodule."""
    asked = [p for p in paths if "\n" not in p]
    if not asked:
        return set()
    request = "".join(f"{commit}:{p}\n" for p in asked).encode("utf-8", "surrogateescape")
    answers = git_bytes(top, "cat-file", "--batch-check", stdin=request).decode("utf-8", "surrogateescape")
    return {p for p, line in zip(asked, answers.split("\n")) if line and not line.endswith(" missing")}


@contextmanager
def base_tree(top: Path, commit: str, paths: Sequence[str], max_bytes: int) -> Iterator[Path]:
    """`paths` as they were at `commit`, written into a private temporary directory that is removed afterwards
    (a killed run's is removed by the next one: clean_stale)."""
    where = Path(tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}{os.getpid()}-"))
    try:
        for path, data in blobs(top, commit, paths, max_bytes).items():
            target = _inside(where, path)
            if target is None:
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        yield where
    finally:
        shutil.rmtree(where, ignore_errors=True)


def _inside(root: Path, path: str) -> Path | None:
    """root/path, or None for a path that could leave root (a crafted tree may hold `..` or absolute names)."""
    parts = PurePosixPath(path).parts
    if not parts or PurePosixPath(path).is_absolute() or any(p in ("", ".", "..", ".git") for p in parts):
        return None
    return root.joinpath(*parts)


def clean_stale() -> None:
    """What a killed run left: its temporary base directories (the process is gone). Only our own temporary
    directories: the scanned repository is never written to (no `git worktree prune`, which would drop a
    user's worktree registrations)."""
    temp = Path(tempfile.gettempdir())
    for entry in temp.glob(f"{TEMP_PREFIX}*"):
        pid = entry.name[len(TEMP_PREFIX):].split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)) and entry.is_dir() and not entry.is_symlink() \
                and entry.stat().st_uid == getattr(os, "getuid", lambda e=entry: e.stat().st_uid)():
            shutil.rmtree(entry, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


TREE_CHECK_SECONDS = 120.0   # for git to say whether a working tree changed; no answer by then counts as changed


def working_tree_changed(path: Path, timeout: float | None = TREE_CHECK_SECONDS) -> bool:
    """Whether the working tree under `path` holds what HEAD does not: a tracked file changed (staged or not) or
    a file git does not track that no .gitignore hides (the files a scan reads; .git/info/exclude and the user's
    excludes file are not what the scan honours, so files they hide count too). True when git cannot tell, or
    not within `timeout` seconds a call.
    Through git() above: no fsmonitor, hooks or untracked cache, filter drivers blanked, no optional index
    write; submodules are not entered (their own config would be theirs to obey)."""
    try:
        if git(path, "status", "--porcelain=v1", "-z", "--untracked-files=no", "--ignore-submodules=all",
               "--no-renames", "--", ".", timeout=timeout) or _hidden_edits(path, timeout):
            return True
        return bool(git(path, "ls-files", "-z", "--others", "--directory", "--no-empty-directory",
                        "--exclude-per-directory=.gitignore", "--", ".", timeout=timeout))
    except GitError:
        return True


def _hidden_edits(path: Path, timeout: float | None) -> bool:
    """Whether a file git status does not look at (marked skip-worktree or assume-unchanged in the index, which
    anybody with the checkout can set) differs from the index: missing, or other bytes."""
    listing = git(path, "ls-files", "-v", "-s", "-z", "--", ".", timeout=timeout)
    flagged: dict[str, str] = {}
    for record in listing.split("\0"):
        meta, _, name = record.partition("\t")
        parts = meta.split()
        if len(parts) == 4 and (parts[0] == "S" or parts[0].islower()) and parts[1] != "160000":
            if parts[1] not in ("100644", "100755") or "\n" in name or not (path / name).is_file() \
                    or (path / name).is_symlink():
                return True
            flagged[name] = parts[2]
    if not flagged:
        return False
    names = sorted(flagged)
    hashed = git(path, "hash-object", "--no-filters", "--stdin-paths", timeout=timeout,
                 stdin="".join(f"{n}\n" for n in names).encode("utf-8", "surrogateescape")).split()
    return hashed != [flagged[n] for n in names]
