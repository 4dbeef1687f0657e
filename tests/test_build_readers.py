"""The Python build reader on builds shaped like real ones nobody tuned for: which configuration
compiles each source when the switch is held in a variable, and what that does to the verdict."""
import json

from auditor.cli.app import main
from auditor.model.rocmpath.pybuild import read_python_build
from tests.conftest import write_tree

# torchao's setup.py, reduced: the switches are variables, the extension class is chosen by one, the CUDA sources
# are globbed beside the C++ ones and added only when `use_cuda`, and a flag set only under `use_cuda` gates more
TORCHAO_LIKE_SETUP = """\
import glob
import os

import torch
from setuptools import setup
from torch.utils.cpp_extension import CUDA_HOME, ROCM_HOME, BuildExtension, CppExtension, CUDAExtension


def get_extensions():
    use_cuda = torch.version.cuda and CUDA_HOME is not None
    use_rocm = torch.version.hip and ROCM_HOME is not None
    extension = CUDAExtension if (use_cuda or use_rocm) else CppExtension
    extensions_dir = os.path.join("pkg", "csrc")
    sources = list(glob.glob(os.path.join(extensions_dir, "**/*.cpp"), recursive=True))
    cuda_sources = list(glob.glob(os.path.join(extensions_dir, "cuda", "**/*.cu"), recursive=True))
    if use_cuda:
        sources += cuda_sources
    use_cutlass = False
    if use_cuda:
        use_cutlass = True
    if use_cutlass:
        sm90_sources = [os.path.join(extensions_dir, "cuda", "sm90", "gemm_sm90.cu")]
        sources = [s for s in sources if s not in sm90_sources]
    ext_modules = [extension("pkg._C", sources)]
    if use_cutlass:
        ext_modules.append(extension("pkg._C_sm90", sm90_sources))
    return ext_modules


setup(name="pkg", ext_modules=get_extensions(), cmdclass={"build_ext": BuildExtension})
"""

TMA_KERNEL = """\
#include <cuda.h>
#include <cute/tensor.hpp>

void make_map(CUtensorMap* map, void* base) {
  cuTensorMapEncodeTiled(map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, base, nullptr, nullptr, nullptr, nullptr,
                         CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                         CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}
"""

CPU_OP = """\
#include <torch/extension.h>

at::Tensor pack(const at::Tensor& x) { return x.contiguous(); }
"""


def _torchao_like(root, setup_text=TORCHAO_LIKE_SETUP):
    return write_tree(root, {
        "setup.py": setup_text,
        "pkg/__init__.py": "",
        "pkg/csrc/cpu/pack.cpp": CPU_OP,
        "pkg/csrc/cuda/tma/tma_map.cu": TMA_KERNEL,
        "pkg/csrc/cuda/sm90/gemm_sm90.cu": TMA_KERNEL,
    })


def _report(tmp_path, repo) -> dict:
    target = tmp_path / "r.json"
    main([str(repo), "--format", "json", "-o", str(target), "--fail-on", "never", "--no-progress", "--no-cache"])
    return json.loads(target.read_text())


def test_cuda_sources_added_only_under_a_cuda_flag_variable_are_the_cuda_alternative(tmp_path):
    report = _report(tmp_path, _torchao_like(tmp_path / "repo"))
    summary = report["summary"]
    assert summary["verdict"] != "blocked", summary["verdict_reason"]
    assert "setup.py:12 switches to a ROCm build (`CUDAExtension if use_cuda or use_rocm` at setup.py:12)" \
        in summary["verdict_reason"]
    kernels = [f for f in report["findings"] if f["path"].startswith("pkg/csrc/cuda/") and not f["guarded"]]
    assert {f["path"] for f in kernels} == {"pkg/csrc/cuda/tma/tma_map.cu", "pkg/csrc/cuda/sm90/gemm_sm90.cu"}
    assert {f["disposition"] for f in kernels} == {"cuda-only source, ROCm builds an alternative"}
    path = report["components"][0]["rocm_path"]
    assert path["artifacts"]["rocm"] == ["pkg._C"]
    assert path["artifacts"]["cuda_only"] == ["pkg._C_sm90"]     # built only under the CUDA-only flag


def test_cuda_sources_the_rocm_build_also_compiles_still_block(tmp_path):
    """The same tree with the CUDA sources added unconditionally: ROCm PyTorch would hipify the TMA kernel."""
    setup_text = TORCHAO_LIKE_SETUP.replace("    if use_cuda:\n        sources += cuda_sources\n",
                                            "    sources += cuda_sources\n")
    report = _report(tmp_path, _torchao_like(tmp_path / "repo", setup_text))
    assert report["summary"]["verdict"] == "blocked", report["summary"]["verdict_reason"]
    live = {f["path"] for f in report["findings"] if f["disposition"] == "live" and f["severity"] == "critical"}
    assert "pkg/csrc/cuda/tma/tma_map.cu" in live


