"""The HTML report as a team lead opens it: self-contained, the same numbers as the JSON, working filters,
and nothing from the scanned repository able to run as script. Browser tests drive Debian's Chromium through
Playwright; where either is missing they say why they skip (in CI they must run)."""
import json
import os
import re
import shutil
from pathlib import Path

import pytest

from auditor.cli import default_html_path, main
from auditor.settings import DEFAULT_HTML, parse_settings
from scripts.screenshot import CHROMIUM_ARGS
from tests.conftest import FIXTURES, write_tree

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

HOSTILE_NAME = '<img src=x onerror="window.pwned=1">.py'
HOSTILE_TREE = {
    HOSTILE_NAME: "import pynvml\n\npynvml.nvmlInit()\n",
    "serve.py": (
        "import tensorrt_llm  # </script><script>window.pwned=2</script>\n"
        "\n"
        "ENGINE = tensorrt_llm.LLM(model='</script><svg onload=\"window.pwned=3\">')\n"
    ),
    "requirements.txt": "tensorrt-llm==0.10.0\n",
    "names/new\nline.py": "import pynvml  # <b onmouseover=alert(4)>x</b>\n",
    "names/ünïcödé & <i>.cu": "__global__ void k() { int lane = threadIdx.x & 31; (void)lane; }\n",
    "broken/notebook.ipynb": '{"cells": [<script>window.pwned=5</script>',
    "bin/kernel.cu": b"\x7fELF\x00<script>window.pwned=6</script>",
}


def _hostile_tree(root: Path) -> Path:
    """HOSTILE_TREE plus what cannot be written as content: a FIFO and a link out of the tree."""
    write_tree(root, HOSTILE_TREE)
    os.mkfifo(root / "fifo.cu")
    outside = root.parent / "outside"
    write_tree(outside, {"secret.py": "import tensorrt_llm  # SECRET-OUTSIDE-THE-ROOT\n"})
    (root / "escape").symlink_to(outside, target_is_directory=True)
    return root


def _write_reports(tmp_path: Path, tree: Path) -> tuple[Path, dict]:
    html, js = tmp_path / "report.html", tmp_path / "report.json"
    code = main([str(tree), "--html", str(html), "--json", str(js), "--format", "json", "-o",
                 str(tmp_path / "main.json"), "--no-progress", "-j", "1"])
    assert code in (0, 1)
    return html, json.loads(js.read_text(encoding="utf-8"))


def test_html_is_self_contained_and_escapes_repository_text(tmp_path):
    tree = _hostile_tree(tmp_path / "repo")
    html_path, report = _write_reports(tmp_path, tree)
    page = html_path.read_text(encoding="utf-8")
    assert "SECRET-OUTSIDE-THE-ROOT" not in page
    assert "names/ünïcödé &amp; &lt;i&gt;.cu" in page
    assert "<b onmouseover" not in page
    assert page.count("<script") == 1 and page.count("</script>") == 1   # ours, at the end
    assert '<img src=x' not in page and "<svg onload" not in page
    assert "&lt;img src=x onerror=" in page                              # the file name, shown as text
    assert not re.search(r'(?:src|href)=["\']?(?:https?:)?//', page)     # nothing fetched from anywhere
    assert "Content-Security-Policy" in page and "'unsafe-inline'" not in page.split("script-src", 1)[1][:80]
    assert {f["path"] for f in report["findings"]} >= {HOSTILE_NAME, "serve.py", "requirements.txt"}


def test_html_shows_the_code_around_a_finding_and_the_rule(tmp_path):
    html_path, report = _write_reports(tmp_path, FIXTURES / "torch_extension")
    page = html_path.read_text(encoding="utf-8")
    first = next(f for f in report["findings"] if f["rule"] == "RA303")
    assert f'{first["path"]}:{first["line"]}' in page
    assert '<span class="hll"><span class="linenos">' + str(first["line"]) + "</span>" in page
    assert 'id="rule-RA303"' in page and 'href="#rule-RA303"' in page
    for assumption in report["effort"]["assumptions"]:
        assert assumption["source"].replace("'", "&#39;") in page


def test_interactive_runs_write_the_html_report_by_default(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    repo = tmp_path / "repo"
    repo.mkdir()
    settings = parse_settings([str(repo)])
    path = default_html_path(settings, interactive=True)
    # in the user's cache directory, named after the scanned directory; never an untracked file in the repository
    assert path.parent == tmp_path / "cache" / "rocm-audit" / "reports"
    assert path.name.startswith("repo-") and path.suffix == ".html"
    assert default_html_path(settings, interactive=True) == path      # the same repository: the same report file
    assert default_html_path(settings, interactive=False) is None
    for flags in (["--no-html"], ["-q"], ["--format", "json"], ["--html", "elsewhere.html"]):
        assert default_html_path(parse_settings(["some/path", *flags]), interactive=True) is None, flags


def test_default_report_avoids_a_cache_directory_inside_the_scanned_tree(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "repo" / ".cache"))
    (tmp_path / "repo").mkdir()
    path = default_html_path(parse_settings([str(tmp_path / "repo")]), interactive=True)
    assert not path.resolve().is_relative_to((tmp_path / "repo").resolve())
    assert path.parent.name.startswith("rocm-audit-report-")         # a private temporary directory


def test_interactive_run_prints_where_the_report_went(tmp_path, monkeypatch, capsys):
    import auditor.cli

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(auditor.cli.sys.stdout, "isatty", lambda: True, raising=False)
    main([str(FIXTURES / "portable_repo"), "--no-progress", "-j", "1", "--fail-on", "never"])
    out = capsys.readouterr().out
    shown = Path(re.search(r"HTML report: (\S+)", out).group(1))
    assert shown.is_file() and shown.is_relative_to(tmp_path / "cache")
    assert not (tmp_path / DEFAULT_HTML).exists() and not (FIXTURES / "portable_repo" / DEFAULT_HTML).exists()
    main([str(FIXTURES / "portable_repo"), "--no-progress", "-j", "1", "--fail-on", "never", "--html", DEFAULT_HTML])
    assert (tmp_path / DEFAULT_HTML).is_file()                        # only when asked


