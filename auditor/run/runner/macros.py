"""A pre-pass over the C/C++ sources: macros the repository defines only on CUDA-only branches.

`#if __CUDA_ARCH__ >= 800 / #define PTX_AVAILABLE` in one header makes `#ifdef PTX_AVAILABLE` in
another a CUDA-only branch too; a per-file view cannot see that. Each file's part (its defines and the values
it derives on ROCm) is cached by the digest of its bytes, so a warm run reads only the files that changed.
"""
from __future__ import annotations

import hashlib
import json
from typing import cast
from collections.abc import Iterable

from auditor.run.runner.cache import EntryStore, tool_digest
from auditor.util.boundedio import read_prefix
from auditor.util.datacodec import DecodeError, decode
from auditor.match.inputs.kinds import C_FAMILY
from auditor.parse.preproc import line_states
from auditor.truth.cpp import PreprocFacts
from auditor.run.runner.runcache import FileIndex, file_stat
from auditor.types import SourceFile

C_KINDS = C_FAMILY
FilePart = tuple[tuple[tuple[str, bool], ...], tuple[tuple[str, int], ...]]   # (defines, ROCm values)


def project_macros(
    sources: Iterable[SourceFile], facts: PreprocFacts, max_bytes: int,
    store: EntryStore | None = None, index: FileIndex | None = None, guards: object = None,
) -> tuple[frozenset[str], dict[str, int]]:
    """(macros defined only on CUDA-only branches, values derived on ROCm: `#if defined(__HIP_PLATFORM_AMD__)
    / #define BNB_HIP 1` makes `#if BNB_HIP` true on ROCm in every file). With `store` and `index`, each
    file's part is cached under its digest and the `guards` the facts were made from, and the answer under the
    digests of every file (`history`'s points, most of which change no C/C++ file, read one entry)."""
    memo = _Memo(store, index, guards, max_bytes) if store is not None and index is not None else None
    sources = [source for source in sources if source.kind in C_KINDS]
    whole = memo.whole_key(sources) if memo is not None else None
    if memo is not None and whole is not None and (known := memo.load_whole(whole)) is not None:
        return known
    parts = {source.path: part for source in sources if (part := _file_part(source, facts, max_bytes, memo))}
    answer = _merged(parts.values())
    for _ in range(MAX_ROUNDS):
        # a macro one header derives on ROCm (`#define LIB_DEVICE_HIP` under `__HIP_PLATFORM_AMD__`) decides the
        # branches of the files that test it (`#if !defined(LIB_DEVICE_HIP) ... #else #define NVLS_AVAILABLE 0`):
        # those files are read again with it, until nothing new is derived
        derived = answer[1]
        seen = dict(facts.rocm_values)
        new = {name for name, value in derived.items() if seen.get(name) != value}
        if not new:
            break
        for name in new:
            facts = facts.with_value(name, derived[name])
        for source in sources:   # only a file that defines something can change its part
            if not any(parts.get(source.path, ((), ()))):
                continue
            text = _text(source, max_bytes)
            if text is not None and any(name in text for name in new) \
                    and (part := _part_of(text, facts)) is not None:
                parts[source.path] = part
        answer = _merged(parts.values())
    if memo is not None and (whole := whole or memo.whole_key(sources)) is not None:
        memo.save_whole(whole, answer)
    return answer


MAX_ROUNDS = 3   # headers deriving a macro from another header's derived macro, and so on


def _merged(parts: Iterable[FilePart]) -> tuple[frozenset[str], dict[str, int]]:
    """(macros every file defines only on CUDA-only branches, the values every file derives alike on ROCm)."""
    verdict: dict[str, bool] = {}
    values: dict[str, set[int]] = {}
    for defines, rocm_values in parts:
        for name, cuda_only in defines:
            verdict[name] = verdict.get(name, True) and cuda_only
        for name, value in rocm_values:
            values.setdefault(name, set()).add(value)
    derived = {name: next(iter(found)) for name, found in values.items() if len(found) == 1}
    return frozenset(name for name, cuda_only in verdict.items() if cuda_only and name not in derived), derived


