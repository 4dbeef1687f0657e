"""`history` keeps what it derived from a file's text at one point for the next points (a Python module's
import-time lines for the import chain, the paths' parts, each path's component): every point must still be what
a cold scan of its commit gives when the text behind a kept value changes, and when it comes back."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from auditor.cli.settings import parse_settings
from auditor.history.record import Where, run_record
from auditor.history.store import open_store
from auditor.match.rulebook import load_rulebook
from auditor.match.xlang.importchain import link_imports
from auditor.run.invocation.runsetup import rulebook_for, scan_options
from auditor.run.pipeline import audit
from tests.conftest import write_tree
from tests.history_repo import git, history_points, linear_history
from tests.test_importchain import CUDA_IPC, TREE
from tests.test_reach_python_tolerated import FALLBACK_IMPORT, KERNEL, TOLERATED_BUILD

pytestmark = pytest.mark.slow   # scans of git histories

# the module-level call moves into a function: nothing CUDA-only runs at import any more
CALLED_LATER = CUDA_IPC.replace("\n\ncudart = CudaRTLibrary()\n", "\n\ndef cudart():\n    return CudaRTLibrary()\n")
# the same import-time call, three lines further down
SHIFTED = CUDA_IPC.replace("import ctypes\n", "import ctypes\n\nVERSION = 1\n\n")
SETUP = "from setuptools import setup\nsetup(name='kern', packages=['kern'])\n"


def recorded(db: Path) -> dict[str, tuple]:
    """Each stored point's result (all but when and by what it was recorded), by commit."""
    with open_store(db, readonly=True) as store:
        (key, _, _), = store.repositories()
        return {run.where.commit: _result(run) for run in store.points(key)}


def cold_record(root: Path, commit_id: str, into: Path) -> tuple:
    """A cold scan of the commit's checkout (no cache), as the store would record it."""
    tree = into / commit_id[:12]
    tree.mkdir(parents=True)
    git(root, "--work-tree", str(tree), "checkout", commit_id, "--", ".")
    settings = parse_settings([str(tree), "--no-cache", "-j", "1"])
    report = audit([tree], rulebook_for(settings), scan_options(settings), root=tree)
    return _result(run_record(report, Where("", "", "")))


def _result(run) -> tuple:
    return (run.verdict, run.live, run.effort_low_days, run.effort_high_days, run.coverage, run.complete,
            run.counts, run.dependencies, run.components)


def test_every_point_is_a_cold_scan_when_the_import_chain_root_changes_and_comes_back(tmp_path):
    root = tmp_path / "kern"
    steps = [
        (dict(TREE), "a ctypes wrapper of libcudart imported by the package"),
        ({"kern/comm/cuda_ipc.py": SHIFTED}, "the wrapper's import-time call moves down"),
        ({"kern/comm/cuda_ipc.py": CALLED_LATER}, "the wrapper is built on first use"),
        ({"setup.py": SETUP}, "a setup script: the package is shipped"),
        ({"kern/comm/cuda_ipc.py": CUDA_IPC}, "back to the first wrapper"),
        ({"kern/extra.py": "from .comm import cudart\n"}, "one more importer"),
    ]
    ids = linear_history(root, steps)
    history_points(root, tmp_path / "work")
    points = recorded(tmp_path / "work" / "h.db")
    assert list(points) == ids
    for commit_id, point in points.items():
        assert point == cold_record(root, commit_id, tmp_path / "cold"), commit_id[:9]
    # the chain (RA920, info) follows the wrapper's text: its importers drop out while it loads libcudart on first
    # use only (utils.py's pynvml import still fails), come back with the first text, one importer more at the end
    chained = [sum(c.count for c in point[6] if c.rule == "RA920") for point in points.values()]
    assert chained == [6, 6, 4, 4, 6, 7]


def test_the_import_chain_reads_a_root_from_the_scan_as_from_a_parse_of_its_text(tmp_path):
    """A module's import-time lines come from the scan's own parse (FileFacts.import_time); a result without
    them (not parsed cleanly) is parsed again, and both give the same chain."""
    tree = write_tree(tmp_path / "kern", TREE)
    report = audit([tree], load_rulebook(), shown_root="repo")
    chain = sorted((f.path, f.span.line, f.detail) for f in report.findings if f.rule_id == "RA920")
    assert chain and ("kern/__init__.py", 2) in {(path, line) for path, line, _ in chain}
    root = next(r for r in report.results if r.path == "kern/comm/cuda_ipc.py")
    # `import ctypes`, the class's __init__ (which loads libcudart) that the module-level call runs, and that call
    assert root.facts.import_time == ((1, 1), (5, 8), (11, 11))
    stripped = [replace(r, facts=replace(r.facts, import_time=None)) for r in report.results]

    def read(path: str) -> str | None:
        return (tree / path).read_text()
    rulebook = load_rulebook()
    found = [f for f in report.findings if f.rule_id != "RA920"]
    again = link_imports(stripped, found, rulebook, read, frozenset({f.disposition for f in found}))
    from_facts = link_imports(report.results, found, rulebook, read, frozenset({f.disposition for f in found}))
    assert sorted((f.path, f.span.line) for f in again) == sorted((f.path, f.span.line) for f in from_facts)
    assert sorted((f.path, f.span.line, f.detail) for f in from_facts) == chain


def test_a_build_script_s_facts_are_read_once_per_text(tmp_path, monkeypatch):
    """What a setup.py tolerates failing to build is derived once per text (util/textmemo.py), at every point of
    a history alike; a changed text is read again, and the model's answer is a fresh reading's."""
    from auditor.model.rocmpath import optionalbuilds
    from auditor.util import textmemo

    monkeypatch.setattr(textmemo, "_kept", type(textmemo._kept)())
    read: list[int] = []
    real = optionalbuilds.tolerated_builds
    monkeypatch.setattr(optionalbuilds, "tolerated_builds", lambda tree: read.append(1) or real(tree))
    tree = write_tree(tmp_path / "r", {"setup.py": TOLERATED_BUILD, "fastpkg/__init__.py": FALLBACK_IMPORT,
                                       "csrc/fused.cu": KERNEL})

    def optional_builds() -> dict[str, str]:
        from auditor.run.pipeline import prepare

        return dict(prepare([tree], load_rulebook(), root=tree).project.optional_builds)
    first = optional_builds()
    assert list(first) == ["csrc/fused.cu"] and read == [1]
    assert optional_builds() == first and read == [1]
    (tree / "setup.py").write_text(TOLERATED_BUILD.replace("    warnings.warn(f'fused kernels not built: {err}')",
                                                           "    raise"))
    assert optional_builds() == {} and read == [1, 1]


def test_a_build_script_too_deep_to_parse_is_noted_at_every_point(tmp_path):
    """Whether a build script parses is kept per text (rocmpath/buildtexts.py): a second reading of the same text,
    as history's next point does, still notes it as unread."""
    from auditor.run.pipeline import prepare

    deep = "from setuptools import setup\nsetup(name='deep')\nx = 1" + " + 1" * 20_000 + "\n"   # ast's recursion limit
    tree = write_tree(tmp_path / "r", {"setup.py": deep, "csrc/k.cu": KERNEL})
    notes = [prepare([tree], load_rulebook(), root=tree).project.unread.get("setup.py") for _ in range(2)]
    assert notes == ["not read as a build script: nested too deeply"] * 2