def test_format_html_to_a_file(tmp_path):
    out = tmp_path / "r.html"
    assert main([str(FIXTURES / "portable_repo"), "--format", "html", "-o", str(out), "--no-progress"]) == 0
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert oct(out.stat().st_mode & 0o777) == oct(0o666 & ~_umask())


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# ------------------------------------------------------------------ in the browser

@pytest.fixture(scope="module")
def browser():
    why = None
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        why = "the playwright package is not installed"
    if why is None and CHROMIUM is None:
        why = "Chromium is not installed (apt-get install chromium)"
    if why:
        if os.environ.get("CI"):
            pytest.fail(f"browser tests must run in CI: {why}")
        pytest.skip(why)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


class _Page:
    """A report opened from disk, with what the page logged and asked the network for."""

    def __init__(self, browser, path: Path):
        self.page = browser.new_page()
        self.console, self.requests = [], []
        self.page.on("console", lambda m: self.console.append((m.type, m.text)))
        self.page.on("pageerror", lambda e: self.console.append(("pageerror", str(e))))
        self.page.on("dialog", lambda d: (self.console.append(("dialog", d.message)), d.dismiss()))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.goto(path.as_uri())

    def visible_rows(self) -> int:
        return self.page.locator("#findings tbody tr:visible").count()

    def shown(self) -> int:
        return int(self.page.locator("#shown-count").inner_text())


def test_report_in_chromium_matches_json_and_filters(browser, tmp_path):
    html_path, report = _write_reports(tmp_path, FIXTURES / "llm_serving")
    view = _Page(browser, html_path)
    page = view.page
    summary, effort, coverage = report["summary"], report["effort"], report["coverage"]["total"]

    assert page.locator("#verdict").get_attribute("data-verdict") == summary["verdict"]
    assert page.locator("#verdict .badge").inner_text().lower() == summary["verdict"]
    assert page.locator("#coverage-percent").inner_text() == f'{coverage["percent"]:.1f}%'
    assert page.locator("#coverage-clean").inner_text() == f'{coverage["clean_percent"]:.1f}%'
    assert page.locator("#effort-range").inner_text() == f'{effort["low_days"]:g}–{effort["high_days"]:g}'

    unguarded = sum(1 for f in report["findings"] if not f["guarded"])
    assert view.visible_rows() == view.shown() == unguarded
    page.fill("#filter-text", "pynvml")
    with_pynvml = [f for f in report["findings"] if not f["guarded"]
                   and "pynvml" in " ".join((f["path"], f["message"], f["snippet"])).lower()]
    assert 0 < view.visible_rows() == view.shown() <= len(with_pynvml) + 1 < unguarded
    page.fill("#filter-text", "")
    page.select_option("#filter-severity", "4")
    critical = sum(1 for f in report["findings"] if f["severity"] == "critical" and not f["guarded"])
    assert view.visible_rows() == critical == summary["by_severity"]["critical"]
    page.select_option("#filter-severity", "0")
    page.select_option("#filter-category", "container")
    assert view.visible_rows() == sum(1 for f in report["findings"] if f["category"] == "container"
                                      and not f["guarded"])
    page.select_option("#filter-category", "")
    page.check("#filter-guarded")
    assert view.visible_rows() == len(report["findings"])

    page.click("#findings th:nth-child(3)")      # where: ascending by path
    wheres = page.locator("#findings tbody td.path").all_inner_texts()
    keys = [page.locator("#findings tbody td.path").nth(i).get_attribute("data-key") for i in range(len(wheres))]
    assert keys == sorted(keys)

    page.locator("#findings details").first.evaluate("d => d.open = true")
    assert page.locator("#findings details .code").first.is_visible()
    assert view.console == []
    assert view.requests == [html_path.as_uri()]


def test_hostile_repository_runs_no_script_in_chromium(browser, tmp_path):
    tree = _hostile_tree(tmp_path / "repo")
    html_path, _ = _write_reports(tmp_path, tree)
    view = _Page(browser, html_path)
    view.page.check("#filter-guarded")
    view.page.locator("#findings details").evaluate_all("all => all.forEach(d => d.open = true)")
    assert view.page.evaluate("typeof window.pwned") == "undefined"
    assert [m for m in view.console if m[0] in ("dialog", "pageerror", "error")] == []
    assert view.page.get_by_text(HOSTILE_NAME).first.is_visible()
    assert view.page.locator("#errors").get_by_text("broken/notebook.ipynb").is_visible()
    assert view.requests == [html_path.as_uri()]


def test_dependency_table_lists_each_package_once_with_every_place(tmp_path):
    html_path, report = _write_reports(tmp_path, FIXTURES / "llm_serving")
    page = html_path.read_text(encoding="utf-8")
    section = page.split('id="dependencies"', 1)[1].split("</section>", 1)[0]
    trt = [f for f in report["findings"] if f["rule"] == "RA100"]
    assert {f["path"] for f in trt} >= {"requirements.txt", "llmserve/engine.py"}
    assert section.count("<strong>tensorrt-llm</strong>") == 1
    row = section.split("<strong>tensorrt-llm</strong>", 1)[1].split("</tr>", 1)[0]
    for f in trt:
        assert f'{f["path"]}:{f["line"]}' in row
    assert "no ROCm build: replace it" in row
