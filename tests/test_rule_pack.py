"""A team's own rule pack, end to end: `rules --check DIR` validates it and runs its examples (exit 0/1/2),
`--rules DIR` adds it to a scan, and a scanned repository's config cannot add one."""
import json
from pathlib import Path

import pytest

from auditor.cli.app import main
from auditor.match.rulebook import RuleError, load_pack
from tests.conftest import write_tree

PACKAGE_RULE = '''
[[rule]]
id = "RA190"
name = "acme-fused-kernels"
category = "cuda_only_python_package"
severity = "high"
effort = "M"
message = "acme-fused-kernels ships CUDA-only wheels."
docs = "Internal: https://example.com/acme-fused-kernels"
pypi = ["acme-fused-kernels"]
imports = ["acme_fused"]
flag = [
  { file = "requirements.txt", code = "numpy\\nacme-fused-kernels==1.2  # flag\\n" },
  """
import os
import acme_fused  # flag
""",
]
ok = [
  { file = "requirements.txt", code = "numpy\\nacme-tools==1.0\\n" },
]
'''
REPO_FILES = {
    "requirements.txt": "torch>=2.3\nacme-fused-kernels==1.4.0\n",
    "train.py": "import torch\n\nimport acme_fused\n",
}


def _pack(root: Path, text: str = PACKAGE_RULE, name: str = "python/acme.toml") -> Path:
    pack = root / "team-rules"
    write_tree(pack, {name: text})
    return pack


def _run(capsys, *args) -> tuple[int, str, str]:
    code = main([*map(str, args), "--no-progress", "-j", "1"])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_pack_with_one_package_rule_finds_it_in_a_scanned_repo(tmp_path, run_json):
    pack = _pack(tmp_path)
    repo = write_tree(tmp_path / "repo", REPO_FILES)
    code, report = run_json(repo, "--rules", pack, "--fail-on", "high")
    sites = sorted((f["path"], f["line"]) for f in report["findings"] if f["rule"] == "RA190")
    assert sites == [("requirements.txt", 2), ("train.py", 3)]
    assert code == 1
    _, without = run_json(repo, "--fail-on", "never")
    assert not [f for f in without["findings"] if f["rule"] == "RA190"]


def test_rules_check_passes_a_good_pack(tmp_path, capsys):
    code, out, _ = _run(capsys, "rules", "--check", _pack(tmp_path))
    assert code == 0
    assert "1 rules, 3 examples, 0 failing" in out


def test_rules_check_fails_an_example_marked_on_the_wrong_line(tmp_path, capsys):
    wrong = PACKAGE_RULE.replace("numpy\\nacme-fused-kernels==1.2  # flag\\n", "numpy  # flag\\nacme-fused-kernels==1.2\\n")
    code, out, _ = _run(capsys, "rules", "--check", _pack(tmp_path, wrong))
    assert code == 1
    assert "RA190 flag example 1: requirements.txt: flag example marks line(s) [1], reported on [2]" in out


def test_rules_check_fails_an_ok_example_that_is_reported(tmp_path, capsys):
    noisy = PACKAGE_RULE.replace('"numpy\\nacme-tools==1.0\\n"', '"acme-fused-kernels\\n"')
    code, out, _ = _run(capsys, "rules", "--check", _pack(tmp_path, noisy))
    assert code == 1
    assert "RA190 ok example 1: requirements.txt: ok example reported on line(s) [1]" in out


@pytest.mark.parametrize(("text", "name", "message"), [
    (PACKAGE_RULE.replace('pypi = ["acme-fused-kernels"]', 'pypi = ["acme-fused-kernels"]\nwheels = ["x"]'),
     "python/acme.toml", "unknown field(s) ['wheels']"),
    (PACKAGE_RULE.replace('"RA190"', '"RA100"').replace("acme-fused-kernels\"\ncategory", "x\"\ncategory"),
     "python/acme.toml", "duplicate 'RA100'"),
    (PACKAGE_RULE.replace('"RA190"', '"RA290"'), "python/acme.toml", "a python rule's id is in RA1xx, RA5xx, RA9xx"),
    (PACKAGE_RULE.replace('[[rule]]', '[[rules]]'), "python/acme.toml", "unknown top-level key(s) ['rules']"),
])
def test_rules_check_exits_2_on_a_pack_that_does_not_load(tmp_path, capsys, text, name, message):
    code, _, err = _run(capsys, "rules", "--check", _pack(tmp_path, text, name))
    assert code == 2
    assert message in err


