"""The class of a finding's rule, as the judge's table reads it: how hard it is (its severity and category), what
kind of thing it reports, and the rule's traits (rules as data: `traits` in its TOML, match/rulebook/traits.py)."""
from __future__ import annotations

from types import MappingProxyType

from auditor.match.rulebook.traits import TRAITS
from auditor.types import Finding, Rule, Severity

SOFT_CATEGORIES = frozenset({"warp_size_assumption", "runtime_check"})

CLASSES = MappingProxyType({
    "soft": "above info, and medium or below or a warp-size or runtime-check category: to verify where ROCm runs it",
    "hard": "above medium: work where the ROCm build compiles it",
    "container-rule": "a container image or CI setting",
    "build-setting": "a build-system setting above info and medium or below",
    "optional-package": "a CUDA-only Python package the default install does not declare as a dependency",
    **TRAITS,
})


def classes_of(finding: Finding, rule: Rule | None, required_rules: frozenset[str]) -> frozenset[str]:
    """`required_rules`: the package rules whose package the install declares as a hard dependency."""
    category = rule.category if rule is not None else ""
    severity = finding.severity
    names: set[str] = set(rule.traits) if rule is not None else set()
    if (category in SOFT_CATEGORIES or severity <= Severity.MEDIUM) and severity > Severity.INFO:
        names.add("soft")
    if severity > Severity.MEDIUM:
        names.add("hard")
    if category == "container":
        names.add("container-rule")
    if category == "build_system" and Severity.INFO < severity <= Severity.MEDIUM:
        names.add("build-setting")
    if category == "cuda_only_python_package" and finding.rule_id not in required_rules:
        names.add("optional-package")
    return frozenset(names)
