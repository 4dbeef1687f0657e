"""Report -> rich terminal summary. The only module (with the progress bar in cli) that uses rich."""
from __future__ import annotations

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from auditor.gate import counts, failing, gated
from auditor.suppress import unknown_suppression_message, unknown_suppressions
from auditor.report import view
from auditor.types import Report, Severity

VERDICT_STYLE = {"ready": "bold green", "needs-port": "bold yellow", "blocked": "bold red"}
SEVERITY_STYLE = {
    Severity.CRITICAL: "bold red", Severity.HIGH: "red", Severity.MEDIUM: "yellow",
    Severity.LOW: "cyan", Severity.INFO: "dim",
}
TOP_FINDINGS = 15
TOP_COVERAGE = 10
TOP_HOTSPOTS = 5


def render_terminal(report: Report, console: Console, quiet: bool = False,
                    fail_on: Severity | None = Severity.HIGH) -> None:
    if quiet:   # what the pre-commit hook shows: a line per finding that fails the run, and one summary line
        _concise(report, console, fail_on)
        return
    s = view.summary(report)
    headline = Text.assemble(("Verdict: ", "bold"), (s.verdict.upper(), VERDICT_STYLE[s.verdict]), "  ", s.reason)
    facts = Text(
        f"{s.files} files ({s.lines:,} lines) scanned · {s.findings} findings"
        f" ({s.guarded} guarded, {s.suppressed} suppressed)"
        f" · HIPIFY coverage {s.coverage_text} · effort {s.effort_text}"
    )
    parts = [headline, facts]
    if s.by_disposition:
        parts.append(Text("by disposition: " + s.disposition_text))
    effort = view.effort_rows(report)
    if effort:
        parts.append(Text("effort by part: " + ", ".join(f"{r.label} {r.low:g}-{r.high:g} d" for r in effort[:5])
                          + (" …" if len(effort) > 5 else "") + " (assumptions: --format json or the HTML report)",
                          style="dim"))
    if s.vendored:
        shown = ", ".join(s.vendored[:3]) + (" …" if len(s.vendored) > 3 else "")
        parts.append(Text(f"vendored code not scanned: {shown} (--include-vendored scans it)", style="dim"))
    if report.gate is not None:
        parts.append(Text(_gate_summary(report, fail_on), style="bold red" if failing(report, fail_on) else "green"))
    console.print(Panel(Group(*parts), title=f"rocm-audit · {report.root}", expand=False))
    if s.findings:
        console.print(_counts_table(report))
        console.print(_top_table(report))
        hot = view.hotspots(report, TOP_HOTSPOTS)
        if hot:
            console.print(_hotspot_table(hot))
    _new_table(report, console, fail_on)
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
    render_coverage(report, console)
    _errors(report, console)
    _warnings(report, console)


def _counts_table(report: Report) -> Table:
    severities = sorted(Severity, reverse=True)
    table = Table(title="Findings by category and severity (guarded excluded)", title_justify="left")
    table.add_column("category")
    for sev in severities:
        table.add_column(sev.label, justify="right", style=SEVERITY_STYLE[sev])
    for category, counts in view.category_counts(report):
        table.add_row(category, *(str(counts.get(s.label, "")) for s in severities))
    return table


