"""The command line as a user and a CI job see it: exit codes, one-line errors, outputs."""
import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from auditor.cli.app import main
from tests.conftest import REPO, write_tree

SCHEMA = json.loads((REPO / "auditor" / "report" / "schema" / "report.schema.json").read_text())

BLOCKED_APP = {
    "serve.py": "import tensorrt_llm\nfrom tensorrt_llm import LLM\n\nllm = LLM(model='meta-llama/Llama-3-8B')\n",
    "requirements.txt": "fastapi==0.111.0\ntensorrt-llm==0.10.0\n",
}
PORTABLE_APP = {
    "train.py": (
        "import torch\n\n"
        "device = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
        "model = torch.nn.Linear(16, 16).to(device)\n"
        "torch.cuda.synchronize()\n"
    ),
    "requirements.txt": "torch>=2.3\ntransformers\n",
}


def test_findings_at_or_above_fail_on_exit_1(tmp_path, run_json):
    write_tree(tmp_path, BLOCKED_APP)
    code, report = run_json(tmp_path)
    assert code == 1
    assert report["summary"]["verdict"] == "blocked"
    paths = {(f["path"], f["line"]) for f in report["findings"]}
    assert ("serve.py", 1) in paths and ("requirements.txt", 2) in paths


def test_fail_on_never_and_threshold(tmp_path, run_json):
    write_tree(tmp_path, BLOCKED_APP)
    assert run_json(tmp_path, "--fail-on", "never")[0] == 0
    assert run_json(tmp_path, "--fail-on", "critical")[0] == 1


def test_portable_repo_is_clean_and_ready(tmp_path, run_json):
    write_tree(tmp_path, PORTABLE_APP)
    code, report = run_json(tmp_path, "--fail-on", "low")
    assert code == 0
    assert report["summary"]["verdict"] == "ready"
    assert report["findings"] == []


@pytest.mark.slow
def test_json_matches_schema_for_every_fixture(run_json):
    for fixture in sorted(p for p in (REPO / "fixtures").iterdir() if p.is_dir()):
        _, report = run_json(fixture, "--fail-on", "never")
        jsonschema.validate(report, SCHEMA)
        assert report["summary"]["files_scanned"] > 0, fixture.name


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["/no/such/dir"], "path does not exist: /no/such/dir"),
        (["--fail-on", "severe", "."], "argument --fail-on: invalid choice: 'severe'"),
        (["--format", "yaml", "."], "argument --format/--output-format: invalid choice: 'yaml'"),
        (["-j", "0", "."], "expected a number of at least 1"),
        (["rule", "RA000"], "no rule 'RA000'"),
        (["--bogus"], "unrecognized arguments: --bogus"),
    ],
)
def test_usage_errors_exit_2_with_one_line(args, needle, capsys):
    assert main(args) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rocm-audit: error:") and needle in lines[0], captured.err


def test_select_and_ignore(tmp_path, run_json):
    write_tree(tmp_path, BLOCKED_APP)
    _, everything = run_json(tmp_path)
    rule_ids = {f["rule"] for f in everything["findings"]}
    chosen = sorted(rule_ids)[0]
    _, selected = run_json(tmp_path, "--select", chosen)
    assert {f["rule"] for f in selected["findings"]} == {chosen}
    _, ignored = run_json(tmp_path, "--ignore", chosen)
    assert chosen not in {f["rule"] for f in ignored["findings"]}


def test_output_file_is_written(tmp_path, run_json):
    write_tree(tmp_path / "repo", BLOCKED_APP)
    out = tmp_path / "report.json"
    code, printed = run_json(tmp_path / "repo", "-o", out)
    assert code == 1 and printed == {}
    assert json.loads(out.read_text())["summary"]["verdict"] == "blocked"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".report")] == []


def test_unwritable_output_is_a_tool_error(tmp_path, capsys):
    write_tree(tmp_path / "repo", PORTABLE_APP)
    code = main([str(tmp_path / "repo"), "--format", "json", "-o", str(tmp_path / "missing" / "r.json")])
    assert code == 2
    assert "cannot write" in capsys.readouterr().err


def test_terminal_summary_lists_verdict_and_worst_findings(tmp_path, capsys):
    write_tree(tmp_path, BLOCKED_APP)
    code = main([str(tmp_path), "--no-progress", "--no-html"])
    out = capsys.readouterr().out
    assert code == 1
    assert "Verdict: BLOCKED" in out
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if "RA100" in line)    # the plan's first work item
    assert lines[at].startswith(" 1. critical BLOCKS Replace tensorrt-llm")
    assert lines[at + 1].strip() == "3 sites in 2 files: serve.py (2) +1"   # two imports and the requirement
    assert lines[at + 2].strip().startswith("fix: Serve the model with vLLM or SGLang")


@pytest.mark.slow
def test_parallel_scan_gives_identical_output(capsys):
    from auditor.run.runner.workers import IN_PROCESS_BELOW

    outputs = []
    for jobs in ("1", "2"):
        main([str(REPO / "fixtures"), "--format", "json", "--no-progress", "-j", jobs, "--fail-on", "never",
              "--no-cache"])
        outputs.append(capsys.readouterr().out)
    assert json.loads(outputs[0])["summary"]["files_scanned"] >= IN_PROCESS_BELOW  # really went parallel
    assert outputs[0] == outputs[1]


def test_version_and_module_entry_points():
    for cmd in ([str(Path(sys.executable).parent / "rocm-audit"), "--version"], [sys.executable, "-m", "auditor", "--version"]):
        done = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=REPO)
        assert done.returncode == 0 and done.stdout.startswith("rocm-audit "), done


def test_rules_and_rule_commands(capsys):
    assert main(["rules"]) == 0
    listing = capsys.readouterr().out
    assert "RA" in listing and "critical" in listing
    from auditor.match.rulebook import load_rulebook

    first = load_rulebook().rules[0]
    assert main(["rule", first.id]) == 0
    text = capsys.readouterr().out
    assert first.id in text and first.name in text and "Reported:" in text and "Not reported:" in text
