"""Builds the default ROCm install skips (auditor/model/rocmpath/optionalbuilds.py, includedby.py): an extension built
only on a branch false on ROCm (`"CUDA_HOME" in os.environ`: unset where no CUDA toolkit is) whose every import
falls back, an extension built from an optional directory's sources, and a kernel only a nested distribution's
sources include are optional; `torch` in the build requirements of a build that compiles no GPU source then
decides nothing. The same extension imported without a fallback is required, and its kernel is work."""
from tests.conftest import write_tree

KERNEL = (
    "__global__ void reduce(float* x) {\n"
    "  float v = x[threadIdx.x];\n"
    "  v += __shfl_xor_sync(0xffffffff, v, 16);\n"    # 3
    "  x[threadIdx.x] = v;\n"
    "}\n"
)
SETUP = (
    "import os\n"
    "from setuptools import setup\n"
    "from torch.utils import cpp_extension\n"
    "extensions = [cpp_extension.CppExtension('seqkit.libcpu', ['seqkit/clib/cpu.cpp'])]\n"
    "if 'CUDA_HOME' in os.environ:\n"
    "    extensions.append(cpp_extension.CppExtension('seqkit.libgpu', ['seqkit/clib/gpu.cu']))\n"
    "setup(name='seqkit', ext_modules=extensions, cmdclass={'build_ext': cpp_extension.BuildExtension})\n"
)
PYPROJECT = "[build-system]\nrequires = ['setuptools', 'torch']\nbuild-backend = 'setuptools.build_meta'\n"
FALLBACK = "try:\n    from seqkit import libgpu\nexcept ImportError:\n    libgpu = None\n"


def _at(data: dict, path: str, line: int) -> set[str]:
    return {f["disposition"] for f in data["findings"] if f["path"] == path and f["line"] == line}


def _tree(tmp_path, imports: str, **more: str):
    return write_tree(tmp_path / "r", {"setup.py": SETUP, "pyproject.toml": PYPROJECT,
                                       "seqkit/__init__.py": imports, "seqkit/clib/cpu.cpp": "int f() { return 1; }\n",
                                       "seqkit/clib/gpu.cu": KERNEL, **more})


def test_an_extension_built_only_where_cuda_home_is_set_with_a_fallback_import_is_optional(tmp_path, run_json):
    _, data = run_json(_tree(tmp_path, FALLBACK), "--no-cache", "--fail-on", "never")
    assert _at(data, "seqkit/clib/gpu.cu", 3) == {"optional feature"}
    assert _at(data, "pyproject.toml", 2) == {"optional feature"}    # torch in build requires: no GPU build
    assert data["summary"]["verdict"] == "ready"


def test_the_same_extension_imported_without_a_fallback_is_required(tmp_path, run_json):
    _, data = run_json(_tree(tmp_path, "from seqkit import libgpu\n"), "--no-cache", "--fail-on", "never")
    assert _at(data, "seqkit/clib/gpu.cu", 3) == {"live"}
    assert data["summary"]["verdict"] != "ready"


def test_a_kernel_only_a_nested_distribution_includes_is_as_optional_as_it(tmp_path, run_json):
    nested = ("from setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension, BuildExtension\n"
              "setup(name='conv_ext', ext_modules=[CUDAExtension('conv_ext', ['conv_kernel.cu'])],\n"
              "      cmdclass={'build_ext': BuildExtension})\n")
    root = _tree(tmp_path, FALLBACK, **{
        "seqkit/modules/common.cu": KERNEL, "seqkit/modules/conv_layer/setup.py": nested,
        "seqkit/modules/conv_layer/conv_kernel.cu": '#include "../common.cu"\n'})
    _, data = run_json(root, "--no-cache", "--fail-on", "never")
    assert _at(data, "seqkit/modules/common.cu", 3) == {"optional"}
    assert data["summary"]["verdict"] == "ready"


def test_torch_in_the_build_requirements_of_a_gpu_build_is_work(tmp_path, run_json):
    setup = SETUP.replace("if 'CUDA_HOME' in os.environ:\n    ", "")
    root = _tree(tmp_path, "from seqkit import libgpu\n", **{"setup.py": setup})
    _, data = run_json(root, "--no-cache", "--fail-on", "never")
    assert _at(data, "pyproject.toml", 2) == {"live"}
