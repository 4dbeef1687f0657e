"""C/C++ runtime comparisons of a compute capability, evaluated on the ROCm persona's AMD GPUs with the Python
evaluator's semantics (auditor/truth/cppcapability.py): an ordering test true or false on every AMD GPU is no
finding; an equality no AMD GPU passes and a lower bound at an NVIDIA-only architecture are, at the comparison."""
import pytest

from auditor.truth.cppcapability import cpp_capability_decides
from auditor.truth.python import shipped_persona
from tests.conftest import write_tree

SOURCE = (
    "#include <stdexcept>\n"
    "void check(int cc_major, int cc_minor, bool use_bf16) {\n"
    "  if (cc_major < 8 && use_bf16) throw std::runtime_error(\"bf16\");\n"   # 3: false on every AMD GPU
    "  const bool is_turing = cc_major == 7 && cc_minor == 5;\n"               # 4: no AMD GPU passes
    "  if (cc_major >= 9) launch_sm90();\n"                                    # 5: every AMD GPU enters Hopper code
    "  if (is_turing) launch_small();\n"
    "}\n"
)


@pytest.mark.parametrize(("left", "op", "right", "finding"), [
    ("cc_major", "<", "8", False), ("prop.major", ">=", "8", False), ("sm_version", ">=", "80", False),
    ("cc_major", "==", "7", True), ("prop.major", ">=", "9", True), ("sm_version", ">=", "90", True),
    ("major", "==", "9", True), ("cc_minor", "==", "4", True),
])
def test_a_cpp_comparison_is_evaluated_on_every_amd_gpu(left, op, right, finding):
    assert cpp_capability_decides(left, op, right, shipped_persona()) is finding


def test_only_comparisons_that_misfire_on_amd_are_reported(tmp_path, run_json):
    root = write_tree(tmp_path / "r", {"gemm.cpp": SOURCE})
    _, data = run_json(root, "--no-cache", "--fail-on", "never")
    lines = {f["line"] for f in data["findings"] if f["path"] == "gemm.cpp" and f["category"] == "runtime_check"}
    assert lines == {4, 5}
