"""A history point scans the files git tracks in that commit, as `check` on a checkout of the commit does: a
tracked file that a .gitignore pattern matches (force-added, or committed before the pattern) is the project's
code in both, and a file git does not track is in neither."""
from __future__ import annotations

import pytest

from pathlib import Path

from tests.history_repo import POINT_FIELDS, checkout_point, commit, git, history_points

pytestmark = pytest.mark.slow   # scans of git histories

KERNEL = """#include <cuda_runtime.h>
__global__ void fence(float* x) {
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    x[threadIdx.x] = 0.0f;
}
"""


def test_a_tracked_file_a_gitignore_matches_counts_in_history_as_in_a_checkout(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    first = commit(root, {".gitignore": "*.cu\nbuild/\n", "app.py": "import torch\n",
                          "requirements.txt": "torch\n"}, "start", "2026-01-01T00:00:00Z")
    (root / "build").mkdir()
    (root / "build" / "kernel.cu").write_text(KERNEL)
    (root / "csrc").mkdir()
    (root / "csrc" / "ops.cu").write_text(KERNEL.replace("fence", "ops"))
    git(root, "add", "-f", "build/kernel.cu", "csrc/ops.cu")
    git(root, "commit", "-q", "-m", "force-added kernels", date="2026-02-01T00:00:00Z")
    second = git(root, "rev-parse", "HEAD").strip()
    (root / "csrc" / "untracked.cu").write_text(KERNEL)        # untracked at the second commit: in no point until the third adds it
    third = commit(root, {".gitignore": "build/\n", "requirements.txt": "torch\npynvml\n"},
                   "*.cu no longer ignored, a CUDA-only dependency", "2026-03-01T00:00:00Z")
    assert "csrc/untracked.cu" in git(root, "ls-files")                  # `commit` adds what is not ignored
    points = history_points(root, tmp_path / "work")
    assert [p["commit"] for p in points] == [first, second, third]
    checkouts = tmp_path / "checkouts"
    checkouts.mkdir()
    for point in points:
        assert {k: point[k] for k in POINT_FIELDS} == checkout_point(root, point["commit"], checkouts), \
            point["commit"][:9]
    # both force-added kernels count (a wgmma fence each), and the third commit's newly tracked one too
    assert [p["by_rule"].get("RA303", 0) for p in points] == [0, 2, 3]


def test_the_listing_finds_what_the_walk_of_a_checkout_finds(tmp_path):
    """Discovery from the commit's listing against discover() on a clone of it: submodules and vendored or
    always-skipped directories (recorded or not), links, excludes, ignored but tracked files, a subdirectory."""
    from auditor.run.discover.files import discover
    from auditor.history.gitobjects import TreeWriter
    from auditor.history.listing import discover_listing
    from auditor.run.pipeline.options import ScanOptions

    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    files = {".gitignore": "csrc/\n*.cuh\n", "app.py": "import torch\n", "pkg/setup.py": "from setuptools import setup\n",
             "pkg/csrc/k.cu": KERNEL, "pkg/csrc/k.cuh": KERNEL, "pkg/docs/old.py": "import pynvml\n",
             "cutlass/include/cute.h": "#pragma once\n", "pkg/third_party/lib/CMakeLists.txt": "project(x)\n",
             "node_modules/x/index.py": "import pynvml\n", "pkg/a/b/deep.cu": KERNEL}
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    (root / "links").mkdir()
    (root / "links" / "app.py").symlink_to("../app.py")
    git(root, "add", "-f", *files, "links/app.py")
    git(root, "update-index", "--add", "--cacheinfo", f"160000,{'1' * 40},pkg/ext/sub")
    git(root, "commit", "-q", "-m", "tree", date="2026-01-01T00:00:00Z")
    checkout = tmp_path / "checkout"
    git(tmp_path, "clone", "-q", str(root), str(checkout))
    (checkout / "pkg" / "ext" / "sub").mkdir(parents=True, exist_ok=True)   # as `git clone` leaves a submodule
    cases = [("", ScanOptions()), ("", ScanOptions(exclude=("docs/", "*.cuh"))), ("pkg", ScanOptions()),
             ("pkg", ScanOptions(include_vendored=True)), ("pkg", ScanOptions(scan_dirs=("third_party",)))]
    seen = []
    with TreeWriter(root, 1 << 20) as writer:
        writer.show("HEAD")
        for prefix, options in cases:
            top, written_top = checkout / prefix, writer.root / prefix
            walked = discover([top], top, options.exclude, include_vendored=options.include_vendored,
                              scan_dirs=options.scan_dirs)
            listed = discover_listing(writer.tree, writer.written, prefix, written_top, options)
            assert [(f.path, f.kind) for f in listed.files] == [(f.path, f.kind) for f in walked.files], prefix
            assert listed.vendored == walked.vendored, (prefix, options)
            assert all(Path(f.abspath).read_text() for f in listed.files)
            seen.append(([f.path for f in listed.files], listed.vendored))
    # what the cases test: ignored but tracked files kept, the submodule and vendored directories recorded
    assert seen[0] == (["app.py", "pkg/a/b/deep.cu", "pkg/csrc/k.cu", "pkg/csrc/k.cuh", "pkg/docs/old.py",
                        "pkg/setup.py"], ("cutlass", "pkg/ext/sub", "pkg/third_party"))
    assert seen[1][0] == ["app.py", "pkg/a/b/deep.cu", "pkg/csrc/k.cu", "pkg/setup.py"]
    assert seen[4][1] == ("ext/sub",) and "third_party/lib/CMakeLists.txt" in seen[4][0]
