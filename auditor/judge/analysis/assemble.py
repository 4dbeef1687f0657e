"""Turn per-file results into a Report: dispositions against the ROCm path, components, verdict, coverage,
effort; then each finding becomes a self-contained report row (its hours, component, group), so the renderers
only format."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial

from auditor.match.hipify.coverage import coverage
from auditor.model.rocmpath.pyreach import imported_modules_of
from auditor.judge.analysis.effort import EffortModel, Hours, estimate, in_optional_dir, load_model
from auditor.judge.analysis.groups import group_findings
from auditor.judge.assign import assign
from auditor.judge.dispositions import OPTIONAL, OPTIONAL_FEATURE
from auditor.model.ownpackages import own_package_finding
from auditor.model.project import ReachModel
from auditor.model.rocmpath.model import ProjectBuild
from auditor.model.rocmpath.reader import owner
from auditor.match.rulebook import Rulebook
from auditor.match.rulebook.context import ScanContext
from auditor.match.suppress import unknown_suppression_message, unknown_suppressions
from auditor.types import LIVE, VERIFY, Component, FileResult, Finding, FindingGroup, Report
from auditor.judge.analysis.verdict import verdicts
from auditor.judge.analysis.wideshuffle import wide_shuffle_findings
from auditor.match.xlang.importchain import link_imports
from auditor.match.xlang.link import link_ops, settled
from auditor.match.xlang.ownextension import link_own_extensions

# the dispositions of a library finding that make an extension op CUDA-only (auditor/match/xlang): not one the ROCm
# build does not compile, compiles another source for, or guards
CARRIED = frozenset({LIVE, VERIFY, OPTIONAL, OPTIONAL_FEATURE})


def build_report(
    root: str, results: Sequence[FileResult], rulebook: Rulebook | ScanContext, errors=(), vendored: Sequence[str] = (),
    project: ProjectBuild | None = None, unvendored: Sequence[str] = (),
    read: Callable[[str], str | None] | None = None, jobs: int = 1,
) -> Report:
    """`project`: what the tree's build files say (auditor.model.rocmpath.reader.read_project); without it every
    finding is judged as if the tree had one component and no ROCm build. `unvendored`: directories named like
    vendored code that a change adds (--diff-base): scanned, and never optional by their name (fail closed).
    `read`: a scanned file's text by its path, for the cross-language link (auditor/match/xlang), which reads the
    Python files only when a C++ file registers ops, in up to `jobs` processes."""
    rules = rulebook.by_id()
    project = project or ProjectBuild(components={".": "primary"})
    model = load_model()
    named_optional = [r.path for r in results if r.kind == "python" and r.findings and in_optional_dir(r.path, model)]
    # an examples/ module `import <package>` loads is no optional example (auditor/model/rocmpath/pyreach.py)
    loaded = imported_modules_of(project, {r.path: r.facts.imports for r in results if r.kind == "python"}) \
        if named_optional else frozenset()
    optional_by_name = partial(_optional_by_name, [*unvendored, *(p for p in named_optional if p in loaded)], model)
    comps = sorted(project.components) or ["."]
    findings = _judged_findings(results, rulebook, project, optional_by_name, read, jobs)
    elsewhere, hipified = _ported_by_a_verified_path(results, project, comps)
    effort, hours = estimate(findings, rules, results, elsewhere, hipified, comps)
    comps_out, verdict, reason = verdicts(findings, project, rules)
    rows, groups = _grouped_rows(findings, hours, comps_out, optional_by_name)
    all_errors = list(errors) + [(r.path, r.error) for r in results if r.error]
    return Report(
        root=root,
        findings=tuple(rows),
        results=tuple(results),
        components=comps_out,
        verdict=verdict,
        verdict_reason=reason,
        coverage=coverage(results, rulebook.table.describe()),
        effort=effort,
        rules=rules,
        errors=tuple(sorted(all_errors)),
        suppressed=sum(r.suppressed for r in results),
        vendored=tuple(vendored),
        groups=groups,
        warnings=tuple((path, line, unknown_suppression_message(rule_id))
                       for path, line, rule_id in unknown_suppressions(results)),
    )


def _optional_by_name(unvendored: Sequence[str], model: EffortModel, path: str, within: str = "") -> bool:
    """In a directory whose name makes it optional (tests, examples, ...), unless a change adds it as code."""
    if any(path == d or path.startswith(d + "/") for d in unvendored):
        return False
    return in_optional_dir(path, model, within)


def _judged_findings(
    results: Sequence[FileResult], rulebook: Rulebook | ScanContext, project: ProjectBuild,
    optional_by_name: Callable[..., bool], read: Callable[[str], str | None] | None, jobs: int = 1,
) -> list[Finding]:
    """Every file's findings but those on the project's own package, each with its disposition against the ROCm
    path, plus the extension ops the cross-language link finds CUDA-only; in report order."""
    rules = rulebook.by_id()
    findings: list[Finding] = [
        f for result in results for f in result.findings
        if not own_package_finding(f, rules.get(f.rule_id), project)
    ]
    model = _reach_model(results, rules, project, optional_by_name, findings)

    def placed(found: list[Finding]) -> list[Finding]:
        return assign(found, rules, model)

    findings = placed(findings)
    findings += wide_shuffle_findings(findings, project, rules, placed)
    if read is not None:
        linked = link_ops(results, findings, rulebook, read, CARRIED, jobs)
        linked += link_imports(results, findings, rulebook, read, CARRIED)
        linked += link_own_extensions(results, rulebook, read, {"cuda": project.cuda_only_extensions()})
        findings += [settled(p, f) for p, f in zip(placed(linked), linked)]
    findings.sort(key=Finding.sort_key)
    return findings


def reach_model(results: Sequence[FileResult], rulebook: Rulebook | ScanContext, project: ProjectBuild,
                unvendored: Sequence[str] = ()) -> ReachModel:
    """The run's reach model (auditor/model/), as build_report judges these results with it."""
    rules = rulebook.by_id()
    findings = [f for r in results for f in r.findings if not own_package_finding(f, rules.get(f.rule_id), project)]
    return _reach_model(results, rules, project, partial(_optional_by_name, unvendored, load_model()), findings)


