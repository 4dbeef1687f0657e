"""The conventions CI users expect: exit 2 for a scan of nothing, typos caught and answered,
--strict saying why it failed, guarded findings as suppressed SARIF results, and ruff-style path policy."""
import json

import jsonschema
import pytest

from auditor.cli.app import main
from tests.conftest import REPO, write_tree

SARIF_SCHEMA = json.loads((REPO / "auditor" / "report" / "schema" / "sarif-github.schema.json").read_text())


def run(capsys, *args) -> tuple[int, str, str]:
    code = main([*map(str, args), "--no-progress", "-j", "1", "--no-html"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_directory_with_nothing_to_scan_is_an_error_not_ready(tmp_path, capsys):
    write_tree(tmp_path, {"README.md": "# docs only\n", "notes.txt": "nothing here\n", "conf/app.yaml": "a: 1\n"})
    code, out, err = run(capsys, tmp_path)
    assert code == 2
    assert f"nothing to scan in {tmp_path}: no CUDA, C/C++, Python or manifest files" in err
    assert "READY" not in out.upper()


def test_files_named_one_by_one_that_rocm_audit_does_not_read_are_a_clean_run(tmp_path, capsys):
    """What pre-commit passes when a commit touches only a non-manifest YAML file."""
    write_tree(tmp_path, {"mkdocs.yml": "site_name: docs\n"})
    code, _, err = run(capsys, "check", "--quiet", tmp_path / "mkdocs.yml")
    assert code == 0, err


@pytest.mark.parametrize(("typed", "meant"), [("chek", "check"), ("baselin", "baseline"), ("cofig", "config")])
def test_a_mistyped_command_suggests_the_right_one(typed, meant, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, typed)
    assert code == 2
    assert f"unknown command {typed!r}" in err and f"did you mean {meant!r}?" in err


def test_a_directory_named_like_a_typo_is_still_scanned(tmp_path, capsys, monkeypatch):
    write_tree(tmp_path, {"chek/a.py": "import pynvml\n"})
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "chek", "--format", "json")
    assert code == 1 and json.loads(out)["findings"][0]["rule"] == "RA112"


@pytest.mark.parametrize("flags", [["--fail", "never"], ["--sel", "RA1"], ["--no-ht"], ["--base", "b.json"]])
def test_abbreviated_long_flags_are_rejected(flags, tmp_path, capsys):
    write_tree(tmp_path, {"a.py": "import pynvml\n"})
    code, _, err = run(capsys, tmp_path, *flags)
    assert code == 2
    assert f"unrecognized arguments: {flags[0]}" in err


def test_an_abbreviated_flag_is_answered_with_the_full_one(tmp_path, capsys):
    write_tree(tmp_path, {"a.py": "import pynvml\n"})
    _, _, err = run(capsys, tmp_path, "--fail", "never")
    assert "did you mean --fail-on?" in err


def test_strict_failure_says_why_instead_of_ok(tmp_path, capsys):
    write_tree(tmp_path, {"a.py": "import pynvml\nimport tensorrt_llm\n"})
    baseline = tmp_path / "baseline.json"
    assert main(["baseline", str(tmp_path), "-o", str(baseline), "--no-progress", "-j", "1"]) == 0
    write_tree(tmp_path, {"a.py": "import pynvml\n"})                 # one known finding fixed
    capsys.readouterr()
    code, out, _ = run(capsys, tmp_path, "--baseline", baseline, "--strict", "--quiet")
    assert code == 1
    assert "ok" not in out.split("(")[0]
    assert "--strict: failed, the baseline lists 1 finding(s) that are gone" in out
    code, out, _ = run(capsys, tmp_path, "--baseline", baseline, "--quiet")   # without --strict: passes, says ok
    assert code == 0 and out.startswith("rocm-audit: ok")


def test_guarded_findings_are_suppressed_sarif_results(tmp_path, capsys):
    write_tree(tmp_path, {"probe.py": "try:\n    import pynvml\nexcept ImportError:\n    pynvml = None\n",
                          "serve.py": "import tensorrt_llm\n"})
    code, out, _ = run(capsys, tmp_path, "--format", "sarif", "--fail-on", "never")
    default = json.loads(out)["runs"][0]["results"]   # a guarded finding is no alert unless asked for
    assert [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in default] == [
        f"{_prefix(tmp_path)}serve.py"]
    code, out, _ = run(capsys, tmp_path, "--format", "sarif", "--fail-on", "never", "--sarif-all")
    sarif = json.loads(out)
    jsonschema.validate(sarif, SARIF_SCHEMA)
    results = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]: r for r in sarif["runs"][0]["results"]}
    guarded, live = results[f"{_prefix(tmp_path)}probe.py"], results[f"{_prefix(tmp_path)}serve.py"]
    assert guarded["suppressions"] == [{"kind": "inSource",
                                        "justification": "guarded: a ROCm code path already exists"}]
    assert guarded["level"] == "note" and guarded["properties"]["guarded"] is True
    assert "suppressions" not in live and live["level"] == "error"


