"""The on-disk cache: per-file scan results keyed by content, and the parsed rulebook.

A result is reused only when everything it depends on is unchanged: the file's bytes, path and kind, the
rules (every field a finding carries, the guards with the repository's CUDA-only macros, the API table),
the scan options that change results, and rocm-audit itself (its version and the hash of its code, so an
edited checkout never reuses stale results). Entries are written atomically (a temporary file, then
os.replace), so two runs can share a directory; an entry that is truncated or corrupt fails its checksum
and is ignored, and the file is scanned again. The cache lives in the user's cache directory, never
inside the scanned tree unless asked to.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import os
import pickle
import re
import socket
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from auditor import __version__
from auditor.types import FileResult, SourceFile

FORMAT = b"rocm-audit cache 2\n"          # bump when the entry layout or the pickled types change shape
CHECKSUM_BYTES = 16
# A requirements file's findings depend on the files it includes (-r/-c), which its own bytes do not show.
# Anything that looks like an include option, anywhere, keeps a manifest out of the cache.
INCLUDE_OPTION = re.compile(rb"(?:^|\s)(?:-r|-c|--requirement|--constraint)(?:\s|=)")


def default_directory() -> Path:
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("rocm-audit", appauthor=False))


def cache_directory(no_cache: bool, chosen: Path | None, scanned: tuple[Path, ...]) -> Path | None:
    """Where this run caches, or None. A directory the user chose (flag, ROCM_AUDIT_CACHE_DIR, config) is
    used as given; the default one is not used when it lies inside a scanned path."""
    if no_cache:
        return None
    if chosen is not None:
        return chosen
    directory = default_directory()
    resolved = directory.resolve()
    for path in scanned:
        top = path.resolve()
        if resolved == top or (top.is_dir() and resolved.is_relative_to(top)):
            return None
    return directory


@dataclass(frozen=True, slots=True)
class EntryStore:
    """Checksummed entries in a directory. Reads never raise, writes never fail a scan."""

    directory: Path

    def _path(self, namespace: str, key: str) -> Path:
        return self.directory / namespace / key[:2] / key[2:]

    def load(self, namespace: str, key: str) -> bytes | None:
        try:
            data = self._path(namespace, key).read_bytes()
        except (OSError, ValueError):
            return None
        head = len(FORMAT) + CHECKSUM_BYTES
        if not data.startswith(FORMAT) or len(data) < head:
            return None
        payload = data[head:]
        if hashlib.blake2b(payload, digest_size=CHECKSUM_BYTES).digest() != data[len(FORMAT):head]:
            return None
        return payload

    def store(self, namespace: str, key: str, payload: bytes) -> None:
        target = self._path(namespace, key)
        checksum = hashlib.blake2b(payload, digest_size=CHECKSUM_BYTES).digest()
        # unique among the processes sharing the directory (creating files is what costs: no mkstemp retries)
        temporary = target.parent / f".tmp-{_HOST}-{os.getpid()}-{next(_SERIAL)}"
        try:
            fd = self._create(temporary)
        except OSError:
            return
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(FORMAT + checksum + payload)
            os.replace(temporary, target)
        except OSError:
            temporary.unlink(missing_ok=True)

    @staticmethod
    def _create(path: Path) -> int:
        if path.parent in _MADE:
            try:
                return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileNotFoundError:   # removed meanwhile
                _MADE.discard(path.parent)
        path.parent.mkdir(parents=True, exist_ok=True)
        _MADE.add(path.parent)
        return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)


_HOST = socket.gethostname().replace("/", "_")
_SERIAL = itertools.count()
_MADE: set[Path] = set()      # directories this process has created or found


@dataclass(frozen=True, slots=True)
class ResultCache:
    """Scan results of one run's rules and options, looked up by file content."""

    store: EntryStore
    context: str                   # digest of everything a result depends on besides the file itself

    def key(self, source: SourceFile, data: bytes) -> str:
        h = hashlib.blake2b(digest_size=20)
        h.update(f"{self.context}\0{source.path}\0{source.kind}\0".encode())
        h.update(data)
        return h.hexdigest()

    def load(self, key: str) -> FileResult | None:
        payload = self.store.load("results", key)
        if payload is None:
            return None
        try:
            result = pickle.loads(payload)
        except Exception:  # an entry from an incompatible build: scan again
            return None
        return result if isinstance(result, FileResult) else None

    def save(self, key: str, result: FileResult) -> None:
        if result.error is None:   # errors and time-budget stops are retried on the next run
            self.store.store("results", key, pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))


def cacheable(source: SourceFile, data: bytes) -> bool:
    return source.kind != "manifest" or INCLUDE_OPTION.search(data) is None


def result_cache(directory: Path, rulebook, max_file_size: int) -> ResultCache:
    return ResultCache(EntryStore(directory), scan_context(rulebook, max_file_size))


def scan_context(rulebook, max_file_size: int) -> str:
    h = hashlib.blake2b(digest_size=20)
    h.update(tool_digest().encode())
    for rule in rulebook.rules:
        fields = (rule.id, rule.name, rule.category, rule.severity.label, rule.message, rule.rocm_alternative,
                  rule.effort, rule.matcher, rule.match)
        h.update(json.dumps(fields, sort_keys=True, default=str).encode())
    h.update(json.dumps(rulebook.guards, sort_keys=True, default=str).encode())   # with the CUDA-only macros
    h.update((rulebook.api_table.digest if rulebook.api_table is not None else "shipped").encode())
    h.update(f"max_file_size={max_file_size}".encode())
    return h.hexdigest()


@cache
def tool_digest() -> str:
    """rocm-audit's version, code and rule files (with the shipped API table), as one digest."""
    from auditor.rulebook import rules_root

    h = hashlib.blake2b(digest_size=20)
    h.update(__version__.encode())
    for top in (Path(__file__).parent, rules_root()):
        for folder, dirs, files in os.walk(top):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(f for f in files if f.endswith((".py", ".toml", ".scm", ".tsv"))):
                path = os.path.join(folder, name)
                h.update(os.path.relpath(path, top).encode() + b"\0")
                with open(path, "rb") as handle:
                    h.update(handle.read())
    return h.hexdigest()


def cached_rulebook(directory: Path | None):
    """The rulebook, unpickled from the cache when the rule files and rocm-audit are unchanged (parsing and
    validating the TOML costs ~15 times more), with the needles derived from its rules."""
    from auditor.prefilter import derived_needles, remember
    from auditor.rulebook import Rulebook, load_rulebook

    if directory is None:
        return load_rulebook()
    store = EntryStore(directory)
    key = tool_digest()
    payload = store.load("rulebook", key)
    if payload is not None:
        try:
            rulebook, needles = pickle.loads(payload)
            if isinstance(rulebook, Rulebook) and isinstance(needles, dict):
                remember(needles)
                return rulebook
        except Exception:
            pass
    rulebook = load_rulebook()
    payload = pickle.dumps((rulebook, derived_needles(rulebook)), protocol=pickle.HIGHEST_PROTOCOL)
    store.store("rulebook", key, payload)
    return rulebook
