"""CUDA-only extensions the shipped Python can do without: every import of the module sits where a failed import
is caught (`try: import x_cuda  except ImportError: <fallback>`) or under an availability flag, so a ROCm install
that does not build it still imports and runs the package (AutoGPTQ's `autogptq_marlin_cuda`, which its setup.py
leaves out on ROCm and its Python refuses there)."""
from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from pathlib import PurePosixPath

from auditor.parse.pyimports import unguarded_imports
from auditor.types import SourceFile

MAX_CHARS = 2_000_000   # a module larger than this is not read for imports (the rest of the scan bounds reads too)


def tolerated_artifacts(artifacts: Iterable[str], packages: frozenset[str], mine: Iterable[SourceFile],
                        text_of: Callable[[str], str]) -> dict[str, str]:
    """artifact -> the first import of it (path:line), for each artifact the component's shipped modules import
    somewhere and never unconditionally. An artifact nobody imports by name (loaded through torch.ops, say) is
    not one: nothing shows the package runs without it."""
    names = {a: a.rsplit(".", 1)[-1] for a in artifacts}
    if not names or not packages:
        return {}
    first: dict[str, str] = {}
    unguarded: set[str] = set()
    for f in mine:
        if f.kind != "python" or not any(f.path.startswith(p + "/") for p in packages):
            continue
        text = text_of(f.path)
        wanted = {a: n for a, n in names.items() if n in text}
        if not wanted or len(text) > MAX_CHARS:
            continue
        try:
            module = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        loaded = {name.rsplit(".", 1)[-1] for name in unguarded_imports(module)}
        for artifact, name in wanted.items():
            if name in loaded:
                unguarded.add(artifact)
            line = _import_line(module, name)
            if line is not None:
                first.setdefault(artifact, f"{f.path}:{line}")
    return {a: where for a, where in first.items() if a not in unguarded}


def _import_line(module: ast.Module, name: str) -> int | None:
    for node in ast.walk(module):
        if isinstance(node, ast.Import) and any(PurePosixPath(a.name.replace(".", "/")).name == name
                                                for a in node.names):
            return node.lineno
        if isinstance(node, ast.ImportFrom) and any(a.name == name for a in node.names):
            return node.lineno
    return None
