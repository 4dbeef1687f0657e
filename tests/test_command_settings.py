"""Each command line is read into the settings of its own command (auditor/cli/commands.py), composed of
the concerns that command uses: `rules` carries no scan scope or gate, `fix` no report format, `check` no fix
flags. And a scanned tree's config is still held to what a repository may set whichever type it lands in."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from auditor.cli.commands import (
    BaselineSettings, CheckSettings, ConfigSettings, CoverageSettings, FixSettings, HistorySettings, RuleSettings,
    RulesSettings,
)
from auditor.cli.concerns import Cache, Gate, Output, RuleChoice, Scope
from auditor.cli.settings import UsageError, check_settings, parse_settings
from auditor.types import Severity
from tests.conftest import write_tree


def fields(settings) -> set[str]:
    return {f.name for f in dataclasses.fields(settings)}


@pytest.mark.parametrize("argv, kind, command", [
    (["check", "."], CheckSettings, "check"),
    (["."], CheckSettings, "check"),
    (["demo"], CheckSettings, "demo"),
    (["check", "--fix", "."], FixSettings, "fix"),
    (["check", "--diff", "."], FixSettings, "fix"),
    (["fix", "."], FixSettings, "fix"),
    (["baseline", "."], BaselineSettings, "baseline"),
    (["coverage", "."], CoverageSettings, "coverage"),
    (["history", "."], HistorySettings, "history"),
    (["rules"], RulesSettings, "rules"),
    (["rules", "--check", "pack"], RulesSettings, "rules"),
    (["rule", "RA301"], RuleSettings, "rule"),
    (["config"], ConfigSettings, "config"),
])
def test_each_command_line_is_read_into_its_own_command_type(argv, kind, command):
    settings = parse_settings(argv)
    assert type(settings) is kind and settings.command == command


def test_a_command_carries_only_the_concerns_it_uses():
    assert {"scope", "gate", "reporting", "output", "format"}.isdisjoint(fields(parse_settings(["rules"])))
    assert {"scope", "rules", "cache", "gate"}.isdisjoint(fields(parse_settings(["config"])))
    assert {"gate", "reporting", "format", "diff"}.isdisjoint(fields(parse_settings(["baseline", "."])))
    assert {"reporting", "format", "gate", "recording"}.isdisjoint(fields(parse_settings(["fix", "."])))
    assert {"diff", "unsafe", "verify", "category", "rule_id", "table_info"}.isdisjoint(
        fields(parse_settings(["check", "."])))
    check = parse_settings(["check", "src", "--fail-on", "low", "--exclude", "gen/", "--select", "RA3", "-q"])
    assert isinstance(check, CheckSettings)
    assert isinstance(check.scope, Scope) and check.scope.paths == (Path("src"),)
    assert check.scope.exclude == ("gen/",)
    assert isinstance(check.rules, RuleChoice) and check.rules.select == ("RA3",)
    assert isinstance(check.gate, Gate) and check.gate.fail_on == Severity.LOW
    assert isinstance(check.reporting, Output) and check.reporting.quiet and not check.progress
    assert isinstance(check.cache, Cache) and check.cache.scanned == (Path("src"),)


def test_demo_scans_the_bundled_example_and_keeps_the_cache_out_of_it():
    demo = parse_settings(["demo"])
    assert isinstance(demo, CheckSettings) and demo.example and demo.scope.paths == ()
    assert demo.cache.scanned[0].name == "example"
    assert parse_settings(["rules"]).cache.scanned == ()   # nothing scanned: the default cache is fine


def test_the_fleet_reads_a_check_and_nothing_else():
    assert isinstance(check_settings(["."]), CheckSettings)
    with pytest.raises(UsageError):
        check_settings(["--fix", "."])


def test_a_scanned_trees_config_still_cannot_open_the_gate_of_any_command(tmp_path):
    repo = write_tree(tmp_path / "repo", {
        ".rocm-audit.toml": 'fail-on = "never"\nallow-partial = true\ncache-dir = "here"\nexclude = ["gen/"]\n',
        "a.py": "import pynvml\n",
    })
    check = parse_settings(["check", str(repo)])
    assert isinstance(check, CheckSettings)
    assert check.gate.fail_on is None                  # a project may choose its own threshold
    assert check.scope.exclude == ("gen/",)
    assert not check.gate.allow_partial                # never from the scanned tree
    assert check.cache.cache_dir != Path("here")       # nor where the cache is read
    assert any("allow-partial ignored" in w for w in check.warnings)
    fix = parse_settings(["fix", str(repo)])
    assert isinstance(fix, FixSettings) and fix.fail_on is None and fix.cache.cache_dir != Path("here")


def test_every_command_the_parser_knows_has_its_function():
    from auditor.cli.app import COMMANDS
    from auditor.cli.parser import SUBCOMMANDS

    assert set(COMMANDS) == set(SUBCOMMANDS) - {"fleet"}   # fleet reads its own flags (cli/app.py main)
