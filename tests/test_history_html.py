"""The burn-down chart, as a standalone page (`history --format html`) and as the report's Progress section: its
points are the JSON's (read from the page's HTML in the fast run) and, in headless Chromium, it renders with no
console error and no request."""
from __future__ import annotations

import json
import re

import pytest

from auditor.cli.app import main
from tests.history_repo import build
from tests.htmlparts import PageParts
from tests.test_html_report import _Page, browser  # noqa: F401  (the module's browser fixture)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    where = tmp_path_factory.mktemp("chart")
    root = where / "project"
    build(root)
    db = where / "h.db"
    assert main(["history", str(root), "--db", str(db), "--format", "json", "-o", str(where / "h.json"),
                 "-j", "1"]) == 0
    return root, db, json.loads((where / "h.json").read_text())


def chart_points(view: _Page) -> list[dict]:
    return view.page.eval_on_selector_all(
        "#burndown circle.point",
        "els => els.map(e => ({commit: e.dataset.commit, live: +e.dataset.live, low: +e.dataset.low, "
        "high: +e.dataset.high, verdict: e.dataset.verdict, title: e.querySelector('title').textContent, "
        "cy: +e.getAttribute('cy'), cx: +e.getAttribute('cx')}))")


def test_the_chart_holds_the_json_points_in_the_standalone_page_and_the_report(recorded, tmp_path):
    root, db, data = recorded
    page = tmp_path / "history.html"
    assert main(["history", str(root), "--db", str(db), "--format", "html", "-o", str(page)]) == 0
    html = page.read_text(encoding="utf-8")
    assert "<script" not in html
    parts = PageParts(html)
    drawn = parts.all("circle", "burndown", "point")
    assert [(p["data-commit"], int(p["data-live"]), float(p["data-low"]), float(p["data-high"]), p["data-verdict"])
            for p in drawn] == [(p["commit"], p["live"], p["effort_low_days"], p["effort_high_days"], p["verdict"])
                                for p in data["points"]]
    xs, ys = [float(p["cx"]) for p in drawn], [float(p["cy"]) for p in drawn]
    assert xs == sorted(xs)
    lives = [int(p["data-live"]) for p in drawn]
    assert all(y >= ys[lives.index(max(lives))] for y in ys) and ys[0] > min(ys)   # more live findings draw higher
    assert [r["data-verdict"] for r in parts.all("rect", "burndown", "verdict-span")] == \
        [p["verdict"] for p in data["points"]]
    assert len(parts.all("polygon", "burndown", "effort-band")) == 1
    listed = re.search(r'<ul class="progress-events">(.*?)</ul>', html, re.S)
    events = [re.sub(r"<[^>]+>", "", item).strip() for item in re.findall(r"<li[^>]*>(.*?)</li>", listed.group(1), re.S)]
    assert events[0].startswith("tensorrt_llm removed in") and any("new CUDA-only dependency pynvml" in e for e in events)
    report = tmp_path / "report.html"
    assert main([str(root), "--db", str(db), "--html", str(report), "--format", "json", "-o",
                 str(tmp_path / "r.json"), "-j", "1"]) == 1
    in_report = PageParts(report.read_text(encoding="utf-8"))
    assert [p["data-commit"] for p in in_report.all("circle", "burndown", "point")] == \
        [p["commit"] for p in data["points"]]


@pytest.mark.slow   # a browser; the chart's points and their order: the test above
def test_standalone_page_draws_the_json_points(browser, recorded, tmp_path):  # noqa: F811
    root, db, data = recorded
    page = tmp_path / "history.html"
    assert main(["history", str(root), "--db", str(db), "--format", "html", "-o", str(page)]) == 0
    view = _Page(browser, page)
    drawn = chart_points(view)
    assert [(p["commit"], p["live"], p["low"], p["high"], p["verdict"]) for p in drawn] == [
        (p["commit"], p["live"], p["effort_low_days"], p["effort_high_days"], p["verdict"]) for p in data["points"]]
    assert all(p["title"].startswith(p["commit"][:10]) for p in drawn)
    assert [p["cx"] for p in drawn] == sorted(p["cx"] for p in drawn)
    lives = [p["live"] for p in drawn]
    top = drawn[lives.index(max(lives))]["cy"]
    assert all(p["cy"] >= top for p in drawn) and drawn[0]["cy"] > top          # more live findings draw higher
    spans = view.page.eval_on_selector_all("#burndown rect.verdict-span", "els => els.map(e => e.dataset.verdict)")
    assert spans == [p["verdict"] for p in data["points"]]
    assert view.page.locator("#burndown polygon.effort-band").count() == 1
    box = view.page.locator("#burndown").bounding_box()
    assert box is not None and box["width"] > 300 and box["height"] > 100
    events = view.page.locator(".progress-events li").all_inner_texts()
    assert events[0].startswith("tensorrt_llm removed in") and any("new CUDA-only dependency pynvml" in e for e in events)
    assert view.console == [] and view.requests == [page.as_uri()]


@pytest.mark.slow   # a browser; the Progress section's points: the first test
def test_report_progress_section_renders_in_chromium(browser, recorded, tmp_path):  # noqa: F811
    root, db, data = recorded
    page = tmp_path / "report.html"
    assert main([str(root), "--db", str(db), "--html", str(page), "--format", "json", "-o",
                 str(tmp_path / "r.json"), "-j", "1"]) == 1
    view = _Page(browser, page)
    assert view.page.locator("#progress h2").inner_text() == "Progress"
    assert [p["commit"] for p in chart_points(view)] == [p["commit"] for p in data["points"]]
    assert view.page.locator("#findings tbody tr.group").count() > 0     # the rest of the page still works
    assert view.console == [] and view.requests == [page.as_uri()]
