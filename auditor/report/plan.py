"""Report -> the decision view: each finding's disposition, the ordered migration plan (the few work items
that matter, blocking first, then by effort) and one row per component. The terminal and the HTML page
both open with these, so a lead can forward the top of either as the plan."""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import PurePosixPath

from auditor.judge.analysis.effort import DEPENDENCY_CATEGORIES
from auditor.report import text, view
from auditor.judge import dispositions
from auditor.model.rocmpath.model import PATTERN_NAMES, RocmPath
from auditor.types import Component, Finding, FindingGroup, Report, Severity

PLAN_ITEMS = 8
ROOT_LABEL = "(root)"                 # the component at the top of the scanned tree
PERIPHERAL_DIRS = frozenset({"test", "tests", "testing", "unittests", "example", "examples", "benchmark",
                             "benchmarks", "bench", "docs", "doc", ".github", ".gitlab", ".circleci", "ci",
                             ".buildkite", "tutorials"})
# dispositions that are work for a ROCm port; every other one has a ROCm path or is not on the install path
WORK = frozenset({"live"})
# what the page's findings list opens with: live work, then what to verify on hardware; the rest is folded
SHOWN_FIRST = frozenset({"live", dispositions.VERIFY})
HIDDEN_BY_DEFAULT = frozenset(dispositions.DISPOSITIONS) - SHOWN_FIRST
# code a ROCm build never compiles or loads
NOT_COMPILED_ON_ROCM = frozenset({dispositions.GUARDED, dispositions.PROJECT_MACRO, dispositions.SHIM,
                                  dispositions.OTHER_VENDOR, dispositions.NOT_BUILT, dispositions.CUDA_BRANCH,
                                  dispositions.ALTERNATIVE})


@dataclass(frozen=True, slots=True)
class WorkItem:
    rule_id: str
    rule_name: str
    category: str
    severity: str
    blocking: bool                    # a critical site on the default install path
    title: str                        # what to do, one line
    fix: str                          # the rule's ROCm alternative
    why: str                          # the rule's explanation, first paragraph, plain text
    sites: int
    files: int
    top_files: tuple[tuple[str, int], ...]
    low_days: float
    high_days: float


@dataclass(frozen=True, slots=True)
class Plan:
    items: tuple[WorkItem, ...]       # the ones shown, in order
    more: int                         # further work items not shown
    more_low_days: float
    more_high_days: float
    review_files: int                 # files whose HIPIFY run and review the estimate pays for
    review_days: tuple[float, float]
    validation_days: tuple[float, float]
    verify_on_hardware: int           # soft findings in code a ROCm build already compiles


@dataclass(frozen=True, slots=True)
class ComponentRow:
    path: str
    verdict: str
    optional: bool
    reason: str
    rocm_path: str                    # the pattern(s) that give it a ROCm build, or what is missing
    evidence: tuple[str, ...]         # path:line
    install: str                      # the install recipe on ROCm, when known
    confidence: str
    low_days: float
    high_days: float
    findings: int                     # the findings its verdict weighed (Component.live)
    peripheral: bool = False          # under tests/, examples/, benchmarks/ …: folded under one line on the page


def disposition(report: Report, finding: Finding) -> str:
    """Where the finding sits against the ROCm path, as the analysis (auditor/model/rocmpath) decided."""
    return finding.disposition


def peripheral(path: str) -> bool:
    """Tests, examples, benchmarks, docs and CI: hidden by default from the count a lead sees."""
    parts = PurePosixPath(path).parts
    name = parts[-1].lower() if parts else ""
    return (any(p.lower() in PERIPHERAL_DIRS for p in parts[:-1])
            or name.startswith("test_") or name.endswith(("_test.py", "_test.cu", "_test.cpp"))
            or name in ("conftest.py", ".gitlab-ci.yml", "jenkinsfile"))


def groups(report: Report) -> tuple[FindingGroup, ...]:
    """The report's finding groups (auditor/judge/analysis/groups.py), as the analysis made them."""
    return report.groups


def _days(report: Report, hours: float) -> float:
    return round(hours / report.effort.hours_per_day, 1)


def _title(report: Report, rule_id: str, sites: list[Finding]) -> str:
    """What to do, built from what matched (the packages, macros, APIs or flags of its sites); the rule's general
    text when the sites name nothing short enough."""
    rule = report.rules.get(rule_id)
    if rule is None:
        return rule_id
    named = matched_names(report, sites)
    if rule.category in DEPENDENCY_CATEGORIES and (rule.effort in ("L", "XL") or rule.severity == Severity.CRITICAL):
        return f"Replace {', '.join(named[:3]) or rule.name}"   # a package or library to swap for another
    head = text.first_sentence(text.plain(rule.message))
    if not named:
        return head
    return f"{head} ({', '.join(named[:3])}{', …' if len(named) > 3 else ''})"


