"""A switch defined from the CUDA architecture feature macros (`#define X 0` in the #else of a test of them) is
the value ROCm sees."""
from tests.conftest import write_tree

PTX_HEADER = ("#pragma once\n"
              "#if defined(__CUDA_ARCH_FEAT_SM100_ALL) || defined(__CUDA_ARCH_FEAT_SM103_ALL)\n"
              "#define K_TCGEN05_SUPPORTED 1\n"
              "#else\n"
              "#define K_TCGEN05_SUPPORTED 0\n"
              "#endif\n"
              "#if K_TCGEN05_SUPPORTED\n"
              "__device__ inline void tmem_alloc(unsigned dst) {\n"
              "  asm volatile(\"tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], 32;\" :: \"r\"(dst));\n"
              "}\n"
              "#endif\n")
SM100_KERNEL = ("#include \"ptx.cuh\"\n"
                "#if K_TCGEN05_SUPPORTED\n"
                "__global__ void k(unsigned* bar) {\n"
                "  asm volatile(\"mbarrier.init.shared::cta.b64 [%0], 1;\" :: \"r\"(bar[0]));\n"   # line 4
                "}\n"
                "#endif\n")


def test_a_switch_defined_from_arch_feature_macros_is_zero_on_rocm(tmp_path, run_json):
    """`#define X_SUPPORTED 0` in the #else of a test of the sm100/sm103 feature macros (which
    HIP-Clang never defines) is what the ROCm build sees, here and in the files that include it, so the
    tcgen05/mbarrier PTX behind `#if X_SUPPORTED` is the CUDA side, not a blocker."""
    root = write_tree(tmp_path / "h", {
        "setup.py": "from setuptools import setup\nfrom torch.utils.cpp_extension import BuildExtension, "
                    "CUDAExtension\nsetup(name='h', packages=['h'], ext_modules=[CUDAExtension('h._C', "
                    "['csrc/sm100.cu'])], cmdclass={'build_ext': BuildExtension})\n",
        "h/__init__.py": "",
        "csrc/ptx.cuh": PTX_HEADER,
        "csrc/sm100.cu": SM100_KERNEL,
    })
    _, data = run_json(root, "--no-cache")
    ptx = {(f["path"], f["line"]): f["disposition"] for f in data["findings"] if f["rule"] == "RA303"}
    assert ptx and set(ptx.values()) == {"guarded"}, ptx
    assert set(ptx) == {("csrc/sm100.cu", 4), ("csrc/ptx.cuh", 9)}
    assert data["summary"]["verdict"] != "blocked"

