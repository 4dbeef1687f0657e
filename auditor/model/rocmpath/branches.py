"""What a branch of a build script does when it is not a build: only says something, or only refuses."""
from __future__ import annotations

import ast
import re

from auditor.truth.python import dotted

EXIT_CALLS = re.compile(r"(?:^|\.)(?:exit|abort|warn|warning|print)$")
SAY_CALLS = re.compile(r"(?:^|\.)(?:print|warn|warning|info|debug)$")


def only_says(body: list[ast.stmt]) -> bool:
    """A branch that only prints, warns or logs: it builds nothing and refuses nothing."""
    return bool(body) and all(isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
                              and SAY_CALLS.search(dotted(stmt.value.func)) for stmt in body)


def only_refuses(body: list[ast.stmt]) -> bool:
    """A branch that only raises, exits or warns (and then raises or exits)."""
    if not body:
        return False
    for stmt in body:
        if isinstance(stmt, ast.Raise):
            continue
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
                and EXIT_CALLS.search(dotted(stmt.value.func)):
            continue
        return False
    last = body[-1]
    return isinstance(last, ast.Raise) or (
        isinstance(last, ast.Expr) and isinstance(last.value, ast.Call)
        and dotted(last.value.func).endswith(("exit", "abort"))
    )
