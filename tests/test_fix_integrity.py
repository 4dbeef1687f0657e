"""`fix` is judged by the same analysis as `check` and writes only what it planned: the after-report is `check` on
the fixed tree (the project's ROCm path included), a fix that moves the ROCm-path evidence is rolled back, and
a directory swapped for a symbolic link between plan and write leaves everything outside the tree untouched."""
from __future__ import annotations

import json
import os
import shutil
import stat
from collections import Counter
from dataclasses import replace

import pytest

from auditor.cli.app import main
from auditor.fix.apply import run_fix, write_all
from auditor.fix.data import shipped_fixes
from auditor.run.pipeline import ScanOptions, audit
from auditor.match.rulebook import load_rulebook
from tests.conftest import FIXTURES, write_tree

pytestmark = pytest.mark.slow   # fix end to end on the fixtures, then check on the fixed tree

RULEBOOK = load_rulebook()
FIXTURE_TREES = sorted(p.relative_to(FIXTURES).as_posix() for p in [*FIXTURES.iterdir(), *(FIXTURES / "rocm_paths").iterdir()]
                       if p.is_dir() and p.name != "rocm_paths")
MASK = "__device__ float f(float v) { return __shfl_xor_sync(0xffffffff, v, 1); }\n"


def _json(capsys, *args) -> tuple[int, dict]:
    code = main([*map(str, args), "--format", "json", "--no-progress"])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("name", FIXTURE_TREES)
def test_after_report_is_check_on_the_fixed_tree(tmp_path, capsys, name):
    root = tmp_path / "tree"
    shutil.copytree(FIXTURES / name, root)
    code = main(["fix", str(root), "--unsafe", "--no-progress"])
    out = capsys.readouterr().out
    check_code, report = _json(capsys, "check", root)
    breaking = sum(1 for f in report["findings"] if f["would_break"])
    assert code == check_code
    # the number `check` says would break, not a count of its own
    assert f"Remaining after fixing: {breaking} finding(s) would break on ROCm, as rocm-audit check counts" in out


@pytest.mark.parametrize("name", FIXTURE_TREES)
def test_after_report_verdict_and_counts_equal_check(tmp_path, name):
    root = tmp_path / "tree"
    shutil.copytree(FIXTURES / name, root)
    run = write_all(run_fix([root], RULEBOOK, shipped_fixes(), unsafe=True), [root], RULEBOOK, ScanOptions())
    check = audit([root], RULEBOOK)
    assert (run.after.verdict, run.after.verdict_reason) == (check.verdict, check.verdict_reason)
    assert Counter((f.path, f.rule_id, f.disposition) for f in run.after.findings) == \
        Counter((f.path, f.rule_id, f.disposition) for f in check.findings)


def test_p2_cmake_shim_stays_ready_after_fix(tmp_path, capsys):
    root = tmp_path / "tree"
    shutil.copytree(FIXTURES / "rocm_paths/p2_cmake_shim", root)
    assert main(["fix", str(root), "--unsafe", "--no-progress"]) == 0
    assert "needs-port" not in capsys.readouterr().out
    code, report = _json(capsys, "check", root)
    assert (code, report["summary"]["verdict"]) == (0, "ready")


def _hip_architectures_everywhere(tmp_path):
    """A CUDA-only CMake project fixed with the HIP-architecture line offered everywhere, as the fix once was."""
    cmake = "cmake_minimum_required(VERSION 3.24)\nproject(k LANGUAGES CXX CUDA)\nset(CMAKE_CUDA_ARCHITECTURES 80)\n" \
            "add_library(k SHARED k.cu)\n"
    root = write_tree(tmp_path / "repo", {"CMakeLists.txt": cmake, "k.cu": "__global__ void k(float* x) {}\n"})
    specs = dict(shipped_fixes())
    specs["RA603"] = replace(specs["RA603"], only_where=None)
    run = run_fix([root], RULEBOOK, specs, unsafe=True)
    (outcome,) = [o for o in run.files if o.path == "CMakeLists.txt"]
    return outcome


