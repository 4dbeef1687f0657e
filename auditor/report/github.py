"""Report -> GitHub Actions workflow commands: an annotation on each new finding's line, up to what GitHub
shows for one step (10 errors and 10 warnings); the rest, and the totals, in a notice and the log."""
from __future__ import annotations

from auditor.report import view
from auditor.judge.incomplete import closed_failures
from auditor.util.escape import log_line, workflow_data, workflow_property
from auditor.report.sarif import repo_uri
from auditor.types import Report, Severity

MAX_PER_LEVEL = 10   # GitHub shows at most 10 error and 10 warning annotations per step


_data = workflow_data      # %, CR and LF encoded as GitHub's toolkit does; control characters made visible
_prop = workflow_property  # and : and , in property values


def _command(level: str, message: str, file: str | None = None, line: int | None = None,
             col: int | None = None, end_line: int | None = None, title: str | None = None) -> str:
    props = []
    if file:
        props.append(f"file={_prop(file)}")
        if line:
            props.append(f"line={line}")
            if end_line and end_line > line:
                props.append(f"endLine={end_line}")
            if col:
                props.append(f"col={col}")
    if title:
        props.append(f"title={_prop(title)}")
    return f"::{level} {','.join(props)}::{_data(message)}" if props else f"::{level}::{_data(message)}"


def render_github(report: Report, fail_on: Severity | None = Severity.HIGH) -> str:
    fails = set(report.failing(fail_on))
    new = [i for i, f in enumerate(report.findings)
           if report.breaks(f) and f.new is not False and f.severity > Severity.INFO]
    levels = {i: "error" if i in fails else "warning" for i in new}
    lines: list[str] = []
    shown = {"error": 0, "warning": 0}
    left_out: list[int] = []
    for i in sorted(new, key=lambda i: (levels[i] != "error", -report.findings[i].severity)):
        f = report.findings[i]
        level = levels[i]
        if shown[level] >= MAX_PER_LEVEL:
            left_out.append(i)
            continue
        shown[level] += 1
        rule = report.rules.get(f.rule_id)
        title = f"rocm-audit {f.rule_id} {rule.name if rule else ''} ({f.severity.label})".replace("  ", " ")
        message = f"{f.message} ({f.detail})" if f.detail else f.message
        if rule and rule.rocm_alternative:
            message += f"\nROCm alternative: {rule.rocm_alternative}"
        lines.append(_command(level, message, repo_uri(report, f.path), f.span.line, f.span.column,
                              f.span.end_line, title))
    for path, line, message in report.warnings[:MAX_PER_LEVEL - shown["warning"]]:
        lines.append(_command("warning", message, repo_uri(report, path), line))
    closed = closed_failures(report)
    scanned = {r.path for r in report.results}
    for path, sentence in closed:
        lines.append(_command("error", sentence, repo_uri(report, path) if path in scanned else None,
                              title="rocm-audit: fails closed"))
    new_count, known = report.counts()
    against = f" (compared with {report.gate.against})" if report.gate else ""
    totals = view.summary(report)
    summary = (f"rocm-audit: {len(fails)} finding(s) fail the check (at or above "
               f"{fail_on.label if fail_on is not None else 'never'}); {totals.totals_text}, "
               f"{totals.breaking_text}: {new_count} new, {known} known{against}; verdict {report.verdict}")
    if closed:
        summary += f"; {len(closed)} more reason(s) the check fails (not scanned completely, gate settings)"
    if left_out:
        summary += f"; {len(left_out)} more new finding(s) not annotated (GitHub shows 10 per level), listed in the log"
    lines.append(_command("notice", summary, title="rocm-audit"))
    for i in left_out:
        f = report.findings[i]
        where = f"{repo_uri(report, f.path)}:{f.span.line}" if f.span.line else repo_uri(report, f.path)
        lines.append(log_line(f"{where}: {f.rule_id} {f.severity.label}: {f.message}"))
    for path, message in report.errors:
        lines.append(log_line(f"rocm-audit: could not scan {repo_uri(report, path)}: {message}"))
    return "\n".join(lines) + "\n"
