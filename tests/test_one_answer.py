"""One definition of "would break on ROCm" everywhere (issue: the exit code and `-q` said 1,600 findings would
break on a project the verdict calls READY). On fixtures that between them have every kind of disposition, the
exit code, the `-q` line, the terminal summary, JSON, SARIF levels and GitHub annotations all count the same
findings: those with disposition `live` (and `verify on hardware` with --fail-on-verify)."""
import collections
import json
import re
import shutil

import pytest

from auditor.cli.app import main
from auditor.judge.dispositions import DISPOSITIONS
from tests.conftest import FIXTURES, write_tree

pytestmark = pytest.mark.slow   # every output format over the fixtures

TREES = ["llm_serving", "cmake_cuda_lib", "rocm_paths/p1_backend_switch", "rocm_paths/p2_cmake_shim",
         "rocm_paths/p3_op_builders", "rocm_paths/p3_torch_extension_redefinitions",
         "rocm_paths/p5_python_dispatch", "rocm_paths/p7_makefile_optin", "rocm_paths/p7_env_switch_cuda_only_ext",
         "rocm_paths/decoy_portable_optional"]
SEVERITIES = ["info", "low", "medium", "high", "critical"]
BASE = ["--no-progress", "--no-html", "-j", "1"]


def _run(capsys, *args) -> tuple[int, str]:
    code = main([*map(str, args), *BASE])
    return code, capsys.readouterr().out


def _at_least(severity: str, floor: str) -> bool:
    return SEVERITIES.index(severity) >= SEVERITIES.index(floor)


def test_the_fixtures_cover_every_common_disposition(capsys):
    seen = set()
    for tree in TREES:
        _, out = _run(capsys, FIXTURES / tree, "--format", "json")
        seen |= set(json.loads(out)["summary"]["by_disposition"])
    assert seen >= {"live", "verify on hardware", "guarded", "optional", "optional feature", "ops", "shim-mapping",
                    "CUDA branch of a build script", "cuda-only source, ROCm builds an alternative"}


# A ggml-shaped project: the HIP build compiles the CUDA sources with GGML_USE_HIP defined; a SYCL backend beside
# it; a kernel no build lists; CI for both vendors.
GGML_SHAPED = {
    "CMakeLists.txt": "cmake_minimum_required(VERSION 3.21)\nproject(g LANGUAGES C CXX)\n"
                      "if(GGML_HIP)\n  add_compile_definitions(GGML_USE_HIP)\n  add_subdirectory(src/ggml-hip)\n"
                      "elseif(GGML_CUDA)\n  add_subdirectory(src/ggml-cuda)\nendif()\n"
                      "if(GGML_SYCL)\n  add_subdirectory(src/ggml-sycl)\nendif()\n",
    "src/ggml-hip/CMakeLists.txt": "enable_language(HIP)\nfile(GLOB SRCS \"../ggml-cuda/*.cu\")\n"
                                   "add_library(ggml-hip ${SRCS})\n",
    "src/ggml-cuda/CMakeLists.txt": "enable_language(CUDA)\nfile(GLOB SRCS \"*.cu\")\nadd_library(ggml-cuda ${SRCS})\n",
    "src/ggml-cuda/common.cu": "__device__ float reduce(float v) {\n#ifndef GGML_USE_HIP\n"
                               "    return __shfl_xor_sync(0xffffffff, v, 1);\n#else\n    return __shfl_xor(v, 1);\n"
                               "#endif\n}\n",
    "src/ggml-sycl/CMakeLists.txt": "add_library(ggml-sycl s.cpp)\n",
    "src/ggml-sycl/s.cpp": "float f(float v) { return __shfl_xor_sync(0xffffffff, v, 1) + warpSize; }\n",
    "src/unused/old.cu": "__global__ void old(float *p) { p[0] = __shfl_xor_sync(0xffffffff, p[1], 1); }\n",
    ".github/workflows/ci.yml": "name: ci\non: [push]\njobs:\n  rocm:\n    runs-on: ubuntu-latest\n"
                                "    container: rocm/dev-ubuntu-22.04:6.2\n    steps:\n"
                                "      - run: cmake -B b -DGGML_HIP=ON && cmake --build b\n",
}


