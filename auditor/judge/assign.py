"""Each finding's disposition: its rule's class and its line's reach (auditor/model/) looked up in the judge's
table, then the two refinements that read other findings or the project's libraries."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from auditor.match.inputs.kinds import PYTHON_CODE
from auditor.judge.classes import classes_of
from auditor.judge.dispositions import GUARDED, LIVE, OPTIONAL
from auditor.judge.table import Row, judge
from auditor.model.project import INTEGRATION_NOTE, ReachModel
from auditor.model.reach import Reach
from auditor.model.rocmpath.model import ProjectBuild
from auditor.model.rocmpath.optinlibs import library_macro
from auditor.types import Finding, Rule, Severity


@dataclass(frozen=True, slots=True)
class Judgement:
    """Why a finding has its disposition: the row of the table, the reach and the rule classes it was read from."""

    row: Row
    note: str
    reach: Reach
    classes: frozenset[str]


def judgement(finding: Finding, rule: Rule | None, model: ReachModel) -> Judgement:
    reach = model.reach_of(finding, rule)
    classes = classes_of(finding, rule, model.required_rules)
    row, note = judge(reach.facts | classes, {s.fact: s for s in reach.steps})
    return Judgement(row, note, reach, classes)


def assign(findings: Sequence[Finding], rules: Mapping[str, Rule], model: ReachModel) -> list[Finding]:
    out = []
    for f in findings:
        rule = rules.get(f.rule_id)
        judged = judgement(f, rule, model)
        disposition = judged.row.disposition
        # `guarded` the flag and `guarded` the disposition are one thing (code written for ROCm too)
        f = replace(f, disposition=disposition, disposition_note=judged.note, guarded=disposition == GUARDED)
        out.append(_opt_in_library(f, rule, model.project))
    return _within_optional_integrations(out, model.kinds)


def _opt_in_library(finding: Finding, rule: Rule | None, project: ProjectBuild) -> Finding:
    """A CUDA-only library with no ROCm equivalent that the project uses only behind its own opt-in macro
    (auditor/model/rocmpath/optinlibs.py): still reported, as port work (fence the include out of the default build)."""
    if finding.disposition != LIVE or finding.severity != Severity.CRITICAL or rule is None \
            or rule.category != "cuda_only_library" or not (tested := project.opt_in_tests.get(finding.path)):
        return finding
    macro = library_macro(finding.subject, tested)
    if macro is None:
        return finding
    note = (f"an opt-in: the project uses this library only behind `{macro}`, which its default build leaves "
            "undefined; fence the include out of the default build")
    return replace(finding, severity=Severity.HIGH, disposition_note=note,
                   message=f"{finding.message} Here {note}.")


def _within_optional_integrations(findings: list[Finding], kinds: Mapping[str, str]) -> list[Finding]:
    """A Python module that imports an optional NVIDIA integration is part of it: what else it does (inline PTX
    of a Python DSL beside the integration's import) is as optional as the import."""
    integrations = {f.path for f in findings if f.disposition == OPTIONAL and f.disposition_note == INTEGRATION_NOTE}
    return [replace(f, disposition=OPTIONAL, disposition_note=f"part of an optional integration ({f.path} imports it)")
            if f.path in integrations and f.disposition == LIVE and kinds.get(f.path) in PYTHON_CODE
            else f for f in findings]
