"""Reach fixtures: small trees with the expected disposition and reach facts of named lines
(tests/data/reach/expected.toml; `none`: no finding on the line). `check` gives each line its disposition, the gate
(`check --diff-base` on the same tree as a change, and `check --baseline` with an empty baseline) and `fix` (the
report it plans its edits from) give the same one, and the reach model holds the facts that decided it."""
from __future__ import annotations

import json
import shutil
import tomllib
from collections import defaultdict
from pathlib import Path

import pytest

from auditor.cli.app import main
from auditor.fix.apply import run_fix
from auditor.fix.data import shipped_fixes
from auditor.run.pipeline.context import analyse, prepare, reach_model, scan_all
from auditor.run.pipeline.options import ScanOptions
from auditor.match.rulebook import load_rulebook
from tests.conftest import fast_first
from tests.gitrepo import GitRepo

ROOT = Path(__file__).resolve().parent.parent
EXPECTED = tomllib.loads((ROOT / "tests" / "data" / "reach" / "expected.toml").read_text())["line"]
BY_TREE: dict[str, list[dict]] = defaultdict(list)
for _line in EXPECTED:
    BY_TREE[_line["tree"]].append(_line)


def _dispositions(report: dict, at: str) -> set[str]:
    path, _, line = at.rpartition(":")
    return {f["disposition"] for f in report["findings"] if f["path"] == path and f["line"] == int(line)} or {"none"}


def _check(capsys, *args) -> dict:
    main([*map(str, args), "--format", "json", "--no-progress", "--no-cache", "-j", "1", "--fail-on", "never"])
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("tree", sorted(BY_TREE))
def test_check_gives_each_named_line_its_expected_disposition(tree, capsys):
    report = _check(capsys, ROOT / tree)
    for expected in BY_TREE[tree]:
        assert _dispositions(report, expected["at"]) == {expected["disposition"]}, expected["at"]
        if "verdict" in expected:
            assert report["summary"]["verdict"] == expected["verdict"]


# the gate (a change's base and head, and a baseline) and fix's plan judge with the same analysis: one tree in the
# fast run, every tree in the full one
@pytest.mark.parametrize("tree", fast_first(sorted(BY_TREE)))
def test_the_gate_and_fix_give_each_named_line_the_disposition_check_gives(tree, tmp_path, capsys):
    repo = GitRepo(tmp_path / "repo", {"README.md": "base\n"})
    shutil.copytree(ROOT / tree, repo.root, dirs_exist_ok=True)
    repo.commit(message="the tree as a change")
    gated = _check(capsys, repo.root, "--diff-base", "HEAD~1")
    baseline = tmp_path / "baseline.json"
    main(["baseline", str(ROOT / tree), "-o", str(baseline), "--no-progress"])
    capsys.readouterr()
    against_baseline = _check(capsys, ROOT / tree, "--baseline", baseline)
    planned = run_fix([ROOT / tree], load_rulebook(), shipped_fixes()).before
    fixed = {"findings": [{"path": f.path, "line": f.span.line, "disposition": f.disposition}
                          for f in planned.findings]}
    for expected in BY_TREE[tree]:
        at = expected["at"]
        assert _dispositions(gated, at) == {expected["disposition"]}, f"{at} under the gate"
        assert _dispositions(against_baseline, at) == {expected["disposition"]}, f"{at} against a baseline"
        assert _dispositions(fixed, at) == {expected["disposition"]}, f"{at} in fix"
        if "verdict" in expected:
            assert expected["verdict"] == gated["summary"]["verdict"] == against_baseline["summary"]["verdict"]


@pytest.mark.parametrize("tree", sorted(BY_TREE))
def test_the_reach_of_each_named_line_holds_the_facts_that_decide_it(tree):
    rulebook = load_rulebook()
    ctx = prepare([ROOT / tree], rulebook, ScanOptions())
    results = scan_all(ctx)
    model = reach_model(ctx, results)
    rules = rulebook.by_id()
    scanned = defaultdict(list)
    for result in results:
        for finding in result.findings:
            scanned[f"{finding.path}:{finding.span.line}"].append(finding)
    # a line only a cross-file link reports (an import of a module that fails on ROCm): the analysis's finding
    linked = [f for f in analyse(ctx, results).findings if not scanned[f"{f.path}:{f.span.line}"]]
    for finding in linked:
        scanned[f"{finding.path}:{finding.span.line}"].append(finding)
    for expected in BY_TREE[tree]:
        at = expected["at"]
        if expected["disposition"] == "none":
            assert not scanned[at], at
            continue
        assert scanned[at], f"no finding at {at}"
        for finding in scanned[at]:
            reach = model.reach_of(finding, rules.get(finding.rule_id))
            assert set(expected.get("facts", ())) <= reach.facts, (at, reach.facts)
            assert not set(expected.get("not_facts", ())) & reach.facts, (at, reach.facts)
            if "confidence" in expected:
                assert str(reach.confidence) == expected["confidence"], at


@pytest.mark.parametrize(("manifest", "text", "shipped"), [
    ("pyproject.toml", '[tool.setuptools]\npackages = ["corekit", "corekit.nn"]\n', {"corekit"}),
    ("pyproject.toml", '[tool.setuptools.packages.find]\ninclude = ["corekit*"]\n', {"corekit"}),
    ("pyproject.toml", '[tool.setuptools.packages.find]\nexclude = ["extra*", "benchmarks*"]\n', {"corekit"}),
    ("pyproject.toml", '[tool.setuptools]\npackage-dir = {"corekit" = "lib"}\npackages = ["corekit"]\n',
     {"corekit", "extra"}),
    ("setup.py", 'from setuptools import setup\nsetup(name="corekit", packages=["corekit", "corekit.nn"])\n',
     {"corekit"}),
    ("setup.py", ('from setuptools import find_packages, setup\n'
                  'setup(name="corekit", packages=find_packages(exclude=["extra", "extra.*"]))\n'), {"corekit"}),
    ("setup.py", 'import setuptools\nPKGS = ["corekit"]\nsetuptools.setup(name="corekit", packages=PKGS)\n',
     {"corekit", "extra"}),
])
def test_the_shipped_packages_are_those_the_manifest_declares(manifest, text, shipped, tmp_path):
    """Read, never run: a literal list or find_packages' literal patterns; a computed list or a package mapped to
    another directory leaves every package directory shipped."""
    from auditor.model.rocmpath.reader import read_project
    from auditor.run.discover.files import discover
    from tests.conftest import write_tree
    if manifest == "pyproject.toml":
        text = '[project]\nname = "corekit"\nversion = "1"\n' + text
    root = write_tree(tmp_path / "repo", {manifest: text, "corekit/__init__.py": "", "corekit/nn/__init__.py": "",
                                          "extra/__init__.py": "", "extra/tool.py": "import pynvml\n"})
    project = read_project(discover([root], root).files)
    assert project.shipped_python["."] == frozenset(shipped)
