"""The CI gate as a team lives with it, in real git repositories: a committed baseline, then edits that must
pass (code moved, suppressed) or fail (a new CUDA-only import, a duplicate of a known one), and a branch
checked against main with --diff-base."""
import json
import re

import jsonschema
import pytest

from auditor.cli.app import main
from tests.conftest import REPO
from tests.gitrepo import GitRepo, git

pytestmark = pytest.mark.slow   # git repositories: --diff-base and baselines end to end

REPORT_SCHEMA = json.loads((REPO / "auditor" / "report" / "schema" / "report.schema.json").read_text())

SERVE = (
    "import os\n"
    "import tensorrt_llm\n"
    "\n"
    "def build(model):\n"
    "    return tensorrt_llm.LLM(model=model)\n"
)
MONITOR = "import pynvml\n\n\ndef init():\n    pynvml.nvmlInit()\n"
APP = {"app/serve.py": SERVE, "app/monitor.py": MONITOR, "requirements.txt": "fastapi\ntensorrt-llm==0.10.0\n"}
BASELINE = ".rocm-audit-baseline.json"


@pytest.fixture
def run(capsys):
    """rocm-audit with JSON on stdout: (exit code, report or {}, stderr)."""

    def go(*args) -> tuple[int, dict, str]:
        code = main([*map(str, args), "--format", "json", "--no-progress", "-j", "1"])
        captured = capsys.readouterr()
        return code, json.loads(captured.out) if captured.out.strip() else {}, captured.err

    return go


def new_findings(report: dict) -> list[tuple[str, str, int]]:
    return sorted((f["path"], f["rule"], f["line"]) for f in report["findings"] if f["new"])


@pytest.fixture
def repo(tmp_path, capsys):
    """A repository with known CUDA-only code and a committed baseline."""
    repo = GitRepo(tmp_path / "repo", APP)
    assert main(["baseline", str(repo.root), "--no-progress", "-j", "1"]) == 0
    assert "known finding" in capsys.readouterr().out
    repo.commit(message="baseline")
    return repo


def check(run, repo, *extra):
    return run(repo.root, "--baseline", repo.root / BASELINE, *extra)


def test_baseline_file_is_sorted_counted_and_has_no_lines(repo):
    data = json.loads((repo.root / BASELINE).read_text())
    entries = data["entries"]
    assert entries == sorted(entries, key=lambda e: (e["path"], e["rule"], e["subject"], e["fingerprint"]))
    assert all(set(e) == {"fingerprint", "rule", "path", "subject", "count"} for e in entries)
    assert {(e["path"], e["subject"]) for e in entries} >= {("app/serve.py", "tensorrt_llm"),
                                                             ("app/monitor.py", "pynvml")}
    text = (repo.root / BASELINE).read_text()
    assert '"line"' not in text and not re.search(r"\d{4}-\d\d-\d\d", text)   # no line numbers, no timestamps


def test_unchanged_tree_passes_and_every_finding_is_known(repo, run):
    code, report, _ = check(run, repo)
    assert code == 0
    assert report["findings"] and all(f["new"] is False for f in report["findings"] if not f["guarded"])
    assert report["gate"]["mode"] == "baseline" and report["gate"]["new"] == 0
    jsonschema.validate(report, REPORT_SCHEMA)


def test_moved_lines_still_pass(repo, run):
    moved = "# a header comment\n\n\n" + SERVE.replace("import os\nimport tensorrt_llm\n", "import tensorrt_llm\nimport os\n")
    repo.write({"app/serve.py": moved, "app/monitor.py": "\n\n" + MONITOR})
    code, report, _ = check(run, repo)
    assert code == 0, new_findings(report)
    assert new_findings(report) == []


def test_new_cuda_only_import_fails_and_is_the_only_new_finding(repo, run):
    repo.write({"app/serve.py": "import flash_attn_interface\n" + SERVE})
    code, report, _ = check(run, repo)
    assert code == 1
    assert new_findings(report) == [("app/serve.py", "RA101", 1)]


