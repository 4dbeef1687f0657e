"""`rocm-audit fix`: the fixture repositories fixed and re-scanned (counts pinned), --diff changes nothing, what a fix
never touches (guarded code, vendored code, partial parses, symbolic links), atomic writes that keep the mode,
exit codes as `check`, and the fixed CUDA sources still compile with nvcc."""
from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from auditor.cli.app import main
from auditor.run.pipeline import audit
from auditor.match.rulebook import load_rulebook
from tests.conftest import FIXTURES, write_tree

pytestmark = pytest.mark.slow   # fix end to end on the fixtures

NVCC = shutil.which("nvcc")
RULEBOOK = load_rulebook()


def _copy(tmp_path: Path, name: str) -> Path:
    target = tmp_path / name
    shutil.copytree(FIXTURES / name, target)
    return target


def _unguarded(root: Path, within: set[str] | None = None) -> Counter:
    """Unguarded findings by rule (only in the files `within`, when given)."""
    return Counter(f.rule_id for f in audit([root], RULEBOOK).findings
                   if not f.guarded and (within is None or f.path in within))


def _digests(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


# fixture -> (unsafe, files changed, findings removed by rule, unguarded findings before, after)
PINNED = {
    # common.cuh's warp reductions are called after a lane-dependent return (topk_gating.cu) and under
    # `if (warp == 0)`: lane-limited, so their full masks are not fixed; topk_gating.cu's ballot runs on every lane
    # topk_gating.cu's ballot is a vote over 64 lanes kept in an `unsigned`: reported, not fixed
    ("torch_extension", False): (set(), {}, 41, 41),
    # --unsafe adds no lane-math fix here: block_reduce_sum calls warp_reduce_sum (xor-shuffles from 16) and the
    # top-k kernel adds 32 to lane ids; both are consistent in 32-lane groups as written
    ("torch_extension", True): (set(), {}, 41, 41),
    # llmserve/server.py imports llmserve/engine.py, which imports tensorrt_llm: RA920 at the import, not fixable
    ("llm_serving", False): (set(), {}, 32, 32),
    # scripts/serve.sh runs an NVIDIA image: its --gpus all stays (RA703 is fixed only where the script runs ROCm)
    # gpu_monitor.py keeps torch.version.cuda's parts and returns them: nothing is decided there, so its RA501 is
    # reported only (a stand-in version would flow into the callers' own tests). The image and index fixes are
    # made in ROCm variants beside the Dockerfile and requirements.txt, which stay as the NVIDIA builds use them.
    ("llm_serving", True): (set(), {}, 32, 32),
    # a CUDA-only CMake project: a HIP architectures line would not make it build for HIP (and would turn the
    # verdict into "ROCm build in tree, but broken"), so RA603's fix is not offered
    ("cmake_cuda_lib", True): (set(), {}, 89, 89),
    # graph_step.cu parses whole now (`__has_include(<cudnn.h>)` is read): its full-width shuffle mask is fixed
    ("coverage", True): ({"graph_step.cu"}, {"RA200": 1}, 10, 9),
}


# (fixture, unsafe) -> the ROCm variants made beside files: path -> fixes made in it, by rule
# llm_serving's would still set NVIDIA_VISIBLE_DEVICES and install tensorrt-llm, so none is made there
VARIANTS: dict[tuple[str, bool], dict[str, dict[str, int]]] = {}
# (fixture, unsafe) -> the header of the fixer's definitions the fixed files include, when one is made
HEADERS = {("coverage", True): "rocm_audit_compat.h"}


@pytest.mark.parametrize(("name", "unsafe"), list(PINNED), ids=[f"{n}-{'unsafe' if u else 'safe'}" for n, u in PINNED])
def test_fixture_fixed_and_rescanned(tmp_path, capsys, name, unsafe):
    changed, removed, before_count, after_count = PINNED[(name, unsafe)]
    root = _copy(tmp_path, name)
    before, digests = _unguarded(root), _digests(root)
    code = main(["fix", str(root), "--no-progress", "--fail-on", "never", *(["--unsafe"] if unsafe else [])])
    assert code == 0
    after = _unguarded(root, set(digests))
    assert (sum(before.values()), sum(after.values())) == (before_count, after_count)
    assert dict(before - after) == removed
    assert not after - before, "a fix added a finding"
    now = _digests(root)
    assert {path for path in digests if now[path] != digests[path]} == changed
    out = capsys.readouterr().out
    made = VARIANTS.get((name, unsafe), {})
    header = HEADERS.get((name, unsafe))
    assert set(now) - set(digests) == set(made) | ({header} if header else set())
    if header:
        assert f"  {header} (new: the definitions the fixes use, included by the fixed files)" in out
    assert f"Fixed {sum(removed.values()) + sum(sum(v.values()) for v in made.values())} finding(s) in " \
           f"{len(changed) + len(made)} file(s)." in out
    for variant, rules in made.items():
        assert f"  {variant} (new: the ROCm variant of " in out
        assert not set(rules) & set(_unguarded(root, {variant})), "the variant still holds a finding it fixed"
    breaking = sum(1 for f in audit([root], RULEBOOK).findings if f.would_break())
    assert f"Remaining after fixing: {breaking} finding(s) would break on ROCm" in out


def test_diff_prints_and_changes_nothing(tmp_path, capsys):
    root = _copy(tmp_path, "llm_serving")
    digests = _digests(root)
    code = main(["fix", str(root), "--diff", "--unsafe", "--no-progress"])
    captured = capsys.readouterr()
    assert _digests(root) == digests
    assert code == 1            # as `check`: the tree still has high findings
    assert "scripts/serve.sh" not in captured.out     # an NVIDIA image's --gpus all is left alone, with the reason
    assert "scripts/serve.sh:18: RA703 the script or job runs on NVIDIA" in captured.err
    assert "Dockerfile.rocm: left unchanged: the ROCm variant would still hold 2 CUDA-specific line(s) (RA705 at " \
           "line 5" in captured.err
    assert "Would fix 0 finding(s) in 0 file(s)." in captured.err


def test_check_fix_is_an_alias(tmp_path, capsys):
    root = write_tree(tmp_path / "repo", {"k.cu": "__device__ float f(float v) { return __shfl_xor_sync(0xffffffff, v, 1); }\n"})
    assert main(["check", "--fix", str(root), "--no-progress"]) == 0
    assert "__shfl_xor_sync(ROCM_AUDIT_FULL_MASK, v, 1)" in (root / "k.cu").read_text()
    assert "Fixed 1 finding(s) in 1 file(s)." in capsys.readouterr().out


def test_exit_code_counts_what_remains(tmp_path, capsys):
    root = write_tree(tmp_path / "repo", {"k.cu": "__device__ float f(float v) { return __shfl_xor_sync(0xffffffff, v, 1); }\n"})
    assert main(["fix", str(root), "--diff", "--no-progress"]) == 1     # nothing written: the finding is there
    assert main(["fix", str(root), "--no-progress"]) == 0               # written: nothing high remains
    assert main(["check", str(root), "--no-progress", "--format", "json"]) == 0


TMA_HOST = ("#include <cuda.h>\nvoid make_map(CUtensorMap* map, void* base) {\n"
            "  cuTensorMapEncodeTiled(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, base, 0, 0, 0, 0, "
            "CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE, "
            "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);\n}\n")
MASK_KERNEL = "__global__ void k(float* o) { o[threadIdx.x] += __shfl_xor_sync(0xffffffff, o[threadIdx.x], 1); }\n"


@pytest.mark.parametrize("diff", [False, True], ids=["written", "diff"])
def test_the_summary_says_the_project_stays_blocked_with_checks_reason(tmp_path, capsys, diff):
    """A mask fix in a project blocked by an API with no ROCm equivalent is made, and the summary says the
    verdict is still blocked, with check's reason: the fixes alone do not give it a ROCm build."""
    cmake = "cmake_minimum_required(VERSION 3.24)\nproject(k LANGUAGES CXX CUDA)\nadd_library(k SHARED k.cu tma.cu)\n"
    root = write_tree(tmp_path / "repo", {"CMakeLists.txt": cmake, "k.cu": MASK_KERNEL, "tma.cu": TMA_HOST})
    main(["fix", str(root), "--no-progress", "--fail-on", "never"] + (["--diff"] if diff else []))
    said = capsys.readouterr()
    assert ("Verdict now: " if diff else "Verdict after fixing: ") + "blocked: 2 finding(s) with no ROCm " \
        "equivalent: tma-tensor-map (CUtensorMap, cuTensorMapEncodeTiled) in tma.cu:2\n  No fix ports the code " \
        "that blocks it" in (said.err if diff else said.out)
    main(["check", str(root), "--no-progress", "--format", "json"])
    summary = json.loads(capsys.readouterr().out)["summary"]
    assert (summary["verdict"], summary["verdict_reason"]) == (
        "blocked", ("blocked: 2 finding(s) with no ROCm equivalent: tma-tensor-map (CUtensorMap, "
                    "cuTensorMapEncodeTiled) in tma.cu:2"))
    assert ("ROCM_AUDIT_FULL_MASK" in (root / "k.cu").read_text()) is not diff


def test_a_summary_names_no_verdict_when_the_project_is_not_blocked(tmp_path, capsys):
    root = write_tree(tmp_path / "repo", {"k.cu": MASK_KERNEL})
    main(["fix", str(root), "--no-progress", "--fail-on", "never"])
    assert "Verdict" not in capsys.readouterr().out


def test_flags_without_fix_are_usage_errors(tmp_path, capsys):
    assert main(["check", str(tmp_path), "--unsafe"]) == 2   # `check --diff` is `fix --diff` (as in ruff)
    assert main(["fix"]) == 2
    assert "goes with `rocm-audit fix" in capsys.readouterr().err


GUARDED = """\
__device__ float bcast(float v) {
#if defined(__HIP_PLATFORM_AMD__)
  return __shfl(v, 0);
#else
  return __shfl_xor_sync(0xffffffff, v, 1);
#endif
}
"""


def test_never_touches_guarded_vendored_partial_or_linked_files(tmp_path, capsys):
    outside = write_tree(tmp_path / "outside", {"k.cu": "__device__ float g(float v) { return __shfl_sync(~0u, v, 0); }\n"})
    root = write_tree(tmp_path / "repo", {
        "guarded.cu": GUARDED,
        "third_party/lib/k.cu": "__device__ float h(float v) { return __shfl_xor_sync(0xffffffff, v, 1); }\n",
        "broken.cu": "__device__ float b(float v) { return __shfl_xor_sync(0xffffffff, v, 1) }}} (\n",
    })
    (root / "linked.cu").symlink_to(outside / "k.cu")
    digests, outside_digests = _digests(root), _digests(outside)
    main(["fix", str(root), "--unsafe", "--no-progress"])
    assert _digests(root) == digests and _digests(outside) == outside_digests
    out = capsys.readouterr().out
    assert "Fixed 0 finding(s) in 0 file(s)." in out
    assert "broken.cu:1: RA200 the file parsed only in part and the code around it did not parse" in out


def test_keeps_mode_and_line_endings_and_leaves_no_temporary_file(tmp_path, capsys):
    root = write_tree(tmp_path / "repo", {"run.sh": "#!/bin/sh\r\ndocker run --gpus all rocm/pytorch\r\n"})
    (root / "run.sh").chmod(0o751)
    assert main(["fix", str(root), "--unsafe", "--no-progress"]) == 0
    assert (root / "run.sh").read_bytes() == (b"#!/bin/sh\r\ndocker run --device=/dev/kfd --device=/dev/dri "
                                             b"--group-add video rocm/pytorch\r\n")
    assert (root / "run.sh").stat().st_mode & 0o777 == 0o751
    assert sorted(p.name for p in root.iterdir()) == ["run.sh"]


def test_select_limits_the_fixes(tmp_path, capsys):
    root = write_tree(tmp_path / "repo", {"k.cu": "__device__ void s(int* f, unsigned n) { while (!*f) __nanosleep(n); }\n"
                                                  "__device__ float f(float v) { return __shfl_sync(~0u, v, 0); }\n"})
    main(["fix", str(root), "--select", "RA830", "--no-progress"])
    text = (root / "k.cu").read_text()
    assert "rocm_audit_nanosleep(n)" in text and "__shfl_sync(~0u, v, 0)" in text


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed on this machine")
def test_fixed_kernel_compiles_with_nvcc(tmp_path, capsys):
    root = write_tree(tmp_path / "repo", {"csrc/reduce.cu": REDUCE_KERNEL})
    main(["fix", str(root), "--no-progress", "--fail-on", "never"])
    assert "__shfl_xor_sync(ROCM_AUDIT_FULL_MASK, v, o)" in (root / "csrc/reduce.cu").read_text()
    command = [NVCC, "-std=c++17", "-arch=sm_80", "-c", str(root / "csrc/reduce.cu"), "-o", str(tmp_path / "out.o")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]


REDUCE_KERNEL = ("#include <cuda_runtime.h>\n__device__ float warp_sum(float v) {\n"
                 "  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);\n  return v;\n}\n"
                 "__global__ void row_sums(const float* x, float* out, int n) {\n"
                 "  float v = 0.f;\n  for (int i = threadIdx.x; i < n; i += blockDim.x) v += x[i];\n"
                 "  v = warp_sum(v);\n  if (threadIdx.x % 32 == 0) atomicAdd(out, v);\n}\n")


def test_a_fix_that_adds_a_finding_is_rolled_back(tmp_path):
    from dataclasses import replace

    from auditor.fix.apply import run_fix
    from auditor.fix.data import shipped_fixes

    root = write_tree(tmp_path / "repo", {"run.sh": "docker run --gpus all rocm/pytorch\n"})
    specs = dict(shipped_fixes())
    specs["RA703"] = replace(specs["RA703"], replacement="--runtime=nvidia")   # a bad fix: another NVIDIA-only flag
    run = run_fix([root], RULEBOOK, specs, unsafe=True)
    (outcome,) = run.files
    assert not outcome.changed and outcome.applied == ()
    assert outcome.rolled_back.startswith("the fix would add RA704")
    assert (root / "run.sh").read_text() == "docker run --gpus all rocm/pytorch\n"


def test_functions_built_on_hopper_features_are_not_patched_the_rest_of_the_file_is(tmp_path, capsys):
    root = write_tree(tmp_path / "repo", {"kernels.cu": (
        "#include <cuda_fp8.h>\n"
        "__device__ float f(float v) { return __shfl_xor_sync(0xffffffff, v, 1); }\n"
        "__device__ float g(float v) {\n  __nv_fp8_e4m3 q = __nv_fp8_e4m3(v);\n"
        "  return __shfl_xor_sync(0xffffffff, float(q), 2);\n}\n")})
    main(["fix", str(root), "--no-progress", "--fail-on", "never"])
    fixed = (root / "kernels.cu").read_text()
    assert "return __shfl_xor_sync(ROCM_AUDIT_FULL_MASK, v, 1); }" in fixed      # cuda_fp8.h refuses nothing
    assert "return __shfl_xor_sync(0xffffffff, float(q), 2);" in fixed
    out = capsys.readouterr().out
    assert re.search(r"kernels.cu:5: RA200 the function uses Hopper/Blackwell-only features, RA\d+ at line 4: "
                     r"ported by rewriting", out)


def test_no_guessed_rocm_build_for_an_unknown_torch(tmp_path, capsys):
    text = "torch==2.16.0.dev20261009+cu134\ntorchvision==0.22.1+cu128\n"
    root = write_tree(tmp_path / "repo", {"requirements.txt": text})
    main(["fix", str(root), "--unsafe", "--no-progress", "--fail-on", "never"])
    assert (root / "requirements.txt").read_text() == text
    # the variant would keep the unknown torch's +cu134: not made (torchvision alone would mix builds)
    assert not (root / "requirements-rocm.txt").exists()
    assert "requirements.txt:1: RA150 no known ROCm build of the pinned torch version" in capsys.readouterr().out
