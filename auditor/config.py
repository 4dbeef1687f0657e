"""Config files into option values, merged under the command line, each with where it came from.

`[tool.rocm-audit]` in `pyproject.toml`, or the top level of `.rocm-audit.toml`; keys are the long
flag names (`fail-on = "medium"`, `exclude = ["build/"]`, `force-exclude = true`). The nearest file
wins, searched from the scanned path up to the repository root; the command line wins over it.
"""
from __future__ import annotations

import argparse
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

CONFIG_FILE = ".rocm-audit.toml"
PYPROJECT = "pyproject.toml"
TABLE = "tool.rocm-audit"
NOT_CONFIGURABLE = {"help", "version", "config", "update-baseline", "table-info"}   # one-shot actions
FROM_COMMAND_LINE = "command line"
FROM_DEFAULT = "default"


class ConfigError(Exception):
    """A config file that cannot be used: exit 2, naming the file and the line."""


@dataclass(frozen=True, slots=True)
class ConfigFile:
    path: Path
    table: str                                   # "" (top level) or "tool.rocm-audit"
    values: tuple[tuple[str, object], ...]       # (key, value as written)
    lines: tuple[tuple[str, int], ...]           # (key, line number of its assignment)

    def where(self, key: str | None = None) -> str:
        line = dict(self.lines).get(key or "", 0) if key else 0
        return f"{self.path}:{line}" if line else str(self.path)


@dataclass(frozen=True, slots=True)
class Resolved:
    """Every option's value (by argparse dest) and, by long flag name, where it came from."""

    values: dict
    sources: tuple[tuple[str, object, str], ...]   # (long flag name, value, source) for `rocm-audit config`
    config: ConfigFile | None


def find_config(start: Path) -> Path | None:
    """The nearest `.rocm-audit.toml`, or `pyproject.toml` with a `[tool.rocm-audit]` table, from `start` up to
    the repository root (the first directory holding `.git`) or the filesystem root."""
    directory = start if start.is_dir() else start.parent
    for folder in (directory, *directory.parents):
        if (folder / CONFIG_FILE).is_file():
            return folder / CONFIG_FILE
        pyproject = folder / PYPROJECT
        if pyproject.is_file() and _mentions_table(pyproject):
            return pyproject
        if (folder / ".git").exists():
            return None
    return None


def _mentions_table(pyproject: Path) -> bool:
    try:
        text = pyproject.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return re.search(r"^\s*\[\s*tool\s*\.\s*[\"']?rocm-audit", text, re.MULTILINE) is not None


def read_config(path: Path) -> ConfigFile:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"{path}: cannot read config: {getattr(err, 'strerror', None) or err}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{_position(path, err, text)}: not valid TOML: {_toml_message(err)}") from None
    table = ""
    if path.name == PYPROJECT:
        table = TABLE
        data = data.get("tool", {}).get("rocm-audit", {})
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: [{TABLE}] must be a table")
    return ConfigFile(path, table, tuple(data.items()), tuple(_key_lines(text, table, data)))


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
        header = re.match(r"^\s*\[\s*([^\]]+?)\s*\]", line)
        if header and not line.lstrip().startswith("[["):
            name = re.sub(r"\s*\.\s*", ".", header.group(1)).replace('"', "").replace("'", "")
            in_table = name == table
            continue
        if in_table:
            key = re.match(r"^\s*[\"']?([A-Za-z0-9_-]+)[\"']?\s*=", line)
            if key and key.group(1) in data:
                found.append((key.group(1), number))
    return found


def _long_name(action: argparse.Action) -> str | None:
    longs = [o for o in action.option_strings if o.startswith("--")]
    return longs[0][2:] if longs else None


def resolve(parser: argparse.ArgumentParser, given: Mapping, config: ConfigFile | None) -> Resolved:
    """Command line over config file over the parser's defaults. `given` holds only what the command line set
    (the parser run with every default suppressed)."""
    actions = {name: a for a in parser._actions if (name := _long_name(a)) and name not in NOT_CONFIGURABLE}
    from_config: dict[str, tuple[object, str]] = {}
    if config is not None:
        from_config = _config_values(parser, actions, config)
    values: dict = {}
    sources: list[tuple[str, object, str]] = []
    for action in parser._actions:
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
    return Resolved(values, tuple(sources), config)


def _config_values(parser, actions: Mapping[str, argparse.Action], config: ConfigFile) -> dict:
    out: dict[str, tuple[object, str]] = {}
    for key, raw in config.values:
        name = key.replace("_", "-")
        where = config.where(key)
        action = actions.get(name)
        if action is None:
            known = ", ".join(sorted(actions))
            raise ConfigError(f"{where}: unknown key {key!r} (keys are the long flag names: {known})")
        try:
            value = _parse_value(parser, action, name, raw, config.path.parent)
        except ConfigError as err:
            raise ConfigError(f"{where}: {name}: {err}") from None
        out[name] = (value, where)
    return out


def _parse_value(parser, action: argparse.Action, name: str, raw: object, base: Path) -> object:
    """The value as the command line would have given it, checked by the same parser."""
    flag = f"--{name}"
    if action.nargs == 0:   # a switch
        if not isinstance(raw, bool):
            raise ConfigError(f"expected true or false, got {raw!r}")
        return raw if action.const is True else (not raw if action.const is False else raw)
    if isinstance(action, argparse._AppendAction) and isinstance(raw, dict):
        raw = _glob_table(raw)   # per-file-ignores = {"tests/*" = ["RA5"]}, as ruff writes it
    if isinstance(action, argparse._AppendAction):
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
    except Exception as err:  # the parser's own one-line message (UsageError)
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
        lines = [f"# no config file found from {searched_from} up to the repository root "
                 f"({CONFIG_FILE}, or [{TABLE}] in {PYPROJECT})"]
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
