"""The history flags: `check --record [--db PATH]` and `history [PATH] [--since] [--until] [--max-points] [--db]`,
registered on the command line by auditor/cli/parser.py and read back into HistoryOptions."""
from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from auditor.util.errors import ToolError

DEFAULT_POINTS = 40
FORMATS = ("terminal", "json", "csv", "html")   # what `history --format` writes
EXTRA_FORMATS = ("csv",)                         # formats only `history` has (the report registry lacks them)


@dataclass(frozen=True, slots=True)
class HistoryOptions:
    record: bool = False              # check --record: append this run to the store
    db: Path | None = None            # --db PATH; None: the user's default database
    since: str | None = None          # history --since DATE|REV
    until: str | None = None          # history --until REV (default HEAD)
    max_points: int = DEFAULT_POINTS


def points(text: str) -> int:
    """--max-points N: a whole number from 1 to 10,000."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 1 <= value <= 10_000:
        raise argparse.ArgumentTypeError("must be between 1 and 10000")
    return value


def from_namespace(ns: argparse.Namespace, command: str) -> HistoryOptions:
    """The options, checked against the command they go with."""
    given = {"--since": ns.since, "--until": ns.until,
             "--max-points": ns.max_points if ns.max_points != DEFAULT_POINTS else None}
    for flag, value in given.items():
        if value is not None and command != "history":
            raise ToolError(f"{flag} goes with `rocm-audit history [PATH]`")
    if ns.record and command != "check":
        raise ToolError("--record goes with check (rocm-audit check PATH --record)")
    if ns.format in EXTRA_FORMATS and command != "history":
        raise ToolError(f"--format {ns.format} goes with `rocm-audit history`")
    if command == "history" and ns.format not in FORMATS:
        raise ToolError(f"history --format is one of {', '.join(FORMATS)}")
    return HistoryOptions(bool(ns.record), ns.db, ns.since, ns.until, ns.max_points)
