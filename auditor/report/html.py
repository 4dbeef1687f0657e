"""Report -> one self-contained HTML page (inline CSS, JS and SVG; nothing fetched). The only jinja2 and
pygments user. Everything from the scanned repository goes through autoescaping or pygments' own escaping;
a Content-Security-Policy that admits only this page's own script (by hash) backs that up."""
from __future__ import annotations

import base64
import hashlib
import os
import stat
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from auditor.effort import in_optional_dir, load_model
from auditor.report import view
from auditor.report.json import HOTSPOTS
from auditor.types import CATEGORIES, Report, Severity

CONTEXT_LINES = 3                 # lines shown above and below a finding
MAX_CONTEXTS = 5000               # findings that get their code shown; the rest show the snippet
MAX_SOURCE_BYTES = 4 * 1024 * 1024
CHART_WIDTH = 460                 # px of the longest effort bar
KIND_LEXERS = {"python": "python", "cuda": "cuda", "cpp": "cpp", "build": "cmake", "container": "docker",
               "ci": "yaml", "shell": "bash"}


@dataclass(frozen=True, slots=True)
class FindingRow:
    severity: str
    rank: int
    category: str
    rule_id: str
    rule_name: str
    path: str
    line: int | None
    where: str
    message: str
    alternative: str
    guarded: bool
    optional: bool
    new: bool | None
    low_hours: float
    high_hours: float
    snippet: str
    code: str | None              # highlighted HTML from pygments (already escaped), or None
    search: str                   # what the filter box matches, lower case
    disposition: str = "live"     # where it sits against the ROCm path (rocm-path.md section 4)
    disposition_note: str = ""


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
        return get_lexer_by_name(KIND_LEXERS[kind], stripnl=False)
    except (KeyError, ClassNotFound):
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


def finding_rows(report: Report, reader: SourceReader) -> tuple[FindingRow, ...]:
    model = load_model()
    kinds = {r.path: r.kind for r in report.results}
    rows = []
    for i, f in enumerate(report.findings):
        rule = report.rules.get(f.rule_id)
        low, high = report.site_hours[i] if i < len(report.site_hours) else (0.0, 0.0)
        code = None
        kind = kinds.get(f.path, "")
        if f.span.line and i < MAX_CONTEXTS and kind != "notebook":
            source = reader.lines(f.path)
            code = highlight_context(source, f.span.line, kind, f.path) if source else None
        message = f"{f.message} ({f.detail})" if f.detail else f.message
        category = view.category_of(report, f)
        rows.append(FindingRow(
            severity=f.severity.label, rank=int(f.severity), category=category, rule_id=f.rule_id,
            rule_name=rule.name if rule else f.rule_id, path=f.path, line=f.span.line, where=view.where(f),
            message=message, alternative=(rule.rocm_alternative if rule else None) or "",
            guarded=f.guarded, optional=f.optional or in_optional_dir(f.path, model), new=report.is_new(i),
            low_hours=round(low, 2), high_hours=round(high, 2), snippet=f.snippet, code=code,
            search=" ".join((f.rule_id, rule.name if rule else "", category, f.severity.label, view.where(f),
                             message, f.snippet, f.disposition)).lower(),
            disposition=f.disposition, disposition_note=f.disposition_note,
        ))
    return tuple(rows)


def rule_docs(report: Report) -> tuple[RuleDoc, ...]:
    """The rules behind the findings, each explained once."""
    fired = sorted({f.rule_id for f in report.findings})
    return tuple(
        RuleDoc(r.id, r.name, r.severity.label, r.category, r.effort, r.message, r.rocm_alternative or "",
                tuple(" ".join(p.split()) for p in r.docs.split("\n\n") if p.strip()))
        for r in (report.rules[i] for i in fired if i in report.rules)
    )


def effort_bars(rows: tuple[view.EffortRow, ...]) -> tuple[Bar, ...]:
    top = max((r.high for r in rows), default=0.0) or 1.0
    return tuple(Bar(r, 8 + 30 * n, CHART_WIDTH * r.low / top, CHART_WIDTH * r.high / top)
                 for n, r in enumerate(rows))


def _resource(name: str) -> str:
    import importlib.resources

    return (importlib.resources.files("auditor") / "templates" / name).read_text(encoding="utf-8")


def _csp_hash(script: str) -> str:
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")


def render_html(report: Report, source_root: Path | None = None) -> str:
    """The page. `source_root` is where the scanned files are, for the code around each finding."""
    import jinja2
    from markupsafe import Markup
    from pygments.formatters import HtmlFormatter

    env = jinja2.Environment(loader=jinja2.PackageLoader("auditor", "templates"), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                             keep_trailing_newline=True)
    script = _resource("report.js")
    style = _resource("report.css") + HtmlFormatter(style="default").get_style_defs(".hl")
    rows = sorted(finding_rows(report, SourceReader(source_root)), key=lambda r: (-r.rank, r.path, r.line or 0))
    effort = view.effort_rows(report)
    unconverted_by_file = {r.path: sorted({name for name, _ in r.coverage.unconverted})
                           for r in report.results if r.coverage and r.coverage.unconverted}
    used_categories = [c for c in CATEGORIES if any(r.category == c for r in rows)]
    return env.get_template("report.html.j2").render(
        s=view.summary(report),
        components=report.components if len(report.components) > 1 else (),
        effort=report.effort,
        effort_rows=effort,
        bars=effort_bars(effort),
        chart_width=CHART_WIDTH,
        hotspots=view.hotspots(report, HOTSPOTS),
        dependencies=view.dependencies(report),
        rows=rows,
        rules=rule_docs(report),
        categories=used_categories,
        severities=[(int(s), s.label) for s in sorted(Severity, reverse=True)],
        category_counts=view.category_counts(report),
        coverage=report.coverage,
        unconverted_by_file=unconverted_by_file,
        errors=report.errors,
        gate=report.gate,
        script=Markup(script),
        style=Markup(style),
        csp_script=_csp_hash(script),
    )
