"""What the change under review adds, the one answer every gate mode judges by (docs/gate.md): `--diff-base REF`
and `--diff-base` with `--baseline` compare the working tree with its merge-base with REF; `--baseline` alone (the
pre-commit hooks) with the last commit that changed the baseline file, the point where its findings were known.
A baseline file that differs from that commit was written from this tree: the change then adds nothing. Without
git (or with a baseline outside the repository) there is no base, and every line counts as added.

The vendored-looking directories a change adds (failclosed/vendoring.py) and the lines it adds that no parse read
(`unread_added`) are both taken from here, so the four modes cannot disagree about them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from auditor.util import vcs
from auditor.util.errors import ToolError
from auditor.util.escape import visible
from auditor.types import Report


class ChangeError(ToolError):
    """A git base that cannot be used: exit 2 with one line."""


@dataclass(frozen=True, slots=True)
class Change:
    """Files of the working tree that differ from the base, by path from the repository root."""

    top: Path | None                 # the repository (None: no git base, every line counts as added)
    prefix: str                      # the scanned root within it ("." at the top)
    base: str | None                 # the base commit (None with `top`: the working tree itself)
    label: str                       # how the reports name the base
    old_path: dict[str, str | None] = field(default_factory=dict)   # changed file -> at the base (None: new)
    added_lines: dict[str, frozenset[int]] = field(default_factory=dict)   # of a file that existed at the base

    @property
    def everything(self) -> bool:
        """No base: every file and line is the change's."""
        return self.top is None

    def local(self, path: str | None) -> str | None:
        """A path from git (from the repository root, raw) as the report names it (from the scanned root)."""
        if path is None:
            return None
        if self.prefix != ".":
            if not path.startswith(self.prefix + "/"):
                return None
            path = path[len(self.prefix) + 1:]
        return visible(path)


EVERYTHING = Change(None, ".", None, "no git base: every line counts as added")


def since_merge_base(root: Path, ref: str) -> Change:
    """`--diff-base REF`: what the working tree adds since its merge-base with REF."""
    top, prefix = repository_of(root)
    try:
        vcs.clean_stale()
        base = vcs.merge_base(top, ref)
        return _since(top, prefix, base, f"{ref} (merge-base {base[:12]})")
    except vcs.GitError as err:
        raise ChangeError(str(err)) from None


def since_baseline(root: Path, baseline: Path) -> Change:
    """`--baseline FILE` alone: what the working tree adds since the last commit that changed FILE."""
    try:
        top, prefix = repository_of(root)
        relative = baseline.resolve().relative_to(top.resolve()).as_posix()
    except (ChangeError, ValueError, OSError):
        return EVERYTHING
    try:
        if vcs.git(top, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", relative):
            return Change(top, prefix, None, f"the working tree ({relative} was written from it)")
        last = vcs.git(top, "log", "-1", "--format=%H", "--end-of-options", "HEAD", "--", relative,
                       check=False).strip()
        if not last:
            return EVERYTHING
        return _since(top, prefix, last, f"{relative} as committed in {last[:12]}")
    except vcs.GitError as err:
        raise ChangeError(str(err)) from None


def _since(top: Path, prefix: str, base: str, label: str) -> Change:
    found = vcs.changes(top, base)
    return Change(top, prefix, base, label, found.old_path, found.added_lines)


def repository_of(root: Path) -> tuple[Path, str]:
    """The git repository's top directory, and the scanned root's path within it ("." when it is the top)."""
    try:
        top = vcs.toplevel(root)
        prefix = root.resolve().relative_to(top.resolve()).as_posix()
    except ValueError:
        raise ChangeError(f"--diff-base: the scanned paths are not inside one git repository ({root})") from None
    except vcs.GitError as err:
        raise ChangeError(str(err)) from None
    return top, prefix


@dataclass(frozen=True, slots=True)
class ScannedChange:
    """The change as the report names files: the scanned files it touches."""

    changed: dict[str, str | None]          # root-relative path now -> at the base (None: a new file)
    added_lines: dict[str, frozenset[int]]  # of a changed file that existed at the base
    base_paths: dict[str, str]              # root-relative path at the base -> from the repository root, raw
    everything: bool = False                # no base: every scanned file is new

    def adds(self, path: str, line: int) -> bool:
        if self.everything:
            return True
        return path in self.changed and (self.changed[path] is None or line in self.added_lines.get(path, ()))


def scanned_part(change: Change, scanned: set[str]) -> ScannedChange:
    """The scanned files that changed since the base, under the names the report uses."""
    if change.everything:
        return ScannedChange(dict.fromkeys(scanned), {}, {}, everything=True)
    changed: dict[str, str | None] = {}
    added_lines: dict[str, frozenset[int]] = {}
    base_paths: dict[str, str] = {}
    for now_path, old_path in change.old_path.items():
        here = change.local(now_path)
        if here in scanned:
            changed[here] = change.local(old_path)
            if old_path is not None:
                added_lines[here] = change.added_lines.get(now_path, frozenset())
            if old_path is not None and (old_here := change.local(old_path)) is not None:
                base_paths[old_here] = old_path
    return ScannedChange(changed, added_lines, base_paths)


def unread_added(report: Report, change: ScannedChange) -> tuple[tuple[str, int, str], ...]:
    """(path, line, rule): the first line the change adds inside each stretch no parse could read, for every
    rule whose words occur in that stretch (FileFacts.unread_rules). A new file adds all its lines."""
    out: list[tuple[str, int, str]] = []
    for result in report.results:
        if result.path not in change.changed or not result.facts.unread_rules:
            continue
        for first, last, rules in result.facts.unread_rules:
            line = next((n for n in range(first, last + 1) if change.adds(result.path, n)), None)
            if line is not None:
                out += [(result.path, line, rule) for rule in rules]
    return tuple(out)
