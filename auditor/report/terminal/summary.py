"""Report -> the terminal summary: the verdict, the migration plan, components, the other findings one line a
rule, coverage; about 60 lines for any tree and readable at 80 columns."""
from __future__ import annotations

from rich.console import Console
from rich.text import Text

from auditor.report import plan, text, view
from auditor.report.terminal.gate import concise, gate_summary, new_table, strict_failure, warnings
from auditor.report.terminal.lines import SEVERITY_STYLE, VERDICT_STYLE, Lines, short_path
from auditor.report.terminal.lines import days as _days
from auditor.report.terminal.tables import counts_table, errors, hotspot_table, render_coverage
from auditor.judge.incomplete import closed_failures
from auditor.types import Report, Severity

PLAN_ITEMS = 6          # in the summary; the HTML page and --verbose show plan.PLAN_ITEMS
TOP_COMPONENTS = 6
TOP_OTHER_RULES = 8
SUMMARY_LINES = 60      # what the summary aims to fit in, for any tree
TOP_HOTSPOTS = 10


def render_terminal(report: Report, console: Console, quiet: bool = False,
                    fail_on: Severity | None = Severity.HIGH, verbose: bool = False) -> None:
    """Verdict, the migration plan, components, the other findings one line a rule, coverage: about 60 lines
    for any tree and readable at 80 columns. `verbose` adds every group and the full tables."""
    if quiet:   # what the pre-commit hook shows: a line per finding that fails the run, and one summary line
        concise(report, console, fail_on)
        return
    out = Lines(console)
    s = view.summary(report)
    out.rule(f"rocm-audit · {report.root}")
    out.wrap(text.sentence(s.reason), first=Text.assemble(("Verdict: ", "bold"),
                                                          (s.verdict.upper(), VERDICT_STYLE[s.verdict]), " "))
    out.wrap(f"Effort {s.effort_text} · {s.totals_text} in {text.counted(s.files, 'file')}, "
             f"{text.counted(s.lines, 'line')} · HIPIFY coverage {s.coverage_text}")
    out.wrap(s.breaking_text + (f" (by disposition: {s.disposition_text})" if s.by_disposition else ""),
             style="dim")
    if s.partial_text:
        out.wrap(f"{s.partial_text} (--format json lists each with what was lost)", style="yellow")
    if s.vendored:
        shown = ", ".join(s.vendored[:3]) + (" …" if len(s.vendored) > 3 else "")
        out.wrap(f"Vendored code not scanned: {shown} (--include-vendored scans it)", style="dim")
    if report.gate is not None:
        out.wrap(gate_summary(report, fail_on), style="bold red" if report.failing(fail_on) else "green")
        if strict_failure(report):
            out.wrap(strict_failure(report), style="bold red")
    shown_rules = _plan(report, out, PLAN_ITEMS if not verbose else plan.PLAN_ITEMS)
    _components(report, out, verbose)
    _other_rules(report, out, shown_rules, verbose)
    if verbose:
        _groups(report, out)
        if s.breaking:
            console.print(counts_table(report))
            hot = view.hotspots(report, TOP_HOTSPOTS)
            if hot:
                console.print(hotspot_table(hot))
    new_table(report, console, fail_on)
    if verbose:
        render_coverage(report, console)
    else:
        _coverage_line(report, out)
    errors(report, console)
    for _path, sentence in closed_failures(report):
        console.print(sentence, markup=False, highlight=False, soft_wrap=True, style="bold red")
    warnings(report, console)
    hints = ["rocm-audit rule ID explains a rule"]
    if not verbose:
        hints.append("--verbose lists every group")
    out.wrap(" · ".join(hints), style="dim")


def _plan(report: Report, out: Lines, limit: int) -> set[str]:
    p = plan.plan(report, limit)
    out.blank()
    s = view.summary(report)
    out.rule(f"Migration plan: {s.days_text}")
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
            out.wrap(f"fix: {w.fix}", indent=4, hang=9)   # wrapped whole: a cut fix loses its point
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


def _components(report: Report, out: Lines, verbose: bool) -> None:
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


def _other_rules(report: Report, out: Lines, in_plan: set[str], verbose: bool) -> None:
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
            out.wrap(f"→ {alternative}", indent=17, hang=19, style="dim")
    if limit is not None and len(ordered) > limit:
        out.wrap(f"… {len(ordered) - limit} more rules (--verbose lists them)", indent=2, style="dim")
    if not_work:
        out.wrap("Not counted as work: " + ", ".join(f"{n:,} {label.replace('-', ' ')}" for label, n in
                                                     sorted(not_work.items(), key=lambda kv: -kv[1])),
                 indent=0, hang=2, style="dim")


def _groups(report: Report, out: Lines) -> None:
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


def _coverage_line(report: Report, out: Lines) -> None:
    cov = report.coverage
    if cov.converted + cov.unconverted == 0:
        return
    names = ", ".join(f"{name} ({count})" for name, count, _ in cov.unconverted_names[:4])
    more = " …" if len(cov.unconverted_names) > 4 else ""
    out.blank()
    out.wrap(f"HIPIFY coverage: {cov.converted:,} of {cov.converted + cov.unconverted:,} CUDA references convert "
             f"({cov.percent:.1f}%), {cov.clean_percent:.1f}% clean after HIPIFY"
             + (f"; unconverted: {names}{more}" if names else ""), hang=2)
