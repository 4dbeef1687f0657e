"""The calls of a helper function whose body a `callers = true` rule matched, when the helper hands the matched
value out (`def smi(): return "nvidia-smi"` ... `run(smi())`): that call site is where it is used."""
from __future__ import annotations

import ast
from collections.abc import Sequence

from auditor.parse.python import PythonTree
from auditor.types import Rule

Function = ast.FunctionDef | ast.AsyncFunctionDef


def helper_calls(tree: PythonTree, raw: Sequence[tuple]) -> list[tuple]:
    """(rule, call node, subject, "caller", None) for each call, outside the helper itself, of a helper whose
    matched value flows out of it."""
    helpers: dict[str, Rule] = {}
    for rule, node, _subject, _kind, _line in raw:
        if getattr(rule.python, "callers", False):
            function = enclosing_function(tree, node)
            if function is not None and flows_out(tree, node, function):
                helpers.setdefault(function.name, rule)
    if not helpers:
        return []
    calls: list[tuple] = []
    for node in tree.nodes:
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            enclosing = enclosing_function(tree, node) if name in helpers else None
            if name in helpers and (enclosing is None or enclosing.name != name):
                calls.append((helpers[name], node, f"{name}()", "caller", None))
    return calls


def flows_out(tree: PythonTree, node: ast.AST, function: Function) -> bool:
    """The matched value leaves the function: it is returned (or yielded), directly or through a name the
    function returns, without being passed to a call first. A helper that runs the command itself
    (`def smi(): Popen(["nvidia-smi"])`) is the one place to change, so its callers are not."""
    returned: set[str] = set()
    for inner in ast.walk(function):
        if isinstance(inner, (ast.Return, ast.Yield, ast.YieldFrom)) and inner.value is not None:
            returned.update(n.id for n in ast.walk(inner.value) if isinstance(n, ast.Name))
    parent: ast.AST | None = node
    while parent is not None and parent is not function:
        if isinstance(parent, ast.Call):
            return False
        if isinstance(parent, (ast.Return, ast.Yield, ast.YieldFrom)):
            return True
        if isinstance(parent, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
            return any(isinstance(n, ast.Name) and n.id in returned for t in targets for n in ast.walk(t))
        parent = tree.parent(parent)
    return False


def enclosing_function(tree: PythonTree, node: ast.AST) -> Function | None:
    parent = tree.parent(node)
    while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
        parent = tree.parent(parent)
    return parent
