"""What `fix --verify` lets a compiler read: the file and the project headers it includes, all inside the scanned
tree. Before anything is compiled, the file's `#include`s (and those of every tree header they reach) are read:
an absolute path, a path that leaves the tree (`..`, a symbolic link out of it), a computed include
(`#include MACRO`) or more headers than the bound makes the verification refuse the file, so the tree never
chooses what a compiler reads outside it (`#include "/dev/zero"` would grow without bound). A name not found in
the tree is the toolchain's (a system or CUDA/HIP header)."""
from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from types import MappingProxyType

from auditor.util.errors import ToolError

MAX_HEADERS = 2000
MAX_HEADER_BYTES = 16 * 1024 * 1024
_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*(?:include|include_next|import|embed)\b[ \t]*(.*)$', re.MULTILINE)
_HAS_INCLUDE = re.compile(rb'__has_(?:include|include_next|embed)\s*\(\s*([<"][^>"\n]*[>"])')
_NAMED = re.compile(rb'^(?:"([^"\n]*)"|<([^>\n]*)>)')


class IncludeRefused(ToolError):
    """The file reads something outside the tree, or cannot be known to stay inside it."""


def check_includes(text: str, path: Path, root: Path, include_dirs: tuple[str, ...] = (),
                   planned: Mapping[str, str] = MappingProxyType({})) -> int:
    """Raises IncludeRefused naming the first include a compile would read outside `root`; returns how many tree
    headers the file reaches. `planned`: files the run will write (root-relative path -> text), such as the
    fixer's new header in a parent directory, which count as tree files though they are not on disk yet."""
    real_root = Path(os.path.realpath(root))
    seen: set[Path] = set()
    pending: list[tuple[bytes, Path, str]] = [(text.encode("utf-8"), path.parent, path.name)]
    while pending:
        data, directory, where = pending.pop()
        for name in _names(data, where):
            if (written := _planned(name, directory, real_root, planned)) is not None:
                if written not in seen:
                    seen.add(written)
                    pending.append((planned[str(written.relative_to(real_root))].encode("utf-8"), written.parent,
                                    str(written.relative_to(real_root))))
                continue
            found = _resolve(name, directory, root, real_root, where, include_dirs)
            if found is None or found in seen:
                continue
            if len(seen) >= MAX_HEADERS:
                raise IncludeRefused(f"more than {MAX_HEADERS} tree headers are included")
            seen.add(found)
            try:
                if found.stat().st_size > MAX_HEADER_BYTES or not found.is_file():
                    raise IncludeRefused(f"{where} includes {name}, which is not a regular file of a bounded size")
                pending.append((found.read_bytes(), found.parent, str(found.relative_to(real_root))))
            except OSError as err:
                raise IncludeRefused(f"{where} includes {name}, which cannot be read ({err.strerror})") from None
    return len(seen)


def _planned(name: str, directory: Path, real_root: Path, planned: Mapping[str, str]) -> Path | None:
    """The planned file a quoted include names relative to the including file's directory, if any."""
    if not planned or PurePosixPath(name).is_absolute():
        return None
    candidate = Path(os.path.normpath(Path(os.path.realpath(directory)) / name))
    if not candidate.is_relative_to(real_root):
        return None
    return candidate if str(candidate.relative_to(real_root)) in planned else None


def _names(data: bytes, where: str) -> list[str]:
    names = []
    for match in [*_INCLUDE.finditer(data), *_HAS_INCLUDE.finditer(data)]:
        argument = match.group(1).strip()
        named = _NAMED.match(argument)
        if named is None:
            raise IncludeRefused(f"{where} has a computed include ({argument[:60].decode('utf-8', 'replace')}): "
                                 "what it reads is not known before compiling")
        names.append((named.group(1) or named.group(2)).decode("utf-8", "replace"))
    return names


def _resolve(name: str, directory: Path, root: Path, real_root: Path, where: str,
             include_dirs: tuple[str, ...] = ()) -> Path | None:
    """The tree file a compile would read for `name` (the including file's directory, the project's include paths,
    then the root), None for a toolchain header; IncludeRefused when the name points outside the tree."""
    pure = PurePosixPath(name)
    if pure.is_absolute() or name.startswith("\\") or re.match(r"^[A-Za-z]:", name):
        raise IncludeRefused(f"{where} includes an absolute path ({name}): it is outside the scanned tree")
    for base in (directory, *(root / d for d in include_dirs), root):
        candidate = base / name
        if os.path.lexists(candidate):
            real = Path(os.path.realpath(candidate))
            if not real.is_relative_to(real_root):
                raise IncludeRefused(f"{where} includes {name}, which resolves outside the scanned tree")
            return real
    if ".." in pure.parts:
        raise IncludeRefused(f"{where} includes {name}, which climbs out of its directory and is not in the tree")
    return None
