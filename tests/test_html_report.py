"""The HTML report as a team lead opens it: self-contained, the same numbers as the JSON, working filters,
and nothing from the scanned repository able to run as script. Browser tests drive Debian's Chromium through
Playwright; where either is missing they say why they skip (in CI they must run)."""
import json
import os
import re
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from markupsafe import escape

from auditor.cli.app import default_html_path, main
from auditor.cli.settings import DEFAULT_HTML, parse_settings
from scripts.screenshot import CHROMIUM_ARGS
from tests.conftest import FIXTURES, write_tree

pytestmark = pytest.mark.slow   # a browser (headless Chromium)

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
    "names/ünïcödé & <i>.cu": "__device__ void k() { int lane = threadIdx.x & 31; (void)lane; }\n",
    "broken/notebook.ipynb": '{"cells": [<script>window.pwned=5</script>',
    "bin/kernel.cu": b"\x7fELF\x00<script>window.pwned=6</script>",
}
FIRST_SHOWN = ("live", "verify on hardware")   # what the findings list opens with; the rest is one choice away


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


def page_data(page: str) -> dict:
    """The compact JSON the page's script builds the findings from."""
    return json.loads(page.split('<script type="application/json" id="report-data">', 1)[1].split("</script>", 1)[0])


def test_html_is_self_contained_and_escapes_repository_text(tmp_path):
    tree = _hostile_tree(tmp_path / "repo")
    html_path, report = _write_reports(tmp_path, tree)
    page = html_path.read_text(encoding="utf-8")
    assert "SECRET-OUTSIDE-THE-ROOT" not in page
    assert "<b onmouseover" not in page
    # the data block and our script, and nothing else that could run
    assert page.count("<script") == 2 and page.count("</script>") == 2
    assert '<img src=x' not in page and "<svg onload" not in page
    data_block = page.split('id="report-data">', 1)[1].split("</script>", 1)[0]
    assert "<" not in data_block and ">" not in data_block and "&" not in data_block
    data = page_data(page)
    paths = {site[0] for g in data["groups"] for site in g["sites"]}
    assert {HOSTILE_NAME, "serve.py", "requirements.txt", "names/ünïcödé & <i>.cu"} <= paths
    assert "&lt;img src=x onerror=" in page                              # the file name in the plan, as text
    assert not re.search(r'(?:src|href)=["\']?(?:https?:)?//', page)     # nothing fetched from anywhere
    assert "Content-Security-Policy" in page and "'unsafe-inline'" not in page.split("script-src", 1)[1][:80]
    assert {f["path"] for f in report["findings"]} >= {HOSTILE_NAME, "serve.py", "requirements.txt"}


def test_html_shows_the_code_around_a_finding_and_the_rule(tmp_path):
    html_path, report = _write_reports(tmp_path, FIXTURES / "torch_extension")
    page = html_path.read_text(encoding="utf-8")
    data = page_data(page)
    first = next(f for f in report["findings"] if f["rule"] == "RA303")
    group = next(g for g in data["groups"] if g["rule"] == "RA303" and g["key"] == first["path"])
    site = group["sites"][0]
    assert site[:2] == [first["path"], first["line"]]
    assert '<span class="hll"><span class="linenos">' + str(first["line"]) + "</span>" in data["code"][site[3]]
    assert 'id="rule-RA303"' in page
    sources = page.split('<ol class="sources">', 1)[1].split("</ol>", 1)[0]
    table = page.split('<table class="assumptions">', 1)[1].split("</table>", 1)[0]
    for assumption in report["effort"]["assumptions"]:   # each constant links to its source, shown in full
        row = table.split(f"<td>{escape(assumption['name'])}</td>", 1)[1].split("</tr>", 1)[0]
        number = re.search(r'href="#source-(\d+)"', row).group(1)
        assert f'<li id="source-{number}" class="source">{escape(assumption["source"])}</li>' in sources
    assert "shared/knowledge" not in page and "design.md" not in page   # files a user does not have


