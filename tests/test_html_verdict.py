"""The page reads like the verdict: badges count what would break, dependency rows say where their places sit,
the findings list opens with live work (never with a note), components of tests, examples and plugins fold
under one line, and long component names stay inside their cell."""
import re

from tests.conftest import write_tree
from tests.test_html_report import _Page, _write_reports, browser, page_data  # noqa: F401  (browser: a fixture)

LONG = "an_optional_plugin_with_a_component_name_much_longer_than_its_cell_could_ever_hold_on_one_line"


def test_badges_count_what_would_break_and_dependencies_show_their_disposition(tmp_path):
    tree = write_tree(tmp_path / "repo", {
        "setup.py": "from setuptools import setup\nsetup(name='main', extras_require={'nv': ['pynvml']})\n",
        "main/__init__.py": "",
        "main/serve.py": "import tensorrt_llm\n",
        "main/hip_only.py": "import torch\nif torch.version.hip:\n    pass\n",
    })
    html_path, report = _write_reports(tmp_path, tree)
    page = html_path.read_text(encoding="utf-8")
    live = [f for f in report["findings"] if f["disposition"] == "live"]
    chips = re.findall(r'class="sev sev-(\w+)" title="\w+, would break on ROCm \(live\)">(\d+) ', page)
    assert sum(int(n) for _, n in chips) == len(live) == report["summary"]["would_break"]
    assert f"{len(live)} would break on ROCm" in page
    deps = page.split('id="dependencies"', 1)[1].split("</section>", 1)[0]
    rows = deps.split("<tr")[2:]
    for row in rows:
        name = re.search(r"<strong>([^<]+)</strong>", row).group(1)
        sites = [f for f in report["findings"] if f["name"] == name]
        assert sites
        if not any(f["disposition"] == "live" for f in sites):   # never "no ROCm build: replace it" for these
            assert "does not break on ROCm" in row and 'class="sev ' not in row
            assert sites[0]["disposition"] in row


def test_the_list_opens_with_live_work_and_tests_examples_plugins_fold(browser, tmp_path):  # noqa: F811
    tree = write_tree(tmp_path / "repo", {
        "setup.py": "from setuptools import setup\nsetup(name='main', packages=['main'], install_requires=['pynvml'])\n",
        "main/__init__.py": "",
        "main/note.cu": "__global__ void k(float *p) { p[0] = 1.0f; }\n",
        "main/gpu.py": "import torch\nimport pynvml\npynvml.nvmlInit()\nprint(torch.version.cuda)\n",
        f"tests/plugins/{LONG}/setup.py": "from setuptools import setup\nsetup(name='plug')\n",
        f"tests/plugins/{LONG}/plug/__init__.py": "import tensorrt_llm\n",
        "examples/ex/setup.py": "from setuptools import setup\nsetup(name='ex')\n",
        "examples/ex/ex/__init__.py": "import tensorrt_llm\n",
    })
    html_path, report = _write_reports(tmp_path, tree)
    data = page_data(html_path.read_text(encoding="utf-8"))
    first = data["groups"][0]
    assert first["disp"] == "live" and first["sev"] > 0           # info never opens the list
    standing = [0 if g["sev"] > 0 and g["disp"] == "live" else 1 for g in data["groups"]]
    assert standing == sorted(standing)
    view = _Page(browser, html_path)
    page = view.page
    folded_paths = [c["path"] for c in report["components"] if c["path"].startswith(("tests/", "examples/"))]
    assert len(folded_paths) == 2
    assert page.locator("#components-table tbody tr").count() == len(report["components"]) - 2
    summary = page.locator("details.folded-components summary")
    assert summary.inner_text().startswith("2 more components from tests, examples and plugins")
    assert not page.locator("#folded-components-table").is_visible()
    summary.click()
    cell = page.locator("#folded-components-table td.path").filter(has_text=LONG[:20]).first
    assert cell.evaluate("td => td.scrollWidth <= td.clientWidth")   # the name wraps inside its cell
    assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]
    assert view.console == []


def test_partial_files_are_listed_on_the_page_and_in_the_summary(tmp_path, capsys):
    from auditor.cli.app import main

    tree = write_tree(tmp_path / "repo", {"k.cu": "__global__ void k(int *p) { p[0] = 1; }\n"
                                                  "int broken( { ;;; }}} \n__device__ int w() { return warpSize; }\n"})
    html_path, report = _write_reports(tmp_path, tree)
    assert report["summary"]["files_partial"] == 1
    page = html_path.read_text(encoding="utf-8")
    assert 'id="partial"' in page and "k.cu</span>: " in page
    main([str(tree), "--no-progress", "--no-html", "-j", "1"])
    out = " ".join(capsys.readouterr().out.split())
    assert "1 file parsed only in part: findings in the unparsed code may be missing" in out
