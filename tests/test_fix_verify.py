"""`fix --verify`: every touched .cu compiled with nvcc before and after; its PTX is byte-identical (the fix
changes nothing on the CUDA build) or the file is rolled back; the compilers used are named."""
from __future__ import annotations

import shutil
import subprocess

import pytest

import auditor.fix.compilers as compilers
import auditor.fix.definitions as definitions
from auditor.cli.app import main
from auditor.fix.compilers import NVCC_FLAGS, Compiler, _comparable, _compile_both, find_compilers
from auditor.fix.hipdevice import find_hip_device_check
from tests.conftest import write_tree
from tests.test_fix_command import REDUCE_KERNEL

pytestmark = pytest.mark.slow   # compilers: nvcc, hipcc, libclang

NVCC = shutil.which("nvcc")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc is not installed here: the CUDA output is not compared")
KERNEL = ("#include <cuda_runtime.h>\n__global__ void k(float* out) {\n  float v = out[threadIdx.x];\n"
          "  v += __shfl_xor_sync(0xffffffff, v, 1);\n  out[threadIdx.x] = v;\n}\n")


@needs_nvcc
def test_touched_cu_has_byte_identical_ptx(tmp_path, capsys):
    root = write_tree(tmp_path / "repo", {"csrc/reduce.cu": REDUCE_KERNEL})
    source = root / "csrc/reduce.cu"
    main(["fix", str(root), "--no-progress", "--fail-on", "never"])
    new = source.read_text()
    assert new != REDUCE_KERNEL and "ROCM_AUDIT_FULL_MASK" in new
    nvcc, _ = find_compilers()
    assert nvcc is not None
    before, after = _compile_both(nvcc, NVCC_FLAGS, source, root, REDUCE_KERNEL, new, ptx=True)
    assert before.output is not None, before.error
    assert _comparable(after.output) == _comparable(before.output)


@needs_nvcc
def test_verify_names_the_compilers_and_keeps_a_fix_with_identical_ptx(tmp_path, capsys, monkeypatch):
    real_which = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name: None if name == "hipcc" else real_which(name))
    monkeypatch.setattr(compilers, "find_hip_device_check", lambda: (None, "no HIP headers found"))
    root = write_tree(tmp_path / "repo", {"k.cu": KERNEL})
    main(["fix", str(root), "--verify", "--no-progress", "--fail-on", "never"])
    out = capsys.readouterr().out
    assert "k.cu: RA200 x1 (nvcc PTX identical)" in out
    assert "Checked edits: 0 by nvcc and the ROCm check, 1 by nvcc only, 0 by the ROCm check only, 0 by neither." \
        in out
    assert "Verified with: nvcc (" in out and "hipcc not found; no HIP device check: no HIP headers found" in out
    assert "ROCM_AUDIT_FULL_MASK" in (root / "k.cu").read_text()


@needs_nvcc
def test_verify_rolls_back_a_fix_that_changes_the_cuda_code(tmp_path, capsys, monkeypatch):
    wrong = definitions.FULL_MASK_DEFINITION.replace("0xffffffffu", "0x0000ffffu")   # a fix that breaks CUDA
    monkeypatch.setattr(definitions, "FULL_MASK_DEFINITION", wrong)
    root = write_tree(tmp_path / "repo", {"k.cu": KERNEL})
    main(["fix", str(root), "--verify", "--no-progress", "--fail-on", "never"])
    assert (root / "k.cu").read_text() == KERNEL
    assert "k.cu: left unchanged: nvcc's PTX differs after the fix" in capsys.readouterr().out


