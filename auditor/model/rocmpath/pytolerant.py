"""Extension builds a setup.py tolerates failing: the extension is declared inside `try:` (or `setup()` with it
is called there) and a handler that does not re-raise goes on without it (`except Exception: warnings.warn(...)`).
With an import of the extension that falls back (auditor/model/rocmpath/tolerated.py), the package installs and runs
without it: the extension is optional, and so are its sources, whatever their findings."""
from __future__ import annotations

import ast
import re

from auditor.truth.python import dotted

EXTENSION_CLASS = re.compile(r"(?:^|\.)\w*Extension$")


def tolerated_builds(tree: ast.Module) -> dict[str, int]:
    """extension name -> line of the `try` that tolerates its build failing."""
    found: dict[str, int] = {}
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Try, ast.TryStar)) or not node.handlers:
            continue
        if any(h.body and isinstance(h.body[-1], ast.Raise) for h in node.handlers) or any(
                isinstance(n, ast.Raise) and n.exc is None for h in node.handlers for n in ast.walk(h)):
            continue   # re-raised: the failure stops the install
        for stmt in node.body:
            for call in ast.walk(stmt):
                if isinstance(call, ast.Call) and EXTENSION_CLASS.search(dotted(call.func)) and call.args \
                        and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str):
                    found.setdefault(call.args[0].value, node.lineno)
    return found
