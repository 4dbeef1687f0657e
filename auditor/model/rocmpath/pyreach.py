"""Python reachability (docs/reach-model.md): which shipped modules a plain `import <package>` loads
(module-level imports; an import inside a function runs only when it is called).

A module reached from the package's `__init__` only through guarded imports (try/except ImportError, an
availability check, `if TYPE_CHECKING:`), or not at all, is optional: an NVIDIA-only package it imports is an
optional integration unless the project declares it as a hard dependency."""
from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Mapping

from auditor.parse.pyimports import absolute, unguarded_imports
from auditor.model.rocmpath.model import ProjectBuild
from auditor.model.rocmpath.buildtexts import read_build_file
from auditor.types import SourceFile
from auditor.util.purepaths import pure


def optional_modules(
    packages: Iterable[str], python_files: Iterable[str], imports_of: Callable[[str], tuple[str, ...]],
    entries: frozenset[str] = frozenset(),
) -> frozenset[str]:
    """Shipped files no unguarded import chain from their package's `__init__.py` or an entry point's module
    (`entries`) reaches. `imports_of(path)`: the file's unguarded imports (auditor/parse/pyimports.py)."""
    modules, reached = _reach(packages, python_files, imports_of, entries)
    return frozenset(path for name, path in modules.items() if name not in reached)


def imported_modules(
    packages: Iterable[str], python_files: Iterable[str], imports_of: Callable[[str], tuple[str, ...]],
    entries: frozenset[str] = frozenset(),
) -> frozenset[str]:
    """Shipped files `import <package>` (or an entry point) loads: every unguarded import chain from the package's
    `__init__.py` or an entry point's module."""
    modules, reached = _reach(packages, python_files, imports_of, entries)
    return frozenset(path for name, path in modules.items() if name in reached)


def _reach(packages: Iterable[str], python_files: Iterable[str], imports_of: Callable[[str], tuple[str, ...]],
           entries: frozenset[str] = frozenset()) -> tuple[dict[str, str], set[str]]:
    """module name -> path of the packages' files, and the names `import <package>` loads."""
    modules: dict[str, str] = {}
    for path in python_files:
        for package in packages:
            if path.startswith(package + "/"):
                top = pure(package)
                rel = pure(path).relative_to(top.parent)
                parts = list(rel.with_suffix("").parts)
                if parts[-1] == "__init__":
                    parts = parts[:-1]
                modules[".".join(parts)] = path
    edges = {name: [absolute(i, name, path.endswith("__init__.py")) for i in imports_of(path)]
             for name, path in modules.items()}
    named = {".".join(parts[:i]) for entry in entries for parts in [entry.split(".")] for i in range(2, len(parts) + 1)}
    roots = [n for n in modules if "." not in n or n in named]
    reached: set[str] = set()
    frontier = list(roots)
    while frontier:
        name = frontier.pop()
        if name in reached or name not in modules:
            continue
        reached.add(name)
        for target in edges.get(name, ()):
            parts = target.split(".")
            for i in range(1, len(parts) + 1):   # importing a.b.c loads a, a.b and a.b.c
                prefix = ".".join(parts[:i])
                if prefix in modules and prefix not in reached:
                    frontier.append(prefix)
    return modules, reached


def optional_modules_of(project: ProjectBuild, scanned_imports: Mapping[str, tuple[str, ...]],
                        programs: frozenset[str] = frozenset()) -> frozenset[str]:
    """The shipped modules neither `import <package>` nor the project's own programs (`programs`: the modules its
    training or tool scripts import, `from pkg.models import build`) load. `scanned_imports`: each scanned Python
    file's unguarded imports, read by the scan's own parse; a shipped module the scan did not cover (`--only`, a
    pre-commit run) is read and parsed here."""
    return _of(project, scanned_imports, optional_modules, programs)


def imported_modules_of(project: ProjectBuild, scanned_imports: Mapping[str, tuple[str, ...]]) -> frozenset[str]:
    """The shipped modules `import <package>` loads (an `examples/` module among them is no optional example: the
    package fails to import without it)."""
    return _of(project, scanned_imports, imported_modules)


def _of(project: ProjectBuild, scanned_imports: Mapping[str, tuple[str, ...]],
        select: Callable[[Iterable[str], Iterable[str], Callable[[str], tuple[str, ...]], frozenset[str]],
                         frozenset[str]],
        programs: frozenset[str] = frozenset()) -> frozenset[str]:
    optional: set[str] = set()
    for shipped, files in project.python_packages:
        by_path = {f.path: f for f in files}

        def imports_of(path: str, by_path: dict[str, SourceFile] = by_path) -> tuple[str, ...]:
            if path in scanned_imports:
                return scanned_imports[path]
            try:
                return unguarded_imports(ast.parse(read_build_file(by_path[path]) or ""))
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                return ()

        optional |= select(shipped, list(by_path), imports_of, project.entry_modules | programs)
    return frozenset(optional)
