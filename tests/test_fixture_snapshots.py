"""The whole JSON report of every fixture tree and of the bundled example, byte for byte, against a snapshot
taken before the run context was introduced (the redesign must not change a single finding, row,
verdict or count). A deliberate change of behaviour rewrites the snapshots:

    .venv/bin/python -m tests.test_fixture_snapshots
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from auditor.cli.app import main

pytestmark = pytest.mark.slow   # end-to-end runs over every fixture

REPO = Path(__file__).resolve().parent.parent
SNAPSHOTS = REPO / "tests" / "data" / "snapshots"
TREES = {
    **{p.name: p for p in sorted((REPO / "fixtures").iterdir()) if p.is_dir() and p.name != "rocm_paths"},
    **{f"rocm_paths-{p.name}": p for p in sorted((REPO / "fixtures" / "rocm_paths").iterdir()) if p.is_dir()},
    "example": REPO / "auditor" / "example",
}
# trees with C/C++ sources, scanned again across worker processes: each worker gets the run's context
IN_WORKERS = ("cmake_cuda_lib", "torch_extension")


def report_text(tree: Path, out: Path, jobs: int = 1) -> str:
    """The JSON report of a cold scan (no result cache), its absolute root replaced by a placeholder."""
    main([str(tree), "--format", "json", "-o", str(out), "--fail-on", "never", "-j", str(jobs), "--no-progress",
          "--no-cache"])
    report = json.loads(out.read_text())
    text = json.dumps(report, indent=1, sort_keys=True)
    return text.replace(json.dumps(str(tree))[1:-1], "<tree>") + "\n"


@pytest.mark.parametrize("name", TREES)
def test_report_is_byte_identical_to_its_snapshot(name, tmp_path):
    assert report_text(TREES[name], tmp_path / "r.json") == (SNAPSHOTS / f"{name}.json").read_text()


@pytest.mark.parametrize("name", IN_WORKERS)
def test_report_from_worker_processes_is_the_same(name, tmp_path):
    assert report_text(TREES[name], tmp_path / "r.json", jobs=2) == (SNAPSHOTS / f"{name}.json").read_text()


def test_every_tree_has_a_snapshot():
    assert sorted(p.stem for p in SNAPSHOTS.glob("*.json")) == sorted(TREES)


if __name__ == "__main__":
    import tempfile

    SNAPSHOTS.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        for tree_name, tree_path in TREES.items():
            (SNAPSHOTS / f"{tree_name}.json").write_text(report_text(tree_path, Path(scratch) / "r.json"))
            print(tree_name, file=sys.stderr)
