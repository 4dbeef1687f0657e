"""A small CUDA project's history in a real git repository, for the history tests: dependencies that come and
go, a Hopper kernel added on a branch and merged, a tag. Commit times are fixed, so points are exact."""
from __future__ import annotations

import io
import json
import subprocess
import tarfile
from pathlib import Path

from tests.conftest import write_tree
from tests.gitrepo import GIT_ENV

# what a point says, as the history's JSON and a cold scan of the commit both give it
POINT_FIELDS = ("verdict", "live", "effort_low_days", "effort_high_days", "coverage", "complete", "by_rule")


def git(root: Path, *args: str, date: str | None = None) -> str:
    env = dict(GIT_ENV)
    if date:
        env.update(GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    done = subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


def commit(root: Path, files: dict[str, str | None], message: str, date: str, author: str = "Test Author") -> str:
    for path, content in files.items():
        if content is None:
            (root / path).unlink()
        else:
            write_tree(root, {path: content})
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message, f"--author={author} <{author.split()[0].lower()}@example.com>",
        date=date)
    return git(root, "rev-parse", "HEAD").strip()


def linear_history(root: Path, steps: list[tuple[dict[str, str | None], str]]) -> list[str]:
    """A new repository at `root` with one commit per (files, message) step, a month apart; their ids."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    return [commit(root, files, message, f"2026-0{n + 1}-01T00:00:00Z") for n, (files, message) in enumerate(steps)]


def history_points(root: Path, work: Path) -> list[dict]:
    """`rocm-audit history ROOT --format json`'s points, with a database of its own under `work`."""
    from auditor.cli.app import main

    out = work / "history.json"
    assert main(["history", str(root), "--db", str(work / "h.db"), "--format", "json", "-o", str(out),
                 "--no-progress", "-j", "1"]) == 0
    return json.loads(out.read_text())["points"]


def cold_point(root: Path, commit_id: str, into: Path) -> dict:
    """The commit checked out on its own (git archive) and scanned with no cache at all, as the point's fields."""
    tree = into / commit_id[:12]
    tree.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", "--format=tar", commit_id], cwd=root, capture_output=True,
                             check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(tree, filter="data")
    return scanned_point(tree)


def checkout_point(root: Path, commit_id: str, into: Path) -> dict:
    """A clone of the repository with the commit checked out (a git work tree: what git tracks is scanned even
    where a .gitignore matches it), scanned with no cache at all, as the point's fields."""
    tree = into / f"checkout-{commit_id[:12]}"
    git(into, "clone", "-q", "--no-checkout", str(root), str(tree))
    git(tree, "checkout", "-q", commit_id)
    return scanned_point(tree)


def scanned_point(tree: Path) -> dict:
    from auditor.cli.settings import parse_settings
    from auditor.history.record import Where, run_record
    from auditor.run.invocation.runsetup import rulebook_for, scan_options
    from auditor.run.pipeline import audit

    settings = parse_settings([str(tree), "--no-cache", "-j", "1"])
    run = run_record(audit([tree], rulebook_for(settings), scan_options(settings), root=tree), Where("", "", ""))
    return {"verdict": run.verdict, "live": run.live, "effort_low_days": run.effort_low_days,
            "effort_high_days": run.effort_high_days, "coverage": run.coverage, "complete": run.complete,
            "by_rule": run.live_by_rule()}


KERNEL = """#include <cuda_runtime.h>
__global__ void fence(float* x) {
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    x[threadIdx.x] = 0.0f;
}
"""


def build(root: Path) -> dict[str, str]:
    """The repository; its first-parent commits by name: start, deps (tagged v0.1), merge, cleanup."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    ids = {}
    ids["start"] = commit(root, {"requirements.txt": "torch\n", "app.py": "import torch\n"}, "start",
                          "2026-01-01T00:00:00Z")
    ids["deps"] = commit(root, {"requirements.txt": "torch\npynvml\n",
                                "app.py": "import torch\nimport tensorrt_llm\n"}, "CUDA-only dependencies",
                         "2026-02-01T00:00:00Z", author="Ada Lovelace")
    git(root, "tag", "v0.1")
    git(root, "checkout", "-q", "-b", "kernel")
    ids["branch"] = commit(root, {"csrc/fence.cu": KERNEL}, "a Hopper kernel", "2026-02-15T00:00:00Z")
    git(root, "checkout", "-q", "main")
    git(root, "merge", "-q", "--no-ff", "-m", "merge the kernel", "kernel", date="2026-03-01T00:00:00Z")
    ids["merge"] = git(root, "rev-parse", "HEAD").strip()
    ids["cleanup"] = commit(root, {"requirements.txt": "torch\n", "app.py": "import torch\n"},
                            "drop pynvml and TensorRT-LLM", "2026-04-01T00:00:00Z", author="Grace Hopper")
    return ids
