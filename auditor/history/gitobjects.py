"""Past states of a repository read straight from git objects (`git ls-tree`, `git cat-file --batch`), never
checked out: no filter, hook or fsmonitor of the scanned repository runs (auditor/util/vcs.py's neutralised git).
A commit's tree is written into a private temporary directory, kept across commits and changed only where
the blobs differ, so the content-keyed result cache (auditor/run/runner/cache.py) rescans only what changed."""
from __future__ import annotations

import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from auditor.util import vcs
from auditor.util.gittree import MAX_TREE_BYTES, TreeTooLarge, count_files
REGULAR_MODES = (b"100644", b"100755")
GITLINK_MODE = b"160000"
BATCH_BYTES = 64 * 1024 * 1024        # blobs read per `cat-file --batch` call, at most (vcs caps one answer)
# Every file written gets this old modification time: the per-file index (auditor/run/runner/runcache.py) distrusts the
# stat of a file modified seconds ago, and would read and hash every file of every point again. A rewritten
# file still differs in its change time and inode, which the index compares too.
WRITTEN_MTIME_NS = 946_684_800 * 10**9   # 2000-01-01


@dataclass(frozen=True, slots=True)
class Commit:
    id: str
    committed_at: str                 # ISO 8601, UTC
    author: str
    subject: str


@dataclass(frozen=True, slots=True)
class Blob:
    oid: str
    size: int


def repo_key(top: Path) -> str:
    """What identifies the repository across clones: its first root commit; in a shallow clone (whose root is not
    here) the remote's URL, else the oldest commit present."""
    if is_shallow(top):
        remote = vcs.git(top, "config", "--get", "remote.origin.url", check=False).strip()
        if remote:
            return remote
    roots = vcs.git(top, "rev-list", "--max-parents=0", "HEAD", check=False).split()
    return sorted(roots)[0] if roots else ""


def is_shallow(top: Path) -> bool:
    return vcs.git(top, "rev-parse", "--is-shallow-repository", check=False).strip() == "true"


def resolve(top: Path, rev: str) -> str:
    found = vcs.git(top, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}",
                    check=False).strip()
    if not found:
        raise vcs.GitError(f"{rev}: no such commit here")
    return found


def first_parent(top: Path, until: str) -> list[Commit]:
    """The first-parent history of `until`, oldest first."""
    return _commits(vcs.git(top, "log", "--first-parent", "--reverse", "--no-show-signature", "-z",
                            f"--format={LOG_FORMAT}", "--end-of-options", until, "--"))


def commit_info(top: Path, rev: str) -> Commit:
    found = _commits(vcs.git(top, "log", "-1", "--no-show-signature", "-z", f"--format={LOG_FORMAT}",
                             "--end-of-options", rev, "--"))
    if len(found) != 1:
        raise vcs.GitError(f"{rev}: git log did not name one commit")
    return found[0]


LOG_FORMAT = "%H%x00%ct%x00%an%x00%s"   # with -z: every field ends at a NUL, which no subject or name can hold
COMMIT_ID = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")


def _commits(out: str) -> list[Commit]:
    """`git log -z --format=LOG_FORMAT` read four fields a commit; an answer that does not fit (a field holding
    a NUL) is refused, never read out of step."""
    fields = out.removesuffix("\0").split("\0") if out else []
    if len(fields) % 4:
        raise vcs.GitError("git log: an answer that is not four fields a commit")
    commits = []
    for at in range(0, len(fields), 4):
        oid, seconds, author, subject = fields[at:at + 4]
        oid = oid.lstrip("\n")
        if not COMMIT_ID.fullmatch(oid) or not seconds.isdigit():
            raise vcs.GitError("git log: an answer that is not four fields a commit")
        commits.append(Commit(oid, iso_utc(int(seconds)), author, subject))
    return commits


def tagged(top: Path) -> dict[str, str]:
    """Commit id -> tag name, for every tag that names a commit (annotated ones peeled)."""
    out = vcs.git(top, "for-each-ref", "--format=%(objectname)%00%(*objectname)%00%(refname:short)", "refs/tags",
                  check=False)
    found: dict[str, str] = {}
    for line in out.splitlines():
        direct, peeled, name = (line.split("\0") + ["", "", ""])[:3]
        found.setdefault(peeled or direct, name)
    return found


def iso_utc(seconds: int) -> str:
    from datetime import datetime, timezone

    return datetime.fromtimestamp(seconds, timezone.utc).isoformat()


@dataclass(frozen=True, slots=True)
class Tree:
    """A commit's tree as `git ls-tree -r` lists it (paths from the repository root)."""

    files: dict[str, Blob]            # regular files
    gitlinks: tuple[str, ...]         # submodules: an empty directory in a checkout
    links: tuple[str, ...]            # symbolic links: never followed, but their directories exist


