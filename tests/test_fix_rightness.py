"""Fixes that are right on ROCm and leave CUDA as it was: each case below was a wrong edit of `rocm-audit fix` on
real trees (full 64-bit masks in lane-limited code, --gpus all removed from NVIDIA jobs, base images that do not
exist, a CMake line that turned a CUDA-only project's verdict, f-strings invalid before Python 3.12, LF blocks in
CRLF files, a block between a doc comment and its function)."""
from __future__ import annotations

import ast
import re

import pytest

from auditor.cli.app import main
from tests.conftest import write_tree

pytestmark = pytest.mark.slow   # fix end to end on made-up trees, with the re-check of the whole project

WARP_SUM = "__device__ float warp_sum(float v) {\n  return v + __shfl_xor_sync(0xffffffff, v, 1);\n}\n"


def _left_as_is(tmp_path, capsys, text: str, *flags: str) -> str:
    """Fix a tree of one k.cu, check the file is unchanged and return what fix printed."""
    root = write_tree(tmp_path / "repo", {"k.cu": text})
    _fix(root, *flags)
    assert (root / "k.cu").read_text() == text
    return capsys.readouterr().out


def _fix(root, *flags: str) -> str:
    main(["fix", str(root), "--no-progress", "--fail-on", "never", *flags])
    return ""


LANE_LIMITED = {
    "branch": "__global__ void k(float* out) {\n  int tid = threadIdx.x;\n  float v = out[tid];\n"
              "  if (tid < 32) {\n    v += __shfl_down_sync(0xffffffff, v, 16);\n  }\n  out[tid] = v;\n}\n",
    "early return": "__global__ void k(float* out) {\n  if (threadIdx.x >= 16) return;\n"
                    "  out[threadIdx.x] = __shfl_xor_sync(0xffffffff, out[threadIdx.x], 1);\n}\n",
    "derived index": "__global__ void k(float* out, int n) {\n  const int row = blockIdx.x * blockDim.y + threadIdx.y;\n"
                     "  if (row >= n) {\n    return;\n  }\n  out[row] = __shfl_xor_sync(0xffffffff, out[row], 1);\n}\n",
    "loop bound": "__global__ void k(float* out, int n) {\n  for (int i = threadIdx.x; i < n; i += 32) {\n"
                  "    out[i] = __shfl_xor_sync(0xffffffff, out[i], 1);\n  }\n}\n",
    "tile": "#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n__global__ void k(float* out) {\n"
            "  auto tile = cg::tiled_partition<16>(cg::this_thread_block());\n"
            "  out[0] = __shfl_xor_sync(0xffffffff, out[0], 1);\n}\n",
}


@pytest.mark.parametrize("case", list(LANE_LIMITED))
def test_no_full_mask_in_lane_limited_code(tmp_path, capsys, case):
    root = write_tree(tmp_path / "repo", {"k.cu": LANE_LIMITED[case]})
    _fix(root)
    assert (root / "k.cu").read_text() == LANE_LIMITED[case]
    assert "RA200 lane-limited code" in capsys.readouterr().out


def test_a_helper_called_from_lane_limited_code_in_another_file_keeps_its_mask(tmp_path, capsys):
    caller = ('#include "reduce.cuh"\n__global__ void k(float* out) {\n  if (threadIdx.x < 16) {\n'
              "    out[0] = warp_sum(out[threadIdx.x]);\n  }\n}\n")
    root = write_tree(tmp_path / "repo", {"reduce.cuh": "#pragma once\n" + WARP_SUM, "k.cu": caller})
    _fix(root)
    assert "0xffffffff" in (root / "reduce.cuh").read_text()
    assert "warp_sum is called from lane-limited code (k.cu line 4" in capsys.readouterr().out


def test_a_full_mask_where_every_lane_runs_is_fixed(tmp_path):
    kernel = "__global__ void k(float* out, int n) {\n  float v = out[threadIdx.x];\n  if (n > 4) {\n" \
             "    v = __shfl_xor_sync(0xffffffff, v, 1);\n  }\n  out[threadIdx.x] = v;\n}\n"
    root = write_tree(tmp_path / "repo", {"k.cu": kernel})
    _fix(root)
    assert "__shfl_xor_sync(ROCM_AUDIT_FULL_MASK, v, 1)" in (root / "k.cu").read_text()


