"""Command-line flags into a frozen Settings. No analysis here."""
from __future__ import annotations

import argparse
import difflib
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from auditor import __version__
from auditor.errors import ToolError
from auditor.history import options as history_options
from auditor.report.formats import FORMATS  # the format registry names them
from auditor.types import Severity

RULES_JSON = Path("-")   # `rules --json` with no FILE
FILE_OUTPUTS = ("html", "sarif", "json", "markdown")   # `--html FILE` …: extra reports from the same run
FAIL_ON = ("critical", "high", "medium", "low", "info", "never")
DEFAULT_HTML = "rocm-audit-report.html"   # interactive runs write it in the current directory
SUBCOMMANDS = ("check", "rules", "rule", "baseline", "config", "coverage", "fix", "history")
CACHE_ENV = "ROCM_AUDIT_CACHE_DIR"   # the cache directory, when --cache-dir is not given


class UsageError(ToolError, ValueError):   # config.py catches it as one, not importing this module
    """Bad flags or arguments: exit 2 with one line."""


@dataclass(frozen=True, slots=True)
class Settings:
    command: str
    paths: tuple[Path, ...]
    format: str
    output: Path | None
    fail_on: Severity | None          # None = never
    select: tuple[str, ...]
    ignore: tuple[str, ...]
    exclude: tuple[str, ...]
    force_exclude: bool
    include_vendored: bool
    jobs: int
    no_html: bool
    progress: bool
    quiet: bool
    max_file_size: int
    time_budget: float
    rule_id: str | None
    debug: bool
    example: bool                     # no path given: the bundled example repository
    baseline: Path | None = None      # known findings (--baseline FILE)
    update_baseline: bool = False
    strict: bool = False              # fail when the baseline lists findings that are gone
    diff_base: str | None = None      # git ref: only what HEAD adds since the merge-base is new
    outputs: tuple[tuple[str, Path], ...] = ()          # (format, file) from --html/--sarif/--json/--markdown FILE
    config_file: Path | None = None   # the config file in use
    sources: tuple[tuple[str, object, str], ...] = ()   # (long flag, value, where it came from)
    config_start: Path | None = None  # where the config file search started
    hipify_perl: Path | None = None   # an installed hipify-perl whose tables replace the shipped API table
    table_info: bool = False          # `coverage --table-info`: what the API table was built from
    no_cache: bool = False            # neither read nor write the result cache
    cache_dir: Path | None = None     # --cache-dir, ROCM_AUDIT_CACHE_DIR or the user's own config; None: default
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()   # (glob, rule ids or prefixes)
    optional_dirs: tuple[str, ...] = ()   # gitignore-style patterns: findings there are optional
    verbose: bool = False             # the terminal summary lists every finding group and the full tables
    category: str | None = None       # `rules --category CAT`: only the rules of this category
    rules_json: bool = False          # `rules --json`: the rule list as JSON
    diff: bool = False                # fix: print a unified diff and change nothing
    unsafe: bool = False              # fix: also apply the fixes marked unsafe
    max_run_time: float | None = None  # seconds for the whole run (None: no limit); over it, exit 2
    warnings: tuple[str, ...] = ()    # config keys ignored (a repository's config may not set them)
    rule_packs: tuple[Path, ...] = ()  # --rules DIR: team rule packs added to the shipped rules
    check_pack: Path | None = None    # `rules --check DIR`: validate this rule pack and run its examples
    history: history_options.HistoryOptions = history_options.HistoryOptions()   # --record, --db; `history`


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2 (argparse's default prints usage too)
        unknown = re.match(r"unrecognized arguments: (--[\w-]+)", message)
        longs = [o for a in self._actions for o in a.option_strings if o.startswith("--")]
        if unknown and (close := difflib.get_close_matches(unknown.group(1), longs, 1, 0.6)):
            message += f" (did you mean {close[0]}?)"
        raise UsageError(message)


def _split(values: Sequence[str] | None) -> tuple[str, ...]:
    return tuple(item.strip() for value in values or () for item in value.split(",") if item.strip())


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


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="rocm-audit",
        allow_abbrev=False,   # `--fail high` is a typo, not --fail-on: CI flags must mean one thing
        description="Find what in a CUDA repository breaks on AMD ROCm, what replaces it, and what the port costs.",
        epilog="Commands: check PATH… (default) · rules · rule ID · baseline PATH · config [PATH]. Exit codes: "
               "0 clean, 1 new findings at or above --fail-on, 2 usage, config, baseline, git or tool error.",
    )
    parser.add_argument("--version", action="version", version=f"rocm-audit {__version__}")
    parser.add_argument("args", nargs="*", metavar="PATH", help="files or directories (default: bundled example)")
    parser.add_argument("--format", choices=(*FORMATS, *history_options.EXTRA_FORMATS), default="terminal",
                        help="output format (default terminal)")
    parser.add_argument("-o", "--output", type=Path, help="write the report here instead of standard output")
    parser.add_argument("--fail-on", choices=FAIL_ON, default="high",
                        help="exit 1 when a finding at or above this severity is reported (default high)")
    parser.add_argument("--select", action="append", help="only these rule ids or prefixes (comma separated)")
    parser.add_argument("--ignore", action="append", help="skip these rule ids or prefixes (comma separated)")
    parser.add_argument("--exclude", action="append", help="gitignore-style pattern to skip (repeatable)")
    parser.add_argument("--per-file-ignores", action="append", metavar="GLOB:RULES",
                        help="ignore these rule ids or prefixes in files matching GLOB (`tests/*:RA5,RA301`; "
                             "in the config, a table as in ruff)")
    parser.add_argument("--optional-dirs", action="append", metavar="PATTERN",
                        help="gitignore-style directories whose findings are optional (reported, never block), "
                             "besides examples/, tests/, benchmarks/ and the like (comma separated)")
    parser.add_argument("--force-exclude", action="store_true",
                        help="apply --exclude and .gitignore to files named on the command line too")
    parser.add_argument("--include-vendored", action="store_true",
                        help="also scan vendored code (third_party/, vendor/, git submodules), skipped by default")
    parser.add_argument("-j", "--jobs", type=_positive_int, default=None,
                        help="worker processes (default and most: the number of cores)")
    parser.add_argument("--no-html", action="store_true",
                        help=f"do not write {DEFAULT_HTML} (written by default when the output is a terminal)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="a line per finding that fails the run, then a summary line "
                             "(the pre-commit hook's output)")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="terminal: list every finding group and the full tables, not the ~60-line summary")
    parser.add_argument("--category", metavar="CAT", help="with `rules`: only the rules of this category")
    parser.add_argument("--rules", action="append", type=Path, metavar="DIR", dest="rule_packs",
                        help="add this rule pack (a directory of rule files) to the shipped rules (repeatable; "
                             "never from a repository's config)")
    parser.add_argument("--check", type=Path, metavar="DIR", dest="check_pack",
                        help="with `rules`: validate this rule pack and run its examples (exit 0 clean, 1 failing "
                             "examples, 2 a rule file that does not load)")
    parser.add_argument("--max-file-size", type=_size, default=16 * 1024 * 1024,
                        help="skip (and report) files larger than this (default 16M)")
    parser.add_argument("--time-budget", type=_seconds, default=60.0, metavar="SECONDS",
                        help="stop scanning a file after this long and report it (default 60)")
    parser.add_argument("--max-run-time", type=_seconds, default=None, metavar="SECONDS",
                        help="end the whole run after this long, with exit 2 (default: no limit)")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write cached scan results")
    parser.add_argument("--cache-dir", type=Path, metavar="DIR",
                        help=f"cache scan results here (default: ${CACHE_ENV}, else the user's cache directory)")
    parser.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    parser.add_argument("--hipify-perl", type=Path, metavar="PATH",
                        help="count HIPIFY coverage with this hipify-perl's tables (default: hipify-perl on PATH, "
                             "else the table shipped with rocm-audit)")
    parser.add_argument("--table-info", action="store_true",
                        help="with `coverage`: print what the HIPIFY API table was built from, and stop")
    gate = parser.add_argument_group("CI gate (exit 1 only for new findings)")
    gate.add_argument("--baseline", type=Path, metavar="FILE",
                      help="findings listed in this baseline are known, not new (rocm-audit baseline PATH writes one)")
    gate.add_argument("--update-baseline", action="store_true",
                      help="rewrite --baseline without the findings that are gone (keeps reasons; adds nothing)")
    gate.add_argument("--strict", action="store_true",
                      help="also fail when the baseline lists findings that are gone, so it can only shrink")
    gate.add_argument("--diff-base", metavar="REF",
                      help="new = what HEAD adds since its merge-base with REF (git; only changed files rescanned)")
    fixing = parser.add_argument_group("fix (rocm-audit fix PATH…, or check --fix)")
    fixing.add_argument("--fix", action="store_true", help="apply the safe fixes (same as the fix command)")
    fixing.add_argument("--diff", action="store_true", help="with fix: print a unified diff and change nothing")
    fixing.add_argument("--unsafe", action="store_true", help="with fix: also apply the fixes that need review")
    outputs = parser.add_argument_group("more reports from the same run")
    for name in FILE_OUTPUTS:
        if name == "json":   # `rules --json` prints the rule list as JSON: FILE is optional there
            outputs.add_argument("--json", type=Path, metavar="FILE", nargs="?", const=RULES_JSON,
                                 help="also write the json report to FILE (with `rules`: print the rules as JSON)")
            continue
        outputs.add_argument(f"--{name}", type=Path, metavar="FILE", help=f"also write the {name} report to FILE")
    parser.add_argument("--config", type=Path, metavar="FILE",
                        help="config file to use instead of searching for .rocm-audit.toml or pyproject.toml")
    history_options.register(parser)
    return parser


