"""Macro shapes tree-sitter-cuda cannot read, blanked before the parse (byte for byte, newlines kept, so every
line and column stays where it was). Only a project's own upper-case macros are touched, never CUDA's keywords
(`__launch_bounds__`, `__global__`), so the rules still see everything they match on.

- A dispatch macro whose arguments are statements, as apex and PyTorch extensions write them:
  `DISPATCH_FLOAT_AND_HALF(t, 0, "adam", using acc_t = float; kernel<<<g, b>>>(...);)`. The macro name and its
  leading arguments are blanked, and its closing parenthesis: the statements parse as the block they are.
- A specifier macro before a declaration: `DEVICE_FUNCTION void f(...)`, `C10_HOST_DEVICE inline T g(...)`.
- A macro between the return type and the name: `__global__ void C10_LAUNCH_BOUNDS_1(256) kernel(...)`.
- A qualifier macro in a declarator: `const float * GGML_RESTRICT x`.
- A statement macro whose first argument is a type: `GGML_TENSOR_LOCALS(int32_t, ne0, op->src[0], ne);` (the
  whole call is blanked: it declares locals the rules have no interest in).
- A macro alone on its line before a declaration or statement: `CUTLASS_HOST_DEVICE` above `void f()`,
  `CUTLASS_PRAGMA_UNROLL` above `for (...)`.
- An attribute macro after `[[...]]` or before a declarator: `[[maybe_unused]] __align__(16) float x[4];`
  is read by the grammar; `__align__` is not upper-case and is left alone.
"""
from __future__ import annotations

import re

_MACRO_CALL = re.compile(rb"\b([A-Z][A-Z0-9_]{2,})\s*\(")
_SPECIFIER = re.compile(
    rb"(?m)^[ \t]*(?:(?:static|inline|extern)[ \t]+)*([A-Z][A-Z0-9_]{2,}(?:[ \t]*\([^()\n]*\))?)[ \t]+"
    rb"(?=(?:static|inline|void|const|constexpr|template|extern|__\w+__|[A-Za-z_][\w:<>,]*[ \t]*[*&]*[ \t]+[*&]*"
    rb"[A-Za-z_]\w*[ \t]*\())")
_BETWEEN_TYPE_AND_NAME = re.compile(rb"(?<![#\w])(?!define\b|return\b|else\b)(?:void|int|float|auto|[a-z_][\w:]*)"
                                    rb"[ \t]+([A-Z][A-Z0-9_]{2,}[ \t]*\([^()\n]*\))[ \t]+(?=[A-Za-z_]\w*[ \t]*\()")
_QUALIFIER = re.compile(rb"\*[ \t]*([A-Z][A-Z0-9_]{2,})[ \t]+(?=[A-Za-z_]\w*[ \t]*[,;=)\[])")
_TYPE_ARGUMENT = re.compile(rb"(?m)^[ \t]*([A-Z][A-Z0-9_]{2,})[ \t]*\([ \t]*(?:const[ \t]+)?"
                            rb"(?:unsigned[ \t]+|signed[ \t]+)?"
                            rb"(?:int|float|double|char|short|long|bool|void|half|\w+_t)\b[ \t*]*,")
# words other toolchains define that the grammar does not know: SYCL's dpct, AltiVec's `vector`, `extern` before
# a macro that declares (`extern DECL_FATTN_CASE(512, 8);`)
_FOREIGN_WORDS = re.compile(rb"\b__dpct_inline__\b|\b__dpct_align__[ \t]*\([^()\n]*\)"
                            rb"|\bvector(?=[ \t]+(?:signed|unsigned|float|double|bool|int|short|char|long|__\w+)\b)"
                            rb"|(?m:^[ \t]*extern(?=[ \t]+[A-Z][A-Z0-9_]{2,}[ \t]*\())")
_ALONE_ON_ITS_LINE = re.compile(rb"(?m)^[ \t]*([A-Z][A-Z0-9_]{2,})[ \t]*$(?=\s*[A-Za-z_#\[])")
_SKIPPED = re.compile(rb'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\''
                      rb'|(?m:^[ \t]*#(?:\\\r?\n|[^\n])*)', re.S)   # and preprocessor lines, continued ones too
PASSES = 4   # a dispatch macro inside another is read once the inner one is blanked


def blank_macro_shapes(source: bytes) -> bytes:
    """`source` with the shapes above blanked; the same length, the same lines."""
    code = _code_mask(source)
    out = bytearray(source)
    for m in _SPECIFIER.finditer(source):
        if code[m.start(1)]:
            _blank(out, m.start(1), m.end(1))
    for m in _FOREIGN_WORDS.finditer(source):
        if code[m.start()]:
            _blank(out, m.start(), m.end())
    _comma_in_parentheses(source, code, out)
    for m in _QUALIFIER.finditer(source):
        if code[m.start(1)]:
            _blank(out, m.start(1), m.end(1))
    for m in _TYPE_ARGUMENT.finditer(source):
        if code[m.start(1)]:
            _blank_call(source, code, m.start(1), source.index(b"(", m.end(1)), out)
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


def _comma_in_parentheses(source: bytes, code: bytearray, out: bytearray) -> None:
    """`CL_CHECK((k = clCreateKernel(p, "k", &err), err))`: the grammar cannot read a comma expression in a
    parenthesized argument; its top-level commas become `|` (one byte each), which it can."""
    stack: list[tuple[int, bool]] = []   # (open position, a parenthesized expression directly inside another)
    previous = 0
    for i, ch in enumerate(source):
        if not code[i] or ch in b" \t\r\n":
            continue
        if ch == 0x28:   # (
            stack.append((i, previous in (0x28, 0x2C)))
        elif ch == 0x29 and stack:   # )
            stack.pop()
        elif ch == 0x2C and stack and stack[-1][1]:   # , at the top of such a parenthesis
            out[i] = 0x7C
        elif ch in b"[]{};" and stack:
            stack[-1] = (stack[-1][0], False)   # braces or statements inside: not a plain expression
        previous = ch


def _blank_call(source: bytes, code: bytearray, start: int, open_at: int, out: bytearray) -> None:
    """Blank a whole macro call, `NAME(…)`, when its parentheses close within reach."""
    depth = 0
    for i in range(open_at, min(len(source), open_at + 20_000)):
        if code[i] and source[i] in b"([{":
            depth += 1
        elif code[i] and source[i] in b")]}":
            depth -= 1
            if depth == 0:
                _blank(out, start, i + 1)
                return


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
