"""A CUDA-only library the project makes an opt-in through its own build macro: grouped_gemm includes CUTLASS in
every build, but launches its CUTLASS kernel only under `#if defined(GROUPED_GEMM_CUTLASS)`, a macro setup.py
adds only when the user sets `GROUPED_GEMM_CUTLASS=1` (the default path calls cuBLAS). Such an include is port
work (fence it out of the default build), not a blocker. The signal, kept tight: the macro is one the build
defines only on an opt-in (an environment opt-in in setup.py, a Makefile `?= 0` block, the `if(X)` arm of a
CMake `option(X "..." OFF)`), the file or a file that
includes it tests the macro with `#if`/`#ifdef`, and the macro's name names the library (`USE_CUTLASS`,
`X_CUTLASS`, `WITH_CUDNN`)."""
from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Sequence
from pathlib import PurePosixPath

from auditor.types import SourceFile

TEST_LINE = re.compile(r"^[ \t]*#[ \t]*(?:if|ifdef|ifndef|elif)\b([^\n]*)", re.MULTILINE)
WORD = re.compile(r"\w+")
LOCAL_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', re.MULTILINE)
# words of a header path that name no library of their own
GENERIC = frozenset({"cuda", "nvidia", "gpu", "include", "detail", "kernel", "kernels", "device"})


def opt_in_tests(c_files: Sequence[SourceFile], text_of: Callable[[str], str],
                 macros: frozenset[str]) -> dict[str, frozenset[str]]:
    """Each C/C++ file -> the opt-in `macros` it tests with a directive, or that a file including it (by a
    quoted `#include`, followed through further includes) tests."""
    if not macros:
        return {}
    paths = {f.path for f in c_files}
    tested: dict[str, set[str]] = {}
    for path in sorted(paths):
        names = {word for line in TEST_LINE.findall(text_of(path)) for word in WORD.findall(line)} & macros
        if names:
            tested[path] = names
    queue = list(tested)
    while queue:
        path = queue.pop()
        for target in LOCAL_INCLUDE.findall(text_of(path)):
            header = _resolved(path, target, paths)
            if header is not None and not tested[path] <= tested.get(header, set()):
                tested.setdefault(header, set()).update(tested[path])
                queue.append(header)
    return {path: frozenset(names) for path, names in tested.items()}


def _resolved(including: str, target: str, paths: set[str]) -> str | None:
    """The scanned file a quoted include names: beside the including file, else the one file ending so."""
    beside = posixpath.normpath(posixpath.join(posixpath.dirname(including), target))
    if beside in paths:
        return beside
    found = [p for p in paths if p == target or p.endswith("/" + target)]
    return found[0] if len(found) == 1 else None


def library_macro(subject: str, macros: frozenset[str]) -> str | None:
    """The opt-in macro whose name names the library of an include (`cutlass/gemm/device/gemm.h` -> CUTLASS:
    `GROUPED_GEMM_CUTLASS`), else None."""
    head = PurePosixPath(subject.strip("<>\" ")).parts
    if not head:
        return None
    library = re.sub(r"\.\w+$", "", head[0]).lower()
    if library in GENERIC or not re.fullmatch(r"[a-z][a-z0-9]{2,}", library):
        return None
    return next((m for m in sorted(macros) if library in m.lower().split("_")), None)
