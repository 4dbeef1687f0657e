"""What a change cannot hide: a pull request on a temporary git repository tries to weaken
the README's CI command, the `--baseline` gate and the pre-commit hooks, and fails."""
import shlex
from pathlib import Path

import pytest

from tests.conftest import REPO, run_in_repo
from tests.gitrepo import GitRepo

pytestmark = pytest.mark.slow   # pull requests on git repositories, judged end to end

CI = ("check", ".", "--diff-base", "main", "--format", "github", "--no-progress", "-j", "1")
BASELINE = ".rocm-audit-baseline.json"
CRITICAL = "import tensorrt_llm\n"


run = run_in_repo


def branch(repo: GitRepo, files: dict[str, str]) -> GitRepo:
    repo.git("checkout", "-q", "-b", "pr")
    repo.commit(files, "the pull request")
    return repo


# --- --diff-base: vendored-looking names ------------------------------------------------------------------

@pytest.mark.parametrize("place", ["src/vendor/fast.py", "csrc/cutlass/fast.py", "venv/fast.py",
                                   "lib/site-packages/fast.py", "third_party/new/fast.py"])
def test_new_code_under_a_vendored_looking_name_is_scanned_under_diff_base(tmp_path, capfd, place):
    repo = branch(GitRepo(tmp_path / "repo", {"app.py": "import torch\n"}), {place: CRITICAL})
    code, out, _ = run(capfd, repo, *CI)
    assert code == 1
    assert f"::error file={place},line=1,col=1,title=rocm-audit RA100" in out


def test_a_directory_the_base_vendored_stays_vendored_with_a_note(tmp_path, capfd):
    repo = GitRepo(tmp_path / "repo", {"app.py": "import torch\n", "third_party/lib/old.py": "import os\n",
                                       ".gitmodules": '[submodule "c"]\n\tpath = csrc/cutlass\n'})
    branch(repo, {"third_party/lib/fast.py": CRITICAL, "csrc/cutlass/fast.py": CRITICAL})
    code, out, err = run(capfd, repo, *CI)
    assert code == 0, out
    assert "fast.py" not in out
    assert "rocm-audit: note: third_party: new files in this change are skipped as vendored code" in err
    # the base's .gitmodules names csrc/cutlass: the base vendored it, though it had no files there yet
    assert "rocm-audit: note: csrc/cutlass: new files in this change are skipped as vendored code" in err


def test_without_diff_base_vendored_names_are_still_skipped(tmp_path, capfd):
    repo = GitRepo(tmp_path / "repo", {"app.py": "import torch\n", "src/vendor/fast.py": CRITICAL})
    code, out, _ = run(capfd, repo, "check", ".", "--no-progress", "-q")
    assert code == 0 and "fast.py" not in out


# --- --baseline: settings from the baseline's record ------------------------------------------------------

@pytest.fixture
def adopted(tmp_path, capfd):
    """main: a config, known findings and the baseline written from them (with its record of the settings)."""
    repo = GitRepo(tmp_path / "repo", {".rocm-audit.toml": 'ignore = ["RA155"]\n', "app/old.py": "import pynvml\n"})
    code, out, _ = run(capfd, repo, "baseline", ".")
    assert code == 0 and "1 known finding(s)" in out
    repo.commit(message="adopt rocm-audit")
    assert '"settings": {' in (repo.root / BASELINE).read_text()
    return repo


@pytest.mark.parametrize("config", ['fail-on = "never"\n', 'ignore = ["RA1"]\n', 'select = ["RA3"]\n',
                                    'exclude = ["app/"]\n', 'per-file-ignores = {"app/*" = ["RA100"]}\n'])
def test_a_pull_request_config_cannot_loosen_the_baseline_gate(adopted, capfd, config):
    branch(adopted, {".rocm-audit.toml": config, "app/new.py": CRITICAL})
    code, out, _ = run(capfd, adopted, "check", ".", "--baseline", BASELINE, "--no-progress", "-q")
    assert code == 1
    assert "app/new.py:1:1: RA100" in out                                  # judged with the recorded settings
    assert ".rocm-audit.toml:1: " in out and "differs from what the baseline" in out


