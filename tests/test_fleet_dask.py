"""`fleet --executor dask --scheduler ADDRESS` on a real Dask LocalCluster (a scheduler and two worker
processes on 127.0.0.1) gives the same portfolio as the local executor."""
import json

import pytest

from tests.fleetrepos import make_org, run_fleet

pytestmark = pytest.mark.slow   # a Dask LocalCluster

distributed = pytest.importorskip("distributed", reason="Dask distributed is installed by the test extra")


@pytest.fixture(scope="module")
def scheduler():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                       host="127.0.0.1")
    try:
        yield cluster.scheduler_address
    finally:
        cluster.close()


def test_dask_gives_the_local_portfolio(scheduler, tmp_path):
    org = make_org(tmp_path / "org")
    local_code, local = run_fleet(org, tmp_path / "gone", "--out", tmp_path / "local")
    dask_code, dask = run_fleet(org, tmp_path / "gone", "--out", tmp_path / "dask", "--executor", "dask",
                                "--scheduler", scheduler)
    assert (local_code, dask_code) == (0, 0)
    assert dask == local
    assert {r["name"]: r["verdict"] for r in dask["repositories"]} == \
        {"kern": "needs-port", "portable": "ready", "trt": "blocked", "gone": None}
    for row in dask["repositories"][:3]:
        assert json.loads((tmp_path / "dask" / row["report"]).read_text(encoding="utf-8"))["summary"] == \
            json.loads((tmp_path / "local" / row["report"]).read_text(encoding="utf-8"))["summary"]


def test_unreachable_scheduler_is_a_tool_error(tmp_path, capsys):
    code, _ = run_fleet(tmp_path, "--out", tmp_path / "out", "--executor", "dask", "--scheduler", "tcp://127.0.0.1:9",
                        "--connect-timeout", "1")
    assert code == 2
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in capsys.readouterr().err


def test_dask_needs_a_scheduler(tmp_path, capsys):
    assert run_fleet(tmp_path, "--executor", "dask")[0] == 2
    assert "--executor dask needs --scheduler ADDRESS" in capsys.readouterr().err


def test_resume_through_dask_workers(scheduler, tmp_path):
    """The resume facts travel in the task value: a Dask worker answers `unchanged` for a local repository and a
    git URL whose commit and digest are the kept reports', and the driver gives the rows the kept reports."""
    from tests.gitrepo import GitRepo
    from tests.fleetrepos import PORTABLE, TRT

    local = GitRepo(tmp_path / "org/portable", PORTABLE)
    url = GitRepo(tmp_path / "upstream/trt-serving", TRT).root.as_uri()
    args = (local.root, url, "--out", tmp_path / "out", "--db", tmp_path / "h.sqlite", "--cache-dir",
            tmp_path / "cache", "--executor", "dask", "--scheduler", scheduler)
    first_code, first = run_fleet(*args)
    second_code, second = run_fleet(*args)
    assert (first_code, second_code) == (0, 0)
    assert [r["status"] for r in first["repositories"]] == ["scanned", "scanned"]
    assert [r["status"] for r in second["repositories"]] == ["unchanged", "unchanged"]
    shown = ("name", "verdict", "effort_low_days", "effort_high_days", "top_blocker", "commit", "report")
    assert [{k: r[k] for k in shown} for r in second["repositories"]] == \
        [{k: r[k] for k in shown} for r in first["repositories"]]
    assert second["totals"] == first["totals"] and second["blockers"] == first["blockers"]