def _reach_model(results: Sequence[FileResult], rules: dict, project: ProjectBuild,
                 optional_by_name: Callable[..., bool], findings: Sequence[Finding]) -> ReachModel:
    return ReachModel.of(project, results, findings, rules,
                         lambda path, comp: optional_by_name(path, "" if comp == "." else comp))


def _ported_by_a_verified_path(
    results: Sequence[FileResult], project: ProjectBuild, comps: list[str],
) -> tuple[frozenset[str], frozenset[str]]:
    """In components whose ROCm path is verified: the files the ROCm build replaces with another source, and the
    scanned files (both already ported, so they cost no effort)."""
    verified = [c for c, rocm in project.paths.items() if rocm.verified]
    elsewhere = frozenset(p for p, role in project.provenance.items()
                          if role not in ("both", "rocm") and owner(p, comps) in verified)
    hipified = frozenset(r.path for r in results if owner(r.path, comps) in verified)
    return elsewhere, hipified


def _grouped_rows(
    findings: list[Finding], hours: list[Hours], components: Sequence[Component],
    optional_by_name: Callable[..., bool],
) -> tuple[list[Finding], tuple[FindingGroup, ...]]:
    """Each finding as a self-contained report row (its hours, optional directory, component), numbered by the
    group it falls in."""
    rows = [replace(f, hours=h, in_optional_dir=optional_by_name(f.path),
                    component=component_of(components, f.path)) for f, h in zip(findings, hours)]
    groups = group_findings(rows)
    for number, group in enumerate(groups):
        for i in group.indexes:
            rows[i] = replace(rows[i], group=number)
    return rows, groups


def component_of(components: Sequence[Component], path: str) -> str:
    """The deepest component holding `path` ("." when none does)."""
    best = "."
    for c in components:
        if c.path not in (".", "") and (path == c.path or path.startswith(c.path.rstrip("/") + "/")):
            if best == "." or len(c.path) > len(best):
                best = c.path
    return best
