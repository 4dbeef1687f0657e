"""Walk the paths, honour .gitignore files and excludes, classify each file by kind (auditor/match/inputs/kinds.py)."""
from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pathspec

from auditor.util.boundedio import SMALL_CAP, UnsafeRead, read_text_bounded
from auditor.util.escape import visible
from auditor.run.discover.included import included_files
from auditor.match.inputs.kinds import classify, refine
from auditor.types import SourceFile

ALWAYS_SKIPPED_DIRS = {".git", ".hg", ".svn", "__pycache__", "node_modules", ".tox", ".nox", ".mypy_cache",
                       ".pytest_cache", ".ruff_cache", ".venv", "venv", ".eggs", "site-packages"}
OTHER_VCS_DIRS = frozenset({".hg", ".svn"})   # skipped as another tool's data only while git does not track them
# Vendored copies of other projects (CUTLASS in third_party/, …): their own code is not the scanned
# project's porting work, and the project's use of them is found in its own includes and imports.
VENDORED_DIRS = {"third_party", "third-party", "thirdparty", "3rdparty", "vendor", "vendored",
                 # libraries commonly checked in as submodules (sdists carry no .gitmodules)
                 "cutlass", "cccl", "cub", "thrust", "libcudacxx", "composable_kernel", "googletest",
                 "pybind11", "eigen", "spdlog", "fmt"}


@dataclass(frozen=True, slots=True)
class Discovery:
    files: tuple[SourceFile, ...]
    errors: tuple[tuple[str, str], ...]
    root: str
    vendored: tuple[str, ...] = ()     # directories skipped as vendored code


def _spec(lines: Sequence[str]) -> pathspec.PathSpec:
    return pathspec.GitIgnoreSpec.from_lines(lines)


def _read_ignore(path: Path) -> list[str]:
    try:
        return read_text_bounded(path, SMALL_CAP, ".gitignore").splitlines()
    except (OSError, UnsafeRead):
        return []


def common_root(paths: Sequence[Path]) -> Path:
    """The directory holding every path, found before links are followed and then resolved: a named file that is
    a link (`git diff --name-only | xargs rocm-audit check` lists a committed one) does not widen the scanned tree
    to where it points; discover() refuses it instead."""
    dirs = []
    for path in paths:
        absolute = Path(os.path.normpath(path.absolute()))
        dirs.append(absolute if absolute.is_dir() else absolute.parent)
    return Path(os.path.commonpath([str(d) for d in dirs])).resolve() if dirs else Path.cwd()


def leaves_tree(path: Path, root: Path) -> bool:
    """Whether a named path leads out of the scanned root through a link (its real location is outside)."""
    try:
        return not path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):   # a link loop
        return True


def discover(
    paths: Sequence[Path],
    root: Path,
    excludes: Sequence[str] = (),
    force_exclude: bool = False,
    use_gitignore: bool = True,
    include_vendored: bool = False,
    scan_dirs: Sequence[str] = (),
) -> Discovery:
    """`scan_dirs`: directories (from root) walked although their names say vendored or always skipped (new
    in the change under --diff-base: auditor/run/gate/failclosed/vendoring.py)."""
    exclude_spec = _spec(list(excludes))
    found: dict[str, SourceFile] = {}
    errors: list[tuple[str, str]] = []
    vendored: list[str] = []
    skip_dirs = set() if include_vendored else _submodule_dirs(root)
    tracked_under_root: list[frozenset[str] | None] = []     # read once, the first time a file needs it
    unclaimed: dict[str, str] = {}     # regular files no kind claims by name: read when a C file includes them
    for given in paths:
        absolute = given.absolute()
        if absolute.is_symlink() and not absolute.exists():
            errors.append((_relative(absolute, root), "dangling symbolic link"))
            continue
        if leaves_tree(absolute, root):
            errors.append((visible(_relative(absolute, root)),
                           "not read: a symbolic link leads out of the scanned tree"))
            continue
        if absolute.is_dir():
            walk = _walk(absolute, root, exclude_spec, use_gitignore, errors,
                         None if include_vendored else (skip_dirs, vendored),
                         _tracked(absolute) if use_gitignore else None, frozenset(scan_dirs), unclaimed)
            for source in walk:
                found.setdefault(source.path, source)
        elif absolute.exists():
            relative = _relative(absolute, root)
            if not absolute.is_file():   # a FIFO would block the scan, a device would never end
                errors.append((visible(relative), "not read: not a regular file or directory"))
                continue
            if force_exclude and (exclude_spec.match_file(relative)
                                  or (use_gitignore and _ignored_by_git(absolute, root)
                                      and not _is_tracked(relative, root, tracked_under_root))):
                continue
            kind = refine(classify(relative), absolute)
            if kind:
                found.setdefault(visible(relative), SourceFile(visible(relative), str(absolute), kind))
    for source in included_files(tuple(found.values()), unclaimed):
        found.setdefault(source.path, source)
    return Discovery(
        tuple(sorted(found.values(), key=lambda s: s.path)), tuple(errors), str(root), tuple(sorted(vendored))
    )


