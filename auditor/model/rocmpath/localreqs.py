"""Nested components that are part of the main path, not separate distributions: those the root's own
requirements install by path, and nested C/C++ builds whose sources the root's setup.py compiles."""
from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable
from pathlib import PurePosixPath

# root requirement files a user installs with the project (not the dev/test/docs sets)
ROOT_REQUIREMENTS = re.compile(r"^requirements(?:[-_.](?:base|main|install|runtime|core))?\.txt$", re.IGNORECASE)
EDITABLE = re.compile(r"^(?:-e|--editable)(?:\s+|=)")
FILE_URL = re.compile(r"@\s*file:(?://)?(\S+)")


def installed_by_path(paths: Iterable[str], text_of: Callable[[str], str], components: Iterable[str]) -> set[str]:
    """Components (directories with their own setup.py/pyproject.toml) that a root requirements file lists by
    path (Pointnet2_PyTorch: `./pointnet2_ops_lib/.` in requirements.txt): the root package imports them, so a
    port of the project is a port of them too."""
    wanted = set(components) - {"."}
    found: set[str] = set()
    for path in paths:
        if "/" in path or not ROOT_REQUIREMENTS.match(path):
            continue
        for raw in text_of(path).splitlines():
            line = EDITABLE.sub("", raw.split(" #")[0].strip())
            url = FILE_URL.search(line)
            target = url.group(1) if url else line
            if not target.startswith((".", "/")) and not url:
                continue
            target = re.sub(r"(?:/\.)+$|/+$", "", target.removeprefix("./").split("[")[0])
            if target in wanted:
                found.add(target)
    return found


COMPILED_SUFFIXES = frozenset({".cu", ".cpp", ".cc", ".cxx", ".c", ".hip"})


def compiled_by_setup(setup: ast.Module | None, components: Iterable[str]) -> set[str]:
    """Components (a nested CMakeLists.txt with its own `project()`, a Makefile) whose sources the root setup.py
    names in its extensions (EETQ: `"csrc/cutlass_kernels/fpA_intB_gemm.cu"` under csrc/, which has a CMake
    project of its own): the default install compiles them, so they are the main path, not a separate build."""
    if setup is None:
        return set()
    wanted = set(components) - {"."}
    found: set[str] = set()
    for node in ast.walk(setup):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)) or len(node.value) > 400:
            continue
        path = PurePosixPath(node.value.removeprefix("./"))
        if path.suffix not in COMPILED_SUFFIXES and "*" not in path.name:
            continue
        found |= {comp for comp in wanted if str(path).startswith(comp + "/")}
    return found