def test_rule_docs_render_markdown_and_messages_end_once(tmp_path):
    html_path, report = _write_reports(tmp_path, FIXTURES / "cmake_cuda_lib")
    page = html_path.read_text(encoding="utf-8")
    docs = page.split('<section id="rules">', 1)[1].split("</section>", 1)[0]
    assert "<code>" in docs and "`" not in docs
    data = page_data(page)
    assert not [rule for rule in data["rules"].values() if rule[2].endswith("..")]
    assert not re.search(r"[^.]\.\.(?:<|\s)", page.split("<body>", 1)[1].split('id="report-data"', 1)[0])


def test_page_data_is_bounded_whatever_the_number_of_findings(monkeypatch, tmp_path):
    """Every group lists its first site, the rest share a budget; groups past the cap are counted, not lost."""
    from auditor.run.pipeline import audit
    from auditor.report import html as html_report
    from auditor.match.rulebook import load_rulebook

    write_tree(tmp_path, {f"k{i}.cu": "".join(f"__device__ int f{j}(int m) {{ return threadIdx.x & 31; }}\n"
                                               for j in range(12)) for i in range(6)})
    report = audit([tmp_path], load_rulebook(), shown_root="gen")
    monkeypatch.setattr(html_report, "MAX_GROUPS", 4)
    monkeypatch.setattr(html_report, "MAX_SITES", 10)
    data = html_report.findings_data(report, html_report.SourceReader(tmp_path))
    assert len(data["groups"]) == 4 and all(g["sites"] for g in data["groups"])
    assert sum(len(g["sites"]) for g in data["groups"]) == 10
    assert sum(g["n"] for g in data["groups"]) + data["omitted"]["findings"] == len(report.findings)
    assert data["omitted"]["groups"] >= 2


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
    import auditor.cli.app

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(auditor.cli.app.sys.stdout, "isatty", lambda: True, raising=False)
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

    def group_rows(self) -> int:
        return self.page.locator("#findings tbody tr.group").count()

    def shown(self) -> int:
        return int(self.page.locator("#shown-count").inner_text().replace(",", ""))


def test_report_in_chromium_opens_with_the_plan_components_and_groups(browser, tmp_path):
    html_path, report = _write_reports(tmp_path, FIXTURES / "llm_serving")
    view = _Page(browser, html_path)
    page = view.page
    summary, effort, coverage = report["summary"], report["effort"], report["coverage"]["total"]

    assert page.locator("#verdict").get_attribute("data-verdict") == summary["verdict"]
    assert page.locator("#verdict .badge").inner_text().lower() == summary["verdict"]
    assert page.locator("#coverage-percent").inner_text() == f'{coverage["percent"]:.1f}%'
    assert page.locator("#effort-range").inner_text() == f'{effort["low_days"]:g}–{effort["high_days"]:g}'

    # the plan: blocking first, TensorRT-LLM (the critical dependency) with every site counted
    plan = page.locator("#plan li.work")
    assert plan.count() >= 3
    first = plan.first
    assert first.get_attribute("data-rule") == "RA100"
    assert "blocks ROCm" in first.inner_text() and "Replace tensorrt_llm" in first.inner_text()   # as the code names it
    trt = [f for f in report["findings"] if f["rule"] == "RA100" and not f["guarded"] and not f["optional"]]
    assert f'{len(trt)} sites in {len({f["path"] for f in trt})} files' in first.inner_text()
    assert page.locator("#plan").bounding_box()["y"] < page.locator("#components").bounding_box()["y"]

    # the components table: one row per component, its verdict and a link to its findings
    rows = page.locator("#components-table tbody tr")
    assert rows.count() == max(1, len(report["components"]))
    assert rows.first.locator(".badge").inner_text().lower() == summary["verdict"]

    # grouped findings: one row per rule and file; the list opens with live work and what to verify on hardware
    unguarded = [f for f in report["findings"] if not f["guarded"]]
    first_shown = [f for f in report["findings"] if f["disposition"] in FIRST_SHOWN]
    assert view.shown() == len(first_shown) < len(unguarded)
    groups = {(f["rule"], f["path"]) for f in first_shown}
    assert view.group_rows() == len(groups) < len(first_shown)
    nvml = [f for f in first_shown if f["rule"] == "RA509"]
    row = page.locator("#findings tr.group[data-rule='RA509']")
    assert row.count() == 1 and row.locator("td.num").first.inner_text() == str(len(nvml))
    row.locator("button.expand").click()
    sites = page.locator("#findings tr.sites .site")
    assert sites.count() == len(nvml)
    assert sites.first.locator(".site-where").inner_text() == f'{nvml[0]["path"]}:{nvml[0]["line"]}'
    assert sites.first.locator(".code .hll").is_visible()
    # nothing wider than the window: tables wrap their text (the Assumptions table once widened the page)
    assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]
    row.locator("button.expand").click()
    assert page.locator("#findings tr.sites").count() == 0

    page.fill("#filter-text", "pynvml")
    assert 0 < view.group_rows() < len(groups)
    page.fill("#filter-text", "")
    page.select_option("#filter-severity", "4")
    assert view.shown() == sum(1 for f in first_shown if f["severity"] == "critical")
    page.select_option("#filter-severity", "0")
    page.select_option("#filter-disposition", "ops")
    page.select_option("#filter-category", "container")
    assert view.shown() == sum(1 for f in unguarded if f["category"] == "container")
    page.select_option("#filter-category", "")
    page.select_option("#filter-disposition", "*")
    assert view.shown() == len(report["findings"])
    page.select_option("#filter-disposition", "guarded")
    assert view.shown() == len(report["findings"]) - len(unguarded)
    assert view.console == []
    assert view.requests == [html_path.as_uri()]


