"""Caches a tree cannot reach: entries are authenticated with a per-user secret kept outside
any scanned tree, so an entry planted by someone who can compute every cache key is a miss; and a cache
directory inside a scanned path is refused, even from the command line."""
import json
import os
import stat

import pytest

from auditor.run.runner.cache import EntryStore, result_cache
from auditor.run.runner.cachetrust import KEY_BYTES, cache_secret, secret_path
from auditor.cli.app import main
from auditor.match.rulebook import load_rulebook
from auditor.types import SourceFile
from tests.gitrepo import GitRepo

SOURCE = "import tensorrt_llm\n"


def plant_clean_result(cache, repo, secret: bytes | None) -> None:
    """A cached result saying app.py has no findings, under the key a scan computes for it, signed with
    `secret` (None: the user's own)."""
    results = result_cache(cache, load_rulebook(), 16 * 1024 * 1024)
    store = EntryStore(cache) if secret is None else EntryStore(cache, secret)
    key = results.key(SourceFile("app.py", str(repo / "app.py"), "python"), SOURCE.encode())
    payload = json.dumps({"path": "app.py", "kind": "python"}).encode()
    store.store("results", key, payload)


def check(capfd, *args):
    code = main([*map(str, args), "--format", "json", "--no-progress", "-j", "1"])
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def test_an_entry_planted_without_the_users_secret_is_a_miss(tmp_path, capfd):
    repo = tmp_path / "repo"
    GitRepo(repo, {"app.py": SOURCE})
    cache = tmp_path / "cache"
    plant_clean_result(cache, repo, secret=b"\1" * KEY_BYTES)   # keys are computable offline; the MAC is not
    code, out, _ = check(capfd, repo, "--cache-dir", cache)
    assert code == 1
    assert [(f["path"], f["rule"]) for f in json.loads(out)["findings"]] == [("app.py", "RA100")]
    # the control: the same entry signed with the user's own key is read back (so the key and path were right)
    other = tmp_path / "cache2"
    plant_clean_result(other, repo, secret=None)
    code, out, _ = check(capfd, repo, "--cache-dir", other)
    assert json.loads(out)["findings"] == [] and code == 0


def test_the_secret_is_private_and_outside_the_tree(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "home-state"))
    cache_secret.cache_clear()
    try:
        key = cache_secret()
        path = secret_path()
        assert key is not None and len(key) == KEY_BYTES and path.read_bytes() == key
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        cache_secret.cache_clear()
        os.chmod(path, 0o644)           # readable by others: not a secret any more, so nothing is cached
        assert cache_secret() is None
        assert EntryStore(tmp_path / "c").load("results", "a" * 40) is None
    finally:
        cache_secret.cache_clear()


@pytest.mark.parametrize("how", ["flag", "environment"])
def test_a_cache_directory_inside_the_scanned_tree_is_refused(tmp_path, capfd, monkeypatch, how):
    """A workflow caching into the checkout (`--cache-dir .cache`) would read entries the pull request
    committed there: exit 2 with one line, nothing scanned."""
    repo = GitRepo(tmp_path / "repo", {"app.py": SOURCE})
    repo.git("checkout", "-q", "-b", "pr")
    repo.commit({".cache/results/ab/cdef": "planted"})
    monkeypatch.chdir(repo.root)
    args = ["check", ".", "--diff-base", "main"]
    if how == "flag":
        args += ["--cache-dir", ".cache"]
    else:
        monkeypatch.setenv("ROCM_AUDIT_CACHE_DIR", str(repo.root / ".cache"))
    code, out, err = check(capfd, *args)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "lies inside the scanned path" in err and ".cache" in err
    monkeypatch.delenv("ROCM_AUDIT_CACHE_DIR", raising=False)
    code, _, _ = check(capfd, "check", ".", "--cache-dir", tmp_path / "outside")
    assert code == 1


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A user's home: its cache and state directories where platformdirs finds them, the key made afresh there."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home/.cache"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "home/.local/state"))
    cache_secret.cache_clear()
    yield tmp_path / "home"
    cache_secret.cache_clear()


def test_a_saved_cache_directory_never_holds_the_key(tmp_path, capfd, home):
    """A CI workflow saves the cache directory (actions/cache on `~/.cache/rocm-audit`) and restores it into
    later jobs: any job that can write that saved copy would sign a clean entry with a key found in it. The key
    lives in the state directory instead, so the saved copy holds entries and nothing that signs them."""
    repo = GitRepo(tmp_path / "repo", {"app.py": SOURCE})
    saved = home / ".cache/rocm-audit"
    code, _, _ = check(capfd, repo.root, "--cache-dir", saved)
    assert code == 1
    key = cache_secret()
    assert key is not None and secret_path().is_relative_to(home / ".local/state")
    files = [p for p in saved.rglob("*") if p.is_file()]
    assert files and not [p for p in files if key in p.read_bytes()]
    for found in files:   # whatever a 32-byte file of the saved copy holds, an entry signed with it is a miss
        if found.stat().st_size == KEY_BYTES:
            plant_clean_result(saved, repo.root, secret=found.read_bytes())
    code, out, _ = check(capfd, repo.root, "--cache-dir", saved)
    assert code == 1 and [f["rule"] for f in json.loads(out)["findings"]] == ["RA100"]


@pytest.mark.parametrize("where", ["state", "home"])
def test_a_cache_directory_holding_the_key_is_refused(tmp_path, capfd, home, where):
    repo = GitRepo(tmp_path / "repo", {"app.py": SOURCE})
    chosen = home / ".local/state" if where == "state" else home
    code, out, err = check(capfd, repo.root, "--cache-dir", chosen)
    assert code == 2 and out == ""
    assert "holds rocm-audit's cache key" in err and err.count("\n") == 1
