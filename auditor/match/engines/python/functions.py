"""What a Python module defines and refers to, for the calls layer of reach (auditor/model/rocmpath/pycalls.py): its
module-level functions that nothing in the module itself refers to, and every name the module refers to. A
function is referred to by a name or attribute that reads it (a call, `kernel[grid](...)`, a callback handed on)
or by an identifier string (`__all__`, `getattr(module, "name")`); a call that is commented out is no reference.

Also each branch a caller's choice selects: `if backend == "cuda_jit":` on a parameter or a configuration
attribute (`cfg.attention_backend`), with the value it needs. The strings the module uses as values (a default,
an argument, a configuration entry: any string that is not what a comparison tests against) are among the names
it refers to, so the project can tell whether anything ever passes that value.

Read in one pass over the nodes the scan parsed anyway. A function with a decorator other than a JIT compiler's
(`@triton.jit`, `@triton.autotune`) is registered somewhere (a route, a custom op, a fixture) and not listed."""
from __future__ import annotations

import ast
import re
from typing import cast

from auditor.match.engines.python.guards import dotted_name
from auditor.parse.python import PythonTree

IDENTIFIER = re.compile(r"^[A-Za-z_]\w*$")
JIT_DECORATOR = re.compile(r"(?:^|\.)(?:jit|autotune|heuristics)$")
PRIVATE = "private"
JIT = "jit"
PUBLIC = "public"
SELECTED = "selected"   # a branch taken only when a caller passes the value
MAX_VALUE = 80          # longer strings are messages, not values a caller passes
FILE_NAMES = ""         # the entry naming every name the module refers to
FILE_VALUES = "'"       # the entry naming every string the module uses as a value (what a caller can choose)

Functions = tuple[tuple[str, int, int, tuple[str, ...]], ...]


def python_functions(tree: PythonTree) -> Functions:
    """(name, first line, last line, (kind,)) of each module-level function the module never refers to outside
    its own lines (kind: `jit`, `private` for `_name`, or `public`), then (FILE_NAMES, 0, 0, names) with every
    name the module refers to."""
    occurrences: dict[str, list[int]] = {}
    selections: list[tuple[str, int, int, tuple[str, ...]]] = []
    values: set[str] = set()
    name_type, attribute, store = ast.Name, ast.Attribute, ast.Store
    for node in tree.nodes:
        node_type = type(node)
        if node_type is name_type:   # the commonest nodes: answered here, as _referred would
            read = cast(ast.Name, node)
            name = read.id if type(read.ctx) is not store else None
        elif node_type is attribute:
            name = cast(ast.Attribute, node).attr
        elif node_type in _REFERRING:   # the other node types _referred answers for: most nodes are none of them
            name = _referred(node, tree)
        elif node_type is ast.If:
            selections.extend(_selection(cast(ast.If, node), tree))
            continue
        else:
            continue
        if name:
            occurrences.setdefault(name, []).append(getattr(node, "lineno", 0))
            if node_type is ast.Constant:
                values.add(name)
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
    out.extend(selections)
    out.append((FILE_NAMES, 0, 0, tuple(sorted(occurrences))))
    out.append((FILE_VALUES, 0, 0, tuple(sorted(values))))
    return tuple(out)


def _selection(node: ast.If, tree: PythonTree) -> list[tuple[str, int, int, tuple[str, ...]]]:
    """[(value, first, last, (SELECTED, *values))] when the `if` test needs a parameter or a configuration attribute
    to equal one of `values` for its body to run: `x == "a"`, `x in ("a", "b")`, `x == "a" or x == "b"`."""
    tests = node.test.values if isinstance(node.test, ast.BoolOp) and isinstance(node.test.op, ast.Or) \
        else [node.test]
    values: list[str] = []
    subjects: set[str] = set()
    for test in tests:
        chosen = _chosen_values(test, tree)
        if chosen is None:
            return []
        subjects.add(ast.dump(test.left) if isinstance(test, ast.Compare) else "")
        values.extend(chosen)
    if not values or len(subjects) != 1:   # one choice, tested against several names
        return []
    first, last = node.body[0].lineno, node.body[-1].end_lineno or node.body[-1].lineno
    return [(values[0], first, last, (SELECTED, *values))]


def _chosen_values(test: ast.expr, tree: PythonTree) -> list[str] | None:
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.In))
            and _chosen_by_caller(test.left, tree)):
        return None
    right = test.comparators[0]
    values = right.elts if isinstance(test.ops[0], ast.In) and isinstance(right, (ast.Tuple, ast.List, ast.Set)) \
        else [right]
    if not values or not all(isinstance(v, ast.Constant) and isinstance(v.value, str) for v in values):
        return None
    return [str(v.value) for v in values if isinstance(v, ast.Constant)]


def _chosen_by_caller(node: ast.AST, tree: PythonTree) -> bool:
    """A parameter of the enclosing function, or an attribute (`cfg.backend`, `self.fuser`)."""
    if isinstance(node, ast.Attribute):
        return True
    if not isinstance(node, ast.Name):
        return False
    scope = tree.parent(node)
    while scope is not None and not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        scope = tree.parent(scope)
    if scope is None:
        return False
    arguments = scope.args
    return node.id in {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]}


def _kind(function: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    decorators = [dotted_name(d.func if isinstance(d, ast.Call) else d) or "" for d in function.decorator_list]
    if decorators:
        return JIT if all(JIT_DECORATOR.search(d) for d in decorators) else None
    return PRIVATE if function.name.startswith("_") else PUBLIC


_REFERRING = frozenset({ast.Name, ast.Attribute, ast.Constant, ast.alias})


def _referred(node: ast.AST, tree: PythonTree) -> str | None:
    if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Store):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) < MAX_VALUE:
        parent = tree.parent(node)
        if isinstance(parent, (ast.Tuple, ast.List, ast.Set)):
            parent = tree.parent(parent)
        return None if isinstance(parent, ast.Compare) else node.value   # what a test compares with: no value
    if isinstance(node, ast.alias):
        return (node.asname or node.name).split(".")[-1] if node.name != "*" else None
    return None
