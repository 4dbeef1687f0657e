"""What CI reads: SARIF for GitHub code scanning, workflow-command annotations, a Markdown PR comment, several
reports from one run, and the pre-commit hook definitions."""
import json
import re

import jsonschema
import pytest
import yaml

from auditor.cli.app import main
from auditor.run.discover.files import classify
from tests.conftest import FIXTURES, REPO, write_tree
from tests.gitrepo import GitRepo

SARIF_SCHEMA = json.loads((REPO / "auditor" / "report" / "schema" / "sarif-github.schema.json").read_text())


def run_format(capsys, *args) -> tuple[int, str]:
    code = main([*map(str, args), "--no-progress", "-j", "1"])
    return code, capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.parametrize("fixture", sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()))
def test_sarif_validates_against_githubs_required_fields(fixture, capsys):
    code, out = run_format(capsys, FIXTURES / fixture, "--format", "sarif", "--fail-on", "never", "--sarif-all")
    assert code == 0
    sarif = json.loads(out)
    jsonschema.validate(sarif, SARIF_SCHEMA)
    _, report_text = run_format(capsys, FIXTURES / fixture, "--format", "json", "--fail-on", "never")
    report = json.loads(report_text)
    results = sarif["runs"][0]["results"]
    assert len(results) == len(report["findings"])
    for result, finding in zip(results, report["findings"]):
        location = result["locations"][0]["physicalLocation"]
        # fixtures sit inside this git repository: URIs are relative to its root, not to the scanned directory
        assert location["artifactLocation"]["uri"] == f"fixtures/{fixture}/{finding['path']}"
        assert location["region"]["startLine"] == (finding["line"] or 1)
        assert result["partialFingerprints"] == {"rocmAudit/v1": finding["fingerprint"]}
    rules = {r["id"]: r for r in sarif["runs"][0]["tool"]["driver"]["rules"]}
    assert {r["ruleId"] for r in results} <= set(rules)
    assert all(len(r["help"]["text"]) > len(r["shortDescription"]["text"]) for r in rules.values())


def test_sarif_schema_rejects_what_github_would(capsys):
    _, out = run_format(capsys, FIXTURES / "llm_serving", "--format", "sarif", "--fail-on", "never")
    good = json.loads(out)
    broken = [
        lambda s: s.update(version="2.0.0"),
        lambda s: s["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"].update(
            uri="/abs/path.py"),
        lambda s: s["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"].update(
            uri="file:///repo/a.py"),
        lambda s: s["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"].pop("startLine"),
        lambda s: s["runs"][0]["tool"]["driver"]["rules"][0].pop("help"),
        lambda s: s["runs"][0]["results"][0].pop("partialFingerprints"),
    ]
    for breaks in broken:
        sarif = json.loads(json.dumps(good))
        breaks(sarif)
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(sarif, SARIF_SCHEMA)


def test_sarif_marks_baseline_state(tmp_path, capsys):
    repo = GitRepo(tmp_path / "r", {"serve.py": "import tensorrt_llm\n"})
    repo.git("checkout", "-q", "-b", "f")
    repo.commit({"gpu.py": "import pynvml\n"})
    code, out = run_format(capsys, repo.root, "--format", "sarif", "--diff-base", "main")
    assert code == 1
    states = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]: r["baselineState"]
              for r in json.loads(out)["runs"][0]["results"]}
    assert states == {"gpu.py": "new", "serve.py": "unchanged"}


def test_github_annotations_cap_and_summary(tmp_path, capsys):
    files = {f"pkg/m{i:02}.py": f"import pynvml\nimport tensorrt_llm  # 100% CUDA, {i}\n" for i in range(15)}
    write_tree(tmp_path, files)
    code, out = run_format(capsys, tmp_path, "--format", "github")
    assert code == 1
    lines = out.splitlines()
    errors = [line for line in lines if line.startswith("::error ")]
    assert len(errors) == 10 and not [line for line in lines if line.startswith("::warning ")]
    assert errors[0].startswith("::error file=pkg/m") and ",line=" in errors[0]
    assert "title=rocm-audit RA100 " in errors[0]
    notice = next(line for line in lines if line.startswith("::notice"))
    assert "30 finding(s) fail" in notice and "20 more new finding(s) not annotated" in notice
    listed = [line for line in lines if re.match(r"pkg/m\d\d\.py:\d: RA1", line)]
    assert len(listed) == 20                                       # the rest are in the log


def test_github_annotation_escaping(tmp_path, capsys):
    write_tree(tmp_path, {"a,b:c%.py": "import pynvml\n"})
    _, out = run_format(capsys, tmp_path, "--format", "github")
    error = next(line for line in out.splitlines() if line.startswith("::error"))
    assert error.startswith("::error file=a%2Cb%3Ac%25.py,line=1,")
    assert "%0AROCm alternative: " in error and "\n" not in error


def test_markdown_comment_lists_new_findings_and_escapes(tmp_path, capsys):
    repo = GitRepo(tmp_path / "r", {"serve.py": "import tensorrt_llm\n"})
    repo.git("checkout", "-q", "-b", "f")
    repo.commit({"x|<b>.py": "import pynvml\n"})
    code, out = run_format(capsys, repo.root, "--format", "markdown", "--diff-base", "main")
    assert code == 1
    assert out.startswith("<!-- rocm-audit -->\n### rocm-audit: ❌ this change adds 1 finding(s)")
    new_row = next(line for line in out.splitlines() if line.startswith("| ❌ |"))
    assert "`x\\|<b>.py:1`" in new_row and "RA112" in new_row   # GFM ends a cell at | even in a code span
    assert "<details><summary>1 known finding(s)</summary>" in out
    assert "<b>" not in out.replace("`x\\|<b>.py:1`", "")