def tree(top: Path, commit: str) -> Tree:
    """Every entry of the commit's tree. Links and submodules are never written or scanned, as a scan of a
    checkout leaves them; discovery still sees the directories they make (auditor/history/listing.py)."""
    listing = vcs.git_bytes(top, "ls-tree", "-r", "-l", "-z", "--full-tree", "--end-of-options", commit)
    files: dict[str, Blob] = {}
    gitlinks: list[str] = []
    links: list[str] = []
    for record in listing.split(b"\0"):
        meta, _, raw = record.partition(b"\t")
        parts = meta.split()
        if len(parts) != 4:
            continue
        path = raw.decode("utf-8", "surrogateescape")
        if parts[0] in REGULAR_MODES and parts[1] == b"blob" and parts[3].isdigit():
            files[path] = Blob(parts[2].decode(), int(parts[3]))
        elif parts[0] == GITLINK_MODE:
            gitlinks.append(path)
        else:
            links.append(path)
    return Tree(files, tuple(gitlinks), tuple(links))


def read_blobs(top: Path, oids: list[str]) -> dict[str, bytes]:
    """The blobs' bytes, by id; a blob git does not have (a partial clone) is absent."""
    out: dict[str, bytes] = {}
    for start in range(0, len(oids), 2000):
        request = "".join(f"{oid}\n" for oid in oids[start:start + 2000]).encode()
        answer = vcs.git_bytes(top, "cat-file", "--batch", stdin=request)
        position = 0
        while position < len(answer):
            end = answer.index(b"\n", position)
            header = answer[position:end].split()
            position = end + 1
            if len(header) != 3:      # "<oid> missing"
                continue
            size = int(header[2])
            out[header[0].decode()] = answer[position:position + size]
            position += size + 1
    return out


class TreeWriter:
    """A private directory that holds one commit's tree at a time."""

    def __init__(self, top: Path, max_file_size: int):
        self.top = top
        self.max_file_size = max_file_size
        self.root = Path(tempfile.mkdtemp(prefix=f"{vcs.TEMP_PREFIX}{os.getpid()}-history-"))
        self._written: dict[str, str] = {}       # path -> blob id now on disk
        self.tree = Tree({}, (), ())              # the tree last shown
        self._counts: dict[str, int] = {}         # files under a tree id (gittree.count_files), across commits

    def __enter__(self) -> TreeWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def show(self, commit: str) -> list[str]:
        """Make the directory hold `commit`'s tree; the paths that could not be written (unsafe names, blobs git
        lacks), which make the point partial. A blob over the size limit is not read: a sparse file of its size
        stands in, which the scanner reports as skipped, as it would in a checkout (the point is then partial)."""
        count_files(self.top, commit, self._counts)      # refused before it is listed when too many
        listed = tree(self.top, commit)
        written = sum(b.size for b in listed.files.values() if b.size <= self.max_file_size)
        if written > MAX_TREE_BYTES:
            raise TreeTooLarge(f"{commit[:12]}: its tree holds {written} bytes of files, over the cap of "
                               f"{MAX_TREE_BYTES}")
        self.tree = listed
        wanted = self.tree.files
        problems: list[str] = []
        for path in [p for p, oid in self._written.items() if wanted.get(p, Blob("", 0)).oid != oid]:
            target = _inside(self.root, path)
            if target is not None:
                target.unlink(missing_ok=True)
            del self._written[path]
        todo = {p: b for p, b in wanted.items() if p not in self._written and b.size <= self.max_file_size}
        for path, blob in wanted.items():
            if path not in self._written and blob.size > self.max_file_size:
                problems += self._stand_in(path, blob)
        batch: list[tuple[str, Blob]] = []
        size = 0
        for path, blob in sorted(todo.items()):
            batch.append((path, blob))
            size += blob.size
            if size >= BATCH_BYTES:
                problems += self._write(batch)
                batch, size = [], 0
        problems += self._write(batch)
        return problems

    @property
    def written(self) -> frozenset[str]:
        """The paths of the tree shown that are on disk (not the names that could not be written)."""
        return frozenset(self._written)

    def _stand_in(self, path: str, blob: Blob) -> list[str]:
        target = _inside(self.root, path)
        if target is None:
            return [path]
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "wb") as handle:
                handle.truncate(blob.size)
            os.utime(target, ns=(WRITTEN_MTIME_NS, WRITTEN_MTIME_NS))
        except OSError:
            return [path]
        self._written[path] = blob.oid
        return []

    def _write(self, batch: list[tuple[str, Blob]]) -> list[str]:
        if not batch:
            return []
        contents = read_blobs(self.top, sorted({b.oid for _, b in batch}))
        problems = []
        for path, blob in batch:
            target = _inside(self.root, path)
            data = contents.get(blob.oid)
            if target is None or data is None:
                problems.append(path)
                continue
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
                os.utime(target, ns=(WRITTEN_MTIME_NS, WRITTEN_MTIME_NS))
            except OSError:
                problems.append(path)
                continue
            self._written[path] = blob.oid
        return problems


def _inside(root: Path, path: str) -> Path | None:
    """root/path, or None for a name that could leave root (a crafted tree may hold `..` or absolute names)."""
    parts = PurePosixPath(path).parts
    if not parts or PurePosixPath(path).is_absolute() or any(p in ("", ".", "..", ".git") for p in parts):
        return None
    return root.joinpath(*parts)