@pytest.fixture(scope="module")
def every_disposition(tmp_path_factory):
    """One tree with a finding of every disposition: the ROCm-path fixtures side by side, the serving fixture
    with a developer script outside its package, and the ggml-shaped project above."""
    root = tmp_path_factory.mktemp("every") / "repo"
    for tree in TREES[2:-1] + ["llm_serving"]:
        shutil.copytree(FIXTURES / tree, root / tree.rsplit("/", 1)[-1])
    write_tree(root, {"llm_serving/profile_gpu.py": "import pynvml\npynvml.nvmlInit()\n"})
    write_tree(root / "ggml_shaped", GGML_SHAPED)
    return root


def test_one_tree_has_every_disposition(every_disposition, capsys):
    _, out = _run(capsys, every_disposition, "--format", "json")
    data = json.loads(out)
    assert set(data["summary"]["by_disposition"]) == set(DISPOSITIONS)
    where = {(f["path"], f["line"]): f["disposition"] for f in data["findings"]}
    assert where[("ggml_shaped/src/ggml-cuda/common.cu", 3)] == "guarded by a project macro"
    assert where[("ggml_shaped/src/unused/old.cu", 1)] == "not built"
    assert where[("ggml_shaped/src/ggml-sycl/s.cpp", 1)] == "other-vendor-backend"
    assert where[("llm_serving/profile_gpu.py", 1)] == "repo tooling"


def test_every_disposition_agrees_everywhere_and_on_the_page(every_disposition, capsys, tmp_path):
    data = _agree(capsys, every_disposition)
    live = [f for f in data["findings"] if f["disposition"] == "live"]
    html = tmp_path / "report.html"
    main([str(every_disposition), "--html", str(html), "--format", "json", "-o", str(tmp_path / "r.json"),
          "--no-progress", "-j", "1"])
    page = html.read_text(encoding="utf-8")
    assert f'data-verdict="{data["summary"]["verdict"]}"' in page
    chips = re.findall(r'class="sev sev-(\w+)" title="\w+, would break on ROCm \(live\)">(\d+) ', page)
    assert sum(int(n) for _, n in chips) == len(live) == data["summary"]["would_break"]
    assert f"{len(live)} would break on ROCm" in page
    shown = page.split('<script type="application/json" id="report-data">', 1)[1].split("</script>", 1)[0]
    per_disposition: collections.Counter = collections.Counter()
    for group in json.loads(shown)["groups"]:
        per_disposition[group["disp"]] += group["n"]
    assert per_disposition == collections.Counter(data["summary"]["by_disposition"])


@pytest.mark.parametrize("tree", TREES)
def test_exit_code_quiet_line_summary_json_sarif_and_annotations_agree(tree, capsys):
    _agree(capsys, FIXTURES / tree)


def _agree(capsys, path) -> dict:
    """The exit code, `-q`, the terminal summary, JSON, SARIF and GitHub annotations count the same findings."""
    code, out = _run(capsys, path, "--format", "json")
    data = json.loads(out)
    findings = data["findings"]
    assert not data["summary"]["findings_truncated"]
    live = [f for f in findings if f["disposition"] == "live"]
    failing = [f for f in live if _at_least(f["severity"], "high")]
    assert [f["would_break"] for f in findings] == [f["disposition"] == "live" for f in findings]
    assert data["summary"]["would_break"] == len(live)
    assert code == (1 if failing else 0)
    if data["summary"]["verdict"] == "ready":   # READY exits 0 unless a live finding reaches --fail-on
        assert code == 0 or failing
    for f in findings:   # `guarded` the flag and the disposition are one thing
        assert f["guarded"] == (f["disposition"] == "guarded"), f

    quiet_code, quiet = _run(capsys, path, "-q")
    assert quiet_code == code
    head = [line for line in quiet.splitlines() if line.startswith("rocm-audit: ")][0]
    if failing:
        assert head.startswith(f"rocm-audit: {len(failing)} finding(s) at or above high would break on ROCm")
    else:
        assert head.startswith("rocm-audit: ok, nothing at or above high")
    rest = len(findings) - len(live)
    assert f"{len(live)} would break on ROCm" in head
    if rest:
        assert f"{rest} ha" in head and "a ROCm alternative or" in head

    _, terminal = _run(capsys, path, "--format", "terminal")
    assert f"{len(live)} would break on ROCm" in " ".join(terminal.split())

    _, sarif = _run(capsys, path, "--format", "sarif")
    results = json.loads(sarif)["runs"][0]["results"]
    verify = [f for f in findings if f["disposition"] == "verify on hardware"]
    assert len(results) == len(live) + len(verify)    # by default, what breaks and what to verify on hardware
    assert sorted(r["properties"]["severity"] for r in results if r["properties"]["breaksOnRocm"]) == sorted(
        f["severity"] for f in live)
    assert all(r["level"] == "warning" for r in results if not r["properties"]["breaksOnRocm"])
    _, every = _run(capsys, path, "--format", "sarif", "--sarif-all")
    results = json.loads(every)["runs"][0]["results"]
    assert len(results) == len(findings)
    for result in results:
        breaks = result["properties"]["disposition"] == "live"
        assert result["properties"]["breaksOnRocm"] == breaks
        if not breaks:
            assert result["level"] == ("warning" if result["properties"]["disposition"] == "verify on hardware"
                                       else "note") and "Not breaking on ROCm: " in result["message"]["text"]
        assert not re.search(r"[^.]\.\.(\s|$)", result["message"]["text"])

    _, github = _run(capsys, path, "--format", "github")
    errors = [line for line in github.splitlines() if line.startswith("::error ")]
    warnings = [line for line in github.splitlines() if line.startswith("::warning ") and "rocm-audit RA" in line]
    assert len(errors) == min(len(failing), 10)
    assert len(warnings) == min(len([f for f in live if f not in failing and f["severity"] != "info"]), 10)
    return data


