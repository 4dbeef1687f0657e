"""What someone used to ruff tries first works: `check` with no path scans `.` (the example is `demo`),
per-command --help, a closed pipe, --exit-zero/--statistics (tests/test_one_answer.py), --extend-select,
--output-format, `# noqa: RA112`, suppressions by rule name, `check --diff`."""
import json
import os
import re
import subprocess
import sys

import pytest

from auditor.cli.app import main
from auditor.cli.parser import COMMANDS
from tests.conftest import fast_first, write_tree

BASE = ["--no-progress", "--no-html", "-j", "1"]
PYNVML = "import pynvml\n\npynvml.nvmlInit()\n"


def _json(capsys, *args) -> tuple[int, dict]:
    code = main([*map(str, args), "--format", "json", *BASE])
    return code, json.loads(capsys.readouterr().out)


def test_check_with_no_path_scans_the_current_directory(tmp_path, monkeypatch, capsys):
    write_tree(tmp_path, {"mine/monitor.py": PYNVML})
    monkeypatch.chdir(tmp_path)
    code, data = _json(capsys, "check")
    assert code == 1 and {f["path"] for f in data["findings"]} == {"mine/monitor.py"}
    code, data = _json(capsys)   # no command at all: the same
    assert {f["path"] for f in data["findings"]} == {"mine/monitor.py"}


def test_check_in_an_empty_directory_points_at_demo(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["check", *BASE]) == 2
    assert "`rocm-audit demo` scans the example" in capsys.readouterr().err


def test_demo_scans_the_bundled_example(capsys):
    code, data = _json(capsys, "demo")
    assert data["summary"]["findings"] == 22 and any(f["path"] == "demo_app/serve.py" for f in data["findings"])
    assert code == 0     # a first try in a `set -e` shell goes on; it says what `check` would exit


def test_demo_exits_0_and_says_what_check_would_exit(capsys):
    assert main(["demo", "--no-progress", "--no-html"]) == 0
    err = capsys.readouterr().err
    example = [line for line in err.splitlines() if "scanning the example" in line][0].split("(", 1)[1].split(")")[0]
    check = main(["check", example, "--no-progress", "--no-html"])
    assert check == 1 and f"`rocm-audit check` on this tree would exit {check}" in err


def test_nothing_to_scan_is_one_rule_for_any_tree_without_source(tmp_path, capsys):
    lone = tmp_path / "notes"
    lone.mkdir()
    (lone / "notes.txt").write_text("meeting notes\n")
    empty = tmp_path / "empty"
    empty.mkdir()
    for tree in (lone, empty):
        assert main(["check", str(tree), "--no-progress", "--no-html"]) == 2
        assert "nothing to scan" in capsys.readouterr().err


