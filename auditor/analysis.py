"""Turn per-file results into a Report: optional paths, components, verdict, coverage, effort."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePosixPath

from auditor.coverage import coverage
from auditor.effort import components, estimate
from auditor.rulebook import Rulebook
from auditor.types import FileResult, Finding, Report

COMPONENT_FILES = {"setup.py", "pyproject.toml"}


def component_dirs(results: Sequence[FileResult]) -> dict[str, bool]:
    """Directories that hold a component, each with whether its build files already target ROCm."""
    paths = {r.path for r in results}
    dirs: dict[str, bool] = {".": False}
    for path in sorted(paths):
        p = PurePosixPath(path)
        if p.name in COMPONENT_FILES:
            dirs.setdefault(p.parent.as_posix(), False)
    cmake_dirs = {PurePosixPath(p).parent for p in paths if PurePosixPath(p).name == "CMakeLists.txt"}
    for directory in cmake_dirs:
        if not any(above in cmake_dirs for above in directory.parents):
            dirs.setdefault(directory.as_posix(), False)
    for result in results:
        if ("rocm_build", "yes") in result.facts:
            owner = PurePosixPath(result.path).parent.as_posix()
            while owner not in dirs and owner not in (".", ""):
                owner = PurePosixPath(owner).parent.as_posix()
            dirs[owner if owner in dirs else "."] = True
    return dirs


def build_report(
    root: str, results: Sequence[FileResult], rulebook: Rulebook, errors=(), vendored: Sequence[str] = ()
) -> Report:
    rules = rulebook.by_id()
    findings: list[Finding] = []
    for result in results:
        findings.extend(result.findings)
    findings.sort(key=Finding.sort_key)
    effort, hours = estimate(findings, rules, results)
    comps, verdict, reason = components(findings, component_dirs(results), rules)
    all_errors = list(errors) + [(r.path, r.error) for r in results if r.error]
    return Report(
        root=root,
        findings=tuple(findings),
        results=tuple(results),
        components=comps,
        verdict=verdict,
        verdict_reason=reason,
        coverage=coverage(results, rulebook.table.describe()),
        effort=effort,
        rules=rules,
        errors=tuple(sorted(all_errors)),
        suppressed=sum(r.suppressed for r in results),
        site_hours=tuple(hours),
        vendored=tuple(vendored),
    )
