"""Report -> the plain view-model that the terminal, Markdown and HTML renderers share, so the three never
disagree on the verdict, the effort, the coverage or the counts. No formatting here: only numbers and text."""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

from auditor import __version__
from auditor.judge.analysis.effort import DEPENDENCY_CATEGORIES, on_default_path
from auditor.report.text import counted
from auditor.types import CATEGORIES, Finding, Report, Severity

ROCM_STATUS = {   # what a dependency finding's severity says about the package on ROCm (docs/concepts.md)
    Severity.CRITICAL: "no ROCm build: replace it",
    Severity.HIGH: "breaks on ROCm until changed",
    Severity.MEDIUM: "works on ROCm; review",
    Severity.LOW: "HIPIFY or a rename handles it",
    Severity.INFO: "note",
}


@dataclass(frozen=True, slots=True)
class Summary:
    root: str
    verdict: str
    reason: str                       # the verdict's reason without the leading "verdict: "
    low_days: float
    high_days: float
    coverage_percent: float
    clean_percent: float
    converted_refs: int
    unconverted_refs: int
    by_severity: tuple[tuple[str, int], ...]   # every finding, critical first (as the JSON summary counts)
    findings: int                     # every finding, guarded ones included (the JSON summary's count)
    guarded: int
    suppressed: int
    files: int
    lines: int
    files_failed: int
    files_partial: int
    vendored: tuple[str, ...]
    tool_version: str
    rule_count: int
    by_disposition: tuple[tuple[str, int], ...] = ()   # every finding, by where it sits against the ROCm path

    breaking: int = 0                 # would break on ROCm (Report.gated): what the exit code weighs
    breaking_by_severity: tuple[tuple[str, int], ...] = ()   # of those, critical first
    not_breaking: tuple[tuple[str, int], ...] = ()   # every other finding by disposition (Report.not_breaking)
    partial: tuple[tuple[str, str], ...] = ()        # (path, what was lost) of each file parsed only in part

    @property
    def totals_text(self) -> str:
        """The totals every renderer states, in the same words: "22 findings (2 guarded, 0 suppressed)"."""
        return f"{self.findings:,} findings ({self.guarded:,} guarded, {self.suppressed:,} suppressed)"

    @property
    def breaking_text(self) -> str:
        """What the verdict and the exit code weigh (by severity, so four low findings read as what they are), and
        what they do not, in the same words everywhere."""
        rest = self.findings - self.breaking
        other = f"{rest:,} {'has' if rest == 1 else 'have'} a ROCm alternative or {'is' if rest == 1 else 'are'} " \
                "not on the ROCm path" if rest else ""
        severities = ", ".join(f"{n:,} {label}" for label, n in self.breaking_by_severity)
        if self.breaking and all(label in ("low", "info") for label, _ in self.breaking_by_severity):
            severities += ": HIPIFY or a rename handles them" if "low" in severities else ": notes"
        head = f"{self.breaking:,} would break on ROCm" + (f" ({severities})" if severities else "")
        return head + (f", {other}" if other else "")

    @property
    def disposition_text(self) -> str:
        return ", ".join(f"{name}: {n}" for name, n in self.by_disposition)

    @property
    def not_breaking_text(self) -> str:
        return " · ".join(f"{name} {n:,}" for name, n in self.not_breaking)

    @property
    def partial_text(self) -> str:
        """"3 files parsed only in part (findings there may be missing)", or ""."""
        if not self.files_partial:
            return ""
        word = "file" if self.files_partial == 1 else "files"
        return f"{self.files_partial:,} {word} parsed only in part: findings in the unparsed code may be missing"

    effort_for: str = ""              # on a ready verdict: what its effort pays for (it is no porting work)

    @property
    def days_text(self) -> str:
        return f"{self.low_days:g}-{self.high_days:g} engineer-days"

    @property
    def effort_text(self) -> str:
        return f"{self.days_text} ({self.effort_for})" if self.effort_for else self.days_text

    @property
    def coverage_text(self) -> str:
        if self.converted_refs + self.unconverted_refs == 0:   # a percentage of nothing is not 100%
            return "n/a (no CUDA API references)"
        return f"{self.coverage_percent:.1f}% ({self.clean_percent:.1f}% clean after HIPIFY)"


