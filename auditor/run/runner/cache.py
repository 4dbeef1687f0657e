"""The on-disk cache: per-file scan results keyed by content, and the parsed rulebook.

A result is reused only when everything it depends on is unchanged: the file's bytes, path and kind, the
rules (every field a finding carries, the guards with the repository's CUDA-only macros, the API table),
the scan options that change results, and rocm-audit itself (its version and the hash of its code, so an
edited checkout never reuses stale results). Entries are written atomically (a temporary file, then
os.replace), so two runs can share a directory; an entry that is truncated, corrupt or planted fails its
checksum, an HMAC under a per-user secret kept outside any scanned tree (auditor/secret), and is ignored: the
file is scanned again.

Entries are data, never code: versioned JSON decoded into the declared types (auditor/util/datacodec.py), so a
planted or corrupt entry is at worst a miss. The directory is created private (0700); a directory or entry
that another user owns, or a link, is not read. The cache stays under a size cap (oldest entries out). Its
place is chosen by the command line or the user's environment, never by a config file in the scanned tree,
and never lies inside a scanned path (a chosen one there is refused: exit 2).
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import socket
import stat
import time
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from auditor import __version__
from auditor.util.datacodec import DecodeError, decode, encode
from auditor.run.runner.cachetrust import cache_secret
from auditor.run.runner.cachetrust.place import cache_directory, default_directory

__all__ = ["cache_directory", "default_directory"]   # where: auditor/run/runner/cachetrust/place.py
from auditor.truth.cpp import PreprocFacts
from auditor.run.scan.file import preprocessor_part
from auditor.types import FileResult, SourceFile

FORMAT = b"rocm-audit cache 4 json\n"     # bump when the entry layout or the stored types change shape
CHECKSUM_BYTES = 16
MAX_ENTRY_BYTES = 64 * 1024 * 1024         # larger than any result; a bigger file is not an entry of ours
DEFAULT_SIZE_CAP = 500 * 1024 * 1024       # bytes of entries; the oldest go first beyond it
EVICTION_MARKER = ".last-eviction"
EVICT_EVERY_SECONDS = 600.0                # a size check walks the directory: at most this often
# A requirements file's findings depend on the files it includes (-r/-c), which its own bytes do not show.
# Anything that looks like an include option, anywhere, keeps a manifest out of the cache.
INCLUDE_OPTION = re.compile(rb"(?:^|\s)(?:-r|-c|--requirement|--constraint)(?:\s|=)")


def _mine(info: os.stat_result) -> bool:
    return not hasattr(os, "getuid") or info.st_uid == os.getuid()


def _no_secret() -> bytes:
    return cache_secret() or b""


class _Checked:
    """Directories one store has created or found, those it checked (real, and this user's), and the serial of
    its temporary files: held by the store, so no check outlives the run that made it."""

    __slots__ = ("made", "trusted", "serial")

    def __init__(self) -> None:
        self.made: set[Path] = set()
        self.trusted: set[str] = set()
        self.serial = 0

    def next_name(self) -> str:
        """Unique among the processes and stores sharing the directory (creating files is what costs: no mkstemp
        retries)."""
        self.serial += 1
        return f".tmp-{_HOST}-{os.getpid()}-{id(self):x}-{self.serial}"


@dataclass(frozen=True, slots=True)
class EntryStore:
    """Authenticated entries in a private directory. Reads never raise, writes never fail a scan. Without the
    user's secret (it could not be made safely) nothing is read or written."""

    directory: Path
    secret: bytes = field(default_factory=_no_secret, repr=False)
    checked: _Checked = field(default_factory=_Checked, repr=False, compare=False)

    def checksum(self, payload: bytes) -> bytes:
        return hmac.digest(self.secret, FORMAT + payload, "sha256")[:CHECKSUM_BYTES]

    def _path(self, namespace: str, key: str) -> Path:
        return self.directory / namespace / key[:2] / key[2:]

    def load(self, namespace: str, key: str) -> bytes | None:
        folder = f"{self.directory}/{namespace}"
        if not self.secret:
            return None
        trusted = self.checked.trusted
        if not (_trusted_dir(str(self.directory), trusted) and _trusted_dir(folder, trusted)
                and _trusted_dir(f"{folder}/{key[:2]}", trusted)):
            return None
        try:
            fd = os.open(f"{folder}/{key[:2]}/{key[2:]}", _READ_FLAGS)
        except (OSError, ValueError):
            return None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or not _mine(info) or info.st_size > MAX_ENTRY_BYTES:
                return None
            data = os.read(fd, info.st_size + 1)
        except OSError:
            return None
        finally:
            os.close(fd)
        head = len(FORMAT) + CHECKSUM_BYTES
        if not data.startswith(FORMAT) or len(data) < head:
            return None
        payload = data[head:]
        if not hmac.compare_digest(self.checksum(payload), data[len(FORMAT):head]):
            return None
        return payload

    def store(self, namespace: str, key: str, payload: bytes) -> None:
        if not self.secret:
            return
        target = self._path(namespace, key)
        checksum = self.checksum(payload)
        temporary = target.parent / self.checked.next_name()
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

    def _create(self, path: Path) -> int:
        made = self.checked.made
        if path.parent in made:
            try:
                return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileNotFoundError:   # removed meanwhile
                made.discard(path.parent)
        for directory in (self.directory, path.parent.parent, path.parent):
            _make_private(str(directory), self.checked.trusted)
        made.add(path.parent)
        return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)


