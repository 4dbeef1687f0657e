"""Report -> the rich terminal summary. With cli, the only rich user: `summary` lays out the summary, `lines` wraps
plain lines, `tables` draws the --verbose and coverage tables, `gate` the baseline and pre-commit lines,
`progress` the scan's progress bar."""
from auditor.report.terminal.gate import strict_failure
from auditor.report.terminal.summary import render_terminal
from auditor.report.terminal.tables import render_coverage

__all__ = ["render_coverage", "render_terminal", "strict_failure"]
