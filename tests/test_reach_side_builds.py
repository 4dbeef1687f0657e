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
