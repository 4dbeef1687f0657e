"""One definition of "would break on ROCm" everywhere (issue: the exit code and `-q` said 1,600 findings would
break on a project the verdict calls READY). On fixtures that between them have every kind of disposition, the
exit code, the `-q` line, the terminal summary, JSON, SARIF levels and GitHub annotations all count the same
findings: those with disposition `live` (and `verify on hardware` with --fail-on-verify)."""
import json
import re

import pytest

from auditor.cli import main
from tests.conftest import FIXTURES

TREES = ["llm_serving", "cmake_cuda_lib", "rocm_paths/p1_backend_switch", "rocm_paths/p2_cmake_shim",
         "rocm_paths/p3_op_builders", "rocm_paths/p3_torch_extension_redefinitions",
         "rocm_paths/p5_python_dispatch", "rocm_paths/p7_makefile_optin", "rocm_paths/p7_env_switch_cuda_only_ext",
         "rocm_paths/decoy_portable_optional"]
SEVERITIES = ["info", "low", "medium", "high", "critical"]
BASE = ["--no-progress", "--no-html", "-j", "1"]


def _run(capsys, *args) -> tuple[int, str]:
    code = main([*map(str, args), *BASE])
    return code, capsys.readouterr().out


def _at_least(severity: str, floor: str) -> bool:
    return SEVERITIES.index(severity) >= SEVERITIES.index(floor)


def test_the_fixtures_cover_every_common_disposition(capsys):
    seen = set()
    for tree in TREES:
        _, out = _run(capsys, FIXTURES / tree, "--format", "json")
        seen |= set(json.loads(out)["summary"]["by_disposition"])
    assert seen >= {"live", "verify on hardware", "guarded", "optional", "optional feature", "ops", "shim-mapping",
                    "CUDA branch of a build script", "cuda-only source, ROCm builds an alternative"}


@pytest.mark.parametrize("tree", TREES)
def test_exit_code_quiet_line_summary_json_sarif_and_annotations_agree(tree, capsys):
    path = FIXTURES / tree
    code, out = _run(capsys, path, "--format", "json")
    data = json.loads(out)
    findings = data["findings"]
    assert not data["summary"]["findings_truncated"]
    live = [f for f in findings if f["disposition"] == "live"]
    failing = [f for f in live if _at_least(f["severity"], "high")]
    assert [f["would_break"] for f in findings] == [f["disposition"] == "live" for f in findings]
    assert data["summary"]["would_break"] == len(live)
    assert code == (1 if failing else 0)
    if data["summary"]["verdict"] == "ready":   # READY exits 0 unless a live finding reaches --fail-on
        assert code == 0 or failing
    for f in findings:   # `guarded` the flag and the disposition are one thing
        assert f["guarded"] == (f["disposition"] == "guarded"), f

    quiet_code, quiet = _run(capsys, path, "-q")
    assert quiet_code == code
    head = [line for line in quiet.splitlines() if line.startswith("rocm-audit: ")][0]
    if failing:
        assert head.startswith(f"rocm-audit: {len(failing)} finding(s) at or above high would break on ROCm")
    else:
        assert head.startswith("rocm-audit: ok, nothing at or above high")
    rest = len(findings) - len(live)
    assert f"{len(live)} would break on ROCm" in head
    if rest:
        assert f"{rest} ha" in head and "a ROCm alternative or" in head

    _, terminal = _run(capsys, path, "--format", "terminal")
    assert f"{len(live)} would break on ROCm" in " ".join(terminal.split())

    _, sarif = _run(capsys, path, "--format", "sarif")
    results = json.loads(sarif)["runs"][0]["results"]
    assert len(results) == len(findings)
    for result in results:
        breaks = result["properties"]["disposition"] == "live"
        assert result["properties"]["breaksOnRocm"] == breaks
        if not breaks:
            assert result["level"] == "note" and "Not breaking on ROCm: " in result["message"]["text"]
        assert not re.search(r"[^.]\.\.(\s|$)", result["message"]["text"])

    _, github = _run(capsys, path, "--format", "github")
    errors = [line for line in github.splitlines() if line.startswith("::error ")]
    warnings = [line for line in github.splitlines() if line.startswith("::warning ") and "rocm-audit RA" in line]
    assert len(errors) == min(len(failing), 10)
    assert len(warnings) == min(len([f for f in live if f not in failing and f["severity"] != "info"]), 10)


def test_fail_on_verify_counts_findings_to_verify_on_hardware(capsys):
    path = FIXTURES / "rocm_paths" / "p5_python_dispatch"   # READY: verify on hardware and optional, nothing live
    code, out = _run(capsys, path, "--format", "json", "--fail-on", "low")
    data = json.loads(out)
    verify = [f for f in data["findings"] if f["disposition"] == "verify on hardware"]
    assert data["summary"]["verdict"] == "ready" and verify and code == 0 and data["summary"]["would_break"] == 0
    code, out = _run(capsys, path, "--format", "json", "--fail-on", "low", "--fail-on-verify")
    data = json.loads(out)
    assert data["summary"]["would_break"] == len(verify) and data["summary"]["fail_on_verify"] is True
    assert code == (1 if any(_at_least(f["severity"], "low") for f in verify) else 0) == 1
    code, quiet = _run(capsys, path, "-q", "--fail-on", "low", "--fail-on-verify")
    assert code == 1 and f"{len(verify)} would break on ROCm" in quiet


def test_baseline_and_diff_base_weigh_the_same_findings(tmp_path, capsys):
    path = FIXTURES / "llm_serving"
    baseline = tmp_path / "baseline.json"
    assert main(["baseline", str(path), "-o", str(baseline), *BASE]) == 0
    capsys.readouterr()
    entries = json.loads(baseline.read_text())["entries"]
    _, out = _run(capsys, path, "--format", "json")
    live = [f for f in json.loads(out)["findings"] if f["disposition"] == "live"]
    assert sum(e["count"] for e in entries) == len(live)
    code, out = _run(capsys, path, "--format", "json", "--baseline", baseline)
    data = json.loads(out)
    assert code == 0 and data["gate"]["new"] == 0 and data["gate"]["known"] == len(live)
    assert all(f["new"] is False for f in data["findings"] if f["would_break"])


def test_exit_zero_keeps_the_report_and_exits_0(capsys):
    code, quiet = _run(capsys, FIXTURES / "llm_serving", "-q", "--exit-zero")
    assert code == 0 and "would break on ROCm" in quiet


def test_statistics_counts_breaking_findings_per_rule(capsys):
    code, out = _run(capsys, FIXTURES / "llm_serving", "--statistics")
    _, data = _run(capsys, FIXTURES / "llm_serving", "--format", "json")
    live = [f for f in json.loads(data)["findings"] if f["disposition"] == "live"]
    rows = [line.split("\t") for line in out.splitlines() if not line.startswith("#")]
    assert sum(int(row[0]) for row in rows) == len(live)
    assert {row[1] for row in rows} == {f["rule"] for f in live}
    assert code == 1 and out.splitlines()[-1].startswith(f"# {len(live)} would break on ROCm")