def test_tests_and_examples_are_hidden_by_default_and_one_click_away(browser, tmp_path):
    tree = write_tree(tmp_path / "repo", {
        "pkg/monitor.py": "import pynvml\n\npynvml.nvmlInit()\n",
        "tests/test_monitor.py": "import pynvml\n\npynvml.nvmlInit()\n",
        "examples/demo.py": "import pynvml\n",
        ".github/workflows/ci.yml": "jobs:\n  t:\n    runs-on: [self-hosted, nvidia-gpu]\n    steps:\n"
                                   "      - run: nvidia-smi\n",
    })
    html_path, report = _write_reports(tmp_path, tree)
    view = _Page(browser, html_path)
    unguarded = [f for f in report["findings"] if not f["guarded"]]
    inside = [f for f in unguarded if f["path"].startswith("pkg/")]
    assert inside and len(inside) < len(unguarded)
    assert view.shown() == len(inside)
    view.page.uncheck("#filter-peripheral")
    view.page.select_option("#filter-disposition", "*")   # tests and examples are optional: folded as well
    assert view.shown() == len(unguarded)


def test_many_findings_stay_a_small_page_a_page_at_a_time(browser, tmp_path):
    tree = tmp_path / "gen"
    files = {f"kernels/k{i:03d}.cu": "".join(f"__device__ int l{j}() {{ return threadIdx.x & 31; }}\n"
                                             for j in range(40)) for i in range(120)}
    write_tree(tree, files)
    html_path, report = _write_reports(tmp_path, tree)
    assert len(report["findings"]) >= 4800
    assert html_path.stat().st_size < 1_000_000   # the JSON report of the same run is 3.6 MB
    data = page_data(html_path.read_text(encoding="utf-8"))
    assert len(data["groups"]) < 10          # one rule, one subject across 120 generated files
    view = _Page(browser, html_path)
    assert view.shown() == sum(1 for f in report["findings"] if f["disposition"] in FIRST_SHOWN)
    assert view.page.locator("#findings tbody tr").count() <= 60    # rows are built a page at a time
    assert view.console == []


def test_hostile_repository_runs_no_script_in_chromium(browser, tmp_path):
    tree = _hostile_tree(tmp_path / "repo")
    html_path, _ = _write_reports(tmp_path, tree)
    view = _Page(browser, html_path)
    view.page.select_option("#filter-disposition", "*")
    view.page.uncheck("#filter-peripheral")
    for button in view.page.locator("#findings button.expand").all():
        button.click()
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


