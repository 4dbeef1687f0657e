"""A ceiling on the memory of each process that scans files (the pool's workers, the per-file children of
isolate.py): one file whose parse needs gigabytes (a 15 MB list literal is millions of AST nodes) is then a file
that could not be scanned, reported as such, instead of a machine that swaps or a worker the kernel kills.

The ceiling is the soft RLIMIT_DATA of the process (its heap and private mappings; RLIMIT_AS where the platform
has no DATA limit), set in the process after it is forked, never in the process the user started."""
from __future__ import annotations

import os

GIB = 1024 ** 3
MIN_DEFAULT = 1 * GIB
MAX_DEFAULT = 4 * GIB
SHARE_OF_MEMORY = 0.75    # of the machine's memory, shared by the scanning processes


def default_limit(jobs: int) -> int:
    """Each of `jobs` processes gets an equal share of most of the machine's memory, within 1-4 GiB."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return MAX_DEFAULT // 2
    return int(min(MAX_DEFAULT, max(MIN_DEFAULT, total * SHARE_OF_MEMORY / max(1, jobs))))


def limit_this_process(limit: int) -> None:
    """Lower this process's data limit to `limit` bytes (never raise one already lower); 0: leave it."""
    if limit <= 0:
        return
    try:
        import resource
    except ImportError:     # not on this platform: no ceiling
        return
    which = getattr(resource, "RLIMIT_DATA", None)
    if which is None:
        which = resource.RLIMIT_AS
    soft, hard = resource.getrlimit(which)
    wanted = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
    if soft != resource.RLIM_INFINITY and soft <= wanted:
        return
    try:
        resource.setrlimit(which, (wanted, hard))
    except (ValueError, OSError):
        return


def over_memory() -> str:
    """Why a file whose scan ran out of memory was not scanned."""
    limit = _current_limit()
    if limit is None:
        return "not scanned: out of memory"
    return (f"not scanned: it needed more than the {limit / GIB:.1f} GiB memory limit of a scanning process "
            f"(--max-worker-memory)")


def _current_limit() -> int | None:
    try:
        import resource
    except ImportError:
        return None
    soft, _ = resource.getrlimit(getattr(resource, "RLIMIT_DATA", resource.RLIMIT_AS))
    return None if soft == resource.RLIM_INFINITY else soft
