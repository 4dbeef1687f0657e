"""The lines a `--diff-base` change adds, by the scanned file's path and numbered as the scan numbers them: what
the suppression policy reads (a suppression the change adds does not silence what it adds, docs/suppressions.md)."""
from __future__ import annotations

from pathlib import Path

from auditor.parsing.sourcetext import compiler_lines
from auditor.util.boundedio import read_prefix
from auditor.util.errors import ToolError
from auditor.util.escape import visible

READ_CAP = 64 * 1024 * 1024


def lines_added(root: Path, ref: str) -> dict[str, frozenset[int] | None]:
    """Path from `root` -> the lines the working tree adds since its merge-base with `ref` (None: a file the
    change adds whole)."""
    from auditor.util import vcs

    try:
        top = vcs.toplevel(root)
        prefix = root.resolve().relative_to(top.resolve()).as_posix()
        since = vcs.changes(top, vcs.merge_base(top, ref))
    except (ValueError, vcs.GitError) as err:
        raise ToolError(f"--diff-base: {err}") from None
    out: dict[str, frozenset[int] | None] = {}
    for now, old in since.old_path.items():
        if prefix != "." and not now.startswith(prefix + "/"):
            continue
        here = visible(now if prefix == "." else now[len(prefix) + 1:])
        out[here] = None if old is None else _as_scanned(top / now, since.added_lines.get(now, frozenset()))
    return out


def _as_scanned(path: Path, lines: frozenset[int]) -> frozenset[int] | None:
    """git's line numbers as the scan's (auditor/parsing/sourcetext.py); None (all of it) when unreadable."""
    try:
        data = read_prefix(path, READ_CAP)
    except OSError:
        return None
    if b"\r" not in data:
        return lines
    return compiler_lines(data.decode("utf-8", "surrogateescape"), lines)
