"""The real pre-commit (from PyPI) runs this repository's hook on a throwaway repository: it builds the hook's
virtualenv by pip-installing rocm-audit, so it needs PyPI (or a configured index) and takes a while once."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.gitrepo import GIT_ENV, GitRepo, git

pytestmark = pytest.mark.slow   # pre-commit installs and runs the hooks


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory) -> Path:
    """This working tree as pre-commit would fetch it: a repository whose HEAD holds every file that is not
    ignored (committed or not yet), so the test checks the hook as it is on disk."""
    snapshot = tmp_path_factory.mktemp("hook") / "rocm-audit"
    listed = git(REPO, "ls-files", "-z", "--cached", "--others", "--exclude-standard").split("\0")
    for relative in filter(None, listed):
        source = REPO / relative
        if source.is_file():
            target = snapshot / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    GitRepo(snapshot).commit(message="snapshot")
    return snapshot


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


def try_repo(workdir: Path, hook_repo: Path, home: Path) -> subprocess.CompletedProcess:
    env = {**GIT_ENV, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never", "NO_COLOR": "1"}
    env.pop("VIRTUAL_ENV", None)
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(hook_repo), "rocm-audit", "--verbose"],
        cwd=workdir, env=env, capture_output=True, text=True, timeout=900, check=False,
    )


def staged_repo(root: Path, files: dict[str, str]) -> Path:
    repo = GitRepo(root, {"README.md": "a throwaway repository\n"})
    repo.write(files)
    repo.git("add", *files)
    return root


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_precommit_hook_blocks_cuda_only_import_and_passes_portable_code(tmp_path, hook_repo, pre_commit_home):
    blocked = staged_repo(tmp_path / "blocked", {
        "model/attention.py": "import torch\nfrom flash_attn_interface import flash_attn_func\n",
        "model/ok.py": "import torch\n",
    })
    done = try_repo(blocked, hook_repo, pre_commit_home)
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "model/attention.py:2:1: RA101" in output, output     # the file, the line, the rule
    assert "model/ok.py:" not in output

    portable = staged_repo(tmp_path / "portable", {
        "train.py": "import torch\n\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\n",
        "requirements.txt": "torch>=2.3\n",
    })
    done = try_repo(portable, hook_repo, pre_commit_home)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Passed" in done.stdout



@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_on_push_only_the_whole_repository_hook_runs_so_findings_are_printed_once(tmp_path, hook_repo, pre_commit_home):
    repo = staged_repo(tmp_path / "pushed", {"serve.py": "import tensorrt_llm\n"})
    env = {**GIT_ENV, "PRE_COMMIT_HOME": str(pre_commit_home), "PRE_COMMIT_COLOR": "never", "NO_COLOR": "1"}
    env.pop("VIRTUAL_ENV", None)
    done = subprocess.run(   # every hook of the repository, at the pre-push stage, as `git push` runs them
        [sys.executable, "-m", "pre_commit", "try-repo", str(hook_repo), "--hook-stage", "pre-push", "--all-files",
         "--verbose"],
        cwd=repo, env=env, capture_output=True, text=True, timeout=900, check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert output.count("serve.py:1:1: RA100") == 1, output
    assert "rocm-audit (whole repository)" in output


def _readme_snippet() -> str:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    start = readme.index("```yaml\n# .pre-commit-config.yaml\n") + len("```yaml\n")
    return readme[start:readme.index("```", start)]


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_the_readme_snippet_works_when_pasted_and_its_first_run_says_what_to_run(tmp_path, hook_repo,
                                                                                pre_commit_home):
    """The README's .pre-commit-config.yaml, with only its placeholders filled in (the URL and the commit SHA),
    in a fresh repository: the first commit stops with the command that makes the baseline; after running that
    command the commit passes, and a new CUDA-only import blocks."""
    import re
    import shlex

    sha = git(hook_repo, "rev-parse", "HEAD").strip()
    snippet = _readme_snippet().replace("https://github.com/YOUR-ORG/rocm-audit", str(hook_repo))
    snippet = re.sub(r"rev: [0-9a-f]{40}", f"rev: {sha}", snippet)
    repo = staged_repo(tmp_path / "mine", {"serve.py": "import tensorrt_llm\n", ".pre-commit-config.yaml": snippet})
    env = {**GIT_ENV, "PRE_COMMIT_HOME": str(pre_commit_home), "PRE_COMMIT_COLOR": "never", "NO_COLOR": "1"}
    env.pop("VIRTUAL_ENV", None)

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "pre_commit", "run", *args], cwd=repo, env=env,
                              capture_output=True, text=True, timeout=900, check=False)

    first = run("rocm-audit")
    output = first.stdout + first.stderr
    assert first.returncode != 0, output
    command = re.search(r"create it with `([^`]+)`", output)
    assert command, output
    words = shlex.split(command.group(1))
    assert words[0] == "rocm-audit"
    made = subprocess.run([str(Path(sys.executable).parent / "rocm-audit"), *words[1:]], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert made.returncode == 0 and (repo / ".rocm-audit-baseline.json").is_file(), made.stderr
    git(repo, "add", ".rocm-audit-baseline.json")
    assert run("rocm-audit").returncode == 0
    (repo / "monitor.py").write_text("import pynvml\n", encoding="utf-8")
    git(repo, "add", "monitor.py")
    blocked = run("rocm-audit")
    assert blocked.returncode == 1 and "monitor.py:1:1: RA112" in blocked.stdout, blocked.stdout