def test_duplicate_of_a_known_finding_in_a_new_file_fails(repo, run):
    repo.write({"app/engine.py": "from tensorrt_llm import LLM\n\nengine = LLM(model='m')\n"})
    code, report, _ = check(run, repo)
    assert code == 1
    assert {(p, r) for p, r, _ in new_findings(report)} == {("app/engine.py", "RA100")}


def test_second_occurrence_in_the_same_file_is_new(repo, run):
    repo.write({"app/serve.py": SERVE + "\n\ndef again():\n    import tensorrt_llm as trt\n    return trt\n"})
    code, report, _ = check(run, repo)
    assert code == 1
    assert new_findings(report) == [("app/serve.py", "RA100", 9)]


def test_a_suppression_the_change_adds_does_not_silence_what_it_adds(repo, run):
    """One gate for every mode: as under --diff-base, a marker on a line the change adds silences nothing under
    --baseline alone (docs/suppressions.md); the invocation may allow it."""
    repo.write({"app/engine.py": "from tensorrt_llm import LLM  # rocm-audit: ignore[RA100]\n"})
    code, report, _ = check(run, repo)
    assert code == 1
    assert new_findings(report) == [("app/engine.py", "RA100", 1)]
    code, report, _ = check(run, repo, "--allow-new-suppressions")
    assert code == 0, new_findings(report)
    assert report["summary"]["suppressed"] == 1


def test_unknown_rule_in_a_suppression_is_reported_without_failing(repo, run, capsys):
    repo.write({"app/util.py": "import os  # rocm-audit: ignore[RA999]\n"})
    code, report, _ = check(run, repo)
    assert code == 0
    assert report["warnings"] == [{"path": "app/util.py", "line": 1,
                                   "message": report["warnings"][0]["message"]}]
    assert "RA999" in report["warnings"][0]["message"]
    assert main([str(repo.root), "--baseline", str(repo.root / BASELINE), "-q", "--no-progress"]) == 0
    assert "app/util.py:1: warning: unknown rule id RA999" in capsys.readouterr().out


def test_corrupt_baseline_exits_2_with_one_clear_line(repo, run):
    (repo.root / BASELINE).write_text('{"version": 1, "entries": [\n  {"fingerprint": "x",\n')
    code, report, err = check(run, repo)
    assert code == 2 and report == {}
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("rocm-audit: error:") and BASELINE in lines[0] and "corrupt baseline" in lines[0]


@pytest.mark.parametrize(("content", "needle"), [
    ("[]", "not a rocm-audit baseline"),
    ('{"version": 1, "entries": [{"rule": "RA100"}]}', "entry 1 needs"),
    (('{"version": 1, "entries": [{"fingerprint": "0000000000000000", "rule": "RA100", "path": "a.py", '
      '"subject": "x", "count": 1}]}'), "fingerprint does not match"),
])
def test_malformed_baseline_exits_2(repo, run, content, needle):
    (repo.root / BASELINE).write_text(content)
    code, _, err = check(run, repo)
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1


def test_missing_baseline_exits_2(tmp_path, run):
    GitRepo(tmp_path / "repo", APP)
    code, _, err = run(tmp_path / "repo", "--baseline", tmp_path / "nope.json")
    assert code == 2 and "no such baseline; create it with `rocm-audit baseline . -o " in err


def test_fixed_findings_strict_and_update_baseline(repo, run):
    data = json.loads((repo.root / BASELINE).read_text())
    for entry in data["entries"]:
        if entry["subject"] == "pynvml":
            entry["reason"] = "monitoring only; ported in Q3"
    (repo.root / BASELINE).write_text(json.dumps(data))
    repo.write({"app/serve.py": "import os\n"})               # tensorrt_llm is gone from serve.py
    assert check(run, repo)[0] == 0                              # fixing things never fails the gate
    code, report, err = check(run, repo, "--strict")
    assert code == 1 and "gone" in err                           # but a strict baseline must shrink with them
    assert {g["path"] for g in report["gate"]["gone"]} == {"app/serve.py"}
    code, _, err = check(run, repo, "--strict", "--update-baseline")
    assert code == 0 and "removed" in err
    entries = json.loads((repo.root / BASELINE).read_text())["entries"]
    assert "app/serve.py" not in {e["path"] for e in entries}
    assert any(e.get("reason") == "monitoring only; ported in Q3" for e in entries)   # reasons survive
    assert check(run, repo, "--strict")[0] == 0


