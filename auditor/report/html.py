"""Report -> one self-contained HTML page (inline CSS, JS and SVG; nothing fetched). The only jinja2 and
pygments user. Everything from the scanned repository goes through autoescaping or pygments' own escaping;
a Content-Security-Policy that admits only this page's own script (by hash) backs that up."""
from __future__ import annotations

import base64
import hashlib
import json
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from auditor.judge.analysis.verdict import weighs
from auditor.judge.incomplete import closed_failures
from auditor.match.inputs.kinds import BY_NAME
from auditor.judge import dispositions
from auditor.report import plan, text, view
from auditor.report.progress import ProgressView
from auditor.report.json import HOTSPOTS
from auditor.types import CATEGORIES, FindingGroup, Report, Severity

CONTEXT_LINES = 3                 # lines shown above and below a finding
MAX_CONTEXTS = 1000               # sites that get their code shown; the rest show the snippet
SITES_PER_GROUP = 200             # sites listed per group in the page; the JSON report lists them all
MAX_SITES = 25000                 # sites listed in the page in all (each group lists at least its first)
MAX_GROUPS = 20000                # groups in the page, most important first; the rest are counted
SNIPPET_CHARS = 160
MAX_SOURCE_BYTES = 4 * 1024 * 1024
CHART_WIDTH = 460                 # px of the longest effort bar


@dataclass(frozen=True, slots=True)
class RuleDoc:
    id: str
    name: str
    severity: str
    category: str
    effort: str
    message: str
    alternative: str
    docs: tuple[str, ...]         # the explanation, by paragraph


@dataclass(frozen=True, slots=True)
class Bar:
    row: view.EffortRow
    y: int
    low_width: float
    high_width: float


class SourceReader:
    """Lines of the scanned files, read only for regular files inside the scanned root."""

    def __init__(self, root: Path | None):
        self._root = root.resolve() if root is not None else None
        self._lines: dict[str, list[str] | None] = {}

    def lines(self, path: str) -> list[str] | None:
        if path not in self._lines:
            self._lines[path] = self._read(path)
        return self._lines[path]

    def _read(self, path: str) -> list[str] | None:
        if self._root is None:
            return None
        full = self._root / path
        try:
            info = os.lstat(full)
            if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_SOURCE_BYTES:
                return None   # a link, FIFO or device is never opened
            if not full.resolve().is_relative_to(self._root):
                return None
            return full.read_bytes().decode("utf-8", errors="replace").splitlines()
        except (OSError, ValueError):
            return None


@cache
def _lexer(kind: str, path: str):
    from pygments.lexers import TextLexer, get_lexer_by_name, get_lexer_for_filename
    from pygments.util import ClassNotFound

    try:
        return get_lexer_for_filename(path, stripnl=False)
    except ClassNotFound:
        pass
    try:
        known = BY_NAME.get(kind)
        if known is None or known.lexer is None:
            raise ClassNotFound(kind)
        return get_lexer_by_name(known.lexer, stripnl=False)
    except ClassNotFound:
        return TextLexer(stripnl=False)