def test_which_variables_are_false_on_rocm():
    build = read_python_build("setup.py", TORCHAO_LIKE_SETUP)
    assert build.sources["**/*.cu"] == {"cuda"}               # added by `sources += cuda_sources` under use_cuda
    assert build.sources["**/*.cpp"] == {"both"}
    assert build.sources["cuda/sm90/gemm_sm90.cu"] == {"cuda"}  # listed under use_cutlass, set only under use_cuda
    assert build.artifacts == {"pkg._C": {"both"}, "pkg._C_sm90": {"cuda"}}


def test_a_project_s_own_cuda_home_with_a_default_path_is_not_none_on_rocm():
    """`CUDA_HOME = os.environ.get("CUDA_HOME", "/usr/local/cuda")` is a path on any machine; only torch's
    CUDA_HOME (imported from torch.utils.cpp_extension) is None where no CUDA toolkit is installed."""
    own = ("import os\nfrom setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension\n"
           "CUDA_HOME = os.environ.get('CUDA_HOME', '/usr/local/cuda')\nsources = ['csrc/ops.cpp']\n"
           "if CUDA_HOME:\n    sources += ['csrc/kernel.cu']\n"
           "setup(name='x', ext_modules=[CUDAExtension('x._C', sources)])\n")
    assert read_python_build("setup.py", own).sources["csrc/kernel.cu"] == {"both"}
    torch_s = own.replace("import CUDAExtension\nCUDA_HOME = os.environ.get('CUDA_HOME', '/usr/local/cuda')\n",
                          "import CUDA_HOME, CUDAExtension\n")
    assert read_python_build("setup.py", torch_s).sources["csrc/kernel.cu"] == {"cuda"}


def test_a_flag_that_is_only_ever_false_is_no_cuda_switch():
    """`DEBUG = False` with no assignment in a CUDA branch says nothing about the configuration."""
    text = ("from setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension\n"
            "DEBUG = False\nsources = ['csrc/ops.cpp']\nif DEBUG:\n    sources += ['csrc/debug.cu']\n"
            "setup(name='x', ext_modules=[CUDAExtension('x._C', sources)])\n")
    assert read_python_build("setup.py", text).sources["csrc/debug.cu"] == {"both"}


def test_a_build_that_refuses_without_torch_s_cuda_home_refuses_on_rocm_and_the_rest_is_still_port_work():
    text = ("from setuptools import setup\nfrom torch.utils.cpp_extension import CUDA_HOME, CUDAExtension\n"
            "if CUDA_HOME is None:\n    raise RuntimeError('set CUDA_HOME')\n"
            "NVCC_FLAGS = ['-gencode', 'arch=compute_90a,code=sm_90a']\n"
            "setup(name='x', ext_modules=[CUDAExtension('x._C', ['csrc/k.cu'])])\n")
    build = read_python_build("setup.py", text)
    assert build.refusals == [3]
    assert 5 not in build.cuda_lines       # past the refusal: what a port makes the ROCm build run


def test_a_cuda_test_whose_skipped_branch_leaves_a_name_unbound_on_rocm_is_not_a_cuda_only_line():
    """fast-hadamard-transform: `if CUDA_HOME is not None: _, bare_metal_version = …` then
    `if bare_metal_version >= …`: on ROCm the version is unbound, so the test line is port work."""
    text = ("from setuptools import setup\nfrom torch.utils.cpp_extension import CUDA_HOME, CUDAExtension\n"
            "flags = []\nif CUDA_HOME is not None:\n    bare_metal_version = (12, 4)\n"
            "if bare_metal_version >= (11, 8):\n    flags.append('-DSM90')\n"
            "if CUDA_HOME is not None:\n    print(CUDA_HOME)\n"
            "setup(name='x', ext_modules=[CUDAExtension('x._C', ['csrc/k.cu'])])\n")
    build = read_python_build("setup.py", text)
    assert 4 not in build.cuda_lines and 5 in build.cuda_lines
    assert {8, 9} <= build.cuda_lines           # nothing after reads what the second one binds


def test_release_packaging_scripts_are_ops_not_the_main_path(tmp_path):
    """torchao's packaging/env_var_script_linux.sh sets TORCH_CUDA_ARCH_LIST for its release wheels."""
    repo = _torchao_like(tmp_path / "repo")
    write_tree(repo, {"packaging/env_var_script_linux.sh": '#!/bin/bash\nexport TORCH_CUDA_ARCH_LIST="8.0;8.6"\n'})
    report = _report(tmp_path, repo)
    rows = [f for f in report["findings"] if f["path"] == "packaging/env_var_script_linux.sh"]
    assert rows and {f["disposition"] for f in rows} == {"ops"}


