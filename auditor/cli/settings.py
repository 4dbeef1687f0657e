"""Command-line flags into the frozen settings of the command given (cli/commands.py). No analysis here."""
from __future__ import annotations

import argparse
import difflib
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from auditor.cli.commands import (
    BaselineSettings, CheckSettings, ConfigSettings, CoverageSettings, FixSettings, HistorySettings, RuleSettings,
    RulesSettings, Settings,
)
from auditor.cli.concerns import Cache, Gate, Output, Recording, RuleChoice, Scope
from auditor.cli.parser import CACHE_ENV, RULES_JSON, SUBCOMMANDS, CommandParser, help_text, reading_parser
from auditor.cli.parser import FAIL_ON as FAIL_ON   # re-exported: the names other modules and tests use
from auditor.cli.parser import FILE_OUTPUTS as FILE_OUTPUTS
from auditor.cli.parser import UsageError as UsageError
from auditor.cli import historyoptions as history_options
from auditor.report.formats import FORMATS as FORMATS
from auditor.types import Severity

if TYPE_CHECKING:
    from auditor.config import Resolved

DEFAULT_HTML = "rocm-audit-report.html"   # `--html rocm-audit-report.html` puts the page in the current directory


def _split(values: Sequence[str] | None) -> tuple[str, ...]:
    return tuple(item.strip() for value in values or () for item in value.split(",") if item.strip())


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


def build_parser() -> CommandParser:
    """Every command's options (auditor/cli/parser.py registers them, one function a command)."""
    return reading_parser()


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
    """Command line over config file over defaults (auditor/config.py), into the settings of the command given."""
    given = _typed_on_the_command_line(argv)
    config_start = _config_start(given)
    resolved, gate_findings = _resolved(given, config_start)
    ns = argparse.Namespace(**resolved.values)
    command, args, rule_id = _command_and_paths(ns)
    paths = tuple(Path(a) for a in args)
    per_file_ignores = tuple(_per_file_ignore(item) for item in ns.per_file_ignores or ())
    history = history_options.from_namespace(ns, command)   # checks its flags against the command
    common = _Common(command=command, sources=_with_environment(resolved.sources, given),
                     warnings=resolved.warnings, max_run_time=ns.max_run_time)
    config_file = resolved.config.path if resolved.config else None
    if command == "config":
        return ConfigSettings(**common, config_file=config_file, config_start=config_start)
    rules = RuleChoice(select=_split(ns.select) + (_split(ns.extend_select) if ns.select else ()),
                       ignore=_split(ns.ignore), per_file_ignores=per_file_ignores,
                       rule_packs=tuple(getattr(ns, "rule_packs", None) or ()),
                       hipify_perl=getattr(ns, "hipify_perl", None))
    cache = Cache(no_cache=bool(ns.no_cache), cache_dir=_cache_dir(given, ns.cache_dir),
                  scanned=_scanned(command, paths))
    if command == "rules":
        return RulesSettings(**common, rules=rules, cache=cache, category=getattr(ns, "category", None),
                             rules_json=getattr(ns, "json", None) == RULES_JSON,
                             check_pack=getattr(ns, "check_pack", None), time_budget=ns.time_budget)
    if command == "rule":
        return RuleSettings(**common, rules=rules, cache=cache, rule_id=rule_id or "")
    scanning = _Scanning(scope=_scope(ns, paths), rules=rules, cache=cache)
    progress = not ns.no_progress and not ns.quiet
    if command == "baseline":
        return BaselineSettings(**common, **scanning, config_file=config_file, output=ns.output,
                                baseline=ns.baseline, fail_on_verify=bool(ns.fail_on_verify), progress=progress)
    if command == "coverage":
        return CoverageSettings(**common, **scanning, format=ns.format, output=ns.output,
                                table_info=bool(getattr(ns, "table_info", False)))
    if command == "fix":
        return FixSettings(**common, **scanning, config_file=config_file, fail_on=_fail_on(ns),
                           diff=bool(getattr(ns, "diff", False)), unsafe=bool(getattr(ns, "unsafe", False)),
                           verify=bool(getattr(ns, "verify", False)),
                           keep_unchecked=bool(getattr(ns, "keep_unchecked", False)))
    if command == "history":
        return HistorySettings(**common, **scanning, format=ns.format, output=ns.output, quiet=ns.quiet,
                               history=history)
    return CheckSettings(**common, **scanning, example=command == "demo", config_file=config_file,
                         gate=_gate(ns, gate_findings), reporting=_output(ns),
                         recording=Recording(history.record, history.db), progress=progress)


def check_settings(argv: Sequence[str]) -> CheckSettings:
    """The settings of a `check` command line (the fleet's scan of one repository is one)."""
    settings = parse_settings(["check", *argv])
    if not isinstance(settings, CheckSettings):
        raise UsageError(f"not a check: {' '.join(argv)}")
    return settings


class _Common(TypedDict):
    command: str
    sources: tuple[tuple[str, object, str], ...]
    warnings: tuple[str, ...]
    max_run_time: float | None


class _Scanning(TypedDict):
    scope: Scope
    rules: RuleChoice
    cache: Cache


def _fail_on(ns: argparse.Namespace) -> Severity | None:
    return None if ns.fail_on == "never" else Severity.parse(ns.fail_on)


def _scope(ns: argparse.Namespace, paths: tuple[Path, ...]) -> Scope:
    return Scope(paths=paths, exclude=tuple(ns.exclude or ()), force_exclude=ns.force_exclude,
                 include_vendored=ns.include_vendored, jobs=min(ns.jobs or default_jobs(), default_jobs()),
                 max_file_size=ns.max_file_size, time_budget=ns.time_budget, optional_dirs=_split(ns.optional_dirs),
                 worker_memory=getattr(ns, "max_worker_memory", 0) or 0)


