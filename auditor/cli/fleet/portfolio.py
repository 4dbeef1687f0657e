"""The fleet's outcomes into a frozen Portfolio: one row per repository, the blockers across repositories (a
dependency or rule, the repositories it touches, the effort it causes summed over them, the fix that removes
it), and the totals. Everything comes from each repository's own JSON report, so the numbers are check's."""
from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from auditor.cli.fleet.tasks import FAILED, Outcome

VERDICTS = ("ready", "needs-port", "blocked")
ORDER = {verdict: rank for rank, verdict in enumerate(VERDICTS)}   # as auditor/judge/analysis/verdict.py orders them
SEVERITY_RANK = {"critical": 4, "high": 3, "medium": 2, "low": 1, "info": 0}
DEPENDENCY_CATEGORIES = ("cuda_only_python_package", "cuda_only_library")
DEFAULT_DAY_HOURS = 8.0


@dataclass(frozen=True, slots=True)
class RepoRow:
    name: str
    source: str
    status: str                  # scanned | unchanged | failed
    reason: str                  # failed: why; otherwise the verdict's reason
    verdict: str | None
    effort_low_days: float
    effort_high_days: float
    top_blocker: str             # the live finding group that costs most, most severe first ("" when none)
    confidence: str              # the primary component's ROCm path confidence (high, medium, low; none)
    report: str | None           # its own report, relative to the output directory
    lines: int                   # lines scanned
    commit: str | None
    trend: tuple[tuple[str, int], ...] = ()   # with --db: (day, live findings) of each recorded run, oldest first
    changed_tree: bool = False   # scanned from a working tree holding changes its commit does not
    page: str | None = None      # its own HTML report, relative to the output directory


@dataclass(frozen=True, slots=True)
class Blocker:
    key: str                     # the dependency's name, or the rule id
    kind: str                    # dependency | rule
    name: str
    rule: str
    repositories: tuple[str, ...]
    effort_low_days: float
    effort_high_days: float
    fix: str                     # the rule's ROCm alternative

    @property
    def weight(self) -> float:
        """What removing it is worth across the fleet: the repositories it touches times the effort it causes
        (high estimate), so a blocker of ten repositories ranks above a costlier one of one."""
        return len(self.repositories) * self.effort_high_days


@dataclass(frozen=True, slots=True)
class Totals:
    repositories: int
    scanned: int
    failed: int
    ready: int
    needs_port: int
    blocked: int
    lines: int
    ready_lines: int
    ready_share: float           # percent of the lines scanned that are in ready repositories
    effort_low_days: float
    effort_high_days: float


@dataclass(frozen=True, slots=True)
class Portfolio:
    repositories: tuple[RepoRow, ...]
    blockers: tuple[Blocker, ...]        # by repositories touched × effort caused (Blocker.weight)
    totals: Totals
    burndown: tuple[tuple[str, int], ...] = ()   # with --db: (day, live findings summed over the repositories)

    def widest(self, count: int) -> tuple[Blocker, ...]:
        """The blockers that touch the most repositories."""
        return tuple(sorted(self.blockers, key=lambda b: (-len(b.repositories), -b.effort_high_days, b.key))[:count])


def build_portfolio(outcomes: Sequence[Outcome], report_paths: dict[str, str],
                    trends: dict[str, tuple[tuple[str, int], ...]] | None = None,
                    pages: dict[str, str] | None = None) -> Portfolio:
    """`trends`: each repository's recorded runs by name (the history store, with --db); `pages`: each
    repository's HTML report by name."""
    trends, pages = trends or {}, pages or {}
    rows = tuple(replace(_row(o, report_paths.get(o.name)), trend=trends.get(o.name, ()), page=pages.get(o.name))
                 for o in outcomes)
    return Portfolio(rows, _blockers(outcomes), _totals(rows), burndown(trends.values()))


def burndown(trends: Iterable[tuple[tuple[str, int], ...]]) -> tuple[tuple[str, int], ...]:
    """The organisation's live findings by day: on each day a run was recorded, every repository counts with its
    latest run up to that day (none yet: 0)."""
    series = [dict(trend) for trend in trends if trend]
    days = sorted({day for s in series for day in s})
    out = []
    for day in days:
        out.append((day, sum(s[max(d for d in s if d <= day)] for s in series if any(d <= day for d in s))))
    return tuple(out)


def _row(outcome: Outcome, report_path: str | None) -> RepoRow:
    report = outcome.report
    if outcome.status == FAILED or report is None:
        return RepoRow(outcome.name, outcome.source, FAILED, outcome.reason, None, 0.0, 0.0, "", "", None, 0,
                       outcome.commit)
    summary, effort = report["summary"], report["effort"]
    top = max(_live_groups(report), key=lambda g: (SEVERITY_RANK.get(g["severity"], 0), g["effort_hours"][1]),
              default=None)
    return RepoRow(outcome.name, outcome.source, outcome.status, summary["verdict_reason"], summary["verdict"],
                   float(effort["low_days"]), float(effort["high_days"]), _group_label(top) if top else "",
                   _confidence(report), report_path, int(summary["lines_scanned"]), outcome.commit,
                   changed_tree=outcome.dirty)