def test_a_fix_that_moves_the_rocm_path_evidence_is_rolled_back(tmp_path):
    outcome = _hip_architectures_everywhere(tmp_path)
    assert not outcome.changed
    # the added line makes the tree look like a broken ROCm build: findings change disposition, evidence moves
    assert outcome.rolled_back.startswith(("the fix would change the project's verdict or ROCm-path evidence",
                                           "the fixes would change the analysis beyond their targets"))


def test_a_rollback_for_moved_evidence_names_both_verdicts_and_the_component_not_two_cut_reasons(tmp_path):
    """The reason says which verdict became which and whose evidence moved; two verdict reasons cut at 80
    columns read the same before and after."""
    assert _hip_architectures_everywhere(tmp_path).rolled_back == (
        "the fix would change the project's verdict or ROCm-path evidence (verdict needs-port -> ready; "
        "evidence of .)")


def test_a_directory_swapped_for_a_link_between_plan_and_write_is_not_written_through(tmp_path):
    outside = write_tree(tmp_path / "outside", {"k.cu": MASK})
    root = write_tree(tmp_path / "repo", {"src/k.cu": MASK})
    run = run_fix([root], RULEBOOK, shipped_fixes())
    assert sorted(o.path for o in run.files if o.changed) == ["src/k.cu", "src/rocm_audit_compat.h"]
    shutil.rmtree(root / "src")
    (root / "src").symlink_to(outside)             # the swap, after the plan
    run = write_all(run, [root], RULEBOOK, ScanOptions())
    assert (outside / "k.cu").read_text() == MASK
    assert sorted(p.name for p in outside.iterdir()) == ["k.cu"]      # no temporary file left there either
    assert len(run.files) == 2 and not any(o.changed for o in run.files)
    assert all("no longer a directory of the tree" in (o.rolled_back or "") for o in run.files), \
        [o.rolled_back for o in run.files]


def test_a_file_replaced_after_the_plan_is_not_overwritten(tmp_path):
    root = write_tree(tmp_path / "repo", {"k.cu": MASK})
    run = run_fix([root], RULEBOOK, shipped_fixes())
    (root / "k.cu").write_text(MASK + "// edited meanwhile\n")
    run = write_all(run, [root], RULEBOOK, ScanOptions())
    assert (root / "k.cu").read_text().endswith("// edited meanwhile\n")
    (edited,) = [o for o in run.files if o.path == "k.cu"]
    assert "changed since it was read" in (edited.rolled_back or "")


def test_setuid_bits_dropped_and_said_read_only_files_skipped_stale_temporaries_removed(tmp_path, capsys):
    root = write_tree(tmp_path / "repo", {"a.cu": MASK, "b.cu": MASK, ".a.cu.0123456789ab.rocm-audit-fix": "stale"})
    os.chmod(root / "a.cu", 0o4755)
    os.chmod(root / "b.cu", 0o444)
    main(["fix", str(root), "--no-progress", "--fail-on", "never"])
    out = capsys.readouterr().out
    assert stat.S_IMODE((root / "a.cu").stat().st_mode) == 0o755 and "ROCM_AUDIT_FULL_MASK" in (root / "a.cu").read_text()
    assert "a.cu: RA200 x1 (setuid/setgid bits dropped)" in out
    assert (root / "b.cu").read_text() == MASK and "b.cu: left unchanged: the file is read-only" in out
    assert sorted(p.name for p in root.iterdir()) == ["a.cu", "b.cu", "rocm_audit_compat.h"]


@pytest.mark.parametrize("named", ["repo/linkdir/x.cu", "repo/linkdir"])
def test_fix_never_writes_through_a_directory_link_on_the_path_it_is_given(tmp_path, capsys, monkeypatch, named):
    outside = write_tree(tmp_path / "outside", {"x.cu": MASK})
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "linkdir").symlink_to(outside)
    monkeypatch.chdir(tmp_path)
    assert main(["fix", named, "--no-progress"]) == 2
    assert "passes through a symbolic link (repo/linkdir)" in capsys.readouterr().err
    assert (outside / "x.cu").read_text() == MASK
