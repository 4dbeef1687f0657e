"""The project's own packages: importing or requiring them is never a package finding."""
from __future__ import annotations

import re
from collections.abc import Iterable

from auditor.model.rocmpath.model import ProjectBuild
from auditor.match.rulebook.schema import DependencyMatch
from auditor.types import Finding, Rule


def _package_name(subject: str) -> str:
    return re.split(r"[.\[=<>~! ;]", subject.strip(), maxsplit=1)[0].lower().replace("-", "_")


def own_package_finding(finding: Finding, rule: Rule | None, project: ProjectBuild) -> bool:
    """The project importing (or requiring) its own package is never a package finding: not a CUDA-only package,
    not an unmaintained one, whatever the rule's category."""
    if rule is None or not project.own_packages:
        return False
    names_packages = isinstance(rule.spec, DependencyMatch) and bool(rule.spec.imports or rule.spec.pypi)
    if rule.category != "cuda_only_python_package" and not names_packages:
        return False
    return _package_name(finding.subject) in {p.lower().replace("-", "_") for p in project.own_packages}


def own_package_rules(rules: Iterable[Rule], own_packages: frozenset[str]) -> frozenset[str]:
    """Rules every finding of which own_package_finding would drop: dependency rules naming only the project's own
    packages (a library's imports of its own `pkg.ops`, scanning that library). Not run at all: most files of such a
    project import it, and each would otherwise take the whole Python rule walk for nothing."""
    own = {p.lower().replace("-", "_") for p in own_packages}
    dropped = set()
    for rule in rules:
        spec = rule.spec
        if not isinstance(spec, DependencyMatch) or spec.local_version or spec.index_url \
                or not (spec.imports or spec.pypi):
            continue
        names = [_package_name(m) for m in spec.imports] + [_package_name(p) for p in spec.pypi]
        if all(name in own and not any(ch in name for ch in "*?[") for name in names):
            dropped.add(rule.id)
    return frozenset(dropped)
