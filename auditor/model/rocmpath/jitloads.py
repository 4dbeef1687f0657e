"""CUDA sources a shipped module builds just in time when it is imported: `torch.utils.cpp_extension.load()` or
`load_inline()` called at the module's top level, or in a function its top level calls. A ROCm user's `import`
runs that build too: ROCm PyTorch hipifies the sources and compiles them with hipcc, so they are built on the
default install (what HIPIFY renames is mapped; what it cannot take is work), not compiled on first use."""
from __future__ import annotations

import ast
import fnmatch
import re
from collections.abc import Callable, Sequence

from auditor.model.rocmpath.provenance import C_KINDS, parent_dir, within
from auditor.parse.python import flatten
from auditor.truth.python import dotted
from auditor.types import SourceFile
from auditor.util.purepaths import pure

LOADERS = re.compile(r"^load(?:_inline)?$|(?:^|\.)cpp_extension\.load(?:_inline)?$")
SOURCE_NAME = re.compile(r"[\w*{}.-]+\.(?:cu|cuh|cpp|cc|cxx|c|hip)$")
FIELD = re.compile(r"\{[^{}]*\}")
MAX_CHARS = 1_000_000


def _imports_loader(tree: ast.Module) -> bool:
    return any(isinstance(n, ast.ImportFrom) and n.module == "torch.utils.cpp_extension"
               or isinstance(n, ast.Import) and any(a.name.startswith("torch") for a in n.names)
               for n in tree.body)


def _import_time_calls(tree: ast.Module) -> list[ast.Call]:
    """Calls the module's top level runs, and those in the bodies of its functions the top level calls."""
    functions = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    top = [n for stmt in tree.body if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
           for n in flatten(stmt) if isinstance(n, ast.Call)]
    called = {c.func.id for c in top if isinstance(c.func, ast.Name) and c.func.id in functions}
    return top + [n for name in sorted(called) for n in flatten(functions[name]) if isinstance(n, ast.Call)]


def _text(node: ast.AST) -> str | None:
    """A string constant; an f-string with `*` for each formatted part."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "*"
                       for v in node.values)
    return None


def _source_names(call: ast.Call, assigned: dict[str, list[ast.expr]]) -> set[str]:
    """The file names (patterns: a formatted part is `*`) the call's sources name, through a name the module
    assigns them to (`sources = [...]; load(name, sources)`)."""
    args = [k.value for k in call.keywords if k.arg in ("sources", "cuda_sources")] or call.args[1:2]
    args = [v for a in args for v in (assigned.get(a.id, []) if isinstance(a, ast.Name) else [a])]
    names = set()
    for arg in args:
        for node in ast.walk(arg):
            text = _text(node)
            if text and SOURCE_NAME.fullmatch(pure(text).name):
                names.add(FIELD.sub("*", pure(text).name))
    return names


def jit_built(mine: Sequence[SourceFile], packages: frozenset[str], text_of: Callable[[str], str]
              ) -> dict[str, str]:
    """C/C++/CUDA file -> the `load()` (path:line) that builds it when a shipped module is imported; the sources
    are looked for under the loading module's directory."""
    c_files = [f.path for f in mine if f.kind in C_KINDS]
    found: dict[str, str] = {}
    for f in mine:
        if f.kind != "python" or not any(within(f.path, p) and f.path != p for p in packages):
            continue
        text = text_of(f.path)
        if "load" not in text or "cpp_extension" not in text or len(text) > MAX_CHARS:
            continue
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        if not _imports_loader(tree):
            continue
        home = parent_dir(f.path)
        assigned: dict[str, list[ast.expr]] = {}
        for node in flatten(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                assigned.setdefault(node.targets[0].id, []).append(node.value)
        for call in _import_time_calls(tree):
            if not LOADERS.search(dotted(call.func)):
                continue
            for name in _source_names(call, assigned):
                for path in c_files:
                    if within(path, home) and fnmatch.fnmatch(pure(path).name, name):
                        found.setdefault(path, f"{f.path}:{call.lineno}")
    return found
