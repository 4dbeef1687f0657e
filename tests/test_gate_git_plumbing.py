"""Git as git sees it: what a change's attributes, renames, submodules, LFS pointers and other version-control
directories cannot hide from the gate, and what `history` and `fleet` read out of git objects. Each test builds a
fresh repository and runs the command line as CI, the hooks or a user would."""
from __future__ import annotations

import json
import subprocess
import time

import pytest

from auditor.cli.app import main
from tests.conftest import fast_first, run_in_repo
from tests.fleetrepos import run_fleet
from tests.gitrepo import GIT_ENV, GitRepo
from tests.test_gate_modes import BROKEN_DECLARATION, HOPPER_KERNEL
from tests.test_pr_cannot_weaken import CRITICAL

CI = ("check", ".", "--diff-base", "main", "--format", "github", "--no-progress", "-j", "1")
BASE = {"app/serve.py": "import torch\n", "csrc/k.cu": "int plain(int v) { return v; }\n"}


def pull_request(tmp_path, files: dict[str, str], base: dict[str, str] = BASE) -> GitRepo:
    repo = GitRepo(tmp_path / "repo", base)
    repo.git("checkout", "-q", "-b", "pr")
    repo.commit(files, "the pull request")
    return repo


@pytest.mark.parametrize("attributes", fast_first(["*.cu -diff\n", "*.cu binary\n", "*.cu diff=hide\n",
                                                   "*.cu filter=lfs diff=lfs merge=lfs -text\n"]))
def test_the_change_s_gitattributes_do_not_hide_the_lines_it_adds(tmp_path, capfd, attributes):
    """A modified file the attributes make "binary" adds no lines to `git diff`: its unread kernel would pass."""
    kernel = BASE["csrc/k.cu"] + BROKEN_DECLARATION * 12 + HOPPER_KERNEL
    repo = pull_request(tmp_path, {".gitattributes": attributes, "csrc/k.cu": kernel})
    code, out, _ = run_in_repo(capfd, repo, *CI)
    assert code == 1, out
    assert ("::error file=csrc/k.cu,title=rocm-audit%3A fails closed::csrc/k.cu: not scanned completely (syntax "
            "errors from line 2 leave code the change adds unread, with words of RA303") in out


def test_a_form_feed_in_an_added_line_cannot_forge_the_diff_s_file_headers(tmp_path, capfd):
    """A line holding `\\f+++ b/other` is one line for git; read as two, the hunks after it went to another file
    and the unread kernel below was no longer the change's."""
    base = {**BASE, "csrc/k.cu": "int plain(int v) { return v; }\nint other(int v) { return v; }\n"}
    kernel = ("int plain(int v) { return v; }\n// x\f+++ b/README.md\nint other(int v) { return v; }\n"
              + BROKEN_DECLARATION * 12 + HOPPER_KERNEL * 2)
    repo = pull_request(tmp_path, {"csrc/k.cu": kernel}, base=base)
    code, out, _ = run_in_repo(capfd, repo, *CI)
    assert code == 1, out
    assert "::error file=csrc/k.cu,title=rocm-audit%3A fails closed::csrc/k.cu: not scanned completely" in out


@pytest.mark.parametrize("directory", [".svn", ".hg"])
def test_another_version_control_directory_is_scanned_when_git_tracks_it(tmp_path, capfd, directory):
    repo = pull_request(tmp_path, {f"{directory}/serve.py": CRITICAL, "app/serve.py": "import torch\n"})
    code, out, _ = run_in_repo(capfd, repo, *CI)
    assert code == 1
    assert f"::error file={directory}/serve.py,line=1,col=1,title=rocm-audit RA100" in out
    # the same directory untracked (another tool's data in the checkout) is still skipped
    plain = GitRepo(tmp_path / "plain", BASE)
    plain.write({f"{directory}/pristine/serve.py": CRITICAL, ".gitignore": f"{directory}/\n"})
    code, out, _ = run_in_repo(capfd, plain, "check", ".", "--no-progress", "-q")
    assert code == 0, out


def add_gitlink(repo: GitRepo, path: str) -> None:
    """A submodule as a pull request adds it: the gitlink and its .gitmodules entry (not cloned here)."""
    target = repo.git("rev-parse", "HEAD").strip()
    (repo.root / path).mkdir(parents=True)   # an empty directory, as a checkout leaves a submodule not cloned
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{target},{path}")
    repo.write({".gitmodules": f'[submodule "k"]\n\tpath = {path}\n\turl = https://example.com/k.git\n'})


def test_a_new_submodule_the_project_includes_fails_closed_and_others_are_named(tmp_path, capfd):
    repo = GitRepo(tmp_path / "repo", BASE)
    repo.git("checkout", "-q", "-b", "pr")
    add_gitlink(repo, "csrc/fastkern")
    add_gitlink(repo, "extern/unused")
    repo.commit({"csrc/k.cu": '#include "fastkern/gemm.cuh"\n' + BASE["csrc/k.cu"]}, "add the submodule")
    code, out, err = run_in_repo(capfd, repo, *CI)
    assert code == 1, out + err
    assert ('::error title=rocm-audit%3A fails closed::csrc/fastkern: a submodule this change '
            'adds, used by csrc/k.cu (#include "fastkern/gemm.cuh")') in out
    assert "rocm-audit: note: extern/unused: a submodule this change adds; its code is not scanned" in err


