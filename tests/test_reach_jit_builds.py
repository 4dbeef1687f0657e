"""CUDA sources a shipped module builds when it is imported (auditor/model/rocmpath/jitloads.py): a
`torch.utils.cpp_extension.load()` at the module's top level, or in a function its top level calls, is run by a
ROCm user's `import` too; ROCm PyTorch hipifies the sources and compiles them. They are built on the default
install: what HIPIFY cannot take is work even where the package has a ROCm path of its own, and what it renames is
mapped. A `load()` only a caller's function runs compiles on first use: an optional feature of such a package."""
from tests.conftest import write_tree

PYPROJECT = "[project]\nname = 'nnsearch'\nversion = '1'\ndependencies = ['torch']\n"
KERNEL = (
    "#include <cuda_runtime.h>\n"
    "__global__ void topk(float* x) {\n"
    "  float v = x[threadIdx.x];\n"
    "  asm volatile(\"add.f32 %0, %0, 1.0;\" : \"+f\"(v));\n"    # 4: inline PTX HIPIFY cannot take
    "  x[threadIdx.x] = v;\n"
    "}\n"
)
AT_IMPORT = (
    "import os\n"
    "import torch\n"
    "from torch.utils.cpp_extension import load\n"
    "\n"
    "def _build(name):\n"
    "    here = os.path.dirname(__file__)\n"
    "    sources = [os.path.join(here, 'csrc', '{}.cu'.format(name))]\n"
    "    return load(name=name, sources=sources)\n"
    "\n"
    "_ext = _build('topk')\n"
    "IS_ROCM = torch.version.hip is not None\n"
)
ON_FIRST_USE = AT_IMPORT.replace("_ext = _build('topk')\n", "def search(x):\n    return _build('topk').topk(x)\n")


def _at(data: dict, path: str, line: int) -> set[str]:
    return {f["disposition"] for f in data["findings"] if f["path"] == path and f["line"] == line}


def test_sources_a_load_at_import_builds_are_built_on_the_default_install(tmp_path, run_json):
    root = write_tree(tmp_path / "r", {"pyproject.toml": PYPROJECT, "nnsearch/__init__.py": AT_IMPORT,
                                       "nnsearch/csrc/topk.cu": KERNEL})
    _, data = run_json(root, "--no-cache", "--fail-on", "never")
    assert _at(data, "nnsearch/csrc/topk.cu", 4) == {"live"}
    assert data["summary"]["verdict"] == "needs-port"


def test_sources_a_load_builds_only_when_a_caller_runs_it_compile_on_first_use(tmp_path, run_json):
    root = write_tree(tmp_path / "r", {"pyproject.toml": PYPROJECT, "nnsearch/__init__.py": ON_FIRST_USE,
                                       "nnsearch/csrc/topk.cu": KERNEL})
    _, data = run_json(root, "--no-cache", "--fail-on", "never")
    assert _at(data, "nnsearch/csrc/topk.cu", 4) == {"optional feature"}
