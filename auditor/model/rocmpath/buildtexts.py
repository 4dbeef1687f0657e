"""The build pre-pass's reads of a tree's files: each read (and each Python build script parsed) once, bounded in
size and by the pre-pass's deadline."""
from __future__ import annotations

import ast
import time
from functools import partial
from pathlib import Path

from auditor.model.rocmpath.deps import MAX_PYTHON_BUILD_CHARS
from auditor.model.rocmpath.model import ProjectBuild
from auditor.types import SourceFile
from auditor.util.boundedio import UnsafeRead, read_text_bounded
from auditor.util.purepaths import pure
from auditor.util.textmemo import by_text

MAX_BUILD_BYTES = 2 * 1024 * 1024
BUILD_NAMES = frozenset({"setup.py", "pyproject.toml", "CMakeLists.txt", "Makefile", "makefile", "GNUmakefile"})
NESTED_TOO_DEEPLY = "not read as a build script: nested too deeply"


def read_build_file(source: SourceFile) -> str | None:
    """A build file's text; None when it is not a regular file of at most MAX_BUILD_BYTES."""
    try:
        return read_text_bounded(Path(source.abspath), MAX_BUILD_BYTES, "build file")
    except (OSError, UnsafeRead):
        return None


def is_build_file(path: str) -> bool:
    name = pure(path).name
    return name in BUILD_NAMES or name.endswith((".cmake", ".mk")) or "op_builder" in pure(path).parts


class BuildTexts:
    """The tree's files read (and Python build scripts parsed) once each, bounded in size and by the deadline;
    a file that cannot be is noted in the project's `unread`."""

    def __init__(self, project: ProjectBuild, by_path: dict[str, SourceFile], deadline: float | None) -> None:
        self.project, self.by_path, self.deadline = project, by_path, deadline
        self.texts: dict[str, str] = {}
        self.trees: dict[str, ast.Module | None] = {}

    def text_of(self, path: str) -> str:
        texts, project = self.texts, self.project
        if path not in texts:
            if self.deadline is not None and time.monotonic() > self.deadline:
                texts[path] = ""
                if is_build_file(path):
                    project.unread[path] = "not read: the build pre-pass ran out of its time budget"
            else:
                text = read_build_file(self.by_path[path])
                texts[path] = text or ""
                if text is None and is_build_file(path):
                    project.unread[path] = f"not read: over {MAX_BUILD_BYTES // 2**20} MB or not a regular file"
        return texts[path]

    def parses(self, path: str) -> bool:
        """Whether tree_of(path) gives a tree (its notes taken as tree_of takes them), without parsing a text
        this process parsed before: `history` reads the same build scripts at every point."""
        if path in self.trees:
            return self.trees[path] is not None
        text = self.text_of(path)
        if len(text) > MAX_PYTHON_BUILD_CHARS:
            return self.tree_of(path) is not None
        status = by_text("parses as Python", text, partial(_parse_status, text))
        if status == "too deep":
            self.project.unread[path] = NESTED_TOO_DEEPLY
        return status == "parsed"

    def tree_of(self, path: str) -> ast.Module | None:
        """A Python build script parsed once; None (and the file noted as unread) when it cannot be."""
        trees = self.trees
        if path not in trees:
            text = self.text_of(path)
            trees[path] = None
            if len(text) > MAX_PYTHON_BUILD_CHARS:
                self.project.unread[path] = f"not read as a build script: over {MAX_PYTHON_BUILD_CHARS // 1024} KB"
            else:
                try:
                    trees[path] = ast.parse(text)
                except (SyntaxError, ValueError, MemoryError):
                    pass
                except RecursionError:
                    self.project.unread[path] = NESTED_TOO_DEEPLY
        return trees[path]


def _parse_status(text: str) -> str:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError, MemoryError):
        return "not parsed"
    except RecursionError:
        return "too deep"
    return "parsed"