def test_verify_without_compilers_says_so_and_writes_nothing_unchecked(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.setattr(compilers, "find_hip_device_check", lambda: (None, "no HIP headers found"))
    root = write_tree(tmp_path / "repo", {"k.cu": KERNEL})
    main(["fix", str(root), "--verify", "--no-progress", "--fail-on", "never"])
    out = capsys.readouterr().out
    assert ("Verified with: no compiler; nvcc not found (CUDA output not compared); hipcc not found; "
            "no HIP device check: no HIP headers found (the ROCm side is not compiled)") in out
    assert "0 by the ROCm check only, 1 by neither (not written)." in out
    assert (root / "k.cu").read_text() == KERNEL
    main(["fix", str(root), "--verify", "--keep-unchecked", "--no-progress", "--fail-on", "never"])
    assert "1 by neither (written: --keep-unchecked)." in capsys.readouterr().out
    assert "ROCM_AUDIT_FULL_MASK" in (root / "k.cu").read_text()


STATIC_HELPER = ("#include <cuda_runtime.h>\nstatic __device__ float pair(float v) {\n"
                 "  return v + __shfl_xor_sync(0xffffffff, v, 1);\n}\nstatic __device__ int counter;\n"
                 "__global__ void k(float* out) {\n  atomicAdd(&counter, 1);\n"
                 "  out[threadIdx.x] = pair(out[threadIdx.x]);\n}\n")


TEMPLATE_KERNELS_ONLY = ("#include <cuda_runtime.h>\nnamespace ops {\nstatic __device__ int counter;\n}\n"
                         "template <typename T>\n__global__ void k(T* out) {\n  atomicAdd(&ops::counter, 1);\n"
                         "  T v = out[threadIdx.x];\n  v += __shfl_xor_sync(0xffffffff, v, 1);\n"
                         "  out[threadIdx.x] = v;\n}\ntemplate __global__ void k<float>(float*);\n")


@needs_nvcc
@pytest.mark.parametrize("kernel", [STATIC_HELPER, TEMPLATE_KERNELS_ONLY], ids=["directory-hash", "process-id"])
def test_verify_keeps_a_right_fix_in_a_file_with_internal_linkage_names(tmp_path, capsys, monkeypatch, kernel):
    """nvcc 13 names `static` symbols _INTERNAL_<hash of the compile directory and file>_...: before and after are
    compiled in one directory, and the ids are normalised whole. In a unit that defines no external non-template
    function (its kernels are templates) each id also ends with nvcc's process id (`..._k_cu_<hash>_28651`), which
    differs between two compiles of the same text: the id is read to the length its mangled name gives it."""
    monkeypatch.setattr(compilers, "find_compilers", lambda: (find_compilers()[0], None))
    monkeypatch.setattr(compilers, "find_hip_device_check", lambda: (None, "no HIP headers found"))
    root = write_tree(tmp_path / "repo", {"k.cu": kernel})
    main(["fix", str(root), "--verify", "--keep-unchecked", "--no-progress", "--fail-on", "never"])
    assert "k.cu: RA200 x1 (nvcc PTX identical)" in capsys.readouterr().out
    assert "ROCM_AUDIT_FULL_MASK" in (root / "k.cu").read_text()


@pytest.mark.parametrize(("include", "why"), [
    ('#include "/dev/zero"\n', "includes an absolute path (/dev/zero)"),
    ('#include "../outside.h"\n', "includes ../outside.h, which resolves outside the scanned tree"),
    ("#define H <x.h>\n#include H\n", "has a computed include (H)"),
    ('#include "link/secret.h"\n', "includes link/secret.h, which resolves outside the scanned tree"),
])
def test_verify_compiles_nothing_that_reads_outside_the_tree(tmp_path, capsys, monkeypatch, include, why):
    ran = []
    monkeypatch.setattr(compilers, "_compile_both", lambda *a, **k: ran.append(a) or (None, None))
    monkeypatch.setattr(compilers, "find_compilers", lambda: (Compiler("nvcc", "/bin/false", "13"), None))
    monkeypatch.setattr(compilers, "find_hip_device_check", lambda: (None, "no HIP headers found"))
    (tmp_path / "outside.h").write_text("#pragma once\n")
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "secret.h").write_text("#pragma once\n")
    root = write_tree(tmp_path / "repo", {"k.cu": include + KERNEL})
    (root / "link").symlink_to(tmp_path / "secret")
    main(["fix", str(root), "--verify", "--no-progress", "--fail-on", "never"])
    out = capsys.readouterr().out
    assert not ran
    assert f"k.cu: left unchanged: neither compiler could check it (--keep-unchecked writes it anyway): " \
           f"not compiled: k.cu {why}" in out


OLD_HIPCC = Compiler("hipcc", "/usr/bin/hipcc", "HIP version: 5.2.21153-0")   # Debian's: no *_sync functions
DEVICE, NO_DEVICE = find_hip_device_check()
needs_device_check = pytest.mark.skipif(DEVICE is None, reason=f"no libclang device check here: {NO_DEVICE}")


