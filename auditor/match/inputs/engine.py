"""The Engine protocol: one file's text and the run's scan context to an `EngineResult`."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from auditor.util.errors import ScannedFileError
from auditor.match.rulebook.context import ScanContext
from auditor.types import FileCoverage, FileFacts, Finding

NO_FACTS = FileFacts()   # what an engine that learns nothing beside its findings reports


@dataclass(frozen=True, slots=True)
class ScanInput:
    """One file to scan: its path (relative, posix), decoded text and lines, and where it is on disk (None for a
    rule example scanned from memory)."""

    path: str
    text: str
    lines: list[str]
    abspath: Path | None = None


class Incomplete(str):
    """An engine's note for a file it could read only in part, too little to count as scanned
    (docs/security.md): its findings are kept, and the file is reported as not scanned, which fails the gate."""


class ParseFailure(ScannedFileError):
    """The file cannot be parsed at all; the message says why (the file is reported as failed)."""


@dataclass(frozen=True, slots=True)
class EngineResult:
    findings: tuple[Finding, ...] = ()
    facts: FileFacts = NO_FACTS
    parse_note: str | None = None            # why the file was read only in part (an `Incomplete`: not scanned)
    coverage: FileCoverage | None = None     # C/C++: the CUDA references HIPIFY does and does not translate


class Engine(Protocol):
    def scan(self, source: ScanInput, ctx: ScanContext) -> EngineResult: ...
