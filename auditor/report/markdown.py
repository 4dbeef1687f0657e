"""Report -> Markdown for a pull-request comment or a job summary: what this change adds first, then the
known findings folded away. Every text from the scanned repository is escaped."""
from __future__ import annotations

from auditor.report import plan, text, view
from auditor.util.escape import visible
from auditor.report.sarif import repo_uri
from auditor.judge.incomplete import closed_failures
from auditor.types import Report, Severity

MAX_ROWS = 50
PLAN_ITEMS = 5
MARKER = "<!-- rocm-audit -->"   # lets a workflow find and update its own comment


def _cell(text: str) -> str:
    """Plain text in a table cell: no markup, no HTML, no line breaks."""
    out = " ".join(visible(str(text)).split())
    for ch in "\\`*_[]<>|#~":
        out = out.replace(ch, "\\" + ch)
    return out


def _code(text: str) -> str:
    """A code span in a table cell: `|` would end the cell even inside it (GFM), a backtick the span."""
    text = " ".join(visible(str(text)).split()).replace("`", "'").replace("|", "\\|")
    return f"`{text}`" if text else ""


def _rows(report: Report, indexes: list[int], fails: set[int]) -> list[str]:
    rows = ["| | severity | rule | where | finding | ROCm alternative |", "|---|---|---|---|---|---|"]
    for i in indexes[:MAX_ROWS]:
        f = report.findings[i]
        rule = report.rules.get(f.rule_id)
        where = f"{repo_uri(report, f.path)}:{f.span.line}" if f.span.line else repo_uri(report, f.path)
        mark = "❌" if i in fails else ("🆕" if f.new else "")
        message = f"{f.message} ({f.detail})" if f.detail else f.message
        rows.append(f"| {mark} | {f.severity.label} | {f.rule_id} {_cell(rule.name if rule else '')} | {_code(where)} "
                    f"| {_cell(message)} | {_cell((rule.rocm_alternative if rule else None) or '')} |")
    if len(indexes) > MAX_ROWS:
        rows.append(f"\n… and {len(indexes) - MAX_ROWS} more (see the SARIF or JSON report).")
    return rows


def _plan(report: Report) -> list[str]:
    """The migration plan's work items, blocking first, as a numbered list (the top of a PR comment)."""
    p = plan.plan(report, PLAN_ITEMS)
    if not p.items:
        return []
    out = ["#### Migration plan", ""]
    for n, w in enumerate(p.items, 1):
        block = " **blocks ROCm**" if w.blocking else ""
        out.append(f"{n}. {w.severity}{block}: {_cell(w.title)} ({w.rule_id}), {w.sites} site(s) in {w.files} "
                   f"file(s), {w.low_days:g}-{w.high_days:g} d" + (f". Fix: {_cell(w.fix)}" if w.fix else ""))
    if p.more:
        out.append(f"\n… and {p.more} smaller item(s), {p.more_low_days:g}-{p.more_high_days:g} d.")
    out.append("")
    return out


def render_markdown(report: Report, fail_on: Severity | None = Severity.HIGH) -> str:
    fails = set(report.failing(fail_on))
    new_count, known = report.counts()
    live = report.gated()
    order = sorted(live, key=lambda i: (i not in fails, -report.findings[i].severity, report.findings[i].path,
                                        report.findings[i].span.line or 0))
    threshold = fail_on.label if fail_on is not None else "never"
    if report.gate is None:
        title = (f"❌ {len(fails)} finding(s) at or above `{threshold}` break on ROCm" if fails
                 else f"✅ nothing at or above `{threshold}` breaks on ROCm")
    else:
        title = (f"❌ this change adds {len(fails)} finding(s) at or above `{threshold}` that break on ROCm" if fails
                 else f"✅ this change adds nothing at or above `{threshold}` that breaks on ROCm")
    lines = [MARKER, f"### rocm-audit: {title}", ""]
    compared = f" compared with {_code(report.gate.against)}" if report.gate else ""
    s = view.summary(report)
    lines.append(f"{s.totals_text}: {s.breaking_text}; of those that would break, {new_count} new and {known} known"
                 f"{compared}. Verdict for the whole tree: "
                 f"**{s.verdict}** ({_cell(s.reason)}).")
    lines.append("")
    lines.append(f"Effort **{s.effort_text}** · HIPIFY coverage **{s.coverage_text}** · "
                 f"{text.counted(s.files, 'file')}, {text.counted(s.lines, 'line')} scanned")
    lines.append("")
    lines += _plan(report)
    new = [i for i in order if report.findings[i].new is not False]
    if new:
        lines.append("#### New" if report.gate else "#### Findings")
        lines += _rows(report, new, fails)
        lines.append("")
    old = [i for i in order if report.findings[i].new is False]
    if old:
        lines += [f"<details><summary>{len(old)} known finding(s)</summary>", ""]
        lines += _rows(report, old, fails)
        lines += ["", "</details>", ""]
    if report.gate and report.gate.gone:
        lines.append(f"{sum(n for *_, n in report.gate.gone)} baseline finding(s) are gone: "
                     "`rocm-audit check --update-baseline` removes them.")
        lines.append("")
    if closed := closed_failures(report):
        lines.append("#### Fails closed")
        lines += [f"- {_cell(sentence)}" for _path, sentence in closed]
        lines.append("")
    if report.warnings or report.errors:
        lines.append("#### Warnings")
        lines += [f"- {_code(f'{repo_uri(report, p)}:{n}')}: {_cell(message)}" for p, n, message in report.warnings]
        lines += [f"- {_code(repo_uri(report, p))}: could not be scanned: {_cell(m)}" for p, m in report.errors]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
