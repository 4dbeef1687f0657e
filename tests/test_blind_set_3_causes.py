"""The general causes behind the third blind set's misses (issue 25), each on a small tree built from what a real
project does: a CUDA-only extension the shipped Python imports only where a failed import is tolerated is an
optional feature of a ROCm install (AutoGPTQ's Marlin kernels)."""
import pytest

from tests.conftest import write_tree

SETUP = (
    "import os\n"
    "from setuptools import setup\n"
    "from torch.utils import cpp_extension\n"
    "import torch\n"
    "ROCM_VERSION = os.environ.get('ROCM_VERSION', None)\n"
    "if ROCM_VERSION and not torch.version.hip:\n"
    "    raise SystemExit('ROCm build needs a ROCm torch')\n"
    "version = '0.1'\n"
    "if ROCM_VERSION:\n"
    "    version += f'+rocm{ROCM_VERSION}'\n"
    "extensions = [cpp_extension.CUDAExtension('q_cuda', ['ext/q.cpp', 'ext/q_kernel.cu'])]\n"
    "if not ROCM_VERSION:\n"
    "    extensions.append(cpp_extension.CUDAExtension('mar_cuda', ['ext/mar/mar.cpp', 'ext/mar/mar_kernel.cu']))\n"
    "setup(name='q', version=version, packages=['q'], ext_modules=extensions, cmdclass={'build_ext': cpp_extension.BuildExtension})\n"
)
PTX_KERNEL = ("__device__ inline int lop3(int a, int b, int c) {\n"
              "  int res;\n"
              "  asm volatile(\"lop3.b32 %0, %1, %2, %3, 0x96;\\n\" : \"=r\"(res) : \"r\"(a), \"r\"(b), \"r\"(c));\n"
              "  return res;\n"
              "}\n"
              "__global__ void k(int* x) { x[threadIdx.x] = lop3(x[0], x[1], x[2]); }\n")
TOLERANT = ("try:\n"
            "    import mar_cuda\n"
            "except ImportError:\n"
            "    mar_cuda = None\n")
AVAILABLE = ("from q.flags import MAR_AVAILABLE\n"
             "if MAR_AVAILABLE:\n"
             "    import mar_cuda\n")


def _tree(tmp_path, importers: dict[str, str]):
    return write_tree(tmp_path / "q", {
        "setup.py": SETUP,
        "q/__init__.py": "",
        "q/flags.py": "try:\n    import mar_cuda  # noqa\n    MAR_AVAILABLE = True\nexcept Exception:\n"
                      "    MAR_AVAILABLE = False\n",
        **importers,
        "ext/q.cpp": "#include <torch/extension.h>\n",
        "ext/q_kernel.cu": "__global__ void add(float* x) { x[threadIdx.x] += 1.f; }\n",
        "ext/mar/mar.cpp": "#include <torch/extension.h>\n",
        "ext/mar/mar_kernel.cu": PTX_KERNEL,
        "tests/test_mar.py": "import mar_cuda\n",   # tests are not shipped: an unguarded import there counts not
    })


@pytest.mark.parametrize("importers", [
    {"q/marlin.py": TOLERANT},
    {"q/marlin.py": TOLERANT, "q/repack.py": AVAILABLE},
], ids=["try-except", "availability-flag"])
def test_a_cuda_only_extension_imported_only_where_failure_is_tolerated_is_an_optional_feature(
        tmp_path, run_json, importers):
    _, data = run_json(_tree(tmp_path, importers), "--no-cache")
    ptx = next(f for f in data["findings"] if f["path"] == "ext/mar/mar_kernel.cu" and f["rule"] == "RA300")
    assert ptx["disposition"] == "optional feature"
    assert "runs without `mar_cuda`: its imports tolerate a failure (q/" in ptx["disposition_note"]
    assert data["summary"]["verdict"] == "ready"


