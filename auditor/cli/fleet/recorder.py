"""Where a fleet run is recorded and resumed from (`--db`): the run-history store (auditor/history/store.py),
the one `check --record` and `history` use, under the same repository keys. A kept report is reused only when the
store holds its run (auditor/cli/fleet/resume.py)."""
from __future__ import annotations

from pathlib import Path
from typing import Protocol


class Recorder(Protocol):
    def recorded(self, repo_key: str, commit: str, rules_digest: str) -> str | None:
        """The verdict of the run of this commit under this rules digest recorded for the repository, or None."""

    def record(self, report: dict, repo_key: str, commit: str | None, run: dict | None = None) -> None:
        """One repository's run: its `check --format json` report, the commit it was scanned at, and the run as
        the history store keeps it (history.record.RunRecord as a dict; None outside git)."""


class HistoryRecorder:
    """The history store at `path` (created when missing; a newer or damaged one is refused, exit 2)."""

    def __init__(self, path: Path) -> None:
        from auditor.history.store import open_store

        self.path = path
        open_store(path).close()   # refuse a newer or damaged database before any repository is scanned

    def recorded(self, repo_key: str, commit: str, rules_digest: str) -> str | None:
        from auditor.history.store import open_store

        with open_store(self.path, readonly=True) as store:
            run = store.run_for(repo_key, commit, rules_digest)
        return run.verdict if run is not None else None

    def trend(self, repo_key: str) -> tuple[tuple[str, int], ...]:
        """(day, live findings) of each run recorded for the repository, oldest first: the day of its commit."""
        from auditor.history.store import open_store

        with open_store(self.path, readonly=True) as store:
            points = store.points(repo_key)
        return tuple(((p.where.committed_at or p.recorded_at)[:10], p.live) for p in points)

    def record(self, report: dict, repo_key: str, commit: str | None, run: dict | None = None) -> None:
        from auditor.history.record import run_record_from_dict
        from auditor.history.store import open_store

        if run is None:
            return
        with open_store(self.path) as store:
            store.record(run_record_from_dict(run))


def open_recorder(path: Path) -> Recorder:
    return HistoryRecorder(path)