def _text(source: SourceFile, max_bytes: int) -> str | None:
    try:
        return read_prefix(source.abspath, max_bytes + 1).decode("utf-8", "replace")
    except OSError:
        return None


def _part_of(text: str, facts: PreprocFacts) -> FilePart | None:
    """A file's defines and ROCm values (None: too deep, or a #define of over 4300 digits: the scan reports it)."""
    if "#define" not in text and "# define" not in text:
        return ((), ())
    try:
        states = line_states(text, facts)
    except (RecursionError, ValueError):
        return None
    return (tuple(states.defines), tuple(states.rocm_values))


def _file_part(source: SourceFile, facts: PreprocFacts, max_bytes: int, memo: "_Memo | None") -> FilePart | None:
    stat = file_stat(source.abspath)
    if stat is None or stat[0] > max_bytes:
        return None   # the scan itself reports unreadable and oversized files
    if memo is not None and (known := memo.load(source, stat)) is not None:
        return known
    try:
        data = read_prefix(source.abspath, max_bytes + 1)
    except OSError:
        return None
    part = _part_of(data.decode("utf-8", "replace"), facts)
    if part is None:
        return None
    if memo is not None:
        memo.save(source, stat, data, part)
    return part


class _Memo:
    """Keys: rocm-audit's code and rules (tool_digest), the guards, the size limit, and the file's digest (one
    file's part) or every C/C++ file's path and digest (the answer)."""

    def __init__(self, store: EntryStore, index: FileIndex, guards: object, max_bytes: int):
        self.store, self.index, self.max_bytes = store, index, max_bytes
        context = json.dumps([tool_digest(), guards, max_bytes], sort_keys=True, default=str)
        self.context = hashlib.blake2b(context.encode(), digest_size=20).hexdigest()

    def whole_key(self, sources: list[SourceFile]) -> str | None:
        """The key of the answer for these files, when the index knows every file's digest (else None: read)."""
        h = hashlib.blake2b(self.context.encode(), digest_size=20)
        for source in sources:
            stat = file_stat(source.abspath)
            if stat is None:
                return None
            digest = "(over the size limit)" if stat[0] > self.max_bytes else self.index.digest(source, stat)
            if digest is None:
                return None
            h.update(f"\0{source.path}\0{digest}".encode("utf-8", "surrogatepass"))
        return h.hexdigest()

    def load_whole(self, key: str) -> tuple[frozenset[str], dict[str, int]] | None:
        payload = self.store.load("macros-run", key)
        if payload is None:
            return None
        try:
            cuda_only, derived = decode(tuple[tuple[str, ...], dict[str, int]], json.loads(payload))
        except (ValueError, TypeError, RecursionError, DecodeError):
            return None
        return frozenset(cuda_only), derived

    def save_whole(self, key: str, answer: tuple[frozenset[str], dict[str, int]]) -> None:
        self.store.store("macros-run", key, json.dumps([sorted(answer[0]), answer[1]]).encode("utf-8",
                                                                                              "surrogatepass"))

    def _key(self, digest: str) -> str:
        return hashlib.blake2b(f"{self.context}\0{digest}".encode(), digest_size=20).hexdigest()

    def load(self, source: SourceFile, stat) -> FilePart | None:
        digest = self.index.digest(source, stat)
        payload = self.store.load("macros", self._key(digest)) if digest is not None else None
        if payload is None:
            return None
        try:
            return cast(FilePart, decode(FilePart, json.loads(payload)))
        except (ValueError, TypeError, RecursionError, DecodeError):
            return None

    def save(self, source: SourceFile, stat, data: bytes, part: FilePart) -> None:
        digest = self.index.record(source, stat, data)
        self.store.store("macros", self._key(digest), json.dumps(part).encode("utf-8", "surrogatepass"))
