"""What fleet touches besides the repositories it is given: a repository found in its clone directory is never
fetched into (git would obey that repository's config), its cache never lies inside a git checkout, and a link in
a folder of repositories that leads out of that folder is not followed."""
import hashlib
import json
import subprocess

import pytest

from auditor.cli.fleet.sources import display_name
from tests.conftest import fast_first, write_tree
from tests.fleetrepos import PORTABLE, TRT, run_fleet
from tests.gitrepo import GitRepo

pytestmark = pytest.mark.slow   # fleet runs over git repositories


def plant_bare_repository(path, marker):
    """A bare repository whose config runs a command (writing `marker`) when git fetches into it over ssh."""
    subprocess.run(["git", "init", "--quiet", "--bare", str(path)], check=True)
    subprocess.run(["git", "-C", str(path), "config", "core.sshCommand", f"touch {marker}; false"], check=True)


def test_a_repository_planted_in_the_clone_directory_is_never_fetched_into(tmp_path):
    """Whoever can write the cache directory (a restored CI cache) plants the bare repository fleet used to
    reuse for a URL, with `core.sshCommand` set: the fetch goes to a new repository, and the command never runs."""
    cache, marker = tmp_path / "cache", tmp_path / "MARKER"
    url = "ssh://git@127.0.0.1:9/org/kern.git"   # nothing listens: the fetch fails, but must fail by itself
    digest = hashlib.sha256(url.encode()).hexdigest()[:16]
    plant_bare_repository(cache / "fleet-clones" / f"{display_name(url)}-{digest}.git", marker)
    code, portfolio = run_fleet(url, "--out", tmp_path / "out", "--cache-dir", cache, "--timeout", "60")
    assert not marker.exists()
    row, = portfolio["repositories"]
    assert code == 2 and row["status"] == "failed" and row["reason"].startswith(f"cannot fetch {url}")
    assert sorted(p.name for p in (cache / "fleet-clones").iterdir()) == \
        [f"{display_name(url)}-{digest}.git"]   # the planted one, untouched; nothing of this run left behind


def test_a_link_in_place_of_the_clone_directory_is_not_fetched_into(tmp_path):
    upstream = GitRepo(tmp_path / "upstream/trt", TRT)
    cache, elsewhere = tmp_path / "cache", tmp_path / "elsewhere"
    elsewhere.mkdir()
    cache.mkdir()
    (cache / "fleet-clones").symlink_to(elsewhere)
    code, portfolio = run_fleet(upstream.root.as_uri(), "--out", tmp_path / "out", "--cache-dir", cache)
    row, = portfolio["repositories"]
    assert code == 2 and row["status"] == "failed" and "is a link or not this user's directory" in row["reason"]
    assert list(elsewhere.iterdir()) == []


# one check over the current directory and the scanned paths (cli/fleet/clones.py): the second in the full run
@pytest.mark.parametrize("where", fast_first(["current directory", "scanned repository"]))
def test_a_cache_inside_a_git_checkout_is_refused(tmp_path, capsys, monkeypatch, where):
    """The README's workflow kept ROCM_AUDIT_CACHE_DIR in the checkout (`.rocm-audit-state/cache`): a pull
    request's commits choose what is there. fleet refuses it before anything runs (exit 2, one line)."""
    checkout = GitRepo(tmp_path / "checkout", PORTABLE)
    other = GitRepo(tmp_path / "org/portable", PORTABLE)
    monkeypatch.chdir(checkout.root if where == "current directory" else tmp_path)
    monkeypatch.setenv("ROCM_AUDIT_CACHE_DIR", str(checkout.root / ".rocm-audit-state/cache"))
    scanned = other.root if where == "current directory" else checkout.root
    code, portfolio = run_fleet(scanned, "--out", tmp_path / "out")
    err = capsys.readouterr().err
    assert (code, portfolio) == (2, {})
    assert f"lies inside the git checkout {checkout.root}" in err and err.count("\n") == 1
    assert not (checkout.root / ".rocm-audit-state").exists()
    monkeypatch.setenv("ROCM_AUDIT_CACHE_DIR", str(tmp_path / "outside-cache"))
    assert run_fleet(scanned, "--out", tmp_path / "out")[0] == 0


def test_a_link_out_of_the_folder_given_is_a_failed_row_and_its_text_is_never_read(tmp_path):
    """`fleet ORG/` scans ORG's subdirectories; one that is a link to a directory outside ORG (a home directory,
    a secrets folder) is not followed: its row fails and says why, and no report quotes its files."""
    secret = "SECRET-TOKEN-41f3"
    write_tree(tmp_path / "outside", {"setup.py": f"import tensorrt_llm  # {secret}\n"})
    org = tmp_path / "org"
    GitRepo(org / "portable", PORTABLE)
    (org / "linked").symlink_to(tmp_path / "outside", target_is_directory=True)
    code, portfolio = run_fleet(org, "--out", tmp_path / "out")
    rows = {r["name"]: r for r in portfolio["repositories"]}
    assert (rows["portable"]["status"], rows["portable"]["verdict"]) == ("scanned", "ready")
    assert rows["linked"]["status"] == "failed"
    assert rows["linked"]["reason"] == "a link that leads out of the folder given: not followed"
    assert code == 0
    written = [p.read_text(encoding="utf-8") for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert written and not [text for text in written if secret in text]
    assert secret not in json.dumps(portfolio)


def test_a_task_answer_that_is_not_a_plain_outcome_of_that_task_is_refused():
    """What a task's process or a Dask worker sends back is JSON, checked field by field against the task it
    answers: a pickle, another repository's row, or a field of the wrong type is no outcome (the row fails)."""
    import pickle
    from dataclasses import asdict

    from auditor.cli.fleet.tasks import Outcome, RepoTask, outcome_from_answer

    task = RepoTask("portable", "/src/portable", "path", 60.0, (), "/tmp/clones")
    good = asdict(Outcome("portable", "/src/portable", "scanned", commit="a" * 40, repo_key="git:x:.",
                          report={"summary": {"verdict": "ready"}}))
    assert outcome_from_answer(json.dumps(good), task) == Outcome(**good)
    forged = [pickle.dumps(Outcome(**good)), json.dumps([good]), json.dumps({**good, "name": "other"}),
              json.dumps({**good, "source": "/elsewhere"}), json.dumps({**good, "status": "ok"}),
              json.dumps({**good, "seconds": True}), json.dumps({**good, "dirty": 1}),
              json.dumps({**good, "commit": "HEAD; touch x"}), json.dumps({**good, "report": "ready"}),
              json.dumps({**good, "extra": 1}), json.dumps({k: v for k, v in good.items() if k != "record"})]
    assert [outcome_from_answer(answer, task) for answer in forged] == [None] * len(forged)
