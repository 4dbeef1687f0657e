"""The main path decides the verdict (issue 25): an integration with a package the default install does not
require is a note with its own disposition, named in the verdict reason, and never flips the verdict alone."""
import json

from auditor.cli.app import main

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
