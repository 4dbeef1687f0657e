"""One gate, every mode: each fail-closed attack (a pull request that tries to get CUDA-only code past the gate
unread, unscanned or under a vendored-looking name) is run on a fresh git repository under the README's CI command
(--diff-base), CI with a baseline (both), --baseline alone, and the two pre-commit hooks with the baseline (their
entries read from .pre-commit-hooks.yaml). Every mode must fail it, naming the file."""
from __future__ import annotations

from dataclasses import dataclass

import pytest

from tests.conftest import fast_diagonal, run_in_repo
from tests.gitrepo import GitRepo
from tests.test_pr_cannot_weaken import BASELINE, CRITICAL, hook_entry

GITHUB = ("--format", "github", "--no-progress", "-j", "1")
BROKEN_DECLARATION = "template<typename T struct Tile {};\n"
HOPPER_KERNEL = '__global__ void k() { asm volatile("wgmma.fence.sync.aligned;"); }\n'
OLD_MODULE = "".join(f"def helper_{i}(value):\n    return value + {i}\n\n" for i in range(12))
BASE = {"app/serve.py": "import torch\n", "app/old.py": "import pynvml\n", "app/helpers.py": OLD_MODULE,
        "README.md": "a project\n"}


@dataclass(frozen=True)
class Attack:
    files: dict[str, str]            # what the change writes
    removed: tuple[str, ...] = ()    # what it deletes (a rename's old name)
    args: tuple[str, ...] = ()       # the CI job's own flags
    path: str = ""                   # where the gate must fail
    line: int | None = None          # a finding's line and rule, else the file fails closed with `why`
    rule: str = ""
    why: str = ""


ATTACKS = {
    "unread-lines": Attack({"csrc/k.cu": BROKEN_DECLARATION * 12 + HOPPER_KERNEL}, path="csrc/k.cu",
                           why="syntax errors from line 1 leave code the change adds unread, with words of RA303"),
    "unread-lines-in-a-changed-file": Attack(
        {"app/serve.py": "import torch\n", "csrc/old.cu": "int plain(int v) { return v; }\n"
         + BROKEN_DECLARATION * 12 + HOPPER_KERNEL}, path="csrc/old.cu",
        why="syntax errors from line 2 leave code the change adds unread, with words of RA303"),
    "vendored-name": Attack({"src/vendor/fast.py": CRITICAL}, path="src/vendor/fast.py", line=1, rule="RA100"),
    "renamed-into-a-vendored-name": Attack({"third_party/new/helpers.py": OLD_MODULE + CRITICAL},
                                          removed=("app/helpers.py",), path="third_party/new/helpers.py",
                                          line=37, rule="RA100"),
    "import-after-a-syntax-error": Attack({"app/serve.py": "import torch\ndef f(:\n" + CRITICAL},
                                         path="app/serve.py", line=3, rule="RA100"),
    "python-read-only-for-its-imports": Attack(
        {"app/serve.py": "".join(f"x{i} = ]\n" for i in range(40)) + "torch.cuda.nccl.version()\n"},
        path="app/serve.py", why="cannot parse: syntax error at line 1"),
    "over-the-size-cap": Attack({"csrc/big.cu": HOPPER_KERNEL + "// pad\n" * 400}, args=("--max-file-size", "1k"),
                                path="csrc/big.cu", why="skipped: 0.0 MB is over the 0 MB file size limit"),
}


def ci(attack: Attack, *gate: str) -> tuple[str, ...]:
    return ("check", ".", *gate, *GITHUB, *attack.args)


MODES = {
    "diff-base": lambda attack: ci(attack, "--diff-base", "main"),
    "diff-base-and-baseline": lambda attack: ci(attack, "--diff-base", "main", "--baseline", BASELINE),
    "baseline": lambda attack: ci(attack, "--baseline", BASELINE),
    "pre-commit-hook": lambda attack: (*hook_entry("rocm-audit"), "--baseline", BASELINE, *attack.args,
                                       *sorted(attack.files)),
    "pre-push-hook": lambda attack: (*hook_entry("rocm-audit-full"), "--baseline", BASELINE, *attack.args),
}


