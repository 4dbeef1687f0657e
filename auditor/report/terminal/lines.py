"""Plain lines for the terminal summary: wrapped at the console's width with a hanging indent, paths shortened,
text from the scanned tree escaped for rich, the styles of verdicts and severities."""
from __future__ import annotations

import textwrap

from rich.console import Console
from rich.markup import escape as rich_escape
from rich.text import Text

from auditor.report import text
from auditor.util.escape import log_line
from auditor.types import Severity

VERDICT_STYLE = {"ready": "bold green", "needs-port": "bold yellow", "blocked": "bold red"}
SEVERITY_STYLE = {
    Severity.CRITICAL: "bold red", Severity.HIGH: "red", Severity.MEDIUM: "yellow",
    Severity.LOW: "cyan", Severity.INFO: "dim",
}


class Lines:
    """Plain lines wrapped at the console's width with a hanging indent: no table columns to squeeze."""

    def __init__(self, console: Console):
        self.console = console
        self.width = max(40, console.width)
        self.count = 0                       # lines printed so far

    def print(self, line: Text | str = "") -> None:
        self.console.print(line, soft_wrap=True, highlight=False)
        self.count += 1

    def rule(self, title: str) -> None:
        self.print(Text(text.cut(title, self.width), style="bold"))

    def blank(self) -> None:
        self.print()

    def wrap(self, body: str, indent: int = 0, first: Text | None = None, style: str | None = None,
             hang: int | None = None, lines: int | None = None) -> None:
        """`body` after `first`, continued `hang` columns in; at most `lines` lines, the last cut with "…"."""
        head = Text(" " * indent) + (first.copy() if first is not None else Text())
        hang = indent + 4 if hang is None else hang
        wrapped = textwrap.wrap(body, width=self.width, initial_indent=" " * len(head.plain),
                                subsequent_indent=" " * hang, break_on_hyphens=False,
                                break_long_words=False) or [""]
        if lines is not None and len(wrapped) > lines:
            wrapped = wrapped[:lines]
            last = wrapped[-1].rstrip(" ,;:.")
            wrapped[-1] = (last if len(last) < self.width else last[: self.width - 1]) + "…"
        self.print(head + Text(wrapped[0][len(head.plain):], style=style or ""))
        for line in wrapped[1:]:
            self.print(Text(line, style=style or ""))


def short_path(path: str, limit: int) -> str:
    """A path of at most `limit` characters: its start and its file name, the middle elided."""
    if len(path) <= limit:
        return path
    name = path.rsplit("/", 1)[-1]
    keep = limit - len(name) - 2
    return (path[:keep] + "…/" + name) if keep > 4 else "…" + path[-(limit - 1):]


def days(low: float, high: float) -> str:
    return f"{low:g}-{high:g} d"


def markup_safe(text: str) -> str:
    """Text from the scanned tree in a place rich reads markup: `[bold]` or `x[/]y.py` shown as written."""
    return rich_escape(log_line(str(text)))
