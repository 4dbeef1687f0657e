"""The history database: check --record appends a run; two processes recording at once both land; a killed run
leaves no half row; a newer or damaged database is refused with exit 2 and left byte for byte as it was; reads
never write."""
from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from auditor.cli.app import main
from auditor.history.record import RuleCount, RunRecord, Where
from auditor.history.store import SCHEMA_VERSION, StoreError, open_store
from tests.conftest import REPO
from tests.gitrepo import GIT_ENV
from tests.history_repo import commit, git


@pytest.fixture
def repo(tmp_path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    commit(root, {"requirements.txt": "torch\npynvml\n", "app.py": "import torch\n"}, "one", "2026-01-01T00:00:00Z")
    return root


def rows(db: Path, sql: str = "SELECT commit_id, verdict, live, source FROM runs ORDER BY id") -> list[tuple]:
    with sqlite3.connect(db) as connection:
        return connection.execute(sql).fetchall()


def record(root: Path, db: Path, *more: str) -> int:
    return main([str(root), "--record", "--db", str(db), "--format", "json", "-o", str(db.parent / "r.json"),
                 "--no-progress", "-j", "1", *more])


def test_check_record_appends_the_run_with_its_counts_and_dependencies(repo, tmp_path):
    db = tmp_path / "h.db"
    head = git(repo, "rev-parse", "HEAD").strip()
    assert record(repo, db) == 1                       # pynvml fails the run; it is recorded all the same
    assert rows(db) == [(head, "needs-port", 1, "check")]
    assert rows(db, "SELECT rule, name, first_site, guarded FROM dependencies") == [
        ("RA112", "pynvml", "requirements.txt:2", 0)]
    assert rows(db, "SELECT rule, disposition, severity, n FROM counts") == [("RA112", "live", "high", 1)]
    with open_store(db, readonly=True) as store:
        last = store.last_run(rows(db, "SELECT repo FROM runs")[0][0])
    assert last is not None and last.where.commit == head and last.live == 1
    assert rows(db, "PRAGMA journal_mode") == [("wal",)]
    assert rows(db, "PRAGMA user_version") == [(SCHEMA_VERSION,)]


def test_a_changed_working_tree_is_recorded_as_no_commit_s_run(repo, tmp_path, capsys):
    """The scan read files HEAD does not hold: the run is kept (with a note), but never as HEAD's point."""
    db = tmp_path / "h.db"
    (repo / "monitor.py").write_text("import pynvml\n")              # untracked, not ignored
    assert record(repo, db) == 1
    assert "recorded as no commit's" in capsys.readouterr().err
    assert rows(db) == [("", "needs-port", 2, "check")]
    (repo / "monitor.py").unlink()
    assert record(repo, db) == 1
    head = git(repo, "rev-parse", "HEAD").strip()
    with open_store(db, readonly=True) as store:
        key = rows(db, "SELECT repo FROM runs")[0][0]
        assert [(p.where.commit, p.live) for p in store.points(key)] == [(head, 1)]


def test_record_needs_a_git_repository(tmp_path):
    (tmp_path / "app.py").write_text("import pynvml\n")
    assert record(tmp_path, tmp_path / "h.db") == 2


@pytest.mark.slow
def test_two_processes_recording_at_once_both_land(repo, tmp_path):
    db = tmp_path / "h.db"
    command = [sys.executable, "-m", "auditor", str(repo), "--record", "--db", str(db), "--format", "json",
               "--no-progress", "-j", "1", "--no-cache"]
    started = [subprocess.Popen([*command, "-o", str(tmp_path / f"{n}.json")], cwd=REPO, env=GIT_ENV,
                                stderr=subprocess.PIPE) for n in range(2)]
    results = [(p.wait(timeout=120), p.stderr.read().decode() if p.stderr else "") for p in started]
    assert [code for code, _ in results] == [1, 1], results
    assert [r[1:] for r in rows(db)] == [("needs-port", 1, "check"), ("needs-port", 1, "check")]
    assert rows(db, "SELECT count(*) FROM counts") == [(2,)]


class _Killer:
    """A count whose reading kills the process in the middle of the run's transaction."""

    rule, disposition, severity = "RA112", "live", "critical"

    @property
    def count(self) -> int:
        import os
        import signal

        os.kill(os.getpid(), signal.SIGKILL)
        return 1


def _run(commit_id: str, counts=()) -> RunRecord:
    return RunRecord(Where("repo-key", "repo", commit_id, "2026-01-01T00:00:00+00:00", "A"), "2026-01-02T00:00:00+00:00",
                     "0", "digest", "ready", 0, 0.0, 0.0, 100.0, True, tuple(counts))


def test_a_killed_run_leaves_no_half_row(tmp_path):
    db = tmp_path / "h.db"
    with open_store(db) as store:
        store.record(_run("a" * 40, [RuleCount("RA112", "live", "critical", 1)]))
    script = textwrap.dedent(f"""
        from auditor.history.store import open_store
        from tests.test_history_store import _Killer, _run
        with open_store({str(db)!r}) as store:
            store.record(_run("b" * 40, [_Killer()]))
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, timeout=60, check=False)
    assert done.returncode == -9, done.stderr
    with open_store(db, readonly=True) as store:
        assert [p.where.commit for p in store.points("repo-key")] == ["a" * 40]
    assert rows(db, "SELECT count(*) FROM counts") == [(1,)]


def test_an_interrupted_record_rolls_back(tmp_path):
    db = tmp_path / "h.db"

    class Interrupt(_Killer):
        @property
        def count(self) -> int:
            raise KeyboardInterrupt

    with open_store(db) as store:
        with pytest.raises(KeyboardInterrupt):
            store.record(_run("b" * 40, [Interrupt()]))   # type: ignore[list-item]
        store.record(_run("c" * 40))
    assert [r[0] for r in rows(db)] == ["c" * 40]


def test_a_database_from_a_newer_rocm_audit_is_refused_and_left_as_it_is(repo, tmp_path, capsys):
    db = tmp_path / "h.db"
    with sqlite3.connect(db) as connection:
        connection.execute("CREATE TABLE runs_v9 (x)")
        connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 7}")
    connection.close()
    before = db.read_bytes()
    listing = sorted(p.name for p in tmp_path.iterdir())
    assert record(repo, db) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "newer rocm-audit" in err and str(db) in err
    assert main(["history", str(repo), "--db", str(db)]) == 2
    assert db.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "r.json") == listing   # no -wal, no -journal


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_a_damaged_database_is_never_overwritten(repo, tmp_path, capsys, damage):
    db = tmp_path / "h.db"
    if damage == "garbage":
        db.write_bytes(b"this is not a database\n" * 200)
    else:
        assert record(repo, db) == 1
        for n in range(30):
            with open_store(db) as store:
                store.record(_run(f"{n:040x}", [RuleCount(f"RA{n}", "live", "high", n)] * 50))
        data = db.read_bytes()
        db.write_bytes(data[:100] + b"\xff" * 4000 + data[4100:])   # the schema page and beyond overwritten
        for sidecar in ("h.db-wal", "h.db-shm"):
            (tmp_path / sidecar).unlink(missing_ok=True)
    before = db.read_bytes()
    capsys.readouterr()
    assert record(repo, db) == 2
    err = capsys.readouterr().err
    assert "cannot be read" in err and "left as it is" in err and str(db) in err
    assert main(["history", str(repo), "--db", str(db)]) == 2
    assert db.read_bytes() == before


def test_reads_never_write(repo, tmp_path):
    missing = tmp_path / "none.db"
    with open_store(missing, readonly=True) as store:
        assert store.points("x") == [] and store.last_run("x") is None
    assert not missing.exists()
    db = tmp_path / "h.db"
    assert record(repo, db) == 1
    before = db.read_bytes()
    with open_store(db, readonly=True) as store:
        assert len(store.points(rows(db, "SELECT repo FROM runs")[0][0])) == 1
        with pytest.raises(StoreError):
            store.record(_run("d" * 40))
    assert db.read_bytes() == before


def test_the_html_report_shows_progress_without_writing_the_database(repo, tmp_path):
    db = tmp_path / "h.db"
    assert main(["history", str(repo), "--db", str(db), "--format", "json", "-o", str(tmp_path / "h.json")]) == 0
    before = db.read_bytes()
    page = tmp_path / "r.html"
    assert main([str(repo), "--db", str(db), "--html", str(page), "--format", "json", "-o", str(tmp_path / "r.json"),
                 "-j", "1"]) == 1
    text = page.read_text()
    assert 'id="progress"' in text and text.count('class="point"') == 1
    assert db.read_bytes() == before
    plain = tmp_path / "plain.html"
    assert main([str(repo), "--db", str(tmp_path / "empty.db"), "--html", str(plain), "--format", "json", "-o",
                 str(tmp_path / "p.json"), "-j", "1"]) == 1
    assert 'id="progress"' not in plain.read_text() and not (tmp_path / "empty.db").exists()
    assert json.loads((tmp_path / "r.json").read_text())["summary"]
