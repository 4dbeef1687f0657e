"""HIPIFY coverage (design.md section 5): the API table, counting references, hipify-perl's tables, surfaces."""
import json
import tomllib
from fnmatch import fnmatch

import pytest

from auditor.match.hipify.apitable import COLUMNS, STATUSES, ApiEntry, TableError, make_table, parse_table, render_table
from auditor.match.hipify.coverage import coverage
from auditor.match.hipify.perl import HipifyPerlError, read_hipify_perl
from auditor.match.rulebook import RuleError, load_rulebook, parse_rule
from auditor.run.scan.file import scan_text_as
from auditor.types import FileCoverage, FileFacts, FileResult
from tests.conftest import FIXTURES, REPO, write_tree

RULEBOOK = load_rulebook()
TABLE_FILE = REPO / "rules" / "hipify" / "api_table.tsv"
GRAPH_STEP = FIXTURES / "coverage" / "graph_step.cu"
SAMPLE_PERL = REPO / "tests" / "data" / "hipify-perl-sample"


def scan(code: str, name: str = "k.cu", rulebook=RULEBOOK) -> FileResult:
    result = scan_text_as(name, "cuda" if name.endswith((".cu", ".cuh")) else "cpp", code, rulebook)
    assert result.error is None
    return result


# --------------------------------------------------------------------------- the fixture, pinned

def test_graph_step_fixture_counts_are_pinned():
    """Supported runtime calls, an unsupported graph API, cuDNN backend calls, the project's own cudaCheck
    and CUDA_KERNEL_LOOP macros, comments naming CUDA APIs: exact counts."""
    result = scan(GRAPH_STEP.read_text(), "graph_step.cu")
    cov = result.coverage
    assert (cov.converted, len(cov.unconverted), cov.clean) == (43, 5, 41)
    names: dict[str, list[int]] = {}
    for name, line in cov.unconverted:
        names.setdefault(name, []).append(line)
    assert names == {
        "cudaGraphConditionalHandle": [39, 68],
        "cudaGraphSetConditional": [40],
        "cudaGraphConditionalHandleCreate": [69],
        "cudaGraphCondAssignDefault": [69],
    }
    # the cuDNN backend API converts with hipify-perl -roc, to MIOpen: those references need MIOpen
    assert dict(cov.targets) == {"HIP": 25, "MIOpen": 18}
    assert not [line for _, line in cov.unconverted if line <= 6], "comments are not code"


def test_graph_step_findings_specific_rules_win():
    result = scan(GRAPH_STEP.read_text(), "graph_step.cu")
    by_line = {}
    for f in result.findings:
        by_line.setdefault(f.span.line, []).append(f.rule_id)
    assert by_line[39] == ["RA851"] and by_line[68] == ["RA851"]        # the unsupported handle type
    assert by_line[40] == ["RA838"] and by_line[69] == ["RA838"]        # conditional nodes: the specific rule
    assert by_line[76] == ["RA401"] and by_line[77] == ["RA401"]        # cuDNN backend: the library rule
    assert not any(line in by_line for line in range(15, 21)), "library types are counted, not reported"


def test_project_macros_and_comments_are_not_references():
    code = (
        "// cudaMalloc cudaFree cudaStreamCreate in a comment\n"
        "/* cudaGraphConditionalHandleCreate */\n"
        "#define cudaCheck(x) do { if ((x) != 0) return; } while (0)\n"
        "#define CUDA_KERNEL_LOOP(i, n) for (int i = 0; i < (n); ++i)\n"
        'void f() { const char* s = "cudaMalloc failed"; cudaCheck(0); CUDA_KERNEL_LOOP(i, 4) {} }\n'
    )
    assert scan(code).coverage.total == 0


def test_macro_bodies_includes_and_namespaces_are_references():
    code = (
        "#include <cuda_runtime.h>\n"
        '#include "cub/cub.cuh"\n'
        "#define CHECK(x) if ((x) != cudaSuccess) cudaGetLastError() // cudaFree here is a comment\n"
        "void f(float* p) { CHECK(cudaFree(p)); cub::DeviceReduce::Sum(nullptr, 0, p, p, 1); int cub = 0; }\n"
    )
    refs = scan(code).coverage
    # 2 headers, 2 in the macro, cudaFree; cub:: is renamed but, as in hipify-perl -examine, not counted
    assert (refs.converted, refs.unconverted) == (5, ())


