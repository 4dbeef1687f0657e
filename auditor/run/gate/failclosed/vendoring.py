"""Every gate mode (run/gate/changeset.py gives the change): a pull request chooses its directory names, so a
vendored-looking name (`src/vendor/`, `csrc/cutlass/`, `venv/`, `site-packages/`) hides nothing it adds. A
directory that is skipped as vendored (or always skipped) and did not exist at the base, nor was named by the
base's `.gitmodules`, is scanned when the change adds files under it or moves files into it. One that the base
already had stays vendored; a note says so when the change adds files there."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from auditor.run.gate.changeset import Change
from auditor.util import vcs
from auditor.run.discover.files import ALWAYS_SKIPPED_DIRS, VENDORED_DIRS

NOT_CODE_DIRS = frozenset({".git", ".hg", ".svn"})   # version-control data: never anybody's code
MAX_NOTES = 5


@dataclass(frozen=True, slots=True)
class VendoredInChange:
    scanned: frozenset[str]          # directories (from the scanned root) walked although named like vendored code
    notes: tuple[str, ...]           # new files under a directory the base already vendored


def _looks_vendored(name: str) -> bool:
    return name in VENDORED_DIRS or (name in ALWAYS_SKIPPED_DIRS and name not in NOT_CODE_DIRS)


def new_vendored_dirs(change: Change) -> VendoredInChange:
    """Empty without a git base, or when git cannot answer: the gate reports what is wrong with the ref."""
    if change.top is None or change.base is None:
        return VendoredInChange(frozenset(), ())
    top, base = change.top, change.base
    try:
        tracked = set(vcs.tracked_files(top) or ())
        # added, copied or renamed here: a file moved into a new vendored-looking directory is the change's too
        arrived = [p for p, old in change.old_path.items() if p in tracked and old != p]
        candidates = {d for p in arrived for d in _vendored_ancestors(p)}
        at_base = vcs.existing(top, base, sorted(candidates)) | _base_submodules(top, base)
    except vcs.GitError:
        return VendoredInChange(frozenset(), ())
    scanned: set[str] = set()
    notes: dict[str, str] = {}
    for path in arrived:
        for directory in _vendored_ancestors(path):
            if directory in at_base:
                notes.setdefault(directory, f"{change.local(directory)}: new files in this change are skipped as "
                                            "vendored code (the base already had this directory; "
                                            "--include-vendored scans it)")
                break
            scanned.add(directory)
    shown = {change.local(d) for d in scanned}
    return VendoredInChange(frozenset(d for d in shown if d is not None),
                            tuple(n for d, n in sorted(notes.items()) if change.local(d) is not None)[:MAX_NOTES])


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
