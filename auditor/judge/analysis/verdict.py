"""Verdicts from live findings only (docs/concepts.md, The verdict), per component and overall, with a reason that
leads with the answer, names the ROCm path with file:line, gives the install recipe, then what is not
covered and the work left."""
from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence

from dataclasses import replace

from auditor.judge.dispositions import LIVE, OPTIONAL, OUTSIDE_MAIN_PATH, VERIFY
from auditor.model.project import STALE_TRAIT
from auditor.model.rocmpath.model import BUILDS_ON_ROCM, ProjectBuild, RocmPath
from auditor.model.rocmpath.reader import owner
from auditor.types import Component, Finding, Rule, Severity

ORDER = {"blocked": 2, "needs-port": 1, "ready": 0}


def is_live(finding: Finding) -> bool:
    """Work for the port: would break on ROCm (Finding.would_break) and more than information."""
    return finding.would_break() and finding.severity > Severity.INFO


def _describe(findings: list[Finding], rules: dict[str, Rule], tail: str) -> str:
    """`N finding(s) …: rule-name (subjects) in path:line and K more file(s); …` for the first three rules."""
    by_rule: dict[str, tuple[list[str], list[str]]] = {}
    for f in sorted(findings, key=lambda f: (-f.severity, f.path, f.span.line or 0)):
        label = rules[f.rule_id].name if f.rule_id in rules else f.rule_id
        subjects, places = by_rule.setdefault(label, ([], []))
        short = _short_subject(f.subject)
        if short and short not in subjects and short not in label:
            subjects.append(short)
        if not any(p.split(":")[0] == f.path for p in places):
            places.append(f"{f.path}:{f.span.line}" if f.span.line else f.path)
    parts = []
    for label, (subjects, places) in list(by_rule.items())[:3]:
        named = f"{label} ({', '.join(subjects[:3])}{', …' if len(subjects) > 3 else ''})" if subjects else label
        parts.append(f"{named} in {places[0]}" + (f" and {len(places) - 1} more file(s)" if len(places) > 1 else ""))
    more = f"; and {len(by_rule) - 3} more rule(s)" if len(by_rule) > 3 else ""
    return f"{len(findings)} finding(s) {tail}: {'; '.join(parts)}{more}"


def _short_subject(subject: str) -> str:
    """`mbarrier.try_wait.parity.shared::cta.b64` -> `mbarrier`; `cp.async.bulk.tensor.2d` -> `cp.async.bulk`."""
    if not re.fullmatch(r"[A-Za-z_][\w.:+-]*", subject):
        return ""
    parts = subject.split(".")
    keep = 3 if len(parts[0]) <= 3 else 1
    return ".".join(parts[:keep])


def _path_text(rocm: RocmPath | None) -> str:
    if rocm is None or not rocm.evidence:
        return ""
    shown = [e for e in rocm.evidence if e.pattern in BUILDS_ON_ROCM] or list(rocm.evidence)
    seen, parts = set(), []
    for e in shown:
        if e.pattern in seen:
            continue
        seen.add(e.pattern)
        parts.append(f"{e.where} {e.what}")
    return "; ".join(parts[:3])


def _label(rocm: RocmPath | None) -> str:   # only asked of a verified path
    pure_python = rocm is not None and rocm.recipe.startswith("pip install . (pure")
    manifest = rocm is not None and rocm.recipe.startswith(("pip install -r", 'pip install ".['))  # no GPU build
    return "Runs on ROCm PyTorch" if pure_python or manifest else "ROCm build in tree"


def weighed(findings: Sequence[Finding], own: bool = False) -> list[Finding]:
    """The findings a component's verdict weighs: live ones above info; `own`: a secondary or optional component
    judged for itself, where being optional to the tree does not make a finding optional to the component."""
    return [f for f in findings if weighs(f, own)]


def weighs(finding: Finding, own: bool = False) -> bool:
    """Whether a component's verdict weighs the finding (`own`: judged for itself, see `weighed`)."""
    return is_live(finding) or (own and finding.disposition == OPTIONAL and finding.severity > Severity.INFO)


def _judged_for_itself(findings: Sequence[Finding], own: bool) -> list[Finding]:
    if not own:
        return list(findings)
    return [replace(f, disposition=LIVE, optional=False) if f.disposition == OPTIONAL else f for f in findings]


