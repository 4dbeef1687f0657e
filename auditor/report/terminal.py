"""Report -> rich terminal summary. The only module (with the progress bar in cli) that uses rich."""
from __future__ import annotations

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from auditor.types import CATEGORIES, Report, Severity

VERDICT_STYLE = {"ready": "bold green", "needs-port": "bold yellow", "blocked": "bold red"}
SEVERITY_STYLE = {
    Severity.CRITICAL: "bold red", Severity.HIGH: "red", Severity.MEDIUM: "yellow",
    Severity.LOW: "cyan", Severity.INFO: "dim",
}
TOP_FINDINGS = 15


def render_terminal(report: Report, console: Console, quiet: bool = False) -> None:
    rules = report.rules
    live = [f for f in report.findings if not f.guarded]
    guarded = len(report.findings) - len(live)
    headline = Text.assemble(
        ("Verdict: ", "bold"), (report.verdict.upper(), VERDICT_STYLE[report.verdict]), "  ",
        (report.verdict_reason.split(": ", 1)[-1], ""),
    )
    facts = Text(
        f"{len(report.results)} files scanned · {len(live)} findings"
        f" ({guarded} guarded, {report.suppressed} suppressed)"
        f" · HIPIFY coverage {report.coverage.percent:.1f}%"
        f" · effort {report.effort.low_days:g}-{report.effort.high_days:g} engineer-days"
    )
    parts = [headline, facts]
    if report.vendored:
        shown = ", ".join(report.vendored[:3]) + (" …" if len(report.vendored) > 3 else "")
        parts.append(Text(f"vendored code not scanned: {shown} (--include-vendored scans it)", style="dim"))
    console.print(Panel(Group(*parts), title=f"rocm-audit · {report.root}", expand=False))
    if quiet:
        _errors(report, console)
        return
    if live:
        console.print(_counts_table(report))
        console.print(_top_table(report))
    if len(report.components) > 1:
        table = Table(title="Components", title_justify="left")
        table.add_column("path")
        table.add_column("verdict")
        table.add_column("ROCm build")
        table.add_column("reason", overflow="fold")
        for c in report.components:
            table.add_row(c.path + (" (optional)" if c.optional else ""),
                          Text(c.verdict, VERDICT_STYLE[c.verdict]), "yes" if c.rocm_build else "no",
                          c.reason.split(": ", 1)[-1])
        console.print(table)
    _errors(report, console)
    del rules


def _counts_table(report: Report) -> Table:
    severities = sorted(Severity, reverse=True)
    table = Table(title="Findings by category and severity (guarded excluded)", title_justify="left")
    table.add_column("category")
    for sev in severities:
        table.add_column(sev.label, justify="right", style=SEVERITY_STYLE[sev])
    counts: dict[str, dict[Severity, int]] = {}
    for f in report.findings:
        if f.guarded:
            continue
        category = report.rules[f.rule_id].category if f.rule_id in report.rules else "other"
        counts.setdefault(category, {}).setdefault(f.severity, 0)
        counts[category][f.severity] += 1
    for category in CATEGORIES:
        if category in counts:
            table.add_row(category, *(str(counts[category].get(s, "")) for s in severities))
    return table


def _top_table(report: Report) -> Table:
    """The worst rules, one row each: how many sites, where the first is, what to use instead."""
    worst = sorted(
        (f for f in report.findings if not f.guarded and f.severity > Severity.INFO),
        key=lambda f: (-f.severity, f.optional, f.path, f.span.line or 0),
    )
    by_rule: dict[str, list] = {}
    for f in worst:
        by_rule.setdefault(f.rule_id, []).append(f)
    shown = list(by_rule.items())[:TOP_FINDINGS]
    table = Table(
        title=f"Worst findings: {len(shown)} of {len(by_rule)} rules, {len(worst)} sites "
              "(rocm-audit rule ID explains one)",
        title_justify="left",
    )
    table.add_column("severity", no_wrap=True)
    table.add_column("rule", no_wrap=True)
    table.add_column("sites", justify="right")
    table.add_column("first at", no_wrap=True, overflow="ellipsis", max_width=40)
    table.add_column("ROCm alternative", overflow="fold", ratio=1)
    for rule_id, sites in shown:
        rule = report.rules.get(rule_id)
        first = sites[0]
        where = f"{first.path}:{first.span.line}" if first.span.line else first.path
        table.add_row(
            Text(first.severity.label, SEVERITY_STYLE[first.severity]),
            rule_id, str(len(sites)), where,
            _short((rule.rocm_alternative if rule else "") or ""),
        )
    return table


def _short(text: str, limit: int = 90) -> str:
    first = text.split("; ")[0].rstrip(".")
    return first if len(first) <= limit else first[: limit - 1] + "…"


def _errors(report: Report, console: Console) -> None:
    if not report.errors:
        return
    console.print(f"[yellow]{len(report.errors)} file(s) could not be scanned fully:[/yellow]")
    for path, message in report.errors[:10]:
        console.print(f"  {path}: {message}", markup=False, highlight=False)
    if len(report.errors) > 10:
        console.print(f"  … and {len(report.errors) - 10} more (see --format json)")