def test_dead_code_is_not_counted_and_guarded_findings_stay_guarded():
    code = (
        "#if 0\ncudaGraphConditionalHandle never;\n#endif\n"
        "#ifndef USE_ROCM\ncudaGraphConditionalHandle cuda_only;\n#endif\n"
    )
    result = scan(code)
    assert result.coverage.unconverted == (("cudaGraphConditionalHandle", 5),)
    assert [(f.rule_id, f.guarded) for f in result.findings] == [("RA851", True)]


def test_the_cuda_bf16_typedef_is_an_unconverted_reference():
    code = (
        "#include <cuda_bf16.h>\n"
        "__device__ float2 widen(const nv_bfloat162 v) { return __bfloat1622float2(v); }\n"
    )
    result = scan(code)
    assert result.coverage.unconverted == (("nv_bfloat162", 2),)
    assert result.coverage.converted == 2    # the header and __bfloat1622float2 (HIP's bf16 header has it)


def test_clean_after_hipify_excludes_functions_with_hazards():
    code = (
        "__global__ void ok(float* x) { atomicAdd(x, 1.f); __syncthreads(); }\n"
        "__global__ void bad(float* x) { float v = __shfl_xor_sync(0xffffffff, x[0], 1); atomicAdd(x, v); }\n"
    )
    cov = scan(code).coverage
    # atomicAdd, __syncthreads, __shfl_xor_sync: device functions HIP spells the same count once per file
    assert (cov.converted, cov.clean) == (3, 2)


# --------------------------------------------------------------------------- report level

def test_coverage_totals_translators_and_disagreements(tmp_path):
    torch_ext = FileResult("ext/setup.py", "python", facts=FileFacts(cpp_extension=True))
    ext_pyproject = FileResult("ext/pyproject.toml", "manifest")
    results = [
        torch_ext, ext_pyproject,
        FileResult("ext/csrc/a.cu", "cuda", coverage=FileCoverage(8, 7, (("cudaFoo", 3), ("cudaBar", 4)),
                                                                  (("cudaStreamGetId", True, 2),))),
        FileResult("lib/b.cu", "cuda", coverage=FileCoverage(2, 2, (("cudaFoo", 9),), (("cudaX", True, 5),))),
        FileResult("lib/empty.cu", "cuda", coverage=FileCoverage()),
    ]
    cov = coverage(results, ("table line",))
    assert (cov.converted, cov.unconverted, cov.clean, cov.percent) == (10, 3, 9, 76.9)
    assert [(f.path, f.translator, f.percent) for f in cov.files] == [
        ("ext/csrc/a.cu", "torch-hipify", 80.0), ("lib/b.cu", "hipify", 66.7)]
    assert cov.unconverted_names == (("cudaFoo", 2, ("ext/csrc/a.cu:3", "lib/b.cu:9")), ("cudaBar", 1, ("ext/csrc/a.cu:4",)))
    assert cov.disagreements == (("cudaStreamGetId", True, 2),)   # only torch-hipify files' disagreements
    assert coverage([]).percent == 100.0


def test_json_and_terminal_surfaces(run_json, tmp_path):
    import jsonschema

    root = write_tree(tmp_path / "repo", {"k.cu": GRAPH_STEP.read_text()})
    _, report = run_json(root, "--fail-on", "never")
    schema = json.loads((REPO / "auditor" / "report" / "schema" / "report.schema.json").read_text())
    jsonschema.validate(report, schema)
    cov = report["coverage"]
    assert cov["total"] == {"converted_refs": 43, "unconverted_refs": 5, "percent": 89.6,
                            "clean_refs": 41, "clean_percent": 85.4}
    assert cov["unconverted"][0] == {"name": "cudaGraphConditionalHandle", "count": 2,
                                     "locations": ["k.cu:39", "k.cu:68"]}
    assert cov["targets"] == [{"library": "HIP", "converted_refs": 25}, {"library": "MIOpen", "converted_refs": 18}]
    assert cov["files"][0]["translator"] == "hipify"
    assert cov["table"][0] == "HIPIFY API table: the table shipped with rocm-audit"
    assert report["summary"]["by_category"]["unsupported_api"] == 4   # RA851 twice, RA838 twice


