"""The cache holds data, never code: a planted entry (a pickle that would run a command, JSON of the wrong shape,
another user's file, a link) is a miss, never executed and never trusted."""
from __future__ import annotations

import json
import os
import pickle
import stat
import subprocess
from pathlib import Path

import pytest

from auditor.run.runner.cache import (
    CHECKSUM_BYTES, EVICTION_MARKER, FORMAT, EntryStore, ResultCache, evict, result_cache, tool_digest,
)
from auditor.cli.app import main
from auditor.match.rulebook import load_rulebook, shipped_rulebook
from auditor.types import FileFacts, FileResult, Finding, Severity, SourceFile, Span
from tests.conftest import write_tree


class Payload:
    """Unpickling this runs a command that leaves a marker file."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def plant(store: EntryStore, namespace: str, key: str, payload: bytes, header: bytes = FORMAT) -> Path:
    """An entry with a valid checksum under the user's own secret, as someone who holds it (or a bug) could
    write it: what is read back must still be data of the declared shape."""
    path = store.directory / namespace / key[:2] / key[2:]
    path.parent.mkdir(parents=True, exist_ok=True)
    checksum = store.checksum(payload) if header == FORMAT else store.checksum(payload)[:CHECKSUM_BYTES]
    path.write_bytes(header + checksum + payload)
    return path


def audit(capsys, repo: Path, cache: Path) -> dict:
    main([str(repo), "--cache-dir", str(cache), "--format", "json", "--no-progress", "-j", "1", "--fail-on", "never"])
    return json.loads(capsys.readouterr().out)


def test_planted_pickles_do_not_run(tmp_path, capsys):
    cache = tmp_path / "cache"
    marker = tmp_path / "PWNED"
    repo = write_tree(tmp_path / "repo", {"a.py": "import pynvml\n"})
    store = EntryStore(cache)
    evil = pickle.dumps(Payload(marker))
    # the rulebook's key is computable from the public wheel; the old format's header too
    plant(store, "rulebook", tool_digest(), evil)
    plant(store, "rulebook", tool_digest(), evil, header=b"rocm-audit cache 1\n")
    rulebook = load_rulebook()
    shipped_rulebook.cache_clear()   # as in a new process: the run reads the planted rulebook entry
    results = result_cache(cache, rulebook, 16 * 1024 * 1024)
    key = results.key(SourceFile("a.py", str(repo / "a.py"), "python"), (repo / "a.py").read_bytes())
    plant(store, "results", key, evil)
    report = audit(capsys, repo, cache)
    for command in (["rules"], ["config", str(repo)], ["coverage", str(repo)], ["baseline", str(repo), "-o",
                                                                                  str(tmp_path / "b.json")]):
        main([*command, "--cache-dir", str(cache)])
        capsys.readouterr()
    assert not marker.exists()
    assert [(f["path"], f["line"], f["rule"]) for f in report["findings"]] == [("a.py", 1, "RA112")]


def test_entries_of_the_wrong_shape_are_misses(tmp_path):
    cache = tmp_path / "cache"
    rulebook = load_rulebook()
    results = result_cache(cache, rulebook, 1024)
    good = FileResult("a.py", "python", (Finding("RA112", "a.py", Span(1, 1), "pynvml", "import pynvml", "m",
                                                  Severity.HIGH),), facts=FileFacts(lines=1, unknown_suppressions=((1, "RA9"),)))
    results.save("k" * 40, good)
    assert results.load("k" * 40) == good
    for bad in (b"[]", b'{"path": 1, "kind": "python"}', b'{"path": "a.py", "kind": "python", "extra": 1}',
                b'{"path": "a.py", "kind": "python", "findings": [{"rule_id": "RA1"}]}',
                b'{"path": "a.py", "kind": "python", "findings": [], "suppressed": true}',
                b'{"__reduce__": "os.system"}', b"\x80\x04not json", b"[" * 100_000):
        plant(results.store, "results", "b" * 40, bad)
        assert results.load("b" * 40) is None


def test_the_cache_directory_is_private(tmp_path, capsys):
    cache = tmp_path / "new" / "cache"
    repo = write_tree(tmp_path / "repo", {"a.py": "import pynvml\n"})
    audit(capsys, repo, cache)
    for directory in [cache, *[p for p in cache.rglob("*") if p.is_dir()]]:
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700, directory
    for entry in (p for p in cache.rglob("*") if p.is_file() and p.name != EVICTION_MARKER):
        assert stat.S_IMODE(entry.stat().st_mode) == 0o600, entry


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to give files away")
def test_entries_and_directories_of_another_user_are_not_read(tmp_path):
    cache = tmp_path / "cache"
    results = result_cache(cache, load_rulebook(), 1024)
    entry = FileResult("a.py", "python", suppressed=3)
    results.save("c" * 40, entry)
    results.save("d" * 40, entry)
    path_c = cache / "results" / "cc" / ("c" * 38)
    subprocess.run(["chown", "65534:65534", str(path_c)], check=True)
    subprocess.run(["chown", "65534:65534", str(cache / "results" / "dd")], check=True)
    fresh = ResultCache(EntryStore(cache), results.context)   # a store of its own: it checks every directory again
    assert fresh.load("c" * 40) is None       # the entry is another user's
    assert fresh.load("d" * 40) is None       # its directory is another user's


def test_a_linked_entry_is_not_followed(tmp_path):
    cache = tmp_path / "cache"
    results = result_cache(cache, load_rulebook(), 1024)
    results.save("e" * 40, FileResult("a.py", "python"))
    target = cache / "results" / "ee" / ("e" * 38)
    real = tmp_path / "real"
    real.write_bytes(target.read_bytes())
    target.unlink()
    target.symlink_to(real)
    assert results.load("e" * 40) is None


def test_eviction_keeps_the_cache_under_its_cap(tmp_path):
    cache = tmp_path / "cache"
    store = EntryStore(cache)
    for number in range(20):
        store.store("results", f"{number:02d}" + "0" * 38, b"x" * 10_000)
        path = cache / "results" / f"{number:02d}" / ("0" * 38)
        os.utime(path, (1_000_000 + number, 1_000_000 + number))   # entry 0 is the oldest
    removed = evict(cache, cap=100_000, now=2_000_000)
    left = sorted(p.parent.name for p in (cache / "results").rglob("0" * 38))
    assert removed > 0
    assert sum(p.stat().st_size for p in (cache / "results").rglob("0" * 38)) <= 90_000
    assert left == [f"{n:02d}" for n in range(20 - len(left), 20)]   # the newest kept, the oldest gone
    assert evict(cache, cap=1, now=2_000_010) == 0                  # checked at most every few minutes
