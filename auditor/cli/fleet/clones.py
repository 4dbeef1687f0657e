"""Where fleet fetches git URLs, and which cache directory it accepts.

git obeys the config of the repository it works in (`core.sshCommand`, `core.alternateRefsCommand` name commands
it runs), so a repository fleet finds on disk is never fetched into: each task makes a directory of its own
under `<cache>/fleet-clones/` (this user's, mode 0700, never a link), creates the bare repository there, and
removes it when the task ends. And the cache directory never lies inside a git checkout (the current
directory's, or a repository's the run scans): a checkout's files, `.rocm-audit-state/` among them, are its
commits' to choose."""
from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from auditor.cli.fleet.gitsource import BrokenRepository
from auditor.util.errors import ToolError

CLONES = "fleet-clones"


class UnsafeCloneDirectory(BrokenRepository):
    """`<cache>/fleet-clones` is a link or another user's: the URL's row fails, nothing is fetched."""


@contextmanager
def private_clone_dir(root: Path) -> Iterator[Path]:
    """A new, empty directory under `root` that only this process has used, removed afterwards."""
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = os.lstat(root)
    mine = not hasattr(os, "getuid") or info.st_uid == os.getuid()
    if not stat.S_ISDIR(info.st_mode) or not mine:
        raise UnsafeCloneDirectory(f"{root} is a link or not this user's directory: nothing is fetched there")
    made = Path(tempfile.mkdtemp(prefix="fetch-", dir=root))
    try:
        yield made
    finally:
        shutil.rmtree(made, ignore_errors=True)


def refuse_cache_in_checkout(cache: Path, scanned: Iterable[Path]) -> None:
    """ToolError (exit 2) when `cache` lies inside the git checkout of the current directory or of a scanned
    path."""
    where = cache.absolute().resolve()
    for start in (Path.cwd(), *scanned):
        top = checkout_top(start)
        if top is not None and where.is_relative_to(top):
            raise ToolError(f"cache directory {cache} lies inside the git checkout {top}: fleet keeps its clones "
                            "and results only outside any checkout; choose another (--cache-dir or "
                            "ROCM_AUDIT_CACHE_DIR)")


def checkout_top(start: Path) -> Path | None:
    """The work tree holding `start` (the nearest directory with a `.git`), found without running git."""
    here = start.absolute().resolve()
    for directory in (here, *here.parents):
        if (directory / ".git").exists():
            return directory
    return None
