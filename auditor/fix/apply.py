"""Fix some paths: audit them, plan, edit each file, verify each file by scanning its new text (every fix
removes its finding and adds none, or the file is left as it was), then print a diff or write atomically."""
from __future__ import annotations

import difflib
import os
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from auditor.analysis import build_report
from auditor.discover import common_root, discover
from auditor.fix.cuda_fixes import fix_cuda
from auditor.fix.data import FixSpec
from auditor.fix.edits import FileFix
from auditor.fix.plan import FilePlan, plan_fixes
from auditor.fix.python_fixes import fix_python
from auditor.fix.text_fixes import fix_text
from auditor.macros import cuda_only_macros
from auditor.parsing.preproc import PreprocFacts
from auditor.pipeline import ScanOptions, audit
from auditor.rulebook import Rulebook
from auditor.scan import InputError, read_bytes, scan_text_as
from auditor.types import FileResult, Finding, Report

FIXERS = {"cuda": fix_cuda, "python": fix_python, "text": fix_text}


@dataclass(frozen=True, slots=True)
class FileOutcome:
    path: str
    abspath: str
    old: str
    new: str                                  # == old when nothing was applied or the fixes were rolled back
    applied: tuple[Finding, ...]
    skipped: tuple[tuple[Finding, str], ...]
    rolled_back: str | None = None            # why this file's fixes were undone
    result: FileResult | None = None          # the scan of the new text

    @property
    def changed(self) -> bool:
        return self.new != self.old


@dataclass(frozen=True, slots=True)
class FixRun:
    files: tuple[FileOutcome, ...]
    refused: tuple[tuple[Finding, str], ...]  # fixable findings in files a fix may not touch
    unsafe_left: int
    before: Report
    after: Report                             # as if the fixes were written (they are, unless --diff)

    @property
    def applied(self) -> int:
        return sum(len(f.applied) for f in self.files if f.changed)


def run_fix(paths: Sequence[Path], rulebook: Rulebook, specs: dict[str, FixSpec], options: ScanOptions = ScanOptions(),
            unsafe: bool = False, root: Path | None = None, shown_root: str | None = None) -> FixRun:
    root = root or common_root(paths)
    report = audit(paths, rulebook, options, shown_root=shown_root, root=root)
    found = discover(paths, root, options.exclude, options.force_exclude, include_vendored=options.include_vendored)
    facts = PreprocFacts.from_guards(rulebook.guards)
    scanning = rulebook.with_cuda_only_macros(cuda_only_macros(found.files, facts, options.max_file_size))
    sources = {s.path: s for s in found.files}
    roots = [Path(os.path.realpath(p)) for p in paths]
    plan = plan_fixes(report.results, sources, specs, unsafe, roots, {r.id: r.category for r in rulebook.rules})
    outcomes = tuple(_fix_file(fp, specs, scanning, options.max_file_size) for fp in plan.files)
    after_results = {o.path: o.result for o in outcomes if o.changed and o.result is not None}
    results = [after_results.get(r.path, r) for r in report.results]
    after = build_report(report.root, results, scanning, found.errors, found.vendored)
    after = replace(after, repo_prefix=report.repo_prefix)
    return FixRun(outcomes, plan.not_fixable, plan.unsafe_left, report, after)


def _fix_file(planned: FilePlan, specs: dict[str, FixSpec], rulebook: Rulebook, max_bytes: int) -> FileOutcome:
    source = planned.source
    try:
        data = read_bytes(source, max_bytes)
        old = data.decode("utf-8")
    except (InputError, UnicodeDecodeError) as err:
        reason = "not UTF-8" if isinstance(err, UnicodeDecodeError) else str(err)
        return FileOutcome(source.path, source.abspath, "", "", (), tuple((f, reason) for f in planned.findings))
    if old.startswith("\ufeff"):
        return FileOutcome(source.path, source.abspath, old, old, (),
                           tuple((f, "the file starts with a byte-order mark") for f in planned.findings))
    fixed: FileFix = FIXERS[planned.engine](old, planned.findings, specs)
    if fixed.text == old:
        return FileOutcome(source.path, source.abspath, old, old, (), fixed.skipped)
    before = scan_text_as(source.path, source.kind, old, rulebook, Path(source.abspath))
    after = scan_text_as(source.path, source.kind, fixed.text, rulebook, Path(source.abspath))
    problem = verify(before, after, fixed.applied, specs)
    if problem:
        return FileOutcome(source.path, source.abspath, old, old, (), fixed.skipped, rolled_back=problem)
    return FileOutcome(source.path, source.abspath, old, fixed.text, fixed.applied, fixed.skipped, result=after)


def verify(before: FileResult, after: FileResult, applied: Sequence[Finding], specs: dict[str, FixSpec]) -> str | None:
    """None when the new text scans completely, each fix removed its finding and no unguarded finding was added."""
    if after.error or (after.partial and not before.partial):
        return f"the fixed file no longer scans completely ({after.error or 'partial parse'})"
    # By rule, not by fingerprint: a finding whose subject is the code around a fix (RA204's loop) is the same
    # finding with a new subject after the fix.
    old = Counter(f.rule_id for f in before.findings if not f.guarded)
    new = Counter(f.rule_id for f in after.findings if not f.guarded)
    added = new - old
    if added:
        rule = next(iter(added))
        extra = [f for f in after.findings if f.rule_id == rule][-1]
        return f"the fix would add {rule} (line {extra.span.line}: {extra.subject})"
    expected = Counter(f.rule_id for f in applied if specs[f.rule_id].removes_finding)
    for rule, count in expected.items():
        if new[rule] > old[rule] - count:
            still = next(f for f in applied if f.rule_id == rule)
            return f"the fix did not remove {rule} at line {still.span.line} ({still.subject})"
    return None


def unified_diff(outcome: FileOutcome) -> str:
    return "".join(difflib.unified_diff(outcome.old.splitlines(keepends=True), outcome.new.splitlines(keepends=True),
                                        f"a/{outcome.path}", f"b/{outcome.path}"))


def write_fixed(outcome: FileOutcome) -> None:
    """Through a temporary file in the same directory and os.replace, keeping the file's mode; never through a
    symbolic link (the plan refused those)."""
    path = Path(outcome.abspath)
    mode = path.stat().st_mode & 0o7777
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".rocm-audit-fix", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(outcome.new)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
