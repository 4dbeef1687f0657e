"""Effort range and verdicts from findings (docs/concepts.md, The verdict and Effort). Pure functions."""
from __future__ import annotations

import re
import tomllib
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache

from auditor.match.rulebook import rules_root
from auditor.types import Assumption, Effort, FileResult, Finding, Rule, Severity
from auditor.util.purepaths import pure


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
    review_full_files: int            # per directory, reviewed at the full rate; further ones at the repeat rate
    review_repeat_hours: Hours
    component_cap: Hours              # one rule's sites, the review, the kernel validation: each, per component
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
        Assumption(f"reviewing HIPIFY's output beyond the first {review['full_files_per_directory']} files of a "
                   "directory", _hours_text(_pair(review["repeat_file_hours"])) + " a file", review["repeat_source"]),
        Assumption("one rule's sites, the HIPIFY review or the kernel validation, within one component",
                   f"at most one {data['component_cap']['effort']} site "
                   f"({_hours_text(site[data['component_cap']['effort']])})", data["component_cap"]["source"]),
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
        review_full_files=int(review["full_files_per_directory"]),
        review_repeat_hours=_pair(review["repeat_file_hours"]),
        component_cap=site[data["component_cap"]["effort"]],
        validation_base_hours=_pair(validation["base_hours"]),
        validation_kernel_file_hours=_pair(validation["per_kernel_file_hours"]),
        optional_dirs=frozenset(data["optional_paths"]["names"]),
        assumptions=tuple(assumptions),
    )


def in_optional_dir(path: str, model: EffortModel, within: str = "") -> bool:
    return _in_optional_dir(path, model.optional_dirs, within)


@lru_cache(maxsize=1 << 17)
def _in_optional_dir(path: str, optional_dirs: frozenset[str], within: str) -> bool:
    inner = pure(path).relative_to(within) if within and path.startswith(within + "/") else pure(path)
    return any(part.lower() in optional_dirs for part in inner.parts[:-1])


def counts(finding: Finding) -> bool:
    """Whether a finding is work: live (docs/concepts.md, Dispositions), unguarded, not optional,
    above info."""
    return finding.disposition == "live" and not finding.guarded and not finding.optional \
        and finding.severity > Severity.INFO


def on_default_path(finding: Finding, model: EffortModel | None = None) -> bool:
    """Work a default install needs: counted, and not under examples/, tests/, hopper/ and the like."""
    return counts(finding) and not in_optional_dir(finding.path, model or load_model())


def site_hours(findings: Sequence[Finding], rules: dict[str, Rule], model: EffortModel,
               components: Sequence[str] = ()) -> list[Hours]:
    """Hours per finding, in order; only live findings cost (docs/concepts.md, The verdict). Effort scales with
    distinct problems, not lines: a rule in a file (or in a family of generated files that differ only in
    numbers) is one problem, its further sites there cost nothing; a
    replacement (an L/XL rule, a CUDA-only dependency: one rule names one package or library, whatever its
    spelling) is paid once, by a site on the default install path when there is one, and its further files
    cost a repeat-class edit. Within one component a rule never costs more than the component cap (one XL
    rewrite): its sites' hours are scaled down to it."""
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
        folder = pure(finding.path).parent.as_posix()
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
    return _capped(out, [(f.rule_id, component_of(f.path, components)) for f in findings], model.component_cap)


def component_of(path: str, components: Sequence[str]) -> str:
    from auditor.model.rocmpath.reader import owner

    return owner(path, components) if components else "."


