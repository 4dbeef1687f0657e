"""Fixes that finish what they start and decide where the code decides: each case was a wrong or missing edit of
`rocm-audit fix` on real trees (a stand-in CUDA version flowing into the code's own None tests and messages,
second reduction stages refused although they stay in one 32-lane group, a template argument read as the callee,
a file-local helper refused for another file's call)."""
from __future__ import annotations

import ast
import json

import pytest

from auditor.cli.app import main
from tests.conftest import fast_first, write_tree
from tests.test_fix_rightness import _fix


def _check_lines(root, capsys) -> list[str]:
    """`path:line: RULE` of each unguarded finding `check` reports."""
    main(["check", str(root), "--no-progress", "--format", "json", "--fail-on", "never"])
    found = json.loads(capsys.readouterr().out)["findings"]
    return [f"{f['path']}:{f['line']}: {f['rule']}" for f in found if not f["guarded"]]


VERSION_CODE = '''import sys
import torch
from packaging.version import Version


def fast_path():
    if Version(torch.version.cuda) >= Version("12.0"):
        return True
    return False


def require():
    assert int(torch.version.cuda.split(".")[0]) >= 11, "needs CUDA 11"
    if torch.version.cuda < "11.0":
        raise RuntimeError("too old")
    if not torch.version.cuda.startswith("12"):
        sys.exit(1)


def label():
    return "cu" + torch.version.cuda.replace(".", "")
'''


def test_the_version_fix_answers_the_decision_and_never_writes_a_stand_in(tmp_path, capsys):
    root = write_tree(tmp_path / "repo", {"gpu.py": VERSION_CODE})
    _fix(root, "--unsafe")
    fixed = (root / "gpu.py").read_text()
    out = capsys.readouterr().out
    ast.parse(fixed)
    assert '"0.0"' not in fixed and " or " not in fixed.split("def label")[1]
    # a feature that needs CUDA 12 is off on ROCm; a refusal lets ROCm through
    assert 'if torch.version.cuda is not None and Version(torch.version.cuda) >= Version("12.0"):' in fixed
    assert 'assert torch.version.cuda is None or int(torch.version.cuda.split(".")[0]) >= 11, "needs' in fixed
    assert 'if torch.version.cuda is not None and torch.version.cuda < "11.0":' in fixed
    assert 'if not (torch.version.cuda is None or torch.version.cuda.startswith("12")):' in fixed
    # a label built from the version is not a decision: reported, never given a made-up version
    assert 'return "cu" + torch.version.cuda.replace(".", "")' in fixed
    assert "gpu.py:21: RA501 the version is kept or passed on here, not compared" in out


@pytest.mark.parametrize("code", [
    "cuda_version = torch.version.cuda\nif cuda_version and Version(cuda_version) >= Version('12.0'):\n    x = 1\n",
    ("cuda_version = torch.version.cuda\nif cuda_version is not None and Version(cuda_version) >= Version('12'):\n"
     "    x = 1\n"),
    ("cuda_version = torch.version.cuda\nif not cuda_version:\n    cuda_version = '12.1'\n"
     "print_it = 'cu' + cuda_version.replace('.', '')\n"),
    "v = torch.version.cuda\nif v is None:\n    raise SystemExit('no CUDA')\nmajor = int(v.split('.')[0])\n",
], ids=["truth-and", "is-not-none-and", "fallback", "refused-none"])
def test_a_version_kept_behind_a_none_test_or_fallback_is_not_reported(tmp_path, capsys, code):
    root = write_tree(tmp_path / "repo", {"m.py": "import torch\nfrom packaging.version import Version\n" + code})
    assert not [ln for ln in _check_lines(root, capsys) if "RA501" in ln]


def test_a_version_kept_and_compared_unguarded_is_still_reported(tmp_path, capsys):
    code = "import torch\ncuda_version = torch.version.cuda\nif cuda_version >= '12.0':\n    x = 1\n"
    root = write_tree(tmp_path / "repo", {"m.py": code})
    assert [ln for ln in _check_lines(root, capsys) if ln.startswith("m.py:2:") and "RA501" in ln]


SECOND_STAGE = """#include <cuda_runtime.h>
__device__ float warp_sum(float val) {
  for (int offset = 16; offset > 0; offset >>= 1) val += __shfl_xor_sync(0xffffffff, val, offset);
  return val;
}

__global__ void block_sum(const float* in, float* out) {
  __shared__ float shared[32];
  int lane = threadIdx.x % 32;
  int wid = threadIdx.x / 32;
  float val = warp_sum(in[threadIdx.x]);
  if (lane == 0) shared[wid] = val;
  __syncthreads();
  val = (threadIdx.x < blockDim.x / 32) ? shared[lane] : 0.f;
  if (wid == 0) val = warp_sum(val);
  if (threadIdx.x == 0) out[blockIdx.x] = val;
}

__global__ void first_warp(float* out) {
  float v = out[threadIdx.x];
  if (threadIdx.x < 32) {
    v += __shfl_xor_sync(0xffffffff, v, 16);
    v += __shfl_down_sync(0xffffffff, v, 8);
  }
  out[threadIdx.x] = v;
}
"""