@dataclass(frozen=True, slots=True)
class EffortRow:
    label: str
    low: float
    high: float
    kind: str                         # "category" | "review" | "validation"


@dataclass(frozen=True, slots=True)
class Hotspot:
    path: str
    low_hours: float
    high_hours: float
    findings: int                     # its live findings that cost hours (judge/analysis/effort.py on_default_path)
    reviewed: bool = False            # its hours include running HIPIFY on it and reviewing the output

    @property
    def cost_of(self) -> str:
        """What the file's hours pay for, so a row with no finding still says why it costs."""
        return " + ".join((["findings"] if self.findings else []) + (["HIPIFY review"] if self.reviewed else []))


@dataclass(frozen=True, slots=True)
class Dependency:
    name: str                         # the rule's name: one rule names one package or library
    spellings: tuple[str, ...]        # how the code and manifests spell it (import, requirement, header, API)
    rule_id: str
    category: str
    severity: str
    status: str
    alternative: str
    places: tuple[str, ...]           # path:line where it is declared or used
    guarded: bool                     # no place would break on ROCm (every one has another disposition)
    dispositions: str = ""            # "live 2 · optional 3": where its places sit against the ROCm path


def lines_scanned(report: Report) -> int:
    return sum(r.facts.lines for r in report.results)


def category_of(report: Report, finding: Finding) -> str:
    rule = report.rules.get(finding.rule_id)
    return rule.category if rule else "other"


def where(finding: Finding) -> str:
    return f"{finding.path}:{finding.span.line}" if finding.span.line else finding.path


def live_by_severity(report: Report) -> dict[str, int]:
    """The findings that would break (Report.gated), by severity, critical first: the one tally every format
    shows beside the verdict and the exit code."""
    counts = {s.label: 0 for s in sorted(Severity, reverse=True)}
    for i in report.gated():
        counts[report.findings[i].severity.label] += 1
    return counts


def effort_for(report: Report) -> str:
    """What a ready project's effort pays for: it is no porting work, so the figure says what it is."""
    if report.verdict != "ready" or report.effort.high_days <= 0:
        return ""
    reviewed = counted(len(report.effort.reviewed_files), "file")
    parts = [f"{row.label} of {reviewed}" if row.kind == "review" else row.label for row in effort_rows(report)]
    return "nothing breaks; for " + ", ".join(parts) if parts else ""


def summary(report: Report) -> Summary:
    guarded = sum(1 for f in report.findings if f.guarded)
    breaking = Counter(report.findings[i].severity for i in report.gated())
    by_severity = {s: 0 for s in sorted(Severity, reverse=True)}
    for f in report.findings:
        by_severity[f.severity] += 1
    cov = report.coverage
    return Summary(
        root=report.root,
        verdict=report.verdict,
        reason=report.verdict_reason.split(": ", 1)[-1],
        low_days=report.effort.low_days,
        high_days=report.effort.high_days,
        coverage_percent=cov.percent,
        clean_percent=cov.clean_percent,
        converted_refs=cov.converted,
        unconverted_refs=cov.unconverted,
        by_severity=tuple((s.label, n) for s, n in by_severity.items()),
        findings=len(report.findings),
        guarded=guarded,
        suppressed=report.suppressed,
        files=len(report.results),
        lines=lines_scanned(report),
        files_failed=sum(1 for r in report.results if r.error),
        files_partial=sum(1 for r in report.results if r.partial),
        vendored=report.vendored,
        tool_version=__version__,
        rule_count=len(report.rules),
        by_disposition=tuple(sorted(Counter(f.disposition for f in report.findings).items(),
                                    key=lambda kv: (kv[0] != "live", -kv[1], kv[0]))),
        breaking=len(report.gated()),
        breaking_by_severity=tuple((s.label, breaking[s]) for s in sorted(Severity, reverse=True) if breaking[s]),
        not_breaking=tuple(report.not_breaking().items()),
        partial=tuple((r.path, r.facts.partial_reason or "parsed in part") for r in report.results if r.partial),
        effort_for=effort_for(report),
    )


