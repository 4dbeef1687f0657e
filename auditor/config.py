"""Config files into option values, merged under the command line, each with where it came from.

`[tool.rocm-audit]` in `pyproject.toml`, or the top level of `.rocm-audit.toml`; keys are the long
flag names (`fail-on = "medium"`, `exclude = ["build/"]`, `force-exclude = true`). The nearest file
wins, searched from the scanned path up to the repository root (only the scanned directory itself when it is
in no repository); the command line wins over it.

A config file in the scanned tree is written by whoever wrote the tree, so it may only choose what a project
owner chooses about its own findings (REPO_KEYS); where files are written, which cache is read and which
programs or tables are used stay with the command line and the user's environment (see docs/security.md).
"""
from __future__ import annotations

import argparse
import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from auditor.util.errors import ToolError
from auditor.util.tomltext import load_toml

CONFIG_FILE = ".rocm-audit.toml"
PYPROJECT = "pyproject.toml"
TABLE = "tool.rocm-audit"
NOT_CONFIGURABLE = {"help", "version", "config", "update-baseline", "table-info", "exit-zero",
                    "statistics"}   # one-shot actions, and what only the person running the command chooses
FROM_COMMAND_LINE = "command line"
FROM_DEFAULT = "default"
# What a config file inside the scanned tree may set: choices about its own findings. Every other key (cache-dir,
# output, json, html, sarif, markdown, hipify-perl, debug, …) is ignored there, with a warning.
REPO_KEYS = frozenset({
    "format", "fail-on", "select", "ignore", "exclude", "force-exclude", "include-vendored", "jobs", "no-html",
    "no-progress", "quiet", "max-file-size", "time-budget", "max-run-time", "no-cache", "baseline", "strict",
    "per-file-ignores", "optional-dirs", "verbose", "extend-select", "fail-on-verify",
    "no-inline-suppressions", "allow-new-suppressions",
})   # not diff-base (a change naming its own HEAD as the base would judge itself), nor fix, diff or unsafe,
#      nor allow-partial (a tree that chose it could hide its findings behind a file it makes unscannable)
# Bounds on what a repository's config may ask for: a scan must stay able to finish and to fit in memory.
REPO_MAX_FILE_SIZE = 64 * 1024 * 1024
REPO_MAX_TIME_BUDGET = 600.0
MENTION_SCAN_CAP = 64 * 1024 * 1024   # a pyproject.toml is searched for our table up to this size


class ConfigError(ToolError):
    """A config file that cannot be used: exit 2, naming the file and the line."""


@dataclass(frozen=True, slots=True)
class ConfigFile:
    path: Path
    table: str                                   # "" (top level) or "tool.rocm-audit"
    values: tuple[tuple[str, object], ...]       # (key, value as written)
    lines: tuple[tuple[str, int], ...]           # (key, line number of its assignment)
    trusted: bool = False                        # the user's own (named with --config, outside the scanned tree)

    def where(self, key: str | None = None) -> str:
        line = dict(self.lines).get(key or "", 0) if key else 0
        return f"{self.path}:{line}" if line else str(self.path)


@dataclass(frozen=True, slots=True)
class Resolved:
    """Every option's value (by argparse dest) and, by long flag name, where it came from."""

    values: dict
    sources: tuple[tuple[str, object, str], ...]   # (long flag name, value, source) for `rocm-audit config`
    config: ConfigFile | None
    warnings: tuple[str, ...] = ()                 # keys a repository's config may not set, ignored


def find_config(start: Path) -> Path | None:
    """The nearest `.rocm-audit.toml`, or `pyproject.toml` with a `[tool.rocm-audit]` table, from `start` up to
    the repository root (the first directory holding `.git`); only `start`'s own directory when it is in no
    repository. Never above: a shared parent (`/tmp`, scratch space) is someone else's. A file another user
    owns is not read."""
    directory = start if start.is_dir() else start.parent
    top = project_root(directory)
    depth = 0 if top is None else len(directory.parts) - len(top.parts)
    folders = [directory, *directory.parents][:depth + 1]
    for folder in folders:
        for candidate in (folder / CONFIG_FILE, folder / PYPROJECT):
            if not candidate.is_file() or not _owned(candidate):
                continue
            if candidate.name == CONFIG_FILE or _mentions_table(candidate):
                return candidate
    return None


def _owned(path: Path) -> bool:
    """Written by this user (or root): another local user's file must not configure this user's run."""
    try:
        owner = path.stat().st_uid
    except OSError:
        return False
    return not hasattr(os, "getuid") or owner in (os.getuid(), 0)