def _cache_dir(given: dict, resolved: Path | None) -> Path | None:
    """--cache-dir on the command line, else ROCM_AUDIT_CACHE_DIR, else the config file's cache-dir."""
    if "cache_dir" in given:
        return given["cache_dir"]
    return Path(os.environ[CACHE_ENV]) if os.environ.get(CACHE_ENV) else resolved


def _with_environment(sources: tuple, given: dict) -> tuple:
    """`rocm-audit config` names ROCM_AUDIT_CACHE_DIR when it is what sets the cache directory."""
    if "cache_dir" in given or not os.environ.get(CACHE_ENV):
        return sources
    return tuple((name, os.environ[CACHE_ENV], f"environment {CACHE_ENV}") if name == "cache-dir"
                 else (name, value, source) for name, value, source in sources)


def parse_settings(argv: Sequence[str]) -> Settings:
    """Command line over config file over defaults (auditor/config.py)."""
    from auditor.config import find_config, read_config, resolve

    command_line = build_parser()
    for action in command_line._actions:   # what the user typed, and nothing else
        action.default = argparse.SUPPRESS
    given = vars(command_line.parse_intermixed_args(list(argv)))   # `check --flag a.py b.py`, as pre-commit calls it
    first = Path(given["args"][0]) if given.get("args") and given["args"][0] not in SUBCOMMANDS else None
    if first is None and len(given.get("args", ())) > 1:
        first = Path(given["args"][1])
    config_start = (first or Path(".")).absolute()
    config_path = given.get("config") or find_config(config_start)
    trusted = "config" in given and not _inside_scanned(Path(given["config"]), given.get("args") or ["."])
    parser = build_parser()
    resolved = resolve(parser, given, read_config(config_path, trusted) if config_path else None)
    if resolved.values.get("diff_base"):
        from auditor.basesettings import from_base

        resolved = from_base(parser, given, resolved, config_start, resolved.values["diff_base"])
    ns = argparse.Namespace(**resolved.values)
    args = list(ns.args or ())
    command = "check"
    if args and args[0] in SUBCOMMANDS:  # a directory named like a command: `check rules` or `./rules`
        command = args.pop(0)
    elif args and not Path(args[0]).exists() and (close := difflib.get_close_matches(args[0], SUBCOMMANDS, 1, 0.6)):
        raise UsageError(f"unknown command {args[0]!r} (and no such path); did you mean {close[0]!r}?")
    rule_id = None
    if command == "rule":
        if len(args) != 1:
            raise UsageError("usage: rocm-audit rule ID (for example: rocm-audit rule RA301)")
        rule_id = args.pop().upper()
    elif command == "rules" and args:
        raise UsageError("'rules' takes no paths")
    rules_json = getattr(ns, "json", None) == RULES_JSON
    if rules_json and command != "rules":
        raise UsageError("--json needs a FILE (rocm-audit rules --json prints the rule list)")
    if getattr(ns, "category", None) and command != "rules":
        raise UsageError("--category goes with `rules` (rocm-audit rules --category warp_size_assumption)")
    if getattr(ns, "check_pack", None) and command != "rules":
        raise UsageError("--check DIR goes with `rules` (rocm-audit rules --check my-rules/)")
    if ns.baseline and ns.diff_base:
        raise UsageError("use --baseline or --diff-base, not both")
    for flag, on in (("--update-baseline", ns.update_baseline), ("--strict", ns.strict)):
        if on and not ns.baseline:
            raise UsageError(f"{flag} needs --baseline FILE (or baseline in the config file)")
    if getattr(ns, "fix", False) and command == "check":
        command = "fix"
    for flag, on in (("--diff", getattr(ns, "diff", False)), ("--unsafe", getattr(ns, "unsafe", False))):
        if on and command != "fix":
            raise UsageError(f"{flag} goes with `rocm-audit fix PATH…` (or check --fix)")
    if command == "fix" and not args:
        raise UsageError("usage: rocm-audit fix PATH… (the files or directories to fix)")
    if command in ("baseline", "history") and not args:
        args = ["."]
    return Settings(
        command=command,
        paths=tuple(Path(a) for a in args),
        format=ns.format,
        output=ns.output,
        fail_on=None if ns.fail_on == "never" else Severity.parse(ns.fail_on),
        select=_split(ns.select),
        ignore=_split(ns.ignore),
        exclude=tuple(ns.exclude or ()),
        force_exclude=ns.force_exclude,
        include_vendored=ns.include_vendored,
        jobs=min(ns.jobs or default_jobs(), default_jobs()),
        no_html=ns.no_html,
        progress=not ns.no_progress,
        quiet=ns.quiet,
        max_file_size=ns.max_file_size,
        time_budget=ns.time_budget,
        rule_id=rule_id,
        debug=ns.debug,
        example=command == "check" and not args,
        baseline=ns.baseline,
        update_baseline=ns.update_baseline,
        strict=ns.strict,
        diff_base=ns.diff_base,
        outputs=tuple((name, getattr(ns, name)) for name in FILE_OUTPUTS
                      if getattr(ns, name) and getattr(ns, name) != RULES_JSON),
        config_file=resolved.config.path if resolved.config else None,
        sources=_with_environment(resolved.sources, given),
        config_start=config_start,
        hipify_perl=getattr(ns, "hipify_perl", None),
        table_info=bool(getattr(ns, "table_info", False)),
        no_cache=bool(ns.no_cache),
        cache_dir=_cache_dir(given, ns.cache_dir),
        per_file_ignores=tuple(_per_file_ignore(item) for item in ns.per_file_ignores or ()),
        optional_dirs=_split(ns.optional_dirs),
        verbose=bool(getattr(ns, "verbose", False)),
        category=getattr(ns, "category", None),
        rules_json=rules_json,
        diff=bool(getattr(ns, "diff", False)),
        unsafe=bool(getattr(ns, "unsafe", False)),
        max_run_time=ns.max_run_time,
        warnings=resolved.warnings,
        rule_packs=tuple(getattr(ns, "rule_packs", None) or ()),
        check_pack=getattr(ns, "check_pack", None),
        history=history_options.from_namespace(ns, command),
    )


