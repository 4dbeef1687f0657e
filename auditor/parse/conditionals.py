"""Conditional directives that split a construct, read the way a preprocessor would not need to.

tree-sitter-cuda reads `#if`/`#else`/`#endif` only around whole declarations and statements. Real code puts them
inside an expression or an initializer (`if (is_cpu(b)\\n#ifdef GGML_USE_METAL\\n || is_metal(b)\\n#endif\\n)`,
`.nrows = 2,` on one branch and `.nrows = 1,` on the other) or between an `else` and its block, and the parse
fails there. The directive lines of the groups around a failure are taken out of the text the tree is built from
(blanked, so every position stays) and every branch's code is kept: both `.nrows` lines are read, and the rules
see all of them. The blanked directives are parsed on their own, at their own positions, so a rule that matches a
directive's condition (`#ifdef __CUDA_ARCH__`) still finds it (auditor/parse/cuda.py reads both trees).
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

_CONDITIONAL = re.compile(rb"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|elifdef|elifndef|else|endif)\b")
ROUNDS = 3          # each round takes out the groups around the failures left by the previous one
Spans = tuple[tuple[int, int], ...]   # 1-based (first, last) lines the parser could not read


@dataclass(frozen=True, slots=True)
class Group:
    """One #if … #endif group: the 1-based (first, last) physical lines of each of its directives."""

    directives: Spans

    def near(self, first: int, last: int) -> bool:
        return any(a <= last + 1 and b >= first - 1 for a, b in self.directives)


def conditional_groups(lines: list[bytes]) -> tuple[Group, ...]:
    groups: list[Group] = []
    open_groups: list[list[tuple[int, int]]] = []
    i = 0
    while i < len(lines):
        start = i
        while lines[i].rstrip(b"\r").endswith(b"\\") and i + 1 < len(lines):
            i += 1   # a continued directive (or line): the group owns all of its lines
        m = _CONDITIONAL.match(lines[start])
        if m:
            word, span = m.group(1), (start + 1, i + 1)
            if word in (b"if", b"ifdef", b"ifndef"):
                open_groups.append([span])
            elif open_groups:
                open_groups[-1].append(span)
                if word == b"endif":
                    groups.append(Group(tuple(open_groups.pop())))
        i += 1
    return tuple(groups)


def blank_lines(source: bytes, spans: Spans, keep: bool = False) -> bytes:
    """`source` with the lines of `spans` blanked (or, with keep, every other line), newlines and length kept."""
    lines = source.split(b"\n")
    wanted = {n for a, b in spans for n in range(a, b + 1)}
    return b"\n".join(line if ((n in wanted) == keep) else line.translate(_TO_SPACE)
                      for n, line in enumerate(lines, 1))


_TO_SPACE = bytes(0x0D if b == 0x0D else 0x20 for b in range(256))   # every byte but \r becomes a space


def _score(spans: Spans) -> tuple[int, int]:
    return sum(b - a + 1 for a, b in spans), len(spans)


@dataclass(frozen=True, slots=True)
class Reading:
    """The texts to build trees from: the first is the file's tree, the others read what it does not (branches it
    left out, one branch of each group at a time; the directives taken out, alone); all keep every position."""

    texts: tuple[bytes, ...]
    unread: Spans = ()   # lines of a branch no text keeps (a branch nested in another's left-out branch)


def read_across(source: bytes, lost: Callable[[bytes], Spans]) -> Reading:
    """`lost` parses a text and says which lines it could not read; a change is kept only when fewer are lost."""
    spans = lost(source)
    groups = conditional_groups(source.split(b"\n"))
    if not spans or not groups:
        return Reading((source,))
    taken: set[Group] = set()
    best = source
    for _ in range(ROUNDS):
        around = {g for g in groups if g not in taken and any(g.near(a, b) for a, b in spans)}
        if not around:
            break
        trial_spans = lost(trial := blank_lines(source, _directives(taken | around)))
        if _score(trial_spans) >= _score(spans):
            break
        taken, best, spans = taken | around, trial, trial_spans
    if spans:
        around = {g for g in groups if g in taken or any(g.near(a, b) for a, b in spans)}
        one_branch = _one_branch_each(source, tuple(sorted(around, key=lambda g: g.directives)))
        if _fewer_lost(one_branch, spans, lost):
            return one_branch
    if not taken:
        return Reading((source,))
    return Reading((best, blank_lines(source, _directives(taken), keep=True)))


def _fewer_lost(reading: Reading, spans: Spans, lost: Callable[[bytes], Spans]) -> bool:
    """Whether the reading's texts together lose fewer lines than `spans`; parsing stops once they lose as many."""
    score = _score(reading.unread)
    for text in reading.texts:
        more = _score(lost(text))
        score = (score[0] + more[0], score[1] + more[1])
        if score >= _score(spans):
            return False
    return True


def _directives(groups) -> Spans:
    return tuple(sorted(span for g in groups for span in g.directives))


MAX_TEXTS = 6   # one branch of each group at a time: enough for real files; what is left is reported unread


def _one_branch_each(source: bytes, groups: tuple[Group, ...]) -> Reading:
    """Read the way a preprocessor would: each text keeps one branch of every group and blanks the others, for
    a construct split across branches (`#if A` `void f(int a) {` `#else` `void f() {` `#endif`, one shared
    body). Texts are made until every branch was kept by one (a group nested in a branch is read when that
    branch is kept), at most MAX_TEXTS."""
    lines = source.split(b"\n")
    branches = {g: _branches(g) for g in groups}
    unread = {n for g in groups for a, b in branches[g] for n in range(a, b + 1) if lines[n - 1].strip()}
    directives = _directives(groups)
    texts: list[bytes] = []
    while unread and len(texts) < MAX_TEXTS:
        blanked: set[int] = set()
        for g in groups:   # outer groups first: they start first
            if g.directives[0][0] in blanked:
                continue   # inside a branch left out
            spans = branches[g]
            kept = next((j for j, (a, b) in enumerate(spans) if any(n in unread for n in range(a, b + 1))), 0)
            blanked.update(n for j, (a, b) in enumerate(spans) if j != kept for n in range(a, b + 1))
        kept_now = {n for n in unread if n not in blanked}
        if not kept_now:
            break
        unread -= kept_now
        texts.append(blank_lines(source, directives + tuple((n, n) for n in sorted(blanked))))
    if not texts:
        return Reading((source,))
    return Reading((*texts, blank_lines(source, directives, keep=True)), tuple((n, n) for n in sorted(unread)))


def _branches(group: Group) -> Spans:
    """1-based (first, last) lines of each branch: the lines between one directive and the next."""
    d = group.directives
    return tuple((d[i][1] + 1, d[i + 1][0] - 1) for i in range(len(d) - 1))
