"""The include paths a project's build files name, for `fix --verify`'s compiles: CMake's `include_directories` and
`target_include_directories`, and a setup script's `include_dirs=` and `-I` flags. Only paths written in the file
are read (a literal, relative to the file's directory, or one joined to the file's own directory: `${CMAKE_CURRENT
_SOURCE_DIR}/csrc`, `os.path.join(this_dir, "csrc")`, `Path(__file__).parent / "csrc"`); one that names another
variable, leaves the tree or is not a directory of it is left out. Nothing is run: the script is parsed."""
from __future__ import annotations

import ast
import os
import posixpath
import re
from pathlib import Path

MAX_PATHS = 64
_CMAKE_CALL = re.compile(r"\b(?:include_directories|target_include_directories)\s*\(([^)]*)\)", re.IGNORECASE)
_CMAKE_OWN_DIR = re.compile(r"\$\{(?:CMAKE_CURRENT_SOURCE_DIR|CMAKE_CURRENT_LIST_DIR)\}")
_CMAKE_ROOT_DIR = re.compile(r"\$\{(?:CMAKE_SOURCE_DIR|PROJECT_SOURCE_DIR)\}")
_CMAKE_WORDS = {"system", "before", "after", "public", "private", "interface"}
_COMMENT = re.compile(r"#[^\n]*")
_FLAG = re.compile(r"^-I\s*(.+)$")
_ROOT = "<root>"   # where CMake's ${CMAKE_SOURCE_DIR} stood: the path is relative to the tree's root


def cmake_include_dirs(text: str, where: str) -> list[str]:
    """The directories (relative to the tree's root) a CMake file's include commands name; `where` is the file's
    path relative to the root."""
    found: list[str] = []
    here = posixpath.dirname(where)
    for call in _CMAKE_CALL.finditer(_COMMENT.sub("", text)):
        words = call.group(1).split()
        if call.group(0).lower().startswith("target_"):
            words = words[1:]                                            # the target's name
        for word in words:
            word = word.strip('"')
            if word.lower() in _CMAKE_WORDS:
                continue
            word = re.sub(r"^\$<BUILD_INTERFACE:(.*)>$", r"\1", word)
            word = _CMAKE_ROOT_DIR.sub(_ROOT, _CMAKE_OWN_DIR.sub(".", word))
            if word and "$" not in word and (inside := _inside(here, word)):
                found.append(inside)
    return found


def python_include_dirs(text: str, where: str) -> list[str]:
    """The directories a setup script hands its extensions: the values of `include_dirs=` keywords (and of the names
    they read, assigned in the same file) and `-I` flags in its string lists."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    here = posixpath.dirname(where)
    assigned: dict[str, ast.expr] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            assigned.setdefault(node.targets[0].id, node.value)
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "include_dirs":
            found += [p for p in _paths(node.value, assigned, set()) if p is not None]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and (flag := _FLAG.match(node.value)):
            found.append(flag.group(1).strip())
    return [p for p in (_inside(here, f) for f in found) if p]


def existing_in_tree(candidates: list[str], root: Path) -> tuple[str, ...]:
    """The candidates that are directories of the tree, reached without leaving it (no link out), at most
    MAX_PATHS, first-named first."""
    real_root = Path(os.path.realpath(root))
    kept: list[str] = []
    for candidate in dict.fromkeys(candidates):
        path = root / candidate
        real = Path(os.path.realpath(path))
        if real.is_relative_to(real_root) and real.is_dir() and candidate not in kept:
            kept.append(candidate)
        if len(kept) >= MAX_PATHS:
            break
    return tuple(kept)


def _paths(value: ast.expr, assigned: dict[str, ast.expr], seen: set[str]) -> list[str | None]:
    """The paths an expression lists (None for an element not read)."""
    if isinstance(value, (ast.List, ast.Tuple)):
        return [p for element in value.elts for p in _paths(element, assigned, seen)]
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        return _paths(value.left, assigned, seen) + _paths(value.right, assigned, seen)
    if isinstance(value, ast.Name) and value.id in assigned and value.id not in seen:
        return _paths(assigned[value.id], assigned, seen | {value.id})
    return [_one_path(value, assigned)]


def _one_path(value: ast.expr, assigned: dict[str, ast.expr]) -> str | None:
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return value.value
    if isinstance(value, ast.Call) and _called(value) == "os.path.join" and value.args \
            and _own_dir(value.args[0], assigned):
        parts = [a.value for a in value.args[1:] if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        return posixpath.join(".", *parts) if len(parts) == len(value.args) - 1 else None
    if isinstance(value, ast.Call) and _called(value) == "str" and len(value.args) == 1:
        return _one_path(value.args[0], assigned)
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Div) and isinstance(value.right, ast.Constant) \
            and isinstance(value.right.value, str):
        base = "." if _own_dir(value.left, assigned) else _one_path(value.left, assigned)
        return posixpath.join(base, value.right.value) if base is not None else None
    return None


def _own_dir(value: ast.expr, assigned: dict[str, ast.expr], depth: int = 0) -> bool:
    """The script's own directory: `os.path.dirname(os.path.abspath(__file__))`, `Path(__file__).parent` (resolved
    or not), `os.getcwd()`/`"."`, or a name assigned one of those."""
    if depth > 4:
        return False
    if isinstance(value, ast.Name):
        return value.id in assigned and _own_dir(assigned[value.id], assigned, depth + 1)
    text = ast.unparse(value)
    return bool(re.fullmatch(r"os\.path\.dirname\((?:os\.path\.(?:abs|real)path\()?__file__\)?\)|os\.getcwd\(\)|'\.'"
                             r"|(?:pathlib\.)?Path\(__file__\)(?:\.(?:resolve|absolute)\(\))?\.parent", text))


def _called(call: ast.Call) -> str:
    return ast.unparse(call.func)


def _inside(here: str, path: str) -> str | None:
    """`path` (relative to `here`, or to the root after _ROOT) as a root-relative path, None when it is absolute
    or leaves the root."""
    if posixpath.isabs(path):
        return None
    joined = posixpath.normpath(path[len(_ROOT):].lstrip("/") or "." if path.startswith(_ROOT)
                                else posixpath.join(here or ".", path))
    return None if joined.startswith("..") or posixpath.isabs(joined) else joined
