"""Which lines a ROCm build compiles: a line-based reading of #if/#ifdef/#elif/#else/#endif (each condition's
truth on ROCm is auditor/truth/cpp.py's).

Line-based on purpose: it does not depend on tree-sitter placing a directive around whole
constructs, which it cannot do when a branch splits a statement.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from auditor.parse.sourcetext import compiler_text, source_lines, without_comments
from auditor.truth.cpp import PreprocFacts, Tri, both, condition, either, negate

# the name a `#define` line defines (per line of a text: MULTILINE)
DEFINED_MACRO = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)", re.MULTILINE)
DIRECTIVE = re.compile(r"^\s*#\s*(if|ifdef|ifndef|elif|elifdef|elifndef|else|endif|define)\b(.*)$")

@dataclass(frozen=True, slots=True)
class LineStates:
    """Per 1-based line: 'rocm-excluded' (CUDA-only branch), 'dead' (`#if 0`), or compiled; and, per
    macro the file `#define`s, whether every definition sits on a CUDA-only branch."""

    excluded: frozenset[int]
    dead: frozenset[int]
    defines: tuple[tuple[str, bool], ...] = ()
    rocm_only: frozenset[int] = frozenset()
    rocm_values: tuple[tuple[str, int], ...] = ()   # `#define M <int>` on a branch only ROCm takes


def _directives(lines: list[str]):
    """Yield (index of the first physical line, joined text, number of physical lines) of each logical line that
    may be a directive (one holding a `#`), honouring backslash continuations; other lines are never joined, as
    only directives are read (their lines take the state of the directives around them)."""
    i, count = 0, len(lines)
    while i < count:
        line = lines[i]
        if "#" not in line or (i and lines[i - 1].endswith("\\")):
            i += 1
            continue
        start = i
        while line.endswith("\\") and i + 1 < count:
            i += 1
            line = line[:-1] + " " + lines[i]
        yield start, line, i - start + 1
        i += 1


class _Group:
    """One #if … #endif group while it is being read. A branch ROCm skips counts as guarded even
    without an #else (docs/concepts.md, Guarded code: `#if __CUDA_ARCH__ >= 900` paths are ROCm-handled)."""

    __slots__ = ("truth", "taken", "dead", "cuda_truth", "cuda_taken", "guard", "include_guard")

    def __init__(self, truth: Tri, dead: bool, cuda_truth: Tri = None, guard: str = ""):
        self.truth = truth          # of the branch being read
        self.taken = truth          # of any branch so far
        self.dead = dead
        self.cuda_truth = cuda_truth    # the same, for a CUDA build
        self.cuda_taken = cuda_truth
        self.guard = guard          # `#ifndef X` until its first #define: an include guard when that defines X
        self.include_guard = False

    def taken_as_include_guard(self) -> None:
        """`#ifndef X` / `#define X`: every build reads the header's body the first time it is included."""
        self.truth = self.taken = self.cuda_truth = self.cuda_taken = True
        self.include_guard = True

    @property
    def rocm_only(self) -> bool:
        return self.truth is True and self.cuda_truth is False


def line_states(text: str, facts: PreprocFacts) -> LineStates:
    """`text`: C/C++/CUDA source; its directives are read as the preprocessor reads them, never inside a
    comment or a literal (auditor/parse/sourcetext.py)."""
    if "#" not in text:
        return LineStates(frozenset(), frozenset())
    lines = source_lines(without_comments(compiler_text(text)))
    reading = _BranchReading(facts)
    done = 0   # lines before this index have their state
    for index, line, span in _directives(lines):
        m = DIRECTIVE.match(line)
        if not m:
            continue
        reading.mark(done, index)
        done = index + span
        word, rest = m.group(1), m.group(2).strip()
        if word == "define":
            reading.define(rest)
            reading.mark(index, index + span)   # a #define is code of its branch; the other directives are not
        elif word in ("if", "ifdef", "ifndef"):
            reading.open_group(word, rest)
        elif word in ("elif", "elifdef", "elifndef") and reading.stack:
            reading.next_branch(word.replace("el", "", 1), rest)
        elif word == "else" and reading.stack:
            reading.else_branch()
        elif word == "endif" and reading.stack:
            reading.stack.pop()
    reading.mark(done, len(lines))
    excluded = reading.excluded - _hollow_alternatives(lines, reading.excluded)
    return LineStates(frozenset(excluded), frozenset(reading.dead), tuple(sorted(reading.cuda_only_macro.items())),
                      frozenset(reading.rocm_only), tuple(sorted(reading.derived.items())))