def _mentions_table(pyproject: Path) -> bool:
    """Whether a `[tool.rocm-audit]` header is in the file, read line by line (a pyproject.toml larger than a
    config may be is still someone's project file, not an error, unless it holds our table)."""
    from auditor.util.boundedio import UnsafeRead, read_bounded

    try:
        data = read_bounded(pyproject, MENTION_SCAN_CAP, "pyproject.toml")
    except (OSError, UnsafeRead):
        return False
    # [ \t]*, not \s*: with re.MULTILINE, \s* would run over every following blank line from every line start,
    # quadratic in a file of blank lines
    return re.search(rb"^[ \t]*\[[ \t]*tool[ \t]*\.[ \t]*[\"']?rocm-audit", data, re.MULTILINE) is not None


def _read_text(path: Path) -> str:
    from auditor.util.boundedio import CONFIG_CAP, UnsafeRead, read_bounded

    try:
        return read_bounded(path, CONFIG_CAP, "config file").decode("utf-8")
    except UnsafeRead as err:
        raise ConfigError(str(err)) from None
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"{path}: cannot read config: {getattr(err, 'strerror', None) or err}") from None


def read_config(path: Path, trusted: bool = False) -> ConfigFile:
    """`trusted`: the user's own file (named on the command line, outside the scanned tree), which may set
    every key; otherwise only REPO_KEYS."""
    text = _read_text(path)
    return parse_config(path, text, trusted)


def parse_config(path: Path, text: str, trusted: bool = False) -> ConfigFile:
    try:
        data = load_toml(text)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{_position(path, err, text)}: not valid TOML: {_toml_message(err)}") from None
    table = ""
    if path.name == PYPROJECT:
        table = TABLE
        data = data.get("tool", {}).get("rocm-audit", {})
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: [{TABLE}] must be a table")
    return ConfigFile(path, table, tuple(data.items()), tuple(_key_lines(text, table, data)), trusted)


def _position(path: Path, err: tomllib.TOMLDecodeError, text: str) -> str:
    match = re.search(r"\(at line (\d+), column \d+\)", str(err))
    if match:
        return f"{path}:{match.group(1)}"
    return f"{path}:{text.count(chr(10)) + 1}" if "end of document" in str(err) else str(path)


def _toml_message(err: tomllib.TOMLDecodeError) -> str:
    return re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "", str(err))


