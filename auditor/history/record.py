"""One audit as the store keeps it: a frozen RunRecord built from a Report by `run_record`."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from datetime import datetime, timezone

from auditor import __version__
from auditor.report import view
from auditor.judge.analysis.effort import DEPENDENCY_CATEGORIES
from auditor.report.plan import WORK
from auditor.types import Report, Severity


@dataclass(frozen=True, slots=True)
class Where:
    """Which repository and commit a run describes."""

    repo: str                        # the repository key: its root commit, or its remote URL (gitobjects.py)
    label: str                       # what to call it (the directory name)
    commit: str                      # full id; "" when the tree was not a git commit
    committed_at: str = ""           # ISO 8601, UTC
    author: str = ""


def of_working_tree(where: Where) -> Where:
    """A run of a working tree with changes its commit does not hold: no commit's run, so `history` and fleet's
    resume never take it for that commit's point."""
    return replace(where, commit="", committed_at="", author="")


@dataclass(frozen=True, slots=True)
class RuleCount:
    rule: str
    disposition: str
    severity: str
    count: int


@dataclass(frozen=True, slots=True)
class DependencyRow:
    """A CUDA-only package or library the run found, with its first site ("path:line"): one row per package as
    the code or a manifest names it (a rule that covers many packages has a row for each)."""

    rule: str
    name: str                        # the package, API or library as matched (`tensorrt_llm` and `tensorrt-llm` one)
    first_site: str
    guarded: bool                    # every site guarded or optional: a ROCm path exists


@dataclass(frozen=True, slots=True)
class ComponentRow:
    path: str
    verdict: str
    effort_low_days: float
    effort_high_days: float


@dataclass(frozen=True, slots=True)
class RunRecord:
    where: Where
    recorded_at: str                 # ISO 8601, UTC
    tool_version: str
    rules_digest: str                # the rules and rocm-audit's code: points are reused only when it matches
    verdict: str
    live: int                        # findings that are porting work: live on the ROCm path, above info
    effort_low_days: float
    effort_high_days: float
    coverage: float                  # HIPIFY coverage, percent
    complete: bool                   # False: some file could not be scanned (partial, failed or unreadable)
    counts: tuple[RuleCount, ...] = ()
    dependencies: tuple[DependencyRow, ...] = ()
    components: tuple[ComponentRow, ...] = ()
    source: str = "check"            # check | history | fleet: which command recorded it

    def live_by_rule(self) -> dict[str, int]:
        """Live findings per rule (the burn-down's parts)."""
        out: Counter[str] = Counter()
        for c in self.counts:
            if c.disposition in WORK and c.severity != Severity.INFO.label:
                out[c.rule] += c.count
        return dict(sorted(out.items()))

    def live_dependencies(self) -> dict[str, DependencyRow]:
        return {d.name: d for d in self.dependencies if not d.guarded}


def now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


def run_record(report: Report, where: Where, rules_digest: str = "", complete: bool | None = None,
               source: str = "check") -> RunRecord:
    """The record of one audit. `complete`: None means what the report says: every file was read and scanned
    (a file whose syntax tree-sitter recovered from only in part counts as scanned, as in the report)."""
    counts = Counter((f.rule_id, f.disposition, f.severity.label) for f in report.findings if not f.guarded)
    live = sum(1 for f in report.findings if not f.guarded and f.disposition in WORK and f.severity > Severity.INFO)
    hours: dict[str, list[float]] = {}
    for f in report.findings:
        spent = hours.setdefault(f.component, [0.0, 0.0])
        spent[0] += f.hours[0]
        spent[1] += f.hours[1]
    per_day = report.effort.hours_per_day or 8.0
    if complete is None:
        complete = not report.errors and not any(r.error for r in report.results)
    return RunRecord(
        where=where, recorded_at=now(), tool_version=__version__, rules_digest=rules_digest,
        verdict=report.verdict, live=live, effort_low_days=report.effort.low_days,
        effort_high_days=report.effort.high_days, coverage=report.coverage.percent, complete=complete,
        counts=tuple(RuleCount(r, d, s, n) for (r, d, s), n in sorted(counts.items())),
        dependencies=dependency_rows(report),
        components=tuple(ComponentRow(c.path, c.verdict, round(hours.get(c.path, [0, 0])[0] / per_day, 2),
                                      round(hours.get(c.path, [0, 0])[1] / per_day, 2)) for c in report.components),
        source=source,
    )


def dependency_rows(report: Report) -> tuple[DependencyRow, ...]:
    """Each CUDA-only package the report names (the findings view.dependencies lists, keyed by what they matched
    rather than by rule), with its first site; guarded when no site of it would break."""
    sites: dict[tuple[str, str], list] = {}
    for f in report.findings:
        if view.category_of(report, f) in DEPENDENCY_CATEGORIES and (f.severity > Severity.INFO or f.guarded):
            rule = report.rules.get(f.rule_id)
            spelling = " ".join(f.subject.split()) or (rule.name if rule else f.rule_id)
            sites.setdefault((f.rule_id, _package_key(spelling)), []).append(f)
    rows = []
    for (rule_id, key), found in sites.items():
        named = _declared(report, found)
        rows.append(DependencyRow(rule_id, " ".join(named.subject.split()) or key, view.where(named),
                                  not any(report.breaks(f) for f in found)))
    return tuple(sorted(rows, key=lambda d: (d.name, d.rule)))


def _declared(report: Report, found: list):
    """The site that names the package as it is installed (a manifest's requirement), else the first."""
    rules = report.rules
    return next((f for f in found if f.rule_id in rules and rules[f.rule_id].matcher == "dependency"), found[0])


def _package_key(spelling: str) -> str:
    """One package however it is spelt: an import `tensorrt_llm`, a requirement `tensorrt-llm`, `TensorRT-LLM`."""
    return spelling.lower().replace("_", "-").replace(".", "-")


def run_record_from_dict(data: dict) -> RunRecord:
    """The RunRecord `dataclasses.asdict` made (a fleet task sends it from its own process as JSON)."""
    fields = {**data, "where": Where(**data["where"]),
              "counts": tuple(RuleCount(**c) for c in data.get("counts", ())),
              "dependencies": tuple(DependencyRow(**d) for d in data.get("dependencies", ())),
              "components": tuple(ComponentRow(**c) for c in data.get("components", ()))}
    return RunRecord(**fields)
