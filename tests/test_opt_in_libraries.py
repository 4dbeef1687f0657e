"""A CUDA-only library the project uses only behind its own opt-in build macro is port
work, not a blocker: the includes stay reported, at high severity, naming the macro. A library on the default path, or behind a macro the build defines by default, still blocks."""
import pytest

from tests.conftest import write_tree

OPT_IN = "if os.environ.get('GG_CUTLASS', '0') == '1':\n    nvcc.extend(['-DGG_CUTLASS'])\n"
ALWAYS = "nvcc.extend(['-DGG_CUTLASS'])\n"
ON_BY_DEFAULT = "if os.environ.get('GG_CUTLASS', '1') == '1':\n    nvcc.extend(['-DGG_CUTLASS'])\n"


def _setup(define: str) -> str:
    return ("import os\n"
            "from setuptools import setup\n"
            "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
            "nvcc = ['-std=c++17']\n"
            f"{define}"
            "setup(name='gg', packages=['gg'], ext_modules=[CUDAExtension('gg_backend', ['csrc/gg.cu'],\n"
            "      extra_compile_args={'nvcc': nvcc})], cmdclass={'build_ext': BuildExtension})\n")


HEADER = ("#pragma once\n"
          "#include <cutlass/gemm_coord.h>\n"                                   # line 2
          "struct Problem { ::cutlass::gemm::GemmCoord dims; };\n")


def _unit(macro: str) -> str:
    return ("#include \"fill.cuh\"\n"
            "#include \"cutlass/gemm/device/gemm_grouped.h\"\n"                 # line 2
            "#include <cublas_v2.h>\n"
            "void run(float* a, int n) {\n"
            f"#if !defined({macro})\n"
            "  float v = __shfl_down(a[0], 1);\n"                               # line 6: the default path
            "  cublasSgemm(0, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, 0, a, n, a, n, 0, a, n);\n"
            "#else\n"
            "  float w = __shfl_down(a[0], 2);\n"                               # line 9: the opt-in path
            "  cutlass::gemm::device::GemmGrouped<int> gemm; gemm();\n"
            "#endif\n"
            "}\n")


def _scan(tmp_path, run_json, define: str, macro: str = "GG_CUTLASS"):
    root = write_tree(tmp_path / "gg", {"setup.py": _setup(define), "gg/__init__.py": "",
                                        "csrc/gg.cu": _unit(macro), "csrc/fill.cuh": HEADER})
    _, data = run_json(root, "--no-cache")
    cutlass = {(f["path"], f["line"]): f for f in data["findings"] if f["rule"] == "RA404"}
    assert set(cutlass) == {("csrc/gg.cu", 2), ("csrc/fill.cuh", 2)}   # reported either way
    return data, cutlass


def test_a_library_used_only_behind_an_opt_in_macro_naming_it_is_port_work(tmp_path, run_json):
    data, cutlass = _scan(tmp_path, run_json, OPT_IN)
    for finding in cutlass.values():   # the unit's own include, and its header's (the unit tests the macro)
        assert (finding["severity"], finding["disposition"]) == ("high", "live")
        assert "only behind `GG_CUTLASS`" in finding["disposition_note"]
        assert "fence the include out of the default build" in finding["message"]
    assert data["summary"]["verdict"] == "needs-port"
    shuffles = {f["line"]: f["disposition"] for f in data["findings"] if f["rule"] == "RA208"}
    assert shuffles == {6: "live", 9: "optional feature"}   # `#if !defined(X)`: its #else is the opt-in


@pytest.mark.parametrize("define,macro", [
    (ALWAYS, "GG_CUTLASS"),            # the build always defines it
    (ON_BY_DEFAULT, "GG_CUTLASS"),     # an environment switch that is on when unset
    ("", "GG_CUTLASS"),                # no build defines it: nothing says the library is optional
    (OPT_IN.replace("GG_CUTLASS", "GG_FAST"), "GG_FAST"),   # an opt-in, but not one naming the library
], ids=["always-defined", "on-by-default", "never-defined", "macro-names-another-feature"])
def test_a_library_on_the_default_path_still_blocks(tmp_path, run_json, define, macro):
    data, cutlass = _scan(tmp_path, run_json, define, macro)
    assert {f["severity"] for f in cutlass.values()} == {"critical"}
    assert data["summary"]["verdict"] == "blocked"


def _cmake(default: str) -> str:
    return ("cmake_minimum_required(VERSION 3.18)\n"
            "project(gg LANGUAGES CXX CUDA)\n"
            f"option(GG_CUTLASS \"Build the CUTLASS grouped GEMM\" {default})\n"
            "if(GG_CUTLASS)\n"
            "  add_compile_definitions(GG_CUTLASS)\n"
            "endif()\n"
            "add_library(gg SHARED csrc/gg.cu)\n")


@pytest.mark.parametrize("default,severity,verdict", [
    ("OFF", "high", "needs-port"),        # a CMake option off by default: an opt-in
    ("ON", "critical", "blocked"),        # on by default: the library is on the default path
], ids=["cmake-option-off", "cmake-option-on"])
def test_a_cmake_option_off_by_default_is_an_opt_in(tmp_path, run_json, default, severity, verdict):
    root = write_tree(tmp_path / "gg", {"CMakeLists.txt": _cmake(default), "csrc/gg.cu": _unit("GG_CUTLASS"),
                                        "csrc/fill.cuh": HEADER})
    _, data = run_json(root, "--no-cache")
    assert {(f["path"], f["line"], f["severity"]) for f in data["findings"] if f["rule"] == "RA404"} == {
        ("csrc/gg.cu", 2, severity), ("csrc/fill.cuh", 2, severity)}
    assert data["summary"]["verdict"] == verdict


def test_a_unit_that_never_tests_the_opt_in_macro_still_blocks(tmp_path, run_json):
    root = write_tree(tmp_path / "gg", {
        "setup.py": _setup(OPT_IN), "gg/__init__.py": "", "csrc/fill.cuh": HEADER,
        "csrc/gg.cu": "#include \"fill.cuh\"\n#include \"cutlass/gemm/device/gemm_grouped.h\"\n"
                      "void run() { cutlass::gemm::device::GemmGrouped<int> gemm; gemm(); }\n",
        "csrc/other.cu": "#ifdef GG_CUTLASS\nint x;\n#endif\n",   # another unit, which includes neither
    })
    _, data = run_json(root, "--no-cache")
    assert {f["severity"] for f in data["findings"] if f["rule"] == "RA404"} == {"critical"}
    assert data["summary"]["verdict"] == "blocked"
