"""The preprocessor's ROCm truth: a condition (`#if`/`#elif`, `#ifdef`) read three-valued (true, false, unknown) on
a ROCm build. Its tokens, a Pratt parser, arithmetic over values that may be unknown (None), and the facts it reads:
which macros a ROCm build defines, and to what (rules/guards.toml's [preprocessor], plus the scanned project's own
macros). The line reading that applies it to a file is auditor/parse/preproc.py."""
from __future__ import annotations

import operator
import re
from dataclasses import dataclass, replace
from typing import Protocol

COMMENT = re.compile(r"//.*$|/\*.*?\*/")

TOKEN = re.compile(
    r"\s*(?:(?P<num>0[xX][0-9a-fA-F]+|\d+)[uUlL]*|(?P<id>[A-Za-z_]\w*)|"
    r"(?P<op>&&|\|\||==|!=|<=|>=|<<|>>|[()!<>+\-*/%&|^~?:,]))"
)


class Undefined(int):
    """0, from a macro a ROCm build never defines (`__CUDA_ARCH__`). `__CUDA_ARCH__ >= CC_TURING` is false on
    ROCm whatever the unknown right side is: it names an architecture, a positive number."""


UNDEFINED = Undefined(0)


class Facts(Protocol):
    def defined(self, name: str) -> bool | None: ...

    def value(self, name: str) -> int | None: ...


class Expr:
    """Pratt parser over #if expressions; values are ints or None (unknown)."""

    BINARY = {
        "||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6,
        "<": 7, ">": 7, "<=": 7, ">=": 7, "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10,
    }

    def __init__(self, text: str, facts: Facts):
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
    if isinstance(a, Undefined) and b is None and op in (">=", ">", "=="):
        return 0
    if isinstance(b, Undefined) and a is None and op in ("<=", "<", "=="):
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


def negate(t: Tri) -> Tri:
    return None if t is None else not t


def both(a: Tri, b: Tri) -> Tri:
    if a is False or b is False:
        return False
    return None if a is None or b is None else True


def either(a: Tri, b: Tri) -> Tri:
    if a is True or b is True:
        return True
    return None if a is None or b is None else False


def condition(word: str, rest: str, facts: PreprocFacts) -> tuple[Tri, bool]:
    if word in ("ifdef", "ifndef"):
        name = rest.split()[0] if rest.split() else ""
        known = facts.defined(name)
        return (known if word == "ifdef" else negate(known)), False
    return evaluate(rest, facts)
