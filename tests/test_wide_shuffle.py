"""A shuffle through the project's own macro whose ROCm expansion is a width-less `__shfl(var, lane)`, in a kernel
that works in 32-lane rows: a 64-lane bug a port must
fix, reported live at the call and at the macro's definition, even where the ROCm build compiles the kernel."""
import pytest

from tests.conftest import write_tree
from tests.test_setup_gates import SPARSE_SETUP

ROWS = ("#include \"utils.cuh\"\n"
        "__global__ void spmm(const int* col, float* out, int n) {\n"
        "  int thread_idx = blockDim.x * blockIdx.x + threadIdx.x;\n"
        "  int row = thread_idx >> 5;\n"                                       # line 4: 32-lane rows (RA203)
        "  int lane_idx = thread_idx & (32 - 1);\n"
        "  int mine = col[row * 32 + lane_idx];\n"
        "  for (int i = 0; i < 32; i++) {\n"
        "    out[row * 32 + i] += SHFL_SYNC(FULL_MASK, mine, i);\n"             # line 8: the call
        "  }\n"
        "}\n")
NO_ROWS = ("#include \"utils.cuh\"\n"
           "__global__ void spmm(const int* col, float* out, int n) {\n"
           "  int mine = col[threadIdx.x];\n"
           "  out[threadIdx.x] = SHFL_SYNC(FULL_MASK, mine, 0);\n"
           "}\n")
WARP_AWARE = ROWS.replace("  for (int i = 0; i < 32; i++) {\n", "  for (int i = 0; i < warpSize; i++) {\n")


def _utils(rocm_body: str) -> str:
    return ("#pragma once\n#define FULL_MASK 0xffffffff\n#ifdef USE_ROCM\n"
            f"#define SHFL_SYNC(mask, var, delta) {rocm_body}\n"                # line 4: the ROCm definition
            "#else\n#define SHFL_SYNC __shfl_sync\n#endif\n")


def _scan(tmp_path, run_json, kernel: str, rocm_body: str = "__shfl(var, delta)"):
    root = write_tree(tmp_path / "sp", {
        "setup.py": SPARSE_SETUP, "sp/__init__.py": "", "csrc/spmm.cpp": "#include <torch/extension.h>\n",
        "csrc/cuda/spmm_cuda.cu": kernel, "csrc/cuda/utils.cuh": _utils(rocm_body),
    })
    _, data = run_json(root, "--no-cache")
    return data, {(f["path"], f["line"]): f for f in data["findings"] if f["rule"] == "RA208"}


def test_a_wavefront_wide_shuffle_macro_in_32_lane_rows_is_a_live_64_lane_bug(tmp_path, run_json):
    data, shuffles = _scan(tmp_path, run_json, ROWS)
    assert set(shuffles) == {("csrc/cuda/spmm_cuda.cu", 8), ("csrc/cuda/utils.cuh", 4)}
    call, definition = shuffles["csrc/cuda/spmm_cuda.cu", 8], shuffles["csrc/cuda/utils.cuh", 4]
    assert (call["severity"], call["disposition"]) == ("high", "live")
    assert "`SHFL_SYNC` expands on ROCm" in call["message"] and "csrc/cuda/utils.cuh:4" in call["message"]
    assert "32-lane rows (csrc/cuda/spmm_cuda.cu:4)" in call["message"]
    assert definition["disposition"] == "live" and "`SHFL_SYNC`" in definition["message"]
    rows = next(f for f in data["findings"] if f["rule"] == "RA203")
    assert rows["disposition"] == "verify on hardware"   # the lane math alone stays an item to verify
    assert data["summary"]["verdict"] == "needs-port"


@pytest.mark.parametrize("kernel,rocm_body", [
    (ROWS, "__shfl(var, delta, 32)"),         # the ROCm definition passes the rows' width
    (ROWS, "__shfl_xor(var, delta)"),         # a butterfly with offsets below 32 stays in its row
    (NO_ROWS, "__shfl(var, delta)"),          # no 32-lane rows in the kernel
    (WARP_AWARE, "__shfl(var, delta)"),       # a kernel that reads warpSize
], ids=["explicit-width", "xor-butterfly", "no-32-lane-rows", "warpsize-aware"])
def test_no_64_lane_bug_is_reported_where_the_width_or_the_rows_fit(tmp_path, run_json, kernel, rocm_body):
    data, shuffles = _scan(tmp_path, run_json, kernel, rocm_body)
    assert not any(f["disposition"] == "live" for f in shuffles.values()), shuffles
    assert data["summary"]["verdict"] == "ready"
