"""Which findings a fix may touch: the rule has a fix of an allowed safety, the finding is not guarded, its
file is a regular file inside the scanned tree that scanned completely, and the fix's engine reads that kind."""
from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import get_args

from auditor.fix.data import FixSpec
from auditor.fix.text_fixes import rocm_job_suggestion
from auditor.match.inputs.kinds import FixLane, kinds_in_lane
from auditor.judge.dispositions import LIVE, OPS, VERIFY
from auditor.types import FileResult, Finding, SourceFile

ENGINE_KINDS = {lane: kinds_in_lane(lane) for lane in get_args(FixLane)}   # the input kinds each fix engine edits


# Where a finding sits against the project's ROCm path (auditor/judge/): a fix is worth making only
# where the ROCm build compiles the code as it is (live), or in the repository's own CI and container files (ops).
# Not in CUDA-only sources the ROCm build replaces, a CUDA branch, a shim that already maps the call, or another
# vendor's backend: an edit there changes nothing on ROCm.
FIXED_DISPOSITIONS = frozenset({LIVE, VERIFY, OPS})
_NOT_LIVE = "{}: the ROCm build does not compile this code as it is, so a fix changes nothing there"
PARTIAL = "the file was scanned only in part"
UNPORTABLE_CATEGORIES = {"hopper_only_feature": "Hopper/Blackwell-only features"}   # inline PTX: per function


@dataclass(frozen=True, slots=True)
class FilePlan:
    source: SourceFile
    findings: tuple[Finding, ...]        # to fix, in this file
    engine: str


@dataclass(frozen=True, slots=True)
class Plan:
    files: tuple[FilePlan, ...]
    not_fixable: tuple[tuple[Finding, str], ...]   # unguarded findings a fix exists for but may not touch, and why
    unsafe_left: int                               # findings an unsafe fix would touch (without --unsafe)
    unportable: dict[str, tuple[tuple[int, str], ...]] | None = None   # path -> (line, what) of Hopper-only code


def plan_fixes(results: Sequence[FileResult], sources: dict[str, SourceFile], specs: dict[str, FixSpec],
               unsafe: bool, roots: Sequence[Path], categories: dict[str, str] | None = None) -> Plan:
    """`categories`: rule id -> category; a file with an unguarded Hopper/Blackwell-only finding is not fixed."""
    files: list[FilePlan] = []
    refused: list[tuple[Finding, str]] = []
    unsafe_left = 0
    for result in results:
        fixable = [f for f in result.findings if f.rule_id in specs and not f.guarded]
        if not fixable:
            continue
        reason = _file_refusal(result, sources.get(result.path), roots) or _nvidia_only(result, categories or {})
        if reason == PARTIAL and result.kind in ENGINE_KINDS["cuda"]:
            # masks are judged per function (auditor/fix/cuda_fixes.py); the other fixes need the whole file
            refused += [(f, reason) for f in fixable if specs[f.rule_id].action != "full-mask"]
            fixable = [f for f in fixable if specs[f.rule_id].action == "full-mask"]
            reason = _nvidia_only(result, categories or {})
        if reason:
            refused += [(f, reason) for f in fixable]
            continue
        refused += [(f, _NOT_LIVE.format(f.disposition)) for f in fixable if f.disposition not in FIXED_DISPOSITIONS]
        fixable = [f for f in fixable if f.disposition in FIXED_DISPOSITIONS]
        source = sources[result.path]
        chosen: dict[str, list[Finding]] = {}
        for finding in fixable:
            spec = specs[finding.rule_id]
            if source.kind not in ENGINE_KINDS[spec.engine]:
                continue          # e.g. CUDA source inside a Python string: reported, not fixed
            if source.kind in spec.never_in:
                refused.append((finding, f"{spec.never_in_why} ({rocm_job_suggestion(finding.snippet)})"
                                if source.kind == "ci" else spec.never_in_why))
                continue
            if spec.safety == "unsafe" and not unsafe:
                unsafe_left += 1
                continue
            chosen.setdefault(spec.engine, []).append(finding)
        for engine, found in chosen.items():   # one engine per file kind, so at most one entry
            files.append(FilePlan(source, tuple(found), engine))
    return Plan(tuple(files), tuple(refused), unsafe_left, unportable_lines(results, categories or {}))


def unportable_lines(results: Sequence[FileResult],
                     categories: dict[str, str]) -> dict[str, tuple[tuple[int, str], ...]]:
    """Where each file uses Hopper/Blackwell-only features (wgmma, TMA, clusters, FP8 types): the masks of those
    functions are not fixed (auditor/fix/cuda_fixes.py); the rest of the file is. Including cuda_fp8.h alone
    refuses nothing."""
    found: dict[str, list[tuple[int, str]]] = {}
    for result in results:
        for finding in result.findings:
            what = UNPORTABLE_CATEGORIES.get(categories.get(finding.rule_id, ""))
            if what and finding.span.line and not finding.guarded and finding.disposition in FIXED_DISPOSITIONS:
                found.setdefault(result.path, []).append((finding.span.line, f"{what}, {finding.rule_id}"))
    return {path: tuple(lines) for path, lines in found.items()}


# A path that names a Hopper/Blackwell architecture (flashinfer's xqa/mla_sm120.cuh, kernels/sm_90/, hopper/):
# written for it, with its TMA and MMA wrappers in other headers. `pre_sm90/` and `sm80` name the code for the rest.
_ARCH_PATH = re.compile(r"(?<![a-z])(?<!pre_)(?<!pre)(sm_?(?:9\d|1[0-2]\d)a?|hopper|blackwell)(?![a-z0-9])",
                        re.IGNORECASE)


def _nvidia_only(result: FileResult, categories: dict[str, str]) -> str | None:
    """A file written for one Hopper/Blackwell architecture (its path says so) is replaced in a port, not patched:
    fixing its masks changes nothing that could run on ROCm. Hopper-only features elsewhere are judged per
    function (unportable_lines)."""
    if result.kind not in ENGINE_KINDS["cuda"]:
        return None
    if named := _ARCH_PATH.search(result.path):
        return f"the file is written for one NVIDIA architecture ({named.group(1)} in its path): ported by rewriting"
    return None


def _file_refusal(result: FileResult, source: SourceFile | None, roots: Sequence[Path]) -> str | None:
    if source is None:
        return "the file was not discovered"
    if result.error:
        return f"the file could not be scanned ({result.error})"
    if result.partial:
        return PARTIAL
    path = Path(source.abspath)
    if path.is_symlink():
        return "the file is a symbolic link"
    real = Path(os.path.realpath(path))
    if not any(real == root or real.is_relative_to(root) for root in roots):
        return "the file lies outside the scanned paths"
    if not path.is_file():
        return "not a regular file"
    return None
