"""The base and the head are judged with the same whole tree (build files, headers, every module): a change that
deletes a guard the build defines, or a build change that makes unchanged CUDA-only code live, adds that code to
what breaks on ROCm, in every gate mode."""
from __future__ import annotations

import pytest

from tests.conftest import fast_diagonal, run_in_repo
from tests.gitrepo import GitRepo
from tests.test_gate_modes import MODES, Attack
from tests.test_pr_cannot_weaken import BASELINE

HOPPER_KERNEL = '__global__ void k() { asm volatile("wgmma.fence.sync.aligned;"); }\n'
HIP_DEFINES_GUARD = ("project(foo CXX CUDA)\nadd_library(foo csrc/k.cu)\nif(USE_HIP)\n  enable_language(HIP)\n"
                     "  add_compile_definitions(FOO_USE_HIP)\nelseif(USE_CUDA)\n  enable_language(CUDA)\nendif()\n")
GUARDED = "#ifndef FOO_USE_HIP\n" + HOPPER_KERNEL + "#endif\n"
BASE = {"CMakeLists.txt": HIP_DEFINES_GUARD, "csrc/k.cu": GUARDED, "app/serve.py": "import torch\n"}
CHANGES = {
    # the kernel alone looks live (nothing defines the macro): the base must be read with its CMakeLists.txt
    "the-change-deletes-the-guard": ({"csrc/k.cu": HOPPER_KERNEL}, 1),
    # csrc/k.cu does not change: the build change makes it live
    "the-build-stops-defining-the-guard": ({"CMakeLists.txt": HIP_DEFINES_GUARD.replace(
        "  add_compile_definitions(FOO_USE_HIP)\n", "")}, 2),
}


@pytest.mark.parametrize(("change", "mode"), fast_diagonal(sorted(CHANGES),
                                                           ["diff-base", "diff-base-and-baseline", "baseline"]))
def test_code_a_change_makes_live_is_new(tmp_path, capfd, change, mode):
    repo = GitRepo(tmp_path / "repo", BASE)
    assert run_in_repo(capfd, repo, "baseline", ".")[0] == 0
    assert "RA303" not in (repo.root / BASELINE).read_text()      # guarded at the base
    repo.commit(message="adopt rocm-audit")
    repo.git("checkout", "-q", "-b", "pr")
    files, line = CHANGES[change]
    repo.commit(files, "the pull request")
    code, out, _ = run_in_repo(capfd, repo, *MODES[mode](Attack({})))
    assert code == 1, out
    assert f"::error file=csrc/k.cu,line={line},col=23,title=rocm-audit RA303" in out


def test_an_unchanged_finding_that_was_live_at_the_base_stays_known(tmp_path, capfd):
    repo = GitRepo(tmp_path / "repo", {**BASE, "csrc/k.cu": HOPPER_KERNEL})
    repo.git("checkout", "-q", "-b", "pr")
    repo.commit({"CMakeLists.txt": HIP_DEFINES_GUARD + "# a comment\n"}, "the pull request")
    code, out, _ = run_in_repo(capfd, repo, *MODES["diff-base"](Attack({})))
    assert code == 0, out
    assert "1 known" in out
