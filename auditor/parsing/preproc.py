"""Which lines a ROCm build compiles: a line-based reading of #if/#ifdef/#elif/#else/#endif.

Line-based on purpose: it does not depend on tree-sitter placing a directive around whole
constructs, which it cannot do when a branch splits a statement.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

from auditor.parsing.ifexpr import UNDEFINED, Expr

# the name a `#define` line defines (per line of a text: MULTILINE)
DEFINED_MACRO = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)", re.MULTILINE)
DIRECTIVE = re.compile(r"^\s*#\s*(if|ifdef|ifndef|elif|elifdef|elifndef|else|endif|define)\b(.*)$")
COMMENT = re.compile(r"//.*$|/\*.*?\*/")

Tri = bool | None  # True, False or unknown


@dataclass(frozen=True, slots=True)
class PreprocFacts:
    rocm_defined: frozenset[str]
    rocm_version_macros: frozenset[str]
    cuda_only_defined: frozenset[str]
    rocm_values: tuple[tuple[str, int], ...] = ()   # derived: `#define BNB_HIP 1` on a branch true on ROCm
    project_macros: frozenset[str] = frozenset()      # the project's own build macros among the names above

    @classmethod
    def from_guards(cls, guards: dict) -> "PreprocFacts":
        section = guards.get("preprocessor", {})
        return cls(
            frozenset(section.get("rocm_defined", ())),
            frozenset(section.get("rocm_version_macros", ())),
            frozenset(section.get("cuda_only_defined", ())),
            tuple(sorted(dict(section.get("rocm_values", {})).items())),
            frozenset(section.get("project_macros", ())),
        )

    def with_value(self, name: str, value: int) -> "PreprocFacts":
        values = dict(self.rocm_values)
        values[name] = value
        return replace(self, cuda_only_defined=self.cuda_only_defined - {name},
                       rocm_values=tuple(sorted(values.items())))

    def defined(self, name: str) -> Tri:
        if name in self.rocm_defined or name in self.rocm_version_macros or any(n == name for n, _ in self.rocm_values):
            return True
        if name in self.cuda_only_defined:
            return False
        return None

    def value(self, name: str) -> int | None:
        for known, value in self.rocm_values:
            if known == name:
                return value
        if name in self.rocm_defined:
            return 1
        if name in self.cuda_only_defined:
            return UNDEFINED
        return None

    def within(self, text: str) -> "PreprocFacts":
        """These facts about the names `text` contains only. line_states(text, ·) asks about nothing else: every
        name it looks up (or defines) is a run of characters of the text, so it gives the same states under both
        (a result cache keys a C/C++ file by this: another project's macros the file never names change nothing)."""
        return PreprocFacts(frozenset(n for n in self.rocm_defined if n in text),
                            frozenset(n for n in self.rocm_version_macros if n in text),
                            frozenset(n for n in self.cuda_only_defined if n in text),
                            tuple((n, v) for n, v in self.rocm_values if n in text),
                            frozenset(n for n in self.project_macros if n in text))

    def as_key(self) -> str:
        return repr((sorted(self.rocm_defined), sorted(self.rocm_version_macros), sorted(self.cuda_only_defined),
                     sorted(self.rocm_values), sorted(self.project_macros)))

    def on_cuda(self) -> "PreprocFacts":
        """The same facts for a CUDA build: the ROCm macros are undefined there, the CUDA-only ones unknown."""
        return PreprocFacts(frozenset(), frozenset(), self.rocm_defined | self.rocm_version_macros)

    def with_cuda_only(self, names: frozenset[str]) -> "PreprocFacts":
        """These facts plus macros the scanned code itself defines only on CUDA-only branches."""
        extra = names - self.rocm_defined - self.rocm_version_macros
        return replace(self, cuda_only_defined=self.cuda_only_defined | extra)


def _truth(value: int | None) -> Tri:
    return None if value is None else value != 0


def evaluate(condition: str, facts: PreprocFacts) -> tuple[Tri, bool]:
    """(truth under ROCm, whether the condition names no macro at all, e.g. `#if 0`)."""
    try:
        expr = Expr(COMMENT.sub(" ", condition), facts)
        value = expr.parse()
        return _truth(value), expr.literal_only
    except (ValueError, IndexError, ArithmeticError):
        return None, False


def _not(t: Tri) -> Tri:
    return None if t is None else not t


def _and(a: Tri, b: Tri) -> Tri:
    if a is False or b is False:
        return False
    return None if a is None or b is None else True


def _or(a: Tri, b: Tri) -> Tri:
    if a is True or b is True:
        return True
    return None if a is None or b is None else False


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
    without an #else (README.md, Guarded code: `#if __CUDA_ARCH__ >= 900` paths are ROCm-handled)."""

    __slots__ = ("truth", "taken", "dead", "cuda_truth", "cuda_taken")

    def __init__(self, truth: Tri, dead: bool, cuda_truth: Tri = None):
        self.truth = truth          # of the branch being read
        self.taken = truth          # of any branch so far
        self.dead = dead
        self.cuda_truth = cuda_truth    # the same, for a CUDA build
        self.cuda_taken = cuda_truth

    @property
    def rocm_only(self) -> bool:
        return self.truth is True and self.cuda_truth is False


def line_states(text: str, facts: PreprocFacts) -> LineStates:
    if "#" not in text:
        return LineStates(frozenset(), frozenset())
    lines = text.splitlines()
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
        on_cuda_side = any(group.truth is False for group in self.stack)
        self.cuda_only_macro[name.group(0)] = self.cuda_only_macro.get(name.group(0), True) and on_cuda_side
        if on_cuda_side and self.cuda_only_macro[name.group(0)]:
            self.facts = self.facts.with_cuda_only(frozenset({name.group(0)}))
        literal = re.match(r"[A-Za-z_]\w*\s+(\d{1,18})\s*(?://.*|/\*.*)?$", rest)
        # a branch only ROCm takes, or one ROCm certainly takes (the `#else` of
        # `#if defined(__CUDA_ARCH_FEAT_SM100_ALL)` defining `X_SUPPORTED 0`): the value the ROCm build sees
        rocm_takes = all(g.truth is True for g in self.stack)
        if literal and self.stack and (rocm_takes or any(g.rocm_only for g in self.stack)) and not on_cuda_side:
            self.derived[name.group(0)] = int(literal.group(1))
            self.facts = self.facts.with_value(name.group(0), int(literal.group(1)))

    def open_group(self, word: str, rest: str) -> None:
        truth, is_dead = _condition(word, rest, self.facts)
        self.stack.append(_Group(truth, is_dead and truth is False, _condition(word, rest, self.cuda_facts)[0]))

    def next_branch(self, word: str, rest: str) -> None:
        """`#elif` (as `word`: if, ifdef, ifndef): taken when no branch before it was and its condition holds."""
        truth, _ = _condition(word, rest, self.facts)
        cuda_truth, _ = _condition(word, rest, self.cuda_facts)
        top = self.stack[-1]
        top.truth = _and(_not(top.taken), truth)
        top.taken = _or(top.taken, truth)
        top.cuda_truth = _and(_not(top.cuda_taken), cuda_truth)
        top.cuda_taken = _or(top.cuda_taken, cuda_truth)
        top.dead = False

    def else_branch(self) -> None:
        top = self.stack[-1]
        top.truth = _not(top.taken)
        top.cuda_truth = _not(top.cuda_taken)
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
            if kind == "else" and any(NOTICE.match(b) for b in body) \
                    and all(NOT_CODE.match(b) or NOTICE.match(b) for b in body):
                for _, start, end in branches[:-1]:
                    skipped = set(range(start, end + 1)) & excluded
                    back |= skipped
    return back


def _condition(word: str, rest: str, facts: PreprocFacts) -> tuple[Tri, bool]:
    if word in ("ifdef", "ifndef"):
        name = rest.split()[0] if rest.split() else ""
        known = facts.defined(name)
        return (known if word == "ifdef" else _not(known)), False
    return evaluate(rest, facts)
