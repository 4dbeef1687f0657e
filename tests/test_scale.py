"""Huge trees stay readable: findings grouped by rule and file or by rule and subject across generated files, the JSON and SARIF lists capped with exact
counts, and partial parses listed with their reason."""
import pytest
import dataclasses
import json

from auditor.judge.analysis.assemble import build_report
from auditor.report.json import FINDINGS_LISTED, SITES_PER_GROUP, render_json
from auditor.report.sarif import MAX_RESULTS, sarif_dict
from auditor.match.rulebook import load_rulebook
from auditor.run.scan.file import scan_file
from auditor.types import SourceFile
from tests.conftest import write_tree

pytestmark = pytest.mark.slow   # large generated trees

RULEBOOK = load_rulebook()
KERNEL_LINE = "  v[{i} * {width}] = __shfl_xor_sync(0xffffffff, v[{i}], threadIdx.x % 32);"


def generated_kernel(lines: int, width: int = 64) -> str:
    body = "\n".join(KERNEL_LINE.format(i=i, width=width) for i in range(lines))
    return f"#include <cuda_runtime.h>\n__global__ void k_w{width}(float* v) {{\n{body}\n}}\n"


def scanned(root, files: dict[str, str]):
    write_tree(root, files)
    results = [scan_file(SourceFile(path, str(root / path), "cuda"), RULEBOOK) for path in sorted(files)]
    return build_report(str(root), results, RULEBOOK)


def test_one_rule_on_many_lines_of_a_file_is_one_group_with_every_site(tmp_path):
    report = scanned(tmp_path, {"csrc/reduce.cu": generated_kernel(40)})
    groups = report.groups
    assert sorted((g.rule_id, g.count, g.paths) for g in groups) == [
        ("RA200", 40, ("csrc/reduce.cu",)), ("RA203", 40, ("csrc/reduce.cu",))]
    shfl = next(g for g in groups if g.rule_id == "RA200")
    assert [report.findings[i].span.line for i in shfl.indexes] == list(range(3, 43))
    assert all(report.findings[i].group == groups.index(shfl) for i in shfl.indexes)


def test_one_subject_in_eight_generated_files_is_one_group_in_fewer_files_one_per_file(tmp_path):
    few = scanned(tmp_path / "few", {"gen/a.cu": generated_kernel(2), "gen/b.cu": generated_kernel(2, 128)})
    shfl = sorted((g.across_files, g.key, len(g.paths), g.count) for g in few.groups if g.rule_id == "RA200")
    assert shfl == [(False, "gen/a.cu", 1, 2), (False, "gen/b.cu", 1, 2)]
    report = scanned(tmp_path / "many", {f"gen/kernel_hdim{64 + n}.cu": generated_kernel(2, 64 + n) for n in range(8)})
    shfl = [(g.across_files, g.key, len(g.paths), g.count) for g in report.groups if g.rule_id == "RA200"]
    assert shfl == [(True, "0xffffffff", 8, 16)]
    assert len(report.findings) == sum(g.count for g in report.groups)
    data = json.loads(render_json(report))
    spread = next(g for g in data["groups"] if g["rule"] == "RA200")
    assert (spread["key"], spread["files"], spread["count"], spread["disposition"], spread["across_files"]) == (
        "0xffffffff", 8, 16, "live", True)


def hundred_thousand_findings(tmp_path):
    """One generated file (2,000 findings) scanned for real, its result repeated as 50 generated files."""
    write_tree(tmp_path, {"gen/k.cu": generated_kernel(1000)})
    one = scan_file(SourceFile("gen/k.cu", str(tmp_path / "gen/k.cu"), "cuda"), RULEBOOK)
    results = []
    for n in range(50):
        path = f"gen/kernel_{n}.cu"
        findings = tuple(dataclasses.replace(f, path=path) for f in one.findings)
        results.append(dataclasses.replace(one, path=path, findings=findings))
    return build_report(str(tmp_path), results, RULEBOOK)


def test_the_json_of_100000_findings_stays_small_and_its_counts_exact(tmp_path):
    report = hundred_thousand_findings(tmp_path)
    text = render_json(report)
    assert len(text.encode()) < 12_000_000
    data = json.loads(text)
    summary = data["summary"]
    assert summary["findings"] == 100_000 == sum(summary["by_severity"].values())
    assert summary["findings_listed"] == len(data["findings"]) == FINDINGS_LISTED
    assert summary["findings_truncated"] is True
    assert summary["groups"] == 2
    assert sorted((g["rule"], g["count"], g["files"], len(g["sites"])) for g in data["groups"]) == [
        ("RA200", 50_000, 50, SITES_PER_GROUP), ("RA203", 50_000, 50, SITES_PER_GROUP)]
    # the listing gives every group its first sites before more of one group
    listed = {(f["path"], f["line"], f["rule"]) for f in data["findings"]}
    assert all((s["path"], s["line"], g["rule"]) in listed for g in data["groups"] for s in g["sites"])


