"""`rocm-audit fleet` with the local executor: rows equal to single `check` runs, the cross-repository view, a
failed row for each way a repository can fail while the others complete, git URLs read from git objects, resume,
and the exit codes."""
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from auditor.cli.fleet.sources import expand
from tests.conftest import write_tree
from tests.fleetrepos import PORTABLE, TRT, VERDICTS, check_json, make_org, run_cli, run_fleet
from tests.gitrepo import GitRepo

pytestmark = pytest.mark.slow   # fleet runs: a process per repository


@pytest.fixture(scope="module")
def portfolio_run(tmp_path_factory):
    """One fleet run over a directory of three repositories, and a single `check` of each."""
    base = tmp_path_factory.mktemp("fleet")
    org = make_org(base / "org")
    code, portfolio = run_fleet(org, "--out", base / "out")
    checks = {name: check_json(org / name, base / f"{name}.json") for name in VERDICTS}
    return code, portfolio, checks, base / "out", org


def test_rows_equal_single_check_runs(portfolio_run):
    code, portfolio, checks, out, org = portfolio_run
    assert code == 0   # --fail-on never by default: the portfolio is a report
    rows = {r["name"]: r for r in portfolio["repositories"]}
    assert sorted(rows) == sorted(VERDICTS)
    for name, verdict in VERDICTS.items():
        row, check = rows[name], checks[name]
        assert row["status"] == "scanned" and row["source"] == str(org / name)
        assert row["verdict"] == check["summary"]["verdict"] == verdict
        assert (row["effort_low_days"], row["effort_high_days"]) == \
            (check["effort"]["low_days"], check["effort"]["high_days"])
        kept = json.loads((out / row["report"]).read_text(encoding="utf-8"))
        assert row["report"] == f"reports/{name}.json"
        assert kept["summary"] == check["summary"] and kept["effort"] == check["effort"]
    assert rows["trt"]["top_blocker"] == "tensorrt-llm"
    assert rows["kern"]["top_blocker"].startswith("warp-mask-32bit-literal")
    assert rows["portable"]["top_blocker"] == ""


def test_totals_and_blockers_come_from_the_rows(portfolio_run):
    _, portfolio, checks, out, _ = portfolio_run
    totals = portfolio["totals"]
    assert (totals["repositories"], totals["scanned"], totals["failed"]) == (3, 3, 0)
    assert (totals["ready"], totals["needs-port"], totals["blocked"]) == (1, 1, 1)
    lines = {name: c["summary"]["lines_scanned"] for name, c in checks.items()}
    assert totals["lines_scanned"] == sum(lines.values())
    assert totals["ready_share_percent"] == round(100 * lines["portable"] / sum(lines.values()), 1)
    assert totals["effort_high_days"] == round(sum(c["effort"]["high_days"] for c in checks.values()), 2)
    trt = next(b for b in portfolio["blockers"] if b["key"] == "tensorrt-llm")
    assert trt["kind"] == "dependency" and trt["repositories"] == ["trt"]
    assert "vLLM" in trt["fix"]
    # its effort: the hours of its finding groups in that repository, in the report's engineer-days (8 h)
    hours = [g["effort_hours"] for g in checks["trt"]["groups"] if g["name"] == "tensorrt-llm"]
    assert trt["effort_high_days"] == round(sum(h[1] for h in hours) / 8, 2)
    mask = next(b for b in portfolio["blockers"] if b["name"] == "warp-mask-32bit-literal")
    assert mask["kind"] == "rule" and mask["key"] == mask["rule"] and mask["repositories"] == ["kern"]
    assert portfolio["blockers"][0]["key"] == "tensorrt-llm"   # ranked by the effort it causes
    assert json.loads((out / "portfolio.json").read_text(encoding="utf-8")) == portfolio
    assert all(b["repositories"] and "portable" not in b["repositories"] for b in portfolio["blockers"])


def test_terminal_portfolio_names_each_repository_and_the_fix(tmp_path):
    org = write_tree(tmp_path / "org", {f"trt/{k}": v for k, v in TRT.items()})
    code, text = run_cli("fleet", org / "trt", "--out", tmp_path / "out", "-q", "--fail-on", "blocked")
    assert code == 1
    assert "ready 0 · needs-port 0 · blocked 1" in text
    assert "tensorrt-llm: in 1 repository" in text and "Fix: Serve the model with vLLM" in text