def test_history_outside_git_names_no_option_the_user_did_not_pass(tmp_path, capsys):
    (tmp_path / "a.py").write_text("import pynvml\n")
    assert main(["history", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "is not in a git repository" in err and "--diff-base" not in err


@pytest.mark.parametrize("command, own, foreign", [
    ("rules", "--category", "--baseline"),
    ("rule", "--rules", "--fail-on"),
    ("fix", "--unsafe", "--fail-on"),
    ("coverage", "--table-info", "--baseline"),
    ("config", "--config", "--select"),
    ("baseline", "--output", "--diff-base"),
    ("check", "--fail-on", "--table-info"),
    ("fleet", "--executor", "--fail-on-verify"),
])
def test_each_command_shows_only_its_own_options_in_one_style(command, own, foreign, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([command, "--help"])
    out = capsys.readouterr().out
    assert exit_.value.code == 0
    usage = "usage: rocm-audit " + COMMANDS[command].usage + " [options]\n"
    assert out.startswith(usage)                      # one usage line, as every command writes it
    options = {flag for line in out.splitlines() if line.startswith("  -")
               for flag in re.findall(r"--?[\w-]+", line.strip().split("  ")[0])}
    assert own in options and foreign not in options and "--help" in options
    assert re.search(r"^  -h, --help\s+show this command's options and exit$", out, re.MULTILINE)
    assert "Exit codes: 0" in out and max(map(len, out.splitlines()[:3])) <= 80


@pytest.mark.parametrize("command", ["check", "history", "coverage"])
def test_each_command_offers_only_the_formats_it_takes(command, tmp_path, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    offered = re.search(r"--format \{([\w,]+)\}", capsys.readouterr().out)
    if offered is None:
        return
    tree = tmp_path / "t"
    write_tree(tree, {"monitor.py": PYNVML})
    for name in offered.group(1).split(","):
        main([command, str(tree), "--format", name, "-o", str(tmp_path / f"out.{name}"), "--no-cache"])
        err = capsys.readouterr().err
        assert "goes with" not in err and "invalid choice" not in err, (command, name, err)


def test_top_level_help_lists_the_commands_first_on_one_screen(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert len(lines) <= 40 and max(map(len, lines)) <= 100
    listed = [i for i, line in enumerate(lines) if line.startswith("  rocm-audit ")]
    assert [lines[i].split("  ")[1].strip() for i in listed] == [f"rocm-audit {c.usage}".strip()
                                                                 for c in COMMANDS.values()]
    assert not any(line.lstrip().startswith("--") for line in lines[:listed[0]])   # no option before them
    assert "rocm-audit COMMAND --help" in out


# one process boundary in the fast run (a check that finds something), every command in the full one
@pytest.mark.parametrize("args, code", fast_first([(["check", "-q", "SRC"], 1), (["rules"], 0), (["rule", "RA200"], 0)]))
def test_a_closed_pipe_exits_quietly_with_the_normal_code(args, code, tmp_path):
    write_tree(tmp_path, {"monitor.py": PYNVML})
    argv = [sys.executable, "-m", "auditor", *[str(tmp_path) if a == "SRC" else a for a in args], *BASE]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "COLUMNS": "80"})
    proc.stdout.close()   # as `| head -0` does: every write meets a closed pipe
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == code
    assert "error" not in err and "Traceback" not in err


def test_output_format_is_format(tmp_path, capsys):
    write_tree(tmp_path, {"monitor.py": PYNVML})
    assert main([str(tmp_path), "--output-format", "json", *BASE]) == 1
    assert json.loads(capsys.readouterr().out)["findings"][0]["rule"] == "RA112"


def test_extend_select_adds_to_select(tmp_path, capsys):
    write_tree(tmp_path, {"monitor.py": PYNVML + "import tensorrt_llm\n"})
    _, only = _json(capsys, tmp_path, "--select", "RA100")
    _, more = _json(capsys, tmp_path, "--select", "RA100", "--extend-select", "pynvml")
    assert {f["rule"] for f in only["findings"]} == {"RA100"}
    assert {f["rule"] for f in more["findings"]} == {"RA100", "RA112"}


def test_noqa_is_honoured_for_our_rules_and_left_alone_for_others(tmp_path, capsys):
    write_tree(tmp_path, {"a.py": "import pynvml  # noqa: RA112\n", "b.py": "import pynvml  # noqa: E402, F401\n",
                          "c.py": "import pynvml  # noqa: F401,pynvml\n"})
    _, data = _json(capsys, tmp_path)
    assert [f["path"] for f in data["findings"]] == ["b.py"]
    assert data["summary"]["suppressed"] == 2 and data["warnings"] == []


def test_suppressions_accept_rule_names_and_are_never_unknown_because_of_selection(tmp_path, capsys):
    write_tree(tmp_path, {"a.py": "import pynvml  # rocm-audit: ignore[pynvml]\nimport tensorrt_llm  "
                                  "# rocm-audit: ignore[RA100]\n",
                          "b.py": "import pynvml  # rocm-audit: ignore[RA999]\n"})
    _, data = _json(capsys, tmp_path)
    assert [f["path"] for f in data["findings"]] == ["b.py"]
    assert [w["message"].split(" in ")[0] for w in data["warnings"]] == ["unknown rule id RA999"]
    for flags in (["--ignore", "RA112"], ["--select", "RA100"], ["--select", "RA112"]):
        _, data = _json(capsys, tmp_path, *flags)
        assert [w["path"] for w in data["warnings"]] == ["b.py"], flags


def test_check_diff_is_fix_diff(tmp_path, capsys):
    write_tree(tmp_path, {"k.cu": "__device__ int f(int m) { return __shfl_xor_sync(0xffffffff, m, 1); }\n"})
    fix_code = main(["fix", str(tmp_path), "--diff", *BASE])
    fix_out = capsys.readouterr().out
    check_code = main(["check", str(tmp_path), "--diff", *BASE])
    assert (check_code, capsys.readouterr().out) == (fix_code, fix_out)
    assert fix_out.startswith("---") and (tmp_path / "k.cu").read_text().count("0xffffffff") == 1
