"""Where a fleet run is recorded and resumed from (`--db`): the one place the run-history store plugs in. A
repository whose HEAD is the commit last recorded for it is not rescanned; its previous report is reused."""
from __future__ import annotations

from pathlib import Path
from typing import Protocol

from auditor.errors import ToolError


class Recorder(Protocol):
    def last_commit(self, repo_key: str) -> str | None:
        """The commit of the last run recorded for this repository, or None."""

    def record(self, report: dict, repo_key: str, commit: str | None) -> None:
        """One repository's run: its `check --format json` report and the commit it was scanned at."""


def open_recorder(path: Path) -> Recorder:
    """The history store at `path`. Not part of this build yet: `--db` says so rather than ignoring it."""
    raise ToolError(f"--db {path}: the run history store is not available in this build of rocm-audit "
                    "(resume and trends need it); run without --db")