def test_no_fix_where_the_projects_own_shim_drops_the_mask(tmp_path, capsys):
    shim = "#pragma once\n#if defined(__HIP_PLATFORM_AMD__)\n" \
           "#define __shfl_xor_sync(mask, var, laneMask) __shfl_xor(var, laneMask)\n#endif\n"
    root = write_tree(tmp_path / "repo", {"vendors/hip.h": shim, "k.cu": WARP_SUM})
    _fix(root)
    assert (root / "k.cu").read_text() == WARP_SUM
    assert "the project's own HIP shim redefines __shfl_xor_sync (vendors/hip.h:3)" in capsys.readouterr().out


NVIDIA_JOB = """name: gpu-tests
on: [push]
jobs:
  test:
    runs-on: [self-hosted, nvidia, a100]
    steps:
      - run: docker run --rm --gpus all nvcr.io/nvidia/pytorch:24.01-py3 pytest tests
"""


def test_gpus_all_stays_in_a_job_on_an_nvidia_runner(tmp_path, capsys):
    root = write_tree(tmp_path / "repo", {".github/workflows/gpu.yml": NVIDIA_JOB})
    _fix(root, "--unsafe")
    assert (root / ".github/workflows/gpu.yml").read_text() == NVIDIA_JOB
    assert "RA703 a CI job: its runner and image are NVIDIA's" in capsys.readouterr().out


@pytest.mark.parametrize(("ubuntu", "suggested"), [
    ("22.04", "image rocm/dev-ubuntu-22.04:6.4,"),
    ("20.04", "image rocm/dev-ubuntu-22.04:6.4 or rocm/dev-ubuntu-24.04:6.4,"),   # ROCm 6.4 has no 20.04 image
])
def test_a_ci_jobs_nvidia_image_is_not_replaced_and_the_rocm_job_to_add_is_named(tmp_path, capsys, ubuntu, suggested):
    job = ("jobs:\n  build:\n    runs-on: ubuntu-latest\n    container:\n"
           f"      image: nvidia/cuda:12.4.1-devel-ubuntu{ubuntu}\n    steps:\n      - run: make\n")
    root = write_tree(tmp_path / "repo", {".github/workflows/ci.yml": job})
    _fix(root, "--unsafe")
    assert (root / ".github/workflows/ci.yml").read_text() == job
    out = capsys.readouterr().out
    assert ".github/workflows/ci.yml:5: RA700 a CI job's NVIDIA image: the job would lose its GPU" in out
    assert f"add a ROCm job beside it (for the ROCm job, on an AMD GPU runner: {suggested} docker flags " \
           "--device=/dev/kfd --device=/dev/dri --group-add video)" in out


@pytest.mark.parametrize(("base", "written"), [
    ("nvidia/cuda:12.1.1-devel-ubuntu22.04", "rocm/dev-ubuntu-22.04:6.4"),
    ("nvidia/cuda:12.4.1-devel-ubuntu24.04", "rocm/dev-ubuntu-24.04:6.4"),
    ("nvidia/cuda:11.8.0-devel-ubuntu20.04", None),            # ROCm 6.4 has no Ubuntu 20.04 image
])
def test_base_images_only_from_the_table_of_rocm_releases(tmp_path, capsys, base, written):
    from auditor.fix.text_fixes import rocm_images

    dockerfile = f"FROM {base}\nRUN pip install torch\n"
    root = write_tree(tmp_path / "repo", {"Dockerfile": dockerfile})
    _fix(root, "--unsafe")
    assert (root / "Dockerfile").read_text() == dockerfile       # the ROCm image goes into a variant beside it
    if written is None:
        assert not (root / "Dockerfile.rocm").exists()
        assert "rocm/dev-ubuntu-20.04:6.4 does not exist" in capsys.readouterr().out
    else:
        assert (root / "Dockerfile.rocm").read_text().startswith(f"FROM {written}\n")
        name, tag = written.split(":")
        assert name in rocm_images()[tag]


CUDA_ONLY_CMAKE = "cmake_minimum_required(VERSION 3.24)\nproject(k LANGUAGES CXX CUDA)\n" \
                  "set(CMAKE_CUDA_ARCHITECTURES 80 90)\nadd_library(k SHARED k.cu)\n"
KERNEL = "__global__ void k(float* x) { x[threadIdx.x] *= 2.f; }\n"


