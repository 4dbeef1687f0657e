"""Warm runs without re-reading: files looked up by their stat, and the whole report reused when nothing changed.

A run records, per scanned root, each file's size, mtime, ctime and inode with the digest of its bytes (the
index). The next run trusts the digest of a file whose stat is unchanged, so an unchanged file is neither
read nor hashed; a changed one is read, hashed and looked up by content as before (auditor/run/runner/cache.py). When
every file's stat, the options and rocm-audit itself are unchanged, the whole previous report is reused.

A file modified within RACY_SECONDS of the run's start is never recorded: a write in the same clock tick as
the stat could leave size and mtime unchanged (git's "racy clean" problem). Entries live in the user's cache
directory (auditor/run/runner/cache.py: private, checksummed, written atomically) and are JSON decoded into the declared
types; a planted or corrupt entry is a miss.
"""
from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass, field, replace

from auditor.run.runner.cache import EntryStore, content_digest, tool_digest
from auditor.util.datacodec import DecodeError, decode, encode
from auditor.types import Report, SourceFile

RACY_SECONDS = 2.0
Stat = tuple[int, int, int, int]          # size, mtime_ns, ctime_ns, inode
UNSTABLE_ERRORS = ("skipped: scanning took", "internal error", "cannot read")   # retried on the next run


def file_stat(abspath: str) -> Stat | None:
    try:
        info = os.stat(abspath)
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino


@dataclass(slots=True)
class FileIndex:
    """path -> (stat, digest of the bytes) for one root: what the last run read, and what this run reads."""

    store: EntryStore | None
    key: str
    started_ns: int = field(default_factory=time.time_ns)
    known: dict[str, tuple[Stat, str]] = field(default_factory=dict)
    seen: dict[str, tuple[Stat, str]] = field(default_factory=dict)

    @classmethod
    def open(cls, store: EntryStore, root: str) -> "FileIndex":
        index = cls(store, _digest("index", tool_digest(), root))
        payload = store.load("index", index.key)
        if payload is not None:
            try:
                rows = decode(tuple[tuple[str, int, int, int, int, str], ...], json.loads(payload))
                index.known = {path: ((size, mtime, ctime, ino), digest)
                               for path, size, mtime, ctime, ino, digest in rows}
            except (ValueError, TypeError, RecursionError, DecodeError):
                index.known = {}
        return index

    def digest(self, source: SourceFile, stat: Stat | None = None) -> str | None:
        """The digest of the file's bytes when its stat is the one recorded; else None (read it)."""
        stat = stat or file_stat(source.abspath)
        recorded = self.seen.get(source.path) or self.known.get(source.path)
        if stat is None or recorded is None or recorded[0] != stat:
            return None
        self.seen[source.path] = recorded
        return recorded[1]

    def record(self, source: SourceFile, stat: Stat | None, data: bytes) -> str:
        digest = content_digest(data)
        if stat is not None and not self.racy(stat):
            self.seen[source.path] = (stat, digest)
        return digest

    def racy(self, stat: Stat) -> bool:
        return stat[1] >= self.started_ns - int(RACY_SECONDS * 1e9)

    def save(self) -> None:
        if self.store is None or self.seen == self.known:
            return
        rows = [[path, *stat, digest] for path, (stat, digest) in sorted(self.seen.items())]
        self.store.store("index", self.key, json.dumps(rows, separators=(",", ":")).encode("utf-8", "surrogatepass"))


def run_key(context: str, listing: list[tuple[str, str, Stat | None]], extra: object) -> str | None:
    """The key of a whole run: None when a file is unreadable or was modified too recently to trust its stat."""
    now = time.time_ns() - int(RACY_SECONDS * 1e9)
    h = hashlib.blake2b(digest_size=20)
    h.update(f"{tool_digest()}\0{context}\0".encode())
    h.update(json.dumps(extra, sort_keys=True, default=str).encode("utf-8", "surrogatepass"))
    for path, kind, stat in listing:
        if stat is None or stat[1] >= now:
            return None
        h.update(f"\0{path}\0{kind}\0{stat}".encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def load_report(store: EntryStore, key: str, rules: dict) -> Report | None:
    from auditor.model.rocmpath.model import RocmPath

    payload = store.load("reports", key)
    if payload is None:
        return None
    try:
        report = decode(Report, json.loads(payload))
        components = tuple(c if c.rocm_path is None else replace(c, rocm_path=decode(RocmPath, c.rocm_path))
                           for c in report.components)
    except (ValueError, TypeError, RecursionError, DecodeError):
        return None
    return replace(report, rules=rules, components=components)


def save_report(store: EntryStore, key: str, report: Report) -> None:
    if any(r.error and r.error.startswith(UNSTABLE_ERRORS) for r in report.results):
        return
    try:
        payload = json.dumps(encode(replace(report, rules={})), separators=(",", ":"))
    except (TypeError, ValueError):
        return
    store.store("reports", key, payload.encode("utf-8", "surrogatepass"))


def _digest(*parts: str) -> str:
    return hashlib.blake2b("\0".join(parts).encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()