def _make_private(directory: str, trusted: set[str]) -> None:
    """Create the directory 0700 (parents too), or check that an existing one is ours and not a link."""
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
    except FileExistsError:
        pass
    if not _trusted_dir(directory, trusted, fresh=True):
        raise PermissionError(f"{directory}: not a private directory of this user")


def _trusted_dir(directory: str, trusted: set[str], fresh: bool = False) -> bool:
    """A real directory this user owns (not a link, not another user's): only then are its entries read.
    `trusted`: the directories found so already (added to)."""
    if not fresh and directory in trusted:
        return True
    try:
        info = os.lstat(directory)
    except OSError:
        return False
    ok = stat.S_ISDIR(info.st_mode) and _mine(info)
    if ok:
        trusted.add(directory)
    return ok


_HOST = socket.gethostname().replace("/", "_")
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


def evict(directory: Path | None, cap: int = DEFAULT_SIZE_CAP, now: float | None = None) -> int:
    """Keep the cache under `cap` bytes: the oldest entries (by when they were written) are removed first, down
    to 90% of the cap. Walks the directory at most every EVICT_EVERY_SECONDS. Returns the bytes removed."""
    if directory is None or not _trusted_dir(str(directory), set()):
        return 0
    now = time.time() if now is None else now
    marker = directory / EVICTION_MARKER
    try:
        if now - marker.stat().st_mtime < EVICT_EVERY_SECONDS:
            return 0
    except OSError:
        pass
    entries: list[tuple[float, int, str]] = []
    total = 0
    for folder, dirs, files in os.walk(directory):
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(folder, d))]
        for name in files:
            if name == EVICTION_MARKER:
                continue
            path = os.path.join(folder, name)
            try:
                info = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode):
                entries.append((info.st_mtime, info.st_size, path))
                total += info.st_size
    removed = 0
    if total > cap:
        for _mtime, size, path in sorted(entries):
            if total - removed <= cap * 0.9:
                break
            try:
                os.unlink(path)
                removed += size
            except OSError:
                continue
    try:
        fd = os.open(marker, os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
        os.close(fd)
        os.utime(marker, (now, now))
    except OSError:
        pass
    return removed


@dataclass(frozen=True, slots=True)
class ResultCache:
    """Scan results of one run's rules and options, looked up by file content."""

    store: EntryStore
    context: str                   # digest of everything a result depends on besides the file itself
    loose: str = ""                # the same without the preprocessor facts (the guards with the project's macros)
    facts: PreprocFacts | None = None    # those facts; "" and None: no second key

    @classmethod
    def of(cls, store: EntryStore, rulebook, size: int, second_key: bool = False) -> ResultCache:
        from auditor.match.rulebook.context import ScanContext

        facts = ScanContext.of(rulebook).guards.preprocessor if second_key else None
        return cls(store, scan_context(rulebook, size), scan_context(rulebook, size, False) if facts else "", facts)

    def key(self, source: SourceFile, data: bytes) -> str:
        return self.key_for(source, content_digest(data))

    def key_for(self, source: SourceFile, digest: str, context: str | None = None) -> str:
        """The key from the digest of the file's bytes (run/runner/runcache.py knows it without reading them)."""
        text = f"{self.context if context is None else context}\0{source.path}\0{source.kind}\0{digest}"
        return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()

    def key_within(self, source: SourceFile, digest: str, text: str) -> str | None:
        """A key without the preprocessor facts but the part this file's scan reads (scan.preprocessor_part)."""
        part = preprocessor_part(source.kind, text, self.facts) if self.loose and self.facts is not None else None
        return None if part is None else self.key_for(source, digest, f"{self.loose}\0{part.as_key()}")

    def load(self, key: str) -> FileResult | None:
        payload = self.store.load("results", key)
        if payload is None:
            return None
        try:
            return decode(FileResult, json.loads(payload))
        except (ValueError, TypeError, RecursionError, DecodeError):  # corrupt or another layout: scan again
            return None

    def save(self, key: str, result: FileResult, *also: str | None) -> None:
        if result.error is None:   # errors and time-budget stops are retried on the next run
            try:
                payload = json.dumps(encode(result), separators=(",", ":")).encode("utf-8", "surrogatepass")
            except (TypeError, ValueError):
                return
            for each in {k for k in (key, *also) if k}:
                self.store.store("results", each, payload)


def content_digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=20).hexdigest()


