"""Fix some paths: audit them, plan, edit each file, verify each file by scanning its new text (every fix
removes its finding and adds none, or the file is left as it was), then print a diff or write atomically."""
from __future__ import annotations

import difflib
import os
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from auditor.run.discover.files import common_root
from auditor.fix.cuda_fixes import DEFINING, fix_cuda
from auditor.fix.data import FixSpec
from auditor.fix.edits import FileFix, FixContext, line_starts
from auditor.fix.named_uses import named_elsewhere
from auditor.fix.outcome import FileOutcome, FixRun
from auditor.fix.home import settle, with_home
from auditor.fix.plan import FilePlan, plan_fixes
from auditor.fix.project import fix_context, mask_helpers
from auditor.fix.python_fixes import fix_python
from auditor.fix.safewrite import WriteRefused, create_within, identity, write_within
from auditor.fix.text_fixes import fix_text
from auditor.fix.memcheck import check_in_memory, in_memory
from auditor.fix.treecheck import Candidate, check_tree
from auditor.fix.variants import NO_VARIANT, variant_path
from auditor.run.pipeline import ScanOptions, audit, audit_with_context
from auditor.match.rulebook import Rulebook
from auditor.match.rulebook.context import ScanContext
from auditor.run.scan.file import InputError, read_bytes, scan_text_as
from auditor.types import FileResult, Finding, SourceFile

FIXERS = {"cuda": fix_cuda, "python": fix_python, "text": fix_text}


def run_fix(paths: Sequence[Path], rulebook: Rulebook, specs: dict[str, FixSpec], options: ScanOptions = ScanOptions(),
            unsafe: bool = False, root: Path | None = None, shown_root: str | None = None) -> FixRun:
    """Plan, edit and verify; nothing is written. One discovery, one build model and one analysis, `check`'s:
    the fixes are planned from its report and each edited file is scanned again with its scan context (the
    project's macros included). `after` is the before-report until the command writes the fixes and analyses the
    tree again (auditor/fix/command.py): the after-report is `check`'s, by construction."""
    root = root or common_root(paths)
    ctx, report = audit_with_context(paths, rulebook, options, shown_root=shown_root, root=root)
    found = ctx.discovered.found
    sources = {s.path: s for s in found.files}
    roots = [Path(os.path.realpath(p)) for p in paths]
    # the report's findings carry their disposition against the ROCm path; the per-file results do not
    placed: dict[str, list[Finding]] = {}
    for finding in report.findings:
        placed.setdefault(finding.path, []).append(finding)
    results = [replace(r, findings=tuple(placed.get(r.path, ()))) for r in report.results]
    categories = {r.id: r.category for r in rulebook.rules}
    plan = plan_fixes(results, sources, specs, unsafe, roots, categories)
    context = replace(fix_context(found.files, options.max_file_size,
                                  mask_helpers(_mask_sites(plan, specs), options.max_file_size),
                                  _defining(plan, specs)),
                      unportable=plan.unportable or {},
                      string_patterns={r.id: strings for r in rulebook.rules
                                       if (strings := getattr(r.python, "strings", None)) is not None})
    context = replace(context, named_elsewhere=named_elsewhere(plan, specs, found.files, context,
                                                               options.max_file_size))
    in_place, variants, refused_variants = split_variants(plan.files, specs, root)
    outcomes = [_fix_file(fp, specs, ctx.scan, options.max_file_size, context) for fp in in_place]
    outcomes += [_variant_file(fp, path, specs, ctx.scan, options.max_file_size) for fp, path in variants]
    home = context.compat_header
    outcomes = with_home(outcomes, home, root, sources, options.max_file_size)
    unsafe_left = _unsafe_would_fix(plan_fixes(results, sources, specs, True, roots, categories), specs,
                                    options.max_file_size, context) if plan.unsafe_left else 0
    candidates = [Candidate(o.path, _kind(o, sources), o.new, o.applied, o.beside, o.created, o.result)
                  for o in outcomes if o.changed]
    rolled = check_in_memory(ctx, report, candidates, specs, home) if in_memory(candidates) else \
        check_tree(ctx, rulebook, options, specs, candidates)
    outcomes = [replace(o, new=o.old, applied=(), rolled_back=rolled[o.path]) if o.path in rolled else o
                for o in outcomes]
    outcomes = settle(outcomes, home)
    return FixRun(tuple(outcomes), plan.not_fixable + refused_variants, unsafe_left, report, report, root, home,
                  context.includers, context.include_dirs)


