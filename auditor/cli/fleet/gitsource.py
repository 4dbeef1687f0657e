"""What git says about a fleet's repositories, through auditor/util/vcs.py's neutralised invocation (no hooks,
filters or fsmonitor of the repository run): the commit a local repository is scanned at and the key its runs
are recorded under; and a git URL fetched shallow into a bare repository of its own and read from git objects."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from auditor.util.errors import AuditorError
from auditor.cli.fleet.sources import display_name
from auditor.util.gittree import count_files
from auditor.util.vcs import GitError, base_tree, git, git_bytes, tree_paths

# fetch and clone may use these transports; every other (ext::, which runs a command, among them) stays off
TRANSPORTS = ("https", "http", "ssh", "git", "file")


class BrokenRepository(AuditorError):
    """A `.git` that git cannot read, or a URL that cannot be fetched: the repository's row says why."""


def head_commit(path: Path) -> str | None:
    """The commit HEAD names in the repository at `path`; None outside git (a plain tree, an unpacked sdist)."""
    if not (path / ".git").exists():
        inside = git(path, "rev-parse", "--is-inside-work-tree", check=False).strip() == "true"
        if not inside:
            return None
    try:
        return git(path, "rev-parse", "--verify", "--end-of-options", "HEAD^{commit}").strip() or None
    except GitError as err:
        raise BrokenRepository(f"git cannot read this repository: {_cause(err)}") from None


def repo_key(path: Path, commit: str | None) -> str:
    """What a repository's runs are recorded under: its first commit and where in the repository the scan
    starts (a fork keeps the key; two projects of one monorepo do not share it); a plain tree: its path."""
    if commit is None:
        return f"path:{path.resolve()}"
    roots = git(path, "rev-list", "--max-parents=0", "--end-of-options", commit, check=False).split()
    top = git(path, "rev-parse", "--show-toplevel", check=False).strip()
    inner = path.resolve().relative_to(Path(top).resolve()).as_posix() if top else "."
    return f"git:{min(roots) if roots else commit}:{inner}"


def url_key(url: str) -> str:
    return f"url:{url}"


def fetch_shallow(url: str, into: Path) -> tuple[Path, str]:
    """A bare repository made in the new, empty directory `into` (cli/fleet/clones.py) with `url`'s default branch's
    newest commit fetched (depth 1, no tags, no checkout), and that commit."""
    bare = into / f"{display_name(url) or 'repository'}.git"
    allow = [arg for name in TRANSPORTS for arg in ("-c", f"protocol.{name}.allow=always")]
    try:
        git(into, "init", "--quiet", "--bare", "--", str(bare))
        git_bytes(bare, *allow, "fetch", "--quiet", "--depth", "1", "--no-tags", "--no-recurse-submodules",
                  "--end-of-options", url, "HEAD")
        commit = git(bare, "rev-parse", "--verify", "--end-of-options", "FETCH_HEAD^{commit}").strip()
    except GitError as err:
        raise BrokenRepository(f"cannot fetch {url}: {_cause(err)}") from None
    return bare, commit


@contextmanager
def tree_of(bare: Path, commit: str, max_bytes: int) -> Iterator[Path]:
    """The files of `commit`, read with `git cat-file --batch` into a private temporary directory (links,
    submodules and files over `max_bytes` left out), removed afterwards: every path of the tree, byte-identical
    copies included, as a checkout holds them. A tree listing more files than a tree may is refused first."""
    count_files(bare, commit)
    with base_tree(bare, commit, tree_paths(bare, commit), max_bytes) as where:
        yield where


def _cause(err: GitError) -> str:
    """GitError's `git ARG: cause` without the first argument (here often a `-c` override)."""
    return str(err).split(": ", 1)[-1]
