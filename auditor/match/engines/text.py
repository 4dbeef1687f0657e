"""Text engine: comment-stripped lines of build, container, CI and shell files."""
from __future__ import annotations

import re
from functools import cache

from auditor.match.engines import make_finding, snippet_of
from auditor.match.rulebook import Rulebook
from auditor.match.rulebook.context import ScanContext
from auditor.types import Finding, Rule, Span

HASH_COMMENT = re.compile(r"(?:^|\s)#.*$")


@cache
def _compiled(pattern: str) -> re.Pattern:
    return re.compile(pattern)


def code_lines(text: str, kind: str) -> list[str]:
    """Lines with `#` comments blanked (every kind we read uses `#`), numbering kept."""
    out: list[str] = []
    for line in text.splitlines():
        stripped = line.lstrip()
        if stripped.startswith("#!") and not out:
            out.append("")
        elif stripped.startswith("#"):
            out.append("")
        else:
            out.append(HASH_COMMENT.sub("", line) if "#" in line else line)
    return out


def scan_text(text: str, rulebook: Rulebook | ScanContext, path: str, kind: str, lines: list[str]) -> list[Finding]:
    ctx = ScanContext.of(rulebook)
    rules: list[Rule] = [r for r in ctx.family("text") if kind in r.text.files]
    if not rules:
        return []
    findings: list[Finding] = []
    excluded: frozenset[int] = frozenset()
    if kind == "build":
        from auditor.parse.buildblocks import excluded_lines

        excluded = excluded_lines(path, text, ctx.guards.build)
    code = code_lines(text, kind)
    # `guarded_by`: the file itself has the ROCm counterpart (Bazel's if_rocm beside if_cuda)
    joined = "\n".join(code) if any(r.text.guarded_by is not None for r in rules) else ""
    guarded_rules = {r.id for r in rules if r.text.guarded_by is not None
                     and _compiled(r.text.guarded_by).search(joined)}
    for number, line in enumerate(code, start=1):
        if not line.strip():
            continue
        for rule in rules:
            m = _compiled(rule.text.lines).search(line)
            if m and rule.text.unless_call is not None \
                    and _compiled(rule.text.unless_call).search(enclosing_command(code, number)):
                continue
            if m:
                named = next((g for g in ("subject", "hit") if g in m.re.groupindex and m.group(g)), 0)
                subject = " ".join(m.group(named).split())   # (?P<subject>…) / (?P<hit>…): the part a fingerprint keeps
                span = Span(number, m.start(named) + 1, number)
                findings.append(make_finding(
                    rule, path, span, subject, snippet_of(lines, number),
                    guarded=number in excluded or rule.id in guarded_rules,
                ))
    return findings


COMMAND_START = re.compile(r"^\s*[A-Za-z_][\w.]*\s*\(")
MAX_COMMAND_LINES = 200


def enclosing_command(code: list[str], number: int) -> str:
    """The multi-line command (`find_program(...)` from its name to its closing parenthesis) whose arguments hold
    line `number` (1-based), or that line alone. Bounded: a command is looked for within MAX_COMMAND_LINES lines."""
    for start in range(number, max(0, number - MAX_COMMAND_LINES), -1):
        if not COMMAND_START.match(code[start - 1]):
            continue
        depth, end = 0, None
        for index in range(start - 1, min(len(code), start - 1 + MAX_COMMAND_LINES)):
            depth += code[index].count("(") - code[index].count(")")
            if depth <= 0:
                end = index + 1
                break
        if end is None or end >= number:
            return "\n".join(code[start - 1:end if end is not None else number])
        if start < number:
            break   # the nearest command before the line closed before it: the line is in none
    return code[number - 1]
