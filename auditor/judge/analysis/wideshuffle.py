"""A shuffle through the project's own macro whose ROCm expansion is a width-less legacy `__shfl*`
(model/rocmpath/wideshuffle.py), called in a kernel where a rule with the `lane-rows` trait finds 32-lane rows: on
a 64-lane wavefront the shuffle spans two rows, and the second row reads the first row's lanes. That is a bug a port
must fix, not an item to verify on hardware, so it is live even where the ROCm build compiles the file. Reported
with the rule that has the `wide-shuffle` trait, at each call and once at the macro's definition, the line a port
changes."""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from auditor.model.rocmpath.model import ProjectBuild
from auditor.model.rocmpath.wideshuffle import WideShuffleUse
from auditor.types import LIVE, VERIFY, Finding, Rule, Severity, Span

SHUFFLE_TRAIT = "wide-shuffle"    # auditor/match/rulebook/traits.py
LANES_TRAIT = "lane-rows"


def wide_shuffle_findings(findings: Sequence[Finding], project: ProjectBuild, rules: Mapping[str, Rule],
                          placed: Callable[[list[Finding]], list[Finding]]) -> list[Finding]:
    """The findings at the calls (and each macro's definition) in kernels with a `lane-rows` finding the ROCm build
    compiles (live or to verify), placed against the ROCm path by `placed`; an item to verify becomes live."""
    shuffle = next((r for r in rules.values() if SHUFFLE_TRAIT in r.traits), None)
    if shuffle is None or not project.wide_shuffles:
        return []
    rows: dict[str, list[int]] = {}
    for f in findings:
        rule = rules.get(f.rule_id)
        if rule is not None and LANES_TRAIT in rule.traits and f.disposition in (LIVE, VERIFY) and f.span.line:
            rows.setdefault(f.path, []).append(f.span.line)
    uses = [(use, row) for path, found in sorted(project.wide_shuffles.items()) for use in found
            if (row := next((r for r in sorted(rows.get(path, ())) if use.kernel[0] <= r <= use.kernel[1]), None))]
    if not uses:
        return []
    at_calls = [_escalated(f) for f in placed([_at_call(shuffle, use, row) for use, row in uses])]
    out = list(at_calls)
    for (use, _), call in zip(uses, at_calls):
        if not any(f.subject == use.macro and f.path == use.definition.rpartition(":")[0] for f in out):
            out.append(_at_definition(shuffle, use, call))
    return out


def _expansion(use: WideShuffleUse) -> str:
    return (f"the project's `{use.macro}` expands on ROCm to a legacy shuffle without a width "
            f"({use.definition}), which spans the whole 64-lane wavefront")


def _at_call(rule: Rule, use: WideShuffleUse, row: int) -> Finding:
    message = (f"{_expansion(use)}, in a kernel that works in 32-lane rows ({use.path}:{row}): the second row "
               "reads the first row's lanes. Pass the width the rows assume (`__shfl(var, delta, 32)`) in the "
               "ROCm definition, or make the rows warpSize wide.")
    return Finding(rule.id, use.path, Span(use.line), " ".join(use.snippet.split())[:80], use.snippet,
                   message[0].upper() + message[1:], Severity.HIGH)


def _at_definition(rule: Rule, use: WideShuffleUse, call: Finding) -> Finding:
    path, _, line = use.definition.rpartition(":")
    message = (f"The ROCm definition of `{use.macro}` is a legacy shuffle without a width (64 lanes on CDNA), and "
               f"kernels that work in 32-lane rows call it ({use.path}:{use.line}): pass the width, 32.")
    return Finding(rule.id, path, Span(int(line)), use.macro, use.definition_text, message, Severity.HIGH,
                   disposition=call.disposition, disposition_note=call.disposition_note)


def _escalated(finding: Finding) -> Finding:
    if finding.disposition != VERIFY:
        return finding
    return replace(finding, disposition=LIVE, disposition_note=(
        "the ROCm build compiles this kernel, and its shuffle width is known to be wrong there: a 64-lane bug, "
        "not an item to verify"))
