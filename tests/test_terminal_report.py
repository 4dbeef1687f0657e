"""The terminal summary as a CI log shows it (80 columns, not a TTY): the plan first, one line a rule, no
squeezed table columns, about 60 lines for any tree; `--verbose` for every group; `rocm-audit rules` as a
compact table. Plus the grouping and text helpers the summary and the HTML page share."""
import json
import re

import pytest

from auditor.cli.app import main
from auditor.judge.analysis.groups import group_findings
from auditor.report.text import first_sentence, inline_html, plain, sentence
from auditor.types import Finding, Severity, Span
from tests.conftest import FIXTURES, write_tree

PINNED_LLM_SERVING_LINES = 46   # fix lines wrap whole at 80 columns (a cut fix loses its point)


def _terminal(monkeypatch, capsys, args, columns=80) -> list[str]:
    monkeypatch.setenv("COLUMNS", str(columns))
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    main([*args, "--no-progress", "--no-html", "-j", "1"])
    return capsys.readouterr().out.splitlines()


def _narrowest_column(lines: list[str], width: int) -> int:
    """The narrowest room any text gets: a line's last cell (after a run of two or more spaces, or after
    the indent) has `width - start` columns to wrap in."""
    room = width
    for line in lines:
        starts = [m.end() for m in re.finditer(r"(?:^ +| {2,})(?=\S)", line)]
        if starts:
            room = min(room, width - max(starts))
    return room


def test_80_column_summary_is_pinned_and_never_squeezes_a_column(monkeypatch, capsys):
    lines = _terminal(monkeypatch, capsys, [str(FIXTURES / "llm_serving")])
    assert len(lines) == PINNED_LLM_SERVING_LINES, "\n".join(lines)
    assert max(len(line) for line in lines) <= 80
    assert _narrowest_column(lines, 80) >= 20
    assert not any(ch in "".join(lines) for ch in "│┃┏└")          # no table boxes to squeeze
    assert lines[1].startswith("Verdict: BLOCKED")
    plan_at = lines.index("Migration plan: 8-29 engineer-days")
    assert lines[plan_at + 1].startswith(" 1. critical BLOCKS Replace tensorrt_llm (RA100)")   # as the code names it
    assert not [line for line in lines if re.search(r"[^.]\.\.(\s|$)", line)]   # no doubled full stops


@pytest.mark.slow
def test_a_large_tree_stays_about_sixty_lines_and_verbose_lists_every_group(monkeypatch, capsys, tmp_path):
    tree = {f"kernels/k{i:03d}.cu": "".join(f"__device__ int f{i}_{j}(int m) {{ return __shfl_xor_sync("
                                           f"0xffffffff, m, {j % 16}) + (threadIdx.x & 31); }}\n"
                                           for j in range(6)) for i in range(60)}
    for i in range(30):
        tree[f"pkg{i}/mod.py"] = "import pynvml\nimport torch\n\npynvml.nvmlInit()\nprint(torch.version.cuda.split('.'))\n"
        tree[f"pkg{i}/setup.py"] = "from setuptools import setup\nsetup(name='p%d')\n" % i
    write_tree(tmp_path, tree)
    short = _terminal(monkeypatch, capsys, [str(tmp_path)])
    assert len(short) <= 62
    assert max(len(line) for line in short) <= 80
    assert _narrowest_column(short, 80) >= 20
    assert any(line.startswith("Components (31)") for line in short)
    assert any("more (--verbose lists them)" in line for line in short)
    long = _terminal(monkeypatch, capsys, [str(tmp_path), "--verbose"], columns=120)
    at = long.index(next(line for line in long if line.startswith("All finding groups (")))
    count = int(re.search(r"\((\d+)\)", long[at]).group(1))
    listed = long[at + 1:at + 1 + count]
    assert count >= 4 and all(re.match(r"  (critical|high|medium|low|info) +RA\d{3} ", line) for line in listed)
    assert any(line.startswith("Components (31)") for line in long) and len(long) > len(short)


