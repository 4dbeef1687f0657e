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
from pathlib import Path

from auditor import __version__
from auditor.util.errors import ToolError
from auditor.history import options as history_options
from auditor.report.formats import FORMATS  # the format registry names them

RULES_JSON = Path("-")   # `rules --json` with no FILE
FILE_OUTPUTS = ("html", "sarif", "json", "markdown")   # `--html FILE` …: extra reports from the same run
FAIL_ON = ("critical", "high", "medium", "low", "info", "never")
CACHE_ENV = "ROCM_AUDIT_CACHE_DIR"   # the cache directory, when --cache-dir is not given
EXIT_CODES = ("Exit codes: 0 clean, 1 findings that would break on ROCm at or above --fail-on (new ones, with a "
              "baseline or --diff-base), 2 usage, config, baseline, git or tool error.")


class UsageError(ToolError, ValueError):   # config.py catches it as one, not importing this module
    """Bad flags or arguments: exit 2 with one line."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2 (argparse's default prints usage too)
        unknown = re.match(r"unrecognized arguments: (--[\w-]+)", message)
        longs = [o for a in self._actions for o in a.option_strings if o.startswith("--")]
        if unknown and (close := difflib.get_close_matches(unknown.group(1), longs, 1, 0.6)):
            message += f" (did you mean {close[0]}?)"
        raise UsageError(message)


def _add(group, *flags: str, **kwargs) -> None:
    """Add an option unless the parser has it already (the reading parser holds every command's options once;
    a group shares its parser's table of option strings)."""
    if not any(flag in group._option_string_actions for flag in flags):
        group.add_argument(*flags, **kwargs)


def _group(parser, title: str):
    """The parser's option group of this title, made on first use."""
    for group in parser._action_groups:
        if group.title == title:
            return group
    return parser.add_argument_group(title)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number of at least 1, got {value}")
    return value


def _seconds(text: str) -> float:
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

def _paths(parser, help_text: str) -> None:
    if "args" not in {a.dest for a in parser._actions}:
        parser.add_argument("args", nargs="*", metavar="PATH", help=help_text)


def _common(parser) -> None:
    group = _group(parser, "general")
    _add(group, "-h", "--help", action="store_true", help="show this command's options and exit")
    _add(group, "--config", type=Path, metavar="FILE",
         help="config file to use instead of searching for .rocm-audit.toml or pyproject.toml")
    _add(group, "--debug", action="store_true", help="show tracebacks of internal errors")


def _selection(parser) -> None:
    group = _group(parser, "rule selection")
    _add(group, "--select", action="append", help="only these rule ids, prefixes or names (comma separated)")
    _add(group, "--extend-select", action="append", metavar="RULES",
         help="add these to --select (or to the config's select) instead of replacing it")
    _add(group, "--ignore", action="append", help="skip these rule ids, prefixes or names (comma separated)")
    _add(group, "--per-file-ignores", action="append", metavar="GLOB:RULES",
         help="ignore these rule ids or prefixes in files matching GLOB (`tests/*:RA5,RA301`; in the config, a "
              "table as in ruff)")
    _add(group, "--rules", action="append", type=Path, metavar="DIR", dest="rule_packs",
         help="add this rule pack (a directory of rule files) to the shipped rules (repeatable; never from a "
              "repository's config)")


def _scanning(parser) -> None:
    group = _group(parser, "what is scanned, and how")
    _add(group, "--exclude", action="append", help="gitignore-style pattern to skip (repeatable)")
    _add(group, "--optional-dirs", action="append", metavar="PATTERN",
         help="gitignore-style directories whose findings are optional (reported, never block), besides "
              "examples/, tests/, benchmarks/ and the like (comma separated)")
    _add(group, "--force-exclude", action="store_true",
         help="apply --exclude and .gitignore to files named on the command line too")
    _add(group, "--include-vendored", action="store_true",
         help="also scan vendored code (third_party/, vendor/, git submodules), skipped by default")
    _add(group, "-j", "--jobs", type=_positive_int, default=None,
         help="worker processes (default and most: the number of cores)")
    _add(group, "--max-file-size", type=_size, default=16 * 1024 * 1024,
         help="skip (and report) files larger than this (default 16M)")
    _add(group, "--time-budget", type=_seconds, default=60.0, metavar="SECONDS",
         help="stop scanning a file after this long and report it (default 60)")
    _add(group, "--max-worker-memory", type=_size, default=0, metavar="SIZE",
         help="memory each scanning process may take; a file that needs more is reported as not scanned "
              "(default: an equal share of 3/4 of the machine's memory, 1G to 4G)")
    _add(group, "--max-run-time", type=_seconds, default=None, metavar="SECONDS",
         help="end the whole run after this long, with exit 2 (default: no limit)")
    _add(group, "--no-cache", action="store_true", help="neither read nor write cached scan results")
    _add(group, "--cache-dir", type=Path, metavar="DIR",
         help=f"cache scan results here (default: ${CACHE_ENV}, else the user's cache directory)")
    _add(group, "--hipify-perl", type=Path, metavar="PATH",
         help="count HIPIFY coverage with this hipify-perl's tables (default: hipify-perl on PATH, else the table "
              "shipped with rocm-audit)")


def _format(parser, extra: tuple[str, ...] = ()) -> None:
    """--format with the report registry's formats and the command's own `extra` ones (each command's help offers
    only what it takes; the reading parser takes them all, and the settings say which command a format goes with)."""
    group = _group(parser, "output")
    _add(group, "--format", "--output-format", choices=(*FORMATS, *extra), default="terminal", dest="format",
         help="output format (default terminal; --output-format is the same, as in ruff)")
    _add(group, "-o", "--output", type=Path, help="write the report here instead of standard output")


def _reporting(parser) -> None:
    _format(parser)
    group = _group(parser, "output")
    _add(group, "--no-html", action="store_true",
         help="do not write the HTML report (an interactive terminal run writes it in the user's cache directory "
              "and prints where)")
    _add(group, "--no-progress", action="store_true", help="no progress bar on stderr")
    _add(group, "-q", "--quiet", action="store_true",
         help="a line per finding that fails the run, then a summary line (the pre-commit hook's output)")
    _add(group, "-v", "--verbose", action="store_true",
         help="terminal: list every finding group and the full tables, not the ~60-line summary")
    _add(group, "--statistics", action="store_true",
         help="print one line per rule with its count of findings that would break on ROCm, and stop (as in ruff)")
    more = _group(parser, "more reports from the same run")
    for name in FILE_OUTPUTS:
        if name == "json":   # `rules --json` prints the rule list as JSON: FILE is optional there
            _add(more, "--json", type=Path, metavar="FILE", nargs="?", const=RULES_JSON,
                 help="also write the json report to FILE (with `rules`: print the rules as JSON)")
            continue
        _add(more, f"--{name}", type=Path, metavar="FILE", help=f"also write the {name} report to FILE")
    _add(more, "--sarif-all", action="store_true",
         help="SARIF: also list the findings that do not break on ROCm, as notes (by default it lists what would "
              "break, and what to verify on hardware as warnings)")


def _gating(parser) -> None:
    group = _group(parser, "the exit code (only findings that would break on ROCm count)")
    _add(group, "--fail-on", choices=FAIL_ON, default="high",
         help="exit 1 when a finding that would break on ROCm (disposition live) is at or above this severity "
              "(default high)")
    _add(group, "--fail-on-verify", action="store_true",
         help="also count findings to verify on hardware (disposition `verify on hardware`) as breaking")
    _add(group, "--exit-zero", action="store_true",
         help="exit 0 even when findings fail the check (as in ruff); tool errors still exit 2")
    gate = _group(parser, "CI gate (exit 1 only for new findings)")
    _add(gate, "--baseline", type=Path, metavar="FILE",
         help="findings listed in this baseline are known, not new (rocm-audit baseline PATH writes one)")
    _add(gate, "--update-baseline", action="store_true",
         help="rewrite --baseline without the findings that are gone (keeps reasons; adds nothing)")
    _add(gate, "--strict", action="store_true",
         help="also fail when the baseline lists findings that are gone, so it can only shrink")
    _add(gate, "--allow-partial", action="store_true",
         help="files that could not be scanned completely (size or time limit, unparseable) do not fail the run; "
              "never from a config file in the scanned tree")
    _add(gate, "--diff-base", metavar="REF",
         help="new = what HEAD adds since its merge-base with REF (git; only changed files rescanned)")
    _add(gate, "--no-inline-suppressions", action="store_true",
         help="honour no `rocm-audit: ignore` or `noqa` comment in the scanned files (for CI; config, "
              "--per-file-ignores and baselines still apply)")
    _add(gate, "--allow-new-suppressions", action="store_true",
         help="in a gated run (--diff-base, --baseline): honour suppressions the change itself adds (by default a "
              "suppression on a line the change adds does not silence; in the tree's config only the base's counts)")


def _fixing(parser, via_check: bool) -> None:
    group = _group(parser, "fix (rocm-audit fix PATH…, or check --fix / check --diff)")
    if via_check:
        _add(group, "--fix", action="store_true", help="apply the safe fixes (same as the fix command)")
    _add(group, "--diff", action="store_true",
         help="print the safe fixes as a unified diff and change nothing (with check: same as fix --diff)")
    _add(group, "--unsafe", action="store_true", help="also apply the fixes that need review")
    _add(group, "--verify", action="store_true",
         help="compile each touched .cu before and after; undo a file whose CUDA code changes or that no "
              "compiler could check")
    _add(group, "--keep-unchecked", action="store_true",
         help="with --verify: also write the edits neither compiler could check")


def _recording(parser) -> None:
    group = _group(parser, "progress over time")
    _add(group, "--record", action="store_true", help="append this run to the history database (see --db)")
    _add(group, "--db", type=Path, metavar="PATH",
         help="the history database (default: history.sqlite3 in the user's data directory)")


# --- the commands -------------------------------------------------------------------------------------------

def check(parser) -> None:
    _paths(parser, "files or directories (default: the current directory)")
    _reporting(parser)
    _gating(parser)
    _selection(parser)
    _scanning(parser)
    _fixing(parser, via_check=True)
    _recording(parser)


def demo(parser) -> None:
    _reporting(parser)
    _gating(parser)
    _selection(parser)


def rules(parser) -> None:
    group = _group(parser, "rules")
    _add(group, "--category", metavar="CAT", help="only the rules of this category")
    _add(group, "--json", type=Path, metavar="FILE", nargs="?", const=RULES_JSON, help="print the rules as JSON")
    _add(group, "--check", type=Path, metavar="DIR", dest="check_pack",
         help="validate this rule pack and run its examples (exit 0 clean, 1 failing examples, 2 a rule file that "
              "does not load)")
    _selection(parser)


def rule(parser) -> None:
    if "args" not in {a.dest for a in parser._actions}:
        parser.add_argument("args", nargs="*", metavar="ID", help="a rule id or name (RA301, pynvml)")
    group = _group(parser, "rules")
    _add(group, "--rules", action="append", type=Path, metavar="DIR", dest="rule_packs",
         help="add this rule pack to the shipped rules")


def baseline(parser) -> None:
    _paths(parser, "the directory to record (default: the current directory)")
    group = _group(parser, "baseline")
    _add(group, "-o", "--output", type=Path, help="write the baseline here (default .rocm-audit-baseline.json)")
    _add(group, "--baseline", type=Path, metavar="FILE", help="the baseline to rewrite (same as -o)")
    _selection(parser)
    _scanning(parser)


def config(parser) -> None:
    _paths(parser, "where to start looking for the config file (default: the current directory)")


def coverage(parser) -> None:
    _paths(parser, "files or directories (default: the current directory)")
    _format(parser)
    group = _group(parser, "coverage")
    _add(group, "--table-info", action="store_true", help="print what the HIPIFY API table was built from, and stop")
    _selection(parser)
    _scanning(parser)


def fix(parser) -> None:
    _paths(parser, "the files or directories to fix")
    _fixing(parser, via_check=False)
    _selection(parser)
    _scanning(parser)


def history(parser) -> None:
    _paths(parser, "the repository (default: the current directory)")
    _format(parser, history_options.EXTRA_FORMATS)
    group = _group(parser, "progress over time")
    _add(group, "--db", type=Path, metavar="PATH",
         help="the history database (default: history.sqlite3 in the user's data directory)")
    _add(group, "--since", metavar="DATE|REV", help="from this date or commit on")
    _add(group, "--until", metavar="REV", help="up to this commit (default HEAD)")
    _add(group, "--max-points", type=history_options.points, default=history_options.DEFAULT_POINTS, metavar="N",
         help=f"sample at most N commits of the first-parent history (default {history_options.DEFAULT_POINTS})")
    _selection(parser)
    _scanning(parser)


@dataclass(frozen=True, slots=True)
class Command:
    usage: str                        # after `rocm-audit `
    summary: str
    options: Callable[[argparse.ArgumentParser], None]


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
    # fleet reads its own flags (auditor/fleet/command.py); listed here for `rocm-audit --help`
    "fleet": Command("fleet SOURCE…", "many repositories at once, locally or on a Dask cluster", lambda parser: None),
}
SUBCOMMANDS = tuple(COMMANDS)
DESCRIPTION = "Find what in a CUDA repository breaks on AMD ROCm, what replaces it, and what the port costs."


