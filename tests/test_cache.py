"""The result cache (auditor/run/runner/cache.py): a re-run reuses results only when nothing they depend on changed."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import auditor.run.runner.workers
from auditor.run.runner.cache import EVICTION_MARKER
from auditor.run.runner.cache import EntryStore, cache_directory
from auditor.cli.app import main
from auditor.match.rulebook import shipped_rulebook
from auditor.util.errors import ToolError
from tests.conftest import FIXTURES, write_tree

pytestmark = pytest.mark.slow   # cold and warm runs end to end, several runs sharing a cache

PTX = 'asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(d), "l"(s));'
ARCH_HEADER = "#if __CUDA_ARCH__ >= 800\n#define PTX_AVAILABLE\n#endif\n"
KERNEL = (f'#include "arch.h"\n__device__ void copy(unsigned d, const void* s) {{\n'
          f'#ifdef PTX_AVAILABLE\n  {PTX}\n#endif\n}}\n')


class _Scanned:
    """The paths of the files actually scanned (not taken from the cache), in this process or a child of it
    (the per-file budget scans in forked children): each scan appends a line to a file."""

    def __init__(self, log: Path):
        self.log = log

    def _paths(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []

    def __iter__(self):
        return iter(self._paths())

    def __len__(self):
        return len(self._paths())

    def __eq__(self, other):
        return self._paths() == list(other)

    def __bool__(self):
        return bool(self._paths())

    def __contains__(self, item):
        return item in self._paths()

    def __repr__(self):
        return repr(self._paths())

    def __getitem__(self, index):
        return self._paths()[index]

    def __delitem__(self, index):   # `del scans[:]`: forget what was scanned so far
        self.log.unlink(missing_ok=True)


@pytest.fixture
def scans(monkeypatch, tmp_path):
    log = tmp_path / "scanned.log"
    real = auditor.run.runner.workers.scan_with_budget

    def counting(source, *args, **kwargs):
        with open(log, "a") as handle:
            handle.write(source.path + "\n")
        return real(source, *args, **kwargs)

    monkeypatch.setattr(auditor.run.runner.workers, "scan_with_budget", counting)
    return _Scanned(log)


def audit_json(capsys, *args) -> dict:
    main([*map(str, args), "--format", "json", "--no-progress", "-j", "1", "--fail-on", "never"])
    return json.loads(capsys.readouterr().out)


def entries(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*") if p.is_file() and p.name != EVICTION_MARKER) \
        if directory.exists() else []


def test_a_warm_run_gives_the_cold_output_without_scanning(tmp_path, capsys, scans):
    cache = tmp_path / "cache"
    cold = audit_json(capsys, FIXTURES / "torch_extension", "--cache-dir", cache)
    cold_scans = list(scans)
    warm = audit_json(capsys, FIXTURES / "torch_extension", "--cache-dir", cache)
    assert warm == cold
    assert cold_scans and scans[len(cold_scans):] == []
    assert audit_json(capsys, FIXTURES / "torch_extension", "--no-cache") == cold


def test_a_changed_file_is_scanned_again(tmp_path, capsys, scans):
    repo = write_tree(tmp_path / "repo", {"a.py": "import torch\n", "b.py": "import pynvml\n"})
    cache = tmp_path / "cache"
    first = audit_json(capsys, repo, "--cache-dir", cache)
    (repo / "a.py").write_text("import tensorrt_llm\n")
    del scans[:]
    second = audit_json(capsys, repo, "--cache-dir", cache)
    assert scans == ["a.py"]
    assert {f["rule"] for f in first["findings"]} == {"RA112"}
    assert {f["rule"] for f in second["findings"]} == {"RA100", "RA112"}


def test_a_macro_defined_in_another_header_is_part_of_the_key(tmp_path, capsys):
    """kernel.cu never changes, but whether PTX_AVAILABLE is CUDA-only comes from arch.h."""
    repo = write_tree(tmp_path / "repo", {"arch.h": ARCH_HEADER, "kernel.cu": KERNEL})
    cache = tmp_path / "cache"

    def ptx_guarded(report: dict) -> set[bool]:
        return {f["guarded"] for f in report["findings"]
                if f["path"] == "kernel.cu" and f["category"] == "ptx_inline_asm"}

    assert ptx_guarded(audit_json(capsys, repo, "--cache-dir", cache)) == {True}
    (repo / "arch.h").write_text("#define PTX_AVAILABLE\n")     # now defined for ROCm builds too
    changed = audit_json(capsys, repo, "--cache-dir", cache)
    assert ptx_guarded(changed) == {False}
    assert changed == audit_json(capsys, repo, "--no-cache")


def test_corrupt_and_truncated_entries_are_ignored(tmp_path, capsys, scans):
    cache = tmp_path / "cache"
    clean = audit_json(capsys, FIXTURES / "llm_serving", "--cache-dir", cache)
    damaged = entries(cache)
    assert damaged
    for number, path in enumerate(damaged):
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2] if number % 2 else data[:-1] + bytes([data[-1] ^ 0xFF]))
    del scans[:]
    assert audit_json(capsys, FIXTURES / "llm_serving", "--cache-dir", cache) == clean
    assert scans   # scanned again, and the entries rewritten whole
    del scans[:]
    assert audit_json(capsys, FIXTURES / "llm_serving", "--cache-dir", cache) == clean
    assert scans == []   # nothing changed since: the whole report is reused


def test_no_cache_writes_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ROCM_AUDIT_CACHE_DIR", str(tmp_path / "env-cache"))
    audit_json(capsys, FIXTURES / "portable_repo", "--no-cache", "--cache-dir", tmp_path / "flag-cache")
    assert not (tmp_path / "env-cache").exists() and not (tmp_path / "flag-cache").exists()


def test_the_flag_wins_over_the_environment(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ROCM_AUDIT_CACHE_DIR", str(tmp_path / "env-cache"))
    audit_json(capsys, FIXTURES / "portable_repo", "--cache-dir", tmp_path / "flag-cache")
    assert entries(tmp_path / "flag-cache") and not (tmp_path / "env-cache").exists()
    audit_json(capsys, FIXTURES / "portable_repo")
    assert entries(tmp_path / "env-cache")


def test_only_the_users_own_config_sets_the_cache(tmp_path, capsys, monkeypatch):
    """A config file in the scanned tree may not choose which cache is read (a planted entry would be read back);
    the user's own, named with --config from outside the tree, may."""
    monkeypatch.delenv("ROCM_AUDIT_CACHE_DIR")
    monkeypatch.setattr("auditor.run.runner.cachetrust.place.default_directory", lambda: tmp_path / "default")
    repo = write_tree(tmp_path / "repo", {".rocm-audit.toml": 'cache-dir = "../cache"\n', "a.py": "import pynvml\n"})
    main([str(repo), "--format", "json", "--no-progress", "--fail-on", "never"])
    assert ".rocm-audit.toml:1: cache-dir ignored" in capsys.readouterr().err
    assert not (tmp_path / "cache").exists() and entries(tmp_path / "default")
    own = tmp_path / "mine.toml"
    own.write_text('cache-dir = "cache-mine"\n')
    audit_json(capsys, repo, "--config", own)
    assert entries(tmp_path / "cache-mine")
    monkeypatch.setenv("ROCM_AUDIT_CACHE_DIR", str(tmp_path / "env"))
    assert main(["config", str(repo)]) == 0
    assert "environment ROCM_AUDIT_CACHE_DIR" in capsys.readouterr().out


