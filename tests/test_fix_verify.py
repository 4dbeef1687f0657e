"""`fix --verify`: every touched .cu compiled with nvcc before and after; its PTX is byte-identical (the fix
changes nothing on the CUDA build) or the file is rolled back; the compilers used are named."""
from __future__ import annotations

import shutil

import pytest

import auditor.fix.cuda_fixes as cuda_fixes
from auditor.cli import main
from auditor.fix.compilers import NVCC_FLAGS, _comparable, _compile, find_compilers
from tests.conftest import FIXTURES, write_tree

NVCC = shutil.which("nvcc")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc is not installed here: the CUDA output is not compared")
KERNEL = ("#include <cuda_runtime.h>\n__global__ void k(float* out) {\n  float v = out[threadIdx.x];\n"
          "  v += __shfl_xor_sync(0xffffffff, v, 1);\n  out[threadIdx.x] = v;\n}\n")


@needs_nvcc
def test_touched_fixture_cu_has_byte_identical_ptx(tmp_path, capsys):
    root = tmp_path / "torch_extension"
    shutil.copytree(FIXTURES / "torch_extension", root)
    source = root / "csrc/topk_gating.cu"
    old = source.read_text()
    main(["fix", str(root), "--no-progress", "--fail-on", "never"])
    new = source.read_text()
    assert new != old and "ROCM_AUDIT_FULL_MASK" in new
    nvcc, _ = find_compilers()
    assert nvcc is not None
    before, after = (_compile(nvcc, NVCC_FLAGS, source, root, text, ptx=True) for text in (old, new))
    assert before.output is not None, before.error
    assert _comparable(after.output) == _comparable(before.output)


@needs_nvcc
def test_verify_names_the_compilers_and_keeps_a_fix_with_identical_ptx(tmp_path, capsys, monkeypatch):
    real_which = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name: None if name == "hipcc" else real_which(name))
    root = write_tree(tmp_path / "repo", {"k.cu": KERNEL})
    main(["fix", str(root), "--verify", "--no-progress", "--fail-on", "never"])
    out = capsys.readouterr().out
    assert "k.cu: RA200 x1 (nvcc PTX identical)" in out
    assert "Verified with: nvcc (" in out and "no HIP compiler found" in out
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
    root = write_tree(tmp_path / "repo", {"k.cu": KERNEL})
    main(["fix", str(root), "--verify", "--no-progress", "--fail-on", "never"])
    assert "Verified with: no compiler; not found: nvcc, hipcc" in capsys.readouterr().out