def test_a_cuda_only_extension_the_package_imports_unconditionally_stays_port_work(tmp_path, run_json):
    _, data = run_json(_tree(tmp_path, {"q/marlin.py": TOLERANT, "q/ops.py": "import mar_cuda\n"}), "--no-cache")
    ptx = next(f for f in data["findings"] if f["path"] == "ext/mar/mar_kernel.cu" and f["rule"] == "RA300")
    assert ptx["disposition"] == "live"
    assert data["summary"]["verdict"] != "ready"


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
    """torch-harmonics: `#define X_SUPPORTED 0` in the #else of a test of the sm100/sm103 feature macros (which
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


SPARSE_SETUP = (
    "import glob, os, os.path as osp\n"
    "from itertools import product\n"
    "import torch\n"
    "from setuptools import setup\n"
    "from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CppExtension, CUDAExtension\n"
    "WITH_CUDA = torch.cuda.is_available() and (CUDA_HOME is not None or torch.version.hip)\n"
    "suffices = ['cpu', 'cuda'] if WITH_CUDA else ['cpu']\n"
    "def get_extensions():\n"
    "    extensions = []\n"
    "    extensions_dir = osp.join('csrc')\n"
    "    for main, suffix in product(glob.glob(osp.join(extensions_dir, '*.cpp')), suffices):\n"
    "        name = main.split(os.sep)[-1][:-4]\n"
    "        sources, define_macros = [main], []\n"
    "        if suffix == 'cuda':\n"
    "            define_macros += [('WITH_CUDA', None)]\n"
    "            if torch.version.hip:\n"
    "                define_macros += [('USE_ROCM', None)]\n"
    "        path = osp.join(extensions_dir, 'cuda', f'{name}_cuda.cu')\n"
    "        if suffix == 'cuda' and osp.exists(path):\n"
    "            sources += [path]\n"
    "        Extension = CppExtension if suffix == 'cpu' else CUDAExtension\n"
    "        extensions += [Extension(f'sp._{name}_{suffix}', sources, define_macros=define_macros)]\n"
    "    return extensions\n"
    "setup(name='sp', packages=['sp'], ext_modules=get_extensions(), cmdclass={'build_ext': BuildExtension})\n"
)
SPMM = ("#include \"utils.cuh\"\n"
        "__global__ void spmm(const int* rowptr, float* out) {\n"
        "  int thread_idx = blockDim.x * blockIdx.x + threadIdx.x;\n"
        "  int row = thread_idx >> 5;\n"                                    # line 4
        "  float v = SHFL_SYNC(FULL_MASK, (float)rowptr[row], 0);\n"
        "  out[row] = v;\n"
        "}\n")
UTILS = ("#pragma once\n#define FULL_MASK 0xffffffff\n#ifdef USE_ROCM\n"
         "#define SHFL_SYNC(mask, var, delta) __shfl(var, delta)\n#else\n#define SHFL_SYNC __shfl_sync\n#endif\n")


def test_a_per_suffix_loop_and_joined_source_paths_put_the_kernel_in_the_rocm_build(tmp_path, run_json):
    """pytorch_sparse: `for main, suffix in product(files, suffices)` then `if suffix == 'cuda':` is one
    variant of a loop (the 'cuda' variant is the GPU build on ROCm too, which adds USE_ROCM), and the kernel comes
    from `osp.join(extensions_dir, 'cuda', f'{name}_cuda.cu')`. Its 32-lane rows, shuffled through the project's
    SHFL_SYNC macro, are in code the ROCm build compiles: to verify on a 64-lane GPU, not a CUDA-only file."""
    root = write_tree(tmp_path / "sp", {
        "setup.py": SPARSE_SETUP, "sp/__init__.py": "",
        "csrc/spmm.cpp": "#include <torch/extension.h>\n", "csrc/cuda/spmm_cuda.cu": SPMM,
        "csrc/cuda/utils.cuh": UTILS,
    })
    _, data = run_json(root, "--no-cache")
    lanes = next(f for f in data["findings"] if f["rule"] == "RA203")
    assert (lanes["path"], lanes["line"]) == ("csrc/cuda/spmm_cuda.cu", 4)
    assert lanes["disposition"] == "verify on hardware", lanes["disposition_note"]


def test_setup_flags_behind_an_environment_opt_in_that_is_off_by_default_are_an_optional_feature(tmp_path, run_json):
    """torch-harmonics: `profile_mode = os.environ.get("X_PROFILE", "0") == "1"`, then `if profile_mode:` adds
    `-Xptxas=-v`: a default install never runs it; the same flag outside the opt-in stays live."""
    setup = ("import os\n"
             "from setuptools import setup\n"
             "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
             "profile_mode = os.environ.get('H_PROFILE', '0') == '1'\n"
             "nvcc = ['-O3']\n"
             "if profile_mode:\n"
             "    nvcc.append('-Xptxas=-v')\n"                                   # line 7: opt-in
             "always = os.environ.get('H_FAST', '1') == '1'\n"
             "if always:\n"
             "    nvcc.append('-Xptxas=-O3')\n"                                  # line 10: on by default
             "setup(name='h', packages=['h'], ext_modules=[CUDAExtension('h._C', ['k.cu'],\n"
             "      extra_compile_args={'nvcc': nvcc})], cmdclass={'build_ext': BuildExtension})\n")
    root = write_tree(tmp_path / "h", {"setup.py": setup, "h/__init__.py": "", "k.cu": "__global__ void k() {}\n"})
    _, data = run_json(root, "--no-cache")
    flags = {f["line"]: f["disposition"] for f in data["findings"] if f["rule"] == "RA651"}
    assert flags == {7: "optional feature", 10: "live"}