def test_the_default_cache_is_never_inside_the_scanned_tree(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("ROCM_AUDIT_CACHE_DIR")
    repo = write_tree(tmp_path / "repo", {"a.py": "import pynvml\n", "k.cu": "__global__ void k() {}\n"})
    monkeypatch.setenv("XDG_CACHE_HOME", str(repo / ".cache"))      # platformdirs' cache directory on Linux
    monkeypatch.setenv("HOME", str(repo))
    before = sorted(p.relative_to(repo) for p in repo.rglob("*"))
    audit_json(capsys, repo)
    assert sorted(p.relative_to(repo) for p in repo.rglob("*")) == before
    assert cache_directory(False, None, (repo,)) is None
    with pytest.raises(ToolError, match="lies inside the scanned path"):   # asked for: refused all the same
        cache_directory(False, repo / "chosen", (repo,))
    outside = tmp_path / "elsewhere"
    monkeypatch.setenv("XDG_CACHE_HOME", str(outside))
    audit_json(capsys, repo)
    assert entries(outside)


def test_files_that_fail_are_not_cached(tmp_path, capsys, scans):
    repo = write_tree(tmp_path / "repo", {"ok.py": "import pynvml\n", "broken.py": b"\0\0binary\0"})
    cache = tmp_path / "cache"
    first = audit_json(capsys, repo, "--cache-dir", cache)
    assert [e["path"] for e in first["errors"]] == ["broken.py"]
    del scans[:]
    assert audit_json(capsys, repo, "--cache-dir", cache) == first
    assert scans == ["broken.py"]


def test_a_damaged_rulebook_entry_is_parsed_again(tmp_path, capsys):
    """Each run as a new process makes it (a process reads the rulebook once): the first writes the entry, the
    second reads it, the third finds it damaged and parses the rule files."""
    cache = tmp_path / "cache"
    shipped_rulebook.cache_clear()
    clean = audit_json(capsys, FIXTURES / "portable_repo", "--cache-dir", cache)
    assert entries(cache / "rulebook")
    shipped_rulebook.cache_clear()
    assert audit_json(capsys, FIXTURES / "portable_repo", "--cache-dir", cache) == clean
    assert not shipped_rulebook.cache_info().currsize     # read from the entry, not from the rule files
    for path in entries(cache / "rulebook"):
        path.write_bytes(b"garbage")
    assert audit_json(capsys, FIXTURES / "portable_repo", "--cache-dir", cache) == clean
    assert shipped_rulebook.cache_info().currsize


def test_entries_are_written_whole_or_not_at_all(tmp_path):
    store = EntryStore(tmp_path / "store")
    store.store("results", "ab" * 20, b"payload")
    assert store.load("results", "ab" * 20) == b"payload"
    assert store.load("results", "cd" * 20) is None
    assert [p.name for p in (tmp_path / "store").rglob("*") if p.is_file()] == ["ab" * 19]   # no temporary left
    read_only = tmp_path / "read-only"
    read_only.mkdir()
    read_only.chmod(0o500)
    if os.geteuid() != 0:   # root writes anyway
        EntryStore(read_only).store("results", "ab" * 20, b"payload")   # a cache that cannot be written is skipped
        assert EntryStore(read_only).load("results", "ab" * 20) is None


def test_a_requirements_file_is_read_again_when_a_file_it_includes_changes(tmp_path, capsys):
    repo = write_tree(tmp_path / "repo", {"requirements.txt": "numpy\n-r base.in\n", "base.in": "torch\n"})
    cache = tmp_path / "cache"
    assert audit_json(capsys, repo, "--cache-dir", cache)["findings"] == []
    (repo / "base.in").write_text("torch\ntensorrt-llm==0.9\n")
    assert [f["rule"] for f in audit_json(capsys, repo, "--cache-dir", cache)["findings"]] == ["RA100"]


def test_two_runs_can_share_a_cache_directory(tmp_path):
    """Each writes every entry through a temporary file and os.replace: neither sees half an entry."""
    command = [sys.executable, "-m", "auditor", str(FIXTURES), "--format", "json", "--no-progress", "-j", "1",
               "--fail-on", "never", "--cache-dir", str(tmp_path / "cache")]
    runs = [subprocess.Popen(command, stdout=subprocess.PIPE, text=True) for _ in range(3)]
    outputs = [json.loads(run.communicate()[0]) for run in runs]
    assert all(run.returncode == 0 for run in runs)
    warm = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=True)
    assert outputs[0] == outputs[1] == outputs[2] == json.loads(warm.stdout)
    assert not [p for p in (tmp_path / "cache").rglob(".tmp-*")]


