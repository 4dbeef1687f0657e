"""The one table from `--format` to a renderer. Every renderer has the signature (Report, RenderOptions) -> str and
only formats: what it shows was computed by the analysis and carried on the report's rows. Each renderer module
is imported when its format is asked for (jinja2, pygments and rich load only when needed)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from auditor.report.progress import ProgressView
from auditor.types import Report, Severity


@dataclass(frozen=True, slots=True)
class RenderOptions:
    fail_on: Severity | None = Severity.HIGH   # what fails the run, for the formats that say so
    quiet: bool = False                        # terminal: only what fails, and one summary line
    verbose: bool = False                      # terminal: every group and the full tables
    source_root: Path | None = None            # html: where the scanned files are, for the code around a site
    width: int = 120                           # terminal as text: the line width
    progress: ProgressView | None = None       # html: the repository's recorded history (auditor/history)
    sarif_all: bool = False                    # sarif: list the findings that do not break too, as notes


def _terminal(report: Report, options: RenderOptions) -> str:
    from auditor.report.terminal.console import terminal_text

    return terminal_text(report, options.width, options.quiet, options.fail_on, options.verbose)


def _json(report: Report, options: RenderOptions) -> str:
    from auditor.report.json import render_json

    return render_json(report)


def _sarif(report: Report, options: RenderOptions) -> str:
    from auditor.report.sarif import render_sarif

    return render_sarif(report, everything=options.sarif_all)


def _github(report: Report, options: RenderOptions) -> str:
    from auditor.report.github import render_github

    return render_github(report, options.fail_on)


def _markdown(report: Report, options: RenderOptions) -> str:
    from auditor.report.markdown import render_markdown

    return render_markdown(report, options.fail_on)


def _html(report: Report, options: RenderOptions) -> str:
    from auditor.report.html import render_html

    return render_html(report, options.source_root, options.progress)


RENDERERS: dict[str, Callable[[Report, RenderOptions], str]] = {
    "terminal": _terminal,
    "json": _json,
    "sarif": _sarif,
    "github": _github,
    "markdown": _markdown,
    "html": _html,
}
FORMATS = tuple(RENDERERS)


def render(fmt: str, report: Report, options: RenderOptions = RenderOptions()) -> str:
    """The report in format `fmt` (a key of RENDERERS) as text."""
    return RENDERERS[fmt](report, options)
