"""The whole-project check of a fix run: the tree is analysed as `check` analyses it (the project's build files and
ROCm path included) before and after the fixes, in a private copy of the files the audit reads, and a fix is kept
only when the findings change exactly as the fixes target. A fix that moves the verdict, a component's ROCm-path
evidence or a finding it does not target (an added HIP-architectures line making a CUDA-only CMake project look
like a broken ROCm build) is rolled back, with the reason."""
from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from auditor.run.discover.files import discover
from auditor.fix.data import FixSpec
from auditor.match.inputs.kinds import kinds_in_lane
from auditor.run.pipeline import ScanOptions, audit
from auditor.model.rocmpath.pulled import pulled_in_build_files
from auditor.match.rulebook import Rulebook
from auditor.types import Finding, Report

_LINE = re.compile(r":\d+\b")   # evidence cites lines, and an inserted line moves those below it
TEXT_KINDS = kinds_in_lane("text")


@dataclass(frozen=True, slots=True)
class Candidate:
    path: str                       # relative to the scanned root, posix
    kind: str
    new: str
    applied: tuple[Finding, ...]
    beside: str | None = None       # a new file, the ROCm variant of this one: it may hold the findings that one
                                    # holds, less those the fixes made in it


def check_tree(paths: Sequence[Path], root: Path, rulebook: Rulebook, options: ScanOptions,
               specs: dict[str, FixSpec], candidates: Sequence[Candidate]) -> dict[str, str]:
    """path -> why its fixes are rolled back; the others' fixes leave the analysis as they should."""
    if not candidates:
        return {}
    found = discover(paths, root, options.exclude, options.force_exclude, include_vendored=options.include_vendored)
    read = [*found.files, *pulled_in_build_files(found.files, root, found.vendored)]
    options = replace(options, cache_dir=None)
    with tempfile.TemporaryDirectory(prefix="rocm-audit-fix-check-") as scratch:
        copy = Path(scratch) / "tree"
        for source in read:
            _link_or_copy(Path(source.abspath), copy / source.path)
        shadow = [copy / Path(p).resolve().relative_to(root.resolve()) for p in paths]
        before = audit(shadow, rulebook, options, shown_root="", root=copy)
        rolled: dict[str, str] = {}
        kept = list(candidates)
        for _ in range(3):
            for candidate in kept:
                _write(copy / candidate.path, candidate.new)
            after = audit(shadow, rulebook, options, shown_root="", root=copy)
            found_rolled = _compare(before, after, kept, specs)
            if not found_rolled:
                return rolled
            rolled.update(found_rolled)
            for candidate in kept:
                if candidate.path in found_rolled and candidate.beside:
                    (copy / candidate.path).unlink(missing_ok=True)
                elif candidate.path in found_rolled:
                    shutil.copyfile(Path(root) / candidate.path, copy / candidate.path)
            kept = [c for c in kept if c.path not in found_rolled]
            if not kept:
                return rolled
    return rolled | {c.path: "the project's analysis did not settle after rolling fixes back" for c in kept}


def _compare(before: Report, after: Report, candidates: Sequence[Candidate],
             specs: dict[str, FixSpec]) -> dict[str, str]:
    expected = _counts(before.findings)
    for candidate in candidates:
        if candidate.beside:   # a copy of its file: that file's findings, less those its fixes removed
            carried = Counter((candidate.path, rule, disposition) for path, rule, disposition in _counts(
                before.findings).elements() if path == candidate.beside)
            expected += carried - Counter((candidate.path, f.rule_id, f.disposition) for f in candidate.applied
                                          if not f.guarded)
        else:
            expected -= Counter(_key(f) for f in candidate.applied
                                if specs[f.rule_id].removes_finding and not f.guarded)
    got = _counts(after.findings)
    changed = {c.path for c in candidates}
    rolled: dict[str, str] = {}
    for key in (expected - got) + (got - expected):
        path, rule, disposition = key
        if path in changed:
            verb = "adds" if got[key] > expected[key] else "removes"
            rolled[path] = f"the fixes would change the analysis beyond their targets ({verb} {rule} as {disposition})"
        else:
            for candidate in candidates:   # a finding moved in a file no fix touched: the text fixes are suspects
                if candidate.kind in TEXT_KINDS:
                    rolled[candidate.path] = (f"the fix would change findings in another file ({path}: {rule} as "
                                              f"{disposition})")
    old_evidence, new_evidence = _evidence(before), _evidence(after)
    if old_evidence != new_evidence:
        # a ROCm variant beside a file is a ROCm install path: evidence that names it is what it adds
        variants = [c.path for c in candidates if c.beside]
        explained = bool(variants) and any(v + ":" in repr(new_evidence) for v in variants)
        why = (f"the fix would change the project's verdict or ROCm-path evidence (verdict {before.verdict} -> "
               f"{after.verdict}; evidence {_changed_evidence(old_evidence, new_evidence)})")
        suspects = [c for c in candidates if c.kind in TEXT_KINDS and not (explained and c.beside)] \
            or ([] if explained else list(candidates))
        rolled.update({c.path: why for c in suspects if c.path not in rolled})
    return rolled


def _changed_evidence(old: tuple, new: tuple) -> str:
    """The components whose evidence differs, each once (the verdict's reason alone may read the same)."""
    changed = sorted({entry[0] for entry in set(old) ^ set(new)})
    return "of " + ", ".join(changed[:3]) + (" ..." if len(changed) > 3 else "") if changed else "order"


def _key(finding: Finding) -> tuple[str, str, str]:
    return (finding.path, finding.rule_id, finding.disposition)


def _counts(findings: Sequence[Finding]) -> Counter:
    return Counter(_key(f) for f in findings if not f.guarded)


def _evidence(report: Report) -> tuple:
    """What the project's ROCm path rests on. The verdict itself may move, but only through the findings the fixes
    remove (checked above): with the same findings and the same evidence, the analysis gives the same verdict."""
    return tuple((c.path, c.rocm_build, c.kind, _LINE.sub(":N", repr(c.rocm_path))) for c in report.components)


def _link_or_copy(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, target, follow_symlinks=False)
    except OSError:
        shutil.copyfile(source, target, follow_symlinks=False)


def _write(path: Path, text: str) -> None:
    path.unlink(missing_ok=True)          # a hard link to the original: never write through it
    path.write_bytes(text.encode("utf-8"))