def _submodule_dirs(root: Path) -> set[str]:
    """Paths of git submodules: in a git repository the gitlinks git records (a `.gitmodules` that names an
    ordinary directory hides nothing), else `.gitmodules` read as text (never run through git)."""
    if _in_git(root):
        from auditor.util.vcs import submodule_paths

        recorded = submodule_paths(root)
        if recorded is not None:
            return {p.strip("/") for p in recorded}
    try:
        text = read_text_bounded(root / ".gitmodules", SMALL_CAP, ".gitmodules")
    except (OSError, UnsafeRead):
        return set()
    found = set()
    for line in text.splitlines():   # line by line: linear however the file is made
        key, equals, value = line.partition("=")
        if equals and key.strip() == "path" and value.strip():
            found.add(value.strip().strip("/"))
    return found


def _in_git(directory: Path) -> bool:
    from auditor.config import project_root

    return project_root(directory) is not None


def _tracked(top: Path) -> frozenset[str] | None:
    """Files git tracks under `top` (relative to it): .gitignore does not hide them (a repository may ignore
    `*.cuh` and still commit some). None outside a git repository or without git."""
    if not _in_git(top):
        return None
    from auditor.util.vcs import tracked_files

    files = tracked_files(top)
    return frozenset(files) if files is not None else None


def _is_tracked(relative: str, root: Path, memo: list[frozenset[str] | None]) -> bool:
    """Whether git tracks this file (relative to root): a staged file that .gitignore matches is still the
    repository's code, so the pre-commit hook's --force-exclude must not drop it."""
    if not memo:
        memo.append(_tracked(root))
    return memo[0] is not None and relative in memo[0]


def _relative(path: Path, root: Path) -> str:
    try:
        if path.is_symlink():   # the link's own place, not where it points
            return (path.absolute().parent.resolve() / path.name).relative_to(root.resolve()).as_posix()
        return path.resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, OSError, RuntimeError):
        return path.as_posix()


def _ignored_by_git(path: Path, root: Path) -> bool:
    specs: list[tuple[Path, pathspec.PathSpec]] = []
    current = root
    rel_parts = path.relative_to(root).parts if path.is_relative_to(root) else ()
    for part in ("",) + tuple(rel_parts[:-1]):
        current = current / part if part else current
        ignore = current / ".gitignore"
        if ignore.is_file():
            specs.append((current, _spec(_read_ignore(ignore))))
    return any(spec.match_file(path.relative_to(base).as_posix()) for base, spec in specs)


