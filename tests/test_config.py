"""Config files: `[tool.rocm-audit]` in pyproject.toml or `.rocm-audit.toml`, keys = long flag names, the
command line wins, `rocm-audit config` says where each value came from, a broken file exits 2 naming it."""
import pytest

from auditor.cli.app import main
from tests.conftest import write_tree

BLOCKED = {"serve.py": "import tensorrt_llm\n", "monitor.py": "import pynvml\n"}   # critical, high


def test_pyproject_table_sets_defaults_and_the_command_line_wins(tmp_path, run_json):
    write_tree(tmp_path, {**BLOCKED, "pyproject.toml": '[project]\nname = "x"\n\n[tool.rocm-audit]\nignore = ["RA100"]\n'})
    code, report = run_json(tmp_path)
    assert {f["rule"] for f in report["findings"]} == {"RA112"}         # RA100 ignored by the config
    assert code == 1
    write_tree(tmp_path, {"pyproject.toml": '[tool.rocm-audit]\nignore = ["RA100"]\nfail-on = "critical"\n'})
    assert run_json(tmp_path)[0] == 0                                    # high is below the configured threshold
    assert run_json(tmp_path, "--fail-on", "high")[0] == 1               # the command line wins


def test_dot_file_wins_over_pyproject_and_is_found_from_a_subdirectory(tmp_path, run_json):
    write_tree(tmp_path, {
        **{f"src/{k}": v for k, v in BLOCKED.items()},
        "pyproject.toml": '[tool.rocm-audit]\nfail-on = "never"\n',
        ".rocm-audit.toml": 'exclude = ["monitor.py"]\nfail-on = "high"\n',
    })
    (tmp_path / ".git").mkdir()     # the search stops at the repository root
    code, report = run_json(tmp_path / "src")
    assert code == 1
    assert {f["path"] for f in report["findings"]} == {"serve.py"}


def test_config_command_prints_values_and_where_they_came_from(tmp_path, capsys):
    write_tree(tmp_path, {"pyproject.toml": '[project]\nname = "x"\n\n[tool.rocm-audit]\nfail-on = "medium"\n'
                                            'exclude = ["build/"]\nbaseline = "ci/known.json"\n'})
    assert main(["config", str(tmp_path), "--select", "RA1"]) == 0
    out = capsys.readouterr().out
    lines = {line.split(" = ")[0]: line for line in out.splitlines() if " = " in line}
    pyproject = tmp_path / "pyproject.toml"
    assert out.splitlines()[0] == f"# config file: {pyproject} [tool.rocm-audit]"
    assert lines["fail-on"].startswith('fail-on = "medium"') and lines["fail-on"].endswith(f"# {pyproject}:5")
    assert lines["exclude"].endswith(f"# {pyproject}:6")
    assert f'"{tmp_path / "ci" / "known.json"}"' in lines["baseline"]   # relative to the config file
    assert lines["select"].startswith('select = ["RA1"]') and lines["select"].endswith("# command line")
    assert lines["format"].endswith("# default")


def test_config_key_accepts_the_same_values_as_the_flag(tmp_path, run_json):
    write_tree(tmp_path, {**BLOCKED, ".rocm-audit.toml": 'select = "RA112"\njobs = 1\nmax-file-size = "1M"\n'
                                                         'force-exclude = true\n'})
    _, report = run_json(tmp_path)
    assert {f["rule"] for f in report["findings"]} == {"RA112"}


@pytest.mark.parametrize(("name", "content", "line", "needle"), [
    (".rocm-audit.toml", 'fail-on = "high"\nexclude = [\n', 3, "not valid TOML"),
    ("pyproject.toml", '[tool.rocm-audit]\nfail-on = "high"\nfail_on == "low"\n', 3, "not valid TOML"),
    (".rocm-audit.toml", 'fail-on = "high"\nfial-on = "low"\n', 2, "unknown key 'fial-on'"),
    ("pyproject.toml", '[project]\nname = "x"\n[tool.rocm-audit]\nfail-on = "severe"\n', 4, "invalid choice: 'severe'"),
    (".rocm-audit.toml", "jobs = 0\n", 1, "at least 1"),
    (".rocm-audit.toml", 'force-exclude = "yes"\n', 1, "expected true or false"),
    (".rocm-audit.toml", "select = [1, [2]]\n", 1, "expected a string or a list"),
])
def test_broken_config_exits_2_naming_file_and_line(tmp_path, capsys, name, content, line, needle):
    write_tree(tmp_path, {**BLOCKED, name: content})
    assert main([str(tmp_path), "--no-progress"]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in captured.err, captured.err
    assert f"{tmp_path / name}:{line}:" in lines[0] and needle in lines[0], lines[0]


def test_unrelated_pyproject_is_ignored_even_when_broken(tmp_path, run_json):
    write_tree(tmp_path, {**BLOCKED, "pyproject.toml": "[project\nname = 'x'\n"})
    assert run_json(tmp_path)[0] == 1


def test_explicit_config_file(tmp_path, run_json):
    write_tree(tmp_path, {"repo/serve.py": "import tensorrt_llm\n", "ci.toml": 'fail-on = "never"\n'})
    assert run_json(tmp_path / "repo", "--config", tmp_path / "ci.toml")[0] == 0


@pytest.mark.parametrize("flag", ["--select", "--ignore"])
def test_a_select_or_ignore_naming_no_rule_exits_2_instead_of_turning_the_gate_off(tmp_path, capsys, flag):
    write_tree(tmp_path, BLOCKED)
    assert main([str(tmp_path), flag, "RA10O", "-q", "--no-progress", "--no-html"]) == 2   # letter O, a typo
    err = capsys.readouterr().err
    assert f"{flag} 'RA10O' (command line): no rule id, prefix or name matches it" in err
    assert main([str(tmp_path), "--select", "RA1", "-q", "--no-progress", "--no-html"]) == 1   # a real prefix


def test_a_config_select_or_ignore_naming_no_rule_exits_2_naming_the_file_and_line(tmp_path, capsys):
    write_tree(tmp_path, {**BLOCKED, ".rocm-audit.toml": 'fail-on = "high"\nselect = ["RA100", "RA11x"]\n'})
    assert main([str(tmp_path), "-q", "--no-progress", "--no-html"]) == 2
    err = capsys.readouterr().err
    assert "--select 'RA11x'" in err and ".rocm-audit.toml:2" in err
    write_tree(tmp_path, {".rocm-audit.toml": 'ignore = ["tensorrt-llm-typo"]\n'})
    assert main([str(tmp_path), "-q", "--no-progress", "--no-html"]) == 2
    assert "--ignore 'tensorrt-llm-typo'" in capsys.readouterr().err
