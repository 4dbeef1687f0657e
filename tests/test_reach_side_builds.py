"""Extensions only a second setup script builds (auditor/model/rocmpath/sidebuilds.py): pip's install never runs
`setup_cuda.py`, so the user builds the extension by hand. A shipped module that imports it without a fallback
makes it required: its sources are built on ROCm too (hipified by ROCm PyTorch), and what HIPIFY cannot take in
them is work even where the package has a ROCm path. Imported behind a fallback, it is an optional feature."""
from tests.conftest import write_tree

PYPROJECT = "[build-system]\nrequires = ['setuptools']\n[project]\nname = 'lowbit'\nversion = '1'\n"
SIDE_SETUP = (
    "from setuptools import setup\n"
    "from torch.utils import cpp_extension\n"
    "setup(name='lowbit_cuda', ext_modules=[cpp_extension.CUDAExtension('lowbit_cuda', ['lowbit_kernel.cu'])],\n"
    "      cmdclass={'build_ext': cpp_extension.BuildExtension})\n"
)
KERNEL = "__global__ void dq(float* x) {\n  asm volatile(\"add.f32 %0, %0, 1.0;\" : \"+f\"(x[0]));\n}\n"   # 2
DISPATCH = "import torch\nIS_ROCM = torch.version.hip is not None\n"


def _at(data: dict, path: str, line: int) -> set[str]:
    return {f["disposition"] for f in data["findings"] if f["path"] == path and f["line"] == line}


def _tree(tmp_path, quant: str):
    return write_tree(tmp_path / "r", {"pyproject.toml": PYPROJECT, "lowbit/__init__.py": DISPATCH,
                                       "lowbit/quant.py": quant, "lowbit/setup_cuda.py": SIDE_SETUP,
                                       "lowbit/lowbit_kernel.cu": KERNEL})


def test_an_extension_a_shipped_module_imports_unguarded_is_required(tmp_path, run_json):
    _, data = run_json(_tree(tmp_path, "import torch\nimport lowbit_cuda\n"), "--no-cache", "--fail-on", "never")
    assert _at(data, "lowbit/lowbit_kernel.cu", 2) == {"live"}
    assert data["summary"]["verdict"] != "ready"


def test_the_same_extension_imported_behind_a_fallback_is_an_optional_feature(tmp_path, run_json):
    quant = "try:\n    import lowbit_cuda\nexcept ImportError:\n    lowbit_cuda = None\n"
    _, data = run_json(_tree(tmp_path, quant), "--no-cache", "--fail-on", "never")
    assert _at(data, "lowbit/lowbit_kernel.cu", 2) == {"optional feature"}


CUDA_ONLY_SETUP = (
    "import torch\n"
    "from setuptools import setup\n"
    "from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CUDAExtension\n"
    "ext_modules = []\n"
    "if 'cu' in torch.__version__ and CUDA_HOME is not None:\n"
    "    ext_modules = [CUDAExtension('scan_ops', ['csrc/scan.cu'])]\n"
    "setup(name='scanner', packages=['scanner'], ext_modules=ext_modules, cmdclass={'build_ext': BuildExtension})\n"
)
SCAN_KERNEL = ("__global__ void scan(float* x) {\n"
               "  x[0] = __shfl_down_sync(0xffffffff, x[0], 16);\n"    # 2
               "}\n")
REWORDED = ("try:\n"
            "    import scan_ops\n"
            "except ModuleNotFoundError as e:\n"
            "    raise ModuleNotFoundError('build scan_ops first') from e\n")
FALLING_BACK = "try:\n    import scan_ops\nexcept ImportError:\n    scan_ops = None\n"


def test_an_extension_only_the_cuda_configuration_builds_is_required_when_imported_without_a_fallback(
        tmp_path, run_json):
    # a handler that only rewords the failure is no fallback: the ROCm build must build the extension too
    files = {"setup.py": CUDA_ONLY_SETUP, "scanner/__init__.py": "from scanner import ops\n",
             "scanner/ops.py": REWORDED, "csrc/scan.cu": SCAN_KERNEL}
    _, data = run_json(write_tree(tmp_path / "a", files), "--no-cache", "--fail-on", "never")
    assert _at(data, "csrc/scan.cu", 2) == {"live"}
    assert data["summary"]["verdict"] == "needs-port"
    files["scanner/ops.py"] = FALLING_BACK
    _, data = run_json(write_tree(tmp_path / "b", files), "--no-cache", "--fail-on", "never")
    assert "live" not in _at(data, "csrc/scan.cu", 2)
