"""`fix --verify`: every touched .cu compiled with nvcc before and after; its PTX is byte-identical (the fix
changes nothing on the CUDA build) or the file is rolled back; the compilers used are named."""
from __future__ import annotations

import shutil

import pytest

import auditor.fix.compilers as compilers
import auditor.fix.cuda_fixes as cuda_fixes
from auditor.cli.app import main
from auditor.fix.compilers import NVCC_FLAGS, Compiler, _comparable, _compile, find_compilers
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
    before, after = (_compile(nvcc, NVCC_FLAGS, source, root, text, ptx=True) for text in (REDUCE_KERNEL, new))
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
    assert "Verified with: nvcc (" in out and "hipcc not found; no HIP device check: no HIP headers found" in out
    assert "ROCM_AUDIT_FULL_MASK" in (root / "k.cu").read_text()


@needs_nvcc
def test_verify_rolls_back_a_fix_that_changes_the_cuda_code(tmp_path, capsys, monkeypatch):
    wrong = cuda_fixes.FULL_MASK_DEFINITION.replace("0xffffffffu", "0x0000ffffu")   # a fix that breaks CUDA
    monkeypatch.setattr(cuda_fixes, "FULL_MASK_DEFINITION", wrong)
    root = write_tree(tmp_path / "repo", {"k.cu": KERNEL})
    main(["fix", str(root), "--verify", "--no-progress", "--fail-on", "never"])
    assert (root / "k.cu").read_text() == KERNEL
    assert "k.cu: left unchanged: nvcc's PTX differs after the fix" in capsys.readouterr().out


def test_verify_without_compilers_says_so(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.setattr(compilers, "find_hip_device_check", lambda: (None, "no HIP headers found"))
    root = write_tree(tmp_path / "repo", {"k.cu": KERNEL})
    main(["fix", str(root), "--verify", "--no-progress", "--fail-on", "never"])
    assert ("Verified with: no compiler; nvcc not found (CUDA output not compared); hipcc not found; "
            "no HIP device check: no HIP headers found (the ROCm side is not compiled)") in capsys.readouterr().out


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
    wrong = cuda_fixes.FULL_MASK_DEFINITION.replace("__activemask()", "rocm_audit_no_such_mask")
    monkeypatch.setattr(cuda_fixes, "FULL_MASK_DEFINITION", wrong)
    monkeypatch.setattr(compilers, "find_compilers", lambda: (None, None))
    root = write_tree(tmp_path / "repo", {"k.cu": KERNEL})
    main(["fix", str(root), "--verify", "--no-progress", "--fail-on", "never"])
    assert (root / "k.cu").read_text() == KERNEL
    assert ("k.cu: left unchanged: the HIP device check finds a new error after the fix (use of undeclared "
            "identifier 'rocm_audit_no_such_mask')") in capsys.readouterr().out