@pytest.fixture
def hanging_git_server():
    """A git:// address that accepts the connection and never answers."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield f"git://127.0.0.1:{server.getsockname()[1]}/hangs.git"


def test_each_failing_repository_is_a_row_and_the_others_complete(tmp_path, hanging_git_server):
    write_tree(tmp_path / "org/portable", PORTABLE)
    write_tree(tmp_path / "org/broken", {"model.py": "import pynvml\n", ".git": "garbage, not a gitdir\n"})
    write_tree(tmp_path, {"repos.txt": (
        "# the fleet\n"
        "org/portable\n"
        "org/broken   # a .git git cannot read\n"
        "org/gone\n"
        f"{hanging_git_server}\n")})
    listing = tmp_path / "repos.txt"
    code, portfolio = run_fleet(listing, "--out", tmp_path / "out", "--timeout", "8", "-j", "4")
    assert code == 0
    rows = {r["name"]: r for r in portfolio["repositories"]}
    assert rows["portable"]["status"] == "scanned" and rows["portable"]["verdict"] == "ready"
    assert rows["broken"]["status"] == "failed" and "git cannot read this repository" in rows["broken"]["reason"]
    assert rows["gone"]["status"] == "failed" and rows["gone"]["reason"].startswith("path does not exist")
    assert rows["hangs"]["status"] == "failed" and rows["hangs"]["reason"] == "timed out after 8 s"
    assert all(rows[n]["verdict"] is None and rows[n]["report"] is None for n in ("broken", "gone", "hangs"))
    assert portfolio["totals"]["failed"] == 3 and portfolio["totals"]["scanned"] == 1
    assert sorted(p.name for p in (tmp_path / "out/reports").iterdir()) == ["portable.html", "portable.json"]


def test_nothing_scanned_exits_2(tmp_path, capsys):
    code, portfolio = run_fleet(tmp_path / "gone", tmp_path / "also-gone", "--out", tmp_path / "out")
    assert code == 2
    assert [r["status"] for r in portfolio["repositories"]] == ["failed", "failed"]
    assert "none of the 2 repositories could be scanned" in capsys.readouterr().err


@pytest.mark.parametrize("fail_on, expected", [("blocked", 0), ("needs-port", 1)])
def test_fail_on_is_a_verdict_threshold(portfolio_run, tmp_path, fail_on, expected):
    """kern needs a port: that reaches --fail-on needs-port, not blocked (the terminal test shows blocked)."""
    assert run_fleet(portfolio_run[4] / "kern", "--out", tmp_path / "o", "--fail-on", fail_on)[0] == expected


def test_git_url_is_fetched_bare_and_read_from_objects(tmp_path):
    repo = GitRepo(tmp_path / "upstream/trt-serving", TRT)
    head = repo.git("rev-parse", "HEAD").strip()
    cache = tmp_path / "cache"
    url = (tmp_path / "upstream/trt-serving").as_uri()
    code, portfolio = run_fleet(url, f"{url}-missing", "--out", tmp_path / "out", "--cache-dir", cache)
    rows = {r["name"]: r for r in portfolio["repositories"]}
    row = rows["trt-serving"]
    assert (row["status"], row["verdict"], row["commit"]) == ("scanned", "blocked", head)
    report = json.loads((tmp_path / "out" / row["report"]).read_text(encoding="utf-8"))
    assert report["root"] == "trt-serving"
    assert {f["path"] for f in report["findings"]} >= {"serve/engine.py", "pyproject.toml"}
    assert list((cache / "fleet-clones").iterdir()) == []   # each fetch's own directory, removed when it is done
    assert rows["trt-serving-missing"]["status"] == "failed"
    assert rows["trt-serving-missing"]["reason"].startswith(f"cannot fetch {url}-missing")
    assert code == 0


class MemoryRecorder:
    """The Recorder protocol (auditor/cli/fleet/recorder.py) over a dict, standing in for the history store."""

    def __init__(self):
        self.runs: dict[str, list[tuple[str | None, str, str]]] = {}

    def recorded(self, repo_key, commit, rules_digest):
        return next((v for c, v, d in self.runs.get(repo_key, ()) if (c, d) == (commit, rules_digest)), None)

    def record(self, report, repo_key, commit, run=None):
        digest = run["rules_digest"] if run else ""
        self.runs.setdefault(repo_key, []).append((commit, report["summary"]["verdict"], digest))


def test_resume_skips_repositories_whose_head_is_unchanged(tmp_path):
    from auditor.cli.fleet.command import fleet_command

    org = tmp_path / "org"
    portable = GitRepo(org / "portable", PORTABLE)
    GitRepo(org / "trt", TRT)
    write_tree(org / "plain", PORTABLE)   # no git: no commit to compare, always scanned
    recorder, out = MemoryRecorder(), tmp_path / "out"

    def run() -> dict:
        assert fleet_command([str(org), "--out", str(out), "--format", "json", "-q"], recorder) == 0
        return {r["name"]: r for r in json.loads((out / "portfolio.json").read_text(encoding="utf-8"))["repositories"]}

    first = run()
    assert {n: r["status"] for n, r in first.items()} == {"plain": "scanned", "portable": "scanned", "trt": "scanned"}
    assert first["portable"]["commit"] == portable.git("rev-parse", "HEAD").strip()
    assert first["plain"]["commit"] is None
    kept = (out / "reports/trt.json").stat().st_mtime_ns
    portable.commit({"app/extra.py": "import pynvml\n\npynvml.nvmlInit()\n"}, "monitor the GPU")
    second = run()
    assert {n: r["status"] for n, r in second.items()} == {"plain": "scanned", "portable": "scanned",
                                                           "trt": "unchanged"}
    assert second["trt"]["verdict"] == "blocked" and (out / "reports/trt.json").stat().st_mtime_ns == kept
    assert second["portable"]["commit"] == portable.git("rev-parse", "HEAD").strip() != first["portable"]["commit"]
    assert len([k for k in recorder.runs if not k.startswith("path:")]) == 2   # the git ones, by root commit
    assert sum(len(v) for v in recorder.runs.values()) == 5   # trt recorded once; it was not scanned again


def test_a_source_file_is_not_a_list_of_repositories(tmp_path, capsys):
    write_tree(tmp_path, {"train.py": "import torch\n"})
    assert run_cli("fleet", tmp_path / "train.py", "--out", tmp_path / "out")[0] == 2
    assert "fleet takes repositories or a list of them, not a source file" in capsys.readouterr().err


def test_db_records_each_run_in_the_history_store_and_resumes_from_it(tmp_path, capsys):
    from auditor.history.command import repository
    from auditor.history.store import open_store

    org = tmp_path / "org"
    portable = GitRepo(org / "portable", PORTABLE)
    trt = GitRepo(org / "trt", TRT)
    db, out = tmp_path / "h.sqlite", tmp_path / "out"

    def run() -> dict:
        code, _ = run_cli("fleet", org, "--db", db, "--out", out, "--format", "json", "-q")
        assert code == 0
        return {r["name"]: r["status"] for r in json.loads((out / "portfolio.json").read_text())["repositories"]}

    assert run() == {"portable": "scanned", "trt": "scanned"}
    with open_store(db, readonly=True) as store:
        recorded = {name: store.points(repository(repo.root)[2]) for name, repo in (("portable", portable),
                                                                                      ("trt", trt))}
    assert {n: [(p.where.commit, p.verdict, p.source) for p in ps] for n, ps in recorded.items()} == {
        "portable": [(portable.git("rev-parse", "HEAD").strip(), "ready", "fleet")],
        "trt": [(trt.git("rev-parse", "HEAD").strip(), "blocked", "fleet")],
    }
    assert recorded["trt"][0].live_dependencies().keys() == {"tensorrt-llm"}
    trt.commit({"serve/extra.py": "import pynvml\n"}, "monitor")
    assert run() == {"portable": "unchanged", "trt": "scanned"}   # the same key `check --record` and `history` use
    with open_store(db, readonly=True) as store:
        trt_points = store.points(repository(trt.root)[2])
        portable_points = store.points(repository(portable.root)[2])
    assert len(trt_points) == 2 and len(portable_points) == 1
    # the portfolio shows each repository's recorded runs and the organisation's burn-down
    data = json.loads((out / "portfolio.json").read_text())
    trends = {r["name"]: [p["live"] for p in r["trend"]] for r in data["repositories"]}
    assert trends == {"trt": [p.live for p in trt_points], "portable": [p.live for p in portable_points]}
    assert trends["trt"][-1] > trends["trt"][0] > 0          # the new pynvml import is one more live finding
    assert data["totals"]["burndown"][-1]["live"] == trends["trt"][-1] + trends["portable"][-1]
    page = (out / "portfolio.html").read_text()
    assert page.count('<svg class="trend"') == 3             # two repositories and the burn-down
    assert f'data-live="{trends["trt"][-1]}"' in page


def test_db_that_a_newer_rocm_audit_wrote_is_refused_before_any_scan(tmp_path, capsys):
    import sqlite3

    db = tmp_path / "h.sqlite"
    with sqlite3.connect(db) as connection:
        connection.execute("PRAGMA user_version = 999")
    before = db.read_bytes()
    write_tree(tmp_path / "org" / "a", PORTABLE)
    assert run_cli("fleet", tmp_path / "org", "--db", db, "--out", tmp_path / "out")[0] == 2
    assert db.read_bytes() == before and not (tmp_path / "out").exists()


def test_sources_expand_lists_parents_urls_and_names(tmp_path):
    write_tree(tmp_path, {"org/a/x.py": "", "org/b/setup.py": "", "org/.hidden/x.py": "", "solo/main.cu": "",
                          "more/a/x.py": "",
                          "list.txt": "# repositories\n\nsolo\nhttps://example.com/team/a.git  # the same name\n"
                                      "git@example.com:team/flash-attention.git\nsolo\n"})
    write_tree(tmp_path, {"a-2/x.py": ""})
    sources = expand([str(tmp_path / "org"), str(tmp_path / "list.txt"), str(tmp_path / "more"), str(tmp_path / "a-2")])
    assert [(s.name, s.kind) for s in sources] == [
        ("a", "path"), ("b", "path"), ("solo", "path"), ("a-2", "git"), ("flash-attention", "git"), ("a-3", "path"),
        ("a-2-2", "path")]
    assert sources[3].location == "https://example.com/team/a.git"
    assert sources[2].location == str(tmp_path / "solo")


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "stat").read_text().rsplit(")", 1)[1].split()[1] == str(pid):
                found.append(int(entry.name))
        except (OSError, IndexError):
            continue
    return found


def test_a_scan_started_while_the_fleet_stops_ends_itself(tmp_path, hanging_git_server):
    """Ctrl-C can come between a scan's fork and its listing among the running ones: stop_all never sees that
    child, so the scan's own thread ends it (else the fleet would wait out the scan's timeout)."""
    from auditor.cli.fleet import tasks

    task = tasks.RepoTask("hangs", hanging_git_server, "git", 120.0, (), str(tmp_path / "clones"))
    tasks.stop_all()
    try:
        started = time.monotonic()
        outcome = tasks.scan_repository(task)
        assert time.monotonic() - started < 30 and outcome.status == "failed"
    finally:
        tasks.start_all()


def test_ctrl_c_ends_the_scans_under_way(tmp_path, hanging_git_server):
    """Each scan runs in a session of its own, out of reach of the terminal's Ctrl-C: the fleet ends them."""
    # as a terminal's foreground job: a suite started in the background (`cmd &` in a script) ignores SIGINT, and a
    # child would inherit that
    fleet = subprocess.Popen([sys.executable, "-m", "auditor", "fleet", hanging_git_server, "--out", str(tmp_path),
                              "--timeout", "120"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    scans: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while not (scans := _children(fleet.pid)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert scans, "the fleet started no scan"
        fleet.send_signal(signal.SIGINT)
        _, err = fleet.communicate(timeout=30)
        assert fleet.returncode == 2 and b"interrupted" in err
        time.sleep(0.2)
        assert not [pid for pid in scans if Path(f"/proc/{pid}").exists()
                    and (Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z")]
    finally:   # a failing run leaves nothing behind
        for pid in [fleet.pid, *scans]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        fleet.wait()
