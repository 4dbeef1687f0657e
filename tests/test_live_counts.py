"""Every count is of what breaks: the JSON summary's live tallies, the `-q` line, SARIF's results and the HTML
page (read in Chromium as a lead reads it) count one live set, the one the verdict and the exit code weigh;
everything else is a note counted by its disposition. On a ready, a needs-port, a blocked and a Python-only
fixture."""
import json
import os
from pathlib import Path

import pytest

from auditor.cli.app import main
from scripts.check_live_equalities import Outputs, audit, disagreements, page_numbers
from tests.conftest import FIXTURES
from tests.test_html_report import _Page, browser  # noqa: F401  (the Chromium fixture)

TREES = {"portable_repo": "ready", "cmake_cuda_lib": "needs-port", "torch_extension": "blocked",
         "llm_serving": "blocked"}     # llm_serving has no C++ or CUDA source: the Python-only one
BASE = ["--no-progress", "--no-html", "-j", "1"]
REAL_TREES = "ROCM_AUDIT_LIVE_TREES"


def _outputs(tmp_path, path, capsys) -> Outputs:
    out = tmp_path / path.name
    out.mkdir()
    code = main([str(path), "--json", str(out / "r.json"), "--sarif", str(out / "r.sarif"), "--html",
                 str(out / "r.html"), "-q", *BASE])
    return Outputs(code, json.loads((out / "r.json").read_text()), json.loads((out / "r.sarif").read_text()),
                   capsys.readouterr().out, out / "r.html")


def _page(browser, html):  # noqa: F811
    return page_numbers(_Page(browser, html).page)


# llm_serving (verify items, a plan, notes of four dispositions) stays in the fast run; the full run reads all four
@pytest.mark.parametrize("tree", [pytest.param(t, marks=() if t == "llm_serving" else pytest.mark.slow)
                                  for t in sorted(TREES)])
def test_json_quiet_sarif_and_page_count_one_live_set(tree, tmp_path, capsys, browser):  # noqa: F811
    out = _outputs(tmp_path, FIXTURES / tree, capsys)
    assert out.report["summary"]["verdict"] == TREES[tree]
    page = _page(browser, out.html)
    assert disagreements(out, page) == []
    if out.report["summary"]["would_break"]:
        assert page["counts"] and page["chips"]
    if out.report["summary"]["verdict"] == "ready" and out.report["effort"]["high_days"] > 0:
        assert "nothing breaks" in _Page(browser, out.html).page.locator("#effort-for").inner_text().lower()


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get(REAL_TREES), reason=f"{REAL_TREES}: real trees to check, joined by {os.pathsep}")
@pytest.mark.parametrize("index", range(8))
def test_real_trees_count_one_live_set(index, tmp_path, browser):  # noqa: F811
    trees = os.environ[REAL_TREES].split(os.pathsep)
    if index >= len(trees):
        pytest.skip("fewer trees given")
    out = audit(Path(trees[index]), tmp_path)
    assert disagreements(out, _page(browser, out.html)) == []


def test_long_fix_lines_wrap_at_80_columns_and_are_never_cut(capsys):
    main([str(FIXTURES / "cmake_cuda_lib"), *BASE])
    lines = capsys.readouterr().out.splitlines()
    fixes = [i for i, line in enumerate(lines) if line.lstrip().startswith("fix: ")]
    assert fixes and all(len(line) <= 80 for line in lines)
    for i in fixes:   # a fix and its continuation lines end in a full sentence, not an ellipsis
        block = [lines[i]] + [line for line in lines[i + 1:i + 6] if line.startswith(" " * 9)]
        assert not block[-1].rstrip().endswith("…"), block
