"""Report -> rich terminal summary. The only module (with the progress bar in cli) that uses rich."""
from __future__ import annotations

import textwrap

from rich.console import Console
from rich.table import Table
from rich.markup import escape as rich_escape
from rich.text import Text

from auditor.report import plan, text, view
from auditor.report.escape import visible
from auditor.types import Report, Severity

VERDICT_STYLE = {"ready": "bold green", "needs-port": "bold yellow", "blocked": "bold red"}
SEVERITY_STYLE = {
    Severity.CRITICAL: "bold red", Severity.HIGH: "red", Severity.MEDIUM: "yellow",
    Severity.LOW: "cyan", Severity.INFO: "dim",
}
PLAN_ITEMS = 6          # in the summary; the HTML page and --verbose show plan.PLAN_ITEMS
TOP_COMPONENTS = 6
TOP_OTHER_RULES = 8
SUMMARY_LINES = 60      # what the summary aims to fit in, for any tree
TOP_COVERAGE = 10
TOP_HOTSPOTS = 10


def render_terminal(report: Report, console: Console, quiet: bool = False,
                    fail_on: Severity | None = Severity.HIGH, verbose: bool = False) -> None:
    """Verdict, the migration plan, components, the other findings one line a rule, coverage: about 60 lines
    for any tree and readable at 80 columns. `verbose` adds every group and the full tables."""
    if quiet:   # what the pre-commit hook shows: a line per finding that fails the run, and one summary line
        _concise(report, console, fail_on)
        return
    out = _Lines(console)
    s = view.summary(report)
    out.rule(f"rocm-audit · {report.root}")
    out.wrap(text.sentence(s.reason), first=Text.assemble(("Verdict: ", "bold"),
                                                          (s.verdict.upper(), VERDICT_STYLE[s.verdict]), " "))
    out.wrap(f"Effort {s.effort_text} · {s.totals_text} in {s.files:,} files, {s.lines:,} lines · "
             f"HIPIFY coverage {s.coverage_text}")
    if s.by_disposition:
        out.wrap("By disposition: " + s.disposition_text, style="dim")
    if s.vendored:
        shown = ", ".join(s.vendored[:3]) + (" …" if len(s.vendored) > 3 else "")
        out.wrap(f"Vendored code not scanned: {shown} (--include-vendored scans it)", style="dim")
    if report.gate is not None:
        out.wrap(_gate_summary(report, fail_on), style="bold red" if report.failing(fail_on) else "green")
        if strict_failure(report):
            out.wrap(strict_failure(report), style="bold red")
    shown_rules = _plan(report, out, PLAN_ITEMS if not verbose else plan.PLAN_ITEMS)
    _components(report, out, verbose)
    _other_rules(report, out, shown_rules, verbose)
    if verbose:
        _groups(report, out)
        if s.findings > s.guarded:
            console.print(_counts_table(report))
            hot = view.hotspots(report, TOP_HOTSPOTS)
            if hot:
                console.print(_hotspot_table(hot))
    _new_table(report, console, fail_on)
    if verbose:
        render_coverage(report, console)
    else:
        _coverage_line(report, out)
    _errors(report, console)
    _warnings(report, console)
    hints = ["rocm-audit rule ID explains a rule"]
    if not verbose:
        hints.append("--verbose lists every group")
    out.wrap(" · ".join(hints), style="dim")


class _Lines:
    """Plain lines wrapped at the console's width with a hanging indent: no table columns to squeeze."""

    def __init__(self, console: Console):
        self.console = console
        self.width = max(40, console.width)
        self.count = 0                       # lines printed so far

    def print(self, line: Text | str = "") -> None:
        self.console.print(line, soft_wrap=True, highlight=False)
        self.count += 1

    def rule(self, title: str) -> None:
        self.print(Text(text.cut(title, self.width), style="bold"))

    def blank(self) -> None:
        self.print()

    def wrap(self, body: str, indent: int = 0, first: Text | None = None, style: str | None = None,
             hang: int | None = None, lines: int | None = None) -> None:
        """`body` after `first`, continued `hang` columns in; at most `lines` lines, the last cut with "…"."""
        head = Text(" " * indent) + (first.copy() if first is not None else Text())
        hang = indent + 4 if hang is None else hang
        wrapped = textwrap.wrap(body, width=self.width, initial_indent=" " * len(head.plain),
                                subsequent_indent=" " * hang, break_on_hyphens=False,
                                break_long_words=False) or [""]
        if lines is not None and len(wrapped) > lines:
            wrapped = wrapped[:lines]
            last = wrapped[-1].rstrip(" ,;:.")
            wrapped[-1] = (last if len(last) < self.width else last[: self.width - 1]) + "…"
        self.print(head + Text(wrapped[0][len(head.plain):], style=style or ""))
        for line in wrapped[1:]:
            self.print(Text(line, style=style or ""))