def test_update_baseline_never_adds_findings(repo, run):
    repo.write({"app/new.py": "import pynvml\n"})
    code, _, _ = check(run, repo, "--update-baseline")
    assert code == 1
    assert "app/new.py" not in (repo.root / BASELINE).read_text()


@pytest.mark.parametrize(("args", "needle"), [
    (["--update-baseline"], "--update-baseline needs --baseline"),
    (["--strict"], "--strict needs --baseline"),
])
def test_gate_flag_misuse_is_a_usage_error(tmp_path, run, args, needle):
    code, _, err = run(tmp_path, *args)
    assert code == 2 and needle in err


# --- --diff-base ---------------------------------------------------------------------------------------

@pytest.fixture
def project(tmp_path):
    """main holds known CUDA-only code; each test branches off it."""
    return GitRepo(tmp_path / "project", APP)


def test_branch_adding_pynvml_fails_with_only_its_finding_new(project, run):
    project.git("checkout", "-q", "-b", "feature")
    project.commit({"app/gpu.py": "import os\nimport pynvml\n"}, "add gpu stats")
    code, report, _ = run(project.root, "--diff-base", "main")
    assert code == 1
    assert new_findings(report) == [("app/gpu.py", "RA112", 2)]
    assert report["gate"]["mode"] == "diff-base" and report["gate"]["against"].startswith("main (merge-base ")
    jsonschema.validate(report, REPORT_SCHEMA)
    assert project.git("worktree", "list").count("\n") == 1      # the temporary worktree is gone


def test_unchanged_branch_passes(project, run):
    project.git("checkout", "-q", "-b", "docs")
    project.commit({"app/serve.py": "# the serving entry point\n" + SERVE, "README.md": "docs\n"}, "docs")
    code, report, _ = run(project.root, "--diff-base", "main")
    assert code == 0, new_findings(report)
    assert all(f["new"] is False for f in report["findings"] if not f["guarded"])


def test_renamed_file_keeps_its_known_findings_and_uncommitted_work_counts(project, run):
    project.git("checkout", "-q", "-b", "rename")
    project.git("mv", "app/monitor.py", "app/gpu_monitor.py")
    project.commit(message="rename")
    assert run(project.root, "--diff-base", "main")[0] == 0
    (project.root / "app" / "gpu_monitor.py").write_text(MONITOR + "\nimport pynvml as nv2\n")   # not committed
    code, report, _ = run(project.root, "--diff-base", "main")
    assert code == 1
    assert new_findings(report) == [("app/gpu_monitor.py", "RA112", 7)]   # the added line, not the old import


def test_diff_base_of_a_subdirectory(project, run):
    project.git("checkout", "-q", "-b", "sub")
    project.commit({"app/gpu.py": "import pynvml\n"}, "gpu")
    code, report, _ = run(project.root / "app", "--diff-base", "main")
    assert code == 1 and new_findings(report) == [("gpu.py", "RA112", 1)]


def test_shallow_clone_without_the_base_exits_2_with_a_hint(project, tmp_path, run):
    project.git("checkout", "-q", "-b", "feature")
    project.commit({"app/gpu.py": "import pynvml\n"}, "gpu")
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", "--branch", "feature", project.root.as_uri(), str(shallow))
    for ref in ("main", "origin/main"):
        code, report, err = run(shallow, "--diff-base", ref)
        assert code == 2 and report == {}
        assert len(err.strip().splitlines()) == 1 and "fetch" in err and "shallow clone" in err, err
    both = tmp_path / "both"
    git(tmp_path, "clone", "-q", "--depth", "1", "--no-single-branch", project.root.as_uri(), str(both))
    git(both, "checkout", "-q", "feature")
    code, _, err = run(both, "--diff-base", "origin/main")
    assert code == 2 and "merge-base" in err and "fetch-depth: 0" in err, err


def test_diff_base_outside_git_exits_2(tmp_path, run):
    (tmp_path / "a.py").write_text("import pynvml\n")
    code, _, err = run(tmp_path, "--diff-base", "main")
    assert code == 2 and "not in one" in err
