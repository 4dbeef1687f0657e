"""`--diff-base`: the settings that could switch the gate off are taken from the base revision's config.
`--baseline`: from the baseline's record of them (from_record, below).

A pull request judged by `--diff-base` may edit the repository's config too. If its own `fail-on = "never"`,
`ignore = ["RA"]` or `exclude = ["*"]` applied, the change would decide how it is judged. So the gate's
settings come from the config as it was at the merge-base (read from git, never from the working tree); a
difference is reported as a warning naming the file and line. The command line still wins over both.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from auditor.config import OptionParser
from auditor.config import (
    CONFIG_FILE, FROM_COMMAND_LINE, PYPROJECT, ConfigError, ConfigFile, Resolved, parse_config, project_root, resolve,
)

GATE_KEYS = ("fail-on", "select", "ignore", "exclude", "force-exclude", "max-file-size", "time-budget",
             "max-run-time", "per-file-ignores", "optional-dirs", "extend-select", "fail-on-verify",
             "no-inline-suppressions", "allow-new-suppressions")
# and which baseline judges the change: a change that names its own (listing its findings) in the config would
# turn the --diff-base gate into one it wrote
BASE_KEYS = (*GATE_KEYS, "baseline")


def from_base(parser: OptionParser, given: Mapping, resolved: Resolved, start: Path,
              ref: str) -> Resolved:
    """`resolved` with the gate's settings as the base revision's config gives them (when the config in use is
    the repository's own, not the user's)."""
    if resolved.config is not None and resolved.config.trusted:
        return resolved
    from auditor.util import vcs
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
        if name in BASE_KEYS and name in then_values and then_values[name][0] != value \
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
    from auditor.util import vcs
    from auditor.util.boundedio import CONFIG_CAP

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


# --- --baseline: the settings recorded in the baseline -------------------------------------------------
# Recorded when the baseline is written (`rocm-audit baseline`); a check against it takes them from that record
# or the command line, never looser from the scanned tree's config: a pull request's `fail-on = "never"` or
# `ignore = ["RA"]` does not decide how it is judged. A difference is a gate finding (it fails the run). A
# baseline without a record (written by an older rocm-audit) records the defaults.

def record_of(sources) -> dict[str, object]:
    """The gate's settings of this run, as the baseline records them (None: not set)."""
    return {name: value for name, value, _source in sources if name in GATE_KEYS}


def from_record(parser: OptionParser, given: Mapping, resolved: Resolved,
                baseline: Path) -> tuple[Resolved, tuple[tuple[str, str], ...]]:
    """`resolved` with each gate setting that a config in the tree changed from the baseline's record put
    back to the record's value; and a gate finding for each. The command line and the user's own config
    (outside the tree) still decide."""
    if resolved.config is not None and resolved.config.trusted:
        return resolved, ()
    from auditor.run.gate.failclosed.baselinerecord import read_record

    read = read_record(baseline)
    if read is None:
        return resolved, ()
    record = {k: v for k, v in (read[0] or {}).items() if k in GATE_KEYS and v is not None}
    then = resolve(parser, given, ConfigFile(baseline, "", tuple(record.items()), (), False))
    values = dict(resolved.values)
    sources, findings = [], []
    for name, value, source in resolved.sources:
        dest = name.replace("-", "_")
        if name in GATE_KEYS and source != FROM_COMMAND_LINE and then.values.get(dest) != value:
            values[dest] = then.values.get(dest)
            shown = record.get(name)
            why = (f"{name} = {_show(value)} differs from what the baseline {baseline} records ({_show(shown)}); "
                   "--baseline judges with the recorded value. Changing it takes a new baseline (rocm-audit baseline)")
            findings.append((source, why))
            sources.append((name, then.values.get(dest), f"{baseline} (its record)"))
        else:
            sources.append((name, value, source))
    return replace(resolved, values=values, sources=tuple(sources)), tuple(findings)