def matched_names(report: Report, sites: list[Finding]) -> list[str]:
    """The distinct names the sites matched, a manifest's spelling first (`tensorrt-llm` and the import
    `tensorrt_llm` are one); none that is a whole line rather than a name."""
    from auditor.match.engines import is_a_name

    def declared(f: Finding) -> bool:
        rule = report.rules.get(f.rule_id)
        return rule is not None and rule.matcher == "dependency"

    names: dict[str, str] = {}
    for f in sorted(sites, key=lambda f: not declared(f)):
        named = " ".join(f.subject.split())
        if is_a_name(named):
            names.setdefault(named.lower().replace("_", "-"), named)
    return list(names.values())


def plan(report: Report, limit: int = PLAN_ITEMS) -> Plan:
    """One work item per rule with live sites, blocking first, then the costliest."""
    by_rule: dict[str, list[int]] = defaultdict(list)
    soft = 0
    for i, f in enumerate(report.findings):
        kind = disposition(report, f)
        if kind == "verify-on-hardware":
            soft += 1
        if kind in WORK and f.severity > Severity.INFO:
            by_rule[f.rule_id].append(i)
    items = []
    for rule_id, indexes in by_rule.items():
        sites = [report.findings[i] for i in indexes]
        rule = report.rules.get(rule_id)
        low = sum(f.hours[0] for f in sites)
        high = sum(f.hours[1] for f in sites)
        worst = max(f.severity for f in sites)
        per_file = Counter(f.path for f in sites)
        items.append(WorkItem(
            rule_id=rule_id, rule_name=rule.name if rule else rule_id,
            category=view.category_of(report, sites[0]), severity=worst.label,
            blocking=worst == Severity.CRITICAL and not all(peripheral(f.path) for f in sites),
            title=_title(report, rule_id, sites),
            fix=text.plain(rule.rocm_alternative or "") if rule else "",
            why=text.plain(text.paragraphs(rule.docs)[0]) if rule and rule.docs.strip() else "",
            sites=len(sites), files=len(per_file),
            top_files=tuple(sorted(per_file.items(), key=lambda kv: (-kv[1], kv[0]))[:3]),
            low_days=_days(report, low), high_days=_days(report, high),
        ))
    items.sort(key=lambda w: (not w.blocking, -w.high_days, -Severity.parse(w.severity), -w.sites, w.rule_id))
    shown = items[:limit]
    rest = items[len(shown):]
    effort = report.effort
    review_files = len(effort.reviewed_files)
    return Plan(tuple(shown), len(rest), round(sum(w.low_days for w in rest), 1),
                round(sum(w.high_days for w in rest), 1), review_files, effort.hipify_review, effort.validation,
                soft)


def _rocm_path(component: Component) -> tuple[str, tuple[str, ...], str, str]:
    """(patterns, evidence, install recipe, confidence) from the ROCm-path analysis (auditor/model/rocmpath); for a
    component it did not read, what its build files say."""
    found = component.rocm_path
    if isinstance(found, RocmPath) and found.evidence:
        names = dict.fromkeys(f"{e.pattern} {PATTERN_NAMES[e.pattern]}" for e in found.evidence)
        return "; ".join(names), tuple(e.where for e in found.evidence), found.recipe, found.confidence
    if component.rocm_build:
        return "ROCm/HIP build option in its build files", (), "", ""
    return "none found", (), "", ""


def components(report: Report) -> tuple[ComponentRow, ...]:
    """One row per component. Its effort is the work in it: its live findings' hours (an optional component,
    a hopper/-style package, costs nothing, as the effort model says). Its count is the findings its verdict
    weighed (Component.live), so a blocked row never shows 0."""
    comps = report.components or (Component(".", report.verdict, False, report.verdict_reason, False,
                                            live=sum(1 for i in report.gated()
                                                     if report.findings[i].severity > Severity.INFO)),)
    hours: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for f in report.findings:
        if f.severity > Severity.INFO and disposition(report, f) in WORK:
            hours[f.component][0] += f.hours[0]
            hours[f.component][1] += f.hours[1]
    rows = []
    for c in comps:
        pattern, evidence, install, confidence = _rocm_path(c)
        low, high = hours[c.path]
        rows.append(ComponentRow(c.path if c.path not in ("", ".") else ROOT_LABEL, c.verdict, c.optional,
                                 text.sentence(c.reason.split(": ", 1)[-1]), pattern, evidence, install,
                                 confidence, _days(report, low), _days(report, high), c.live,
                                 c.path not in ("", ".") and peripheral(f"{c.path}/_")))
    order = {"blocked": 0, "needs-port": 1, "ready": 2}
    return tuple(sorted(rows, key=lambda r: (r.path != ROOT_LABEL, r.peripheral, r.optional, order.get(r.verdict, 3),
                                             -r.high_days, r.path)))
