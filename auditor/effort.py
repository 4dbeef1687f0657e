"""Effort range and verdicts from findings (design.md section 6). Pure functions."""
from __future__ import annotations

import re
import tomllib
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import PurePosixPath

from auditor.rulebook import rules_root
from auditor.types import Assumption, Effort, FileResult, Finding, Rule, Severity


Hours = tuple[float, float]
DEPENDENCY_CATEGORIES = frozenset({"cuda_only_python_package", "cuda_only_library"})
NO_HOURS: Hours = (0.0, 0.0)


@dataclass(frozen=True, slots=True)
class EffortModel:
    hours_per_day: float
    site_hours: dict[str, Hours]
    handled_hours: Hours
    repeat_effort: str
    dependency_hours: dict[str, Hours]
    review_file_hours: Hours
    review_unconverted_hours: Hours
    validation_base_hours: Hours
    validation_kernel_file_hours: Hours
    optional_dirs: frozenset[str]
    assumptions: tuple[Assumption, ...]


def _pair(value) -> Hours:
    return float(value[0]), float(value[1])


def _hours_text(value: Hours) -> str:
    return f"{value[0]:g}-{value[1]:g} h"


@cache
def load_model() -> EffortModel:
    data = tomllib.loads((rules_root() / "effort.toml").read_text(encoding="utf-8"))
    site = {k: _pair(v["hours"]) for k, v in data["site"].items()}
    dependency = {k: _pair(v["hours"]) for k, v in data["dependency"].items()}
    review, validation = data["hipify_review"], data["validation"]
    assumptions = [Assumption("engineer-day", f"{data['day']['hours']:g} h", data["day"]["source"])]
    assumptions += [Assumption(f"site of an {k} rule" if k in ("L", "XL") else f"site of a {k} rule",
                               _hours_text(v), data["site"][k]["source"]) for k, v in site.items()]
    assumptions += [
        Assumption("low finding (HIPIFY or a rename handles it)", _hours_text(_pair(data["handled"]["hours"])),
                   data["handled"]["source"]),
        Assumption("further site of an L/XL rule or of a replaced dependency",
                   f"as a {data['repeat']['effort']} site", data["repeat"]["source"]),
    ]
    assumptions += [Assumption(f"replacing a CUDA-only dependency, {k} rule (once per package)", _hours_text(v),
                               data["dependency"][k]["source"]) for k, v in dependency.items()]
    assumptions += [
        Assumption("running HIPIFY on a file with CUDA references and reviewing the output",
                   f"{_hours_text(_pair(review['file_hours']))} + {_hours_text(_pair(review['per_unconverted_hours']))}"
                   " per unconverted reference", review["source"]),
        Assumption("validation on AMD hardware (numerics and benchmarks)",
                   f"{_hours_text(_pair(validation['base_hours']))} + "
                   f"{_hours_text(_pair(validation['per_kernel_file_hours']))} per file that defines __global__"
                   " kernels",
                   validation["source"]),
        Assumption("cost nothing", "guarded and info findings, declared extras, and "
                   + ", ".join(f"{n}/" for n in data["optional_paths"]["names"][:8]) + " and similar directories",
                   data["optional_paths"]["source"]),
    ]
    return EffortModel(
        hours_per_day=float(data["day"]["hours"]),
        site_hours=site,
        handled_hours=_pair(data["handled"]["hours"]),
        repeat_effort=str(data["repeat"]["effort"]),
        dependency_hours=dependency,
        review_file_hours=_pair(review["file_hours"]),
        review_unconverted_hours=_pair(review["per_unconverted_hours"]),
        validation_base_hours=_pair(validation["base_hours"]),
        validation_kernel_file_hours=_pair(validation["per_kernel_file_hours"]),
        optional_dirs=frozenset(data["optional_paths"]["names"]),
        assumptions=tuple(assumptions),
    )


def in_optional_dir(path: str, model: EffortModel, within: str = "") -> bool:
    inner = PurePosixPath(path).relative_to(within) if within and path.startswith(within + "/") else PurePosixPath(path)
    return any(part.lower() in model.optional_dirs for part in inner.parts[:-1])


def counts(finding: Finding) -> bool:
    """Whether a finding is work: live (rocm-path.md section 4), unguarded, not optional, above info."""
    return finding.disposition == "live" and not finding.guarded and not finding.optional \
        and finding.severity > Severity.INFO


def on_default_path(finding: Finding, model: EffortModel | None = None) -> bool:
    """Work a default install needs: counted, and not under examples/, tests/, hopper/ and the like."""
    return counts(finding) and not in_optional_dir(finding.path, model or load_model())


def site_hours(findings: Sequence[Finding], rules: dict[str, Rule], model: EffortModel) -> list[Hours]:
    """Hours per finding, in order; only live findings cost (rocm-path.md section 5). Effort scales with
    distinct problems, not lines: a rule in a file (or in a family of generated files that differ only in
    numbers) is one problem, its further sites there cost nothing; a
    replacement (an L/XL rule, a CUDA-only dependency: one rule names one package or library, whatever its
    spelling) is paid once, by a site on the default install path when there is one, and its further files
    cost a repeat-class edit."""
    paid: set[str] = set()
    in_file: set[tuple[str, str]] = set()
    paid_in: set[tuple[str, str]] = set()
    out: list[Hours] = [NO_HOURS] * len(findings)
    order = sorted(range(len(findings)), key=lambda i: not on_default_path(findings[i], model))
    for i in order:
        finding, rule = findings[i], rules.get(findings[i].rule_id)
        if rule is None or not counts(finding):
            continue
        if (rule.id, family(finding.path)) in in_file:
            continue
        in_file.add((rule.id, family(finding.path)))
        if finding.severity == Severity.LOW:
            out[i] = model.handled_hours
            continue
        dependency = rule.category in DEPENDENCY_CATEGORIES
        rewrite = not dependency and rule.effort in ("L", "XL")
        folder = PurePosixPath(finding.path).parent.as_posix()
        if rewrite and (rule.id, folder) in paid_in:
            continue   # the rewrite of this directory's kernels covers its (generated) siblings
        if rewrite:
            paid_in.add((rule.id, folder))
        if rule.id in paid:
            out[i] = model.site_hours[model.repeat_effort]
        elif dependency:
            out[i] = model.dependency_hours[rule.effort]
        else:
            out[i] = model.site_hours[rule.effort]
        if dependency or rule.effort in ("L", "XL"):
            paid.add(rule.id)
    return out


