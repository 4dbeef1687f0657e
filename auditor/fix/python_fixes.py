"""Python fixes with libcst, which rewrites losslessly (comments and formatting kept). Detection stays on `ast`;
libcst parses only the files that have a fix to apply."""
from __future__ import annotations

import ast
from collections.abc import Sequence

import libcst as cst
from libcst.metadata import MetadataWrapper

from auditor.fix.data import FixSpec
from auditor.fix.edits import FileFix, FixContext, NO_CONTEXT
from auditor.fix.cuda_flags import CudaOnlyFlags, imports_torch
from auditor.fix.version_decision import TorchVersionDecision
from auditor.types import Finding

IN_MESSAGE = "in the text of a message (an f-string, format, print, logging or an exception): report only"
NOT_DECIDED = ("the version is kept or passed on here, not compared: a ROCm answer belongs where it is compared "
               "(branch on torch.version.hip there); report only")


def fix_python(text: str, findings: Sequence[Finding], specs: dict[str, FixSpec],
               context: FixContext = NO_CONTEXT) -> FileFix:
    try:
        wrapper = MetadataWrapper(cst.parse_module(text))
    except (cst.ParserSyntaxError, RecursionError):
        return FileFix(text, skipped=tuple((f, "libcst cannot parse the file") for f in findings))
    lines = text.splitlines()
    flags = [f for f in findings if specs[f.rule_id].action == "nvcc-flags" and f.span.line is not None]
    if flags:
        text, wrapper, flagged = _guard_flags(text, wrapper, flags, context)
        findings = [f for f in findings if f not in flags]
        lines = text.splitlines()
    else:
        flagged = FileFix(text)
    wanted: dict[tuple[int, int], Finding] = {}
    skipped: list[tuple[Finding, str]] = list(flagged.skipped)
    for finding in findings:
        if specs[finding.rule_id].action != "torch-version-cuda" or finding.span.line is None:
            skipped.append((finding, "no Python fix for this finding"))
            continue
        wanted[(finding.span.line, _char_column(lines, finding))] = finding
    new, done, in_text, kept = _transform(wrapper, wanted)
    skipped += [(wanted[key], IN_MESSAGE) for key in in_text]
    skipped += [(wanted[key], NOT_DECIDED) for key in kept]
    if not _valid(new, context.python) and _valid(text, context.python):
        # one fix at a time: each kept only if the file stays valid for the oldest Python the project supports
        accepted: dict[tuple[int, int], Finding] = {}
        for key in sorted(done):
            trial, _, _, _ = _transform(wrapper, {**accepted, key: wanted[key]})
            if _valid(trial, context.python):
                accepted[key] = wanted[key]
            else:
                oldest = ".".join(map(str, context.python))
                skipped.append((wanted[key], f"the fixed code is not valid Python {oldest} (the oldest it supports)"))
        new, done, _, _ = _transform(wrapper, accepted)
    skipped += [(f, "no torch.version.cuda expression at the finding's position")
                for key, f in wanted.items() if key not in done and key not in in_text and key not in kept
                and not any(s[0] is f for s in skipped)]
    return FileFix(new, flagged.applied + tuple(done.values()), tuple(skipped))


def _guard_flags(text: str, wrapper: MetadataWrapper, flags: list[Finding], context: FixContext):
    """(new text, its parse, what was fixed): nvcc-only flags behind torch's ROCm switch (auditor/fix/cuda_flags)."""
    if not imports_torch(wrapper.module):
        why = "the file does not import torch, whose version.hip tells a ROCm build"
        return text, wrapper, FileFix(text, (), tuple((f, why) for f in flags))
    wanted = {f.span.line: (f, context.string_patterns.get(f.rule_id, "")) for f in flags if f.span.line}
    transformer = CudaOnlyFlags(wanted)
    new = wrapper.visit(transformer).code
    why = ("not an element of a flag list (a list or a parenthesised tuple), or a flag whose value is not the next "
           "element; report only")
    left = tuple((f, why) for line, (f, _) in wanted.items() if line not in transformer.done)
    return new, MetadataWrapper(cst.parse_module(new)), FileFix(new, tuple(transformer.done.values()), left)


def _transform(wrapper: MetadataWrapper, wanted: dict[tuple[int, int], Finding]):
    transformer = TorchVersionDecision(wanted)
    return wrapper.visit(transformer).code, transformer.done, transformer.in_text, transformer.kept


def _valid(code: str, version: tuple[int, int]) -> bool:
    """Parses as Python of that version (the grammar of f-strings and of new statements is checked)."""
    try:
        ast.parse(code, feature_version=version)
    except (SyntaxError, ValueError, RecursionError):
        return False
    return True


def _char_column(lines: list[str], finding: Finding) -> int:
    """ast columns count UTF-8 bytes; libcst's count characters. 0-based characters."""
    line = lines[finding.span.line - 1] if finding.span.line and finding.span.line <= len(lines) else ""
    return len(line.encode("utf-8")[: (finding.span.column or 1) - 1].decode("utf-8", "ignore"))
