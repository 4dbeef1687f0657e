"""A CUDA-only value (guards.toml [python] cuda_only_names: None on ROCm) kept in a name whose every read is a
None test, runs only behind one, or follows a fallback that replaces None (`if not v: v = "12.1"`): the code
already handles ROCm's None, so keeping the value is a vendor switch, not a parse."""
from __future__ import annotations

import ast

from auditor.parse.python import PythonTree


def reads_handle_none(tree: PythonTree, reads: list[ast.Name]) -> bool:
    if not reads:
        return False
    name = reads[0].id
    fallback = _first_fallback(tree, reads, name)
    return all((fallback is not None and read.lineno > fallback) or _tested(tree, read, name) for read in reads)


def _tested(tree: PythonTree, read: ast.Name, name: str) -> bool:
    """The read is a truth or None test itself, or sits behind one of the same name (an `and` operand after it, the
    body of an `if` on it)."""
    parent = tree.parent(read)
    if _is_test_of(parent if isinstance(parent, (ast.Compare, ast.UnaryOp)) else read, name) and (
            isinstance(parent, (ast.If, ast.While, ast.IfExp, ast.BoolOp, ast.UnaryOp, ast.Compare))):
        return True
    child: ast.AST = read
    current = parent
    while current is not None and not isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
        if isinstance(current, ast.BoolOp) and isinstance(current.op, ast.And):
            earlier = current.values[: current.values.index(child)] if child in current.values else []
            if any(_is_test_of(value, name, positive=True) for value in earlier):
                return True
        if isinstance(current, (ast.If, ast.IfExp)) and child is not current.test and (
                child in (current.body if isinstance(current.body, list) else [current.body])) \
                and _is_test_of(current.test, name, positive=True):
            return True
        child, current = current, tree.parent(current)
    return False


def _is_test_of(node: ast.AST, name: str, positive: bool | None = None) -> bool:
    """`name`, `name is not None`, `name != None` (positive), `not name`, `name is None`, `name == None`."""
    if isinstance(node, ast.Name) and node.id == name:
        return positive in (None, True)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not) and isinstance(node.operand, ast.Name) \
            and node.operand.id == name:
        return positive in (None, False)
    if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and node.left.id == name \
            and len(node.ops) == 1 and isinstance(node.comparators[0], ast.Constant) \
            and node.comparators[0].value is None:
        is_positive = isinstance(node.ops[0], (ast.IsNot, ast.NotEq))
        return positive is None or positive == is_positive
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And) and positive:
        return any(_is_test_of(value, name, True) for value in node.values)
    return False


def _first_fallback(tree: PythonTree, reads: list[ast.Name], name: str) -> int | None:
    """The last line of the first `if not name:` / `if name is None:` (no else) whose body gives the name a value
    or leaves (raise, return): below it the name is never None."""
    for read in reads:
        test = tree.parent(read)
        test = tree.parent(test) if isinstance(test, (ast.UnaryOp, ast.Compare)) else test
        if not (isinstance(test, ast.If) and not test.orelse and _is_test_of(test.test, name, positive=False)):
            continue
        last = test.body[-1]
        assigns = any(isinstance(s, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in s.targets)
                      for s in test.body)
        if assigns or isinstance(last, (ast.Raise, ast.Return)):
            return test.end_lineno or test.lineno
    return None