def test_hip_architectures_are_not_added_to_a_project_that_does_not_build_for_hip(tmp_path, run_json, capsys):
    root = write_tree(tmp_path / "repo", {"CMakeLists.txt": CUDA_ONLY_CMAKE, "k.cu": KERNEL})
    _, before = run_json("check", root)
    _fix(root, "--unsafe")
    assert (root / "CMakeLists.txt").read_text() == CUDA_ONLY_CMAKE
    assert "no HIP language or HIP build branch" in capsys.readouterr().out
    _, after = run_json("check", root)
    assert (after["summary"]["verdict"], after["components"]) == (before["summary"]["verdict"], before["components"])


def test_hip_architectures_are_added_beside_an_existing_hip_branch(tmp_path):
    cmake = CUDA_ONLY_CMAKE.replace("add_library", "if(USE_ROCM)\n  enable_language(HIP)\nendif()\nadd_library")
    root = write_tree(tmp_path / "repo", {"CMakeLists.txt": cmake, "k.cu": KERNEL})
    _fix(root, "--unsafe")
    assert "set(CMAKE_HIP_ARCHITECTURES gfx90a gfx942)" in (root / "CMakeLists.txt").read_text()


def test_python_fixes_are_valid_for_the_oldest_python_and_keep_the_valid_edits(tmp_path, capsys):
    code = ("import torch\n"
            "print(f\"built for CUDA {torch.version.cuda.split('.')[0]}\")\n"
            "new = int(torch.version.cuda.split(\".\")[0]) >= 12\n")
    root = write_tree(tmp_path / "repo", {"pyproject.toml": '[project]\nname = "p"\nrequires-python = ">=3.8"\n',
                                          "p/info.py": code})
    _fix(root, "--unsafe")
    fixed = (root / "p/info.py").read_text()
    ast.parse(fixed, feature_version=(3, 8))
    assert 'new = (torch.version.cuda is not None and int(torch.version.cuda.split(".")[0]) >= 12)' in fixed
    assert "{torch.version.cuda.split('.')[0]}" in fixed          # the f-string (a message) is left alone
    assert "p/info.py:2: RA501 in the text of a message" in capsys.readouterr().out


def test_message_text_is_not_fixed(tmp_path):
    code = ('import torch\nif torch.version.cuda is None:\n'
            '    raise RuntimeError("built with CUDA {}".format(torch.version.cuda))\n'
            'print("CUDA %s" % torch.version.cuda)\n')
    root = write_tree(tmp_path / "repo", {"info.py": code})
    _fix(root, "--unsafe")
    assert (root / "info.py").read_text() == code


def test_inserted_block_keeps_crlf_and_lands_after_the_includes_not_under_a_doc_comment(tmp_path):
    source = ("// Copyright the authors.\r\n#include <cuda_runtime.h>\r\n\r\n/// Sums a warp.\r\n" + WARP_SUM.replace(
        "\n", "\r\n"))
    root = write_tree(tmp_path / "repo", {"k.cu": source.encode()})
    _fix(root)
    data = (root / "k.cu").read_bytes()
    assert b"ROCM_AUDIT_FULL_MASK" in data
    assert re.search(rb"(?<!\r)\n", data) is None, "a line ending other than the file's CRLF"
    text = data.decode()
    assert text.index("#include <cuda_runtime.h>") < text.index('#include "rocm_audit_compat.h"')
    assert "/// Sums a warp.\r\n__device__ float warp_sum" in text
    assert "#ifndef ROCM_AUDIT_FULL_MASK" in (root / "rocm_audit_compat.h").read_text()


def test_doc_comment_stays_with_its_function_without_includes(tmp_path):
    root = write_tree(tmp_path / "repo", {"k.cu": "/// Sums a warp.\n" + WARP_SUM})
    _fix(root)
    text = (root / "k.cu").read_text()
    assert "/// Sums a warp.\n__device__ float warp_sum" in text
    assert text.index('#include "rocm_audit_compat.h"\n#line 1\n') < text.index("/// Sums a warp.")


def test_a_shuffle_from_a_lane_without_a_width_is_not_fixed(tmp_path, capsys):
    # TransformerEngine's top-k: 4 warps of 32 lanes, a token each; __shfl_sync(mask, v, 0) broadcasts lane 0 of
    # each 32-lane warp on NVIDIA, but lane 0 of the 64-lane wavefront on AMD: the second token would get the first's
    text = ("__global__ void topk(float* out) {\n  float v = out[threadIdx.x];\n"
            "  out[threadIdx.x] = __shfl_sync(0xffffffff, v, 0);\n}\n")
    assert "k.cu:3: RA200 a shuffle from lane N without a width: on AMD it reads lane N of the 64-lane wavefront" \
        in _left_as_is(tmp_path, capsys, text)


