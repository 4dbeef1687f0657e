"""`history` keeps each Python file's call sites of extension ops (the cross-language link, RA909) for the points
that hold the same text and the same ops: every point must still be what a cold scan of its commit gives when
the calls, the ops and the library behind an op change between points, and come back."""
from __future__ import annotations

import pytest

from tests.history_repo import POINT_FIELDS, cold_point, history_points, linear_history
from tests.test_xlang import ATTENTION_PY, FUSED_ATTN, GEMM, GEMM_PY, TREE

pytestmark = pytest.mark.slow   # scans of git histories

NO_CUDNN = FUSED_ATTN.replace("#include <cudnn.h>\n", "").replace("  cudnnHandle_t handle;\n  cudnnCreate(&handle);\n",
                                                                  "")


def test_every_point_links_the_op_calls_a_cold_scan_of_its_commit_links(tmp_path):
    root = tmp_path / "fusedte"
    steps = [
        (dict(TREE), "ops backed by cuDNN and cublasLt, called from Python"),
        ({"fusedte/attention.py": ATTENTION_PY.replace("    return tex.fused_attn_fwd(q, k, v)[0]\n\n\n"
                                                       "def attention_dispatched",
                                                       "    return q\n\n\ndef attention_dispatched")},
         "one call of the cuDNN op fewer"),
        ({"csrc/fused_attn.cu": NO_CUDNN}, "the attention op no longer uses cuDNN"),
        ({"fusedte/extra.py": GEMM_PY.replace("def gemm", "def gemm_twice")}, "another caller of the gemm op"),
        ({"csrc/fused_attn.cu": FUSED_ATTN, "csrc/gemm/gemm.cu": GEMM.replace("cublasLt", "cublas")},
         "cuDNN is back; gemm uses cuBLAS"),
        ({"fusedte/attention.py": ATTENTION_PY, "fusedte/extra.py": None}, "back to the first calls"),
    ]
    ids = linear_history(root, steps)
    points = history_points(root, tmp_path / "work")
    assert [p["commit"] for p in points] == ids
    for point, commit_id in zip(points, ids):
        assert {k: point[k] for k in POINT_FIELDS} == cold_point(root, commit_id, tmp_path / "cold"), commit_id[:9]
    linked = [p["by_rule"].get("RA909", 0) for p in points]
    # live RA909 calls, plus each CUDA-only-backed op's registration (m.def, low): attention's and gemm's calls and
    # registrations; attention's call gone (the dispatched one is guarded); cuDNN gone, neither its call nor its
    # registration counts; a second gemm caller; gemm on cuBLAS is no longer CUDA-only-backed and cuDNN is back,
    # but only attention's registration counts (its call is still gone); attention's call again
    assert linked == [2 + 2, 1 + 2, 1 + 1, 2 + 1, 0 + 1, 1 + 1]
