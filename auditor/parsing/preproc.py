"""Which lines a ROCm build compiles: a line-based reading of #if/#ifdef/#elif/#else/#endif.

Line-based on purpose: it does not depend on tree-sitter placing a directive around whole
constructs, which it cannot do when a branch splits a statement.
"""
from __future__ import annotations

import operator
import re
from dataclasses import dataclass, replace

# the name a `#define` line defines (per line of a text: MULTILINE)
DEFINED_MACRO = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)", re.MULTILINE)
DIRECTIVE = re.compile(r"^\s*#\s*(if|ifdef|ifndef|elif|elifdef|elifndef|else|endif|define)\b(.*)$")
TOKEN = re.compile(
    r"\s*(?:(?P<num>0[xX][0-9a-fA-F]+|\d+)[uUlL]*|(?P<id>[A-Za-z_]\w*)|"
    r"(?P<op>&&|\|\||==|!=|<=|>=|<<|>>|[()!<>+\-*/%&|^~?:,]))"
)
COMMENT = re.compile(r"//.*$|/\*.*?\*/")

Tri = bool | None  # True, False or unknown


class _Undefined(int):
    """0, from a macro a ROCm build never defines (`__CUDA_ARCH__`). `__CUDA_ARCH__ >= CC_TURING` is false on
    ROCm whatever the unknown right side is: it names an architecture, a positive number."""


_UNDEFINED = _Undefined(0)


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
            return _UNDEFINED
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


class _Expr:
    """Pratt parser over #if expressions; values are ints or None (unknown)."""

    BINARY = {
        "||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6,
        "<": 7, ">": 7, "<=": 7, ">=": 7, "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10,
    }

    def __init__(self, text: str, facts: PreprocFacts):
        self.tokens: list[tuple[str, str]] = []
        pos = 0
        while pos < len(text):
            m = TOKEN.match(text, pos)
            if not m:
                if text[pos:].strip():
                    raise ValueError(text)
                break
            pos = m.end()
            kind = m.lastgroup or "op"
            self.tokens.append((kind, m.group(kind)))
        self.i = 0
        self.facts = facts
        self.literal_only = all(kind != "id" for kind, _ in self.tokens)

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        tok = self.peek()
        if tok is None:
            raise ValueError("unexpected end")
        self.i += 1
        return tok

    def parse(self, min_prec: int = 0) -> int | None:
        left = self.unary()
        while (tok := self.peek()) and tok[0] == "op":
            if tok[1] == "?":
                self.take()
                yes = self.parse()
                if self.take()[1] != ":":
                    raise ValueError("expected ':'")
                no = self.parse()
                left = None if left is None else (yes if left else no)
                continue
            prec = self.BINARY.get(tok[1])
            if prec is None or prec < min_prec:
                break
            self.take()
            right = self.parse(prec + 1)
            left = _apply(tok[1], left, right)
        return left

    def unary(self) -> int | None:
        kind, text = self.take()
        if kind == "num":
            return int(text, 16) if text.lower().startswith("0x") else int(text)
        if kind == "id":
            if text == "defined":
                paren = self.peek() == ("op", "(")
                if paren:
                    self.take()
                _, name = self.take()
                if paren:
                    self.take()
                known = self.facts.defined(name)
                return None if known is None else int(known)
            if self.peek() == ("op", "("):  # function-like macro: value unknown
                depth = 0
                while tok := self.peek():
                    self.take()
                    depth += {"(": 1, ")": -1}.get(tok[1], 0) if tok[0] == "op" else 0
                    if depth == 0:
                        break
                return None
            return self.facts.value(text)
        if text == "(":
            value = self.parse()
            self.take()
            return value
        operand = self.unary()
        if operand is None:
            return None
        return {"!": int(not operand), "-": -operand, "+": operand, "~": ~operand}.get(text)


def _apply(op: str, a: int | None, b: int | None) -> int | None:
    if op == "&&":
        if a == 0 or b == 0:
            return 0
        return None if a is None or b is None else 1
    if op == "||":
        if (a is not None and a != 0) or (b is not None and b != 0):
            return 1
        return None if a is None or b is None else 0
    if isinstance(a, _Undefined) and b is None and op in (">=", ">", "=="):
        return 0
    if isinstance(b, _Undefined) and a is None and op in ("<=", "<", "=="):
        return 0
    if a is None or b is None:
        return None
    if op in ("/", "%") and b == 0:
        return None
    return _ARITHMETIC[op](a, b)


