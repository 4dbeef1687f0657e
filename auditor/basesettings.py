"""`--diff-base`: the settings that could switch the gate off are taken from the base revision's config.

A pull request judged by `--diff-base` may edit the repository's config too. If its own `fail-on = "never"`,
`ignore = ["RA"]` or `exclude = ["*"]` applied, the change would decide how it is judged. So the gate's
settings come from the config as it was at the merge-base (read from git, never from the working tree); a
difference is reported as a warning naming the file and line. The command line still wins over both.
"""
from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from auditor.config import CONFIG_FILE, PYPROJECT, ConfigError, Resolved, parse_config, project_root, resolve

GATE_KEYS = ("fail-on", "select", "ignore", "exclude", "force-exclude", "max-file-size", "time-budget",
             "max-run-time", "per-file-ignores", "optional-dirs", "extend-select", "fail-on-verify")


def from_base(parser: argparse.ArgumentParser, given: Mapping, resolved: Resolved, start: Path,
              ref: str) -> Resolved:
    """`resolved` with the gate's settings as the base revision's config gives them (when the config in use is
    the repository's own, not the user's)."""
    if resolved.config is not None and resolved.config.trusted:
        return resolved
    from auditor import vcs

    directory = start if start.is_dir() else start.parent
    top = project_root(directory)
    if top is None:
        return resolved
    try:
        base = vcs.merge_base(vcs.toplevel(top), ref)
        base_config = _base_config(top, base, directory)
    except (vcs.GitError, ConfigError, OSError):
        return resolved   # the gate reports what is wrong with git or the ref
    then = resolve(parser, given, base_config)
    then_values = dict(_by_name(then))
    values = dict(resolved.values)
    warnings = list(resolved.warnings)
    sources = []
    for name, value, source in resolved.sources:
        if name in GATE_KEYS and name in then_values and then_values[name][0] != value \
                and source != "command line":
            old_value, old_source = then_values[name]
            dest = name.replace("-", "_")
            values[dest] = then.values[dest]
            warnings.append(f"{source}: {name} changed by this change ({_show(old_value)} at the base, "
                            f"{_show(value)} now); --diff-base judges the change with the base's value")
            sources.append((name, old_value, f"{old_source} at {base[:12]} (--diff-base)"))
        else:
            sources.append((name, value, source))
    return replace(resolved, values=values, sources=tuple(sources), warnings=tuple(warnings))


def _by_name(resolved: Resolved):
    return ((name, (value, source)) for name, value, source in resolved.sources)


def _show(value: object) -> str:
    return repr(value) if value is not None else "unset"


def _base_config(top: Path, base: str, directory: Path):
    """The config file the search would have found at the base revision, read from git (None: there was none)."""
    from auditor import vcs
    from auditor.boundedio import CONFIG_CAP

    root = vcs.toplevel(top)
    folders = [directory, *directory.parents][:len(directory.parts) - len(top.parts) + 1]
    wanted = []
    for folder in folders:
        for name in (CONFIG_FILE, PYPROJECT):
            wanted.append((folder / name).resolve().relative_to(root.resolve()).as_posix())
    found = vcs.blobs(root, base, wanted, CONFIG_CAP)
    for relative in wanted:
        data = found.get(relative)
        if data is None:
            continue
        text = data.decode("utf-8", "replace")
        if relative.endswith(PYPROJECT) and "rocm-audit" not in text:
            continue
        config = parse_config(root / relative, text)
        if relative.endswith(CONFIG_FILE) or config.values:
            return config
    return None
