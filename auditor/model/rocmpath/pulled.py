"""CMake files of vendored directories the tree's own CMake `add_subdirectory()`s: their sources are another
project's (not scanned), but the build a user runs includes them (llama-cpp-python builds vendor/llama.cpp).

The directory a build file names is the tree's choice: each target is normalised and must stay inside the scanned
root (`add_subdirectory(third_party/../../..)` names nothing), a link is never followed (`third_party/x -> /`),
and the walk is capped in files, entries and depth."""
from __future__ import annotations

import os
import posixpath
import re
import stat
import time
from collections.abc import Sequence
from pathlib import Path

from auditor.util.escape import visible
from auditor.model.rocmpath.provenance import parent_dir
from auditor.model.rocmpath.buildtexts import read_build_file
from auditor.types import SourceFile
from auditor.util.purepaths import pure

MAX_PULLED_BUILD_FILES = 400
MAX_WALK_ENTRIES = 20_000       # directory entries looked at, over all targets
MAX_WALK_DEPTH = 12
ADD_SUBDIRECTORY = re.compile(r"add_subdirectory\s*\(\s*\"?([^\s)\"$]+)")


def inside_target(directory: str, target: str) -> str | None:
    """`target` (as a build file in `directory` names it) relative to the root, or None when it leaves the root."""
    if target.startswith(("/", "~")) or "\\" in target:
        return None
    joined = posixpath.normpath(posixpath.join(directory, target))
    return None if joined == ".." or joined.startswith("../") or joined.startswith("/") else joined


def pulled_in_build_files(files: Sequence[SourceFile], root: Path, vendored: Sequence[str],
                          deadline: float | None = None) -> list[SourceFile]:
    """`deadline`: a time.monotonic() after which nothing more is looked at."""
    if not vendored:
        return []
    targets: set[str] = set()
    for f in files:
        if pure(f.path).name == "CMakeLists.txt":
            for target in ADD_SUBDIRECTORY.findall(read_build_file(f) or ""):
                path = inside_target(parent_dir(f.path), target)
                if path and any(path == v or path.startswith(v + "/") for v in vendored):
                    targets.add(path)
    out: list[SourceFile] = []
    budget = [MAX_WALK_ENTRIES]
    real_root = root.resolve()
    for target in sorted(targets):
        base = root / target
        try:
            if base.is_symlink() or not base.resolve().is_relative_to(real_root) or not base.is_dir():
                continue
        except (OSError, RuntimeError):
            continue
        _walk(base, target, out, budget, deadline)
        if len(out) >= MAX_PULLED_BUILD_FILES or budget[0] <= 0:
            break
    return sorted(out, key=lambda s: s.path)[:MAX_PULLED_BUILD_FILES]


def _walk(base: Path, relative: str, out: list[SourceFile], budget: list[int], deadline: float | None) -> None:
    """CMake files under `base`, depth first, never through a link, within the budget of entries."""
    stack = [(base, relative, 0)]
    while stack:
        directory, shown, depth = stack.pop()
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            budget[0] -= 1
            if budget[0] <= 0 or len(out) >= MAX_PULLED_BUILD_FILES \
                    or (deadline is not None and time.monotonic() > deadline):
                return
            try:
                mode = entry.stat(follow_symlinks=False).st_mode
            except OSError:
                continue
            path = f"{shown}/{entry.name}"
            if stat.S_ISDIR(mode) and depth < MAX_WALK_DEPTH:
                stack.append((Path(entry.path), path, depth + 1))
            elif stat.S_ISREG(mode) and (entry.name == "CMakeLists.txt" or entry.name.endswith(".cmake")):
                out.append(SourceFile(visible(path), entry.path, "build"))