def cacheable(source: SourceFile, data: bytes) -> bool:
    return source.kind != "manifest" or INCLUDE_OPTION.search(data) is None


def result_cache(directory: Path, rulebook, max_file_size: int, second_key: bool = False) -> ResultCache:
    """The result cache of these rules and this size limit, in `directory`."""
    return ResultCache.of(EntryStore(directory), rulebook, max_file_size, second_key)


def scan_context(rulebook, max_file_size: int, preprocessor: bool = True) -> str:
    """The digest of what a file's result depends on besides the file: rocm-audit, the rules in force, the guards
    with the project's facts (a run's ScanContext; a rulebook alone: its own guards), the API table, the size
    limit. Without `preprocessor`, the project's macros are left out (ResultCache.key_within adds back the part
    a file's scan reads)."""
    from auditor.match.rulebook.context import ScanContext
    from auditor.match.rulebook.schema import as_dict

    context = ScanContext.of(rulebook)
    h = hashlib.blake2b(digest_size=20)
    h.update(tool_digest().encode())
    for rule in context.rules:
        fields = (rule.id, rule.name, rule.category, rule.severity.label, rule.message, rule.rocm_alternative,
                  rule.effort, rule.matcher, as_dict(rule.spec))
        h.update(json.dumps(fields, sort_keys=True, default=str).encode())
    guards = context.guards.as_data()                     # with the project's macros
    if not preprocessor:
        guards["preprocessor"] = "(per file)"               # the second key: the part a file reads is added to it
    h.update(json.dumps(guards, sort_keys=True, default=str).encode())
    table = context.rulebook.api_table
    h.update((table.digest if table is not None else "shipped").encode())
    h.update(f"max_file_size={max_file_size}".encode())
    return h.hexdigest()


