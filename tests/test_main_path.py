"""The main path decides the verdict (issue 25): an integration with a package the default install does not
require is a note with its own disposition, named in the verdict reason, and never flips the verdict alone."""
import json

from auditor.cli import main

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