def adopted_then_changed(tmp_path, capfd, attack: Attack, commit: bool) -> GitRepo:
    """main: the project with its baseline committed; then the attack, committed on a branch or only staged."""
    repo = GitRepo(tmp_path / "repo", {**BASE, "csrc/old.cu": "int plain(int v) { return v; }\n"})
    assert run_in_repo(capfd, repo, "baseline", ".")[0] == 0
    repo.commit(message="adopt rocm-audit")
    repo.git("checkout", "-q", "-b", "pr")
    for path in attack.removed:
        (repo.root / path).unlink()
    repo.write(attack.files)
    repo.git("add", "-A")
    if commit:
        repo.git("commit", "-q", "-m", "the pull request")
    return repo


def expected(attack: Attack, mode: str) -> str:
    """The line the mode's output must hold: GitHub annotations in CI, the terminal's lines in the hooks."""
    github = not mode.endswith("-hook")
    if attack.line is not None:
        if github:
            return f"::error file={attack.path},line={attack.line},col=1,title=rocm-audit {attack.rule}"
        return f"{attack.path}:{attack.line}:1: {attack.rule}"
    sentence = f"{attack.path}: not scanned completely ({attack.why}"
    return f"::error file={attack.path},title=rocm-audit%3A fails closed::{sentence}" if github else sentence


@pytest.mark.parametrize(("name", "mode"), fast_diagonal(sorted(ATTACKS), sorted(MODES)))
def test_every_fail_closed_attack_fails_under_every_gate_mode(tmp_path, capfd, name, mode):
    attack = ATTACKS[name]
    repo = adopted_then_changed(tmp_path, capfd, attack, commit=mode != "pre-commit-hook")
    code, out, err = run_in_repo(capfd, repo, *MODES[mode](attack))
    assert code == 1, out + err
    assert expected(attack, mode) in out, out


@pytest.mark.parametrize("mode", ["diff-base", "baseline", "pre-push-hook"])
def test_unread_lines_that_were_there_when_the_baseline_was_written_stay_known(tmp_path, capfd, mode):
    """The base had the unread kernel; the change only adds a comment above it: known in every mode."""
    broken = BROKEN_DECLARATION * 12 + HOPPER_KERNEL
    repo = GitRepo(tmp_path / "repo", {**BASE, "csrc/old.cu": broken})
    assert run_in_repo(capfd, repo, "baseline", ".")[0] == 0
    repo.commit(message="adopt rocm-audit")
    repo.git("checkout", "-q", "-b", "pr")
    repo.commit({"csrc/old.cu": "// a comment the change adds\n" + broken})
    code, out, _ = run_in_repo(capfd, repo, *MODES[mode](Attack({})))
    assert code == 0, out
    assert "fails closed" not in out and "not scanned completely" not in out


def test_a_baseline_rewritten_after_the_change_knows_what_check_sees(tmp_path, capfd):
    """`rocm-audit baseline` scans the vendored-looking directories added since the baseline's commit, as
    `check --baseline` does: accepting today's findings makes the hook pass, and the new code is in the file."""
    repo = adopted_then_changed(tmp_path, capfd, ATTACKS["vendored-name"], commit=True)
    assert run_in_repo(capfd, repo, *MODES["baseline"](Attack({})))[0] == 1
    assert run_in_repo(capfd, repo, "baseline", ".")[0] == 0
    assert "src/vendor/fast.py" in (repo.root / BASELINE).read_text()
    code, out, _ = run_in_repo(capfd, repo, *MODES["baseline"](Attack({})))
    assert code == 0, out


@pytest.mark.parametrize("hook", ["rocm-audit", "rocm-audit-full"])
def test_the_hooks_without_a_baseline_fail_unread_lines_too(tmp_path, capfd, hook):
    """Without a baseline every finding is the commit's, and so is every line no parse read."""
    attack = ATTACKS["unread-lines"]
    repo = GitRepo(tmp_path / "repo", BASE)
    repo.write(attack.files)
    repo.git("add", "-A")
    args = (*hook_entry(hook), *(sorted(attack.files) if hook == "rocm-audit" else ()))
    code, out, _ = run_in_repo(capfd, repo, *args)
    assert code == 1, out
    assert expected(attack, "pre-commit-hook") in out