def effort_rows(report: Report) -> tuple[EffortRow, ...]:
    """What the effort range is made of, costliest first: finding categories, HIPIFY review, validation."""
    effort = report.effort
    rows = [EffortRow(cat, low, high, "category") for cat, low, high in effort.by_category if high > 0]
    if effort.hipify_review[1] > 0:
        rows.append(EffortRow("HIPIFY run and review", *effort.hipify_review, "review"))
    if effort.validation[1] > 0:
        rows.append(EffortRow("validation on AMD hardware", *effort.validation, "validation"))
    return tuple(sorted(rows, key=lambda r: (-r.high, -r.low, r.label)))


def hotspots(report: Report, limit: int = 15) -> tuple[Hotspot, ...]:
    """The costliest files, each with what its hours pay for: the live findings the effort model costs there
    and the HIPIFY review (the same two sources as Effort.by_file)."""
    costed: defaultdict[str, int] = defaultdict(int)
    for f in report.findings:
        if on_default_path(f):
            costed[f.path] += 1
    reviewed = set(report.effort.reviewed_files)
    return tuple(Hotspot(path, low, high, costed[path], path in reviewed)
                 for path, low, high in report.effort.by_file[:limit] if high > 0)


def dependencies(report: Report) -> tuple[Dependency, ...]:
    """Each CUDA-only package or library once (as the effort model pays for it), with every place that
    declares or uses it."""
    grouped: dict[str, list[Finding]] = defaultdict(list)
    for f in report.findings:
        if category_of(report, f) in DEPENDENCY_CATEGORIES and (f.severity > Severity.INFO or f.guarded):
            grouped[f.rule_id].append(f)
    rows = []
    for rule_id, sites in grouped.items():
        rule = report.rules.get(rule_id)
        breaking = [f for f in sites if report.breaks(f)]
        worst = max(breaking or sites, key=lambda f: f.severity)
        inert = not breaking
        placed = Counter(f.disposition for f in sites)
        where_they_sit = " · ".join(f"{d} {n}" for d, n in sorted(placed.items(), key=lambda kv: (kv[0] != "live",
                                                                                               -kv[1], kv[0])))
        spellings = tuple(spelling for spelling in dict.fromkeys(map(_spelling, sites)) if spelling)
        rows.append(Dependency(
            name=rule.name if rule else rule_id, spellings=spellings, rule_id=rule_id,
            category=category_of(report, worst), severity=worst.severity.label,
            status="does not break on ROCm: a ROCm alternative exists or it is not on the ROCm path" if inert
            else ROCM_STATUS[worst.severity],
            alternative=(rule.rocm_alternative if rule else None) or "",
            places=tuple(where(f) for f in sites), guarded=inert, dispositions=where_they_sit,
        ))
    order = {s.label: -s for s in Severity}
    return tuple(sorted(rows, key=lambda d: (d.guarded, order[d.severity], d.name)))


def _spelling(finding: Finding) -> str:
    subject = " ".join(finding.subject.split())
    return subject if len(subject) <= 60 else subject[:59] + "…"


def category_counts(report: Report) -> tuple[tuple[str, dict[str, int]], ...]:
    """The findings that would break (Report.gated, the JSON summary's live_by_category) per category and
    severity, in the contract's category order; every other finding is a note counted by its disposition."""
    counts: dict[str, dict[str, int]] = {}
    for i in report.gated():
        f = report.findings[i]
        row = counts.setdefault(category_of(report, f), {})
        row[f.severity.label] = row.get(f.severity.label, 0) + 1
    return tuple((c, counts[c]) for c in CATEGORIES if c in counts)
