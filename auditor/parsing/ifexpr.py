"""The language of a preprocessor condition (`#if`/`#elif`): its tokens, a Pratt parser, and arithmetic over
values that may be unknown (None). Which macros are defined, and to what, comes from the facts it is given
(auditor/parsing/preproc.PreprocFacts)."""
from __future__ import annotations

import operator
import re
from typing import Protocol

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