def _epilog() -> str:
    width = max(len(c.usage) for c in COMMANDS.values())
    lines = ["commands:"] + [f"  rocm-audit {c.usage:<{width}}  {c.summary}" for c in COMMANDS.values()]
    return "\n".join(lines + [""] + textwrap.wrap("rocm-audit COMMAND --help shows a command's options (`rocm-audit "
                                                  "check --help`: the scan's). " + EXIT_CODES, 78))


def reading_parser() -> argparse.ArgumentParser:
    """The parser a command line is read with: every command's options, once."""
    parser = _Parser(prog="rocm-audit", allow_abbrev=False,   # `--fail high` is a typo, not --fail-on
                     add_help=False, description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"rocm-audit {__version__}")
    _common(parser)
    _format(parser, history_options.EXTRA_FORMATS)
    for command in COMMANDS.values():
        command.options(parser)
    return parser


def help_text(command: str | None) -> str:
    """`rocm-audit --help` (the commands, on one screen) or `rocm-audit CMD --help` (CMD's options alone)."""
    if command is None:
        return "\n".join(["usage: rocm-audit [COMMAND] [PATH…] [options]", "", DESCRIPTION, "", _epilog(),
                          "", "  --version     show the version and exit", ""])
    spec = COMMANDS[command]
    parser = _Parser(prog=f"rocm-audit {command}", add_help=False, usage=f"rocm-audit {spec.usage} [options]",
                     description=spec.summary, epilog="\n".join(textwrap.wrap(EXIT_CODES, 78)),
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    spec.options(parser)
    _common(parser)
    return parser.format_help()
