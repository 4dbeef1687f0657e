"""`--statistics`, as ruff prints it: one line per rule with how many of its findings would break on ROCm (new
ones, with a gate), most first; then one line for what does not count."""
from __future__ import annotations

from collections import Counter

from auditor.report import view
from auditor.types import Report, Severity


def render_statistics(report: Report, fail_on: Severity | None) -> str:
    counts = Counter(report.findings[i].rule_id for i in report.gated() if report.findings[i].new is not False)
    failing = Counter(report.findings[i].rule_id for i in report.failing(fail_on))
    width = max((len(f"{n:,}") for n in counts.values()), default=1)
    lines = []
    for rule_id, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        rule = report.rules.get(rule_id)
        name = rule.name if rule else ""
        severity = f"[{rule.severity.label}]" if rule else ""
        fails = " fails" if failing[rule_id] else ""
        lines.append(f"{n:>{width},}\t{rule_id}\t{name}\t{severity}{fails}".rstrip())
    lines.append(f"# {view.summary(report).breaking_text}")
    return "\n".join(lines) + "\n"