def _live_groups(report: dict) -> list[dict]:
    """The finding groups the port must deal with (judge/analysis/verdict.py is_live): on the default install path,
    unguarded, above info."""
    return [g for g in report["groups"] if g["disposition"] == "live" and not g["guarded"]
            and g["severity"] != "info"]


def _group_label(group: dict) -> str:
    subject = next((s["subject"] for s in group["sites"] if s.get("subject")), "")
    return f"{group['name']} ({subject})" if subject and subject != group["name"] else group["name"]


def _confidence(report: dict) -> str:
    primary = [c for c in report["components"] if c["kind"] == "primary"] or report["components"]
    paths = [c["rocm_path"] for c in primary if c.get("rocm_path")]
    return paths[0]["confidence"] if paths else "none"


def day_hours(report: dict) -> float:
    """The report's own engineer-day (its effort assumptions), to turn a group's hours into days."""
    for assumption in report["effort"].get("assumptions", ()):
        if assumption["name"] == "engineer-day":
            number = re.match(r"\s*([\d.]+)", str(assumption["value"]))
            if number and float(number.group(1)) > 0:
                return float(number.group(1))
    return DEFAULT_DAY_HOURS


def _blockers(outcomes: Sequence[Outcome]) -> tuple[Blocker, ...]:
    hours: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0])
    touched: dict[tuple[str, str], list[str]] = defaultdict(list)
    about: dict[tuple[str, str], tuple[str, str, str]] = {}
    for outcome in outcomes:
        report = outcome.report
        if outcome.status == FAILED or report is None:
            continue
        per_day = day_hours(report)
        fixes = {f["rule"]: f.get("rocm_alternative") or "" for f in report["findings"]}
        for group in _live_groups(report):
            low, high = group["effort_hours"]
            dependency = group["category"] in DEPENDENCY_CATEGORIES
            key = (group["name"] if dependency else group["rule"], "dependency" if dependency else "rule")
            hours[key][0] += low / per_day
            hours[key][1] += high / per_day
            if outcome.name not in touched[key]:
                touched[key].append(outcome.name)
            if not about.get(key, ("", "", ""))[2]:
                about[key] = (group["name"], group["rule"], fixes.get(group["rule"], ""))
    found = [Blocker(key, kind, *about[(key, kind)][:2], tuple(touched[(key, kind)]), round(low, 2), round(high, 2),
                     about[(key, kind)][2])
             for (key, kind), (low, high) in hours.items()]
    return tuple(sorted(found, key=lambda b: (-b.weight, -len(b.repositories), -b.effort_high_days, b.key)))


def _totals(rows: Sequence[RepoRow]) -> Totals:
    scanned = [r for r in rows if r.status != FAILED]
    count = {verdict: sum(1 for r in scanned if r.verdict == verdict) for verdict in VERDICTS}
    lines = sum(r.lines for r in scanned)
    ready_lines = sum(r.lines for r in scanned if r.verdict == "ready")
    return Totals(len(rows), len(scanned), len(rows) - len(scanned), count["ready"], count["needs-port"],
                  count["blocked"], lines, ready_lines, round(100.0 * ready_lines / lines, 1) if lines else 0.0,
                  round(sum(r.effort_low_days for r in scanned), 2), round(sum(r.effort_high_days for r in scanned), 2))


def reached(portfolio: Portfolio, threshold: str | None) -> list[RepoRow]:
    """The repositories at or above `--fail-on` (blocked, or needs-port which includes blocked)."""
    if threshold is None:
        return []
    return [r for r in portfolio.repositories if r.verdict is not None and ORDER[r.verdict] >= ORDER[threshold]]


def portfolio_dict(portfolio: Portfolio) -> dict:
    from auditor import __version__

    t = portfolio.totals
    return {
        "schema_version": 1,
        "tool": {"name": "rocm-audit", "version": __version__},
        "repositories": [
            {"name": r.name, "source": r.source, "verdict": r.verdict, "effort_low_days": r.effort_low_days,
             "effort_high_days": r.effort_high_days, "status": r.status, "report": r.report, "reason": r.reason,
             "top_blocker": r.top_blocker, "rocm_path_confidence": r.confidence or None, "lines_scanned": r.lines,
             "commit": r.commit, "working_tree_changed": r.changed_tree, "page": r.page,
             "trend": [{"day": day, "live": live} for day, live in r.trend]}
            for r in portfolio.repositories],
        "blockers": [
            {"key": b.key, "kind": b.kind, "repositories": list(b.repositories), "effort_low_days": b.effort_low_days,
             "effort_high_days": b.effort_high_days, "name": b.name, "rule": b.rule, "fix": b.fix}
            for b in portfolio.blockers],
        "totals": {
            "repositories": t.repositories, "scanned": t.scanned, "failed": t.failed, "ready": t.ready,
            "needs-port": t.needs_port, "blocked": t.blocked, "lines_scanned": t.lines, "lines_ready": t.ready_lines,
            "ready_share_percent": t.ready_share, "effort_low_days": t.effort_low_days,
            "effort_high_days": t.effort_high_days,
            "burndown": [{"day": day, "live": live} for day, live in portfolio.burndown]},
    }
