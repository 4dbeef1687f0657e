"""`history` remembers what the build pre-pass read from a file's text (a Python build script's reading, a C/C++
file's includes) and reuses it at every later point that holds the same text: each point must still be exactly
what a cold scan of its commit gives, in a fresh process state, when the build scripts change, come back to an
earlier text, and the sources and headers change around them."""
from __future__ import annotations

from pathlib import Path

import pytest

from auditor.model.rocmpath import provenance, pybuild
from tests.history_repo import POINT_FIELDS, cold_point, history_points, linear_history
from tests.test_build_readers import CPU_OP, TMA_KERNEL, TORCHAO_LIKE_SETUP

pytestmark = pytest.mark.slow   # scans of git histories

# every CUDA source built on every platform: nothing says ROCm builds an alternative
PLAIN_SETUP = TORCHAO_LIKE_SETUP.replace("    if use_cuda:\n        sources += cuda_sources\n",
                                         "    sources += cuda_sources\n")
HEADER = """#pragma once
__device__ inline unsigned lane_sum(unsigned v) {
  unsigned r;
  asm volatile("redux.sync.add.u32 %0, %1, 0xffffffff;" : "=r"(r) : "r"(v));
  return r;
}
"""
INCLUDING = '#include "lane.cuh"\n' + TMA_KERNEL
GUARDED_INCLUDE = '#ifndef USE_ROCM\n#include "lane.cuh"\n#endif\n' + TMA_KERNEL


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> tuple[Path, list[str]]:
    root = tmp_path_factory.mktemp("prepass") / "pkg"
    steps = [
        ({"setup.py": PLAIN_SETUP, "pkg/__init__.py": "", "pkg/csrc/cpu/pack.cpp": CPU_OP,
          "pkg/csrc/cuda/tma/tma_map.cu": TMA_KERNEL, "pkg/csrc/cuda/sm90/gemm_sm90.cu": TMA_KERNEL},
         "every CUDA source on every platform"),
        ({"setup.py": TORCHAO_LIKE_SETUP}, "the CUDA sources only when building for CUDA"),
        ({"pkg/csrc/cuda/lane.cuh": HEADER, "pkg/csrc/cpu/reduce.cpp": INCLUDING}, "a C++ file includes a CUDA header"),
        ({"setup.py": PLAIN_SETUP}, "back to every CUDA source everywhere"),
        ({"pkg/csrc/cpu/reduce.cpp": GUARDED_INCLUDE}, "the include only when not on ROCm"),
        ({"setup.py": TORCHAO_LIKE_SETUP, "pkg/csrc/cpu/reduce.cpp": INCLUDING}, "both texts seen before, again"),
    ]
    return root, linear_history(root, steps)


def forget_remembered() -> None:
    pybuild._read_remembered.cache_clear()
    provenance._remembered_includes.cache_clear()


def test_remembered_prepass_gives_every_point_a_cold_scan_gives(project, tmp_path):
    root, ids = project
    forget_remembered()
    points = history_points(root, tmp_path)
    # the history did reuse readings: setup.py's two texts come back, headers stay the same across points
    assert pybuild._read_remembered.cache_info().hits >= 2
    assert provenance._remembered_includes.cache_info().hits > 0
    assert [p["commit"] for p in points] == ids
    cold = []
    for commit_id in ids:
        forget_remembered()       # nothing remembered from the history or another commit
        cold.append(cold_point(root, commit_id, tmp_path / "cold"))
    assert [{k: p[k] for k in POINT_FIELDS} for p in points] == cold
    # the build script and the guarded include decide what counts: a stale reading would show here
    assert [c["live"] for c in cold] == [14, 0, 8, 22, 21, 8]
    assert [c["verdict"] for c in cold] == ["blocked", "ready", "blocked", "blocked", "blocked", "blocked"]
