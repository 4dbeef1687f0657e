"""Resume with --db (the real history store): a kept report is reused only when this run would produce it: the
same commit, the same rules digest (options, the repository's own config, rocm-audit), a clean working tree; a
git URL resumes after its shallow fetch."""
import json
import os
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from auditor.history.command import repository
from auditor.history.store import open_store
from tests.conftest import write_tree
from tests.fleetrepos import PORTABLE, TRT, run_cli
from tests.gitrepo import GitRepo

pytestmark = pytest.mark.slow   # fleet runs over git repositories

TRT_IGNORED = {**TRT, ".gitignore": "build/\n.rocm-audit.toml\n"}


def fleet(*args, out: Path, db: Path) -> dict:
    """One fleet run recorded in `db`: the portfolio's rows by name."""
    code, _ = run_cli("fleet", *args, "--db", db, "--out", out, "--format", "json", "-q")
    assert code == 0
    return {r["name"]: r for r in json.loads((out / "portfolio.json").read_text(encoding="utf-8"))["repositories"]}


def recorded(db: Path, key: str) -> list[tuple[str, str, str]]:
    """(commit, rules digest, source) of every run recorded for `key`, in order."""
    with closing(sqlite3.connect(db)) as connection:
        return connection.execute("SELECT commit_id, rules_digest, source FROM runs WHERE repo = ? ORDER BY id",
                                  (key,)).fetchall()


def statuses(rows: dict) -> dict:
    return {name: row["status"] for name, row in rows.items()}


def kept(out: Path, name: str) -> dict:
    return json.loads((out / "reports" / f"{name}.json").read_text(encoding="utf-8"))


def paths(report: dict) -> set[str]:
    return {f["path"] for f in report["findings"]}


def test_resume_rescans_when_the_options_change(tmp_path):
    """--exclude changes what a scan finds: the report kept from another set of options is not reused, not even
    when the store holds a run of this commit under this run's options (the kept report is another run's)."""
    repo = GitRepo(tmp_path / "org/trt", TRT)
    out, db = tmp_path / "out", tmp_path / "h.sqlite"
    assert statuses(fleet(repo.root, out=out, db=db)) == {"trt": "scanned"}
    assert statuses(fleet(repo.root, out=out, db=db)) == {"trt": "unchanged"}
    assert "serve/engine.py" in paths(kept(out, "trt"))
    # the portfolio's --fail-on changes no report: the kept one is reused, and judged (blocked: exit 1)
    code, printed = run_cli("fleet", repo.root, "--db", db, "--out", out, "--format", "json", "-q",
                            "--fail-on", "blocked")
    assert code == 1 and statuses({r["name"]: r for r in json.loads(printed)["repositories"]}) == {"trt": "unchanged"}
    assert statuses(fleet(repo.root, "--exclude=serve/", out=out, db=db)) == {"trt": "scanned"}
    assert "serve/engine.py" not in paths(kept(out, "trt"))
    again = fleet(repo.root, out=out, db=db)
    assert statuses(again) == {"trt": "scanned"} and "serve/engine.py" in paths(kept(out, "trt"))
    runs = recorded(db, repository(repo.root)[2])
    assert [source for _, _, source in runs] == ["fleet"] * 3 and runs[0][1] == runs[2][1] != runs[1][1]