def test_rocm_path_dispositions_are_filters_and_not_built_code_is_hidden_by_default(browser, tmp_path):
    """Each finding's disposition is a filter; code a ROCm build does not compile (guarded, not built, …) and
    tests, examples and CI are one click away, not in the default count."""
    from auditor.run.pipeline import audit
    from auditor.report import html as html_report
    from auditor.report import plan
    from auditor.match.rulebook import load_rulebook

    report = audit([FIXTURES / "llm_serving"], load_rulebook(), shown_root="llm_serving")
    out = tmp_path / "r.html"
    out.write_text(html_report.render_html(report, FIXTURES / "llm_serving"), encoding="utf-8")
    view = _Page(browser, out)
    kinds = [(plan.disposition(report, f), plan.peripheral(f.path)) for f in report.findings]
    assert view.shown() == sum(1 for kind, peripheral in kinds if kind in plan.SHOWN_FIRST and not peripheral)
    view.page.uncheck("#filter-peripheral")
    view.page.select_option("#filter-disposition", "ops")
    ops = sum(1 for kind, _ in kinds if kind == "ops")
    assert ops and view.shown() == ops
    assert view.page.locator("#findings tr.group .disp").first.inner_text() == "ops"
    view.page.select_option("#filter-disposition", "guarded")
    assert view.shown() == sum(1 for kind, _ in kinds if kind == "guarded") > 0
    assert view.console == []


def test_each_component_links_to_exactly_its_findings(browser, tmp_path):
    tree = write_tree(tmp_path / "repo", {
        "setup.py": "from setuptools import setup\nsetup(name='main')\n",
        "main/gpu.py": "import pynvml\npynvml.nvmlInit()\nimport torch\nprint(torch.version.cuda.split('.'))\n",
        "plugin/setup.py": "from setuptools import setup\nsetup(name='plugin')\n",
        "plugin/p.py": "import tensorrt_llm\n",
        "plugin/tests/test_p.py": "import tensorrt_llm\n",
    })
    html_path, report = _write_reports(tmp_path, tree)
    view = _Page(browser, html_path)
    rows = view.page.locator("#components-table tbody tr")
    assert rows.count() == len(report["components"]) == 2
    counts = {}
    for i in range(rows.count()):
        link = rows.nth(i).locator("a.show-component")
        link.click()
        counts[rows.nth(i).locator("td").first.inner_text().split()[0]] = int(link.inner_text())
        assert view.shown() == int(link.inner_text())
    # each row counts what its verdict weighed: the plugin, judged for itself, weighs its own optional code
    assert counts["plugin"] == 2 == sum(1 for f in report["findings"] if f["path"].startswith("plugin/"))
    assert counts["(root)"] == sum(1 for f in report["findings"] if f["path"].startswith("main/")
                                   and f["severity"] != "info" and f["disposition"] == "live") > 0
    assert {c["path"]: c["live_findings"] for c in report["components"]} == {"plugin": 2, ".": counts["(root)"]}
    assert view.console == []


def test_the_verdict_reason_renders_its_code_spans_escaped(tmp_path):
    """The reason names commands and flags in Markdown code spans: the page shows them as code, never as raw
    backticks, and text from the scanned tree inside them stays escaped."""
    from auditor.run.pipeline import audit
    from auditor.report.html import render_html
    from auditor.match.rulebook import load_rulebook

    report = audit([FIXTURES / "rocm_paths" / "p1_backend_switch"], load_rulebook(), shown_root="p1")
    page = render_html(report)
    reason = re.search(r'<span class="reason">(.*?)</span>', page, re.S).group(1)
    assert "<code>pip install --no-build-isolation .</code> on ROCm PyTorch" in reason
    assert "`" not in reason
    hostile = replace(report, verdict_reason="ready: built by `<img src=x onerror=alert(1)>`")
    assert "<code>&lt;img src=x onerror=alert(1)&gt;</code>" in render_html(hostile)