def aged(root: Path) -> Path:
    """Every file's mtime an hour back: a file written in the last seconds is never trusted by its stat."""
    old = os.stat(root).st_mtime - 3600
    for path in root.rglob("*"):
        os.utime(path, (old, old))
    return root


def test_an_unchanged_tree_reuses_the_whole_report_and_an_included_requirement_is_watched(tmp_path, capsys, scans):
    import shutil

    repo = aged(Path(shutil.copytree(FIXTURES / "llm_serving", tmp_path / "repo")))
    cache = tmp_path / "cache"
    cold = audit_json(capsys, repo, "--cache-dir", cache)
    assert "tensorrt-llm" in json.dumps(cold)
    del scans[:]
    assert audit_json(capsys, repo, "--cache-dir", cache) == cold
    assert scans == []
    # requirements.txt is unchanged, but the file it includes (-r) now asks for a CUDA-only package
    with open(repo / "requirements-common.txt", "a") as handle:
        handle.write("cupy-cuda12x==13.1.0\n")
    aged(repo)
    changed = audit_json(capsys, repo, "--cache-dir", cache)
    assert sorted(scans) == ["requirements-common.txt", "requirements.txt"]
    assert {(f["path"], f["line"]) for f in changed["findings"] if "cupy" in f["message"].lower()} \
        == {("requirements-common.txt", 9)}
    assert changed == audit_json(capsys, repo, "--no-cache")