@needs_device_check
def test_hip_device_check_replaces_an_old_hipcc_and_sees_the_mask_fixed(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(compilers, "find_compilers", lambda: (None, OLD_HIPCC))
    root = write_tree(tmp_path / "repo", {"k.cu": KERNEL})
    main(["fix", str(root), "--verify", "--no-progress", "--fail-on", "never"])
    out = capsys.readouterr().out
    # before: HIP's __shfl_xor_sync static_asserts on the 32-bit mask; after: the 64-bit one compiles for gfx942
    assert "k.cu: RA200 x1 (HIP device check: 1 error(s) fewer (static assertion failed" in out
    assert "none left)" in out
    assert "libclang device check (gfx942, HIP " in out
    assert "not used: hipcc (HIP version: 5.2.21153-0) at /usr/bin/hipcc, older than HIP 6.2" in out
    assert "ROCM_AUDIT_FULL_MASK" in (root / "k.cu").read_text()


@needs_device_check
def test_hip_device_check_rolls_back_a_fix_that_breaks_the_hip_side(tmp_path, capsys, monkeypatch):
    wrong = definitions.FULL_MASK_DEFINITION.replace("__activemask()", "rocm_audit_no_such_mask")
    monkeypatch.setattr(definitions, "FULL_MASK_DEFINITION", wrong)
    monkeypatch.setattr(compilers, "find_compilers", lambda: (None, None))
    root = write_tree(tmp_path / "repo", {"k.cu": KERNEL})
    main(["fix", str(root), "--verify", "--no-progress", "--fail-on", "never"])
    assert (root / "k.cu").read_text() == KERNEL
    assert ("k.cu: left unchanged: the HIP device check finds a new error after the fix (use of undeclared "
            "identifier 'rocm_audit_no_such_mask')") in capsys.readouterr().out


ASSERTING = ("#include <cuda_runtime.h>\n#include <cassert>\n__global__ void k(float* out) {\n"
             "  float v = out[threadIdx.x];\n  v += __shfl_xor_sync(0xffffffff, v, 1);\n"
             "  assert(v == v);\n  out[threadIdx.x] = v;\n}\n")


@needs_nvcc
@pytest.mark.parametrize("output", ["-cubin", "-ptx"])
def test_inserted_definitions_keep_every_line_number_so_nvcc_output_is_identical(tmp_path, output):
    """A device assert carries __LINE__: the `#line` after the inserted block keeps it, so cubin and PTX are
    byte-identical before and after (compiled as the same file in the same directory)."""
    root = write_tree(tmp_path / "repo", {"k.cu": ASSERTING})
    main(["fix", str(root), "--no-progress", "--fail-on", "never"])
    fixed = (root / "k.cu").read_text()
    assert "ROCM_AUDIT_FULL_MASK" in fixed and "#line 3\n" in fixed
    built = []
    for text in (ASSERTING, fixed):   # in the tree, where the header of the fixer's definitions is
        (root / "k.cu").write_text(text)
        subprocess.run([NVCC, output, "-arch=sm_80", "k.cu", "-o", str(tmp_path / "out")], cwd=root, check=True,
                       capture_output=True, timeout=300)
        built.append((tmp_path / "out").read_bytes())
    assert built[0] == built[1]


WARP_HEADER = ("#pragma once\n#include <cuda_runtime.h>\n__device__ float warp_sum(float v) {\n"
               "  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);\n  return v;\n}\n")
UNIT = ('#include "ops/warp.cuh"\n'
        "__global__ void k(float* out) { out[threadIdx.x] = warp_sum(out[threadIdx.x]); }\n")


@needs_nvcc
def test_verify_compiles_a_header_through_a_unit_that_includes_it(tmp_path, capsys, monkeypatch):
    """The header's old and new text are compiled in place of the tree's through a .cu that includes it, with the
    fixer's header as the run would leave it (it is not written yet)."""
    monkeypatch.setattr(compilers, "find_compilers", lambda: (find_compilers()[0], None))
    monkeypatch.setattr(compilers, "find_hip_device_check", lambda: (None, "no HIP headers found"))
    root = write_tree(tmp_path / "repo", {"ops/warp.cuh": WARP_HEADER, "k.cu": UNIT})
    main(["fix", str(root), "--verify", "--no-progress", "--fail-on", "never"])
    out = capsys.readouterr().out
    assert "ops/warp.cuh: RA200 x1 (through k.cu: nvcc PTX identical)" in out
    assert "1 by nvcc only, 0 by the ROCm check only, 0 by neither." in out
    assert "ROCM_AUDIT_FULL_MASK, v, o)" in (root / "ops/warp.cuh").read_text()
    assert (root / "ops/rocm_audit_compat.h").is_file()


def test_verify_leaves_a_header_no_unit_includes_unchecked(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(compilers, "find_compilers", lambda: (Compiler("nvcc", "/bin/false", "13"), None))
    monkeypatch.setattr(compilers, "find_hip_device_check", lambda: (None, "no HIP headers found"))
    root = write_tree(tmp_path / "repo", {"ops/warp.cuh": WARP_HEADER})
    main(["fix", str(root), "--verify", "--no-progress", "--fail-on", "never"])
    out = capsys.readouterr().out
    assert "ops/warp.cuh: left unchanged: neither compiler could check it (--keep-unchecked writes it anyway): " \
           "a header no .cu of the tree includes directly: not compiled" in out
    assert (root / "ops/warp.cuh").read_text() == WARP_HEADER
    assert not (root / "ops/rocm_audit_compat.h").exists()   # no kept edit uses it: not made


@needs_device_check
def test_a_file_the_hip_check_cannot_parse_is_unchecked_not_verified(tmp_path, capsys, monkeypatch):
    """The same errors before and after (a header the check does not have) judge nothing: the edit counts as
    checked by neither and is not written."""
    monkeypatch.setattr(compilers, "find_compilers", lambda: (None, None))
    root = write_tree(tmp_path / "repo", {"k.cu": "#include <torch/extension.h>\n" + KERNEL})
    main(["fix", str(root), "--verify", "--no-progress", "--fail-on", "never"])
    out = capsys.readouterr().out
    assert "HIP device check could not judge it: the same 1 error(s) before and after ('torch/extension.h' file " \
           "not found)" in out
    assert "0 by the ROCm check only, 1 by neither (not written)." in out
    assert "ROCM_AUDIT_FULL_MASK" not in (root / "k.cu").read_text()


BUILD_FILES = {
    "cmake": ("CMakeLists.txt", ("project(p CUDA)\ninclude_directories(${CMAKE_CURRENT_SOURCE_DIR}/include)\n"
                                 "add_library(p src/k.cu)\n")),
    "setup.py": ("setup.py", ("import os\nfrom setuptools import setup\n"
                              "from torch.utils.cpp_extension import CUDAExtension\n"
                              "here = os.path.dirname(os.path.abspath(__file__))\n"
                              "setup(ext_modules=[CUDAExtension('p', ['src/k.cu'], "
                              "include_dirs=[os.path.join(here, 'include')])])\n")),
}


@needs_nvcc
@pytest.mark.parametrize("build", list(BUILD_FILES))
@pytest.mark.parametrize("breaks_cuda", [False, True], ids=["right", "changes-cuda"])
def test_verify_compiles_with_the_include_paths_the_build_files_name(tmp_path, capsys, monkeypatch, build,
                                                                     breaks_cuda):
    """A unit that finds its header only through the project's include path (`#include "warp.cuh"` from src/, the
    header in include/) is compiled with that path, the edited header read as the run leaves it: a right edit is
    checked, one that changes the CUDA code is rolled back."""
    monkeypatch.setattr(compilers, "find_compilers", lambda: (find_compilers()[0], None))
    monkeypatch.setattr(compilers, "find_hip_device_check", lambda: (None, "no HIP headers found"))
    if breaks_cuda:
        monkeypatch.setattr(definitions, "FULL_MASK_DEFINITION",
                            definitions.FULL_MASK_DEFINITION.replace("0xffffffffu", "0x0000ffffu"))
    name, text = BUILD_FILES[build]
    root = write_tree(tmp_path / "repo", {name: text, "include/warp.cuh": WARP_HEADER,
                                          "src/k.cu": UNIT.replace("ops/warp.cuh", "warp.cuh")})
    main(["fix", str(root), "--verify", "--no-progress", "--fail-on", "never"])
    out = capsys.readouterr().out
    header = (root / "include/warp.cuh").read_text()
    if breaks_cuda:
        assert "include/warp.cuh: left unchanged: nvcc's PTX differs after the fix" in out
        assert header == WARP_HEADER
    else:
        assert "include/warp.cuh: RA200 x1 (through src/k.cu: nvcc PTX identical)" in out
        assert "ROCM_AUDIT_FULL_MASK, v, o)" in header


@needs_nvcc
def test_verify_reads_the_new_header_in_a_parent_directory_as_the_run_will_write_it(tmp_path, capsys, monkeypatch):
    """Touched files in two directories share one new rocm_audit_compat.h above them (`#include
    "../rocm_audit_compat.h"`): the header is not on disk yet, and the include check takes it as the run will
    write it instead of refusing an include that leaves the file's directory."""
    monkeypatch.setattr(compilers, "find_compilers", lambda: (find_compilers()[0], None))
    monkeypatch.setattr(compilers, "find_hip_device_check", lambda: (None, "no HIP headers found"))
    root = write_tree(tmp_path / "repo", {"a/k.cu": KERNEL, "b/k.cu": KERNEL.replace("void k(", "void j(")})
    main(["fix", str(root), "--verify", "--no-progress", "--fail-on", "never"])
    out = capsys.readouterr().out
    assert "a/k.cu: RA200 x1 (nvcc PTX identical)" in out and "b/k.cu: RA200 x1 (nvcc PTX identical)" in out
    assert '#include "../rocm_audit_compat.h"' in (root / "a/k.cu").read_text()
    assert (root / "rocm_audit_compat.h").is_file()


MATH_KERNEL = ("#include <cuda_runtime.h>\n__global__ void k(float* out) {\n"
               "  float v = out[threadIdx.x];\n"
               + "".join(f"  v += {f}(v + {i}.f);\n" for i, f in enumerate(
                   ["expf", "logf", "sqrtf", "rsqrtf", "tanhf", "erff", "sinf", "cosf", "powf(v, 2.f) + fabsf",
                    "fmaxf(v, 0.f) + fminf", "__expf", "__logf", "exp2f", "log2f", "ceilf", "floorf", "roundf",
                    "truncf", "__fdividef(v, 3.f) + fmodf(v, 2.f) + cbrtf", "atanf", "asinf", "acosf", "expm1f",
                    "log1pf", "sinhf"]))
               + "  v += __shfl_xor_sync(0xffffffff, v, 1);\n"
               "  out[threadIdx.x] = v;\n}\n")


@needs_device_check
def test_hip_device_check_reads_math_calls_and_counts_every_error(tmp_path, capsys, monkeypatch):
    """A kernel with 25 math calls before its mask: with HIP's runtime wrapper the math calls are
    declared, and with no error limit the mask's static_assert is reached (without them clang stopped at 20
    errors about math calls and never saw the mask)."""
    monkeypatch.setattr(compilers, "find_compilers", lambda: (None, None))
    root = write_tree(tmp_path / "repo", {"k.cu": MATH_KERNEL})
    main(["fix", str(root), "--verify", "--no-progress", "--fail-on", "never"])
    out = capsys.readouterr().out
    assert "k.cu: RA200 x1 (HIP device check: 1 error(s) fewer (static assertion failed" in out
    assert "ROCM_AUDIT_FULL_MASK" in (root / "k.cu").read_text()


def test_the_device_check_says_whether_its_headers_have_the_half_types(tmp_path):
    """The 'Verified with' line names where the HIP headers come from and whether hip_fp16.h/hip_bf16.h are there
    (a ROCm install has them; the triton package's copy does not), so a file using half types is known unjudged."""
    from auditor.fix.hipdevice import HipDeviceCheck
    bare = tmp_path / "bare"
    (bare / "hip").mkdir(parents=True)
    full = tmp_path / "full"
    (full / "hip").mkdir(parents=True)
    for name in ("hip_fp16.h", "hip_bf16.h"):
        (full / "hip" / name).write_text("#pragma once\n")
    assert "no hip_fp16.h/hip_bf16.h there, so files using CUDA's half types are not judged" in \
        HipDeviceCheck(bare, (7, 1), tmp_path).describe()
    assert f"HIP 6.4 headers at {full}; hip_fp16.h, hip_bf16.h from there)" in \
        HipDeviceCheck(full, (6, 4), tmp_path).describe()


@needs_device_check
def test_the_device_check_reads_the_new_header_in_a_parent_directory(tmp_path, capsys, monkeypatch):
    """`#include "../rocm_audit_compat.h"` names a header the run has not written yet: the device check is handed it
    under that spelling, and sees the mask fixed instead of a missing file."""
    monkeypatch.setattr(compilers, "find_compilers", lambda: (None, None))
    root = write_tree(tmp_path / "repo", {"a/k.cu": KERNEL, "b/k.cu": KERNEL.replace("void k(", "void j(")})
    main(["fix", str(root), "--verify", "--no-progress", "--fail-on", "never"])
    out = capsys.readouterr().out
    assert "a/k.cu: RA200 x1 (HIP device check: 1 error(s) fewer (static assertion failed" in out
    assert "b/k.cu: RA200 x1 (HIP device check: 1 error(s) fewer" in out
