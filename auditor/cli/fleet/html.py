"""The portfolio as one self-contained HTML page: inline CSS (the single-repository report's, plus
templates/fleet.css), no script at all, nothing fetched. Every text from a repository or its report is escaped
here, and a Content-Security-Policy that admits no script backs that up. Links go to each repository's own
HTML page and JSON report under reports/; the effort charts are inline SVG."""
from __future__ import annotations

import importlib.resources
from html import escape
from urllib.parse import quote

from auditor.cli.fleet.portfolio import Blocker, Portfolio, RepoRow
from auditor.cli.fleet.text import days

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
SHOWN_BLOCKERS = 25
CHART_BARS = 15                   # repositories or blockers in an effort chart, costliest first
CHART_WIDTH = 360                 # px of the longest bar
LABEL_WIDTH = 220


def _style() -> str:
    templates = importlib.resources.files("auditor.report") / "templates"
    return "\n".join((templates / name).read_text(encoding="utf-8") for name in ("report.css", "fleet.css"))


def render_html(portfolio: Portfolio) -> str:
    t = portfolio.totals
    scanned = max(t.scanned, 1)
    split = "".join(f'<span class="{cls}" style="width:{100.0 * n / scanned:.2f}%" title="{n} {cls}"></span>'
                    for cls, n in (("ready", t.ready), ("needs-port", t.needs_port), ("blocked", t.blocked)) if n)
    cards = [
        ("Repositories", t.repositories, "repositories", f"{t.scanned} scanned, {t.failed} failed"),
        ("Verdicts", f"{t.ready} / {t.needs_port} / {t.blocked}", "verdicts", "ready / needs-port / blocked"),
        ("Code on ROCm today", f"{t.ready_share:g}%", "ready_share_percent",
         f"{t.ready_lines} of {t.lines} lines scanned are in ready repositories"),
        ("Effort", days(t.effort_low_days, t.effort_high_days), "effort", "summed over the repositories"),
    ]
    card_html = "".join(
        f'<div class="card"><h2>{escape(title)}</h2><p class="figure" data-total="{key}">{escape(str(figure))}</p>'
        f'<p class="unit">{escape(unit)}</p></div>' for title, figure, key, unit in cards)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>rocm-audit portfolio: {t.repositories} repositories</title>
