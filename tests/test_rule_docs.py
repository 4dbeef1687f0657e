"""The rule pages: generated from the rulebook and the fix registry in fixed sections, printed by `rocm-audit rule`,
kept fresh in docs/rules/, and built with the rest of the documentation into a site whose every link resolves."""
import re
import shutil
import subprocess
import sys

import pytest

from auditor.cli.app import main
from auditor.cli.rulepage import SECTIONS
from auditor.fix.data import shipped_fixes
from auditor.match.rulebook import load_rulebook
from scripts.build_rule_docs import OUT, expected_pages, stale_pages
from tests.conftest import REPO


def test_every_rule_page_has_the_fixed_sections_in_order():
    pages = expected_pages()
    for rule in load_rulebook().rules:
        headings = re.findall(r"^## (.+)$", pages[f"{rule.id}.md"], flags=re.M)
        assert tuple(headings) == SECTIONS, rule.id


def test_a_page_states_the_fix_safety_the_registry_gives():
    fixes = shipped_fixes()
    pages = expected_pages()
    safe = next(rule for rule, fix in sorted(fixes.items()) if fix.safety == "safe")
    unsafe = next(rule for rule, fix in sorted(fixes.items()) if fix.safety == "unsafe")
    unfixed = next(rule.id for rule in load_rulebook().rules if rule.id not in fixes)
    assert "fix: safe" in pages[f"{safe}.md"] and "**Safe** (applied by `rocm-audit fix`)" in pages[f"{safe}.md"]
    assert "fix: unsafe" in pages[f"{unsafe}.md"] and "only with `rocm-audit fix --unsafe`" in pages[f"{unsafe}.md"]
    assert "fix: none" in pages[f"{unfixed}.md"]


def test_a_page_shows_the_rules_own_examples_with_the_reported_line_marked():
    rule = load_rulebook().by_id()["RA200"]
    page = expected_pages()["RA200.md"]
    first = rule.flag[0]
    marked = first.code.strip("\n").splitlines()[first.line - 1]
    assert f"{marked}  // reported here" in page
    assert rule.ok[0].code.strip("\n").splitlines()[0] in page.split("Not reported:")[1]


def test_the_rule_command_prints_the_page(capsys):
    assert main(["rule", "RA200"]) == 0
    assert capsys.readouterr().out == expected_pages()["RA200.md"]


def test_the_committed_rule_pages_are_fresh():
    assert not stale_pages(), "run: .venv/bin/python scripts/build_rule_docs.py"
    assert len(list(OUT.glob("RA*.md"))) == len(load_rulebook().rules)


def test_a_stale_or_left_over_page_is_found(tmp_path):
    out = tmp_path / "rules"
    shutil.copytree(OUT, out)
    (out / "RA200.md").write_text("old\n", encoding="utf-8")
    (out / "RA999.md").write_text("a removed rule\n", encoding="utf-8")
    assert stale_pages(out) == ["RA200.md", "RA999.md"]


@pytest.mark.slow
def test_the_documentation_site_builds_and_every_link_resolves(tmp_path):
    # not -q: mkdocs counts the warnings that --strict turns into a failure only at the default log level
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
                          cwd=REPO, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    home = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")   # README.md, its links made the site's
    assert 'href="concepts/"' in home and 'href="docs/' not in home
    assert (tmp_path / "site" / "rules" / "RA200" / "index.html").is_file()