def highlight_context(lines: list[str], line: int, kind: str, path: str) -> str | None:
    """The code around 1-based `line`, highlighted, with line numbers and the finding's line marked."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter

    if not 1 <= line <= len(lines):
        return None
    start = max(1, line - CONTEXT_LINES)
    end = min(len(lines), line + CONTEXT_LINES)
    chunk = "\n".join(text[:400] for text in lines[start - 1:end]) + "\n"
    formatter = HtmlFormatter(cssclass="hl", linenos="inline", linenostart=start, hl_lines=[line - start + 1],
                              wrapcode=True)
    return highlight(chunk, _lexer(kind, path), formatter)


def _site(report: Report, index: int, code: int | None) -> list:
    f = report.findings[index]
    return [f.path, f.span.line or 0, text.cut(f.snippet, SNIPPET_CHARS), code, 1 if f.new else 0]


def findings_data(report: Report, reader: SourceReader) -> dict:
    """The grouped findings as compact JSON for the page's script, which builds the rows a page at a time.
    Sites are capped per group; the code around a site is highlighted for the first site of each group,
    then for further sites while the budget lasts."""
    comps = tuple("." if c.path == plan.ROOT_LABEL else c.path for c in plan.components(report))
    contexts = _Contexts(report, reader)
    found = plan.groups(report)
    worst: dict[str, int] = {}
    for g in found:
        worst[g.rule_id] = max(worst.get(g.rule_id, 0), int(g.severity))
    found = _in_page_order(found, worst)
    omitted = found[MAX_GROUPS:]
    found = found[:MAX_GROUPS]
    first_codes = {g.first: contexts.highlight(g.first) for g in found}
    groups = [_group_row(report, g, limit, first_codes[g.first], worst[g.rule_id], comps)
              for g, limit in zip(found, _sites_shown(found))]
    _highlight_further_sites(found, groups, contexts)
    rules = {}
    for rule_id in sorted({g.rule_id for g in found}):
        rule = report.rules.get(rule_id)
        rules[rule_id] = [rule.name if rule else rule_id, text.plain(rule.rocm_alternative or "") if rule else "",
                          text.sentence(text.plain(rule.message)) if rule else ""]
    return {"rules": rules, "components": list(comps), "groups": groups, "code": contexts.codes,
            "dayHours": report.effort.hours_per_day, "hiddenByDefault": sorted(plan.HIDDEN_BY_DEFAULT),
            "omitted": {"groups": len(omitted), "findings": sum(g.count for g in omitted)}}


class _Contexts:
    """The highlighted code around sites, at most MAX_CONTEXTS for the page; a site refers to one by index."""

    def __init__(self, report: Report, reader: SourceReader) -> None:
        self.report, self.reader = report, reader
        self.kinds = {r.path: r.kind for r in report.results}
        self.codes: list[str] = []

    def full(self) -> bool:
        return len(self.codes) >= MAX_CONTEXTS

    def highlight(self, index: int) -> int | None:
        f = self.report.findings[index]
        kind = self.kinds.get(f.path, "")
        if self.full() or not f.span.line or kind == "notebook":
            return None
        source = self.reader.lines(f.path)
        highlighted = highlight_context(source, f.span.line, kind, f.path) if source else None
        if highlighted is None:
            return None
        self.codes.append(highlighted)
        return len(self.codes) - 1


def _in_page_order(found: Sequence[FindingGroup], worst: dict[str, int]) -> tuple[FindingGroup, ...]:
    """A rule's groups together; rules by their most pressing disposition (live work first, then soft, then the
    rest), worst severity and cost; within a rule, its groups by the same measures."""
    cost: dict[str, float] = {}
    standing: dict[str, int] = {}
    for g in found:
        cost[g.rule_id] = cost.get(g.rule_id, 0.0) + g.high_hours
        standing[g.rule_id] = min(standing.get(g.rule_id, 9), _standing(g.disposition, int(g.severity)))
    return tuple(sorted(found, key=lambda g: (standing[g.rule_id], -worst[g.rule_id], -cost[g.rule_id], g.rule_id,
                                              _standing(g.disposition, int(g.severity)), -g.severity, -g.high_hours,
                                              -g.count,
                                              g.key)))


def _sites_shown(found: Sequence[FindingGroup]) -> list[int]:
    """How many sites each group lists: its first, and more while MAX_SITES lasts (SITES_PER_GROUP at most)."""
    budget = max(0, MAX_SITES - len(found))       # every group lists its first site; the rest share this
    limits = []
    for g in found:
        extra = min(SITES_PER_GROUP - 1, g.count - 1, budget)
        budget -= extra
        limits.append(1 + extra)
    return limits


def _group_row(report: Report, g: FindingGroup, limit: int, first_code: int | None, rule_severity: int,
               comps: tuple[str, ...]) -> dict:
    rule = report.rules.get(g.rule_id)
    first = report.findings[g.first]
    sites = [_site(report, i, first_code if i == g.first else None) for i in g.indexes[:limit]]
    details = list(dict.fromkeys(report.findings[i].detail for i in g.indexes if report.findings[i].detail))
    owner = first.component
    own = {c.path: c.kind != "primary" for c in report.components}.get(owner, False)
    return {
        "rule": g.rule_id, "sev": int(g.severity), "ruleSev": rule_severity,
        "cat": rule.category if rule else "other", "disp": g.disposition,
        "comp": comps.index(owner) if owner in comps else 0,
        "peri": 1 if all(plan.peripheral(p) for p in g.paths) else 0,
        "key": g.key, "across": 1 if g.across_files else 0, "n": g.count, "files": len(g.paths),
        "hours": [round(g.low_hours, 1), round(g.high_hours, 1)],
        "detail": text.cut("; ".join(details), 300) if details else "",
        "new": sum(1 for i in g.indexes if report.findings[i].new), "sites": sites,
        "wn": sum(1 for i in g.indexes if weighs(report.findings[i], own)),   # what its component's row counts
    }


def _highlight_further_sites(found: Sequence[FindingGroup], groups: list[dict], contexts: _Contexts) -> None:
    """More sites' code, group by group, while the budget lasts; never a site inside the code shown above it."""
    for g, group in zip(found, groups):
        shown_until: dict[str, int] = {}
        for site, index in zip(group["sites"], g.indexes):
            if contexts.full():
                break
            path, line = site[0], site[1]
            if site[3] is None and line and line > shown_until.get(path, 0):   # not inside the code shown above
                site[3] = contexts.highlight(index)
            if site[3] is not None:
                shown_until[path] = line + CONTEXT_LINES