def test_an_edit_behind_an_old_mtime_is_still_seen(tmp_path, capsys, scans):
    """Same size, mtime put back: the inode's change time still tells (what `touch -d` cannot hide)."""
    repo = aged(write_tree(tmp_path / "repo", {"a.py": "import pynvml\n", "b.py": "import torch\n"}))
    cache = tmp_path / "cache"
    audit_json(capsys, repo, "--cache-dir", cache)
    before = os.stat(repo / "a.py")
    (repo / "a.py").write_text("import pycuda\n")          # the same 14 bytes
    os.utime(repo / "a.py", ns=(before.st_atime_ns, before.st_mtime_ns))
    del scans[:]
    report = audit_json(capsys, repo, "--cache-dir", cache)
    assert scans == ["a.py"]
    assert {(f["path"], f["line"]) for f in report["findings"]} == {(f["path"], f["line"]) for f in
                                                                    audit_json(capsys, repo, "--no-cache")["findings"]}
    assert any("pycuda" in f["message"].lower() for f in report["findings"])


def test_unchanged_files_are_not_read_again(tmp_path, capsys, scans, monkeypatch):
    """One file edited in a tree of many: the warm run reads only that one (the others found by their stat),
    for the scan and for the macro pre-pass alike."""
    import auditor.run.runner.macros

    files = {f"k{n}.cu": KERNEL for n in range(6)} | {"arch.h": ARCH_HEADER} | {f"m{n}.py": "import pynvml\n"
                                                                                for n in range(6)}
    repo = aged(write_tree(tmp_path / "repo", files))
    cache = tmp_path / "cache"
    cold = audit_json(capsys, repo, "--cache-dir", cache)
    (repo / "m0.py").write_text("import pynvml\nimport pycuda\n")
    old = os.stat(repo / "m1.py").st_mtime
    os.utime(repo / "m0.py", (old, old))      # only this file's stat changes (aging all would touch every ctime)
    read: list[str] = []
    real_read, real_open = auditor.run.runner.workers.read_bytes, open

    def reading(source, *args):
        read.append(source.path)
        return real_read(source, *args)

    def opening(path, *args, **kwargs):
        read.append(Path(path).name)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(auditor.run.runner.workers, "read_bytes", reading)
    monkeypatch.setattr(auditor.run.runner.macros, "open", opening, raising=False)
    del scans[:]
    warm = audit_json(capsys, repo, "--cache-dir", cache)
    assert read == ["m0.py"] and scans == ["m0.py"]
    assert len(warm["findings"]) == len(cold["findings"]) + 1
    assert all(f["guarded"] for f in warm["findings"] if f["category"] == "ptx_inline_asm")


def test_a_file_written_just_now_is_not_trusted_by_its_stat(tmp_path, capsys, scans):
    repo = write_tree(tmp_path / "repo", {"a.py": "import pynvml\n"})   # mtime: now
    cache = tmp_path / "cache"
    audit_json(capsys, repo, "--cache-dir", cache)
    assert not (cache / "reports").exists()
    del scans[:]
    audit_json(capsys, repo, "--cache-dir", cache)
    assert scans == []    # found by content (read and hashed), not by stat


def test_planted_report_index_and_macro_entries_of_the_wrong_shape_are_misses(tmp_path, capsys, scans):
    """Entries with a valid checksum but another shape (as a tool or a person with write access to the cache
    could leave) decode to nothing: the run scans again and its output is the cold one."""
    from auditor.run.runner.cache import FORMAT, EntryStore

    repo = aged(write_tree(tmp_path / "repo", {"arch.h": ARCH_HEADER, "kernel.cu": KERNEL, "a.py": "import pynvml\n"}))
    cache = tmp_path / "cache"
    cold = audit_json(capsys, repo, "--cache-dir", cache)
    planted = [p for namespace in ("reports", "index", "macros") for p in entries(cache / namespace)]
    assert {p.relative_to(cache).parts[0] for p in planted} == {"reports", "index", "macros"}
    for path in planted:
        payload = b'{"findings": [{"__reduce__": "os.system"}], "x": 1}'
        path.write_bytes(FORMAT + EntryStore(cache).checksum(payload) + payload)   # signed with the user's key
    del scans[:]
    assert audit_json(capsys, repo, "--cache-dir", cache) == cold
    assert sorted(scans) == []   # the per-file results (by content) were intact: found after reading each file