<style>{_style()}</style>
</head>
<body>
<p class="eyebrow">rocm-audit portfolio</p>
<h1>{t.repositories} repositories: {t.ready} ready, {t.needs_port} need a port, {t.blocked} blocked</h1>
<div class="split" id="split">{split}</div>
<div class="cards" id="totals">{card_html}</div>
<h2 id="repositories">Repositories</h2>
<table class="fleet" id="repository-table">
<thead><tr><th>repository</th><th>verdict</th><th>effort (days)</th><th>top blocker</th><th>ROCm path confidence</th>
<th>report</th><th>live findings over time</th></tr></thead>
<tbody>
{"".join(_row(r) for r in portfolio.repositories)}</tbody>
</table>
{_effort_charts(portfolio)}
{_burndown(portfolio.burndown)}
{_blockers("by-effort", "What blocks the most work (repositories × effort)", portfolio.blockers[:SHOWN_BLOCKERS])}
{_blockers("by-reach", "What touches the most repositories", portfolio.widest(SHOWN_BLOCKERS))}
<p class="note">Effort is each repository's own estimate (rocm-audit check); a blocker's effort is the hours of its
findings in every repository it touches, in engineer-days. Failed repositories count in no total.</p>
</body>
</html>
"""


def _row(r: RepoRow) -> str:
    name = f'<td><strong>{escape(r.name)}</strong><br><span class="path">{escape(r.source)}</span></td>'
    if r.verdict is None:
        return (f'<tr class="failed" data-name="{escape(r.name)}" data-status="failed">{name}'
                f'<td><span class="badge small status-failed">failed</span></td><td colspan="4">{escape(r.reason)}</td>'
                "</tr>\n")
    link = (f'<a class="page" href="{escape(quote(r.page))}">report</a>' if r.page else "") + (
        f' · <a class="json" href="{escape(quote(r.report))}">JSON</a>' if r.report else "")
    unchanged = ' <span class="tag">unchanged</span>' if r.status == "unchanged" else ""
    unchanged += ' <span class="tag">working tree changed</span>' if r.changed_tree else ""
    return (f'<tr data-name="{escape(r.name)}" data-status="{escape(r.status)}">{name}'
            f'<td><span class="badge small verdict-{escape(r.verdict)}" data-field="verdict">{escape(r.verdict)}</span>'
            f'{unchanged}</td>'
            f'<td class="num"><span data-field="effort_low_days">{r.effort_low_days:g}</span>-'
            f'<span data-field="effort_high_days">{r.effort_high_days:g}</span></td>'
            f'<td>{escape(r.top_blocker)}</td><td>{escape(r.confidence)}</td><td>{link}</td>'
            f'<td>{sparkline(r.trend, 120, 28)}</td></tr>\n')


def _effort_charts(portfolio: Portfolio) -> str:
    """Effort by repository and by blocker, costliest first, as two inline SVG bar charts (low and high)."""
    repos = sorted((r for r in portfolio.repositories if r.verdict is not None and r.effort_high_days > 0),
                   key=lambda r: (-r.effort_high_days, r.name))[:CHART_BARS]
    blockers = list(portfolio.blockers[:CHART_BARS])
    if not repos and not blockers:
        return ""
    by_repo = bar_chart("effort-by-repository", "Effort by repository, engineer-days",
                        [(r.name, r.effort_low_days, r.effort_high_days, r.verdict or "") for r in repos])
    by_blocker = bar_chart("effort-by-blocker", "Effort by blocker (summed over its repositories), engineer-days",
                           [(f"{b.name} ({len(b.repositories)} repos)", b.effort_low_days, b.effort_high_days,
                             "blocker") for b in blockers])
    return (f'<h2 id="effort">Effort</h2>\n<div class="columns">\n<div><h3>By repository</h3>{by_repo}</div>\n'
            f'<div><h3>By blocker</h3>{by_blocker}</div>\n</div>')


def bar_chart(chart_id: str, label: str, bars: list[tuple[str, float, float, str]]) -> str:
    """A horizontal bar per (name, low, high, class): the high estimate as the bar, the low inside it."""
    if not bars:
        return '<p class="note">Nothing to port.</p>'
    top = max(high for _, _, high, _ in bars) or 1.0
    width, height = LABEL_WIDTH + CHART_WIDTH + 90, 30 * len(bars) + 8
    rows = []
    for n, (name, low, high, cls) in enumerate(bars):
        y = 4 + 30 * n
        high_w, low_w = max(CHART_WIDTH * high / top, 1.0), CHART_WIDTH * low / top
        shown = name if len(name) <= 32 else name[:31] + "…"
        rows.append(
            f'<g class="bar bar-{escape(cls)}" data-name="{escape(name)}" data-high="{high:g}">'
            f'<title>{escape(name)}: {low:g}-{high:g} engineer-days</title>'
            f'<text x="{LABEL_WIDTH - 8}" y="{y + 15}" text-anchor="end">{escape(shown)}</text>'
            f'<rect class="high" x="{LABEL_WIDTH}" y="{y}" width="{high_w:.1f}" height="20" rx="3"></rect>'
            f'<rect class="low" x="{LABEL_WIDTH}" y="{y}" width="{low_w:.1f}" height="20" rx="3"></rect>'
            f'<text class="value" x="{LABEL_WIDTH + high_w + 6:.1f}" y="{y + 15}">{low:g}-{high:g} d</text></g>')
    return (f'<svg class="chart" id="{chart_id}" role="img" aria-label="{escape(label)}" width="{width}" '
            f'height="{height}" viewBox="0 0 {width} {height}">{"".join(rows)}</svg>')


def sparkline(points: tuple[tuple[str, int], ...], width: int, height: int) -> str:
    """Live findings by day as an inline SVG line, each point titled with its day and count ("" without points)."""
    if not points:
        return ""
    top = max(live for _, live in points) or 1
    step = width / max(len(points) - 1, 1)
    xy = [(round(i * step, 1), round(height - 2 - (height - 4) * live / top, 1)) for i, (_, live) in enumerate(points)]
    dots = "".join(f'<circle cx="{x}" cy="{y}" r="2" data-live="{live}" data-day="{escape(day)}"><title>'
                   f'{escape(day)}: {live} live</title></circle>' for (x, y), (day, live) in zip(xy, points))
    line = " ".join(f"{x},{y}" for x, y in xy)
    return (f'<svg class="trend" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
            f'aria-label="live findings over time"><polyline points="{line}" fill="none" stroke="currentColor" '
            f'stroke-width="1.5"/>{dots}</svg>')


def _burndown(points: tuple[tuple[str, int], ...]) -> str:
    if not points:
        return ""
    last_day, last = points[-1]
    return (f'<h2 id="burndown">Live findings across the repositories</h2>\n<div class="burndown">'
            f'{sparkline(points, 640, 120)}</div>\n<p class="note">Each day a run was recorded (--db), every '
            f'repository counted with its latest run up to that day: {points[0][1]} on {escape(points[0][0])}, '
            f'{last} on {escape(last_day)}.</p>')


def _blockers(anchor: str, title: str, blockers: tuple[Blocker, ...]) -> str:
    if not blockers:
        return f'<h2 id="{anchor}">{escape(title)}</h2><p class="note">Nothing left to port in any repository.</p>'
    rows = "".join(
        f'<tr data-key="{escape(b.key)}"><td><strong>{escape(b.name)}</strong> '
        f'<span class="tag">{escape(b.kind)}</span>'
        f'<br><span class="rule">{escape(b.rule)}</span></td>'
        f'<td class="num" data-field="repositories">{len(b.repositories)}</td>'
        f'<td class="num"><span data-field="effort_low_days">{b.effort_low_days:g}</span>-'
        f'<span data-field="effort_high_days">{b.effort_high_days:g}</span></td>'
        f'<td>{escape(", ".join(b.repositories))}</td><td class="fix">{escape(b.fix)}</td></tr>\n'
        for b in blockers)
    return (f'<h2 id="{anchor}">{escape(title)}</h2>\n<table class="fleet blockers">\n<thead><tr><th>dependency or rule'
            '</th><th>repositories</th><th>effort (days)</th><th>in</th><th>the fix that removes it</th></tr></thead>\n'
            f"<tbody>\n{rows}</tbody>\n</table>")
