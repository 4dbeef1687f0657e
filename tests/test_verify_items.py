"""Verify items are shim- and branch-aware: code inside a branch only the ROCm build compiles (`#if
defined(X_USE_HIP)` where the project's HIP build defines X_USE_HIP) is not an item to verify on hardware, and a
CUDA name the project's own shim maps (a `#define`, a typedef) is the shim's, not live."""
from auditor.run.pipeline import audit
from auditor.model.rocmpath.redefine import rocm_redefinitions
from auditor.match.rulebook import load_rulebook
from auditor.truth.cpp import PreprocFacts
from tests.conftest import write_tree
from tests.test_run_context import CMAKE   # a HIP build that defines DEMO_USE_HIP, a CUDA one

KERNEL = """#include "compat.h"
int probe(int cc) {
#if defined(DEMO_USE_HIP)
  if (cc >= 900) { return 1; }
#endif
  return 0;
}
__global__ void k(float* x) {
  __nanosleep(10);
  x[threadIdx.x] = 0;
}
"""
COMPAT = """#pragma once
#if defined(DEMO_USE_HIP)
#include <hip/hip_runtime.h>
#define __nanosleep(ns) __builtin_amdgcn_s_sleep(1)
#endif
"""


def test_rocm_only_branches_and_the_projects_shim_make_no_verify_or_live_item(tmp_path):
    tree = write_tree(tmp_path / "repo", {"CMakeLists.txt": CMAKE, "src/kernel.cu": KERNEL, "src/compat.h": COMPAT})
    report = audit([tree], load_rulebook())
    assert report.verdict == "ready", report.verdict_reason
    assert not [f for f in report.findings if f.disposition in ("live", "verify on hardware")]
    sleeps = [(f.path, f.span.line, f.disposition) for f in report.findings if f.subject == "__nanosleep"]
    assert sleeps == [("src/compat.h", 4, "shim-mapping"), ("src/kernel.cu", 9, "shim-mapping")]
    # the same capability test outside the ROCm branch is one to verify
    write_tree(tree, {"src/kernel.cu": KERNEL.replace("#if defined(DEMO_USE_HIP)\n", "").replace("#endif\n", "", 1)})
    moved = audit([tree], load_rulebook())
    assert [(f.path, f.span.line) for f in moved.findings if f.disposition == "verify on hardware"] == [("src/kernel.cu", 3)]


def test_a_typedef_or_alias_on_a_rocm_branch_maps_the_cuda_type():
    facts = PreprocFacts(frozenset({"DEMO_USE_HIP"}), frozenset(), frozenset())
    text = ("#if defined(DEMO_USE_HIP)\ntypedef hipMemPool_t cudaMemPool_t;\nusing cudaGraph_t = hipGraph_t;\n"
            "#else\ntypedef int cudaNotMapped_t;\n#endif\n")
    assert rocm_redefinitions(text, facts) == {"cudaMemPool_t": 2, "cudaGraph_t": 3}