def test_fail_on_verify_counts_findings_to_verify_on_hardware(capsys):
    path = FIXTURES / "rocm_paths" / "p5_python_dispatch"   # READY: verify on hardware and optional, nothing live
    code, out = _run(capsys, path, "--format", "json", "--fail-on", "low")
    data = json.loads(out)
    verify = [f for f in data["findings"] if f["disposition"] == "verify on hardware"]
    assert data["summary"]["verdict"] == "ready" and verify and code == 0 and data["summary"]["would_break"] == 0
    code, out = _run(capsys, path, "--format", "json", "--fail-on", "low", "--fail-on-verify")
    data = json.loads(out)
    assert data["summary"]["would_break"] == len(verify) and data["summary"]["fail_on_verify"] is True
    assert code == (1 if any(_at_least(f["severity"], "low") for f in verify) else 0) == 1
    code, quiet = _run(capsys, path, "-q", "--fail-on", "low", "--fail-on-verify")
    assert code == 1 and f"{len(verify)} would break on ROCm" in quiet


def test_baseline_and_diff_base_weigh_the_same_findings(tmp_path, capsys):
    path = FIXTURES / "llm_serving"
    baseline = tmp_path / "baseline.json"
    assert main(["baseline", str(path), "-o", str(baseline), *BASE]) == 0
    capsys.readouterr()
    entries = json.loads(baseline.read_text())["entries"]
    _, out = _run(capsys, path, "--format", "json")
    live = [f for f in json.loads(out)["findings"] if f["disposition"] == "live"]
    assert sum(e["count"] for e in entries) == len(live)
    code, out = _run(capsys, path, "--format", "json", "--baseline", baseline)
    data = json.loads(out)
    assert code == 0 and data["gate"]["new"] == 0 and data["gate"]["known"] == len(live)
    assert all(f["new"] is False for f in data["findings"] if f["would_break"])


def test_exit_zero_keeps_the_report_and_exits_0(capsys):
    code, quiet = _run(capsys, FIXTURES / "llm_serving", "-q", "--exit-zero")
    assert code == 0 and "would break on ROCm" in quiet


def test_statistics_counts_breaking_findings_per_rule(capsys):
    code, out = _run(capsys, FIXTURES / "llm_serving", "--statistics")
    _, data = _run(capsys, FIXTURES / "llm_serving", "--format", "json")
    live = [f for f in json.loads(data)["findings"] if f["disposition"] == "live"]
    rows = [line.split("\t") for line in out.splitlines() if not line.startswith("#")]
    assert sum(int(row[0]) for row in rows) == len(live)
    assert {row[1] for row in rows} == {f["rule"] for f in live}
    assert code == 1 and out.splitlines()[-1].startswith(f"# {len(live)} would break on ROCm")
