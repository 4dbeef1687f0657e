"""The lines a gated change adds (run/gate/changeset.py, every gate mode), by the scanned file's path and numbered as
the scan numbers them: what the suppression policy reads (a suppression the change adds does not silence what it
adds, docs/suppressions.md)."""
from __future__ import annotations

from pathlib import Path

from auditor.run.gate.changeset import Change
from auditor.parse.sourcetext import compiler_lines
from auditor.util.boundedio import read_prefix

READ_CAP = 64 * 1024 * 1024


def lines_added(change: Change) -> dict[str, frozenset[int] | None]:
    """Path from the scanned root -> the lines the change adds (None: a file the change adds whole)."""
    assert change.top is not None
    out: dict[str, frozenset[int] | None] = {}
    for now, old in change.old_path.items():
        here = change.local(now)
        if here is None:
            continue
        out[here] = None if old is None else _as_scanned(change.top / now, change.added_lines.get(now, frozenset()))
    return out


def _as_scanned(path: Path, lines: frozenset[int]) -> frozenset[int] | None:
    """git's line numbers as the scan's (auditor/parse/sourcetext.py); None (all of it) when unreadable."""
    try:
        data = read_prefix(path, READ_CAP)
    except OSError:
        return None
    if b"\r" not in data:
        return lines
    return compiler_lines(data.decode("utf-8", "surrogateescape"), lines)