RULE_SELECTOR = re.compile(r"^(?:RA\d{0,3}|[a-z0-9]+(?:-[a-z0-9]+)*)$", re.IGNORECASE)


def _per_file_ignore(item: str) -> tuple[str, tuple[str, ...]]:
    """`GLOB:RA1,RA301` (ruff's --per-file-ignores form) into (glob, rules)."""
    glob, sep, rules = item.rpartition(":")
    selectors = _split([rules])
    if not sep or not glob.strip() or not selectors:
        raise UsageError(f"--per-file-ignores {item!r}: expected GLOB:RULES, for example 'tests/*:RA5,RA301'")
    for selector in selectors:
        if not RULE_SELECTOR.match(selector):
            raise UsageError(f"--per-file-ignores {item!r}: {selector!r} is not a rule id, prefix or name")
    return glob.strip(), selectors


def _inside_scanned(config: Path, args: Sequence[str]) -> bool:
    """A config file named with --config is the user's own unless it lies in a scanned tree (then the tree's
    author wrote it, and it is held to what a repository's config may set)."""
    target = config.resolve()
    for arg in args:
        if arg in SUBCOMMANDS:
            continue
        top = Path(arg).resolve()
        top = top if top.is_dir() else top.parent
        if target.is_relative_to(top):
            return True
    return False
