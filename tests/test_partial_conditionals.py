"""Conditional directives that split a construct (half of ggml's partial parses): the file is read whole, the code
of every branch is scanned, findings keep their lines, and a directive a rule matches is still found."""

import pytest

from auditor.parse import cuda
from tests.conftest import write_tree

SHUFFLE = "__shfl_xor_sync(0xffffffff, v, 1)"   # RA200: every line that holds it must be reported

SPLITS = {
    "a directive inside a condition (ggml's tests and examples)": (
        "__device__ float pick(B b, float v) {\n"
        "    if (is_cpu(b)\n#ifdef GGML_USE_METAL\n"
        f"            || {SHUFFLE} > 0\n#endif\n    ) {{\n"
        f"        return {SHUFFLE};\n    }}\n    return v;\n}}\n"),
    "an else whose block follows the directive (cp-async.cuh)": (
        "__device__ float cp(int preload, float v) {\n#if CUDART_VERSION >= 11040\n"
        f"    if (preload == 256) {{\n        v = {SHUFFLE};\n    }} else\n#endif // CUDART_VERSION\n"
        f"    {{\n        v = {SHUFFLE} + 1;\n    }}\n    return v;\n}}\n"),
    "branches of a designated initializer (ggml-cpu.c's type traits)": (
        "static const struct traits table[2] = {\n    [0] = {\n        .vec_dot = f,\n"
        "#if defined (__ARM_FEATURE_MATMUL_INT8)\n        .nrows = 2,\n#else\n        .nrows = 1,\n#endif\n"
        f"    }},\n}};\n__device__ float g(float v) {{ return {SHUFFLE}; }}\n"),
    "a function header on each branch, one shared body": (
        "#if defined(USE_STREAMS)\n__global__ void k(float *p, float v, cudaStream_t s) {\n#else\n"
        "__global__ void k(float *p, float v) {\n#endif\n"
        f"    p[0] = {SHUFFLE};\n}}\n"),
    "nested branches each opening a block closed after the group (mmf.cuh)": (
        "template <typename T>\n__global__ void mul(float *p, float v) {\n#if defined(MMA_AVAILABLE)\n"
        "#if defined(AMD_WMMA_AVAILABLE)\n    if constexpr (sizeof(T) != 2) { NO_DEVICE_CODE; } else {\n"
        f"    p[0] = {SHUFFLE};\n#elif defined(AMD_MFMA_AVAILABLE)\n"
        f"    if constexpr (sizeof(T) != 4) {{ NO_DEVICE_CODE; }} else {{\n    p[1] = {SHUFFLE};\n#else\n"
        f"    if constexpr (sizeof(T) != 8) {{ NO_DEVICE_CODE; }} else {{\n    p[2] = {SHUFFLE};\n#endif\n"
        f"    p[3] = {SHUFFLE};\n    }}\n#else\n    NO_DEVICE_CODE;\n#endif\n}}\n"),
}


@pytest.mark.parametrize("case", sorted(SPLITS))
def test_a_split_construct_is_read_whole_with_every_branch_scanned(case, tmp_path, run_json):
    source = SPLITS[case]
    tree = cuda.parse(source.encode())
    assert tree.lost_lines() == ()
    write_tree(tmp_path, {"k.cu": source})
    data = run_json(tmp_path)[1]
    assert data["summary"]["files_partial"] == 0 and data["partial"] == []
    wanted = {n for n, text in enumerate(source.splitlines(), 1) if SHUFFLE in text}
    assert wanted <= {f["line"] for f in data["findings"] if f["rule"] == "RA200" and f["path"] == "k.cu"}


def test_a_cuda_identifier_in_the_left_out_header_is_still_found():
    source = SPLITS["a function header on each branch, one shared body"]
    ids = {(node.start_point[0] + 1, cuda.text(node)) for node in cuda.inventory(cuda.parse(source.encode()))["id"]}
    assert (2, "cudaStream_t") in ids and (4, "k") in ids and (2, "k") in ids


def test_shared_code_read_by_two_trees_is_reported_once(tmp_path, run_json):
    write_tree(tmp_path, {"k.cu": SPLITS["a function header on each branch, one shared body"]})
    lines = [f["line"] for f in run_json(tmp_path)[1]["findings"] if f["rule"] == "RA200"]
    assert lines == [6]


def test_a_directive_a_rule_matches_is_found_when_its_group_splits_a_construct(tmp_path, run_json):
    source = ("__host__ __device__ float load(const float *p, int use) {\n    if (use > 0\n"
              "#ifdef __CUDA_ARCH__\n        && p != nullptr\n#endif\n    ) { return p[0]; }\n    return 0.f;\n}\n")
    assert cuda.parse(source.encode()).lost_lines() == ()
    write_tree(tmp_path, {"k.cu": source})
    data = run_json(tmp_path)[1]
    assert data["summary"]["files_partial"] == 0
    assert ("RA837", 3) in {(f["rule"], f["line"]) for f in data["findings"]}


def test_broken_code_inside_a_branch_is_still_partial(tmp_path, run_json):
    source = ("#if defined(USE_A)\n__device__ int a() { return 1; }\n#else\nint broken( { ;;; }}}\n#endif\n"
              f"__device__ float g(float v) {{ return {SHUFFLE}; }}\n")
    assert cuda.parse(source.encode()).partial
    write_tree(tmp_path, {"k.cu": source})
    data = run_json(tmp_path)[1]
    assert data["summary"]["files_partial"] == 1 and "not scanned" in data["partial"][0]["reason"]
    assert ("RA200", 6) in {(f["rule"], f["line"]) for f in data["findings"]}
