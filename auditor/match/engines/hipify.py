"""Unsupported-API findings: the references HIPIFY cannot translate, reported by the `hipify_status` rules
(RA85x) at their line. Rules narrowed by `hipify_names`/`hipify_apis` are tried first, in id order, then the
catch-all; one finding per name and line. A more specific rule wins: one that already reports the name on
that line, or that reports the same kind of problem there at medium or above (RA822 driver-api-unsupported,
RA838 graph conditional nodes, RA307 TMA, RA400 cuDNN, ...)."""
from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Sequence
from functools import cache

from auditor.match.engines import make_finding, snippet_of
from auditor.parse.preproc import LineStates
from auditor.match.hipify.references import Reference
from auditor.types import Finding, Rule, Severity, Span

# HIP declares these for __hip_bfloat162 only, not __half2 (clr hipamd/include/hip/amd_detail/amd_hip_bf16.h):
# a call in a function working on bf16 pairs compiles on ROCm, one on half2 does not
BF16_ONLY_IN_HIP = frozenset({"__hmax2", "__hmin2"})
FUNCTION_HEAD = re.compile(r"\b__(?:device|global|host)__\b")
HALF2 = re.compile(r"\b(?:__)?half2\b")

# Categories of the specific rules that speak for a line's unsupported names.
SPECIFIC = frozenset({"unsupported_api", "driver_api", "hopper_only_feature", "cuda_only_library",
                      "texture_or_surface", "cooperative_groups", "ptx_inline_asm"})


@cache
def _ordered(rules: tuple[Rule, ...]) -> tuple[Rule, ...]:
    narrowed = [r for r in rules if r.cuda.hipify_names or r.cuda.hipify_apis]
    catch_all = [r for r in rules if r not in narrowed]
    return tuple(sorted(narrowed, key=lambda r: r.id) + sorted(catch_all, key=lambda r: r.id))


def _applies(rule: Rule, ref: Reference) -> bool:
    apis = rule.cuda.hipify_apis
    if apis and ref.entry.api not in apis:
        return False
    names = rule.cuda.hipify_names
    return not names or any(fnmatch.fnmatchcase(ref.name, pattern) for pattern in names)


@cache
def _speaking(rules: tuple[Rule, ...]) -> frozenset[str]:
    """Ids of the rules whose finding on a line speaks for the unsupported names on it."""
    return frozenset(r.id for r in rules if r.category in SPECIFIC and r.severity >= Severity.MEDIUM)


def _reported(ref: Reference, existing: Iterable[Finding], speaking: frozenset[str]) -> bool:
    word = re.compile(rf"(?<![\w.]){re.escape(ref.name)}(?!\w)")
    return any(f.rule_id in speaking or f.subject == ref.name or word.search(f.subject) for f in existing)


def unsupported_findings(
    references: Sequence[Reference],
    rules: tuple[Rule, ...],
    existing: Sequence[Finding],
    states: LineStates,
    path: str,
    lines: list[str],
    cuda_rules: tuple[Rule, ...],
) -> list[Finding]:
    ordered = _ordered(rules)
    if not ordered:
        return []
    speaking = _speaking(cuda_rules)
    out: list[Finding] = []
    seen: set[tuple[str, int]] = set()
    by_line: dict[int, list[Finding]] = {}
    for f in existing:
        by_line.setdefault(f.span.line or 0, []).append(f)
    for ref in references:
        if ref.entry.converted or (ref.name, ref.line) in seen:
            continue
        seen.add((ref.name, ref.line))
        if _reported(ref, by_line.get(ref.line, ()), speaking):
            continue
        if ref.name in BF16_ONLY_IN_HIP and _on_bf16(lines, ref.line, ref.name):
            continue
        rule = next((r for r in ordered if r.cuda.hipify_status == "unsupported" and _applies(r, ref)), None)
        if rule is None:
            continue
        out.append(make_finding(
            rule, path, Span(ref.line, ref.column, ref.line), ref.name, snippet_of(lines, ref.line),
            guarded=ref.line in states.excluded,
        ))
    return out


def _on_bf16(lines: list[str], line: int, name: str, reach: int = 200) -> bool:
    """The call's arguments are bf16 pairs: each identifier in them declared `…bfloat162 x` above (the nearest
    declaration wins), or, with none found, the function holding the line takes bf16 pairs and no half2."""
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    after = text[text.find(name) + len(name):] if name in text else ""
    above = lines[max(line - 1 - reach, 0):line - 1]
    kinds = set()
    for ident in set(re.findall(r"\b[A-Za-z_]\w*\b", after)):
        declared = re.compile(rf"\b(\w+)\s*[*&]?\s+{re.escape(ident)}\s*[\[=;,)]")
        for previous in reversed(above):
            m = declared.search(previous)
            if m and m.group(1) not in ("return", "auto", "const"):
                kinds.add("bf16" if "bfloat162" in m.group(1) else "half2" if HALF2.search(m.group(1)) else "other")
                break
    if kinds:
        return kinds == {"bf16"} or kinds == {"bf16", "other"}
    for start in range(line - 1, max(line - 1 - 40, -1), -1):
        if FUNCTION_HEAD.search(lines[start]):
            head = "\n".join(lines[start:line])
            return "bfloat162" in head and not HALF2.search(head)
    return False

