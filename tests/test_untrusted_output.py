"""File names and text from the scanned tree are shown, never obeyed, in every format: no GitHub workflow command,
no Markdown cell or link, no terminal escape sequence or rich markup, no broken SARIF URI, no crash on a name
that is not UTF-8. And a tool failure is exit 2, never 1, whatever happens."""
from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import pytest

from auditor.cli.app import main
from tests.conftest import write_tree

HOSTILE_NAMES = {
    b"x[/]y.py": "x[/]y.py",
    b"[bold]b[bold].py": "[bold]b[bold].py",
    b"a|b.py": "a|b.py",
    b"evil\n::error file=a.py::pwned.py": "evil\\x0a::error file=a.py::pwned.py",
    b"esc\x1b[31mred.py": "esc\\x1b[31mred.py",
    b"cr\rover.py": "cr\\x0dover.py",
    b"bad\xff\xfe.py": "bad\\xff\\xfe.py",
    b"pct%0A.py": "pct%0A.py",
    b"[link](http:evil).py": "[link](http:evil).py",
}


@pytest.fixture
def hostile(tmp_path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    for raw in HOSTILE_NAMES:
        path = os.path.join(os.fsencode(root), raw)
        os.makedirs(os.path.dirname(path), exist_ok=True)    # x[/]y.py is y.py in a directory named x[
        with open(path, "wb") as handle:
            handle.write(b"import pynvml\n")
    return root


def render(capsys, root: Path, *args: str) -> tuple[int, str]:
    code = main([str(root), "--no-progress", "-j", "1", "--no-html", "--fail-on", "low", *args])
    captured = capsys.readouterr()
    assert "internal error" not in captured.err
    return code, captured.out


def test_json_and_baseline_show_each_name_with_a_visible_escape(hostile, capsys, tmp_path):
    code, out = render(capsys, hostile, "--format", "json")
    assert code == 1
    assert sorted(f["path"] for f in json.loads(out)["findings"]) == sorted(HOSTILE_NAMES.values())
    assert main(["baseline", str(hostile), "-o", str(tmp_path / "b.json")]) == 0
    capsys.readouterr()
    text = (tmp_path / "b.json").read_text(encoding="utf-8")
    paths = {json.loads(line.rstrip(","))["path"] for line in text.splitlines() if line.startswith("    {")}
    assert paths == set(HOSTILE_NAMES.values())
    assert main([str(hostile), "--baseline", str(tmp_path / "b.json"), "-q", "--no-progress", "--fail-on", "low"]) == 0


@pytest.mark.parametrize("extra", [("--format", "github"), ("-q",)])
def test_no_workflow_command_can_be_injected(hostile, capsys, extra):
    code, out = render(capsys, hostile, *extra)
    assert code == 1
    for line in out.splitlines():
        # a line GitHub reads as a command is one we wrote: ::error/::warning/::notice with our own title
        if line.lstrip().startswith("::"):
            assert re.match(r"::(error|warning|notice) ", line), line
            props, _, message = line.partition("::")[2].partition("::")
            assert "\r" not in line and "::" not in message
            assert all(p.split("=", 1)[0] in {"file", "line", "col", "endLine", "title"}
                       for p in props.split(" ", 1)[1].split(","))
    assert not any(line.lstrip().startswith("::error file=a.py") for line in out.splitlines())


def test_github_properties_are_percent_encoded(hostile, capsys):
    code, out = render(capsys, hostile, "--format", "github")
    assert "file=evil\\x0a%3A%3Aerror file=a.py%3A%3Apwned.py," in out
    assert "file=pct%250A.py," in out


def test_markdown_cells_and_links_cannot_be_forged(hostile, capsys):
    code, out = render(capsys, hostile, "--format", "markdown")
    rows = [line for line in out.splitlines() if line.startswith("| ❌ |")]
    assert len(rows) == len(HOSTILE_NAMES)
    for row in rows:   # every row keeps its six cells: a | in a name is escaped, even inside the code span
        assert len(re.findall(r"(?<!\\)\|", row)) == 7, row
    assert "`a\\|b.py:1`" in out
    assert "](http:evil)" not in out.replace("`[link](http:evil).py:1`", "")


def test_terminal_shows_control_characters_and_markup_literally(tmp_path, capsys):
    hostile = tmp_path / "few"
    for raw in (b"esc\x1b[31mred.py", b"[bold]b[bold].py", b"x[/y.py"):
        (hostile / os.fsdecode(raw)).parent.mkdir(parents=True, exist_ok=True)
        (hostile / os.fsdecode(raw)).write_text("import pynvml\n")
    code, out = render(capsys, hostile, "--verbose")   # every group with its path
    assert code == 1
    assert "\x1b" not in out and "\r" not in out
    assert "esc\\x1b[31mred.py" in out
    assert "[bold]b[bold].py" in out      # rich markup in a name is shown, not applied (nor a crash)
    assert "x[/y.py" in out


def test_sarif_uris_are_percent_encoded(hostile, capsys):
    code, out = render(capsys, hostile, "--format", "sarif")
    uris = {loc["physicalLocation"]["artifactLocation"]["uri"]
            for run in json.loads(out)["runs"] for r in run["results"] for loc in r["locations"]}
    assert "a%7Cb.py" in uris and "x%5B/%5Dy.py" in uris and "pct%250A.py" in uris
    assert all(re.fullmatch(r"[A-Za-z0-9/%._~!$&'()*+,;=@-]+", u) for u in uris), uris


def test_html_escapes_names(hostile, capsys):
    code, out = render(capsys, hostile, "--format", "html")
    assert "<bold>" not in out and "esc\x1b" not in out


def test_output_to_dev_null_or_a_fifo_is_written_in_place(tmp_path, capsys):
    repo = write_tree(tmp_path / "repo", {"a.py": "import pynvml\n"})
    assert main([str(repo), "-o", os.devnull, "--format", "json", "--no-progress"]) == 1
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        assert main([str(repo), "-o", str(fifo), "--format", "json", "--no-progress"]) == 1
        data = os.read(reader, 1 << 20)
    finally:
        os.close(reader)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and b'"RA112"' in data


@pytest.mark.parametrize("debug", [False, True])
def test_an_internal_error_exits_2_never_1(tmp_path, capsys, monkeypatch, debug):
    repo = write_tree(tmp_path / "repo", {"a.py": "import pynvml\n"})

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr("auditor.report.json.render_json", broken)
    args = [str(repo), "--format", "json", "--no-progress"] + (["--debug"] if debug else [])
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "internal error: RuntimeError: boom" in err
    assert ("Traceback" in err) == debug


def test_a_stray_budget_alarm_is_a_tool_error_not_a_crash(tmp_path, capsys, monkeypatch):
    from auditor.run.runner import workers as runner
    repo = write_tree(tmp_path / "repo", {"a.py": "import pynvml\n"})

    def alarm(*args, **kwargs):
        raise runner._OverBudget

    monkeypatch.setattr("auditor.report.json.render_json", alarm)
    assert main([str(repo), "--format", "json", "--no-progress"]) == 2


@pytest.mark.slow
def test_the_budget_stops_a_scan_stuck_inside_a_regex(tmp_path, capsys, monkeypatch):
    """A catastrophic regex runs in C, where SIGALRM cannot stop it: the child scanning it is ended instead."""
    import auditor.run.runner.workers
    import re as regex

    real = auditor.run.runner.workers.scan_file

    def stuck_on_slow(source, *args, **kwargs):
        if source.path == "slow.py":
            regex.match(r"(a+)+$", "a" * 64 + "b")    # years in C
        return real(source, *args, **kwargs)

    monkeypatch.setattr(auditor.run.runner.workers, "scan_file", stuck_on_slow)
    repo = write_tree(tmp_path / "repo", {"slow.py": "import os\n", "a.py": "import pynvml\n",
                                          "z.py": "import tensorrt_llm\n"})
    code = main([str(repo), "--format", "json", "--no-progress", "-j", "1", "--time-budget", "1"])
    report = json.loads(capsys.readouterr().out)
    assert {e["path"]: e["message"] for e in report["errors"]} == {
        "slow.py": "skipped: scanning took over the 1 s per-file time budget"}
    assert {(f["path"], f["rule"]) for f in report["findings"]} == {("a.py", "RA112"), ("z.py", "RA100")}
    assert code == 1


def test_terminal_renders_every_hostile_name_without_crashing(hostile, capsys):
    code, out = render(capsys, hostile)
    assert code == 1 and "\x1b" not in out and "\r" not in out
    code, out = render(capsys, hostile, "-q")
    assert "x[/]y.py:1:1: RA112" in out and "esc\\x1b[31mred.py:1:1: RA112" in out
