"""Traps for the next contributor, closed: rule-file id ranges, two rules claiming one package, citations of
documents that do not ship, and `pytest` run bare."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

from auditor.match.rulebook import RuleError, load_rulebook, rules_root
from auditor.cli.rulepack import example_problem
from tests.conftest import REPO, write_tree

IDS_LINE = re.compile(r"^# ids: (RA\d{3}-RA\d{3}(?:, RA\d{3}-RA\d{3})*)  ")


def _declared_ranges() -> dict[str, list[tuple[int, int]]]:
    ranges = {}
    for path in sorted(rules_root().rglob("*.toml")):
        text = path.read_text(encoding="utf-8")
        if '[[rule]]' not in text:
            continue
        match = IDS_LINE.match(text)
        assert match, f"{path.name}: the first line must declare its ids (# ids: RAnnn-RAnnn, ...)"
        ranges[path.relative_to(rules_root()).as_posix()] = [
            (int(a), int(b)) for a, b in re.findall(r"RA(\d{3})-RA(\d{3})", match.group(1))]
    return ranges


def test_every_rule_id_lies_in_its_files_declared_range():
    ranges = _declared_ranges()
    outside = [(r.source_file, r.id) for r in load_rulebook().rules
               if not any(lo <= int(r.id[2:]) <= hi for lo, hi in ranges[r.source_file])]
    assert not outside


def test_no_two_rule_files_declare_overlapping_ranges():
    spans = sorted((lo, hi, name) for name, pairs in _declared_ranges().items() for lo, hi in pairs)
    overlaps = [(a[2], b[2]) for a, b in zip(spans, spans[1:]) if b[0] <= a[1]]
    assert not overlaps


def _claiming_pack(root: Path, extra: str = "") -> Path:
    rule = f'''
[[rule]]
id = "RA190"
name = "acme-trt-wrapper"
category = "cuda_only_python_package"
severity = "critical"
effort = "XL"
message = "A team's own wording for TensorRT-LLM."
docs = "Internal."
imports = ["tensorrt_llm"]
{extra}
flag = ["import tensorrt_llm  # flag\\n"]
ok = ["import vllm\\n"]
'''
    return write_tree(root / "pack", {"python/acme.toml": rule}) / ""


def test_two_rules_claiming_one_import_are_refused_naming_both(tmp_path):
    with pytest.raises(RuleError) as err:
        load_rulebook(packs=[_claiming_pack(tmp_path)])
    assert "RA190" in str(err.value) and "RA100" in str(err.value) and "'tensorrt_llm'" in str(err.value)
    assert "overrides" in str(err.value)


def test_an_override_wins_and_the_losers_failing_example_names_the_winner(tmp_path):
    rulebook = load_rulebook(packs=[_claiming_pack(tmp_path, 'overrides = ["RA100"]')])
    by_id = rulebook.by_id()
    winner = by_id["RA190"]
    assert example_problem(rulebook, winner, winner.flag[0], True) is None
    loser = by_id["RA100"]
    example = next(e for e in loser.flag if e.file.endswith(".py") and "import tensorrt_llm" in e.code)
    problem = example_problem(rulebook, loser, example, True)
    assert problem is not None and "reported there by RA190 instead" in problem


def test_the_shipped_rules_claim_each_package_once():
    load_rulebook()   # _check_claims runs on every load; this pins that the shipped set passes it


def test_a_conda_toolkit_package_is_reported_once_in_pip_and_in_conda_files(tmp_path, run_json):
    repo = write_tree(tmp_path / "repo", {
        "requirements.txt": "cuda-toolkit==12.4\n",
        "environment.yml": "name: x\ndependencies:\n  - cuda-toolkit=12.4\n",
    })
    _, report = run_json(repo, "--fail-on", "never")
    rules = sorted((f["path"], f["rule"]) for f in report["findings"] if "cuda-toolkit" in f["snippet"])
    assert rules == [("environment.yml", "RA153"), ("requirements.txt", "RA140")]


# Background documents of the team that do not ship with the project: nothing in it may send a reader there.
UNSHIPPED = re.compile(r"\b(design|rocm-path|style)\.md\b|knowledge/\w+\.yaml|\bshared/")


@pytest.mark.slow
def test_no_committed_file_cites_a_document_that_does_not_ship():
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    citing = []
    for name in tracked.decode().split("\0"):
        path = REPO / name
        if not name or name.startswith(("tests/", "fixtures/", "auditor/example/")) or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        citing += [f"{name}:{text.count(chr(10), 0, m.start()) + 1}" for m in UNSHIPPED.finditer(text)]
    assert not citing


@pytest.mark.slow
def test_bare_pytest_collects_the_suite():
    pytest_bin = Path(sys.executable).with_name("pytest")
    done = subprocess.run([str(pytest_bin), "--collect-only", "-q", "tests/test_bad_input.py"], cwd=REPO,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "error" not in done.stdout.lower()


def test_every_error_the_tool_raises_derives_from_its_own_base():
    import importlib
    import inspect
    import pkgutil

    import auditor
    from auditor.util.errors import AuditorError

    stray = []
    for info in pkgutil.walk_packages(auditor.__path__, "auditor."):
        if info.name.endswith("__main__") or ".example" in info.name:
            continue
        module = importlib.import_module(info.name)
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == info.name and issubclass(cls, BaseException) and not name.startswith("_"):
                if not issubclass(cls, AuditorError):
                    stray.append(f"{info.name}.{name}")
    assert not stray


def test_a_tool_error_of_any_kind_is_exit_2_with_one_line(tmp_path, capsys):
    from auditor.cli.app import main

    bad = write_tree(tmp_path, {"pack/python/x.toml": "[[rule]]\nid = 'RA1'\n"}) / "pack"
    assert main(["rules", "--check", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rocm-audit: error: ") and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize(("edit", "said"), [
    (("rocm_true_pattern", "rocm_true_patern"), "[python] rocm_true_patern: unknown key"),
    (("cuda_only_call_pattern = '", "cuda_only_call_pattern = '(?:"), "[python] cuda_only_call_pattern: missing )"),
    (("[build]", "[buld]"), "unknown section [buld]"),
])
def test_a_misspelt_guard_key_or_a_broken_guard_regex_fails_the_load(tmp_path, edit, said):
    import shutil

    root = tmp_path / "rules"
    shutil.copytree(rules_root(), root)
    guards = root / "guards.toml"
    guards.write_text(guards.read_text(encoding="utf-8").replace(*edit, 1), encoding="utf-8")
    with pytest.raises(RuleError) as err:
        load_rulebook(root)
    assert str(err.value).startswith("guards.toml: ") and said in str(err.value)
