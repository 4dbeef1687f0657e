"""Effort range and verdicts from findings (design.md section 6). Pure functions."""
from __future__ import annotations

import re
import tomllib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import PurePosixPath

from auditor.rulebook import rules_root
from auditor.types import Component, Effort, Finding, Rule, Severity


@dataclass(frozen=True, slots=True)
class EffortModel:
    hours_per_day: float
    site_hours: dict[str, tuple[float, float]]
    repeat_effort: str
    optional_dirs: frozenset[str]


@cache
def load_model() -> EffortModel:
    data = tomllib.loads((rules_root() / "effort.toml").read_text(encoding="utf-8"))
    return EffortModel(
        hours_per_day=float(data["hours_per_day"]),
        site_hours={k: (float(v[0]), float(v[1])) for k, v in data["site_hours"].items()},
        repeat_effort=str(data["repeat"]["effort"]),
        optional_dirs=frozenset(data["optional_paths"]["names"]),
    )


def in_optional_dir(path: str, model: EffortModel, within: str = "") -> bool:
    inner = PurePosixPath(path).relative_to(within) if within and path.startswith(within + "/") else PurePosixPath(path)
    return any(part.lower() in model.optional_dirs for part in inner.parts[:-1])


def counts(finding: Finding) -> bool:
    """Whether a finding is work, wherever it sits (optional directories are the caller's business)."""
    return not finding.guarded and not finding.optional and finding.severity > Severity.INFO


def on_default_path(finding: Finding, model: EffortModel | None = None) -> bool:
    """Work a default install needs: counted, and not under examples/, tests/, hopper/ and the like."""
    return counts(finding) and not in_optional_dir(finding.path, model or load_model())


def site_hours(findings: Sequence[Finding], rules: dict[str, Rule], model: EffortModel) -> list[tuple[float, float]]:
    """Hours per finding, in order; repeats of an L/XL rule+subject cost only `repeat_share`."""
    seen: set[str] = set()
    out = []
    for finding in findings:
        rule = rules.get(finding.rule_id)
        if rule is None or finding.guarded or finding.severity == Severity.INFO:
            out.append((0.0, 0.0))
            continue
        low, high = model.site_hours[rule.effort]
        if rule.effort in ("L", "XL") and rule.id in seen:  # per replacement, not per spelling or site
            low, high = model.site_hours[model.repeat_effort]
        seen.add(rule.id)
        out.append((low, high))
    return out


def estimate(findings: Sequence[Finding], rules: dict[str, Rule]) -> tuple[Effort, list[tuple[float, float]]]:
    model = load_model()
    hours = site_hours(findings, rules, model)
    by_category: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for finding, (low, high) in zip(findings, hours):
        if on_default_path(finding, model):
            by_category[rules[finding.rule_id].category][0] += low
            by_category[rules[finding.rule_id].category][1] += high
    day = model.hours_per_day
    categories = tuple(
        (cat, round(low / day, 1), round(high / day, 1)) for cat, (low, high) in sorted(by_category.items())
    )
    total_low = round(sum(v[0] for v in by_category.values()) / day, 1)
    total_high = round(sum(v[1] for v in by_category.values()) / day, 1)
    assumptions = (
        f"{day:g} engineer-hours per day",
        "per-site hours by effort class: "
        + ", ".join(f"{k} {lo:g}-{hi:g} h" for k, (lo, hi) in model.site_hours.items()),
        f"an L/XL replacement is paid once per rule; each further site costs an {model.repeat_effort}-class edit",
        "guarded, info and optional findings (declared extras; examples/, tests/, benchmarks/, hopper/ and"
        " other optional directories) cost nothing",
    )
    return Effort(total_low, total_high, categories, assumptions), hours


# ---------------------------------------------------------------- verdicts

def verdict_of(findings: Iterable[Finding], rules: dict[str, Rule]) -> tuple[str, str]:
    live = [f for f in findings if counts(f)]
    critical = [f for f in live if f.severity == Severity.CRITICAL]
    if critical:
        return "blocked", "blocked: " + _describe(critical, rules, "with no ROCm equivalent")
    work = [f for f in live if f.severity >= Severity.MEDIUM]
    if work:
        return "needs-port", "needs-port: " + _describe(work, rules, "to change by hand")
    low = [f for f in live if f.severity == Severity.LOW]
    if low:
        return "ready", f"ready: {len(low)} finding(s) left, all handled by HIPIFY or a rename"
    return "ready", "ready: nothing on the default install path needs porting"


def _describe(findings: list[Finding], rules: dict[str, Rule], tail: str) -> str:
    """`N finding(s) …: rule-name (subjects) in path and K more file(s); …` for the first three rules."""
    by_rule: dict[str, tuple[list[str], set[str]]] = {}
    for f in sorted(findings, key=lambda f: (-f.severity, f.path, f.span.line or 0)):
        label = rules[f.rule_id].name if f.rule_id in rules else f.rule_id
        subjects, paths = by_rule.setdefault(label, ([], set()))
        short = _short_subject(f.subject)
        if short and short not in subjects and short not in label:
            subjects.append(short)
        paths.add(f.path)
    parts = []
    for label, (subjects, paths) in list(by_rule.items())[:3]:
        named = f"{label} ({', '.join(subjects[:3])}{', …' if len(subjects) > 3 else ''})" if subjects else label
        first = sorted(paths)[0]
        parts.append(f"{named} in {first}" + (f" and {len(paths) - 1} more file(s)" if len(paths) > 1 else ""))
    more = f"; and {len(by_rule) - 3} more rule(s)" if len(by_rule) > 3 else ""
    return f"{len(findings)} finding(s) {tail}: {'; '.join(parts)}{more}"


def _short_subject(subject: str) -> str:
    """`mbarrier.try_wait.parity.shared::cta.b64` -> `mbarrier`; `cp.async.bulk.tensor.2d` -> `cp.async.bulk`."""
    if not re.fullmatch(r"[A-Za-z_][\w.:+-]*", subject):
        return ""  # a line of a build file or a URL says less than the rule name
    parts = subject.split(".")
    keep = 3 if len(parts[0]) <= 3 else 1
    return ".".join(parts[:keep])


def component_of(path: str, component_paths: Sequence[str]) -> str:
    best = "."
    for comp in component_paths:
        if comp != "." and (path == comp or path.startswith(comp + "/")) and len(comp) > len(best if best != "." else ""):
            best = comp
    return best


def components(
    findings: Sequence[Finding],
    component_dirs: dict[str, bool],
    rules: dict[str, Rule],
) -> tuple[tuple[Component, ...], str, str]:
    """Per-component verdicts, and the overall verdict from the components a default install uses."""
    model = load_model()
    paths = sorted(component_dirs)
    grouped: dict[str, list[Finding]] = defaultdict(list)
    for finding in findings:
        grouped[component_of(finding.path, paths)].append(finding)
    result = []
    default_path: list[Finding] = []
    for comp in paths:
        optional = comp != "." and in_optional_dir(comp + "/x", model)
        own = grouped.get(comp, [])
        core = [f for f in own if not in_optional_dir(f.path, model, "" if comp == "." else comp)]
        verdict, reason = verdict_of(core, rules)
        result.append(Component(comp, verdict, component_dirs[comp], reason, optional))
        if not optional:
            default_path.extend(core)
    overall, reason = verdict_of(default_path, rules)
    return tuple(result), overall, reason
