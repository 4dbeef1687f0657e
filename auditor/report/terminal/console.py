"""The terminal report through rich, for callers that must not import rich themselves (the format registry, the
output step): rendered to text for a file or a pipe, or printed to the interactive terminal."""
from __future__ import annotations

import io

from rich.console import Console

from auditor.report.terminal.summary import render_terminal
from auditor.types import Report, Severity


def terminal_text(report: Report, width: int, quiet: bool, fail_on: Severity | None, verbose: bool) -> str:
    buffer = io.StringIO()
    render_terminal(report, Console(file=buffer, width=width, color_system=None), quiet, fail_on, verbose)
    return buffer.getvalue()


def print_terminal(report: Report, quiet: bool, fail_on: Severity | None, verbose: bool) -> None:
    render_terminal(report, Console(), quiet, fail_on, verbose)


def print_line(text: str) -> None:
    Console().print(text, markup=False, highlight=False, soft_wrap=True)