def test_a_cuda_test_that_drops_the_extension_on_rocm_stays_reported_at_the_test(tmp_path):
    repo = write_tree(tmp_path / "repo", {
        "setup.py": ("from setuptools import setup\nfrom torch.utils.cpp_extension import CUDA_HOME, CUDAExtension\n"
                     "ext_modules = []\nif CUDA_HOME is not None:\n"
                     "    ext_modules.append(CUDAExtension('ops._C', ['csrc/ops.cu'],\n"
                     "                                     extra_compile_args={'nvcc': ['--use_fast_math']}))\n"
                     "setup(name='ops', ext_modules=ext_modules)\n"),
        "csrc/ops.cu": "__global__ void k(float* x) { x[threadIdx.x] = 0.f; }\n",
    })
    rows = {(f["path"], f["line"], f["rule"]): f for f in _report(tmp_path, repo)["findings"]}
    assert rows[("setup.py", 4, "RA653")]["disposition"] == "live"     # ROCm silently builds no extension
    # the flag of the branch ROCm never enters: that branch is the only GPU build, which the port opens to ROCm
    # so it is listed, as a note of the CUDA branch, not hidden as guarded
    flag = rows[("setup.py", 6, "RA651")]
    assert (flag["guarded"], flag["disposition"]) == (False, "CUDA branch of a build script")


def test_a_cuda_test_guarding_an_early_return_decides_what_rocm_runs_next():
    """apex: `if CUDA_HOME is not None: return` then `raise`: on ROCm the raise runs, so the test is no CUDA line."""
    text = ("from torch.utils.cpp_extension import CUDA_HOME\n\n\ndef raise_if_cuda_home_none(option):\n"
            "    if CUDA_HOME is not None:\n        return\n    raise RuntimeError(option)\n")
    build = read_python_build("setup.py", text)
    assert 5 not in build.cuda_lines and 6 in build.cuda_lines


def test_an_extension_class_chosen_by_a_cuda_test_selects_no_rocm_build_when_rocm_takes_the_cpu_class():
    # on ROCm `CUDA_HOME` is None, so `device` is "cpu" and the CppExtension arm is taken: a CPU fallback, not a ROCm build
    text = (
        "import torch\n"
        "from setuptools import setup\n"
        "from torch.utils.cpp_extension import CUDA_HOME, CppExtension, CUDAExtension\n"
        "if torch.cuda.is_available() and CUDA_HOME is not None:\n"
        "    device = 'cuda'\n"
        "else:\n"
        "    device = 'cpu'\n"
        "extension_type = CUDAExtension if device == 'cuda' else CppExtension\n"
        "setup(name='pkg', ext_modules=[extension_type('pkg._C', ['pkg/backend/op_cuda.cu'])])\n"
    )
    build = read_python_build("setup.py", text)
    assert build is not None and 8 not in build.rocm_tests
    chosen_for_rocm = text.replace("else CppExtension", "else CUDAExtension").replace(
        "CUDAExtension if device == 'cuda'", "CppExtension if device == 'cuda'")
    build = read_python_build("setup.py", chosen_for_rocm)
    assert build is not None and 8 in build.rocm_tests


def test_a_project_flag_on_the_command_line_is_absent_from_the_default_install():
    # `pip install .` runs the script with the installer's own commands: a project's flag there is an opt-in
    text = (
        "import sys\n"
        "from setuptools import setup\n"
        "from torch.utils.cpp_extension import CUDAExtension\n"
        "ext_modules = []\n"
        "if '--with-kernels' in sys.argv:\n"
        "    ext_modules.append(CUDAExtension('pkg._k', ['csrc/k.cu']))\n"
        "for i, arg in enumerate(sys.argv[1:]):\n"
        "    if arg == '--fast-math':\n"
        "        ext_modules.append(CUDAExtension('pkg._f', ['csrc/f.cu']))\n"
        "    if arg == 'develop':\n"
        "        ext_modules.append(CUDAExtension('pkg._d', ['csrc/d.cu']))\n"
        "setup(name='pkg', ext_modules=ext_modules)\n"
    )
    build = read_python_build("setup.py", text)
    assert build is not None
    assert build.artifacts == {"pkg._k": {"cuda"}, "pkg._f": {"cuda"}, "pkg._d": {"both"}}
    assert {6, 9} <= build.opt_in_lines and 11 not in build.opt_in_lines
