"""One run context: `audit` is `prepare -> scan_all(ctx) -> analyse(ctx, results)`; the project's facts
(macros its build defines on ROCm or only for CUDA, values its sources derive on ROCm) reach the engines through
the context, and the rulebook is the same before and after a scan. `fix`'s after-report is that same analysis."""
from __future__ import annotations

import copy
import shutil
from pathlib import Path

import pytest

from auditor.fix.apply import run_fix, write_all
from auditor.fix.data import shipped_fixes
from auditor.run.pipeline import ScanOptions, analyse, audit, prepare, scan_all
from auditor.report.json import render_json
from auditor.match.rulebook import _digest, load_rulebook
from auditor.run.scan.file import scan_text_as
from tests.conftest import FIXTURES, write_tree

CMAKE = """cmake_minimum_required(VERSION 3.21)
project(demo LANGUAGES CXX)
option(DEMO_USE_HIP "build for ROCm" OFF)
if(DEMO_USE_HIP)
  enable_language(HIP)
  add_compile_definitions(DEMO_USE_HIP)
  add_library(demo SHARED src/kernel.cu)
  set_source_files_properties(src/kernel.cu PROPERTIES LANGUAGE HIP)
else()
  enable_language(CUDA)
  add_compile_definitions(DEMO_USE_CUDA)
  add_library(demo SHARED src/kernel.cu)
endif()
"""
COMPAT = """#pragma once
#if defined(__HIP_PLATFORM_AMD__)
#define DEMO_HIP 1
#endif
#if __CUDA_ARCH__ >= 800
#define DEMO_HAS_CP_ASYNC
#endif
"""
KERNEL = """#include "compat.h"
__device__ float a(float v) {
#ifdef DEMO_USE_CUDA
  return __shfl_sync(0xffffffff, v, 0);
#else
  return v;
#endif
}
__device__ float b(float v) {
#if DEMO_HIP
  return v;
#else
  return __shfl_xor_sync(0xffffffff, v, 1);
#endif
}
__device__ float c(float v) {
#ifdef DEMO_HAS_CP_ASYNC
  return __shfl_down_sync(0xffffffff, v, 1);
#endif
  return __shfl_up_sync(0xffffffff, v, 1);
}
"""
# line 4: only the CUDA build defines DEMO_USE_CUDA (the build's macros); line 13: DEMO_HIP is 1 on ROCm (a value
# the sources derive); line 18: DEMO_HAS_CP_ASYNC is defined only on a CUDA-only branch (the macro pre-pass)
PROJECT_GUARDED = {4, 13, 18}


@pytest.fixture
def tree(tmp_path) -> Path:
    return write_tree(tmp_path / "demo", {"CMakeLists.txt": CMAKE, "src/compat.h": COMPAT, "src/kernel.cu": KERNEL})


def _shuffle_lines(findings, guarded: bool) -> set[int]:
    return {f.span.line for f in findings if f.path == "src/kernel.cu" and f.rule_id == "RA200"
            and f.guarded == guarded}


def test_project_facts_reach_the_scan_through_the_context_and_the_rulebook_is_unchanged(tree):
    rulebook = load_rulebook()
    digest, guards = rulebook.digest, copy.deepcopy(rulebook.guards)
    ctx = prepare([tree], rulebook)
    facts = ctx.scan.guards.preprocessor
    assert "DEMO_USE_HIP" in facts.rocm_defined
    assert {"DEMO_USE_CUDA", "DEMO_HAS_CP_ASYNC"} <= facts.cuda_only_defined
    assert ("DEMO_HIP", 1) in facts.rocm_values
    report = analyse(ctx, scan_all(ctx))
    assert {f.span.line: f.disposition for f in report.findings if f.path == "src/kernel.cu"
            and f.rule_id == "RA200"} == {4: "guarded by a project macro", 13: "guarded", 18: "guarded",
                                                     20: "verify on hardware"}
    # the rulebook: the same object, digest and guards after the scan, and its own context has no project fact
    assert ctx.rulebook is rulebook
    assert rulebook.digest == digest == _digest(rulebook.rules, rulebook.guards)
    assert rulebook.guards == guards
    assert "DEMO_USE_HIP" not in rulebook.own_context.guards.preprocessor.rocm_defined
    alone = scan_text_as("src/kernel.cu", "cuda", KERNEL, rulebook)
    assert _shuffle_lines(alone.findings, guarded=False) == {*PROJECT_GUARDED, 20}


def test_the_project_build_model_is_not_written_after_the_pre_pass(tree):
    ctx = prepare([tree], load_rulebook())
    with pytest.raises(AttributeError):
        ctx.project.collection = True
    with pytest.raises(TypeError):
        ctx.project.provenance["src/kernel.cu"] = "cuda"     # type: ignore[index]
    before = (dict(ctx.project.provenance), ctx.project.rocm_macros)
    analyse(ctx, scan_all(ctx))
    assert (dict(ctx.project.provenance), ctx.project.rocm_macros) == before


def test_audit_is_prepare_then_scan_all_then_analyse(tree):
    rulebook = load_rulebook()
    ctx = prepare([tree], rulebook)
    assert render_json(audit([tree], rulebook)) == render_json(analyse(ctx, scan_all(ctx)))


def test_the_fix_after_report_is_the_same_analysis_on_the_fixed_tree(tmp_path):
    root = tmp_path / "tree"
    shutil.copytree(FIXTURES / "rocm_paths/p2_cmake_shim", root)
    rulebook = load_rulebook()
    run = write_all(run_fix([root], rulebook, shipped_fixes(), unsafe=True), [root], rulebook, ScanOptions())
    assert any(outcome.changed for outcome in run.files)
    ctx = prepare([root], rulebook, root=run.root)
    assert render_json(run.after) == render_json(analyse(ctx, scan_all(ctx)))
    assert run.after.verdict == "ready"