def _walk(
    top: Path,
    root: Path,
    exclude_spec: pathspec.PathSpec,
    use_gitignore: bool,
    errors: list[tuple[str, str]],
    vendoring: tuple[set[str], list[str]] | None = None,
    tracked: frozenset[str] | None = None,
    scan_dirs: frozenset[str] = frozenset(),
    unclaimed: dict[str, str] | None = None,
) -> Iterator[SourceFile]:
    """`tracked`: paths (relative to `top`) git tracks; .gitignore never hides them, nor a directory holding one.
    `unclaimed` gets the regular files no kind claims by name (path -> absolute path)."""
    tracked_dirs = {"/".join(p.split("/")[:n]) for p in tracked for n in range(1, p.count("/") + 1)} \
        if tracked else set()
    top_relative = _relative(top, root)

    def in_top(relative: str) -> str:
        return relative if top_relative == "." else relative[len(top_relative) + 1:]

    inherited = _gitignores_above(top, root) if use_gitignore else []
    # (directory, its path relative to root, the gitignore specs that apply: (base dir, spec))
    stack: list[tuple[Path, str, list[tuple[Path, pathspec.PathSpec]]]] = [(top, _relative(top, root), inherited)]
    while stack:
        directory, directory_relative, specs = stack.pop()
        if use_gitignore and (directory / ".gitignore").is_file():
            specs = specs + [(directory, _spec(_read_ignore(directory / ".gitignore")))]
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as err:
            errors.append((directory_relative, f"cannot list directory: {err.strerror or err}"))
            continue
        subdirs = []
        for entry in entries:
            path = Path(entry.path)
            # links are skipped below, so the path needs no resolving: its directory's relative path and its name
            relative = entry.name if directory_relative == "." else f"{directory_relative}/{entry.name}"
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                is_link = entry.is_symlink()
            except OSError:
                continue
            if is_link:
                continue  # never follow links: they may leave the root or loop
            kept = tracked is not None and (in_top(relative) in (tracked_dirs if is_dir else tracked))
            if _excluded(path, relative, is_dir, exclude_spec, () if kept else specs):
                continue
            if is_dir:
                if descends_into(entry.name, path, relative, vendoring, scan_dirs, tracked=kept):
                    subdirs.append((path, relative))
            elif (source := _source_file(entry, path, relative, errors)) is not None:
                yield source
            elif unclaimed is not None and classify(relative) is None and entry.is_file(follow_symlinks=False):
                unclaimed[visible(relative)] = str(path)
        stack.extend((d, relative, specs) for d, relative in reversed(subdirs))


def _gitignores_above(top: Path, root: Path) -> list[tuple[Path, pathspec.PathSpec]]:
    """The .gitignore files of the directories from `root` down to `top`'s parent: (base dir, spec), outermost
    first."""
    inherited: list[tuple[Path, pathspec.PathSpec]] = []
    for parent in reversed([top, *top.parents]):
        if parent != top and not parent.is_relative_to(root):
            continue
        ignore = parent / ".gitignore"
        if parent != top and ignore.is_file():
            inherited.append((parent, _spec(_read_ignore(ignore))))
    return inherited


def descends_into(name: str, path: Path, relative: str, vendoring: tuple[set[str], list[str]] | None,
                   scan_dirs: frozenset[str], tracked: bool = False) -> bool:
    """Whether the walk enters a directory: never one always skipped (caches, .git) or vendored code (which it
    records in `vendoring[1]`), unless the user names it in `scan_dirs`. `tracked`: git tracks files under it;
    another version control system's directory is then the repository's code (a change can create one)."""
    forced = relative in scan_dirs or (tracked and name in OTHER_VCS_DIRS)
    if name in ALWAYS_SKIPPED_DIRS and not forced:
        return False
    if vendoring is not None and not forced and (
        name in VENDORED_DIRS or relative in vendoring[0] or (path / ".git").exists()
    ):
        vendoring[1].append(relative)
        return False
    return True


def _source_file(entry: os.DirEntry, path: Path, relative: str, errors: list[tuple[str, str]]) -> SourceFile | None:
    """A regular file of a kind rocm-audit scans, or None."""
    kind = classify(relative)
    if kind is None:
        return None
    try:
        mode = entry.stat(follow_symlinks=False).st_mode
    except OSError as err:
        errors.append((relative, f"cannot stat: {err.strerror or err}"))
        return None
    if not stat.S_ISREG(mode):
        return None
    kind = refine(kind, path)
    if kind is None:
        return None
    return SourceFile(visible(relative), str(path), kind)


def _excluded(path: Path, relative: str, is_dir: bool, exclude_spec, specs) -> bool:
    suffix = "/" if is_dir else ""
    if exclude_spec.match_file(relative + suffix):
        return True
    for base, spec in specs:
        try:
            inner = path.relative_to(base).as_posix()
        except ValueError:
            continue
        if spec.match_file(inner + suffix):
            return True
    return False
