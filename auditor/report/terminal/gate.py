"""The terminal's gate lines: what is new against a baseline or a git base, what fails the run, the one-line
summary of a quiet (pre-commit) run, and warnings."""
from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from auditor.util.escape import log_line
from auditor.report import view
from auditor.report.terminal.lines import SEVERITY_STYLE
from auditor.report.text import counted
from auditor.report.terminal.lines import markup_safe as _m
from auditor.judge.incomplete import closed_failures
from auditor.types import Report, Severity


def strict_failure(report: Report) -> str:
    """Why a --strict run fails although nothing new was found, or ""."""
    gate = report.gate
    if gate is None or not gate.strict or not gate.gone:
        return ""
    return (f"rocm-audit: --strict: failed, the baseline lists {sum(n for *_, n in gate.gone)} finding(s) that are "
            "gone; run with --update-baseline and commit the baseline")


def gate_summary(report: Report, fail_on: Severity | None) -> str:
    new, known = report.counts()
    fails = len(report.failing(fail_on))
    threshold = fail_on.label if fail_on is not None else "never"
    against = report.gate.against if report.gate else "nothing (no --baseline or --diff-base: every finding counts)"
    return (f"{fails} fail the check (new, at or above {threshold}) · {new} new · {known} known · "
            f"compared with {against}")


def _where(report: Report, index: int) -> str:
    f = report.findings[index]
    if f.span.line is None:
        return f.path
    return f"{f.path}:{f.span.line}:{f.span.column}" if f.span.column else f"{f.path}:{f.span.line}"


def new_table(report: Report, console: Console, fail_on: Severity | None) -> None:
    """With a baseline or a git base: the new findings, each on its own row."""
    if report.gate is None:
        return
    fails = set(report.failing(fail_on))
    new = [i for i in report.gated() if report.findings[i].new]
    if not new:
        return
    new.sort(key=lambda i: (i not in fails, -report.findings[i].severity, report.findings[i].sort_key()))
    table = Table(title=f"New findings ({len(new)}; compared with {_m(report.gate.against)})", title_justify="left")
    table.add_column("severity", no_wrap=True)
    table.add_column("rule", no_wrap=True)
    table.add_column("where", overflow="fold")
    table.add_column("message", overflow="fold", ratio=1)
    for i in new[:50]:
        f = report.findings[i]
        table.add_row(Text(f.severity.label, SEVERITY_STYLE[f.severity]), f.rule_id, _m(_where(report, i)),
                      Text(f.message))
    console.print(table)
    if len(new) > 50:
        console.print(f"  … and {len(new) - 50} more new findings (see --format json)")


def concise(report: Report, console: Console, fail_on: Severity | None) -> None:
    fails = report.failing(fail_on)
    for i in fails:
        f = report.findings[i]
        rule = report.rules.get(f.rule_id)
        name = f" {rule.name}" if rule else ""
        console.print(log_line(f"{_where(report, i)}: {f.rule_id}{name} [{f.severity.label}] {f.message}"),
                      markup=False, highlight=False, soft_wrap=True)
    new, known = report.counts()
    threshold = fail_on.label if fail_on is not None else "never"
    scope = "new " if report.gate else ""
    closed = closed_failures(report)
    head = (f"rocm-audit: {len(fails)} finding(s) at or above {threshold} would break on ROCm" if fails
            else strict_failure(report)
            or (f"rocm-audit: failed closed: {len(closed)} reason(s) below" if closed else "")
            or f"rocm-audit: ok, nothing {scope}at or above {threshold}")
    detail = (f"{counted(len(report.results), 'file')} · {view.summary(report).breaking_text} · {new} new · "
              f"{known} known · {report.suppressed} suppressed")
    if report.gate:
        detail += f" · compared with {report.gate.against}"
    console.print(f"{head} ({detail})", markup=False, highlight=False, soft_wrap=True,
                  style="bold red" if fails or closed or strict_failure(report) else None)
    if fails:
        console.print("  rocm-audit rule ID explains a rule; `# rocm-audit: ignore[ID]` on the line accepts it",
                      markup=False, highlight=False, soft_wrap=True)
    failing_paths = {path for path, _ in report.unscanned}
    for _path, sentence in closed:
        console.print(sentence, markup=False, highlight=False, soft_wrap=True, style="bold red")
    for path, message in report.errors:
        if path not in failing_paths:
            console.print(log_line(f"{path}: could not scan: {message}"), markup=False, highlight=False,
                          soft_wrap=True)
    if partial := view.summary(report).partial_text:
        console.print(log_line(f"rocm-audit: {partial}"), markup=False, highlight=False, soft_wrap=True)
    warnings(report, console)


def warnings(report: Report, console: Console) -> None:
    for path, line, message in report.warnings:
        console.print(log_line(f"{path}:{line}: warning: {message}"),
                      markup=False, highlight=False, soft_wrap=True, style="yellow")
    if report.gate and report.gate.gone:
        missing = sum(n for *_, n in report.gate.gone)
        console.print(f"the baseline lists {missing} finding(s) no longer found "
                      "(rocm-audit check --baseline FILE --update-baseline removes them)",
                      markup=False, highlight=False, soft_wrap=True, style="yellow")