def test_one_run_writes_several_reports(tmp_path, capsys):
    write_tree(tmp_path / "repo", {"serve.py": "import tensorrt_llm\n"})
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    code = main([str(tmp_path / "repo"), "--no-progress", "--sarif", str(out_dir / "r.sarif"),
                 "--json", str(out_dir / "r.json"), "--markdown", str(out_dir / "r.md")])
    assert code == 1
    assert "Verdict: BLOCKED" in capsys.readouterr().out                 # the terminal summary as usual
    assert json.loads((out_dir / "r.sarif").read_text())["version"] == "2.1.0"
    assert json.loads((out_dir / "r.json").read_text())["findings"][0]["path"] == "serve.py"
    assert "RA100" in (out_dir / "r.md").read_text()
    assert sorted(p.name for p in out_dir.iterdir()) == ["r.json", "r.md", "r.sarif"]   # no temp files left


def test_quiet_output_is_a_line_per_failing_finding(tmp_path, capsys):
    write_tree(tmp_path, {"serve.py": "import os\nimport tensorrt_llm\n"})
    code, out = run_format(capsys, tmp_path, "-q")
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith("serve.py:2:1: RA100 ") and "[critical]" in lines[0]
    assert lines[1].startswith("rocm-audit: 1 finding(s) at or above high")
    assert len(lines) <= 4


def test_files_named_one_by_one_are_reported_relative_to_their_repository(tmp_path, capsys):
    repo = GitRepo(tmp_path / "r", {"src/deep/serve.py": "import tensorrt_llm\n", "README.md": "x\n"})
    code, out = run_format(capsys, repo.root / "src" / "deep" / "serve.py", "--format", "json")
    assert code == 1
    assert [f["path"] for f in json.loads(out)["findings"]] == ["src/deep/serve.py"]


HOOKS = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())


def test_hook_definitions():
    hooks = {h["id"]: h for h in HOOKS}
    commit, push = hooks["rocm-audit"], hooks["rocm-audit-full"]
    assert "--force-exclude" in commit["entry"] and "--quiet" in commit["entry"]
    assert "--no-html" in commit["entry"] and "--no-progress" in commit["entry"]
    assert commit.get("pass_filenames", True) and commit["language"] == "python"
    assert push["pass_filenames"] is False and push["stages"] == ["pre-push"] and push["entry"].endswith(" .")


def test_hooks_never_run_together_so_no_finding_is_printed_twice():
    """A hook without `stages` runs at every installed stage: on `git push` the staged-files hook would report
    what rocm-audit-full reports again."""
    commit, push = (set(h.get("stages", ["pre-commit", "pre-merge-commit", "pre-push", "manual"])) for h in HOOKS)
    assert "pre-push" not in commit and "pre-commit" in commit
    assert commit.isdisjoint(push)


@pytest.mark.parametrize("path", [
    "a.py", "pkg/types.pyi", "nb/demo.ipynb", "csrc/k.cu", "inc/k.cuh", "x.c", "x.cc", "x.cpp", "x.cxx", "x.h",
    "x.hpp", "x.hh", "x.hxx", "x.inl", "x.inc", "x.tpp", "requirements.txt", "requirements-dev.txt",
    "requirements/cuda.txt", "requirements-dev/extra.in", "constraints.txt", "pyproject.toml", "sub/setup.cfg",
    "setup.py", "environment.yml", "environment-gpu.yaml", "Pipfile", "CMakeLists.txt", "cmake/FindX.cmake",
    "Makefile", "GNUmakefile", "rules.mk", "Dockerfile", "docker/Dockerfile.cuda", "x.dockerfile", "Containerfile",
    "docker-compose.yml", "compose.yaml", ".github/workflows/ci.yml", ".gitlab-ci.yml", "run.sh", "x.bash",
    "ops/k.pyx", "ops/k.pxd", "ops/k.pxi", "BUILD", "third/BUILD.bazel", "defs.bzl", "WORKSPACE", "MODULE.bazel",
    ".bazelrc", "recipe/meta.yaml", "deploy/pod.yaml", "chart/templates/svc.yml",
    "x.ipp", "x.tcc", "x.txx", "x.c++", "x.h++", "x.def", "x.ixx", "x.cppm", "x.ii", "k.cuinc", "k.cu.in", "k.cuh.in",
])
def test_hook_files_pattern_covers_every_kind_rocm_audit_reads(path):
    assert classify(path), path
    assert re.search(HOOKS[0]["files"], path), path


@pytest.mark.parametrize("path", ["README.md", "notes.txt", "data.json", "docs/index.rst", "img.png"])
def test_hook_files_pattern_skips_other_files(path):
    assert classify(path) is None
    assert not re.search(HOOKS[0]["files"], path), path


def test_paths_after_flags_as_pre_commit_passes_them(tmp_path, capsys):
    write_tree(tmp_path, {"a.py": "import pynvml\n", "b.py": "import tensorrt_llm\n"})
    code = main(["check", "--quiet", str(tmp_path / "a.py"), "--no-progress", str(tmp_path / "b.py")])
    out = capsys.readouterr().out
    assert code == 1 and "a.py:1:1: RA112" in out and "b.py:1:1: RA100" in out
