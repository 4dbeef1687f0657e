"""Python reachability (rocm-path.md section 3): which shipped modules a plain `import <package>` loads
(module-level imports; an import inside a function runs only when it is called).

A module reached from the package's `__init__` only through guarded imports (try/except ImportError, an
availability check, `if TYPE_CHECKING:`), or not at all, is optional: an NVIDIA-only package it imports is an
optional integration unless the project declares it as a hard dependency."""
from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable
from pathlib import PurePosixPath

GUARD_TEST = re.compile(r"(?:^|\.)(?:TYPE_CHECKING|is_\w+_available|find_spec|_is_package_available|has_\w+)$")
IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    if isinstance(node, ast.Call):
        return _dotted(node.func)
    if isinstance(node, ast.UnaryOp):
        return _dotted(node.operand)
    if isinstance(node, ast.Compare):
        return _dotted(node.left)
    if isinstance(node, ast.BoolOp):
        return next((d for v in node.values if GUARD_TEST.search(d := _dotted(v))), "")
    return ""


def _imports(tree: ast.Module, module: str, is_package: bool) -> list[tuple[str, bool]]:
    """(absolute module name, guarded) of every import in the module."""
    out: list[tuple[str, bool]] = []
    base = module.split(".") if is_package else module.split(".")[:-1]

    def walk(nodes: Iterable[ast.AST], guarded: bool) -> None:
        for node in nodes:
            if isinstance(node, ast.Try):
                catches = any(h.type is None or {(_dotted(e) or "").split(".")[-1] for e in
                              (h.type.elts if isinstance(h.type, ast.Tuple) else [h.type])} & IMPORT_ERRORS
                              for h in node.handlers)
                walk(node.body, guarded or catches)
                for h in node.handlers:
                    walk(h.body, guarded)
                walk(node.orelse + node.finalbody, guarded)
                continue
            if isinstance(node, ast.If):
                test = _dotted(node.test)
                walk(node.body, guarded or bool(GUARD_TEST.search(test)))
                walk(node.orelse, guarded)
                continue
            if isinstance(node, ast.Import):
                out.extend((alias.name, guarded) for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    anchor = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                    target = ".".join(anchor + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                out.append((target, guarded))
                out.extend((f"{target}.{alias.name}", guarded) for alias in node.names if alias.name != "*")
            lazy = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))   # loaded when called, not on import
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.stmt,)):
                    walk([child], guarded or lazy)
                elif isinstance(child, ast.ExceptHandler):
                    walk(child.body, guarded or lazy)

    walk(tree.body, False)
    return out


def optional_modules(
    packages: Iterable[str], python_files: Iterable[str], text_of: Callable[[str], str]
) -> frozenset[str]:
    """Shipped files no unguarded import chain from their package's `__init__.py` reaches."""
    modules: dict[str, str] = {}
    for path in python_files:
        for package in packages:
            if path.startswith(package + "/"):
                top = PurePosixPath(package)
                rel = PurePosixPath(path).relative_to(top.parent)
                parts = list(rel.with_suffix("").parts)
                if parts[-1] == "__init__":
                    parts = parts[:-1]
                modules[".".join(parts)] = path
    edges: dict[str, list[tuple[str, bool]]] = {}
    for name, path in modules.items():
        try:
            tree = ast.parse(text_of(path))
        except (SyntaxError, ValueError, RecursionError):
            edges[name] = []
            continue
        edges[name] = _imports(tree, name, path.endswith("__init__.py"))
    roots = [n for n in modules if "." not in n]
    reached: set[str] = set()
    frontier = list(roots)
    while frontier:
        name = frontier.pop()
        if name in reached or name not in modules:
            continue
        reached.add(name)
        for target, guarded in edges.get(name, ()):
            if guarded:
                continue
            parts = target.split(".")
            for i in range(1, len(parts) + 1):   # importing a.b.c loads a, a.b and a.b.c
                prefix = ".".join(parts[:i])
                if prefix in modules and prefix not in reached:
                    frontier.append(prefix)
    return frozenset(path for name, path in modules.items() if name not in reached)
