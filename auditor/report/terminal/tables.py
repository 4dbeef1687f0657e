"""The terminal's tables: findings by category and severity, the costliest files, HIPIFY coverage, and the
files that could not be scanned."""
from __future__ import annotations

from rich.console import Console
from rich.table import Table

from auditor.report import view
from auditor.util.escape import log_line
from auditor.report.terminal.lines import SEVERITY_STYLE
from auditor.report.terminal.lines import markup_safe as _m
from auditor.types import Report, Severity

TOP_COVERAGE = 10


def counts_table(report: Report) -> Table:
    severities = sorted(Severity, reverse=True)
    table = Table(title="What would break on ROCm, by category and severity", title_justify="left")
    table.add_column("category")
    for sev in severities:
        table.add_column(sev.label, justify="right", style=SEVERITY_STYLE[sev])
    for category, counts in view.category_counts(report):
        table.add_row(category, *(str(counts.get(s.label, "")) for s in severities))
    return table


def hotspot_table(hot) -> Table:
    table = Table(title="Costliest files (findings and HIPIFY review; validation not included)", title_justify="left")
    table.add_column("file", overflow="fold")
    table.add_column("live findings", justify="right")
    table.add_column("cost of")
    table.add_column("engineer-hours", justify="right")
    for h in hot:
        table.add_row(_m(h.path), str(h.findings), h.cost_of, f"{h.low_hours:.1f}-{h.high_hours:.1f}")
    return table


def render_coverage(report: Report, console: Console, all_names: bool = False) -> None:
    """Total, the files with the most unconverted references, the most frequent unconverted names
    (`all_names`: every file and name, as `rocm-audit coverage` shows them)."""
    cov = report.coverage
    limit = None if all_names else TOP_COVERAGE
    if cov.converted + cov.unconverted == 0:
        if all_names:
            console.print("HIPIFY coverage: n/a (no CUDA API references)", highlight=False)
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
        for column, right in (("file", False), ("unconverted", True), ("converted", True),
                              ("coverage", True), ("translator", False)):
            table.add_column(column, justify="right" if right else "left", overflow="fold")
        for f in worst:
            table.add_row(_m(f.path), str(f.unconverted), str(f.converted), f"{f.percent:.1f}%", f.translator)
        console.print(table)
    if cov.unconverted_names:
        table = Table(title="Unconverted CUDA APIs (no HIP equivalent)", title_justify="left")
        table.add_column("name")
        table.add_column("refs", justify="right")
        table.add_column("first at", overflow="fold")
        for name, count, locations in cov.unconverted_names[:limit]:
            shown = locations if all_names else locations[:2]
            table.add_row(_m(name), str(count), _m(", ".join(shown)) + (" …" if count > len(shown) else ""))
        console.print(table)
    if cov.disagreements:
        names = ", ".join(f"{name} ({'HIPIFY only' if hipify else 'PyTorch only'})"
                          for name, hipify, _ in cov.disagreements[:5])
        console.print(f"PyTorch's hipify and HIPIFY disagree on {len(cov.disagreements)} name(s) in "
                      f"torch-hipify files: {names}", markup=False, highlight=False)
    if cov.table:
        console.print(cov.table[0] + " (rocm-audit coverage --table-info)", style="dim", markup=False)


def errors(report: Report, console: Console) -> None:
    if not report.errors:
        return
    console.print(f"[yellow]{len(report.errors)} file(s) could not be scanned fully:[/yellow]")
    for path, message in report.errors[:10]:
        console.print(log_line(f"  {path}: {message}"), markup=False, highlight=False)
    if len(report.errors) > 10:
        console.print(f"  … and {len(report.errors) - 10} more (see --format json)")
