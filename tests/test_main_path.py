"""The main path decides the verdict: an integration with a package the default install does not require is a
note with its own disposition, named in the verdict reason, and never flips the verdict alone. Which component is
the main path: a nested ops package the root's requirements install by path, a nested CMake project the root
setup.py compiles (and not one it does not), the pyproject.toml pip reads rather than release variants beside it,
and a conda recipe when there is no pip build."""
import json

from auditor.cli.app import main
from tests.conftest import write_tree

PYPROJECT = """[project]
name = "imaging"
version = "0.1.0"
dependencies = [{deps}]
"""
# kornia/core/mixin/onnx.py: an ONNX Runtime helper in a PyTorch library
HELPER = """import torch


class ONNXRuntimeMixin:
    def as_cuda(self, device_id: int = 0) -> None:
        self._session.set_providers(["CUDAExecutionProvider"], provider_options=[{"device_id": device_id}])


def blur(x: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.avg_pool2d(x, 3, 1, 1)
"""


def scan(tmp_path, deps: str) -> dict:
    repo = tmp_path / "repo"
    (repo / "imaging").mkdir(parents=True)
    (repo / "pyproject.toml").write_text(PYPROJECT.format(deps=deps))
    (repo / "imaging" / "__init__.py").write_text("from imaging.onnx import ONNXRuntimeMixin, blur\n")
    (repo / "imaging" / "onnx.py").write_text(HELPER)
    out = tmp_path / "report.json"
    assert main([str(repo), "--format", "json", "-o", str(out), "--fail-on", "never", "-j", "1", "--no-progress",
                 "--no-cache"]) == 0
    return json.loads(out.read_text())


def provider_row(report: dict) -> dict:
    rows = [f for f in report["findings"] if f["rule"] == "RA513"]
    assert [(f["path"], f["line"]) for f in rows] == [("imaging/onnx.py", 6)]
    return rows[0]


def test_a_provider_list_in_an_optional_onnx_helper_is_a_note_that_does_not_decide_the_verdict(tmp_path):
    report = scan(tmp_path, '"torch>=2.1"')
    row = provider_row(report)
    assert row["disposition"] == "optional"
    assert row["disposition_note"] == "an optional integration: the default install does not require `onnxruntime`"
    assert report["summary"]["verdict"] == "ready"
    assert "1 note(s) outside the main path" in report["summary"]["verdict_reason"]


def test_the_same_provider_list_decides_when_the_default_install_requires_onnxruntime(tmp_path):
    report = scan(tmp_path, '"torch>=2.1", "onnxruntime>=1.17"')
    assert provider_row(report)["disposition"] == "live"
    assert report["summary"]["verdict"] == "needs-port"
    assert "outside the main path" not in report["summary"]["verdict_reason"]


def scan_tree(tmp_path, files: dict[str, str]) -> dict:
    repo = tmp_path / "repo"
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    out = tmp_path / "report.json"
    assert main([str(repo), "--format", "json", "-o", str(out), "--fail-on", "never", "-j", "1", "--no-progress",
                 "--no-cache"]) == 0
    return json.loads(out.read_text())


def test_a_requirements_rocm_file_is_the_rocm_install_and_gives_the_recipe(tmp_path):
    report = scan_tree(tmp_path, {
        "pyproject.toml": PYPROJECT.format(deps='"torch>=2.1"'),
        "imaging/__init__.py": "import torch\n",
        "requirements-rocm.txt": "--extra-index-url https://download.pytorch.org/whl/rocm6.2\ntorch\n",
    })
    reason = report["summary"]["verdict_reason"]
    assert report["summary"]["verdict"] == "ready"
    assert reason.startswith("ready: Runs on ROCm PyTorch: requirements-rocm.txt:1 lists ROCm requirements")
    assert "Install: `pip install -r requirements-rocm.txt .`" in reason


def test_a_hip_extra_in_an_alternative_pyproject_is_the_rocm_install(tmp_path):
    """A JAX-style layout: pyproject.toml's extras are the CUDA install, pyproject_hip.toml's the ROCm one."""
    alt = PYPROJECT.format(deps='"numpy"') + '\n[project.optional-dependencies]\njax_hip = ["jax-rocm7-plugin"]\n'
    report = scan_tree(tmp_path, {
        "pyproject.toml": PYPROJECT.format(deps='"numpy"'),
        "pyproject_hip.toml": alt,
        "imaging/__init__.py": "import numpy\n",
    })
    reason = report["summary"]["verdict_reason"]
    assert reason.startswith("ready: Runs on ROCm PyTorch: pyproject_hip.toml:7 declares a ROCm extra `jax_hip`")
    assert 'Install: `pip install ".[jax_hip]"` (with pyproject_hip.toml as the pyproject.toml)' in reason