def test_sarif_keeps_one_result_per_site_up_to_githubs_limit_and_says_so(tmp_path):
    report = hundred_thousand_findings(tmp_path)
    run = sarif_dict(report)["runs"][0]
    assert len(run["results"]) == MAX_RESULTS == 25_000
    assert run["properties"]["resultsTotal"] == 100_000
    assert run["properties"]["resultsTruncated"] is True
    note = run["invocations"][0]["toolExecutionNotifications"][0]
    assert note["level"] == "warning" and "100,000 findings" in note["message"]["text"]
    # the most severe are kept: RA200 (the 32-lane mask) is high, RA203 (% 32) is medium
    severities = {r["properties"]["severity"] for r in run["results"]}
    assert severities == {report.rules["RA200"].severity.label}


def test_a_small_report_lists_everything(tmp_path):
    report = scanned(tmp_path, {"csrc/reduce.cu": generated_kernel(3)})
    data = json.loads(render_json(report))
    assert data["summary"]["findings_truncated"] is False
    assert data["summary"]["findings_listed"] == data["summary"]["findings"] == len(data["findings"]) == 6
    assert len(sarif_dict(report)["runs"][0]["results"]) == 6


def test_partially_parsed_files_are_listed_with_the_reason(tmp_path, run_json):
    write_tree(tmp_path, {
        "broken.cu": "__global__ void k(float* v) {\n  v[0] = __shfl_sync(0xffffffff, v[0], 1);\n  int x = ;;; {{\n",
        "fine.cu": "__global__ void k() {}\n",
    })
    (tmp_path / "latin.cu").write_bytes("// caf\xe9\n__global__ void k() {}\n".encode("latin-1"))
    _, data = run_json(str(tmp_path))
    assert data["summary"]["files_partial"] == 2
    assert data["partial"] == [
        {"path": "broken.cu", "reason": "syntax errors on lines 1, 3: the code there was not scanned"},
        {"path": "latin.cu", "reason": "Latin-1 (not valid UTF-8)"},
    ]


def test_the_html_page_of_100000_findings_stays_under_20_mb(tmp_path):
    from auditor.report.html import render_html

    report = hundred_thousand_findings(tmp_path)
    page = render_html(report)
    assert len(page.encode()) < 20_000_000
    assert "100,000" in page


SHFL_AT = "__device__ float {name}(float v) {{ return __shfl_xor_sync(0xffffffff, v, 16, 32); }}\n"


def ten_megabyte_kernel_file(root) -> str:
    """A generated .cu of 180,000 one-line kernels (11.8 MB), with a finding on its second and its last line."""
    body = "".join(f"__global__ void k{n}(float* v) {{ v[threadIdx.x] *= {n}.0f; }}\n" for n in range(180_000))
    text = "#include <cuda_runtime.h>\n" + SHFL_AT.format(name="first") + body + SHFL_AT.format(name="last")
    write_tree(root, {"gen/huge.cu": text, "small.cu": SHFL_AT.format(name="small")})
    return text


def test_a_ten_megabyte_generated_file_is_scanned_to_its_last_line(tmp_path, run_json):
    text = ten_megabyte_kernel_file(tmp_path)
    # a budget no busy machine reaches: this checks the scan reaches the last line, not how fast it gets there
    code, report = run_json(tmp_path, "--no-cache", "--fail-on", "never", "--time-budget", "900")
    assert code == 0
    lines = {(f["path"], f["line"]) for f in report["findings"] if f["rule"] == "RA200"}
    assert lines == {("gen/huge.cu", 2), ("gen/huge.cu", text.count("\n")), ("small.cu", 1)}
    assert report["errors"] == []


def test_a_file_over_the_size_limit_is_skipped_with_a_message_naming_the_limit(tmp_path, run_json):
    ten_megabyte_kernel_file(tmp_path)
    code, report = run_json(tmp_path, "--no-cache", "--max-file-size", "4M", "--fail-on", "never")
    assert code == 0
    assert report["errors"] == [{"path": "gen/huge.cu",
                                 "message": "skipped: 11.8 MB is over the 4 MB file size limit"}]
    assert {(f["path"], f["line"]) for f in report["findings"] if f["rule"] == "RA200"} == {("small.cu", 1)}
