"""Report -> the plain view-model that the terminal, Markdown and HTML renderers share, so the three never
disagree on the verdict, the effort, the coverage or the counts. No formatting here: only numbers and text."""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

from auditor import __version__
from auditor.analysis.effort import DEPENDENCY_CATEGORIES
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
        """What the verdict and the exit code weigh, and what they do not, in the same words everywhere."""
        rest = self.findings - self.breaking
        other = f"{rest:,} {'has' if rest == 1 else 'have'} a ROCm alternative or {'is' if rest == 1 else 'are'} " \
                "not on the ROCm path" if rest else ""
        return f"{self.breaking:,} would break on ROCm" + (f", {other}" if other else "")

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

    @property
    def effort_text(self) -> str:
        return f"{self.low_days:g}-{self.high_days:g} engineer-days"

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
    findings: int


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
    counted: defaultdict[str, int] = defaultdict(int)
    for f in report.findings:
        if not f.guarded and f.severity > Severity.INFO:
            counted[f.path] += 1
    return tuple(Hotspot(path, low, high, counted[path]) for path, low, high in report.effort.by_file[:limit]
                 if high > 0)


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
        counted = Counter(f.disposition for f in sites)
        where_they_sit = " · ".join(f"{d} {n}" for d, n in sorted(counted.items(), key=lambda kv: (kv[0] != "live",
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
    """Unguarded findings per category and severity, in the contract's category order."""
    counts: dict[str, dict[str, int]] = {}
    for f in report.findings:
        if not f.guarded:
            row = counts.setdefault(category_of(report, f), {})
            row[f.severity.label] = row.get(f.severity.label, 0) + 1
    return tuple((c, counts[c]) for c in CATEGORIES if c in counts)
