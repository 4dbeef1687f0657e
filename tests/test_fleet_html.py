"""The portfolio page: the numbers it shows are the portfolio JSON's, repository text is escaped and there is no
script (read from the page's HTML in the fast run); in headless Chromium, a resumed fleet run's page shows them with
no console error and nothing fetched."""
import json

import pytest

from auditor.cli.fleet.html import render_html
from auditor.cli.fleet.portfolio import build_portfolio, portfolio_dict
from auditor.cli.fleet.tasks import Outcome
from tests.conftest import write_tree
from tests.fleetrepos import KERN, PORTABLE, TRT, check_json, make_org, run_fleet
from tests.htmlparts import PageParts
from tests.test_html_report import browser  # noqa: F401 - the module's Chromium fixture
from tests.test_html_report import _Page

HOSTILE = '<img src=x onerror="window.pwned=1">'


@pytest.mark.slow   # fleet runs and a browser; the page's numbers against its JSON: the test below
def test_portfolio_page_in_chromium_shows_the_json_numbers(browser, tmp_path):  # noqa: F811
    """The page of a resumed run with --db: unchanged, scanned and failed rows, each repository's trend and the
    burn-down."""
    org = make_org(tmp_path / "org")
    write_tree(org / HOSTILE, PORTABLE)
    out, db = tmp_path / "out", tmp_path / "h.sqlite"
    assert run_fleet(org, tmp_path / "gone", "--out", out, "--db", db)[0] == 0
    code, printed = run_fleet(org, tmp_path / "gone", "--out", out, "--db", db)
    assert code == 0
    assert {r["name"]: r["status"] for r in printed["repositories"]} == {
        "kern": "unchanged", "portable": "unchanged", "trt": "scanned", "img_src_x_onerror_window.pwned_1": "scanned",
        "gone": "failed"}
    portfolio = json.loads((out / "portfolio.json").read_text(encoding="utf-8"))
    assert printed == portfolio
    html = (out / "portfolio.html").read_text(encoding="utf-8")
    assert "<script" not in html and HOSTILE not in html
    view = _Page(browser, out / "portfolio.html")
    page = view.page
    assert view.console == []
    assert view.requests == [(out / "portfolio.html").as_uri()]
    assert page.evaluate("window.pwned") is None
    totals = portfolio["totals"]
    card = lambda key: page.locator(f'#totals [data-total="{key}"]').inner_text()  # noqa: E731
    assert card("repositories") == str(totals["repositories"]) == "5"
    assert card("verdicts") == f"{totals['ready']} / {totals['needs-port']} / {totals['blocked']}" == "2 / 1 / 1"
    assert card("ready_share_percent") == f"{totals['ready_share_percent']:g}%"
    assert card("effort") == f"{totals['effort_low_days']:g}-{totals['effort_high_days']:g} days"
    rows = page.locator("#repository-table tbody tr")
    assert rows.count() == len(portfolio["repositories"])
    for i, repo in enumerate(portfolio["repositories"]):
        row = rows.nth(i)
        assert row.get_attribute("data-name") == repo["name"]
        assert row.get_attribute("data-status") == repo["status"]
        if repo["status"] == "failed":
            assert repo["reason"] in row.inner_text()
            continue
        field = lambda name: row.locator(f'[data-field="{name}"]').text_content()  # noqa: E731, B023
        assert field("verdict") == repo["verdict"]
        assert float(field("effort_low_days")) == repo["effort_low_days"]
        assert float(field("effort_high_days")) == repo["effort_high_days"]
        link = row.locator("a.json").get_attribute("href")
        assert link == repo["report"] and (out / link).is_file()
        page_link = row.locator("a.page").get_attribute("href")   # the repository's own page, beside its JSON
        assert page_link == repo["page"] == repo["report"].replace(".json", ".html") and (out / page_link).is_file()
        dots = row.locator("svg.trend circle")
        assert [int(dots.nth(j).get_attribute("data-live")) for j in range(dots.count())] == \
            [point["live"] for point in repo["trend"]]
        assert len(repo["trend"]) == (1 if repo["commit"] else 0)   # a plain tree has no commit to record
    burndown = page.locator("#burndown + .burndown svg circle")
    assert [int(burndown.nth(j).get_attribute("data-live")) for j in range(burndown.count())] == \
        [point["live"] for point in totals["burndown"]] and totals["burndown"]
    hostile = rows.filter(has_text=HOSTILE)
    assert hostile.count() == 1 and hostile.locator('[data-field="verdict"]').text_content() == "ready"
    first = page.locator("#by-effort + table tbody tr").first
    blocker = portfolio["blockers"][0]
    assert first.get_attribute("data-key") == blocker["key"] == "tensorrt-llm"
    assert int(first.locator('[data-field="repositories"]').inner_text()) == len(blocker["repositories"])
    assert float(first.locator('[data-field="effort_high_days"]').inner_text()) == blocker["effort_high_days"]
    assert blocker["fix"] in first.inner_text()
    weights = [len(b["repositories"]) * b["effort_high_days"] for b in portfolio["blockers"]]
    assert weights == sorted(weights, reverse=True)      # ranked by repositories × effort
    bars = page.locator("#effort-by-repository g.bar")
    costly = sorted((r for r in portfolio["repositories"] if r["verdict"] and r["effort_high_days"] > 0),
                    key=lambda r: -r["effort_high_days"])
    assert [bars.nth(j).get_attribute("data-name") for j in range(bars.count())] == [r["name"] for r in costly]
    assert [float(bars.nth(j).get_attribute("data-high")) for j in range(bars.count())] == \
        [r["effort_high_days"] for r in costly]
    assert page.locator("#effort-by-blocker g.bar").count() == min(len(portfolio["blockers"]), 15)
    repo = next(r for r in portfolio["repositories"] if r["status"] == "scanned" and r["verdict"] == "blocked")
    own = _Page(browser, out / repo["page"])
    assert own.page.locator("#verdict").get_attribute("data-verdict") == "blocked" and own.console == []