KERNEL = "__global__ void k(float* x) { x[threadIdx.x] *= 2.f; }\n"
OPS_SETUP = (
    "from setuptools import setup\n"
    "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
    "setup(name='ops', ext_modules=[CUDAExtension('ops._ext', ['ops/k.cu'],\n"
    "      extra_compile_args={'cxx': ['-O3'], 'nvcc': ['-O3', '-Xfatbin', '-compress-all']})],\n"
    "      cmdclass={'build_ext': BuildExtension})\n"
)


def _finding(report: dict, path: str, rule: str) -> dict | None:
    return next((f for f in report["findings"] if f["path"] == path and f["rule"] == rule), None)

CUTLASS_KERNEL = '#include "cutlass/numeric_types.h"\n__global__ void gemm(float* x) { x[threadIdx.x] = 0.f; }\n'


def _setup(sources: str) -> str:
    return ("from setuptools import setup\n"
            "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
            f"setup(name='q', ext_modules=[CUDAExtension('q_ext', sources=[{sources}])],\n"
            "      cmdclass={'build_ext': BuildExtension})\n")



def _by_rule(data: dict, rule: str) -> list[tuple[str, int, str]]:
    return [(f["path"], f["line"], f["disposition"]) for f in data["findings"] if f["rule"] == rule]



def test_a_nested_ops_package_the_root_requirements_install_by_path_is_on_the_main_path(tmp_path, run_json):
    """The root package is pure Python and requirements.txt installs `./ops_lib/.`."""
    files = {
        "setup.py": "from setuptools import setup\nsetup(name='models', packages=['models'])\n",
        "models/__init__.py": "import ops\n",
        "ops_lib/setup.py": OPS_SETUP,
        "ops_lib/ops/k.cu": KERNEL,
    }
    root = write_tree(tmp_path / "repo", {**files, "requirements.txt": "numpy\n./ops_lib/.\n"})
    _, report = run_json(root, "--fail-on", "never")
    kinds = {c["path"]: c["kind"] for c in report["components"]}
    assert kinds == {".": "primary", "ops_lib": "primary"}
    assert report["summary"]["verdict"] == "needs-port"
    flag = _finding(report, "ops_lib/setup.py", "RA651")
    assert flag is not None and flag["line"] == 4 and flag["disposition"] == "live"

    # must not match: a requirement on a published package, or a path outside the components, changes nothing
    other = write_tree(tmp_path / "other", {**files, "requirements.txt": "numpy\nops-lib>=1\n./vendor/thing\n"})
    _, report = run_json(other, "--fail-on", "never")
    assert {c["path"]: c["kind"] for c in report["components"]} == {".": "primary", "ops_lib": "secondary"}
    assert report["summary"]["verdict"] == "ready"



def test_a_nested_cmake_project_the_root_setup_compiles_is_the_main_path(tmp_path, run_json):
    """csrc/ has its own CMakeLists.txt with project(), but setup.py builds csrc/kernels/gemm.cu into the one
    extension: the CUTLASS include there is on the default install and blocks it."""
    root = write_tree(tmp_path / "q", {
        "setup.py": _setup("'csrc/bind.cpp', 'csrc/kernels/gemm.cu'"),
        "csrc/CMakeLists.txt": "project(FasterTransformer LANGUAGES CXX CUDA)\nadd_subdirectory(kernels)\n",
        "csrc/bind.cpp": "int bind() { return 0; }\n",
        "csrc/kernels/CMakeLists.txt": "add_library(k gemm.cu)\n",
        "csrc/kernels/gemm.cu": CUTLASS_KERNEL})
    _, data = run_json(root, "--no-cache")
    cutlass = [(f["path"], f["line"], f["disposition"]) for f in data["findings"] if f["rule"] == "RA404"]
    assert cutlass == [("csrc/kernels/gemm.cu", 1, "live")]
    assert data["summary"]["verdict"] == "blocked"
    assert {c["path"]: c["kind"] for c in data["components"]} == {".": "primary", "csrc": "primary"}



def test_a_nested_cmake_project_the_root_setup_does_not_compile_stays_separate(tmp_path, run_json):
    """The same tree whose setup.py builds only its own bindings: csrc/ is a separate build and does not decide."""
    root = write_tree(tmp_path / "q", {
        "setup.py": _setup("'q/bind.cpp'"),
        "q/bind.cpp": "int bind() { return 0; }\n",
        "csrc/CMakeLists.txt": "project(FasterTransformer LANGUAGES CXX CUDA)\nadd_library(k kernels/gemm.cu)\n",
        "csrc/kernels/gemm.cu": CUTLASS_KERNEL})
    _, data = run_json(root, "--no-cache")
    assert [f["disposition"] for f in data["findings"] if f["rule"] == "RA404"] == ["optional"]
    assert data["summary"]["verdict"] != "blocked"
    assert {c["path"]: c["kind"] for c in data["components"]} == {".": "primary", "csrc": "secondary"}