def test_resume_rescans_for_another_rocm_audit_or_a_config_outside_the_commit(tmp_path):
    """The digest the run would use is the repository's own: a gitignored .rocm-audit.toml (no change git sees)
    changes it; a run recorded by another rocm-audit (another digest in the store and the stamp) is scanned."""
    repo = GitRepo(tmp_path / "org/trt", TRT_IGNORED)
    out, db = tmp_path / "out", tmp_path / "h.sqlite"
    assert statuses(fleet(repo.root, out=out, db=db)) == {"trt": "scanned"}
    write_tree(repo.root, {".rocm-audit.toml": 'exclude = ["serve/"]\n'})
    assert repo.git("status", "--porcelain") == ""
    assert statuses(fleet(repo.root, out=out, db=db)) == {"trt": "scanned"}
    assert "serve/engine.py" not in paths(kept(out, "trt"))
    assert statuses(fleet(repo.root, out=out, db=db)) == {"trt": "unchanged"}
    # the same commit and tree, recorded by a rocm-audit whose code or rules differed
    stamp = out / "resume/trt.json"
    older = {**json.loads(stamp.read_text()), "rules_digest": "0" * 24}
    stamp.write_text(json.dumps(older))
    with closing(sqlite3.connect(db)) as connection, connection:
        connection.execute("UPDATE runs SET rules_digest = ?", ("0" * 24,))
    assert statuses(fleet(repo.root, out=out, db=db)) == {"trt": "scanned"}


def test_a_changed_working_tree_is_scanned_and_not_taken_for_the_commit(tmp_path):
    """A modified tracked file or an untracked one (not ignored) is scanned; an ignored one is not a change. A
    dirty tree's run is recorded as no commit's (history and resume never reuse it), so once the tree is clean
    again the commit is scanned again rather than given the dirty tree's report."""
    repo = GitRepo(tmp_path / "org/portable", {**PORTABLE, ".gitignore": "build/\n"})
    out, db = tmp_path / "out", tmp_path / "h.sqlite"
    head = repo.git("rev-parse", "HEAD").strip()
    assert statuses(fleet(repo.root, out=out, db=db)) == {"portable": "scanned"}
    write_tree(repo.root, {"build/gen.py": "import pynvml\n"})           # ignored: the scan does not read it
    assert statuses(fleet(repo.root, out=out, db=db)) == {"portable": "unchanged"}
    write_tree(repo.root, {"app/monitor.py": "import pynvml\n\npynvml.nvmlInit()\n"})   # untracked
    rows = fleet(repo.root, out=out, db=db)
    assert statuses(rows) == {"portable": "scanned"} and rows["portable"]["commit"] == head
    assert rows["portable"]["working_tree_changed"] is True       # the row says its report is not the commit's
    assert "app/monitor.py" in paths(kept(out, "portable"))
    assert statuses(fleet(repo.root, out=out, db=db)) == {"portable": "scanned"}   # still dirty
    (repo.root / "app/monitor.py").unlink()
    write_tree(repo.root, {"app/model.py": "import pynvml\n"})           # a tracked file modified
    assert statuses(fleet(repo.root, out=out, db=db)) == {"portable": "scanned"}
    assert paths(kept(out, "portable")) >= {"app/model.py"}
    repo.git("checkout", "--", "app/model.py")
    clean = fleet(repo.root, out=out, db=db)
    assert statuses(clean) == {"portable": "scanned"} and clean["portable"]["verdict"] == "ready"
    assert clean["portable"]["working_tree_changed"] is False
    assert "app/model.py" not in paths(kept(out, "portable"))
    key = repository(repo.root)[2]
    assert [commit for commit, _, _ in recorded(db, key)] == [head, "", "", "", head]
    with open_store(db, readonly=True) as store:
        assert [(p.where.commit, p.live) for p in store.points(key)] == [(head, 0)]   # the clean tree's, last