def _top_table(report: Report) -> Table:
    """The worst rules, one row each: how many sites, where the first is, what to use instead."""
    worst = sorted(
        (f for f in report.findings if not f.guarded and f.severity > Severity.INFO and f.disposition == "live"),
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


def _hotspot_table(hot) -> Table:
    table = Table(title="Costliest files (findings and HIPIFY review; validation not included)", title_justify="left")
    table.add_column("file", overflow="fold")
    table.add_column("findings", justify="right")
    table.add_column("engineer-hours", justify="right")
    for h in hot:
        table.add_row(h.path, str(h.findings), f"{h.low_hours:.1f}-{h.high_hours:.1f}")
    return table


def render_coverage(report: Report, console: Console, all_names: bool = False) -> None:
    """Total, the files with the most unconverted references, the most frequent unconverted names
    (`all_names`: every file and name, as `rocm-audit coverage` shows them)."""
    cov = report.coverage
    limit = None if all_names else TOP_COVERAGE
    if cov.converted + cov.unconverted == 0:
        if all_names:
            console.print("HIPIFY coverage: no CUDA references found (100% by definition)", highlight=False)
        return
    translators = sorted({f.translator for f in cov.files})
    console.print(
        f"[bold]HIPIFY coverage[/bold]: {cov.converted} of {cov.converted + cov.unconverted} CUDA references "
        f"convert ({cov.percent:.1f}%), {cov.clean_percent:.1f}% clean after HIPIFY (no warp-size, PTX or FP8 "
        f"hazard in the same function); translator: {', '.join(translators)}",
        highlight=False,
    )
    worst = sorted((f for f in cov.files if f.unconverted), key=lambda f: (-f.unconverted, f.path))[:limit]
    if worst:
        table = Table(title=f"Files with the most unconverted references ({len(worst)} of "
                            f"{sum(1 for f in cov.files if f.unconverted)})", title_justify="left")
        for column, justify in (("file", "left"), ("unconverted", "right"), ("converted", "right"),
                                ("coverage", "right"), ("translator", "left")):
            table.add_column(column, justify=justify, overflow="fold")
        for f in worst:
            table.add_row(f.path, str(f.unconverted), str(f.converted), f"{f.percent:.1f}%", f.translator)
        console.print(table)
    if cov.unconverted_names:
        table = Table(title="Unconverted CUDA APIs (no HIP equivalent)", title_justify="left")
        table.add_column("name")
        table.add_column("refs", justify="right")
        table.add_column("first at", overflow="fold")
        for name, count, locations in cov.unconverted_names[:limit]:
            shown = locations if all_names else locations[:2]
            table.add_row(name, str(count), ", ".join(shown) + (" …" if count > len(shown) else ""))
        console.print(table)
    if cov.disagreements:
        shown = ", ".join(f"{name} ({'HIPIFY only' if hipify else 'PyTorch only'})"
                          for name, hipify, _ in cov.disagreements[:5])
        console.print(f"PyTorch's hipify and HIPIFY disagree on {len(cov.disagreements)} name(s) in "
                      f"torch-hipify files: {shown}", markup=False, highlight=False)
    if cov.table:
        console.print(cov.table[0] + " (rocm-audit coverage --table-info)", style="dim", markup=False)


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


def _gate_summary(report: Report, fail_on: Severity | None) -> str:
    new, known = counts(report)
    fails = len(failing(report, fail_on))
    threshold = fail_on.label if fail_on is not None else "never"
    against = report.gate.against if report.gate else "nothing (no --baseline or --diff-base: every finding counts)"
    return (f"{fails} fail the check (new, at or above {threshold}) · {new} new · {known} known · "
            f"compared with {against}")


def _where(report: Report, index: int) -> str:
    f = report.findings[index]
    if f.span.line is None:
        return f.path
    return f"{f.path}:{f.span.line}:{f.span.column}" if f.span.column else f"{f.path}:{f.span.line}"


def _new_table(report: Report, console: Console, fail_on: Severity | None) -> None:
    """With a baseline or a git base: the new findings, each on its own row."""
    if report.gate is None:
        return
    fails = set(failing(report, fail_on))
    new = [i for i in gated(report) if report.is_new(i)]
    if not new:
        return
    new.sort(key=lambda i: (i not in fails, -report.findings[i].severity, report.findings[i].sort_key()))
    table = Table(title=f"New findings ({len(new)}; compared with {report.gate.against})", title_justify="left")
    table.add_column("severity", no_wrap=True)
    table.add_column("rule", no_wrap=True)
    table.add_column("where", overflow="fold")
    table.add_column("message", overflow="fold", ratio=1)
    for i in new[:50]:
        f = report.findings[i]
        table.add_row(Text(f.severity.label, SEVERITY_STYLE[f.severity]), f.rule_id, _where(report, i),
                      Text(f.message))
    console.print(table)
    if len(new) > 50:
        console.print(f"  … and {len(new) - 50} more new findings (see --format json)")


def _concise(report: Report, console: Console, fail_on: Severity | None) -> None:
    fails = failing(report, fail_on)
    for i in fails:
        f = report.findings[i]
        rule = report.rules.get(f.rule_id)
        name = f" {rule.name}" if rule else ""
        console.print(f"{_where(report, i)}: {f.rule_id}{name} [{f.severity.label}] {f.message}",
                      markup=False, highlight=False, soft_wrap=True)
    new, known = counts(report)
    threshold = fail_on.label if fail_on is not None else "never"
    head = (f"rocm-audit: {len(fails)} finding(s) at or above {threshold} would break on ROCm" if fails
            else f"rocm-audit: ok, nothing {'new ' if report.gate else ''}at or above {threshold}")
    detail = f"{len(report.results)} files · {new} new · {known} known · {report.suppressed} suppressed"
    if report.gate:
        detail += f" · compared with {report.gate.against}"
    console.print(f"{head} ({detail})", markup=False, highlight=False, soft_wrap=True,
                  style="bold red" if fails else None)
    if fails:
        console.print("  rocm-audit rule ID explains a rule; `# rocm-audit: ignore[ID]` on the line accepts it",
                      markup=False, highlight=False, soft_wrap=True)
    for path, message in report.errors:
        console.print(f"{path}: could not scan: {message}", markup=False, highlight=False, soft_wrap=True)
    _warnings(report, console)


def _warnings(report: Report, console: Console) -> None:
    for path, line, rule_id in unknown_suppressions(report.results):
        console.print(f"{path}:{line}: warning: {unknown_suppression_message(rule_id)}",
                      markup=False, highlight=False, soft_wrap=True, style="yellow")
    if report.gate and report.gate.gone:
        missing = sum(n for *_, n in report.gate.gone)
        console.print(f"the baseline lists {missing} finding(s) no longer found "
                      "(rocm-audit check --baseline FILE --update-baseline removes them)",
                      markup=False, highlight=False, soft_wrap=True, style="yellow")
