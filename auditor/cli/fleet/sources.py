"""SOURCES on the command line into the repositories of a fleet: local paths, list files (one path or git URL a
line, `#` comments), parent directories whose subdirectories are repositories, and git URLs."""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from auditor.util.errors import ToolError

URL = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|[\w.-]+@[\w.-]+:)", re.IGNORECASE)   # scheme://… or git@host:path
COMMENT = re.compile(r"(?:^|\s)#.*$")   # a `#` at the start or after a space (a URL may hold `#`)
NAME_CHARS = re.compile(r"[^A-Za-z0-9._-]+")
# a directory holding one of these at its top is a repository itself, not a folder of repositories
PROJECT_FILES = ("setup.py", "pyproject.toml", "setup.cfg", "CMakeLists.txt", "requirements.txt", "Makefile",
                 "BUILD", "WORKSPACE", "meta.yaml", "environment.yml", "Dockerfile")
PROJECT_SUFFIXES = (".py", ".cu", ".cuh", ".cpp", ".cc", ".c", ".h", ".hpp")
# kinds of source that are rows without a scan, and why
UNSCANNED = {"missing": "path does not exist (or is not a directory)",
             "outside": "a link that leads out of the folder given: not followed"}
MAX_LIST_LINES = 100_000
MAX_LIST_BYTES = 16 * 1024 * 1024


class SourceError(ToolError, ValueError):
    """A SOURCES argument that cannot be read at all (an unreadable list file): exit 2."""


@dataclass(frozen=True, slots=True)
class Source:
    name: str          # unique in the fleet; the report's file name (reports/NAME.json)
    location: str      # the path (absolute) or the URL
    kind: str          # "path" | "git" | a key of UNSCANNED


def expand(arguments: Sequence[str]) -> tuple[Source, ...]:
    """Every repository the arguments name, in order, each once, with unique names."""
    found: list[tuple[str, str]] = []   # (kind, location)
    for argument in arguments:
        found.extend(_expand_one(argument, Path.cwd()))
    unique = list(dict.fromkeys(found))
    taken: set[str] = set()
    out = []
    for kind, location in unique:
        base = name = display_name(location) or "repository"
        number = 1
        while name.lower() in taken:   # lower: two names must not share a report file on a case-blind disk
            number += 1
            name = f"{base}-{number}"
        taken.add(name.lower())
        out.append(Source(name, location, kind))
    return tuple(out)


def display_name(location: str) -> str:
    """`https://host/org/flash-attention.git` -> `flash-attention`; `/src/vllm/` -> `vllm`; safe as a file name."""
    tail = location.rstrip("/").replace(":", "/").rsplit("/", 1)[-1]
    tail = tail.removesuffix(".git") if is_url(location) else tail
    return NAME_CHARS.sub("_", tail).strip("._")[:80]


def is_url(text: str) -> bool:
    return bool(URL.match(text))


def _expand_one(argument: str, base: Path) -> Iterable[tuple[str, str]]:
    if is_url(argument):
        return [("git", argument)]
    path = (base / argument).absolute()
    if path.is_file():
        if path.suffix in PROJECT_SUFFIXES or path.name in PROJECT_FILES:
            raise SourceError(f"{argument}: fleet takes repositories or a list of them, not a source file "
                              "(rocm-audit check scans files)")
        return [item for line in _list_lines(path) for item in _expand_listed(line, path.parent)]
    if not path.is_dir():
        return [("missing", str(path))]
    if _is_repository(path):
        return [("path", str(path))]
    children = sorted(p for p in path.iterdir() if p.is_dir() and not p.name.startswith("."))
    return [(_child_kind(child, path), str(child.absolute())) for child in children] or [("path", str(path))]


def _child_kind(child: Path, folder: Path) -> str:
    """A subdirectory of a folder of repositories is scanned only when it lies in that folder: a link to a
    directory elsewhere (a home directory, a secret) is not followed, and its row says so."""
    return "path" if child.resolve().is_relative_to(folder.resolve()) else "outside"


def _expand_listed(line: str, base: Path) -> Iterable[tuple[str, str]]:
    """A line of a list file: a URL, or a path relative to the list file (never another list file)."""
    if is_url(line):
        return [("git", line)]
    path = (base / line).absolute()
    return [("path" if path.is_dir() else "missing", str(path))]


def _list_lines(path: Path) -> list[str]:
    try:
        if path.stat().st_size > MAX_LIST_BYTES:
            raise SourceError(f"{path}: a list of repositories larger than {MAX_LIST_BYTES // 2**20} MiB")
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as err:
        raise SourceError(f"{path}: {err.strerror or err}") from None
    lines = [COMMENT.sub("", line).strip() for line in text.splitlines()[:MAX_LIST_LINES]]
    return [line for line in lines if line]


def _is_repository(path: Path) -> bool:
    """A repository (or a plain project tree such as an unpacked sdist), rather than a folder of them."""
    if (path / ".git").exists():
        return True
    try:
        return any(entry.is_file() and (entry.name in PROJECT_FILES or entry.suffix in PROJECT_SUFFIXES)
                   for entry in path.iterdir())
    except OSError:
        return True   # scanning it reports why it cannot be read
