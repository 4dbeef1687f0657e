"""Every count is of what breaks: the JSON summary's live tallies, the `-q` line, SARIF's results and the HTML
page (read in Chromium as a lead reads it) count one live set, the one the verdict and the exit code weigh;
everything else is a note counted by its disposition. On a ready, a needs-port, a blocked and a Python-only
fixture."""
import json
import re

import pytest

from auditor.cli.app import main
from tests.conftest import FIXTURES
from tests.test_html_report import _Page, browser  # noqa: F401  (the Chromium fixture)

TREES = {"portable_repo": "ready", "cmake_cuda_lib": "needs-port", "torch_extension": "blocked",
         "llm_serving": "blocked"}     # llm_serving has no C++ or CUDA source: the Python-only one
BASE = ["--no-progress", "--no-html", "-j", "1"]


def _reports(tmp_path, tree, capsys) -> tuple[int, dict, dict, str]:
    path = FIXTURES / tree
    out = tmp_path / tree.replace("/", "_")
    out.mkdir()
    code = main([str(path), "--json", str(out / "r.json"), "--sarif", str(out / "r.sarif"), "--html",
                 str(out / "r.html"), "-q", *BASE])
    quiet = capsys.readouterr().out
    return (code, json.loads((out / "r.json").read_text()), json.loads((out / "r.sarif").read_text()),
            quiet), out / "r.html"


@pytest.mark.parametrize("tree", sorted(TREES))
def test_json_quiet_sarif_and_page_count_one_live_set(tree, tmp_path, capsys, browser):  # noqa: F811
    (code, report, sarif, quiet), html = _reports(tmp_path, tree, capsys)
    summary = report["summary"]
    assert summary["verdict"] == TREES[tree]
    live = [f for f in report["findings"] if f["would_break"]]
    by_severity = {s: sum(f["severity"] == s for f in live) for s in summary["live_by_severity"]}
    assert summary["live_by_severity"] == by_severity and sum(by_severity.values()) == summary["would_break"]
    assert sum(summary["live_by_category"].values()) == len(live)
    notes = len(report["findings"]) - len(live)
    assert sum(summary["notes_by_disposition"].values()) == notes
    assert sum(summary["by_severity"].values()) == summary["findings"]       # the documented meaning, kept
    assert code == (1 if any(f["severity"] in ("high", "critical") for f in live) else 0)

    head = next(line for line in quiet.splitlines() if line.startswith("rocm-audit: "))
    assert f"{len(live)} would break on ROCm" in head
    for severity, n in by_severity.items():
        assert (f"{n} {severity}" in head) == bool(n), (severity, head)

    results = sarif["runs"][0]["results"]
    breaking = [r for r in results if r["properties"]["breaksOnRocm"]]
    assert {s: sum(r["properties"]["severity"] == s for r in breaking) for s in by_severity} == by_severity
    assert all(r["properties"]["disposition"] == "verify on hardware" for r in results if r not in breaking)
    assert len(results) + sarif["runs"][0]["properties"]["notBreakingLeftOut"] == summary["findings"]

    page = _Page(browser, html).page
    table = page.locator("#live-counts")
    if live:
        heads = [h.text_content().strip() for h in table.locator("thead th").all()][1:]
        cells = [[c.inner_text() for c in row.locator("td").all()][1:] for row in table.locator("tbody tr").all()]
        page_counts = {s: sum(int(row[i] or 0) for row in cells) for i, s in enumerate(heads)}
        assert page_counts == by_severity
        chips = page.locator("p.sevs .sev").all_inner_texts()
        assert sum(int(c.split()[0]) for c in chips) == len(live)
    else:
        assert table.count() == 0
    rows = {r.get_attribute("data-component"): r for r in page.locator("#components-table tbody tr").all()}
    for component in report["components"]:
        row = rows[component["path"] if component["path"] != "." else "(root)"]
        count = int(row.locator("td").last.inner_text().replace(",", ""))
        assert count == component["live_findings"]
        if component["verdict"] == "blocked":
            assert count > 0                                  # never "blocked" beside a 0
    for row in page.locator("#hotspots tbody tr").all():      # a file that costs hours says what they pay for
        cells = row.locator("td").all_inner_texts()
        assert int(cells[1]) > 0 or cells[2] == "HIPIFY review", cells
    review = page.locator("#plan .plan-rest li", has_text="Run HIPIFY on")
    if review.count():
        files = int(re.search(r"Run HIPIFY on ([\d,]+) file", review.inner_text()).group(1).replace(",", ""))
        assert files == report["effort"]["hipify_review_files"] > 0
    if summary["verdict"] == "ready" and report["effort"]["high_days"] > 0:
        assert "nothing breaks" in page.locator("#effort-for").inner_text().lower()


def test_long_fix_lines_wrap_at_80_columns_and_are_never_cut(capsys):
    main([str(FIXTURES / "cmake_cuda_lib"), *BASE])
    lines = capsys.readouterr().out.splitlines()
    fixes = [i for i, line in enumerate(lines) if line.lstrip().startswith("fix: ")]
    assert fixes and all(len(line) <= 80 for line in lines)
    for i in fixes:   # a fix and its continuation lines end in a full sentence, not an ellipsis
        block = [lines[i]] + [line for line in lines[i + 1:i + 6] if line.startswith(" " * 9)]
        assert not block[-1].rstrip().endswith("…"), block
