"""Subcommands and their options. Each subcommand is one small function that adds its option groups; a new
subcommand is one more function and one more entry in COMMANDS. `rocm-audit CMD --help` shows only CMD's
options; the parser that reads a command line holds every option once (the first definition wins), so the config
file and `rocm-audit config` see them all."""
from __future__ import annotations

import argparse
import difflib
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from auditor import __version__
from auditor.util.errors import ToolError
from auditor.cli import historyoptions as history_options
from auditor.report.formats import FORMATS  # the format registry names them

RULES_JSON = Path("-")   # `rules --json` with no FILE
FILE_OUTPUTS = ("html", "sarif", "json", "markdown")   # `--html FILE` …: extra reports from the same run
FAIL_ON = ("critical", "high", "medium", "low", "info", "never")
CACHE_ENV = "ROCM_AUDIT_CACHE_DIR"   # the cache directory, when --cache-dir is not given
EXIT_CODES = ("Exit codes: 0 clean, 1 findings that would break on ROCm at or above --fail-on (new ones, with a "
              "baseline or --diff-base), 2 usage, config, baseline, git or tool error.")


class UsageError(ToolError, ValueError):   # config.py catches it as one, not importing this module
    """Bad flags or arguments: exit 2 with one line."""


class CommandParser(argparse.ArgumentParser):
    """argparse's parser with one-line errors, which keeps the options it is given where the config file, the
    usage check and `--help` read them (argparse lists them only in private fields)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.options: list[argparse.Action] = []   # every option and positional argument, in the order added
        self.repeatable: set[str] = set()          # dests of options given once per value (action="append")
        self.titled: dict[str, Any] = {}           # option group by title
        super().__init__(*args, **kwargs)

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        return self._kept(super().add_argument(*args, **kwargs), kwargs)

    def option(self, title: str, *flags: str, **kwargs: Any) -> None:
        """Add an option to the group of this title (made on first use) unless the parser has it already (the
        reading parser holds every command's options once)."""
        if any(flag in action.option_strings for action in self.options for flag in flags):
            return
        if title not in self.titled:
            self.titled[title] = self.add_argument_group(title)
        self._kept(self.titled[title].add_argument(*flags, **kwargs), kwargs)

    def group(self, title: str) -> Callable[..., None]:
        """Adds options to the group of this title."""
        return partial(self.option, title)

    def takes(self, dest: str) -> bool:
        return any(action.dest == dest for action in self.options)

    def _kept(self, action: argparse.Action, kwargs: dict[str, Any]) -> argparse.Action:
        self.options.append(action)
        if kwargs.get("action") in ("append", "extend"):
            self.repeatable.add(action.dest)
        return action

    def error(self, message: str):  # one line, exit 2 (argparse's default prints usage too)
        unknown = re.match(r"unrecognized arguments: (--[\w-]+)", message)
        longs = [o for a in self.options for o in a.option_strings if o.startswith("--")]
        if unknown and (close := difflib.get_close_matches(unknown.group(1), longs, 1, 0.6)):
            message += f" (did you mean {close[0]}?)"
        raise UsageError(message)


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number of at least 1, got {value}")
    return value


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text}")
    return value


