"""RA846: code gated on a switch the CUDA build defines (xgboost's `XGBOOST_USE_CUDA`), which a ROCm build must
define too or test beside its own; guarded where a verified ROCm build compiles it and does not keep the switch
CUDA-only."""
from __future__ import annotations

import pytest

from tests.conftest import write_tree

GATED = ("#include <vector>\n"
         "#if !defined(FOO_USE_CUDA)\n"                                  # line 2
         "inline void AssertGPUSupport() { throw 1; }\n"
         "#endif\n"
         "#if defined(FOO_USE_CUDA) || defined(FOO_USE_HIP)\n"           # line 5: already ported
         "void gpu_sum(std::vector<float>&);\n"
         "#endif\n")


def _gate(data: dict) -> dict[int, str]:
    return {f["line"]: f["disposition"] for f in data["findings"] if f["rule"] == "RA846"}


def test_a_cuda_only_project_gets_one_low_finding_per_ungated_directive(tmp_path, run_json):
    root = write_tree(tmp_path / "p", {
        "CMakeLists.txt": "project(foo CXX)\nadd_library(foo src/sum.cc)\nif(USE_CUDA)\n  enable_language(CUDA)\n"
                          "  target_compile_definitions(foo PRIVATE -DFOO_USE_CUDA=1)\nendif()\n",
        "src/sum.cc": GATED,
    })
    code, data = run_json(root, "--no-cache")
    assert _gate(data) == {2: "live"}
    assert [f["severity"] for f in data["findings"] if f["rule"] == "RA846"] == ["low"]
    assert code == 0 and data["summary"]["verdict"] != "blocked"


@pytest.mark.parametrize(("cmake", "disposition"), [
    # the ROCm build keeps the switch CUDA-only: the gate stays live
    (("project(foo CXX)\nadd_library(foo src/sum.cc)\nif(USE_CUDA)\n  enable_language(CUDA)\n"
      "  add_compile_definitions(FOO_USE_CUDA)\nelseif(USE_HIP)\n  enable_language(HIP)\n"
      "  add_compile_definitions(FOO_USE_HIP)\nendif()\n"), "live"),
    # the ROCm build defines the switch too: the gate is guarded
    (("project(foo CXX)\nadd_library(foo src/sum.cc)\nif(USE_HIP)\n  enable_language(HIP)\n"
      "  add_compile_definitions(FOO_USE_HIP FOO_USE_CUDA)\nelseif(USE_CUDA)\n"
      "  enable_language(CUDA)\n  add_compile_definitions(FOO_USE_CUDA)\nendif()\n"), "guarded"),
], ids=["cuda-only-switch", "switch-defined-on-rocm"])
def test_a_rocm_build_decides_the_gate_by_whether_it_defines_the_switch(tmp_path, run_json, cmake, disposition):
    root = write_tree(tmp_path / "p", {"CMakeLists.txt": cmake, "src/sum.cc": GATED})
    _, data = run_json(root, "--no-cache")
    assert _gate(data) == {2: disposition}


def test_a_gate_the_rocm_build_handles_beside_it_is_not_reported(tmp_path, run_json):
    """detectron2: the CUDA test nested in a group that tests the HIP switch too, and one followed by its twin for
    the HIP switch, are handled; a CUDA-only test next to a test of both switches still compiles out on ROCm."""
    source = ("#include <string>\n"
              "std::string label() {\n"
              "#if defined(FOO_USE_CUDA) || defined(FOO_USE_HIP)\n"
              "#if defined(FOO_USE_CUDA)\n"                                # line 4: nested, its #else is HIP
              "  return \"CUDA\";\n"
              "#else\n"
              "  return \"HIP\";\n"
              "#endif\n"
              "#endif\n"
              "  return \"none\";\n"
              "}\n"
              "#ifdef FOO_USE_CUDA\n"                                      # line 12: twin on line 15
              "#include \"../common/utils.h\"\n"
              "#endif\n"
              "#ifdef FOO_USE_HIP\n"
              "#include \"common/utils.h\"\n"
              "#endif\n")
    root = write_tree(tmp_path / "p", {
        "CMakeLists.txt": "project(foo CXX)\nadd_library(foo src/sum.cc src/label.cc)\nif(USE_CUDA)\n"
                          "  enable_language(CUDA)\n  target_compile_definitions(foo PRIVATE -DFOO_USE_CUDA=1)\n"
                          "endif()\n",
        "src/sum.cc": GATED,
        "src/label.cc": source,
    })
    _, data = run_json(root, "--no-cache")
    gates = {(f["path"], f["line"]) for f in data["findings"] if f["rule"] == "RA846"}
    assert gates == {("src/sum.cc", 2)}