def test_a_shuffle_from_a_lane_with_its_width_is_fixed(tmp_path, capsys):
    text = ("__global__ void topk(float* out) {\n  float v = out[threadIdx.x];\n"
            "  out[threadIdx.x] = __shfl_sync(0xffffffff, v, 0, 32);\n}\n")
    root = write_tree(tmp_path / "repo", {"k.cu": text})
    _fix(root)
    assert "__shfl_sync(ROCM_AUDIT_FULL_MASK, v, 0, 32)" in (root / "k.cu").read_text()


def test_a_vote_is_not_fixed(tmp_path, capsys):
    # the torch_extension fixture's expert count: on AMD the ballot covers 64 lanes, the `unsigned` keeps the lower
    # 32 and one lane per wavefront (threadIdx.x % warpSize == 0) adds them: half the votes would be lost
    text = ("__global__ void count(const int* ids, int* counts, int e) {\n"
            "  unsigned votes = __ballot_sync(0xffffffff, ids[threadIdx.x] == e);\n"
            "  if (threadIdx.x % warpSize == 0) atomicAdd(counts, __popc(votes));\n}\n")
    assert "k.cu:2: RA200 a vote (__ballot_sync) over the 64-lane wavefront" in _left_as_is(tmp_path, capsys, text)


def test_a_timed_delay_is_not_turned_into_a_short_sleep(tmp_path, capsys):
    # flashinfer's delayStreamKernel holds a stream for delay_us microseconds; s_sleep would make it ~1000x shorter
    text = ("__global__ void delay(long long us) {\n  for (int i = 0; i < us; ++i) {\n    __nanosleep(1000);\n"
            "  }\n}\n")
    assert "k.cu:3: RA830 a timed delay, not a back-off in a wait loop" in _left_as_is(tmp_path, capsys, text)


@pytest.mark.parametrize(("path", "fixed"), [("xqa/mla_sm120.cuh", False), ("kernels/sm_90/reduce.cu", False),
                                             ("kernels/pre_sm90/reduce.cu", True)])
def test_no_fix_in_a_file_written_for_hopper_or_blackwell(tmp_path, capsys, path, fixed):
    # flashinfer's xqa/mla_sm120.cuh: its TMA and MMA wrappers live in other headers; the path says what it is for
    root = write_tree(tmp_path / "repo", {path: WARP_SUM})
    _fix(root)
    assert ("ROCM_AUDIT_FULL_MASK" in (root / path).read_text()) == fixed
    if not fixed:
        assert "the file is written for one NVIDIA architecture (" in capsys.readouterr().out


@pytest.mark.parametrize(("condition", "fixed"), [
    ("#if defined(__CUDACC_VER_MAJOR__) && (__CUDACC_VER_MAJOR__ >= 9)", False),   # warp-ctc's reduce.cu
    ("#ifdef CUDA_VERSION", False),
    ("#if CUDA_VERSION < 9000 || defined(__HIP__)", True),                          # HIP takes this branch
])
def test_no_fix_in_a_branch_only_a_cuda_compiler_takes(tmp_path, capsys, condition, fixed):
    text = ("__device__ float down(float x, int o) {\n" + condition + "\n"
            "  return __shfl_down_sync(0xFFFFFFFF, x, o);\n#else\n  return __shfl_down(x, o);\n#endif\n}\n")
    root = write_tree(tmp_path / "repo", {"k.cu": text})
    _fix(root)
    assert ("ROCM_AUDIT_FULL_MASK, x, o" in (root / "k.cu").read_text()) == fixed
    if not fixed:
        assert "k.cu:3: RA200 in a branch for a CUDA compiler version (line 2: " in capsys.readouterr().out


def test_no_lane_math_fix_where_32_is_a_data_layout(tmp_path, capsys):
    # FasterTransformer's image_shift_partition: COL32 int8 layout, `(tid & 0xffffffe0) * m + (bid << 5) + (tid & 31)`;
    # `tid & 31` is a column of a 32-wide tile there, and `& 63` on wave64 would address the wrong bytes
    text = ("__device__ void col32(const char* in, char* out, int m, int n) {\n  int tid = threadIdx.x;\n"
            "  int bid = blockIdx.x;\n  if (tid < n) {\n"
            "    const int at = (tid & 0xffffffe0) * m + (bid << 5) + (tid & 31);\n    out[at] = in[at];\n  }\n}\n")
    assert "k.cu:5: RA203 the function assumes 32 lanes elsewhere too (line 5)" \
        in _left_as_is(tmp_path, capsys, text, "--unsafe")


