"""reports/ holds the fixtures' reports as a user sees them; they must match what the tool renders now."""
import re

import pytest

from scripts.pin_fixtures import FIXTURES
from scripts.render_reports import render
from tests.conftest import REPO

# Pygments' markup and colours change between its releases; what the report says must not.
HIGHLIGHTED = re.compile(r'<div class="code">.*?</div>|<style>.*?</style>', re.S)


def _comparable(file_name: str, text: str) -> str:
    return HIGHLIGHTED.sub("", text) if file_name.endswith(".html") else text


@pytest.mark.parametrize("name", FIXTURES)
def test_sample_reports_are_up_to_date(name):
    for file_name, text in render(name, FIXTURES[name]).items():
        committed = (REPO / "reports" / file_name).read_text(encoding="utf-8")
        assert _comparable(file_name, committed) == _comparable(file_name, text), (
            f"reports/{file_name} is stale: run scripts/render_reports.py")