def test_a_repository_config_cannot_add_a_rule_pack(tmp_path, capsys):
    repo = write_tree(tmp_path / "repo", REPO_FILES)
    _pack(repo)
    write_tree(repo, {".rocm-audit.toml": 'rules = ["team-rules"]\n'})
    code, out, err = _run(capsys, repo, "--format", "json", "--fail-on", "never")
    report = json.loads(out)
    assert report["summary"]["files_scanned"] >= 2     # scanned, with the shipped rules only
    assert not [f for f in report["findings"] if f["rule"] == "RA190"]
    assert "rules ignored: a config file in the scanned tree may not choose which rules run" in err


def test_the_users_own_config_may_add_a_rule_pack(tmp_path, run_json):
    pack = _pack(tmp_path)
    repo = write_tree(tmp_path / "repo", REPO_FILES)
    config = write_tree(tmp_path / "home", {"rocm-audit.toml": f'rules = ["{pack}"]\n'}) / "rocm-audit.toml"
    _, report = run_json(repo, "--config", config, "--fail-on", "never")
    assert ("requirements.txt", 2) in {(f["path"], f["line"]) for f in report["findings"] if f["rule"] == "RA190"}


def test_defs_are_written_once_and_used_in_lists_and_regexes(tmp_path):
    text = '''
[defs]
tools = ["acme-smi", "acme-prof"]
tool_regex = "\\\\b(?:${tools})\\\\b"

[[rule]]
id = "RA590"
name = "acme-tools"
category = "runtime_check"
severity = "medium"
effort = "S"
message = "Acme's CUDA tools."
docs = "https://example.com"
strings = "${tool_regex}"
needles = ["${tools}"]
flag = ["subprocess.run(['acme-smi'])"]
ok = ["subprocess.run(['rocm-smi'])"]
'''
    (rule,) = load_pack(_pack(tmp_path, text))
    assert rule.spec.strings == r"\b(?:acme-smi|acme-prof)\b"
    assert rule.spec.needles == ("acme-smi", "acme-prof")
    with pytest.raises(RuleError, match=r"\$\{missing\} is not defined"):
        load_pack(_pack(tmp_path / "b", text.replace("${tool_regex}", "${missing}")))


BACKTRACKING_RULE = '''
[[rule]]
id = "RA591"
name = "acme-backtracking"
category = "runtime_check"
severity = "medium"
effort = "S"
message = "A pattern that backtracks catastrophically."
docs = "https://example.com"
strings = '^(a+)+$'
flag = ["x = 'aaaa'  # flag"]
ok = ["y = 'A_RUN_b'"]
'''.replace("A_RUN", "a" * 40)


@pytest.mark.slow
def test_a_pack_example_that_backtracks_is_the_packs_error_not_a_hang(tmp_path):
    """`rules --check` runs the examples under the per-file budget in a child process: a regex stuck in C is
    ended and reported as the pack's error (exit 2, one line)."""
    import subprocess
    import sys
    pack = _pack(tmp_path, BACKTRACKING_RULE, "python/backtrack.toml")
    # 5 s: the quick example stays inside it on a loaded machine (1 s did not, at a load average of 10)
    done = subprocess.run([sys.executable, "-m", "auditor", "rules", "--check", str(pack), "--time-budget", "5"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in done.stderr
    assert lines[0].startswith("rocm-audit: error: rule pack: ") and "RA591 ok example 1" in lines[0]
    assert "over the 5 s per-file time budget" in lines[0]      # 2^40 steps would take days: the budget ended it


def test_pack_examples_in_budgeted_children_still_pass_and_fail(tmp_path, capsys):
    code, out, _ = _run(capsys, "rules", "--check", _pack(tmp_path))
    assert code == 0 and "3 examples, 0 failing" in out
    broken = PACKAGE_RULE.replace("acme-tools==1.0", "acme-fused-kernels==1.0")
    code, out, _ = _run(capsys, "rules", "--check", _pack(tmp_path / "b", broken))
    assert code == 1 and "RA190 ok example 1: requirements.txt: ok example reported on line(s) [2]" in out