def _key_lines(text: str, table: str, data: Mapping) -> list[tuple[str, int]]:
    """Where each key of the table is assigned (tomllib keeps no positions)."""
    in_table = table == ""
    found: list[tuple[str, int]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        header = re.match(r"[ \t]*\[([^\]]*)\]", line)   # linear: no two quantifiers compete for the same run
        if header and not line.lstrip().startswith("[["):
            name = ".".join(part.strip() for part in header.group(1).split(".")).replace('"', "").replace("'", "")
            in_table = name == table
            continue
        if in_table:
            key = re.match(r"[ \t]*[\"']?([A-Za-z0-9_-]+)[\"']?[ \t]*=", line)
            if key and key.group(1) in data:
                found.append((key.group(1), number))
    return found


class OptionParser(Protocol):
    """A command-line parser that lists its options (cli/parser.py's CommandParser): the config file sets the
    options a command line may set, each checked by that parser."""

    options: list[argparse.Action]
    repeatable: set[str]   # dests of options given once per value (action="append")

    def parse_args(self, args: Sequence[str] | None = None, namespace: None = None) -> argparse.Namespace: ...


def _long_name(action: argparse.Action) -> str | None:
    longs = [o for o in action.option_strings if o.startswith("--")]
    return longs[0][2:] if longs else None


def resolve(parser: OptionParser, given: Mapping, config: ConfigFile | None) -> Resolved:
    """Command line over config file over the parser's defaults. `given` holds only what the command line set
    (the parser run with every default suppressed)."""
    actions = {name: a for a in parser.options if (name := _long_name(a)) and name not in NOT_CONFIGURABLE}
    from_config: dict[str, tuple[object, str]] = {}
    warnings: list[str] = []
    if config is not None:
        from_config = _config_values(parser, actions, config, warnings)
    values: dict = {}
    sources: list[tuple[str, object, str]] = []
    for action in parser.options:
        if action.dest in ("help", "version"):
            continue
        name = _long_name(action)
        if action.dest in given:
            value, source = given[action.dest], FROM_COMMAND_LINE
        elif name in from_config:
            value, source = from_config[name]
        else:
            value, source = action.default, FROM_DEFAULT
        values[action.dest] = value
        if name in actions:
            sources.append((name, value, source))
    return Resolved(values, tuple(sources), config, tuple(warnings))


def _config_values(parser: OptionParser, actions: Mapping[str, argparse.Action], config: ConfigFile,
                   warnings: list[str]) -> dict:
    out: dict[str, tuple[object, str]] = {}
    for key, raw in config.values:
        name = key.replace("_", "-")
        where = config.where(key)
        action = actions.get(name)
        if action is None:
            known = ", ".join(sorted(actions))
            raise ConfigError(f"{where}: unknown key {key!r} (keys are the long flag names: {known})")
        if not config.trusted and name not in REPO_KEYS:
            warnings.append(f"{where}: {name} ignored: a config file in the scanned tree may not choose "
                            f"{_WHY_NOT.get(name, 'this')} (set it on the command line)")
            continue
        try:
            value = _parse_value(parser, action, name, raw, config.path.parent)
        except ConfigError as err:
            raise ConfigError(f"{where}: {name}: {err}") from None
        if not config.trusted:
            refused = _out_of_bounds(name, value, config.path.parent)
            if refused:
                warnings.append(f"{where}: {name} ignored: {refused}")
                continue
        out[name] = (value, where)
    return out


_WHY_NOT = {
    "cache-dir": "which cache is read", "rules": "which rules run", "diff-base": "what the change is compared with",
    "hipify-perl": "which programs or tables are used",
    **{key: "where files are written" for key in ("output", "json", "html", "sarif", "markdown")},
}


def _out_of_bounds(name: str, value: object, base: Path) -> str | None:
    """Why a repository's config may not set this value, or None."""
    if name == "max-file-size" and isinstance(value, int) and value > REPO_MAX_FILE_SIZE:
        return f"over {REPO_MAX_FILE_SIZE // (1024 * 1024)}M (a larger limit is set on the command line)"
    if name == "time-budget" and isinstance(value, float) and value > REPO_MAX_TIME_BUDGET:
        return f"over {REPO_MAX_TIME_BUDGET:g} s (a longer budget is set on the command line)"
    if name == "baseline" and isinstance(value, Path):
        top = (project_root(base) or base).resolve()
        if not value.resolve().is_relative_to(top):
            return f"{value} is outside the repository ({top})"
    return None


def _parse_value(parser: OptionParser, action: argparse.Action, name: str, raw: object, base: Path) -> object:
    """The value as the command line would have given it, checked by the same parser."""
    flag = f"--{name}"
    if action.nargs == 0:   # a switch
        if not isinstance(raw, bool):
            raise ConfigError(f"expected true or false, got {raw!r}")
        return raw if action.const is True else (not raw if action.const is False else raw)
    if action.dest in parser.repeatable and isinstance(raw, dict):
        raw = _glob_table(raw)   # per-file-ignores = {"tests/*" = ["RA5"]}, as ruff writes it
    if action.dest in parser.repeatable:
        items = [raw] if isinstance(raw, (str, int, float)) and not isinstance(raw, bool) else raw
        if not isinstance(items, list) or not all(isinstance(i, (str, int, float)) for i in items):
            raise ConfigError(f"expected a string or a list of strings, got {raw!r}")
        tokens: list[str] = []
        for item in items:
            tokens += [flag, str(item)]
    else:
        if isinstance(raw, (bool, list, dict)):
            raise ConfigError(f"expected a single value, got {raw!r}")
        if action.type is Path:
            raw = str(base / str(raw))     # paths in a config file are relative to that file
        tokens = [flag, str(raw)]
    try:
        parsed = parser.parse_args(tokens)
    except (argparse.ArgumentError, ValueError) as err:  # the parser's one-line message (UsageError, a ValueError)
        raise ConfigError(str(err).removeprefix(f"argument {flag}: ")) from None
    return getattr(parsed, action.dest)


def _glob_table(table: dict) -> list[str]:
    """{"GLOB" = ["RA1", "RA301"]} into the command line's GLOB:RA1,RA301 items."""
    items = []
    for glob, rules in table.items():
        rules = [rules] if isinstance(rules, str) else rules
        if not isinstance(rules, list) or not rules or not all(isinstance(r, str) for r in rules):
            raise ConfigError(f"{glob!r}: expected a list of rule ids or prefixes, got {rules!r}")
        items.append(f"{glob}:{','.join(rules)}")
    return items


def describe(sources: Sequence[tuple[str, object, str]], config_path: Path | None, searched_from: Path) -> str:
    """`rocm-audit config`: the settings a check would use, as TOML, each with where it came from."""
    if config_path is None:
        lines = [(f"# no config file found from {searched_from} up to the repository root "
                  f"({CONFIG_FILE}, or [{TABLE}] in {PYPROJECT})")]
    else:
        table = f" [{TABLE}]" if config_path.name == PYPROJECT else ""
        lines = [f"# config file: {config_path}{table}"]
    shown = [(f"{name} = {_toml(value)}" if value is not None else f"# {name} (not set)", source)
             for name, value, source in sources]
    width = max((len(assignment) for assignment, _ in shown), default=0)
    lines += [f"{assignment:<{width}}  # {source}" for assignment, source in shown]
    return "\n".join(lines) + "\n"


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, Sequence) and not isinstance(value, str):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def project_root(start: Path) -> Path | None:
    """The repository root above `start` (a directory holding `.git`), if any."""
    directory = start if start.is_dir() else start.parent
    for folder in (directory, *directory.parents):
        if (folder / ".git").exists():
            return folder
    return None
