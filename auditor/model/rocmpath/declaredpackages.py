"""The top-level packages a distribution declares it ships, read (never run) from its manifests.

pip installs what the build backend's package list says, not every directory with an `__init__.py`: a
`[tool.setuptools] packages = ["pkg", "pkg.nn"]` list, `[tool.setuptools.packages.find]` with `include`/`exclude`,
or a setup.py's `packages=[...]` / `packages=find_packages(exclude=["tests", "extra*"])`. A directory of the tree
that no declaration covers (`extra/`, `benchmarks/`) is not installed. Only literal declarations are read; anything
computed leaves the answer unknown (None), and every package directory counts as shipped, as before."""
from __future__ import annotations

import ast
import tomllib
from auditor.util.tomltext import load_toml
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import PurePosixPath
from typing import TypeGuard

FIND_CALLS = frozenset({"find_packages", "find_namespace_packages"})


@dataclass(frozen=True, slots=True)
class Declared:
    """Which top-level package names a declaration ships: an explicit set, or `find`'s include/exclude patterns."""

    names: frozenset[str] | None = None       # an explicit list's top-level names
    include: tuple[str, ...] = ("*",)
    exclude: tuple[str, ...] = ()

    def ships(self, name: str) -> bool:
        if self.names is not None:
            return name in self.names
        return any(fnmatchcase(name, p) for p in self.include) and not any(fnmatchcase(name, p) for p in self.exclude)


def declared_packages(manifests: Iterable[str], text_of: Callable[[str], str],
                      tree_of: Callable[[str], ast.Module | None]) -> Declared | None:
    """The component's declaration, from its pyproject.toml or setup.py (None: none literal to read)."""
    for path in manifests:
        name = PurePosixPath(path).name
        found = _from_pyproject(text_of(path)) if name == "pyproject.toml" else \
            _from_setup(tree_of(path)) if name == "setup.py" else None
        if found is not None:
            return found
    return None


def _from_pyproject(text: str) -> Declared | None:
    try:
        data = load_toml(text)
    except (tomllib.TOMLDecodeError, UnicodeError):
        return None
    setuptools = (data.get("tool") or {}).get("setuptools") if isinstance(data.get("tool"), dict) else None
    if not isinstance(setuptools, dict) or not _plain_layout(setuptools.get("package-dir")):
        return None
    listed = setuptools.get("packages")
    if _strings(listed):
        return Declared(names=frozenset(p.split(".")[0] for p in listed))
    find = listed.get("find") if isinstance(listed, dict) else None
    if isinstance(find, dict):
        return _find(find.get("include"), find.get("exclude"))
    return None


def _find(include: object, exclude: object) -> Declared | None:
    """`find_packages`' patterns, when they are lists of strings (a missing include is every package)."""
    included = ["*"] if include is None else include
    excluded = [] if exclude is None else exclude
    if not _strings(included):
        return None
    if excluded in ([], ()):
        return Declared(include=tuple(included))
    return Declared(include=tuple(included), exclude=tuple(excluded)) if _strings(excluded) else None


def _plain_layout(package_dir: object) -> bool:
    """No package directory mapping, or only the `src/` layout's (`{"": "src"}`), which the tree's own package
    directories already show; a package mapped elsewhere (`{"pkg": "python/pkg"}`) is not read here."""
    return package_dir is None or (isinstance(package_dir, dict) and set(package_dir) <= {""})


def _strings(value: object) -> TypeGuard[list[str] | tuple[str, ...]]:
    """A non-empty list of strings, as a manifest writes one."""
    return isinstance(value, (list, tuple)) and bool(value) and all(isinstance(v, str) for v in value)


def _from_setup(tree: ast.Module | None) -> Declared | None:
    """`setup(packages=...)`: a literal list, or a `find_packages(...)` call with literal patterns."""
    if tree is None:
        return None
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and _called(node) == "setup"):
            continue
        value = next((k.value for k in node.keywords if k.arg == "packages"), None)
        layout = next((k.value for k in node.keywords if k.arg == "package_dir"), None)
        try:
            plain = layout is None or _plain_layout(ast.literal_eval(layout))
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            plain = False
        if value is None or not plain:
            return None
        try:
            listed = ast.literal_eval(value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            listed = None
        if _strings(listed):
            return Declared(names=frozenset(p.split(".")[0] for p in listed))
        if isinstance(value, ast.Call) and _called(value) in FIND_CALLS:
            return _find_call(value)
        return None
    return None


def _find_call(call: ast.Call) -> Declared | None:
    arguments = {k.arg: k.value for k in call.keywords if k.arg}
    try:
        include = ast.literal_eval(arguments["include"]) if "include" in arguments else None
        exclude = ast.literal_eval(arguments["exclude"]) if "exclude" in arguments else None
        if len(call.args) > 1 and exclude is None:
            exclude = ast.literal_eval(call.args[1])
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return _find(include, exclude)


def _called(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
