"""A config file in the scanned tree is written by whoever wrote the tree: it may choose what a project owner
chooses about its own findings, never where files are written, which cache is read, what runs, or how the
gate that judges its own change is set."""
from __future__ import annotations

import json
import os
import subprocess

import pytest

from auditor.cli.app import main
from tests.conftest import write_tree
from tests.gitrepo import GitRepo


def run(capsys, *args) -> tuple[int, str, str]:
    code = main([*map(str, args), "--no-progress", "-j", "1"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("key", ["output", "json", "html", "sarif", "markdown"])
def test_repo_config_cannot_choose_where_reports_are_written(tmp_path, capsys, key):
    outside = tmp_path / "site-packages" / "evil.pth"
    outside.parent.mkdir()
    repo = write_tree(tmp_path / "repo", {
        ".rocm-audit.toml": f'quiet = true\n{key} = "{outside}"\n',
        "a.py": "import pynvml\n",
    })
    before = sorted(p.name for p in repo.iterdir())
    code, out, err = run(capsys, repo, "--no-html")
    assert not outside.exists()
    assert f".rocm-audit.toml:2: {key} ignored" in err and "where files are written" in err
    assert code == 1 and "a.py:1:1: RA112" in out       # the report went to standard output as usual
    assert sorted(p.name for p in repo.iterdir()) == before


def test_repo_config_cannot_choose_the_hipify_perl_that_is_read(tmp_path, capsys):
    fake = tmp_path / "repo" / "tools" / "hipify-perl"
    repo = write_tree(tmp_path / "repo", {
        "pyproject.toml": '[project]\nname = "x"\n\n[tool.rocm-audit]\nhipify-perl = "tools/hipify-perl"\n',
        "tools/hipify-perl": "sub x {}\n",
        "k.cu": "__global__ void k() {}\n",
    })
    assert fake.exists()
    code, out, err = run(capsys, repo, "--format", "json", "--fail-on", "never")
    assert "pyproject.toml:5: hipify-perl ignored" in err
    assert "tools/hipify-perl" not in json.dumps(json.loads(out)["coverage"])


def test_repo_config_keeps_owner_choices(tmp_path, capsys):
    repo = write_tree(tmp_path / "repo", {
        ".rocm-audit.toml": 'fail-on = "critical"\nignore = ["RA112"]\nexclude = ["build/"]\n',
        "a.py": "import pynvml\nimport tensorrt_llm\n",
        "build/b.py": "import tensorrt_llm\n",
    })
    code, out, err = run(capsys, repo, "--format", "json")
    report = json.loads(out)
    assert {(f["path"], f["rule"]) for f in report["findings"]} == {("a.py", "RA100")}
    assert code == 1 and err == ""


def test_repo_config_bounds_and_cores(tmp_path, capsys):
    repo = write_tree(tmp_path / "repo", {
        ".rocm-audit.toml": 'max-file-size = "4G"\ntime-budget = 100000\njobs = 100000\n',
        "a.py": "import os\n",
    })
    code, out, err = run(capsys, "config", repo)
    assert ".rocm-audit.toml:1: max-file-size ignored: over 64M" in err
    assert ".rocm-audit.toml:2: time-budget ignored: over 600 s" in err
    assert "max-file-size = 16777216" in out and "time-budget = 60.0" in out
    from auditor.cli.settings import default_jobs, parse_settings

    assert parse_settings([str(repo)]).scope.jobs == default_jobs()
    assert parse_settings([str(repo), "-j", "4096"]).scope.jobs == default_jobs()


def test_repo_config_baseline_must_stay_inside_the_repository(tmp_path, capsys):
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text('{"version": 1, "entries": []}\n')
    repo = GitRepo(tmp_path / "repo", {".rocm-audit.toml": f'baseline = "{elsewhere}"\n', "a.py": "import os\n"})
    code, out, err = run(capsys, repo.root, "-q")
    assert f"baseline ignored: {elsewhere} is outside the repository" in err
    assert code == 0


def test_config_search_stops_at_the_scanned_directory_outside_a_repository(tmp_path, capsys):
    """Another local user's .rocm-audit.toml in a shared parent (/tmp) must not apply to a scan below it."""
    write_tree(tmp_path, {".rocm-audit.toml": 'fail-on = "never"\n'})
    project = write_tree(tmp_path / "shared" / "project", {"a.py": "import tensorrt_llm\n"})
    code, out, err = run(capsys, project, "-q")
    assert code == 1                                   # the parent's fail-on = never did not apply
    code, out, err = run(capsys, "config", project)
    assert "# no config file found" in out


def test_config_search_stops_at_the_repository_root(tmp_path, capsys):
    write_tree(tmp_path, {".rocm-audit.toml": 'fail-on = "never"\n'})
    repo = GitRepo(tmp_path / "repo", {"sub/a.py": "import tensorrt_llm\n"})
    assert run(capsys, repo.root / "sub", "-q")[0] == 1


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to give a file away")
def test_a_config_file_of_another_user_is_not_read(tmp_path, capsys):
    repo = write_tree(tmp_path / "repo", {".rocm-audit.toml": 'fail-on = "never"\n', "a.py": "import tensorrt_llm\n"})
    subprocess.run(["chown", "65534:65534", str(repo / ".rocm-audit.toml")], check=True)
    assert run(capsys, repo, "-q")[0] == 1


@pytest.mark.parametrize("flag,value", [("--select", "RA3O1"), ("--ignore", "RA0"), ("--select", "RA1,nope")])
def test_a_rule_pattern_that_matches_nothing_is_an_error(tmp_path, capsys, flag, value):
    repo = write_tree(tmp_path / "repo", {"a.py": "import tensorrt_llm\n"})
    code, out, err = run(capsys, repo, flag, value)
    bad = value.split(",")[-1]
    assert code == 2 and f"{flag} '{bad}'" in err and "no rule id" in err


def test_a_config_rule_pattern_that_matches_nothing_names_its_file(tmp_path, capsys):
    repo = write_tree(tmp_path / "repo", {".rocm-audit.toml": 'select = ["RA3O1"]\n', "a.py": "import os\n"})
    code, out, err = run(capsys, repo)
    assert code == 2 and "--select 'RA3O1'" in err and ".rocm-audit.toml:1" in err


def test_prefixes_names_and_globs_still_select(tmp_path, capsys):
    repo = write_tree(tmp_path / "repo", {"a.py": "import tensorrt_llm\nimport pynvml\n"})
    code, out, err = run(capsys, repo, "--format", "json", "--select", "RA1,pynvml,RA10?", "--ignore", "ra100")
    assert code == 1 and {f["rule"] for f in json.loads(out)["findings"]} == {"RA112"}


def test_diff_base_judges_a_change_with_the_base_config(tmp_path, capsys):
    repo = GitRepo(tmp_path / "r", {"pyproject.toml": '[project]\nname = "x"\n\n[tool.rocm-audit]\nfail-on = "high"\n',
                                    "a.py": "import os\n"})
    repo.git("checkout", "-q", "-b", "pr")
    repo.commit({
        "pyproject.toml": '[project]\nname = "x"\n\n[tool.rocm-audit]\nfail-on = "never"\nignore = ["RA1"]\n'
                          'exclude = ["*.py"]\n',
        "b.py": "import pynvml\n",
    })
    code, out, err = run(capsys, repo.root, "--diff-base", "main", "-q")
    assert code == 1 and "b.py:1:1: RA112" in out
    assert "pyproject.toml:5: fail-on changed by this change" in err
    assert "pyproject.toml:6: ignore changed by this change" in err
    assert "pyproject.toml:7: exclude changed by this change" in err
    # a config file the change adds is no config at the base either: the defaults judge it
    repo.git("checkout", "-q", "main")
    repo.git("checkout", "-q", "-b", "pr2")
    repo.commit({".rocm-audit.toml": 'fail-on = "never"\n', "c.py": "import tensorrt_llm\n"})
    assert run(capsys, repo.root, "--diff-base", "main", "-q")[0] == 1
    # the command line still decides
    assert run(capsys, repo.root, "--diff-base", "main", "-q", "--fail-on", "never")[0] == 0


def test_repo_config_cannot_set_the_diff_base(tmp_path, capsys):
    repo = GitRepo(tmp_path / "r", {".rocm-audit.toml": 'diff-base = "HEAD"\n', "a.py": "import tensorrt_llm\n"})
    code, out, err = run(capsys, repo.root, "-q")
    assert ".rocm-audit.toml:1: diff-base ignored" in err and code == 1


def test_the_users_own_config_outside_the_tree_sets_everything(tmp_path, capsys):
    repo = write_tree(tmp_path / "repo", {"a.py": "import pynvml\n"})
    own = tmp_path / "mine.toml"
    target = tmp_path / "out" / "report.json"
    target.parent.mkdir()
    own.write_text(f'json = "{target}"\n')
    code, out, err = run(capsys, repo, "--config", own, "-q")
    assert target.exists() and err == ""
    # the same file named with --config from inside the scanned tree is held to the repository's rules
    inside = repo / "cfg.toml"
    inside.write_text(f'json = "{tmp_path / "other.json"}"\n')
    code, out, err = run(capsys, repo, "--config", inside, "-q")
    assert not (tmp_path / "other.json").exists() and "json ignored" in err


def test_blank_pyproject_is_linear(tmp_path, capsys):
    """150 KB of blank lines used to cost 20-55 s in every subcommand (a regex quadratic in blank lines)."""
    repo = write_tree(tmp_path / "repo", {"pyproject.toml": "\n" * 150_000, "a.py": "import pynvml\n"})
    from auditor.config import _key_lines, _mentions_table

    assert not _mentions_table(repo / "pyproject.toml")
    assert _key_lines("\n" * 150_000 + "[tool.rocm-audit]\nfail-on = 'low'\n", "tool.rocm-audit",
                      {"fail-on": "low"}) == [("fail-on", 150_002)]
    for command in ("check", "config", "baseline", "coverage"):
        args = [command, repo] + (["-o", tmp_path / "b.json"] if command == "baseline" else [])
        assert run(capsys, *args)[0] in (0, 1)


def test_a_pyproject_nested_past_the_recursion_limit_is_an_invalid_file_not_a_crash(tmp_path, capsys):
    """`packages = [[[[...` 50,000 deep: every reader of the tree's TOML (manifests, ROCm extras, declared packages,
    entry points) takes it as invalid TOML; the file fails the run like any unreadable file (exit 1), no exit 2."""
    nested = "[" * 50_000 + "]" * 50_000
    repo = write_tree(tmp_path / "repo", {
        "pyproject.toml": f'[project]\nname = "pkg"\nversion = "1"\n[tool.setuptools]\npackages = {nested}\n',
        "pkg/__init__.py": "import torch\n",
    })
    code, out, _ = run(capsys, "check", repo, "--format", "json", "--no-cache")
    report = json.loads(out)
    assert code == 1
    assert {e["path"]: e["message"] for e in report["errors"]} == {
        "pyproject.toml": "invalid TOML: nested too deeply to read"}


def test_repo_config_cannot_ask_for_its_files_to_be_rewritten(tmp_path, capsys):
    """`fix = true` / `unsafe = true` in a scanned repository's config would turn a check into a rewrite of
    the very tree being judged: ignored, with the line named, and the tree is left as it was."""
    from auditor.cli.app import main

    repo = write_tree(tmp_path / "repo", {
        ".rocm-audit.toml": 'fix = true\nunsafe = true\n',
        "requirements.txt": "torch==2.3.1+cu121\n",
    })
    before = (repo / "requirements.txt").read_bytes()
    code = main(["check", str(repo), "--no-progress", "--no-html", "--no-cache", "--fail-on", "never"])
    err = capsys.readouterr().err
    assert code == 0
    assert ".rocm-audit.toml:1: fix ignored" in err and ".rocm-audit.toml:2: unsafe ignored" in err
    assert (repo / "requirements.txt").read_bytes() == before