def short_path(path: str, limit: int) -> str:
    """A path of at most `limit` characters: its start and its file name, the middle elided."""
    if len(path) <= limit:
        return path
    name = path.rsplit("/", 1)[-1]
    keep = limit - len(name) - 2
    return (path[:keep] + "…/" + name) if keep > 4 else "…" + path[-(limit - 1):]


def _days(low: float, high: float) -> str:
    return f"{low:g}-{high:g} d"


def _plan(report: Report, out: _Lines, limit: int) -> set[str]:
    p = plan.plan(report, limit)
    out.blank()
    s = view.summary(report)
    out.rule(f"Migration plan: {s.effort_text}")
    if not p.items:
        out.wrap("Nothing on the default install path needs porting.", indent=2)
    for n, w in enumerate(p.items, 1):
        first = Text.assemble(f"{n:>2}. ", (w.severity, SEVERITY_STYLE[Severity.parse(w.severity)]),
                              (" BLOCKS" if w.blocking else ""), " ")
        tail = f" ({w.rule_id}) · {_days(w.low_days, w.high_days)}"
        room = out.width - len(first.plain) - len(tail)
        title = w.title.split("; ")[0]
        if len(title) > room and len(title.split(" (")[0]) >= 24:
            title = title.split(" (")[0]
        out.wrap((title if len(title) <= room else w.rule_name) + tail, first=first, hang=4, lines=1)
        count = f"{w.sites:,} site{'s' if w.sites != 1 else ''} in {w.files:,} file{'s' if w.files != 1 else ''}: "
        path, n = w.top_files[0]
        more = f" ({n}) +{w.files - 1}" if w.files > 1 else ""
        out.wrap(count + short_path(path, out.width - 4 - len(count) - len(more)) + more, indent=4, hang=6,
                 style="dim", lines=1)
        if w.fix:
            out.wrap(f"fix: {w.fix}", indent=4, hang=9, lines=1)
    rest = []
    if p.more:
        rest.append(f"{p.more} smaller item{'s' if p.more != 1 else ''} {_days(p.more_low_days, p.more_high_days)}")
    if p.review_days[1]:
        rest.append(f"HIPIFY run and review of {p.review_files:,} files {_days(*p.review_days)}")
    if p.validation_days[1]:
        soft = f" ({p.verify_on_hardware} items to verify)" if p.verify_on_hardware else ""
        rest.append(f"validation on AMD hardware{soft} {_days(*p.validation_days)}")
    if rest:
        out.wrap("+ " + " · ".join(rest), indent=2, hang=4)
    return {w.rule_id for w in p.items}


def _components(report: Report, out: _Lines, verbose: bool) -> None:
    rows = plan.components(report)
    if len(rows) < 2:
        return
    out.blank()
    out.rule(f"Components ({len(rows)})")
    limit = None if verbose else TOP_COMPONENTS
    for c in rows[:limit]:
        first = Text.assemble("  ", (f"{c.verdict:<10}", VERDICT_STYLE.get(c.verdict, "")), " ")
        optional = " (optional)" if c.optional else ""
        install = f" · install: {c.install}" if c.install else ""
        out.wrap(f"{c.path}{optional} · {_days(c.low_days, c.high_days)} · {c.findings:,} findings · "
                 f"ROCm path: {c.rocm_path}{install}", first=first, hang=13)
    if limit is not None and len(rows) > limit:
        out.wrap(f"… {len(rows) - limit} more (--verbose lists them)", indent=2, style="dim")