class _BranchReading:
    """One file's conditional groups read top to bottom: the open groups, the line states so far, and the
    macros its own branches define (which later conditions then see)."""

    def __init__(self, facts: PreprocFacts) -> None:
        self.facts = facts
        self.cuda_facts = facts.on_cuda()
        self.stack: list[_Group] = []
        self.excluded: set[int] = set()
        self.dead: set[int] = set()
        self.rocm_only: set[int] = set()
        self.cuda_only_macro: dict[str, bool] = {}
        self.derived: dict[str, int] = {}

    def mark(self, first: int, last: int) -> None:
        """Lines first..last-1 (0-based) under the current stack."""
        if not self.stack or first >= last:
            return
        numbers = range(first + 1, last + 1)
        if any(group.dead for group in self.stack):
            self.dead.update(numbers)
        elif any(group.truth is False for group in self.stack):
            self.excluded.update(numbers)
        elif any(group.cuda_truth is False for group in self.stack):
            self.rocm_only.update(numbers)   # never compiled for CUDA (`#if defined(USE_ROCM) && defined(__gfx942__)`)

    def define(self, rest: str) -> None:
        """A macro defined only on the CUDA side is CUDA-only; a number defined on a branch ROCm takes is the
        value the ROCm build sees."""
        name = re.match(r"[A-Za-z_]\w*", rest)
        if not name or any(group.dead for group in self.stack):
            return
        top = self.stack[-1] if self.stack else None
        if top is not None and top.guard:
            if top.guard == name.group(0) and top.truth is None:
                top.taken_as_include_guard()
            top.guard = ""
        on_cuda_side = any(group.truth is False for group in self.stack)
        self.cuda_only_macro[name.group(0)] = self.cuda_only_macro.get(name.group(0), True) and on_cuda_side
        if on_cuda_side and self.cuda_only_macro[name.group(0)]:
            self.facts = self.facts.with_cuda_only(frozenset({name.group(0)}))
        literal = re.match(r"[A-Za-z_]\w*\s+(\d{1,18})\s*(?://.*|/\*.*)?$", rest)
        # a switch with no value (`#if defined(__HIP_PLATFORM_AMD__)` / `#define LIB_DEVICE_HIP`) is defined, which
        # `#if defined(X)` and `#ifdef X` read; as a number it is 1 here
        bare = re.fullmatch(r"[A-Za-z_]\w*\s*(?://.*|/\*.*)?", rest)
        # a branch only ROCm takes, or one ROCm certainly takes (the `#else` of
        # `#if defined(__CUDA_ARCH_FEAT_SM100_ALL)` defining `X_SUPPORTED 0`): the value the ROCm build sees
        rocm_takes = all(g.truth is True for g in self.stack) and not all(g.include_guard for g in self.stack)
        if (literal or bare) and self.stack and (rocm_takes or any(g.rocm_only for g in self.stack)) \
                and not on_cuda_side:
            value = int(literal.group(1)) if literal else 1
            self.derived[name.group(0)] = value
            self.facts = self.facts.with_value(name.group(0), value)

    def open_group(self, word: str, rest: str) -> None:
        truth, is_dead = condition(word, rest, self.facts)
        guard = rest.split()[0] if word == "ifndef" and rest.split() else ""
        self.stack.append(_Group(truth, is_dead and truth is False, condition(word, rest, self.cuda_facts)[0], guard))

    def next_branch(self, word: str, rest: str) -> None:
        """`#elif` (as `word`: if, ifdef, ifndef): taken when no branch before it was and its condition holds."""
        truth, _ = condition(word, rest, self.facts)
        cuda_truth, _ = condition(word, rest, self.cuda_facts)
        top = self.stack[-1]
        top.truth = both(negate(top.taken), truth)
        top.taken = either(top.taken, truth)
        top.cuda_truth = both(negate(top.cuda_taken), cuda_truth)
        top.cuda_taken = either(top.cuda_taken, cuda_truth)
        top.dead = False

    def else_branch(self) -> None:
        top = self.stack[-1]
        top.truth = negate(top.taken)
        top.cuda_truth = negate(top.cuda_taken)
        top.dead = False


NOTICE = re.compile(r"^\s*#\s*(?:pragma\s+message|warning|error)\b")
NOT_CODE = re.compile(r"^\s*(?:$|//|/\*|\*)")


def _hollow_alternatives(lines: list[str], excluded: set[int]) -> set[int]:
    """Lines of CUDA-only branches whose `#else` has no code, only a notice (`#pragma message("FP16 kernels will
    not be compiled for SM75-")`, `#error`): the ROCm build compiles nothing in their place, so what they hold is
    work to port, not a guarded path (torchsparse's implicit-GEMM mma.sync blocks)."""
    back: set[int] = set()
    stack: list[list[tuple[str, int, int]]] = []   # per open group: (directive, first body line, last body line)
    for index, line, span in _directives(lines):
        m = DIRECTIVE.match(line)
        word = m.group(1) if m else ""
        if word in ("if", "ifdef", "ifndef"):
            stack.append([(word, index + span + 1, 0)])
        elif stack and word in ("elif", "elifdef", "elifndef", "else", "endif"):
            branches = stack[-1]
            branches[-1] = (branches[-1][0], branches[-1][1], index)
            if word != "endif":
                branches.append((word, index + span + 1, 0))
                continue
            stack.pop()
            kind, first, last = branches[-1]
            body = lines[first - 1:last]
            # (not when another branch is one a ROCm build may take: `#elif defined(COMPILING_HIP)` is its path)
            open_alternative = any(not set(range(start, end + 1)) & excluded
                                   and not all(NOT_CODE.match(b) for b in lines[start - 1:end])
                                   for _, start, end in branches[:-1])
            if kind == "else" and any(NOTICE.match(b) for b in body) and not open_alternative \
                    and all(NOT_CODE.match(b) or NOTICE.match(b) for b in body):
                for _, start, end in branches[:-1]:
                    skipped = set(range(start, end + 1)) & excluded
                    back |= skipped
    return back