def test_the_command_line_still_decides_under_baseline(adopted, capfd):
    branch(adopted, {"app/new.py": CRITICAL})
    code, out, _ = run(capfd, adopted, "check", ".", "--baseline", BASELINE, "--no-progress", "-q",
                       "--fail-on", "never")
    assert code == 0, out


def test_a_pull_request_that_adds_its_finding_to_the_baseline_fails_when_the_base_is_known(adopted, capfd):
    branch(adopted, {"app/new.py": CRITICAL})
    assert run(capfd, adopted, "baseline", ".")[0] == 0     # the change accepts its own finding
    adopted.commit(message="accept it")
    code, out, _ = run(capfd, adopted, "check", ".", "--baseline", BASELINE, "--no-progress", "-q")
    assert code == 0   # without a base the baseline file is all there is
    code, out, _ = run(capfd, adopted, "check", ".", "--baseline", BASELINE, "--diff-base", "main",
                       "--no-progress", "-q")
    assert code == 1
    assert f"{BASELINE}: this change adds 1 known finding(s) to the baseline (RA100 in app/new.py" in out


def test_a_baseline_that_only_shrinks_passes_with_the_base_known(adopted, capfd):
    branch(adopted, {"app/old.py": "import torch\n"})
    code, out, _ = run(capfd, adopted, "check", ".", "--baseline", BASELINE, "--update-baseline", "--no-progress",
                       "-q")
    adopted.commit(message="fixed")
    code, out, _ = run(capfd, adopted, "check", ".", "--baseline", BASELINE, "--diff-base", "main",
                       "--no-progress", "-q")
    assert code == 0, out


# --- the pre-commit hooks, with their entries as .pre-commit-hooks.yaml writes them ------------------------

def hook_entry(hook_id: str) -> list[str]:
    import yaml

    hooks = {h["id"]: h for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
    return shlex.split(hooks[hook_id]["entry"])[1:]   # without the program name


@pytest.mark.parametrize("config", ['fail-on = "never"\n', 'ignore = ["RA100"]\nallow-partial = true\n'])
def test_the_pre_commit_hooks_with_a_baseline_cannot_be_weakened_by_the_change(adopted, capfd, config):
    adopted.write({".rocm-audit.toml": config, "app/new.py": CRITICAL, "app/broken.py": "type X = int\n" + CRITICAL})
    adopted.git("add", "-A")
    staged = ["app/new.py", "app/broken.py", ".rocm-audit.toml"]
    code, out, _ = run(capfd, adopted, *hook_entry("rocm-audit"), "--baseline", BASELINE, *staged)
    assert code == 1
    assert "app/new.py:1:1: RA100" in out and "app/broken.py:2:1: RA100" in out
    code, out, _ = run(capfd, adopted, *hook_entry("rocm-audit-full"), "--baseline", BASELINE)
    assert code == 1 and "app/new.py:1:1: RA100" in out


def test_the_readme_ci_command_ignores_a_pull_requests_own_fail_on(tmp_path, capfd):
    repo = branch(GitRepo(tmp_path / "repo", {"app.py": "import torch\n"}),
                  {".rocm-audit.toml": 'fail-on = "never"\nallow-partial = true\n',
                   "app.py": "import torch\ntype X = int\n" + CRITICAL})
    code, out, err = run(capfd, repo, *CI)
    assert code == 1 and "::error file=app.py,line=3" in out
    assert "allow-partial ignored" in err
    assert Path(repo.root / "app.py").exists()


def test_a_pull_request_cannot_name_its_own_baseline_under_the_ci_command(tmp_path, capfd):
    """A config `baseline = ...` added by the change would turn --diff-base into a gate the change wrote."""
    repo = branch(GitRepo(tmp_path / "repo", {"app.py": "import torch\n"}), {"app/new.py": CRITICAL})
    assert run(capfd, repo, "baseline", ".", "-o", "mine.json")[0] == 0
    repo.commit({".rocm-audit.toml": 'baseline = "mine.json"\n'}, "name it")
    code, out, err = run(capfd, repo, *CI)
    assert code == 1 and "::error file=app/new.py,line=1" in out
    assert ".rocm-audit.toml:1: baseline changed by this change" in err
