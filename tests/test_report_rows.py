"""Findings as report rows: every renderer states the same totals, the rows carry what the renderers show (hours,
group, component, new/known), and one registry maps each --format to its renderer."""
import json
import re

import pytest

from auditor.cli.app import main
from auditor.run.pipeline import audit
from auditor.report.formats import FORMATS, RENDERERS, RenderOptions, render
from auditor.match.rulebook import load_rulebook
from auditor.cli.settings import FORMATS as FLAG_FORMATS
from tests.conftest import FIXTURES

EXAMPLE = FIXTURES.parent / "auditor" / "example"


@pytest.fixture(scope="module")
def example_report():
    return audit([EXAMPLE], load_rulebook(), shown_root="auditor/example")


def test_every_renderer_states_the_json_totals(example_report):
    summary = json.loads(render("json", example_report))["summary"]
    total, guarded = summary["findings"], sum(f.guarded for f in example_report.findings)
    assert (total, guarded) == (22, 2)             # the example: 20 unguarded findings and 2 guarded ones
    phrase = f"{total} findings ({guarded} guarded, {summary['suppressed']} suppressed)"
    assert phrase in render("terminal", example_report, RenderOptions(width=200))
    assert phrase in render("markdown", example_report)
    assert phrase in render("github", example_report)
    html = render("html", example_report)
    assert re.search(rf'<h2>Findings</h2>\s*<p class="figure">{total}</p>', html)
    chips = re.findall(r'class="sev sev-\w+" title="\w+, would break on ROCm \(live\)">(\d+) ', html)
    assert sum(map(int, chips)) == summary["would_break"] == sum(f.disposition == "live"
                                                               for f in example_report.findings)
    assert total == sum(summary["by_severity"].values())
    sarif = json.loads(render("sarif", example_report))["runs"][0]["properties"]
    verify = sum(f.disposition == "verify on hardware" for f in example_report.findings)
    assert sarif["resultsTotal"] == summary["would_break"] + verify   # what breaks, and what to verify
    assert sarif["resultsTotal"] + sarif["notBreakingLeftOut"] == total


def test_rows_carry_their_hours_group_and_component(example_report):
    report = example_report
    assert report.groups and all(0 <= f.group < len(report.groups) for f in report.findings)
    for number, group in enumerate(report.groups):
        sites = [report.findings[i] for i in group.indexes]
        assert all(f.group == number and f.rule_id == group.rule_id and f.disposition == group.disposition
                   for f in sites)
        assert group.high_hours == round(sum(f.hours[1] for f in sites), 2)
    data = json.loads(render("json", report))
    by_site = {(f["path"], f["line"], f["rule"]): f for f in data["findings"]}
    for f in report.findings:
        row = by_site[(f.path, f.span.line, f.rule_id)]
        assert row["effort_hours"] == [round(f.hours[0], 2), round(f.hours[1], 2)]
        assert row["new"] is None                  # no gate in use
    first, second = [f for f in report.findings if f.path == "demo_app/serve.py" and f.rule_id == "RA100"]
    assert (first.span.line, first.hours) == (6, (40.0, 160.0))      # replacing tensorrt-llm, paid once
    assert (second.span.line, second.hours) == (7, (0.0, 0.0))       # the same rule again in the same file
    assert first.component == second.component == "."


def test_json_groups_are_the_groups_every_renderer_uses(example_report):
    data = json.loads(render("json", example_report))
    assert [(g["rule"], g["key"], g["disposition"], g["count"]) for g in data["groups"]] == [
        (g.rule_id, g.key, g.disposition, g.count) for g in example_report.groups]
    assert sum(g["count"] for g in data["groups"]) == data["summary"]["findings"]
    guarded = [g for g in data["groups"] if g["disposition"] == "guarded"]
    assert guarded and all(g["guarded"] for g in guarded)


def test_one_registry_names_every_format_the_flag_accepts():
    assert FLAG_FORMATS == FORMATS == tuple(RENDERERS)
    assert set(FORMATS) == {"terminal", "json", "sarif", "github", "markdown", "html"}


def test_new_and_known_are_on_the_rows_under_a_baseline(tmp_path, capsys):
    (tmp_path / "a.py").write_text("import pynvml\n")
    baseline = tmp_path / "baseline.json"
    assert main(["baseline", str(tmp_path), "-o", str(baseline)]) == 0
    (tmp_path / "b.py").write_text("import pynvml\n")
    capsys.readouterr()
    assert main([str(tmp_path), "--baseline", str(baseline), "--format", "json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert {(f["path"], f["new"]) for f in data["findings"]} == {("a.py", False), ("b.py", True)}
    assert (data["gate"]["new"], data["gate"]["known"]) == (1, 1)
    assert sorted((g["key"], g["new"]) for g in data["groups"]) == [("a.py", 0), ("b.py", 1)]
