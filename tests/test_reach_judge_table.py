"""The judge as a table (auditor/judge/table.py): every fact the reach model names is produced by it and read by a
row, every disposition is a row's, the rows decide in order, the docs page shows the table the code has, and no
rule id or name appears in the Python code outside the rulebook."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from auditor.judge.classes import CLASSES, classes_of
from auditor.judge.dispositions import DISPOSITIONS, GUARDED, LIVE, OPS, VERIFY
from auditor.judge.table import TABLE, Term, judge, markdown
from auditor.model.facts import FACTS
from auditor.model.reach import Step
from auditor.match.rulebook import RuleError, load_rulebook, parse_rule
from auditor.types import Finding, Severity, Span
from tests.codebase import syntax_tree

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "auditor" / "model" / "project.py"


def test_every_fact_is_produced_by_the_model_and_read_by_a_row():
    produced = set(re.findall(r'Step\(\s*"([a-z-]+)"', MODEL.read_text()))
    read = {name for row in TABLE for term in row.terms for name in (*term.present, *term.absent)}
    assert produced == set(FACTS)
    assert set(FACTS) <= read
    assert not set(FACTS) & set(CLASSES)


def test_every_disposition_is_some_row_s_and_the_last_row_takes_the_rest():
    assert {row.disposition for row in TABLE} == set(DISPOSITIONS)
    assert TABLE[-1].terms == () and TABLE[-1].disposition == LIVE
    assert all(row.terms for row in TABLE[:-1])


def test_a_term_names_only_facts_and_rule_classes():
    with pytest.raises(ValueError, match="names no fact"):
        Term.parse("rocm-built & built-somewhere")


def _judged(*names: str, notes: dict[str, str] | None = None) -> tuple[str, str]:
    steps = {n: Step(n, None, (notes or {}).get(n, "")) for n in names if n in FACTS}
    row, note = judge(frozenset(names), steps)
    return row.disposition, note


def test_rows_decide_in_order_the_first_match_wins():
    assert _judged("guard", "ops-path", "rocm-built", "hard") == (GUARDED, "")
    assert _judged("ops-path", "optional-dir") == (OPS, "CI, container or developer script")
    assert _judged("soft", "rocm-built") == (VERIFY, "in code the ROCm build already compiles or runs")
    assert _judged("hard", "rocm-built") == (LIVE, "the ROCm build compiles this file: a broken path")
    assert _judged("hard") == (LIVE, "")


def test_a_row_without_a_note_says_the_note_of_the_fact_that_matched():
    assert _judged("never-imported", "optional-package", notes={"never-imported": "not imported"}) \
        == ("optional", "not imported")
    # the same fact without the rule class it needs does not match that row
    assert _judged("never-imported", notes={"never-imported": "not imported"})[0] == LIVE


def test_a_rule_class_comes_from_its_severity_category_and_traits():
    rules = load_rulebook().by_id()
    gate = next(r for r in rules.values() if "build-switch" in r.traits)
    finding = Finding(gate.id, "a.cu", Span(1), "X", "#if X", "m", gate.severity)
    assert {"build-switch", "soft"} <= classes_of(finding, gate, frozenset())
    assert "hard" in classes_of(Finding("RA000", "a.py", Span(1), "s", "s", "m", Severity.HIGH), None, frozenset())


def test_the_docs_page_shows_the_table_the_code_has():
    page = (ROOT / "docs" / "reach-model.md").read_text()
    shown = page.split("<!-- judge-table", 1)[1].split("-->", 1)[1].split("<!-- /judge-table -->", 1)[0]
    assert shown.strip() == markdown()


def test_an_unknown_trait_is_refused_by_the_rulebook():
    rule = {"id": "RA999", "name": "x-rule", "category": "other", "severity": "low", "message": "m", "effort": "S",
            "docs": "d", "flag": ["#if X // flag\n#endif\n"], "ok": ["int x;\n"], "query": "(identifier) @hit",
            "traits": ["made-up"]}
    with pytest.raises(RuleError, match="traits"):
        parse_rule(rule, "rules/cuda/x.toml", check_queries=False)


@pytest.mark.slow
def test_no_rule_id_or_name_appears_in_python_code_outside_the_rulebook():
    """Rules are data: what code needs to know of a rule is a trait in its TOML (auditor/match/rulebook/traits.py)."""
    names = {r.name for r in load_rulebook().rules if "-" in r.name}
    found = []
    for path in sorted((ROOT / "auditor").rglob("*.py")):
        if "rulebook" in path.relative_to(ROOT / "auditor").parts:
            continue
        for node in ast.walk(syntax_tree(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and (node.value in names or re.fullmatch(r"RA\d{3}", node.value)):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value}")
    assert found == []