LFS = "version https://git-lfs.github.com/spec/v1\noid sha256:{}\nsize 1234\n".format("0" * 64)


@pytest.mark.parametrize("fmt", fast_first(["github", "json", "sarif", "terminal"]))
def test_a_git_lfs_pointer_is_not_scanned_as_the_file_in_every_format(tmp_path, capfd, fmt):
    repo = pull_request(tmp_path, {"csrc/kernels.cu": LFS})
    code, out, _ = run_in_repo(capfd, repo, "check", ".", "--diff-base", "main", "--format", fmt, "--no-progress")
    assert code == 1
    if fmt == "json":
        out = "".join(f["message"] for f in json.loads(out)["fails_closed"])
    assert "csrc/kernels.cu: not scanned completely (a Git LFS pointer, not the file; check out with lfs: true" \
        in out


@pytest.mark.slow
def test_a_byte_identical_vendored_copy_does_not_hide_the_shipped_file_from_fleet(tmp_path):
    upstream = GitRepo(tmp_path / "upstream" / "serving", {"app/serve.py": CRITICAL,
                                                           "third_party/copy/serve.py": CRITICAL})
    code, portfolio = run_fleet(upstream.root.as_uri(), "--out", tmp_path / "out", "--cache-dir", tmp_path / "cache")
    assert code == 0
    (row,) = portfolio["repositories"]
    assert row["verdict"] == "blocked", row


@pytest.mark.slow
def test_history_refuses_a_tree_that_lists_a_million_files_before_listing_it(tmp_path, capsys):
    """Six tree objects, each naming the one below ten times: a few KiB of objects, 10**6 paths."""
    repo = GitRepo(tmp_path / "repo", {"app/serve.py": "import torch\n"})
    blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=repo.root, env=GIT_ENV, input="x\n",
                          text=True, capture_output=True, check=True).stdout.strip()
    entries = "".join(f"100644 blob {blob}\tf{i}\n" for i in range(10))
    for _ in range(6):
        tree = subprocess.run(["git", "mktree"], cwd=repo.root, env=GIT_ENV, input=entries, text=True,
                              capture_output=True, check=True).stdout.strip()
        entries = "".join(f"040000 tree {tree}\td{i}\n" for i in range(10))
    commit = repo.git("commit-tree", tree, "-p", "HEAD", "-m", "wide").strip()
    repo.git("update-ref", "refs/heads/main", commit)
    started = time.perf_counter()
    code = main(["history", str(repo.root), "--db", str(tmp_path / "h.db"), "-q", "--no-progress"])
    assert code == 2
    assert time.perf_counter() - started < 30
    assert "its tree lists more than 500000 files" in capsys.readouterr().err


def test_a_commit_subject_cannot_forge_a_history_point(tmp_path, capsys):
    repo = GitRepo(tmp_path / "repo", {"app/serve.py": "import torch\n"})
    forged = "fix\x1e" + "f" * 40 + "\x1f4102444800\x1fmallory\x1fforged"
    repo.commit({"app/other.py": "import os\n"}, forged)
    assert main(["history", str(repo.root), "--db", str(tmp_path / "h.db"), "--format", "json",
                 "--no-progress", "-q"]) == 0
    points = json.loads(capsys.readouterr().out)["points"]
    assert len(points) == 2 and all(p["commit"] != "f" * 40 for p in points)


@pytest.mark.parametrize("flag", ["--skip-worktree", "--assume-unchanged"])
def test_an_edit_hidden_from_git_status_is_not_recorded_as_the_commit(tmp_path, capfd, flag):
    repo = GitRepo(tmp_path / "repo", {"app/serve.py": "import torch\n"})
    repo.git("update-index", flag, "app/serve.py")
    repo.write({"app/serve.py": CRITICAL})
    assert repo.git("status", "--porcelain") == ""          # git status does not see the edit
    code, _, err = run_in_repo(capfd, repo, "check", ".", "--record", "--db", str(tmp_path / "h.db"),
                               "--no-progress", "-q")
    assert code == 1
    assert "the working tree holds changes its commit does not: this run is recorded as no commit's" in err


@pytest.mark.slow
def test_a_kept_fleet_report_rewritten_with_its_stamp_is_not_reused(tmp_path):
    """The stamp's SHA-256 is anybody's to recompute: a blocked repository's kept report turned `ready`, stamp
    and all, must not come back ready; the store's run says blocked, so it is scanned again."""
    import hashlib

    from tests.fleetrepos import TRT, run_cli

    repo = GitRepo(tmp_path / "org" / "trt", TRT)
    out, db = tmp_path / "out", tmp_path / "h.sqlite"

    def rows() -> dict:
        assert run_cli("fleet", repo.root, "--db", db, "--out", out, "--format", "json", "-q")[0] == 0
        return {r["name"]: r for r in json.loads((out / "portfolio.json").read_text())["repositories"]}

    assert rows()["trt"]["verdict"] == "blocked"
    report_path, stamp_path = out / "reports" / "trt.json", out / "resume" / "trt.json"
    report = json.loads(report_path.read_text())
    report["summary"]["verdict"] = "ready"
    text = json.dumps(report)
    report_path.write_text(text)
    stamp = json.loads(stamp_path.read_text())
    stamp["report_sha256"] = hashlib.sha256(text.encode()).hexdigest()
    stamp_path.write_text(json.dumps(stamp))
    again = rows()["trt"]
    assert (again["status"], again["verdict"]) == ("scanned", "blocked")
