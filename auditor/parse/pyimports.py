"""The imports a Python module runs when it is imported: module-level ones outside any guard.

An import inside a function runs only when the function is called; one under `try: … except ImportError`, an
availability check (`if is_x_available():`, `find_spec`) or `if TYPE_CHECKING:` may not run at all. Read from
the tree the scan parses anyway, so the ROCm-path pass (auditor/model/rocmpath/pyreach.py) never parses a file again.
"""
from __future__ import annotations

import ast
import re
from collections.abc import Iterable

# (`MARLIN_AVAILABLE`, `HAS_TRITON`: a flag set by a guarded import elsewhere)
GUARD_TEST = re.compile(r"(?:^|\.)(?:TYPE_CHECKING|is_\w+_available|find_spec|_is_package_available|has_\w+"
                        r"|[A-Z][A-Z0-9_]*_AVAILABLE|HAS_[A-Z0-9_]+)$")
IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})
_LAZY = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_SIMPLE = (ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign)
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _dotted(node: ast.AST) -> str:
    """The dotted name a test is about. A loop down attribute chains, calls, `not` and comparisons (a chain
    thousands of links long is valid Python); only an and/or recurses, and nesting those takes parentheses,
    which the parser limits."""
    attributes: list[str] = []
    while True:
        if isinstance(node, ast.Attribute):
            attributes.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Call):
            node = node.func
        elif isinstance(node, ast.UnaryOp):
            node = node.operand
        elif isinstance(node, ast.Compare):
            node = node.left
        else:
            break
    if isinstance(node, ast.Name):
        head = node.id
    elif isinstance(node, ast.BoolOp):
        head = next((d for v in node.values if GUARD_TEST.search(d := _dotted(v))), "")
    else:
        head = ""
    return ".".join([head, *reversed(attributes)])


def _catches_import_error(node: ast.Try | ast.TryStar) -> bool:
    """A handler that goes on without the import; one that ends by raising (`except ImportError as e: raise
    ModuleNotFoundError("build the extension") from e`) only rewords the failure: the import is still required."""
    for handler in node.handlers:
        if handler.body and isinstance(handler.body[-1], ast.Raise):
            continue
        if handler.type is None:
            return True
        caught = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        if {_dotted(e).split(".")[-1] for e in caught} & IMPORT_ERRORS:
            return True
    return False


def unguarded_imports(module: ast.Module) -> tuple[str, ...]:
    """Each module an import of this one loads unconditionally, as written: `a.b` absolute, `..a.b` relative
    (one dot a level); `from x import y` gives both `x` and `x.y`, since `y` may be a submodule."""
    out: list[str] = []

    def walk(nodes: Iterable[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, _LAZY):
                continue
            if isinstance(node, (ast.Try, ast.TryStar)):
                if not _catches_import_error(node):
                    walk(node.body)
                for handler in node.handlers:
                    walk(handler.body)
                walk(node.orelse)
                walk(node.finalbody)
            elif isinstance(node, ast.If):
                if not GUARD_TEST.search(_dotted(node.test)):
                    walk(node.body)
                walk(node.orelse)
            elif isinstance(node, ast.Import):
                out.extend(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                target = "." * node.level + (node.module or "")
                out.append(target)
                joiner = "" if target.endswith(".") else "."
                out.extend(f"{target}{joiner}{alias.name}" for alias in node.names if alias.name != "*")
            else:
                for field in ("body", "orelse", "finalbody", "handlers", "cases"):   # class, with, for, match
                    for child in getattr(node, field, None) or ():
                        walk(child.body if isinstance(child, (ast.ExceptHandler, ast.match_case)) else [child])

    walk(module.body)
    return tuple(dict.fromkeys(out))


def absolute(imported: str, module: str, is_package: bool) -> str:
    """`imported` (as unguarded_imports writes it) as an absolute module name, seen from `module`."""
    bare = imported.lstrip(".")
    level = len(imported) - len(bare)
    if not level:
        return imported
    base = module.split(".") if is_package else module.split(".")[:-1]
    anchor = base[: len(base) - (level - 1)] if level > 1 else base
    return ".".join(anchor + ([bare] if bare else []))


def unconditional_statements(module: ast.Module) -> list[ast.stmt]:
    """The statements importing this module runs whatever happens: its body, and the bodies of `with`, `class`
    and of a `try` whose handlers do not catch an import failure, never a branch (`if`, a loop, `match`) or a
    function. Each statement once, in order; a compound one before what it holds."""
    out: list[ast.stmt] = []
    frontier: list[ast.stmt] = list(reversed(module.body))
    while frontier:
        node = frontier.pop()
        out.append(node)
        inner: list[ast.stmt] = []
        if isinstance(node, (ast.With, ast.AsyncWith, ast.ClassDef)):
            inner = node.body
        elif isinstance(node, (ast.Try, ast.TryStar)):
            inner = ([] if _catches_import_error(node) else node.body) + node.orelse + node.finalbody
        frontier.extend(reversed(inner))
    return out


def import_time_lines(module: ast.Module) -> set[int]:
    """Lines run at import: the module-level imports and simple statements that call something, and the bodies
    of the module's functions and classes that such a statement calls by name."""
    statements = unconditional_statements(module)
    defined = {node.name: node for node in statements if isinstance(node, _DEFS)}
    lines: set[int] = set()
    for node in statements:
        calls = [c for c in ast.walk(node) if isinstance(c, ast.Call)] if isinstance(node, _SIMPLE) else []
        if isinstance(node, (ast.Import, ast.ImportFrom)) or calls:
            lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
        for call in calls:
            target = defined.get(call.func.id) if isinstance(call.func, ast.Name) else None
            if target is not None:
                lines.update(_body_lines(target))
    return lines


def _body_lines(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> range | set[int]:
    """A function's body; of a class, its class-level statements and its `__init__`."""
    if not isinstance(node, ast.ClassDef):
        return range(node.lineno, (node.end_lineno or node.lineno) + 1)
    out: set[int] = set()
    for stmt in node.body:
        if not isinstance(stmt, _DEFS) or stmt.name == "__init__":
            out.update(range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1))
    return out


def line_runs_of(lines: Iterable[int]) -> tuple[tuple[int, int], ...]:
    """Line numbers as (first, last) runs of consecutive lines, in order: compact to keep with a file's result."""
    runs: list[tuple[int, int]] = []
    for line in sorted(lines):
        if runs and line == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], line)
        else:
            runs.append((line, line))
    return tuple(runs)