def _capped(hours: list[Hours], keys: Sequence[object], cap: Hours) -> list[Hours]:
    """The hours, scaled down per key so that no key's total exceeds the cap (low and high each)."""
    totals: dict[object, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for key, (low, high) in zip(keys, hours):
        totals[key][0] += low
        totals[key][1] += high
    scale = {key: (min(1.0, cap[0] / low) if low else 1.0, min(1.0, cap[1] / high) if high else 1.0)
             for key, (low, high) in totals.items()}
    return [(low * scale[key][0], high * scale[key][1]) for key, (low, high) in zip(keys, hours)]


GENERATED_HASH = re.compile(r"(?<![0-9a-z])(?=[a-f]*[0-9])[0-9a-f]{8,}(?![0-9a-z])", re.IGNORECASE)


def family(path: str) -> str:
    """Files that differ only in numbers or a generator's hash (`fmha_fwd_hdim64_fp16_sm80.cu`, `…hdim128…`,
    `moe_gemm_276cec1f1d2c8ba1e4cb_kernel.cu`) are one generated family: one problem for the effort, however
    many instances the generator wrote."""
    p = pure(path)
    name = GENERATED_HASH.sub("#", p.name)
    return f"{p.parent.as_posix()}/{re.sub(r'[0-9]+', '#', name)}"


def review_hours(result: FileResult, model: EffortModel) -> Hours:
    """Running HIPIFY on one file and reading what it did and what it left."""
    cov = result.coverage
    if cov is None or cov.total == 0:
        return NO_HOURS
    unconverted = len(cov.unconverted)
    return (model.review_file_hours[0] + unconverted * model.review_unconverted_hours[0],
            model.review_file_hours[1] + unconverted * model.review_unconverted_hours[1])


def _top_directory(path: str) -> str:
    parts = pure(path).parts
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
    components: Sequence[str] = (),
) -> tuple[Effort, list[Hours]]:
    """The effort range (docs/concepts.md, The verdict and Effort) and each finding's hours, in the findings' order.
    `built_elsewhere`: files a ROCm build does not compile (CUDA-only sources with an alternative, opt-in
    ops, other backends, files no build lists): neither reviewed nor validated. `hipified`: files a ROCm
    build already compiles as HIP: validated, not reviewed. `components`: the project's component directories,
    within each of which the review and the kernel validation are capped (rules/effort.toml, component_cap)."""
    model = load_model()
    day = model.hours_per_day
    hours = site_hours(findings, rules, model, components)
    by_category, by_directory, by_file = _Tally(), _Tally(), _Tally()
    for finding, cost in zip(findings, hours):
        if on_default_path(finding, model):
            by_category.add(rules[finding.rule_id].category, cost)
            by_directory.add(_top_directory(finding.path), cost)
            by_file.add(finding.path, cost)
    plan = _review_plan(findings, results, built_elsewhere, hipified, components, model)
    capped = _capped([cost for _, _, cost in plan.reviews], [comp for comp, _, _ in plan.reviews], model.component_cap)
    for (_comp, path, _), cost in zip(plan.reviews, capped):
        by_directory.add(_top_directory(path), cost)
        by_file.add(path, cost)
    review_low, review_high = sum(c[0] for c in capped), sum(c[1] for c in capped)
    validation = _validation_hours(findings, plan, model)
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
        kernel_files=len(plan.kernel_components),
        reviewed_files=tuple(path for _, path, _ in plan.reviews),
    )
    return effort, hours


@dataclass(frozen=True, slots=True)
class _ReviewPlan:
    """The scanned files a port reviews and validates on the default install path."""
    reviews: tuple[tuple[str, str, Hours], ...]   # (component, path, hours) of each file whose HIPIFY output is read
    kernel_components: tuple[str, ...]            # the component of each file defining kernels
    gpu_code: bool                                # any file with GPU code (HIPIFY finds something to convert)


def _review_plan(
    findings: Sequence[Finding], results: Sequence[FileResult], built_elsewhere: frozenset[str],
    hipified: frozenset[str], components: Sequence[str], model: EffortModel,
) -> _ReviewPlan:
    """One file per generated family, none the ROCm build does not compile or ports otherwise; a directory's
    files past `review_full_files` at the repeat rate; a file the ROCm build already compiles as HIP costs no
    review but is still validated."""
    reviews: list[tuple[str, str, Hours]] = []
    kernels: list[str] = []
    gpu_code = False
    seen_families: set[str] = set()
    per_directory: dict[str, int] = defaultdict(int)
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
        component = component_of(result.path, components)
        cost = NO_HOURS if result.path in hipified else review_hours(result, model)
        if cost != NO_HOURS:
            folder = pure(result.path).parent.as_posix()
            per_directory[folder] += 1
            if per_directory[folder] > model.review_full_files:
                cost = model.review_repeat_hours
            reviews.append((component, result.path, cost))
        if result.facts.defines_kernels:
            kernels.append(component)
    return _ReviewPlan(tuple(reviews), tuple(kernels), gpu_code)


def _validation_hours(findings: Sequence[Finding], plan: _ReviewPlan, model: EffortModel) -> Hours:
    """Testing on AMD hardware: a base when there is GPU code to validate, plus each kernel file (capped per
    component); nothing for a tree without any."""
    per_kernel = _capped([model.validation_kernel_file_hours] * len(plan.kernel_components),
                         plan.kernel_components, model.component_cap)
    if plan.gpu_code or plan.kernel_components or any(counts(f) or f.disposition == "verify on hardware"
                                                      for f in findings if not in_optional_dir(f.path, model)):
        return (model.validation_base_hours[0] + sum(h[0] for h in per_kernel),
                model.validation_base_hours[1] + sum(h[1] for h in per_kernel))
    return NO_HOURS