def test_terminal_summary_has_a_coverage_section(tmp_path, capsys):
    from auditor.cli.app import main

    root = write_tree(tmp_path / "repo", {"k.cu": GRAPH_STEP.read_text()})
    main([str(root), "--no-progress", "--no-html", "--fail-on", "never", "-j", "1"])
    out = " ".join(capsys.readouterr().out.split())
    assert "HIPIFY coverage: 43 of 48 CUDA references convert (89.6%)" in out
    assert "unconverted: cudaGraphConditionalHandle" in out
    main([str(root), "--no-progress", "--no-html", "--fail-on", "never", "-j", "1", "--verbose"])
    out = capsys.readouterr().out
    assert "Unconverted CUDA APIs" in out and "cudaGraphConditionalHandle" in out


def test_coverage_command_and_table_info(tmp_path, capsys):
    from auditor.cli.app import main

    assert main(["coverage", "--table-info"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("HIPIFY API table: the table shipped with rocm-audit")
    for label in ("cuda: CUDA 13.0", "hip: HIP 10.0", "torch: PyTorch", "hipify-perl: hipify-perl for HIP 6.3.0"):
        assert label in out
    root = write_tree(tmp_path / "repo", {"k.cu": GRAPH_STEP.read_text()})
    assert main(["coverage", str(root), "--format", "json", "-j", "1"]) == 0
    assert json.loads(capsys.readouterr().out)["total"]["unconverted_refs"] == 5


# --------------------------------------------------------------------------- the table and its generator

def test_shipped_table_is_in_the_generators_format():
    """The file parses, and rendering what it holds (the generator's writer) gives the file back exactly."""
    from scripts import build_api_table

    text = TABLE_FILE.read_text(encoding="utf-8")
    table = parse_table(text)
    assert build_api_table.render_table is render_table
    assert render_table(table.entries.values(), table.sources) == text
    assert {label for label, _ in table.sources} >= {"cuda", "hip", "torch"}
    assert all(e.status in STATUSES for e in table.entries.values())
    assert all(bool(e.hip) == (e.status != "unsupported") for e in table.entries.values())
    assert len(table.entries) > 5000 and table.counts["unsupported"] > 500


@pytest.mark.parametrize(("name", "hip", "status"), [
    ("cudaMalloc", "hipMalloc", "supported"),
    ("cudaStream_t", "hipStream_t", "supported"),
    ("cuda_runtime.h", "hip/hip_runtime.h", "supported"),
    ("__shfl_xor_sync", "__shfl_xor_sync", "supported"),
    ("__nv_bfloat16", "__hip_bfloat16", "supported"),
    ("cudaGraphConditionalHandleCreate", "", "unsupported"),
    ("CU_TENSOR_MAP_SWIZZLE_128B", "", "unsupported"),
    ("cudnnBackendCreateDescriptor", "miopenBackendCreateDescriptor", "supported"),   # -roc: MIOpen
    ("cudnnBackendExecute", "miopenBackendExecute", "supported"),
    ("cudnnCreate", "miopenCreate", "supported"),           # default target hipdnnCreate is retired; -roc maps it
    ("cublasSgemm", "hipblasSgemm", "supported"),
    ("__nv_fp8_e4m3", "__hip_fp8_e4m3_fnuz", "supported"),  # HIPIFY's tables since HIP 6.2
    ("__bfloat162int_rn", "__bfloat162int_rn", "supported"),  # HIP 7.1's bf16 header; hipify-perl 6.3 lags
    ("cudaStreamAttrValue", "", "unsupported"),
    ("nv_bfloat162", "", "unsupported"),       # cuda_bf16.h's typedef: hipify-perl 6.3 and HIP have no such name
    ("__hmax2", "", "unsupported"),            # HIP declares it for __hip_bfloat162 only, never for __half2
])
@pytest.mark.slow
def test_table_entries_checked_against_hipify_docs(name, hip, status):
    """Spot checks against HIPIFY's published tables (docs/tables/*.md)."""
    entry = parse_table(TABLE_FILE.read_text(encoding="utf-8")).get(name)
    assert (entry.hip, entry.status) == (hip, status)


def test_table_parser_rejects_malformed_text():
    good = render_table([ApiEntry("cudaMalloc", "hipMalloc", "supported", "function", "runtime")], [("cuda", "x")])
    assert parse_table(good).get("cudaMalloc").converted
    for bad in (good.replace("\tsupported\t", "\tmaybe\t"), good.replace("name\thip", "name\thipp"),
                good + "cudaFree\thipFree\tsupported\tfunction\truntime\n" + "cudaAlloc\t\tunsupported\tfunction\truntime\t\n"):
        with pytest.raises(TableError):
            parse_table(bad)
    assert COLUMNS[0] == "name"


def test_table_ships_in_the_wheel():
    data = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["auditor.rules"]
    assert any(fnmatch("hipify/api_table.tsv", pattern.replace("**/", "*/")) for pattern in data)


# --------------------------------------------------------------------------- hipify-perl

def test_hipify_perl_reader_on_a_file_in_its_format():
    table = read_hipify_perl(SAMPLE_PERL.read_text(), str(SAMPLE_PERL))
    got = {name: (e.hip, e.status, e.kind) for name, e in table.entries.items()}
    assert got["cudaMalloc"] == ("hipMalloc", "supported", "function")
    assert got["cuda_runtime.h"] == ("hip/hip_runtime.h", "supported", "header")
    assert got["cudaThreadSynchronize"] == ("hipDeviceSynchronize", "deprecated", "function")
    assert got["cudaMemcpyToArray"][1] == "removed"                       # removed outranks deprecated
    assert got["cublasCreate"][0] == "hipblasCreate"                      # not the -roc spelling
    assert got["cudaGraphAddMemAllocNode"][:2] == ("", "unsupported")     # experimental: off by default
    assert got["__syncthreads"] == ("__syncthreads", "supported", "device")
    assert got["__reduce_add_sync"] == ("", "unsupported", "device")
    assert got["cudaGraphConditionalHandleCreate"][:2] == ("", "unsupported")
    assert got["cub"] == ("hipcub", "supported", "namespace")
    assert "texture" not in got
    assert table.describe()[0] == f"HIPIFY API table: hipify-perl at {SAMPLE_PERL}"
    assert "(HIP version 9.9.9)" in table.describe()[1]


def test_hipify_perl_table_replaces_the_shipped_one(tmp_path, run_json, capsys):
    from auditor.cli.app import main

    root = write_tree(tmp_path / "repo", {"k.cu": (
        "#include <cuda_runtime.h>\n"
        "void f(float** p, cudaStream_t s) { cudaMalloc((void**)p, 4); cudaStreamGetId(s, nullptr); }\n"
        "__global__ void g(int* x) { __nanosleep(100); atomicAdd(x, 1); }\n")})
    _, shipped = run_json(root, "--fail-on", "never")
    _, installed = run_json(root, "--fail-on", "never", "--hipify-perl", SAMPLE_PERL)
    assert shipped["coverage"]["total"]["converted_refs"] == 4          # hipify-perl 6.3 lacks cudaStreamGetId
    assert installed["coverage"]["total"]["converted_refs"] == 4        # and so does the sample
    assert [u["name"] for u in installed["coverage"]["unconverted"]] == ["__nanosleep"]
    assert installed["coverage"]["table"][0] == f"HIPIFY API table: hipify-perl at {SAMPLE_PERL}"
    assert main(["coverage", "--table-info", "--hipify-perl", str(SAMPLE_PERL)]) == 0
    assert "hipify-perl at" in capsys.readouterr().out


def test_not_a_hipify_perl_is_a_tool_error(tmp_path, capsys):
    from auditor.cli.app import main

    fake = tmp_path / "hipify-perl"
    fake.write_text("#!/bin/sh\necho hello\n")
    assert main(["coverage", "--table-info", "--hipify-perl", str(fake)]) == 2
    assert "no subst(...) mappings found" in capsys.readouterr().err
    with pytest.raises(HipifyPerlError):
        read_hipify_perl("print 1;\n", "x")


# --------------------------------------------------------------------------- rules

def _rule(**match):
    raw = {"id": "RA859", "name": "x", "category": "unsupported_api", "severity": "high", "message": "m",
           "effort": "S", "docs": "d", "flag": ["a"], "ok": ["b"], **match}
    return parse_rule(raw, "test.toml")


def test_hipify_status_rules_are_validated():
    assert _rule(hipify_status="unsupported", hipify_apis=["runtime"]).matcher == "cuda"
    for bad in ({"hipify_status": "maybe"}, {"hipify_names": ["cuda*"], "identifiers": ["x"]},
                {"hipify_status": "unsupported", "identifiers": ["x"]},
                {"hipify_status": "unsupported", "hipify_apis": "runtime"}):
        with pytest.raises(RuleError):
            _rule(**bad)


def test_a_table_without_the_name_means_no_reference():
    table = make_table([ApiEntry("cudaMalloc", "hipMalloc", "supported", "function", "runtime")], [])
    result = scan("void f() { cudaMalloc(0, 0); cudaGraphConditionalHandleCreate(0, 0, 0, 0); }",
                  rulebook=RULEBOOK.with_api_table(table))
    assert (result.coverage.converted, result.coverage.unconverted) == (1, ())


def test_table_names_the_target_library_and_version():
    """Item 20/21: a converted name says which ROCm library it needs and which version added the HIP name."""
    table = parse_table(TABLE_FILE.read_text(encoding="utf-8"))
    assert (table.get("cudnnBackendExecute").target, table.get("cudnnBackendExecute").since) == ("MIOpen", "6.2.0")
    assert table.get("cublasSgemm").target == "hipBLAS"
    assert (table.get("__nv_fp8_e4m3").target, table.get("__nv_fp8_e4m3").since) == ("HIP", "6.2.0")
    assert table.get("__shfl_xor_sync").since == "6.2.0"
    assert {label for label, _ in table.sources} >= {"hipify-perl", "hipify-docs"}


def test_coverage_json_names_the_libraries_converted_references_need(tmp_path, run_json):
    root = write_tree(tmp_path / "repo", {"conv.cpp": (
        "#include <cudnn.h>\n"
        "#include <cublas_v2.h>\n"
        "void f(cudnnHandle_t* h, cublasHandle_t* b) { cudnnCreate(h); cublasCreate(b); cudaDeviceSynchronize(); }\n")})
    _, report = run_json(root, "--fail-on", "never")
    targets = {t["library"]: t["converted_refs"] for t in report["coverage"]["targets"]}
    assert targets["MIOpen"] == 3 and targets["hipBLAS"] == 3 and targets["HIP"] == 1


def test_agreement_script_corrects_hipify_perl_counts_as_documented(tmp_path):
    """scripts/hipify_agreement.py: renames count, *_sync warnings count as supported, a project's own cudaXxx
    macro is dropped, a name only in a comment is no reference, a library name's warning counts, and a bf16
    name HIP spells the same is kept apart (the +bf16 column)."""
    from scripts.hipify_agreement import corrected, hip_bf16_names

    warnings = [(3, 'device function \\"__bfloat1622float2\\": x'), (4, "ROCm HIP identifier: nv_bfloat162"),
                (5, 'device function \\"__shfl_xor_sync\\": x'), (6, "ROCm HIP identifier: cudaMyCheck"),
                (7, 'device function \\"__trap\\": x'), (8, "HIP identifier: CUBLAS_GEMM_DEFAULT_TENSOR_OP")]
    fake = tmp_path / "hipify-perl"
    fake.write_text('print "  cudaStream_t => hipStream_t: 2\\n";\n' + "".join(
        f'print STDERR "a.cu:{n}: warning: unsupported {text}\\n";\n' for n, text in warnings))
    source = tmp_path / "a.cu"
    source.write_text("#include <cuda_bf16.h>\n// two streams\nfloat2 f = __bfloat1622float2(v);\n"
                      "nv_bfloat162 v;\nx = __shfl_xor_sync(m, x, 1);\ncudaMyCheck(x);\n"
                      "// __trap() would stop here\nint algo = CUBLAS_GEMM_DEFAULT_TENSOR_OP;\n")
    known = {"__bfloat1622float2", "nv_bfloat162", "__shfl_xor_sync", "__trap", "CUBLAS_GEMM_DEFAULT_TENSOR_OP"}
    assert corrected(fake, source, known, hip_bf16_names()) == (3, 3, 1)
