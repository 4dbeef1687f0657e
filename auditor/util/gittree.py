"""How many files a commit's tree holds, counted from its tree objects before anything is listed: a tree can
name one small subtree many times, so a commit of a few KiB can list millions of files. Each distinct tree
object is read once (`git cat-file --batch`), its count memoised by id, so nesting multiplies nothing here."""
from __future__ import annotations

from pathlib import Path

from auditor.util.vcs import GitError, git, git_bytes

MAX_TREE_FILES = 500_000               # files (and links, submodules) one tree may list
MAX_TREE_BYTES = 8 * 1024 ** 3         # bytes of the files one tree writes, at most
TREE_MODE = b"40000"


class TreeTooLarge(GitError):
    """A tree over the caps: refused before it is listed or written."""


def count_files(top: Path, commit: str, memo: dict[str, int] | None = None,
                limit: int = MAX_TREE_FILES) -> int:
    """The number of entries other than trees under `commit`'s tree (what `ls-tree -r` lists), or TreeTooLarge
    once it passes `limit`. `memo`: counts by tree id, kept by a caller that reads many commits."""
    counts = {} if memo is None else memo
    root = git(top, "rev-parse", "--verify", "--end-of-options", f"{commit}^{{tree}}").strip()
    oid_bytes = len(root) // 2
    children: dict[str, tuple[list[str], int]] = {}    # tree id -> (subtree ids, its other entries)
    todo = [root] if root not in counts else []
    while todo:
        unread = sorted({t for t in todo if t not in children and t not in counts})
        todo = []
        for oid, body in _read_trees(top, unread).items():
            subtrees, others = _entries(body, oid_bytes)
            children[oid] = (subtrees, others)
            todo += subtrees
        if len(children) > limit:
            raise TreeTooLarge(f"{commit[:12]}: its tree holds more than {limit} directories")
    total = _total(root, children, counts, limit)
    if total > limit:
        raise TreeTooLarge(f"{commit[:12]}: its tree lists more than {limit} files; refused as too large")
    return total


def _total(root: str, children: dict[str, tuple[list[str], int]], counts: dict[str, int], limit: int) -> int:
    """Counts bottom-up without recursion (a tree may nest thousands deep); a count is capped at limit + 1."""
    stack = [root]
    while stack:
        oid = stack[-1]
        if oid in counts:
            stack.pop()
            continue
        subtrees, others = children[oid]
        pending = [t for t in subtrees if t not in counts]
        if pending:
            stack += pending
            continue
        counts[oid] = min(limit + 1, others + sum(counts[t] for t in subtrees))
        stack.pop()
    return counts[root]


def _read_trees(top: Path, oids: list[str]) -> dict[str, bytes]:
    if not oids:
        return {}
    out = git_bytes(top, "cat-file", "--batch", stdin="".join(f"{o}\n" for o in oids).encode())
    found: dict[str, bytes] = {}
    position = 0
    while position < len(out):
        end = out.index(b"\n", position)
        header = out[position:end].split()
        position = end + 1
        if len(header) != 3:
            raise GitError(f"git cat-file: tree {header[0].decode(errors='replace') if header else '?'} is missing")
        size = int(header[2])
        if header[1] == b"tree":
            found[header[0].decode()] = out[position:position + size]
        position += size + 1
    return found


def _entries(body: bytes, oid_bytes: int) -> tuple[list[str], int]:
    """A raw tree object's subtree ids and the number of its other entries."""
    subtrees: list[str] = []
    others = 0
    position = 0
    while position < len(body):
        space = body.index(b" ", position)
        nul = body.index(b"\0", space)
        mode = body[position:space]
        oid = body[nul + 1:nul + 1 + oid_bytes].hex()
        position = nul + 1 + oid_bytes
        if mode == TREE_MODE:
            subtrees.append(oid)
        else:
            others += 1
    return subtrees, others
