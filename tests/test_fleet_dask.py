"""`fleet --executor dask --scheduler ADDRESS` on a real Dask LocalCluster (a scheduler and two worker
processes on 127.0.0.1) gives the same portfolio as the local executor."""
import json

import pytest

from tests.fleetrepos import make_org, run_fleet

pytestmark = pytest.mark.slow   # a Dask LocalCluster



@pytest.fixture(scope="module")
def distributed():
    """Imported when a test runs, not when the suite is collected (`pytest -m "not slow"` collects this file too)."""
    return pytest.importorskip("distributed", reason="Dask distributed is installed by the test extra")


@pytest.fixture(scope="module")
def scheduler(distributed):
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


def make_certificates(where):
    """A CA and two certificates it signed (the cluster's, this client's), made with the openssl command."""
    import subprocess

    where.mkdir()

    def openssl(*args):
        subprocess.run(["openssl", *args], cwd=where, check=True, capture_output=True, timeout=120)

    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
            "-subj", "/CN=test-ca")
    for name in ("cluster", "client"):
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.csr",
                "-subj", f"/CN={name}")
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                "-out", f"{name}.pem", "-days", "2")
    return where


@pytest.fixture(scope="module")
def tls_scheduler(tmp_path_factory, distributed):
    """A LocalCluster that speaks TLS only and asks every peer for a certificate its CA signed."""
    import shutil

    if shutil.which("openssl") is None:
        pytest.skip("no openssl command to make the test certificates")
    from distributed.security import Security

    certs = make_certificates(tmp_path_factory.mktemp("tls") / "certs")
    cluster_cert = {f"tls_{role}_{part}": str(certs / f"cluster.{ext}")
                    for role in ("scheduler", "worker", "client") for part, ext in (("cert", "pem"), ("key", "key"))}
    security = Security(tls_ca_file=str(certs / "ca.pem"), require_encryption=True, **cluster_cert)
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None,
                                       host="127.0.0.1", protocol="tls://", security=security)
    try:
        assert cluster.scheduler_address.startswith("tls://")
        yield cluster.scheduler_address, certs
    finally:
        cluster.close()


def test_fleet_on_a_tls_scheduler_with_its_ca_and_a_client_certificate(tls_scheduler, tmp_path):
    address, certs = tls_scheduler
    org = make_org(tmp_path / "org")
    local_code, local = run_fleet(org, "--out", tmp_path / "local")
    code, portfolio = run_fleet(org, "--out", tmp_path / "dask", "--executor", "dask", "--scheduler", address,
                                "--tls-ca-file", certs / "ca.pem", "--tls-cert", certs / "client.pem",
                                "--tls-key", certs / "client.key")
    assert (local_code, code) == (0, 0)
    assert portfolio == local
    assert {r["name"]: r["verdict"] for r in portfolio["repositories"]} == \
        {"kern": "needs-port", "portable": "ready", "trt": "blocked"}


def test_a_tls_scheduler_does_not_take_a_certificate_another_ca_signed(tls_scheduler, tmp_path, capsys):
    address, certs = tls_scheduler
    stranger = make_certificates(tmp_path / "stranger")
    code, _ = run_fleet(make_org(tmp_path / "org"), "--out", tmp_path / "out", "--executor", "dask",
                        "--scheduler", address, "--tls-ca-file", certs / "ca.pem", "--tls-cert",
                        stranger / "client.pem", "--tls-key", stranger / "client.key", "--connect-timeout", "3")
    assert code == 2
    assert f"cannot reach the Dask scheduler at {address}" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("address", ["tcp://192.0.2.7:8786", "192.0.2.7:8786", "ws://scheduler.example:8786",
                                     "tcp://[2001:db8::7]:8786"])
def test_a_plain_scheduler_off_this_machine_is_refused(tmp_path, capsys, address):
    """Dask's client unpickles what its scheduler sends: a plain address off this machine is refused before any
    connection; --insecure-scheduler lifts that refusal only (the address is then tried, and here not reached)."""
    org = make_org(tmp_path / "org")
    code, _ = run_fleet(org, "--out", tmp_path / "out", "--executor", "dask", "--scheduler", address)
    err = capsys.readouterr().err
    assert code == 2 and f"the Dask scheduler {address} is plain" in err and "--insecure-scheduler" in err
    code, _ = run_fleet(org, "--out", tmp_path / "out", "--executor", "dask", "--scheduler", address,
                        "--insecure-scheduler", "--connect-timeout", "1")
    assert code == 2 and f"cannot reach the Dask scheduler at {address}" in capsys.readouterr().err


@pytest.mark.parametrize(("extra", "says"), [
    (("--scheduler", "tls://127.0.0.1:9"), "needs the CA that signed its certificate"),
    (("--scheduler", "tls://127.0.0.1:9", "--tls-ca-file", "ca.pem"), "needs this client's certificate"),
    (("--scheduler", "tcp://127.0.0.1:9", "--tls-ca-file", "ca.pem"), "need a tls:// scheduler address"),
    (("--scheduler", "ucx://127.0.0.1:9"), "not ucx://"),
    (("--tls-ca-file", "ca.pem"), "go with --executor dask"),
])
def test_tls_settings_that_cannot_work_are_refused(tmp_path, capsys, monkeypatch, extra, says):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ca.pem").write_text("not used\n")
    executor = ("--executor", "dask") if "--scheduler" in extra else ()
    code, _ = run_fleet(make_org(tmp_path / "org"), "--out", tmp_path / "out", *executor, *extra)
    assert code == 2 and says in capsys.readouterr().err