def _prefix(path) -> str:
    """SARIF URIs are relative to the repository root; tmp_path is in none, so they are relative to it."""
    return ""


# --- per-file-ignores and optional-dirs, as ruff users write them --------------------------------------------

TREE = {
    "pkg/serve.py": "import tensorrt_llm\nimport pynvml\n",
    "tests/test_gpu.py": "import pynvml\n",
    "contrib/bench.py": "import tensorrt_llm\n",
}


def test_per_file_ignores_in_the_config_turn_rules_off_for_matching_files(tmp_path, run_json):
    write_tree(tmp_path, {**TREE, ".rocm-audit.toml": '[per-file-ignores]\n"tests/*" = ["RA112"]\n"pkg/**" = "RA100"\n'})
    code, report = run_json(tmp_path)
    found = {(f["path"], f["rule"]) for f in report["findings"]}
    assert ("tests/test_gpu.py", "RA112") not in found and ("pkg/serve.py", "RA100") not in found
    assert ("pkg/serve.py", "RA112") in found and ("contrib/bench.py", "RA100") in found
    assert report["summary"]["suppressed"] == 2


def test_per_file_ignores_on_the_command_line(tmp_path, run_json):
    write_tree(tmp_path, TREE)
    _, report = run_json(tmp_path, "--per-file-ignores", "pkg/*:RA1")
    assert not [f for f in report["findings"] if f["path"] == "pkg/serve.py"]


def test_optional_dirs_make_findings_optional_so_they_do_not_block(tmp_path, run_json):
    write_tree(tmp_path, {"serving/trt.py": "import tensorrt_llm\n", "pkg/ok.py": "import torch\n"})
    code, blocked = run_json(tmp_path)
    assert blocked["summary"]["verdict"] == "blocked"
    write_tree(tmp_path, {"pyproject.toml": '[tool.rocm-audit]\noptional-dirs = ["serving"]\n'})
    code, report = run_json(tmp_path)
    [finding] = [f for f in report["findings"] if f["path"] == "serving/trt.py"]
    assert finding["optional"] is True
    assert report["summary"]["verdict"] != "blocked"


@pytest.mark.parametrize(("config", "message"), [
    ('[per-file-ignores]\n"tests/*" = ["RA1;RA2"]\n', "not a rule id, prefix or name"),
    ('[per-file-ignores]\n"tests/*" = ["RA999"]\n', "per-file-ignores: no rule matches 'RA999'"),
    ('[per-file-ignores]\n"tests/*" = [1]\n', "expected a list of rule ids or prefixes"),
    ('optional-dirs = {a = 1}\n', ".rocm-audit.toml"),
])
def test_bad_path_policy_in_the_config_exits_2_naming_it(tmp_path, capsys, config, message):
    write_tree(tmp_path, {**TREE, ".rocm-audit.toml": config})
    code, _, err = run(capsys, tmp_path)
    assert code == 2 and message in err, err
