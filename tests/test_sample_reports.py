"""reports/ holds the fixtures' reports as a user sees them; they must match what the tool renders now."""
import json
import re

import pytest

from scripts.pin_fixtures import FIXTURES
from scripts.render_reports import render
from tests.conftest import REPO

pytestmark = pytest.mark.slow   # renders the sample reports from the fixtures

# Pygments' markup and colours change between its releases; what the report says must not.
# The highlighted code sits in the page's JSON data block ("code"), so that is compared without it.
HIGHLIGHTED = re.compile(r'<div class="code">.*?</div>|<style>.*?</style>', re.S)
DATA = re.compile(r'(<script type="application/json" id="report-data">)(.*?)(</script>)', re.S)
# The page's footer counts the shipped rules; a new rule must not make every sample stale (its number is checked
# against the rulebook below instead).
RULE_COUNT = re.compile(r"(<li>rocm-audit [^,<]+, )(\d+)( rules</li>)")


def _without_code(match: re.Match) -> str:
    data = json.loads(match.group(2))
    data.pop("code", None)
    return match.group(1) + json.dumps(data, sort_keys=True) + match.group(3)


def _comparable(file_name: str, text: str) -> str:
    if not file_name.endswith(".html"):
        return text
    return RULE_COUNT.sub(r"\1N\3", DATA.sub(_without_code, HIGHLIGHTED.sub("", text)))


@pytest.mark.parametrize("name", FIXTURES)
def test_sample_reports_are_up_to_date(name):
    for file_name, text in render(name, FIXTURES[name]).items():
        committed = (REPO / "reports" / file_name).read_text(encoding="utf-8")
        assert _comparable(file_name, committed) == _comparable(file_name, text), (
            f"reports/{file_name} is stale: run scripts/render_reports.py")


def test_the_pages_footer_counts_the_shipped_rules():
    from auditor.match.rulebook import load_rulebook

    page = render("example", FIXTURES["example"])["example.html"]
    assert [int(n) for _, n, _ in RULE_COUNT.findall(page)] == [len(load_rulebook().rules)]
