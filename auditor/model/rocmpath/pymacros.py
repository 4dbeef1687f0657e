"""The macros a setup.py's own edits define or undefine (`define_macros += [("WITH_HIP", None)]`,
`undef_macros.append("__HIP_NO_HALF_CONVERSIONS__")`), with the line of each, for the build reader to place in a
configuration."""
from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

from auditor.truth.python import dotted


def _edit(node: ast.AST) -> tuple[str, list[ast.expr]] | None:
    """("define" | "undef", the values added) for an edit of a macro list, else None."""
    if isinstance(node, (ast.Assign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        names, values = [dotted(t) for t in targets], [node.value]
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("append", "extend"):
        names, values = [dotted(node.func.value)], list(node.args)
    else:
        return None
    for name in names:
        if name.endswith("define_macros"):
            return "define", values
        if name.endswith("undef_macros"):
            return "undef", values
    return None


def macro_edits(nodes: Iterable[ast.AST]) -> Iterator[tuple[int, str, str]]:
    """(line, "define" | "undef", macro) for each macro a list edit names: a define is a `(NAME, value)` tuple,
    an undef a string."""
    for node in nodes:
        edit = _edit(node)
        if edit is None:
            continue
        kind, values = edit
        for value in values:
            for sub in ast.walk(value):
                item = sub.elts[0] if kind == "define" and isinstance(sub, ast.Tuple) and sub.elts else sub
                if kind == "define" and not isinstance(sub, ast.Tuple):
                    continue
                if isinstance(item, ast.Constant) and isinstance(item.value, str):
                    yield item.lineno, kind, item.value
