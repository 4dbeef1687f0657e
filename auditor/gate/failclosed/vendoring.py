"""`--diff-base`: a pull request chooses its directory names, so a vendored-looking name (`src/vendor/`,
`csrc/cutlass/`, `venv/`, `site-packages/`) hides nothing it adds. A directory that is skipped as vendored
(or always skipped) and did not exist at the base, nor was named by the base's `.gitmodules`, is scanned
when the change adds files under it. One that the base already had stays vendored; a note says so when the
change adds files there."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from auditor.util import vcs
from auditor.discover.files import ALWAYS_SKIPPED_DIRS, VENDORED_DIRS

NOT_CODE_DIRS = frozenset({".git", ".hg", ".svn"})   # version-control data: never anybody's code
MAX_NOTES = 5


@dataclass(frozen=True, slots=True)
class VendoredInChange:
    scanned: frozenset[str]          # directories (from the scanned root) walked although named like vendored code
    notes: tuple[str, ...]           # new files under a directory the base already vendored


def _looks_vendored(name: str) -> bool:
    return name in VENDORED_DIRS or (name in ALWAYS_SKIPPED_DIRS and name not in NOT_CODE_DIRS)


def new_vendored_dirs(root: Path, ref: str) -> VendoredInChange:
    """Empty when git cannot answer: the gate reports what is wrong with the ref."""
    try:
        top = vcs.toplevel(root)
        prefix = root.resolve().relative_to(top.resolve()).as_posix()
        base = vcs.merge_base(top, ref)
        tracked = set(vcs.tracked_files(top) or ())
        added = [p for p, old in vcs.changes(top, base).old_path.items() if old is None and p in tracked]
        candidates = {d for p in added for d in _vendored_ancestors(p)}
        at_base = vcs.existing(top, base, sorted(candidates)) | _base_submodules(top, base)
    except (ValueError, vcs.GitError):
        return VendoredInChange(frozenset(), ())
    scanned: set[str] = set()
    notes: dict[str, str] = {}
    for path in added:
        for directory in _vendored_ancestors(path):
            if directory in at_base:
                notes.setdefault(directory, f"{_local(directory, prefix)}: new files in this change are skipped as "
                                            "vendored code (the base already had this directory; "
                                            "--include-vendored scans it)")
                break
            scanned.add(directory)
    shown = {_local(d, prefix) for d in scanned}
    return VendoredInChange(frozenset(d for d in shown if d is not None),
                            tuple(n for d, n in sorted(notes.items()) if _local(d, prefix) is not None)[:MAX_NOTES])


def _vendored_ancestors(path: str) -> list[str]:
    """The directories above `path` (from the repository root) that discovery skips by their name, outermost
    first."""
    parts = PurePosixPath(path).parts[:-1]
    return ["/".join(parts[:n + 1]) for n, name in enumerate(parts) if _looks_vendored(name)]


def _base_submodules(top: Path, base: str) -> set[str]:
    data = vcs.blobs(top, base, [".gitmodules"], 1024 * 1024).get(".gitmodules", b"")
    found = set()
    for line in data.decode("utf-8", "replace").splitlines():
        key, equals, value = line.partition("=")
        if equals and key.strip() == "path" and value.strip():
            found.add(value.strip().strip("/"))
    return found


def _local(path: str, prefix: str) -> str | None:
    if prefix == ".":
        return path
    return path[len(prefix) + 1:] if path.startswith(prefix + "/") else None
