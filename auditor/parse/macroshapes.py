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
- A format macro joined to string literals: `"size %" PRIu64 "\n"`, `"init " GGML_CUDA_NAME ": %s"` becomes a
  literal of the same length (`"    "`), which the grammar joins.
- An export macro before `struct`/`enum` or between `class` and its name: `GGML_API struct ggml_tensor * f(...)`,
  `class OPENVINO_API Op : public Base`.
- An attribute after an array declarator or as an alias's type, `float x[32] __attribute__((aligned(128)));`,
  `using half8 = __attribute__((ext_vector_type(8))) _Float16;`, and `__builtin_align__(16)` after `struct`.
- A member macro without its `;` in a class body: `OPENVINO_RTTI("Attribute", "0", Base)` (one holding a string
  and no call: a declaration the rules have no interest in).
- An alignment macro in a field, `atomic_int GGML_CACHE_ALIGN n_barrier;`, and the `__device__` of an extended
  lambda, `[&] __device__ (int i) {...}` (the grammar reads no specifier there; no rule matches it).
- `__has_include(<sycl/bfloat16.hpp>)` in a directive: read as `__has_include(_sycl_bfloat16_hpp_)`.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

_MACRO_CALL = re.compile(rb"\b([A-Z][A-Z0-9_]{2,})\s*\(")
_SPECIFIER = re.compile(
    rb"(?m)^[ \t]*(?:(?:static|inline|extern(?:[ \t]+\"C\")?)[ \t]+)*([A-Z][A-Z0-9_]{2,}(?:[ \t]*\([^()\n]*\))?)[ \t]+"
    rb"(?=(?:static|inline|void|const|constexpr|template|extern|__\w+__|(?:(?:struct|enum|union)[ \t]+)?"
    rb"[A-Za-z_][\w:<>,]*[ \t]*[*&]*[ \t]+[*&]*"
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
_ALONE_ON_ITS_LINE = re.compile(rb"(?m)^[ \t]*([A-Z][A-Z0-9_]{2,})[ \t]*$(?=(?:\s*//[^\n]*)*\s*[A-Za-z_#\[])")
_MEMBER_MACRO = re.compile(rb'(?m)^[ \t]*([A-Z][A-Z0-9_]{2,}[ \t]*\([^()\n]*"[^()\n]*\))[ \t]*$(?=\s*[A-Za-z_~#}])')
_FIELD_ATTRIBUTE = re.compile(rb"(?m)(?:^[ \t]*|(?<=[\w>])[ \t]+)([A-Z][A-Z0-9_]*_ALIGN(?:ED)?)(?=[ \t]+[A-Za-z_])")
_DEVICE_LAMBDA = re.compile(rb"\][ \t]*((?:__host__[ \t]+)?__device__(?:[ \t]+__host__)?)[ \t]*(?=\()")
# Comments, strings, character literals and preprocessor lines (continued ones too). A preprocessor line is matched
# from the newline before it (the newline stays code), so that every alternative starts with a byte `re` can
# look for (`^` would be tried at every byte); one on the first line is matched by _FIRST_LINE_DIRECTIVE.
_SKIPPED = re.compile(rb'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\''
                      rb'|\n[ \t]*#(?:\\\r?\n|[^\n])*', re.S)
_FIRST_LINE_DIRECTIVE = re.compile(rb'[ \t]*#(?:\\\r?\n|[^\n])*')
_NEXT_TO_STRING = re.compile(rb"\b(?:PRI|SCN)[diouxXa-z]\w*\b|\b[A-Z_][A-Z0-9_]{2,}\b")
_CLASS_MACRO = re.compile(rb"\b(?:class|struct)[ \t]+([A-Z][A-Z0-9_]{2,})[ \t]+(?=[A-Za-z_]\w*[ \t]*(?:[:{]|final\b))")
_ATTRIBUTE = re.compile(rb"\b(__attribute__|__builtin_align__)[ \t]*\(")
_ALIAS_OF = re.compile(rb"\busing[ \t]+\w+[ \t]*=[ \t]*$")
_HAS_INCLUDE = re.compile(rb"\b__has_include[ \t]*\([ \t]*([<\"][^<>\"\n()]*[>\"])")
PASSES = 4   # a dispatch macro inside another is read once the inner one is blanked

# What a pattern cannot match without (a word, or a pattern that starts with a literal, which `re` finds fast): a
# pattern that starts with `\b` or a lookbehind is tried at every byte, so it runs only where it may match.
_NEEDS: dict[re.Pattern[bytes], tuple[bytes | re.Pattern[bytes], ...]] = {
    _FIELD_ATTRIBUTE: (b"_ALIGN",),
    _ATTRIBUTE: (b"__attribute__", b"__builtin_align__"),
}
_FOREIGN_WORDS_NEED = (
    b"__dpct_",
    re.compile(rb"vector[ \t]+(?:signed|unsigned|float|double|bool|int|short|char|long|__\w+)\b"),
    re.compile(rb"extern[ \t]+[A-Z][A-Z0-9_]{2,}[ \t]*\("),
)
# a line _BETWEEN_TYPE_AND_NAME matches on (its matches never span lines) holds this
_BETWEEN_NEEDS = re.compile(rb"\)[ \t]+[A-Za-z_]\w*[ \t]*\(")


def blank_macro_shapes(source: bytes) -> bytes:
    """`source` with the shapes above blanked; the same length, the same lines."""
    code = _code_mask(source)
    out = bytearray(source)
    starts = _line_starts(source)
    for m in _at_line_starts(_SPECIFIER, source, starts):
        if code[m.start(1)]:
            _blank(out, m.start(1), m.end(1))
    for m in _FOREIGN_WORDS.finditer(source) if _any_of(source, _FOREIGN_WORDS_NEED) else ():
        if code[m.start()]:
            _blank(out, m.start(), m.end())
    _comma_in_parentheses(source, code, out)
    for m in _QUALIFIER.finditer(source):
        if code[m.start(1)]:
            _blank(out, m.start(1), m.end(1))
    for m in _at_line_starts(_TYPE_ARGUMENT, source, starts):
        if code[m.start(1)]:
            _blank_call(source, code, m.start(1), source.index(b"(", m.end(1)), out)
    _blank_in_code(_at_line_starts(_ALONE_ON_ITS_LINE, source, starts), code, out)
    _blank_in_code(_at_line_starts(_MEMBER_MACRO, source, starts), code, out)
    for pattern in (_FIELD_ATTRIBUTE, _DEVICE_LAMBDA):
        for m in pattern.finditer(source) if pattern not in _NEEDS or _any_of(source, _NEEDS[pattern]) else ():
            if code[m.start(1)]:
                _blank(out, m.start(1), m.end(1))
    for m in _between_type_and_name(source):
        if code[m.start(1)]:
            _blank(out, m.start(1), m.end(1))
    _joined_to_strings(source, code, out)
    for m in _CLASS_MACRO.finditer(source):
        if code[m.start(1)]:
            _blank(out, m.start(1), m.end(1))
    for m in _ATTRIBUTE.finditer(source) if _any_of(source, _NEEDS[_ATTRIBUTE]) else ():
        if code[m.start()] and _attribute_out_of_place(source, m):
            _blank_call(source, code, m.start(), m.end() - 1, out)
    for m in _HAS_INCLUDE.finditer(source) if b"__has_include" in source else ():   # directives: no mask test
        out[m.start(1):m.end(1)] = re.sub(rb"\W", b"_", m.group(1))   # the grammar reads only a name there
    for _ in range(PASSES):
        before = bytes(out)
        for m in _MACRO_CALL.finditer(before):
            if code[m.start(1)]:
                _statement_arguments(before, code, m, out)
        if bytes(out) == before:
            break
    return bytes(out)


# A line the patterns anchored at a line start (_SPECIFIER, _TYPE_ARGUMENT, _ALONE_ON_ITS_LINE, _MEMBER_MACRO) may
# match on begins, after blanks, with a capital or with static/inline/extern. Their matches never span lines, so
# trying them only at such lines finds the same matches, without `^` tried at every byte of the file.
_MAY_BEGIN_WITH_MACRO = re.compile(rb"\n[ \t]*[A-Zsie]")


def _line_starts(source: bytes) -> list[int]:
    return [0, *(m.start() + 1 for m in _MAY_BEGIN_WITH_MACRO.finditer(source))]


def _at_line_starts(pattern: re.Pattern[bytes], source: bytes, starts: list[int]) -> Iterator[re.Match[bytes]]:
    """pattern.finditer(source), for a pattern anchored at a line start that matches within one line."""
    for start in starts:
        if (m := pattern.match(source, start)) is not None:
            yield m


def _blank_in_code(matches: Iterable[re.Match[bytes]], code: bytearray, out: bytearray) -> None:
    """Blank each match's first group that starts in code."""
    for m in matches:
        if code[m.start(1)]:
            _blank(out, m.start(1), m.end(1))


def _any_of(source: bytes, needs: tuple[bytes | re.Pattern[bytes], ...]) -> bool:
    return any((need in source) if isinstance(need, bytes) else need.search(source) is not None for need in needs)


def _between_type_and_name(source: bytes) -> Iterator[re.Match[bytes]]:
    """_BETWEEN_TYPE_AND_NAME's matches, looked for only on the lines that may hold one (the same matches)."""
    line_end = -1
    for hint in _BETWEEN_NEEDS.finditer(source):
        if hint.start() < line_end:
            continue   # that line was read
        line_start = source.rfind(b"\n", 0, hint.start()) + 1
        line_end = source.find(b"\n", hint.start())
        line_end = len(source) if line_end == -1 else line_end
        yield from _BETWEEN_TYPE_AND_NAME.finditer(source, line_start, line_end)


def _code_mask(source: bytes) -> bytearray:
    """1 where a byte is code, 0 inside comments, strings and character literals."""
    mask = bytearray(b"\x01") * len(source)
    first = _FIRST_LINE_DIRECTIVE.match(source)
    if first is not None:
        mask[:first.end()] = bytes(first.end())
    for m in _SKIPPED.finditer(source, first.end() if first is not None else 0):
        start = m.start() + (source[m.start()] == 0x0A)   # a preprocessor line: its newline before stays code
        mask[start:m.end()] = bytes(m.end() - start)
    return mask


def _code_only(source: bytes, code: bytearray) -> bytes:
    """`source` with every byte that is not code a space (the same length)."""
    masked = bytearray(source)
    start = code.find(0)
    while start != -1:
        end = code.find(1, start)
        end = len(code) if end == -1 else end
        masked[start:end] = b" " * (end - start)
        start = code.find(0, end)
    return bytes(masked)


def _blank(out: bytearray, start: int, end: int) -> None:
    for i in range(start, end):
        if out[i] not in (0x0A, 0x0D):
            out[i] = 0x20


def _comma_in_parentheses(source: bytes, code: bytearray, out: bytearray) -> None:
    """`CL_CHECK((k = clCreateKernel(p, "k", &err), err))`: the grammar cannot read a comma expression in a
    parenthesized argument; its top-level commas become `|` (one byte each), which it can."""
    stack: list[bool] = []   # per open parenthesis: a parenthesized expression directly inside another
    masked = _code_only(source, code)
    for m in _PUNCTUATION.finditer(masked):
        i = m.start()
        ch = masked[i]
        if ch == 0x28:   # (
            j = i - 1
            while j >= 0 and masked[j] in b" \t\r\n":
                j -= 1
            stack.append(j >= 0 and masked[j] in b"(,")
        elif not stack:
            continue
        elif ch == 0x29:   # )
            stack.pop()
        elif ch == 0x2C:   # , at the top of such a parenthesis
            if stack[-1]:
                out[i] = 0x7C
        else:
            stack[-1] = False   # braces or statements inside: not a plain expression


_PUNCTUATION = re.compile(rb"[(),\[\]{};]")


def _joined_to_strings(source: bytes, code: bytearray, out: bytearray) -> None:
    """A macro between string literals (or after one, before `,` or `)`) becomes a blank literal of its length."""
    for m in _NEXT_TO_STRING.finditer(source):
        start, end = m.start(), m.end()
        if not code[start]:
            continue
        before, after = start - 1, end
        while before >= 0 and source[before] in b" \t\r\n":
            before -= 1
        while after < len(source) and source[after] in b" \t\r\n":
            after += 1
        string_before = before >= 0 and source[before] == 0x22 and not code[before] \
            and not source[max(0, before - 7):before + 1].endswith((b'"C"', b'"C++"'))
        string_after = after < len(source) and source[after] == 0x22 and not code[after] and after > end
        if (string_before and (string_after or source[after:after + 1] in (b",", b")", b";"))) \
                or (string_after and before >= 0 and source[before] in b"(,"):
            out[start:end] = b'"' + b" " * (end - start - 2) + b'"'


def _attribute_out_of_place(source: bytes, m: re.Match) -> bool:
    """`__attribute__((...))` after an array declarator or as an alias's type; `__builtin_align__` after `struct`."""
    before = m.start() - 1
    while before >= 0 and source[before] in b" \t\r\n":
        before -= 1
    if m.group(1) == b"__builtin_align__":
        return source[max(0, before - 5):before + 1] == b"struct"
    line_start = source.rfind(b"\n", 0, m.start()) + 1
    return (before >= 0 and source[before] == 0x5D) or bool(_ALIAS_OF.search(source[line_start:m.start()]))


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