def family(path: str) -> str:
    """Files that differ only in numbers (`fmha_fwd_hdim64_fp16_sm80.cu`, `…hdim128…`) are one generated family:
    one problem for the effort, however many instances the generator wrote."""
    p = PurePosixPath(path)
    return f"{p.parent.as_posix()}/{re.sub(r'[0-9]+', '#', p.name)}"


def review_hours(result: FileResult, model: EffortModel) -> Hours:
    """Running HIPIFY on one file and reading what it did and what it left."""
    cov = result.coverage
    if cov is None or cov.total == 0:
        return NO_HOURS
    unconverted = len(cov.unconverted)
    return (model.review_file_hours[0] + unconverted * model.review_unconverted_hours[0],
            model.review_file_hours[1] + unconverted * model.review_unconverted_hours[1])


def _top_directory(path: str) -> str:
    parts = PurePosixPath(path).parts
    return parts[0] + "/" if len(parts) > 1 else "(top level)"


class _Tally:
    """Hours summed under keys."""

    def __init__(self) -> None:
        self.hours: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])

    def add(self, key: str, hours: Hours) -> None:
        if hours != NO_HOURS:
            self.hours[key][0] += hours[0]
            self.hours[key][1] += hours[1]

    def total(self) -> Hours:
        return sum(v[0] for v in self.hours.values()), sum(v[1] for v in self.hours.values())

    def rows(self, unit_hours: float, digits: int, by_cost: bool = False) -> tuple[tuple[str, float, float], ...]:
        """(key, low, high) in units of `unit_hours`, by key or costliest first."""
        rows = [(key, round(low / unit_hours, digits), round(high / unit_hours, digits))
                for key, (low, high) in self.hours.items()]
        return tuple(sorted(rows, key=lambda r: (-r[2], -r[1], r[0]) if by_cost else r[0]))


def estimate(
    findings: Sequence[Finding], rules: dict[str, Rule], results: Sequence[FileResult] = (),
    built_elsewhere: frozenset[str] = frozenset(), hipified: frozenset[str] = frozenset(),
) -> tuple[Effort, list[Hours]]:
    """The effort range (design.md section 6) and each finding's hours, in the findings' order.
    `built_elsewhere`: files a ROCm build does not compile (CUDA-only sources with an alternative, opt-in
    ops, other backends, files no build lists): neither reviewed nor validated. `hipified`: files a ROCm
    build already compiles as HIP: validated, not reviewed."""
    model = load_model()
    day = model.hours_per_day
    hours = site_hours(findings, rules, model)
    by_category, by_directory, by_file = _Tally(), _Tally(), _Tally()
    for finding, cost in zip(findings, hours):
        if on_default_path(finding, model):
            by_category.add(rules[finding.rule_id].category, cost)
            by_directory.add(_top_directory(finding.path), cost)
            by_file.add(finding.path, cost)
    review_low = review_high = 0.0
    kernel_files = 0
    gpu_code = False
    seen_families: set[str] = set()
    not_ported = {f.path for f in findings if f.disposition not in ("live", "verify on hardware", "guarded")}
    for result in results:
        if in_optional_dir(result.path, model):
            continue
        gpu_code = gpu_code or (result.coverage is not None and result.coverage.total > 0)
        if result.path in not_ported or result.path in built_elsewhere:
            continue
        if family(result.path) in seen_families:
            continue   # a generated sibling: reviewed and validated with the first of its family
        seen_families.add(family(result.path))
        cost = NO_HOURS if result.path in hipified else review_hours(result, model)
        review_low, review_high = review_low + cost[0], review_high + cost[1]
        by_directory.add(_top_directory(result.path), cost)
        by_file.add(result.path, cost)
        kernel_files += result.facts.defines_kernels
    validation: tuple[float, ...] = NO_HOURS
    if gpu_code or kernel_files or any(counts(f) or f.disposition == "verify on hardware"
                                       for f in findings if not in_optional_dir(f.path, model)):  # GPU code to validate
        validation = tuple(base + kernel_files * per for base, per in
                           zip(model.validation_base_hours, model.validation_kernel_file_hours))
    work_low, work_high = by_category.total()
    effort = Effort(
        hours_per_day=model.hours_per_day,
        low_days=round((work_low + review_low + validation[0]) / day, 1),
        high_days=round((work_high + review_high + validation[1]) / day, 1),
        by_category=by_category.rows(day, 1),
        assumptions=model.assumptions,
        hipify_review=(round(review_low / day, 1), round(review_high / day, 1)),
        validation=(round(validation[0] / day, 1), round(validation[1] / day, 1)),
        by_directory=by_directory.rows(day, 1, by_cost=True),
        by_file=by_file.rows(1.0, 2, by_cost=True),
        kernel_files=kernel_files,
    )
    return effort, hours
