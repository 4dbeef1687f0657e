"""One frozen settings type per command, composed of the concerns it uses (cli/concerns.py): a command
cannot read an option it does not take. cli/settings.py reads a command line into one of them."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from auditor.cli.concerns import Cache, Gate, Output, Recording, RuleChoice, Scope
from auditor.cli import historyoptions as history_options
from auditor.types import Severity


@dataclass(frozen=True, slots=True)
class CommandSettings:
    """What every command reads: its name, where each option came from, the config keys ignored, the run's
    time limit."""
    command: str
    sources: tuple[tuple[str, object, str], ...]   # (long flag, value, where it came from)
    warnings: tuple[str, ...]         # config keys ignored (a repository's config may not set them)
    max_run_time: float | None        # seconds for the whole run (None: no limit); over it, exit 2


@dataclass(frozen=True, slots=True)
class CheckSettings(CommandSettings):
    """`check [PATH…]` and `demo` (the bundled example: `example`, no paths)."""
    example: bool
    config_file: Path | None          # the config file in use (files named one by one are relative to it)
    scope: Scope
    rules: RuleChoice
    cache: Cache
    gate: Gate
    reporting: Output
    recording: Recording
    progress: bool                    # a progress bar on an interactive stderr (not --no-progress, not -q)


@dataclass(frozen=True, slots=True)
class BaselineSettings(CommandSettings):
    """`baseline [PATH]`: today's findings written as known, with the gate's settings recorded."""
    config_file: Path | None
    scope: Scope
    rules: RuleChoice
    cache: Cache
    output: Path | None               # -o FILE
    baseline: Path | None             # --baseline FILE (same as -o)
    fail_on_verify: bool              # which findings are recorded as breaking
    progress: bool


@dataclass(frozen=True, slots=True)
class CoverageSettings(CommandSettings):
    """`coverage [PATH…]` (`--table-info`: what the API table was built from)."""
    scope: Scope
    rules: RuleChoice
    cache: Cache
    format: str
    output: Path | None
    table_info: bool


@dataclass(frozen=True, slots=True)
class FixSettings(CommandSettings):
    """`fix PATH…` (and `check --fix`, `check --diff`)."""
    config_file: Path | None
    scope: Scope
    rules: RuleChoice
    cache: Cache
    fail_on: Severity | None          # the exit code, as check's on the tree as fix leaves it
    diff: bool                        # print a unified diff and change nothing
    unsafe: bool                      # also apply the fixes marked unsafe
    verify: bool                      # compile each touched .cu before and after (nvcc; hipcc when found)
    keep_unchecked: bool = False      # with verify: write the edits no compiler could check


@dataclass(frozen=True, slots=True)
class HistorySettings(CommandSettings):
    """`history [PATH]`: the progress over past commits."""
    scope: Scope
    rules: RuleChoice
    cache: Cache
    format: str
    output: Path | None
    quiet: bool
    history: history_options.HistoryOptions


@dataclass(frozen=True, slots=True)
class RulesSettings(CommandSettings):
    """`rules` (`--category`, `--json`) and `rules --check DIR`."""
    rules: RuleChoice
    cache: Cache
    category: str | None
    rules_json: bool
    check_pack: Path | None           # validate this rule pack and run its examples
    time_budget: float                # per example, under --check


@dataclass(frozen=True, slots=True)
class RuleSettings(CommandSettings):
    """`rule ID`."""
    rules: RuleChoice
    cache: Cache
    rule_id: str


@dataclass(frozen=True, slots=True)
class ConfigSettings(CommandSettings):
    """`config [PATH]`: the settings a check would use, and where each came from."""
    config_file: Path | None
    config_start: Path                # where the config file search started


Settings = (CheckSettings | BaselineSettings | CoverageSettings | FixSettings | HistorySettings | RulesSettings
            | RuleSettings | ConfigSettings)
