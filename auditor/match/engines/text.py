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
    commands = Commands(code)
    for number, line in enumerate(code, start=1):
        if not line.strip():
            continue
        for rule in rules:
            m = _compiled(rule.text.lines).search(line)
            if m and rule.text.unless_call is not None \
                    and _compiled(rule.text.unless_call).search(commands.around(number)):
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


class Commands:
    """The multi-line commands of a file (`find_program(...)` from its name to its closing parenthesis), read in
    one pass the first time a line's command is asked for; each command's text is joined once."""

    def __init__(self, code: list[str]):
        self.code = code
        self._start: list[int] | None = None      # per line: the index of its command's first line, or -1
        self._end: dict[int, int] = {}            # command's first line -> one past its last
        self._text: dict[int, str] = {}

    def around(self, number: int) -> str:
        """The command whose arguments hold line `number` (1-based), or that line alone. A command runs at most
        MAX_COMMAND_LINES lines."""
        if self._start is None:
            self._read()
        assert self._start is not None
        start = self._start[number - 1]
        if start < 0:
            return self.code[number - 1]
        if start not in self._text:
            self._text[start] = "\n".join(self.code[start:self._end[start]])
        return self._text[start]

    def _read(self) -> None:
        starts = [-1] * len(self.code)
        start, depth = -1, 0
        for index, line in enumerate(self.code):
            if start < 0 and COMMAND_START.match(line):
                start, depth = index, 0
            if start < 0:
                continue
            starts[index] = start
            depth += line.count("(") - line.count(")")
            if depth <= 0 or index + 1 - start >= MAX_COMMAND_LINES:
                self._end[start] = index + 1
                start = -1
        if start >= 0:
            self._end[start] = len(self.code)
        self._start = starts
