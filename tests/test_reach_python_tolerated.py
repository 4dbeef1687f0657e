"""Tolerated failures (model/rocmpath/pytolerant.py, tolerated.py): an extension whose build the setup.py wraps in
try/except (the install goes on without it) and whose import falls back with a warning is optional: the package
installs and runs on ROCm without it. Either half alone is not: an unguarded import needs the extension, and a
build that is not tolerated fails the install."""
import pytest

from tests.conftest import write_tree

KERNEL = (
    "#include <cuda_runtime.h>\n"
    "__global__ void k(float* x) {\n"
    "  unsigned lane;\n"
    "  asm volatile(\"mov.u32 %0, %%laneid;\" : \"=r\"(lane));\n"     # line 4
    "  x[threadIdx.x] = lane;\n"
    "}\n"
)
EXTENSION = ("CUDAExtension('fastpkg._fused', ['csrc/fused.cu'], "
             "extra_compile_args={'nvcc': ['-O3']})")
TOLERATED_BUILD = (
    "import warnings\n"
    "from setuptools import setup\n"
    "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
    "ext_modules = []\n"
    "try:\n"
    f"    ext_modules.append({EXTENSION})\n"
    "except Exception as err:\n"
    "    warnings.warn(f'fused kernels not built: {err}')\n"
    "setup(name='fastpkg', packages=['fastpkg'], ext_modules=ext_modules, cmdclass={'build_ext': BuildExtension})\n"
)
REQUIRED_BUILD = (
    "from setuptools import setup\n"
    "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
    f"setup(name='fastpkg', packages=['fastpkg'], ext_modules=[{EXTENSION}], cmdclass={{'build_ext': BuildExtension}})\n"
)
FALLBACK_IMPORT = (
    "import warnings\n"
    "try:\n"
    "    from fastpkg import _fused\n"
    "except ImportError:\n"
    "    _fused = None\n"
    "    warnings.warn('fused kernels unavailable, using the PyTorch fallback')\n"
)
REQUIRED_IMPORT = "from fastpkg import _fused\n"


@pytest.mark.parametrize(("setup", "init", "disposition"), [
    (TOLERATED_BUILD, FALLBACK_IMPORT, "optional feature"),
    (TOLERATED_BUILD, REQUIRED_IMPORT, "live"),
    (REQUIRED_BUILD, FALLBACK_IMPORT, "live"),
])
def test_an_extension_is_optional_when_its_build_and_its_import_both_tolerate_failure(
        tmp_path, run_json, setup, init, disposition):
    root = write_tree(tmp_path / "r", {"setup.py": setup, "fastpkg/__init__.py": init, "csrc/fused.cu": KERNEL})
    _, data = run_json(root, "--no-cache", "--fail-on", "never")
    ptx = [(f["line"], f["disposition"]) for f in data["findings"] if f["path"] == "csrc/fused.cu"]
    assert (4, disposition) in ptx and all(d == disposition for _, d in ptx)
    assert (data["summary"]["verdict"] == "ready") is (disposition != "live")
