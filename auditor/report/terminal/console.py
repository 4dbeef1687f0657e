"""The terminal report through rich, for callers that must not import rich themselves (the format registry, the
output step): rendered to text for a file or a pipe, or printed to the interactive terminal."""
from __future__ import annotations

import io
import sys

from rich.console import Console

from auditor.util.escape import log_line, log_lines

from auditor.report.terminal.summary import render_terminal
from auditor.types import Report, Severity


def terminal_text(report: Report, width: int, quiet: bool, fail_on: Severity | None, verbose: bool) -> str:
    buffer = io.StringIO()
    render_terminal(report, Console(file=buffer, width=width, color_system=None), quiet, fail_on, verbose)
    return log_lines(buffer.getvalue())     # each line as wrapped: a wrapped table cell starts a line too


def print_terminal(report: Report, quiet: bool, fail_on: Severity | None, verbose: bool) -> None:
    console = Console()
    if console.is_terminal:
        render_terminal(report, console, quiet, fail_on, verbose)
    else:   # a pipe or a CI log: the lines checked once rendered
        sys.stdout.write(terminal_text(report, console.width, quiet, fail_on, verbose))


def print_line(text: str) -> None:
    Console().print(log_line(text), markup=False, highlight=False, soft_wrap=True)