def test_wide_terminal_uses_the_width(monkeypatch, capsys):
    lines = _terminal(monkeypatch, capsys, [str(FIXTURES / "llm_serving")], columns=140)
    assert 100 < max(len(line) for line in lines) <= 140
    assert len(lines) <= PINNED_LLM_SERVING_LINES


def test_rules_is_a_compact_table_with_category_and_json(capsys):
    assert main(["rules"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["id", "category", "severity", "name"]
    rows = [line.split() for line in lines[1:-1]]
    assert all(len(row) == 4 and re.fullmatch(r"RA\d{3}", row[0]) for row in rows)
    assert lines[-1].startswith(f"{len(rows)} rules")
    assert main(["rules", "--category", "warp_size_assumption"]) == 0
    warp = capsys.readouterr().out.splitlines()[1:-1]
    assert warp and all(line.split()[1] == "warp_size_assumption" for line in warp)
    assert main(["rules", "--json", "--category", "container"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed and {r["category"] for r in listed} == {"container"}
    assert {"id", "name", "severity", "message", "rocm_alternative"} <= set(listed[0])
    assert main(["rules", "--category", "warp"]) == 2
    assert "unknown category 'warp'" in capsys.readouterr().err


def test_json_flag_without_a_file_is_only_for_rules(tmp_path, capsys):
    write_tree(tmp_path, {"a.py": "import pynvml\n"})
    assert main([str(tmp_path), "--json"]) == 2
    assert "--json needs a FILE" in capsys.readouterr().err


# ------------------------------------------------------------------ grouping and text

def _finding(path, line, subject="x", rule="RA203", severity=Severity.HIGH, guarded=False):
    return Finding(rule, path, Span(line, 1), subject, "snippet", "message", severity, guarded=guarded,
                   disposition="guarded" if guarded else "live", hours=(1.0, 2.0))


def test_groups_are_rule_and_file_or_rule_and_subject_across_generated_files():
    findings = [_finding("a.cu", n) for n in (30, 10, 20)] + [_finding("b.cu", 5)]
    findings += [_finding(f"gen/k{i}.cu", 3, subject="tmpl", rule="RA300") for i in range(9)]
    findings += [_finding("a.cu", 40, guarded=True)]
    groups = group_findings(findings, across_files_min=8)
    by_key = {(g.rule_id, g.key, g.disposition): g for g in groups}
    a = by_key[("RA203", "a.cu", "live")]
    assert a.count == 3 and [findings[i].span.line for i in a.indexes] == [10, 20, 30]
    assert findings[a.first].span.line == 10 and (a.low_hours, a.high_hours) == (3.0, 6.0)
    generated = by_key[("RA300", "tmpl", "live")]
    assert generated.across_files and generated.count == 9 and len(generated.paths) == 9
    assert by_key[("RA203", "a.cu", "guarded")].count == 1          # guarded sites never join live ones
    assert len(groups) == 4


def test_markdown_in_rule_text_renders_or_strips_and_sentences_end_once():
    doc = "Use `warpSize` and **never** `32`; see [the guide](https://example.org) <now>."
    assert plain(doc) == "Use warpSize and never 32; see the guide (https://example.org) <now>."
    assert inline_html(doc) == ("Use <code>warpSize</code> and <strong>never</strong> <code>32</code>; see the "
                                "guide (https://example.org) &lt;now&gt;.")
    assert inline_html("`<script>`") == "<code>&lt;script&gt;</code>"
    assert sentence("It fails..", "Use amdsmi.", "then test") == "It fails. Use amdsmi. then test."
    assert first_sentence("Pick the dtype, e.g. fnuz. Then test.") == "Pick the dtype, e.g. fnuz"


@pytest.mark.parametrize("fixture", ["llm_serving", "torch_extension"])
def test_sample_terminal_reports_have_no_doubled_full_stops(fixture):
    text = (FIXTURES.parent / "reports" / f"{fixture}.txt").read_text(encoding="utf-8")
    assert not re.search(r"[^.]\.\.(\s|$)", text)
