"""What a Python module defines and refers to, for the calls layer of reach (auditor/rocmpath/pycalls.py): its
module-level functions that nothing in the module itself refers to, and every name the module refers to. A
function is referred to by a name or attribute that reads it (a call, `kernel[grid](...)`, a callback handed on)
or by an identifier string (`__all__`, `getattr(module, "name")`); a call that is commented out is no reference.

Read in one pass over the nodes the scan parsed anyway. A function with a decorator other than a JIT compiler's
(`@triton.jit`, `@triton.autotune`) is registered somewhere (a route, a custom op, a fixture) and not listed."""
from __future__ import annotations

import ast
import re

from auditor.engines.python.guards import _dotted
from auditor.parsing.python import PythonTree

IDENTIFIER = re.compile(r"^[A-Za-z_]\w*$")
JIT_DECORATOR = re.compile(r"(?:^|\.)(?:jit|autotune|heuristics)$")
PRIVATE = "private"
JIT = "jit"
PUBLIC = "public"
FILE_NAMES = ""         # the entry naming every name the module refers to

Functions = tuple[tuple[str, int, int, tuple[str, ...]], ...]


def python_functions(tree: PythonTree) -> Functions:
    """(name, first line, last line, (kind,)) of each module-level function the module never refers to outside
    its own lines (kind: `jit`, `private` for `_name`, or `public`), then (FILE_NAMES, 0, 0, names) with every
    name the module refers to."""
    occurrences: dict[str, list[int]] = {}
    for node in tree.nodes:
        name = _referred(node)
        if name:
            occurrences.setdefault(name, []).append(getattr(node, "lineno", 0))
    out: list[tuple[str, int, int, tuple[str, ...]]] = []
    for stmt in tree.module.body:
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) or stmt.name.startswith("__"):
            continue
        kind = _kind(stmt)
        if kind is None:
            continue
        first = min([stmt.lineno, *(d.lineno for d in stmt.decorator_list)])
        last = stmt.end_lineno or stmt.lineno
        if not any(line < first or line > last for line in occurrences.get(stmt.name, ())):
            out.append((stmt.name, first, last, (kind,)))
    out.append((FILE_NAMES, 0, 0, tuple(sorted(occurrences))))
    return tuple(out)


def _kind(function: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    decorators = [_dotted(d.func if isinstance(d, ast.Call) else d) or "" for d in function.decorator_list]
    if decorators:
        return JIT if all(JIT_DECORATOR.search(d) for d in decorators) else None
    return PRIVATE if function.name.startswith("_") else PUBLIC


def _referred(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Store):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) < 80 \
            and IDENTIFIER.match(node.value):
        return node.value
    if isinstance(node, ast.alias):
        return (node.asname or node.name).split(".")[-1] if node.name != "*" else None
    return None