def test_both_stages_of_a_reduction_are_fixed_where_the_exchange_stays_in_32_lanes(tmp_path, capsys):
    root = write_tree(tmp_path / "repo", {"k.cu": SECOND_STAGE})
    _fix(root)
    fixed = (root / "k.cu").read_text()
    out = capsys.readouterr().out
    assert "val += __shfl_xor_sync(ROCM_AUDIT_FULL_MASK, val, offset)" in fixed      # called under `wid == 0`
    assert "v += __shfl_xor_sync(ROCM_AUDIT_FULL_MASK, v, 16)" in fixed              # under `threadIdx.x < 32`
    # lane 16 of a down-shuffle by 8 under `< 32` reads lane 24; by 16 it would read lane 32, which does not run
    # it on AMD: down-shuffles whose result every lane keeps stay for a person
    assert "v += __shfl_down_sync(0xffffffff, v, 8)" in fixed
    assert "k.cu:23: RA200 lane-limited code (line 21" in out


TEMPLATE_CALL = """#include <cuda_runtime.h>
constexpr int warp_size = 32;
template <int W>
__device__ float warpReduceSum(float val) {
  for (int offset = W / 2; offset > 0; offset >>= 1) val += __shfl_down_sync(0xffffffff, val, offset);
  return val;
}
__global__ void k(float* out) {
  float v = out[threadIdx.x];
  if (threadIdx.x % 64 < 7) v = warpReduceSum<warp_size>(v);
  out[threadIdx.x] = v;
}
"""


@pytest.mark.parametrize("argument", ["warp_size", "32"])
def test_a_template_argument_is_not_read_as_the_callee(tmp_path, capsys, argument):
    root = write_tree(tmp_path / "repo", {"k.cu": TEMPLATE_CALL.replace("<warp_size>(v)", f"<{argument}>(v)")})
    _fix(root)
    assert "__shfl_down_sync(0xffffffff, val, offset)" in (root / "k.cu").read_text()
    # refused for the call at line 10, read as a call of warpReduceSum
    assert "k.cu:5: RA200 lane-limited code (called from lane-limited code (line 10: " in capsys.readouterr().out


def test_a_file_local_helper_is_judged_by_its_own_translation_units_calls(tmp_path, capsys):
    helper = ("static __device__ float warp_sum(float v) {\n  return v + __shfl_down_sync(0xffffffff, v, 1);\n}\n"
              "__global__ void k(float* out) { out[threadIdx.x] = warp_sum(out[threadIdx.x]); }\n")
    other = ("__device__ float warp_sum(float v) { return v; }\n"
             "__global__ void g(float* out) { if (threadIdx.x < 5) out[0] = warp_sum(out[0]); }\n")
    root = write_tree(tmp_path / "repo", {"a.cu": helper, "b.cu": other})
    _fix(root)
    assert "__shfl_down_sync(ROCM_AUDIT_FULL_MASK, v, 1)" in (root / "a.cu").read_text()
    # the same helper not file-local, and another file that declares it (not defines it) calls it lane-limited
    declared = other.replace("__device__ float warp_sum(float v) { return v; }", "__device__ float warp_sum(float v);")
    root2 = write_tree(tmp_path / "repo2", {"a.cu": helper.replace("static ", ""), "b.cu": declared})
    _fix(root2)
    assert "0xffffffff" in (root2 / "a.cu").read_text()


def test_the_unsafe_hint_counts_only_the_edits_unsafe_would_make(tmp_path, capsys):
    kept = "import torch\nmajor = int(torch.version.cuda.split('.')[0])\n"   # reported only, even with --unsafe
    compared = "import torch\nnew = torch.version.cuda >= '12.0'\n"
    root = write_tree(tmp_path / "repo", {"kept.py": kept})
    _fix(root)
    assert "add --unsafe" not in capsys.readouterr().out
    root2 = write_tree(tmp_path / "repo2", {"kept.py": kept, "compared.py": compared})
    _fix(root2)
    assert "1 more finding(s) have a fix that needs review: add --unsafe." in capsys.readouterr().out


@pytest.mark.parametrize("mask", fast_first(["uint32_t(-1)", "~0u", "(unsigned)-1"]))
def test_every_spelling_of_the_full_mask_is_read(tmp_path, mask):
    kernel = (f"#include <cstdint>\n__device__ float pair(float v) {{\n  return v + __shfl_xor_sync({mask}, v, 1);\n"
              "}\n")
    root = write_tree(tmp_path / "repo", {"k.cu": kernel})
    _fix(root)
    assert "__shfl_xor_sync(ROCM_AUDIT_FULL_MASK, v, 1)" in (root / "k.cu").read_text()


