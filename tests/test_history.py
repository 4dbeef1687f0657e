"""`rocm-audit history` on real git repositories: which commits become points, what each point counts, the
events and deltas between them, reuse of recorded points, shallow clones and partial trees."""
from __future__ import annotations

import csv
import io
import json

import pytest

from auditor.cli.app import main
from auditor.history.gitobjects import Commit
from auditor.history.sample import sample
from tests.history_repo import build, commit, git

pytestmark = pytest.mark.slow   # scans of git histories

DAY = {"start": "2026-01-01", "deps": "2026-02-01", "merge": "2026-03-01", "cleanup": "2026-04-01"}


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("history") / "project"
    return root, build(root)


@pytest.fixture(scope="module")
def recorded(project, tmp_path_factory):
    """A database holding the project's points (the tests that only read them reuse it)."""
    db = tmp_path_factory.mktemp("db") / "h.db"
    assert main(["history", str(project[0]), "--db", str(db), "--format", "json", "-o", str(db.with_suffix(".json")),
                 "-j", "1"]) == 0
    return db


def history(capsys, *args) -> tuple[int, str, str]:
    code = main(["history", *map(str, args), "--no-progress", "-j", "1"])
    out = capsys.readouterr()
    return code, out.out, out.err


def as_json(capsys, *args) -> dict:
    code, out, err = history(capsys, *args, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def test_points_follow_the_first_parent_history_with_exact_counts(project, tmp_path, capsys):
    root, ids = project
    data = as_json(capsys, root, "--db", tmp_path / "h.db")
    points = data["points"]
    assert [p["commit"] for p in points] == [ids["start"], ids["deps"], ids["merge"], ids["cleanup"]]
    assert ids["branch"] not in [p["commit"] for p in points]       # the merged branch's own commit is not first-parent
    assert [p["committed_at"][:10] for p in points] == list(DAY.values())
    assert [p["verdict"] for p in points] == ["ready", "blocked", "blocked", "blocked"]
    assert [p["live"] for p in points] == [0, 2, 3, 1]
    assert [p["by_rule"] for p in points] == [{}, {"RA100": 1, "RA112": 1}, {"RA100": 1, "RA112": 1, "RA303": 1},
                                              {"RA303": 1}]
    assert [p["dependencies"] for p in points] == [[], ["pynvml", "tensorrt_llm"], ["pynvml", "tensorrt_llm"], []]
    assert all(p["complete"] for p in points)
    assert points[0]["effort_high_days"] == 0 and points[1]["effort_high_days"] > 0
    assert data["repository"] == ids["start"]                       # keyed by the root commit


def test_events_and_deltas_name_the_commit_the_package_and_the_author(project, recorded, capsys):
    root, ids = project
    data = as_json(capsys, root, "--db", recorded)
    headline = [(e["kind"], e.get("package"), e["commit"]) for e in data["events"] if e["kind"] != "rule-changed"]
    assert headline == [
        ("dependency-added", "pynvml", ids["deps"]),
        ("dependency-added", "tensorrt_llm", ids["deps"]),
        ("verdict-changed", None, ids["deps"]),
        ("dependency-removed", "pynvml", ids["cleanup"]),
        ("dependency-removed", "tensorrt_llm", ids["cleanup"]),
    ]
    added = data["events"][0]
    assert added["author"] == "Ada Lovelace" and added["site"] == "requirements.txt:2"
    verdict = next(e for e in data["events"] if e["kind"] == "verdict-changed")
    assert (verdict["before"], verdict["after"]) == ("ready", "blocked")
    rules = [(e["rule"], e["before"], e["after"], e["commit"]) for e in data["events"] if e["kind"] == "rule-changed"]
    assert rules == [("RA100", 0, 1, ids["deps"]), ("RA112", 0, 1, ids["deps"]), ("RA303", 0, 1, ids["merge"]),
                     ("RA100", 1, 0, ids["cleanup"]), ("RA112", 1, 0, ids["cleanup"])]
    assert data["delta"]["live"] == 1 and data["delta"]["since"].startswith("2026-01-01")
    assert data["delta"]["movers"] == [{"rule": "RA303", "delta": 1}]


def test_terminal_trend_shows_sparklines_and_the_sentences_a_lead_reads(project, recorded, capsys):
    root, ids = project
    code, out, _ = history(capsys, root, "--db", recorded)
    assert code == 0
    assert "History of project: 4 points, 2026-01-01 … 2026-04-01" in out
    assert "live     ▁▆█▃  0 → 1" in out
    assert "verdict  RBBB" in out
    assert "since 2026-01-01: live +1," in out
    assert f"new CUDA-only dependency pynvml in {ids['deps'][:7]} (2026-02-01, by Ada Lovelace)" in out
    assert f"pynvml removed in {ids['cleanup'][:7]} (2026-04-01, by Grace Hopper)" in out
    assert f"verdict ready → blocked in {ids['deps'][:7]}" in out


def test_csv_has_a_row_per_point(project, recorded, capsys):
    root, ids = project
    code, out, _ = history(capsys, root, "--db", recorded, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0
    assert [(r["commit"], r["verdict"], r["live"], r["complete"]) for r in rows] == [
        (ids["start"], "ready", "0", "1"), (ids["deps"], "blocked", "2", "1"), (ids["merge"], "blocked", "3", "1"),
        (ids["cleanup"], "blocked", "1", "1")]
    assert rows[2]["by_rule"] == "RA100=1;RA112=1;RA303=1"


def test_max_points_keeps_the_first_the_last_and_every_tag(project, recorded, capsys):
    root, ids = project
    data = as_json(capsys, root, "--db", recorded, "--max-points", "3")
    assert [p["commit"] for p in data["points"]] == [ids["start"], ids["deps"], ids["cleanup"]]


def test_since_a_date_or_a_revision_and_until(project, recorded, capsys):
    root, ids = project
    db = recorded
    assert [p["commit"] for p in as_json(capsys, root, "--db", db, "--since", "2026-02-20")["points"]] == \
        [ids["merge"], ids["cleanup"]]
    assert [p["commit"] for p in as_json(capsys, root, "--db", db, "--since", "v0.1", "--until", ids["merge"])[
        "points"]] == [ids["deps"], ids["merge"]]
    code, _, err = history(capsys, root, "--db", db, "--since", "no-such-rev")
    assert code == 2 and "no-such-rev" in err


def test_even_sampling_of_a_long_history():
    commits = [Commit(f"{i:040x}", "", "", "") for i in range(100)]
    assert [int(c.id, 16) for c in sample(commits, {}, 10)] == [0, 11, 22, 33, 44, 55, 66, 77, 88, 99]
    tagged = [int(c.id, 16) for c in sample(commits, {f"{50:040x}": "v1"}, 5)]
    assert len(tagged) == 5 and {0, 50, 99} <= set(tagged)
    assert len(sample(commits, {f"{i:040x}": f"t{i}" for i in range(1, 99)}, 6)) == 6   # tags thinned to fit


def test_points_already_recorded_are_reused(project, tmp_path, capsys, monkeypatch):
    root, ids = project
    db = tmp_path / "h.db"
    first = as_json(capsys, root, "--db", db)
    import auditor.run.pipeline

    def no_scan(*args, **kwargs):
        raise AssertionError("a recorded point was scanned again")

    monkeypatch.setattr(auditor.run.pipeline, "audit", no_scan)
    assert as_json(capsys, root, "--db", db) == first
    import sqlite3

    with sqlite3.connect(db) as connection:
        assert connection.execute("SELECT count(*) FROM runs").fetchone()[0] == 4


def test_a_shallow_clone_says_how_many_commits_it_has(project, tmp_path, capsys):
    root, ids = project
    git(tmp_path, "clone", "-q", "--depth", "2", root.as_uri(), "shallow")
    code, out, err = history(capsys, tmp_path / "shallow", "--db", tmp_path / "h.db", "--format", "json")
    assert code == 0
    assert "shallow clone: 2 commits of history available" in err
    data = json.loads(out)
    assert [p["commit"] for p in data["points"]] == [ids["merge"], ids["cleanup"]]
    assert data["repository"] == root.as_uri()             # no root commit here: keyed by the remote


def test_a_tree_that_cannot_be_scanned_completely_is_a_partial_point(tmp_path, capsys):
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    commit(root, {"app.py": "import torch\n"}, "small", "2026-01-01T00:00:00Z")
    commit(root, {"big.py": "import pynvml\n" + "x = 1\n" * 400}, "a file over the limit", "2026-01-02T00:00:00Z")
    data = as_json(capsys, root, "--db", tmp_path / "h.db", "--max-file-size", "1000")
    assert [p["complete"] for p in data["points"]] == [True, False]
    assert len(data["points"]) == 2


def test_nothing_in_the_scanned_repository_runs(tmp_path, capsys):
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    marker = tmp_path / "ran"
    (root / ".gitattributes").write_text("*.py filter=evil\n")
    git(root, "config", "filter.evil.smudge", f"touch {marker}; cat")
    git(root, "config", "filter.evil.clean", f"touch {marker}; cat")
    git(root, "config", "core.fsmonitor", f"touch {marker}; false")
    commit(root, {"app.py": "import pynvml\n"}, "one", "2026-01-01T00:00:00Z")
    marker.unlink(missing_ok=True)                          # our own `git add` ran the clean filter
    data = as_json(capsys, root, "--db", tmp_path / "h.db")
    assert data["points"][0]["dependencies"] == ["pynvml"]
    assert not marker.exists()


def test_history_needs_a_git_repository(tmp_path, capsys):
    (tmp_path / "app.py").write_text("import torch\n")
    code, _, err = history(capsys, tmp_path, "--db", tmp_path / "h.db")
    assert code == 2 and "git" in err
    assert not (tmp_path / "h.db").exists()


def test_history_flags_go_with_history(tmp_path, capsys):
    assert main([str(tmp_path), "--since", "2026-01-01"]) == 2
    assert "--since goes with" in capsys.readouterr().err
    assert main([str(tmp_path), "--format", "csv"]) == 2
    assert "--format csv goes with" in capsys.readouterr().err


def test_an_authors_name_is_shown_never_obeyed(tmp_path, capsys):
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    commit(root, {"app.py": "import torch\n"}, "one", "2026-01-01T00:00:00Z")
    commit(root, {"requirements.txt": "pynvml\n"}, "two", "2026-01-02T00:00:00Z",
           author="Eve & \"Mallory\" \x1b[2J")   # git itself keeps < and > out of a name
    db = tmp_path / "h.db"
    code, page, _ = history(capsys, root, "--db", db, "--format", "html")
    assert code == 0
    assert 'Eve & "Mallory"' not in page and "Eve &amp; &#34;Mallory&#34;" in page
    assert "<script" not in page                           # the history page has no script at all
    code, text, _ = history(capsys, root, "--db", db)
    assert "\x1b" not in text
    code, table, _ = history(capsys, root, "--db", db, "--format", "csv")
    assert list(csv.reader(io.StringIO(table)))[2][2].startswith("Eve")


def test_a_range_without_commits_has_no_points(project, recorded, capsys):
    root, _ = project
    data = as_json(capsys, root, "--db", recorded, "--since", "2030-01-01")
    assert data["points"] == [] and data["events"] == [] and data["delta"] is None
    code, page, _ = history(capsys, root, "--db", recorded, "--since", "2030-01-01", "--format", "html")
    assert code == 0 and "No recorded point in this range." in page


def test_events_name_each_package_a_many_package_rule_gains(tmp_path, capsys):
    """One rule covers many NVIDIA-only libraries: adding a second one is an event naming it, not the rule."""
    root = tmp_path / "many"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    first = commit(root, {"app.py": "import cudnn\n"}, "cudnn", "2026-01-01T00:00:00Z")
    second = commit(root, {"app.py": "import cudnn\nimport nvshmem\n"}, "nvshmem", "2026-02-01T00:00:00Z")
    data = as_json(capsys, root, "--db", tmp_path / "h.db")
    assert [p["commit"] for p in data["points"]] == [first, second]
    added = [(e["package"], e["site"]) for e in data["events"] if e["kind"] == "dependency-added"]
    assert added == [("nvshmem", "app.py:2")]
    assert not any("nvidia-only-python-library" in json.dumps(e) for e in data["events"])
