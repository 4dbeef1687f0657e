"""Source text as the compiler and the interpreter read it, before any parser sees it.

Line ends: GCC, nvcc and Python end a line at LF, CRLF or a lone CR; tree-sitter and git end one only at LF. A
lone CR after `// tuned for sm90` ends the comment for the compiler, so every line end becomes LF first, and a
line is what the compiler numbers as one (`str.splitlines` also splits at form feeds and Unicode separators,
which neither the compiler nor Python does).

Comments and literals of C/C++/CUDA (`c_comments`, `without_comments`): one pass of a small lexer over the text,
honouring backslash-newline splices as translation phase 2 does (a `//` comment whose line ends in `\\` goes on),
raw strings, and C++14 digit separators (`1'000` opens no character literal).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_BLOCK_END = re.compile(r"\*(?:\\\n)*/")
_RAW_STRING = re.compile(r'R"([^()\\\s"]{0,16})\((?s:.*?)(?:\)\1"|\Z)')
_QUOTED = {q: re.compile(rf"{q}[^{q}\\\n]*(?:\\(?s:.)[^{q}\\\n]*)*{q}") for q in "\"'"}
_OPENER = re.compile(r"""[/"']""")
_RAW_PREFIXES = frozenset({"R", "u8R", "uR", "UR", "LR"})
_CHAR_PREFIXES = frozenset({"u8", "u", "U", "L"})
_WORD = re.compile(r"\w{1,4}$")


def compiler_text(text: str) -> str:
    """The text with every line end (CRLF, lone CR) made LF, as the compiler and Python read it: line numbers
    then count what theirs count."""
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")


def source_lines(text: str) -> list[str]:
    """The lines of `compiler_text` output, split only where the compiler ends a line."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


@dataclass(frozen=True, slots=True)
class Comment:
    line: int        # 1-based line of its first character
    text: str        # with its `//` or `/* */`
    own_line: bool   # nothing but blanks before it on its line


def c_comments(text: str) -> list[Comment]:
    """The comments of C/C++/CUDA text (after `compiler_text`), as the compiler reads them."""
    out: list[Comment] = []
    if "/" not in text:
        return out
    line, counted = 1, 0
    for kind, start, end in _tokens(text):
        if kind in ("line", "block"):
            line += text.count("\n", counted, start)
            counted = start
            line_start = text.rfind("\n", 0, start) + 1
            out.append(Comment(line, text[start:end], not text[line_start:start].strip()))
    return out


def without_comments(text: str) -> str:
    """The text with each comment and the inside of each string or character literal blanked (`_blank`): what
    the preprocessor's directives are read from. A `#if 0` inside a comment or a raw string is no directive."""
    if not _OPENER.search(text):
        return text
    parts: list[str] = []
    done = 0
    for kind, start, end in _tokens(text):
        if kind in ("string", "char", "raw"):
            start, end = start + 1, end - 1   # keep the quotes: `#include "x.h"` stays an include of something
        parts.append(text[done:start])
        parts.append(_blank(text[start:end]))
        done = end
    parts.append(text[done:])
    return "".join(parts)


def _tokens(text: str):
    """(kind, start, end) of each comment ("line", "block") and literal ("string", "char", "raw")."""
    at = 0
    while (m := _OPENER.search(text, at)) is not None:
        start = m.start()
        token = _token_at(text, start)
        if token is None:
            at = start + 1
            continue
        yield token
        at = token[2]


def _token_at(text: str, start: int) -> tuple[str, int, int] | None:
    first = text[start]
    if first == "/":
        return _comment_at(text, start)
    prefix = _prefix(text, start)
    if first == '"' and prefix in _RAW_PREFIXES:
        m = _RAW_STRING.match(text, start - 1)
        return ("raw", start, m.end()) if m else None
    if first == "'" and prefix and prefix not in _CHAR_PREFIXES:
        return None    # a digit separator: `1'000`
    m = _QUOTED[first].match(text, start)
    return ("string" if first == '"' else "char", start, m.end()) if m else None


def _comment_at(text: str, start: int) -> tuple[str, int, int] | None:
    """A comment opened at `start` (its `//` or `/*` may be split by splices), to its end."""
    i = start + 1
    while text.startswith("\\\n", i):
        i += 2
    if text.startswith("/", i):     # to the first line end no backslash splices
        end = text.find("\n", i)
        while end > 0 and text[end - 1] == "\\":
            end = text.find("\n", end + 1)
        return ("line", start, len(text) if end < 0 else end)
    if text.startswith("*", i):     # to its `*/`; unterminated, to the end (the compiler refuses the file)
        m = _BLOCK_END.search(text, i + 1)
        return ("block", start, len(text) if m is None else m.end())
    return None


def _prefix(text: str, start: int) -> str:
    """The word right before a quote: a literal's prefix, or part of a number or a name ("" when none; a word
    longer than any prefix comes back as "?")."""
    m = _WORD.search(text, max(0, start - 5), start)
    if m is None:
        return ""
    word = m.group()
    return "?" if len(word) == 4 else word


def _blank(chunk: str) -> str:
    """What stands for a comment or a literal's inside: one space (as the compiler reads a comment) and its
    newlines, so that every line keeps its number."""
    return " " + "\n" * chunk.count("\n")


def compiler_lines(raw: str, lines: frozenset[int]) -> frozenset[int]:
    """The numbers `compiler_text` gives the `lines` of `raw` numbered as git and tree-sitter number them (a
    line ends only at LF): a lone CR inside one makes it two lines for the compiler, both of them changed."""
    if "\r" not in raw:
        return lines
    out: set[int] = set()
    number = 1
    for index, line in enumerate(raw.split("\n"), start=1):
        inner = line[:-1] if line.endswith("\r") else line
        extra = compiler_text(inner).count("\n")
        if index in lines:
            out.update(range(number, number + extra + 1))
        number += extra + 1
    return frozenset(out)