def test_the_portfolio_page_shows_the_numbers_of_its_json_and_escapes_repository_text(tmp_path):
    """The page fleet writes beside portfolio.json, from the same Portfolio: each total, each repository's row (its
    verdict, effort, links and trend), the burn-down, the ranked blockers and the effort charts hold the JSON's
    numbers; a repository's hostile name is text, and the page has no script."""
    trees = {"portable": PORTABLE, "trt": TRT, "kern": KERN, HOSTILE: PORTABLE}
    outcomes = []
    for name, files in trees.items():
        report = check_json(write_tree(tmp_path / "org" / name, files), tmp_path / f"{len(outcomes)}.json")
        outcomes.append(Outcome(name, str(tmp_path / "org" / name), "scanned", report=report,
                                commit="ab" * 20 if name != "trt" else None))
    outcomes.append(Outcome("gone", str(tmp_path / "gone"), "failed", reason="no such directory"))
    reports = {o.name: f"reports/{i}.json" for i, o in enumerate(outcomes) if o.report}
    pages = {name: path.replace(".json", ".html") for name, path in reports.items()}
    trends = {"portable": (("2026-01-01", 3), ("2026-01-05", 1)), "kern": (("2026-01-03", 2),)}
    portfolio = build_portfolio(outcomes, reports, trends, pages)
    data = portfolio_dict(portfolio)
    html = render_html(portfolio)
    assert "<script" not in html and HOSTILE not in html
    page = PageParts(html)
    totals = data["totals"]
    card = lambda key: page.text("totals", "", key)  # noqa: E731
    assert card("repositories") == str(totals["repositories"]) == "5"
    assert card("verdicts") == f"{totals['ready']} / {totals['needs-port']} / {totals['blocked']}" == "2 / 1 / 1"
    assert card("ready_share_percent") == f"{totals['ready_share_percent']:g}%"
    assert card("effort") == f"{totals['effort_low_days']:g}-{totals['effort_high_days']:g} days"
    rows = page.all("tr", "repository-table")[1:]   # the header row first
    assert [(r["data-name"], r["data-status"]) for r in rows] == [(r["name"], r["status"]) for r in data["repositories"]]
    for repo in data["repositories"]:
        if repo["status"] == "failed":
            assert repo["reason"] == "no such directory" and repo["reason"] in html
            continue
        field = lambda key: page.text("repository-table", repo["name"], key)  # noqa: E731, B023
        assert field("verdict") == repo["verdict"]
        assert float(field("effort_low_days")) == repo["effort_low_days"]
        assert float(field("effort_high_days")) == repo["effort_high_days"]
        links = [a for a in page.all("a", "repository-table") if a["row"] == repo["name"]]
        assert [(a["class"], a["href"]) for a in links] == [("page", repo["page"]), ("json", repo["report"])]
        dots = [c for c in page.all("circle", "repository-table") if c["row"] == repo["name"]]
        assert [int(c["data-live"]) for c in dots] == [p["live"] for p in repo["trend"]]
    assert [r["verdict"] for r in data["repositories"] if r["name"] == HOSTILE] == ["ready"]
    burndown = [int(c["data-live"]) for c in page.all("circle", "burndown")]
    assert burndown == [p["live"] for p in totals["burndown"]] == [3, 5, 3]
    first = page.all("tr", "by-effort")[1]
    blocker = data["blockers"][0]
    assert first["data-key"] == blocker["key"] == "tensorrt-llm"
    assert int(page.text("by-effort", blocker["key"], "repositories")) == len(blocker["repositories"])
    assert float(page.text("by-effort", blocker["key"], "effort_high_days")) == blocker["effort_high_days"]
    weights = [len(b["repositories"]) * b["effort_high_days"] for b in data["blockers"]]
    assert weights == sorted(weights, reverse=True)      # ranked by repositories × effort
    costly = sorted((r for r in data["repositories"] if r["verdict"] and r["effort_high_days"] > 0),
                    key=lambda r: (-r["effort_high_days"], r["name"]))
    bars = page.all("g", "effort-by-repository", "bar")
    assert [(b["data-name"], float(b["data-high"])) for b in bars] == [(r["name"], r["effort_high_days"])
                                                                       for r in costly]
    assert len(page.all("g", "effort-by-blocker", "bar")) == min(len(data["blockers"]), 15)
