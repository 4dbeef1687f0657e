"""A HIP backend that compiles another directory's CUDA sources (ggml: `src/ggml-hip/CMakeLists.txt` globs
`../ggml-cuda/*.cu`): those sources are the ROCm build's, not another vendor's backend, and the HIP build's shim
(`vendors/hip.h`, its `#define`s and device functions) maps the names they use."""
from __future__ import annotations

from auditor.model.rocmpath.model import Evidence, RocmPath
from auditor.model.rocmpath.provenance import _resolved
from auditor.model.rocmpath.redefine import undefined_in_shims
from tests.conftest import write_tree

SHIM = ("#pragma once\n#include <hip/hip_runtime.h>\n"
        + "".join(f"#define cuda{n} hip{n}\n" for n in ("Malloc", "Free", "Memcpy", "StreamCreate", "GetLastError",
                                                          "GraphExecUpdate"))
        + "static __device__ __forceinline__ int __vsubss4(const int a, const int b) {\n    return a - b;\n}\n")


def ggml_shaped(hip_glob: str) -> dict[str, str]:
    return {
        "CMakeLists.txt": "cmake_minimum_required(VERSION 3.21)\nproject(g LANGUAGES C CXX)\n"
                          "if(GGML_HIP)\n  add_subdirectory(src/ggml-hip)\nelseif(GGML_CUDA)\n"
                          "  add_subdirectory(src/ggml-cuda)\nendif()\n"
                          "if(GGML_SYCL)\n  add_subdirectory(src/ggml-sycl)\nendif()\n",
        "src/ggml-hip/CMakeLists.txt": f"enable_language(HIP)\nfile(GLOB SRCS \"{hip_glob}\")\n"
                                       "add_compile_definitions(GGML_USE_HIP)\nadd_library(ggml-hip ${SRCS})\n",
        "src/ggml-cuda/CMakeLists.txt": "if(CUDAToolkit_FOUND)\n  enable_language(CUDA)\n  file(GLOB SRCS \"*.cu\")\n"
                                        "  add_library(ggml-cuda ${SRCS})\nendif()\n",
        "src/ggml-cuda/vendors/hip.h": SHIM,
        "src/ggml-cuda/common.cuh": "#pragma once\n#if defined(GGML_USE_HIP)\n#include \"vendors/hip.h\"\n#else\n"
                                    "#include <cuda_runtime.h>\n#endif\n",
        "src/ggml-cuda/quant.cu": (
            '#include "common.cuh"\n'
            "__global__ void k(int *p) {\n"
            "    p[0] = __vsubss4(p[1], p[2]);\n"                      # line 3: the shim defines it
            "}\n"
            "void update(cudaGraphExec_t exec, cudaGraph_t graph) {\n"
            "#if CUDART_VERSION >= 12000\n"
            "    cudaGraphExecUpdateResultInfo info;\n"                 # line 7: not compiled by the HIP build
            "    cudaGraphExecUpdate(exec, graph, &info);\n"
            "#endif\n"
            "}\n"),
        "src/ggml-sycl/CMakeLists.txt": "add_library(ggml-sycl s.cpp)\n",
        "src/ggml-sycl/s.cpp": "float f(float v) { return __shfl_xor_sync(0xffffffff, v, 1) + warpSize; }\n",
    }


def _where(data: dict) -> dict[tuple[str, int], tuple[str, str]]:
    return {(f["path"], f["line"]): (f["disposition"], f["disposition_note"]) for f in data["findings"]}


def test_sources_a_hip_build_globs_from_a_sibling_directory_are_the_rocm_builds(tmp_path, run_json):
    code, data = run_json(write_tree(tmp_path / "g", ggml_shaped("../ggml-cuda/*.cu")), "--no-cache")
    where = _where(data)
    disposition, note = where[("src/ggml-cuda/quant.cu", 3)]
    assert disposition == "shim-mapping" and "src/ggml-cuda/vendors/hip.h:" in note and "__vsubss4" in note
    assert where[("src/ggml-cuda/quant.cu", 7)][0] == "guarded"
    assert where[("src/ggml-sycl/s.cpp", 1)][0] == "other-vendor-backend"
    assert (code, data["summary"]["verdict"], data["summary"]["would_break"]) == (0, "ready", 0)


def test_a_glob_that_leaves_the_tree_compiles_nothing_in_it(tmp_path, run_json):
    # `../../../ggml-cuda/*.cu` from src/ggml-hip/ is outside the tree: the CUDA directory stays another backend
    code, data = run_json(write_tree(tmp_path / "g", ggml_shaped("../../../ggml-cuda/*.cu")), "--no-cache")
    assert _where(data)[("src/ggml-cuda/quant.cu", 3)][0] == "other-vendor-backend"
    assert _resolved("src/ggml-hip", "../../../ggml-cuda/*.cu", ".") is None
    assert _resolved("src/ggml-hip", "../ggml-cuda/*.cu", ".") == "src/ggml-cuda/*.cu"
    assert _resolved("src/ggml-hip", "../ggml-cuda/*.cu", "src/ggml-hip") is None   # outside the component


def test_cuda_version_macros_are_undefined_only_in_a_shim_build_without_hipify():
    shim = {"vendors/hip.h": SHIM}
    shim_build = RocmPath("src", verified=True, evidence=(Evidence("P2", "vendors/hip.h:1", "shim"),))
    hipified = RocmPath("src", verified=True, evidence=(Evidence("P2", "vendors/hip.h:1", "shim"),
                                                        Evidence("P3", "setup.py:9", "hipify")))
    assert undefined_in_shims([shim_build], shim) == {"CUDART_VERSION", "CUDA_VERSION"}
    assert undefined_in_shims([hipified], shim) == frozenset()
    assert undefined_in_shims([shim_build], {"h.h": "#define CUDART_VERSION 12000\n"}) == {"CUDA_VERSION"}
