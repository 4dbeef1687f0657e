"""Macro shapes tree-sitter-cuda cannot read, blanked before the parse (byte for byte, newlines kept, so every
line and column stays where it was). Only a project's own upper-case macros are touched, never CUDA's keywords
(`__launch_bounds__`, `__global__`), so the rules still see everything they match on.

- A dispatch macro whose arguments are statements, as apex and PyTorch extensions write them:
  `DISPATCH_FLOAT_AND_HALF(t, 0, "adam", using acc_t = float; kernel<<<g, b>>>(...);)`. The macro name and its
  leading arguments are blanked, and its closing parenthesis: the statements parse as the block they are.
- A specifier macro before a declaration: `DEVICE_FUNCTION void f(...)`, `C10_HOST_DEVICE inline T g(...)`.
- A macro between the return type and the name: `__global__ void C10_LAUNCH_BOUNDS_1(256) kernel(...)`.
- A macro alone on its line before a declaration or statement: `CUTLASS_HOST_DEVICE` above `void f()`,
  `CUTLASS_PRAGMA_UNROLL` above `for (...)`.
- An attribute macro after `[[...]]` or before a declarator: `[[maybe_unused]] __align__(16) float x[4];`
  is read by the grammar; `__align__` is not upper-case and is left alone.
"""
from __future__ import annotations

import re

_MACRO_CALL = re.compile(rb"\b([A-Z][A-Z0-9_]{2,})\s*\(")
_SPECIFIER = re.compile(
    rb"(?m)^[ \t]*([A-Z][A-Z0-9_]{2,}(?:[ \t]*\([^()\n]*\))?)[ \t]+"
    rb"(?=(?:static|inline|void|const|constexpr|template|extern|__\w+__|[A-Za-z_][\w:<>,]*[ \t]*[*&]*[ \t]+[*&]*"
    rb"[A-Za-z_]\w*[ \t]*\())")
_BETWEEN_TYPE_AND_NAME = re.compile(rb"(?<![#\w])(?!define\b|return\b|else\b)(?:void|int|float|auto|[a-z_][\w:]*)[ \t]+([A-Z][A-Z0-9_]{2,}[ \t]*\([^()\n]*\))"
                                    rb"[ \t]+(?=[A-Za-z_]\w*[ \t]*\()")
_ALONE_ON_ITS_LINE = re.compile(rb"(?m)^[ \t]*([A-Z][A-Z0-9_]{2,})[ \t]*$(?=\s*[A-Za-z_#\[])")
_SKIPPED = re.compile(rb'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\''
                      rb'|(?m:^[ \t]*#(?:\\\r?\n|[^\n])*)', re.S)   # and preprocessor lines, continued ones too
PASSES = 4   # a dispatch macro inside another is read once the inner one is blanked


def blank_macro_shapes(source: bytes) -> bytes:
    """`source` with the shapes above blanked; the same length, the same lines."""
    if not re.search(rb"[A-Z][A-Z0-9_]{2,}", source):
        return source
    code = _code_mask(source)
    out = bytearray(source)
    for m in _SPECIFIER.finditer(source):
        if code[m.start(1)]:
            _blank(out, m.start(1), m.end(1))
    for m in _ALONE_ON_ITS_LINE.finditer(source):
        if code[m.start(1)]:
            _blank(out, m.start(1), m.end(1))
    for m in _BETWEEN_TYPE_AND_NAME.finditer(source):
        if code[m.start(1)]:
            _blank(out, m.start(1), m.end(1))
    for _ in range(PASSES):
        before = bytes(out)
        for m in _MACRO_CALL.finditer(before):
            if code[m.start(1)]:
                _statement_arguments(before, code, m, out)
        if bytes(out) == before:
            break
    return bytes(out)


def _code_mask(source: bytes) -> bytearray:
    """1 where a byte is code, 0 inside comments, strings and character literals."""
    mask = bytearray(b"\x01") * len(source)
    for m in _SKIPPED.finditer(source):
        mask[m.start():m.end()] = bytes(m.end() - m.start())
    return mask


def _blank(out: bytearray, start: int, end: int) -> None:
    for i in range(start, end):
        if out[i] not in (0x0A, 0x0D):
            out[i] = 0x20


def _statement_arguments(source: bytes, code: bytearray, m: re.Match, out: bytearray) -> None:
    """A macro call whose arguments hold statements (a `;` at the top level of an argument): blank the name and
    the arguments before the first such one, and the closing parenthesis."""
    open_at = m.end() - 1
    depth, commas, first_statement, i = 0, [open_at], None, open_at
    after_name = None   # the comma after the first string argument: `"adam_kernel",` names the dispatch
    limit = min(len(source), open_at + 200_000)
    while i < limit:
        if code[i]:
            ch = source[i]
            if ch in b"([{":
                depth += 1
            elif ch in b")]}":
                depth -= 1
                if depth == 0:
                    break
            elif depth == 1 and ch == 0x2C:   # ,
                commas.append(i)
                j = i - 1
                while j > open_at and source[j] in b" \t\r\n":
                    j -= 1
                if after_name is None and source[j] == 0x22 and not code[j]:
                    after_name = i
            elif ch == 0x3B and first_statement is None:   # ;
                first_statement = commas[-1] if depth == 1 else first_statement
        i += 1
    if depth != 0 or first_statement is None or i >= limit:
        return
    if after_name is not None and after_name <= first_statement:
        first_statement = after_name
    _blank(out, m.start(1), first_statement + 1)
    _blank(out, i, i + 1)