def test_git_url_resumes_after_its_fetch(tmp_path):
    """A URL is fetched each run; when the fetched commit and the digest are the kept report's, the task answers
    `unchanged` and the driver gives the row the kept report."""
    upstream = GitRepo(tmp_path / "upstream/trt-serving", TRT)
    url = upstream.root.as_uri()
    out, db, cache = tmp_path / "out", tmp_path / "h.sqlite", tmp_path / "cache"
    first = fleet(url, "--cache-dir", cache, out=out, db=db)
    assert statuses(first) == {"trt-serving": "scanned"}
    report = out / "reports/trt-serving.json"
    written = report.stat().st_mtime_ns
    second = fleet(url, "--cache-dir", cache, out=out, db=db)
    assert statuses(second) == {"trt-serving": "unchanged"}
    assert report.stat().st_mtime_ns == written
    same = ("verdict", "effort_low_days", "effort_high_days", "top_blocker", "commit", "report")
    assert {k: second["trt-serving"][k] for k in same} == {k: first["trt-serving"][k] for k in same}
    upstream.commit({"serve/monitor.py": "import pynvml\n"}, "monitor")
    third = fleet(url, "--cache-dir", cache, out=out, db=db)
    assert statuses(third) == {"trt-serving": "scanned"}
    assert third["trt-serving"]["commit"] == upstream.git("rev-parse", "HEAD").strip() != first["trt-serving"]["commit"]
    assert "serve/monitor.py" in paths(kept(out, "trt-serving"))
    assert statuses(fleet(url, "--cache-dir", cache, "--exclude=serve/", out=out, db=db)) == {"trt-serving": "scanned"}
    with open_store(db, readonly=True) as store:
        assert [p.where.commit for p in store.points(f"url:{url}")] == [first["trt-serving"]["commit"],
                                                                        third["trt-serving"]["commit"]]


def test_the_working_tree_check_runs_none_of_the_repository_s_programs(tmp_path):
    """The scanned repository's config names a clean filter and an fsmonitor program: deciding whether its tree
    changed (a tracked file touched, so git must compare its content) runs neither and writes no index."""
    marker = tmp_path / "ran"
    script = tmp_path / "program.sh"
    script.write_text(f"#!/bin/sh\necho \"$0 $*\" >> {marker}\ncat\n")
    script.chmod(0o755)
    repo = GitRepo(tmp_path / "org/portable", {**PORTABLE, ".gitattributes": "*.py filter=evil\n"})
    repo.git("config", "filter.evil.clean", str(script))
    repo.git("config", "filter.evil.required", "true")
    repo.git("config", "core.fsmonitor", str(script))
    out, db = tmp_path / "out", tmp_path / "h.sqlite"
    assert statuses(fleet(repo.root, out=out, db=db)) == {"portable": "scanned"}
    model = repo.root / "app/model.py"
    stat = model.stat()
    os.utime(model, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))   # same content, newer time
    index = (repo.root / ".git/index").read_bytes()
    assert statuses(fleet(repo.root, out=out, db=db)) == {"portable": "unchanged"}
    assert not marker.exists()
    assert (repo.root / ".git/index").read_bytes() == index


def test_a_tree_git_cannot_answer_about_in_time_counts_as_changed(tmp_path):
    """The working-tree check is bounded: git's answer not in time (here: no time at all) means changed, so the
    repository is scanned rather than resumed; a clean tree answered in time is unchanged."""
    from auditor.util.vcs import working_tree_changed
    from auditor.util.vcs import GitError, git

    repo = GitRepo(tmp_path / "portable", PORTABLE)
    assert working_tree_changed(repo.root, timeout=60) is False
    assert working_tree_changed(repo.root, timeout=1e-9) is True
    with pytest.raises(GitError, match="git status: no answer within"):
        git(repo.root, "status", timeout=1e-9)


def test_a_run_with_a_file_it_could_not_scan_is_scanned_again(tmp_path):
    """An incomplete run (here a pyproject.toml that is not TOML; as well a file over its time budget) is not
    reused: what made it incomplete may pass."""
    repo = GitRepo(tmp_path / "org/trt", {**TRT, "pyproject.toml": "[project\nname = 'trt'\n"})
    out, db = tmp_path / "out", tmp_path / "h.sqlite"
    assert statuses(fleet(repo.root, out=out, db=db)) == {"trt": "scanned"}
    assert kept(out, "trt")["summary"]["files_failed"] == 1
    assert statuses(fleet(repo.root, out=out, db=db)) == {"trt": "scanned"}
    with closing(sqlite3.connect(db)) as connection:
        assert [complete for complete, in connection.execute("SELECT complete FROM runs")] == [0, 0]
