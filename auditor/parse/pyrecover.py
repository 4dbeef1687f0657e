"""Python that `ast` cannot parse (a syntax error, or syntax newer than this interpreter such as 3.12's
`type Alias = int`), still read so that its imports and calls are seen: a pull request must not hide
`import tensorrt_llm` behind one bad line.

First the offending lines are blanked and the text parsed again, a bounded number of times (line numbers do
not move, so findings point at the right lines): the file is *partial*, its findings count. When that does
not converge, only the import statements are read, one at a time: the file is *incomplete* (the gate fails
unless the run allows it) but the findings of its imports are still reported.
"""
from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass

MAX_REPAIRS = 24          # parses of the repaired text; each costs one pass over the file
MAX_IMPORT_LINES = 20     # lines a parenthesised `from x import (...)` may span
IMPORT_LINE = re.compile(r"^[ \t]*(?:import|from)[ \t]+[A-Za-z_.]")


@dataclass(frozen=True, slots=True)
class Recovered:
    module: ast.Module
    note: str            # what was done, for the report
    whole: bool          # True: the rest of the file parsed (partial); False: only its imports (incomplete)


def _parse(text: str) -> ast.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(text)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _blank_block(lines: list[str], index: int) -> list[int]:
    """Line `index` and the following lines indented at least as deep (an indented block out of place)."""
    depth = _indent(lines[index])
    out = [index]
    for i in range(index + 1, len(lines)):
        if lines[i].strip() and _indent(lines[i]) < depth:
            break
        out.append(i)
    return out


def _to_blank(lines: list[str], err: SyntaxError, blanked: set[int]) -> list[int]:
    if not err.lineno:
        return []
    index = min(err.lineno, len(lines)) - 1
    if isinstance(err, IndentationError) and "unexpected indent" in (err.msg or ""):
        return _blank_block(lines, index)
    while index >= 0 and (index in blanked or not lines[index].strip()):
        index -= 1   # "expected an indented block" after a header whose body is gone: the header goes
    if index < 0:
        return []
    last = min(err.end_lineno or err.lineno, err.lineno + 1, len(lines)) - 1
    return list(range(index, max(index, last) + 1))


def recover(text: str, error: str) -> Recovered:
    lines = text.split("\n")
    blanked: set[int] = set()
    for _ in range(MAX_REPAIRS):
        try:
            module = _parse("\n".join(lines))
        except SyntaxError as err:
            targets = [i for i in _to_blank(lines, err, blanked) if lines[i].strip()]
            if not targets:
                break
            for i in targets:
                lines[i] = ""
                blanked.add(i)
            continue
        except (RecursionError, MemoryError, ValueError):
            break
        shown = ", ".join(str(i + 1) for i in sorted(blanked)[:5]) + (" …" if len(blanked) > 5 else "")
        original = text.split("\n")
        # an import on a skipped line (`type X = int; import tensorrt_llm`) is still read
        module.body.extend(_imports_only([original[i] if i in blanked else "" for i in range(len(original))]))
        return Recovered(module, f"{error}; line(s) {shown} skipped, the rest scanned", True)
    return Recovered(ast.Module(body=_imports_only(text.split("\n")), type_ignores=[]),
                     f"{error}; only its import statements could be read", False)


def _imports_only(lines: list[str]) -> list[ast.stmt]:
    """The import statements of these lines, each parsed on its own, at their own line numbers (also those
    after a `;`)."""
    body: list[ast.stmt] = []
    for i, line in enumerate(lines):
        if not IMPORT_LINE.match(line):
            if ";" in line and "import" in line:
                body.extend(_after_semicolons(line, i))
            continue
        for span in range(1, MAX_IMPORT_LINES + 1):
            chunk = "\n".join(part.strip() for part in lines[i:i + span])
            try:
                statement = _parse(chunk)
            except (SyntaxError, RecursionError, MemoryError, ValueError):
                if "(" not in line or i + span >= len(lines):
                    break
                continue
            ast.increment_lineno(statement, i)
            body.extend(s for s in statement.body if isinstance(s, (ast.Import, ast.ImportFrom)))
            break
    return body


def _after_semicolons(line: str, index: int) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    column = 0
    for piece in line.split(";"):
        start = column + _indent(piece)
        column += len(piece) + 1
        if IMPORT_LINE.match(piece):
            try:
                statement = _parse(piece.strip())
            except (SyntaxError, RecursionError, MemoryError, ValueError):
                continue
            ast.increment_lineno(statement, index)
            for node in ast.walk(statement):   # the columns of the line, not of the piece
                if isinstance(node, (ast.stmt, ast.alias)):
                    node.col_offset += start
                    node.end_col_offset = (node.end_col_offset or 0) + start
            out.extend(s for s in statement.body if isinstance(s, (ast.Import, ast.ImportFrom)))
    return out