def component_verdict(
    findings: Sequence[Finding], rocm: RocmPath | None, rules: dict[str, Rule], own: bool = False,
    stale: Sequence[str] = (),
) -> tuple[str, str]:
    """`own`: judged for itself (weighed). `stale`: path:line of what ROCm 6 removed that its HIP build uses."""
    findings = _judged_for_itself(findings, own)
    live = weighed(findings)
    verify = sum(1 for f in findings if f.disposition == VERIFY)
    critical = [f for f in live if f.severity == Severity.CRITICAL]
    work = [f for f in live if f.severity >= Severity.MEDIUM]
    verified = rocm is not None and rocm.verified
    path = _path_text(rocm)
    parts: list[str] = []
    if critical:
        verdict = "blocked"
        parts.append(_describe(critical, rules, "with no ROCm equivalent"))
        if verified:
            broken = [f for f in critical if f.disposition_note.startswith("the ROCm build compiles")]
            parts.append((f"{_label(rocm)}, but broken: it compiles these files. " if broken
                          else f"{_label(rocm)}: ") + path)
    if not verified and rocm is not None and rocm.refusals:
        parts.append(f"Its ROCm branch only refuses ({', '.join(rocm.refusals[:2])}): not a ROCm path")
    if critical:
        pass   # the verdict and its first words are set above
    elif work:
        verdict = "needs-port"
        parts.append(_describe(work, rules, "to change by hand"))
        if verified:
            parts.append(f"{_label(rocm)}: {path}")
    elif rocm is not None and rocm.gpu_sources and not verified:
        verdict = "needs-port"
        parts.append(f"{rocm.gpu_sources} GPU source file(s) with no verified ROCm build: they need HIPIFY and a "
                     "HIP build")
    else:
        verdict = "ready"
        if verified:
            parts.append(f"{_label(rocm)}: {path}")
            if rocm is not None and rocm.recipe:
                parts.append(f"Install: {_recipe_text(rocm.recipe)}")
        else:
            low = [f for f in live if f.severity == Severity.LOW]
            parts.append(f"{len(low)} finding(s) left, all handled by HIPIFY or a rename" if low
                         else "nothing on the default install path needs porting")
    if verify:
        parts.append(f"Verify on hardware: {verify} item(s)")
    notes = sum(1 for f in findings if f.disposition in OUTSIDE_MAIN_PATH and f.severity >= Severity.MEDIUM
                and not f.guarded)
    if notes:
        parts.append(f"{notes} note(s) outside the main path (optional integrations, developer scripts, tool "
                     "configuration, examples) do not decide it")
    if verified and rocm is not None:
        parts.append(_confidence_text(rocm, stale))
    return verdict, f"{verdict}: " + ". ".join(parts)


def _confidence_text(rocm: RocmPath, stale: Sequence[str] = ()) -> str:
    """docs/reach-model.md: CI that builds for ROCm raises the stated confidence; its absence lowers it; a HIP
    build written for what ROCm 6 removed makes it low ("A stale HIP path")."""
    if stale:
        more = f" and {len(stale) - 1} more" if len(stale) > 1 else ""
        return f"Confidence {rocm.confidence}: its HIP build uses what ROCm 6 removed ({stale[0]}{more})"
    if rocm.ci:
        more = f" and {len(rocm.ci) - 1} more" if len(rocm.ci) > 1 else ""
        return f"Confidence {rocm.confidence}: CI builds for ROCm ({rocm.ci[0]}{more})"
    return f"Confidence {rocm.confidence}: no CI job builds for ROCm"


def verdicts(
    findings: Sequence[Finding], project: ProjectBuild, rules: dict[str, Rule],
) -> tuple[tuple[Component, ...], str, str]:
    comps = sorted(project.components) or ["."]
    grouped: dict[str, list[Finding]] = defaultdict(list)
    for f in findings:
        grouped[owner(f.path, comps)].append(f)
    out: list[Component] = []
    for comp in comps:
        rocm = project.paths.get(comp)
        kind = project.components.get(comp, "primary")
        mine = grouped.get(comp, [])
        stale = _stale_sites(mine, rules)
        if rocm is not None and stale:
            rocm = replace(rocm, confidence="low")
        verdict, reason = component_verdict(mine, rocm, rules, own=kind != "primary", stale=stale)
        out.append(Component(comp, verdict, bool(rocm and rocm.verified), reason, kind != "primary", rocm, kind,
                             len(weighed(mine, own=kind != "primary"))))
    primary = [c for c in out if c.kind == "primary"]
    if project.collection:
        programs = [c for c in out if c.path != "."]
        share = Counter(c.verdict for c in programs)
        blocked_share = share["blocked"] / max(len(programs), 1)
        overall = ("blocked" if blocked_share > 0.5
                   else "needs-port" if share["blocked"] or share["needs-port"] else "ready")
        reason = (f"{overall}: a collection of {len(programs)} independent programs; {share['blocked']} blocked, "
                  f"{share['needs-port']} need porting, {share['ready']} ready")
        return tuple(out), overall, reason
    # a nested distribution the package imports without a fallback decides with the package
    needed = [c for c in out if c.path in project.required_parts]
    # of components with the same verdict, the one with the most work explains it (its findings fill the plan)
    head = max(primary + needed, key=lambda c: (ORDER[c.verdict], c.live)) if primary else out[0]
    reason = head.reason if head.kind == "primary" else \
        f"{head.verdict}: {project.required_parts[head.path]}. {head.reason.split(': ', 1)[-1]}"
    uncovered = [c for c in out if c.kind != "primary" and c.verdict != "ready" and c not in needed]
    if uncovered:
        reason += ". Not covered: " + "; ".join(f"{c.path}/ ({c.kind}, {c.verdict})" for c in uncovered[:4])
    if isinstance(head.rocm_path, RocmPath) and head.rocm_path.cuda_only_artifacts and head.rocm_path.verified:
        reason += ". CUDA-only artifacts: " + ", ".join(f"`{a}`" for a in head.rocm_path.cuda_only_artifacts[:4])
    return tuple(out), head.verdict, reason


def _stale_sites(findings: Sequence[Finding], rules: dict[str, Rule]) -> tuple[str, ...]:
    """The live findings of rules with the `stale-hip` trait (auditor/match/rulebook/traits.py), as path:line."""
    return tuple(f"{f.path}:{f.span.line}" for f in findings if f.disposition == LIVE
                 and f.rule_id in rules and STALE_TRAIT in rules[f.rule_id].traits)


def _recipe_text(recipe: str) -> str:
    """The commands in backticks, what they assume after them: `pip install .` on ROCm PyTorch."""
    for context in (" (pure Python", " on ROCm PyTorch", " (with "):
        command, found, rest = recipe.partition(context)
        if found:
            return f"`{command}`{found}{rest}"
    return f"`{recipe}`"