_ARITHMETIC = {
    "|": operator.or_, "^": operator.xor, "&": operator.and_,
    "==": lambda a, b: int(a == b), "!=": lambda a, b: int(a != b), "<": lambda a, b: int(a < b),
    ">": lambda a, b: int(a > b), "<=": lambda a, b: int(a <= b), ">=": lambda a, b: int(a >= b),
    "<<": lambda a, b: a << min(max(b, 0), 64), ">>": lambda a, b: a >> min(max(b, 0), 64),
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": lambda a, b: int(a / b), "%": operator.mod,
}


def _truth(value: int | None) -> Tri:
    return None if value is None else value != 0


def evaluate(condition: str, facts: PreprocFacts) -> tuple[Tri, bool]:
    """(truth under ROCm, whether the condition names no macro at all, e.g. `#if 0`)."""
    try:
        expr = _Expr(COMMENT.sub(" ", condition), facts)
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
    stack: list[_Group] = []
    excluded: set[int] = set()
    dead: set[int] = set()
    rocm_only: set[int] = set()
    cuda_facts = facts.on_cuda()
    cuda_only_macro: dict[str, bool] = {}
    derived: dict[str, int] = {}
    lines = text.splitlines()
    done = 0   # lines before this index have their state

    def mark(first: int, last: int) -> None:
        """Lines first..last-1 (0-based) under the current stack."""
        if not stack or first >= last:
            return
        numbers = range(first + 1, last + 1)
        if any(group.dead for group in stack):
            dead.update(numbers)
        elif any(group.truth is False for group in stack):
            excluded.update(numbers)
        elif any(group.cuda_truth is False for group in stack):
            rocm_only.update(numbers)   # never compiled for CUDA (`#if defined(USE_ROCM) && defined(__gfx942__)`)

    for index, line, span in _directives(lines):
        m = DIRECTIVE.match(line)
        if not m:
            continue
        mark(done, index)
        done = index + span
        word, rest = m.group(1), m.group(2).strip()
        if word == "define":
            name = re.match(r"[A-Za-z_]\w*", rest)
            if name and not any(group.dead for group in stack):
                on_cuda_side = any(group.truth is False for group in stack)
                cuda_only_macro[name.group(0)] = cuda_only_macro.get(name.group(0), True) and on_cuda_side
                if on_cuda_side and cuda_only_macro[name.group(0)]:
                    facts = facts.with_cuda_only(frozenset({name.group(0)}))
                literal = re.match(r"[A-Za-z_]\w*\s+(\d{1,18})\s*(?://.*|/\*.*)?$", rest)
                if literal and stack and any(g.rocm_only for g in stack) and not on_cuda_side:
                    derived[name.group(0)] = int(literal.group(1))
                    facts = facts.with_value(name.group(0), int(literal.group(1)))
            mark(index, index + span)   # a #define is code of its branch; the other directives are not
        elif word in ("if", "ifdef", "ifndef"):
            truth, is_dead = _condition(word, rest, facts)
            stack.append(_Group(truth, is_dead and truth is False, _condition(word, rest, cuda_facts)[0]))
        elif word in ("elif", "elifdef", "elifndef") and stack:
            truth, _ = _condition(word.replace("el", "", 1), rest, facts)
            cuda_truth, _ = _condition(word.replace("el", "", 1), rest, cuda_facts)
            top = stack[-1]
            top.truth = _and(_not(top.taken), truth)
            top.taken = _or(top.taken, truth)
            top.cuda_truth = _and(_not(top.cuda_taken), cuda_truth)
            top.cuda_taken = _or(top.cuda_taken, cuda_truth)
            top.dead = False
        elif word == "else" and stack:
            top = stack[-1]
            top.truth = _not(top.taken)
            top.cuda_truth = _not(top.cuda_taken)
            top.dead = False
        elif word == "endif" and stack:
            stack.pop()
    mark(done, len(lines))
    excluded -= _hollow_alternatives(lines, excluded)
    return LineStates(frozenset(excluded), frozenset(dead), tuple(sorted(cuda_only_macro.items())),
                      frozenset(rocm_only), tuple(sorted(derived.items())))


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
