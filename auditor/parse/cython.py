"""Cython's C declarations as C: the `cdef extern from "header"` blocks of .pyx/.pxd/.pxi files, rewritten
line for line (numbering kept) so that the CUDA engine, the library rules and the HIPIFY table read them
as they read a C header. Everything else in the file (Python and Cython code) becomes a blank line."""
from __future__ import annotations

import re

EXTERN = re.compile(r"^(\s*)cdef\s+extern\s+from\s+(?:\"([^\"]+)\"|'([^']+)'|\*)")
COMMENT = re.compile(r"#.*$")
# Cython-only qualifiers after a declaration: `nogil`, `except +`, `except? -1`, `except *`, `noexcept`
TRAILER = re.compile(r"(?:\s+(?:nogil|with\s+gil|noexcept|except\s*[?+*]?\s*[-\w.]*))+\s*:?\s*$")
BLOCK_OPENER = re.compile(r"^(?:cdef\s+|ctypedef\s+)?(?:enum|struct|union|cppclass|class)\b.*:\s*$|^pass$")
CTYPEDEF = re.compile(r"^ctypedef\s+(.+?)\s+(\w+)\s*$")


def as_c(text: str) -> str:
    out: list[str] = []
    block_indent: int | None = None      # indentation of the `cdef extern from` line we are inside
    nested: int | None = None            # indentation of an enum/struct body inside the block
    for raw in text.splitlines():
        line = COMMENT.sub("", raw).rstrip()
        indent = len(line) - len(line.lstrip())
        if match := EXTERN.match(line):
            block_indent, nested = indent, None
            header = match.group(2) or match.group(3)
            out.append(f'#include "{header}"' if header else "")
            continue
        if block_indent is not None and line.strip() and indent <= block_indent:
            block_indent = nested = None
        if block_indent is None or not line.strip():
            out.append("")
            continue
        out.append(_declaration(line.strip(), indent, nested))
        if BLOCK_OPENER.match(line.strip()):
            nested = indent
        elif nested is not None and indent <= nested:
            nested = None
    return "\n".join(out) + "\n"


def _declaration(code: str, indent: int, nested: int | None) -> str:
    if BLOCK_OPENER.match(code):
        return ""
    if nested is not None and indent > nested:
        return ""   # enum members and struct fields: names HIPIFY maps with their type, not API calls
    code = re.sub(r"^cdef\s+", "", code)
    code = TRAILER.sub("", code)
    if typedef := CTYPEDEF.match(code):
        return f"typedef {typedef.group(1)} {typedef.group(2)};"
    return code + ";" if code else ""