def test_nvcc_only_flags_go_behind_the_rocm_switch_and_a_lone_string_is_left(tmp_path, capsys):
    setup = ("import torch\nfrom torch.utils.cpp_extension import CUDAExtension\n\n"
             "flags = [\n    \"-O3\",\n    \"--use_fast_math\",\n    \"--threads\", \"4\",\n]\n"
             "other = {\"nvcc\": \"--use_fast_math\"}\n"
             "ext = CUDAExtension(\"ops._C\", [\"ops.cu\"], extra_compile_args={\"nvcc\": flags + [other[\"nvcc\"]]})\n")
    root = write_tree(tmp_path / "repo", {"setup.py": setup})
    _fix(root, "--unsafe")
    fixed = (root / "setup.py").read_text()
    assert '    *(["--use_fast_math"] if torch.version.hip is None else []),\n' in fixed
    assert '    *(["--threads", "4"] if torch.version.hip is None else []),\n' in fixed     # the value goes with it
    assert 'other = {"nvcc": "--use_fast_math"}' in fixed
    assert "setup.py:9: RA651 not an element of a flag list" in capsys.readouterr().out
    assert not [ln for ln in _check_lines(root, capsys) if ln.startswith("setup.py:6:") or ln.startswith("setup.py:7:")]


NAMED = """#include <cuda_runtime.h>
#define FINAL_MASK 0xffffffff
__device__ float warp_sum(float v) {
  for (int mask = 16; mask > 0; mask >>= 1) v += __shfl_xor_sync(FINAL_MASK, v, mask, 32);
  return v;
}
__global__ void k(float* out) { out[threadIdx.x] = warp_sum(out[threadIdx.x]); }
"""


def test_a_named_mask_is_fixed_at_its_definition_when_every_use_is_a_full_warp_use(tmp_path):
    root = write_tree(tmp_path / "repo", {"k.cu": NAMED})
    _fix(root)
    fixed = (root / "k.cu").read_text()
    assert "#define FINAL_MASK ROCM_AUDIT_FULL_MASK\n" in fixed
    assert "__shfl_xor_sync(FINAL_MASK, v, mask, 32)" in fixed


def test_a_named_mask_in_a_header_is_fixed_when_every_file_that_uses_it_makes_full_warp_uses(tmp_path):
    """The header's own uses and those of each file that includes it are judged where they are."""
    root = write_tree(tmp_path / "repo", {
        "reduce.cuh": NAMED.split("__global__")[0],
        "k.cu": '#include "reduce.cuh"\n__global__ void k(float* out) { out[threadIdx.x] = warp_sum(out[threadIdx.x]); }\n'
                "__global__ void j(float* out) { out[0] = __shfl_xor_sync(FINAL_MASK, out[threadIdx.x], 1, 32); }\n",
    })
    _fix(root)
    assert "#define FINAL_MASK ROCM_AUDIT_FULL_MASK\n" in (root / "reduce.cuh").read_text()
    assert "__shfl_xor_sync(FINAL_MASK, out[threadIdx.x], 1, 32)" in (root / "k.cu").read_text()


@pytest.mark.parametrize(("files", "why"), [
    ({"k.cu": NAMED.replace("warp_sum(out[threadIdx.x]); }", "threadIdx.x < 7 ? warp_sum(out[0]) : 0.f; }")
      .replace(", mask, 32)", ", mask)").replace("__shfl_xor_sync", "__shfl_down_sync")},
     "k.cu:2: RA201 its use at line 4: lane-limited code"),
    ({"reduce.cuh": NAMED, "vote.cu": ('#include "reduce.cuh"\n'
                                       "__device__ unsigned v(bool p) { return __ballot_sync(FINAL_MASK, p); }\n")},
     ("reduce.cuh:2: RA201 FINAL_MASK is defined in a header and not #undef'd there, and other files use it: "
      "vote.cu, its use at line 2: a vote")),
    ({"k.cu": NAMED + "__device__ unsigned v(bool p) { return __ballot_sync(FINAL_MASK, p); }\n"},
     "k.cu:2: RA201 its use at line 8: a vote"),
], ids=["lane-limited-use", "header-without-undef", "vote"])
def test_a_named_mask_with_a_use_that_is_not_a_full_warp_use_is_left(tmp_path, capsys, files, why):
    root = write_tree(tmp_path / "repo", files)
    _fix(root)
    assert all("#define FINAL_MASK 0xffffffff\n" in (root / name).read_text() for name in files if "#define" in files[name])
    assert why in capsys.readouterr().out


def test_a_flag_takes_its_value_whatever_expression_it_is_and_is_left_without_one(tmp_path, capsys):
    setup = ("import os\nimport torch\n\n"
             "def threads():\n    return [\"--threads\", os.getenv(\"NVCC_THREADS\") or \"4\"]\n\n"
             "def gencode():\n    return [\"-gencode\"]\n")
    root = write_tree(tmp_path / "repo", {"setup.py": setup})
    _fix(root, "--unsafe")
    fixed = (root / "setup.py").read_text()
    assert '[*(["--threads", os.getenv("NVCC_THREADS") or "4"] if torch.version.hip is None else [])]' in fixed
    assert 'return ["-gencode"]' in fixed          # its value is appended elsewhere: dropping it alone would break
    assert "setup.py:8: RA651 not an element of a flag list" in capsys.readouterr().out