def _kind(outcome: FileOutcome, sources: dict[str, SourceFile]) -> str:
    source = sources.get(outcome.beside or outcome.path)
    return source.kind if source is not None else "cuda"   # the header of the fixer's definitions, made new


def _defining(plan, specs: dict[str, FixSpec]) -> list[str]:
    """The C/C++ files whose fixes may use the fixer's definitions."""
    return [p.source.path for p in plan.files
            if p.engine == "cuda" and any(specs[f.rule_id].action in DEFINING for f in p.findings)]


def _unsafe_would_fix(plan, specs: dict[str, FixSpec], max_bytes: int, context: FixContext) -> int:
    """How many findings the unsafe fixes would edit (the hint to add --unsafe counts these, not every finding
    an unsafe fix exists for: most are refused by the fixer)."""
    count = 0
    for planned in plan.files:
        unsafe = tuple(f for f in planned.findings if specs[f.rule_id].safety == "unsafe")
        if not unsafe:
            continue
        try:
            text = read_bytes(planned.source, max_bytes).decode("utf-8")
        except (InputError, UnicodeDecodeError):
            continue
        count += len(FIXERS[planned.engine](text, unsafe, specs, context).applied)
    return count


def _mask_sites(plan, specs: dict[str, FixSpec]) -> list[tuple]:
    """(file, byte offsets) of the full-mask findings the plan would fix."""
    sites = []
    for planned in plan.files:
        at = [(f.span.line, f.span.column or 1) for f in planned.findings
              if specs[f.rule_id].action == "full-mask" and f.span.line]
        named = [f for f in planned.findings if specs[f.rule_id].action == "named-mask"]
        offsets = _offsets(planned.source, at) + (_named_uses(planned.source, named) if named else [])
        if offsets:
            sites.append((planned.source, offsets))
    return sites


def _named_uses(source, findings: Sequence[Finding]) -> list[int]:
    """Byte offsets of every use of the masks these `#define` findings name (their functions' lanes count)."""
    try:
        data = read_bytes(source)
    except InputError:
        return []
    lines = data.splitlines()
    names = {m.group(1) for f in findings if f.span.line and f.span.line <= len(lines)
             and (m := re.match(rb"\s*#\s*define\s+(\w+)", lines[f.span.line - 1]))}
    return [m.start() for name in names for m in re.finditer(rb"\b" + re.escape(name) + rb"\b", data)]


def _offsets(source, at: list[tuple[int, int]]) -> list[int]:
    try:
        data = read_bytes(source)
    except InputError:
        return []
    starts = line_starts(data)
    return [starts[line - 1] + column - 1 for line, column in at if 0 < line <= len(starts)]


def split_variants(files: Sequence[FilePlan], specs: dict[str, FixSpec], root: Path):
    """(plans edited in place, (plan, variant path) for the fixes made in a ROCm variant beside the file, findings
    whose variant cannot be made, with why)."""
    in_place: list[FilePlan] = []
    variants: list[tuple[FilePlan, str]] = []
    refused: list[tuple[Finding, str]] = []
    for planned in files:
        beside = tuple(f for f in planned.findings if specs[f.rule_id].beside)
        rest = tuple(f for f in planned.findings if not specs[f.rule_id].beside)
        if rest:
            in_place.append(replace(planned, findings=rest))
        if not beside:
            continue
        path = variant_path(planned.source.path, planned.source.kind)
        if path is None:
            refused += [(f, NO_VARIANT) for f in beside]
        elif os.path.lexists(root / path):
            refused += [(f, f"{path} already exists: compare it with this file by hand") for f in beside]
        else:
            variants.append((replace(planned, findings=beside), path))
    return in_place, variants, tuple(refused)


