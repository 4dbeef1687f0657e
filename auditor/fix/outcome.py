"""What fixing one file produced, and what a fix run produced: the values the run's steps pass along."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from auditor.fix.safewrite import Identity
from auditor.types import FileResult, Finding, Report


@dataclass(frozen=True, slots=True)
class FileOutcome:
    path: str
    abspath: str
    old: str
    new: str                                  # == old when nothing was applied or the fixes were rolled back
    applied: tuple[Finding, ...]
    skipped: tuple[tuple[Finding, str], ...]
    rolled_back: str | None = None            # why this file's fixes were undone
    result: FileResult | None = None          # the scan of the new text
    planned: Identity | None = None           # the file as it was read: written only if it is still that file
    note: str | None = None                   # what writing it changed beyond the text (setuid bits dropped)
    beside: str | None = None                 # a new file: the ROCm variant of this file (its path)
    defines: tuple[str, ...] = ()             # the fixer's definitions its edits use (from the one header)
    created: bool = False                     # a new file: the header of the fixer's definitions

    @property
    def changed(self) -> bool:
        return self.new != self.old


@dataclass(frozen=True, slots=True)
class FixRun:
    files: tuple[FileOutcome, ...]
    refused: tuple[tuple[Finding, str], ...]  # fixable findings in files a fix may not touch
    unsafe_left: int
    before: Report
    after: Report                             # `check` on the tree as the command leaves it
    root: Path = Path(".")                    # what the files' paths are relative to
    home: str | None = None                   # the header of the fixer's definitions (auditor/fix/compat.py)
    includers: Mapping[str, tuple[str, ...]] = field(default_factory=dict)   # header -> files including it
    include_dirs: tuple[str, ...] = ()        # the project's build files' include paths, relative to `root`

    @property
    def applied(self) -> int:
        return sum(len(f.applied) for f in self.files if f.changed)