@cache
def tool_digest() -> str:
    """rocm-audit's version, code and rule files (with the shipped API table), as one digest."""
    from auditor.match.rulebook import rules_root

    h = hashlib.blake2b(digest_size=20)
    h.update(__version__.encode())
    for top in (Path(__file__).parents[1], rules_root()):
        for folder, dirs, files in os.walk(top):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(f for f in files if f.endswith((".py", ".toml", ".scm", ".tsv"))):
                path = os.path.join(folder, name)
                h.update(os.path.relpath(path, top).encode() + b"\0")
                with open(path, "rb") as handle:
                    h.update(handle.read())
    return h.hexdigest()


def cached_rulebook(directory: Path | None):
    """The rulebook, read from the cache when the rule files and rocm-audit are unchanged (parsing and
    validating the TOML costs ~15 times more); once read in this process, the same one again (the query groups
    compiled for it are kept with it)."""
    from auditor.match.rulebook import load_rulebook, shipped_rulebook

    if directory is None or shipped_rulebook.cache_info().currsize:
        return load_rulebook()
    store = EntryStore(directory)
    key = tool_digest()
    payload = store.load("rulebook", key)
    if payload is not None:
        try:
            return _rulebook_from(json.loads(payload))
        except (ValueError, TypeError, KeyError, RecursionError, DecodeError):
            pass
    rulebook = load_rulebook()
    try:
        payload = json.dumps(_rulebook_data(rulebook), separators=(",", ":")).encode()
    except (TypeError, ValueError):
        return rulebook
    store.store("rulebook", key, payload)
    return rulebook


RULE_FIELDS = ("id", "name", "category", "severity", "message", "rocm_alternative", "effort", "docs", "matcher",
               "match", "flag", "ok", "example_kind", "source_file")


def _rulebook_data(rulebook) -> dict:
    from auditor.match.rulebook.schema import as_dict

    if rulebook.api_table is not None:
        raise TypeError("only the rulebook with the shipped API table is cached")
    rules = []
    for rule in rulebook.rules:
        item = {name: getattr(rule, name) for name in RULE_FIELDS if name != "match"}
        item["match"] = as_dict(rule.spec)
        item["severity"] = int(rule.severity)
        item["flag"] = [[e.file, e.code] for e in rule.flag]
        item["ok"] = [[e.file, e.code] for e in rule.ok]
        rules.append(item)
    return {"rules": rules, "digest": rulebook.digest, "guards": rulebook.guards}


def _rulebook_from(data: object):
    from auditor.match.rulebook import Example, Rulebook
    from auditor.match.rulebook.schema import RuleError, from_dict
    from auditor.types import Rule, Severity

    if not isinstance(data, dict) or not isinstance(data.get("rules"), list) or not isinstance(data.get("guards"),
                                                                                             dict):
        raise DecodeError("not a rulebook")
    rules = []
    for item in data["rules"]:
        if not isinstance(item, dict) or set(item) != set(RULE_FIELDS) or not isinstance(item["match"], dict):
            raise DecodeError("not a rule")
        strings = ("id", "name", "category", "message", "effort", "docs", "matcher", "example_kind", "source_file")
        if not all(isinstance(item[k], str) for k in strings) or not isinstance(item["rocm_alternative"],
                                                                                (str, type(None))):
            raise DecodeError("not a rule")
        examples = {k: tuple(Example(*decode(tuple[str, str], e)) for e in decode(tuple[object, ...], item[k]))
                    for k in ("flag", "ok")}
        fields = {k: v for k, v in item.items() if k not in ("matcher", "match")}
        try:
            spec = from_dict(item["matcher"], item["match"])
        except RuleError as err:
            raise DecodeError(str(err)) from None
        rules.append(Rule(**{**fields, "spec": spec, "severity": Severity(decode(int, item["severity"])), **examples}))
    return Rulebook(tuple(rules), decode(str, data["digest"]), data["guards"], None)