def _other_rules(report: Report, out: _Lines, in_plan: set[str], verbose: bool) -> None:
    """The findings the plan does not cover, one line a rule (severity, rule, count, first site), the
    alternative on its own indented line; what is not work (guarded, optional, tests) in one line."""
    by_rule: dict[str, list[int]] = {}
    not_work: dict[str, int] = {}
    for i, f in enumerate(report.findings):
        kind = plan.disposition(report, f)
        if kind in plan.WORK and f.severity > Severity.INFO and not plan.peripheral(f.path):
            if f.rule_id not in in_plan:
                by_rule.setdefault(f.rule_id, []).append(i)
        else:
            label = "tests, examples, CI" if kind in plan.WORK and plan.peripheral(f.path) else kind
            if kind in plan.WORK and f.severity == Severity.INFO:
                label = "info"
            not_work[label] = not_work.get(label, 0) + 1
    ordered = sorted(by_rule.items(), key=lambda kv: (-max(report.findings[i].severity for i in kv[1]),
                                                      -len(kv[1]), kv[0]))
    # what is left of the summary's line budget, after the heading, the tail lines and the coverage line
    limit = None if verbose else max(3, min(TOP_OTHER_RULES, (SUMMARY_LINES - out.count - 8) // 2))
    if ordered:
        out.blank()
        out.rule(f"Smaller items: {len(ordered)} rule{'s' if len(ordered) != 1 else ''}, "
                 f"{sum(len(v) for _, v in ordered):,} sites")
    for rule_id, indexes in ordered[:limit]:
        first = report.findings[min(indexes, key=lambda i: report.findings[i].sort_key())]
        worst = max(report.findings[i].severity for i in indexes)
        rule = report.rules.get(rule_id)
        head = Text.assemble("  ", (f"{worst.label:<8}", SEVERITY_STYLE[worst]), f" {rule_id} ")
        name = rule.name if rule else rule_id
        lead = f"{name} · {len(indexes):,} × · "
        out.wrap(lead + short_path(view.where(first), out.width - len(head.plain) - len(lead)), first=head, hang=17,
                 lines=1)
        alternative = text.plain(rule.rocm_alternative or "") if rule else ""
        if alternative:
            out.wrap(f"→ {alternative}", indent=17, hang=19, style="dim", lines=1)
    if limit is not None and len(ordered) > limit:
        out.wrap(f"… {len(ordered) - limit} more rules (--verbose lists them)", indent=2, style="dim")
    if not_work:
        out.wrap("Not counted as work: " + ", ".join(f"{n:,} {label.replace('-', ' ')}" for label, n in
                                                     sorted(not_work.items(), key=lambda kv: -kv[1])),
                 indent=0, hang=2, style="dim")


def _groups(report: Report, out: _Lines) -> None:
    """--verbose: every group, one line each, under its rule."""
    found = plan.groups(report)
    out.blank()
    out.rule(f"All finding groups ({len(found):,})")
    for g in sorted(found, key=lambda g: (g.rule_id, -g.severity, g.key)):
        first = report.findings[g.first]
        where = f"{g.key} in {len(g.paths)} files, first {view.where(first)}" if g.across_files else view.where(first)
        disposition = "" if g.disposition in plan.WORK else f" [{g.disposition}]"
        head = Text.assemble("  ", (f"{g.severity.label:<8}", SEVERITY_STYLE[g.severity]), f" {g.rule_id} ")
        out.wrap(f"{g.count:,} × {where}{disposition}", first=head, hang=17)


def _coverage_line(report: Report, out: _Lines) -> None:
    cov = report.coverage
    if cov.converted + cov.unconverted == 0:
        return
    names = ", ".join(f"{name} ({count})" for name, count, _ in cov.unconverted_names[:4])
    more = " …" if len(cov.unconverted_names) > 4 else ""
    out.blank()
    out.wrap(f"HIPIFY coverage: {cov.converted:,} of {cov.converted + cov.unconverted:,} CUDA references convert "
             f"({cov.percent:.1f}%), {cov.clean_percent:.1f}% clean after HIPIFY"
             + (f"; unconverted: {names}{more}" if names else ""), hang=2)


def _counts_table(report: Report) -> Table:
    severities = sorted(Severity, reverse=True)
    table = Table(title="Findings by category and severity (guarded excluded)", title_justify="left")
    table.add_column("category")
    for sev in severities:
        table.add_column(sev.label, justify="right", style=SEVERITY_STYLE[sev])
    for category, counts in view.category_counts(report):
        table.add_row(category, *(str(counts.get(s.label, "")) for s in severities))
    return table


def _hotspot_table(hot) -> Table:
    table = Table(title="Costliest files (findings and HIPIFY review; validation not included)", title_justify="left")
    table.add_column("file", overflow="fold")
    table.add_column("findings", justify="right")
    table.add_column("engineer-hours", justify="right")
    for h in hot:
        table.add_row(_m(h.path), str(h.findings), f"{h.low_hours:.1f}-{h.high_hours:.1f}")
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
        shown = ", ".join(f"{name} ({'HIPIFY only' if hipify else 'PyTorch only'})"
                          for name, hipify, _ in cov.disagreements[:5])
        console.print(f"PyTorch's hipify and HIPIFY disagree on {len(cov.disagreements)} name(s) in "
                      f"torch-hipify files: {shown}", markup=False, highlight=False)
    if cov.table:
        console.print(cov.table[0] + " (rocm-audit coverage --table-info)", style="dim", markup=False)


def _errors(report: Report, console: Console) -> None:
    if not report.errors:
        return
    console.print(f"[yellow]{len(report.errors)} file(s) could not be scanned fully:[/yellow]")
    for path, message in report.errors[:10]:
        console.print(f"  {path}: {message}", markup=False, highlight=False)
    if len(report.errors) > 10:
        console.print(f"  … and {len(report.errors) - 10} more (see --format json)")


def strict_failure(report: Report) -> str:
    """Why a --strict run fails although nothing new was found, or ""."""
    gate = report.gate
    if gate is None or not gate.strict or not gate.gone:
        return ""
    return (f"rocm-audit: --strict: failed, the baseline lists {sum(n for *_, n in gate.gone)} finding(s) that are "
            "gone; run with --update-baseline and commit the baseline")


def _gate_summary(report: Report, fail_on: Severity | None) -> str:
    new, known = report.counts()
    fails = len(report.failing(fail_on))
    threshold = fail_on.label if fail_on is not None else "never"
    against = report.gate.against if report.gate else "nothing (no --baseline or --diff-base: every finding counts)"
    return (f"{fails} fail the check (new, at or above {threshold}) · {new} new · {known} known · "
            f"compared with {against}")


def _m(text: str) -> str:
    """Text from the scanned tree in a place rich reads markup: `[bold]` or `x[/]y.py` shown as written."""
    return rich_escape(visible(str(text)))


def _where(report: Report, index: int) -> str:
    f = report.findings[index]
    if f.span.line is None:
        return f.path
    return f"{f.path}:{f.span.line}:{f.span.column}" if f.span.column else f"{f.path}:{f.span.line}"


def _new_table(report: Report, console: Console, fail_on: Severity | None) -> None:
    """With a baseline or a git base: the new findings, each on its own row."""
    if report.gate is None:
        return
    fails = set(report.failing(fail_on))
    new = [i for i, f in enumerate(report.findings) if not f.guarded and f.new]
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


def _concise(report: Report, console: Console, fail_on: Severity | None) -> None:
    fails = report.failing(fail_on)
    for i in fails:
        f = report.findings[i]
        rule = report.rules.get(f.rule_id)
        name = f" {rule.name}" if rule else ""
        console.print(f"{_where(report, i)}: {f.rule_id}{name} [{f.severity.label}] {f.message}",
                      markup=False, highlight=False, soft_wrap=True)
    new, known = report.counts()
    threshold = fail_on.label if fail_on is not None else "never"
    head = (f"rocm-audit: {len(fails)} finding(s) at or above {threshold} would break on ROCm" if fails
            else strict_failure(report) or f"rocm-audit: ok, nothing {'new ' if report.gate else ''}at or above {threshold}")
    detail = f"{len(report.results)} files · {new} new · {known} known · {report.suppressed} suppressed"
    if report.gate:
        detail += f" · compared with {report.gate.against}"
    console.print(f"{head} ({detail})", markup=False, highlight=False, soft_wrap=True,
                  style="bold red" if fails or strict_failure(report) else None)
    if fails:
        console.print("  rocm-audit rule ID explains a rule; `# rocm-audit: ignore[ID]` on the line accepts it",
                      markup=False, highlight=False, soft_wrap=True)
    for path, message in report.errors:
        console.print(f"{path}: could not scan: {message}", markup=False, highlight=False, soft_wrap=True)
    _warnings(report, console)


def _warnings(report: Report, console: Console) -> None:
    for path, line, message in report.warnings:
        console.print(f"{path}:{line}: warning: {message}",
                      markup=False, highlight=False, soft_wrap=True, style="yellow")
    if report.gate and report.gate.gone:
        missing = sum(n for *_, n in report.gate.gone)
        console.print(f"the baseline lists {missing} finding(s) no longer found "
                      "(rocm-audit check --baseline FILE --update-baseline removes them)",
                      markup=False, highlight=False, soft_wrap=True, style="yellow")