def test_no_mask_fix_in_tensor_core_code(tmp_path, capsys):
    # DeepSpeed's evoformer attention (CUTLASS): "4 threads work on the same row" of an MMA accumulator fragment
    text = ('#include "cutlass/gemm/warp/mma_tensor_op_tile_iterator_sm80.h"\n'
            "__device__ float reduce_same_row(float v) {\n"
            "  v += __shfl_xor_sync(0xffffffff, v, 1);\n  return v + __shfl_xor_sync(0xffffffff, v, 2);\n}\n"
            "using Shape = cutlass::MatrixShape<16, 8>;\n")
    root = write_tree(tmp_path / "repo", {"iter.h": text})
    _fix(root)
    assert (root / "iter.h").read_text() == text
    assert "iter.h:3: RA200 tensor-core code (cutlass::): its lanes follow NVIDIA's MMA fragment layouts" \
        in capsys.readouterr().out


def test_no_mask_fix_beside_a_projects_own_mma_wrappers(tmp_path, capsys):
    # SageAttention's attn_utils.cuh: the row max over "the 4 threads in the row" of an m16n16 accumulator that its
    # own wrappers (mma::mma_sync_m16n16k32_row_col_s8s8s32, ldmatrix_m8n8x4 in mma.cuh) fill
    text = ('#include "mma.cuh"\n__device__ void row_max(float* m, uint32_t* RS, uint32_t* RQ, uint32_t* RK) {\n'
            "  mma::mma_sync_m16n16k32_row_col_s8s8s32<mma::MMAMode::kInit>(RS, RQ, RK);\n"
            "  float t = __int_as_float(RS[0]);\n"
            "  t = max(t, __shfl_xor_sync(0xffffffff, t, 0x1));\n  m[0] = max(t, __shfl_xor_sync(0xffffffff, t, 0x2));\n"
            "}\n")
    assert "k.cu:5: RA200 tensor-core code (mma_sync_m16n16k32_row_col_s8s8s32): its lanes follow NVIDIA's MMA " \
        "fragment layouts" in _left_as_is(tmp_path, capsys, text)


HALF2_XOR = ("#pragma once\n#include <cuda_fp16.h>\n"
             "__forceinline__ __device__ half2 shfl_xor_sync(half2 x, int lane_mask) {\n"
             "  return __shfl_xor_sync(0xffffffff, x, lane_mask);\n}\n")
TENSOR_CORE_KERNEL = ('#include "../math.cuh"\n__global__ void attn(unsigned* r, Tile smem) {\n'
                      "  smem.ldmatrix_m8n8x4(0, r);\n}\n")


def test_no_mask_fix_in_a_header_only_tensor_core_kernels_include(tmp_path, capsys):
    # SageAttention's math.cuh (flashinfer's PTX wrappers): included only by its sm80/sm89/sm90 mma kernels
    files = {"csrc/math.cuh": HALF2_XOR, "csrc/qattn/sm80.cu": TENSOR_CORE_KERNEL,
             "csrc/qattn/sm90.cu": TENSOR_CORE_KERNEL.replace("smem.ldmatrix_m8n8x4", "wgmma_s8s8s32")}
    root = write_tree(tmp_path / "repo", files)
    _fix(root)
    assert (root / "csrc/math.cuh").read_text() == HALF2_XOR
    assert "math.cuh:4: RA200 a header included only by tensor-core code (csrc/qattn/sm80.cu, csrc/qattn/sm90.cu)" \
        in capsys.readouterr().out


def test_a_header_another_kernel_includes_by_its_include_path_is_fixed(tmp_path, capsys):
    files = {"csrc/math.cuh": HALF2_XOR, "csrc/qattn/sm80.cu": TENSOR_CORE_KERNEL,
             # SageAttention's fused.cu: a comment names ldmatrix, the code does not use it
             "csrc/fused/quant.cu": '#include "math.cuh"\n// TODO: use ldmatrix to do permutation\n'
                                    "__global__ void q(half2* x) { x[0] = shfl_xor_sync(x[0], 1); }\n"}
    root = write_tree(tmp_path / "repo", files)
    _fix(root)
    assert "__shfl_xor_sync(ROCM_AUDIT_FULL_MASK, x, lane_mask)" in (root / "csrc/math.cuh").read_text()