def _size(text: str) -> int:
    units = {"k": 1024, "m": 1024**2, "g": 1024**3}
    t = text.strip().lower().rstrip("b")
    try:
        if t and t[-1] in units:
            return int(float(t[:-1]) * units[t[-1]])
        return int(t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a size such as 16M, got {text!r}") from None


# --- option groups, shared by the commands that take them ---------------------------------------------------

def _paths(parser: CommandParser, help_text: str) -> None:
    if not parser.takes("args"):
        parser.add_argument("args", nargs="*", metavar="PATH", help=help_text)


def _common(parser: CommandParser) -> None:
    group = parser.group("general")
    group("-h", "--help", action="store_true", help="show this command's options and exit")
    group("--config", type=Path, metavar="FILE",
          help="config file to use instead of searching for .rocm-audit.toml or pyproject.toml")
    group("--debug", action="store_true", help="show tracebacks of internal errors")


def _selection(parser: CommandParser) -> None:
    group = parser.group("rule selection")
    group("--select", action="append", help="only these rule ids, prefixes or names (comma separated)")
    group("--extend-select", action="append", metavar="RULES",
          help="add these to --select (or to the config's select) instead of replacing it")
    group("--ignore", action="append", help="skip these rule ids, prefixes or names (comma separated)")
    group("--per-file-ignores", action="append", metavar="GLOB:RULES",
          help="ignore these rule ids or prefixes in files matching GLOB (`tests/*:RA5,RA301`; in the config, a "
               "table as in ruff)")
    group("--rules", action="append", type=Path, metavar="DIR", dest="rule_packs",
          help="add this rule pack (a directory of rule files) to the shipped rules (repeatable; never from a "
               "repository's config)")


def _scanning(parser: CommandParser) -> None:
    group = parser.group("what is scanned, and how")
    group("--exclude", action="append", help="gitignore-style pattern to skip (repeatable)")
    group("--optional-dirs", action="append", metavar="PATTERN",
          help="gitignore-style directories whose findings are optional (reported, never block), besides "
               "examples/, tests/, benchmarks/ and the like (comma separated)")
    group("--force-exclude", action="store_true",
          help="apply --exclude and .gitignore to files named on the command line too")
    group("--include-vendored", action="store_true",
          help="also scan vendored code (third_party/, vendor/, git submodules), skipped by default")
    group("-j", "--jobs", type=positive_int, default=None,
          help="worker processes (default and most: the number of cores)")
    group("--max-file-size", type=_size, default=16 * 1024 * 1024,
          help="skip (and report) files larger than this (default 16M)")
    group("--time-budget", type=seconds, default=60.0, metavar="SECONDS",
          help="stop scanning a file after this long and report it (default 60)")
    group("--max-worker-memory", type=_size, default=0, metavar="SIZE",
          help="memory each scanning process may take; a file that needs more is reported as not scanned "
               "(default: an equal share of 3/4 of the machine's memory, 1G to 4G)")
    group("--max-run-time", type=seconds, default=None, metavar="SECONDS",
          help="end the whole run after this long, with exit 2 (default: no limit)")
    group("--no-cache", action="store_true", help="neither read nor write cached scan results")
    group("--cache-dir", type=Path, metavar="DIR",
          help=f"cache scan results here (default: ${CACHE_ENV}, else the user's cache directory)")
    group("--hipify-perl", type=Path, metavar="PATH",
          help="count HIPIFY coverage with this hipify-perl's tables (default: hipify-perl on PATH, else the table "
               "shipped with rocm-audit)")


def _format(parser: CommandParser) -> None:
    group = parser.group("output")
    group("--format", "--output-format", choices=(*FORMATS, *history_options.EXTRA_FORMATS), default="terminal",
          dest="format",
          help="output format (default terminal; --output-format is the same, as in ruff)")
    group("-o", "--output", type=Path, help="write the report here instead of standard output")


def _reporting(parser: CommandParser) -> None:
    _format(parser)
    group = parser.group("output")
    group("--no-html", action="store_true",
          help="do not write the HTML report (an interactive terminal run writes it in the user's cache directory "
               "and prints where)")
    group("--no-progress", action="store_true", help="no progress bar on stderr")
    group("-q", "--quiet", action="store_true",
          help="a line per finding that fails the run, then a summary line (the pre-commit hook's output)")
    group("-v", "--verbose", action="store_true",
          help="terminal: list every finding group and the full tables, not the ~60-line summary")
    group("--statistics", action="store_true",
          help="print one line per rule with its count of findings that would break on ROCm, and stop (as in ruff)")
    more = parser.group("more reports from the same run")
    for name in FILE_OUTPUTS:
        if name == "json":   # `rules --json` prints the rule list as JSON: FILE is optional there
            more("--json", type=Path, metavar="FILE", nargs="?", const=RULES_JSON,
                 help="also write the json report to FILE (with `rules`: print the rules as JSON)")
            continue
        more(f"--{name}", type=Path, metavar="FILE", help=f"also write the {name} report to FILE")
    more("--sarif-all", action="store_true",
         help="SARIF: also list the findings that do not break on ROCm, as notes (by default it lists what would "
              "break, and what to verify on hardware as warnings)")


def _gating(parser: CommandParser) -> None:
    group = parser.group("the exit code (only findings that would break on ROCm count)")
    group("--fail-on", choices=FAIL_ON, default="high",
          help="exit 1 when a finding that would break on ROCm (disposition live) is at or above this severity "
               "(default high)")
    group("--fail-on-verify", action="store_true",
          help="also count findings to verify on hardware (disposition `verify on hardware`) as breaking")
    group("--exit-zero", action="store_true",
          help="exit 0 even when findings fail the check (as in ruff); tool errors still exit 2")
    gate = parser.group("CI gate (exit 1 only for new findings)")
    gate("--baseline", type=Path, metavar="FILE",
         help="findings listed in this baseline are known, not new (rocm-audit baseline PATH writes one)")
    gate("--update-baseline", action="store_true",
         help="rewrite --baseline without the findings that are gone (keeps reasons; adds nothing)")
    gate("--strict", action="store_true",
         help="also fail when the baseline lists findings that are gone, so it can only shrink")
    gate("--allow-partial", action="store_true",
         help="files that could not be scanned completely (size or time limit, unparseable) do not fail the run; "
              "never from a config file in the scanned tree")
    gate("--diff-base", metavar="REF",
         help="new = what HEAD adds since its merge-base with REF (git; only changed files rescanned)")
    gate("--no-inline-suppressions", action="store_true",
         help="honour no `rocm-audit: ignore` or `noqa` comment in the scanned files (for CI; config, "
              "--per-file-ignores and baselines still apply)")
    gate("--allow-new-suppressions", action="store_true",
         help="in a gated run (--diff-base, --baseline): honour suppressions the change itself adds (by default a "
              "suppression on a line the change adds does not silence; in the tree's config only the base's counts)")


def _fixing(parser: CommandParser, via_check: bool) -> None:
    group = parser.group("fix (rocm-audit fix PATH…, or check --fix / check --diff)")
    if via_check:
        group("--fix", action="store_true", help="apply the safe fixes (same as the fix command)")
    group("--diff", action="store_true",
          help="print the safe fixes as a unified diff and change nothing (with check: same as fix --diff)")
    group("--unsafe", action="store_true", help="also apply the fixes that need review")
    group("--verify", action="store_true",
          help="compile each touched .cu before and after; undo a file whose CUDA code changes or that no "
               "compiler could check")
    group("--keep-unchecked", action="store_true",
          help="with --verify: also write the edits neither compiler could check")


def _recording(parser: CommandParser) -> None:
    group = parser.group("progress over time")
    group("--record", action="store_true", help="append this run to the history database (see --db)")
    group("--db", type=Path, metavar="PATH",
          help="the history database (default: history.sqlite3 in the user's data directory)")


# --- the commands -------------------------------------------------------------------------------------------

def check(parser: CommandParser) -> None:
    _paths(parser, "files or directories (default: the current directory)")
    _reporting(parser)
    _gating(parser)
    _selection(parser)
    _scanning(parser)
    _fixing(parser, via_check=True)
    _recording(parser)


def demo(parser: CommandParser) -> None:
    _reporting(parser)
    _gating(parser)
    _selection(parser)


def rules(parser: CommandParser) -> None:
    group = parser.group("rules")
    group("--category", metavar="CAT", help="only the rules of this category")
    group("--json", type=Path, metavar="FILE", nargs="?", const=RULES_JSON, help="print the rules as JSON")
    group("--check", type=Path, metavar="DIR", dest="check_pack",
          help="validate this rule pack and run its examples (exit 0 clean, 1 failing examples, 2 a rule file that "
               "does not load)")
    _selection(parser)


def rule(parser: CommandParser) -> None:
    if not parser.takes("args"):
        parser.add_argument("args", nargs="*", metavar="ID", help="a rule id or name (RA301, pynvml)")
    group = parser.group("rules")
    group("--rules", action="append", type=Path, metavar="DIR", dest="rule_packs",
          help="add this rule pack to the shipped rules")


def baseline(parser: CommandParser) -> None:
    _paths(parser, "the directory to record (default: the current directory)")
    group = parser.group("baseline")
    group("-o", "--output", type=Path, help="write the baseline here (default .rocm-audit-baseline.json)")
    group("--baseline", type=Path, metavar="FILE", help="the baseline to rewrite (same as -o)")
    _selection(parser)
    _scanning(parser)


def config(parser: CommandParser) -> None:
    _paths(parser, "where to start looking for the config file (default: the current directory)")


def coverage(parser: CommandParser) -> None:
    _paths(parser, "files or directories (default: the current directory)")
    _format(parser)
    group = parser.group("coverage")
    group("--table-info", action="store_true", help="print what the HIPIFY API table was built from, and stop")
    _selection(parser)
    _scanning(parser)


def fix(parser: CommandParser) -> None:
    _paths(parser, "the files or directories to fix")
    _fixing(parser, via_check=False)
    _selection(parser)
    _scanning(parser)


def history(parser: CommandParser) -> None:
    _paths(parser, "the repository (default: the current directory)")
    _format(parser)
    group = parser.group("progress over time")
    group("--db", type=Path, metavar="PATH",
          help="the history database (default: history.sqlite3 in the user's data directory)")
    group("--since", metavar="DATE|REV", help="from this date or commit on")
    group("--until", metavar="REV", help="up to this commit (default HEAD)")
    group("--max-points", type=history_options.points, default=history_options.DEFAULT_POINTS, metavar="N",
          help=f"sample at most N commits of the first-parent history (default {history_options.DEFAULT_POINTS})")
    _selection(parser)
    _scanning(parser)


@dataclass(frozen=True, slots=True)
class Command:
    usage: str                        # after `rocm-audit `
    summary: str
    options: Callable[[CommandParser], None]


COMMANDS: dict[str, Command] = {
    "check": Command("[check] [PATH…]", "scan files and directories (default: the current directory)", check),
    "demo": Command("demo", "scan the example repository that ships with rocm-audit", demo),
    "rules": Command("rules", "list the rules, one line each", rules),
    "rule": Command("rule ID", "explain one rule, with its examples", rule),
    "baseline": Command("baseline [PATH]", "write .rocm-audit-baseline.json: today's findings become known", baseline),
    "config": Command("config [PATH]", "the settings a check would use, and where each came from", config),
    "coverage": Command("coverage [PATH…]", "HIPIFY coverage alone", coverage),
    "fix": Command("fix PATH…", "apply the mechanical ROCm fixes", fix),
    "history": Command("history [PATH]", "the migration's progress over past commits (from git objects)", history),
    # fleet reads its own flags (auditor/cli/fleet/command.py); listed here for `rocm-audit --help`
    "fleet": Command("fleet SOURCE…", "many repositories at once, locally or on a Dask cluster", lambda parser: None),
}
SUBCOMMANDS = tuple(COMMANDS)
DESCRIPTION = "Find what in a CUDA repository breaks on AMD ROCm, what replaces it, and what the port costs."


def _epilog() -> str:
    width = max(len(c.usage) for c in COMMANDS.values())
    lines = ["commands:"] + [f"  rocm-audit {c.usage:<{width}}  {c.summary}" for c in COMMANDS.values()]
    return "\n".join(lines + [""] + textwrap.wrap("rocm-audit COMMAND --help shows a command's options. " + EXIT_CODES,
                                                  78))


def reading_parser() -> CommandParser:
    """The parser a command line is read with: every command's options, once."""
    parser = CommandParser(prog="rocm-audit", allow_abbrev=False,   # `--fail high` is a typo, not --fail-on
                     add_help=False, description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"rocm-audit {__version__}")
    _common(parser)
    for command in COMMANDS.values():
        command.options(parser)
    return parser


def help_text(command: str | None) -> str:
    """`rocm-audit --help` (check's options and every command) or `rocm-audit CMD --help` (CMD's alone)."""
    name = command or "check"
    spec = COMMANDS[name]
    parser = CommandParser(prog=f"rocm-audit {name}" if command else "rocm-audit", add_help=False,
                     usage=f"rocm-audit {spec.usage} [options]", description=spec.summary if command else DESCRIPTION,
                     epilog=_epilog() if command is None else "\n".join(textwrap.wrap(EXIT_CODES, 78)),
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    if command is None:
        parser.add_argument("--version", action="version", version=f"rocm-audit {__version__}")
    spec.options(parser)
    _common(parser)
    return parser.format_help()