def _gate(ns: argparse.Namespace, gate_findings: tuple[tuple[str, str], ...]) -> Gate:
    return Gate(fail_on=_fail_on(ns), fail_on_verify=bool(ns.fail_on_verify), exit_zero=bool(ns.exit_zero),
                baseline=ns.baseline, update_baseline=ns.update_baseline, strict=ns.strict, diff_base=ns.diff_base,
                allow_partial=bool(getattr(ns, "allow_partial", False)), gate_findings=gate_findings,
                inline_suppressions=not getattr(ns, "no_inline_suppressions", False),
                allow_new_suppressions=bool(getattr(ns, "allow_new_suppressions", False)))


def _output(ns: argparse.Namespace) -> Output:
    return Output(format=ns.format, output=ns.output,
                  outputs=tuple((name, getattr(ns, name)) for name in FILE_OUTPUTS
                                if getattr(ns, name) and getattr(ns, name) != RULES_JSON),
                  no_html=ns.no_html, quiet=ns.quiet, verbose=bool(getattr(ns, "verbose", False)),
                  statistics=bool(ns.statistics), sarif_all=bool(getattr(ns, "sarif_all", False)))


def _scanned(command: str, paths: tuple[Path, ...]) -> tuple[Path, ...]:
    """The trees a command scans, which the default cache directory must not lie in."""
    if command == "demo":
        from auditor.run.invocation.output import bundled_example

        return (bundled_example(),)
    return paths or (Path("."),) if command in ("check", "baseline", "coverage", "fix") else ()



def _typed_on_the_command_line(argv: Sequence[str]) -> dict:
    """The options and arguments the user typed, and nothing else (no defaults); `--help` prints and exits."""
    command_line = build_parser()
    for action in command_line.options:
        action.default = argparse.SUPPRESS
    given = vars(command_line.parse_intermixed_args(list(argv)))   # `check --flag a.py b.py`, as pre-commit calls it
    if given.pop("help", False):
        named = [a for a in given.get("args", ()) if a in SUBCOMMANDS]
        print(help_text(named[0] if named else None), end="")
        raise SystemExit(0)
    return given


def _config_start(given: dict) -> Path:
    """Where the search for a config file starts: the first path scanned (after a command), else here."""
    first = Path(given["args"][0]) if given.get("args") and given["args"][0] not in SUBCOMMANDS else None
    if first is None and len(given.get("args", ())) > 1:
        first = Path(given["args"][1])
    return (first or Path(".")).absolute()


def _resolved(given: dict, config_start: Path) -> tuple[Resolved, tuple[tuple[str, str], ...]]:
    """Every option's value: the command line over the config file (a scanned tree's own one untrusted) over
    the defaults; under --diff-base the gate's settings as the base revision has them, and under --baseline as
    its record has them (with a gate finding for each a config changed)."""
    from auditor.config import find_config, read_config, resolve

    config_path = given.get("config") or find_config(config_start)
    trusted = "config" in given and not _inside_scanned(Path(given["config"]), given.get("args") or ["."])
    parser = build_parser()
    resolved = resolve(parser, given, read_config(config_path, trusted) if config_path else None)
    if resolved.values.get("diff_base"):
        from auditor.cli.basesettings import from_base

        resolved = from_base(parser, given, resolved, config_start, resolved.values["diff_base"])
    gate_findings: tuple[tuple[str, str], ...] = ()
    if resolved.values.get("baseline") and (given.get("args") or [""])[0] not in ("baseline", "rules", "rule"):
        from auditor.cli.basesettings import from_record

        resolved, gate_findings = from_record(parser, given, resolved, Path(resolved.values["baseline"]))
    return resolved, gate_findings


def _command_and_paths(ns: argparse.Namespace) -> tuple[str, list[str], str | None]:
    """The command, its paths and (for `rule`) the rule id; a UsageError for a flag that does not go with the
    command."""
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
    _check_rules_flags(ns, command)
    for flag, on in (("--update-baseline", ns.update_baseline), ("--strict", ns.strict)):
        if on and not ns.baseline:
            raise UsageError(f"{flag} needs --baseline FILE (or baseline in the config file)")
    if command == "check" and (getattr(ns, "fix", False) or getattr(ns, "diff", False)):
        command = "fix"   # `check --fix` and `check --diff` (as in ruff) are the fix command
        args = args or ["."]
    for flag, on in (("--diff", getattr(ns, "diff", False)), ("--unsafe", getattr(ns, "unsafe", False)),
                     ("--verify", getattr(ns, "verify", False))):
        if on and command != "fix":
            raise UsageError(f"{flag} goes with `rocm-audit fix PATH…` (or check --fix)")
    if command == "fix" and not args:
        raise UsageError("usage: rocm-audit fix PATH… (the files or directories to fix)")
    if command in ("baseline", "check", "history") and not args:
        args = ["."]   # as ruff: the project you are in (the bundled example is `rocm-audit demo`)
    if command == "demo" and args:
        raise UsageError("'demo' takes no paths: it scans the example that ships with rocm-audit")
    return command, args, rule_id


def _check_rules_flags(ns: argparse.Namespace, command: str) -> None:
    """--json (without a file), --category and --check DIR go with `rules` only."""
    if getattr(ns, "json", None) == RULES_JSON and command != "rules":
        raise UsageError("--json needs a FILE (rocm-audit rules --json prints the rule list)")
    if getattr(ns, "category", None) and command != "rules":
        raise UsageError("--category goes with `rules` (rocm-audit rules --category warp_size_assumption)")
    if getattr(ns, "check_pack", None) and command != "rules":
        raise UsageError("--check DIR goes with `rules` (rocm-audit rules --check my-rules/)")


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