def _variant_file(planned: FilePlan, path: str, specs: dict[str, FixSpec], rulebook: ScanContext,
                  max_bytes: int) -> FileOutcome:
    """The ROCm variant: the file's text with the fixes made, as a new file beside it; the file stays as it is."""
    made = _fix_file(planned, specs, rulebook, max_bytes, FixContext())
    if not made.changed:
        return replace(made, old="", new="", path=path)
    left = [f for f in made.result.findings if not f.guarded] if made.result is not None else []
    if left:   # a variant that still installs or builds CUDA would not work on ROCm: for a person to finish
        return replace(made, path=path, old="", new="", applied=(), rolled_back=(
            f"the ROCm variant would still hold {len(left)} CUDA-specific line(s) ({left[0].rule_id} at line "
            f"{left[0].span.line}: {left[0].subject}): it is for a person to finish, beside {planned.source.path}"))
    return replace(made, path=path, abspath=os.path.join(os.path.dirname(made.abspath), os.path.basename(path)),
                   old="", planned=None, beside=planned.source.path)


def _fix_file(planned: FilePlan, specs: dict[str, FixSpec], rulebook: ScanContext, max_bytes: int,
              context: FixContext) -> FileOutcome:
    source = planned.source
    planned_as = identity(source.abspath)
    try:
        data = read_bytes(source, max_bytes)
        old = data.decode("utf-8")
    except (InputError, UnicodeDecodeError) as err:
        reason = "not UTF-8" if isinstance(err, UnicodeDecodeError) else str(err)
        return FileOutcome(source.path, source.abspath, "", "", (), tuple((f, reason) for f in planned.findings))
    if old.startswith("\ufeff"):
        return FileOutcome(source.path, source.abspath, old, old, (),
                           tuple((f, "the file starts with a byte-order mark") for f in planned.findings))
    fixed: FileFix = FIXERS[planned.engine](old, planned.findings, specs, context)
    if fixed.text == old:
        return FileOutcome(source.path, source.abspath, old, old, (), fixed.skipped)
    before = scan_text_as(source.path, source.kind, old, rulebook, Path(source.abspath))
    after = scan_text_as(source.path, source.kind, fixed.text, rulebook, Path(source.abspath))
    problem = verify(before, after, fixed.applied, specs)
    if problem:
        return FileOutcome(source.path, source.abspath, old, old, (), fixed.skipped, rolled_back=problem)
    return FileOutcome(source.path, source.abspath, old, fixed.text, fixed.applied, fixed.skipped, result=after,
                       planned=planned_as, defines=fixed.defines)


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
                                        "/dev/null" if outcome.beside or outcome.created else f"a/{outcome.path}",
                                        f"b/{outcome.path}"))


def write_all(run: FixRun, paths: Sequence[Path], rulebook: Rulebook, options: ScanOptions) -> FixRun:
    """Write each changed file (auditor/fix/safewrite.py), the header of the fixer's definitions first (the edits
    that use it are not written when it cannot be), then analyse the tree again as `check` does: that is the
    after-report. A file that may not be written keeps its text and is listed with the reason."""
    first = [o for o in run.files if o.path == run.home]
    outcomes = settle([_write(o, run.root) for o in first] + [o for o in run.files if o.path != run.home], run.home)
    outcomes = [_write(o, run.root) if o.path != run.home else o for o in outcomes]
    run = replace(run, files=tuple(outcomes))
    if any(o.changed for o in outcomes):
        run = replace(run, after=audit(paths, rulebook, options, root=run.root))
    return run


def _write(outcome: FileOutcome, root: Path) -> FileOutcome:
    if not outcome.changed:
        return outcome
    try:
        data = outcome.new.encode("utf-8")
        note = create_within(root, outcome.path, data) if outcome.beside or outcome.created else \
            write_within(root, outcome.path, data, outcome.planned)
        note = None if outcome.created else note   # the summary says it is new
        return replace(outcome, note="; ".join(n for n in (outcome.note, note) if n) or None)
    except (WriteRefused, OSError) as err:
        reason = str(err) if isinstance(err, WriteRefused) else f"cannot write: {err.strerror or err}"
        return replace(outcome, new=outcome.old, applied=(), rolled_back=reason)
