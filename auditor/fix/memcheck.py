"""The project-level check of C/C++ edits without a second analysis. Edits to C/C++ sources touch no build file,
so the build model, and with it every component's ROCm-path evidence, is what `check` read. What the analysis
takes from a source beside its findings is its scan's facts (kernels, exports, functions and their calls,
includes): an edit is kept when the file's new scan, with `check`'s scan context, holds exactly the findings the
edits remove fewer and the same facts (line numbers aside: an inserted include moves them; the include of the
fixer's own header aside). Then the analysis of the fixed tree is `check`'s less those findings. Edits to build
files, Python or container files go through the whole-tree check (auditor/fix/treecheck.py)."""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from auditor.fix.compat import include_spelling
from auditor.fix.data import FixSpec
from auditor.fix.treecheck import C_KINDS, Candidate
from auditor.run.pipeline import RunContext
from auditor.run.scan.file import scan_text_as
from auditor.types import FileFacts, FileResult, Report


def in_memory(candidates: Sequence[Candidate]) -> bool:
    """Every edit is to a C/C++ source (or makes the fixer's header): the build model cannot change."""
    return all(c.kind in C_KINDS and not c.beside for c in candidates)


def check_in_memory(ctx: RunContext, report: Report, candidates: Sequence[Candidate], specs: dict[str, FixSpec],
                    home: str | None) -> dict[str, str]:
    """path -> why its edits are rolled back."""
    before = {r.path: r for r in report.results}
    rolled: dict[str, str] = {}
    for candidate in candidates:
        after = candidate.result or scan_text_as(candidate.path, candidate.kind, candidate.new, ctx.scan,
                                                 ctx.root / candidate.path)
        if candidate.created:   # the fixer's header: it holds no finding, and nothing in the project calls it
            if left := [f for f in after.findings if not f.guarded] or after.error or after.partial:
                rolled[candidate.path] = f"the fixer's header would not scan clean ({left})"
            continue
        old = before.get(candidate.path, FileResult(candidate.path, candidate.kind))
        if why := _differs(old, after, candidate, specs, home):
            rolled[candidate.path] = why
    return rolled


def _differs(old: FileResult, new: FileResult, candidate: Candidate, specs: dict[str, FixSpec],
             home: str | None) -> str | None:
    if new.error or (new.partial and not old.partial):
        return f"the fixed file no longer scans completely ({new.error or 'partial parse'})"
    expected = _unguarded(old) - Counter(f.rule_id for f in candidate.applied
                                         if specs[f.rule_id].removes_finding and not f.guarded)
    got = _unguarded(new)
    if got != expected:
        rule = next(iter((got - expected) or (expected - got)))
        verb = "adds" if got[rule] > expected[rule] else "removes"
        return f"the fixes would change the analysis beyond their targets ({verb} {rule})"
    if _facts(old.facts, candidate.path, home) != _facts(new.facts, candidate.path, home) \
            or not _calls(new.facts) <= _calls(old.facts):
        return "the fixes would change what the analysis reads of the file beyond its findings"
    return None


def _calls(facts: FileFacts) -> set[tuple[str, str]]:
    """(function, a project function it calls): an edit may drop a call (a mask written `uint32_t(-1)`), never
    add one; builtins renamed to the fixer's wrappers (`__nanosleep`) are not the project's."""
    return {(function[0], call) for function in facts.functions for call in function[-1]
            if not call.startswith(("__", "rocm_audit_"))}


def _unguarded(result: FileResult) -> Counter:
    return Counter(f.rule_id for f in result.findings if not f.guarded)


def _facts(facts: FileFacts, path: str, home: str | None) -> tuple:
    """The facts the analysis reads, without line numbers or order, and without the include of the fixer's header."""
    own = include_spelling(path, home) if home else None
    return (facts.defines_kernels, facts.cpp_extension, facts.rocm_build, re.sub(r"\d+", "N", facts.partial_reason),
            tuple(rule for _, rule in facts.unknown_suppressions), facts.imports, len(facts.opt_in_lines),
            sorted(export[:3] for export in facts.exports), len(facts.fenced_exports),
            sorted(function[0] for function in facts.functions),
            sorted(name for name in facts.includes if name != own), sorted(u[2] for u in facts.unread_rules))