def _standing(disposition: str, severity: int) -> int:
    """Where a group sits in the list: live work first, then what to verify on hardware, then the rest; a note
    (info) never opens the list, whatever its disposition."""
    if severity <= int(Severity.INFO):
        return 4
    if disposition in plan.WORK:
        return 0
    if disposition == dispositions.VERIFY:
        return 1
    return 3 if disposition in plan.NOT_COMPILED_ON_ROCM else 2


def json_for_script(data: dict) -> str:
    """JSON that can sit inside <script type="application/json">: no "<", ">" or "&" that could end it."""
    raw = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return (raw.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def rule_docs(report: Report) -> tuple[RuleDoc, ...]:
    """The rules behind the findings, each explained once."""
    fired = sorted({f.rule_id for f in report.findings})
    return tuple(
        RuleDoc(r.id, r.name, r.severity.label, r.category, r.effort, _markdown(r.message),
                _markdown(r.rocm_alternative or ""), tuple(_markdown(p) for p in text.paragraphs(r.docs)))
        for r in (report.rules[i] for i in fired if i in report.rules)
    )


def _markdown(source: str):
    from markupsafe import Markup

    return Markup(text.inline_html(source))


def assumption_sources(report: Report) -> tuple[tuple[tuple[str, str, int], ...], tuple[str, ...]]:
    """(name, value, source number) per constant, and the sources, each once, numbered from 1."""
    sources: dict[str, int] = {}
    rows = []
    for a in report.effort.assumptions:
        number = sources.setdefault(a.source, len(sources) + 1)
        rows.append((a.name, a.value, number))
    return tuple(rows), tuple(sources)


def effort_bars(rows: tuple[view.EffortRow, ...]) -> tuple[Bar, ...]:
    top = max((r.high for r in rows), default=0.0) or 1.0
    return tuple(Bar(r, 8 + 30 * n, CHART_WIDTH * r.low / top, CHART_WIDTH * r.high / top)
                 for n, r in enumerate(rows))


def _resource(name: str) -> str:
    import importlib.resources

    return (importlib.resources.files("auditor.report") / "templates" / name).read_text(encoding="utf-8")


def _csp_hash(script: str) -> str:
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")


def _environment():
    import jinja2

    return jinja2.Environment(loader=jinja2.PackageLoader("auditor.report", "templates"), autoescape=True,
                              undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                              keep_trailing_newline=True)


def render_progress_page(progress: ProgressView) -> str:
    """`rocm-audit history --format html`: the Progress section alone, as a page without any script."""
    from markupsafe import Markup

    from auditor import __version__

    return _environment().get_template("history.html.j2").render(
        progress=progress, style=Markup(_resource("report.css")), version=__version__)


def render_html(report: Report, source_root: Path | None = None, progress: ProgressView | None = None) -> str:
    """The page. `source_root` is where the scanned files are, for the code around each finding; `progress`:
    the recorded history of the repository, shown as its Progress section."""
    from markupsafe import Markup
    from pygments.formatters import HtmlFormatter

    env = _environment()
    script = _resource("report.js")
    style = _resource("report.css") + HtmlFormatter(style="default").get_style_defs(".hl")
    data = findings_data(report, SourceReader(source_root))
    effort = view.effort_rows(report)
    unconverted_by_file = {r.path: sorted({name for name, _ in r.coverage.unconverted})
                           for r in report.results if r.coverage and r.coverage.unconverted}
    used = {g["cat"] for g in data["groups"]}
    dispositions = sorted({g["disp"] for g in data["groups"]},
                          key=lambda d: (d != "live", d in plan.NOT_COMPILED_ON_ROCM, d))
    assumptions, sources = assumption_sources(report)
    return env.get_template("report.html.j2").render(
        s=view.summary(report),
        plan=plan.plan(report),
        components=plan.components(report),
        sentence=text.sentence,
        md=_markdown,                 # Markdown code spans in reasons: escaped HTML with <code>
        assumptions=assumptions,
        sources=sources,
        dispositions=dispositions,
        data=Markup(json_for_script(data)),
        group_count=len(data["groups"]),
        peripheral_count=sum(g["n"] for g in data["groups"]
                             if g["peri"] and g["disp"] in plan.SHOWN_FIRST),
        effort=report.effort,
        effort_rows=effort,
        bars=effort_bars(effort),
        chart_width=CHART_WIDTH,
        hotspots=view.hotspots(report, HOTSPOTS),
        dependencies=view.dependencies(report),
        rules=rule_docs(report),
        categories=[c for c in CATEGORIES if c in used],
        severities=[(int(s), s.label) for s in sorted(Severity, reverse=True)],
        category_counts=view.category_counts(report),
        coverage=report.coverage,
        unconverted_by_file=unconverted_by_file,
        errors=report.errors,
        fails_closed=closed_failures(report),
        gate=report.gate,
        progress=progress,
        script=Markup(script),
        style=Markup(style),
        csp_script=_csp_hash(script),
    )
